"""Apple Silicon: chip (M1…M5, Pro/Max/Ultra), GPU cores, MPS eligibility, Rosetta 2.

Sources: one ``sysctl`` call naming the keys we need (``machdep.cpu.brand_string`` says
``Apple M1 Pro`` even to an x86_64 process under Rosetta; ``hw.optional.arm64`` is 1 on Apple
Silicon whatever the process architecture; ``sysctl.proc_translated`` is 1 inside Rosetta), and
``ioreg -rc AGXAccelerator -d 1`` for ``gpu-core-count``. MPS eligibility here is the hardware and
OS floor only (arm64 Mac, macOS 12.3+); which torch wheels a macOS version can install is the
planner's business.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from setup_env.facts import AppleInfo, Note
from setup_env.probe.host import Host

SYSCTL_KEYS = (
    "machdep.cpu.brand_string",
    "hw.memsize",
    "hw.physicalcpu",
    "hw.logicalcpu",
    "hw.optional.arm64",
    "sysctl.proc_translated",
)
SYSCTL_ARGV = ("sysctl", *SYSCTL_KEYS)
IOREG_ARGV = ("ioreg", "-rc", "AGXAccelerator", "-d", "1")
MPS_MIN_MACOS = (12, 3)  # torch.backends.mps needs macOS 12.3 (PyTorch docs, "MPS backend")

_CHIP = re.compile(r"^Apple M(\d+)(?:\s+(Pro|Max|Ultra))?\b")


def parse_sysctl(text: str) -> dict[str, str]:
    """``sysctl key1 key2`` output (``key: value`` lines) -> {key: value}.

    Example (an M1 Pro)::

        machdep.cpu.brand_string: Apple M1 Pro
        hw.memsize: 17179869184

    Unknown keys are reported on stderr (``sysctl: unknown oid 'sysctl.proc_translated'`` on an
    Intel Mac) and are simply absent here.
    """
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        key = key.strip()
        if sep and re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)+", key):
            out[key] = value.strip()
    return out


def parse_chip(brand: str) -> tuple[int | None, str | None]:
    """``Apple M3 Max`` -> (3, "Max"); ``Apple M1`` -> (1, None); anything else -> (None, None)."""
    m = _CHIP.match(brand.strip())
    if not m:
        return None, None
    return int(m.group(1)), m.group(2)


def parse_gpu_cores(ioreg: str) -> int | None:
    """``"gpu-core-count" = 16`` in ``ioreg -rc AGXAccelerator`` output -> 16."""
    m = re.search(r'"gpu-core-count"\s*=\s*(\d+)', ioreg)
    return int(m.group(1)) if m else None


def darwin_sysctl(host: Host) -> tuple[dict[str, str], list[Note]]:
    """Run the one sysctl call shared by the CPU, Python and Apple probes."""
    result = host.run(SYSCTL_ARGV, timeout=3.0)
    if result.error is not None:
        return {}, [Note("sysctl-failed", result.describe(), "sysctl")]
    # Exit status is non-zero when one key is unknown (proc_translated on Intel): keep the rest.
    values = parse_sysctl(result.stdout)
    if not values:
        return {}, [Note("sysctl-garbled", "sysctl printed nothing usable", "sysctl")]
    return values, []


def version_tuple(text: str | None) -> tuple[int, ...]:
    parts = []
    for piece in (text or "").split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


def detect(
    host: Host, sysctl: Mapping[str, str] | None = None, macos_version: str | None = None
) -> tuple[AppleInfo | None, list[Note]]:
    interp = host.interpreter()
    if str(interp.get("system") or "").lower() != "darwin":
        return None, []
    notes: list[Note] = []
    if sysctl is None:
        sysctl, notes = darwin_sysctl(host)
    machine = str(interp.get("machine") or "")
    arm64 = sysctl.get("hw.optional.arm64") == "1" or machine == "arm64"
    if not arm64:
        return None, notes  # an Intel Mac: nothing Apple-Silicon to report
    sources: dict[str, str] = {}
    brand = sysctl.get("machdep.cpu.brand_string", "")
    generation, variant = parse_chip(brand)
    chip = brand or None
    if chip:
        sources["chip"] = "sysctl machdep.cpu.brand_string"
    if generation is not None:
        sources["generation"] = sources["variant"] = "sysctl machdep.cpu.brand_string"
    elif brand:
        notes.append(
            Note("apple-chip-unknown", f"unrecognised Apple chip name {brand!r}", "sysctl", "info")
        )

    gpu_cores = None
    result = host.run(IOREG_ARGV, timeout=3.0)
    if result.ok:
        gpu_cores = parse_gpu_cores(result.stdout)
        if gpu_cores is not None:
            sources["gpu_cores"] = "ioreg AGXAccelerator gpu-core-count"

    version = macos_version
    if version is None:
        mac_ver = interp.get("mac_ver")
        version = mac_ver if isinstance(mac_ver, str) else None
    eligible = version_tuple(version) >= MPS_MIN_MACOS
    sources["mps_eligible"] = "arm64 hardware + macOS " + (version or "unknown")
    if version and not eligible:
        notes.append(
            Note(
                "macos-too-old-for-mps",
                f"macOS {version} is older than 12.3: the MPS (Apple GPU) backend is unavailable",
                "sw_vers",
                "info",
            )
        )
    return (
        AppleInfo(
            chip=chip,
            generation=generation,
            variant=variant,
            gpu_cores=gpu_cores,
            mps_eligible=eligible,
            sources=sources,
        ),
        notes,
    )
