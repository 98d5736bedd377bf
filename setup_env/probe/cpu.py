"""CPU (model, vendor, cores, ISA level, the extensions that matter), RAM, free disk.

Sources: Linux ``/proc/cpuinfo`` and ``/proc/meminfo``; macOS the shared ``sysctl`` call
(``machdep.cpu.brand_string``, ``hw.physicalcpu``, ``hw.logicalcpu``, ``hw.memsize``); free disk
at the target location (the interpreter's prefix, where packages would be installed; override
with ``SETUP_ENV_DISK_PATH``). The x86-64 ISA levels follow the x86-64 psABI micro-architecture
levels (https://gitlab.com/x86-psABIs/x86-64-ABI, "Micro-architecture levels").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from setup_env._record import MutableRecord, field, mutable_record
from setup_env.facts import CpuInfo, Note

if TYPE_CHECKING:  # a type only: diagnose reads a report's flags here, with no machine to probe
    from setup_env.probe.host import Host

# /proc/cpuinfo flag names for each psABI level (lzcnt is "abm", osxsave is implied by xsave+avx).
X86_LEVELS: tuple[tuple[str, frozenset[str]], ...] = (
    ("x86-64-v2", frozenset({"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"})),
    (
        "x86-64-v3",
        frozenset({"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"}),
    ),
    ("x86-64-v4", frozenset({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})),
)
# The extensions that change which kernels torch (oneDNN, FBGEMM, Arm KleidiAI) runs.
X86_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
)
ARM_FLAGS = ("asimd", "asimdhp", "asimddp", "atomics", "fphp", "i8mm", "bf16", "sve", "sve2")
# CPU implementer/part -> name, from Linux arch/arm64/include/asm/cputype.h (the common servers).
ARM_PARTS = {
    ("0x41", "0xd08"): "Arm Cortex-A72",
    ("0x41", "0xd0c"): "Arm Neoverse N1",
    ("0x41", "0xd40"): "Arm Neoverse V1",
    ("0x41", "0xd49"): "Arm Neoverse N2",
    ("0x41", "0xd4f"): "Arm Neoverse V2",
    ("0x41", "0xd84"): "Arm Neoverse V3",
    ("0x41", "0xd8e"): "Arm Neoverse N3",
    ("0x61", "0x022"): "Apple M1 (Icestorm)",
    ("0x61", "0x023"): "Apple M1 (Firestorm)",
    ("0xc0", "0xac3"): "Ampere-1",
}


@mutable_record
class CpuinfoSummary(MutableRecord):
    """What /proc/cpuinfo says: model, vendor, core counts and flags."""

    model: str | None = None
    vendor: str | None = None
    logical: int = 0
    physical: int | None = None
    flags: frozenset[str] = field(default_factory=frozenset)


def parse_cpuinfo(text: str) -> CpuinfoSummary:
    """``/proc/cpuinfo`` (x86: ``model name``/``flags``; arm64: ``Features``/``CPU part``).

    Example (x86)::

        processor	: 0
        vendor_id	: AuthenticAMD
        model name	: AMD EPYC
        physical id	: 0
        core id		: 0
        flags		: fpu vme ... avx2 ...
    """
    out = CpuinfoSummary()
    flags: set[str] = set()
    cores: set[tuple[str, str]] = set()
    block: dict[str, str] = {}
    implementer = part = None

    def finish(b: dict[str, str]) -> None:
        if "processor" in b and b["processor"].strip().isdigit():
            out.logical += 1
        if "physical id" in b and "core id" in b:
            cores.add((b["physical id"], b["core id"]))

    for line in text.splitlines():
        if not line.strip():
            finish(block)
            block = {}
            continue
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        block[key] = value
        if key in ("model name", "cpu model") and out.model is None and value:
            out.model = value
        elif key == "vendor_id" and out.vendor is None:
            out.vendor = value
        elif key in ("flags", "features") and not flags:
            flags.update(value.split())
        elif key == "cpu implementer" and implementer is None:
            implementer = value.lower()
        elif key == "cpu part" and part is None:
            part = value.lower()
    finish(block)
    if cores:
        out.physical = len(cores)
    if out.model is None and implementer and part:
        out.model = ARM_PARTS.get((implementer, part))
    out.flags = frozenset(flags)
    return out


def x86_isa_level(flags: frozenset[str]) -> str | None:
    if not {"sse2", "lm"} <= flags:
        return None
    level = "x86-64"
    for name, needed in X86_LEVELS:
        if not needed <= flags:
            break
        level = name
    return level


def arm_isa_level(flags: frozenset[str]) -> str | None:
    """A lower bound from the features the kernel lists (not an exact architecture version)."""
    if "asimd" not in flags and "fp" not in flags:
        return None
    if "sve2" in flags:
        return "armv9-a"
    if "asimddp" in flags or "fphp" in flags:
        return "armv8.2-a"
    if "atomics" in flags:
        return "armv8.1-a"
    return "armv8-a"


def summarize_flags(flags: frozenset[str]) -> tuple[str | None, tuple[str, ...]]:
    """The ISA level and the extensions worth keeping, from the kernel's CPU flags (the
    ``flags``/``Features`` of /proc/cpuinfo, or lscpu's ``Flags:`` line in a collect_env report)."""
    if "sse2" in flags:
        return x86_isa_level(flags), tuple(f for f in X86_FLAGS if f in flags)
    return arm_isa_level(flags), tuple(f for f in ARM_FLAGS if f in flags)


