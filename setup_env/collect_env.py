"""Read the text ``python -m torch.utils.collect_env`` prints (what people paste into bug reports)
into :class:`~setup_env.facts.Facts`.

Pure: text in, facts out; nothing here touches the machine. Tolerates what real pastes look like:
markdown fences and ``<details>`` around the block, ``> `` quoting, shell prompts and warnings
before it, e-mail line wrapping, truncation, and every collect_env generation since PyTorch 1.3
(``Is debug build: No``, ``Mac OSX 11.0``, the multi-line GPU block with MIG devices, Windows
``wmic``/PowerShell CPU blocks, ROCm and XPU lines). An example of the input it expects::

    PyTorch version: 2.13.0+cpu
    CUDA used to build PyTorch: Could not collect
    OS: Debian GNU/Linux 12 (bookworm) (x86_64)
    Libc version: glibc-2.36
    Python version: 3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0] (64-bit runtime)
    Is CUDA available: False
    CUDA runtime version: 13.0.88
    GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090
    Nvidia driver version: 550.54.15
    [pip3] torch==2.13.0+cpu

Two of collect_env's labels mislead and are read for what they are: "CUDA runtime version" is
``nvcc --version`` (a toolkit, not torch's runtime) and "cuDNN version" lists system libcudnn
files (not the cuDNN torch loads).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Optional

from setup_env.facts import (
    CpuInfo,
    CudaToolkit,
    Facts,
    Gpu,
    InstalledPackage,
    Note,
    NvidiaInfo,
    OSInfo,
    PythonInfo,
    RocmInfo,
    XpuInfo,
)
from setup_env.probe.cpu import summarize_flags  # pure: the same flag summary as the probe
from setup_env.variant import CPU, Variant

SOURCE = "collect_env"

# Every "Key: value" line collect_env has printed, across its versions. Lines with other keys
# (lscpu output, vendor forks' extra lines) are ignored outside their own section.
KEYS: tuple[str, ...] = (
    "PyTorch version",
    "Is debug build",
    "CUDA used to build PyTorch",
    "ROCM used to build PyTorch",
    "XPU used to build PyTorch",
    "OS",
    "GCC version",
    "Clang version",
    "CMake version",
    "Libc version",
    "MSVC",
    "Python version",
    "Python platform",
    "Is CUDA available",
    "CUDA runtime version",
    "CUDA_MODULE_LOADING set to",
    "GPU models and configuration",
    "Nvidia driver version",
    "cuDNN version",
    "Is XPU available",
    "Intel GPU driver version",
    "Intel GPU models onboard",
    "Intel GPU models detected",
    "HIP runtime version",
    "MIOpen runtime version",
    "Is XNNPACK available",
    "Caching allocator config",
    "Is a CUDA build",
)
_KEY_RE = re.compile(r"^(" + "|".join(re.escape(k) for k in KEYS) + r"):[ \t]*(.*)$")
# Values that mean "nothing there".
_EMPTY = {"", "n/a", "none", "could not collect", "no cuda", "na"}

_DISTRO_IDS = (
    ("ubuntu", "ubuntu"),
    ("debian", "debian"),
    ("rocky", "rocky"),
    ("centos", "centos"),
    ("red hat", "rhel"),
    ("fedora", "fedora"),
    ("amazon linux", "amzn"),
    ("arch linux", "arch"),
    ("opensuse", "opensuse"),
    ("sles", "sles"),
    ("almalinux", "almalinux"),
    ("oracle linux", "ol"),
    ("openeuler", "openeuler"),
    ("alpine", "alpine"),
)


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


class CollectEnvError(ValueError):
    """The text is not a collect_env report (nothing in it could be recognised)."""


@dataclass(frozen=True)
class Report:
    """What a collect_env paste says: the facts, plus what only torch itself could tell."""

    facts: Facts
    fields: dict[str, str] = field(default_factory=dict)  # the raw "Key: value" lines
    cuda_available: Optional[bool] = None  # torch.cuda.is_available() at report time
    xpu_available: Optional[bool] = None
    debug_build: Optional[bool] = None
    truncated: bool = False  # the paste stops before the library list


def _clean_line(raw: str) -> str:
    line = raw.rstrip("\r\n").rstrip()
    # Markdown quoting ("> ", "> > ") from replies.
    while line.startswith(">"):
        line = line[1:].lstrip() if line[1:2] in (" ", ">", "") else line
        if not line.startswith(">"):
            break
    return line


def _value(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    v = value.strip()
    return None if v.lower() in _EMPTY else v


def _bool(value: Optional[str]) -> Optional[bool]:
    v = (value or "").strip().lower()
    if v in ("true", "yes"):
        return True
    if v in ("false", "no"):
        return False
    return None


def _version_prefix(text: Optional[str], parts: int = 3) -> Optional[str]:
    if not text:
        return None
    m = re.match(r"\s*(\d+(?:\.\d+){0,N})".replace("N", str(parts - 1)), text)
    return m.group(1) if m else None


def parse(text: str) -> Report:
    """Parse a collect_env paste. Raises :class:`CollectEnvError` when nothing is recognised."""
    # Terminal control characters (an ANSI escape in a paste) never reach our output.
    text = _CONTROL.sub("", text)
    lines = [_clean_line(x) for x in text.splitlines()]
    fields: dict[str, str] = {}
    gpu_lines: list[str] = []
    cudnn_lines: list[str] = []
    cpu_lines: list[str] = []
    lib_lines: list[str] = []
    section = ""  # "", "gpu", "cudnn", "cpu", "libs"
    last_key = ""
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("```") or (stripped.startswith("<") and stripped.endswith(">")):
            # Fences and <details>/<summary> tags end whatever block was open.
            if section in ("gpu", "cudnn"):
                section = ""
            continue
        m = _KEY_RE.match(stripped)
        if m and (section != "cpu" or m.group(1) in ("PyTorch version", "Is CUDA available")):
            key, val = m.group(1), m.group(2).strip()
            if key not in fields:  # a second pasted report: the first wins
                fields[key] = val
            last_key = key
            section = ""
            if key == "GPU models and configuration":
                section = "gpu"
                if val:
                    gpu_lines.append(val)
            elif key == "cuDNN version":
                section = "cudnn"
                if val:
                    cudnn_lines.append(val)
            continue
        if stripped == "CPU:":
            section, last_key = "cpu", ""
            continue
        if stripped.startswith("Versions of relevant libraries"):
            section, last_key = "libs", ""
            continue
        if section == "gpu":
            if stripped:
                gpu_lines.append(line)
            continue
        if section == "cudnn":
            if stripped and not stripped.startswith("["):
                cudnn_lines.append(stripped)
                continue
            section = ""
        if section == "cpu":
            if stripped.startswith("[pip") or stripped.startswith("[conda]"):
                section = "libs"
            else:
                cpu_lines.append(stripped)
                continue
        if section == "libs" or stripped.startswith("[pip") or stripped.startswith("[conda]"):
            if stripped.startswith("[pip") or stripped.startswith("[conda]"):
                lib_lines.append(stripped)
                section = "libs"
            continue
        # An e-mail wrapped "Python version" value continues on the next line.
        if last_key == "Python version" and stripped and "runtime)" not in fields[last_key]:
            fields[last_key] = fields[last_key] + " " + stripped
            continue
        last_key = ""
    if "PyTorch version" not in fields and not ({"OS", "Python version"} <= fields.keys()):
        raise CollectEnvError(
            "this is not a `python -m torch.utils.collect_env` report (no 'PyTorch version:' "
            "line and no 'OS:'/'Python version:' lines were found)"
        )
    truncated = not lib_lines or bool(lib_lines and not _complete_lib_line(lib_lines[-1]))
    return _build(fields, gpu_lines, cudnn_lines, cpu_lines, lib_lines, truncated)


def _complete_lib_line(line: str) -> bool:
    # "[pip3] to" or "[conda] numpy  1.18.5  p" are cut mid-line; complete ones have a version.
    body = line.split("]", 1)[-1].strip()
    if body.lower() == "could not collect":
        return True
    if "==" in body:
        return bool(re.search(r"==\S+$", body))
    return len(body.split()) >= 3


# --- building the facts ---------------------------------------------------------------------


def _os_info(fields: dict[str, str], notes: list[Note]) -> OSInfo:
    os_line = _value(fields.get("OS")) or ""
    platform = _value(fields.get("Python platform")) or ""
    libc = _value(fields.get("Libc version")) or ""
    sources: dict[str, str] = {}
    family = "other"
    low = os_line.lower()
    if low.startswith("microsoft windows") or platform.startswith("Windows"):
        family = "windows"
    elif low.startswith("macos") or low.startswith("mac osx") or platform.startswith("macOS"):
        family = "darwin"
    elif platform.startswith("Linux") or os_line:
        family = "linux"
    kw: dict[str, object] = {"family": family}
    if os_line or platform:
        sources["family"] = f"{SOURCE}:OS"
    if family == "linux":
        name = re.sub(r"\s*\((x86_64|aarch64|ppc64le|s390x|arm64)\)\s*$", "", os_line).strip()
        if name:
            kw["distro_name"] = name
            sources["distro_name"] = f"{SOURCE}:OS"
            for needle, ident in _DISTRO_IDS:
                if needle in name.lower():
                    kw["distro_id"] = ident
                    break
            ver = re.search(r"\b(\d+(?:\.\d+)*)\b", name)
            if ver:
                kw["distro_version"] = ver.group(1)
        km = re.match(r"^Linux-(.+?)-(x86_64|aarch64|ppc64le|s390x|armv\w+)-with", platform)
        if km:
            kw["kernel"] = km.group(1)
            sources["kernel"] = f"{SOURCE}:Python platform"
            if "microsoft-standard-wsl2" in km.group(1).lower():
                kw["wsl"] = 2
            elif "microsoft" in km.group(1).lower():
                kw["wsl"] = 1
        gm = re.match(r"glibc-(\d+\.\d+)", libc) or re.search(r"with-glibc(\d+\.\d+)", platform)
        if gm:
            kw["libc"] = "glibc"
            kw["glibc"] = gm.group(1)
            sources["glibc"] = f"{SOURCE}:Libc version"
        elif libc.startswith("musl"):
            kw["libc"] = "musl"
    elif family == "darwin":
        mm = re.search(r"(?:macOS|Mac OSX)[ -](\d+(?:\.\d+)*)", os_line) or re.match(
            r"macOS-(\d+(?:\.\d+)*)", platform
        )
        if mm:
            kw["macos_version"] = mm.group(1)
            sources["macos_version"] = f"{SOURCE}:OS"
    elif family == "windows":
        wm = re.match(r"Windows-\d+-(\d+\.\d+\.\d+)", platform) or re.search(
            r"\((\d+\.\d+\.\d+)", os_line
        )
        if wm:
            kw["windows_build"] = wm.group(1)
            sources["windows_build"] = f"{SOURCE}:Python platform"
        if os_line:
            kw["distro_name"] = re.sub(r"\s*\(.*\)\s*$", "", os_line)
    kw["sources"] = sources
    return OSInfo(**kw)  # type: ignore[arg-type]


def _python_info(fields: dict[str, str], os_info: OSInfo, notes: list[Note]) -> PythonInfo:
    raw = fields.get("Python version", "")
    platform = _value(fields.get("Python platform")) or ""
    os_line = fields.get("OS", "")
    sources: dict[str, str] = {}
    version = _version_prefix(raw) or ""
    if raw and not version:
        notes.append(
            Note("collect-env-python-garbled", f"unreadable Python version {raw!r}", SOURCE)
        )
    if version:
        sources["version"] = f"{SOURCE}:Python version"
    is_64bit = True
    if "32-bit runtime" in raw:
        is_64bit = False
    machine = ""
    am = re.search(r"\((x86_64|aarch64|arm64|ppc64le|s390x|i686|AMD64|ARM64)\)\s*$", os_line)
    if am:
        machine = am.group(1)
    if os_info.family == "windows":
        wm = re.search(r"\((AMD64|ARM64|Intel)\)\]", raw)
        if wm:
            machine = "AMD64" if wm.group(1) == "AMD64" else wm.group(1)
    elif os_info.family == "darwin":
        pm = re.match(r"macOS-[\d.]+-(x86_64|arm64)-", platform)
        if pm:
            machine = pm.group(1)
    if machine:
        sources["machine"] = f"{SOURCE}:OS"
    impl = "pypy" if "PyPy" in raw else "cpython"
    return PythonInfo(
        version=version,
        implementation=impl,
        free_threaded="free-threading" in raw,
        machine=machine,
        is_64bit=is_64bit,
        sources=sources,
    )


def _cpu_info(cpu_lines: list[str], python: PythonInfo, os_info: OSInfo) -> CpuInfo:
    kv: dict[str, str] = {}
    bare: list[str] = []
    for line in cpu_lines:
        m = re.match(r"^([A-Za-z][\w ()/-]*?)\s*[:=]\s*(.*)$", line)
        if m:
            kv.setdefault(m.group(1).strip(), m.group(2).strip())
        elif line:
            bare.append(line)
    model = kv.get("Model name") or kv.get("Name") or (bare[0] if bare else None)
    if model in ("-", ""):
        model = kv.get("BIOS Model name")
    vendor = kv.get("Vendor ID") or kv.get("Manufacturer")
    arch = kv.get("Architecture")
    if arch is not None and not re.match(r"^[a-z][a-z0-9_]*$", arch):
        arch = None  # Windows prints "Architecture=9" (a WMI code), not a name
    if arch is None and model and model.startswith("Apple M"):
        arch = "arm64"
    cores = kv.get("CPU(s)")
    flags_line = kv.get("Flags", "")
    # lscpu's Flags line is the kernel's /proc/cpuinfo flags: summarised as the CPU probe does.
    isa_level, flags = summarize_flags(frozenset(flags_line.split()))
    sources = {k: f"{SOURCE}:CPU" for k, v in (("model", model), ("architecture", arch)) if v}
    if flags_line:
        sources["isa_level"] = sources["flags"] = f"{SOURCE}:CPU Flags"
    return CpuInfo(
        model=model,
        vendor=vendor,
        architecture=arch,
        logical_cores=int(cores) if cores and cores.isdigit() else None,
        isa_level=isa_level if flags_line else None,
        flags=flags,
        sources=sources,
    )


_GPU_LINE = re.compile(r"^GPU (\d+): (.+?)\s*(?:\(UUID: [^)]*\))?$")
_MIG_LINE = re.compile(r"^\s*MIG \S+\s+Device\s+\d+")
_AMD_NAME = re.compile(r"\b(AMD|Radeon|Instinct)\b|\bgfx\d", re.I)


def _gpus(gpu_lines: list[str], rocm_build: bool) -> tuple[list[Gpu], list[Gpu]]:
    """(nvidia, amd) GPUs from the GPU block."""
    nvidia: list[Gpu] = []
    amd: list[Gpu] = []
    mig: set[int] = set()
    for line in gpu_lines:
        text = line.strip()
        if _value(text) is None:
            continue
        if _MIG_LINE.match(line):
            if nvidia:
                mig.add(nvidia[-1].index)
            continue
        m = _GPU_LINE.match(text)
        if m:
            name = m.group(2).strip()
            if rocm_build or _AMD_NAME.search(name):
                amd.append(_amd_gpu(len(amd), name))
            else:
                nvidia.append(Gpu(index=int(m.group(1)), name=name, source=SOURCE))
            continue
        if rocm_build or _AMD_NAME.search(text):
            amd.append(_amd_gpu(len(amd), text))
    nvidia = [replace(g, mig_mode=True) if g.index in mig else g for g in nvidia]
    return nvidia, amd


def _amd_gpu(index: int, text: str) -> Gpu:
    gm = re.search(r"\((gfx[0-9a-f]+)[^)]*\)\s*$", text)
    name = re.sub(r"\s*\(gfx[^)]*\)\s*$", "", text).strip()
    return Gpu(
        index=index, name=name, vendor="amd", gfx_arch=gm.group(1) if gm else None, source=SOURCE
    )


def _cudnn_version(cudnn_lines: list[str]) -> Optional[str]:
    best: Optional[tuple[int, ...]] = None
    for line in cudnn_lines:
        m = re.search(r"libcudnn\.so\.(\d+(?:\.\d+){0,2})\b", line) or re.search(
            r"cudnn\w*64_(\d+)\.dll", line
        )
        if not m:
            m = re.fullmatch(r"(\d+\.\d+(?:\.\d+)?)", line.strip())
        if m:
            ver = tuple(int(p) for p in m.group(1).split("."))
            if best is None or ver > best:
                best = ver
    return ".".join(str(p) for p in best) if best else None


def _conda_variant(build: str) -> Optional[Variant]:
    """A conda build string's variant: ``py3.11_cuda12.1_cudnn8.9.2_0`` -> cu121."""
    if "cpu" in build:
        return CPU
    m = re.search(r"cuda(\d+\.\d+)", build)
    return Variant.cuda_of(m.group(1)) if m else None


