"""PCI display devices from Linux sysfs (``/sys/bus/pci/devices/*/{vendor,device,class}``).

Shared by the AMD and Intel probes: a GPU is on the bus whether or not its runtime is installed,
which is how "an AMD GPU but no ROCm" is told apart from "no AMD GPU". Vendor ids: 0x10de NVIDIA,
0x1002 AMD, 0x8086 Intel (PCI-SIG registry). Display class: 0x03xxxx (VGA 0x0300, 3D 0x0302,
other display 0x0380).
"""

from __future__ import annotations

import re

from setup_env._record import Record, record
from setup_env.probe.host import Host

SYSFS_PCI = "/sys/bus/pci/devices"
VENDOR_NVIDIA = "0x10de"
VENDOR_AMD = "0x1002"
VENDOR_INTEL = "0x8086"
_BUS_ID = re.compile(r"^[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$")
_HEX = re.compile(r"^0x[0-9a-fA-F]{4,6}$")


@record
class PciDevice(Record):
    """One PCI device from sysfs: ids, class and the kernel driver bound to it."""

    bus_id: str  # "0000:03:00.0"
    vendor: str  # "0x1002"
    device: str | None  # "0x740c"
    pci_class: str  # "0x030200"
    driver: str | None  # kernel driver bound to it: "amdgpu", "i915", "xe", "nvidia"


def parse_hex_id(text: str | None) -> str | None:
    """``0x1002\\n`` -> ``0x1002``; anything else -> None."""
    value = (text or "").strip().lower()
    return value if _HEX.match(value) else None


def display_devices(host: Host) -> list[PciDevice]:
    """Every display-class PCI device the host's sysfs lists (empty when there is no sysfs)."""
    out: list[PciDevice] = []
    for name in host.listdir(SYSFS_PCI) or ():
        if not _BUS_ID.match(name):
            continue
        base = f"{SYSFS_PCI}/{name}"
        pci_class = parse_hex_id(host.read_text(f"{base}/class"))
        if pci_class is None or not pci_class.startswith("0x03"):
            continue
        vendor = parse_hex_id(host.read_text(f"{base}/vendor"))
        if vendor is None:
            continue
        device = parse_hex_id(host.read_text(f"{base}/device"))
        driver = None
        if host.exists(f"{base}/driver"):  # a link to /sys/bus/pci/drivers/<name>
            driver = host.realpath(f"{base}/driver").rstrip("/").rsplit("/", 1)[-1] or None
        out.append(PciDevice(name.lower(), vendor, device, pci_class, driver))
    return out
