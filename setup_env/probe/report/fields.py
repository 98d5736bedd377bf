"""The field mapping: each group of fields read from a report turned into facts (OS, Python,
CPU, GPUs, cuDNN, packages, Intel GPUs); :mod:`.build` assembles them."""

from __future__ import annotations

import re
from typing import Optional

from setup_env._record import replace
from setup_env.facts import CpuInfo, Gpu, InstalledPackage, Note, OSInfo, PythonInfo
from setup_env.knowledge.variant import CPU, XPU, Variant
from setup_env.probe.report.model import SOURCE

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


def _value(value: Optional[str]) -> Optional[str]:
    if value is None:
        return None
    v = value.strip()
    low = v.lower()
    # "Could not" / "Could no": "Could not collect" cut mid-line is no value either.
    return None if low in _EMPTY or (low.startswith("could no") and len(low) < 18) else v


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


def _os_info(fields: dict[str, str]) -> OSInfo:
    os_line = _value(fields.get("OS")) or ""
    platform = _value(fields.get("Python platform")) or ""
    libc = _value(fields.get("Libc version")) or ""
    sources: dict[str, str] = {}
    family = "other"
    low = os_line.lower()
    wsl_said = re.search(r"\bwsl ?([12])?\b", low)
    if wsl_said and not platform.startswith("Windows"):
        # A hand-written "Windows 11 + WSL2 Ubuntu 24.04": the Python runs in WSL's Linux.
        family = "linux"
    elif (
        low.startswith("microsoft windows")
        or re.match(r"windows\b", low)
        or platform.startswith("Windows")
    ):
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
            # the version follows the distribution's name: "Windows 11 + WSL2 Ubuntu 24.04"
            # (a hand-written line) is Ubuntu 24.04, not 11
            after = 0
            for needle, ident in _DISTRO_IDS:
                at = name.lower().find(needle)
                if at >= 0:
                    kw["distro_id"] = ident
                    after = at + len(needle)
                    break
            ver = re.search(r"\b(\d+(?:\.\d+)*)\b", name[after:])
            if ver:
                kw["distro_version"] = ver.group(1)
        if wsl_said:
            kw["wsl"] = 2 if wsl_said.group(1) != "1" else 1
            sources["wsl"] = f"{SOURCE}:OS"
        km = re.match(r"^Linux-(.+?)-(x86_64|aarch64|ppc64le|s390x|armv\w+)-with", platform)
        if km:
            kw["kernel"] = km.group(1)
            sources["kernel"] = f"{SOURCE}:Python platform"
            if "microsoft-standard-wsl2" in km.group(1).lower():
                kw["wsl"] = 2
            elif "microsoft" in km.group(1).lower():
                kw["wsl"] = 1
        gm = re.match(r"glibc-(\d+\.\d+)", libc) or re.search(r"with-glibc(\d+\.\d+)", platform)
        if gm and libc.startswith("glibc-2.2.5"):
            # platform.libc_ver() read the x86_64 symbol-version base GLIBC_2.2.5 (a static
            # binary), not the library's version: unknown.
            gm = re.search(r"with-glibc(\d+\.\d+)", platform)
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


# Win32_Processor.Architecture (what collect_env prints as "Architecture=9" on Windows).
_WMI_ARCH = {"9": "AMD64", "12": "ARM64", "0": "x86"}


def _python_info(
    fields: dict[str, str],
    os_info: OSInfo,
    notes: list[Note],
    cpu_arch: Optional[str],
    cuda_build: bool,
) -> PythonInfo:
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
        elif re.search(r"^Windows-.*-SP\d", platform) is None and cpu_arch in _WMI_ARCH:
            machine = _WMI_ARCH[cpu_arch]
        elif cuda_build:
            # PyTorch's CUDA builds for Windows are x86_64 only.
            machine = "AMD64"
    elif os_info.family == "darwin":
        pm = re.match(r"macOS-[\d.]+-(x86_64|arm64)-", platform)
        if pm:
            machine = pm.group(1)
    if not machine:
        pm = re.search(r"-(x86_64|aarch64|ppc64le|s390x)-with", platform)
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


# lscpu's keys in a Chinese locale (zh_CN), as a real report prints them, and the English key
# each stands for.
_LSCPU_ZH = {"架构": "Architecture", "厂商 ID": "Vendor ID", "CPU": "CPU(s)"}


def _cpu_info(cpu_lines: list[str]) -> CpuInfo:
    kv: dict[str, str] = {}
    bare: list[str] = []
    for line in cpu_lines:
        # "Key: value", "Key=value" (Windows), "键：value" (a localised lscpu, full-width colon)
        m = re.match(r"^([^\W\d_][\w ()/-]*?)\s*[:=\uff1a]\s*(.*)$", line)
        if m:
            key = m.group(1).strip()
            kv.setdefault(_LSCPU_ZH.get(key, key), m.group(2).strip())
        elif line:
            bare.append(line)
    # A line without a key is the model only where the block is that one line (macOS's sysctl
    # answer); beside lscpu's keys it is a key cut mid-word ("Byte Or", a paste's last line).
    model = kv.get("Model name") or kv.get("Name") or (bare[0] if bare and not kv else None)
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
    isa_level: Optional[str] = None
    flags: tuple[str, ...] = ()
    if flags_line:
        # Imported only here: the probe package pulls in subprocess & co (pure function).
        from setup_env.probe.cpu import summarize_flags

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


