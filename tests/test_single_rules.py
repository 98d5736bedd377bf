"""Single rules of the knowledge layer, each at its boundary (issue 22): an arch entry on a GPU
of exactly its capability, a driver exactly on a floor or a window edge, the spellings of a
compute capability, the variant labels the index uses, the order of variants."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from setup_env.knowledge import matrix as mx
from setup_env.knowledge.cuda import (
    Arch,
    DriverFit,
    driver_fit,
    parse_cc,
    runs_on,
    sm_of,
    window_fit,
)
from setup_env.knowledge.variant import CPU, MPS, XPU, Variant, VariantError, is_index_label

M = mx.load_matrix(Path(__file__).resolve().parent / "fixtures" / "matrix" / "wheels-subset.json")
V = Variant.parse


# --- arch entries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "cc", "how"),
    [
        ("compute_80", (8, 0), "ptx"),  # exactly X.Y: PTX JIT
        ("compute_80", (8, 6), "ptx"),  # a newer GPU JIT-compiles it
        ("compute_80", (7, 5), None),  # an older one cannot
        ("compute_80", (9, 0), "ptx"),  # PTX runs on later majors too
        ("sm_80", (8, 0), "sass"),
        ("sm_80", (8, 6), "sass"),  # same major, newer minor: binary compatible
        ("sm_86", (8, 0), None),  # same major, older minor: not
        ("sm_80", (9, 0), None),  # SASS never crosses a major
        ("sm_90a", (9, 0), "sass"),  # an "a" target runs on exactly its GPU
        ("sm_100a", (10, 3), None),
        ("sm_100f", (10, 3), "sass"),  # an "f" target: the family
        ("sm_100f", (12, 0), None),
        ("8.0+PTX", (9, 0), "ptx"),
        ("8.0+PTX", (8, 0), "sass"),  # native code wins over PTX
    ],
)
def test_an_arch_entry_on_a_gpu(entry: str, cc: tuple[int, int], how: str | None) -> None:
    assert runs_on(cc, [entry]) == how


def test_native_code_wins_over_ptx_whatever_the_order() -> None:
    assert runs_on((8, 6), ["compute_80", "sm_86"]) == "sass"
    assert runs_on((8, 6), ["sm_86", "compute_80"]) == "sass"
    assert runs_on((8, 6), ["junk", "compute_80"]) == "ptx"


@pytest.mark.parametrize(
    ("text", "cc"),
    [
        ("8.6", (8, 6)),
        ("sm_86", (8, 6)),
        (" 12.0 ", (12, 0)),
        ("10.0 (Blackwell)", (10, 0)),
        ("sm_90a", None),  # a target, not a GPU's capability
        ("sm_100f", None),
        ("86", None),
        ("", None),
        (None, None),
        ("sm_8.6", None),
    ],
)
def test_parse_cc(text: str | None, cc: tuple[int, int] | None) -> None:
    assert parse_cc(text) == cc
    assert sm_of(text) == (f"sm_{cc[0]}{cc[1]}" if cc else "sm_?")


def test_arch_spellings_need_a_prefix_or_a_dot() -> None:
    assert Arch.parse("86") is None and Arch.parse("sm_8.6") is None
    a = Arch.parse("compute_90a")
    assert a is not None and (a.sass, a.ptx, a.suffix) == (False, True, "a")
    assert str(Arch.parse("8.6+PTX")) == "sm_86+compute_86"


# --- drivers --------------------------------------------------------------------------------


def test_a_driver_exactly_on_the_floor_runs_fully_one_below_does_not() -> None:
    floor = driver_fit("570.26", "12.8.0", "linux", M.cuda)
    assert floor.compat == "full"
    below = driver_fit("570.25.99", "12.8.0", "linux", M.cuda)
    assert below.compat == "mvc"
    mvc = driver_fit("525.60.13", "12.8.0", "linux", M.cuda)
    assert mvc.compat == "mvc"
    assert driver_fit("525.60.12", "12.8.0", "linux", M.cuda).compat == "too-old"


def test_a_driver_that_reports_only_its_cuda() -> None:
    # nvidia-smi's "CUDA Version" alone: the same major and a newer minor is full
    assert driver_fit(None, "12.8.0", "linux", M.cuda, driver_cuda="12.8").compat == "full"
    assert driver_fit(None, "12.8.0", "linux", M.cuda, driver_cuda="12.9").compat == "full"
    # the same major, an older minor: minor-version compatibility
    assert driver_fit(None, "12.8.0", "linux", M.cuda, driver_cuda="12.4").compat == "mvc"
    # another major: too old
    assert driver_fit(None, "12.8.0", "linux", M.cuda, driver_cuda="11.8").compat == "too-old"
    fit = driver_fit(None, "12.8.0", "linux", M.cuda, driver_cuda="12.4", needs_ptx=True)
    assert (fit.compat, fit.code) == ("too-old", "driver-too-old-ptx")


def test_no_driver_on_windows_is_judged_by_windows_numbers() -> None:
    fit = driver_fit(None, "12.8.0", "windows", M.cuda)
    assert (
        fit.compat == "no-driver"
        and fit.toolkit_min == M.cuda["12.8"].updates["12.8.0"].for_os("windows")[1]
    )
    assert fit.toolkit_min != driver_fit(None, "12.8.0", "linux", M.cuda).toolkit_min


def test_an_x_y_toolkit_is_judged_by_its_newest_update() -> None:
    newest = max(M.cuda["12.8"].updates, key=lambda k: tuple(int(p) for p in k.split(".")))
    fit = driver_fit(None, "12.8", "linux", M.cuda)
    assert fit.toolkit_min == M.cuda["12.8"].updates[newest].for_os("linux")[1]


@pytest.mark.parametrize(
    ("branch", "fit"),
    [
        (569, "driver-too-old-for-gpu"),
        (570, "ok"),  # exactly the first branch
        (580, "ok"),  # exactly the last
        (581, "driver-past-gpu-last-branch"),
    ],
)
def test_driver_window_edges(branch: int, fit: str) -> None:
    assert window_fit(branch, 570, 580) == fit
    assert window_fit(branch, None, None) == "ok"


# --- variants -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "on_index"),
    [
        ("cu102", True),  # CUDA 10.0 on: pages this tool reads
        ("cu100", True),
        ("cu92", False),  # an installed wheel's label, no page
        ("cpu", True),
        ("xpu", True),
        ("rocm6.2", True),
        ("rocm6.2.4", True),
        ("rocm6", False),
        ("mps", False),
    ],
)
def test_on_index(label: str, on_index: bool) -> None:
    assert V(label).on_index is on_index
    assert is_index_label(label) is on_index
    assert is_index_label(label.upper()) is False  # spelled exactly, or not at all


def test_only_text_is_an_index_label() -> None:
    for bad in (None, 126, ["cpu"], b"cpu"):
        assert is_index_label(bad) is False


def test_variant_order_is_strict() -> None:
    for v in (CPU, XPU, V("cu126"), V("rocm6.2")):
        assert not v < v and not v > v and v <= v and v >= v
    assert V("cu126") < V("cu128") and V("cu128") > V("cu126")
    assert not V("cu128") <= V("cu126") and not V("cu126") >= V("cu128")
    assert len({V("cu126"), Variant("cuda", (12, 6))}) == 1


def test_parse_refuses_what_is_not_a_variant() -> None:
    for bad in ("", "cuda", "cu", "gpu", "cu12.8", None, 126, []):
        with pytest.raises(VariantError):
            V(bad)  # type: ignore[arg-type]
        assert Variant.find(bad) is None  # type: ignore[arg-type]
    with pytest.raises(VariantError, match="unknown variant kind 'tpu'"):
        Variant("tpu")  # type: ignore[arg-type]
    with pytest.raises(VariantError, match="'gpu' is not a variant"):
        V("gpu")
    assert V(" CU128 ") == V("cu128") and Variant.find("cu128") == V("cu128")


@pytest.mark.parametrize(
    ("version", "variant"),
    [
        ("2.7.0+cu128", "cu128"),
        ("2.0.1+rocm5.4.2", "rocm5.4.2"),
        ("2.7.0", None),
        ("1.8.0.dev20201105", None),
        ("2.1.0+gitabc", None),
        ("2.1.0+cpu.cxx11.abi", "cpu"),
    ],
)
def test_from_local(version: str, variant: str | None) -> None:
    assert Variant.from_local(version) == (V(variant) if variant else None)


def test_versions_of_a_runtime() -> None:
    assert Variant.cuda_of("12.8") == V("cu128") and Variant.cuda_of(" 11.8.89") == V("cu118")
    assert Variant.cuda_of(None) is None and Variant.cuda_of("") is None
    assert Variant.rocm_of("6.2.41133-dd7f95766") == V("rocm6.2")
    assert Variant.rocm_of(None) is None


def test_same_build_line() -> None:
    assert V("rocm6.2").same_build(V("rocm6.2.4")) and V("rocm6.2.4").same_build(V("rocm6.2"))
    assert not V("rocm6.2").same_build(V("rocm6.3"))
    assert not V("cu126").same_build(V("rocm6.2"))
    assert V("cu126").same_build(V("cu126")) and not V("cu126").same_build(V("cu128"))
    assert MPS.index_variant == CPU and V("cu126").index_variant == V("cu126")


def test_why_a_driver_is_too_old_in_words() -> None:
    by_driver = driver_fit("520.61.05", "12.8.0", "linux", M.cuda)
    assert by_driver.judged_by == "driver" and by_driver.too_old
    floor = M.cuda["12.8"].mvc.for_os("linux")[1]
    assert by_driver.why_not() == (
        f"needs driver >= 570.26 (>= {floor} with minor-version compatibility)"
    )
    by_cuda = driver_fit(None, "12.8.0", "linux", M.cuda, driver_cuda="11.8")
    assert by_cuda.judged_by == "cuda"
    assert by_cuda.why_not() == "needs a driver for CUDA 12.8 (>= 570.26)"
    assert driver_fit("570.26", "12.8.0", "linux", M.cuda).why_not() == ""
    unknown = driver_fit("570.86.10", "10.2.89", "linux", M.cuda)
    assert unknown.why_not() == "no driver data for CUDA 10.2"


def test_an_arch_is_text() -> None:
    for bad in (None, 86, ["sm_86"]):
        assert Arch.parse(bad) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("driver", "toolkit", "os", "extra", "want"),
    [
        ("570.26", "12.8.0", "linux", {}, ("full", "driver-full", "570.26", "525.60.13", "driver")),
        ("560.0", "12.8.0", "linux", {}, ("mvc", "driver-mvc", "570.26", "525.60.13", "driver")),
        ("520.61.05", "12.8.0", "linux", {},
         ("too-old", "driver-too-old", "570.26", "525.60.13", "driver")),
        # PTX JIT: no minor-version compatibility, and no MVC floor to show
        ("520.61.05", "12.8.0", "linux", {"needs_ptx": True},
         ("too-old", "driver-too-old", "570.26", None, "driver")),
        ("560.0", "12.8.0", "linux", {"needs_ptx": True},
         ("too-old", "driver-too-old-ptx", "570.26", None, "driver")),
        (None, "12.8.0", "linux", {"driver_cuda": "12.9"},
         ("full", "driver-full", "570.26", "525.60.13", "cuda")),
        (None, "12.8.0", "linux", {"driver_cuda": "12.4"},
         ("mvc", "driver-mvc", "570.26", "525.60.13", "cuda")),
        (None, "12.8.0", "linux", {"driver_cuda": "11.8"},
         ("too-old", "driver-too-old", "570.26", "525.60.13", "cuda")),
        (None, "12.8.0", "windows", {}, ("no-driver", "driver-absent", "570.65", "528.33", "")),
        (None, "12.8", "linux", {}, ("no-driver", "driver-absent", "570.124.06", "525.60.13", "")),
        ("570.86.10", "10.2.89", "linux", {}, ("unknown", "driver-no-data", None, None, "")),
        # no table row, but the driver says which CUDA it runs
        ("570.86.10", "10.2.89", "linux", {"driver_cuda": "12.8"},
         ("full", "driver-full", None, None, "cuda")),
    ],
)  # fmt: skip
def test_driver_fit_whole(
    driver: str | None, toolkit: str, os: str, extra: dict[str, Any], want: tuple[Any, ...]
) -> None:
    fit = driver_fit(driver, toolkit, os, M.cuda, **extra)
    cuda = ".".join(toolkit.split(".")[:2])
    assert fit == DriverFit(want[0], want[1], cuda, want[2], want[3], want[4])


def test_minor_version_compatibility_starts_at_cuda_11_1_exactly() -> None:
    floor = mx.DriverFloor(Version("455.23"), Version("456.38"), "V", "455.23", "456.38")
    mvc = mx.DriverFloor(Version("450.80.02"), Version("452.39"), "V", "450.80.02", "452.39")
    for xy, compat, code in (("11.1", "mvc", "driver-mvc"), ("11.0", "too-old", "driver-too-old")):
        row = replace(M.cuda["11.8"], version=xy, updates={f"{xy}.0": floor}, mvc=mvc)
        fit = driver_fit("450.80.02", f"{xy}.0", "linux", {xy: row})
        assert (fit.compat, fit.code) == (compat, code)


def test_driver_fit_edges() -> None:
    # exactly on the MVC floor, PTX JIT needed: blocked for PTX, and said so
    fit = driver_fit("525.60.13", "12.8.0", "linux", M.cuda, needs_ptx=True)
    assert fit.code == "driver-too-old-ptx"
    # an update the table does not list yet is judged by the newest it lists
    assert driver_fit(None, "12.8.5", "linux", M.cuda).toolkit_min == "570.124.06"
    # a CUDA the table has no row for, known through the driver's CUDA: nothing invented
    fit = driver_fit(None, "14.0.0", "linux", M.cuda, driver_cuda="14.0")
    assert fit == DriverFit("full", "driver-full", "14.0", None, None, "cuda")
    assert driver_fit(None, "10.2.89", "linux", M.cuda, driver_cuda="9.1").why_not() == (
        "needs a driver for CUDA 10.2"
    )
    # "newest" by number, not by text: 12.9.10 is after 12.9.9
    a = mx.DriverFloor(Version("575.51.3"), Version("576.2"), "V", "575.51.03", "576.02")
    b = mx.DriverFloor(Version("575.57.8"), Version("576.57"), "V", "575.57.08", "576.57")
    row = replace(M.cuda["12.9"], updates={"12.9.9": a, "12.9.10": b})
    assert driver_fit(None, "12.9", "linux", {"12.9": row}).toolkit_min == "575.57.08"


def test_a_ptx_only_arch_is_named_compute() -> None:
    assert str(Arch.parse("compute_90")) == "compute_90"
    assert Arch.parse("compute_90") is not None and Arch.parse("compute_90").names() == (
        "compute_90",
    )  # type: ignore[union-attr]


def test_coverage_names_the_entry_that_serves() -> None:
    from setup_env.knowledge.cuda import Coverage, coverage

    assert coverage((8, 6), ["compute_80", "sm_86"]) == Coverage("sass", Arch.parse("sm_86"))
    assert coverage((9, 0), ["sm_80", "compute_80", "compute_86"]) == Coverage(
        "ptx", Arch.parse("compute_80")
    )  # the first PTX entry that serves
    assert coverage((7, 5), ["sm_80"]) == Coverage(None)


def test_a_driver_with_a_version_and_its_cuda() -> None:
    # a driver version the table can judge wins over the CUDA it reports
    fit = driver_fit("520.61.05", "12.8.0", "linux", M.cuda, driver_cuda="12.8")
    assert (fit.compat, fit.judged_by) == ("too-old", "driver")
    # no table row: the CUDA it reports decides, PTX at 11.1 exactly included
    fit = driver_fit("999.1", "11.1.0", "linux", {}, driver_cuda="11.0")
    assert (fit.compat, fit.judged_by) == ("too-old", "cuda")
    fit = driver_fit(None, "11.1.0", "linux", {}, driver_cuda="11.0", needs_ptx=True)
    # a driver of CUDA 11.0 runs 11.1 through MVC (11.x's floor is an 11.0 driver): only PTX blocks
    assert fit.code == "driver-too-old-ptx"
    fit = driver_fit(None, "12.8.0", "linux", M.cuda, driver_cuda="12.4", needs_ptx=True)
    assert fit == DriverFit("too-old", "driver-too-old-ptx", "12.8", "570.26", None, "cuda")
    assert driver_fit(None, "10.2.89", "linux", {}) == DriverFit(
        "unknown", "driver-no-data", "10.2"
    )


@pytest.mark.parametrize(
    ("text", "parts"),
    [("570.86.10", (570, 86, 10)), (" 12.8 ", (12, 8)), ("1.2.3.4.5", (1, 2, 3, 4)),
     ("v12", None), ("", None), (None, None)],
)  # fmt: skip
def test_version_tuple(text: str | None, parts: tuple[int, ...] | None) -> None:
    from setup_env.knowledge.cuda import version_tuple

    assert version_tuple(text) == parts


def test_minor_version_compatibility_by_the_drivers_cuda_at_11_1() -> None:
    # a driver of CUDA 11.1 exactly runs 11.2 through MVC; one of 11.0 is below MVC's start
    assert driver_fit(None, "11.2.0", "linux", {}, driver_cuda="11.1").compat == "mvc"
    fit = driver_fit(None, "11.2.0", "linux", {}, driver_cuda="11.0")
    assert (fit.compat, fit.code) == ("too-old", "driver-too-old")  # not PTX's doing


def test_before_cuda_11_1_ptx_is_not_what_blocks() -> None:
    floor = mx.DriverFloor(Version("451.22"), Version("451.48"), "V", "451.22", "451.48")
    mvc = mx.DriverFloor(Version("450.80.02"), Version("452.39"), "V", "450.80.02", "452.39")
    row = replace(M.cuda["11.8"], version="11.0", updates={"11.0.2": floor}, mvc=mvc)
    fit = driver_fit("450.80.02", "11.0.2", "linux", {"11.0": row}, needs_ptx=True)
    assert (fit.compat, fit.code, fit.mvc_floor) == ("too-old", "driver-too-old", None)


@pytest.mark.parametrize(
    ("arch", "name"),
    [(" AMD64 ", "x86_64"), ("x64", "x86_64"), ("x86-64", "x86_64"), ("ARM64E", "arm64"),
     ("aarch64", "aarch64"), ("i686", "i686")],
)  # fmt: skip
def test_machine_names(arch: str, name: str) -> None:
    from setup_env.knowledge.tags import machine_name

    assert machine_name(arch) == name


def test_cpython_abi_tags_by_version() -> None:
    from setup_env.knowledge.tags import cpython_tags

    assert cpython_tags("3.7", ["linux_x86_64"]) == ["cp37-cp37m-linux_x86_64"]  # pymalloc "m"
    assert cpython_tags("3.8", ["linux_x86_64"]) == ["cp38-cp38-linux_x86_64"]  # gone from 3.8
    assert cpython_tags("3.13", ["linux_x86_64"], free_threaded=True) == [
        "cp313-cp313t-linux_x86_64"
    ]
