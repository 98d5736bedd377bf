"""What the planner says, whole, on described machines (issue 22): each test names one rule of
the NVIDIA branch, the fixes, the other vendors, the target or the shared context, and compares
everything the plan says (reasons and warnings with their codes, the ranked fixes) where the rule
shows, so that a finding lost, misnamed, said twice or ranked elsewhere is noticed.

The numbers come from the frozen matrix subset (tests/fixtures/matrix/wheels-subset.json, see its
SOURCE): torch 2.15.0's only confirmed CUDA build on linux_x86_64 is PyPI's cu132 (driver
595.71.05, sm_75 and newer); 2.14.1 has cu126 (560.35.05, sm_50-sm_90; the MVC floor 525.60.13),
cu130 (PyPI's default there, 580.95.05) and cu132. A glibc is named on every Linux machine so that
the glibc-unknown warning stays out of the way.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts, Gpu
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

FIXTURES = Path(__file__).resolve().parent / "fixtures"
M = mx.load_matrix(FIXTURES / "matrix" / "wheels-subset.json")
V = Variant.parse


def plan(facts: Facts, matrix: mx.Matrix = M, **options: Any) -> Plan:
    return make_plan(facts, PlanOptions(**options), matrix)


def nvidia(driver: str | None, *gpus: str, **spec: Any) -> Facts:
    spec.setdefault("python", "3.12")
    spec.setdefault("glibc", "2.35")
    return spec_facts(os="linux", gpus=gpus or ("RTX 4090",), driver=driver, **spec)


def reasons(p: Plan) -> list[tuple[str, str]]:
    return list(zip(p.reason_codes, p.reasons))


def warnings(p: Plan) -> list[tuple[str, str]]:
    return list(zip(p.warning_codes, p.warnings))


def fixes(p: Plan) -> list[tuple[str, str]]:
    return [(f.kind, f.summary) for f in p.fixes]


def with_gpus(facts: Facts, *gpus: Gpu, **nvidia_fields: Any) -> Facts:
    assert facts.nvidia is not None
    return dataclasses.replace(
        facts, nvidia=dataclasses.replace(facts.nvidia, gpus=gpus, **nvidia_fields)
    )


def unconfirmed(
    matrix: mx.Matrix, which: dict[str, tuple[str, ...] | None], kind: str = "cuda"
) -> mx.Matrix:
    """``matrix`` with rows the data does not confirm (confidence ?), as torch 2.15.0's index
    rows are in the subset: per release, the variants named (None: every variant of ``kind``,
    PyPI's default among them) on every platform."""
    releases = []
    for r in matrix.releases:
        if str(r.version) not in which:
            releases.append(r)
            continue
        named = which[str(r.version)]

        def hit(v: Variant, named: tuple[str, ...] | None = named) -> bool:
            return v.kind == kind and (named is None or str(v) in named)

        index = {
            v: {p: dataclasses.replace(a, verified=False, confidence="?") if hit(v) else a
                for p, a in plats.items()}
            for v, plats in r.index.items()
        }  # fmt: skip
        pypi = {
            p: dataclasses.replace(x, confidence="?") if hit(x.variant) else x
            for p, x in r.pypi_variant.items()
        }
        releases.append(dataclasses.replace(r, index=index, pypi_variant=pypi))
    return dataclasses.replace(matrix, releases=tuple(releases))


CU126_ARCHES = "sm_50, sm_60, sm_70, sm_75, sm_80, sm_86, sm_90"
DRIVER_PKG = "from your distribution's packages or NVIDIA's CUDA repository; reboot after"


# --- the NVIDIA branch: a GPU the newest release dropped


def test_a_gpu_the_newest_release_dropped_gets_the_last_release_that_carries_it() -> None:
    """GTX 1080 (sm_61): 2.15.0's cu132 has no sm_61; 2.14.1's cu126 has sm_60, which runs it.
    The driver already fits, so no fix: the plan says why the newest release is not it."""
    p = plan(nvidia("580.95.05", "GTX 1080"))
    assert (p.status, p.torch_version, p.variant, p.source, p.driver_compat) == (
        "ok", "2.14.1", V("cu126"), "index", "full"
    )  # fmt: skip
    assert reasons(p) == [
        ("gpu-build", "torch 2.14.1 the cu126 build on PyTorch's index (CUDA 12.6) carries "
         f"kernels for GTX 1080 (sm_61): {CU126_ARCHES}"),
        ("newest-release-blocked", "torch 2.15.0: cu132 has no kernels for GTX 1080 (sm_61)"),
        ("arch-dropped-in-newest", "no torch 2.15.0 build carries kernels for GTX 1080 (sm_61)"),
        ("driver-full", "the NVIDIA driver 580.95.05 supports CUDA 12.6 (needs >= 560.35.05)"),
        ("pypi-default-differs", "plain `pip install torch` would give the cu130 build here, so "
         "the command names PyTorch's index"),
    ]  # fmt: skip
    assert (warnings(p), p.fixes) == ([], ())


def test_between_two_mvc_builds_the_preferred_one_stays() -> None:
    """torch 2.13.0 on 550.54.14: cu130 and cu132 need a newer driver; cu129 and cu126 both run
    through CUDA 12's minor-version compatibility. The newer CUDA, first in order, is kept."""
    p = plan(nvidia("550.54.14"), torch="2.13.0")
    assert (p.variant, p.source, p.driver_compat) == (V("cu129"), "index", "mvc")


def test_a_gpu_of_unknown_compute_capability_is_warned_and_the_known_ones_still_decide() -> None:
    """A GPU the catalogue does not know (listed first) cannot be checked; the GTX 1080 after it
    still rules out 2.15.0."""
    f = nvidia("580.95.05", "GTX 1080")
    assert f.nvidia is not None
    mystery = Gpu(index=0, name="NVIDIA Mystery X1", source="nvidia-smi")
    p = plan(with_gpus(f, mystery, dataclasses.replace(f.nvidia.gpus[0], index=1)))
    assert (p.torch_version, p.variant) == ("2.14.1", V("cu126"))
    assert warnings(p) == [
        ("gpu-cc-unknown", "GPU 0 NVIDIA Mystery X1: compute capability unknown (not in the GPU "
         "catalogue); its architecture could not be checked against the wheels"),
    ]  # fmt: skip
    assert "mixed-gpus" not in p.reason_codes  # one known compute capability


def test_mig_and_a_driver_error_are_warned_beside_the_plan() -> None:
    """Two H100s in MIG mode, and the driver error the TrueNAS capture reports (its probe's own
    text, tests/fixtures/hosts/truenas-driver-mismatch-580): both said, the wheel unchanged."""
    from setup_env.probe.detect import detect
    from setup_env.probe.host import ReplayHost

    seen = detect(ReplayHost(FIXTURES / "hosts" / "truenas-driver-mismatch-580"))
    assert seen.nvidia is not None and seen.nvidia.error is not None
    f = nvidia("580.95.05", "H100", "H100")
    assert f.nvidia is not None
    migs = tuple(dataclasses.replace(g, mig_mode=True) for g in f.nvidia.gpus)
    p = plan(with_gpus(f, *migs, error=seen.nvidia.error), torch="2.14.1")
    assert (p.status, p.variant, p.source, p.driver_compat) == ("ok", V("cu130"), "pypi", "full")
    assert warnings(p) == [
        ("mig-enabled", "MIG mode is on for GPU 0, GPU 1: the wheel is the same, but PyTorch "
         "sees one MIG instance per process (choose it with CUDA_VISIBLE_DEVICES=MIG-<uuid>; "
         "`nvidia-smi -L` lists them)"),
        ("driver-error", f"the NVIDIA driver reported: {seen.nvidia.error}"),
    ]  # fmt: skip
    # one MIG GPU of two: only it is named; none: no warning
    p = plan(with_gpus(f, f.nvidia.gpus[0], migs[1]), torch="2.14.1")
    assert warnings(p) == [("mig-enabled", warnings(p)[0][1])]
    assert warnings(p)[0][1].startswith("MIG mode is on for GPU 1: ")
    assert warnings(plan(f, torch="2.14.1")) == []


def test_mvc_offers_the_newest_releases_driver_first_then_full_support() -> None:
    """H100 on 535.104.05: 2.15.0's cu132 needs 595.71.05; 2.14.1's cu126 runs through minor-
    version compatibility. Two driver fixes, the one that brings the newest release first."""
    p = plan(nvidia("535.104.05", "H100"))
    assert (p.torch_version, p.variant, p.driver_compat) == ("2.14.1", V("cu126"), "mvc")
    assert reasons(p) == [
        ("gpu-build", "torch 2.14.1 the cu126 build on PyTorch's index (CUDA 12.6) carries "
         f"kernels for H100 (sm_90): {CU126_ARCHES}"),
        ("newest-release-blocked", "torch 2.15.0: cu132 (CUDA 13.2) needs driver >= 595.71.05 "
         "(>= 580 with minor-version compatibility)"),
        ("pypi-default-differs", "plain `pip install torch` would give the cu130 build here, so "
         "the command names PyTorch's index"),
    ]  # fmt: skip
    assert warnings(p) == [
        ("driver-mvc", "driver 535.104.05 is older than CUDA 12.6.3's own driver (560.35.05); "
         "the wheel runs through CUDA minor-version compatibility (>= 525.60.13): PyTorch's "
         "prebuilt kernels work, PTX JIT and the newest CUDA APIs do not"),
    ]  # fmt: skip
    assert fixes(p) == [
        ("upgrade-driver", "Upgrade the NVIDIA driver to >= 595.71.05 (branch R595 or newer) for "
         f"torch 2.15.0 (cu132), {DRIVER_PKG}"),
        ("upgrade-driver", "Upgrade the NVIDIA driver to >= 560.35.05 (branch R560 or newer) for "
         f"full CUDA 12.6 support, {DRIVER_PKG}"),
    ]  # fmt: skip


def test_under_wsl2_the_driver_fixes_name_the_windows_driver() -> None:
    p = plan(nvidia("535.104.05", "H100", wsl=True))
    assert p.driver_compat == "mvc" and p.min_driver == "561.17"  # Windows' own minimum
    assert reasons(p)[-1] == ("wsl2", "WSL2: the Linux wheel with the Windows NVIDIA driver")
    wsl = "(WSL2 uses the Windows driver; never install a Linux NVIDIA driver inside WSL)"
    assert fixes(p) == [
        ("upgrade-driver", f"Upgrade the NVIDIA driver on Windows to >= 595 for torch 2.15.0 "
         f"(cu132) {wsl}"),
        ("upgrade-driver", f"Upgrade the NVIDIA driver on Windows to >= 561.17 for full CUDA "
         f"12.6 support {wsl}"),
    ]  # fmt: skip


def test_under_wsl2_a_fitting_driver_is_named_as_the_windows_one() -> None:
    p = plan(nvidia("596.49", wsl=True), torch="2.14.1")
    assert (p.variant, p.driver_compat, p.min_driver) == (V("cu130"), "full", "580")
    assert reasons(p)[1:] == [
        ("driver-full", "the NVIDIA Windows driver (WSL2 uses it) 596.49 supports CUDA 13.0 "
         "(needs >= 580)"),
        ("wsl2", "WSL2: the Linux wheel with the Windows NVIDIA driver"),
    ]  # fmt: skip


def test_no_driver_names_the_wheels_driver_and_its_mvc_floor() -> None:
    p = plan(nvidia(None), torch="2.14.1")
    assert (p.variant, p.source, p.driver_compat, p.min_driver) == (
        V("cu130"), "pypi", "no-driver", "580.95.05"
    )  # fmt: skip
    assert reasons(p) == [
        ("gpu-build", "torch 2.14.1 PyPI's default build (CUDA 13.0) carries kernels for RTX 4090 "
         "(sm_89): sm_75, sm_80, sm_86, sm_90, sm_100, sm_120"),
    ]  # fmt: skip
    assert warnings(p) == [
        ("driver-absent", "no NVIDIA driver was found: install one >= 580.95.05 before using "
         "this wheel (>= 580 also works, through CUDA minor-version compatibility)"),
    ]  # fmt: skip
    assert [(f.rank, f.kind, f.summary) for f in p.fixes] == [
        (1, "upgrade-driver", "Install the NVIDIA driver to >= 580.95.05 (branch R580 or newer) "
         f"for torch 2.14.1, {DRIVER_PKG}"),
    ]  # fmt: skip


# --- the NVIDIA branch: no GPU build fits (the CPU fallback and its fixes)

CPU_FIX = (
    "cpu",
    "keep the CPU build (no GPU acceleration) until one of the fixes above is applied",
)


def source_build(arch_list: str) -> tuple[str, str]:
    return (
        "build-from-source",
        f'build PyTorch from source with TORCH_CUDA_ARCH_LIST="{arch_list}" '
        "(https://github.com/pytorch/pytorch#from-source)",
    )


def test_a_k80_on_its_real_r410_driver_is_offered_the_r470_that_runs_cu118_through_mvc() -> None:
    """The GCE K80 capture (driver 410.104, tests/fixtures/hosts/gce-k80-410): no build fits
    that driver; cu118's own driver (520.61.05) is past Kepler's last branch R470, but its
    minor-version-compatibility floor 450.80.02 is not, and runs torch 2.7.1+cu118 (as the plan
    for a K80 on 470.82.01 shows). The fix offers it; it was once left out."""
    from setup_env.probe.detect import detect
    from setup_env.probe.host import ReplayHost

    seen = detect(ReplayHost(FIXTURES / "hosts" / "gce-k80-410"))
    assert seen.nvidia is not None and seen.nvidia.driver_version == "410.104"
    described = nvidia(None, "Tesla K80")  # the capture names no Python or glibc
    p = plan(dataclasses.replace(seen, python=described.python, os=described.os))
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    assert ("driver-branch-ended", "Tesla K80 (sm_37) is supported by NVIDIA drivers up to R470 "
            "only; a driver >= 520.61.05 is not available for it") in reasons(p)  # fmt: skip
    assert fixes(p) == [
        ("upgrade-driver", "Upgrade the NVIDIA driver to >= 450.80.02 (branch R450 to R470, the "
         f"last branch for Tesla K80) for torch 2.7.1 (cu118), {DRIVER_PKG}"),
        source_build("3.7"),
        CPU_FIX,
    ]  # fmt: skip
    # the driver offered does run it
    upgraded = plan(nvidia("470.82.01", "Tesla K80"))
    assert (upgraded.torch_version, upgraded.variant, upgraded.driver_compat) == (
        "2.7.1", V("cu118"), "mvc"
    )  # fmt: skip


def test_a_driver_too_old_for_every_build_is_offered_the_smallest_that_brings_the_release() -> None:
    """A T4 on R418 with torch 2.14.1 pinned: cu130 (PyPI's default) needs 580.95.05, cu132
    595.58.03, cu126 560.35.05: the fix asks for the smallest of the three (it once asked for
    the first in preference order). Every build's driver is said, in preference order."""
    p = plan(nvidia("418.87.01", "Tesla T4"), torch="2.14.1")
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    assert reasons(p) == [
        ("cpu-fallback", "fallback: the CPU build of torch 2.14.1; no GPU build fits (see the "
         "fixes)"),
        ("newest-release-blocked", "torch 2.14.1: cu130 (CUDA 13.0) needs driver >= 580.95.05 "
         "(>= 580 with minor-version compatibility)"),
        ("newest-release-blocked", "torch 2.14.1: cu132 (CUDA 13.2) needs driver >= 595.58.03 "
         "(>= 580 with minor-version compatibility)"),
        ("newest-release-blocked", "torch 2.14.1: cu126 (CUDA 12.6) needs driver >= 560.35.05 "
         "(>= 525.60.13 with minor-version compatibility)"),
    ]  # fmt: skip
    assert fixes(p) == [
        ("upgrade-driver", "Upgrade the NVIDIA driver to >= 560.35.05 (branch R560 or newer) for "
         f"torch 2.14.1 (cu126), {DRIVER_PKG}"),
        source_build("7.5"),
        CPU_FIX,
    ]  # fmt: skip


def test_the_driver_offered_is_for_a_confirmed_build_past_an_unconfirmed_first_one() -> None:
    """The same T4 with 2.14.1's cu130 (first in preference order) unconfirmed: it is passed
    over, and the smallest driver of the confirmed builds after it is offered (cu126's)."""
    p = plan(nvidia("418.87.01", "Tesla T4"), unconfirmed(M, {"2.14.1": ("cu130",)}),
             torch="2.14.1")  # fmt: skip
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    assert fixes(p)[0] == (
        "upgrade-driver",
        f"Upgrade the NVIDIA driver to >= 560.35.05 (branch R560 or newer) for torch 2.14.1 "
        f"(cu126), {DRIVER_PKG}",
    )


def test_a_gpu_no_installable_build_carries_is_named_with_a_source_build() -> None:
    """sm_35: no wheel of any release carries it, so no driver helps; only a source build."""
    p = plan(nvidia("470.82.01", "sm_35"))
    assert (p.status, p.variant, p.torch_version) == ("fallback", V("cpu"), "2.15.0")
    assert reasons(p)[1:] == [
        ("newest-release-blocked", "torch 2.15.0: cu132 has no kernels for sm_35 (sm_35)"),
        ("arch-missing", "no PyTorch wheel installable here carries kernels for sm_35 (sm_35)"),
    ]
    assert fixes(p) == [source_build("3.5"), CPU_FIX]


def test_mixed_gpus_no_one_build_serves_point_to_the_newest_alone_and_a_source_build() -> None:
    """sm_37 beside a B200 (sm_100): no build of any release carries both. The fixes: keep the
    newest GPU type (10.0 > 3.7 as versions, not as text) and build for both, the compute
    capabilities in version order."""
    p = plan(nvidia("470.82.01", "sm_37", "B200"))
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    assert ("mixed-gpus", "mixed GPUs (B200 (sm_100), sm_37 (sm_37)): the wheel must carry "
            "kernels for each") in reasons(p)  # fmt: skip
    assert "arch-missing" not in p.reason_codes  # each GPU alone has a build
    assert fixes(p) == [
        ("one-gpu-type", "use only the B200 GPUs: hide the others with CUDA_VISIBLE_DEVICES and "
         "plan again with --gpu for that model"),
        source_build("3.7;10.0"),
        CPU_FIX,
    ]  # fmt: skip
    # three GPUs, two of them orphans: each named, the source build lists all three
    p = plan(nvidia("470.82.01", "sm_35", "sm_30", "RTX 3090"))
    assert [r for r in reasons(p) if r[0] == "arch-missing"] == [
        ("arch-missing", "no PyTorch wheel installable here carries kernels for sm_35 (sm_35)"),
        ("arch-missing", "no PyTorch wheel installable here carries kernels for sm_30 (sm_30)"),
    ]
    assert fixes(p)[:2] == [
        ("one-gpu-type", "use only the RTX 3090 GPUs: hide the others with CUDA_VISIBLE_DEVICES "
         "and plan again with --gpu for that model"),
        source_build("3.0;3.5;8.6"),
    ]  # fmt: skip


# --- builds the data does not confirm: never planned on, said (two at most beside a plan, three
# when nothing fits)

REFRESH = "run `setup-env matrix refresh` on a machine that reaches download.pytorch.org"


def test_unconfirmed_builds_that_would_fit_are_said_two_at_most_beside_the_plan() -> None:
    """2.15.0 unconfirmed whole, 2.14.1's cu126 and cu132 too: the plan is 2.14.1's confirmed
    cu130 from PyPI; three unconfirmed builds would fit, the first two are named."""
    m = unconfirmed(M, {"2.15.0": None, "2.14.1": ("cu126", "cu132")})
    p = plan(nvidia("595.71.05"), m)
    assert (p.torch_version, p.variant, p.source) == ("2.14.1", V("cu130"), "pypi")
    assert reasons(p)[1] == ("newest-release-blocked", "torch 2.15.0: no fitting variant")
    assert warnings(p) == [
        ("unverified-fit", f"torch {u} would also fit, but the data doesn't confirm that "
         f"PyTorch's index publishes it; {REFRESH}")
        for u in ("2.15.0+cu132", "2.14.1+cu132")
    ]  # fmt: skip
    assert p.fixes == ()  # nothing to do about data


def test_when_only_unconfirmed_builds_fit_the_plan_is_cpu_and_names_three_of_them() -> None:
    """A matrix of 2.14.1 and 2.15.0 alone, none of their CUDA rows confirmed: four builds
    would fit, the first three are named; no driver fix (the driver is not the problem)."""
    two = dataclasses.replace(
        M, releases=tuple(r for r in M.releases if str(r.version) in ("2.14.1", "2.15.0"))
    )
    p = plan(nvidia("595.71.05"), unconfirmed(two, {"2.14.1": None, "2.15.0": None}))
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    assert reasons(p) == [
        ("cpu-fallback", "fallback: the CPU build of torch 2.15.0; no GPU build fits (see the "
         "fixes)"),
    ]  # fmt: skip
    assert warnings(p)[0] == (
        "unverified-fit",
        "2.15.0+cu132, 2.14.1+cu130, 2.14.1+cu132 would fit but are not confirmed on PyTorch's "
        "index; run `setup-env matrix refresh` where download.pytorch.org is reachable",
    )
    assert [k for k, _s in fixes(p)] == ["build-from-source", "cpu"]


# --- fixes: a driver older than the GPU, the GPU's last branch, how each OS is told

INSTALL_HINT = "(NVIDIA App or https://www.nvidia.com/Download/index.aspx)"
WSL_HINT = "(WSL2 uses the Windows driver; never install a Linux NVIDIA driver inside WSL)"


def test_a_driver_before_the_gpus_first_branch_is_a_reason_and_the_first_fix() -> None:
    """RTX 5090 (sm_120, first branch R570): R565 does not know it, R570 does. The upgrade to
    R570 is ranked before the driver the wheel needs."""
    older = "driver 565.57.01 is older than R570, the first driver branch that runs RTX 5090 "
    p = plan(nvidia("565.57.01", "RTX 5090"), torch="2.14.1")
    assert reasons(p)[1] == (
        "driver-older-than-gpu",
        older + "(sm_120): CUDA sees no usable GPU until the driver is upgraded",
    )
    assert fixes(p)[:2] == [
        ("upgrade-driver", "Upgrade the NVIDIA driver to >= 570 (branch R570 or newer) for RTX "
         f"5090 (sm_120), {DRIVER_PKG}"),
        ("upgrade-driver", "Upgrade the NVIDIA driver to >= 580.95.05 (branch R580 or newer) for "
         f"torch 2.14.1 (cu130), {DRIVER_PKG}"),
    ]  # fmt: skip
    assert "driver-older-than-gpu" not in plan(nvidia("570.86.10", "RTX 5090")).reason_codes


def test_a_model_with_its_own_first_driver_is_judged_by_that_driver() -> None:
    """The RTX PRO 6000 Server Edition needs 575.57.08 (NVIDIA names it), later than sm_120's
    R570: 570.86.10 and 575.57.07 are too old for it, 575.57.08 is not."""
    for old in ("570.86.10", "575.57.07"):
        p = plan(nvidia(old, "RTX PRO 6000 Server"), torch="2.14.1")
        assert reasons(p)[1] == (
            "driver-older-than-gpu",
            f"driver {old} is older than 575.57.08, the first driver NVIDIA supports RTX PRO "
            "6000 Server (sm_120) with: upgrade the driver before relying on this GPU",
        )
        assert fixes(p)[0] == (
            "upgrade-driver",
            "Upgrade the NVIDIA driver to >= 575.57.08 (branch R575 or newer) for RTX PRO 6000 "
            f"Server (sm_120), {DRIVER_PKG}",
        )
    p = plan(nvidia("575.57.08", "RTX PRO 6000 Server"), torch="2.14.1")
    assert "driver-older-than-gpu" not in p.reason_codes
    assert fixes(p)[0][1].startswith("Upgrade the NVIDIA driver to >= 580.95.05 ")


@pytest.mark.parametrize("gpus", [("RTX PRO 6000 Server", "RTX 5090"),
                                  ("RTX 5090", "RTX PRO 6000 Server")])  # fmt: skip
def test_a_driver_too_old_for_two_gpus_is_said_and_fixed_for_each_in_their_order(
    gpus: tuple[str, str],
) -> None:
    """An RTX PRO 6000 Server (its own first driver 575.57.08) and an RTX 5090 (first branch
    R570), on 565.57.01: the driver is too old for each. Each is said, and each upgrade is
    offered, in the order of the GPUs, before the driver the wheel needs."""
    p = plan(nvidia("565.57.01", *gpus), torch="2.14.1")
    said = {
        "RTX PRO 6000 Server": (
            ("driver-older-than-gpu", "driver 565.57.01 is older than 575.57.08, the first "
             "driver NVIDIA supports RTX PRO 6000 Server (sm_120) with: upgrade the driver "
             "before relying on this GPU"),
            ("upgrade-driver", "Upgrade the NVIDIA driver to >= 575.57.08 (branch R575 or newer) "
             f"for RTX PRO 6000 Server (sm_120), {DRIVER_PKG}"),
        ),
        "RTX 5090": (
            ("driver-older-than-gpu", "driver 565.57.01 is older than R570, the first driver "
             "branch that runs RTX 5090 (sm_120): CUDA sees no usable GPU until the driver is "
             "upgraded"),
            ("upgrade-driver", "Upgrade the NVIDIA driver to >= 570 (branch R570 or newer) for "
             f"RTX 5090 (sm_120), {DRIVER_PKG}"),
        ),
    }  # fmt: skip
    assert [r for r in reasons(p) if r[0] == "driver-older-than-gpu"] == [said[g][0] for g in gpus]
    assert fixes(p)[:3] == [
        *(said[g][1] for g in gpus),
        ("upgrade-driver", "Upgrade the NVIDIA driver to >= 580.95.05 (branch R580 or newer) for "
         f"torch 2.14.1 (cu130), {DRIVER_PKG}"),
    ]  # fmt: skip


def test_ubuntu_gets_the_driver_command_other_systems_the_words() -> None:
    f = nvidia("565.57.01", "RTX 5090")
    ubuntu = dataclasses.replace(f, os=dataclasses.replace(f.os, distro_id="Ubuntu"))
    p = plan(ubuntu, torch="2.14.1")
    assert [f.command for f in p.fixes if f.kind == "upgrade-driver"] == [
        "sudo ubuntu-drivers install nvidia:570",
        "sudo ubuntu-drivers install nvidia:580",
    ]
    assert [f.command for f in plan(f, torch="2.14.1").fixes] == [None] * 4


def test_windows_is_told_where_its_driver_comes_from() -> None:
    w = spec_facts(os="windows", python="3.12", gpus=["RTX 5090"], driver="566.36")
    p = plan(w, torch="2.14.1")
    assert fixes(p)[:2] == [
        ("upgrade-driver", f"Upgrade the NVIDIA driver to >= 570 for RTX 5090 (sm_120) "
         f"{INSTALL_HINT}"),
        ("upgrade-driver", f"Upgrade the NVIDIA driver to >= 580 for torch 2.14.1 (cu130) "
         f"{INSTALL_HINT}"),
    ]  # fmt: skip


def test_a_gpu_whose_branches_ended_caps_the_driver_offered_by_the_earliest_last_branch() -> None:
    """A K80 (last branch R470) beside a P100 (R580), no driver: cu118 of torch 2.7.1 carries
    both; its own driver 520.61.05 is past R470, so the fix installs the MVC floor 450.80.02,
    up to R470, the K80's (the lower of the two last branches)."""
    p = plan(nvidia(None, "Tesla P100", "Tesla K80"))
    assert (p.torch_version, p.variant, p.driver_compat) == ("2.7.1", V("cu118"), "no-driver")
    assert [r for r in reasons(p) if r[0] in ("arch-dropped-in-newest", "driver-branch-ended")] == [
        ("arch-dropped-in-newest", "no torch 2.15.0 build carries kernels for Tesla P100 (sm_60)"),
        ("arch-dropped-in-newest", "no torch 2.15.0 build carries kernels for Tesla K80 (sm_37)"),
        ("driver-branch-ended", "Tesla K80 (sm_37) is supported by NVIDIA drivers up to R470 "
         "only; a driver >= 520.61.05 is not available for it"),
    ]  # fmt: skip
    assert warnings(p) == [
        ("arches-inferred", "the architecture list of cu118 in torch 2.7.1 is inferred, not read "
         "from the wheel (wheel_matrix.md §3a); `setup-env matrix arches <wheel>` can confirm it"),
        ("driver-absent", "no NVIDIA driver was found: install one >= 520.61.05 before using this "
         "wheel (>= 450.80.02 also works, through CUDA minor-version compatibility)"),
    ]  # fmt: skip
    assert fixes(p) == [
        ("upgrade-driver", "Install the NVIDIA driver to >= 450.80.02 (branch R450 to R470, the "
         f"last branch for Tesla K80) for torch 2.7.1, {DRIVER_PKG}"),
    ]  # fmt: skip


def test_on_windows_and_under_wsl2_the_cap_is_said_as_up_to_the_last_branch() -> None:
    win = plan(spec_facts(os="windows", python="3.12", gpus=["Tesla K80"]))
    assert (win.min_driver, win.details["mvc_floor"]) == ("520.06", "452.39")  # Windows' own
    assert ("pypi-default-differs", "plain `pip install torch` would give the cpu build here (no "
            "GPU support), so the command names PyTorch's index") in reasons(win)  # fmt: skip
    assert fixes(win) == [
        ("upgrade-driver", "Install the NVIDIA driver to >= 452.39, up to R470 (the last for "
         f"Tesla K80) for torch 2.7.1 {INSTALL_HINT}"),
    ]  # fmt: skip
    wsl = plan(nvidia(None, "Tesla K80", wsl=True))
    assert fixes(wsl) == [
        ("upgrade-driver", "Install the NVIDIA driver on Windows to >= 452.39, up to R470 (the "
         f"last for Tesla K80) for torch 2.7.1 {WSL_HINT}"),
    ]  # fmt: skip


def test_a_gpus_own_first_driver_past_another_gpus_last_branch_is_not_offered() -> None:
    """The RTX PRO 6000 Server's first driver 575.57.08 beside a K80 (last branch R470), on
    470.82.01: the upgrade that would make the new GPU usable is past the K80's last branch, so
    it is not offered; the plan says why, the driver as NVIDIA writes it (575.57.08, not
    575.57.8)."""
    p = plan(nvidia("470.82.01", "RTX PRO 6000 Server", "Tesla K80"))
    assert [r for r in reasons(p) if r[0] in ("driver-older-than-gpu", "driver-branch-ended")] == [
        ("driver-older-than-gpu", "driver 470.82.01 is older than 575.57.08, the first driver "
         "NVIDIA supports RTX PRO 6000 Server (sm_120) with: upgrade the driver before relying on "
         "this GPU"),
        ("driver-branch-ended", "Tesla K80 (sm_37) is supported by NVIDIA drivers up to R470 "
         "only; a driver >= 575.57.08 is not available for it"),
    ]  # fmt: skip
    assert "upgrade-driver" not in [k for k, _s in fixes(p)]


def _cu118_with_ptx() -> mx.Matrix:
    """The subset has no PTX build, so one is made: torch 2.7.1's cu118 (linux_x86_64) with PTX
    for compute_90 beside its SASS, so that sm_120 runs it through PTX JIT."""
    key = (V("cu118"), "2.7.1", "linux_x86_64")
    builds = dict(M.builds)
    builds[key] = dataclasses.replace(M.builds[key], ptx=((9, 0),))
    return dataclasses.replace(M, builds=builds)


def test_beside_a_gpu_on_ptx_the_mvc_floor_is_not_offered_for_an_ended_branch() -> None:
    """A K80 on R410, no build fits: cu118's own driver 520.61.05 is past the K80's R470, and
    alone it is offered cu118's minor-version-compatibility floor 450.80.02. Beside an RTX
    5090 that runs cu118 only through PTX (JIT needs the build's own driver, which MVC does not
    cover) that floor would not run the build: no driver is offered, only why."""
    ptx = _cu118_with_ptx()
    alone = plan(nvidia("410.104", "Tesla K80"), ptx)
    assert fixes(alone)[0] == (
        "upgrade-driver",
        "Upgrade the NVIDIA driver to >= 450.80.02 (branch R450 to R470, the last branch for "
        f"Tesla K80) for torch 2.7.1 (cu118), {DRIVER_PKG}",
    )
    p = plan(nvidia("410.104", "Tesla K80", "RTX 5090"), ptx)
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    ended = "Tesla K80 (sm_37) is supported by NVIDIA drivers up to R470 only; a driver >= "
    assert [r for r in reasons(p) if r[0] == "driver-branch-ended"] == [
        ("driver-branch-ended", ended + "570 is not available for it"),  # the RTX 5090's R570
        ("driver-branch-ended", ended + "520.61.05 is not available for it"),  # cu118's own
    ]
    assert "upgrade-driver" not in [k for k, _s in fixes(p)]


MYSTERY = Gpu(index=0, name="NVIDIA Mystery X1", source="nvidia-smi")


@pytest.mark.parametrize(
    ("machine", "torch"),
    [
        (nvidia("580.95.05", "GTX 1080"), ""),  # arch-dropped-in-newest
        (nvidia(None, "Tesla P100", "Tesla K80"), ""),  # driver-branch-ended
        (nvidia("565.57.01", "RTX 5090"), "2.14.1"),  # driver-older-than-gpu (first branch)
        (nvidia("570.86.10", "RTX PRO 6000 Server"), "2.14.1"),  # (the model's own driver)
    ],
    ids=["dropped-arch", "ended-branch", "first-branch", "first-driver"],
)
def test_a_gpu_of_unknown_compute_capability_listed_first_changes_no_finding(
    machine: Facts, torch: str
) -> None:
    """A GPU the catalogue does not know, listed before the known ones: the plan says what it
    says without it (each finding of the known GPUs, each fix), and warns about it."""
    assert machine.nvidia is not None
    known = tuple(dataclasses.replace(g, index=g.index + 1) for g in machine.nvidia.gpus)
    with_mystery = plan(with_gpus(machine, MYSTERY, *known), torch=torch or None)
    without = plan(with_gpus(machine, *known), torch=torch or None)
    assert (reasons(with_mystery), fixes(with_mystery)) == (reasons(without), fixes(without))
    unknown = (
        "gpu-cc-unknown",
        "GPU 0 NVIDIA Mystery X1: compute capability unknown (not in the GPU catalogue); its "
        "architecture could not be checked against the wheels",
    )
    assert warnings(with_mystery) == [unknown, *warnings(without)]


# --- the other vendors: AMD (ROCm), Intel (XPU), and no GPU at all


def test_amd_gpus_take_the_newest_confirmed_rocm_of_the_newest_release_that_has_one() -> None:
    """2.15.0's ROCm rows are unconfirmed: 2.14.1, its newest ROCm (rocm7.14 over rocm7.2); each
    GPU model named once with its gfx, both gfx checked against the wheel's list."""
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.35",
                        gpus=["MI300X", "MI300X", "RX 7900 XTX"]))  # fmt: skip
    assert (p.status, p.torch_version, p.variant, p.source) == (
        "ok", "2.14.1", V("rocm7.14"), "index"
    )  # fmt: skip
    assert reasons(p) == [
        ("accelerator-build", "AMD GPU(s) MI300X (gfx942), RX 7900 XTX (gfx1100): torch 2.14.1 "
         "from PyTorch's rocm7.14 index (PyPI's wheels carry no AMD GPU support)"),
        ("newest-release-blocked", "torch 2.15.0: no rocm build is confirmed in the data"),
        ("rocm-gfx-in-wheel", "torch 2.14.1+rocm7.14 carries gfx942, gfx1100 (PYTORCH_ROCM_ARCH "
         "of PyTorch's build: gfx908 gfx90a gfx942 gfx950 gfx1030 gfx1100 gfx1101 gfx1102 "
         "gfx1103 gfx1200 gfx1201 gfx1150 gfx1151)"),
    ]  # fmt: skip
    assert warnings(p) == [
        ("unverified-fit", "2.15.0+rocm7.14, 2.15.0+rocm7.2 may exist but are not confirmed on "
         "PyTorch's index; run `setup-env matrix refresh` where download.pytorch.org is "
         "reachable"),
    ]  # fmt: skip


