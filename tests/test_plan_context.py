"""What every branch of the planner shares (setup_env/decide/plan/context.py, issue 22): whether a
release's wheels install here and, where not, why (the glibc floor and its traps, the macOS floor
of the wheels this interpreter takes); the plan of none, whole; what the options are checked
against.

Matrices: the frozen subset (tests/fixtures/matrix/wheels-subset.json, see its SOURCE) and the
bundled one where a rule needs a release the subset lacks (torch 2.10.0; the Windows on Arm64
note); where a rule needs data neither has, one value is changed with dataclasses.replace and the
test says so. A glibc is named on every Linux machine so that the glibc-unknown warning stays out
of the way.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from setup_env.decide.model import Fix, Plan, PlanError, PlanOptions
from setup_env.decide.plan import check_index_url, check_options, make_plan, spec_facts
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.tags import platform_of_tag
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

FIXTURES = Path(__file__).resolve().parent / "fixtures"
M = mx.load_matrix(FIXTURES / "matrix" / "wheels-subset.json")
BUNDLED = mx.load_matrix(mx.BUNDLED_PATH)


def plan(facts: Facts, matrix: mx.Matrix = M, **options: Any) -> Plan:
    return make_plan(facts, PlanOptions(**options), matrix)


def reasons(p: Plan) -> list[tuple[str, str]]:
    return list(zip(p.reason_codes, p.reasons))


def fixes(p: Plan) -> list[tuple[str, str]]:
    return [(f.kind, f.summary) for f in p.fixes]


def release(version: str) -> mx.Release:
    rel = M.release(version)
    assert rel is not None
    return rel


def with_release(matrix: mx.Matrix, version: str, **changes: Any) -> mx.Matrix:
    """``matrix`` with one release's fields changed (its lookup by version too)."""
    releases = tuple(
        dataclasses.replace(r, **changes) if str(r.version) == version else r
        for r in matrix.releases
    )
    by_version = {str(r.version): r for r in releases}
    return dataclasses.replace(matrix, releases=releases, _by_version=by_version)


# --- the glibc floor and its traps


def test_the_manylinux1_trap_of_x86_64_is_not_said_on_aarch64() -> None:
    """torch 2.6.0's trap is its manylinux1_x86_64 tag (built on glibc 2.28): an x86_64 system
    on glibc 2.26 is told the tag hides the floor; an aarch64 one, whose 2.6.0 wheel is tagged
    manylinux_2_28, is told the floor alone."""
    x86 = plan(spec_facts(os="linux", python="3.12", glibc="2.26"), torch="2.6.0")
    assert reasons(x86) == [(
        "nothing-installable",
        "torch 2.6.0 needs glibc >= 2.28 (this system has 2.26); its manylinux1_x86_64 tag hides "
        "that: pip would install it and `import torch` would fail with 'GLIBC_2.28 not found'",
    )]  # fmt: skip
    arm = plan(spec_facts(os="linux", arch="aarch64", python="3.12", glibc="2.26"), torch="2.6.0")
    assert reasons(arm) == [
        ("nothing-installable", "torch 2.6.0 needs glibc >= 2.28 (this system has 2.26)")
    ]
    assert fixes(arm) == [
        ("pin-torch", "torch 2.5.1 is the newest release that installs for Python 3.12 on "
                      "linux_aarch64: --torch 2.5.1"),
        ("newer-os", "torch 2.6.0 needs glibc >= 2.28: move to a newer distribution (RHEL/Rocky "
                     "8+, Ubuntu 20.04+, Debian 11+) or run in a container built on one"),
    ]  # fmt: skip


def test_a_trap_whose_own_glibc_the_system_meets_is_not_said() -> None:
    """The trap names the glibc its wheel really needs; a system at or past it, yet below the
    release's floor, is told the floor. The subset's one trap needs the floor's own 2.28, so its
    glibc is lowered to 2.17 here (changed data)."""
    trap = dataclasses.replace(release("2.6.0").traps[0], min_glibc=Version("2.17"))
    m = with_release(M, "2.6.0", traps=(trap,))
    for glibc in ("2.17", "2.26"):
        p = plan(spec_facts(os="linux", python="3.12", glibc=glibc), m, torch="2.6.0")
        assert reasons(p) == [
            ("nothing-installable", f"torch 2.6.0 needs glibc >= 2.28 (this system has {glibc})")
        ]
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.16"), m, torch="2.6.0")
    assert p.reasons[0].startswith(
        "torch 2.6.0 needs glibc >= 2.17 (this system has 2.16); its manylinux1_x86_64 tag hides"
    )


