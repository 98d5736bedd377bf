# ruff: noqa: E501  (real captured text keeps its long lines)
"""Intel XPU probe: xpu-smi discovery of real machines, PCI sysfs, garbled output."""

from __future__ import annotations

from pathlib import Path

from test_probe_host import make_replay

from setup_env.probe import xpu

# `xpu-smi discovery` on an i9-12900K with a Data Center GPU Flex 140, as posted in
# https://github.com/intel-gpu/intel-gpu-i915-backports/issues/167 (the excerpt ends inside
# device 1's block).
FLEX140 = """+-----------+--------------------------------------------------------------------------------------+
| Device ID | Device Information                                                                   |
+-----------+--------------------------------------------------------------------------------------+
| 0         | Device Name: Intel(R) UHD Graphics 770                                               |
|           | Vendor Name: Intel(R) Corporation                                                    |
|           | SOC UUID: 00000000-0000-0200-0000-000c46808086                                       |
|           | PCI BDF Address: 0000:00:02.0                                                        |
|           | DRM Device: /dev/dri/card0                                                           |
|           | Function Type: physical                                                              |
+-----------+--------------------------------------------------------------------------------------+
| 1         | Device Name: Intel(R) Data Center GPU Flex 140                                       |
|           | Vendor Name: Intel(R) Corporation                                                    |
"""
# `xpu-smi discovery -d 0` with a Flex 170 (https://github.com/intel/xpumanager/issues/69).
FLEX170 = """+-----------+--------------------------------------------------------------------------------------+
| Device ID | Device Information                                                                   |
+-----------+--------------------------------------------------------------------------------------+
| 0         | Device Type: GPU                                                                     |
|           | Device Name: Intel(R) Data Center GPU Flex 170                                       |
|           | PCI Device ID: 0x56c0                                                                |
|           | Vendor Name: Intel(R) Corporation                                                    |
"""


def test_parse_discovery_real_tables() -> None:
    assert xpu.parse_xpu_smi_discovery(FLEX140) == [
        xpu.XpuSmiDevice(0, "Intel(R) UHD Graphics 770", "0000:00:02.0"),
        xpu.XpuSmiDevice(1, "Intel(R) Data Center GPU Flex 140", None),
    ]
    assert xpu.parse_xpu_smi_discovery(FLEX170) == [
        xpu.XpuSmiDevice(0, "Intel(R) Data Center GPU Flex 170", None)
    ]
    assert xpu.parse_xpu_smi_discovery("") == []
    assert xpu.parse_xpu_smi_discovery("No device discovered\n") == []


def _pci(bus: str, vendor: str, klass: str, device: str) -> dict[str, str]:
    base = f"/sys/bus/pci/devices/{bus}"
    return {
        f"{base}/class": klass + "\n",
        f"{base}/vendor": vendor + "\n",
        f"{base}/device": device + "\n",
    }


def test_pci_only_detection_with_the_bound_driver(tmp_path: Path) -> None:
    files = {
        **_pci("0000:00:00.0", "0x8086", "0x060000", "0x4660"),  # host bridge: not a GPU
        **_pci("0000:03:00.0", "0x8086", "0x030000", "0xe20b"),
    }
    host = make_replay(
        tmp_path,
        {
            "interpreter": {"system": "Linux"},
            "exists": ["/sys/bus/pci/devices/0000:03:00.0/driver"],
            "links": {"/sys/bus/pci/devices/0000:03:00.0/driver": "/sys/bus/pci/drivers/xe"},
        },
        files,
    )
    info, notes = xpu.detect(host)
    assert info is not None and notes == []
    assert [(g.name, g.pci_bus_id, g.vendor) for g in info.gpus] == [
        ("Intel GPU 0xe20b", "0000:03:00.0", "intel")
    ]
    assert info.kernel_driver == "xe"


def test_xpu_smi_names_win_and_its_failure_is_a_note(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path / "a",
        {
            "which": {"xpu-smi": "/usr/bin/xpu-smi"},
            "commands": [{"argv": ["xpu-smi", "discovery"], "stdout": FLEX140}],
        },
    )
    info, _ = xpu.detect(host, [])
    assert info is not None
    assert [g.name for g in info.gpus] == [
        "Intel(R) UHD Graphics 770",
        "Intel(R) Data Center GPU Flex 140",
    ]
    host = make_replay(
        tmp_path / "b",
        {
            "which": {"xpu-smi": "/usr/bin/xpu-smi"},
            "commands": [
                {"argv": ["xpu-smi", "discovery"], "returncode": None, "error": "timeout"}
            ],
        },
    )
    info, notes = xpu.detect(host, [])
    assert info is None and [n.code for n in notes] == ["xpu-smi-failed"]
