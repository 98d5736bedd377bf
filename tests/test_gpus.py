"""The GPU catalogue: data invariants and lookups on names seen in real captures."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from setup_env.knowledge import gpus

ROOT = Path(__file__).resolve().parents[1]
HOSTS = ROOT / "tests" / "fixtures" / "hosts"


def test_catalogue_invariants() -> None:
    cat = gpus.load()
    assert len(cat.models) >= 40
    keys = [m.key for m in cat.models]
    assert len(keys) == len(set(keys))
    for m in cat.models:
        assert re.fullmatch(r"[1-9][0-9]?\.[0-9]", m.compute_capability), m.key
        assert cat.architectures[m.compute_capability] == m.architecture, m.key
        assert m.vendor == "nvidia" and m.sources, m.key
        for peak in (m.bf16_tflops, m.fp32_tflops, m.memory_gbps, m.memory_gb):
            assert peak is None or peak > 0, m.key
        # bf16 tensor peaks exist only from Ampere on; they exceed fp32 where both are given.
        if m.bf16_tflops is not None:
            assert m.cc_tuple >= (8, 0), m.key
            assert m.fp32_tflops is None or m.bf16_tflops > m.fp32_tflops, m.key


def test_architecture_by_cc_major() -> None:
    major = {3: "Kepler", 5: "Maxwell", 6: "Pascal", 9: "Hopper", 10: "Blackwell", 12: "Blackwell"}
    for cc, arch in gpus.load().architectures.items():
        m = int(cc.split(".")[0])
        if m in major:
            assert arch == major[m], cc
    assert gpus.arch_for_cc("sm_89") == "Ada"
    assert gpus.arch_for_cc("7.5") == "Turing"
    assert gpus.arch_for_cc("nonsense") is None


def test_generated_file_is_up_to_date() -> None:
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_gpus.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr


def _names_in_fixtures() -> list[str]:
    names = []
    for exp in sorted(HOSTS.glob("*/expected.json")):
        nv = json.loads(exp.read_text(encoding="utf-8")).get("nvidia") or {}
        names += [g["name"] for g in nv.get("gpus", []) if g["name"] != "unknown NVIDIA GPU"]
    return names


def test_every_gpu_in_the_host_fixtures_resolves() -> None:
    names = _names_in_fixtures()
    assert "NVIDIA GeForce RTX 5090" in names
    for name in names:
        model = gpus.lookup(name)
        assert model is not None and model.match == "exact", name


@pytest.mark.parametrize(
    ("query", "cc", "match"),
    [
        ("NVIDIA H100 80GB HBM3", "9.0", "exact"),
        ("NVIDIA GeForce RTX 5090", "12.0", "exact"),
        ("Tesla V100-SXM2-16GB", "7.0", "exact"),
        ("Tesla K80", "3.7", "exact"),
        ("NVIDIA B200", "10.0", "exact"),
        ("RTX 5090", "12.0", "exact"),
        ("rtx-5090", "12.0", "exact"),
        ("sm_120", "12.0", "generic"),
        ("sm_90a", "9.0", "generic"),
        ("8.6", "8.6", "generic"),
        ("A100", "8.0", "generic"),
        # Issue 12: the whole compute-capability list by name (these were unknown or generic).
        ("RTX 5060", "12.0", "exact"),
        ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6", "exact"),
        ("NVIDIA GB10", "12.1", "exact"),
        ("NVIDIA GB300", "10.3", "exact"),
        ("NVIDIA Thor", "11.0", "exact"),
        ("Quadro RTX 6000", "7.5", "exact"),
        ("NVIDIA GeForce GTX 1660 SUPER", "7.5", "exact"),
        ("NVIDIA T1000 8GB", "7.5", "exact"),
        ("NVIDIA A2", "8.6", "exact"),
        ("NVIDIA H20", "9.0", "exact"),
        ("NVIDIA L20", "8.9", "exact"),
        ("NVIDIA RTX PRO 4500 Blackwell", "12.0", "exact"),
        ("Jetson Orin Nano", "8.7", "exact"),
        ("Xavier", "7.2", "exact"),
        ("NVIDIA Tegra X1", "5.3", "exact"),
        ("RTX PRO 4000", "12.0", "generic"),
        ("NVIDIA GeForce RTX 3060 12GB", "8.6", "approximate"),
    ],
)
def test_lookup(query: str, cc: str, match: str) -> None:
    model = gpus.lookup(query)
    assert model is not None
    assert (model.compute_capability, model.match) == (cc, match)
    if match != "exact":
        assert model.bf16_tflops is None and model.memory_gbps is None


@pytest.mark.parametrize("query", ["", "sm_1", "NVIDIA Zorblax 9000", "x" * 500])
def test_lookup_unknown(query: str) -> None:
    assert gpus.lookup(query) is None


def test_peaks_for_the_smoke_test() -> None:
    h100 = gpus.lookup("NVIDIA H100 80GB HBM3")
    assert h100 is not None
    assert (h100.bf16_tflops, h100.fp32_tflops, h100.memory_gbps) == (989.5, 67.0, 3350)
    assert h100.sm == "sm_90"


def test_bad_documents_are_refused() -> None:
    good = json.loads(gpus.DATA_PATH.read_text(encoding="utf-8"))
    with pytest.raises(gpus.CatalogueError):
        gpus.parse({**good, "schema_version": 99})
    row = dict(good["gpus"][0], architecture="Hopper")
    with pytest.raises(gpus.CatalogueError):
        gpus.parse({**good, "gpus": [row]})
    row = dict(good["gpus"][0], bf16_tflops=-1)
    with pytest.raises(gpus.CatalogueError):
        gpus.parse({**good, "gpus": [row]})
