"""The facts and the :class:`Report` assembled from what a layout read: the field mapping of
:mod:`.fields`, torch's messages, a Jetson's signs, and what a diagnosis needs that the paste
lacks."""

from __future__ import annotations

import re
from typing import Callable, Optional

from setup_env._record import replace
from setup_env.facts import (
    CudaToolkit,
    Facts,
    Gpu,
    JetsonInfo,
    Note,
    NvidiaInfo,
    OSInfo,
    RocmInfo,
    XpuInfo,
)
from setup_env.knowledge.variant import XPU
from setup_env.probe.report.fields import (
    MAX_GPUS,
    _bool,
    _cpu_info,
    _cudnn_version,
    _gpus,
    _os_info,
    _packages,
    _pip_libraries,
    _python_info,
    _value,
    _version_prefix,
    _xpu_gpus,
)
from setup_env.probe.report.messages import TorchMessage
from setup_env.probe.report.model import SOURCE, WARNING_SOURCE, Report

_ARCHITECTURE = re.compile(r"^Architecture\s*[:=]\s*(.*?)\s*$")


def _build(
    fields: dict[str, str],
    gpu_lines: list[str],
    cudnn_lines: list[str],
    cpu_lines: list[str],
    lib_lines: list[str],
    truncated: bool,
    *,
    layout: str,
    messages: tuple[TorchMessage, ...] = (),
    xpu_lines: Optional[list[str]] = None,
    env: Optional[dict[str, str]] = None,
    onboard_lines: Optional[list[str]] = None,
    intel_driver_lines: Optional[list[str]] = None,
    paths: Optional[list[str]] = None,
) -> Report:
    notes: list[Note] = []
    os_info = _os_info(fields)
    # The CPU block's "Architecture" (lscpu's name, or Windows' WMI code: "Architecture=9")
    wmi = next((m.group(1) for m in map(_ARCHITECTURE.match, cpu_lines) if m), None)
    cuda_line = fields.get("CUDA used to build PyTorch")
    cuda_build = cuda_line is not None and bool(re.match(r"^\d+\.\d+", cuda_line))
    python = _python_info(fields, os_info, notes, wmi, cuda_build)
    cpu = _cpu_info(cpu_lines)
    if (
        os_info.family == "darwin"
        and python.machine == "x86_64"
        and cpu.model is not None
        and cpu.model.startswith("Apple M")
    ):
        # An x86_64 interpreter on Apple Silicon can only be running under Rosetta 2.
        python = replace(python, rosetta=True, sources={**python.sources, "rosetta": SOURCE})
    # a ROCm version ("6.2.41133-dd7f95766"; "N/" cut mid-line is none)
    rocm_line = _value(fields.get("ROCM used to build PyTorch"))
    rocm_build = rocm_line is not None and re.match(r"^\d", rocm_line) is not None
    hip_runtime = _value(fields.get("HIP runtime version"))
    nv_gpus, amd_gpus = _gpus(gpu_lines, rocm_build or hip_runtime is not None)
    if len(nv_gpus) + len(amd_gpus) >= MAX_GPUS:
        notes.append(
            Note(
                "collect-env-gpus-capped",
                f"the GPU list is longer than a machine's: its first {MAX_GPUS} GPUs are read",
                f"{SOURCE}:GPU models and configuration",
                "info",
            )
        )
    # What the catalogues know (one resolve step): NVIDIA compute capability, AMD gfx id.
    fill = _filler()
    nv_gpus = [fill(g) for g in nv_gpus]
    amd_gpus = [fill(g) for g in amd_gpus]
    driver = _value(fields.get("Nvidia driver version"))
    # torch's messages: the driver's CUDA version, GPUs the GPU list did not show.
    cuda_driver = next((m.cuda_driver for m in messages if m.cuda_driver), None)
    # The names seen so far, and whether every GPU has a compute capability: a set and a flag,
    # so that thousands of messages naming GPUs are read in linear time (issue 18).
    names = {g.name for g in nv_gpus}
    all_cc = all(g.compute_capability for g in nv_gpus)
    for m in messages:
        if m.gpu and m.cc:  # a warning naming a GPU below or above the build's capabilities
            if m.gpu in names:
                if not all_cc:
                    nv_gpus = [
                        replace(g, compute_capability=g.compute_capability or m.cc) for g in nv_gpus
                    ]
                    all_cc = True
            elif len(nv_gpus) < MAX_GPUS:
                names.add(m.gpu)
                nv_gpus.append(
                    Gpu(
                        index=len(nv_gpus),
                        name=m.gpu,
                        compute_capability=m.cc,
                        source=WARNING_SOURCE,
                    )
                )
    nvidia: Optional[NvidiaInfo] = None
    if driver or nv_gpus or cuda_driver:
        src: dict[str, str] = {}
        if driver:
            src["driver_version"] = f"{SOURCE}:Nvidia driver version"
        if nv_gpus:  # the GPU list, or torch's warnings where only they name the GPUs
            listed = any(g.source == SOURCE for g in nv_gpus)
            src["gpus"] = f"{SOURCE}:GPU models and configuration" if listed else WARNING_SOURCE
        if cuda_driver:
            src["cuda_driver_version"] = WARNING_SOURCE
        nvidia = NvidiaInfo(
            driver_version=driver,
            cuda_driver_version=cuda_driver,
            gpus=tuple(nv_gpus),
            sources=src,
        )
    rocm: Optional[RocmInfo] = None
    if amd_gpus or hip_runtime:
        rocm = RocmInfo(
            version=_version_prefix(hip_runtime, 2),
            gpus=tuple(amd_gpus),
            sources={"version": f"{SOURCE}:HIP runtime version"} if hip_runtime else {},
        )
    xpu_available = _bool(fields.get("Is XPU available"))
    xpu = _xpu_info(xpu_available, xpu_lines or [], onboard_lines or [], intel_driver_lines or [])
    toolkits: tuple[CudaToolkit, ...] = ()
    nvcc = _value(fields.get("CUDA runtime version"))
    full = _version_prefix(nvcc)
    if full and "." in full:
        toolkits = (
            CudaToolkit(
                version=".".join(full.split(".")[:2]),
                full_version=full,
                cudnn_version=_cudnn_version(cudnn_lines),
                source=f"{SOURCE}:CUDA runtime version (nvcc --version)",
            ),
        )
    packages = _packages(fields, lib_lines, os_info)
    cuda_available = _bool(fields.get("Is CUDA available"))
    if truncated:
        notes.append(
            Note(
                "collect-env-truncated",
                "the pasted report stops before its library list ends; what follows the cut "
                "is unknown",
                SOURCE,
                "info",
            )
        )
    torch_version = _value(fields.get("PyTorch version")) or ""
    if (os_info.kernel and "tegra" in os_info.kernel) or re.search(
        r"[.+]nv\d{2}\.\d{2}", torch_version
    ):
        notes.append(
            Note(
                "jetson",
                "an NVIDIA Jetson (L4T kernel "
                + (os_info.kernel or "?")
                + (
                    f"; torch {torch_version} is NVIDIA's Jetson build"
                    if "nv" in torch_version
                    else ""
                )
                + ")",
                f"{SOURCE}:Python platform",
                "info",
            )
        )
    jetson = _jetson_info(os_info, torch_version, nv_gpus, toolkits, notes)
    for m in messages:
        notes.append(Note(f"torch-message-{m.kind}", m.text, WARNING_SOURCE, "info"))
    facts = Facts(
        jetson=jetson,
        os=os_info,
        python=python,
        cpu=cpu,
        nvidia=nvidia,
        rocm=rocm,
        xpu=xpu,
        toolkits=toolkits,
        packages=tuple(packages),
        environment=dict(env or {}),
        notes=tuple(notes),
    )
    from setup_env.probe.report.infer import infer

    missing = _missing(fields, facts)  # what the paste lacks, before anything is inferred
    implied, planning, evidence, assumptions = infer(
        facts, fields, messages, cuda_available, xpu_available, paths or []
    )
    return Report(
        facts=implied,
        planning=planning,
        evidence=evidence,
        assumptions=assumptions,
        fields=dict(fields),
        cuda_available=cuda_available,
        xpu_available=xpu_available,
        debug_build=_bool(fields.get("Is debug build")),
        truncated=truncated,
        layout=layout,
        missing=missing,
        warnings=messages,
        libraries=_pip_libraries(lib_lines),
    )


