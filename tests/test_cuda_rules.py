"""The CUDA compatibility rules (setup_env/knowledge/cuda.py), one table.

Architectures: NVIDIA's binary-compatibility rules (CUDA C++ Programming Guide; VERIFIED.md §3)
on arch lists real wheels carry (VERIFIED.md §3 fat-binary readings). Drivers: NVIDIA's tables 2
and 3 through the frozen fixture matrix (tests/fixtures/matrix, see its SOURCE). The last table
runs every row through the planner, the doctor and verify's decider: they must agree.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

import pytest
from packaging.version import Version

from setup_env.decide.doctor import examine
from setup_env.decide.model import PlanOptions, wheel_platform
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.decide.smoke import decide_arch
from setup_env.facts import Facts, InstalledPackage
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.cuda import Arch, driver_fit, parse_cc, runs_on
from setup_env.knowledge.variant import Variant

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
    assert bool(fit.why_not()) == (compat in ("too-old", "unknown"))


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


# --- one table, three deciders: plan, doctor and verify must agree --------------------------------
#
# Each row: a machine (OS, CPU, GPU, the driver and the CUDA version that driver reports, as
# nvidia-smi pairs them) with one torch wheel. The planner is asked for exactly that wheel
# (--torch/--variant), the doctor sees it installed, verify's decider sees what the worker would
# report from it. Expected: NVIDIA's rules by hand (driver tables 2/3 via the fixture matrix's rows,
# the wheel's measured arch list).

ROWS = [
    # issue 9: torch 2.7.0+cu128 is built with 12.8.0 (>= 570.26): full support, not MVC
    ("linux", "x86_64", "RTX 5090", "570.86.10", "12.8", "2.7.0", "cu128", "driver-full", "sass"),
    # 2.8.0+cu128 is built with 12.8.1 (>= 570.124.06): the same driver runs it by MVC
    ("linux", "x86_64", "RTX 5090", "570.86.10", "12.8", "2.8.0", "cu128", "driver-mvc", "sass"),
    ("linux", "x86_64", "H100", "570.172.08", "12.8", "2.14.1", "cu130", "driver-too-old", "sass"),
    ("linux", "x86_64", "RTX 5090", "580.65.06", "13.0", "2.14.1", "cu130", "driver-mvc", "sass"),
    ("linux", "x86_64", "RTX 4090", "580.95.05", "13.0", "2.14.1", "cu130", "driver-full", "sass"),
    ("linux", "x86_64", "H100", "535.104.05", "12.2", "2.14.1", "cu126", "driver-mvc", "sass"),
    ("linux", "x86_64", "RTX 5090", "580.95.05", "13.0", "2.9.1", "cu126", "driver-full", None),
    ("linux", "x86_64", "V100", "590.48.01", "13.1", "2.14.1", "cu130", "driver-full", None),
    ("linux", "x86_64", "V100", "590.48.01", "13.1", "2.8.0", "cu128", "driver-full", "sass"),
    ("linux", "aarch64", "sm_75", "580.95.05", "13.0", "2.14.1", "cu130", "driver-full", None),
    # Windows numbers its drivers apart: 526.47 is below 12.x's Windows MVC floor
    (
        "windows",
        "x86_64",
        "RTX 3060",
        "526.47",
        "12.0",
        "2.14.1",
        "cu126",
        "driver-too-old",
        "sass",
    ),
    ("windows", "x86_64", "RTX 3060", "561.17", "12.6", "2.14.1", "cu126", "driver-full", "sass"),
]


def _machine(os: str, arch: str, gpu: str, driver: str, driver_cuda: str) -> Facts:
    f = spec_facts(os=os, arch=arch, python="3.12", gpus=[gpu], driver=driver)
    assert f.nvidia is not None
    return replace(f, nvidia=replace(f.nvidia, cuda_driver_version=driver_cuda))


def _by_plan(facts: Facts, release: str, variant: str) -> tuple[str, Optional[str]]:
    p = make_plan(facts, PlanOptions(torch=release, variant=variant), M)
    assert p.status == "ok" and p.variant == Variant.parse(variant), p
    too_old = [c for c in p.warning_codes if c.startswith("driver-too-old")]
    driver = too_old[0] if too_old else f"driver-{p.driver_compat}"
    how = "ptx" if "arch-ptx" in p.warning_codes else "sass"
    return driver, None if "arch-missing" in p.warning_codes else how


def _by_doctor(facts: Facts, release: str, variant: str) -> tuple[str, Optional[str]]:
    v = Variant.parse(variant)
    torch = InstalledPackage("torch", f"{release}+{v}", variant=v, cuda=v.cuda)
    found = {f.code: f for f in examine(replace(facts, packages=(torch,)), None, M)}
    driver = "driver-full"
    for code in ("cuda-newer-than-driver", "cuda-minor-version-compat"):
        if code in found:
            driver = found[code].details["reason"]
    if "gpu-arch-not-in-wheel" in found:
        return driver, None
    return driver, "ptx" if "gpu-arch-ptx-only" in found else "sass"


def _by_verify(facts: Facts, release: str, variant: str) -> tuple[str, Optional[str]]:
    v = Variant.parse(variant)
    build = M.build(v, release, wheel_platform(facts))
    assert build is not None and facts.nvidia is not None
    gpu = facts.nvidia.gpus[0]
    info = {
        "torch_version": f"{release}+{v}",
        "cuda": v.cuda,
        "arch_list": list(build.arch_names()),  # torch.cuda.get_arch_list() of that wheel
        "driver_cuda": facts.nvidia.cuda_driver_version,
        "gpus": [{"name": gpu.name, "capability": gpu.compute_capability}],
    }
    res = decide_arch(info, facts, M)
    how = next(iter(res.evidence["coverage"].values()))
    return res.evidence["driver_fit"], None if how == "none" else how


@pytest.mark.parametrize("row", ROWS, ids=lambda r: f"{r[2]}-{r[3]}-{r[5]}+{r[6]}-{r[0]}")
def test_plan_doctor_and_verify_agree(row: tuple[str, ...]) -> None:
    os, arch, gpu, driver, driver_cuda, release, variant, want_driver, want_arch = row
    facts = _machine(os, arch, gpu, driver, driver_cuda)
    want = (want_driver, want_arch)
    assert _by_plan(facts, release, variant) == want, "plan"
    assert _by_doctor(facts, release, variant) == want, "doctor"
    assert _by_verify(facts, release, variant) == want, "verify"