def parse_meminfo(text: str) -> int | None:
    """``MemTotal:       16316412 kB`` -> bytes."""
    m = re.search(r"^MemTotal:\s+(\d+)\s*kB", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else None


def _positive_int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and int(text) > 0 else None


def detect(
    host: Host, sysctl: Mapping[str, str] | None = None, architecture: str | None = None
) -> tuple[CpuInfo, list[Note]]:
    """``sysctl``: the Darwin sysctl values when on a Mac; ``architecture``: the hardware's, when
    another probe knows it better than the interpreter (an arm64 Mac under Rosetta)."""
    interp = host.interpreter()
    system = str(interp.get("system") or "").lower()
    notes: list[Note] = []
    sources: dict[str, str] = {}
    fields: dict[str, object] = {}
    arch = architecture or str(interp.get("machine") or "") or None
    if arch:
        fields["architecture"] = arch
        sources["architecture"] = "sysctl hw.optional.arm64" if architecture else "interpreter"

    if system == "darwin" and sysctl is not None:
        for key, name in (
            ("model", "machdep.cpu.brand_string"),
            ("physical_cores", "hw.physicalcpu"),
            ("logical_cores", "hw.logicalcpu"),
            ("ram_bytes", "hw.memsize"),
        ):
            value = sysctl.get(name)
            if not value:
                continue
            parsed: object = value if key == "model" else _positive_int(value)
            if parsed is not None:
                fields[key] = parsed
                sources[key] = f"sysctl {name}"
        if (arch or "") in ("arm64", "aarch64"):
            fields["vendor"] = "Apple"
            sources["vendor"] = "sysctl hw.optional.arm64"
    elif system == "linux" or (not system and host.exists("/proc/cpuinfo")):
        read = host.read("/proc/cpuinfo")
        if read.text is None:
            if read.error != "missing":
                notes.append(
                    Note("cpuinfo-unreadable", f"/proc/cpuinfo: {read.error}", "/proc/cpuinfo")
                )
        elif not read.text.strip():
            notes.append(Note("cpuinfo-empty", "/proc/cpuinfo is empty", "/proc/cpuinfo"))
        else:
            info = parse_cpuinfo(read.text)
            level, kept = summarize_flags(info.flags)
            values: dict[str, object] = {
                "model": info.model,
                "vendor": info.vendor,
                "logical_cores": info.logical or None,
                "physical_cores": info.physical,
                "isa_level": level,
                "flags": kept,
            }
            for key, found in values.items():
                if found:
                    fields[key] = found
                    sources[key] = "/proc/cpuinfo"
        mem = host.read("/proc/meminfo")
        ram = parse_meminfo(mem.text) if mem.text else None
        if ram:
            fields["ram_bytes"] = ram
            sources["ram_bytes"] = "/proc/meminfo"
        elif mem.text is not None or mem.error not in (None, "missing"):
            notes.append(Note("meminfo-garbled", "no MemTotal in /proc/meminfo", "/proc/meminfo"))

    override = host.env("SETUP_ENV_DISK_PATH")
    prefix = interp.get("prefix")
    path = override or (prefix if isinstance(prefix, str) and prefix else None)
    if path:
        free = host.disk_free(path)
        fields["disk_path"] = path
        sources["disk_path"] = "env:SETUP_ENV_DISK_PATH" if override else "interpreter prefix"
        if free is not None:
            fields["disk_free_bytes"] = free
            sources["disk_free_bytes"] = f"statvfs {path}"
    return CpuInfo(sources=sources, **fields), notes  # type: ignore[arg-type]
