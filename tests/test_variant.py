"""The Variant type: every label the matrix data and real installs carry, parsed once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from setup_env.knowledge.variant import CPU, MPS, XPU, Variant, VariantError

MATRIX = Path(__file__).resolve().parent / "fixtures" / "matrix" / "wheels-subset.json"


@pytest.mark.parametrize(
    ("label", "kind", "version"),
    [
        ("cpu", "cpu", ()),
        ("cu128", "cuda", (12, 8)),
        ("cu92", "cuda", (9, 2)),
        ("cu130", "cuda", (13, 0)),
        ("rocm6.4", "rocm", (6, 4)),
        ("rocm7.0.2", "rocm", (7, 0, 2)),
        ("xpu", "xpu", ()),
        ("mps", "mps", ()),
    ],
)
def test_labels_round_trip(label: str, kind: str, version: tuple[int, ...]) -> None:
    v = Variant.parse(label)
    assert (v.kind, v.version) == (kind, version)
    assert str(v) == label and Variant.parse(str(v)) == v


@pytest.mark.parametrize("bad", ["", "gpu", "cu", "cu1280", "rocm6.", "cuda12.8", "cpu;rm"])
def test_not_a_variant(bad: str) -> None:
    with pytest.raises(VariantError):
        Variant.parse(bad)
    assert Variant.find(bad) is None


def test_order_is_by_kind_then_version_not_by_text() -> None:
    labels = ["cu130", "xpu", "cu92", "rocm6.2.4", "cpu", "cu128", "rocm6.4", "rocm7.0"]
    got = [str(v) for v in sorted(Variant.parse(x) for x in labels)]
    assert got == ["cpu", "cu92", "cu128", "cu130", "rocm6.2.4", "rocm6.4", "rocm7.0", "xpu"]
    # as text, "cu92" > "cu130": the type orders CUDA versions numerically
    assert Variant.parse("cu92") < Variant.parse("cu130")
    assert max(Variant.parse(x) for x in ("cu118", "cu126", "cu92")) == Variant("cuda", (12, 6))


@pytest.mark.parametrize(
    ("version", "label"),
    [
        ("2.7.0+cu128", "cu128"),
        ("2.0.1+rocm5.4.2", "rocm5.4.2"),
        ("2.13.0+cpu", "cpu"),
        ("2.0.0+cpu.cxx11.abi", "cpu"),  # download.pytorch.org/whl/cpu-cxx11-abi
        ("2.8.0+xpu", "xpu"),
    ],
)
def test_from_local_version(version: str, label: str) -> None:
    assert str(Variant.from_local(version)) == label


@pytest.mark.parametrize("version", ["2.13.0", "1.8.0.dev20201105", "2.1.0+gitabc123"])
def test_no_variant_in_local_version(version: str) -> None:
    assert Variant.from_local(version) is None


def test_from_runtime_versions() -> None:
    assert Variant.cuda_of("12.8") == Variant.parse("cu128")
    assert Variant.rocm_of("6.2.41133-dd7f95766") == Variant.parse("rocm6.2")
    assert Variant.cuda_of(None) is None and Variant.rocm_of("") is None


def test_kinds_and_helpers() -> None:
    assert Variant.parse("cu130").cuda == "13.0" and CPU.cuda is None
    assert MPS.is_cpu and CPU.is_cpu and not XPU.is_cpu
    assert MPS.index_variant == CPU and not MPS.on_index and not Variant.parse("rocm").on_index
    assert Variant.parse("rocm6.2").same_build(Variant.parse("rocm6.2.4"))
    assert not Variant.parse("cu128").same_build(Variant.parse("cu126"))
    assert Variant.parse("cu128") != "cu128"  # never equal to its label string


def test_every_label_in_the_matrix_parses() -> None:
    doc = json.loads(MATRIX.read_text(encoding="utf-8"))
    labels = {v for r in doc["releases"].values() for v in r["index"]}
    labels |= {p["variant"] for r in doc["releases"].values() for p in r["pypi_variant"].values()}
    labels |= {v for vs in doc["nightly"]["variants"].values() for v in vs}
    assert labels
    for label in labels:
        v = Variant.parse(label)
        assert v.on_index and str(v) == label
