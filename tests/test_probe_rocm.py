# ruff: noqa: W291  (real rocminfo output: long lines, trailing blanks)
"""AMD ROCm probe: rocminfo of a real 8x MI300X server, other real agents, garbled output."""

from __future__ import annotations

import json
from pathlib import Path

from test_probe_host import make_replay

from setup_env.probe import rocm

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
MI300X = HOSTS / "ubuntu2204-rocm623-8x-mi300x"
ROCMINFO = (MI300X / "commands/00-rocminfo.txt").read_text(encoding="utf-8")

# Agent 7 of `rocminfo` on an MI250X node (https://github.com/ROCm/rocm_smi_lib/issues/160),
# as published (the excerpt stops inside the agent).
MI250X_EXCERPT = """*******
Agent 7
*******
  Name:                    gfx90a
  Uuid:                    GPU-08d4bf7c6821467b
  Marketing Name:          AMD Instinct MI250X/MI250
  Vendor Name:             AMD
  Feature:                 KERNEL_DISPATCH
  Profile:                 BASE_PROFILE
  Float Round Mode:        NEAR
  Max Queue Number:        128(0x80)
  Queue Min Size:          64(0x40)
  Queue Max Size:          131072(0x20000)
  Queue Type:              MULTI
  Node:                    6
  Device Type:             GPU
  Cache Info:
    L1:                      16(0x10) KB
    L2:                      8192(0x2000) KB
"""
# ROCm 1.x on a Ryzen APU (https://github.com/rocm-arch/rocm-arch/issues/624): CPU agent only.
RYZEN_APU_HEAD = """ROCk module is loaded
=====================    
HSA System Attributes    
=====================    
Runtime Version:         1.1
==========               
HSA Agents               
==========               
*******                  
Agent 1                  
*******                  
  Name:                    AMD Ryzen 7 PRO 5850U with Radeon Graphics
  Uuid:                    CPU-XX                             
  Marketing Name:          AMD Ryzen 7 PRO 5850U with Radeon Graphics
  Vendor Name:             CPU                                
  Device Type:             CPU                                
"""


def test_parse_rocminfo_8x_mi300x() -> None:
    agents, module = rocm.parse_rocminfo(ROCMINFO)
    assert module == "6.8.5"
    gpus = [a for a in agents if a.device_type == "GPU"]
    assert [a.device_type for a in agents[:2]] == ["CPU", "CPU"]
    assert len(gpus) == 8
    assert {(a.name, a.marketing_name) for a in gpus} == {("gfx942", "AMD Instinct MI300X")}
    assert [rocm.bdfid_to_bus_id(a.bdfid or 0) for a in gpus] == [
        f"0000:{bus}:00.0" for bus in ("1b", "3d", "4e", "5f", "9d", "bd", "cd", "dd")
    ]
    # The first GLOBAL coarse-grained pool: 201310208 KB = 192 GiB of HBM3 per MI300X.
    assert {a.memory_bytes for a in gpus} == {201310208 * 1024}


def test_parse_rocminfo_truncated_and_cpu_only() -> None:
    agents, module = rocm.parse_rocminfo(MI250X_EXCERPT)
    assert module is None
    assert [(a.name, a.marketing_name, a.device_type, a.memory_bytes) for a in agents] == [
        ("gfx90a", "AMD Instinct MI250X/MI250", "GPU", None)
    ]
    agents, module = rocm.parse_rocminfo(RYZEN_APU_HEAD)
    assert [a.device_type for a in agents] == ["CPU"] and module is None
    assert rocm.parse_rocminfo("") == ([], None)
    assert rocm.parse_rocminfo("Segmentation fault (core dumped)\n") == ([], None)


def test_parse_agent_enumerator_and_version_file() -> None:
    assert rocm.parse_agent_enumerator("gfx000\ngfx90a\ngfx90a\n\n") == ["gfx90a", "gfx90a"]
    assert rocm.parse_agent_enumerator("garbage\n") == []
    assert rocm.parse_rocm_version("6.2.4-120\n") == "6.2.4"
    assert rocm.parse_rocm_version("") is None


def _linux(**extra: object) -> dict[str, object]:
    doc: dict[str, object] = {"interpreter": {"system": "Linux"}}
    doc.update(extra)
    return doc


def test_rocminfo_failure_falls_back_to_the_enumerator(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        _linux(
            which={
                "rocminfo": "/opt/rocm/bin/rocminfo",
                "rocm_agent_enumerator": "/opt/rocm/bin/rocm_agent_enumerator",
            },
            commands=[
                {"argv": ["/opt/rocm/bin/rocminfo"], "returncode": None, "error": "timeout"},
                {"argv": ["/opt/rocm/bin/rocm_agent_enumerator"], "stdout": "gfx000\ngfx1100\n"},
            ],
        ),
        {"/opt/rocm/.info/version": "6.2.4-120\n"},
    )
    info, notes = rocm.detect(host, [])
    assert info is not None
    assert info.version == "6.2.4"
    assert [(g.name, g.gfx_arch, g.source) for g in info.gpus] == [
        ("gfx1100", "gfx1100", "rocm_agent_enumerator")
    ]
    assert [n.code for n in notes] == ["rocminfo-failed"]


def test_amd_gpu_on_the_bus_without_rocm(tmp_path: Path) -> None:
    files = {
        "/sys/bus/pci/devices/0000:03:00.0/class": "0x030000\n",
        "/sys/bus/pci/devices/0000:03:00.0/vendor": "0x1002\n",
        "/sys/bus/pci/devices/0000:03:00.0/device": "0x744c\n",
        "/sys/bus/pci/devices/0000:00:00.0/class": "0x060000\n",
        "/sys/bus/pci/devices/0000:00:00.0/vendor": "0x1022\n",
    }
    host = make_replay(tmp_path, _linux(), files)
    info, notes = rocm.detect(host)
    assert info is not None and info.version is None
    assert [(g.name, g.pci_bus_id, g.source) for g in info.gpus] == [
        ("AMD GPU 0x744c", "0000:03:00.0", "pci")
    ]
    assert [n.code for n in notes] == ["amd-gpu-no-kfd"]


def test_the_mi300x_host_facts() -> None:
    expected = json.loads((MI300X / "expected.json").read_text(encoding="utf-8"))
    assert expected["rocm"]["version"] == "6.2.3"
    assert expected["rocm"]["driver_version"] == "6.8.5"
    assert len(expected["rocm"]["gpus"]) == 8
