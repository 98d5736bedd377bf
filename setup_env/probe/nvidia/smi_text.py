"""What nvidia-smi prints, parsed (pure: text in, values out): the ``--query-gpu`` CSV, the
``nvidia-smi -q`` report, the plain table, and the messages of a driver that is there but
unusable."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Optional

MIB = 1024 * 1024

# The --query-gpu fields, in order. clocks_throttle_reasons.* is accepted by every driver
# (renamed clocks_event_reasons.* in R535, the old name kept as an alias).
QUERY_FIELDS: tuple[str, ...] = (
    "index",
    "name",
    "pci.bus_id",
    "uuid",
    "driver_version",
    "compute_cap",
    "memory.total",
    "persistence_mode",
    "mig.mode.current",
    "ecc.errors.uncorrected.volatile.total",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "clocks_throttle_reasons.active",
)

# nvml.h clocks event (throttle) reason bits -> names.
THROTTLE_BITS: tuple[tuple[int, str], ...] = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)

# The same reasons as ``nvidia-smi -q`` spells them.
_Q_THROTTLE = {
    "idle": "gpu_idle",
    "applications clocks setting": "applications_clocks_setting",
    "sw power cap": "sw_power_cap",
    "hw slowdown": "hw_slowdown",
    "hw thermal slowdown": "hw_thermal_slowdown",
    "hw power brake slowdown": "hw_power_brake_slowdown",
    "sync boost": "sync_boost",
    "sw thermal slowdown": "sw_thermal_slowdown",
    "display clock setting": "display_clock_setting",
}

# What nvidia-smi prints when the driver is there but unusable: (pattern, code, error, severity).
_FAILURES: tuple[tuple[re.Pattern[str], str, str, str], ...] = (
    (
        re.compile(r"Driver/library version mismatch", re.I),
        "driver-library-mismatch",
        "driver/library version mismatch: the loaded kernel module and the user-space NVIDIA "
        "libraries are different versions (a driver update without a reboot?)",
        "error",
    ),
    (
        re.compile(r"couldn't communicate with the NVIDIA driver", re.I),
        "driver-not-loaded",
        "nvidia-smi cannot communicate with the NVIDIA driver (kernel module not loaded, "
        "Secure Boot blocking it, or built for another kernel)",
        "error",
    ),
    (
        re.compile(r"^No devices were found", re.I | re.M),
        "no-devices",
        "the NVIDIA driver sees no GPU (No devices were found)",
        "warning",
    ),
    (
        re.compile(r"Failed to initialize NVML: Insufficient Permissions", re.I),
        "nvml-no-permission",
        "NVML refused access (Insufficient Permissions on /dev/nvidia*)",
        "error",
    ),
    (
        re.compile(r"Failed to initialize NVML: Unknown Error", re.I),
        "nvml-unknown-error",
        "NVML failed to initialise (Unknown Error; in containers often lost device access "
        "after a systemd reload)",
        "error",
    ),
)


def _na(value: str) -> Optional[str]:
    v = value.strip()
    if not v or v.strip("[]").lower() in ("n/a", "not supported", "unknown error", "unknown"):
        return None
    if v.lower().startswith("requested functionality has been deprecated"):
        return None
    return v


def _int(value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    m = re.match(r"^\s*(\d+)", value)
    return int(m.group(1)) if m else None


def _mib(value: Optional[str]) -> Optional[int]:
    n = _int(value)
    return None if n is None else n * MIB


def _flag(value: Optional[str]) -> Optional[bool]:
    if value is None:
        return None
    v = value.strip().lower()
    if v in ("enabled", "on", "yes", "1"):
        return True
    if v in ("disabled", "off", "no", "0"):
        return False
    return None


def throttle_names(mask: Optional[int]) -> tuple[str, ...]:
    """nvml.h bitmask -> reason names, e.g. ``0x5`` -> ("gpu_idle", "sw_power_cap")."""
    if mask is None:
        return ()
    return tuple(name for bit, name in THROTTLE_BITS if mask & bit)


def _hex(value: Optional[str]) -> Optional[int]:
    if value is None:
        return None
    try:
        return int(value.strip(), 16)
    except ValueError:
        return None


def parse_query_csv(
    text: str, fields: Optional[Sequence[str]] = None
) -> tuple[list[dict[str, Optional[str]]], list[str]]:
    """``nvidia-smi --query-gpu=...`` CSV -> (rows {field: value or None}, problems).

    With ``fields`` the text is ``--format=csv,noheader,nounits`` (one row per GPU)::

        0, NVIDIA H100 80GB HBM3, 00000000:00:09.0, GPU-..., 590.48.01, 9.0, 81559, Enabled, ...

    Without, the first line is the header of ``--format=csv`` and units are stripped::

        index, name, memory.total [MiB], persistence_mode
        0, NVIDIA H100 80GB HBM3, 81559 MiB, Enabled

    ``[N/A]`` / ``[Not Supported]`` become None. A row with the wrong number of cells (truncated
    output) is dropped and reported in ``problems``.
    """
    problems: list[str] = []
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if fields is None:
        if not lines:
            return [], ["empty output"]
        header = [re.sub(r"\s*\[.*\]$", "", h.strip()) for h in lines[0].split(",")]
        fields, lines = header, lines[1:]
    rows: list[dict[str, Optional[str]]] = []
    import csv  # here, not at the top: only a machine with nvidia-smi pays for it
    import io

    for n, cells in enumerate(csv.reader(io.StringIO("\n".join(lines)), skipinitialspace=True)):
        if len(cells) != len(fields):
            problems.append(f"row {n + 1}: {len(cells)} values for {len(fields)} fields")
            continue
        row: dict[str, Optional[str]] = {}
        for f, cell in zip(fields, cells):
            value = _na(cell)
            if value is not None:
                value = re.sub(r"\s+(MiB|W|MHz|%|KB/s)$", "", value)
            row[f] = value
        rows.append(row)
    return rows, problems


def invalid_field(text: str) -> Optional[str]:
    """The field an old driver rejects: ``Field "compute_cap" is not a valid field to query.``"""
    m = re.search(r'Field "([^"]+)" is not a valid field to query', text)
    return m.group(1) if m else None


def failure(text: str) -> Optional[tuple[str, str, str]]:
    """(code, error, severity) when nvidia-smi says the driver is unusable, else None.

    Example inputs::

        Failed to initialize NVML: Driver/library version mismatch
        NVML library version: 580.178

        NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure
        that the latest NVIDIA driver is installed and running.

        No devices were found
    """
    for pattern, code, error, severity in _FAILURES:
        if pattern.search(text):
            return code, error, severity
    return None


def library_version(text: str) -> Optional[str]:
    """``NVML library version: 580.178`` (printed after a version mismatch) -> ``580.178``."""
    m = re.search(r"NVML library version:\s*(\d+\.\d+(?:\.\d+)?)", text)
    return m.group(1) if m else None


_Q_GPU = re.compile(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])$")


def _q_tree(text: str) -> list[tuple[int, str, Optional[str]]]:
    """``nvidia-smi -q`` lines -> (indent, key, value); value None for a section header."""
    out: list[tuple[int, str, Optional[str]]] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if not stripped or stripped.startswith("="):
            continue
        indent = len(raw) - len(raw.lstrip(" \t"))
        if _Q_GPU.match(stripped):
            out.append((indent, stripped, None))
            continue
        key, sep, value = stripped.partition(":")
        out.append((indent, key.strip(), value.strip() if sep else None))
    return out


def parse_smi_q(text: str) -> dict[str, Any]:
    """``nvidia-smi -q`` text -> {driver_version, cuda_version, attached, gpus: [dict]}.

    Example input (driver 590, H100; older drivers say ``Clocks Throttle Reasons`` and report
    ECC as ``Double Bit / Device Memory``)::

        Driver Version                            : 590.48.01
        CUDA Version                              : 13.1

        Attached GPUs                             : 1
        GPU 00000000:00:09.0
            Product Name                          : NVIDIA H100 80GB HBM3
            Persistence Mode                      : Enabled
            MIG Mode
                Current                           : Disabled
            PCI
                Bus Id                            : 00000000:00:09.0
                GPU Link Info
                    PCIe Generation
                        Max                       : 5
                        Current                   : 5
                    Link Width
                        Max                       : 16x
                        Current                   : 16x
            Clocks Event Reasons
                Idle                              : Active
            FB Memory Usage
                Total                             : 81559 MiB
            ECC Errors
                Volatile
                    DRAM Uncorrectable            : 0

    GPU dict keys: index, name, pci_bus_id, uuid, memory_total (bytes), persistence_mode,
    mig_mode, ecc_uncorrected, pcie_gen_current/max, pcie_width_current/max, throttle_reasons.
    """
    out: dict[str, Any] = {"driver_version": None, "cuda_version": None, "gpus": []}
    stack: list[tuple[int, str]] = []
    gpu: Optional[dict[str, Any]] = None
    ecc_parts: list[int] = []
    ecc_total: Optional[int] = None
    ecc_seen = False

    def finish() -> None:
        nonlocal ecc_parts, ecc_total, ecc_seen
        if gpu is not None:
            if ecc_total is not None:
                gpu["ecc_uncorrected"] = ecc_total
            elif ecc_parts:
                gpu["ecc_uncorrected"] = sum(ecc_parts)
            out["gpus"].append(gpu)
        ecc_parts, ecc_total, ecc_seen = [], None, False

    for indent, key, value in _q_tree(text):
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = [k for _, k in stack]
        if indent == 0 or not path:
            m = _Q_GPU.match(key)
            if m:
                finish()
                gpu = {"index": len(out["gpus"]), "pci_bus_id": m.group(1), "throttle": []}
                stack = [(indent, "GPU")]
                continue
            if key == "Driver Version":
                out["driver_version"] = _na(value or "")
            elif key == "CUDA Version":
                out["cuda_version"] = _na(value or "")
            elif key == "Attached GPUs":
                out["attached"] = _int(value)
            continue
        if gpu is None:
            continue
        if value is None:
            stack.append((indent, key))
            continue
        v = _na(value)
        sub = path[1:]  # below "GPU"
        low = key.lower()
        if not sub:
            if key == "Product Name":
                gpu["name"] = v
            elif key == "Persistence Mode":
                gpu["persistence_mode"] = _flag(v)
            elif key == "GPU UUID":
                gpu["uuid"] = v
        elif sub == ["MIG Mode"] and key == "Current":
            gpu["mig_mode"] = _flag(v)
        elif sub == ["PCI"] and key == "Bus Id":
            gpu["pci_bus_id"] = v or gpu["pci_bus_id"]
        elif sub[-1:] == ["PCIe Generation"] and key in ("Max", "Current"):
            gpu["pcie_gen_" + key.lower()] = _int(v)
        elif sub[-1:] == ["Link Width"] and key in ("Max", "Current"):
            gpu["pcie_width_" + key.lower()] = _int(v)
        elif sub and sub[0] in ("Clocks Event Reasons", "Clocks Throttle Reasons"):
            name = _Q_THROTTLE.get(low)
            if name and v == "Active":
                gpu["throttle"].append(name)
        elif sub == ["FB Memory Usage"] and key == "Total":
            gpu["memory_total"] = _mib(v)
        elif sub[:2] == ["ECC Errors", "Volatile"]:
            ecc_seen = True
            if sub[2:] == ["Double Bit"] and key == "Total":
                ecc_total = _int(v)
            elif len(sub) == 2 and "uncorrectable" in low:
                n = _int(v)
                if n is not None:
                    ecc_parts.append(n)
    finish()
    for g in out["gpus"]:
        g["throttle_reasons"] = tuple(g.pop("throttle"))
    return out


# R610 renamed the banner fields: "KMD Version: 610.43.02  CUDA UMD Version: 13.3".
_BANNER = re.compile(
    r"NVIDIA-SMI\s+(?P<smi>\S+)\s+(?:Driver|KMD) Version:\s*(?P<driver>\S+)"
    r"(?:\s+CUDA (?:UMD )?Version:\s*(?P<cuda>\S+))?"
)
_ROW1 = re.compile(
    r"^\|\s*(?P<index>\d+)\s+(?P<name>.+?)\s+(?P<mode>On|Off|WDDM|TCC|MCDM)\s*\|"
    r"\s*(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s+(?:On|Off)\s*\|"
    r"\s*(?P<ecc>\S+)\s*\|"
)
_ROW2 = re.compile(r"\|\s*(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB\s*\|")
_ROW3 = re.compile(r"^\|\s+\|\s+\|\s*(?P<mig>Enabled|Disabled|N/A)\s*\|$")


def parse_smi_banner(text: str) -> dict[str, Any]:
    """The plain ``nvidia-smi`` table -> {smi_version, driver_version, cuda_version, gpus}.

    Example input (R550+ layout; older drivers use narrower columns and may cut the name to
    ``NVIDIA GeForce ...``, which is reported as truncated)::

        | NVIDIA-SMI 590.48.01              Driver Version: 590.48.01      CUDA Version: 13.1     |
        |=========================================+========================+======================|
        |   0  NVIDIA H100 80GB HBM3          On  |   00000000:00:09.0 Off |                    0 |
        | N/A   41C    P0             69W /  700W |       0MiB /  81559MiB |      0%      Default |
        |                                         |                        |             Disabled |

    On Windows the ``Persistence-M`` column holds the driver model (``WDDM``/``TCC``).
    GPU dict keys: index, name, name_truncated, persistence_mode, driver_model, pci_bus_id,
    ecc_uncorrected, memory_total (bytes), mig_mode.
    """
    out: dict[str, Any] = {
        "smi_version": None,
        "driver_version": None,
        "cuda_version": None,
        "gpus": [],
    }
    m = _BANNER.search(text)
    if m:
        out["smi_version"] = m.group("smi")
        out["driver_version"] = _na(m.group("driver"))
        cuda = m.group("cuda")
        out["cuda_version"] = _na(cuda) if cuda else None
        out["cuda_na"] = bool(cuda) and out["cuda_version"] is None
    lines = text.splitlines()
    current: Optional[dict[str, Any]] = None
    expect = 0  # which line of a GPU block comes next
    for line in lines:
        line = line.rstrip()
        r1 = _ROW1.match(line)
        if r1:
            name = r1.group("name").strip()
            mode = r1.group("mode")
            current = {
                "index": int(r1.group("index")),
                "name": name,
                "name_truncated": name.endswith("..."),
                "persistence_mode": {"On": True, "Off": False}.get(mode),
                "driver_model": mode if mode in ("WDDM", "TCC", "MCDM") else None,
                "pci_bus_id": r1.group("bus"),
                "ecc_uncorrected": _int(_na(r1.group("ecc"))),
            }
            out["gpus"].append(current)
            expect = 2
            continue
        if current is None:
            continue
        if expect == 2:
            r2 = _ROW2.search(line)
            if r2:
                current["memory_total"] = int(r2.group("total")) * MIB
                expect = 3
                continue
            expect = 0
        elif expect == 3:
            r3 = _ROW3.match(line)
            if r3:
                current["mig_mode"] = _flag(_na(r3.group("mig")))
            expect = 0
    return out