# --- the vendor planned for


@pytest.mark.parametrize(
    ("gpus", "vendor", "variant"),
    [
        (["RTX 4090", "MI300X"], "NVIDIA", "cu132"),
        (["Arc A770", "RTX 4090"], "NVIDIA", "cu132"),
        (["MI300X", "Arc A770"], "AMD", "rocm7.14"),
    ],
)
def test_gpus_of_two_vendors_are_planned_for_the_first_and_the_choice_said(
    gpus: list[str], vendor: str, variant: str
) -> None:
    """One build serves one vendor: NVIDIA before AMD before Intel, whatever the order of the
    GPUs, with a warning that names the vendor planned for."""
    f = spec_facts(os="linux", python="3.12", glibc="2.35", gpus=gpus, driver="595.71.05")
    p = plan(f)
    assert str(p.variant) == variant
    assert (p.warning_codes[0], p.warnings[0]) == (
        "mixed-vendors",
        "this machine has GPUs of more than one vendor; one PyTorch build serves one vendor: "
        f"planning for the {vendor} GPUs",
    )
    alone = plan(spec_facts(os="linux", python="3.12", glibc="2.35", gpus=gpus[:1]))
    assert "mixed-vendors" not in alone.warning_codes


# --- the driver known by the CUDA it supports


def _h100(cuda: str | None) -> Facts:
    """An H100 whose driver version is unknown and whose driver supports CUDA ``cuda`` (13.1 is
    what the ubuntu-h100-590 capture's nvidia-smi says beside driver 590.48.01)."""
    f = spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["H100"])
    assert f.nvidia is not None
    return dataclasses.replace(f, nvidia=dataclasses.replace(f.nvidia, cuda_driver_version=cuda))


def test_a_driver_known_only_by_its_cuda_is_judged_by_that_cuda() -> None:
    """torch 2.15.0's cu132 (CUDA 13.2.2, driver 595.71.05, MVC from 580): a driver for CUDA
    13.2 runs it fully, one for 13.1 through minor-version compatibility, and each is named by
    its CUDA (no version to name); with neither known the driver is taken as absent."""
    full = plan(_h100("13.2"))
    assert (full.torch_version, str(full.variant), full.driver_compat) == (
        "2.15.0",
        "cu132",
        "full",
    )
    assert reasons(full)[1:] == [
        ("driver-full", "the NVIDIA driver for CUDA 13.2 supports CUDA 13.2 (needs >= 595.71.05)")
    ]
    mvc = plan(_h100("13.1"))
    assert (mvc.torch_version, str(mvc.variant), mvc.driver_compat) == ("2.15.0", "cu132", "mvc")
    assert list(zip(mvc.warning_codes, mvc.warnings)) == [(
        "driver-mvc",
        "driver for CUDA 13.1 is older than CUDA 13.2.2's own driver (595.71.05); the wheel runs "
        "through CUDA minor-version compatibility (>= 580): PyTorch's prebuilt kernels work, PTX "
        "JIT and the newest CUDA APIs do not",
    )]  # fmt: skip
    absent = plan(_h100(None))
    assert (absent.torch_version, absent.driver_compat) == ("2.15.0", "no-driver")
    assert absent.warning_codes == ("driver-absent",)


def test_a_cuda_build_asked_for_a_machine_without_nvidia_facts_is_planned_driverless() -> None:
    """--variant cu130 on a machine that names no NVIDIA GPU or driver (an image built for
    another machine): torch 2.14.1's cu130 (2.15.0 has none confirmed), its driver taken as
    absent."""
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.35"), variant="cu130")
    assert (p.status, p.torch_version, str(p.variant), p.driver_compat, p.min_driver) == (
        "ok",
        "2.14.1",
        "cu130",
        "no-driver",
        "580.95.05",
    )