def test_unconfirmed_rocm_builds_are_named_three_at_most() -> None:
    """2.14.1's ROCm rows unconfirmed too: 2.13.0's newest (rocm7.2 over rocm7.1); four
    unconfirmed builds stand before it, three are named."""
    m = unconfirmed(M, {"2.14.1": None}, kind="rocm")
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["MI300X"]), m)
    assert (p.torch_version, p.variant) == ("2.13.0", V("rocm7.2"))
    assert warnings(p)[0][1].startswith(
        "2.15.0+rocm7.14, 2.15.0+rocm7.2, 2.14.1+rocm7.14 may exist but are not confirmed"
    )


def test_an_intel_gpu_takes_the_xpu_index_and_is_told_about_its_driver() -> None:
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["Arc A770"]))
    assert (p.status, p.torch_version, p.variant, p.source) == ("ok", "2.14.1", V("xpu"), "index")
    assert reasons(p) == [
        ("accelerator-build", "Intel GPU(s) Arc A770: torch 2.14.1 from PyTorch's xpu index "
         "(PyPI's wheels carry no Intel GPU support)"),
        ("newest-release-blocked", "torch 2.15.0: no xpu build is confirmed in the data"),
    ]  # fmt: skip
    assert [c for c, _t in warnings(p)] == ["unverified-fit", "xpu-driver-needed", "row-inferred"]
    assert warnings(p)[1][1] == (
        "XPU wheels need Intel's GPU driver (Linux: the i915/xe kernel driver plus the "
        "level-zero and compute runtime packages; Windows: the Arc/Iris Xe driver)"
    )


