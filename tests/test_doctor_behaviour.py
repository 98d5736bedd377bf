"""doctor's findings stated whole (issue 22): for each rule, the finding it makes when its trigger
is exactly met (code, severity, title, evidence, fix and the exact command) and none when the
trigger is just not met; a fix's command comes from the plan only when the plan names a build
that cures it.

Machines are real replayed hosts (tests/fixtures/hosts) with the installed torch, the plan or one
fact changed; wheel knowledge is the frozen wheel subset (tests/fixtures/matrix). Plans are the
planner's answers written out (a plan is an input of the doctor, not a capture)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import pytest

from setup_env.decide.doctor import examine
from setup_env.decide.model import Finding, Plan
from setup_env.facts import (
    CondaEnvInfo,
    CondaPackage,
    CudaToolkit,
    Facts,
    Gpu,
    InstalledPackage,
    Note,
    XpuInfo,
)
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost
from setup_env.probe.report import parse

HERE = Path(__file__).parent
SUBSET = HERE / "fixtures" / "matrix" / "wheels-subset.json"
M = mx.load_matrix(SUBSET)
V = Variant.parse


def host(name: str) -> Facts:
    return detect(ReplayHost(HERE / "fixtures" / "hosts" / name), cloud_metadata=False)


NVIDIA = host("fedora-rtx5090-rtx4090-580")  # RTX 5090 + RTX 4090, driver 580.82.09 (CUDA 13.0)
AMD = host("ubuntu2204-rocm623-8x-mi300x")  # 8x MI300X (gfx942)
NO_GPU = host("ubuntu2404-cpu-only")
ARC = XpuInfo(
    gpus=(Gpu(0, "Intel(R) Arc(TM) A770 Graphics", vendor="intel"),), kernel_driver="i915"
)


def torch(version: str, variant: str, **kw: Any) -> InstalledPackage:
    v = V(variant)
    kw.setdefault("cuda", v.cuda)
    kw.setdefault("installer", "pip")
    return InstalledPackage("torch", version, variant=v, **kw)


def with_torch(facts: Facts, pkg: Optional[InstalledPackage]) -> Facts:
    rest = tuple(p for p in facts.packages if p.name != "torch")
    return replace(facts, packages=(pkg, *rest) if pkg is not None else rest)


def plan_for(variant: str, version: str = "2.9.1") -> Plan:
    index = f"https://download.pytorch.org/whl/{variant}"
    return Plan(
        status="ok",
        torch_version=version,
        variant=V(variant),
        index_url=index,
        command=f"pip install torch=={version} --index-url {index}",
    )


def found(
    facts: Facts, code: str, plan: Optional[Plan] = None, matrix: Optional[mx.Matrix] = M
) -> list[Finding]:
    return [f for f in examine(facts, plan, matrix) if f.code == code]


def one(
    facts: Facts, code: str, plan: Optional[Plan] = None, matrix: Optional[mx.Matrix] = M
) -> Finding:
    hits = found(facts, code, plan, matrix)
    assert len(hits) == 1, [f.code for f in examine(facts, plan, matrix)]
    return hits[0]


def reinstall(plan: Plan) -> str:
    """A plan's command run over an installed torch: pip would count the installed build as
    satisfying ``torch==X``, so it is removed first."""
    return f"pip uninstall -y torch torchvision torchaudio && {plan.command}"


# --- torch not installed ----------------------------------------------------------------------


def test_torch_not_installed_is_fixed_by_the_plans_command_as_it_stands() -> None:
    plan = plan_for("cu130")
    assert one(with_torch(NVIDIA, None), "torch-not-installed", plan) == Finding(
        "torch-not-installed",
        "info",
        "PyTorch is not installed in this Python",
        evidence=("no torch distribution found on sys.path",),
        fix="install the planned build",
        command="pip install torch==2.9.1 --index-url https://download.pytorch.org/whl/cu130",
    )
    without = one(with_torch(NVIDIA, None), "torch-not-installed")
    assert (without.fix, without.command) == ("run `setup-env plan` for the command", None)


# --- the build against the GPU's vendor -------------------------------------------------------

CPU_TORCH = torch("2.8.0+cpu", "cpu")
CUDA_TORCH = torch("2.8.0+cu128", "cu128")
ROCM_TORCH = torch("2.8.0+rocm6.3", "rocm6.3", hip="6.3.42131")


def test_a_cpu_build_beside_a_gpu_whole_and_its_fix_only_from_a_gpu_plan() -> None:
    facts = with_torch(AMD, CPU_TORCH)
    gpu_plan = plan_for("rocm6.4")
    assert one(facts, "cpu-build-on-gpu", gpu_plan) == Finding(
        "cpu-build-on-gpu",
        "error",
        "torch 2.8.0+cpu is a CPU-only build, but this machine has a GPU",
        # eight MI300X are one name
        evidence=("torch 2.8.0+cpu (variant cpu, from metadata)", "GPU: AMD Instinct MI300X"),
        fix="replace it with the build the planner picks for this GPU",
        command=reinstall(gpu_plan),
    )
    # a plan that itself falls back to the CPU build has nothing to offer
    cpu = one(facts, "cpu-build-on-gpu", plan_for("cpu"))
    assert (cpu.fix, cpu.command) == (
        "install a GPU build of torch: run `setup-env plan` for the exact command",
        None,
    )
    # the evidence says where the version was read, when the probe said
    read = one(with_torch(AMD, replace(CPU_TORCH, source="RECORD")), "cpu-build-on-gpu")
    assert read.evidence[0] == "torch 2.8.0+cpu (variant cpu, from RECORD)"


def test_a_cpu_build_names_each_gpu_vendor_present_once() -> None:
    both = replace(NVIDIA, rocm=AMD.rocm, xpu=ARC)
    f = one(with_torch(both, CPU_TORCH), "cpu-build-on-gpu")
    assert f.evidence[1] == (
        "GPU: AMD Instinct MI300X, Intel(R) Arc(TM) A770 Graphics, NVIDIA GeForce RTX 4090, "
        "NVIDIA GeForce RTX 5090"
    )
    # a build whose variant is unknown is not called a CPU build
    assert found(with_torch(both, replace(CPU_TORCH, variant=None)), "cpu-build-on-gpu") == []


def test_a_cuda_build_on_an_amd_gpu_whole_and_its_fix_only_from_a_rocm_plan() -> None:
    facts = with_torch(AMD, CUDA_TORCH)
    rocm = plan_for("rocm6.4")
    gpus = ", ".join(["AMD Instinct MI300X"] * 8)  # every GPU, as the probe lists them
    assert one(facts, "cuda-build-on-amd", rocm) == Finding(
        "cuda-build-on-amd",
        "error",
        "torch 2.8.0+cu128 is built for NVIDIA CUDA, but the GPU is AMD",
        evidence=("torch CUDA 12.8", f"GPU: {gpus}"),
        fix="install a ROCm build of torch",
        command=reinstall(rocm),
    )
    assert one(facts, "cuda-build-on-amd", plan_for("cpu")).command is None
    assert one(facts, "cuda-build-on-amd").command is None


def test_a_cuda_build_is_known_by_its_label_alone() -> None:
    """A torch whose version.py was not read (cuda unknown) is a CUDA build by its +cu128 label."""
    label_only = replace(CUDA_TORCH, cuda=None)
    assert one(with_torch(AMD, label_only), "cuda-build-on-amd").evidence[0] == "torch CUDA 12.8"
    intel = replace(NO_GPU, xpu=ARC)
    assert found(with_torch(intel, label_only), "cuda-build-on-intel") != []
    # neither a label nor version.py: nothing says CUDA
    unknown = replace(CUDA_TORCH, cuda=None, variant=None)
    assert found(with_torch(AMD, unknown), "cuda-build-on-amd") == []
    # version.py alone says it too
    assert found(with_torch(AMD, replace(CUDA_TORCH, variant=None)), "cuda-build-on-amd") != []


def test_a_cuda_build_on_an_intel_gpu_whole_and_its_fix_only_from_the_xpu_plan() -> None:
    two = XpuInfo(gpus=(*ARC.gpus, replace(ARC.gpus[0], index=1)), kernel_driver="i915")
    facts = with_torch(replace(NO_GPU, xpu=two), CUDA_TORCH)
    xpu = plan_for("xpu")
    assert one(facts, "cuda-build-on-intel", xpu) == Finding(
        "cuda-build-on-intel",
        "error",
        "torch 2.8.0+cu128 is built for NVIDIA CUDA, but the GPU is Intel's",
        evidence=("torch CUDA 12.8", "GPU: Intel(R) Arc(TM) A770 Graphics"),  # named once
        fix="install the XPU build of torch",
        command=reinstall(xpu),
    )
    assert one(facts, "cuda-build-on-intel", plan_for("cpu")).command is None
    assert one(facts, "cuda-build-on-intel").command is None
    # a CPU torch on the same machine is another finding, not this one
    assert found(with_torch(facts, CPU_TORCH), "cuda-build-on-intel") == []


def test_a_rocm_build_on_an_nvidia_gpu_whole_and_its_fix_only_from_a_cuda_plan() -> None:
    facts = with_torch(NVIDIA, ROCM_TORCH)
    cuda = plan_for("cu130")
    assert one(facts, "rocm-build-on-nvidia", cuda) == Finding(
        "rocm-build-on-nvidia",
        "error",
        "torch 2.8.0+rocm6.3 is built for AMD ROCm, but the GPU is NVIDIA",
        evidence=(
            "torch HIP 6.3.42131",
            "GPU: NVIDIA GeForce RTX 5090, NVIDIA GeForce RTX 4090",
        ),
        fix="install a CUDA build of torch",
        command=reinstall(cuda),
    )
    assert one(facts, "rocm-build-on-nvidia", plan_for("rocm6.4")).command is None
    assert one(facts, "rocm-build-on-nvidia").command is None
    # no HIP version: nothing says ROCm
    assert found(with_torch(NVIDIA, replace(ROCM_TORCH, hip=None)), "rocm-build-on-nvidia") == []


# --- the driver against torch's CUDA ----------------------------------------------------------


def on_driver(facts: Facts, driver: Optional[str], driver_cuda: Optional[str]) -> Facts:
    assert facts.nvidia is not None
    nv = replace(facts.nvidia, driver_version=driver, cuda_driver_version=driver_cuda)
    return replace(facts, nvidia=nv)


CU130 = torch("2.9.1+cu130", "cu130")  # built with CUDA 13.0.0: Linux 580.65.06, MVC from 580


def test_a_driver_too_old_for_torchs_cuda_whole_with_the_plans_build_as_the_other_fix() -> None:
    facts = with_torch(on_driver(NVIDIA, "575.57.08", "12.9"), CU130)
    cu129 = plan_for("cu129")
    assert one(facts, "cuda-newer-than-driver", cu129) == Finding(
        "cuda-newer-than-driver",
        "error",
        "torch's CUDA 13.0 is newer than driver 575.57.08 supports",
        evidence=(
            "torch 2.9.1+cu130 is built with CUDA 13.0 13.0.0",
            "the driver supports CUDA up to 12.9",
            "NVIDIA driver 575.57.08",
            "CUDA 13.0 needs driver >= 580 (minor-version compatibility), >= 580.65.06 for full "
            "compatibility",
        ),
        fix="upgrade the NVIDIA driver to >= 580, or install the build that this driver runs",
        command=reinstall(cu129),
        details={"min_driver": "580", "reason": "driver-too-old"},
    )


@pytest.mark.parametrize(
    "plan",
    [
        None,
        plan_for("cu130"),  # the installed build itself
        plan_for("cpu"),  # runs, but drops the GPU: not offered as the driver's fix
        replace(plan_for("cu129"), status="fallback", variant=None),
    ],
)
def test_a_driver_too_old_has_no_command_unless_the_plan_names_another_cuda_build(
    plan: Optional[Plan],
) -> None:
    facts = with_torch(on_driver(NVIDIA, "575.57.08", "12.9"), CU130)
    f = one(facts, "cuda-newer-than-driver", plan)
    assert (f.fix, f.command) == ("upgrade the NVIDIA driver to >= 580", None)


def test_minor_version_compatibility_whole_carries_no_floor_line() -> None:
    cu128 = torch("2.9.1+cu128", "cu128")  # CUDA 12.8.1: full from 570.124.06, MVC from 525.60.13
    facts = with_torch(on_driver(NVIDIA, "550.54.14", "12.4"), cu128)
    assert one(facts, "cuda-minor-version-compat", plan_for("cu130")) == Finding(
        "cuda-minor-version-compat",
        "info",
        "driver 550.54.14 runs CUDA 12.8 through minor-version compatibility",
        evidence=(
            "torch 2.9.1+cu128 is built with CUDA 12.8 12.8.1",
            "the driver supports CUDA up to 12.4",
            "NVIDIA driver 550.54.14",
        ),
        fix="fine for torch; PTX JIT of newer kernels (e.g. some Triton/torch.compile paths) "
        "needs driver >= 570.124.06",
        details={"min_driver": "570.124.06", "reason": "driver-mvc"},
    )


def test_minor_version_compatibility_known_only_from_the_drivers_cuda() -> None:
    """No driver version and no wheel data: the driver's CUDA 12.4 runs a CUDA 12.8 build by
    minor-version compatibility, and no floor can be named."""
    facts = with_torch(on_driver(NVIDIA, None, "12.4"), torch("2.9.1+cu128", "cu128"))
    f = one(facts, "cuda-minor-version-compat", matrix=None)
    assert (f.title, f.evidence, f.details) == (
        "driver 12.4 runs CUDA 12.8 through minor-version compatibility",
        ("torch 2.9.1+cu128 is built with CUDA 12.8", "the driver supports CUDA up to 12.4"),
        {"min_driver": "", "reason": "driver-mvc"},
    )
    assert f.fix is not None and f.fix.endswith("needs driver >= the toolkit minimum")


def ptx_matrix() -> mx.Matrix:
    """The wheel subset with one change: the cu126 build of torch 2.7.0 ... 2.14.1 for Linux
    x86_64 given PTX for sm_90 beside its SASS (TORCH_CUDA_ARCH_LIST "...;9.0+PTX", as torch's
    builds of the CUDA 11 years spelled it): a GPU newer than sm_90 then runs it by PTX JIT."""
    doc = json.loads(SUBSET.read_text(encoding="utf-8"))
    (row,) = [
        b
        for b in doc["builds"]
        if b["variant"] == "cu126" and "2.7.1" in b["releases"] and "linux_x86_64" in b["platforms"]
    ]
    row["ptx"] = ["9.0"]
    return mx.parse(doc)


PTX = ptx_matrix()
CU126 = torch("2.7.1+cu126", "cu126")  # CUDA 12.6.3: full from 560.35.05, MVC from 525.60.13


def test_a_gpu_served_only_by_ptx_needs_the_full_driver_floor() -> None:
    """Minor-version compatibility runs SASS, not PTX JIT: with the RTX 5090 (sm_120) served only
    by the wheel's sm_90 PTX, driver 550.54.14 is too old; the RTX 4090 alone (sm_89, SASS of
    sm_86) runs on it by minor-version compatibility."""
    facts = with_torch(on_driver(NVIDIA, "550.54.14", "12.4"), CU126)
    assert one(facts, "cuda-newer-than-driver", matrix=PTX) == Finding(
        "cuda-newer-than-driver",
        "error",
        "torch's CUDA 12.6 is newer than driver 550.54.14 supports",
        evidence=(
            "torch 2.7.1+cu126 is built with CUDA 12.6 12.6.3",
            "the driver supports CUDA up to 12.4",
            "NVIDIA driver 550.54.14",
            "CUDA 12.6 12.6.3 needs driver >= 560.35.05",
        ),
        fix="upgrade the NVIDIA driver to >= 560.35.05",
        details={"min_driver": "560.35.05", "reason": "driver-too-old-ptx"},
    )
    assert facts.nvidia is not None
    rtx4090 = replace(facts, nvidia=replace(facts.nvidia, gpus=facts.nvidia.gpus[1:]))
    assert found(rtx4090, "cuda-newer-than-driver", matrix=PTX) == []
    f = one(rtx4090, "cuda-minor-version-compat", matrix=PTX)
    assert f.details == {"min_driver": "560.35.05", "reason": "driver-mvc"}
    # at the full floor the PTX-only GPU runs too
    full = with_torch(on_driver(NVIDIA, "560.35.05", "12.6"), CU126)
    codes = [f.code for f in examine(full, None, PTX)]
    assert "cuda-newer-than-driver" not in codes and "cuda-minor-version-compat" not in codes


def test_a_gpu_served_only_by_ptx_is_a_warning_naming_it_and_the_wheels_arches() -> None:
    facts = with_torch(NVIDIA, CU126)
    assert found(facts, "gpu-arch-ptx-only", matrix=PTX) == [
        Finding(
            "gpu-arch-ptx-only",
            "warning",
            "only PTX (JIT-compiled at first use) serves GPU 0 NVIDIA GeForce RTX 5090 (sm_120)",
            evidence=(
                "torch 2.7.1+cu126 (cu126) has sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90 "
                "compute_90",
                "GPU 0 NVIDIA GeForce RTX 5090 (sm_120)",
            ),
            fix="works, but the first start is slow; a build with native kernels avoids it",
        )
    ]
    # without the PTX the same GPU has no kernels at all, and the PTX note gives way
    codes = [f.code for f in examine(facts, None, M)]
    assert "gpu-arch-not-in-wheel" in codes and "gpu-arch-ptx-only" not in codes


# --- architectures ----------------------------------------------------------------------------


def test_a_gpu_without_kernels_in_the_wheel_whole_with_and_without_a_plan() -> None:
    facts = with_torch(NVIDIA, CU126)  # the RTX 5090 (sm_120); the 4090 runs sm_86's SASS
    wheel = "torch 2.7.1+cu126 (cu126) has sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90"
    gpu = "GPU 0 NVIDIA GeForce RTX 5090 (sm_120)"
    cu128 = plan_for("cu128")
    assert one(facts, "gpu-arch-not-in-wheel", cu128) == Finding(
        "gpu-arch-not-in-wheel",
        "error",
        f"the installed torch has no kernels for {gpu}",
        evidence=(wheel, gpu),
        fix="install a build whose architectures include this GPU",
        command=reinstall(cu128),
    )
    alone = one(facts, "gpu-arch-not-in-wheel")
    assert (alone.fix, alone.command) == (
        "install a build whose architectures include this GPU: run `setup-env plan` for it",
        None,
    )


def radeons() -> Facts:
    """An RX 9070 XT (gfx1201) and an RX 9060 XT (gfx1200) with torch 2.6.0+rocm6.2.4, whose
    wheel carries no gfx12 code (setup_env.decide.rocmplan's gfx lists)."""
    from setup_env.decide.plan import spec_facts

    facts = spec_facts(os="linux", python="3.12", gpus=["RX 9070 XT", "RX 9060 XT"])
    return with_torch(facts, torch("2.6.0+rocm6.2.4", "rocm6.2.4", hip="6.2.41134"))


def test_rocm_gpus_missing_from_the_wheel_are_named_and_built_for_together() -> None:
    f = one(radeons(), "rocm-gfx-not-in-wheel")
    assert f.title == (
        "the installed torch has no kernels for RX 9070 XT (gfx1201), RX 9060 XT (gfx1200)"
    )
    assert f.fix == (
        "build PyTorch from source with PYTORCH_ROCM_ARCH=gfx1200;gfx1201 "
        "(HSA_OVERRIDE_GFX_VERSION is an unsupported workaround)"
    )
    assert f.command is None


def test_a_rocm_gfx_gap_is_fixed_by_the_plans_build_only_when_it_is_another() -> None:
    facts = radeons()
    other = plan_for("rocm7.0")
    f = one(facts, "rocm-gfx-not-in-wheel", other)
    assert (f.fix, f.command) == ("install the build the plan names", reinstall(other))
    same = one(facts, "rocm-gfx-not-in-wheel", plan_for("rocm6.2.4"))
    assert same.command is None
    assert same.fix is not None and same.fix.startswith("build PyTorch from source")


def test_a_rocm_gpu_whose_gfx_was_not_reported_is_judged_by_the_catalogues() -> None:
    facts = radeons()
    assert facts.rocm is not None
    unreported = tuple(replace(g, gfx_arch=None) for g in facts.rocm.gpus)
    facts = replace(facts, rocm=replace(facts.rocm, gpus=unreported))
    assert one(facts, "rocm-gfx-not-in-wheel").title == (
        "the installed torch has no kernels for RX 9070 XT (gfx1201), RX 9060 XT (gfx1200)"
    )


# --- companions -------------------------------------------------------------------------------


def companion(name: str, version: str, variant: Optional[str], **kw: Any) -> InstalledPackage:
    v = V(variant) if variant else None
    return InstalledPackage(name, version, variant=v, cuda=v.cuda if v else None, **kw)


def companion_findings(torch_pkg: InstalledPackage, *pkgs: InstalledPackage) -> list[Finding]:
    facts = replace(NO_GPU, packages=(torch_pkg, *pkgs))
    return [f for f in examine(facts, None, M) if f.code.startswith("companion-")]


def test_a_companion_of_another_build_whole() -> None:
    audio = companion("torchaudio", "2.8.0+cu126", "cu126")
    assert companion_findings(CUDA_TORCH, audio) == [
        Finding(
            "companion-build-mismatch",
            "error",
            "torchaudio 2.8.0+cu126 is built for cu126, torch 2.8.0+cu128 for cu128",
            evidence=("torch 2.8.0+cu128", "torchaudio 2.8.0+cu126"),
            fix="reinstall torchaudio from the same index as torch (cu128)",
        )
    ]


@pytest.mark.parametrize(
    ("torch_variant", "vision_variant", "mismatch"),
    [
        ("rocm6.3", "cpu", True),  # a CPU companion beside a GPU torch
        ("cpu", "rocm6.3", True),  # a GPU companion beside a CPU torch
        ("cu128", "rocm6.3", True),  # another GPU runtime
        ("cu128", "cu128", False),
        ("rocm6.3", "rocm6.3", False),
        ("cu128", None, False),  # the companion's build unknown: not called another
    ],
)
def test_a_companion_is_another_build_when_either_side_is_cpu_or_the_runtime_differs(
    torch_variant: str, vision_variant: Optional[str], mismatch: bool
) -> None:
    version = f"2.8.0+{torch_variant}"
    t = torch(version, torch_variant, hip="6.3.42131" if "rocm" in torch_variant else None)
    vision = companion("torchvision", f"0.23.0+{vision_variant or 'x'}", vision_variant)
    got = [f.code for f in companion_findings(t, vision)]
    assert got == (["companion-build-mismatch"] if mismatch else [])


def test_a_torch_of_unknown_build_has_no_companion_of_another_build() -> None:
    vision = companion("torchvision", "0.23.0+cu126", "cu126")
    assert companion_findings(replace(CUDA_TORCH, variant=None), vision) == []


def test_a_companion_of_another_release_whole_names_the_pair_the_matrix_makes() -> None:
    audio = companion("torchaudio", "2.7.1+cpu", "cpu")
    assert companion_findings(CPU_TORCH, audio) == [
        Finding(
            "companion-version-mismatch",
            "error",
            "torchaudio 2.7.1+cpu does not belong to torch 2.8.0+cpu (expects 2.8.0)",
            evidence=(
                "torch 2.8.0+cpu",
                "torchaudio 2.7.1+cpu",
                "the release matrix pairs torch 2.8.0 with torchaudio 2.8.0",
            ),
            fix="install torchaudio==2.8.0 from the same index as torch",
        )
    ]
    # both companions are checked, each on its own
    vision = companion("torchvision", "0.22.1+cpu", "cpu")
    assert [f.title.split()[0] for f in companion_findings(CPU_TORCH, vision, audio)] == [
        "torchvision",
        "torchaudio",
    ]


def test_a_companions_release_is_read_before_its_local_label() -> None:
    # the release is the part before the local label, with or without one
    right = companion("torchvision", "0.23.0+cpu", "cpu")
    assert companion_findings(CPU_TORCH, right) == []
    plain = companion("torchvision", "0.23.0", None)  # no label at all
    assert companion_findings(CPU_TORCH, plain) == []
    assert [f.code for f in companion_findings(CPU_TORCH, replace(plain, version="0.22.0"))] == [
        "companion-version-mismatch"
    ]


def test_without_wheel_data_no_companion_release_is_judged() -> None:
    audio = companion("torchaudio", "2.7.1+cpu", "cpu")
    facts = replace(NO_GPU, packages=(CPU_TORCH, audio))
    assert [f for f in examine(facts, None, None) if f.code.startswith("companion-")] == []


# --- nvcc against torch's CUDA ----------------------------------------------------------------


def nvcc(facts: Facts, *toolkits: CudaToolkit, pkg: InstalledPackage = CUDA_TORCH) -> list[Finding]:
    return found(with_torch(replace(facts, toolkits=toolkits), pkg), "nvcc-major-mismatch")


def test_nvcc_of_another_major_whole_with_cuda_home_pointed_at_torchs_major() -> None:
    cuda13 = CudaToolkit("13.0", "13.0.88", path="/usr/local/cuda-13.0", source="nvcc on PATH")
    cuda12 = CudaToolkit("12.6", None, path="/usr/local/cuda-12.6", source="/usr/local")
    assert nvcc(NVIDIA, cuda13, cuda12) == [
        Finding(
            "nvcc-major-mismatch",
            "warning",
            "nvcc is CUDA 13.0 but torch is built with CUDA 12.8: building CUDA extensions "
            "(torch.utils.cpp_extension, pip installs that compile) will fail",
            evidence=("nvcc 13.0.88 (nvcc on PATH)", "torch 2.8.0+cu128 CUDA 12.8"),
            fix="point CUDA_HOME at the CUDA 12.6 toolkit",
            command="export CUDA_HOME=/usr/local/cuda-12.6",
        )
    ]
    # nvcc's version alone when its full version is unknown
    (f,) = nvcc(NVIDIA, replace(cuda13, full_version=None))
    assert f.evidence[0] == "nvcc 13.0 (nvcc on PATH)"
    # a toolkit of torch's major with no folder, or one the shell would have to quote: the
    # advice is to install one, for torch's major
    for other in (replace(cuda12, path=None), replace(cuda12, path="/opt/my cuda")):
        (f,) = nvcc(NVIDIA, cuda13, other)
        assert (f.fix, f.command) == (
            "install a CUDA 12.x toolkit for extension builds (running torch does not need one)",
            None,
        )
    # no CUDA in torch: nvcc is no concern
    assert nvcc(NVIDIA, cuda13, pkg=CPU_TORCH) == []


# --- several installs -------------------------------------------------------------------------


def test_several_installs_whole_each_place_named_by_what_is_known() -> None:
    used = replace(CPU_TORCH, location=None, source="/venv/RECORD")
    hidden = replace(CPU_TORCH, version="2.7.1", location=None, installer=None, shadowed=True)
    assert found(replace(NO_GPU, packages=(used, hidden)), "several-installs") == [
        Finding(
            "several-installs",
            "warning",
            "2 installs of torch: what runs depends on sys.path order",
            evidence=("used: torch 2.8.0+cpu at /venv/RECORD", "shadowed: torch 2.7.1 at ?"),
            fix="remove the shadowed install (pip uninstall it in the environment or user site "
            "that owns it, or `conda remove` a conda one) so one build is left",
        )
    ]
    nowhere = replace(used, source="")
    (f,) = found(replace(NO_GPU, packages=(nowhere, hidden)), "several-installs")
    assert f.evidence[0] == "used: torch 2.8.0+cpu at ?"


@pytest.mark.parametrize("name", ["torchvision", "torchaudio"])
def test_a_companion_installed_twice_is_found_when_torch_is_installed_once(name: str) -> None:
    first = InstalledPackage(name, "1.0", location="/venv/site")
    second = InstalledPackage(name, "0.9", location="/home/u/.local/site", shadowed=True)
    facts = replace(NO_GPU, packages=(CPU_TORCH, first, second))
    (f,) = found(facts, "several-installs")
    assert f.title == f"2 installs of {name}: what runs depends on sys.path order"
    assert f.evidence == (
        f"used: {name} 1.0 at /venv/site",
        f"shadowed: {name} 0.9 at /home/u/.local/site",
    )


# --- a pip torch inside a conda or pixi environment --------------------------------------------

RECORDS = HERE / "fixtures" / "conda-meta" / "pixi-cuda129"  # real records, see its SOURCE.md


def record(name: str) -> CondaPackage:
    from setup_env.probe import condaenv

    fallback = condaenv.split_record_name(name)
    assert fallback is not None
    return condaenv.parse_record((RECORDS / name).read_text(encoding="utf-8"), fallback)


PIN = record("cuda-version-12.9-h4f385c5_3.json")  # cuda-version 12.9 (conda-forge)
PYTORCH_GPU = record("pytorch-gpu-2.7.1-cuda129_mkl_h43a4b0b_304.json")
PIXI = CondaEnvInfo(
    manager="pixi",
    prefix="/home/user/proj/.pixi/envs/default",
    name="default",
    active=True,
    cuda_packages=(PIN,),
    torch_packages=(PYTORCH_GPU,),
)
PIP_CU129 = torch("2.9.1+cu129", "cu129")


def in_env(env: CondaEnvInfo, pkg: Optional[InstalledPackage] = PIP_CU129) -> list[Finding]:
    facts = with_torch(replace(NO_GPU, conda_env=env), pkg)
    return [f for f in examine(facts, None, M) if f.code.startswith("pip-torch-")]


def test_a_pip_torch_over_conda_pytorch_and_conda_cuda_whole_in_a_pixi_environment() -> None:
    wheel = "torch 2.9.1+cu129 installed by pip"
    assert in_env(PIXI) == [
        Finding(
            "pip-torch-over-conda-pytorch",
            "error",
            "two PyTorch installs share the pixi environment default: pip's torch wheel and "
            "conda's pytorch write the same site-packages/torch folder",
            evidence=(
                wheel,
                "conda-meta: pytorch-gpu 2.7.1 cuda129_mkl_h43a4b0b_304 (conda-forge)",
            ),
            fix="keep one: `pip uninstall torch`, then reinstall conda's pytorch (its files were "
            "overwritten), or remove conda's pytorch packages and keep the wheel",
        ),
        Finding(
            "pip-torch-conda-cuda",
            "warning",
            "torch from pip (CUDA 12.9) shares the pixi environment default with conda's CUDA "
            "libraries: two copies of CUDA, and which one loads depends on the library search "
            "path (cuDNN/cuBLAS/NCCL mismatches, undefined symbols)",
            evidence=(wheel, "conda-meta: cuda-version 12.9 h4f385c5_3 (conda-forge)"),
            fix="one route per environment: conda-forge's pytorch pinned to the environment's "
            "cuda-version in place of the wheel, or keep the wheel (it carries its own CUDA "
            "libraries) and remove the conda CUDA packages nothing else needs",
            command='pixi remove --pypi torch && pixi add pytorch-gpu "cuda-version=12.9"',
        ),
    ]


def test_the_environment_is_named_by_its_name_else_its_folder() -> None:
    def where(env: CondaEnvInfo) -> str:
        return in_env(env)[0].title.split(" share the ")[1].split(":")[0]

    assert where(PIXI) == "pixi environment default"
    assert where(replace(PIXI, name=None)) == "pixi environment /home/user/proj/.pixi/envs/default"
    assert where(replace(PIXI, name=None, prefix=None)) == "pixi environment"


@pytest.mark.parametrize(
    ("installer", "flagged"),
    [("pip", True), ("uv", True), (None, False), ("conda", False), ("pixi", False)],
)
def test_only_a_torch_that_pip_or_uv_installed_is_a_second_route(
    installer: Optional[str], flagged: bool
) -> None:
    got = in_env(PIXI, replace(PIP_CU129, installer=installer))
    assert (got != []) is flagged


def test_a_cpu_wheel_loads_no_cuda_so_only_the_two_pytorch_installs_are_found() -> None:
    assert [f.code for f in in_env(PIXI, CPU_TORCH)] == ["pip-torch-over-conda-pytorch"]
    assert in_env(PIXI, None) == []  # no torch installed: nothing shares anything
    assert in_env(replace(PIXI, torch_packages=(), cuda_packages=())) == []


@pytest.mark.parametrize(
    ("pin", "command"),
    [
        (
            "12.9",
            'pip uninstall -y torch && conda install -c conda-forge "pytorch=*=cuda*" '
            '"cuda-version=12.9"',
        ),
        (
            "12.10",
            'pip uninstall -y torch && conda install -c conda-forge "pytorch=*=cuda*" '
            '"cuda-version=12.10"',
        ),
        ("9.2", None),  # not a CUDA X.Y that conda-forge's pytorch pins
        ("12.9.1", None),
        ("12.9; rm -rf ~", None),  # never a value the shell would read as more
    ],
)
def test_the_conda_command_pins_the_environments_cuda_version_when_it_is_an_xy(
    pin: str, command: Optional[str]
) -> None:
    conda = replace(
        PIXI,
        manager="conda",
        name="ml",
        torch_packages=(),
        cuda_packages=(replace(PIN, version=pin),),
    )
    (f,) = in_env(conda)
    assert f.command == command


def test_without_a_cuda_version_pin_there_is_no_command() -> None:
    cudart = CondaPackage("cuda-cudart", "12.9.79", "h5888daf_0", "conda-forge")  # SOURCE.md
    (f,) = in_env(replace(PIXI, torch_packages=(), cuda_packages=(cudart,)))
    assert f.command is None
    # the pin is found among the others
    (f,) = in_env(replace(PIXI, torch_packages=(), cuda_packages=(cudart, PIN)))
    assert f.command == 'pixi remove --pypi torch && pixi add pytorch-gpu "cuda-version=12.9"'


def test_six_conda_packages_are_listed_and_more_are_counted() -> None:
    """The real cuda-version record repeated with its build number changed (only the count
    matters); a record without a channel shows "?"."""
    six = tuple(replace(PIN, build=f"h4f385c5_{i}") for i in range(6))
    (f,) = in_env(replace(PIXI, torch_packages=(), cuda_packages=six))
    assert f.evidence[1:] == tuple(
        f"conda-meta: cuda-version 12.9 h4f385c5_{i} (conda-forge)" for i in range(6)
    )
    seven = (*six, replace(PIN, build="h4f385c5_6", channel=""))
    (f,) = in_env(replace(PIXI, torch_packages=(), cuda_packages=seven))
    assert f.evidence[1:] == (
        *(f"conda-meta: cuda-version 12.9 h4f385c5_{i} (conda-forge)" for i in range(6)),
        "... and 1 more",
    )
    (f,) = in_env(replace(PIXI, torch_packages=(), cuda_packages=(replace(PIN, channel=""),)))
    assert f.evidence[1] == "conda-meta: cuda-version 12.9 h4f385c5_3 (?)"


# --- the environment variables ----------------------------------------------------------------


def with_env(facts: Facts, **env: str) -> Facts:
    return replace(facts, environment={**facts.environment, **env})


def test_ld_library_path_whole_one_evidence_line_a_cuda_directory() -> None:
    ld = "/usr/local/cuda-12.1/lib64:/opt/intel/lib:/usr/lib/x86_64-linux-gnu/nvidia"
    facts = with_env(with_torch(NVIDIA, CUDA_TORCH), LD_LIBRARY_PATH=ld)
    assert found(facts, "ld-library-path-cuda") == [
        Finding(
            "ld-library-path-cuda",
            "warning",
            "LD_LIBRARY_PATH puts system CUDA libraries ahead of the ones the torch wheel ships "
            "(cuDNN/cuBLAS version mismatches, undefined symbols)",
            evidence=(
                "LD_LIBRARY_PATH contains /usr/local/cuda-12.1/lib64",
                "LD_LIBRARY_PATH contains /usr/lib/x86_64-linux-gnu/nvidia",
            ),
            fix="drop the CUDA directories from LD_LIBRARY_PATH for Python",
            command="export LD_LIBRARY_PATH=/opt/intel/lib",
        )
    ]


@pytest.mark.parametrize(
    "facts",
    [
        with_env(with_torch(NVIDIA, CUDA_TORCH), LD_LIBRARY_PATH=""),  # set but empty
        with_env(with_torch(NVIDIA, None), LD_LIBRARY_PATH="/usr/local/cuda/lib64"),  # no torch
        # Windows reads PATH, not LD_LIBRARY_PATH: a value there is no finding
        with_env(
            with_torch(replace(NVIDIA, os=replace(NVIDIA.os, family="windows")), CUDA_TORCH),
            LD_LIBRARY_PATH="/usr/local/cuda/lib64",
        ),
    ],
    ids=["empty", "no-torch", "windows"],
)
def test_ld_library_path_is_read_only_on_linux_with_a_cuda_torch(facts: Facts) -> None:
    assert found(facts, "ld-library-path-cuda") == []


def test_a_cuda_torch_known_by_its_label_alone_is_judged_against_ld_library_path() -> None:
    facts = with_env(
        with_torch(NVIDIA, replace(CUDA_TORCH, cuda=None)), LD_LIBRARY_PATH="/usr/local/cuda/lib64"
    )
    assert [f.command for f in found(facts, "ld-library-path-cuda")] == ["unset LD_LIBRARY_PATH"]


def test_cuda_visible_devices_hiding_every_gpu_whole() -> None:
    facts = with_env(NVIDIA, CUDA_VISIBLE_DEVICES="2")  # indices 0 and 1 exist
    assert found(facts, "cuda-visible-devices-hides-all") == [
        Finding(
            "cuda-visible-devices-hides-all",
            "error",
            "CUDA_VISIBLE_DEVICES hides every GPU from CUDA",
            evidence=("CUDA_VISIBLE_DEVICES='2'", "2 GPU(s) present"),
            fix="unset it, or list the GPU indices or UUIDs to use",
            command="unset CUDA_VISIBLE_DEVICES",
        )
    ]


@pytest.mark.parametrize(
    ("value", "hidden"),
    [
        ("1,0", False),  # two visible
        ("0, 2", False),  # one visible before the invalid entry
        ("gpu-8f2b1c3d", True),  # the prefix is upper case, as nvidia-smi -L prints it
        ("GPU-", True),  # a prefix with no UUID after it
        ("GPU-8F2B1C3D", False),
        ("0 1", True),  # entries are separated by commas only
    ],
)
def test_cuda_visible_devices_is_read_entry_by_entry_as_cuda_reads_it(
    value: str, hidden: bool
) -> None:
    facts = with_env(NVIDIA, CUDA_VISIBLE_DEVICES=value)
    assert (found(facts, "cuda-visible-devices-hides-all") != []) is hidden


# --- the platform -----------------------------------------------------------------------------

APPLE = host("macos14-m1-arm64")
ROSETTA = host("macos-m1pro-rosetta-x86_64")


def test_rosetta_python_whole_and_what_names_the_chip_when_little_is_known() -> None:
    assert found(ROSETTA, "rosetta-python") == [
        Finding(
            "rosetta-python",
            "error",
            "this Python is x86_64 running under Rosetta 2 on an Apple Silicon Mac",
            evidence=("Python machine x86_64", "CPU Apple M1 Pro"),
            fix="use a native arm64 Python (python.org universal2, Homebrew under /opt/homebrew, "
            "or an osx-arm64 conda): x86_64 torch stops at 2.2.2 and has no MPS",
        )
    ]
    bare = replace(
        ROSETTA,
        cpu=replace(ROSETTA.cpu, model=None),
        apple=None,
        python=replace(ROSETTA.python, machine=None),
    )
    assert one(bare, "rosetta-python").evidence == ("Python machine x86_64", "CPU Apple")


def test_macos_too_old_for_mps_whole() -> None:
    old = replace(APPLE, os=replace(APPLE.os, macos_version="13.6.7"))
    assert found(old, "macos-too-old-for-mps") == [
        Finding(
            "macos-too-old-for-mps",
            "warning",
            "macOS 13.6.7 is too old for current PyTorch on Apple Silicon",
            evidence=(
                "macOS 13.6.7",
                "torch >= 2.12 ships only macosx_14_0_arm64 wheels, and MPS needs macOS 14+",
            ),
            fix="upgrade macOS to 14 or newer; until then torch <= 2.11 is the newest that "
            "installs",
        )
    ]


@pytest.mark.parametrize(
    ("version", "warned"),
    [("14", False), ("13.99", True), ("13", True), ("", False), (None, False), ("Sonoma", False)],
)
def test_a_macos_version_that_says_nothing_readable_is_not_called_old(
    version: Optional[str], warned: bool
) -> None:
    facts = replace(APPLE, os=replace(APPLE.os, macos_version=version))
    assert (found(facts, "macos-too-old-for-mps") != []) is warned


def test_an_arm64_mac_python_alone_says_apple_silicon_only_on_macos() -> None:
    only_python = replace(
        APPLE,
        apple=None,
        cpu=replace(APPLE.cpu, model=None),
        os=replace(APPLE.os, macos_version="13.6"),
    )
    assert found(only_python, "macos-too-old-for-mps") != []
    assert (
        found(
            replace(only_python, python=replace(APPLE.python, machine="x86_64")),
            "macos-too-old-for-mps",
        )
        == []
    )


# --- the NVIDIA driver's state -----------------------------------------------------------------


def driver_state(error: Optional[str], code: Optional[str]) -> list[Finding]:
    assert NVIDIA.nvidia is not None
    facts = replace(NVIDIA, nvidia=replace(NVIDIA.nvidia, error=error, error_code=code))
    states = ("gpu-unexaminable", "driver-library-mismatch", "driver-unusable")
    return [f for f in examine(facts, None, M) if f.code in states]


def test_an_unexaminable_gpu_whole() -> None:
    assert driver_state("nvidia-smi timed out after 10 s", "gpu-unexaminable") == [
        Finding(
            "gpu-unexaminable",
            "error",
            "the NVIDIA GPU could not be examined: nvidia-smi does not answer (a wedged driver or "
            "GPU), so this is not a machine without a GPU",
            evidence=("nvidia-smi timed out after 10 s",),
            fix="look for Xid errors in `sudo dmesg | grep -i xid`; stop what holds the GPU and "
            "reset it (`sudo nvidia-smi -r -i <gpu>`) or reboot; check again when `nvidia-smi` "
            "answers",
            command="sudo dmesg | grep -i xid",
        )
    ]


def test_a_driver_library_mismatch_and_another_unusable_driver_whole() -> None:
    error = "Failed to initialize NVML: Driver/library version mismatch"
    assert driver_state(error, "driver-library-mismatch") == [
        Finding(
            "driver-library-mismatch",
            "error",
            "the NVIDIA kernel module and user-space library differ (typically after an "
            "unattended driver upgrade)",
            evidence=(error,),
            fix="reboot so the new kernel module loads",
            command="sudo reboot",
        )
    ]
    assert driver_state("Failed to initialize NVML: Unknown Error", "driver-not-loaded") == [
        Finding(
            "driver-unusable",
            "error",
            "the NVIDIA driver is unusable",
            evidence=("Failed to initialize NVML: Unknown Error",),
            fix="check `dmesg` and reinstall the driver",
        )
    ]
    # older facts without a code: the prose decides, in any case
    assert [f.code for f in driver_state("DRIVER/LIBRARY VERSION MISMATCH", None)] == [
        "driver-library-mismatch"
    ]


def test_mig_mode_whole_naming_every_gpu_in_it() -> None:
    assert NVIDIA.nvidia is not None
    gpus = tuple(replace(g, mig_mode=True) for g in NVIDIA.nvidia.gpus)
    facts = replace(NVIDIA, nvidia=replace(NVIDIA.nvidia, gpus=gpus))
    assert found(facts, "mig-enabled") == [
        Finding(
            "mig-enabled",
            "warning",
            "MIG is enabled: CUDA sees MIG instances, not whole GPUs, and a process uses one",
            evidence=(
                "GPU 0 NVIDIA GeForce RTX 5090: MIG mode on",
                "GPU 1 NVIDIA GeForce RTX 4090: MIG mode on",
            ),
            fix="select an instance with CUDA_VISIBLE_DEVICES=MIG-<uuid> from `nvidia-smi -L`, or "
            "disable MIG (`sudo nvidia-smi -i <gpu> -mig 0`)",
            command="nvidia-smi -L",
        )
    ]


G5 = host("linux-aws-g5-nitro-nodriver")  # g5.xlarge: the catalogue's 1x NVIDIA A10G, no driver


def test_a_cloud_gpu_without_a_driver_whole() -> None:
    assert found(G5, "gpu-without-driver") == [
        Finding(
            "gpu-without-driver",
            "error",
            "this aws g5.xlarge has 1x NVIDIA A10G, but no NVIDIA driver is loaded",
            evidence=(
                "the cloud catalogue lists 1x NVIDIA A10G for g5.xlarge",
                "no NVIDIA driver found",
            ),
            fix="install the NVIDIA driver (the cloud advice in `setup-env check` names the route "
            "for this image); until then torch can only use the CPU",
        )
    ]
    assert G5.cloud is not None
    unnamed = replace(G5, cloud=replace(G5.cloud, instance_type=None))
    assert one(unnamed, "gpu-without-driver").title.startswith("this aws instance has 1x")


def test_a_driver_is_there_when_it_has_a_version_or_lists_a_gpu() -> None:
    assert NVIDIA.nvidia is not None
    version_only = replace(NVIDIA.nvidia, gpus=())
    gpus_only = replace(NVIDIA.nvidia, driver_version=None, cuda_driver_version=None)
    neither = replace(gpus_only, gpus=(), error="NVIDIA-SMI has failed", error_code="no-devices")
    for nv, missing in ((version_only, False), (gpus_only, False), (neither, True)):
        facts = replace(G5, nvidia=nv)
        assert (found(facts, "gpu-without-driver") != []) is missing, nv
        with_nvcc = replace(facts, toolkits=NVCC13)
        assert (found(with_nvcc, "toolkit-without-driver") != []) is missing, nv


NVCC13 = host("debian12-nogpu-cuda13toolkit").toolkits  # nvcc 13.0.88 in /usr/local/cuda-13.0


def test_a_toolkit_without_a_driver_whole_and_where_it_was_found() -> None:
    facts = replace(NO_GPU, toolkits=NVCC13)
    source = NVCC13[0].source
    assert found(facts, "toolkit-without-driver") == [
        Finding(
            "toolkit-without-driver",
            "info",
            "CUDA toolkit 13.0 is installed, but there is no NVIDIA driver or GPU",
            evidence=(f"nvcc 13.0.88 ({source})", "no NVIDIA driver found"),
            fix="nothing to do for torch: the toolkit does not decide the wheel (wheels carry "
            "their own CUDA runtime), and without a driver torch runs on the CPU",
        )
    ]
    bare = replace(NVCC13[0], full_version=None, source=None)
    f = one(replace(NO_GPU, toolkits=(bare,)), "toolkit-without-driver")
    assert f.evidence[0] == "nvcc 13.0 (/usr/local/cuda-13.0)"
    f = one(replace(NO_GPU, toolkits=(replace(bare, path=None),)), "toolkit-without-driver")
    assert f.evidence[0] == "nvcc 13.0 (found)"


# --- what examine adds to the rules: the probes' notes, the root causes ------------------------


def test_a_probe_note_that_a_finding_already_says_is_not_repeated() -> None:
    assert NVIDIA.nvidia is not None
    error = "Failed to initialize NVML: Driver/library version mismatch"
    nv = replace(NVIDIA.nvidia, error=error, error_code="driver-library-mismatch")
    note = Note("driver-library-mismatch", error, "nvidia-smi", "error")
    facts = replace(NVIDIA, nvidia=nv, notes=(*NVIDIA.notes, note))
    (f,) = found(facts, "driver-library-mismatch")
    assert f.command == "sudo reboot"  # the doctor's finding, not the note's


def capture(name: str) -> str:
    return (HERE / "fixtures" / "collect_env" / name).read_text(encoding="utf-8")


def test_the_root_causes_get_the_plan_examine_was_given() -> None:
    """torch 2.0.1 (no row in the wheel data) printing that the RTX 5090's sm_120 is not among
    its architectures: the finding comes from the root causes, its command from the plan."""
    facts = parse(capture("warning-only-rtx5090-sm120-torch2.0.1.txt")).facts
    cu128 = plan_for("cu128")
    assert one(facts, "gpu-arch-not-in-wheel", cu128).command == reinstall(cu128)
    assert one(facts, "gpu-arch-not-in-wheel").command is None


def test_the_root_causes_get_the_wheel_data_examine_was_given() -> None:
    """torch's too-old-GPU warning (a real capture, for a GT 720 of capability 3.5) with the
    capability changed to a Tesla K80's 3.7 and the minimum to 5.0, as torch 2.x prints it:
    the wheel data names the newest build with sm_37; without the data, only a source build."""
    text = capture("warning-only-gt720-capability-3.5.txt")
    text = text.replace(
        "GeForce GT 720 which is of cuda capability 3.5",
        "Tesla K80 which is of cuda capability 3.7",
    )
    text = text.replace("supported by this library is 3.7", "supported by this library is 5.0")
    assert "Tesla K80" in text and "is 5.0." in text
    facts = parse(text).facts
    assert one(facts, "gpu-too-old").fix == "install torch 2.7.1+cu118: the newest build with sm_37"
    without = one(facts, "gpu-too-old", matrix=None).fix
    assert without is not None and without.startswith("no prebuilt torch in the data")
