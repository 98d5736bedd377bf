"""Issue 12 item 5: the cloud instance types a user hit as unknown, planned from the catalogue."""

from __future__ import annotations

import argparse

import pytest

from setup_env.decide import cloudplan
from setup_env.decide.cloudplan import CloudPlanError
from setup_env.facts import CloudInfo, Facts, Gpu, NvidiaInfo, PythonInfo
from setup_env.knowledge import cloud_catalog

CAT = cloud_catalog.load()
LOCAL = Facts(python=PythonInfo(version="3.12.7", machine="x86_64"))


def what_if(*argv: str) -> tuple[Facts, cloudplan.CloudAdvice]:
    parser = argparse.ArgumentParser()
    cloudplan.add_plan_arguments(parser)
    parser.add_argument("--gpu", action="append")
    facts, advice = cloudplan.apply(parser.parse_args(list(argv)), LOCAL)
    assert advice is not None
    return facts, advice


@pytest.mark.parametrize(
    ("provider", "itype", "gpu", "count", "fraction", "arch"),
    [
        ("aws", "g7.2xlarge", "NVIDIA RTX PRO 4500 Blackwell Server Edition", 1, None, "x86_64"),
        # 1, not 2 (issue 17 item 7.8): EC2 DescribeInstanceTypes as AWS's Karpenter prints it
        ("aws", "g7.8xlarge", "NVIDIA RTX PRO 4500 Blackwell Server Edition", 1, None, "x86_64"),
        ("aws", "g7.48xlarge", "NVIDIA RTX PRO 4500 Blackwell Server Edition", 8, None, "x86_64"),
        ("aws", "g7e.4xlarge", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 1, None, "x86_64"),
        ("aws", "g7e.12xlarge", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 2, None, "x86_64"),
        ("aws", "g7e.24xlarge", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 4, None, "x86_64"),
        ("aws", "g6f.large", "NVIDIA L4", 1, "1/8", "x86_64"),
        ("aws", "g6f.2xlarge", "NVIDIA L4", 1, "1/4", "x86_64"),
        ("aws", "gr6f.4xlarge", "NVIDIA L4", 1, "1/2", "x86_64"),
        ("gcp", "a4x-maxgpu-4g-metal", "NVIDIA GB300", 4, None, "aarch64"),
        ("azure", "Standard_ND128isr_GB300_v6", "NVIDIA GB300", 4, None, "aarch64"),
        ("azure", "Standard_NC144lds_xl_RTXPRO6000BSE_v6",
         "NVIDIA RTX PRO 6000 Blackwell Server Edition", 1, None, "x86_64"),
        ("azure", "Standard_NC36lds_xl_RTXPRO6000BSE_v6",
         "NVIDIA RTX PRO 6000 Blackwell Server Edition", 1, "1/4", "x86_64"),
    ],
)  # fmt: skip
def test_new_instance_types(
    provider: str, itype: str, gpu: str, count: int, fraction: str | None, arch: str
) -> None:
    inst = CAT.lookup(provider, itype)
    assert inst is not None
    assert (inst.gpu.name, inst.gpu_count, inst.gpu_fraction, inst.host_arch) == (
        gpu,
        count,
        fraction,
        arch,
    )


def test_fractional_l4_is_the_grid_route_on_aws() -> None:
    _facts, advice = what_if("--cloud", "aws", "--instance-type", "g6f.xlarge")
    assert advice.driver_route == "grid"
    assert any("AWS" in line and "GRID" in line for line in advice.lines)
    assert not any("Azure" in line for line in advice.lines)


def test_lambda_8x_a100_needs_fabric_manager() -> None:
    inst = CAT.lookup("lambda", "gpu_8x_a100")
    assert inst is not None and inst.fabric_manager
    one = CAT.lookup("lambda", "gpu_1x_a100_sxm4")
    assert one is not None and not one.fabric_manager


def test_gcp_n1_with_an_attached_t4() -> None:
    facts, advice = what_if(
        "--cloud", "gcp", "--instance-type", "n1-standard-8", "--gpu", "Tesla T4"
    )
    assert facts.nvidia is not None and [g.name for g in facts.nvidia.gpus] == ["Tesla T4"]
    assert facts.nvidia.gpus[0].compute_capability == "7.5"
    assert advice.gpu_count == 1
    facts, _ = what_if(
        "--cloud", "gcp", "--instance-type", "n1-highmem-16", "--gpu", "V100", "--gpu", "V100"
    )
    assert facts.nvidia is not None and len(facts.nvidia.gpus) == 2


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (("--cloud", "gcp", "--instance-type", "n1-standard-8"), "no GPU of its own"),
        (("--cloud", "gcp", "--instance-type", "n1-standard-8", "--gpu", "NVIDIA L4"), "takes"),
        (("--cloud", "gcp", "--instance-type", "n1-standard-8", "--gpu", "T4", "--gpu", "T4",
          "--gpu", "T4"), "attaches 1, 2, 4"),
        (("--cloud", "aws", "--instance-type", "g5.xlarge", "--gpu", "T4"), "come with"),
        (("--cloud", "gcp", "--instance-type", "n1-standard-8", "--gpu", "x" * 300),
         r"^--gpu 'x{57}\.\.\.': gcp n1 takes"),
    ],
)  # fmt: skip
def test_attached_gpu_errors(argv: tuple[str, ...], match: str) -> None:
    with pytest.raises(CloudPlanError, match=match):
        what_if(*argv)


def test_a_detected_n1_with_its_t4_gets_advice() -> None:
    facts = Facts(
        python=PythonInfo(version="3.12.7", machine="x86_64"),
        nvidia=NvidiaInfo(gpus=(Gpu(index=0, name="Tesla T4", source="nvidia-smi"),)),
        cloud=CloudInfo(provider="gcp", instance_type="n1-standard-8"),
    )
    advice = cloudplan.advice_for_detected(facts)
    assert advice is not None and advice.gpu == "Tesla T4"


def test_cli_n1_plus_t4_and_g7() -> None:
    import json
    import subprocess
    import sys

    for argv in (
        ["--cloud", "gcp", "--instance-type", "n1-standard-8", "--gpu", "Tesla T4"],
        ["--cloud", "aws", "--instance-type", "g7.2xlarge"],
    ):
        res = subprocess.run(
            [sys.executable, "-m", "setup_env", "plan", *argv, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert res.returncode == 0, res.stderr
        assert "torch" in json.loads(res.stdout)["plan"]["command"]


def test_amd_cloud_gpus_agree_with_the_amd_catalogue() -> None:
    from setup_env.knowledge import gpus

    for g in CAT.gpus.values():
        if g.vendor == "amd":
            model = gpus.load().lookup_amd(g.name)
            assert model is not None and model.gfx == g.gfx_arch, g.name
