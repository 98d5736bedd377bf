"""doctor's environment and platform rules at their edges (issue 22): CUDA_VISIBLE_DEVICES read
as CUDA reads it (up to its first invalid entry), LD_LIBRARY_PATH's fix as an exact command, and
macOS 14 as the first release current PyTorch supports on Apple Silicon. Machines are real
replayed hosts (tests/fixtures/hosts) with one environment variable or version changed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from setup_env.decide.doctor import examine
from setup_env.decide.model import Finding
from setup_env.facts import Facts, InstalledPackage
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

HERE = Path(__file__).parent
M = mx.load_matrix(HERE / "fixtures" / "matrix" / "wheels-subset.json")


def host(name: str) -> Facts:
    return detect(ReplayHost(HERE / "fixtures" / "hosts" / name), cloud_metadata=False)


def finding(facts: Facts, code: str) -> Finding | None:
    return next((f for f in examine(facts, None, M) if f.code == code), None)


def with_env(facts: Facts, **env: str) -> Facts:
    return replace(facts, environment={**facts.environment, **env})


# two NVIDIA GPUs (an RTX 5090 and an RTX 4090): indices 0 and 1 exist, 2 does not
TWO_GPUS = host("fedora-rtx5090-rtx4090-580")


@pytest.mark.parametrize(
    "value",
    [
        "",  # set but empty: CUDA sees nothing
        "2",  # one past the last index
        "-1",  # the usual way to hide every GPU
        "none",  # garbage stops the list at once
        "2,0",  # CUDA stops at the first invalid entry, so the valid 0 after it does not count
    ],
)
def test_cuda_visible_devices_that_hides_every_gpu(value: str) -> None:
    f = finding(with_env(TWO_GPUS, CUDA_VISIBLE_DEVICES=value), "cuda-visible-devices-hides-all")
    assert f is not None
    assert f.severity == "error"
    assert f.command == "unset CUDA_VISIBLE_DEVICES"
    assert f"CUDA_VISIBLE_DEVICES={value!r}" in f.evidence


@pytest.mark.parametrize(
    "value",
    [
        "1",  # the last index that exists
        "0",
        " 1 ",  # spaces around an entry are allowed
        "1,5",  # valid up to the out-of-range entry: one GPU visible
        "0,0",  # a repeated index stops the list after the first
        "GPU-8f2b1c3d-aaaa-bbbb-cccc-0123456789ab",
        "GPU-d0b7e1c6-5a2f-4c1e-9b3d-7e8f6a5b4c3d",  # nvidia-smi -L prints lowercase hex
        "MIG-8f2b1c3d-aaaa-bbbb-cccc-0123456789ab",
    ],
)
def test_cuda_visible_devices_that_leaves_a_gpu_visible(value: str) -> None:
    facts = with_env(TWO_GPUS, CUDA_VISIBLE_DEVICES=value)
    assert finding(facts, "cuda-visible-devices-hides-all") is None


def test_cuda_visible_devices_unset_or_without_a_gpu_is_no_finding() -> None:
    assert finding(TWO_GPUS, "cuda-visible-devices-hides-all") is None
    no_gpu = with_env(host("ubuntu2404-cpu-only"), CUDA_VISIBLE_DEVICES="")
    assert finding(no_gpu, "cuda-visible-devices-hides-all") is None


def cuda_torch(facts: Facts, installer: str = "pip") -> Facts:
    torch = InstalledPackage(
        "torch", "2.8.0+cu128", variant=Variant.parse("cu128"), cuda="12.8", installer=installer
    )
    return replace(facts, packages=(torch, *(p for p in facts.packages if p.name != "torch")))


@pytest.mark.parametrize(
    ("ld", "command"),
    [
        ("/usr/local/cuda/lib64", "unset LD_LIBRARY_PATH"),
        ("/usr/local/cuda/lib64:/opt/lib", "export LD_LIBRARY_PATH=/opt/lib"),
        ("/opt/lib::/usr/lib/x86_64-linux-gnu/CUDNN", "export LD_LIBRARY_PATH=/opt/lib"),
        ("/opt/nvidia/lib:/a:/b", "export LD_LIBRARY_PATH=/a:/b"),
        # a directory the shell would have to quote: no command is offered, only the advice
        ("/usr/local/cuda/lib64:/opt/my libs", None),
    ],
)
def test_ld_library_path_with_cuda_dirs_and_the_command_that_drops_them(
    ld: str, command: str | None
) -> None:
    facts = with_env(cuda_torch(TWO_GPUS), LD_LIBRARY_PATH=ld)
    f = finding(facts, "ld-library-path-cuda")
    assert f is not None
    assert f.severity == "warning"
    assert f.command == command


def test_ld_library_path_is_left_alone_where_it_cannot_shadow_the_wheels_libraries() -> None:
    cuda_dir = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}
    # no CUDA directory in it
    assert (
        finding(with_env(cuda_torch(TWO_GPUS), LD_LIBRARY_PATH="/opt/lib"), "ld-library-path-cuda")
        is None
    )
    # conda's torch links the environment's own CUDA libraries
    assert (
        finding(with_env(cuda_torch(TWO_GPUS, "conda"), **cuda_dir), "ld-library-path-cuda") is None
    )
    # a CPU torch loads no CUDA library
    cpu = replace(
        TWO_GPUS,
        packages=(
            InstalledPackage("torch", "2.8.0+cpu", variant=Variant.parse("cpu"), installer="pip"),
        ),
    )
    assert finding(with_env(cpu, **cuda_dir), "ld-library-path-cuda") is None


APPLE = host("macos14-m1-arm64")


@pytest.mark.parametrize(
    ("version", "warned"), [("13.6.7", True), ("14.0", False), ("15.1", False)]
)
def test_macos_14_is_the_first_release_for_current_torch_on_apple_silicon(
    version: str, warned: bool
) -> None:
    facts = replace(APPLE, os=replace(APPLE.os, macos_version=version))
    f = finding(facts, "macos-too-old-for-mps")
    assert (f is not None) is warned
    if f is not None:
        assert f.severity == "warning"


def old_mac(facts: Facts) -> bool:
    return (
        finding(replace(facts, os=replace(facts.os, macos_version="13.6")), "macos-too-old-for-mps")
        is not None
    )


def test_apple_silicon_is_known_by_any_one_of_its_signs() -> None:
    # the capture knows it three ways: the chip record, the CPU's name, an arm64 Python
    assert old_mac(APPLE)
    none = replace(
        APPLE,
        apple=None,
        cpu=replace(APPLE.cpu, model="Intel(R) Core(TM) i7-9750H"),
        python=replace(APPLE.python, machine="x86_64"),
    )
    assert not old_mac(none)  # an Intel Mac: macOS 13 is no Apple Silicon question
    assert old_mac(replace(none, apple=APPLE.apple))
    assert old_mac(replace(none, cpu=APPLE.cpu))
    assert old_mac(replace(none, python=APPLE.python))
    # an arm64 Python says Apple Silicon only on macOS
    linux = replace(none, python=APPLE.python, os=replace(APPLE.os, family="linux"))
    assert (
        finding(replace(linux, os=replace(linux.os, macos_version="13.6")), "macos-too-old-for-mps")
        is None
    )


def test_rosetta_python_names_the_chip_it_runs_on() -> None:
    rosetta = host("macos-m1pro-rosetta-x86_64")
    f = finding(rosetta, "rosetta-python")
    assert f is not None and f.severity == "error"
    assert f.evidence == ("Python machine x86_64", "CPU Apple M1 Pro")
    # the chip record answers where the CPU's name is missing
    f = finding(replace(rosetta, cpu=replace(rosetta.cpu, model=None)), "rosetta-python")
    assert f is not None and f.evidence[1] == "CPU Apple M1 Pro"
    assert finding(APPLE, "rosetta-python") is None
