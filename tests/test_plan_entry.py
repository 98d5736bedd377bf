"""make_plan, the planner's entry (setup_env/decide/plan/__init__.py), issue 22: which matrix it
plans from, which matrix checks the options, and when a machine takes the JetPack-matched route
instead of the desktop one."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from setup_env.decide.model import Plan, PlanError, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

FIXTURES = Path(__file__).parent / "fixtures"
SUBSET = FIXTURES / "matrix" / "wheels-subset.json"  # frozen: see its SOURCE

JETSON_WARNING = "never install an nvidia driver on a jetson"
JETPACK_INDEX = "https://pypi.jetson-ai-lab.io/"


def _jetson_route(plan: Plan) -> bool:
    return any(JETSON_WARNING in w.lower() for w in plan.warnings)


def _orin_named(arch: str | None = "aarch64") -> Facts:
    """`--os linux --arch ARCH --python 3.10 --gpu "Jetson AGX Orin"` (no JetPack named)."""
    facts = spec_facts(os="linux", arch=arch or "aarch64", python="3.10", gpus=["Jetson AGX Orin"])
    if arch is None:
        facts = dataclasses.replace(facts, cpu=dataclasses.replace(facts.cpu, architecture=None))
    return facts


def test_without_a_matrix_the_bundled_one_is_planned_from() -> None:
    """Python 3.8: the bundled matrix's last release for it is 2.4.1, the frozen subset's 2.2.2."""
    facts = spec_facts(os="linux", python="3.8", glibc="2.35", gpus=["RTX 4090"], driver="580.95")
    bundled = make_plan(facts, None, mx.load_matrix(mx.BUNDLED_PATH))
    assert bundled.command == "pip install torch==2.4.1"
    assert make_plan(facts) == bundled
    # anything that is not a Matrix is no matrix
    assert make_plan(facts, None, str(SUBSET)) == bundled
    assert make_plan(facts, None, mx.load_matrix(SUBSET)).command == "pip install torch==2.2.2"


def test_the_variant_asked_is_checked_against_the_matrix_planned_from() -> None:
    """cu117 is in the bundled matrix, not in the frozen subset: the subset refuses it and names
    what it knows; the bundled one plans it."""
    facts = spec_facts(os="linux", python="3.10", glibc="2.35", gpus=["RTX 3090"], driver="580.95")
    subset = mx.load_matrix(SUBSET)
    with pytest.raises(PlanError) as err:
        make_plan(facts, PlanOptions(variant="cu117"), subset)
    known = ", ".join(str(v) for v in sorted(subset.variants))
    assert str(err.value) == f"unknown variant 'cu117': the matrix knows {known}"
    with pytest.raises(PlanError) as err:  # unknown to both: the one planned from is named
        make_plan(facts, PlanOptions(variant="cu999", channel="nightly"), subset)
    assert str(err.value) == f"unknown variant 'cu999': the matrix knows {known}"
    plan = make_plan(facts, PlanOptions(variant="cu117"), mx.load_matrix(mx.BUNDLED_PATH))
    assert plan.status == "ok" and str(plan.variant) == "cu117", plan


def test_a_jetson_named_on_an_arm_or_unknown_cpu_takes_the_jetpack_route() -> None:
    m = mx.load_matrix(mx.BUNDLED_PATH)
    for facts in (_orin_named("aarch64"), _orin_named(None)):
        plan = make_plan(facts, None, m)
        assert _jetson_route(plan) and JETPACK_INDEX in plan.command, plan


def test_a_jetson_named_on_an_x86_cpu_is_planned_as_a_desktop() -> None:
    """No Jetson is an x86 machine: the name alone does not make the JetPack route."""
    plan = make_plan(_orin_named("x86_64"), None, mx.load_matrix(mx.BUNDLED_PATH))
    assert not _jetson_route(plan) and JETPACK_INDEX not in plan.command, plan


def test_a_detected_jetson_takes_the_route_without_any_nvidia_facts() -> None:
    """The Orin NX capture, its nvidia block dropped: the detected Jetson alone is enough."""
    orin = detect(ReplayHost(FIXTURES / "hosts" / "jetson-orin-nx-jp62"))
    assert orin.jetson is not None
    plan = make_plan(dataclasses.replace(orin, nvidia=None), None, mx.load_matrix(mx.BUNDLED_PATH))
    assert _jetson_route(plan) and JETPACK_INDEX in plan.command, plan


def test_an_arm_server_without_a_jetson_is_planned_as_a_desktop() -> None:
    """A GH200 (aarch64, an NVIDIA GPU that is no Jetson): PyTorch's own aarch64 CUDA wheel."""
    facts = spec_facts(os="linux", arch="aarch64", python="3.12", gpus=["GH200"], driver="580.95")
    plan = make_plan(facts, None, mx.load_matrix(mx.BUNDLED_PATH))
    assert plan.status == "ok" and not _jetson_route(plan), plan
    assert JETPACK_INDEX not in plan.command


def test_a_variant_asked_on_a_jetson_plans_that_variant_not_jetpacks() -> None:
    plan = make_plan(_orin_named(), PlanOptions(variant="cu126"), mx.load_matrix(mx.BUNDLED_PATH))
    assert not _jetson_route(plan) and JETPACK_INDEX not in plan.command, plan
    assert plan.command.endswith("--index-url https://download.pytorch.org/whl/cu126")


def test_the_jetpack_7_route_plans_the_general_way_with_the_jetson_warnings_kept() -> None:
    """Thor on JetPack 7 runs PyTorch's SBSA CUDA 13 wheel (PyPI's own aarch64 wheel): jetsonplan
    asks the general planner for the plain facts (same options), and the warnings stay."""
    m = mx.load_matrix(mx.BUNDLED_PATH)
    thor = detect(ReplayHost(FIXTURES / "hosts" / "jetson-agx-thor-jp7"))
    plan = make_plan(thor, None, m)
    assert plan.status == "ok" and _jetson_route(plan), plan
    assert plan.command == "pip install torch==2.15.0" and str(plan.variant) == "cu132", plan
    # the same options reach the general planner: an installer asked for is the one used
    uv = make_plan(thor, PlanOptions(installer="uv"), m)
    assert uv.command == "uv pip install torch==2.15.0", uv
