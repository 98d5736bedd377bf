"""The rules of setup_env/decide/causes.py, one at a time, on the facts of real reports
(tests/fixtures/collect_env/, each with its .source) and the frozen test matrix
(tests/fixtures/matrix/wheels-subset.json): how findings are ranked, when the installed GPU build
is kept, the route to a working build, the newest build for a GPU and the fixes each cause names.

Where a test alters a real report (a Python version, a driver, a GPU, an OS) to reach a boundary,
it says so; nothing here is an invented report."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import pytest

from setup_env.decide import causes
from setup_env.decide.model import Finding, Plan
from setup_env.decide.summary import safe_plan
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant
from setup_env.probe.report import parse

HERE = Path(__file__).parent
FIXTURES = HERE / "fixtures" / "collect_env"
M = mx.load_matrix(HERE / "fixtures" / "matrix" / "wheels-subset.json")
# The frozen matrix without its newest release (2.15.0): cut so that the newest release for a
# Turing GPU (2.14.1) has three CUDA builds with it, cu126 (driver >= 525.60.13), cu130 and cu132
# (driver >= 580), the ranking between candidates of one release.
M_TO_2_14 = replace(M, releases=M.releases[:-1])
assert str(M_TO_2_14.newest.version) == "2.14.1"

# torch 1.3.1+cu101 on driver 410.48, Python 3.6, 8x TITAN Xp (sm_61): no build fits.
TITANXP = "linux-8x-titanxp-torch1.3-old.txt"
# torch 1.5.0+cu101 working on 2x TITAN RTX (sm_75), Windows, driver 442.92, Python 3.7.
WIN_TITANRTX = "windows-server2019-titanrtx-quoted.txt"
# torch 1.4.0 (CUDA 10.0) working on 4x TITAN RTX, Linux, driver 440.33.01.
LINUX_TITANRTX = "linux-4x-titanrtx-driver440-torch1.4-espnet.txt"
AVAILABLE = {"cuda": True, "rocm": True, "xpu": True}


def facts_of(name: str) -> Facts:
    """The facts diagnose plans with (the planning facts where the paste lacks some)."""
    report = parse((FIXTURES / name).read_text(encoding="utf-8"))
    return report.planning or report.facts


def with_python(facts: Facts, version: str) -> Facts:
    return replace(facts, python=replace(facts.python, version=version))


def with_driver(facts: Facts, driver: Optional[str]) -> Facts:
    assert facts.nvidia is not None
    return replace(facts, nvidia=replace(facts.nvidia, driver_version=driver))


def with_torch(facts: Facts, **changes: Any) -> Facts:
    torch = facts.package("torch")
    assert torch is not None
    others = tuple(p for p in facts.packages if p is not torch)
    return replace(facts, packages=(replace(torch, **changes), *others))


def steps(route: Optional[causes.Route]) -> list[tuple[str, str]]:
    assert route is not None
    return [(s.kind, s.summary) for s in route.steps]


def _f(code: str, severity: str = "error") -> Finding:
    return Finding(code, severity, "...")  # type: ignore[arg-type]


# --- rank ---------------------------------------------------------------------------------------


def test_rank_most_severe_first_then_causes_then_what_they_explain() -> None:
    """Within a severity a root cause comes first, then other findings, then the symptoms; an
    info never rises above an error, whatever order the findings came in."""
    want = [
        _f("cuda-newer-than-driver"),  # a cause
        _f("companion-version-mismatch"),  # neither cause nor symptom
        _f("torch-cuda-unavailable"),  # the symptom it explains
        _f("mig-enabled", "warning"),
        _f("report-truncated", "info"),  # a symptom, but an info
    ]
    assert [f.code for f in causes.rank(want)] == [f.code for f in want]
    assert [f.code for f in causes.rank(want[::-1])] == [f.code for f in want]


def test_rank_orders_the_causes_as_listed() -> None:
    """The causes in CAUSES order, a CUDA init error of any code in the place of
    cuda-init-error."""
    codes = ["cuda-init-error-803" if c == "cuda-init-error" else c for c in causes.CAUSES]
    assert [f.code for f in causes.rank([_f(c) for c in reversed(codes)])] == codes


def test_an_info_cause_stays_below_an_error_symptom() -> None:
    ranked = causes.rank([_f("several-installs", "info"), _f("no-kernel-image")])
    assert [f.code for f in ranked] == ["no-kernel-image", "several-installs"]


# --- keep what works ----------------------------------------------------------------------------


def _keep(facts: Facts, findings: tuple[Finding, ...] = ()) -> Optional[causes.Keep]:
    plan, _ = safe_plan(facts)
    return causes.keep_installed(facts, plan, findings, AVAILABLE)


def test_a_cuda_init_error_of_any_code_means_the_build_fails_here() -> None:
    facts = facts_of(WIN_TITANRTX)
    assert _keep(facts) is not None
    for code in ("cuda-init-error-803", "cuda-init-error-999", "cuda-init-error-100"):
        assert _keep(facts, (_f(code),)) is None, code
        # as a warning it does not undo the working build
        assert _keep(facts, (_f(code, "warning"),)) is not None, code


def test_an_error_about_something_else_keeps_the_working_build() -> None:
    """Only the findings that say the build fails on this GPU undo it (another error: a
    companion of the wrong version, several installs)."""
    facts = facts_of(WIN_TITANRTX)
    others = (_f("companion-version-mismatch"), _f("several-installs"))
    assert _keep(facts, others) is not None


@pytest.mark.parametrize(
    ("name", "gpus"),
    [
        (WIN_TITANRTX, ("2x TITAN RTX",)),
        (LINUX_TITANRTX, ("4x TITAN RTX",)),
        ("windows10-quadro-p1000-os-not-collected.txt", ("Quadro P1000",)),
        ("windows10-conda-torch1.0-cu90-gtx1050.txt", ("GeForce GTX 1050",)),
    ],
)
def test_the_kept_build_counts_its_gpus(name: str, gpus: tuple[str, ...]) -> None:
    """One GPU by its name, several of a model as "Nx model"."""
    keep = _keep(facts_of(name))
    assert keep is not None and keep.gpus == gpus


def test_mixed_gpus_are_counted_each_by_model() -> None:
    # the 4x TITAN RTX report with its third GPU changed to a Quadro P1000
    facts = facts_of(LINUX_TITANRTX)
    assert facts.nvidia is not None
    gpus = list(facts.nvidia.gpus)
    gpus[2] = replace(gpus[2], name="Quadro P1000", compute_capability="6.1")
    facts = replace(facts, nvidia=replace(facts.nvidia, gpus=tuple(gpus)))
    keep = _keep(facts)
    assert keep is not None and keep.gpus == ("3x TITAN RTX", "Quadro P1000")


def test_the_kept_cuda_build_names_its_cuda_and_driver() -> None:
    keep = _keep(facts_of(WIN_TITANRTX))
    assert keep is not None and keep.device == "cuda"
    assert keep.evidence == (
        "torch 1.5.0+cu101 reports CUDA available",
        "NVIDIA driver 442.92 runs its CUDA 10.1",
    )
    assert keep.summary == "keep the installed torch 1.5.0+cu101: CUDA works on 2x TITAN RTX"


def test_the_cuda_of_a_build_comes_from_its_cuda_line_or_its_variant() -> None:
    """torch's own CUDA version (9.0.176 -> 9.0) when the build names no variant; the variant's
    when torch's CUDA line is missing."""
    facts = facts_of("find-env-rtx2060-torch1.1-driver418.txt")  # torch 1.1.0, CUDA 9.0.176
    torch = facts.package("torch")
    assert torch is not None and torch.cuda == "9.0.176"
    no_variant = _keep(with_torch(facts, variant=None))
    assert no_variant is not None and no_variant.device == "cuda"
    assert no_variant.evidence[-1] == "NVIDIA driver 418.67 runs its CUDA 9.0"
    # the Windows TITAN RTX report without its "CUDA used to build PyTorch" value: cu101 says it
    no_line = _keep(with_torch(facts_of(WIN_TITANRTX), cuda=None))
    assert no_line is not None and no_line.device == "cuda"
    assert no_line.evidence[-1] == "NVIDIA driver 442.92 runs its CUDA 10.1"


