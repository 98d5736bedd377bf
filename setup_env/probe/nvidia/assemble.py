""":func:`detect`: the sources in their order (NVML, nvidia-smi, the files, the environment's
overrides), then the GPU catalogue's notes, into an :class:`~setup_env.facts.NvidiaInfo`."""

from __future__ import annotations

from collections.abc import Mapping

from setup_env.facts import Note, NvidiaInfo
from setup_env.probe.host import Host
from setup_env.probe.nvidia.files import _from_files
from setup_env.probe.nvidia.gather import _CUDA, _VERSION, _Acc
from setup_env.probe.nvidia.nvml import _from_nvml
from setup_env.probe.nvidia.smi import _find_smi, _from_smi


def _overrides(host: Host, acc: _Acc) -> None:
    for name, field_name, pattern in (
        ("SETUP_ENV_NVIDIA_DRIVER_VERSION", "driver_version", _VERSION),
        ("SETUP_ENV_CUDA_DRIVER_VERSION", "cuda_driver_version", _CUDA),
    ):
        raw = host.env(name)
        if raw is None:
            continue
        value = raw.strip()
        if pattern.match(value):
            acc.values[field_name] = value
            acc.sources[field_name] = f"env:{name}"
            acc.seen = True
        else:
            acc.note(
                "bad-override",
                f"{name}={value[:40]!r} is not a version like "
                f"{'570.86.10' if field_name == 'driver_version' else '12.8'}; ignored",
                f"env:{name}",
            )


def _catalogue_notes(acc: _Acc) -> None:
    """Notes where the GPU knowledge base (setup_env.probe.resolve) does not know a GPU by name or
    disagrees with what the driver reported."""
    if not acc.gpus:
        return
    from setup_env.probe.resolve import resolve_gpu

    for g in acc.gpus:
        if g.name == "unknown NVIDIA GPU":
            continue
        r = resolve_gpu(g)
        if r.code == "gpu-catalogue-unavailable":
            acc.note(
                "gpu-catalogue-unavailable",
                "setup_env/data/gpus.json is unreadable",
                "setup_env.knowledge.gpus",
            )
            return
        if r.code == "gpu-unknown":
            close = f" (closest known: {', '.join(r.suggestions)})" if r.suggestions else ""
            acc.note(
                "gpu-unknown",
                f"GPU {g.index} {g.name!r} is not in the GPU catalogue"
                + ("" if g.compute_capability else "; its compute capability is unknown")
                + close,
                g.source,
                "info" if g.compute_capability else "warning",
            )
            continue
        model = r.model
        if g.compute_capability and r.match == "exact" and model is not None:
            from setup_env.knowledge.gpus import lookup

            known = lookup(model)
            if known is not None and known.compute_capability != g.compute_capability:
                acc.note(
                    "gpu-catalogue-disagrees",
                    f"GPU {g.index} {g.name!r} reports compute capability "
                    f"{g.compute_capability}; the catalogue says {known.compute_capability}",
                    g.source,
                    "info",
                )


# nvidia-smi hung or failed without saying why (a known failure sets acc.error itself).
_SMI_BROKE = {"nvidia-smi-timeout": "hung", "nvidia-smi-failed": "failed"}


def _unexaminable(host: Host, acc: _Acc) -> None:
    """No GPU read, nvidia-smi hung or failed, and an NVIDIA display device on the PCI bus: the
    GPU is there but could not be examined (a wedged driver), which is not "no GPU"."""
    if acc.gpus or acc.error is not None:
        return
    broke = next((_SMI_BROKE[n.code] for n in acc.notes if n.code in _SMI_BROKE), None)
    if broke is None:
        return
    from setup_env.probe.pci import VENDOR_NVIDIA, display_devices

    on_bus = [d.bus_id for d in display_devices(host) if d.vendor == VENDOR_NVIDIA]
    if not on_bus:
        return
    acc.fail(
        "gpu-unexaminable",
        f"the GPU could not be examined: {len(on_bus)} NVIDIA GPU(s) on the PCI bus "
        f"({', '.join(on_bus[:4])}{', ...' if len(on_bus) > 4 else ''}) but nvidia-smi {broke}",
        "nvidia-smi",
        "error",
    )


def detect(host: Host) -> tuple[NvidiaInfo | None, list[Note]]:
    acc = _Acc()
    if (host.env("SETUP_ENV_NO_NVML") or "").strip().lower() not in ("1", "true", "yes"):
        snap = host.nvml()
        if isinstance(snap, Mapping):
            _from_nvml(snap, acc)
        else:
            acc.note("nvml-garbled", "NVML snapshot is not an object", "nvml")
    if not acc.gpus and acc.error is None:
        smi = _find_smi(host)
        if smi is not None:
            _from_smi(host, smi, acc)
    _from_files(host, acc)
    _unexaminable(host, acc)
    _overrides(host, acc)
    if not acc.seen and not acc.gpus:
        return None, acc.notes
    acc.gpus.sort(key=lambda g: g.index)
    _catalogue_notes(acc)
    sources = dict(acc.sources)
    if acc.gpus:
        sources.setdefault("gpus", acc.gpus[0].source)
    info = NvidiaInfo(
        driver_version=acc.values.get("driver_version"),
        cuda_driver_version=acc.values.get("cuda_driver_version"),
        kernel_module=acc.values.get("kernel_module"),
        gpus=tuple(acc.gpus),
        error=acc.error,
        error_code=acc.error_code,
        library_version=acc.values.get("library_version"),
        sources=sources,
    )
    return info, acc.notes
