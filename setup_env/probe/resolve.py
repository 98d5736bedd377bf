"""The one resolve step: what the GPU catalogue knows, added to what a probe or report saw.

``resolve_gpu(gpu)`` returns a :class:`Resolved` view of one GPU: its compute capability
(NVIDIA) or gfx id (AMD), memory, the driver window of its compute capability, and for each of
those where it came from (the probe's own source, or ``"catalogue"``). ``resolve_facts(facts)``
returns the facts with every GPU's missing compute capability / gfx id / memory filled from the
catalogue. Planner, doctor, report parsing and the NVIDIA probe's notes all go through here; no
other module looks a GPU up by name.

States are codes, not prose: ``Resolved.code`` is None (known), ``"gpu-unknown"`` (the name is
in no table; ``suggestions`` holds the closest known names) or ``"gpu-catalogue-unavailable"``
(the data file could not be read). Nothing here touches the machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from setup_env._record import Record, field, record, replace
from setup_env.facts import Facts, Gpu
from setup_env.knowledge import gpus as catalogue

CATALOGUE = "catalogue"
GIB = 1024**3


@record
class Resolved(Record):
    """What the GPU catalogue adds to a GPU a probe saw, and how well it matched."""

    gpu: Gpu
    compute_capability: Optional[str] = None
    gfx: Optional[str] = None
    memory_bytes: Optional[int] = None
    window: Optional[catalogue.DriverWindow] = None
    model: Optional[str] = None  # the catalogue's name for it
    match: str = "unknown"  # "exact" | "approximate" | "generic" | "unknown"
    sources: Mapping[str, str] = field(default_factory=dict)  # field -> where it came from
    code: Optional[str] = None  # None | "gpu-unknown" | "gpu-catalogue-unavailable"
    suggestions: tuple[str, ...] = ()


def _load() -> Optional[catalogue.Catalogue]:
    try:
        return catalogue.load()
    except (catalogue.CatalogueError, OSError):
        return None


def resolve_gpu(gpu: Gpu) -> Resolved:
    """What the catalogue adds to ``gpu`` (see the module doc)."""
    src = gpu.source or "probe"
    sources: dict[str, str] = {}
    cc = gpu.compute_capability
    gfx = gpu.gfx_arch
    mem = gpu.memory_bytes
    if cc:
        sources["compute_capability"] = src
    if gfx:
        sources["gfx"] = src
    if mem:
        sources["memory_bytes"] = src
    cat = _load()
    if cat is None:
        return Resolved(
            gpu, cc, gfx, mem, None, None, "unknown", sources, "gpu-catalogue-unavailable"
        )
    if gpu.vendor == "nvidia":
        model = cat.lookup(gpu.name) if gpu.name != "unknown NVIDIA GPU" else None
        if model is not None and not cc:
            cc = model.compute_capability
            sources["compute_capability"] = CATALOGUE
        if model is not None and not mem and model.memory_gb and model.match == "exact":
            mem = int(model.memory_gb * GIB)
            sources["memory_bytes"] = CATALOGUE
        window = cat.driver_window(cc) if cc else None
        if model is not None and model.first_driver and model.compute_capability == cc:
            window = cat.model_window(model)  # the vendor names this model's first driver
        if window is not None:
            sources["driver_window"] = CATALOGUE
        if model is None:
            return Resolved(
                gpu,
                cc,
                gfx,
                mem,
                window,
                None,
                "unknown",
                sources,
                "gpu-unknown",
                cat.suggest(gpu.name),
            )
        return Resolved(gpu, cc, gfx, mem, window, model.name, model.match, sources)
    if gpu.vendor == "amd":
        amd = cat.lookup_amd(gfx or gpu.name) if gfx else cat.lookup_amd(gpu.name)
        named = cat.lookup_amd(gpu.name)
        if named is not None and named.match != "generic":
            amd = named
        if amd is not None and not gfx:
            gfx = amd.gfx
            sources["gfx"] = CATALOGUE
        if amd is not None and not mem and amd.memory_gb and amd.match == "exact":
            mem = int(amd.memory_gb * GIB)
            sources["memory_bytes"] = CATALOGUE
        if amd is None and not gfx:
            return Resolved(
                gpu,
                cc,
                gfx,
                mem,
                None,
                None,
                "unknown",
                sources,
                "gpu-unknown",
                cat.suggest(gpu.name),
            )
        return Resolved(
            gpu,
            cc,
            gfx,
            mem,
            None,
            amd.name if amd else None,
            amd.match if amd else "generic",
            sources,
        )
    return Resolved(gpu, cc, gfx, mem, None, None, "unknown", sources)


def compute_capability(gpu: Gpu) -> Optional[str]:
    """The GPU's compute capability, as reported or from the catalogue."""
    if gpu.compute_capability:
        return gpu.compute_capability
    return resolve_gpu(gpu).compute_capability


def fill(gpu: Gpu) -> Gpu:
    """``gpu`` with its missing compute capability / gfx id / memory filled from the catalogue."""
    r = resolve_gpu(gpu)
    changes: dict[str, object] = {}
    if r.compute_capability and not gpu.compute_capability:
        changes["compute_capability"] = r.compute_capability
    if r.gfx and not gpu.gfx_arch:
        changes["gfx_arch"] = r.gfx
    if r.memory_bytes and not gpu.memory_bytes:
        changes["memory_bytes"] = r.memory_bytes
    return replace(gpu, **changes) if changes else gpu


def resolve_facts(facts: Facts) -> Facts:
    """``facts`` with every GPU filled (:func:`fill`); the same object when nothing changes."""
    out = facts
    if facts.nvidia is not None and facts.nvidia.gpus:
        new = tuple(fill(g) for g in facts.nvidia.gpus)
        if new != facts.nvidia.gpus:
            out = replace(out, nvidia=replace(facts.nvidia, gpus=new))
    if facts.rocm is not None and facts.rocm.gpus:
        new = tuple(fill(g) for g in facts.rocm.gpus)
        if new != facts.rocm.gpus:
            out = replace(out, rocm=replace(facts.rocm, gpus=new))
    return out