def test_a_rocm_build_is_kept_by_its_variant_or_its_hip_version() -> None:
    facts = facts_of("windows-rocm-gfx1201.txt")  # torch 2.9.1+rocmsdk..., HIP 7.2, rocm7.2
    keep = _keep(facts)
    assert keep is not None and keep.device == "rocm"
    assert keep.evidence == ("torch 2.9.1+rocmsdk20260116 reports CUDA (HIP) available",)
    assert keep.summary.endswith(": ROCm works on AMD Radeon AI PRO R9700")
    for changes in ({"hip": None}, {"variant": None}):  # one of the two dropped from the report
        kept = _keep(with_torch(facts, **changes))
        assert kept is not None and kept.device == "rocm", changes


def test_an_xpu_build_is_kept_where_no_xpu_build_installs() -> None:
    """torch 2.11.0+xpu working on an Arc Pro B60: with Python 3.8 (the report's 3.12.3 changed)
    no XPU build installs (the plan falls back to the CPU), so the working one is kept; with
    Python 3.9 the plan's XPU build is the answer."""
    facts = facts_of("linux-arc-pro-b60-xpu-torch2.11.txt")
    keep = _keep(with_python(facts, "3.8.10"))
    assert keep is not None and keep.device == "xpu"
    assert keep.summary == (
        "keep the installed torch 2.11.0+xpu: XPU works on Intel(R) Arc(TM) Pro B60 Graphics"
    )
    assert keep.evidence == ("torch 2.11.0+xpu reports XPU available",)
    assert _keep(with_python(facts, "3.9.5")) is None
    # the variant alone, and the build's own XPU flag alone, name the device
    flagged = _keep(with_torch(with_python(facts, "3.8.10"), variant=None, xpu=True))
    assert flagged is not None and flagged.device == "xpu"


# --- the route ----------------------------------------------------------------------------------


def test_no_route_when_the_plan_fits_as_things_are() -> None:
    facts = facts_of(TITANXP)
    fits = Plan(status="ok", torch_version="2.14.1", variant=Variant.parse("cu126"), command="x")
    assert causes.route(facts, fits, M) is None
    for status in ("fallback", "none"):
        assert causes.route(facts, replace(fits, status=status), M) is not None, status
    assert causes.route(facts, None, M) is not None


def test_no_route_on_a_jetson() -> None:
    """A Jetson's torch comes from JetPack: no desktop route, though the same facts without
    the Jetson's marks (its L4T kernel, its note) would have one."""
    facts = facts_of("jetson-agx-orin-nv23.02.txt")
    assert causes.is_jetson(facts)
    assert causes.route(facts, None, M) is None
    desktop = replace(
        facts,
        jetson=None,
        os=replace(facts.os, kernel="5.15.0-105-generic"),
        notes=tuple(n for n in facts.notes if n.code != "jetson"),
    )
    assert not causes.is_jetson(desktop)
    assert causes.route(desktop, None, M) is not None


def test_no_route_without_the_python_or_the_os() -> None:
    facts = facts_of(TITANXP)
    assert causes.route(facts, None, M) is not None
    assert causes.route(with_python(facts, ""), None, M) is None
    assert causes.route(replace(facts, os=replace(facts.os, family="other")), None, M) is None
    assert causes.route(facts, None, None) is None


def test_the_python_step_only_where_the_python_is_too_old() -> None:
    """The route's release (2.14.1) takes Python 3.10 on: 3.10.0 needs no step, 3.9.18 does
    (the report's 3.6 changed)."""
    facts = facts_of(TITANXP)
    assert steps(causes.route(with_python(facts, "3.10.0"), None, M)) == [
        ("driver", "NVIDIA driver >= 525.60.13"),
        ("torch", "torch 2.14.1+cu126: the newest build with sm_61"),
    ]
    assert steps(causes.route(with_python(facts, "3.9.18"), None, M))[0] == (
        "python",
        "Python >= 3.10",
    )


def test_the_driver_step_only_below_the_builds_floor() -> None:
    """cu126 needs driver 525.60.13: the report's 410.48 changed to exactly that needs no
    driver step, one patch below does."""
    facts = facts_of(TITANXP)
    at = steps(causes.route(with_driver(facts, "525.60.13"), None, M))
    assert [k for k, _ in at] == ["python", "torch"]
    below = steps(causes.route(with_driver(facts, "525.60.12"), None, M))
    assert below[1] == ("driver", "NVIDIA driver >= 525.60.13")
    # no driver at all: the step too
    none = steps(causes.route(with_driver(facts, None), None, M))
    assert none[1] == ("driver", "NVIDIA driver >= 525.60.13")


def test_a_route_of_one_step_is_no_route() -> None:
    """Python and driver both new enough: only the torch step is left, and that is the plan's
    business, not a route."""
    facts = with_driver(with_python(facts_of(TITANXP), "3.12.1"), "600.10")
    assert causes.route(facts, None, M) is None


def test_the_route_follows_the_oldest_gpu() -> None:
    """Two GPUs, sm_61 and sm_120 (the TITAN Xp report's second GPU changed to an RTX 5090): the
    route is to the newest build that has the older one, by version, not by spelling ("12.0"
    sorts before "6.1")."""
    facts = facts_of(TITANXP)
    assert facts.nvidia is not None
    gpus = list(facts.nvidia.gpus)
    gpus[1] = replace(gpus[1], name="NVIDIA GeForce RTX 5090", compute_capability="12.0")
    mixed = replace(facts, nvidia=replace(facts.nvidia, gpus=tuple(gpus)))
    road = causes.route(mixed, None, M)
    assert road is not None and (road.torch, str(road.variant)) == ("2.14.1", "cu126")
    assert steps(road)[-1] == ("torch", "torch 2.14.1+cu126: the newest build with sm_61")


def test_a_machine_without_an_nvidia_gpu_is_routed_to_the_newest_cpu_build() -> None:
    """debian12's CPU machine with Python 3.6 (its 3.11.7 changed): the newest CPU build, with
    the Python it needs; with 3.11.7 nothing is to change."""
    facts = facts_of("debian12-cpu-torch2.13.txt")
    old = with_python(facts, "3.6.9")
    plan, _ = safe_plan(old)
    road = causes.route(old, plan, M)
    assert road is not None and (road.torch, str(road.variant)) == ("2.15.0", "cpu")
    assert steps(road) == [
        ("python", "Python >= 3.11"),
        ("torch", "torch 2.15.0 (CPU): the newest for linux_x86_64"),
    ]
    plan, _ = safe_plan(facts)
    assert causes.route(facts, plan, M) is None


def test_a_mac_route_names_the_lowest_python_of_the_release() -> None:
    """macOS 10.15 with Python 2.7: torch 2.2.2 is the newest for macos_x86_64, its wheels from
    Python 3.8 (by version: "3.10" sorts before "3.8")."""
    facts = facts_of("macos10.15-no-torch-py27.txt")
    road = causes.route(facts, None, M)
    assert road is not None and (road.torch, str(road.variant)) == ("2.2.2", "cpu")
    assert steps(road) == [
        ("python", "Python >= 3.8"),
        ("torch", "torch 2.2.2 (CPU): the newest for macos_x86_64"),
    ]


def test_a_gpu_of_unknown_model_is_routed_as_one_the_newest_build_carries() -> None:
    """A CUDA build with no GPU list and no driver (ubuntu20, Python 3.6): the newest CUDA
    build, with the Python and the driver it needs."""
    facts = facts_of("driver-missing-ubuntu20-cu113-toolkit-no-gpu-list.txt")
    assert facts.nvidia is not None and not facts.nvidia.gpus[0].compute_capability
    road = causes.route(facts, None, M)
    assert road is not None and (road.torch, str(road.variant)) == ("2.15.0", "cu132")
    assert steps(road) == [
        ("python", "Python >= 3.11"),
        ("driver", "NVIDIA driver >= 580"),
        ("torch", "torch 2.15.0+cu132: the newest CUDA build"),
    ]


def test_the_lowest_python_of_a_release() -> None:
    """Its lowest plain CPython; free-threaded builds ("3.14t") never set it; without a list,
    its requires-python floor (releases of the frozen matrix, their lists cut)."""
    rel = M.release("2.15.0")
    assert rel is not None and rel.requires_python == ">=3.11"
    assert causes._lowest_python(rel) == "3.11"
    assert causes._lowest_python(replace(rel, python=("3.14t", "3.15t"))) == "3.11"
    assert causes._lowest_python(replace(rel, python=())) == "3.11"
    # 2.5.1 says >=3.8.0 but its wheels start at 3.9: the wheels decide
    old = M.release("2.5.1")
    assert old is not None and old.requires_python == ">=3.8.0"
    assert causes._lowest_python(old) == "3.9"
    assert causes._lowest_python(replace(old, python=())) == "3.8.0"


