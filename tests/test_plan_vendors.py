"""What the planner says for AMD (ROCm), Intel (XPU) and CPU-only machines (issue 22): each test
names one rule of setup_env/decide/plan/vendors.py and compares everything the plan says where the
rule shows (reasons and warnings with their codes, the ranked fixes).

The matrix is the frozen subset (tests/fixtures/matrix/wheels-subset.json, see its SOURCE):
2.15.0's ROCm and XPU rows are unconfirmed; 2.14.1 has rocm7.14 and rocm7.2, 2.13.0 rocm7.1 and
rocm7.2, 2.5.1 rocm6.1 and rocm6.2. Which gfx targets each ROCm wheel carries is the product's
GPU data (setup_env/data/gpus.json "rocm_wheels"): from torch 2.13, rocm7.14 wheels dropped gfx900
and gfx906, which rocm7.x wheels still carry; gfx1101 came with torch 2.6; gfx1010 is in none.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from test_plan_behaviour import CPU_FIX, M, V, fixes, plan, reasons, unconfirmed, warnings

from setup_env.decide.plan import spec_facts
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU
from setup_env.probe.report import parse

REPORTS = Path(__file__).resolve().parent / "fixtures" / "collect_env"
ALL = [str(r.version) for r in M.releases]
UNVERIFIED_ROCM = (
    "unverified-fit",
    "2.15.0+rocm7.14, 2.15.0+rocm7.2 may exist but are not confirmed on PyTorch's index; run "
    "`setup-env matrix refresh` where download.pytorch.org is reachable",
)
ROCM_72 = (
    "gfx900 gfx906 gfx908 gfx90a gfx942 gfx950 gfx1030 gfx1100 gfx1101 gfx1102 gfx1103 gfx1200 "
    "gfx1201 gfx1150 gfx1151"
)
CPU_INFERRED = (
    "row-inferred",
    "that PyTorch's index has torch 2.15.0+cpu for linux_x86_64 is inferred, not read from the "
    "index (VERIFIED.md §5: 'a cpu variant surely exists'); `setup-env matrix refresh` confirms "
    "it where download.pytorch.org is reachable",
)
NEVER_1010 = (
    "rocm-gfx-never-official",
    "gfx1010 is in no official PyTorch ROCm wheel; HSA_OVERRIDE_GFX_VERSION (making the runtime "
    "report a listed target) is a community workaround, not a supported configuration: kernels "
    "may fail or give wrong results",
)


def amd(*gpus: str, **spec: Any) -> Facts:
    return spec_facts(os="linux", python="3.12", glibc="2.35", gpus=list(gpus), **spec)


def linux(**spec: Any) -> Facts:
    return spec_facts(os="linux", python="3.12", glibc="2.35", **spec)


def source_build(arch: str) -> tuple[str, str]:
    return (
        "build-from-source",
        f"build PyTorch from source for your GPU: PYTORCH_ROCM_ARCH={arch} python setup.py "
        "develop, on ROCm (https://github.com/pytorch/pytorch#amd-rocm-support)",
    )


def without(matrix: mx.Matrix, version: str, variant: str) -> mx.Matrix:
    """``matrix`` with release ``version``'s rows on PyTorch's index for ``variant`` cut out."""
    releases = tuple(
        dataclasses.replace(r, index={v: p for v, p in r.index.items() if str(v) != variant})
        if str(r.version) == version
        else r
        for r in matrix.releases
    )
    return dataclasses.replace(matrix, releases=releases)


# --- AMD: which wheel carries the GPU's gfx target


def test_an_amd_gpu_the_newest_rocm_wheel_dropped_takes_the_older_rocm_that_carries_it() -> None:
    """MI50 (gfx906): 2.14.1's rocm7.14 has no gfx906, its rocm7.2 has: rocm7.2, and the plan
    says which newer wheel lacks the GPU."""
    p = plan(amd("MI50"))
    assert (p.status, p.torch_version, p.variant, p.source) == (
        "ok", "2.14.1", V("rocm7.2"), "index"
    )  # fmt: skip
    assert reasons(p) == [
        ("accelerator-build", "AMD GPU(s) MI50 (gfx906): torch 2.14.1 from PyTorch's rocm7.2 "
         "index (PyPI's wheels carry no AMD GPU support)"),
        ("newest-release-blocked", "torch 2.15.0: no rocm build is confirmed in the data"),
        ("rocm-gfx-in-wheel", "torch 2.14.1+rocm7.2 carries gfx906 (PYTORCH_ROCM_ARCH of "
         f"PyTorch's build: {ROCM_72})"),
        ("rocm-gfx-not-in-wheel", "2.14.1+rocm7.14: no kernels for gfx906"),
    ]  # fmt: skip
    assert (warnings(p), p.fixes) == ([UNVERIFIED_ROCM], ())


def test_an_amd_gpu_named_without_its_gfx_is_checked_by_the_gfx_of_its_model() -> None:
    """Facts whose AMD GPU carries no gfx id (written by another detector): the model's gfx
    (MI50: gfx906) decides the wheel as if it had been given, and is not warned unknown."""
    f = amd("MI50")
    assert f.rocm is not None
    bare = tuple(dataclasses.replace(g, gfx_arch=None) for g in f.rocm.gpus)
    p = plan(dataclasses.replace(f, rocm=dataclasses.replace(f.rocm, gpus=bare)))
    assert (p.torch_version, p.variant) == ("2.14.1", V("rocm7.2"))
    assert reasons(p)[0][1].startswith("AMD GPU(s) MI50: torch 2.14.1")
    assert (reasons(p)[1:], warnings(p)) == (reasons(plan(f))[1:], [UNVERIFIED_ROCM])


def test_an_amd_gpu_of_unknown_gfx_is_not_said_to_be_carried_by_the_wheel() -> None:
    """A real report naming its GPU "Device 66a1" (no gfx, no known model), its Python line
    changed from 3.6 to 3.12 so that a release installs: the newest confirmed ROCm, and a warning
    that the GPU's gfx is unchecked instead of a claim that the wheel carries it. Beside an
    MI300X (gfx942) the wheel is said to carry gfx942, and the unknown GPU is still named."""
    text = (REPORTS / "linux-rocm3.7-source-build-device-66a1.txt").read_text(encoding="utf-8")
    assert "Python version: 3.6 (64-bit runtime)" in text
    f = parse(text.replace("Python version: 3.6 (", "Python version: 3.12 (")).facts
    assert f.rocm is not None and [(g.name, g.gfx_arch) for g in f.rocm.gpus] == [
        ("Device 66a1", None)
    ]
    unknown = (
        "rocm-gpu-gfx-unknown",
        "the gfx target of Device 66a1 is unknown, so whether this ROCm wheel carries it is not "
        "checked: torch.cuda.get_arch_list() after install lists what it carries",
    )
    p = plan(f)
    assert (p.status, p.torch_version, p.variant) == ("ok", "2.14.1", V("rocm7.14"))
    assert [c for c, _t in reasons(p)] == ["accelerator-build", "newest-release-blocked"]
    assert warnings(p)[0][0] == "glibc-unknown"  # the report names no glibc
    assert warnings(p)[1:] == [UNVERIFIED_ROCM, unknown]
    mi300x = amd("MI300X").rocm
    assert mi300x is not None
    both = dataclasses.replace(f, rocm=dataclasses.replace(f.rocm, gpus=f.rocm.gpus + mi300x.gpus))
    p = plan(both)
    assert (p.torch_version, p.variant) == ("2.14.1", V("rocm7.14"))
    assert reasons(p)[0][1].startswith("AMD GPU(s) Device 66a1, MI300X (gfx942): torch 2.14.1")
    assert reasons(p)[2][1].startswith("torch 2.14.1+rocm7.14 carries gfx942 (PYTORCH_ROCM_ARCH")
    assert warnings(p)[1:] == [UNVERIFIED_ROCM, unknown]


def test_a_rocm_wheel_whose_gfx_list_the_data_lacks_is_warned_unchecked() -> None:
    """The GPU data lists no gfx targets for a torch 2.13+ wheel of ROCm below 7.0: 2.14.1's
    rocm7.2 row renamed rocm6.4 (and its rocm7.14 row cut) reaches that wheel."""
    relabelled = tuple(
        dataclasses.replace(
            r,
            index={
                (V("rocm6.4") if str(v) == "rocm7.2" else v): p
                for v, p in r.index.items()
                if str(v) != "rocm7.14"
            },
        )
        if str(r.version) == "2.14.1"
        else r
        for r in M.releases
    )
    p = plan(amd("MI300X"), dataclasses.replace(M, releases=relabelled))
    assert (p.torch_version, p.variant) == ("2.14.1", V("rocm6.4"))
    assert "rocm-gfx-in-wheel" not in p.reason_codes
    assert warnings(p)[-1] == (
        "rocm-gfx-unchecked",
        "the data doesn't list which gfx architectures this ROCm wheel carries: check that yours "
        "is in PyTorch's ROCm build (torch.cuda.get_arch_list() after install)",
    )


def test_gpus_no_one_rocm_wheel_carries_fall_back_to_cpu_naming_what_the_newest_lacks() -> None:
    """RX 5700 XT (gfx1010, in no wheel), MI50 (gfx906, not in rocm7.14) and MI300X (gfx942, in
    every wheel): the newest ROCm wheel (2.14.1+rocm7.14) lacks the first two, the models named;
    a source build for both; no later torch is offered (gfx906 was carried before, not after)."""
    p = plan(amd("RX 5700 XT", "MI50", "MI300X"))
    assert (p.status, p.torch_version, p.variant) == ("fallback", "2.15.0", V("cpu"))
    assert reasons(p) == [
        ("cpu-fallback", "fallback: the CPU build of torch 2.15.0; no GPU build fits (see the "
         "fixes)"),
        ("rocm-gfx-not-in-wheel", "no official ROCm wheel of torch 2.14.1 carries gfx1010, gfx906 "
         "(RX 5700 XT, MI50): PyTorch builds for a fixed list of gfx targets"),
    ]  # fmt: skip
    assert warnings(p) == [NEVER_1010, CPU_INFERRED]
    assert fixes(p) == [source_build("gfx1010;gfx906"), CPU_FIX]


def test_a_gpu_newer_than_the_pinned_torch_is_offered_the_first_release_that_carries_it() -> None:
    """--torch 2.5.1 on gfx1010 (in no wheel, said first) and RX 7800 XT (gfx1101, from torch
    2.6): the later torch for the second GPU ranks before the source build for both."""
    p = plan(amd("gfx1010", "RX 7800 XT"), torch="2.5.1")
    assert (p.status, p.torch_version, p.variant) == ("fallback", "2.5.1", V("cpu"))
    assert reasons(p)[1] == (
        "rocm-gfx-not-in-wheel",
        "no official ROCm wheel of torch 2.5.1 carries gfx1010, gfx1101 (RX 7800 XT): PyTorch "
        "builds for a fixed list of gfx targets",
    )
    assert warnings(p) == [NEVER_1010]
    assert fixes(p) == [
        ("pin-torch", "torch 2.6.0 or newer carries gfx1101: plan without the --torch pin (or "
         "with --torch 2.6)"),
        source_build("gfx1010;gfx1101"),
        CPU_FIX,
    ]  # fmt: skip


def test_a_gpu_named_by_its_gfx_alone_is_not_named_twice() -> None:
    p = plan(amd("gfx1010"))
    assert reasons(p)[1] == (
        "rocm-gfx-not-in-wheel",
        "no official ROCm wheel of torch 2.14.1 carries gfx1010: PyTorch builds for a fixed list "
        "of gfx targets",
    )
    assert fixes(p) == [source_build("gfx1010"), CPU_FIX]


def test_an_amd_gpu_with_no_confirmed_rocm_build_at_all_is_a_cpu_fallback_that_says_so() -> None:
    p = plan(amd("MI300X"), unconfirmed(M, dict.fromkeys(ALL), kind="rocm"))
    assert (p.status, p.torch_version, p.variant) == ("fallback", "2.15.0", V("cpu"))
    assert reasons(p) == [
        ("cpu-fallback", "fallback: the CPU build of torch 2.15.0; no GPU build fits (see the "
         "fixes)"),
        ("no-accelerator-build", "no confirmed rocm build of torch fits this interpreter"),
    ]  # fmt: skip
    assert (warnings(p), fixes(p)) == ([CPU_INFERRED], [CPU_FIX])


def test_an_accelerator_plan_on_a_release_without_a_companion_offers_the_newest_with_it() -> None:
    """torchaudio is unknown for 2.14.1, the ROCm plan's release: torch alone, and the newest
    release with a known torchaudio as a fix."""
    p = plan(amd("MI300X"), with_packages=("torchaudio",))
    assert (p.torch_version, p.requirements) == ("2.14.1", ("torch==2.14.1",))
    assert fixes(p) == [
        ("pin-torch", "torch 2.13.0 is the newest with a known torchaudio (==2.11.0): --torch "
         "2.13.0"),
    ]  # fmt: skip


# --- no GPU: the cpu index on Linux, PyPI elsewhere


def test_no_gpu_on_linux_skips_a_release_whose_cpu_index_row_is_unconfirmed_or_absent() -> None:
    """PyPI's Linux wheel is a CUDA build: a release is planned only from a confirmed cpu index
    row, so 2.14.1 when 2.15.0's is unconfirmed, and when it is cut out of the data."""
    for m in (unconfirmed(M, {"2.15.0": None}, kind="cpu"), without(M, "2.15.0", "cpu")):
        p = plan(linux(), m)
        assert (p.status, p.torch_version, p.variant, p.source) == (
            "ok", "2.14.1", CPU, "index"
        )  # fmt: skip
        assert reasons(p) == [
            ("no-gpu", "no GPU found: the CPU build from PyTorch's cpu index of torch 2.14.1"),
            ("pypi-default-differs", "PyPI's linux_x86_64 wheel is the cu130 build (several GB "
             "of CUDA libraries); the cpu index avoids downloading them"),
        ]  # fmt: skip


