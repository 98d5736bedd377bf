"""NVML's snapshot (``host.nvml()``: nvidia-ml-py on a live machine, host.json's ``"nvml"`` in
a replay) read into the gathered facts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from setup_env.probe.nvidia.gather import _Acc, _gpu, _ver
from setup_env.probe.nvidia.smi_text import _FAILURES, throttle_names

_NVML_FAILURES = {
    "driver-library-mismatch": _FAILURES[0],
    "driver-not-loaded": _FAILURES[1],
    "no-permission": _FAILURES[3],
}


def cuda_from_nvml(value: Any) -> Optional[str]:
    """NVML's integer CUDA driver version -> "X.Y": 12040 -> "12.4", 13010 -> "13.1"."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        return None
    return f"{value // 1000}.{(value % 1000) // 10}"


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
