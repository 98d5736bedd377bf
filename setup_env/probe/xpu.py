"""Intel GPUs (PyTorch's ``xpu`` device): PCI display devices of vendor 0x8086, ``xpu-smi``.

Sources, in order: ``xpu-smi discovery`` (names and bus ids, when Intel's XPU Manager is
installed; 5 s timeout), then PCI sysfs (vendor 0x8086, display class 0x03xxxx), which sees the
GPU with no Intel software installed; the kernel driver bound to it (``i915`` or ``xe``) comes
from sysfs. ``sycl-ls`` is not run: it initialises every SYCL backend and takes seconds.
"""

from __future__ import annotations

import re

from setup_env._record import Record, record
from setup_env.facts import Gpu, Note, XpuInfo
from setup_env.probe import pci
from setup_env.probe.host import Host


@record
class XpuSmiDevice(Record):
    """One Intel GPU as xpu-smi lists it."""

    device_id: int
    name: str | None
    bus_id: str | None


def parse_xpu_smi_discovery(text: str) -> list[XpuSmiDevice]:
    """``xpu-smi discovery`` box table -> devices.

    Example::

        | 0         | Device Name: Intel(R) UHD Graphics 770                                |
        |           | Vendor Name: Intel(R) Corporation                                     |
        |           | PCI BDF Address: 0000:00:02.0                                         |
    """
    out: list[XpuSmiDevice] = []
    current: dict[str, str] = {}
    device_id: int | None = None

    def flush() -> None:
        if device_id is not None:
            out.append(
                XpuSmiDevice(device_id, current.get("Device Name"), current.get("PCI BDF Address"))
            )

    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not line.lstrip().startswith("|"):
            continue
        first, info = cells
        if first.isdigit():
            flush()
            device_id, current = int(first), {}
        if device_id is None or ":" not in info:
            continue
        key, _, value = info.partition(":")
        current[key.strip()] = value.strip()
    flush()
    return out


_BUS = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def detect(
    host: Host, pci_devices: list[pci.PciDevice] | None = None
) -> tuple[XpuInfo | None, list[Note]]:
    notes: list[Note] = []
    devices = pci.display_devices(host) if pci_devices is None else pci_devices
    intel = [d for d in devices if d.vendor == pci.VENDOR_INTEL]
    smi: list[XpuSmiDevice] = []
    sources: dict[str, str] = {}
    if host.which("xpu-smi"):
        result = host.run(("xpu-smi", "discovery"), timeout=5.0)
        if result.ok:
            smi = parse_xpu_smi_discovery(result.stdout)
            if not smi:
                notes.append(Note("xpu-smi-garbled", "xpu-smi listed no devices", "xpu-smi"))
        else:
            notes.append(Note("xpu-smi-failed", result.describe(), "xpu-smi"))
    gpus: list[Gpu] = []
    if smi:
        for dev in smi:
            bus = (dev.bus_id or "").lower()
            gpus.append(
                Gpu(
                    index=dev.device_id,
                    name=dev.name or "Intel GPU",
                    vendor="intel",
                    pci_bus_id=bus if _BUS.match(bus) else None,
                    source="xpu-smi discovery",
                )
            )
        sources["gpus"] = "xpu-smi discovery"
    else:
        for pdev in intel:
            gpus.append(
                Gpu(
                    index=len(gpus),
                    name=f"Intel GPU {pdev.device or ''}".strip(),
                    vendor="intel",
                    pci_bus_id=pdev.bus_id,
                    source="pci",
                )
            )
        if gpus:
            sources["gpus"] = "pci"
    if not gpus:
        return None, notes
    kernel_driver = next((d.driver for d in intel if d.driver), None)
    if kernel_driver:
        sources["kernel_driver"] = "/sys/bus/pci/devices/*/driver"
    return XpuInfo(gpus=tuple(gpus), kernel_driver=kernel_driver, sources=sources), notes
