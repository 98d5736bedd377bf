"""NVIDIA driver and GPUs: ``detect(host) -> (NvidiaInfo | None, [Note, ...])``.

Sources, in order (each fact records where it came from: ``NvidiaInfo.sources``, ``Gpu.source``):

1. Environment overrides (read through the host, so a replayed capture honours its own):
   ``SETUP_ENV_NVIDIA_DRIVER_VERSION`` (e.g. ``570.86.10``) and ``SETUP_ENV_CUDA_DRIVER_VERSION``
   (e.g. ``12.8``) replace the detected values (source ``env:<NAME>``);
   ``SETUP_ENV_NVIDIA_SMI`` names the nvidia-smi to run; ``SETUP_ENV_NVIDIA_SMI_TIMEOUT`` its
   timeout in seconds (default 10); ``SETUP_ENV_NO_NVML=1`` skips NVML.
2. NVML (``host.nvml()``: nvidia-ml-py on a live machine, host.json's ``"nvml"`` in a replay).
3. When NVML gave no GPUs: ONE ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``
   (with a timeout). A driver that rejects a field (``Field "compute_cap" is not a valid field to
   query.``, drivers before 510) is asked again without it. If the query itself does not run,
   ``nvidia-smi -q`` and then the plain ``nvidia-smi`` table are tried (both carry the CUDA
   version, which ``--query-gpu`` cannot report). A hung nvidia-smi is not asked again.
   Where nvidia-smi lives: ``PATH`` (``nvidia-smi``, ``nvidia-smi.exe``), WSL2's
   ``/usr/lib/wsl/lib/nvidia-smi``, Windows' ``C:\\Windows\\System32\\nvidia-smi.exe`` and
   ``C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe``.
4. ``/proc/driver/nvidia/version`` (driver version; open vs proprietary kernel module), then
   ``/sys/module/nvidia/version`` (driver version only).

A driver that is present but unusable (``Failed to initialize NVML: Driver/library version
mismatch``, ``NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver``,
``No devices were found``) is a finding: ``NvidiaInfo.error`` plus a Note, never an exception.
Garbled or truncated output, names missing from the GPU catalogue, empty or unreadable files and
a hung command become Notes. Where no source gives the compute capability (drivers before 510,
the plain table, ``-q``), it stays ``None`` and a Note says why; the planner resolves it from the
catalogue by name (``setup_env.knowledge.gpus.lookup``).

``None`` is returned (with no notes) only when nothing NVIDIA is seen at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional

from setup_env.facts import Gpu, Note, NvidiaInfo
from setup_env.probe.host import CommandResult, Host

SMI_TIMEOUT = 10.0
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

SMI_CANDIDATES: tuple[str, ...] = (
    "/usr/lib/wsl/lib/nvidia-smi",
    "C:\\Windows\\System32\\nvidia-smi.exe",
    "C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe",
)

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

_NVML_FAILURES = {
    "driver-library-mismatch": _FAILURES[0],
    "driver-not-loaded": _FAILURES[1],
    "no-permission": _FAILURES[3],
}

_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_CUDA = re.compile(r"^\d+\.\d+$")
_BUS_ID = re.compile(r"^([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$")


# --- pure parsers --------------------------------------------------------------------------


def parse_proc_version(text: str) -> tuple[Optional[str], Optional[str]]:
    """``/proc/driver/nvidia/version`` -> (driver version, "open" | "proprietary").

    Example inputs (proprietary, then the open kernel module)::

        NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.173.02  Tue Jun 23 08:38:17 UTC 2026
        GCC version:  gcc version 14.2.0 (Ubuntu 14.2.0-4ubuntu2~24.04.1)

        NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (...)
    """
    for line in text.splitlines():
        if not line.startswith("NVRM version:"):
            continue
        rest = line[len("NVRM version:") :]
        module = "open" if re.search(r"\bOpen Kernel Module\b", rest) else None
        if module is None and "Kernel Module" in rest:
            module = "proprietary"
        m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)\b", rest)
        return (m.group(1) if m else None), module
    return None, None


def parse_sys_version(text: str) -> Optional[str]:
    """``/sys/module/nvidia/version``: one line, the driver version (``550.54.15``)."""
    value = text.strip()
    return value if _VERSION.match(value) else None


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


def cuda_from_nvml(value: Any) -> Optional[str]:
    """NVML's integer CUDA driver version -> "X.Y": 12040 -> "12.4", 13010 -> "13.1"."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


# --- assembly ------------------------------------------------------------------------------