def test_an_intel_gpu_where_no_xpu_build_exists_is_a_cpu_fallback_that_says_so() -> None:
    """linux_aarch64: PyTorch's xpu index has no wheels for it."""
    p = plan(spec_facts(os="linux", arch="aarch64", python="3.12", glibc="2.35",
                        gpus=["Arc A770"]))  # fmt: skip
    assert (p.status, p.torch_version, p.variant) == ("fallback", "2.15.0", V("cpu"))
    assert reasons(p) == [
        ("cpu-fallback", "fallback: the CPU build of torch 2.15.0; no GPU build fits (see the "
         "fixes)"),
        ("no-accelerator-build", "no confirmed xpu build of torch fits this interpreter"),
    ]  # fmt: skip
    assert fixes(p) == [CPU_FIX]


def test_no_gpu_on_linux_takes_the_cpu_index_and_elsewhere_pypi() -> None:
    """PyPI's Linux wheel is a CUDA build (GBs of libraries): the cpu index instead; Windows'
    PyPI wheel is the CPU build itself."""
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.35"))
    assert (p.status, p.variant, p.source, p.index_url) == (
        "ok", V("cpu"), "index", "https://download.pytorch.org/whl/cpu"
    )  # fmt: skip
    assert reasons(p) == [
        ("no-gpu", "no GPU found: the CPU build from PyTorch's cpu index of torch 2.15.0"),
        ("pypi-default-differs", "PyPI's linux_x86_64 wheel is the cu132 build (several GB of "
         "CUDA libraries); the cpu index avoids downloading them"),
    ]  # fmt: skip
    w = plan(spec_facts(os="windows", python="3.12"))
    assert (w.variant, w.source, w.index_url) == (V("cpu"), "pypi", None)
    assert reasons(w) == [("no-gpu", "no GPU found: PyPI's default build of torch 2.15.0")]
    assert (warnings(w), w.fixes) == ([], ())


