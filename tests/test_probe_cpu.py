# ruff: noqa: E501  (real captured text keeps its long lines)
"""CPU probe: /proc/cpuinfo of real machines, ISA levels, RAM, disk, garbled input."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_probe_host import make_replay

from setup_env.probe import cpu

HOSTS = Path(__file__).parent / "fixtures" / "hosts"

# This development machine (AMD EPYC under KVM), captured by scripts/capture_host.py.
THIS_MACHINE = (HOSTS / "debian12-nogpu-cuda13toolkit/files/proc/cpuinfo").read_text()
# Intel Core Ultra 9 285K, `head -30` (public bpf-benchmark write-up, index id 52289345840).
CORE_ULTRA = (HOSTS / "ubuntu2404-cpu-only/files/proc/cpuinfo").read_text()
# Intel Pentium E5200, first processor block of `cat /proc/cpuinfo` posted on the Ubuntu
# forums in 2009 (index id 56884448076).
PENTIUM_E5200 = """processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 23
model name	: Pentium(R) Dual-Core  CPU      E5200  @ 2.50GHz
stepping	: 6
cpu MHz		: 2499.921
cache size	: 2048 KB
physical id	: 0
siblings	: 2
core id		: 0
cpu cores	: 2
apicid		: 0
initial apicid	: 0
fdiv_bug	: no
hlt_bug		: no
f00f_bug	: no
coma_bug	: no
fpu		: yes
fpu_exception	: yes
cpuid level	: 10
wp		: yes
flags		: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush dts acpi mmx fxsr sse sse2 ss ht tm pbe nx lm constant_tsc arch_perfmon pebs bts pni monitor ds_cpl est tm2 ssse3 cx16 xtpr lahf_lm
bogomips	: 4999.84
clflush size	: 64
power management:
"""
# Linux on an Apple M1 (Asahi), first block of /proc/cpuinfo posted in
# https://github.com/ad-oliviero/uwufetch/issues/215 (2023-02-02).
ASAHI_M1 = """processor	: 0
BogoMIPS	: 48.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 asimddp sha512 asimdfhm dit uscat ilrcpc flagm ssbs sb paca pacg dcpodp flagm2 frint
CPU implementer	: 0x61
CPU architecture: 8
CPU variant	: 0x1
CPU part	: 0x022
CPU revision	: 1
"""


def test_this_machine() -> None:
    info = cpu.parse_cpuinfo(THIS_MACHINE)
    assert (info.model, info.vendor, info.logical, info.physical) == (
        "AMD EPYC",
        "AuthenticAMD",
        2,
        2,
    )
    assert cpu.x86_isa_level(info.flags) == "x86-64-v4"


def test_core_ultra_is_v3_with_avx_vnni_and_no_avx512() -> None:
    info = cpu.parse_cpuinfo(CORE_ULTRA)
    assert info.model == "Intel(R) Core(TM) Ultra 9 285K"
    assert cpu.x86_isa_level(info.flags) == "x86-64-v3"
    assert "avx_vnni" in info.flags and "avx512f" not in info.flags
    # The published capture is `head -30`: processor 0 complete, processor 1 begun.
    assert (info.logical, info.physical) == (2, 1)


def test_pentium_e5200_is_baseline_x86_64() -> None:
    info = cpu.parse_cpuinfo(PENTIUM_E5200)
    # ssse3 and cx16 but no sse4_1/sse4_2/popcnt: below x86-64-v2.
    assert cpu.x86_isa_level(info.flags) == "x86-64"
    assert (info.logical, info.physical) == (1, 1)


def test_arm_cpuinfo_names_the_part_and_the_level() -> None:
    info = cpu.parse_cpuinfo(ASAHI_M1)
    assert info.model == "Apple M1 (Icestorm)"
    assert cpu.arm_isa_level(info.flags) == "armv8.2-a"
    assert info.vendor is None


@pytest.mark.parametrize(
    ("flags", "level"),
    [
        ({"asimd"}, "armv8-a"),
        ({"asimd", "atomics"}, "armv8.1-a"),
        ({"asimd", "atomics", "asimddp"}, "armv8.2-a"),
        ({"asimd", "sve", "sve2"}, "armv9-a"),
        (set(), None),
    ],
)
def test_arm_levels(flags: set[str], level: str | None) -> None:
    assert cpu.arm_isa_level(frozenset(flags)) == level


def test_parse_meminfo() -> None:
    meminfo = (HOSTS / "debian12-nogpu-cuda13toolkit/files/proc/meminfo").read_text()
    assert cpu.parse_meminfo(meminfo) == 24683568 * 1024
    assert cpu.parse_meminfo("MemTotal: lots") is None
    assert cpu.parse_meminfo("") is None


def _doc() -> dict[str, object]:
    return {"interpreter": {"system": "Linux", "machine": "x86_64", "prefix": "/usr"}}


def test_unreadable_and_empty_inputs_are_notes(tmp_path: Path) -> None:
    doc = _doc()
    doc["unreadable"] = ["/proc/cpuinfo"]
    info, notes = cpu.detect(make_replay(tmp_path / "a", doc, {"/proc/meminfo": "garbage"}))
    assert info.model is None and info.ram_bytes is None
    assert [n.code for n in notes] == ["cpuinfo-unreadable", "meminfo-garbled"]
    info, notes = cpu.detect(make_replay(tmp_path / "b", _doc(), {"/proc/cpuinfo": ""}))
    assert [n.code for n in notes] == ["cpuinfo-empty"]


def test_disk_free_at_the_prefix_or_the_override(tmp_path: Path) -> None:
    doc = _doc()
    doc["disk_free"] = {"/usr": 1000, "/scratch": 5}
    info, _ = cpu.detect(make_replay(tmp_path / "a", doc))
    assert (info.disk_path, info.disk_free_bytes) == ("/usr", 1000)
    doc["env"] = {"SETUP_ENV_DISK_PATH": "/scratch"}
    info, _ = cpu.detect(make_replay(tmp_path / "b", doc))
    assert (info.disk_path, info.disk_free_bytes) == ("/scratch", 5)
    assert info.sources["disk_path"] == "env:SETUP_ENV_DISK_PATH"
