"""The layouts of a paste, read line by line into raw fields and blocks: collect_env's
``Key: value`` lines (every generation, hand-edited keys too), vLLM's sectioned copy (headings
between rules of ``=``, padded keys), and torch's messages alone; fences, ``<details>`` tags,
quoting and a second pasted report are skipped. :mod:`.build` turns what is read into facts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from setup_env.probe.report.build import _build
from setup_env.probe.report.messages import read_messages
from setup_env.probe.report.model import CollectEnvError, Report
from setup_env.probe.report.normalise import _CONTROL, _clean_line

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


# Blocks of lines under a key, ended by a fence, a rule or the next key.
_BLOCKS = ("gpu", "cudnn", "xpu", "xpu-onboard", "xpu-driver")
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
    onboard_lines: list[str] = []
    intel_driver_lines: list[str] = []
    paths: list[str] = []  # lines naming a site-packages folder (a Python's version and OS)
    env: dict[str, str] = {}
    section = ""  # "", "gpu", "cudnn", "cpu", "libs", "vllm", "env", "xpu"
    last_key = ""
    vllm_layout = False
    after_rule = False  # the previous line was a rule of "=" (vLLM's section headings)
    end = len(lines)
    # An e-mail wrapped "Python version" value grows line by line: its pieces and their bracket
    # balance are kept as it grows (joined once, at the end), so that a parenthesis never closed
    # costs each absorbed line its own length, not the whole value's (issue 18: linear reading).
    python = _Wrapped()
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        if len(paths) < 8 and "site-packages" in stripped:
            paths.append(stripped[:400])
        elif len(paths) < 8 and "Intel" in stripped and " Arc" in stripped and not section:
            # Prose naming an Intel GPU ("... with my Intel Arc A770"): read by infer.
            paths.append(stripped[:400])
        if (
            stripped.startswith("```")
            or stripped.startswith("~~~")
            or (stripped.startswith("<") and stripped.endswith(">"))
        ):
            # Fences and <details>/<summary> tags end whatever block was open.
            if section in _BLOCKS:
                section = ""
            continue
        if set(stripped) == {"="}:
            after_rule = True
            if section in _BLOCKS:
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
                if key == "Python version":
                    python.start(val)
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
            elif key == "Intel GPU models onboard":
                section = "xpu-onboard"
                if val:
                    onboard_lines.append(val)
            elif key == "Intel GPU driver version":
                section = "xpu-driver"
                if val:
                    intel_driver_lines.append(val)
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
        if section in ("xpu-onboard", "xpu-driver"):
            (onboard_lines if section == "xpu-onboard" else intel_driver_lines).append(stripped)
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
        if last_key == "Python version" and python.unclosed():
            python.add(stripped)
            continue
        last_key = ""
    if python.grown():
        fields["Python version"] = python.value()
    messages = read_messages("\n".join(lines[:end]))
    # A fragment of a report counts too: two of collect_env's lines without the ones named here
    # ("Nvidia driver version:" and "cuDNN version:" alone, the rest of the paste cut away), or
    # the Intel GPUs it detected.
    have_facts = (
        "PyTorch version" in fields
        or bool(
            {"OS", "Python version", "Python platform", "GPU models and configuration"}
            & fields.keys()
        )
        or len(fields) >= 2
        or any("_XpuDeviceProperties(" in x for x in xpu_lines)
    )
    if (
        not have_facts
        and not messages
        and not any(_PIP_TORCH.match(x.split("]", 1)[-1].strip()) for x in lib_lines)
    ):
        raise CollectEnvError(
            "this is not a `python -m torch.utils.collect_env` report: none of its lines "
            "('PyTorch version:', 'OS:', 'Python version:', 'GPU models and configuration:', "
            "a [pip3] torch or [conda] pytorch line) nor any of torch's CUDA messages were found"
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
        onboard_lines=onboard_lines,
        intel_driver_lines=intel_driver_lines,
        paths=paths,
    )


# pip's "torch==2.5.1", conda's "pytorch   1.4.0   py3.7_cuda10.0.130_cudnn7.6.3_0   pytorch"
_PIP_TORCH = re.compile(r"^(?:torch==|pytorch\s+)\d")
# The tag a library line starts with: "[pip3]", "[pip]", "[conda]".
_LIB_TAG = re.compile(r"^\[[^\]]*\]")


@dataclass
class _Wrapped:
    """A field value continued on the lines that follow it while a parenthesis or bracket in it
    is still open (and no "runtime)" closes the value), kept as pieces with their balance:
    ``unclosed()`` answers in constant time what counting brackets in ``value()`` would (the
    pieces are joined with a space, so "runtime)" never spans two of them)."""

    pieces: list[str] = field(default_factory=list)
    runtime: bool = False
    parens: int = 0  # "(" less ")"
    brackets: int = 0  # "[" less "]"

    def start(self, value: str) -> None:
        """The value as its key's line gives it (read once: the first report's key wins)."""
        self.add(value)

    def add(self, piece: str) -> None:
        self.pieces.append(piece)
        self.runtime = self.runtime or "runtime)" in piece
        self.parens += piece.count("(") - piece.count(")")
        self.brackets += piece.count("[") - piece.count("]")

    def unclosed(self) -> bool:
        return not self.runtime and (self.parens > 0 or self.brackets > 0)

    def grown(self) -> bool:
        return len(self.pieces) > 1

    def value(self) -> str:
        return " ".join(self.pieces)


def _complete_lib_line(line: str) -> bool:
    # "[pip3] to", "[pip3] torch==" and "[conda] numpy  1.18.5" are cut mid-line: a pip line
    # ends in "==version", a conda line has a name, a version and a build ("Could not collect",
    # collect_env's line when it found nothing, has three words too).
    body = _LIB_TAG.sub("", line).strip()
    if "==" in body:
        return bool(re.search(r"==\S+$", body))
    return len(body.split()) >= 3
