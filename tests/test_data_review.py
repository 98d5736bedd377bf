"""The corrected rows of the data review of 2026-12 (issue 12 item 6), each pinned.

Sources (re-read for this change; see scripts/build_matrix.py and scripts/build_gpus.py rows):
pytorch/pytorch .ci/aarch64_linux/aarch64_ci_build.sh (12.6 -> "9.0", 12.8 -> "9.0;10.0;12.0"),
pytorch/pytorch#172598 (Volta excluded from the 12.8/12.9 builds, 2026-01-15), NVIDIA's CUDA
release notes table 2 (12.x minor-version floor: Linux 525.60.13, Windows 528.33)."""

from __future__ import annotations

import json
from dataclasses import asdict

from setup_env.decide.model import PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, Variant

V = Variant.parse

M = mx.load_matrix(mx.BUNDLED_PATH)


def _all_text(plan: object) -> str:
    return json.dumps(asdict(plan), default=str)  # type: ignore[call-overload]


def test_aarch64_cuda_wheels_of_2_6_and_2_7_carry_no_sm_7x() -> None:
    for variant, release in (("cu126", "2.6.0"), ("cu128", "2.7.0"), ("cu128", "2.7.1")):
        b = M.build(V(variant), release, "linux_aarch64")
        assert b is not None, (variant, release)
        assert min(b.sass) >= (9, 0), (variant, release, b.sass)


def test_g5g_plans_cpu_and_never_mentions_2_6_cu126() -> None:
    facts = spec_facts(os="linux", arch="aarch64", python="3.12", gpus=["NVIDIA T4G"])
    for opts in (PlanOptions(), PlanOptions(torch="2.6")):
        p = make_plan(facts, opts, M)
        assert p.variant == CPU and p.status == "fallback"
        assert "2.6.0+cu126" not in _all_text(p)


def test_cu129_of_2_11_to_2_13_has_no_sm_70() -> None:
    for release in ("2.11.0", "2.12.0", "2.12.1", "2.13.0"):
        b = M.build(V("cu129"), release, "linux_x86_64")
        if b is None:
            continue
        assert (7, 0) not in b.sass and (7, 5) in b.sass, release
    b = M.build(V("cu129"), "2.10.0", "linux_x86_64")
    assert b is not None and (7, 0) in b.sass  # Volta stayed until 2.10
    # So a V100 with a 12.9-capable driver gets cu126, not cu129, from 2.11 on.
    facts = spec_facts(os="linux", gpus=["Tesla V100-SXM2-16GB"], driver="575.57.08")
    p = make_plan(facts, PlanOptions(torch="2.13"), M)
    assert p.variant == V("cu126")


def test_windows_12x_minor_version_floor_is_528_33() -> None:
    row = M.cuda_version("12.6")
    assert row is not None
    assert row.mvc.for_os("windows")[1] == "528.33"
    assert row.mvc.for_os("linux")[1] == "525.60.13"