# --- the machine described on the command line: each field at its limit and one past it

SPEC_TAKEN = [
    ({"os": "linux", "python": "3.99"}, ("linux", "x86_64", "3.99", False)),
    ({"os": "linux", "python": " 3.13t "}, ("linux", "x86_64", "3.13", True)),
    ({"os": "linux", "glibc": "2.99"}, ("linux", "x86_64", "3.12", False)),
    ({"os": "macos", "macos": "14"}, ("darwin", "arm64", "3.12", False)),
    ({"os": "macos", "macos": "15.10.99"}, ("darwin", "arm64", "3.12", False)),
    ({"os": "OSX"}, ("darwin", "arm64", "3.12", False)),
    ({"os": "mac", "arch": "aarch64"}, ("darwin", "arm64", "3.12", False)),  # macOS says arm64
    ({"os": "Win"}, ("windows", "x86_64", "3.12", False)),
    ({"os": "linux", "arch": "amd64"}, ("linux", "x86_64", "3.12", False)),
    ({"os": "linux", "gpus": ["Jetson AGX Orin"]}, ("linux", "aarch64", "3.12", False)),
    ({"os": "linux", "driver": "595"}, ("linux", "x86_64", "3.12", False)),
    ({"os": "linux", "driver": "5700.100.100"}, ("linux", "x86_64", "3.12", False)),
]


