"""NVIDIA Jetson: ``detect(host) -> (JetsonInfo | None, [Note, ...])``.

A Jetson has no discrete GPU, no nvidia-smi before JetPack 7 and no NVIDIA driver package of
its own: the GPU driver is part of the L4T (Linux for Tegra) release. Sources, in order:

1. ``/etc/nv_tegra_release``: ``# R36 (release), REVISION: 4.3, GCID: ..., BOARD: generic, ...``
   -> L4T 36.4.3.
2. The ``nvidia-l4t-core`` package version from dpkg's status file (``36.4.3-20250107174145``),
   when the release file is missing or disagrees.
3. ``/proc/device-tree/model`` (``NVIDIA Jetson AGX Orin Developer Kit``) and
   ``/proc/device-tree/compatible`` (NUL-separated: ``nvidia,p3737-0000+p3701-0000``,
   ``nvidia,tegra234``): the module and SoC, hence the iGPU's compute capability.
4. ``/usr/local/cuda/version.json`` (``{"cuda": {"name": "CUDA SDK", "version": "12.6.68"}}``).

The JetPack version and, when version.json is absent, the CUDA version come from the JetPack
table of the GPU knowledge base (``knowledge.gpus``). ``None`` (no notes) when nothing Tegra is
seen. Garbled files become Notes, never exceptions.
"""

from __future__ import annotations

import re
from typing import Optional

from setup_env.facts import JetsonInfo, Note
from setup_env.probe.host import Host

RELEASE = "/etc/nv_tegra_release"
MODEL = "/proc/device-tree/model"
COMPATIBLE = "/proc/device-tree/compatible"
DPKG_STATUS = "/var/lib/dpkg/status"
CUDA_VERSION_JSON = "/usr/local/cuda/version.json"

_RELEASE = re.compile(r"#\s*R(\d+)\s*\(release\),\s*REVISION:\s*(\d+)\.(\d+)")
# SoC -> (compute capability, the catalogue's name of its GPU). NVIDIA's Jetson modules page and
# the cuda-gpus / cuda-legacy-gpus pages (setup_env/data/gpus.json rows JETSON-*).
SOCS: dict[str, tuple[str, str]] = {
    "tegra210": ("5.3", "NVIDIA Tegra X1"),
    "tegra186": ("6.2", "NVIDIA Tegra X2"),
    "tegra194": ("7.2", "Xavier"),
    "tegra234": ("8.7", "Orin"),
    "tegra264": ("11.0", "NVIDIA Thor"),
}
_MODEL_SOC = (
    ("thor", "tegra264"),
    ("orin", "tegra234"),
    ("xavier", "tegra194"),
    ("tx2", "tegra186"),
    ("nano", "tegra210"),  # after "orin": the Orin Nano is tegra234
    ("tx1", "tegra210"),
)


def parse_release(text: str) -> Optional[str]:
    """``# R36 (release), REVISION: 4.3, ...`` -> ``"36.4.3"``."""
    m = _RELEASE.search(text or "")
    return f"{m.group(1)}.{m.group(2)}.{m.group(3)}" if m else None


def parse_compatible(raw: str) -> list[str]:
    """The NUL-separated compatible strings (a trailing NUL, or none, both accepted)."""
    return [c for c in raw.replace("\x00", "\n").splitlines() if c.strip()]


def soc_of(compatible: list[str], model: Optional[str]) -> Optional[str]:
    for c in compatible:
        m = re.search(r"nvidia,(tegra\d{3})", c)
        if m:
            return m.group(1)
    low = (model or "").lower()
    for word, soc in _MODEL_SOC:
        if word in low:
            return soc
    return None


def parse_dpkg_l4t_core(text: str) -> Optional[str]:
    """The ``Version:`` of the ``nvidia-l4t-core`` stanza of dpkg's status file."""
    for stanza in (text or "").split("\n\n"):
        if re.search(r"^Package:\s*nvidia-l4t-core\s*$", stanza, re.M):
            m = re.search(r"^Version:\s*(\S+)\s*$", stanza, re.M)
            return m.group(1) if m else None
    return None


def parse_cuda_version_json(text: str) -> Optional[str]:
    """``{"cuda": {"name": "CUDA SDK", "version": "12.2.140"}}`` -> ``"12.2"`` (the toolkit
    probe's reader of the same file)."""
    from setup_env.probe.toolkit import major_minor, parse_version_json

    version = parse_version_json(text)
    return major_minor(version) if version else None


def detect(host: Host) -> tuple[Optional[JetsonInfo], list[Note]]:
    notes: list[Note] = []
    sources: dict[str, str] = {}
    release_text = host.read_text(RELEASE)
    model_raw = host.read_text(MODEL)
    compat_raw = host.read_text(COMPATIBLE)
    compatible = parse_compatible(compat_raw or "")
    tegra = any("tegra" in c for c in compatible)
    if release_text is None and not tegra:
        return None, []
    l4t = parse_release(release_text or "")
    if release_text is not None:
        if l4t is None:
            notes.append(Note("jetson-release-garbled", f"{release_text.strip()[:60]!r}", RELEASE))
        else:
            sources["l4t"] = RELEASE
    core = parse_dpkg_l4t_core(host.read_text(DPKG_STATUS) or "")
    if core is not None:
        sources["l4t_core"] = f"{DPKG_STATUS}:nvidia-l4t-core"
        core_l4t = ".".join(re.split(r"[-+~]", core)[0].split(".")[:3])
        if l4t is None:
            l4t = core_l4t
            sources["l4t"] = sources["l4t_core"]
        elif core_l4t != l4t:
            notes.append(
                Note(
                    "jetson-l4t-mismatch",
                    f"{RELEASE} says L4T {l4t}, nvidia-l4t-core is {core}",
                    DPKG_STATUS,
                    "info",
                )
            )
    model = (model_raw or "").replace("\x00", "").strip() or None
    if model:
        sources["model"] = MODEL
    soc = soc_of(compatible, model)
    if soc is not None:
        sources["soc"] = COMPATIBLE if compatible else MODEL
    cc, module = SOCS.get(soc or "", (None, None))
    if cc is not None:
        sources["compute_capability"] = f"{sources['soc']} (tegra SoC -> cc)"
    cuda = None
    vj = host.read_text(CUDA_VERSION_JSON)
    if vj is not None:
        cuda = parse_cuda_version_json(vj)
        if cuda is None:
            notes.append(Note("cuda-version-json-garbled", vj.strip()[:60], CUDA_VERSION_JSON))
        else:
            sources["cuda"] = CUDA_VERSION_JSON
    jetpack = None
    if l4t is not None:
        from setup_env.knowledge import gpus

        try:
            row = gpus.load().jetpack_for_l4t(l4t)
        except gpus.CatalogueError:
            row = None
        if row is not None:
            jetpack = row.jetpack
            sources["jetpack"] = "JetPack table (setup_env/data/gpus.json) by L4T"
            if cuda is None:
                cuda = row.cuda
                sources["cuda"] = "JetPack table by L4T"
        else:
            notes.append(
                Note(
                    "jetson-l4t-unknown",
                    f"L4T {l4t} is not in the JetPack table; its JetPack and CUDA are unknown",
                    sources.get("l4t", RELEASE),
                    "info",
                )
            )
    info = JetsonInfo(
        model=model,
        module=module,
        soc=soc,
        l4t=l4t,
        l4t_core=core,
        jetpack=jetpack,
        cuda=cuda,
        compute_capability=cc,
        sources=sources,
    )
    return info, notes