def _xpu_info(
    available: Optional[bool],
    detected: list[str],
    onboard: list[str],
    driver_lines: list[str],
) -> Optional[XpuInfo]:
    """Intel GPUs: torch's own list ("Intel GPU models detected"), else the system's ("Intel GPU
    models onboard": ``xpu-smi`` on Linux, WMI on Windows, a ``* name`` list); the driver from
    "Intel GPU driver version" (Windows: ``* [name: ]32.0.101.6078 (date)``; Linux: the packages,
    ``* intel-opencl-icd: 25.44.36015.8-0``, the compute runtime)."""
    gpus = _xpu_gpus(detected)
    sources: dict[str, str] = {}
    names = _star_items(onboard)
    if gpus and len(gpus) >= len(names):
        sources["gpus"] = f"{SOURCE}:Intel GPU models detected"
    else:
        # torch's list absent, or shorter than the system's (a paste cut inside it): the
        # system's list of the machine's Intel GPUs.
        gpus = tuple(
            Gpu(index=i, name=n, vendor="intel", source=f"{SOURCE}:Intel GPU models onboard")
            for i, n in enumerate(names)
        )
        if gpus:
            sources["gpus"] = f"{SOURCE}:Intel GPU models onboard"
    driver: Optional[str] = None
    for item in _star_items(driver_lines):
        wm = re.search(r"\b(\d{2,3}\.\d+\.\d{3,5}\.\d{3,6})\b", item)
        if wm:  # Windows: the display driver's version
            driver = wm.group(1)
            break
        lm = re.match(r"^intel-opencl-icd\s*:\s*(\d[\w.~+-]{0,40})", item)
        if lm:
            driver = lm.group(1)
    if driver:
        sources["driver_version"] = f"{SOURCE}:Intel GPU driver version"
    if not (available or gpus or driver):
        return None
    return XpuInfo(gpus=gpus, driver_version=driver, sources=sources)


