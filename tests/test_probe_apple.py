# ruff: noqa: E501  (real captured text keeps its long lines)
"""Apple Silicon probe: sysctl output, chip names, GPU cores, Rosetta, MPS eligibility."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_probe_host import make_replay

from setup_env.probe import apple, interp

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def test_parse_sysctl_real_lines() -> None:
    # `sysctl -a | grep machdep.cpu` on an M1 (GuillaumeGomez/sysinfo#497) and an unknown oid
    # as sysctl reports it on stderr (archspec/archspec#76).
    text = (
        "machdep.cpu.brand_string: Apple M1\n"
        "machdep.cpu.core_count: 8\n"
        "sysctl: unknown oid 'machdep.cpu.vendor'\n"
        "vm.swapusage: total = 2048.00M  used = 512.00M  free = 1536.00M  (encrypted)\n"
    )
    values = apple.parse_sysctl(text)
    assert values["machdep.cpu.brand_string"] == "Apple M1"
    assert values["machdep.cpu.core_count"] == "8"
    assert "sysctl" not in values
    assert apple.parse_sysctl("") == {}


@pytest.mark.parametrize(
    ("brand", "expected"),
    [
        ("Apple M1", (1, None)),  # GuillaumeGomez/sysinfo#497
        ("Apple M1 Pro", (1, "Pro")),  # spack/spack#30077, klauspost/cpuid#105
        ("Apple M1 Max", (1, "Max")),  # Jinjinov/Hardware.Info#32
        ("Apple M2 Pro", (2, "Pro")),  # Dr-Noob/cpufetch#183
        ("Apple M3 Pro", (3, "Pro")),
        ("Apple M4", (4, None)),
        ("Apple M5 Max", (5, "Max")),
        ("Apple M2 Ultra", (2, "Ultra")),
        ("Apple processor", (None, None)),  # early Big Sur on M1 (archspec/archspec#38)
        ("Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz", (None, None)),
        ("", (None, None)),
    ],
)
def test_parse_chip(brand: str, expected: tuple[int | None, str | None]) -> None:
    assert apple.parse_chip(brand) == expected


def test_parse_gpu_cores() -> None:
    # `ioreg -rc AGXAccelerator` excerpt of an Apple M4 quoted as real output in a public
    # parser test (index id 59125221142)
    ioreg = """+-o AGXAcceleratorG16G  <class AGXAcceleratorG16G, id 0x10000039c, registered, matched, active, busy 0 (309 ms), retain 59>
    {
      "IOMatchedAtBoot" = Yes
      "model" = "Apple M4"
      "gpu-core-count" = 10
    }
"""
    assert apple.parse_gpu_cores(ioreg) == 10
    assert apple.parse_gpu_cores("no accelerator here") is None


def _mac(
    tmp_path: Path, interpreter: dict[str, object], sysctl: str, ioreg: str = ""
) -> apple.Host:
    commands: list[dict[str, object]] = [{"argv": list(apple.SYSCTL_ARGV), "stdout": sysctl}]
    if ioreg:
        commands.append({"argv": list(apple.IOREG_ARGV), "stdout": ioreg})
    return make_replay(tmp_path, {"interpreter": interpreter, "commands": commands})


def test_native_m3_max_with_gpu_cores(tmp_path: Path) -> None:
    host = _mac(
        tmp_path,
        {"system": "Darwin", "machine": "arm64", "mac_ver": "14.5"},
        "machdep.cpu.brand_string: Apple M3 Max\nhw.optional.arm64: 1\nsysctl.proc_translated: 0\n",
        '      "gpu-core-count" = 40\n',
    )
    info, notes = apple.detect(host)
    assert info is not None
    assert (info.chip, info.generation, info.variant, info.gpu_cores, info.mps_eligible) == (
        "Apple M3 Max",
        3,
        "Max",
        40,
        True,
    )
    assert notes == []


def test_old_macos_is_not_mps_eligible(tmp_path: Path) -> None:
    host = _mac(
        tmp_path,
        {"system": "Darwin", "machine": "arm64", "mac_ver": "11.6"},
        "machdep.cpu.brand_string: Apple M1\nhw.optional.arm64: 1\n",
    )
    info, notes = apple.detect(host)
    assert info is not None and info.mps_eligible is False
    assert [n.code for n in notes] == ["macos-too-old-for-mps"]


def test_intel_mac_is_not_apple_silicon(tmp_path: Path) -> None:
    # An Intel Mac: no hw.optional.arm64=1, unknown proc_translated (exit 1, stderr).
    host = make_replay(
        tmp_path,
        {
            "interpreter": {"system": "Darwin", "machine": "x86_64", "mac_ver": "13.6"},
            "commands": [
                {
                    "argv": list(apple.SYSCTL_ARGV),
                    "returncode": 1,
                    "stdout": "machdep.cpu.brand_string: Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz\n"
                    "hw.memsize: 17179869184\n",
                    "stderr": "sysctl: unknown oid 'sysctl.proc_translated'\n",
                }
            ],
        },
    )
    info, notes = apple.detect(host)
    assert info is None and notes == []
    values, _ = apple.darwin_sysctl(host)
    python, pnotes = interp.detect(host, values)
    assert python.rosetta is False and pnotes == []


def test_rosetta_is_seen_from_proc_translated_or_the_arch_mismatch(tmp_path: Path) -> None:
    interpreter = {
        "system": "Darwin",
        "machine": "x86_64",
        "mac_ver": "12.3.1",
        "version": "3.10.4",
    }
    host = make_replay(tmp_path, {"interpreter": interpreter})
    python, notes = interp.detect(host, {"sysctl.proc_translated": "1"})
    assert python.rosetta is True
    assert [n.code for n in notes] == ["python-under-rosetta"]
    # Without the key (older macOS CLI), an x86_64 Python on arm64 hardware is translated too.
    python, _ = interp.detect(host, {"hw.optional.arm64": "1"})
    assert python.rosetta is True
    assert python.sources["rosetta"] == "x86_64 Python on hw.optional.arm64=1"


def test_sysctl_that_cannot_run_is_a_note(tmp_path: Path) -> None:
    host = make_replay(tmp_path, {"interpreter": {"system": "Darwin", "machine": "arm64"}})
    values, notes = apple.darwin_sysctl(host)
    assert values == {} and [n.code for n in notes] == ["sysctl-failed"]
    info, notes = apple.detect(host)
    assert info is not None and info.chip is None