def _packages(
    fields: dict[str, str], lib_lines: list[str], os_info: OSInfo
) -> list[InstalledPackage]:
    torch_version = _value(fields.get("PyTorch version"))
    cuda_build = _value(fields.get("CUDA used to build PyTorch"))
    rocm_build = _value(fields.get("ROCM used to build PyTorch"))
    found: list[InstalledPackage] = []
    for line in lib_lines:
        tag, _, body = line.partition("]")
        body = body.strip()
        if body.lower() == "could not collect" or not body:
            continue
        if tag.startswith("[pip"):
            m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", body)
            if not m:
                continue
            name, version, installer = m.group(1), m.group(2), "pip"
            variant: Optional[Variant] = None
        else:
            parts = body.split()
            if len(parts) < 2:
                continue
            name, version = parts[0], parts[1]
            build = parts[2] if len(parts) > 2 else ""
            channel = parts[3] if len(parts) > 3 else ""
            if channel == "pypi" or build.startswith("pypi"):
                continue  # pip-installed inside conda: already listed under [pip3]
            installer, variant = "conda", _conda_variant(build)
        name = "torch" if name.lower() == "pytorch" else name.lower().replace("_", "-")
        if name not in ("torch", "torchvision", "torchaudio"):
            continue
        if not re.match(r"^\d+(\.\d+)*", version):
            continue
        found.append(
            InstalledPackage(
                name=name,
                version=version,
                variant=variant or Variant.from_local(version),
                installer=installer,
                source=f"{SOURCE}:{tag}]",
            )
        )
    out: list[InstalledPackage] = []
    # The torch the report imported comes first and wins; other torch installs are shadowed.
    if torch_version:
        torch_variant = Variant.from_local(torch_version)
        cuda = cuda_build if cuda_build and re.match(r"^\d+\.\d+", cuda_build) else None
        hip = rocm_build
        if torch_variant is None:
            if cuda:
                torch_variant = Variant.cuda_of(cuda)
            elif hip:
                torch_variant = Variant.rocm_of(hip)
            elif os_info.family in ("linux", "windows"):
                torch_variant = CPU
        listed = [p for p in found if p.name == "torch" and p.version == torch_version]
        torch_installer = listed[0].installer if listed else None
        out.append(
            InstalledPackage(
                name="torch",
                version=torch_version,
                variant=torch_variant,
                cuda=cuda,
                hip=hip,
                installer=torch_installer,
                source=f"{SOURCE}:PyTorch version",
            )
        )
    seen_torch = {torch_version} if torch_version else set()
    for pkg in found:
        if pkg.name == "torch":
            if pkg.version in seen_torch:
                continue
            seen_torch.add(pkg.version)
            out.append(replace(pkg, shadowed=bool(torch_version)))
        elif not any(p.name == pkg.name for p in out):
            out.append(pkg)
        elif pkg.version not in {p.version for p in out if p.name == pkg.name}:
            out.append(replace(pkg, shadowed=True))
    return out