@pytest.mark.parametrize(("spec", "seen"), SPEC_TAKEN, ids=str)
def test_a_described_machine_at_each_fields_limit(
    spec: dict[str, Any], seen: tuple[str, str, str, bool]
) -> None:
    f = spec_facts(**spec)
    assert (f.os.family, f.python.machine, f.python.version, f.python.free_threaded) == seen
    assert f.cpu.architecture == f.python.machine
    assert (f.nvidia is not None) == ("driver" in spec or "gpus" in spec)
    if "driver" in spec:
        assert f.nvidia is not None and f.nvidia.driver_version == spec["driver"]


SPEC_REFUSED = [
    ({"os": "linux", "python": "3.100"}, "--python '3.100': expected a version like 3.12 or 3.13t"),
    ({"os": "linux", "glibc": "2.100"}, "--glibc '2.100': expected a version like 2.17 or 2.35"),
    ({"os": "macos", "macos": "9"}, "--macos '9': expected a version like 13.6 or 14"),
    ({"os": "macos", "macos": "14.100"}, "--macos '14.100': expected"),
    ({"os": "macos", "macos": "14.1.2.3"}, "--macos '14.1.2.3': expected"),
    ({"os": "linux", "driver": "12345"}, "--driver '12345': expected a version like 570.86.10"),
    ({"os": "linux", "driver": "570.1000"}, "--driver '570.1000': expected"),
    ({"os": "linux", "driver": "570.86.10.1"}, "--driver '570.86.10.1': expected"),
    ({"os": "linux", "gpus": ["  ", "RTX 4090"]}, "--gpu '': empty or too long"),
    ({"os": "linux", "gpus": ["x" * 100]}, "not a GPU the catalogue knows (gpu-unknown)"),
    ({"os": "macos", "gpus": ["Jetson AGX Orin"]}, "NVIDIA GPUs are not supported on macOS"),
    ({"os": "linux", "gpus": ["Jetson AGX Orin"], "jetpack": "6.2", "arch": "x86_64"},
     "--jetpack: a Jetson is --os linux --arch aarch64"),
    ({"os": "linux", "gpus": ["Jetson AGX Orin"], "jetpack": "6.x"},
     "--jetpack '6.x': expected a version like 6.2"),
    ({"os": "linux", "gpus": ["RTX 4090"], "jetpack": "6.2"},
     '--jetpack needs --gpu naming a Jetson module ("Jetson AGX Orin")'),
]  # fmt: skip


