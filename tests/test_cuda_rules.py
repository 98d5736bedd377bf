"""The CUDA compatibility rules (setup_env/cuda.py), one table.

Architectures: NVIDIA's binary-compatibility rules (CUDA C++ Programming Guide; VERIFIED.md §3) on
arch lists real wheels carry (VERIFIED.md §3 fat-binary readings). Drivers: NVIDIA's tables 2 and 3
through the frozen fixture matrix (tests/fixtures/matrix, see its SOURCE).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

import pytest
from packaging.version import Version

from setup_env import matrix as mx
from setup_env.cuda import Arch, driver_fit, parse_cc, runs_on

M = mx.load_matrix(Path(__file__).resolve().parent / "fixtures" / "matrix" / "wheels-subset.json")

# Arch lists as PyPI wheels really carry them (VERIFIED.md §3).
CU130_X86 = ("sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
CU130_ARM = ("sm_80", "sm_90", "sm_100", "sm_110", "sm_120")
CU128_X86 = ("sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120")
CU126_X86 = ("5.0", "6.0", "7.0", "7.5", "8.0", "8.6", "9.0")  # TORCH_CUDA_ARCH_LIST spelling


@pytest.mark.parametrize(
    ("text", "major", "minor", "suffix", "sass", "ptx"),
    [
        ("8.6", 8, 6, "", True, False),
        ("sm_86", 8, 6, "", True, False),
        ("8.6+PTX", 8, 6, "", True, True),
        ("compute_90", 9, 0, "", False, True),
        ("sm_100a", 10, 0, "a", True, False),
        ("sm_100f", 10, 0, "f", True, False),
        ("9.0a", 9, 0, "a", True, False),
        ("sm_120", 12, 0, "", True, False),
        (" SM_90A ", 9, 0, "a", True, False),
    ],
)
def test_arch_spellings(
    text: str, major: int, minor: int, suffix: str, sass: bool, ptx: bool
) -> None:
    assert Arch.parse(text) == Arch(major, minor, suffix, sass, ptx)  # type: ignore[arg-type]


@pytest.mark.parametrize("text", ["86", "sm_8.6", "sm_", "gfx90a", "8", "sm_86b", ""])
def test_not_an_arch(text: str) -> None:
    assert Arch.parse(text) is None


def test_compute_capability_spellings() -> None:
    assert parse_cc("8.6") == (8, 6) == parse_cc("sm_86")
    assert parse_cc("12.0") == (12, 0) and parse_cc("") is None and parse_cc("gfx942") is None


@pytest.mark.parametrize(
    ("cc", "arches", "how"),
    [
        ((8, 9), CU130_X86, "sass"),  # RTX 4090 runs the sm_86 SASS
        ((12, 0), CU130_X86, "sass"),  # RTX 5090
        ((7, 0), CU130_X86, None),  # V100: dropped in cu130
        ((7, 0), CU128_X86, "sass"),  # ... but still in 2.9.1+cu128
        ((6, 0), CU130_X86, None),  # P100: SASS runs only within its major
        ((7, 5), CU130_ARM, None),  # T4G on Graviton (g5g): no sm_75 on aarch64
        ((8, 7), CU130_ARM, "sass"),  # Orin-class 8.7 runs sm_80 SASS
        ((12, 0), CU126_X86, None),  # RTX 5090 on cu126
        ((9, 0), ("sm_80", "sm_90a"), "sass"),  # arch-specific target, exact arch
        ((9, 1), ("sm_80", "sm_90a"), None),  # ... and nowhere else
        ((10, 0), ("sm_80", "sm_90a"), None),
        ((9, 0), ("sm_80", "compute_80"), "ptx"),  # PTX JIT-compiles forward
        ((12, 0), ("8.0", "9.0+PTX"), "ptx"),
        ((8, 0), ("9.0+PTX",), None),  # PTX never runs on an older GPU
        ((10, 3), ("sm_100f",), "sass"),  # family target: same major, minor >=
        ((10, 0), ("sm_103f",), None),
        ((12, 0), ("sm_100f",), None),  # ... not across majors
        ((10, 3), ("compute_100f",), "ptx"),
        ((12, 0), ("compute_100f",), None),  # family PTX stays in its family
        ((9, 0), ("compute_90a",), "ptx"),
        ((10, 0), ("compute_90a",), None),
        ((8, 0), (), None),
    ],
)
def test_runs_on(cc: tuple[int, int], arches: tuple[str, ...], how: Optional[str]) -> None:
    assert runs_on(cc, arches) == how


# --- drivers (NVIDIA tables 2 and 3, through the fixture matrix) ----------------------------------


@pytest.mark.parametrize(
    ("driver", "driver_cuda", "toolkit", "os", "ptx", "compat", "code"),
    [
        # issue 9: torch 2.7.0+cu128 is built with 12.8.0 (GA: >= 570.26): full support
        ("570.86.10", None, "12.8.0", "linux", False, "full", "driver-full"),
        # the same driver under a 12.8.1 build (>= 570.124.06) runs it by minor-version compat
        ("570.86.10", None, "12.8.1", "linux", False, "mvc", "driver-mvc"),
        ("570.86.10", None, "12.8.1", "linux", True, "too-old", "driver-too-old-ptx"),
        ("570.86.10", None, "12.8", "linux", False, "mvc", "driver-mvc"),  # X.Y: strictest
        ("535.104.05", None, "12.6.3", "linux", False, "mvc", "driver-mvc"),
        ("520.61.05", None, "12.6.3", "linux", False, "too-old", "driver-too-old"),
        ("535.104.05", None, "13.0.2", "linux", False, "too-old", "driver-too-old"),
        ("580.65.06", None, "13.0.2", "linux", False, "mvc", "driver-mvc"),
        ("580.95.05", None, "13.0.2", "linux", False, "full", "driver-full"),
        ("572.61", None, "12.8.1", "windows", False, "full", "driver-full"),
        ("570.86.10", None, "12.8.1", "windows", False, "mvc", "driver-mvc"),
        ("470.57.02", None, "11.8.0", "linux", False, "mvc", "driver-mvc"),
        (None, "12.4", "12.8.0", "linux", False, "mvc", "driver-mvc"),
        (None, "12.4", "12.8.0", "linux", True, "too-old", "driver-too-old-ptx"),
        (None, "12.8", "12.8.1", "linux", False, "full", "driver-full"),
        (None, "11.8", "12.8.0", "linux", False, "too-old", "driver-too-old"),
        (None, None, "12.8.0", "linux", False, "no-driver", "driver-absent"),
        ("570.86.10", None, "10.2.89", "linux", False, "unknown", "driver-no-data"),
    ],
)
def test_driver_fit(
    driver: Optional[str],
    driver_cuda: Optional[str],
    toolkit: str,
    os: str,
    ptx: bool,
    compat: str,
    code: str,
) -> None:
    fit = driver_fit(driver, toolkit, os, M.cuda, driver_cuda=driver_cuda, needs_ptx=ptx)
    assert (fit.compat, fit.code) == (compat, code)
    assert fit.runs == (compat not in ("too-old",))


def test_driver_fit_numbers_come_from_the_data() -> None:
    fit = driver_fit("570.86.10", "12.8.0", "linux", M.cuda)
    assert (fit.toolkit_min, fit.mvc_floor) == ("570.26", "525.60.13")
    win = driver_fit("560.94", "12.8.0", "windows", M.cuda)
    # the Windows floor is whatever the matrix says (data-review-2026-12 A1 questions 527.41)
    assert win.compat == "mvc" and win.mvc_floor == M.cuda["12.8"].mvc.windows_text
    assert driver_fit("570.86.10", "12.8.1", "linux", M.cuda, needs_ptx=True).mvc_floor is None


def test_no_minor_version_compatibility_before_cuda_11_1() -> None:
    # NVIDIA table 3: CUDA 11.0.3 GA needs >= 450.51.06 (Linux); 11.x's MVC floor is 450.80.02
    ga = mx.DriverFloor(Version("450.51.06"), Version("451.82"), "V2", "450.51.06", "451.82")
    row = replace(M.cuda["11.8"], version="11.0", updates={"11.0.3": ga})
    fit = driver_fit("450.36.06", "11.0.3", "linux", {"11.0": row})
    assert fit.compat == "too-old" and fit.mvc_floor is None
    assert "minor-version" not in fit.why_not()