def test_a_release_without_wheels_for_the_platform_says_so_whether_glibc_is_known_or_not() -> None:
    """torch 2.6.0 with its linux_aarch64 wheels taken out (changed data): an aarch64 system is
    told the release has none, with its glibc named (PyPI's wheels judged by their tags) and
    without (judged as the index's, by interpreter)."""
    rel = release("2.6.0")
    files = {t: v for t, v in rel.pypi_files.items() if platform_of_tag(t) != "linux_aarch64"}
    m = with_release(M, "2.6.0", pypi_files=files)
    for glibc in ("2.35", None):
        f = spec_facts(os="linux", arch="aarch64", python="3.12", glibc=glibc)
        p = plan(f, m, torch="2.6.0")
        assert reasons(p) == [("nothing-installable", "torch 2.6.0 has no linux_aarch64 wheels")]


# --- the macOS floor of the wheels this interpreter takes


def test_python_3_13_on_an_old_mac_is_told_the_floor_of_its_cp313_none_wheel() -> None:
    """torch 2.7.0's Python 3.13 wheel for Apple Silicon is tagged cp313-none-macosx_11_0: a
    Mac on 10.15 is told macOS 11.0 (and to upgrade it), not to change a Python the release
    has; the free-threaded 3.13t takes the same wheel, so the same floor."""
    for python in ("3.13", "3.13t"):
        p = plan(spec_facts(os="macos", python=python, macos="10.15"), torch="2.7.0")
        assert reasons(p) == [
            ("nothing-installable", f"torch 2.7.0 needs macOS 11.0 or newer for Python {python}")
        ]
        assert fixes(p) == [("upgrade-os", "upgrade macOS to 11.0 or later for torch 2.7.0")]


def test_the_floor_said_is_that_of_this_interpreters_own_wheels() -> None:
    """torch 2.10.0 (bundled matrix): Python 3.10-3.13 wheels from macOS 11.0, Python 3.14 and
    3.14t wheels from macOS 14.0; a Mac on 13.6 installs it for 3.13, and is told 14.0 for
    3.14 and 3.14t, and to upgrade macOS to that (not to the release's 11.0)."""
    for python in ("3.14", "3.14t"):
        p = plan(spec_facts(os="macos", python=python, macos="13.6"), BUNDLED, torch="2.10.0")
        assert reasons(p) == [
            ("nothing-installable", f"torch 2.10.0 needs macOS 14.0 or newer for Python {python}")
        ]
        assert fixes(p)[-1] == ("upgrade-os", "upgrade macOS to 14.0 or later for torch 2.10.0")
    ok = plan(spec_facts(os="macos", python="3.13", macos="13.6"), BUNDLED, torch="2.10.0")
    assert (ok.status, ok.torch_version) == ("ok", "2.10.0")


def _macos_15_floor() -> mx.Matrix:
    """The subset with torch 2.15.0's Apple Silicon wheels tagged macosx_15_0 (changed data)."""
    rel = release("2.15.0")
    files = dict(rel.pypi_files)
    files["macosx_15_0_arm64"] = files.pop("macosx_14_0_arm64")
    return with_release(M, "2.15.0", pypi_files=files, min_macos={"macos_arm64": Version("15.0")})


def test_a_mac_of_unknown_version_is_judged_as_the_macos_its_tags_were_made_for() -> None:
    """A Mac described without --macos is planned for macOS 14.0: a release whose wheels need
    15.0 is passed over with that floor said (not a Python to change), as on a Mac that is 14.5."""
    m = _macos_15_floor()
    for macos in (None, "14.5"):
        p = plan(spec_facts(os="macos", python="3.12", macos=macos), m)
        assert (p.status, p.torch_version) == ("ok", "2.14.1")
        assert reasons(p)[1:] == [
            ("newer-release-not-installable",
             "torch 2.15.0: needs macOS 15.0 or newer for Python 3.12"),
            ("newest-installable", "the newest torch this interpreter can install is 2.14.1"),
        ]  # fmt: skip
        assert fixes(p) == [("upgrade-os", "upgrade macOS to 15.0 or later for torch 2.15.0")]


def _mac_host(macos: str) -> Facts:
    """The replayed macOS 14.2.1 M1 (Python 3.12.1) with its interpreter's tags cut to those of
    macOS 11 and older (an interpreter that sees an older macOS than the system's), and its
    macOS version set to ``macos`` (changed data)."""
    facts = detect(ReplayHost(FIXTURES / "hosts" / "macos14-m1-arm64"))
    old = tuple(t for t in facts.python.tags if "macosx_1" not in t or "macosx_11" in t
                or "macosx_10" in t)  # fmt: skip
    assert old and len(old) < len(facts.python.tags)
    return dataclasses.replace(
        facts,
        os=dataclasses.replace(facts.os, macos_version=macos),
        python=dataclasses.replace(facts.python, tags=old),
    )