def _build(
    fields: dict[str, str],
    gpu_lines: list[str],
    cudnn_lines: list[str],
    cpu_lines: list[str],
    lib_lines: list[str],
    truncated: bool,
) -> Report:
    notes: list[Note] = []
    os_info = _os_info(fields, notes)
    python = _python_info(fields, os_info, notes)
    cpu = _cpu_info(cpu_lines, python, os_info)
    if (
        os_info.family == "darwin"
        and python.machine == "x86_64"
        and (cpu.model or "").startswith("Apple M")
    ):
        # An x86_64 interpreter on Apple Silicon can only be running under Rosetta 2.
        python = replace(python, rosetta=True, sources={**python.sources, "rosetta": SOURCE})
    rocm_build = _value(fields.get("ROCM used to build PyTorch"))
    hip_runtime = _value(fields.get("HIP runtime version"))
    nv_gpus, amd_gpus = _gpus(gpu_lines, bool(rocm_build or hip_runtime))
    nv_gpus = [_with_cc(g) for g in nv_gpus]
    driver = _value(fields.get("Nvidia driver version"))
    nvidia: Optional[NvidiaInfo] = None
    if driver or nv_gpus:
        src = {
            k: f"{SOURCE}:{label}"
            for k, label, v in (
                ("driver_version", "Nvidia driver version", driver),
                ("gpus", "GPU models and configuration", nv_gpus),
            )
            if v
        }
        nvidia = NvidiaInfo(driver_version=driver, gpus=tuple(nv_gpus), sources=src)
    rocm: Optional[RocmInfo] = None
    if amd_gpus or hip_runtime:
        rocm = RocmInfo(
            version=_version_prefix(hip_runtime, 2),
            gpus=tuple(amd_gpus),
            sources={"version": f"{SOURCE}:HIP runtime version"} if hip_runtime else {},
        )
    xpu_available = _bool(fields.get("Is XPU available"))
    xpu = XpuInfo(sources={"gpus": f"{SOURCE}:Is XPU available"}) if xpu_available else None
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
    facts = Facts(
        os=os_info,
        python=python,
        cpu=cpu,
        nvidia=nvidia,
        rocm=rocm,
        xpu=xpu,
        toolkits=toolkits,
        packages=tuple(packages),
        notes=tuple(notes),
    )
    return Report(
        facts=facts,
        fields=dict(fields),
        cuda_available=cuda_available,
        xpu_available=xpu_available,
        debug_build=_bool(fields.get("Is debug build")),
        truncated=truncated,
    )


def _with_cc(gpu: Gpu) -> Gpu:
    """Fill the compute capability from the GPU catalogue, when the catalogue knows the name."""
    cc = lookup_compute_capability(gpu.name)
    return replace(gpu, compute_capability=cc) if cc else gpu


def lookup_compute_capability(name: str) -> Optional[str]:
    """The catalogue's compute capability for a GPU name, or None (unknown name, no catalogue)."""
    try:
        from setup_env import gpus as catalogue
    except ImportError:  # the catalogue module is optional at this layer
        return None
    try:
        model = catalogue.lookup(name)
    except (KeyError, ValueError, LookupError):
        return None
    cc = getattr(model, "compute_capability", None) if model is not None else None
    return str(cc) if cc else None