def _star_items(lines: list[str]) -> list[str]:
    """The values of a ``* item`` list ("N/A" and error text are not items)."""
    out: list[str] = []
    for line in lines:
        if line.startswith("* ") and _value(line[2:]) is not None:
            out.append(line[2:].strip()[:160])
    return out


def _jetson_info(
    os_info: OSInfo,
    torch_version: str,
    nv_gpus: list[Gpu],
    toolkits: tuple[CudaToolkit, ...],
    notes: list[Note],
) -> Optional[JetsonInfo]:
    """A Jetson, when the report shows one: the L4T kernel ("5.10.120-tegra"), NVIDIA's Jetson
    torch build ("+nv23.02"), or the iGPU's name; with the toolkit's CUDA (JetPack's own), which
    narrows the JetPack."""
    segments: dict[str, Optional[str]] = {}  # one look-up per distinct name (long reports)
    for g in nv_gpus:
        if g.name not in segments:
            segments[g.name] = _segment(g.name)
    embedded = [g for g in nv_gpus if segments[g.name] == "embedded"]
    if not any(n.code == "jetson" for n in notes) and not embedded:
        return None
    sources: dict[str, str] = {}
    module = embedded[0].name if embedded else None
    if module:
        sources["module"] = f"{SOURCE}:GPU models and configuration"
    cuda = toolkits[0].version if toolkits else None
    if cuda:
        sources["cuda"] = f"{SOURCE}:CUDA runtime version (nvcc --version)"
    return JetsonInfo(
        module=module,
        cuda=cuda,
        compute_capability=embedded[0].compute_capability if embedded else None,
        sources=sources,
    )


def _filler() -> Callable[[Gpu], Gpu]:
    """:func:`setup_env.probe.resolve.fill`, looked up once per distinct GPU (its index aside)
    within one report: a GPU list repeats one name (eight H100s), and a catalogue look-up by an
    inexact name walks the catalogue (issue 18: long reports)."""
    from setup_env.probe.resolve import fill

    done: dict[Gpu, Gpu] = {}

    def one(gpu: Gpu) -> Gpu:
        key = replace(gpu, index=0)
        if key not in done:
            done[key] = fill(key)
        out = done[key]
        return gpu if out == key else replace(out, index=gpu.index)

    return one


def _segment(name: str) -> Optional[str]:
    try:
        from setup_env.knowledge import gpus as catalogue

        model = catalogue.lookup(name)
    except (ImportError, KeyError, ValueError, LookupError):
        return None
    return model.segment if model is not None else None


def _missing(fields: dict[str, str], facts: Facts) -> tuple[str, ...]:
    """What a diagnosis needs that the paste does not hold (cut off, or never pasted)."""
    out: list[str] = []
    if "PyTorch version" not in fields and facts.package("torch") is None:
        out.append("torch")
    if facts.os.family == "other":
        out.append("os")
    if not facts.python.version:
        out.append("python")
    if "GPU models and configuration" not in fields and facts.os.family != "darwin":
        gpus = facts.gpus
        if not gpus:
            out.append("gpus")
    elif (
        facts.os.family != "darwin"
        and "Is XPU available" not in fields
        and not facts.gpus
        and (facts.package("torch") is not None)
        and (facts.package("torch").variant in (XPU, None))  # type: ignore[union-attr]
    ):
        # An XPU (or unknown) build: collect_env before torch 2.8 does not list Intel GPUs.
        out.append("gpus")
    if (
        "Nvidia driver version" not in fields
        and facts.os.family in ("linux", "windows")
        and (facts.nvidia is None or not facts.nvidia.driver_version)
    ):
        out.append("driver")
    return tuple(out)
