"""Read NVML through nvidia-ml-py (``import pynvml``) into a plain, JSON-able snapshot.

Called only through ``LiveHost.nvml()``; a ``ReplayHost`` returns host.json's ``"nvml"`` key, so
the snapshot format below is also the capture format. ``setup_env.probe.nvidia`` interprets it.

Success::

    {"nvml_version": "12.550.54.15", "driver_version": "550.54.15",
     "cuda_driver_version": 12040,                      # nvmlSystemGetCudaDriverVersion
     "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3",
               "compute_capability": [9, 0], "memory_total": 85520809984,
               "pci_bus_id": "00000000:00:09.0", "uuid": "GPU-...",
               "mig_mode": 0, "persistence_mode": 1, "ecc_uncorrected_volatile": 0,
               "pcie_gen_current": 5, "pcie_gen_max": 5,
               "pcie_width_current": 16, "pcie_width_max": 16,
               "clocks_event_reasons": 1,                 # nvml.h bitmask
               "errors": {"field": "NVML error text"}}]}   # a field NVML refused

Failure: ``{"error": "<NVML's message>", "code": "<code>"}`` with code one of
``not-installed`` (no pynvml), ``library-not-found``, ``driver-not-loaded``,
``driver-library-mismatch``, ``no-permission``, ``unknown``. A per-GPU field that is not
supported (``NVMLError_NotSupported``: MIG on a GeForce, ECC on a consumer card) is left out.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

_CODES = {
    "NVMLError_LibraryNotFound": "library-not-found",
    "NVMLError_DriverNotLoaded": "driver-not-loaded",
    "NVMLError_LibRmVersionMismatch": "driver-library-mismatch",
    "NVMLError_NoPermission": "no-permission",
}


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def snapshot() -> dict[str, Any]:
    try:
        import pynvml
    except ImportError as exc:  # nvidia-ml-py is a dependency, but a broken env is possible
        return {"error": f"nvidia-ml-py is not importable: {exc}", "code": "not-installed"}
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return {"error": str(exc), "code": _CODES.get(type(exc).__name__, "unknown")}
    except OSError as exc:  # a libnvidia-ml that fails to load
        return {"error": str(exc), "code": "library-not-found"}
    try:
        return _read(pynvml)
    finally:
        with contextlib.suppress(pynvml.NVMLError):
            pynvml.nvmlShutdown()


def _device_readers(pynvml: Any) -> list[tuple[str, Callable[[Any], Any]]]:
    """(snapshot key, function of a device handle), in snapshot order."""
    reasons = getattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons", None)
    if reasons is None:  # bindings before the R535 rename
        reasons = pynvml.nvmlDeviceGetCurrentClocksThrottleReasons
    uncorrected = pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    volatile = pynvml.NVML_VOLATILE_ECC
    return [
        ("name", lambda h: _text(pynvml.nvmlDeviceGetName(h))),
        ("compute_capability", lambda h: list(pynvml.nvmlDeviceGetCudaComputeCapability(h))),
        ("memory_total", lambda h: int(pynvml.nvmlDeviceGetMemoryInfo(h).total)),
        ("pci_bus_id", lambda h: _text(pynvml.nvmlDeviceGetPciInfo(h).busId)),
        ("uuid", lambda h: _text(pynvml.nvmlDeviceGetUUID(h))),
        ("mig_mode", lambda h: int(pynvml.nvmlDeviceGetMigMode(h)[0])),
        ("persistence_mode", lambda h: int(pynvml.nvmlDeviceGetPersistenceMode(h))),
        (
            "ecc_uncorrected_volatile",
            lambda h: int(pynvml.nvmlDeviceGetTotalEccErrors(h, uncorrected, volatile)),
        ),
        ("pcie_gen_current", lambda h: int(pynvml.nvmlDeviceGetCurrPcieLinkGeneration(h))),
        ("pcie_gen_max", lambda h: int(pynvml.nvmlDeviceGetMaxPcieLinkGeneration(h))),
        ("pcie_width_current", lambda h: int(pynvml.nvmlDeviceGetCurrPcieLinkWidth(h))),
        ("pcie_width_max", lambda h: int(pynvml.nvmlDeviceGetMaxPcieLinkWidth(h))),
        ("clocks_event_reasons", lambda h: int(reasons(h))),
    ]


def _read(pynvml: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    errors: dict[str, str] = {}

    def get(key: str, fn: Callable[[], Any], sink: dict[str, Any], errs: dict[str, str]) -> None:
        try:
            sink[key] = fn()
        except pynvml.NVMLError_NotSupported:
            pass
        except pynvml.NVMLError as exc:
            errs[key] = str(exc)
        except (AttributeError, TypeError, ValueError) as exc:  # an older binding
            errs[key] = f"{type(exc).__name__}: {exc}"

    get("nvml_version", lambda: _text(pynvml.nvmlSystemGetNVMLVersion()), out, errors)
    get("driver_version", lambda: _text(pynvml.nvmlSystemGetDriverVersion()), out, errors)
    get("cuda_driver_version", lambda: int(pynvml.nvmlSystemGetCudaDriverVersion()), out, errors)
    try:
        count = int(pynvml.nvmlDeviceGetCount())
    except pynvml.NVMLError as exc:
        return {**out, "error": str(exc), "code": _CODES.get(type(exc).__name__, "unknown")}
    readers = _device_readers(pynvml)
    gpus: list[dict[str, Any]] = []
    for i in range(count):
        gpu: dict[str, Any] = {"index": i}
        errs: dict[str, str] = {}
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(i)
        except pynvml.NVMLError as exc:
            gpu["errors"] = {"handle": str(exc)}
            gpus.append(gpu)
            continue
        for key, reader in readers:
            get(key, functools.partial(reader, handle), gpu, errs)
        if errs:
            gpu["errors"] = errs
        gpus.append(gpu)
    out["gpus"] = gpus
    if errors:
        out["errors"] = errors
    return out
