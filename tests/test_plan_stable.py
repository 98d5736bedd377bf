"""The stable channel (issue 22): which releases install here and how the newer ones that don't
are said, what a pinned ``--variant`` plans (its warnings, its fixes, and where no build is
confirmed), and the plan where nothing installs. Described machines (``spec_facts``) against the
bundled matrix; where a test changes the matrix or a described build to reach a case, its
docstring says how."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from test_plan_behaviour import fixes, reasons, warnings
from test_plan_rules import _pypi_wheel_needs  # a release's PyPI wheel made to need more glibc

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.decide.plan.context import _installable
from setup_env.decide.plan.target import _target
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

M = mx.load_matrix(mx.BUNDLED_PATH)
V = Variant.parse


def plan(facts: Facts, matrix: mx.Matrix = M, **options: Any) -> Plan:
    return make_plan(facts, PlanOptions(**options), matrix)


def nvidia(driver: str | None, *gpus: str, **spec: Any) -> Facts:
    spec.setdefault("python", "3.12")
    return spec_facts(os="linux", gpus=gpus or ("RTX 4090",), driver=driver, **spec)


# --- which releases install: the index route is the wider one


@pytest.mark.parametrize(
    ("matrix", "index_only"),
    [(M, False), (_pypi_wheel_needs("2.34", "2.14.1"), True)],
    ids=["bundled", "trapped"],
)
def test_what_installs_from_pypi_installs_from_the_index_and_a_refusal_reads_alike(
    matrix: mx.Matrix, index_only: bool
) -> None:
    """The rule the stable channel rests on when it asks the index alone whether a release
    installs: on every platform, Python, glibc (below, at and above the floors, unknown), each
    release PyPI's wheels install also installs from PyTorch's index; where neither route
    installs, both give the same reason."""
    machines = [
        spec_facts(os=os, arch=arch, python=py, glibc=glibc)
        for os, arch, glibcs in (
            ("linux", "x86_64", (None, "2.17", "2.27", "2.28", "2.31", "2.34")),
            ("linux", "aarch64", (None, "2.27", "2.28")),
            ("windows", "x86_64", (None,)),
            ("macos", "arm64", (None,)),
        )
        for glibc in glibcs
        for py in ("3.8", "3.9", "3.12", "3.13t", "3.14")
    ]
    seen = {"index-only": 0, "both": 0, "neither": 0}
    for facts in machines:
        t = _target(facts)
        for rel in matrix.releases:
            pypi, why_pypi = _installable(rel, t, via_pypi=True)
            index, why_index = _installable(rel, t, via_pypi=False)
            assert not (pypi and not index), (str(rel.version), t)
            if not (pypi or index):
                assert why_pypi == why_index, (str(rel.version), t)
            key = "both" if pypi and index else "index-only" if index else "neither"
            seen[key] += 1
    # both answers are met; one route alone only where a PyPI wheel's tag hides its glibc
    assert seen["both"] and seen["neither"]
    assert bool(seen["index-only"]) == index_only


def test_a_release_only_the_index_installs_is_weighed_not_refused() -> None:
    """torch 2.15.0's PyPI wheel needing glibc 2.34, on glibc 2.31: 2.15.0 still installs (from
    the index), so it is weighed as a candidate (its cu132 there is unconfirmed, and said so)
    rather than refused as a release this interpreter cannot install."""
    p = plan(nvidia("595.71.05", glibc="2.31"), _pypi_wheel_needs("2.34", "2.15.0"))
    assert (p.status, p.torch_version, p.source) == ("ok", "2.14.1", "pypi")
    assert ("newest-release-blocked", "torch 2.15.0: no fitting variant") in reasons(p)
    assert not {"newer-release-not-installable", "newest-installable"} & set(p.reason_codes)
    assert p.warnings[0].startswith("torch 2.15.0+cu132 would also fit")


def test_the_newer_releases_that_do_not_install_are_named_and_the_planned_one_is_not() -> None:
    """glibc 2.27: two groups of newer releases don't install (the 2.28 floor, 2.6.0's trap),
    then the newest that does is named; the planned release itself is in no group."""
    p = plan(nvidia("580.95.05", glibc="2.27"))
    assert p.torch_version == "2.5.1"
    said = ("newer-release-not-installable", "newest-installable")
    assert [text for code, text in reasons(p) if code in said] == [
        "torch 2.7.0–2.15.0: needs glibc >= 2.28 (this system has 2.27)",
        "torch 2.6.0: needs glibc >= 2.28 (this system has 2.27); its manylinux1_x86_64 tag "
        "hides that: pip would install it and `import torch` would fail with 'GLIBC_2.28 not "
        "found'",
        "the newest torch this interpreter can install is 2.5.1",
    ]


# --- nothing installs


def test_a_python_known_by_its_wheel_tags_alone_gets_the_reason_nothing_installs() -> None:
    """A Python known by the tags it accepts (no version) is a Python: where the pinned torch
    2.6.0 does not install (glibc 2.27, its trap), the plan says why and what would install,
    not that the facts name no Python."""
    f = nvidia(None, glibc="2.27")
    tags_only = dataclasses.replace(f, python=dataclasses.replace(f.python, version=None))
    assert tags_only.python.tags
    p = plan(tags_only, torch="2.6.0")
    assert (p.status, p.reason_codes) == ("none", ("nothing-installable",))
    assert p.reasons[0].startswith("torch 2.6.0 needs glibc >= 2.28 (this system has 2.27)")
    assert [k for k, _s in fixes(p)] == ["pin-torch", "newer-os"]
    assert fixes(p)[0][1].endswith(": --torch 2.5.1")


# --- --variant: the build asked for


def _with_ptx(variant: str, release: str, ptx: str) -> mx.Matrix:
    """The bundled matrix, with one change: the build of ``variant`` that ``release`` belongs to
    for Linux x86_64 carries PTX for ``ptx`` beside its SASS (TORCH_CUDA_ARCH_LIST
    "...;9.0+PTX", as torch's CUDA 11 builds spelled it): a newer GPU runs it by PTX JIT."""
    doc = json.loads(mx.BUNDLED_PATH.read_text(encoding="utf-8"))
    (row,) = [
        b
        for b in doc["builds"]
        if b["variant"] == variant and release in b["releases"] and "linux_x86_64" in b["platforms"]
    ]
    row["ptx"] = [ptx]
    return mx.parse(doc)


def test_a_pinned_variant_a_gpu_runs_through_ptx_only_is_planned_with_that_warning() -> None:
    """cu126 of torch 2.14.1 given sm_90 PTX: the RTX 5090 (sm_120) runs it by JIT only, which
    the plan warns of by name; the RTX 4090 (sm_89, SASS of sm_86) is not named."""
    ptx = _with_ptx("cu126", "2.14.1", "9.0")
    p = plan(
        nvidia("580.95.05", "RTX 5090", "RTX 4090", glibc="2.35"),
        ptx,
        variant="cu126",
        torch="2.14.1",
    )
    assert (p.status, p.variant, p.driver_compat) == ("ok", V("cu126"), "full")
    assert warnings(p) == [
        ("arch-ptx", "RTX 5090 run(s) cu126 of torch 2.14.1 through PTX JIT compilation only "
         "(slow first start)"),
    ]  # fmt: skip
    # the same build without PTX: the RTX 5090 has no kernels in it at all
    p = plan(nvidia("580.95.05", "RTX 5090", glibc="2.35"), variant="cu126", torch="2.14.1")
    assert [c for c, _w in warnings(p)] == ["arch-missing"]


def test_a_pinned_variant_without_kernels_for_a_gpu_names_it_and_what_it_will_see() -> None:
    """cu118 (torch 2.7.1, its newest release) on an RTX 5090 and an H100: only the RTX 5090
    (sm_120) lacks kernels, and the warning says the error it will meet."""
    p = plan(nvidia("580.95.05", "RTX 5090", "H100", glibc="2.35"), variant="cu118")
    assert (p.status, p.torch_version, p.variant) == ("ok", "2.7.1", V("cu118"))
    assert warnings(p) == [
        ("arch-missing", "cu118 of torch 2.7.1 has no kernels for RTX 5090 (sm_120): 'no kernel "
         "image is available' at run time"),
    ]  # fmt: skip


def test_a_pinned_variant_on_a_too_old_driver_puts_the_driver_before_the_python() -> None:
    """Python 3.9 (newest release 2.8.0) and driver 520.61.05 with --variant cu126: the plan
    stands, with two fixes: the driver upgrade cu126 needs first, then the Python change the
    newer releases need."""
    p = plan(nvidia("520.61.05", python="3.9", glibc="2.35"), variant="cu126")
    assert (p.status, p.torch_version, p.variant, p.driver_compat) == (
        "ok",
        "2.8.0",
        V("cu126"),
        None,
    )
    assert [k for k, _s in fixes(p)] == ["upgrade-driver", "change-python"]
    assert "for torch 2.8.0 (cu126)" in p.fixes[0].summary


def test_a_pinned_variant_whose_release_lacks_a_companion_offers_the_newest_release_with_it() -> (
    None
):
    """--variant cpu --with torchvision: torch 2.15.0 has no torchvision yet; the plan installs
    torch alone and offers torch 2.14.1, the newest with a known torchvision."""
    p = plan(nvidia("580.95.05", glibc="2.35"), variant="cpu", with_packages=("torchvision",))
    assert (p.status, p.torch_version, p.variant) == ("ok", "2.15.0", V("cpu"))
    assert "companion-unknown" in p.warning_codes
    assert fixes(p) == [
        (
            "pin-torch",
            "torch 2.14.1 is the newest with a known torchvision (==0.29.*): --torch 2.14.1",
        )
    ]


# --- --variant with no confirmed build


def test_a_variant_listed_unverified_only_is_refused_and_the_listing_named() -> None:
    """--torch 2.15.0 --variant cu130: the index lists cu130 for 2.15.0 unverified; nothing is
    planned, the warning names the release, and the fix names 2.14.1, the newest with it."""
    p = plan(nvidia("580.95.05", glibc="2.35"), variant="cu130", torch="2.15.0")
    assert (p.status, p.reason_codes) == ("none", ("no-variant-build",))
    assert warnings(p) == [
        ("unverified-variant", "cu130 for torch 2.15.0 is listed as unverified (PyTorch's index "
         "could not be read); `setup-env matrix refresh` can confirm it"),
    ]  # fmt: skip
    assert fixes(p) == [
        ("pin-torch", "the newest torch with a confirmed cu130 build for linux_x86_64 is 2.14.1: "
         "--torch 2.14.1 --variant cu130"),
    ]  # fmt: skip


def _unverified(variant: str, platform: str) -> mx.Matrix:
    """The bundled matrix as before a refresh could read PyTorch's index: every ``variant``
    entry for ``platform`` listed, none confirmed."""
    v = V(variant)
    releases = []
    for r in M.releases:
        av = r.index.get(v, {}).get(platform)
        if av is not None:
            plats = {**r.index[v], platform: dataclasses.replace(av, verified=False)}
            r = dataclasses.replace(r, index={**r.index, v: plats})
        releases.append(r)
    return dataclasses.replace(M, releases=tuple(releases))


def test_the_unverified_warning_names_the_three_newest_listings() -> None:
    """Windows (PyPI serves CPU there), cu126 listed for 2.6.0 ... 2.14.1 and none confirmed:
    the warning names 2.14.1, 2.14.0, 2.13.0; no release is offered, none being confirmed."""
    p = plan(spec_facts(os="windows", python="3.12", gpus=["RTX 4090"], driver="580.88"),
             _unverified("cu126", "windows_x86_64"), variant="cu126")  # fmt: skip
    assert (p.status, p.reason_codes) == ("none", ("no-variant-build",))
    assert warnings(p) == [
        ("unverified-variant", "cu126 for torch 2.14.1, 2.14.0, 2.13.0 is listed as unverified "
         "(PyTorch's index could not be read); `setup-env matrix refresh` can confirm it"),
    ]  # fmt: skip
    assert p.fixes == ()


def test_a_variant_no_release_has_for_the_platform_is_refused_with_nothing_to_pin() -> None:
    """--variant rocm7.2 on Windows: no release has it there, confirmed or not: no warning, no
    release to pin."""
    p = plan(spec_facts(os="windows", python="3.12"), variant="rocm7.2")
    assert (p.status, p.reasons) == (
        "none",
        ("no confirmed rocm7.2 build of torch for windows_x86_64 and Python 3.12",),
    )
    assert (p.warnings, p.fixes) == ((), ())


def test_a_variant_only_releases_this_python_cannot_install_have_offers_both_steps() -> None:
    """Python 3.9 (newest release 2.8.0) with --variant cu130 (from 2.9 on): the plan names the
    newest release with a confirmed cu130 build first, then the Python change it needs."""
    p = plan(nvidia("580.95.05", python="3.9", glibc="2.35"), variant="cu130")
    assert (p.status, p.reasons[0]) == (
        "none",
        "no confirmed cu130 build of torch for linux_x86_64 and Python 3.9",
    )
    assert [k for k, _s in fixes(p)] == ["pin-torch", "change-python"]
    assert fixes(p)[0][1].endswith(": --torch 2.14.1 --variant cu130")


def test_a_pinned_variant_on_gpus_without_a_driver_says_which_driver_to_install() -> None:
    """An RTX 4090 with no driver, --variant cu126: torch 2.14.1's cu126 is planned, with the
    driver to install first (CUDA 12.6's own, 560.35.05); a machine with no GPU at all (planned
    for elsewhere) is told nothing of a driver."""
    p = plan(nvidia(None, glibc="2.35"), variant="cu126")
    assert (p.status, p.torch_version, p.driver_compat) == ("ok", "2.14.1", "no-driver")
    assert warnings(p) == [
        ("driver-absent", "no NVIDIA driver was found: install one >= 560.35.05 before using "
         "cu126 of torch 2.14.1"),
    ]  # fmt: skip
    assert [k for k, _s in fixes(p)] == ["upgrade-driver"]
    assert p.fixes[0].summary.startswith("Install the NVIDIA driver to >= 560.35.05 ")
    assert p.fixes[0].summary.endswith(
        "for torch 2.14.1 (cu126), from your distribution's packages or NVIDIA's CUDA "
        "repository; reboot after"
    )
    bare = plan(spec_facts(os="linux", python="3.12", glibc="2.35"), variant="cu126")
    assert (bare.status, bare.driver_compat, bare.warnings, bare.fixes) == (
        "ok",
        "no-driver",
        (),
        (),
    )
