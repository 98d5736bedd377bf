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
    JetsonInfo,
    Note,
    NvidiaInfo,
    OSInfo,
    PythonInfo,
    RocmInfo,
    XpuInfo,
)
from setup_env.knowledge.variant import CPU, XPU, Variant

SOURCE = "collect_env"
WARNING_SOURCE = "collect_env:warning"  # facts read from the messages pasted with the report

# Every "Key: value" line collect_env has printed, across its versions (PyTorch 1.x to 2.15, and
# vLLM's copy, which pads the key: "OS                           : Ubuntu 22.04"). Keys are matched
# without regard to case and spacing, so hand-edited reports ("Os:", "PyTorch version 1.5.0")
# read too. Lines with other keys (lscpu output, vendor forks' extra lines) are ignored outside
# their own section.
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
    # vLLM's "vLLM Info" section
    "ROCM Version",
    "Neuron SDK Version",
    "vLLM Version",
    "vLLM Build Flags",
    "GPU Topology",
)
# Spellings seen in pasted reports that are not collect_env's own (hand-edited or re-typed).
_ALIASES: dict[str, str] = {
    "pytorch": "PyTorch version",
    "torch version": "PyTorch version",
    "python": "Python version",
    "cuda available": "Is CUDA available",
    "nvidia driver": "Nvidia driver version",
    "driver version": "Nvidia driver version",
    "gpu models": "GPU models and configuration",
    "gpu": "GPU models and configuration",
}
_CANON: dict[str, str] = {" ".join(k.lower().split()): k for k in KEYS}
_CANON.update(_ALIASES)
# "Key: value" (ASCII or full-width colon), the key a short run of words.
_KV = re.compile(r"^([A-Za-z][A-Za-z0-9_ ./()+-]{0,60}?)\s*[:\uff1a]\s*(.*)$")
# A known key with its colon lost ("PyTorch version 1.5.0"): only the multi-word keys, and only
# when a version-like value follows.
_NOCOLON = re.compile(
    r"^("
    + "|".join(re.escape(k) for k in sorted((k for k in KEYS if " " in k), key=len, reverse=True))
    + r")\s+(\d[\w.+-]*.*)$",
    re.I,
)
# Section headings of vLLM's layout (between lines of "=").
_HEADINGS: dict[str, str] = {
    "system info": "",
    "pytorch info": "",
    "python environment": "",
    "cuda / gpu info": "",
    "cpu info": "cpu",
    "versions of relevant libraries": "libs",
    "version of relevant libraries": "libs",
    "vllm info": "vllm",
    "environment variables": "env",
}
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
    layout: str = "pytorch"  # "pytorch" | "vllm" (sectioned, padded keys) | "messages" (no keys)
    missing: tuple[str, ...] = ()  # facts a diagnosis needs that the paste lacks: "gpus", "os"...
    warnings: tuple[TorchMessage, ...] = ()  # torch's own messages pasted with the report
    libraries: dict[str, str] = field(default_factory=dict)  # pip name -> version


_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]*)+")


def _clean_line(raw: str) -> str:
    """One pasted line without its end and without Markdown reply quoting ("> ", "> > ", ">x").
    Linear in the line's length."""
    return _QUOTE.sub("", raw.rstrip("\r\n").rstrip(), count=1)