def test_a_mac_at_or_past_the_floor_whose_tags_still_match_no_wheel_is_told_its_tags() -> None:
    """torch 2.15.0's macOS 14.0 wheels on a Mac at 14.0 (the floor) or 14.2.1 whose interpreter
    lists tags up to macOS 11 only: not the macOS (which is new enough) but the tags are why;
    at 13.6, one below the floor, the floor is said."""
    for macos in ("14.0", "14.2.1"):
        p = plan(_mac_host(macos), torch="2.15.0")
        assert reasons(p) == [(
            "nothing-installable",
            "torch 2.15.0 has no wheel matching this interpreter's tags (Python 3.12, "
            "macos_arm64)",
        )]  # fmt: skip
    p = plan(_mac_host("13.6"), torch="2.15.0")
    assert reasons(p) == [
        ("nothing-installable", "torch 2.15.0 needs macOS 14.0 or newer for Python 3.12")
    ]


def test_an_intel_macs_floor_is_not_named_the_fixes_know_apple_silicons() -> None:
    """The macOS floor is said for Apple Silicon only (the upgrade-os fix names the
    macos_arm64 floor): torch 2.2.2's x86_64 wheels are tagged macosx_10_9, and with that floor
    recorded for macos_x86_64 too (changed data) an Intel Mac on 10.8 is told the tags."""
    m = with_release(
        M, "2.2.2", min_macos={"macos_arm64": Version("11.0"), "macos_x86_64": Version("10.9")}
    )
    p = plan(spec_facts(os="macos", arch="x86_64", python="3.12", macos="10.8"), m,
             torch="2.2.2")  # fmt: skip
    assert reasons(p) == [(
        "nothing-installable",
        "torch 2.2.2 has no wheel matching this interpreter's tags (Python 3.12, macos_x86_64)",
    )]  # fmt: skip


# --- no wheels for this platform


def _windows_arm(matrix: mx.Matrix, arch: str = "arm64") -> Plan:
    return plan(spec_facts(os="windows", arch=arch, python="3.12"), matrix)


def _with_note_pythons(*pythons: str) -> mx.Matrix:
    note = dataclasses.replace(BUNDLED.platform_notes["windows_arm64"], python=pythons)
    return dataclasses.replace(BUNDLED, platform_notes={"windows_arm64": note})


def test_windows_on_arm_is_planned_none_however_its_cpu_is_spelled() -> None:
    """arm64 and aarch64 are the same Windows on Arm: the note's Pythons and the fix."""
    for arch in ("arm64", "aarch64"):
        p = _windows_arm(BUNDLED, arch)
        assert p.reason_codes == ("no-platform", "platform-unsure")
        assert p.reasons[0] == f"no torch release in this data lists wheels for windows on {arch}"
        assert p.fixes == (Fix(
            rank=1,
            kind="change-python",
            summary="with a native arm64 Python 3.11–3.13, install torch from PyTorch's cpu "
            "index (https://download.pytorch.org/whl/cpu); otherwise use an x64 Python (runs "
            "under emulation, CPU only) or WSL2",
        ),)  # fmt: skip


def test_the_pythons_of_the_windows_on_arm_note_are_a_span_or_the_one() -> None:
    """Two Pythons are a span; one is named alone (the bundled note's list, cut)."""
    two = _windows_arm(_with_note_pythons("3.11", "3.12"))
    assert "for Python 3.11–3.12 (none on PyPI)" in two.reasons[1]
    assert fixes(two)[0][1].startswith("with a native arm64 Python 3.11–3.12, install")
    one = _windows_arm(_with_note_pythons("3.12"))
    assert "for Python 3.12 (none on PyPI)" in one.reasons[1]
    assert fixes(one)[0][1].startswith("with a native arm64 Python 3.12, install")


def test_windows_on_arm_without_a_note_is_told_the_x64_or_wsl2_way() -> None:
    bare = dataclasses.replace(M, platform_notes={})
    p = _windows_arm(bare)
    assert reasons(p) == [
        ("no-platform", "no torch release in this data lists wheels for windows on arm64")
    ]
    assert fixes(p) == [(
        "change-python",
        "no Windows on Arm wheels are in this data; use an x64 Python (runs under emulation, CPU "
        "only) or WSL2",
    )]  # fmt: skip