@pytest.mark.parametrize(("spec", "message"), SPEC_REFUSED, ids=str)
def test_a_described_machine_one_past_a_fields_limit_is_refused(
    spec: dict[str, Any], message: str
) -> None:
    from setup_env.decide.model import PlanError

    with pytest.raises(PlanError) as err:
        spec_facts(**spec)
    assert message in str(err.value)


def test_a_linux_python_that_calls_itself_arm64_is_planned_as_aarch64() -> None:
    """Some aarch64 Linux Pythons report platform.machine() 'arm64': the wheels are aarch64."""
    f = spec_facts(os="linux", arch="aarch64", python="3.12", glibc="2.35")
    arm = dataclasses.replace(f, python=dataclasses.replace(f.python, machine="arm64", tags=()))
    p = plan(arm)
    assert (p.status, p.platform, p.torch_version) == ("ok", "linux_aarch64", "2.15.0")


def test_a_python_known_by_its_tags_alone_installs_from_the_index_by_its_abi() -> None:
    """The tags a detector read (cp312, manylinux_2_35): no version. The cpu index's Linux
    wheels are matched by interpreter and ABI (cp312-cp312), so the plan stands."""
    f = spec_facts(os="linux", python="3.12", glibc="2.35")
    tagged = dataclasses.replace(f, python=dataclasses.replace(f.python, version=None))
    p = plan(tagged)
    assert (p.status, p.variant, p.source, p.torch_version) == ("ok", V("cpu"), "index", "2.15.0")


# --- the shared context: the candidates of a release in preference order, why a wheel does not
# install, the fixes said once


def test_after_the_stable_cuda_the_newest_cuda_is_preferred() -> None:
    """Windows, torch 2.14.1 (PyPI serves the CPU build): the stable CUDA (cu130, PyPI's Linux
    default) comes first; with it unconfirmed, cu132 is taken over cu126, both fully supported
    by 596.49."""
    w = spec_facts(os="windows", python="3.12", gpus=["RTX 4090"], driver="596.49")
    assert plan(w, torch="2.14.1").variant == V("cu130")
    p = plan(w, unconfirmed(M, {"2.14.1": ("cu130",)}), torch="2.14.1")
    assert (p.variant, p.source, p.driver_compat, p.min_driver) == (
        V("cu132"), "index", "full", "595"
    )  # fmt: skip
    assert reasons(p)[1:] == [
        ("driver-full", "the NVIDIA driver 596.49 supports CUDA 13.2 (needs >= 595)"),
        ("pypi-default-differs", "plain `pip install torch` would give the cpu build here (no GPU "
         "support), so the command names PyTorch's index"),
    ]  # fmt: skip


def test_a_mac_too_old_for_a_pythons_wheels_is_told_which_macos() -> None:
    p = plan(spec_facts(os="macos", python="3.13", macos="13.6"), torch="2.15.0")
    assert reasons(p) == [
        ("nothing-installable", "torch 2.15.0 needs macOS 14.0 or newer for Python 3.13"),
    ]
    assert fixes(p) == [
        ("pin-torch", "torch 2.11.0 is the newest release that installs for Python 3.13 on "
         "macos_arm64: --torch 2.11.0"),
        ("upgrade-os", "upgrade macOS to 14.0 or later for torch 2.15.0"),
    ]  # fmt: skip
    p = plan(spec_facts(os="macos", python="3.12", macos="10.15"))
    assert reasons(p) == [
        ("nothing-installable", "torch 2.15.0 needs macOS 14.0 or newer for Python 3.12; no "
         "torch release in the matrix installs here"),
    ]  # fmt: skip
    assert fixes(p) == [("upgrade-os", "upgrade macOS to 14.0 or later for torch 2.15.0")]


def test_an_older_release_pinned_is_told_its_own_floor_of_macos_and_of_glibc() -> None:
    """The fix names the floor of the release that does not install, not today's: torch
    2.11.0's macOS 11.0 (2.12.0 and later: 14.0), torch 2.5.1's glibc 2.17 (2.6.0 and later:
    2.28)."""
    mac = plan(spec_facts(os="macos", python="3.12", macos="10.15"), torch="2.11.0")
    assert reasons(mac) == [
        ("nothing-installable", "torch 2.11.0 needs macOS 11.0 or newer for Python 3.12"),
    ]
    assert fixes(mac) == [("upgrade-os", "upgrade macOS to 11.0 or later for torch 2.11.0")]
    old = plan(spec_facts(os="linux", python="3.12", glibc="2.12"), torch="2.5.1")
    assert reasons(old) == [
        ("nothing-installable", "torch 2.5.1 needs glibc >= 2.17 (this system has 2.12)"),
    ]
    assert fixes(old) == [
        ("newer-os", "torch 2.5.1 needs glibc >= 2.17: move to a newer distribution (RHEL/Rocky "
         "8+, Ubuntu 20.04+, Debian 11+) or run in a container built on one"),
    ]  # fmt: skip