def decode(data: bytes) -> str:
    """Text from the bytes of a pasted report: UTF-8 (with or without a BOM), or UTF-16 with a
    BOM or without one (PowerShell's ``>`` writes UTF-16 LE). Undecodable bytes become U+FFFD."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    head = data[:4096]
    if len(head) >= 4:
        # ASCII text in UTF-16 has a NUL in every other byte.
        odd, even = head[1::2], head[0::2]
        if odd.count(0) > len(odd) * 0.4 and even.count(0) == 0:
            return data.decode("utf-16-le", errors="replace")
        if even.count(0) > len(even) * 0.4 and odd.count(0) == 0:
            return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")


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


def _key(line: str) -> Optional[tuple[str, str]]:
    """(canonical key, value) when the line is a known collect_env key line."""
    m = _KV.match(line)
    if m:
        canon = _CANON.get(" ".join(m.group(1).lower().split()))
        if canon is not None:
            return canon, m.group(2).strip()
    m = _NOCOLON.match(line)
    if m:
        return _CANON[" ".join(m.group(1).lower().split())], m.group(2).strip()
    return None


def _heading(stripped: str) -> Optional[str]:
    low = " ".join(stripped.lower().split())
    if low in _HEADINGS:
        return _HEADINGS[low]
    if low.startswith("versions of relevant libraries") or low.startswith(
        "version of relevant libraries"
    ):
        return "libs"
    return None


_GPU_LIST = re.compile(r"^GPU \d+\s*[:\uff1a]")
_VLLM_ONLY = {"system info", "pytorch info", "python environment", "cuda / gpu info", "cpu info"}
_VLLM_ONLY |= {"vllm info"}


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
    xpu_lines: list[str] = []
    env: dict[str, str] = {}
    section = ""  # "", "gpu", "cudnn", "cpu", "libs", "vllm", "env", "xpu"
    last_key = ""
    vllm_layout = False
    after_rule = False  # the previous line was a rule of "=" (vLLM's section headings)
    end = len(lines)
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if (
            stripped.startswith("```")
            or stripped.startswith("~~~")
            or (stripped.startswith("<") and stripped.endswith(">"))
        ):
            # Fences and <details>/<summary> tags end whatever block was open.
            if section in ("gpu", "cudnn", "xpu"):
                section = ""
            continue
        if set(stripped) == {"="}:
            after_rule = True
            if section in ("gpu", "cudnn", "xpu"):
                section = ""
            continue
        heading = _heading(stripped)
        ruled, after_rule = after_rule, False
        vllm_heading = " ".join(stripped.lower().split()) in _VLLM_ONLY
        if heading is not None and (ruled or not vllm_heading):
            # vLLM's headings sit between lines of "="; "System info" in prose is no heading.
            section, last_key = heading, ""
            vllm_layout = vllm_layout or vllm_heading
            continue
        kv = _key(stripped)
        if kv and (section != "cpu" or kv[0] in ("PyTorch version", "Is CUDA available")):
            key, val = kv
            if key == "PyTorch version" and key in fields and len(fields) >= 5:
                # A second whole report pasted after the first: the first wins, and none of
                # the second's GPUs, libraries or messages mix into it.
                end = index
                break
            if key not in fields:  # a second pasted report: the first wins
                fields[key] = val
            last_key = key
            section = "vllm" if section == "vllm" else ""
            if key == "GPU models and configuration":
                section = "gpu"
                if val:
                    gpu_lines.append(val)
            elif key == "cuDNN version":
                section = "cudnn"
                if val:
                    cudnn_lines.append(val)
            elif key == "Intel GPU models detected":
                section = "xpu"
            continue
        if stripped == "CPU:":
            section, last_key = "cpu", ""
            continue
        if section == "gpu" and " ".join(stripped.lower().split()) in _CANON:
            section = ""  # a key cut before its colon ends the GPU list
            continue
        if section == "gpu":
            if _GPU_LIST.match(stripped) or line[:1] in (" ", "\t") or not _KV.match(stripped):
                gpu_lines.append(line)
                continue
            section = ""
        if section == "xpu":
            xpu_lines.append(stripped)
            continue
        if section == "cudnn":
            if not stripped.startswith("["):
                cudnn_lines.append(stripped)
                continue
            section = ""
        if section == "cpu":
            if stripped.startswith("[pip") or stripped.startswith("[conda]"):
                section = "libs"
            else:
                cpu_lines.append(stripped)
                continue
        if section == "env":
            em = re.match(r"^([A-Z_][A-Z0-9_]{0,80})=(.*)$", stripped)
            if em:
                env.setdefault(em.group(1), em.group(2))
            continue
        if stripped.startswith("[pip") or stripped.startswith("[conda]"):
            lib_lines.append(stripped)
            section = "libs"
            continue
        if section in ("libs", "vllm"):
            continue
        # An e-mail wrapped "Python version" value continues on the next line.
        if last_key == "Python version" and _unclosed(fields[last_key]):
            fields[last_key] = fields[last_key] + " " + stripped
            continue
        last_key = ""
    messages = read_messages(" ".join(lines[:end]))
    have_facts = "PyTorch version" in fields or bool(
        {"OS", "Python version", "Python platform", "GPU models and configuration"} & fields.keys()
    )
    if (
        not have_facts
        and not messages
        and not any(_PIP_TORCH.match(x.split("]", 1)[-1].strip()) for x in lib_lines)
    ):
        raise CollectEnvError(
            "this is not a `python -m torch.utils.collect_env` report: none of its lines "
            "('PyTorch version:', 'OS:', 'Python version:', 'GPU models and configuration:', "
            "a [pip3] torch line) nor any of torch's CUDA messages were found"
        )
    truncated = bool(fields) and (
        not lib_lines or bool(lib_lines and not _complete_lib_line(lib_lines[-1]))
    )
    layout = "vllm" if vllm_layout else ("pytorch" if fields or lib_lines else "messages")
    return _build(
        fields,
        gpu_lines,
        cudnn_lines,
        cpu_lines,
        lib_lines,
        truncated,
        layout=layout,
        messages=messages,
        xpu_lines=xpu_lines,
        env=env,
    )


_PIP_TORCH = re.compile(r"^torch==\d")


def _unclosed(value: str) -> bool:
    return "runtime)" not in value and (
        value.count("(") > value.count(")") or value.count("[") > value.count("]")
    )


# --- torch's own messages, pasted with the report -----------------------------------------------


@dataclass(frozen=True)
class TorchMessage:
    """One of torch's (or the CUDA/ROCm runtime's) messages found in the paste, read into values.

    ``kind``: "driver-too-old" (``cuda_driver``: the CUDA version the driver supports),
    "arch-not-compatible" (``gpu``, ``cc`` and ``arches``: the installed wheel's list),
    "gpu-too-old" (``gpu``, ``cc``, ``min_cc``), "no-kernel-image", "device-count-error"
    (``error``: 803/804/999...), "mps-unavailable" (``min_macos`` when the message names one),
    "library-load" (``library``), "rocm-no-kernel"."""

    kind: str
    text: str  # the message as pasted (one line, at most 300 characters)
    gpu: Optional[str] = None
    cc: Optional[str] = None  # "12.0"
    min_cc: Optional[str] = None
    arches: tuple[str, ...] = ()  # ("sm_50", "sm_60", ...)
    cuda_driver: Optional[str] = None  # "11.4"
    error: Optional[int] = None
    library: Optional[str] = None
    min_macos: Optional[str] = None


# Each pattern is anchored on fixed words and uses bounded, non-nested repetition: linear time.
_M_DRIVER = re.compile(r"NVIDIA driver on your system is too old \(found version (\d{4,6})\)")
_M_ARCH = re.compile(
    r"with CUDA capability sm_(\d{2,3}) is not compatible with the current PyTorch installation"
    r"\.?\s{0,8}The current PyTorch install supports CUDA capabilities"
    r"((?:\s{1,4}(?:sm|compute)_\d{2,3}[a-z]?){1,40})"
)
_M_NAME_BEFORE = re.compile(r"([A-Za-z][\w ()-]{0,80}?)\s*$")
_M_OLD_GPU = re.compile(
    r"Found GPU\s?(\d{1,2}),? ([\w ()\[\]/.-]{1,80}?) which is of cuda capability "
    r"(\d{1,2})\.(\d)\.?\s{0,8}(?:PyTorch no longer supports this GPU because it is too old\."
    r"\s{0,8}The minimum cuda capability (?:that we support|supported by this library) is "
    r"(\d{1,2}\.\d)|Minimum and Maximum cuda capability supported by this version of PyTorch "
    r"is\s{0,4}\((\d{1,2}\.\d)\))"
)
_M_NO_KERNEL = re.compile(r"no kernel image is available for execution on the device")
_M_COUNT = re.compile(
    r"(?:Unexpected error from cudaGetDeviceCount\(\)|cudaGetDeviceCount)[^.]{0,120}?"
    r"(?:\.[^.]{0,200}?)?Error (\d{3}): ([A-Za-z /-]{3,80})"
)
_M_MPS = re.compile(
    r"MPS backend is supported on mac ?OS (\d{2}(?:\.\d)?)\+|MPS not available because the "
    r"current (?:MacOS|macOS) version is not (\d{2}(?:\.\d)?)\+|MPS not available because the "
    r"current PyTorch install was not built with MPS enabled",
    re.I,
)
_M_LIB = re.compile(
    r"((?:lib)?(?:nccl|cudnn\w{0,20}|cublas\w{0,10}|cudart|cusparse\w{0,10})"
    r"(?:\.so[.\d]{0,12}|64_\d{1,3}\.dll))[\w ():'\\/.-]{0,40}?(?:cannot open shared object file|"
    r"could not be found|not found|undefined symbol)",
    re.I,
)
_M_LIB2 = re.compile(r"(?:Could not load library|Unable to load) (lib\w{2,30}\.so[.\d]{0,12})")
_M_ROCM = re.compile(r"HIP error: invalid device function|hipErrorNoBinaryForGpu")


def read_messages(text: str) -> tuple[TorchMessage, ...]:
    """torch's messages in ``text`` (the paste joined into one line), in order of appearance,
    each kind with the same values once."""
    found: list[tuple[int, TorchMessage]] = []

    def add(pos: int, msg: TorchMessage) -> None:
        if msg.library:
            msg = replace(msg, library=msg.library.rstrip("."))
        if all(replace(m, text="") != replace(msg, text="") for _, m in found):
            found.append((pos, msg))

    def snip(m: re.Match[str]) -> str:
        return " ".join(m.group(0).split())[:300]

    # Cheap substring tests first: most reports hold none of the messages.
    low = text.lower()
    for m in _M_DRIVER.finditer(text) if "too old (found version" in text else ():
        n = int(m.group(1))
        add(
            m.start(),
            TorchMessage("driver-too-old", snip(m), cuda_driver=f"{n // 1000}.{n % 1000 // 10}"),
        )
    for m in _M_ARCH.finditer(text) if "capability sm_" in text else ():
        cc = m.group(1)
        nm = _M_NAME_BEFORE.search(text[max(0, m.start() - 100) : m.start()])
        gpu = " ".join(nm.group(1).split()) if nm else None
        add(
            m.start(),
            TorchMessage(
                "arch-not-compatible",
                ((gpu + " ") if gpu else "") + snip(m),
                gpu=gpu,
                cc=f"{cc[:-1]}.{cc[-1]}",
                arches=tuple(m.group(2).split()),
            ),
        )
    for m in _M_OLD_GPU.finditer(text) if "Found GPU" in text else ():
        add(
            m.start(),
            TorchMessage(
                "gpu-too-old",
                snip(m),
                gpu=" ".join(m.group(2).split()),
                cc=f"{m.group(3)}.{m.group(4)}",
                min_cc=m.group(5) or m.group(6),
            ),
        )
    for m in _M_NO_KERNEL.finditer(text) if "no kernel image" in text else ():
        add(m.start(), TorchMessage("no-kernel-image", snip(m)))
    for m in _M_COUNT.finditer(text) if "cudaGetDeviceCount" in text else ():
        add(m.start(), TorchMessage("device-count-error", snip(m), error=int(m.group(1))))
    for m in _M_MPS.finditer(text) if "mps " in low else ():
        add(m.start(), TorchMessage("mps-unavailable", snip(m), min_macos=m.group(1) or m.group(2)))
    libs = ("cannot open shared object" in text or "undefined symbol" in text) or (
        "could not be found" in text or " not found" in text
    )
    for m in _M_LIB.finditer(text) if libs else ():
        add(m.start(), TorchMessage("library-load", snip(m), library=m.group(1)))
    for m in _M_LIB2.finditer(text) if "load" in low else ():
        add(m.start(), TorchMessage("library-load", snip(m), library=m.group(1)))
    for m in _M_ROCM.finditer(text) if "hip" in low else ():
        add(m.start(), TorchMessage("rocm-no-kernel", snip(m)))
    return tuple(msg for _, msg in sorted(found, key=lambda x: x[0]))


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


# Win32_Processor.Architecture (what collect_env prints as "Architecture=9" on Windows).
_WMI_ARCH = {"9": "AMD64", "12": "ARM64", "0": "x86"}


def _python_info(
    fields: dict[str, str],
    os_info: OSInfo,
    notes: list[Note],
    cpu_arch: str = "",
    cuda_build: bool = False,
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
        hip = rocm_build
        if torch_variant is None:
            if cuda:
                torch_variant = Variant.cuda_of(cuda)
            elif hip:
                torch_variant = Variant.rocm_of(hip)
            elif os_info.family in ("linux", "windows") and not re.search(
                r"\+git|a0\+", torch_version
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
    *,
    layout: str = "pytorch",
    messages: tuple[TorchMessage, ...] = (),
    xpu_lines: Optional[list[str]] = None,
    env: Optional[dict[str, str]] = None,
) -> Report:
    notes: list[Note] = []
    os_info = _os_info(fields, notes)
    wmi = next(
        (
            re.split(r"[:=]", x, maxsplit=1)[1].strip()
            for x in cpu_lines
            if re.match(r"^Architecture\s*[:=]", x)
        ),
        "",
    )
    cuda_build = bool(re.match(r"^\d+\.\d+", fields.get("CUDA used to build PyTorch", "")))
    python = _python_info(fields, os_info, notes, wmi, cuda_build)
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
    from setup_env.probe.resolve import fill

    # What the catalogues know (one resolve step): NVIDIA compute capability, AMD gfx id.
    nv_gpus = [fill(g) for g in nv_gpus]
    amd_gpus = [fill(g) for g in amd_gpus]
    driver = _value(fields.get("Nvidia driver version"))
    # torch's messages: the driver's CUDA version, GPUs the GPU list did not show.
    cuda_driver = next((m.cuda_driver for m in messages if m.cuda_driver), None)
    for m in messages:
        if m.gpu and m.cc and m.kind in ("arch-not-compatible", "gpu-too-old"):
            known = [g for g in nv_gpus if g.name == m.gpu]
            if known:
                nv_gpus = [
                    replace(g, compute_capability=g.compute_capability or m.cc) for g in nv_gpus
                ]
            else:
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
        src = {
            k: f"{SOURCE}:{label}"
            for k, label, v in (
                ("driver_version", "Nvidia driver version", driver),
                ("gpus", "GPU models and configuration", nv_gpus),
            )
            if v
        }
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
    xpu_gpus = _xpu_gpus(xpu_lines or [])
    xpu = (
        XpuInfo(gpus=xpu_gpus, sources={"gpus": f"{SOURCE}:Intel GPU models detected"})
        if xpu_available or xpu_gpus
        else None
    )
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
    return Report(
        facts=facts,
        fields=dict(fields),
        cuda_available=cuda_available,
        xpu_available=xpu_available,
        debug_build=_bool(fields.get("Is debug build")),
        truncated=truncated,
        layout=layout,
        missing=_missing(fields, facts),
        warnings=messages,
        libraries=_pip_libraries(lib_lines),
    )


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
    embedded = [g for g in nv_gpus if _segment(g.name) == "embedded"]
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


def _segment(name: str) -> Optional[str]:
    try:
        from setup_env.knowledge import gpus as catalogue

        model = catalogue.lookup(name)
    except (ImportError, KeyError, ValueError, LookupError):
        return None
    return getattr(model, "segment", None) if model is not None else None


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