def test_another_system_on_arm_is_not_taken_for_windows_on_arm() -> None:
    """An OS PyTorch has no wheels for (a BSD: family "other") on an Arm CPU."""
    f = spec_facts(os="linux", arch="aarch64", python="3.12")
    other = dataclasses.replace(f, os=dataclasses.replace(f.os, family="other"))
    p = plan(other, BUNDLED)
    assert (reasons(p), p.fixes) == (
        [("no-platform", "PyTorch publishes no wheels for other on aarch64")],
        (),
    )


# --- the plan of none, whole


def test_the_plan_of_none_is_the_reason_the_fix_and_what_the_matrix_offers() -> None:
    """No command, no index, no source; the platform planned for and the matrix's newest torch
    beside the reason and its fix."""
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.35"), torch="1.13")
    assert p == Plan(
        status="none",
        reasons=("torch 1.13 is not in the wheel matrix (newest: 2.15.0; recent: 2.12.1, 2.13.0, "
                 "2.14.1, 2.15.0)",),
        fixes=(Fix(rank=1, kind="pin-torch",
                   summary="pin a release the matrix knows, e.g. --torch 2.15.0"),),
        platform="linux_x86_64",
        newest_torch="2.15.0",
        source="",
        reason_codes=("torch-not-in-matrix",),
    )  # fmt: skip
    none = plan(spec_facts(os="windows", arch="arm64", python="3.12"), M)
    assert (none.platform, none.newest_torch, none.source, none.details) == (None, "2.15.0", "", {})


# --- the options


def test_options_checked_without_a_matrix_are_checked_against_the_bundled_one() -> None:
    """cu117 is in the bundled matrix, not in the frozen subset."""
    check_options(PlanOptions(variant="cu117"))
    check_options(PlanOptions(variant="cu117"), BUNDLED)
    with pytest.raises(PlanError, match="unknown variant 'cu117': the matrix knows "):
        check_options(PlanOptions(variant="cu117"), M)
    with pytest.raises(PlanError) as err:
        check_options(PlanOptions(variant="cu999"))
    known = ", ".join(str(v) for v in sorted(BUNDLED.variants))
    assert str(err.value) == f"unknown variant 'cu999': the matrix knows {known}"


def test_a_mirror_url_with_credentials_is_refused_for_them() -> None:
    with pytest.raises(PlanError) as err:
        check_index_url("https://user:pw@mirror.example/whl")
    assert str(err.value) == (
        "--index-url: credentials in the URL would be printed; put them in pip.conf/.netrc"
    )


@pytest.mark.parametrize("path", ["/.", "/./whl", "/whl/.", "/%2E/whl", "/..", "/whl/../x"])
def test_a_mirror_url_with_a_dot_segment_is_refused_for_it(path: str) -> None:
    url = f"https://mirror.example{path}"
    with pytest.raises(PlanError) as err:
        check_index_url(url)
    assert str(err.value) == f"--index-url {url!r}: '.' and '..' path segments are not allowed"


def test_a_mirror_url_with_dots_inside_its_segments_is_taken() -> None:
    for path in ("/.whl", "/whl./x", "/.../x", "/v1.2/whl"):
        assert check_index_url(f"https://mirror.example{path}") == f"https://mirror.example{path}"


def test_a_musl_system_gets_a_plan_of_none_with_the_way_out() -> None:
    """Alpine's musl libc: PyTorch publishes no musllinux wheel and torch no sdist, so no command
    would install (the Ubuntu 24.04 CPU capture, its libc changed to musl and its glibc dropped,
    as osinfo reads an Alpine `ldd`). Both channels say so instead of an ok plan."""
    hosts = Path(__file__).parent / "fixtures" / "hosts"
    ubuntu = detect(ReplayHost(hosts / "ubuntu2404-cpu-only"))
    assert make_plan(ubuntu).status == "ok"
    alpine = dataclasses.replace(ubuntu, os=dataclasses.replace(ubuntu.os, libc="musl", glibc=None))
    for channel in ("stable", "nightly"):
        plan = make_plan(alpine, PlanOptions(channel=channel))
        assert plan.status == "none" and plan.command == "" and plan.argv == (), plan
        assert plan.reason_codes[0] == "no-platform"
        assert plan.reasons[0].startswith("PyTorch publishes no wheels for musl libc")
        assert [f.kind for f in plan.fixes] == ["change-os"]
