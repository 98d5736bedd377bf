#!/usr/bin/env python3
"""Build ``setup_env/data/wheels.json``, the PyTorch wheel matrix, from its sources.

Sources (``--reference DIR``, default ``tests/fixtures/reference``: verbatim copies of the team's
research folder, with SOURCE.md):

* ``captures/pypi-simple-torch.json`` / ``captures/pypi-simple-torchvision.json``: PyPI's simple
  API answers (PEP 691 JSON), captured 2026-12-02. Every torch release 1.13.0 -> 2.15.0 with its
  wheel files (platform tag -> ``python-abi`` tags), Requires-Python and first upload are READ
  from them, not typed here.
* ``wheel_matrix.json`` (research draft): the NVIDIA driver table (Table 3 / Table 2 of the CUDA
  toolkit release notes) is read from it; the per-release CUDA/ROCm lists below are checked
  against its ``releases.*.cuda`` / ``rocm`` lists, so drift between the two fails the build.
* ``VERIFIED.md``: facts read from primary data that override the draft (PyPI default CUDA of 2.14
  and 2.15, measured SASS lists, 2.15's index variants). They are transcribed in the tables below,
  each row citing its section.

The curated tables below are the parts no capture holds (what PyTorch's own index serves, the
architectures compiled into each build): each row carries ``source`` and ``confidence`` (V:
primary source, V2: secondary copy or real use, I: inferred, ?: unverified). Which rows a plan
may use is ONE rule, ``setup_env.knowledge.matrix.plannable`` (V, V2 and I; never ?); every
index row's ``verified`` flag is that rule applied to its confidence, and a plan built on an
I row says so.

``--check`` exits 1 when the committed file differs from what this script would generate.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from _datafile import write_or_check  # scripts/ is on sys.path when run
from packaging.utils import parse_wheel_filename
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's setup_env, installed or not
from setup_env.knowledge import live, refresh  # noqa: E402  (the tag rules; the one writer)
from setup_env.knowledge.matrix import plannable  # noqa: E402  (the one rule: which rows a plan uses)
from setup_env.knowledge.tags import platform_of_tag  # noqa: E402

OUT = ROOT / "setup_env" / "data" / "wheels.json"
DEFAULT_REFERENCE = ROOT / "tests" / "fixtures" / "reference"
SCHEMA_VERSION = 1
RETRIEVED = "2026-12-02"
FIRST, LAST = Version("1.13.0"), Version("2.15.0")

TI = "pytorch/test-infra tools/scripts/generate_binary_build_matrix.py"
WM = "wheel_matrix.md"
VER = "VERIFIED.md"

PLATFORMS = {
    "linux_x86_64": {"os": "linux", "arch": "x86_64"},
    "linux_aarch64": {"os": "linux", "arch": "aarch64"},
    "windows_x86_64": {"os": "windows", "arch": "x86_64"},
    "macos_arm64": {"os": "macos", "arch": "arm64"},
    "macos_x86_64": {"os": "macos", "arch": "x86_64"},
}


def minor_of(v: str) -> str:
    p = v.split(".")
    return f"{p[0]}.{p[1]}"


# --- per series (torch minor): what PyTorch's own index publishes -----------------------------
# XPU wheels for Linux x86_64 and Windows are in each release branch's wheel matrix (test-infra
# release/2.8 ... release/2.14: `if with_xpu == ENABLE and os in (LINUX, WINDOWS): arches += [XPU]`,
# read at pytorch/test-infra@61a77570); that the release index has them is inferred (I).
_XPU = ("I", f"{TI} release/2.x (XPU for Linux and Windows, with_xpu); {WM} §1")
# CUDA 12.9 ("limited release") was built for Linux x86_64 and aarch64 in the TEST channel of
# 2.9-2.11 (release/2.x initialize_globals appends 12.9 / 12.9-aarch64 for non-release channels),
# dropped before 2.12.0 (test-infra #7917, 2026-04-02), back for 2.12.1 (#8164, 2026-06-09) and
# 2.13 (#8215, 2026-06-25). release/promote.sh copies every torch-<version> file of whl/test to
# whl (release/promote/common_utils.sh aws_promote), so the release index has them: inferred (I),
# except 2.13.0+cu129 x86_64, seen in real use (VERIFIED §5, V2), and 2.12.0, built without it.
_PROMOTE = "test-infra release/promote.sh (aws_promote copies whl/test/* to whl)"
CU129: dict[str, dict[str, tuple[str, str]]] = {
    **{
        rel: {
            plat: ("I", f"{TI} release/{minor_of(rel)} initialize_globals (12.9 in the test "
                   f"channel, 'limited release'); {_PROMOTE}")
            for plat in ("linux_x86_64", "linux_aarch64")
        }
        for rel in ("2.9.0", "2.9.1", "2.10.0", "2.11.0")
    },
    "2.12.0": {
        plat: ("?", "test-infra #7917 removed the 12.9 builds before 2.12.0 (2026-04-02)")
        for plat in ("linux_x86_64", "linux_aarch64")
    },
    "2.12.1": {
        plat: ("I", f"test-infra #8164 (release/2.12: CUDA 12.9 for Linux x86 + aarch64 in the "
               f"test channel, 2026-06-09); {_PROMOTE}")
        for plat in ("linux_x86_64", "linux_aarch64")
    },
    "2.13.0": {
        "linux_x86_64": ("V2", f"{VER} §5 (2.13.0+cu129 in real use)"),
        "linux_aarch64": ("I", f"test-infra #8215 (release/2.13: CUDA 12.9 for Linux x86 + "
                          f"aarch64 in the test channel, 2026-06-25); {_PROMOTE}"),
    },
}  # fmt: skip

# cuda: CUDA variants on Linux x86_64 and Windows; aarch64: CUDA variants for Linux aarch64;
# linux_only: CUDA variants built for Linux (x86_64 [+aarch64]) only; rocm: Linux x86_64 only;
# xpu: Linux x86_64 + Windows. (variant list, confidence, source)
SERIES: dict[str, dict[str, Any]] = {
    "1.13": dict(cuda=["cu116", "cu117"], rocm=["rocm5.1.1", "rocm5.2"], src="2c8e2ffe616d"),
    "2.0": dict(cuda=["cu117", "cu118"], rocm=["rocm5.3", "rocm5.4.2"], src="d3629fa2e61b"),
    "2.1": dict(cuda=["cu118", "cu121"], rocm=["rocm5.5", "rocm5.6"], src="bc64926943ad"),
    "2.2": dict(cuda=["cu118", "cu121"], rocm=["rocm5.6", "rocm5.7"], src="8e04a8e90bb2"),
    "2.3": dict(cuda=["cu118", "cu121"], rocm=["rocm5.7", "rocm6.0"], src="585bbc3772a5"),
    "2.4": dict(
        cuda=["cu118", "cu121", "cu124"],
        rocm=["rocm6.0", "rocm6.1"],
        aarch64=(["cu124"], "I", f"{WM} §2 (builder release/2.4 cuda-aarch64, sm_90 only)"),
        src="ac9a718ca850",
    ),
    "2.5": dict(
        cuda=["cu118", "cu121", "cu124"],
        rocm=["rocm6.1", "rocm6.2"],
        aarch64=(["cu124"], "I", f"{WM} §2 (builder release/2.5 cuda-aarch64, sm_90 only)"),
        xpu=("I", f"{WM} §1/§6 (xpu image in {TI} @1969a06c)"),
        src="1969a06c8b09",
    ),
    "2.6": dict(
        cuda=["cu118", "cu124", "cu126"],
        rocm=["rocm6.1", "rocm6.2.4"],
        aarch64=(["cu126"], "I", f"{WM} §2"),
        xpu=_XPU,
        src="b1bdc3323fa1",
    ),
    "2.7": dict(
        cuda=["cu118", "cu126", "cu128"],
        rocm=["rocm6.2.4", "rocm6.3"],
        aarch64=(["cu128"], "V", f"{TI} @bad60f65 CUDA_AARCH64_ARCHES"),
        xpu=_XPU,
        src="bad60f65d402",
    ),
    "2.8": dict(
        cuda=["cu126", "cu128", "cu129"],
        rocm=["rocm6.3", "rocm6.4"],
        aarch64=(["cu129"], "V", f"{TI} @21480431 CUDA_AARCH64_ARCHES"),
        xpu=_XPU,
        src="21480431af19",
    ),
    "2.9": dict(
        cuda=["cu126", "cu128", "cu130"],
        rocm=["rocm6.3", "rocm6.4"],
        aarch64=(["cu126", "cu128", "cu130"], "V", f"{TI} release/2.9 @f3ee5ce0"),
        linux_only=["cu129"],
        xpu=_XPU,
        src="f3ee5ce04696",
    ),
    "2.10": dict(
        cuda=["cu126", "cu128", "cu130"],
        rocm=["rocm7.0", "rocm7.1"],
        aarch64=(["cu126", "cu128", "cu130"], "V", f"{TI} @e8208cf2"),
        linux_only=["cu129"],
        xpu=_XPU,
        src="e8208cf27137",
    ),
    "2.11": dict(
        cuda=["cu126", "cu128", "cu130"],
        rocm=["rocm7.1", "rocm7.2"],
        aarch64=(["cu126", "cu128", "cu130"], "V", f"{TI} @0cd5e78a"),
        linux_only=["cu129"],
        xpu=_XPU,
        src="0cd5e78a1246",
    ),
    "2.12": dict(
        cuda=["cu126", "cu130", "cu132"],
        rocm=["rocm7.1", "rocm7.2"],
        aarch64=(["cu126", "cu130", "cu132"], "V", f"{TI} @626d4e70"),
        linux_only=["cu129"],
        xpu=_XPU,
        src="626d4e708156",
    ),
    "2.13": dict(
        cuda=["cu126", "cu130", "cu132"],
        rocm=["rocm7.1", "rocm7.2"],
        aarch64=(["cu126", "cu130", "cu132"], "V", f"{TI} @6d36e31f"),
        # VERIFIED §5: 2.13.0+cu129 widely used; "cu129 stops at 2.13.0".
        linux_only=["cu129"],
        xpu=("V", "pytorch.github.io additional_platforms/xpu.md @e2d50e1d (2.13.0+xpu)"),
        src="6d36e31f45e8",
    ),
    "2.14": dict(
        cuda=["cu126", "cu130", "cu132"],
        rocm=["rocm7.2", "rocm7.14"],
        aarch64=(["cu126", "cu130", "cu132"], "V", f"{TI} release/2.14 @c840391a"),
        xpu=_XPU,
        src="c840391a15b9",
    ),
}

# 2.15: VERIFIED.md §5. The index could not be read; a plan uses only what the rule admits (the
# cpu rows are inferred: every release before has them, and §5 says one surely exists).
# (variant, platform, confidence, source)
INDEX_2_15: list[tuple[str, str, str, str]] = [
    ("cpu", "linux_x86_64", "I", f"{VER} §5: 'a cpu variant surely exists'"),
    ("cpu", "linux_aarch64", "I", f"{VER} §5: 'a cpu variant surely exists'"),
    ("cpu", "windows_x86_64", "I", f"{VER} §5: 'a cpu variant surely exists'"),
    ("cu130", "windows_x86_64", "V2", f"{VER} §5: 2.15.0+cu130 in use on Windows"),
    ("cu130", "linux_x86_64", "?", "RFC pytorch/pytorch#190385 (keep cu130); unverified"),
    ("cu130", "linux_aarch64", "?", "RFC pytorch/pytorch#190385 (keep cu130); unverified"),
    ("cu132", "linux_x86_64", "?", "RFC #190385 (cu132 default); index unverified"),
    ("cu132", "linux_aarch64", "?", "RFC #190385 (cu132 default); index unverified"),
    ("cu132", "windows_x86_64", "?", "RFC #190385 (cu132 default); index unverified"),
    ("rocm7.2", "linux_x86_64", "?", f"{WM} §1 (nightly only); unverified"),
    ("rocm7.14", "linux_x86_64", "?", f"{WM} §1 (nightly only); unverified"),
    ("xpu", "linux_x86_64", "?", "unverified"),
    ("xpu", "windows_x86_64", "?", "unverified"),
]
# cu126 is deliberately absent for 2.15: RFC #190385 drops it and VERIFIED §5 found no real use.

# Which variant plain `pip install torch` gets from PyPI, per series and platform.
PYPI_VARIANT: dict[str, dict[str, tuple[str, str, str]]] = {}
_LINUX_DEFAULT = {
    "1.13": "cu117", "2.0": "cu117", "2.1": "cu121", "2.2": "cu121", "2.3": "cu121",
    "2.4": "cu121", "2.5": "cu124", "2.6": "cu124", "2.7": "cu126", "2.8": "cu128",
    "2.9": "cu128", "2.10": "cu128", "2.11": "cu130", "2.12": "cu130", "2.13": "cu130",
}  # fmt: skip
for _s, _v in _LINUX_DEFAULT.items():
    _src = f"{TI} STABLE_CUDA_VERSIONS / PyPI rule @{SERIES[_s]['src']}"
    _aarch = (
        ("cu130", "V", f"{TI} @8964775a ('aarch64 CUDA 13.0 binaries to pypi')")
        if Version(_s) >= Version("2.11")
        else ("cpu", "I", f"{WM} §1 (CUDA on aarch64 only via the index)")
    )
    PYPI_VARIANT[_s] = {
        "linux_x86_64": (_v, "V", _src),
        "linux_aarch64": _aarch,
    }
PYPI_VARIANT["2.9"]["linux_x86_64"] = ("cu128", "V", f"{VER} §2 (2.9.1 Linux x86_64 is +cu128)")
PYPI_VARIANT["2.14"] = {
    "linux_x86_64": ("cu130", "V", f"{VER} §2 (2.14.1 torch/version.py cuda='13.0')"),
    "linux_aarch64": ("cu130", "V", f"{VER} §2 (2.14.1 Linux aarch64 is +cu130)"),
}
PYPI_VARIANT["2.15"] = {
    "linux_x86_64": ("cu132", "V", f"{VER} §2 (2.15.0 torch/version.py cuda='13.2')"),
    "linux_aarch64": ("cu132", "V", f"{VER} §2 (2.15.0 Linux aarch64 is +cu132)"),
    "windows_x86_64": ("cpu", "V", f"{VER} §2 (the Windows wheel is 2.15.0+cpu)"),
}

# --- CUDA builds: toolkit used and architectures compiled in ------------------------------------
# (variant, series list, platforms, toolkit, SASS list, PTX list, confidence, source)
X86 = ("linux_x86_64", "windows_x86_64")
ARM = ("linux_aarch64",)


def _series(first: str, last: str) -> list[str]:
    keys = [*SERIES, "2.15"]
    return keys[keys.index(first) : keys.index(last) + 1]


_NO_PTX = (
    "build script says 12.0+PTX, but no PTX entry was seen in the measured wheels of this build "
    f"recipe ({VER} §3), so PTX is not counted on"
)
BUILDS: list[dict[str, Any]] = []


def build(
    variant: str,
    series: list[str],
    platforms: tuple[str, ...],
    toolkit: str,
    sass: str,
    ptx: str,
    confidence: str,
    source: str,
    note: str = "",
    measured: str = "",
) -> None:
    BUILDS.append(
        {
            "variant": variant,
            "series": series,
            "platforms": list(platforms),
            "toolkit": toolkit,
            "sass": [a for a in sass.split(";") if a],
            "ptx": [a for a in ptx.split(";") if a],
            "confidence": confidence,
            "source": source,
            **({"note": note} if note else {}),
            **({"measured": measured} if measured else {}),
        }
    )


_B = "pytorch/builder manywheel/build_cuda.sh"
_P = "pytorch/pytorch .ci/manywheel/build_cuda.sh @799d09f2"
_K37 = "3.7;5.0;6.0;7.0;7.5;8.0;8.6"
build("cu116", ["1.13"], X86, "11.6.2", _K37, "", "V", f"{_B} release/1.13 @d08f2264")
build("cu117", ["1.13", "2.0"], X86, "11.7.0", _K37, "", "V", f"{_B} release/2.0 @9f0fad92")
build("cu118", _series("2.0", "2.5"), X86, "11.8.0", _K37 + ";9.0", "", "V", f"{_B} release/2.5")
build("cu118", _series("2.6", "2.7"), X86, "11.8.0", _K37 + ";9.0", "", "I", f"{WM} §3a")
_M = "5.0;6.0;7.0;7.5;8.0;8.6;9.0"
build("cu121", _series("2.1", "2.5"), X86, "12.1.1", _M, "", "V", f"{_B} release/2.1..2.5")
build("cu124", ["2.4"], X86, "12.4.0", _M, "", "V", f"{_B} release/2.4 @4ce1afeb")
build("cu124", ["2.5"], X86, "12.4.1", _M, "", "V", f"{_B} release/2.5 (toolkit patch ?)")
build("cu124", ["2.6"], X86, "12.4.1", _M, "", "I", f"{WM} §3a")
build("cu124", ["2.4", "2.5"], ARM, "12.4.1", "9.0", "", "V", f"{_B} release/2.4, 2.5 cuda-aarch64")
build("cu126", ["2.6"], X86, "12.6.2", _M, "", "I", f"{WM} §3a")
build("cu126", _series("2.7", "2.14"), X86, "12.6.3", _M, "", "V", f"{_P}; RELEASE.md matrix")
_AARCH = "pytorch/pytorch .ci/aarch64_linux/aarch64_ci_build.sh"
# Data review 2026-12 row 4: the 2.6 SBSA build's list is 12.6 -> "9.0" (the long list lived
# briefly on 2.9 nightlies): no aarch64 CUDA wheel of 2.6/2.7 runs sm_7x (AWS g5g's T4G).
build("cu126", ["2.6"], ARM, "12.6.2", "9.0", "", "V", f"{_AARCH} (12.6 -> 9.0); #140844, #146378")
build("cu126", _series("2.9", "2.14"), ARM, "12.6.3", "8.0;9.0", "", "V", "pytorch/pytorch#163764")
_BW = "7.5;8.0;8.6;9.0;10.0;12.0"
build("cu128", ["2.7"], X86, "12.8.0", _BW, "", "I", f"{WM} §3a (PRs #146265, #147607)")
build("cu128", ["2.8"], X86, "12.8.1", "7.0;" + _BW, "", "V", f"{WM} §3a (toolkit patch ?)")
build(
    "cu128", ["2.9", "2.10"], X86, "12.8.1", "7.0;" + _BW, "", "V", "PR #164471; #182250",
    measured=f"{VER} §3: 2.9.1+cu128 Linux x86_64 SASS sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
)  # fmt: skip
build("cu128", ["2.11"], X86, "12.8.1", _BW, "", "V", "PR #175253; #182250 (no compute_ entry)")
_ARM12 = "8.0;9.0;10.0;12.0"
# Review row 3: sm_80 reached the SBSA builds in July 2025 (2.8 on); 2.7's list is 9.0;10.0;12.0.
build(
    "cu128", ["2.7"], ARM, "12.8.1", "9.0;10.0;12.0", "", "V", f"{_AARCH} (12.8); #146378, #157843"
)
build("cu128", ["2.9", "2.10", "2.11"], ARM, "12.8.1", _ARM12, "", "V", f"{WM} §3a")
build("cu129", ["2.8"], X86, "12.9.1", "7.0;" + _BW, "", "V", _P, note=_NO_PTX)
build(
    "cu129", _series("2.9", "2.10"), ("linux_x86_64",), "12.9.1", "7.0;" + _BW, "", "V", _P,
    note=_NO_PTX,
)  # fmt: skip
# Review row 5: Volta left the 12.8 and 12.9 builds before 2.11 (pytorch/pytorch#172598,
# 2026-01-15; RELEASE.md diff in #175253).
build(
    "cu129", _series("2.11", "2.13"), ("linux_x86_64",), "12.9.1", _BW, "", "V",
    f"{_P}; #172598 (Volta excluded), #175253", note=_NO_PTX,
)  # fmt: skip
build("cu129", _series("2.8", "2.13"), ARM, "12.9.1", _ARM12, "", "I", _P, note=_NO_PTX)
build("cu130", ["2.9", "2.10"], X86, "13.0.0", _BW, "", "V", _P, note=_NO_PTX)
build("cu130", _series("2.11", "2.13"), X86, "13.0.2", _BW, "", "V", _P, note=_NO_PTX)
build(
    "cu130", ["2.14"], X86, "13.0.2", _BW, "", "V", _P,
    measured=f"{VER} §3: 2.14.1+cu130 Linux x86_64 SASS sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
)  # fmt: skip
build("cu130", ["2.15"], ("windows_x86_64",), "13.0.2", _BW, "", "I", f"{WM} §3a cu130 list")
_ARMBW = "8.0;9.0;10.0;11.0;12.0"
build("cu130", ["2.9", "2.10"], ARM, "13.0.0", _ARMBW, "", "V", _P, note=_NO_PTX)
build("cu130", _series("2.11", "2.13"), ARM, "13.0.2", _ARMBW, "", "V", _P, note=_NO_PTX)
build(
    "cu130", ["2.14"], ARM, "13.0.2", _ARMBW, "", "V", _P,
    measured=f"{VER} §3: 2.14.1+cu130 Linux aarch64 SASS sm_80 sm_90 sm_100 sm_110 sm_120",
)  # fmt: skip
_R12 = "PR #182849 (RELEASE.md)"
build("cu132", _series("2.12", "2.14"), X86, "13.2.1", _BW, "", "V", _R12, note=_NO_PTX)
build("cu132", _series("2.12", "2.14"), ARM, "13.2.1", _ARMBW, "", "V", _R12, note=_NO_PTX)
build(
    "cu132", ["2.15"], ("linux_x86_64",), "13.2.2", _BW, "", "V",
    f"{VER} §2 (METADATA cuda-toolkit==13.2.2)",
    measured=f"{VER} §3: 2.15.0+cu132 Linux x86_64 SASS sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
)  # fmt: skip
build(
    "cu132", ["2.15"], ARM, "13.2.2", _ARMBW, "", "V", f"{VER} §2",
    measured=f"{VER} §3: 2.15.0+cu132 Linux aarch64 SASS sm_80 sm_90 sm_100 sm_110 sm_120",
)  # fmt: skip

# --- companions --------------------------------------------------------------------------------
# Exact pairs where a source names them; otherwise torchvision 0.(minor+15).* (pip picks the patch
# whose own `torch==` pin matches) when PyPI has that series. (version or None, confidence, source)
_PV = "pytorch.github.io _get_started/previous-versions.md @e3f009bb"
_RM = "test-infra tools/scripts/generate_release_matrix.py RELEASE_DICT"
TORCHVISION_EXACT: dict[str, tuple[str, str, str]] = {
    "1.13.0": ("0.14.0", "V", _PV), "1.13.1": ("0.14.1", "V", _PV),
    "2.0.0": ("0.15.1", "V", _PV), "2.0.1": ("0.15.2", "V", _PV),
    "2.1.0": ("0.16.0", "V", _RM), "2.1.1": ("0.16.1", "V", _RM), "2.1.2": ("0.16.2", "V", _RM),
    "2.2.0": ("0.17.0", "V", _RM), "2.2.1": ("0.17.1", "V", _RM), "2.2.2": ("0.17.2", "V", _RM),
    "2.3.0": ("0.18.0", "V", _RM), "2.3.1": ("0.18.1", "V", _RM),
    "2.4.0": ("0.19.0", "V", _RM), "2.4.1": ("0.19.1", "V", _RM),
    "2.5.0": ("0.20.0", "V", _RM), "2.5.1": ("0.20.1", "V", _RM),
    "2.6.0": ("0.21.0", "V", "test-infra validate_pypi_staging.py @edb2650d"),
    "2.7.0": ("0.22.0", "V", "test-infra release/release_versions.sh @d0e960f2e"),
    "2.8.0": ("0.23.0", "I", f"{WM} §1"),
    "2.9.0": ("0.24.0", "V", "test-infra release/release_versions.sh @264eed5d7"),
    "2.10.0": ("0.25.0", "V", "test-infra validate_pypi_staging.py @872fcb19"),
    "2.11.0": ("0.26.0", "V", "test-infra release/release_versions.sh @0cd5e78a"),
    "2.12.1": ("0.27.1", "V", "test-infra release/release_versions.sh @50358ee12"),
    "2.13.0": ("0.28.0", "V2", f"{VER} §5 (torchvision 0.28.0 used with 2.13.0)"),
    "2.14.0": ("0.29.0", "V2", "ORNL/HydraGNN PR #546"),
}  # fmt: skip
# torchaudio: the torch version through 2.11; 2.12 reuses 2.11.0 (repackaged); 2.13 is used with
# 2.11.0 (VERIFIED §5); later: unknown.
TORCHAUDIO_EXACT: dict[str, tuple[str, str, str]] = {
    "1.13.0": ("0.13.0", "V", _PV), "1.13.1": ("0.13.1", "V", _PV),
    "2.0.0": ("2.0.1", "V", _PV), "2.0.1": ("2.0.2", "V", _PV),
    "2.12.0": ("2.11.0", "V", "test-infra release/repackage_torchaudio_cu130_to_cu132.py"),
    "2.12.1": ("2.11.0", "V", "test-infra release/release_versions.sh @50358ee12"),
    "2.13.0": ("2.11.0", "V2", f"{VER} §5 (torchaudio 2.11.0 used with 2.13.0)"),
}  # fmt: skip

TRAPS = [
    {
        "release": "2.6.0",
        "platform_tag": "manylinux1_x86_64",
        "min_glibc": "2.28",
        "note": "tagged manylinux1 (glibc 2.5) but built on manylinux_2_28: on an older glibc "
        "pip installs it and `import torch` fails with 'GLIBC_2.28 not found'",
        "confidence": "I",
        "source": f"{VER} §1; {WM} §2, §9.3; pytorch/pytorch#123649, #126551",
    }
]

# Linux glibc floor of every build (index wheels are tagged linux_x86_64 and say nothing).
GLIBC = [("1.13", "2.5", "2.17", "V", f"{WM} §2 (CentOS 7 / manylinux2014 builds)"),
         ("2.6", "2.15", "2.28", "V", f"{WM} §2 (manylinux_2_28 builds from 2.6)")]  # fmt: skip

NIGHTLY = {
    "variants": {
        "linux_x86_64": ["cpu", "cu126", "cu130", "cu132", "cu134", "rocm7.2", "rocm7.14", "xpu"],
        "linux_aarch64": ["cpu", "cu126", "cu130", "cu132", "cu134"],
        "windows_x86_64": ["cpu", "cu126", "cu130", "cu132", "xpu"],
        "macos_arm64": ["cpu"],
    },
    "confidence": "?",
    "source": f"{TI} HEAD @61a77570 (2026-08-21) nightly lists; contents change daily",
}

# Platforms no release row lists. Windows on Arm64: CPU wheels exist for some Pythons (data review
# 2026-12b row 5): pytorch/pytorch#161516 (the missing win_arm64 wheels, closed 'No longer required
# now'), #195033 (open, 2026-08-27: only Python 3.14 still missing); the release branches of
# test-infra validate windows-arm64 for Python 3.11-3.13 (generate_binary_build_matrix.py
# `if os == WINDOWS_ARM64: python_versions = ["3.11", "3.12", "3.13"]`) from the cpu index, and
# build_wheels_windows.yml names "torch's own win_arm64 wheels" (+cpu). None is on PyPI (the
# capture). Which releases carry them was not read: unsure (?), so never planned on.
PLATFORM_NOTES: dict[str, dict[str, Any]] = {
    "windows_arm64": {
        "wheels": "cpu",
        "python": ["3.11", "3.12", "3.13"],
        "index_variant": "cpu",
        "confidence": "?",
        "source": "pytorch/pytorch#161516, #195033; "
        f"{TI} release/2.8..2.14 (windows-arm64: Python 3.11-3.13); "
        "pytorch/test-infra .github/workflows/build_wheels_windows.yml @61a77570",
        "note": "CPU wheels on PyTorch's cpu index for Python 3.11-3.13 (none for 3.14, none on "
        "PyPI); which torch releases carry them is not recorded",
    }
}

# --- reading the captures -----------------------------------------------------------------------


def read_pypi(path: Path, project: str) -> dict[str, dict[str, Any]]:
    """release -> {files: {platform tag: [python-abi]}, requires_python, uploaded}."""
    doc = json.loads(path.read_text())
    out: dict[str, dict[str, Any]] = {}
    for f in doc["files"]:
        name = f["filename"]
        if not name.endswith(".whl") or f.get("yanked"):
            continue
        _n, version, _build, tags = parse_wheel_filename(name)
        if version.is_prerelease or version.is_devrelease or version.local:
            continue
        rel = str(version)
        row = out.setdefault(rel, {"files": defaultdict(set), "requires_python": set(), "up": []})
        for t in tags:
            row["files"][t.platform].add(f"{t.interpreter}-{t.abi}")
        if f.get("requires-python"):
            row["requires_python"].add(f["requires-python"].strip())
        if f.get("upload-time"):
            row["up"].append(f["upload-time"][:10])
    return out


def _interp_key(pa: str) -> tuple[int, int, str]:
    py, abi = pa.split("-")
    m = re.match(r"cp(\d)(\d+)", py)
    return (int(m.group(1)), int(m.group(2)), abi) if m else (0, 0, pa)


# Curated corrections of the draft's driver table (data review 2026-12 row 1): NVIDIA's release
# notes table 2 prints ">=525.60.13 / >=528.33" for CUDA 12.x; 527.41 is the 12.0 GA toolkit row.
# Source: https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/index.html (table 2), also
# https://docs.nvidia.com/deploy/cuda-compatibility/ (minor version compatibility).
MVC_WINDOWS_CORRECTED: dict[str, str] = {"12.x": "528.33"}


# The toolkits before 11.6, which today's release notes no longer print: torch 1.x's cu80 ... cu115
# builds, still found in pasted reports (diagnose) and old images (doctor). NVIDIA Table 3, rows
# transcribed from tests/fixtures/reference/nvidia-toolkit-drivers-before-11.6.md (a verbatim public
# copy, its source named there). (toolkit release, Linux minimum, Windows minimum).
OLD_TOOLKIT_DRIVERS: tuple[tuple[str, str, str], ...] = (
    ("8.0.44", "367.48", "369.30"),
    ("8.0.61", "375.26", "376.51"),
    ("9.0.76", "384.81", "385.54"),
    ("9.1.85", "390.46", "391.29"),
    ("9.2.88", "396.26", "397.44"),
    ("9.2.148", "396.37", "398.26"),
    ("10.0.130", "410.48", "411.31"),
    ("10.1.105", "418.39", "418.96"),
    ("10.2.89", "440.33", "441.22"),
    ("11.0.1", "450.36.06", "451.22"),
    ("11.0.2", "450.51.05", "451.48"),
    ("11.0.3", "450.51.06", "451.82"),
    ("11.1.0", "455.23", "456.38"),
    ("11.1.1", "455.32", "456.81"),
    ("11.2.0", "460.27.03", "460.82"),
    ("11.2.1", "460.32.03", "461.09"),
    ("11.2.2", "460.32.03", "461.33"),
    ("11.3.0", "465.19.01", "465.89"),
    ("11.3.1", "465.19.01", "465.89"),
    ("11.4.0", "470.42.01", "471.11"),
    ("11.4.1", "470.57.02", "471.41"),
    ("11.4.2", "470.57.02", "471.41"),
    ("11.4.3", "470.82.01", "472.50"),
    ("11.4.4", "470.82.01", "472.50"),
    ("11.5.0", "495.29.05", "496.04"),
    ("11.5.1", "495.29.05", "496.13"),
    ("11.5.2", "495.29.05", "496.13"),
)
OLD_TOOLKIT_SOURCE = (
    "NVIDIA CUDA Toolkit release notes, Table 3 (rows before 11.6, from a verbatim public copy: "
    "tests/fixtures/reference/nvidia-toolkit-drivers-before-11.6.md)"
)


def old_driver_rows(ref: dict[str, Any]) -> dict[str, Any]:
    """Rows for CUDA 8.0 ... 11.5. Minor-version compatibility starts at 11.1 (11.x floor from the
    draft's table 2); before it each toolkit needs its own driver, so its ``mvc`` is that X.Y's
    own strictest minimum (the deciders never apply MVC below 11.1: knowledge.cuda.MVC_SINCE)."""
    mvc11 = ref["nvidia_driver_table"]["minor_version_compatibility"]["11.x"]
    cuda: dict[str, Any] = {}
    for full, linux, windows in OLD_TOOLKIT_DRIVERS:
        xy = minor_of(full)
        entry = cuda.setdefault(xy, {"updates": {}})
        entry["updates"][full] = {"linux": linux, "windows": windows, "windows_confidence": "V2"}
        if Version(xy) >= Version("11.1"):
            entry["mvc"] = {
                "linux": mvc11["linux_min"],
                "windows": mvc11["windows_min"].split(" ")[0],
                "windows_confidence": "V2",
            }
        else:
            entry["mvc"] = {"linux": linux, "windows": windows, "windows_confidence": "V2"}
        entry["confidence"] = "V2"
        entry["source"] = OLD_TOOLKIT_SOURCE
    return cuda


def driver_table(ref: dict[str, Any]) -> dict[str, Any]:
    table = ref["nvidia_driver_table"]
    cuda: dict[str, Any] = {}
    for name, linux, windows in table["toolkit_driver"]:
        m = re.match(r"(\d+)\.(\d+) (GA|Update (\d+))$", name)
        if not m:
            raise SystemExit(f"unreadable toolkit row {name!r}")
        xy = f"{m.group(1)}.{m.group(2)}"
        full = f"{xy}.{m.group(4) or 0}"
        entry = cuda.setdefault(xy, {"updates": {}})
        major = int(m.group(1))
        if windows is None:
            # NVIDIA's table prints N/A for Windows from 13.x (the driver is no longer bundled);
            # fall back to the Linux branch number (wheel_matrix.md §3c caveat, confidence ?).
            windows = linux.split(".")[0]
            wconf = "?"
        else:
            wconf = table["confidence"]
        entry["updates"][full] = {
            "linux": linux,
            "windows": windows,
            "windows_confidence": wconf,
        }
        mvc = table["minor_version_compatibility"][f"{major}.x"]
        win_mvc = (mvc.get("windows_min") or mvc["linux_min"]).split(" ")[0]
        win_mvc = MVC_WINDOWS_CORRECTED.get(f"{major}.x", win_mvc)
        entry["mvc"] = {
            "linux": mvc["linux_min"],
            "windows": win_mvc,
            "windows_confidence": table["confidence"] if mvc.get("windows_min") else "?",
        }
        entry["confidence"] = table["confidence"]
        entry["source"] = table["source"]
    return {k: cuda[k] for k in sorted(cuda, key=Version)}


def check_against_draft(ref: dict[str, Any]) -> None:
    """The curated lists must agree with wheel_matrix.json's (drift fails the build)."""
    for s, row in SERIES.items():
        draft = ref["releases"][s]
        if draft["cuda"] != row["cuda"]:
            raise SystemExit(f"{s}: CUDA list {row['cuda']} != wheel_matrix.json {draft['cuda']}")
        if draft["rocm"] != row["rocm"]:
            raise SystemExit(f"{s}: ROCm list {row['rocm']} != wheel_matrix.json {draft['rocm']}")


def generate(reference: Path) -> dict[str, Any]:
    torch_caps = reference / "captures" / "pypi-simple-torch.json"
    vision_caps = reference / "captures" / "pypi-simple-torchvision.json"
    ref = json.loads((reference / "wheel_matrix.json").read_text())
    check_against_draft(ref)
    torch = read_pypi(torch_caps, "torch")
    vision = read_pypi(vision_caps, "torchvision")
    cap_src = "captures/pypi-simple-torch.json (PyPI PEP 691, 2026-12-02)"

    releases: dict[str, Any] = {}
    for rel in sorted(torch, key=Version):
        v = Version(rel)
        if not FIRST <= v <= LAST:
            continue
        row = torch[rel]
        series = minor_of(rel)
        files = {k: sorted(row["files"][k], key=_interp_key) for k in sorted(row["files"])}
        rp = sorted(row["requires_python"])
        # PyPI default variant per platform
        pv: dict[str, Any] = {}
        for plat in PLATFORMS:
            if not any(platform_of_tag(t) == plat for t in files):
                continue
            got = PYPI_VARIANT.get(series, {}).get(plat)
            if got is None:
                got = ("cpu", "V", f"{WM} §4 (PyPI wheels for Windows and macOS are CPU builds)")
            pv[plat] = {"variant": got[0], "confidence": got[1], "source": got[2]}
        # the index
        index: dict[str, dict[str, Any]] = defaultdict(dict)
        if series == "2.15":
            for variant, plat, conf, src in INDEX_2_15:
                index[variant][plat] = {
                    "verified": plannable(conf), "confidence": conf, "source": src,
                }  # fmt: skip
        else:
            s = SERIES[series]
            src = f"{TI} @{s['src']}"
            for plat in ("linux_x86_64", "windows_x86_64"):
                index["cpu"][plat] = {"verified": True, "confidence": "V", "source": src}
            index["cpu"]["linux_aarch64"] = {
                "verified": True,
                "confidence": "V",
                "source": src + " (aarch64 CPU builds)",
            }
            for variant in s["cuda"]:
                for plat in X86:
                    index[variant][plat] = {"verified": True, "confidence": "V", "source": src}
            if "aarch64" in s:
                variants, conf, asrc = s["aarch64"]
                for variant in variants:
                    index[variant]["linux_aarch64"] = {
                        "verified": plannable(conf),
                        "confidence": conf,
                        "source": asrc,
                    }
            for variant in s.get("linux_only", []):
                for plat, (conf, lsrc) in CU129[rel].items():
                    index[variant][plat] = {
                        "verified": plannable(conf), "confidence": conf, "source": lsrc,
                    }  # fmt: skip
            for variant in s["rocm"]:
                index[variant]["linux_x86_64"] = {
                    "verified": True,
                    "confidence": "V",
                    "source": src,
                }
            if "xpu" in s:
                conf, xsrc = s["xpu"]
                for plat in X86:
                    index["xpu"][plat] = {
                        "verified": plannable(conf),
                        "confidence": conf,
                        "source": xsrc,
                    }
        # companions
        comp: dict[str, Any] = {}
        vminor = f"0.{int(series.split('.')[1]) + 15}" if series.startswith("2.") else "0.14"
        if rel in TORCHVISION_EXACT:
            ver, conf, src = TORCHVISION_EXACT[rel]
            spec = f"=={ver}"
        else:
            have = sorted((x for x in vision if minor_of(x) == vminor), key=Version)
            ver, conf, src = None, "I", f"{WM} §1 pattern (torchvision minor = torch minor + 15)"
            spec = f"=={vminor}.*" if have else None
            if not have:
                conf = "V"
                src = f"captures/pypi-simple-torchvision.json: no torchvision {vminor}.x on PyPI"
        if ver is not None and ver not in vision:
            raise SystemExit(f"torchvision {ver} (for torch {rel}) is not in the PyPI capture")
        comp["torchvision"] = {"version": ver, "spec": spec, "confidence": conf, "source": src}
        if rel in TORCHAUDIO_EXACT:
            ver, conf, src = TORCHAUDIO_EXACT[rel]
            comp["torchaudio"] = {"version": ver, "spec": f"=={ver}", "confidence": conf,
                                  "source": src}  # fmt: skip
        elif Version("2.1") <= v < Version("2.12"):
            comp["torchaudio"] = {
                "version": rel,
                "spec": f"=={rel}",
                "confidence": "V",
                "source": f"{WM} §1 (torchaudio follows torch through 2.11)",
            }
        else:
            comp["torchaudio"] = {
                "version": None, "spec": None, "confidence": "?",
                "source": f"{WM} §9.7: the torchaudio for torch {series} is not recorded",
            }  # fmt: skip
        # platform minimums
        pmin: dict[str, Any] = {}
        for first, last, glibc, conf, src in GLIBC:
            if Version(first) <= Version(series) <= Version(last):
                for plat in ("linux_x86_64", "linux_aarch64"):
                    pmin[plat] = {"glibc": glibc, "confidence": conf, "source": src}
        # the lowest macOS any arm64 file of this release installs on
        pmin.update(live.platform_min_from_tags(files, ["macos_arm64"], cap_src))
        releases[rel] = {
            "uploaded": min(row["up"]),
            "requires_python": rp[0] if len(rp) == 1 else ", ".join(rp),
            "python": live.python_versions(row["files"]),
            "pypi_files": files,
            "pypi_variant": pv,
            "index": {k: dict(sorted(index[k].items())) for k in sorted(index)},
            "companions": comp,
            "platform_min": pmin,
            "traps": [t for t in TRAPS if t["release"] == rel],
            "confidence": "V",
            "source": cap_src,
        }

    builds = []
    series_releases: dict[str, list[str]] = defaultdict(list)
    for rel in releases:
        series_releases[minor_of(rel)].append(rel)
    for b in BUILDS:
        rels = [r for s in b["series"] for r in series_releases[s]]
        row = {k: v for k, v in b.items() if k != "series"}
        builds.append({"releases": rels, **row})
    for b in builds:  # every build's variant must be on the index for those releases
        for rel in b["releases"]:
            for plat in b["platforms"]:
                if plat not in releases[rel]["index"].get(b["variant"], {}):
                    raise SystemExit(f"build {b['variant']} {rel} {plat} is not on the index")

    vision_files = {
        rel: {k: sorted(v, key=_interp_key) for k, v in sorted(vision[rel]["files"].items())}
        for rel in sorted(vision, key=Version)
        if Version(rel) >= Version("0.14")
    }
    return {
        "schema_version": SCHEMA_VERSION,
        "source": "PyPI simple API captures + pytorch/test-infra, pytorch/builder, "
        "pytorch/pytorch, NVIDIA CUDA release notes (see each row); "
        "../shared/reference/VERIFIED.md overrides",
        "retrieved": RETRIEVED,
        "generated_by": "scripts/build_matrix.py",
        "platforms": PLATFORMS,
        "index_url": "https://download.pytorch.org/whl",
        "releases": releases,
        "builds": builds,
        "cuda": {**old_driver_rows(ref), **driver_table(ref)},
        "companion_files": {
            "torchvision": vision_files,
            "source": "captures/pypi-simple-torchvision.json (PyPI PEP 691, 2026-12-02)",
        },
        "nightly": NIGHTLY,
        "platform_notes": PLATFORM_NOTES,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed file differs")
    args = ap.parse_args(argv)
    if not (args.reference / "captures" / "pypi-simple-torch.json").is_file():
        print(f"build_matrix: no captures under {args.reference}", file=sys.stderr)
        return 2
    doc = generate(args.reference)
    if args.check:
        return write_or_check(args.out, refresh.dump(doc), "scripts/build_matrix.py", True)
    try:
        refresh.write_matrix(args.out, doc)  # validated, then one atomic replace
    except ValueError as exc:  # matrix.MatrixError: the generated document is invalid
        print(f"build_matrix: nothing written: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} ({len(refresh.dump(doc))} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