# --- the newest build for a GPU ------------------------------------------------------------------


def test_the_newest_build_for_a_gpu_prefers_one_the_driver_runs() -> None:
    """A TITAN RTX (sm_75) with the matrix cut at 2.14.1: cu126 (driver >= 525.60.13), cu130 and
    cu132 (>= 580) all carry sm_75. The report's driver 440.33.01 runs none: the lowest floor;
    a driver of exactly 580: the newest of those it runs; 579.99: cu126, the one it runs."""
    facts = facts_of(LINUX_TITANRTX)
    pick = causes.newest_with_arch
    cu126 = ("2.14.1", Variant.parse("cu126"), "525.60.13")
    cu132 = ("2.14.1", Variant.parse("cu132"), "580")
    assert pick("7.5", facts, M_TO_2_14, "440.33.01") == cu126
    assert pick("7.5", facts, M_TO_2_14) == cu126
    assert pick("7.5", facts, M_TO_2_14, "580") == cu132
    assert pick("7.5", facts, M_TO_2_14, "580.95.05") == cu132
    assert pick("7.5", facts, M_TO_2_14, "579.99") == cu126
    assert pick("7.5", facts, M_TO_2_14, "525.60.13") == cu126


def test_the_newest_build_for_a_gpu_has_its_native_kernels() -> None:
    """A PTX-only or missing architecture does not count: sm_61 is last native in 2.14.1's cu126;
    sm_37 in 2.7.1's cu118."""
    facts = facts_of(TITANXP)
    assert causes.newest_with_arch("6.1", facts, M) == (
        "2.14.1",
        Variant.parse("cu126"),
        "525.60.13",
    )
    assert causes.newest_with_arch("3.7", facts, M) == (
        "2.7.1",
        Variant.parse("cu118"),
        "450.80.02",
    )
    assert causes.newest_with_arch("3.5", facts, M) is None
    assert causes.newest_with_arch(None, facts, M) is None
    assert causes.newest_with_arch("7.5", facts, None) is None


def test_the_driver_floor_is_the_oses() -> None:
    """On Windows the floors are Windows driver numbers: cu126 needs 528.33 there (525.60.13 on
    Linux); the Quadro M2000 report (sm_52, Windows)."""
    facts = facts_of("windows10-quadro-m2000-cu92-driver391-pip-conda.txt")
    assert facts.os.family == "windows"
    assert causes.newest_with_arch("5.2", facts, M) == ("2.14.1", Variant.parse("cu126"), "528.33")
    assert causes.driver_floor("12.6", "windows", M) == "528.33"
    assert causes.driver_floor("12.6", "linux", M) == "525.60.13"
    assert causes.driver_floor("13.0", "linux", M) == "580"
    assert causes.driver_floor("12.6", "linux", None) is None


# --- the causes each message or fact names -------------------------------------------------------

# The bundled matrix, whose CUDA driver rows go back to CUDA 8.0 (the frozen one's start at 11.6):
# the old reports' toolkits (CUDA 9.2, 10.1, 10.2) have their minimum drivers there.
BUNDLED = mx.load_matrix(mx.BUNDLED_PATH)


def facts_of_text(text: str) -> Facts:
    report = parse(text)
    return report.planning or report.facts


def altered(name: str, old: str, new: str, count: int = 1) -> str:
    """A real report with one passage changed (each test says which and why)."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    assert text.count(old) == count, (name, old)
    return text.replace(old, new)


def found(
    facts: Facts,
    plan: Any = None,
    matrix: Any = M,
    existing: tuple[Finding, ...] = (),
) -> dict[str, Finding]:
    out = causes.findings(facts, plan, matrix, existing)
    codes = [f.code for f in out]
    assert len(codes) == len(set(codes)), codes  # one finding per cause
    return {f.code: f for f in out}


def test_a_cuda_build_newer_than_the_driver_names_the_drivers_floor() -> None:
    """torch 1.3.1 built with CUDA 10.1 on driver 410.48: CUDA 10.1 needs 418.39 and, as a
    toolkit before 11.1, has no minor-version compatibility; no CUDA plan, no command."""
    got = found(facts_of(TITANXP), None, BUNDLED)
    assert list(got) == ["cuda-newer-than-driver"]
    f = got["cuda-newer-than-driver"]
    assert (f.severity, f.title) == (
        "error",
        "torch's CUDA 10.1 needs a newer NVIDIA driver than 410.48",
    )
    assert f.evidence == (
        "torch 1.3.1 is built with CUDA 10.1",
        "NVIDIA driver 410.48",
        "CUDA 10.1 needs driver >= 418.39 (CUDA 11.0 and older have no minor-version "
        "compatibility: each toolkit has its own minimum)",
    )
    assert f.fix == "upgrade the NVIDIA driver to >= 418.39"
    assert f.command is None and f.details == {"min_driver": "418.39"}


def test_the_driver_floor_of_a_cuda_13_build_and_the_build_this_driver_runs() -> None:
    """torch 2.9.0+cu130 on driver 570.172.08: CUDA 13.0 needs 580 (its minor-version floor);
    the plan's CUDA build is the other way out, installed over the old one."""
    facts = facts_of("linux-h100-cu130-driver570.txt")
    plan, _ = safe_plan(facts)
    assert plan is not None and str(plan.variant) == "cu126"
    f = found(facts, plan)["cuda-newer-than-driver"]
    assert f.title == "torch's CUDA 13.0 needs a newer NVIDIA driver than 570.172.08"
    assert f.evidence == (
        "torch 2.9.0 is built with CUDA 13.0",
        "NVIDIA driver 570.172.08",
        "CUDA 13.0 needs driver >= 580",
    )
    assert (
        f.fix == "upgrade the NVIDIA driver to >= 580, or install the build that this driver runs"
    )
    assert f.command == (
        "pip uninstall -y torch torchvision torchaudio && "
        "pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126"
    )
    assert f.details == {"min_driver": "580"}
    # a plan that is no CUDA build offers no command
    cpu = replace(plan, variant=Variant.parse("cpu"))
    assert found(facts, cpu)["cuda-newer-than-driver"].command is None
    assert found(facts, cpu)["cuda-newer-than-driver"].fix == "upgrade the NVIDIA driver to >= 580"


def test_a_driver_at_the_floor_runs_the_build() -> None:
    """The same report with its driver changed: 580 exactly runs CUDA 13.0 (minor-version
    compatibility), 579.99 does not."""
    facts = facts_of("linux-h100-cu130-driver570.txt")
    assert "cuda-newer-than-driver" not in found(with_driver(facts, "580"))
    assert "cuda-newer-than-driver" not in found(with_driver(facts, "580.95.05"))
    assert found(with_driver(facts, "579.99"))["cuda-newer-than-driver"].details == {
        "min_driver": "580"
    }


def test_minor_version_compatibility_starts_at_cuda_11_1() -> None:
    """The H100 report's torch changed to 1.7.1 with CUDA 11.0, then 11.1, on driver 440.33.01:
    11.0 needs its own toolkit minimum (no minor-version compatibility), 11.1 its MVC floor."""
    facts = with_driver(facts_of("linux-h100-cu130-driver570.txt"), "440.33.01")
    eleven0 = with_torch(facts, version="1.7.1", cuda="11.0", variant=Variant.parse("cu110"))
    eleven1 = with_torch(facts, version="1.7.1", cuda="11.1", variant=Variant.parse("cu111"))
    f0 = found(eleven0, None, BUNDLED)["cuda-newer-than-driver"]
    f1 = found(eleven1, None, BUNDLED)["cuda-newer-than-driver"]
    assert f0.evidence[-1] == (
        "CUDA 11.0 needs driver >= 450.51.06 (CUDA 11.0 and older have no minor-version "
        "compatibility: each toolkit has its own minimum)"
    )
    assert f1.evidence[-1] == "CUDA 11.1 needs driver >= 450.80.02"


