"""doctor's single rules at their edges (issue 22): nvcc of the same major and another minor,
a companion a patch release away, a toolkit without a driver on each system. Machines are real
captures (tests/fixtures: replayed hosts, pasted reports) with one package or toolkit changed."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from setup_env.decide.doctor import examine
from setup_env.decide.model import Finding
from setup_env.facts import CudaToolkit, Facts, InstalledPackage
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, Variant
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost
from setup_env.probe.report import parse

HERE = Path(__file__).parent
M = mx.load_matrix(HERE / "fixtures" / "matrix" / "wheels-subset.json")
V = Variant.parse


def report(name: str) -> Facts:
    return parse((HERE / "fixtures" / "collect_env" / name).read_text(encoding="utf-8")).facts


def host(name: str) -> Facts:
    return detect(ReplayHost(HERE / "fixtures" / "hosts" / name), cloud_metadata=False)


def codes(facts: Facts) -> list[str]:
    return [f.code for f in examine(facts, None, M)]


def with_torch(facts: Facts, version: str, variant: str, cuda: str | None) -> Facts:
    torch = InstalledPackage("torch", version, variant=V(variant), cuda=cuda, installer="pip")
    return replace(facts, packages=(torch, *(p for p in facts.packages if p.name != "torch")))


def test_nvcc_of_the_same_major_and_another_minor_is_no_mismatch() -> None:
    facts = report("linux-h100-cu130-driver570.txt")  # nvcc 13.0
    assert facts.toolkits and facts.toolkits[0].version == "13.0"
    assert "nvcc-major-mismatch" not in codes(with_torch(facts, "2.9.0+cu132", "cu132", "13.2"))
    assert "nvcc-major-mismatch" in codes(with_torch(facts, "2.9.0+cu129", "cu129", "12.9"))
    # only the active (first) toolkit counts; a matching one further down is the fix's path
    other = CudaToolkit(version="12.9", path="/usr/local/cuda-12.9")
    both = replace(
        with_torch(facts, "2.9.0+cu129", "cu129", "12.9"), toolkits=(*facts.toolkits, other)
    )
    found = [f for f in examine(both, None, M) if f.code == "nvcc-major-mismatch"]
    assert [f.command for f in found] == ["export CUDA_HOME=/usr/local/cuda-12.9"]
    first = replace(both, toolkits=(other, *facts.toolkits))
    assert "nvcc-major-mismatch" not in codes(first)


def test_a_companion_a_patch_release_away_belongs_to_the_same_torch() -> None:
    facts = host("debian12-nogpu-cuda13toolkit")
    want = M.companion_versions(facts.package("torch").version)["torchvision"]  # type: ignore[union-attr]
    major, minor = want.split(".")[:2]
    for version, mismatch in (
        (f"{major}.{minor}.0+cpu", False),
        (f"{major}.{minor}.9+cpu", False),  # a patch apart: the same pairing
        (f"{major}.{int(minor) - 1}.0+cpu", True),
        (f"{major}.{int(minor) + 1}.0+cpu", True),
    ):
        vision = InstalledPackage("torchvision", version, variant=CPU, installer="pip")
        got = codes(replace(facts, packages=(*facts.packages, vision)))
        assert ("companion-version-mismatch" in got) is mismatch, (version, got)


def test_a_companion_of_another_build_line() -> None:
    facts = with_torch(report("linux-h100-cu130-driver570.txt"), "2.9.0+cu130", "cu130", "13.0")
    base = [p for p in facts.packages if p.name != "torchvision"]

    def with_vision(variant: str, cuda: str | None) -> list[str]:
        vision = InstalledPackage("torchvision", "0.24.0", variant=V(variant), cuda=cuda)
        return codes(replace(facts, packages=(*base, vision)))

    assert "companion-build-mismatch" not in with_vision("cu130", "13.0")
    assert "companion-build-mismatch" in with_vision("cu128", "12.8")
    assert "companion-build-mismatch" in with_vision("cpu", None)


def test_a_toolkit_without_a_driver_on_linux_and_on_windows() -> None:
    linux = host("debian12-nogpu-cuda13toolkit")
    assert codes(linux) == ["toolkit-without-driver"]
    windows = replace(linux, os=replace(linux.os, family="windows", libc=None, glibc=None))
    assert "toolkit-without-driver" in codes(windows)
    mac = replace(linux, os=replace(linux.os, family="darwin", libc=None, glibc=None))
    assert "toolkit-without-driver" not in codes(mac)
    assert "toolkit-without-driver" not in codes(replace(linux, toolkits=()))


def only(facts: Facts, code: str) -> Finding:
    hits = [f for f in examine(facts, None, M) if f.code == code]
    assert len(hits) == 1, codes(facts)
    return hits[0]


def test_a_driver_too_old_for_torchs_cuda_whole() -> None:
    f = only(report("linux-h100-cu130-driver570.txt"), "cuda-newer-than-driver")
    assert f == Finding(
        "cuda-newer-than-driver",
        "error",
        "torch's CUDA 13.0 is newer than driver 570.172.08 supports",
        evidence=(
            "torch 2.9.0 is built with CUDA 13.0",
            "NVIDIA driver 570.172.08",
            "CUDA 13.0 needs driver >= 580 (minor-version compatibility), >= 580.95.05 for "
            "full compatibility",
        ),
        fix="upgrade the NVIDIA driver to >= 580",
        details={"min_driver": "580", "reason": "driver-too-old"},
    )


def test_a_driver_known_only_by_its_cuda_whole() -> None:
    f = only(report("linux-driver-too-old-9010-cu102.txt"), "cuda-newer-than-driver")
    assert (f.title, f.fix, f.details) == (
        "torch's CUDA 10.2 is newer than driver 9.1 supports",
        "upgrade the NVIDIA driver",
        {"min_driver": "", "reason": "driver-too-old"},
    )
    assert f.evidence[1] == "the driver supports CUDA up to 9.1"


def test_minor_version_compatibility_is_a_note_with_the_full_driver() -> None:
    facts = with_torch(report("linux-h100-cu130-driver570.txt"), "2.7.0+cu128", "cu128", "12.8")
    assert facts.nvidia is not None
    older = replace(facts, nvidia=replace(facts.nvidia, driver_version="550.54.14"))
    f = only(older, "cuda-minor-version-compat")
    assert (f.severity, f.title) == (
        "info",
        "driver 550.54.14 runs CUDA 12.8 through minor-version compatibility",
    )
    assert f.evidence[1] == "NVIDIA driver 550.54.14"
    assert f.fix is not None and f.fix.endswith("needs driver >= 570.26")
    assert f.details == {"min_driver": "570.26", "reason": "driver-mvc"}
    assert "cuda-minor-version-compat" not in codes(facts)  # 570.172.08 runs it fully
    assert "cuda-newer-than-driver" not in codes(older)


def test_an_installed_rocm_torch_without_the_gpus_gfx() -> None:
    """RX 9070 XT (gfx1201) with torch 2.6.0+rocm6.2.4, whose wheel has no gfx12 code: the
    finding names the GPU and what the wheel carries; the fix is the plan's build when it
    names another, else a source build for that gfx. The bundled matrix knows the gfx lists."""
    from setup_env.decide.model import PlanOptions
    from setup_env.decide.plan import make_plan, spec_facts

    bundled = mx.load_matrix(mx.BUNDLED_PATH)
    facts = spec_facts(os="linux", python="3.12", gpus=["RX 9070 XT"])
    torch = InstalledPackage("torch", "2.6.0+rocm6.2.4", variant=V("rocm6.2.4"), installer="pip")
    facts = replace(facts, packages=(torch,))
    carries = "torch 2.6.0+rocm6.2.4 (rocm6.2.4) carries gfx900 gfx906 gfx908 gfx90a gfx942 "
    carries += "gfx1030 gfx1100 gfx1101"
    alone = [f for f in examine(facts, None, bundled) if f.code == "rocm-gfx-not-in-wheel"]
    assert alone == [
        Finding(
            "rocm-gfx-not-in-wheel",
            "error",
            "the installed torch has no kernels for RX 9070 XT (gfx1201)",
            evidence=(carries,),
            fix="build PyTorch from source with PYTORCH_ROCM_ARCH=gfx1201 "
            "(HSA_OVERRIDE_GFX_VERSION is an unsupported workaround)",
        )
    ]
    plan = make_plan(facts, PlanOptions(), bundled)
    assert plan.variant is not None and plan.variant != V("rocm6.2.4")
    (with_plan,) = [f for f in examine(facts, plan, bundled) if f.code == "rocm-gfx-not-in-wheel"]
    assert (with_plan.fix, with_plan.evidence) == ("install the build the plan names", (carries,))
    assert with_plan.command is not None and with_plan.command.endswith(plan.command)
    # a GPU the wheel carries: nothing to say
    mi300 = replace(spec_facts(os="linux", python="3.12", gpus=["MI300X"]), packages=(torch,))
    assert "rocm-gfx-not-in-wheel" not in [f.code for f in examine(mi300, None, bundled)]
