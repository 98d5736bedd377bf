"""The nightly channel (setup_env/decide/plan/nightly.py), issue 22: which nightly build a machine
gets, and a plan of none where the nightly index has no build for it."""

from __future__ import annotations

import dataclasses

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

NIGHTLY = PlanOptions(channel="nightly")
INDEX = "https://download.pytorch.org/whl/nightly"


def _bundled() -> mx.Matrix:
    return mx.load_matrix(mx.BUNDLED_PATH)


def _nvidia(gpu: str, os: str = "linux") -> Facts:
    glibc = "2.35" if os == "linux" else None
    return spec_facts(os=os, python="3.12", glibc=glibc, gpus=[gpu], driver="595.71")


def _stable_cuda_is(m: mx.Matrix, variant: str) -> mx.Matrix:
    """The matrix with its newest release's PyPI CUDA (linux x86_64) changed to ``variant``."""
    newest = m.newest
    pypi = dict(newest.pypi_variant)
    v = Variant.find(variant)
    assert v is not None
    pypi["linux_x86_64"] = dataclasses.replace(pypi["linux_x86_64"], variant=v)
    changed = dataclasses.replace(newest, pypi_variant=pypi)
    return dataclasses.replace(m, releases=(*m.releases[:-1], changed))


def test_an_intel_mac_has_no_nightly_and_is_told_so() -> None:
    """PyTorch's nightly index carries macOS arm64 only: an Intel Mac gets a plan of none with
    the reason, never a command pip cannot resolve."""
    intel = make_plan(spec_facts(os="macos", arch="x86_64", python="3.12"), NIGHTLY, _bundled())
    assert intel.status == "none" and intel.command == "" and intel.argv == (), intel
    assert intel.reason_codes[0] == "nightly-no-variant"
    assert intel.reasons[0] == "the nightly channel has no cpu build for macos_x86_64 in the data"
    arm = make_plan(spec_facts(os="macos", arch="arm64", python="3.12"), NIGHTLY, _bundled())
    assert arm.status == "ok" and arm.command == f"pip install --pre torch --index-url {INDEX}/cpu"


def test_a_variant_asked_that_the_nightlies_lack_is_none() -> None:
    plan = make_plan(_nvidia("RTX 4090"), PlanOptions(channel="nightly", variant="cu128"))
    assert plan.status == "none" and plan.reason_codes[0] == "nightly-no-variant", plan
    assert plan.reasons[0] == "the nightly channel has no cu128 build for linux_x86_64 in the data"
    asked = make_plan(_nvidia("RTX 4090"), PlanOptions(channel="nightly", variant="cu130"))
    assert asked.status == "ok" and asked.command.endswith(f"{INDEX}/cu130")


def test_nvidia_gets_the_stable_pypi_cuda_when_it_runs_the_gpus() -> None:
    """The newest stable PyPI wheel's CUDA (cu132) over a newer nightly-only CUDA (cu134, no
    stable build to read its kernels from), and over the older ones that fit too."""
    m = _bundled()
    assert "cu134" in [str(v) for v in m.nightly["linux_x86_64"]]
    assert str(m.newest.pypi_variant["linux_x86_64"].variant) == "cu132"
    for gpu in ("RTX 4090", "RTX 5090", "H100"):
        plan = make_plan(_nvidia(gpu), NIGHTLY, m)
        assert plan.command == f"pip install --pre torch --index-url {INDEX}/cu132", (gpu, plan)
    # with PyPI's stable CUDA said to be cu130, that is the one, not the newer cu132
    older = _stable_cuda_is(m, "cu130")
    assert make_plan(_nvidia("RTX 4090"), NIGHTLY, older).command.endswith(f"{INDEX}/cu130")
    # Windows follows the same stable CUDA (PyPI's Windows wheel is CPU only)
    assert make_plan(_nvidia("RTX 4090", os="windows"), NIGHTLY, older).command.endswith(
        f"{INDEX}/cu130"
    )


def test_nvidia_falls_to_the_newest_cuda_that_runs_the_gpus() -> None:
    """A GTX 1080 (sm_61): CUDA 13 dropped Pascal, so not the stable cu132 but cu126."""
    plan = make_plan(_nvidia("GTX 1080"), NIGHTLY, _bundled())
    assert plan.status == "ok" and plan.command.endswith(f"{INDEX}/cu126"), plan
    # the stable CUDA fitting no GPU is no reason to refuse: still the newest that fits
    assert make_plan(_nvidia("GTX 1080"), NIGHTLY, _stable_cuda_is(_bundled(), "cu130")) == plan


def test_a_mirror_gets_its_nightly_folder_with_one_slash() -> None:
    opts = PlanOptions(channel="nightly", index_url="https://mirror.example/whl/")
    plan = make_plan(spec_facts(os="linux", python="3.12", glibc="2.35"), opts, _bundled())
    assert plan.index_url == "https://mirror.example/whl/nightly/cpu"
    assert (
        plan.command == "pip install --pre torch --index-url https://mirror.example/whl/nightly/cpu"
    )


def test_a_nightly_plan_names_no_release_and_carries_no_fixes() -> None:
    plan: Plan = make_plan(_nvidia("RTX 4090"), NIGHTLY, _bundled())
    assert (plan.status, plan.source, plan.platform) == ("ok", "nightly", "linux_x86_64")
    assert plan.torch_version is None and plan.newest_torch is None
    assert plan.fixes == () and plan.details == {}
    assert plan.requirements == ("torch",) and plan.warning_codes[-1] == "nightly-unverified"