def test_torchs_driver_too_old_message_without_a_driver_version() -> None:
    """torch 1.12.1+cu102 whose report has no driver line, only torch's message (found version
    9010): the message is the evidence, the driver's CUDA named in the title."""
    facts = facts_of("linux-driver-too-old-9010-cu102.txt")
    f = found(facts, None, BUNDLED)["cuda-newer-than-driver"]
    assert f.title == "torch's CUDA 10.2 needs a newer NVIDIA driver than this one (CUDA 9.1)"
    assert f.evidence == (
        "torch 1.12.1+cu102 is built with CUDA 10.2",
        "torch says: NVIDIA driver on your system is too old (found version 9010) (a driver "
        "for CUDA 9.1 at most) [collect_env:warning]",
        "CUDA 10.2 needs driver >= 440.33 (CUDA 11.0 and older have no minor-version "
        "compatibility: each toolkit has its own minimum)",
    )
    assert f.fix == "upgrade the NVIDIA driver to >= 440.33"
    assert f.details == {"min_driver": "440.33"}
    # with no driver row for CUDA 10.2 (the frozen matrix) the message still says it
    g = found(facts, None, M)["cuda-newer-than-driver"]
    assert g.fix == "upgrade the NVIDIA driver" and g.details == {"min_driver": ""}
    assert g.evidence[-1].startswith("torch says: NVIDIA driver on your system is too old")


def test_torchs_driver_too_old_message_alone() -> None:
    """Only the message (found version 11040), no torch line: the driver runs CUDA 11.4 at
    most; the plan's CUDA build is offered."""
    facts = facts_of("message-driver-too-old-11040-rtx3050.txt")
    assert facts.package("torch") is None
    plan, _ = safe_plan(facts)
    f = found(facts, plan)["cuda-newer-than-driver"]
    assert f.title == (
        "the NVIDIA driver is too old for the installed torch (it runs CUDA 11.4 at most)"
    )
    assert f.evidence == (
        "torch says: NVIDIA driver on your system is too old (found version 11040) (a driver "
        "for CUDA 11.4 at most) [collect_env:warning]",
    )
    assert f.fix == "upgrade the NVIDIA driver, or install the build that this driver runs"
    assert f.command is not None and f.command.startswith(
        "pip uninstall -y torch torchvision torchaudio && pip install torch=="
    )


def test_the_doctors_own_driver_finding_gets_torchs_message() -> None:
    """Where the doctor already found the driver too old, torch's message joins its evidence
    instead of a second finding."""
    facts = facts_of("linux-driver-too-old-9010-cu102.txt")
    doctors = Finding("cuda-newer-than-driver", "error", "the doctor's", evidence=("its own",))
    out = causes.findings(facts, None, BUNDLED, (doctors,))
    assert [f.code for f in out] == ["cuda-newer-than-driver"]
    assert out[0].title == "the doctor's"
    assert out[0].evidence == (
        "its own",
        "torch says: NVIDIA driver on your system is too old (found version 9010) "
        "[collect_env:warning]",
    )
    # without the message the doctor's finding stands alone: nothing is added
    titanxp = facts_of(TITANXP)
    assert causes.findings(titanxp, None, BUNDLED, (doctors,)) == []


def test_a_gpu_too_old_for_every_build_in_the_data() -> None:
    facts = facts_of("warning-only-gt720-capability-3.5.txt")
    f = found(facts)["gpu-too-old"]
    assert (f.severity, f.title) == (
        "error",
        "GeForce GT 720 (compute capability 3.5) is older than the installed torch supports "
        "(its minimum is 3.7)",
    )
    assert f.evidence == (
        "torch says: Found GPU0 GeForce GT 720 which is of cuda capability 3.5. PyTorch no "
        "longer supports this GPU because it is too old. The minimum cuda capability supported "
        "by this library is 3.7 [collect_env:warning]",
    )
    assert f.fix == (
        "no prebuilt torch in the data (1.13 and later) has kernels for this GPU: build torch "
        "from source with TORCH_CUDA_ARCH_LIST=3.5, or run on the CPU"
    )


def test_a_gpu_too_old_for_the_installed_build_names_the_newest_with_its_kernels() -> None:
    """The GT 720 message with the capability changed to 3.7 (and the minimum to 5.0, as a
    CUDA 12 build says): torch 2.7.1+cu118 is the newest build with sm_37."""
    text = altered(
        "warning-only-gt720-capability-3.5.txt", "cuda capability 3.5", "cuda capability 3.7"
    )
    text = text.replace("supported by this library is 3.7", "supported by this library is 5.0")
    f = found(facts_of_text(text))["gpu-too-old"]
    assert f.title.endswith(
        "(compute capability 3.7) is older than the installed torch supports (its minimum is 5.0)"
    )
    assert f.fix == "install torch 2.7.1+cu118: the newest build with sm_37"
    assert found(facts_of_text(text), None, None)["gpu-too-old"].fix.startswith(
        "no prebuilt torch in the data"
    )


def test_two_gpus_too_old_make_one_finding() -> None:
    """The GT 720 message twice, the second for a GT 710 as GPU1 (altered: a machine with two
    Kepler cards): one finding, about the first; the doctor's own gpu-too-old stands alone."""
    name = "warning-only-gt720-capability-3.5.txt"
    text = (FIXTURES / name).read_text(encoding="utf-8")
    first = text[text.index("Found GPU0") : text.index("3.7.") + 4]
    text = text.replace(
        first, first + "\n" + first.replace("GPU0 GeForce GT 720", "GPU1 GeForce GT 710")
    )
    got = causes.findings(facts_of_text(text), None, M, ())
    assert [f.code for f in got] == ["gpu-too-old"]
    assert got[0].title.startswith("GeForce GT 720 ")
    doctors = Finding("gpu-too-old", "error", "the doctor's")
    assert causes.findings(facts_of_text(text), None, M, (doctors,)) == []


