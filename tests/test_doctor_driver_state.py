"""doctor's reading of the NVIDIA driver's state (issue 22): nvidia-smi that does not answer,
a kernel module and library that differ (by the probe's code, or for older facts by its prose),
another unusable driver, MIG mode. Each routes to its own finding and its own command. The
machine is a real replayed host (tests/fixtures/hosts) with the driver's state changed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

import pytest

from setup_env.decide.doctor import examine
from setup_env.decide.model import Finding
from setup_env.facts import CudaToolkit, Facts, InstalledPackage
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

HERE = Path(__file__).parent
M = mx.load_matrix(HERE / "fixtures" / "matrix" / "wheels-subset.json")
NVIDIA = detect(
    ReplayHost(HERE / "fixtures/hosts/fedora-rtx5090-rtx4090-580"), cloud_metadata=False
)
STATE = ("gpu-unexaminable", "driver-library-mismatch", "driver-unusable")


def broken(error: Optional[str], code: Optional[str]) -> Facts:
    assert NVIDIA.nvidia is not None
    return replace(NVIDIA, nvidia=replace(NVIDIA.nvidia, error=error, error_code=code))


def state(facts: Facts) -> list[Finding]:
    return [f for f in examine(facts, None, M) if f.code in STATE]


@pytest.mark.parametrize(
    ("error", "code", "finding", "command"),
    [
        (
            "nvidia-smi timed out",
            "gpu-unexaminable",
            "gpu-unexaminable",
            "sudo dmesg | grep -i xid",
        ),
        (
            "Failed to initialize NVML",
            "driver-library-mismatch",
            "driver-library-mismatch",
            "sudo reboot",
        ),
        # facts written before error_code existed: the prose decides
        (
            "Failed to initialize NVML: Driver/library version mismatch",
            None,
            "driver-library-mismatch",
            "sudo reboot",
        ),
        ("Failed to initialize NVML: Unknown Error", None, "driver-unusable", None),
        # the probe's code decides over the prose
        ("a message that says mismatch", "driver-unusable", "driver-unusable", None),
    ],
)
def test_each_unusable_driver_state_routes_to_its_own_finding_and_command(
    error: str, code: Optional[str], finding: str, command: Optional[str]
) -> None:
    found = state(broken(error, code))
    assert [f.code for f in found] == [finding]
    assert found[0].severity == "error"
    assert found[0].command == command
    assert found[0].evidence == (error,)


def test_a_working_driver_has_no_state_finding() -> None:
    assert state(broken(None, None)) == []
    assert state(broken("", "gpu-unexaminable")) == []


def test_mig_mode_names_each_gpu_in_it() -> None:
    assert NVIDIA.nvidia is not None
    gpus = NVIDIA.nvidia.gpus
    assert len(gpus) == 2
    plain = [f for f in examine(NVIDIA, None, M) if f.code == "mig-enabled"]
    assert plain == []
    mig = replace(
        NVIDIA, nvidia=replace(NVIDIA.nvidia, gpus=(replace(gpus[0], mig_mode=True), gpus[1]))
    )
    found = [f for f in examine(mig, None, M) if f.code == "mig-enabled"]
    assert len(found) == 1
    assert found[0].severity == "warning"
    assert found[0].command == "nvidia-smi -L"
    assert found[0].evidence == (f"GPU {gpus[0].index} {gpus[0].name}: MIG mode on",)


G5 = detect(ReplayHost(HERE / "fixtures/hosts/linux-aws-g5-nitro-nodriver"), cloud_metadata=False)


def without_driver(facts: Facts) -> list[str]:
    return [f.code for f in examine(facts, None, M) if f.code == "gpu-without-driver"]


def test_a_cloud_instance_sold_with_an_nvidia_gpu_and_no_driver_loaded() -> None:
    # the g5.xlarge's catalogue row: 1x NVIDIA A10G; the capture has no driver
    assert without_driver(G5) == ["gpu-without-driver"]
    assert G5.cloud is not None
    # a driver loaded (the host with one, given the g5's cloud facts): nothing to say
    assert without_driver(replace(NVIDIA, cloud=G5.cloud)) == []
    # an instance type without a GPU, or with another vendor's: not this finding
    assert without_driver(replace(G5, cloud=replace(G5.cloud, expected_gpus=0))) == []
    amd = replace(G5.cloud, expected_gpu_model="AMD Instinct MI300X")
    assert without_driver(replace(G5, cloud=amd)) == []
    # the catalogue's spelling of the model in any case
    lower = replace(G5.cloud, expected_gpu_model="nvidia A10G")
    assert without_driver(replace(G5, cloud=lower)) == ["gpu-without-driver"]


def nvcc_finding(*toolkits: CudaToolkit) -> Optional[Finding]:
    torch = InstalledPackage(
        "torch", "2.9.0+cu128", variant=Variant.parse("cu128"), cuda="12.8", installer="pip"
    )
    facts = replace(NVIDIA, toolkits=toolkits, packages=(torch,))
    return next((f for f in examine(facts, None, M) if f.code == "nvcc-major-mismatch"), None)


def test_nvcc_of_another_major_points_cuda_home_at_a_toolkit_of_torchs_major() -> None:
    cuda13 = CudaToolkit("13.0", "13.0.88", path="/usr/local/cuda-13.0", source="nvcc on PATH")
    cuda12 = CudaToolkit("12.6", "12.6.85", path="/usr/local/cuda-12.6", source="/usr/local")
    f = nvcc_finding(cuda13, cuda12)
    assert f is not None and f.severity == "warning"
    assert f.command == "export CUDA_HOME=/usr/local/cuda-12.6"
    # no toolkit of torch's major: advice to install one, no command
    f = nvcc_finding(cuda13)
    assert f is not None and f.command is None
    # one of torch's major whose folder the shell would have to quote: no command
    f = nvcc_finding(cuda13, replace(cuda12, path="/opt/my cuda"))
    assert f is not None and f.command is None
    # the active nvcc of torch's major, whatever else is installed: nothing to say
    assert nvcc_finding(cuda12, cuda13) is None


def test_a_driver_of_unknown_version_is_not_judged_too_old() -> None:
    # nvidia-smi failed: the driver is there, its version unknown; only the state is reported
    assert NVIDIA.nvidia is not None
    nv = replace(
        NVIDIA.nvidia, driver_version=None, cuda_driver_version=None, error="Unknown Error"
    )
    torch = InstalledPackage(
        "torch", "2.9.0+cu128", variant=Variant.parse("cu128"), cuda="12.8", installer="pip"
    )
    got = [f.code for f in examine(replace(NVIDIA, nvidia=nv, packages=(torch,)), None, M)]
    assert "cuda-newer-than-driver" not in got
    assert "cuda-minor-version-compat" not in got
    assert "driver-unusable" in got