def test_no_confirmed_cpu_build_in_any_release_plans_nothing() -> None:
    p = plan(linux(), unconfirmed(M, dict.fromkeys(ALL), kind="cpu"))
    assert (p.status, p.torch_version, p.variant) == ("none", None, None)
    assert reasons(p) == [
        ("no-cpu-build", "no CPU build of torch fits this interpreter either"),
    ]
    assert (warnings(p), p.fixes) == ([], ())


def test_no_gpu_where_the_data_does_not_say_what_pypi_serves_names_no_difference() -> None:
    """2.15.0 without its PyPI Linux row: the cpu index, and no claim about PyPI's build."""
    releases = tuple(
        dataclasses.replace(
            r, pypi_variant={k: x for k, x in r.pypi_variant.items() if k != "linux_x86_64"}
        )
        if str(r.version) == "2.15.0"
        else r
        for r in M.releases
    )
    p = plan(linux(), dataclasses.replace(M, releases=releases))
    assert (p.torch_version, p.source) == ("2.15.0", "index")
    assert reasons(p) == [
        ("no-gpu", "no GPU found: the CPU build from PyTorch's cpu index of torch 2.15.0"),
    ]


def test_no_gpu_without_a_companion_offers_the_newest_release_with_it() -> None:
    """torchvision is unknown for 2.15.0: from the cpu index (Linux) and from PyPI (Windows)
    alike, torch alone and the newest release with a torchvision as a fix."""
    for f in (linux(), spec_facts(os="windows", python="3.12")):
        p = plan(f, with_packages=("torchvision",))
        assert (p.torch_version, p.requirements) == ("2.15.0", ("torch==2.15.0",))
        assert fixes(p) == [
            ("pin-torch", "torch 2.14.1 is the newest with a known torchvision (==0.29.*): "
             "--torch 2.14.1"),
        ]  # fmt: skip


# --- Apple Silicon: MPS from macOS 14


def test_apple_silicon_on_macos_14_exactly_gets_mps() -> None:
    p = plan(spec_facts(os="macos", python="3.12", macos="14"))
    assert (p.status, p.torch_version, p.variant, p.source) == ("ok", "2.15.0", V("mps"), "pypi")
    assert reasons(p) == [
        ("mps", "Apple Silicon: PyPI's torch 2.15.0 wheel has the MPS (Metal) backend"),
    ]
    assert (warnings(p), p.fixes) == ([], ())


def test_apple_silicon_before_macos_14_gets_the_cpu_build_and_is_told_why() -> None:
    """macOS 13.6: 2.11.0 (the newest that installs there), the CPU build."""
    p = plan(spec_facts(os="macos", python="3.12", macos="13.6"))
    assert (p.torch_version, p.variant) == ("2.11.0", CPU)
    assert reasons(p)[0] == ("apple-old-macos", "Apple Silicon on macOS 13.6: torch 2.11.0")
    assert warnings(p) == [
        ("mps-needs-macos-14", "PyTorch's MPS backend is built for macOS 14 (Sonoma) or later; "
         "on older macOS torch may fall back to the CPU"),
    ]  # fmt: skip
