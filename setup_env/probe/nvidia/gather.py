"""The facts the sources gather, each with where it came from, and a
:class:`~setup_env.facts.Gpu` built from what a source read."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Optional

from setup_env.facts import Gpu, Note

_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")
_CUDA = re.compile(r"^\d+\.\d+$")
_BUS_ID = re.compile(r"^([0-9A-Fa-f]{4,8}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})\.([0-7])$")


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


def _ver(value: Any) -> Optional[str]:
    return value.strip() if isinstance(value, str) and _VERSION.match(value.strip()) else None
