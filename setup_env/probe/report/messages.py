"""torch's own messages (and the CUDA and ROCm runtimes'), pasted with a report or alone, read
into :class:`TorchMessage` values."""

from __future__ import annotations

import re
from typing import Iterator, Optional

from setup_env._record import Record, fields, record, replace


@record
class TorchMessage(Record):
    """One of torch's (or the CUDA/ROCm runtime's) messages found in the paste, read into values.

    ``kind``: "driver-too-old" (``cuda_driver``: the CUDA version the driver supports),
    "arch-not-compatible" (``gpu``, ``cc`` and ``arches``: the installed wheel's list),
    "gpu-too-old" (``gpu``, ``cc``, ``min_cc``), "gpu-too-new" (``gpu``, ``cc`` above the build's
    ``max_cc``), "no-kernel-image", "device-count-error"
    (``error``: 803/804/999...), "mps-unavailable" (``min_macos`` when the message names one),
    "library-load" (``library``), "rocm-no-kernel", "no-driver" (torch's "Found no NVIDIA driver
    on your system").
    """

    kind: str
    text: str  # the message as pasted (one line, at most 300 characters)
    gpu: Optional[str] = None
    cc: Optional[str] = None  # "12.0"
    min_cc: Optional[str] = None
    max_cc: Optional[str] = None
    arches: tuple[str, ...] = ()  # ("sm_50", "sm_60", ...)
    cuda_driver: Optional[str] = None  # "11.4"
    error: Optional[int] = None
    library: Optional[str] = None
    min_macos: Optional[str] = None


# What makes two messages the same message: every field but the text as pasted.
_VALUES = tuple(f.name for f in fields(TorchMessage) if f.name != "text")

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
    r"is\s{0,8}\((\d{1,2}\.\d)\)(?:\s{0,4}-\s{0,4}\((\d{1,2}\.\d)\))?)"
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
# The file name, then at most 40 characters that start no other library name (the library is
# the one nearest the phrase: a cuDNN path listed on the line above a loader message is not
# the library that failed), then the phrase.
_M_LIB = re.compile(
    r"((?:lib)?(?:nccl|cudnn\w{0,20}|cublas\w{0,10}|cudart|cusparse\w{0,10})"
    r"(?:\.so[.\d]{0,12}|64_\d{1,3}\.dll))"
    r"(?:(?!(?:nccl|cudnn|cublas|cudart|cusparse|lib(?:nccl|cudnn|cublas|cudart|cusparse)))"
    r"[\w ():'\\/.-]){0,40}?(?:cannot open shared object file|could not be found|not found|"
    r"undefined symbol)",
    re.I,
)
_LIB_NAMES = ("nccl", "cudnn", "cublas", "cudart", "cusparse")  # _M_LIB's names, lower case
_LIB_ENDS = (
    "cannot open shared object file",
    "could not be found",
    "not found",
    "undefined symbol",
)
# The loader's "Could not load library libcudnn_ops_infer.so.8." (Linux) and "Could not load
# library cudnn_ops_infer64_8.dll. Error code 126" (Windows: cuDNN's DLLs are named
# <name>64_<major>.dll).
_M_LIB2 = re.compile(
    r"(?:Could not load library|Unable to load) "
    r"(lib\w{2,30}\.so[.\d]{0,12}|[A-Za-z]\w{1,30}64_\d{1,3}\.dll)"
)
_M_NO_DRIVER = re.compile(r"Found no NVIDIA driver on your system")
_M_ROCM = re.compile(r"HIP error: invalid device function|hipErrorNoBinaryForGpu")