_GPU_LINE = re.compile(r"^GPU (\d+)\s*[:\uff1a]\s*(.+?)\s*(?:\(UUID: [^)]*\))?$")
_MIG_LINE = re.compile(r"^\s*MIG \S+\s+Device\s+\d+")
_AMD_NAME = re.compile(r"\b(AMD|Radeon|Instinct)\b|\bgfx\d", re.I)


# The most GPUs read from one report's GPU list. A machine shows at most a few dozen (an HGX node
# 8 or 16, NVML's own limit is 64); a longer list is a paste of many machines' lists or garbage,
# and each distinct name costs a catalogue look-up here and in every decider (issue 18: a 4 MB
# report of any shape is read in under 2 s). Past it, the rest of the list is not read.
MAX_GPUS = 1024


def _gpus(gpu_lines: list[str], rocm_build: bool) -> tuple[list[Gpu], list[Gpu]]:
    """(nvidia, amd) GPUs from the GPU block, at most MAX_GPUS of them."""
    nvidia: list[Gpu] = []
    amd: list[Gpu] = []
    mig: set[int] = set()
    for line in gpu_lines:
        if len(nvidia) + len(amd) >= MAX_GPUS:
            break
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
    """A conda build string's variant: ``py3.11_cuda12.1_cudnn8.9.2_0`` -> cu121; the builds
    before torch 1.2 wrote the CUDA version without its dot (``py3.7_cuda90_cudnn7_1`` -> cu90,
    ``cuda100`` -> cu100)."""
    if "cpu" in build:
        return CPU
    m = re.search(r"cuda(\d+\.\d+)", build)
    if m:
        return Variant.cuda_of(m.group(1))
    m = re.search(r"cuda(\d+)(\d)(?!\d)", build)
    return Variant.cuda_of(f"{m.group(1)}.{m.group(2)}") if m else None


def _packages(
    fields: dict[str, str], lib_lines: list[str], os_info: OSInfo
) -> list[InstalledPackage]:
    torch_version = _value(fields.get("PyTorch version"))
    cuda_build = _value(fields.get("CUDA used to build PyTorch"))
    rocm_build = _value(fields.get("ROCM used to build PyTorch"))
    # "XPU used to build PyTorch: 20250302": the oneAPI toolchain's date, printed by XPU builds.
    xpu_build = bool(
        re.match(r"^20\d{6}$", (_value(fields.get("XPU used to build PyTorch")) or ""))
    )
    found: list[InstalledPackage] = []
    pip_listed = any(x.startswith("[pip") for x in lib_lines)
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
                # pip-installed inside conda: listed under [pip3] too, unless pip's list shows
                # another version of it (then two installs share the environment).
                pip_same = any(
                    f.installer == "pip" and f.name == name.lower() and f.version == version
                    for f in found
                )
                if pip_same or name.lower() not in ("torch",) or not pip_listed:
                    continue
                installer, variant = "pip", None
            else:
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
        # A version, not a cut "N/" (a paste that stops mid-line).
        hip = rocm_build if rocm_build and re.match(r"^\d", rocm_build) else None
        if torch_variant is None:
            if cuda:
                torch_variant = Variant.cuda_of(cuda)
            elif hip:
                torch_variant = Variant.rocm_of(hip)
            elif xpu_build:
                torch_variant = XPU
            elif (
                os_info.family in ("linux", "windows")
                and not re.search(r"\+git|a0\+", torch_version)
                and _bool(fields.get("Is CUDA available")) is not True
            ):
                # A source build ("2.5.0a0+git136e28f") without CUDA or ROCm may be an XPU
                # (or any other) build: collect_env does not say.
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
    if not torch_version and "PyTorch version" in fields:
        # "PyTorch version: N/A": this interpreter has no torch; the [pip3] list is another
        # interpreter's (pip3 on PATH), so its torch is not the one that would run.
        found = [p for p in found if p.name != "torch"]
    for pkg in found:
        if pkg.name == "torch":
            if pkg.version in seen_torch:
                # pip lists a conda-installed torch too ("[pip3] torch==1.10.2" beside "[conda]
                # pytorch 1.10.2 py3.7_cuda10.2_cudnn7.6.5_0"): the conda build string names the
                # variant the bare pip version does not.
                at = next(
                    i for i, p in enumerate(out) if p.name == "torch" and p.version == pkg.version
                )
                if out[at].variant is None and pkg.variant is not None and not torch_version:
                    out[at] = replace(out[at], variant=pkg.variant)
                continue
            seen_torch.add(pkg.version)
            out.append(replace(pkg, shadowed=bool(torch_version)))
        elif not any(p.name == pkg.name for p in out):
            out.append(pkg)
        elif pkg.version not in {p.version for p in out if p.name == pkg.name}:
            out.append(replace(pkg, shadowed=True))
    return out


def _pip_libraries(lib_lines: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in lib_lines:
        if line.startswith("[pip"):
            m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)$", line.split("]", 1)[-1].strip())
            if m:
                out.setdefault(m.group(1).lower().replace("_", "-"), m.group(2))
    return out


_XPU_NAME = re.compile(r"name='([^']{1,120})'")


def _xpu_gpus(lines: list[str]) -> tuple[Gpu, ...]:
    out: list[Gpu] = []
    for line in lines:
        m = _XPU_NAME.search(line)
        if m:
            out.append(Gpu(index=len(out), name=m.group(1), vendor="intel", source=SOURCE))
    return tuple(out)