def with_release(matrix: mx.Matrix, version: str, **changes: Any) -> mx.Matrix:
    """``matrix`` with one release's fields changed."""
    return dataclasses.replace(
        matrix,
        releases=tuple(
            dataclasses.replace(r, **changes) if str(r.version) == version else r
            for r in matrix.releases
        ),
    )


@pytest.mark.parametrize(
    ("pythons", "want"),
    [
        (("3.11", "3.12", "3.13", "3.14", "3.15", "3.14t", "3.15t"), "3.11–3.15"),  # as it is
        (("3.11", "3.12", "3.14t"), "3.11–3.12"),  # two: both ends
        (("3.12", "3.14t"), "3.12"),  # one: itself, not a span
        (("3.14t", "3.15t"), "3.14t–3.15t"),  # only free-threaded ones: those
    ],
)
def test_a_python_too_old_is_told_the_pythons_of_the_release_it_cannot_install(
    pythons: tuple[str, ...], want: str
) -> None:
    """Python 3.10 with torch 2.15.0 pinned (it needs >= 3.11): the fix names the span of the
    release's Pythons without the free-threaded ones, and the first of them for uv. The list
    of 2.15.0's Pythons is cut here to reach one and two."""
    m = with_release(M, "2.15.0", python=pythons)
    p = plan(spec_facts(os="linux", python="3.10", glibc="2.35"), m, torch="2.15.0")
    assert reasons(p) == [("nothing-installable", "torch 2.15.0 needs Python >=3.11")]
    first = want.split("–")[0]
    assert fixes(p)[-1] == (
        "change-python", f"use Python {want} for torch 2.15.0 (e.g. `uv venv --python {first}`)"
    )  # fmt: skip


def test_a_free_threaded_python_is_not_told_of_free_threaded_wheels_a_release_lacks() -> None:
    """Python 3.13t with torch 2.6.0 pinned (no free-threaded wheels yet): the fix names its
    Pythons, and no free-threaded ones."""
    p = plan(spec_facts(os="linux", python="3.13t", glibc="2.35"), torch="2.6.0")
    assert reasons(p) == [("nothing-installable", "torch 2.6.0 has no wheel for Python 3.13t")]
    assert fixes(p) == [
        ("pin-torch", "torch 2.12.0 is the newest release that installs for Python 3.13t on "
         "linux_x86_64: --torch 2.12.0"),
        ("change-python", "use Python 3.9–3.13 for torch 2.6.0 (e.g. `uv venv --python 3.9`)"),
    ]  # fmt: skip


def test_only_the_newest_blocked_releases_get_an_interpreter_fix() -> None:
    """Python 3.12 on macOS 13.6 (Apple Silicon), with torch 2.13.0's Python 3.12 wheel cut
    from the data: 2.15.0–2.14.1 need macOS 14, 2.13.0 has no wheel for 3.12, 2.12.1–2.12.0
    need macOS 14 again; 2.11.0 installs. Three reasons, one fix: the newest group's."""
    r = next(r for r in M.releases if str(r.version) == "2.13.0")
    cut = with_release(
        M,
        "2.13.0",
        python=tuple(py for py in r.python if py != "3.12"),
        pypi_files={t: tuple(pa for pa in pas if pa != "cp312-cp312")
                    for t, pas in r.pypi_files.items()},
    )  # fmt: skip
    p = plan(spec_facts(os="macos", python="3.12", macos="13.6"), cut)
    assert p.torch_version == "2.11.0"
    assert [r for r in reasons(p) if r[0] == "newer-release-not-installable"] == [
        ("newer-release-not-installable", "torch 2.14.1–2.15.0: needs macOS 14.0 or newer for "
         "Python 3.12"),
        ("newer-release-not-installable", "torch 2.13.0: has no wheel for Python 3.12"),
        ("newer-release-not-installable", "torch 2.12.0–2.12.1: needs macOS 14.0 or newer for "
         "Python 3.12"),
    ]  # fmt: skip
    assert fixes(p) == [("upgrade-os", "upgrade macOS to 14.0 or later for torch 2.15.0")]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"channel": "beta"}, "unknown channel 'beta': choose stable, nightly"),
        ({"installer": "pipx"}, "unknown installer 'pipx': choose "),
        ({"variant": "cu999"}, "unknown variant 'cu999': the matrix knows cpu, cu118, "),
        ({"with_packages": ("torchtext",)}, "--with: 'torchtext' is not one of torchvision, "
         "torchaudio"),
        ({"torch": "2.x"}, "--torch '2.x': expected a release like 2.13 or 2.13.0"),
        ({"index_url": "ftp://x/y"}, "--index-url 'ftp://x/y': expected a plain http(s) URL"),
    ],
)  # fmt: skip
def test_each_option_the_planner_cannot_take_is_refused_before_planning(
    options: dict[str, Any], message: str
) -> None:
    from setup_env.decide.model import PlanError
    from setup_env.decide.plan import check_options

    with pytest.raises(PlanError) as err:
        check_options(PlanOptions(**options), M)
    assert str(err.value).startswith(message)
    check_options(PlanOptions(variant="mps", with_packages=("torchvision", "torchaudio")), M)


# --- how many of a release's blockers are said


def carried_over(
    matrix: mx.Matrix, release: str, source: str, variants: tuple[str, ...]
) -> mx.Matrix:
    """``matrix`` with ``release`` given ``source``'s builds of ``variants`` on linux_x86_64
    (their index rows and compiled architectures): a release with more CUDA builds than any in
    the data today."""
    src = next(r for r in matrix.releases if str(r.version) == source)
    builds = dict(matrix.builds)
    releases = []
    for r in matrix.releases:
        if str(r.version) == release:
            index = dict(r.index)
            for v in map(V, variants):
                index[v] = {"linux_x86_64": src.index[v]["linux_x86_64"]}
                builds[(v, release, "linux_x86_64")] = matrix.builds[(v, source, "linux_x86_64")]
            r = dataclasses.replace(r, index=index)
        releases.append(r)
    return dataclasses.replace(matrix, releases=tuple(releases), builds=builds)


FIVE_CUDA = carried_over(M, "2.14.1", "2.11.0", ("cu128", "cu129"))  # cu126 ... cu132


def test_a_fallback_says_four_of_the_newest_releases_blockers_at_most() -> None:
    """A T4 on R418, torch 2.14.1 pinned with five CUDA builds, none of which its driver runs:
    the first four in preference order are said (PyPI's cu130, then the newest CUDA down), and
    the driver fix is the smallest of the five (cu126's)."""
    p = plan(nvidia("418.87.01", "Tesla T4"), FIVE_CUDA, torch="2.14.1")
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    said = [t.split(" (CUDA")[0] for c, t in reasons(p) if c == "newest-release-blocked"]
    assert said == ["torch 2.14.1: cu130", "torch 2.14.1: cu132", "torch 2.14.1: cu129",
                    "torch 2.14.1: cu128"]  # fmt: skip
    assert fixes(p)[0][1].endswith(f"for torch 2.14.1 (cu126), {DRIVER_PKG}")


def test_a_plan_on_an_older_release_says_three_of_the_newest_releases_blockers() -> None:
    """A K80 with 2.14.1 the newest release (2.15.0 left out) and five CUDA builds in it, none
    with sm_37: the plan is 2.7.1's cu118; why not 2.14.1 is said once, with three builds."""
    m = dataclasses.replace(
        FIVE_CUDA, releases=tuple(r for r in FIVE_CUDA.releases if str(r.version) != "2.15.0")
    )
    p = plan(nvidia("470.82.01", "Tesla K80"), m)
    assert (p.torch_version, p.variant) == ("2.7.1", V("cu118"))
    assert [r for r in reasons(p) if r[0] == "newest-release-blocked"] == [
        ("newest-release-blocked", "torch 2.14.1: cu130 has no kernels for Tesla K80 (sm_37); "
         "cu132 has no kernels for Tesla K80 (sm_37); cu129 has no kernels for Tesla K80 "
         "(sm_37)"),
    ]  # fmt: skip