def read_messages(text: str) -> tuple[TorchMessage, ...]:
    """torch's messages in ``text`` (the paste, its lines joined by line breaks or by spaces),
    in order of appearance, each kind with the same values once. A message is read across line
    breaks (an e-mail wrapped paste); the GPU a warning names is read from the warning's own
    line, never from the end of the line above it."""
    breaks = text
    text = text.replace("\n", " ")  # the same positions, one line
    found: list[tuple[int, TorchMessage]] = []
    # The values of each message kept (its text aside): a set, so that a paste of thousands of
    # distinct messages is read in linear time (issue 18).
    seen: set[tuple[object, ...]] = set()

    def add(pos: int, msg: TorchMessage) -> None:
        if msg.library:
            msg = replace(msg, library=msg.library.rstrip("."))
        values = tuple(getattr(msg, name) for name in _VALUES)
        if values not in seen:
            seen.add(values)
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
        # The name ends the text before the warning, on its line (at most 100 characters back).
        start = max(0, m.start() - 100)
        start = max(start, breaks.rfind("\n", start, m.start()) + 1)
        nm = _M_NAME_BEFORE.search(text[start : m.start()])
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
        # torch prints this one when the GPU is below the build's minimum or above its maximum
        # ("Found GPU0 NVIDIA GB10 which is of cuda capability 12.1. Minimum and Maximum ... is
        # (8.0) - (12.0)", its lines indented by four spaces): above is not "too old".
        cc = (int(m.group(3)), int(m.group(4)))
        top = m.group(7)
        newer = top is not None and cc > tuple(int(x) for x in top.split("."))
        add(
            m.start(),
            TorchMessage(
                "gpu-too-new" if newer else "gpu-too-old",
                snip(m),
                gpu=" ".join(m.group(2).split()),
                cc=f"{m.group(3)}.{m.group(4)}",
                min_cc=m.group(5) or m.group(6),
                max_cc=top,
            ),
        )
    for m in _M_NO_KERNEL.finditer(text) if "no kernel image" in text else ():
        add(m.start(), TorchMessage("no-kernel-image", snip(m)))
    for m in _M_COUNT.finditer(text) if "cudaGetDeviceCount" in text else ():
        add(m.start(), TorchMessage("device-count-error", snip(m), error=int(m.group(1))))
    for m in _M_MPS.finditer(text) if "mps " in low else ():
        add(m.start(), TorchMessage("mps-unavailable", snip(m), min_macos=m.group(1) or m.group(2)))
    # _M_LIB ignores case: so does its cheap test (in the lower-cased text)
    libs = ("cannot open shared object" in low or "undefined symbol" in low) or (
        "could not be found" in low or " not found" in low
    )
    for m in _lib_matches(text, low) if libs else ():
        add(m.start(), TorchMessage("library-load", snip(m), library=m.group(1)))
    for m in _M_LIB2.finditer(text) if "load" in low else ():
        add(m.start(), TorchMessage("library-load", snip(m), library=m.group(1)))
    for m in _M_NO_DRIVER.finditer(text) if "no NVIDIA driver" in text else ():
        add(m.start(), TorchMessage("no-driver", snip(m)))
    for m in _M_ROCM.finditer(text) if "hip" in low else ():
        add(m.start(), TorchMessage("rocm-no-kernel", snip(m)))
    return tuple(msg for _, msg in sorted(found, key=lambda x: x[0]))


def _lib_matches(text: str, low: str) -> Iterator[re.Match[str]]:
    """What ``_M_LIB.finditer(text)`` yields, tried only where one of its library names starts
    (found by ``str.find`` in the lower-cased text): the case-insensitive alternation tried at
    every position of a 4 MB paste took seconds (issue 18)."""
    if len(low) != len(text):  # lower-casing moved the positions (rare scripts): the plain way
        yield from _M_LIB.finditer(text)
        return
    starts: list[int] = []
    for name in _LIB_NAMES:
        at = low.find(name)
        while at >= 0:
            starts.append(at)
            at = low.find(name, at + 1)
    end = 0
    for at in sorted(starts):
        # The match ends in one of the phrases at most 110 characters past the name's start
        # (name 25, file ending 15, gap 40, phrase 30): where none is, nothing matches.
        if not any(low.find(p, at, at + 120) >= 0 for p in _LIB_ENDS):
            continue
        # A match starts at the name or at a "lib" just before it, never inside an earlier one.
        for start in (at - 3, at) if at >= 3 and low.startswith("lib", at - 3) else (at,):
            if start < end:
                continue
            m = _M_LIB.match(text, start)
            if m:
                end = m.end()
                yield m
                break