class _Acc:
    """Facts gathered so far, with their sources."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.gpus: list[Gpu] = []
        self.notes: list[Note] = []
        self.error: Optional[str] = None
        self.error_code: Optional[str] = None
        self.seen = False  # anything NVIDIA at all

    def set(self, field: str, value: Any, source: str) -> None:
        if value is not None and self.values.get(field) is None:
            self.values[field] = value
            self.sources[field] = source

    def note(self, code: str, message: str, source: str, severity: str = "warning") -> None:
        self.notes.append(Note(code, message, source, severity))  # type: ignore[arg-type]

    def fail(self, code: str, error: str, source: str, severity: str) -> None:
        self.seen = True
        if self.error is None:
            self.error = error
            self.error_code = code
            self.sources.setdefault("error", source)
            self.note(code, error, source, severity)


def _bus(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return None
    v = value.strip()
    m = _BUS_ID.match(v)
    if not m:
        return None
    # NVML and nvidia-smi print an 8-digit domain; sysfs and torch use 4 digits.
    return f"{m.group(1)[-4:]}:{m.group(2)}:{m.group(3)}.{m.group(4)}".lower()


def _clean_name(value: Any) -> Optional[str]:
    if not isinstance(value, str):
        return None
    name = " ".join(value.split())
    if not name or len(name) > 96 or not re.match(r"^[\w .()/+\-]+$", name):
        return None
    return name


def _gpu(data: Mapping[str, Any], source: str) -> Gpu:
    cc = data.get("compute_capability")
    return Gpu(
        index=int(data.get("index") or 0),
        name=_clean_name(data.get("name")) or "unknown NVIDIA GPU",
        vendor="nvidia",
        compute_capability=cc if isinstance(cc, str) else None,
        memory_bytes=data.get("memory_total"),
        pci_bus_id=_bus(data.get("pci_bus_id")),
        uuid=data.get("uuid") if isinstance(data.get("uuid"), str) else None,
        mig_mode=data.get("mig_mode"),
        persistence_mode=data.get("persistence_mode"),
        ecc_errors_uncorrected=data.get("ecc_uncorrected"),
        pcie_gen_current=data.get("pcie_gen_current"),
        pcie_gen_max=data.get("pcie_gen_max"),
        pcie_width_current=data.get("pcie_width_current"),
        pcie_width_max=data.get("pcie_width_max"),
        throttle_reasons=tuple(data.get("throttle_reasons") or ()),
        source=source,
    )


def _opt_int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _from_nvml(snap: Mapping[str, Any], acc: _Acc) -> None:
    code = snap.get("code")
    if snap.get("error") and not snap.get("gpus"):
        err = str(snap.get("error"))[:300]
        if code in ("library-not-found", "not-installed"):
            return  # no NVIDIA user-space library: the other sources decide
        if code == "driver-not-loaded":
            # The NVIDIA libraries are installed but no kernel module answers: nvidia-smi and
            # /proc say more (or nothing, on a machine without an NVIDIA GPU).
            acc.note("nvml-driver-not-loaded", f"NVML: {err}", "nvml", "info")
            return
        acc.seen = True
        failure_row = _NVML_FAILURES.get(str(code))
        if failure_row is not None:
            _, fcode, ferror, severity = failure_row
            acc.fail(fcode, ferror, "nvml", severity)
        else:
            acc.note("nvml-failed", f"NVML: {err}", "nvml")
        acc.set("driver_version", _ver(snap.get("driver_version")), "nvml")
        return
    acc.seen = True
    acc.set("driver_version", _ver(snap.get("driver_version")), "nvml")
    acc.set("cuda_driver_version", cuda_from_nvml(snap.get("cuda_driver_version")), "nvml")
    raw = snap.get("gpus")
    if not isinstance(raw, list):
        acc.note("nvml-garbled", "NVML snapshot has no GPU list", "nvml")
        return
    if not raw:
        acc.fail(*_FAILURES[2][1:3], "nvml", _FAILURES[2][3])
        return
    for i, g in enumerate(raw):
        if not isinstance(g, Mapping):
            acc.note("nvml-garbled", f"NVML GPU {i}: not an object", "nvml")
            continue
        cc = g.get("compute_capability")
        cc_text = None
        if (
            isinstance(cc, list)
            and len(cc) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in cc)
        ):
            cc_text = f"{cc[0]}.{cc[1]}"
        mig = _opt_int(g.get("mig_mode"))
        pm = _opt_int(g.get("persistence_mode"))
        data = {
            "index": _opt_int(g.get("index")) if _opt_int(g.get("index")) is not None else i,
            "name": g.get("name"),
            "compute_capability": cc_text,
            "memory_total": _opt_int(g.get("memory_total")),
            "pci_bus_id": g.get("pci_bus_id"),
            "uuid": g.get("uuid"),
            "mig_mode": None if mig is None else mig == 1,
            "persistence_mode": None if pm is None else pm == 1,
            "ecc_uncorrected": _opt_int(g.get("ecc_uncorrected_volatile")),
            "pcie_gen_current": _opt_int(g.get("pcie_gen_current")),
            "pcie_gen_max": _opt_int(g.get("pcie_gen_max")),
            "pcie_width_current": _opt_int(g.get("pcie_width_current")),
            "pcie_width_max": _opt_int(g.get("pcie_width_max")),
            "throttle_reasons": throttle_names(_opt_int(g.get("clocks_event_reasons"))),
        }
        errs = g.get("errors")
        if isinstance(errs, Mapping) and errs:
            fields = ", ".join(sorted(str(k) for k in errs))
            acc.note("nvml-field-failed", f"NVML GPU {i}: could not read {fields}", "nvml", "info")
        acc.gpus.append(_gpu(data, "nvml"))


def _ver(value: Any) -> Optional[str]:
    return value.strip() if isinstance(value, str) and _VERSION.match(value.strip()) else None


def _find_smi(host: Host) -> Optional[str]:
    override = host.env("SETUP_ENV_NVIDIA_SMI")
    if override:
        return override
    for name in ("nvidia-smi", "nvidia-smi.exe"):
        found = host.which(name)
        if found:
            return found
    for path in SMI_CANDIDATES:
        if host.exists(path):
            return path
    return None


def _timeout(host: Host, acc: _Acc) -> float:
    raw = host.env("SETUP_ENV_NVIDIA_SMI_TIMEOUT")
    if raw is None:
        return SMI_TIMEOUT
    try:
        value = float(raw)
        if 0 < value <= 600:
            return value
    except ValueError:
        pass
    acc.note(
        "bad-override",
        f"SETUP_ENV_NVIDIA_SMI_TIMEOUT={raw[:40]!r} is not a number of seconds (0-600); "
        f"using {SMI_TIMEOUT:g}",
        "env:SETUP_ENV_NVIDIA_SMI_TIMEOUT",
    )
    return SMI_TIMEOUT


def _smi_checked(res: CommandResult, acc: _Acc, label: str) -> Optional[str]:
    """The output of a finished nvidia-smi, or None after recording why it is unusable."""
    text = f"{res.stdout}\n{res.stderr}"
    bad = failure(text)
    if bad is not None:
        acc.fail(bad[0], bad[1], label, bad[2])
        acc.set("library_version", library_version(text), label)
        return None
    if res.error is not None or res.returncode != 0:
        return None
    if not res.stdout.strip():
        acc.note("nvidia-smi-empty", f"`{label}` printed nothing", label)
        return None
    return res.stdout


def _from_smi(host: Host, smi: str, acc: _Acc) -> None:
    timeout = _timeout(host, acc)
    fields = list(QUERY_FIELDS)
    label = "nvidia-smi --query-gpu"
    for _ in range(4):  # at most three rejected fields
        argv = [smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
        res = host.run(argv, timeout)
        if res.error == "timeout":
            acc.seen = True
            acc.note("nvidia-smi-timeout", res.describe(), label)
            return  # a hung driver hangs the next call too
        bad_field = invalid_field(f"{res.stdout}\n{res.stderr}")
        if bad_field is not None and bad_field in fields and res.returncode != 0:
            fields.remove(bad_field)
            if bad_field == "compute_cap":
                acc.note(
                    "compute-capability-unreported",
                    "this driver's nvidia-smi has no compute_cap field (drivers before 510); "
                    "the compute capability is resolved from the GPU catalogue by name",
                    label,
                    "info",
                )
            continue
        if res.error == "not-found":
            break
        acc.seen = True
        out = _smi_checked(res, acc, label)
        if out is None:
            if acc.error is not None:
                return
            acc.note("nvidia-smi-failed", res.describe(), label)
            break
        rows, problems = parse_query_csv(out, fields)
        for p in problems:
            acc.note("nvidia-smi-garbled", f"{label}: {p}", label)
        for row in rows:
            acc.set("driver_version", _ver(row.get("driver_version")), label)
            cc = row.get("compute_cap")
            acc.gpus.append(
                _gpu(
                    {
                        "index": _int(row.get("index")),
                        "name": row.get("name"),
                        "compute_capability": cc if cc and re.match(r"^\d+\.\d$", cc) else None,
                        "memory_total": _mib(row.get("memory.total")),
                        "pci_bus_id": row.get("pci.bus_id"),
                        "uuid": row.get("uuid"),
                        "persistence_mode": _flag(row.get("persistence_mode")),
                        "mig_mode": _flag(row.get("mig.mode.current")),
                        "ecc_uncorrected": _int(row.get("ecc.errors.uncorrected.volatile.total")),
                        "pcie_gen_current": _int(row.get("pcie.link.gen.current")),
                        "pcie_gen_max": _int(row.get("pcie.link.gen.max")),
                        "pcie_width_current": _int(row.get("pcie.link.width.current")),
                        "pcie_width_max": _int(row.get("pcie.link.width.max")),
                        "throttle_reasons": throttle_names(
                            _hex(row.get("clocks_throttle_reasons.active"))
                        ),
                    },
                    label,
                )
            )
        if rows:
            return
        if not problems:
            acc.note("nvidia-smi-garbled", f"{label}: no GPU rows in the output", label)
        break
    # The query did not run or gave nothing: the full report, then the plain table.
    label = "nvidia-smi -q"
    res = host.run([smi, "-q"], timeout)
    if res.error == "timeout":
        acc.seen = True
        acc.note("nvidia-smi-timeout", res.describe(), label)
        return
    if res.error != "not-found":
        acc.seen = True
        out = _smi_checked(res, acc, label)
        if acc.error is not None:
            return
        if out is not None:
            q = parse_smi_q(out)
            acc.set("driver_version", _ver(q.get("driver_version")), label)
            acc.set("cuda_driver_version", _cuda(q.get("cuda_version"), acc, label), label)
            for g in q["gpus"]:
                acc.gpus.append(_gpu(g, label))
            attached = q.get("attached")
            if isinstance(attached, int) and attached != len(q["gpus"]):
                acc.note(
                    "nvidia-smi-garbled",
                    f"{label}: {attached} GPUs attached but {len(q['gpus'])} described "
                    "(truncated output?)",
                    label,
                )
            if q["gpus"] or q.get("driver_version"):
                _cc_unreported(acc, label)
                return
            acc.note("nvidia-smi-garbled", f"{label}: no driver or GPU in the output", label)
        else:
            acc.note("nvidia-smi-failed", res.describe(), label)
    label = "nvidia-smi"
    res = host.run([smi], timeout)
    if res.error == "timeout":
        acc.seen = True
        acc.note("nvidia-smi-timeout", res.describe(), label)
        return
    if res.error == "not-found":
        return
    acc.seen = True
    out = _smi_checked(res, acc, label)
    if out is None:
        if acc.error is None:
            acc.note("nvidia-smi-failed", res.describe(), label)
        return
    b = parse_smi_banner(out)
    if b.get("driver_version") is None and not b["gpus"]:
        acc.note("nvidia-smi-garbled", f"`{label}`: no driver version or GPU table found", label)
        return
    acc.set("driver_version", _ver(b.get("driver_version")), label)
    acc.set("cuda_driver_version", _cuda(b.get("cuda_version"), acc, label), label)
    if b.get("cuda_na"):
        acc.note(
            "cuda-version-na",
            "nvidia-smi reports `CUDA Version: N/A`: the CUDA driver library (libcuda) was not "
            "found next to the driver, so CUDA programs (torch included) cannot use the GPU",
            label,
        )
    for g in b["gpus"]:
        if g.get("name_truncated"):
            acc.note(
                "gpu-name-truncated",
                f"GPU {g['index']}: nvidia-smi cut the name to {g['name']!r}; "
                "the model is not known from this source",
                label,
            )
            g = {**g, "name": None}
        acc.gpus.append(_gpu(g, label))
    _cc_unreported(acc, label)


def _cc_unreported(acc: _Acc, label: str) -> None:
    if acc.gpus and all(g.compute_capability is None for g in acc.gpus):
        acc.note(
            "compute-capability-unreported",
            f"`{label}` does not report compute capability; it is resolved from the GPU "
            "catalogue by name",
            label,
            "info",
        )


def _cuda(value: Any, acc: _Acc, label: str) -> Optional[str]:
    if value is None:
        return None
    v = str(value).strip()
    if _CUDA.match(v):
        return v
    acc.note("nvidia-smi-garbled", f"`{label}`: CUDA Version {v[:20]!r} is not X.Y", label)
    return None


def _from_files(host: Host, acc: _Acc) -> None:
    path = "/proc/driver/nvidia/version"
    r = host.read(path)
    if r.text is not None:
        acc.seen = True
        version, module = parse_proc_version(r.text)
        if version is None:
            what = "is empty" if not r.text.strip() else "has no NVRM version line"
            acc.note("nvidia-proc-garbled", f"{path} {what}", path)
        acc.set("driver_version", version, path)
        acc.set("kernel_module", module, path)
    elif r.error == "permission-denied":
        acc.seen = True
        acc.note("nvidia-proc-unreadable", f"{path}: permission denied", path, "info")
    if acc.values.get("driver_version") is None:
        path = "/sys/module/nvidia/version"
        r = host.read(path)
        if r.text is not None:
            acc.seen = True
            version = parse_sys_version(r.text)
            if version is None:
                acc.note("nvidia-sys-garbled", f"{path}: {r.text.strip()[:40]!r}", path)
            acc.set("driver_version", version, path)


def _overrides(host: Host, acc: _Acc) -> None:
    for name, field_name, pattern in (
        ("SETUP_ENV_NVIDIA_DRIVER_VERSION", "driver_version", _VERSION),
        ("SETUP_ENV_CUDA_DRIVER_VERSION", "cuda_driver_version", _CUDA),
    ):
        raw = host.env(name)
        if raw is None:
            continue
        value = raw.strip()
        if pattern.match(value):
            acc.values[field_name] = value
            acc.sources[field_name] = f"env:{name}"
            acc.seen = True
        else:
            acc.note(
                "bad-override",
                f"{name}={value[:40]!r} is not a version like "
                f"{'570.86.10' if field_name == 'driver_version' else '12.8'}; ignored",
                f"env:{name}",
            )


def _catalogue_notes(acc: _Acc) -> None:
    """Notes where the GPU knowledge base (setup_env.probe.resolve) does not know a GPU by name or
    disagrees with what the driver reported."""
    if not acc.gpus:
        return
    from setup_env.probe.resolve import resolve_gpu

    for g in acc.gpus:
        if g.name == "unknown NVIDIA GPU":
            continue
        r = resolve_gpu(g)
        if r.code == "gpu-catalogue-unavailable":
            acc.note(
                "gpu-catalogue-unavailable",
                "setup_env/data/gpus.json is unreadable",
                "setup_env.knowledge.gpus",
            )
            return
        if r.code == "gpu-unknown":
            close = f" (closest known: {', '.join(r.suggestions)})" if r.suggestions else ""
            acc.note(
                "gpu-unknown",
                f"GPU {g.index} {g.name!r} is not in the GPU catalogue"
                + ("" if g.compute_capability else "; its compute capability is unknown")
                + close,
                g.source,
                "info" if g.compute_capability else "warning",
            )
            continue
        model = r.model
        if g.compute_capability and r.match == "exact" and model is not None:
            from setup_env.knowledge.gpus import lookup

            known = lookup(model)
            if known is not None and known.compute_capability != g.compute_capability:
                acc.note(
                    "gpu-catalogue-disagrees",
                    f"GPU {g.index} {g.name!r} reports compute capability "
                    f"{g.compute_capability}; the catalogue says {known.compute_capability}",
                    g.source,
                    "info",
                )


def detect(host: Host) -> tuple[NvidiaInfo | None, list[Note]]:
    acc = _Acc()
    if (host.env("SETUP_ENV_NO_NVML") or "").strip().lower() not in ("1", "true", "yes"):
        snap = host.nvml()
        if isinstance(snap, Mapping):
            _from_nvml(snap, acc)
        else:
            acc.note("nvml-garbled", "NVML snapshot is not an object", "nvml")
    if not acc.gpus and acc.error is None:
        smi = _find_smi(host)
        if smi is not None:
            _from_smi(host, smi, acc)
    _from_files(host, acc)
    _overrides(host, acc)
    if not acc.seen and not acc.gpus:
        return None, acc.notes
    acc.gpus.sort(key=lambda g: g.index)
    _catalogue_notes(acc)
    sources = dict(acc.sources)
    if acc.gpus:
        sources.setdefault("gpus", acc.gpus[0].source)
    info = NvidiaInfo(
        driver_version=acc.values.get("driver_version"),
        cuda_driver_version=acc.values.get("cuda_driver_version"),
        kernel_module=acc.values.get("kernel_module"),
        gpus=tuple(acc.gpus),
        error=acc.error,
        error_code=acc.error_code,
        library_version=acc.values.get("library_version"),
        sources=sources,
    )
    return info, acc.notes