def test_a_gpu_of_unknown_compute_capability_does_not_hide_an_orphan_after_it() -> None:
    f = nvidia("470.82.01", "sm_35")
    assert f.nvidia is not None
    mystery = Gpu(index=0, name="NVIDIA Mystery X1", source="nvidia-smi")
    p = plan(with_gpus(f, mystery, dataclasses.replace(f.nvidia.gpus[0], index=1)))
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    assert [r for r in reasons(p) if r[0] == "arch-missing"] == [
        ("arch-missing", "no PyTorch wheel installable here carries kernels for sm_35 (sm_35)"),
    ]
    assert fixes(p) == [source_build("3.5"), CPU_FIX]


@pytest.mark.parametrize("confidence", ["I", "?"])
def test_a_build_whose_architectures_are_not_read_from_the_wheel_is_warned(
    confidence: str,
) -> None:
    """torch 2.14.1's cu130 (read from the wheel, V) made inferred (I) or unconfirmed (?): the
    plan on it says its architecture list may be wrong."""
    key = (V("cu130"), "2.14.1", "linux_x86_64")
    builds = dict(M.builds)
    builds[key] = dataclasses.replace(M.builds[key], confidence=confidence)
    p = plan(nvidia("580.95.05"), dataclasses.replace(M, builds=builds), torch="2.14.1")
    assert p.variant == V("cu130")
    assert warnings(p) == [
        ("arches-inferred", "the architecture list of cu130 in torch 2.14.1 is inferred, not read "
         f"from the wheel ({M.builds[key].source}); `setup-env matrix arches <wheel>` can "
         "confirm it"),
    ]  # fmt: skip
    assert warnings(plan(nvidia("580.95.05"), torch="2.14.1")) == []


# --- the nightly channel

NIGHTLY_WARNING = (
    "nightly-unverified",
    "nightly builds change daily and their contents are not verified by this data (2026-12-02); "
    "pin a stable release for anything that must keep working",
)


def test_nightly_takes_the_newest_cuda_whose_newest_stable_build_carries_every_gpu() -> None:
    """GTX 1080 (sm_61): cu130 and cu132 dropped it, cu134 has no stable build to judge by;
    cu126's newest (2.14.1) carries sm_60. The companions asked for come along, unpinned."""
    p = plan(nvidia("580.95.05", "GTX 1080"), channel="nightly",
             with_packages=("torchvision", "torchaudio"))  # fmt: skip
    url = "https://download.pytorch.org/whl/nightly/cu126"
    assert (p.status, p.variant, p.index_url, p.requirements) == (
        "ok", V("cu126"), url, ("torch", "torchvision", "torchaudio")
    )  # fmt: skip
    assert p.argv == ("pip", "install", "--pre", "torch", "torchvision", "torchaudio",
                      "--index-url", url)  # fmt: skip
    assert reasons(p) == [("nightly", "nightly cu126 build from PyTorch's nightly index")]
    assert warnings(p) == [NIGHTLY_WARNING]
    assert plan(nvidia("580.95.05"), channel="nightly").variant == V("cu132")  # stable's CUDA


def test_nightly_for_a_gpu_no_cuda_build_carries_plans_nothing() -> None:
    p = plan(nvidia("470.82.01", "Tesla K80"), channel="nightly")
    assert (p.status, p.command, warnings(p)) == ("none", "", [])
    assert reasons(p) == [
        ("nightly-no-gpu-build", "no nightly CUDA build is known to carry kernels for these GPUs "
         "(data of 2.15.0)"),
    ]  # fmt: skip


def test_nightly_for_an_intel_gpu_without_an_xpu_build_is_the_cpu_build() -> None:
    """linux_aarch64's nightly index has no xpu build."""
    f = spec_facts(os="linux", arch="aarch64", python="3.12", glibc="2.35", gpus=["Arc A770"])
    p = plan(f, channel="nightly")
    assert (p.status, p.variant, p.index_url) == (
        "ok", V("cpu"), "https://download.pytorch.org/whl/nightly/cpu"
    )  # fmt: skip


# --- Rosetta: an x86_64 Python on an Apple Silicon Mac

ROSETTA = (
    "rosetta",
    "this Python is an x86_64 build running under Rosetta 2 on an Apple Silicon Mac: it can only "
    "install torch <= 2.2.2 and never gets MPS",
)
NATIVE = (
    "native-python",
    "install a native arm64 Python (python.org universal2 installer, Homebrew in /opt/homebrew, "
    "or `uv python install`) and plan again: torch 2.15.0 with MPS",
)


def rosetta(python: str) -> Facts:
    """The interpreter says x86_64, the CPU arm64: no rosetta flag, inferred from the two."""
    f = spec_facts(os="macos", arch="x86_64", python=python, macos="14.5")
    return dataclasses.replace(f, cpu=dataclasses.replace(f.cpu, architecture="arm64"))


def test_under_rosetta_the_intel_mac_wheels_and_the_native_python_fix() -> None:
    p = plan(rosetta("3.11"))
    assert (p.status, p.torch_version, p.variant, p.source) == ("ok", "2.2.2", V("cpu"), "pypi")
    assert reasons(p)[0] == (
        "intel-mac",
        "Intel Mac: PyTorch stopped publishing macOS x86_64 wheels after 2.2.2; torch 2.2.2 is "
        "the newest for this machine (CPU only)",
    )
    assert (warnings(p), fixes(p)) == ([ROSETTA], [NATIVE])


def test_under_rosetta_with_a_python_no_intel_mac_wheel_serves_the_same_fix_alone() -> None:
    p = plan(rosetta("3.13"))
    assert reasons(p) == [
        ("nothing-installable", "torch 2.15.0 has no macos_x86_64 wheels; no torch release in the "
         "matrix installs here"),
    ]  # fmt: skip
    assert (warnings(p), fixes(p)) == ([ROSETTA], [NATIVE])


def test_under_rosetta_a_pin_past_the_intel_mac_wheels_ranks_the_native_python_first() -> None:
    """torch 2.5.1 pinned under Rosetta: no macOS x86_64 wheel; the native Python (which gets
    the newest torch with MPS) is ranked before the release this Python could install."""
    p = plan(rosetta("3.11"), torch="2.5.1")
    assert reasons(p) == [("nothing-installable", "torch 2.5.1 has no macos_x86_64 wheels")]
    assert (warnings(p), fixes(p)) == (
        [ROSETTA],
        [NATIVE, ("pin-torch", "torch 2.2.2 is the newest release that installs for Python 3.11 "
                  "on macos_x86_64: --torch 2.2.2")],
    )  # fmt: skip


# --- make_plan: what it says before any branch


def test_a_matrix_note_is_said_beside_the_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SETUP_ENV_MATRIX naming a file that is no matrix: the bundled one is used, and the plan
    says so (once, whatever the branch)."""
    bad = tmp_path / "wheels.json"
    bad.write_text("{", encoding="utf-8")
    monkeypatch.setenv("SETUP_ENV_MATRIX", str(bad))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    loaded = mx.load_matrix()
    assert len(loaded.notes) == 1 and loaded.notes[0].startswith("SETUP_ENV_MATRIX ignored: ")
    for facts in (nvidia("580.95.05"), spec_facts(os="windows", python="3.12")):
        p = make_plan(facts, PlanOptions(), loaded)
        assert warnings(p)[0] == ("matrix-note", loaded.notes[0])
        assert p.warning_codes.count("matrix-note") == 1


def test_an_unknown_glibc_is_warned_on_linux_only_and_only_with_a_python() -> None:
    code = "glibc-unknown"
    assert code in plan(spec_facts(os="linux", python="3.12")).warning_codes
    assert code not in plan(spec_facts(os="linux", python="3.12", glibc="2.28")).warning_codes
    assert code not in plan(spec_facts(os="windows", python="3.12")).warning_codes
    f = spec_facts(os="linux", python="3.12")
    bare = dataclasses.replace(f, python=dataclasses.replace(f.python, version=None, tags=()))
    p = plan(bare)
    assert (p.reason_codes, code in p.warning_codes) == (("no-python",), False)
