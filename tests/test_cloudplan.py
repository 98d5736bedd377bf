"""Planning for a cloud instance: argument handling, synthesised facts, advice, GPU visibility,
and the planner's answer for the instance types an expert is asked about most."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

import pytest
from packaging.version import Version

from setup_env.decide import cloudplan
from setup_env.decide.cloudplan import CloudPlanError
from setup_env.decide.model import Plan, PlanOptions
from setup_env.facts import CloudInfo, Facts, Gpu, NvidiaInfo, OSInfo, PythonInfo
from setup_env.knowledge import cloud_catalog
from setup_env.knowledge.variant import KINDS, Variant

LOCAL = Facts(python=PythonInfo(version="3.12.7", machine="x86_64"))


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cloudplan.add_plan_arguments(parser)
    return parser.parse_args(list(argv))


def what_if(*argv: str) -> tuple[Facts, cloudplan.CloudAdvice]:
    facts, advice = cloudplan.apply(parse(*argv), LOCAL)
    assert advice is not None
    return facts, advice


def test_no_cloud_no_advice() -> None:
    assert cloudplan.apply(parse(), LOCAL) == (LOCAL, None)


def test_g5_facts() -> None:
    facts, advice = what_if("--cloud", "aws", "--instance-type", "G5.12XLARGE")
    assert [g.name for g in facts.gpus] == ["NVIDIA A10G"] * 4
    assert {g.compute_capability for g in facts.gpus} == {"8.6"}
    assert facts.nvidia is not None and facts.nvidia.driver_version is None
    assert (facts.os.distro_id, facts.os.distro_version, facts.os.glibc) == (
        "ubuntu",
        "24.04",
        "2.39",
    )
    assert facts.cpu.architecture == "x86_64" and facts.python.machine == "x86_64"
    assert facts.python.version == "3.12.7"  # the local interpreter's
    assert facts.python.tags[0] == "cp312-cp312-manylinux_2_39_x86_64"
    assert "cp312-cp312-manylinux_2_28_x86_64" in facts.python.tags
    assert facts.cloud is not None and facts.cloud.instance_type == "g5.12xlarge"
    assert advice.driver_route == "dlami" and advice.kernel_modules == "open"
    assert advice.image_assumed and not advice.fabric_manager
    # The facts round-trip like detected ones (the planner and --json see no difference).
    assert Facts.from_json(facts.to_json()) == facts


def test_python_flag_wins() -> None:
    args = parse("--cloud", "gcp", "--instance-type", "g2-standard-8")
    args.python = "3.11"
    facts, _ = cloudplan.apply(args, LOCAL)
    assert facts.python.version == "3.11" and facts.python.tags[0].startswith("cp311-cp311-")


def test_g5g_is_aarch64_with_honest_answer() -> None:
    facts, advice = what_if("--cloud", "aws", "--instance-type", "g5g.xlarge")
    assert facts.cpu.architecture == "aarch64"
    assert facts.python.tags[0] == "cp312-cp312-manylinux_2_39_aarch64"
    assert any("TORCH_CUDA_ARCH_LIST=7.5" in line for line in advice.lines)
    assert any("/arm64/" in line for line in advice.lines)


def test_amazon_linux_2_glibc_is_too_old_for_manylinux_2_28() -> None:
    facts, _ = what_if(
        "--cloud", "aws", "--instance-type", "g4dn.xlarge", "--image", "amazon-linux-2"
    )
    assert facts.os.glibc == "2.26"
    assert not any("manylinux_2_28" in t for t in facts.python.tags)


def test_dlami_image_ships_the_driver() -> None:
    facts, advice = what_if(
        "--cloud", "aws", "--instance-type", "p5.48xlarge", "--image", "dlami-ubuntu-24.04"
    )
    assert facts.nvidia is not None and facts.nvidia.cuda_driver_version == "13.2"
    assert advice.driver_route == "image" and advice.image_driver_branch == "595"
    assert advice.fabric_manager


def test_unknown_instance_type_lists_close_matches() -> None:
    with pytest.raises(CloudPlanError, match=r"did you mean p4d\.24xlarge"):
        cloudplan.apply(parse("--cloud", "aws", "--instance-type", "p4d.24xlarg"), LOCAL)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("--cloud", "ibm", "--instance-type", "gx3"), "unknown cloud 'ibm'"),
        (("--cloud", "aws"), "needs --instance-type"),
        (("--cloud", "aws", "--instance-type", "g5.xlarge", "--image", "win11"), "unknown image"),
        (("--image", "ubuntu-22.04"), "--image needs --instance-type"),
        (("--instance-type", "m5.large"), "not in the GPU instance catalogue"),
    ],
)
def test_bad_input_is_one_clear_line(argv: tuple[str, ...], message: str) -> None:
    with pytest.raises(CloudPlanError, match=message) as err:
        cloudplan.apply(parse(*argv), LOCAL)
    assert "\n" not in str(err.value)


def test_provider_inferred_from_a_unique_name() -> None:
    _facts, advice = what_if("--instance-type", "standard_nd96isr_h100_v5")
    assert advice.provider == "azure" and advice.fabric_manager


def _detected(gpus: int, env: dict[str, str] | None = None) -> Facts:
    gpu_list = tuple(Gpu(i, "NVIDIA A100-SXM4-40GB", compute_capability="8.0") for i in range(gpus))
    return Facts(
        os=OSInfo(family="linux", distro_id="ubuntu", distro_version="22.04", glibc="2.35"),
        nvidia=NvidiaInfo(driver_version="580.95.05", gpus=gpu_list),
        cloud=CloudInfo(
            provider="aws",
            instance_type="p4d.24xlarge",
            expected_gpus=8,
            expected_gpu_model="NVIDIA A100-SXM4-40GB",
        ),
        environment=env or {},
    )


def test_gpu_visibility_finding_for_a_missing_gpu() -> None:
    assert cloudplan.gpu_visibility(_detected(8)) is None
    finding = cloudplan.gpu_visibility(_detected(7))
    assert finding is not None and "8 x NVIDIA A100-SXM4-40GB" in finding and "only 7" in finding
    masked = cloudplan.gpu_visibility(_detected(2, {"CUDA_VISIBLE_DEVICES": "0,1"}))
    assert masked is not None and "CUDA_VISIBLE_DEVICES" in masked
    no_driver = replace(_detected(0), nvidia=None)
    assert "no NVIDIA driver" in str(cloudplan.gpu_visibility(no_driver))
    assert cloudplan.gpu_visibility(LOCAL) is None


def test_detected_cloud_gets_advice_without_flags() -> None:
    facts = _detected(7)
    same, advice = cloudplan.apply(parse(), facts)
    assert same is facts and advice is not None
    assert advice.instance_type == "p4d.24xlarge" and advice.fabric_manager
    assert advice.driver_route == "dlami"
    assert "only 7 visible" in advice.lines[-1]


def test_detected_cloud_without_instance_type() -> None:
    facts = replace(LOCAL, cloud=CloudInfo(provider="gcp"))
    _, advice = cloudplan.apply(parse(), facts)
    assert advice is not None and "--cloud-metadata" in advice.lines[0]


def test_plan_lines_use_the_plans_min_driver() -> None:
    _, advice = what_if(
        "--cloud", "aws", "--instance-type", "g5.xlarge", "--image", "dlami-ubuntu-24.04"
    )
    lines = advice.plan_lines(
        Plan(
            status="ok",
            torch_version="2.15.0",
            variant=Variant.parse("cu132"),
            min_driver="595.45.04",
        )
    )
    assert lines == (
        "torch 2.15.0 (cu132) needs NVIDIA driver >= 595.45.04; the image's R595 driver is new "
        "enough",
    )
    _, advice = what_if(
        "--cloud", "gcp", "--instance-type", "a2-highgpu-1g", "--image", "dlvm-ubuntu-24.04"
    )
    (line,) = advice.plan_lines(
        Plan(
            status="ok",
            torch_version="2.15.0",
            variant=Variant.parse("cu132"),
            min_driver="595.45.04",
        )
    )
    assert "R580 driver is older: upgrade it first" in line


def test_advice_serialises() -> None:
    _, advice = what_if("--cloud", "oci", "--instance-type", "BM.GPU.H100.8")
    doc = advice.to_dict()
    assert doc["provider"] == "oci" and doc["fabric_manager"] is True and doc["lines"]


def test_cli_choices_come_from_the_catalogue() -> None:
    with pytest.raises(CloudPlanError) as err:
        cloudplan.apply(parse("--cloud", "nope", "--instance-type", "x"), LOCAL)
    for provider in cloud_catalog.load().providers:
        assert provider in str(err.value)


# --- the expert's answers (need the planner: decide.plan.make_plan) ----------------------

CU13 = ("cu130", "cu132")


def is_variant(v: Variant, want: str) -> bool:
    """``want``: a variant label, or a kind ("rocm": any ROCm build)."""
    return v.kind == want if want in KINDS else v == Variant.parse(want)


# (cloud, instance type, image, expected variant(s), torch lower bound, torch upper bound
#  exclusive or None, driver route, kernel modules, fabric manager)
EXPERT: list[tuple[str, str, str, tuple[str, ...], str, str | None, str, str | None, bool]] = [
    # V100 (sm_70): only cu126 wheels carry it (VERIFIED 3), and cu126 stops at 2.14.
    (
        "aws",
        "p3.2xlarge",
        "ubuntu-22.04",
        ("cu126",),
        "2.6",
        "2.15",
        "ubuntu-drivers",
        "proprietary",
        False,
    ),
    ("aws", "g4dn.xlarge", "ubuntu-24.04", CU13, "2.14", None, "dlami", "open", False),
    ("aws", "g5.xlarge", "ubuntu-24.04", CU13, "2.14", None, "dlami", "open", False),
    ("aws", "p5.48xlarge", "ubuntu-24.04", CU13, "2.14", None, "dlami", "open", True),
    ("aws", "p6-b200.48xlarge", "ubuntu-24.04", CU13, "2.14", None, "dlami", "open", True),
    # Graviton2 + T4G: no aarch64 CUDA wheel has sm_75 (VERIFIED 3): the CPU wheel.
    ("aws", "g5g.xlarge", "ubuntu-24.04", ("cpu",), "2.14", None, "dlami", "open", False),
    ("gcp", "a3-highgpu-8g", "ubuntu-24.04", CU13, "2.14", None, "dlvm", "open", True),
    ("gcp", "a2-highgpu-1g", "ubuntu-22.04", CU13, "2.14", None, "dlvm", "open", False),
    (
        "azure",
        "Standard_NC4as_T4_v3",
        "ubuntu-22.04",
        CU13,
        "2.14",
        None,
        "azure-extension",
        "open",
        False,
    ),
    (
        "azure",
        "Standard_ND96isr_H100_v5",
        "ubuntu-22.04",
        CU13,
        "2.14",
        None,
        "azure-extension",
        "open",
        True,
    ),
    (
        "azure",
        "Standard_ND96isr_MI300X_v5",
        "ubuntu-22.04",
        ("rocm",),
        "2.9",
        None,
        "rocm",
        None,
        False,
    ),
]


def _make_plan(facts: Facts) -> Any:
    from setup_env.decide import plan

    return plan.make_plan(facts, PlanOptions())


@pytest.mark.parametrize("case", EXPERT, ids=[f"{c[0]}:{c[1]}" for c in EXPERT])
def test_expert_answer(case: tuple[Any, ...]) -> None:
    provider, itype, image, variants, low, high, route, modules, fm = case
    facts, advice = what_if("--cloud", provider, "--instance-type", itype, "--image", image)
    assert advice.driver_route == route
    assert advice.kernel_modules == modules
    assert advice.fabric_manager is fm
    plan = _make_plan(facts)
    assert plan.variant is not None and any(is_variant(plan.variant, w) for w in variants), plan
    assert plan.torch_version is not None
    version = Version(plan.torch_version)
    assert version >= Version(low)
    if high is not None:
        assert version < Version(high)
    if plan.variant.is_cuda:
        assert plan.min_driver
        assert f"needs NVIDIA driver >= {plan.min_driver}" in advice.plan_lines(plan)[0]


def test_ubuntu_drivers_route_explains_a_wheel_newer_than_its_branch() -> None:
    _, advice = what_if(
        "--cloud", "aws", "--instance-type", "p5.48xlarge", "--image", "ubuntu-24.04"
    )
    assert any("ubuntu-drivers" in line for line in advice.lines)
    newer = advice.plan_lines(
        Plan(
            status="ok",
            torch_version="2.15.0",
            variant=Variant.parse("cu132"),
            min_driver="595.71.05",
        )
    )
    assert any("only through CUDA minor-version compatibility" in x for x in newer)
    assert any("branch 595 or newer" in x for x in newer)
    within = advice.plan_lines(
        Plan(
            status="ok",
            torch_version="2.14.1",
            variant=Variant.parse("cu130"),
            min_driver="580.95.05",
        )
    )
    assert not any("minor-version" in x for x in within)


def test_fresh_gpu_instance_is_planned_for_the_gpus_its_type_has() -> None:
    # A g5.xlarge right after launch: DMI names it, no driver, so no GPU is visible yet.
    from pathlib import Path

    from setup_env.decide.plan import make_plan
    from setup_env.probe.detect import detect
    from setup_env.probe.host import ReplayHost

    host = Path(__file__).parent / "fixtures" / "hosts" / "linux-aws-g5-nitro-nodriver"
    facts = detect(ReplayHost(host))
    assert facts.gpus == () and facts.cloud is not None
    plan_facts, advice = cloudplan.apply(parse(), facts)
    assert advice is not None
    assert [g.name for g in plan_facts.gpus] == ["NVIDIA A10G"]
    assert plan_facts.nvidia is not None and plan_facts.nvidia.driver_version is None
    assert advice.lines[-1].startswith("planned for the 1 x NVIDIA A10G a g5.xlarge has")
    plan = make_plan(plan_facts)
    assert plan.variant is not None and plan.variant.is_cuda, plan
    assert any(f.kind in ("upgrade-driver", "install-driver") for f in plan.fixes), plan.fixes
    # Nothing changes where a GPU is visible, or where the facts name no cloud.
    assert cloudplan.apply(parse(), LOCAL)[0] is LOCAL
