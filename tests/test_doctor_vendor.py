"""doctor's build-against-GPU rules (issue 22): a CPU build on a machine with a GPU, a CUDA build
on an AMD GPU, a ROCm build on an NVIDIA GPU, each alone and not where the build fits; the
probes' own warnings and errors passed on once, and the findings ranked most severe first.
Machines are real replayed hosts (tests/fixtures/hosts) with the installed torch changed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from setup_env.decide.doctor import SEVERITY_ORDER, examine
from setup_env.facts import Facts, Gpu, InstalledPackage, Note, XpuInfo
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

HERE = Path(__file__).parent
M = mx.load_matrix(HERE / "fixtures" / "matrix" / "wheels-subset.json")

NVIDIA = detect(
    ReplayHost(HERE / "fixtures/hosts/fedora-rtx5090-rtx4090-580"), cloud_metadata=False
)
AMD = detect(ReplayHost(HERE / "fixtures/hosts/ubuntu2204-rocm623-8x-mi300x"), cloud_metadata=False)
NO_GPU = detect(ReplayHost(HERE / "fixtures/hosts/ubuntu2404-cpu-only"), cloud_metadata=False)


def with_torch(facts: Facts, torch: InstalledPackage) -> Facts:
    return replace(facts, packages=(torch, *(p for p in facts.packages if p.name != "torch")))


CPU_TORCH = InstalledPackage("torch", "2.8.0+cpu", variant=Variant.parse("cpu"), installer="pip")
CUDA_TORCH = InstalledPackage(
    "torch", "2.8.0+cu128", variant=Variant.parse("cu128"), cuda="12.8", installer="pip"
)
ROCM_TORCH = InstalledPackage(
    "torch", "2.8.0+rocm6.3", variant=Variant.parse("rocm6.3"), hip="6.3.42131", installer="pip"
)


def codes(facts: Facts) -> list[str]:
    return [f.code for f in examine(facts, None, M)]


def test_a_cpu_build_on_a_machine_with_an_nvidia_or_an_amd_gpu() -> None:
    for facts in (NVIDIA, AMD):
        found = [
            f
            for f in examine(with_torch(facts, CPU_TORCH), None, M)
            if f.code == "cpu-build-on-gpu"
        ]
        assert len(found) == 1
        assert found[0].severity == "error"
        # no plan: no command to run, only the advice to ask for one
        assert found[0].command is None
    assert "cpu-build-on-gpu" not in codes(with_torch(NO_GPU, CPU_TORCH))
    assert "cpu-build-on-gpu" not in codes(with_torch(NVIDIA, CUDA_TORCH))


def test_a_cuda_build_on_an_amd_gpu_and_only_there() -> None:
    assert "cuda-build-on-amd" in codes(with_torch(AMD, CUDA_TORCH))
    assert "cuda-build-on-amd" not in codes(with_torch(NVIDIA, CUDA_TORCH))
    assert "cuda-build-on-amd" not in codes(with_torch(NO_GPU, CUDA_TORCH))
    # a machine with both vendors may use the CUDA build on its NVIDIA GPU
    both = replace(NVIDIA, rocm=AMD.rocm)
    assert "cuda-build-on-amd" not in codes(with_torch(both, CUDA_TORCH))


def test_a_rocm_build_on_an_nvidia_gpu_and_only_there() -> None:
    assert "rocm-build-on-nvidia" in codes(with_torch(NVIDIA, ROCM_TORCH))
    assert "rocm-build-on-nvidia" not in codes(with_torch(AMD, ROCM_TORCH))
    assert "rocm-build-on-nvidia" not in codes(with_torch(NO_GPU, ROCM_TORCH))
    both = replace(NVIDIA, rocm=AMD.rocm)
    assert "rocm-build-on-nvidia" not in codes(with_torch(both, ROCM_TORCH))


def test_the_probes_warnings_and_errors_are_passed_on_once_and_their_info_is_not() -> None:
    notes = (
        Note("probe-said-warning", "a warning", "lspci", "warning"),
        Note("probe-said-warning", "the same again", "lspci", "warning"),
        Note("probe-said-error", "an error", "", "error"),
        Note("probe-said-info", "for the record", "lspci", "info"),
    )
    found = examine(replace(with_torch(NO_GPU, CPU_TORCH), notes=notes), None, M)
    by_code = [f for f in found if f.code.startswith("probe-said-")]
    assert sorted(f.code for f in by_code) == ["probe-said-error", "probe-said-warning"]
    warning = next(f for f in by_code if f.code == "probe-said-warning")
    assert (warning.severity, warning.title, warning.evidence) == (
        "warning",
        "a warning",
        ("noted by lspci",),
    )
    error = next(f for f in by_code if f.code == "probe-said-error")
    assert error.evidence == ("noted by detection",)


def test_findings_come_most_severe_first() -> None:
    notes = (Note("probe-said-warning", "a warning", "lspci", "warning"),)
    found = examine(replace(with_torch(NVIDIA, ROCM_TORCH), notes=notes), None, M)
    ranks = [SEVERITY_ORDER[f.severity] for f in found]
    assert ranks == sorted(ranks)
    assert found[0].severity == "error"
    assert "warning" in [f.severity for f in found]


def test_a_shadowed_install_is_named_beside_the_one_that_runs() -> None:
    used = replace(CPU_TORCH, location="/venv/lib/python3.12/site-packages")
    hidden = replace(
        CPU_TORCH,
        version="2.7.1",
        location="/home/u/.local/lib/python3.12/site-packages",
        installer="conda",
        shadowed=True,
    )
    vision = InstalledPackage("torchvision", "0.23.0", location="/venv/site", installer="pip")
    facts = replace(NO_GPU, packages=(used, hidden, vision))
    found = [f for f in examine(facts, None, M) if f.code == "several-installs"]
    assert len(found) == 1
    assert found[0].severity == "warning"
    assert found[0].evidence == (
        "used: torch 2.8.0+cpu at /venv/lib/python3.12/site-packages",
        "shadowed: torch 2.7.1 at /home/u/.local/lib/python3.12/site-packages (conda)",
    )
    # torchvision installed twice, the one that runs unknown: one finding each, torchvision's
    # listing only what is shadowed
    vision_hidden = replace(vision, version="0.22.0", installer=None, shadowed=True)
    facts = replace(NO_GPU, packages=(used, hidden, replace(vision, shadowed=True), vision_hidden))
    found = [f for f in examine(facts, None, M) if f.code == "several-installs"]
    assert len(found) == 2
    assert found[1].evidence == (
        "shadowed: torchvision 0.23.0 at /venv/site (pip)",
        "shadowed: torchvision 0.22.0 at /venv/site",
    )


def test_one_install_of_each_is_no_finding() -> None:
    assert "several-installs" not in codes(with_torch(NO_GPU, CPU_TORCH))


# torch 2.9.0+cu128 is built with CUDA 12.8.1 (the wheel subset): full compatibility from Linux
# driver 570.124.06, minor-version compatibility (any 12.x) from 525.60.13 (NVIDIA's Table 3)
@pytest.mark.parametrize(
    ("driver", "code", "min_driver"),
    [
        ("570.124.06", None, None),
        ("570.124.05", "cuda-minor-version-compat", "570.124.06"),
        ("525.60.13", "cuda-minor-version-compat", "570.124.06"),
        ("525.60.12", "cuda-newer-than-driver", "525.60.13"),
    ],
)
def test_the_driver_at_each_floor_of_the_torch_cuda_build_and_one_below(
    driver: str, code: str | None, min_driver: str | None
) -> None:
    torch = InstalledPackage(
        "torch", "2.9.0+cu128", variant=Variant.parse("cu128"), cuda="12.8", installer="pip"
    )
    assert NVIDIA.nvidia is not None
    facts = replace(NVIDIA, nvidia=replace(NVIDIA.nvidia, driver_version=driver))
    found = [
        f
        for f in examine(with_torch(facts, torch), None, M)
        if f.code in ("cuda-minor-version-compat", "cuda-newer-than-driver")
    ]
    assert [f.code for f in found] == ([code] if code else [])
    if found:
        assert found[0].details["min_driver"] == min_driver
        assert found[0].severity == ("info" if code == "cuda-minor-version-compat" else "error")


def companions(torch: InstalledPackage, *pkgs: InstalledPackage) -> list[tuple[str, str]]:
    facts = replace(NO_GPU, packages=(torch, *pkgs))
    return [
        (f.code, f.title.split()[0])
        for f in examine(facts, None, M)
        if f.code.startswith("companion-")
    ]


def test_torchaudio_is_held_to_torchs_release_and_build_as_torchvision_is() -> None:
    # torch 2.8.0 pairs with torchaudio 2.8.0 and torchvision 0.23.0 (the wheel subset)
    audio = InstalledPackage("torchaudio", "2.8.0+cpu", variant=Variant.parse("cpu"))
    vision = InstalledPackage("torchvision", "0.23.0+cpu", variant=Variant.parse("cpu"))
    assert companions(CPU_TORCH, audio, vision) == []
    assert companions(CPU_TORCH, replace(audio, version="2.7.1+cpu"), vision) == [
        ("companion-version-mismatch", "torchaudio")
    ]
    # a CUDA companion beside a CPU torch is another build, whichever side is the CPU one
    cuda_audio = replace(audio, version="2.8.0+cu128", variant=Variant.parse("cu128"), cuda="12.8")
    assert companions(CPU_TORCH, cuda_audio, vision) == [("companion-build-mismatch", "torchaudio")]
    # a companion whose build is unknown (no local label read) is not called another build
    assert companions(CPU_TORCH, replace(audio, version="2.8.0", variant=None)) == []


def test_the_driver_floor_is_the_one_of_the_machines_system() -> None:
    # driver 526.47 (a real Windows capture): under Windows' floor for CUDA 12 minor-version
    # compatibility (528.33) but over Linux's (525.60.13)
    windows = detect(ReplayHost(HERE / "fixtures/hosts/windows-geforce-526"), cloud_metadata=False)
    torch = InstalledPackage(
        "torch", "2.7.1+cu126", variant=Variant.parse("cu126"), cuda="12.6", installer="pip"
    )
    found = {f.code: f for f in examine(with_torch(windows, torch), None, M)}
    assert "cuda-minor-version-compat" not in found
    assert found["cuda-newer-than-driver"].details["min_driver"] == "528.33"
    linux = replace(windows, os=replace(NVIDIA.os))
    found = {f.code: f for f in examine(with_torch(linux, torch), None, M)}
    assert "cuda-newer-than-driver" not in found
    assert "cuda-minor-version-compat" in found


def test_a_gpu_newer_than_every_architecture_in_the_wheel_and_only_that_gpu() -> None:
    # torch 2.7.1+cu126 carries sm_50 ... sm_90 (the wheel subset): the RTX 5090 (sm_120)
    # has no kernels; the RTX 4090 (sm_89) runs sm_86's kernels (same major, older minor)
    cu126 = InstalledPackage(
        "torch", "2.7.1+cu126", variant=Variant.parse("cu126"), cuda="12.6", installer="pip"
    )
    found = [
        f for f in examine(with_torch(NVIDIA, cu126), None, M) if f.code.startswith("gpu-arch")
    ]
    assert [(f.code, f.severity) for f in found] == [("gpu-arch-not-in-wheel", "error")]
    assert found[0].evidence == (
        "torch 2.7.1+cu126 (cu126) has sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90",
        "GPU 0 NVIDIA GeForce RTX 5090 (sm_120)",
    )
    assert found[0].command is None  # no plan given: nothing to run
    cu128 = replace(cu126, version="2.7.1+cu128", variant=Variant.parse("cu128"), cuda="12.8")
    assert [
        f.code for f in examine(with_torch(NVIDIA, cu128), None, M) if f.code.startswith("gpu-arch")
    ] == []


def test_a_cuda_build_on_an_intel_gpu_and_a_cpu_build_beside_one() -> None:
    arc = XpuInfo(
        gpus=(Gpu(0, "Intel(R) Arc(TM) A770 Graphics", vendor="intel"),), kernel_driver="i915"
    )
    intel = replace(NO_GPU, xpu=arc)
    assert "cuda-build-on-intel" in codes(with_torch(intel, CUDA_TORCH))
    cpu = [
        f for f in examine(with_torch(intel, CPU_TORCH), None, M) if f.code == "cpu-build-on-gpu"
    ]
    assert len(cpu) == 1 and cpu[0].evidence[1] == "GPU: Intel(R) Arc(TM) A770 Graphics"
    # beside an NVIDIA or an AMD GPU the CUDA build is judged against those, not the Intel one
    assert "cuda-build-on-intel" not in codes(with_torch(replace(NVIDIA, xpu=arc), CUDA_TORCH))
    amd = codes(with_torch(replace(AMD, xpu=arc), CUDA_TORCH))
    assert "cuda-build-on-intel" not in amd and "cuda-build-on-amd" in amd


def test_torch_not_installed_is_information_with_no_command_without_a_plan() -> None:
    facts = replace(NO_GPU, packages=tuple(p for p in NO_GPU.packages if p.name != "torch"))
    found = [f for f in examine(facts, None, M) if f.code == "torch-not-installed"]
    assert len(found) == 1
    assert (found[0].severity, found[0].command) == ("info", None)
    assert "torch-not-installed" not in codes(with_torch(NO_GPU, CPU_TORCH))


def test_a_gpu_arch_fix_runs_the_plans_build_only_when_it_is_another_build() -> None:
    """An RTX 5090 (sm_120) with torch 2.7.1+cu126 (no sm_120 kernels): the fix runs the plan's
    build when the plan names another; the bundled matrix plans for it."""
    from setup_env.decide.model import PlanOptions, install_command
    from setup_env.decide.plan import make_plan, spec_facts

    bundled = mx.load_matrix(mx.BUNDLED_PATH)
    cu126 = InstalledPackage(
        "torch", "2.7.1+cu126", variant=Variant.parse("cu126"), cuda="12.6", installer="pip"
    )
    facts = replace(
        spec_facts(os="linux", python="3.12", gpus=["RTX 5090"], driver="580.82.09"),
        packages=(cu126,),
    )
    plan = make_plan(facts, PlanOptions(), bundled)
    assert plan.variant is not None and plan.variant != cu126.variant
    (f,) = [f for f in examine(facts, plan, bundled) if f.code == "gpu-arch-not-in-wheel"]
    assert f.command is not None
    assert f.command == install_command(plan, reinstall=True)
    # a plan that names the installed build itself has nothing better to run
    same = replace(plan, variant=cu126.variant)
    (f,) = [f for f in examine(facts, same, bundled) if f.code == "gpu-arch-not-in-wheel"]
    assert f.command is None