@pytest.mark.parametrize(
    ("name", "gpu", "arches"),
    [
        (
            "linux-rtx5090d-cu126-sm120-warning.txt",
            "NVIDIA GeForce RTX 5090 D",
            "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        ),
        (
            "warning-only-windows-rtx5070ti-comfyui-portable.txt",
            "NVIDIA GeForce RTX 5070 Ti",
            "sm_50 sm_60 sm_61 sm_70 sm_75 sm_80 sm_86 sm_90",
        ),
    ],
)
def test_a_gpu_the_installed_wheel_has_no_kernels_for(name: str, gpu: str, arches: str) -> None:
    """sm_120 missing from the installed wheel's list: the plan's CUDA build is the command; with
    no CUDA plan the fix points to `setup-env plan`."""
    facts = facts_of(name)
    plan, _ = safe_plan(facts)
    assert plan is not None and plan.variant is not None and plan.variant.is_cuda
    f = found(facts, plan)["gpu-arch-not-in-wheel"]
    assert (f.severity, f.title) == (
        "error",
        f"the installed torch has no kernels for {gpu} (sm_120)",
    )
    assert f.evidence[1] == f"the installed wheel's architectures: {arches}"
    assert f.evidence[0].startswith(f"torch says: {gpu} with CUDA capability sm_120 is not")
    assert f.evidence[0].endswith(" [collect_env:warning]")
    assert f.fix == "install a build whose architectures include sm_120"
    assert f.command is not None and f.command.startswith(
        "pip uninstall -y torch torchvision torchaudio && "
    )
    assert f.command.endswith(plan.command)
    assert f.details == {"gpu_arch": "sm_120", "wheel_arches": arches}
    cpu = replace(plan, variant=Variant.parse("cpu"))
    assert found(facts, cpu)["gpu-arch-not-in-wheel"].command is None
    none = found(facts, None)["gpu-arch-not-in-wheel"]
    assert (
        none.fix
        == "install a build whose architectures include sm_120: run `setup-env plan` for it"
    )
    assert none.command is None
    # the doctor's own finding of that code stands alone
    doctors = Finding("gpu-arch-not-in-wheel", "error", "the doctor's")
    assert causes.findings(facts, plan, M, (doctors,)) == []


CUDA_NO_KERNEL = (
    "RuntimeError: CUDA error: no kernel image is available for execution on the device"
)


def test_no_kernel_image_is_explained_by_the_missing_architecture() -> None:
    """The RTX 5090 report with CUDA's error line added after torch's warning (what running a
    kernel then prints): the missing sm_120 is the finding, the error is not repeated."""
    name = "warning-only-rtx5090-sm120-torch2.0.1.txt"
    text = (FIXTURES / name).read_text(encoding="utf-8") + "\n" + CUDA_NO_KERNEL + "\n"
    assert list(found(facts_of_text(text))) == ["gpu-arch-not-in-wheel"]


def test_no_kernel_image_alone_says_the_build_lacks_this_gpu() -> None:
    """The report of pytorch/pytorch#72957 (titled with CUDA's error, whose stored copy starts at
    its library list) with the error line added, as its issue body has it."""
    name = "tail-only-conda-torch1.10.2-cu102-libraries.txt"
    text = CUDA_NO_KERNEL + "\n\n" + (FIXTURES / name).read_text(encoding="utf-8")
    f = found(facts_of_text(text))["no-kernel-image"]
    assert (f.severity, f.title) == (
        "error",
        "CUDA said: no kernel image is available for execution on the device",
    )
    assert f.evidence == (
        "torch says: no kernel image is available for execution on the device "
        "[collect_env:warning]",
    )
    assert f.fix == (
        "the installed build lacks this GPU's architecture (or the GPU is too old for it): "
        "install the build `setup-env plan` picks for this GPU"
    )


@pytest.mark.parametrize(
    ("name", "code", "title", "fix"),
    [
        (
            "message-803-unsupported-driver-combination.txt",
            "cuda-init-error-803",
            "CUDA could not start: the CUDA driver library and the kernel module differ (a libcuda "
            "from a container, a cuda-compat package, or a driver upgrade without a reboot)",
            "reboot after a driver upgrade; drop cuda-compat directories from LD_LIBRARY_PATH",
        ),
        (
            "message-804-forward-compat-rtx3090.txt",
            "cuda-init-error-804",
            "CUDA could not start: forward compatibility was attempted on a GPU that does not "
            "support it: a cuda-compat libcuda newer than the driver is loaded, which works only "
            "on data-center GPUs",
            "remove the cuda-compat directory (e.g. /usr/local/cuda/compat) from LD_LIBRARY_PATH, "
            "or upgrade the NVIDIA driver to one that supports torch's CUDA",
        ),
    ],
)
def test_a_cuda_init_error_names_its_cause(name: str, code: str, title: str, fix: str) -> None:
    facts = facts_of(name)
    f = found(facts)[code]
    assert (f.severity, f.title, f.fix) == ("error", title, fix)
    assert len(f.evidence) == 1
    assert f.evidence[0].startswith("torch says: Unexpected error from cudaGetDeviceCount().")
    assert f.evidence[0].endswith(" [collect_env:warning]")


def test_a_cuda_init_error_the_table_lacks() -> None:
    """The 803 report with its error code changed to 100 (not in the table): the code is
    named, and nvidia-smi is the next step."""
    text = altered("message-803-unsupported-driver-combination.txt", "Error 803:", "Error 100:")
    f = found(facts_of_text(text))["cuda-init-error-100"]
    assert (f.title, f.fix) == (
        "CUDA could not start: CUDA error 100 while counting the GPUs",
        "check `nvidia-smi`",
    )


def test_a_library_torch_could_not_load() -> None:
    """cuDNN 8's libcudnn_ops_infer could not be loaded; a second library line (cuDNN fails for
    each of its libraries; libcudnn_cnn_infer added after the real one) makes no second
    finding: the first names the cause."""
    name = "message-cudnn-load-failed.txt"
    line = (
        "Could not load library libcudnn_ops_infer.so.8. Error: libcudnn_ops_infer.so.8: "
        "cannot open shared object file: No such file or directory"
    )
    f = found(facts_of(name))["library-load-failed"]
    assert (f.severity, f.title) == ("error", "torch could not load libcudnn_ops_infer.so.8")
    # the loader's words from the file name nearest them (the line names the file twice)
    assert f.evidence == (
        "torch says: libcudnn_ops_infer.so.8: cannot open shared object file [collect_env:warning]",
    )
    assert f.fix == (
        "reinstall torch so its own nvidia-* libraries come back, and drop system CUDA/cuDNN "
        "directories from LD_LIBRARY_PATH"
    )
    text = altered(name, line, line + "\n" + line.replace("_ops_", "_cnn_"))
    twice = causes.findings(facts_of_text(text), None, M, ())
    assert [g.code for g in twice] == ["library-load-failed"]
    assert twice[0].title == "torch could not load libcudnn_ops_infer.so.8"


def test_a_dll_torch_could_not_load_on_windows_is_fixed_through_path() -> None:
    """cuDNN's Windows loader message (message-cudnn-dll-load-failed-windows.txt): Windows has no
    LD_LIBRARY_PATH and its wheels no nvidia-* packages; the DLLs are torch's own, found on PATH."""
    f = found(facts_of("message-cudnn-dll-load-failed-windows.txt"))["library-load-failed"]
    assert f.title == "torch could not load cudnn_ops_infer64_8.dll"
    assert f.fix == (
        "reinstall torch so the CUDA and cuDNN DLLs in its torch\\lib folder come back, and take "
        "other CUDA/cuDNN folders off PATH"
    )


def test_a_rocm_build_without_code_for_the_gpu() -> None:
    """HIP's "invalid device function" on a 5700 XT whose report names no gfx target: this AMD
    GPU; with its target known (gfx1010, added to the report's GPU), the target by name."""
    facts = facts_of("message-hip-invalid-device-function-5700xt.txt")
    f = found(facts)["rocm-gfx-not-in-wheel"]
    assert (f.severity, f.title) == (
        "error",
        "the installed ROCm torch has no code for this AMD GPU",
    )
    assert f.evidence == ("torch says: HIP error: invalid device function [collect_env:warning]",)
    assert f.fix is not None and f.fix.startswith(
        "install a ROCm build whose gfx list has this GPU"
    )
    assert facts.rocm is not None
    gpu = replace(facts.rocm.gpus[0], gfx_arch="gfx1010")
    named = replace(facts, rocm=replace(facts.rocm, gpus=(gpu, replace(gpu, index=1))))
    assert found(named)["rocm-gfx-not-in-wheel"].title == (
        "the installed ROCm torch has no code for gfx1010"
    )
    doctors = Finding("rocm-gfx-not-in-wheel", "error", "the doctor's")
    assert causes.findings(facts, None, M, (doctors,)) == []


def test_mps_unavailable_names_macos_or_rosetta_as_the_cause() -> None:
    """torch says MPS needs macOS 14.0+. The paste is no collect_env report, its macOS (26.3.1,
    in the issue's prose) unread: no cause named; with the macOS set to 26.3.1 or 14.0: none
    either; to 13.6: macOS is the cause; an x86_64 Python under Rosetta: Rosetta."""
    facts = facts_of("message-mps-macos26.txt")
    assert facts.os.macos_version is None
    f = found(facts)["mps-unavailable"]
    assert (f.severity, f.title) == ("warning", "MPS is not available to this torch")
    assert f.evidence == (
        "torch says: MPS backend is supported on macOS 14.0+ [collect_env:warning]",
    )
    assert f.fix == "use a native arm64 Python on macOS 14 or later"

    def on(version: str) -> str:
        return found(replace(facts, os=replace(facts.os, macos_version=version)))[
            "mps-unavailable"
        ].title

    assert (
        on("13.6")
        == "MPS is not available to this torch: macOS 13.6 is older than the 14.0 it needs"
    )
    assert on("14.0") == "MPS is not available to this torch"
    assert on("26.3.1") == "MPS is not available to this torch"
    rosetta = replace(facts, python=replace(facts.python, rosetta=True))
    assert found(rosetta)["mps-unavailable"].title == (
        "MPS is not available to this torch: the Python is x86_64 under Rosetta "
        "(see rosetta-python)"
    )
    doctors = Finding("mps-unavailable", "warning", "the doctor's")
    assert causes.findings(facts, None, M, (doctors,)) == []


# --- the driver missing, per OS ------------------------------------------------------------------

CENTOS = "driver-missing-centos7-cu110-cut-at-cuda.txt"  # torch's "Found no NVIDIA driver"
UBUNTU = "driver-missing-ubuntu20-cu113-toolkit-no-gpu-list.txt"  # no driver beside a toolkit
CUDA_PLAN = Plan(
    status="ok",
    torch_version="2.14.1",
    variant=Variant.parse("cu126"),
    command="pip install torch==2.14.1 --index-url https://download.pytorch.org/whl/cu126",
    min_driver="525.60.13",
)


def _missing(facts: Facts, plan: Any = None) -> Finding:
    return found(facts, plan)["driver-missing"]


def test_the_driver_missing_is_the_cause_and_its_evidence_the_reports_lines() -> None:
    f = _missing(facts_of(UBUNTU))
    assert (f.severity, f.title) == (
        "error",
        "the NVIDIA driver is missing or not loaded: torch cannot reach the GPU",
    )
    assert f.evidence == (
        "Nvidia driver version: Could not collect [collect_env:Nvidia driver version]",
        "torch 1.10.2 is built with CUDA 11.3 [collect_env:CUDA used to build PyTorch]",
        "a CUDA toolkit 11.3 (nvcc) is installed [collect_env:CUDA runtime version (nvcc "
        "--version)]",
    )
    assert f.details == {"min_driver": ""}
    # the doctor's own driver-missing stands alone
    doctors = Finding("driver-missing", "error", "the doctor's")
    assert "driver-missing" not in found(facts_of(UBUNTU), None, M, (doctors,))


def test_on_ubuntu_ubuntu_drivers_installs_it() -> None:
    f = _missing(facts_of(UBUNTU))
    assert f.fix == (
        "install the driver (`sudo ubuntu-drivers install` on Ubuntu, the nvidia-driver package "
        "on Debian); if it is installed, load it: `sudo modprobe nvidia` (`dmesg` says whether "
        "Secure Boot refused the module), or reboot"
    )
    assert f.command == "sudo ubuntu-drivers install"


def test_on_debian_the_same_words_and_no_ubuntu_command() -> None:
    # the ubuntu20 report with its distribution changed to Debian
    facts = facts_of(UBUNTU)
    f = _missing(replace(facts, os=replace(facts.os, distro_id="debian")))
    assert f.fix == _missing(facts).fix
    assert f.command is None


def test_on_another_distribution_its_package_and_modprobe() -> None:
    f = _missing(facts_of(CENTOS))
    assert f.fix == (
        "install the distribution's NVIDIA driver package; if it is installed, load it: `sudo "
        "modprobe nvidia` (`dmesg` says whether Secure Boot refused the module), or reboot"
    )
    assert f.command == "sudo modprobe nvidia"
    assert f.evidence == (
        "torch says: Found no NVIDIA driver on your system [collect_env:warning]",
        "torch 1.7.0+cu110 is a CUDA build from PyTorch's index [collect_env:PyTorch version]",
    )
    # no distribution known at all: the same
    facts = facts_of(CENTOS)
    unknown = _missing(replace(facts, os=replace(facts.os, distro_id=None)))
    assert (unknown.fix, unknown.command) == (f.fix, f.command)


def test_on_windows_nvidias_download_page() -> None:
    # the centos7 report as if from Windows
    facts = facts_of(CENTOS)
    f = _missing(replace(facts, os=replace(facts.os, family="windows", distro_id=None)))
    assert f.fix == (
        "install the NVIDIA driver from https://www.nvidia.com/Download/index.aspx (or the "
        "NVIDIA App), then reopen the terminal"
    )
    assert f.command is None
    planned = _missing(replace(facts, os=replace(facts.os, family="windows")), CUDA_PLAN)
    assert planned.fix is not None and planned.fix.startswith(
        "install the NVIDIA driver (>= 525.60.13 for the planned build) from https://"
    )


def test_in_wsl2_the_windows_hosts_driver_in_wsl1_the_distributions() -> None:
    """WSL 2 reaches the Windows host's driver; WSL 1 (no GPU of its own) is judged as the
    Linux it runs (the ubuntu20 report, its WSL version set)."""
    facts = facts_of(UBUNTU)
    wsl2 = _missing(replace(facts, os=replace(facts.os, wsl=2)))
    assert wsl2.fix == (
        "install the NVIDIA driver on the Windows host, not inside WSL2 (WSL2 reaches it "
        "through /usr/lib/wsl/lib); then `wsl --shutdown` and reopen"
    )
    assert wsl2.command is None
    wsl1 = _missing(replace(facts, os=replace(facts.os, wsl=1)))
    assert wsl1.command == "sudo ubuntu-drivers install"
    planned = _missing(replace(facts, os=replace(facts.os, wsl=2)), CUDA_PLAN)
    assert planned.fix is not None and planned.fix.startswith(
        "install the NVIDIA driver on the Windows host (>= 525.60.13 for the planned build), "
        "not inside WSL2"
    )


def test_the_planned_cuda_builds_driver_is_named() -> None:
    """With a CUDA plan the fix and the details name the driver it needs; a CPU plan needs
    none."""
    facts = facts_of(UBUNTU)
    f = _missing(facts, CUDA_PLAN)
    assert f.fix is not None and f.fix.startswith(
        "install the driver (>= 525.60.13 for the planned build) (`sudo ubuntu-drivers"
    )
    assert f.details == {"min_driver": "525.60.13"}
    centos = _missing(facts_of(CENTOS), CUDA_PLAN)
    assert centos.fix is not None and centos.fix.startswith(
        "install the distribution's NVIDIA driver package (>= 525.60.13 for the planned build);"
    )
    cpu = replace(CUDA_PLAN, variant=Variant.parse("cpu"))
    assert _missing(facts, cpu).details == {"min_driver": ""}
    assert "(>=" not in (_missing(facts, cpu).fix or "")


# --- apply: the doctor's findings and the causes together ----------------------------------------


def test_a_missing_driver_replaces_the_toolkit_without_driver_note() -> None:
    """Not "nothing to do, torch runs on the CPU": the driver is the cause to fix."""
    doctors = (_f("toolkit-without-driver", "info"), _f("several-installs", "warning"))
    out = causes.apply(facts_of(UBUNTU), None, M, doctors)
    assert [f.code for f in out] == ["driver-missing", "several-installs"]
    # without a missing driver the doctor's note stands
    cpu = facts_of("debian12-cpu-torch2.13.txt")
    assert [f.code for f in causes.apply(cpu, None, M, doctors)] == [
        "several-installs",
        "toolkit-without-driver",
    ]


def test_on_a_jetson_no_nvidia_smi_is_no_missing_driver() -> None:
    facts = facts_of("jetson-agx-orin-nv23.02.txt")
    doctors = (
        _f("toolkit-without-driver", "info"),
        _f("gpu-without-driver"),
        _f("several-installs", "warning"),
    )
    out = causes.apply(facts, None, M, doctors)
    assert [f.code for f in out] == ["several-installs", "jetson-nvidia-build"]


def test_a_precise_cause_replaces_the_doctors_of_the_same_code() -> None:
    facts = facts_of("message-803-unsupported-driver-combination.txt")
    doctors = (
        Finding("cuda-init-error-803", "error", "the doctor's"),
        _f("mig-enabled", "warning"),
    )
    out = causes.apply(facts, None, M, doctors)
    assert [(f.code, f.title.startswith("CUDA could not start")) for f in out] == [
        ("cuda-init-error-803", True),
        ("mig-enabled", False),
    ]


# --- Jetson ---------------------------------------------------------------------------------------


def test_a_jetson_is_known_by_any_one_of_its_marks() -> None:
    facts = facts_of("jetson-agx-orin-nv23.02.txt")
    assert facts.os.kernel == "5.10.120-tegra"
    bare = replace(
        facts,
        jetson=None,
        os=replace(facts.os, kernel="5.15.0-105-generic"),
        notes=tuple(n for n in facts.notes if n.code != "jetson"),
    )
    assert not causes.is_jetson(bare)
    assert causes.is_jetson(replace(bare, os=facts.os))  # the L4T kernel alone
    jetson_notes = tuple(n for n in facts.notes if n.code == "jetson")
    assert jetson_notes and causes.is_jetson(replace(bare, notes=jetson_notes))  # the note alone
    assert not causes.is_jetson(replace(bare, os=replace(bare.os, kernel=None)))
    assert not causes.is_jetson(facts_of(TITANXP))


def test_nvidias_jetson_build_is_noted_a_desktop_wheel_is_the_error() -> None:
    facts = facts_of("jetson-agx-orin-nv23.02.txt")
    f = found(facts)["jetson-nvidia-build"]
    assert (f.severity, f.command, f.fix) == ("info", None, None)
    assert f.evidence[-1] == "L4T kernel 5.10.120-tegra"
    # the same Jetson with its torch changed to PyTorch's 2.4.1 (cu124) aarch64 wheel
    desktop = with_torch(facts, version="2.4.1", variant=Variant.parse("cu124"), cuda="12.4")
    g = found(desktop)["jetson-desktop-wheel"]
    assert g.severity == "error"
    assert g.title == (
        "torch 2.4.1 is PyTorch's linux_aarch64 (cu124) wheel, an SBSA server build: on this "
        "JetPack it finds no usable GPU"
    )
    assert g.command == "python3 -m pip uninstall -y torch torchvision torchaudio"
    # and what to install instead (this report names no JetPack release: the plan tells)
    assert g.fix == "install NVIDIA's Jetson build of torch for this JetPack (see `setup-env plan`)"
    assert g.evidence[-1] == "L4T kernel 5.10.120-tegra"
    # not a Jetson (the marks gone): no Jetson finding
    bare = replace(
        desktop,
        jetson=None,
        os=replace(facts.os, kernel="5.15.0-105-generic"),
        notes=tuple(n for n in facts.notes if n.code != "jetson"),
    )
    assert not {"jetson-desktop-wheel", "jetson-nvidia-build"} & set(found(bare))


# --- pip's NVIDIA libraries -----------------------------------------------------------------------


def test_nvidia_libraries_for_another_cuda_major_than_torchs() -> None:
    """vllm's library list (torch 2.7.0+cu128 with the -cu12 libraries): no finding; the same
    list with torch changed to a CUDA 13.0 build: the -cu12 libraries are the wrong ones."""
    name = "vllm-tail-libraries-topology.txt"
    report = parse((FIXTURES / name).read_text(encoding="utf-8"))
    facts = report.planning or report.facts
    assert causes.library_findings(facts, report.libraries) == []
    cu13 = with_torch(facts, version="2.9.0+cu130", variant=Variant.parse("cu130"), cuda="13.0")
    (f,) = causes.library_findings(cu13, report.libraries)
    wrong = [
        "nvidia-curand-cu12==10.3.9.55",
        "nvidia-cusolver-cu12==11.7.2.55",
        "nvidia-cusparse-cu12==12.5.7.53",
        "nvidia-cusparselt-cu12==0.6.3",
        "nvidia-nccl-cu12==2.26.2",
        "nvidia-nvjitlink-cu12==12.8.61",
        "nvidia-nvtx-cu12==12.8.55",
    ]
    assert (f.code, f.severity) == ("nvidia-libs-mismatch", "error")
    assert f.title == "pip's NVIDIA libraries are for another CUDA than torch's 13.0"
    assert f.evidence == ("torch 2.9.0+cu130 CUDA 13.0", *wrong)
    assert f.fix == "uninstall them; torch 2.9.0+cu130 brings its own CUDA 13 libraries"
    assert f.command == "python -m pip uninstall -y " + " ".join(w.split("==")[0] for w in wrong)
    # a CPU build of torch has no CUDA to match
    cpu = with_torch(facts, version="2.7.0+cpu", variant=Variant.parse("cpu"), cuda=None)
    assert causes.library_findings(cpu, report.libraries) == []


# --- keep: what the kept build says ---------------------------------------------------------------


def test_the_kept_build_says_what_the_plan_would_have_put_in_its_place() -> None:
    facts = facts_of(WIN_TITANRTX)
    plan, _ = safe_plan(facts)
    assert plan is not None and plan.status == "fallback"
    keep = causes.keep_installed(facts, plan, (), AVAILABLE)
    assert keep is not None
    assert (keep.replaced, keep.planned) == ("torch 1.13.1 (cpu)", True)
    assert (keep.torch, keep.variant) == ("1.5.0+cu101", Variant.parse("cu101"))
    # no plan made: nothing replaced
    alone = causes.keep_installed(facts, None, (), AVAILABLE)
    assert alone is not None and (alone.replaced, alone.planned) == (None, False)
    # a plan with no command replaces nothing either
    empty = replace(plan, command="")
    kept = causes.keep_installed(facts, empty, (), AVAILABLE)
    assert kept is not None and kept.replaced is None and kept.planned
    # a plan that names no version replaces nothing
    unnamed = replace(plan, torch_version=None)
    kept = causes.keep_installed(facts, unnamed, (), AVAILABLE)
    assert kept is not None and kept.replaced is None


def test_the_kept_build_label_names_the_variant_once() -> None:
    linux = _keep(facts_of(LINUX_TITANRTX))
    assert linux is not None and linux.label == "torch 1.4.0 (cu100)"
    windows = _keep(facts_of(WIN_TITANRTX))
    assert windows is not None and windows.label == "torch 1.5.0+cu101"
    plain = _keep(with_torch(facts_of("find-env-rtx2060-torch1.1-driver418.txt"), variant=None))
    assert plain is not None and plain.label == "torch 1.1.0"
    assert plain.summary == "keep the installed torch 1.1.0: CUDA works on GeForce RTX 2060"


def test_only_its_own_accelerator_reported_available_keeps_a_build() -> None:
    """A ROCm build is judged by the HIP answer, an XPU build by XPU's, a CUDA build by CUDA's."""
    rocm = facts_of("windows-rocm-gfx1201.txt")
    assert causes.keep_installed(rocm, None, (), {"rocm": True}) is not None
    assert causes.keep_installed(rocm, None, (), {"cuda": True, "xpu": True}) is None
    cuda = facts_of(WIN_TITANRTX)
    assert causes.keep_installed(cuda, None, (), {"cuda": True}) is not None
    assert causes.keep_installed(cuda, None, (), {"rocm": True, "xpu": True}) is None
    xpu = facts_of("linux-arc-pro-b60-xpu-torch2.11.txt")
    assert causes.keep_installed(xpu, None, (), {"xpu": True}) is not None
    assert causes.keep_installed(xpu, None, (), {"cuda": True, "rocm": True}) is None
    no_torch = replace(cuda, packages=tuple(p for p in cuda.packages if p.name != "torch"))
    assert causes.keep_installed(no_torch, None, (), AVAILABLE) is None


# --- the newest build, more boundaries -----------------------------------------------------------


def test_the_route_goes_to_the_build_the_driver_already_runs() -> None:
    """The 4x TITAN RTX report with its driver changed to 580, the matrix cut at 2.14.1: cu132
    (which 580 runs) is the route's build, not cu126 (the lowest floor); only the Python is to
    change."""
    facts = with_driver(facts_of(LINUX_TITANRTX), "580")
    road = causes.route(facts, None, M_TO_2_14)
    assert road is not None and (road.torch, str(road.variant)) == ("2.14.1", "cu132")
    assert steps(road) == [
        ("python", "Python >= 3.10"),
        ("torch", "torch 2.14.1+cu132: the newest build with sm_75"),
    ]


def test_no_driver_floor_is_invented_for_a_cuda_without_a_driver_row() -> None:
    """The frozen matrix with its CUDA 13.2 driver row cut: the newest build for sm_120 (cu132)
    has no known floor, and the route asks for no driver version."""
    cut = replace(M, cuda={k: v for k, v in M.cuda.items() if k != "13.2"})
    facts = facts_of(TITANXP)
    assert causes.newest_with_arch("12.0", facts, cut) == ("2.15.0", Variant.parse("cu132"), "")
    road = causes.route(facts_of(UBUNTU), None, cut)
    assert road is not None and str(road.variant) == "cu132"
    assert [k for k, _ in steps(road)] == ["python", "torch"]


def test_an_unknown_gpu_is_routed_by_pypis_build_where_the_index_has_none() -> None:
    """The frozen matrix cut to its newest release: 2.15.0's Linux index builds are unverified,
    so PyPI's default cu132 build alone says which GPUs the newest build carries."""
    only = replace(M, releases=M.releases[-1:])
    road = causes.route(facts_of(UBUNTU), None, only)
    assert road is not None and (road.torch, str(road.variant)) == ("2.15.0", "cu132")
    assert steps(road)[-1] == ("torch", "torch 2.15.0+cu132: the newest CUDA build")


def test_an_unknown_gpu_on_windows_is_routed_by_the_index_build() -> None:
    """On Windows PyPI serves the CPU build: the index's cu130 is the newest CUDA build (the
    ubuntu20 report, unknown GPU model, as if from Windows)."""
    facts = facts_of(UBUNTU)
    windows = replace(facts, os=replace(facts.os, family="windows", distro_id=None))
    road = causes.route(windows, None, M)
    assert road is not None and (road.torch, str(road.variant)) == ("2.15.0", "cu130")
    assert steps(road)[-1] == ("torch", "torch 2.15.0+cu130: the newest CUDA build")


def test_the_newest_native_architecture_is_not_a_ptx_only_one() -> None:
    """The newest build's top entry (sm_120 of 2.15.0+cu132, Linux) changed to PTX only: an
    unknown GPU is assumed to be one the build has native kernels for, sm_100."""
    facts = facts_of(UBUNTU)
    assert causes._newest_arch(facts, M) == "12.0"
    key = (Variant.parse("cu132"), "2.15.0", "linux_x86_64")
    build = M.builds[key]
    assert (12, 0) in build.sass and (12, 0) not in build.ptx
    moved = replace(
        build, sass=tuple(a for a in build.sass if a != (12, 0)), ptx=(*build.ptx, (12, 0))
    )
    ptx_top = replace(M, builds={**M.builds, key: moved})
    assert causes._newest_arch(facts, ptx_top) == "10.0"


def test_no_newest_cuda_architecture_where_no_release_has_a_cuda_build() -> None:
    """macOS x86_64 (the Python 2.7 report): PyPI's last wheels (2.2.2) are CPU builds and
    later releases have none for it; no CUDA build, no architecture to assume."""
    facts = facts_of("macos10.15-no-torch-py27.txt")
    assert causes._newest_arch(facts, M) is None


def test_without_the_matrix_a_driver_is_judged_by_torchs_message_only() -> None:
    """No wheel matrix, no driver rows: the TITAN Xp report's CUDA 10.1 on 410.48 is not judged
    (nothing says its floor); torch's own message still is."""
    assert causes.findings(facts_of(TITANXP), None, None, ()) == []
    nine = facts_of("linux-driver-too-old-9010-cu102.txt")
    f = found(nine, None, None)["cuda-newer-than-driver"]
    assert f.fix == "upgrade the NVIDIA driver" and f.details == {"min_driver": ""}


def test_the_gfx_targets_of_a_rocm_build_without_code_are_named_once_in_order() -> None:
    """The 5700 XT report's GPU given gfx1030 and a second GPU gfx1010 (altered): both named,
    sorted; with no AMD GPU in the facts at all, "this AMD GPU"."""
    facts = facts_of("message-hip-invalid-device-function-5700xt.txt")
    assert facts.rocm is not None
    gpu = facts.rocm.gpus[0]
    two = (replace(gpu, gfx_arch="gfx1030"), replace(gpu, index=1, gfx_arch="gfx1010"))
    named = replace(facts, rocm=replace(facts.rocm, gpus=two))
    assert found(named)["rocm-gfx-not-in-wheel"].title == (
        "the installed ROCm torch has no code for gfx1010, gfx1030"
    )
    unknown = replace(facts, rocm=None)
    assert found(unknown)["rocm-gfx-not-in-wheel"].title.endswith("no code for this AMD GPU")


def test_a_jetson_known_by_its_note_alone_names_no_kernel() -> None:
    """The nv23.02 report without its L4T kernel line (cut): the Jetson note says it; the
    evidence says the kernel is unknown."""
    facts = facts_of("jetson-agx-orin-nv23.02.txt")
    cut = replace(facts, os=replace(facts.os, kernel=None))
    assert causes.is_jetson(cut)
    f = found(cut)["jetson-nvidia-build"]
    assert f.evidence[-1] == "L4T kernel ?"


def test_a_windows_cuda_build_is_judged_by_windows_driver_numbers() -> None:
    """torch 1.3.0 with CUDA 9.2 on Windows driver 391.74: Windows' minimum for CUDA 9.2 is
    398.26 (Linux's, for its newest update 9.2.148, is 396.37)."""
    facts = facts_of("windows10-quadro-m2000-cu92-driver391-pip-conda.txt")
    f = found(facts, None, BUNDLED)["cuda-newer-than-driver"]
    assert f.details == {"min_driver": "398.26"}
    linux = replace(facts, os=replace(facts.os, family="linux"))
    assert found(linux, None, BUNDLED)["cuda-newer-than-driver"].details == {"min_driver": "396.37"}


def test_apply_judges_with_the_plan_and_the_matrix_it_is_given() -> None:
    missing = causes.apply(facts_of(UBUNTU), CUDA_PLAN, M, ())
    assert [(f.code, f.details) for f in missing] == [
        ("driver-missing", {"min_driver": "525.60.13"})
    ]
    assert [f.code for f in causes.apply(facts_of(TITANXP), None, BUNDLED, ())] == [
        "cuda-newer-than-driver"
    ]
    assert causes.apply(facts_of(TITANXP), None, None, ()) == ()


def test_with_a_missing_driver_the_other_causes_still_replace_the_doctors() -> None:
    """The centos7 report (torch found no driver) with the cuDNN load failure of the cudnn
    report added: both causes, the doctor's library finding and its toolkit note replaced."""
    line = (FIXTURES / "message-cudnn-load-failed.txt").read_text(encoding="utf-8")
    line = next(x for x in line.splitlines() if x.startswith("Could not load library"))
    text = (FIXTURES / CENTOS).read_text(encoding="utf-8") + "\n" + line + "\n"
    doctors = (
        _f("toolkit-without-driver", "info"),
        Finding("library-load-failed", "error", "the doctor's"),
    )
    out = causes.apply(facts_of_text(text), None, M, doctors)
    assert [(f.code, f.title) for f in out] == [
        (
            "driver-missing",
            "the NVIDIA driver is missing or not loaded: torch cannot reach the GPU",
        ),
        ("library-load-failed", "torch could not load libcudnn_ops_infer.so.8"),
    ]


def test_on_a_jetson_the_jetson_finding_replaces_the_doctors() -> None:
    facts = facts_of("jetson-agx-orin-nv23.02.txt")
    doctors = (Finding("jetson-nvidia-build", "info", "the doctor's"), _f("gpu-without-driver"))
    out = causes.apply(facts, None, M, doctors)
    assert [(f.code, f.title == "the doctor's") for f in out] == [("jetson-nvidia-build", False)]


def test_no_cpu_route_when_only_the_torch_step_is_left() -> None:
    """debian12's CPU machine with its own Python 3.11.7 and no plan made: the newest CPU build
    installs as things are, no route."""
    assert causes.route(facts_of("debian12-cpu-torch2.13.txt"), None, M) is None


def test_a_cpu_build_on_the_index_alone_is_a_route() -> None:
    """The frozen matrix with 2.15.0's PyPI files cut: its CPU build on download.pytorch.org
    still makes it the newest CPU build for linux_x86_64."""
    rel = M.release("2.15.0")
    assert rel is not None and rel.platform_tags("linux_x86_64")
    cut = replace(M, releases=(*M.releases[:-1], replace(rel, pypi_files={})))
    facts = with_python(facts_of("debian12-cpu-torch2.13.txt"), "3.6.9")
    road = causes.route(facts, None, cut)
    assert road is not None and (road.torch, str(road.variant)) == ("2.15.0", "cpu")


def test_two_mps_messages_make_one_finding() -> None:
    """The macOS 26 paste with torch's other MPS refusal added (a build without MPS, as a second
    environment would print it): one mps-unavailable finding, about the first."""
    name = "message-mps-macos26.txt"
    extra = "MPS not available because the current PyTorch install was not built with MPS enabled."
    text = (FIXTURES / name).read_text(encoding="utf-8") + "\n" + extra + "\n"
    facts = facts_of_text(text)
    assert [m.kind for m in causes._messages(facts)] == ["mps-unavailable", "mps-unavailable"]
    got = causes.findings(facts, None, M, ())
    assert [f.code for f in got] == ["mps-unavailable"]
    assert got[0].evidence == (
        "torch says: MPS backend is supported on macOS 14.0+ [collect_env:warning]",
    )


def test_a_gpu_build_named_without_a_command_does_not_undo_the_keep() -> None:
    """A plan that names a CUDA build but has no command for it (nothing installs as things
    are) leaves the working build kept."""
    facts = facts_of(WIN_TITANRTX)
    named = Plan(status="none", torch_version="2.15.0", variant=Variant.parse("cu130"))
    keep = causes.keep_installed(facts, named, (), AVAILABLE)
    assert keep is not None and keep.replaced is None


@pytest.mark.parametrize(
    ("name", "cut"),
    [
        (WIN_TITANRTX, "nvidia"),
        ("windows-rocm-gfx1201.txt", "rocm"),
        ("linux-arc-pro-b60-xpu-torch2.11.txt", "xpu"),
    ],
)
def test_a_kept_build_whose_report_names_no_gpus(name: str, cut: str) -> None:
    """The report's GPU section cut (no NVIDIA, AMD or Intel GPU facts): the build is kept on
    its own answer, and the summary names no GPUs."""
    facts = replace(facts_of(name), **{cut: None})
    if cut == "xpu":
        facts = with_python(facts, "3.8.10")  # as above: no XPU build installs
    keep = causes.keep_installed(facts, None, (), AVAILABLE)
    assert keep is not None and keep.gpus == ()
    assert keep.summary.endswith(" works")


def test_a_kept_cuda_build_without_a_driver_line_names_no_driver() -> None:
    # the Windows TITAN RTX report without its driver version (cut)
    keep = causes.keep_installed(with_driver(facts_of(WIN_TITANRTX), None), None, (), AVAILABLE)
    assert keep is not None
    assert keep.evidence == ("torch 1.5.0+cu101 reports CUDA available",)
