"""Invariants of the cloud instance catalogue (setup_env/data/cloud_instances.json)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from setup_env.knowledge import cloud_catalog
from setup_env.knowledge.cloud_catalog import CatalogError

ROOT = Path(__file__).resolve().parents[1]
CAT = cloud_catalog.load()
DOC = json.loads(cloud_catalog.DATA_PATH.read_text(encoding="utf-8"))


def test_header() -> None:
    assert DOC["schema_version"] == 1
    assert DOC["generated_by"] == "scripts/build_cloud.py"
    assert DOC["retrieved"] and DOC["source"]


def test_generated_file_matches_its_table() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_cloud.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_the_four_big_clouds_are_there() -> None:
    assert {"aws", "gcp", "azure", "oci"} <= set(CAT.providers)


@pytest.mark.parametrize("inst", CAT.instances, ids=lambda i: f"{i.provider}:{i.instance_type}")
def test_instance_invariants(inst: cloud_catalog.Instance) -> None:
    assert inst.gpu_count >= 1
    assert inst.host_arch in cloud_catalog.HOST_ARCHES
    assert inst.status
    if inst.gpu.vendor == "nvidia":
        assert inst.gpu.compute_capability
    else:
        assert inst.gpu.gfx_arch
    # Grace (GH200/GB200/GB300) and Graviton (g5g) hosts are aarch64, everything else x86_64 here.
    grace = inst.gpu.key in ("GH200", "GB200", "GB300")
    graviton = inst.provider == "aws" and inst.family.endswith("g")
    assert (inst.host_arch == "aarch64") == (grace or graviton)
    if inst.fabric_manager:
        assert inst.gpu_count >= 8 and inst.nvswitch


@pytest.mark.parametrize(
    ("provider", "itype"),
    [
        ("aws", "p4d.24xlarge"),
        ("aws", "p4de.24xlarge"),
        ("aws", "p5.48xlarge"),
        ("aws", "p6-b200.48xlarge"),
        ("gcp", "a3-highgpu-8g"),
        ("gcp", "a3-megagpu-8g"),
        ("gcp", "a4-highgpu-8g"),
        ("azure", "Standard_ND96isr_H100_v5"),
        ("azure", "Standard_ND96asr_v4"),
        ("oci", "BM.GPU.H100.8"),
    ],
)
def test_nvswitch_systems_need_fabric_manager(provider: str, itype: str) -> None:
    inst = CAT.lookup(provider, itype)
    assert inst is not None and inst.fabric_manager


@pytest.mark.parametrize(
    ("provider", "itype"),
    [
        ("aws", "p5.4xlarge"),
        ("aws", "g5.48xlarge"),
        ("gcp", "a3-highgpu-1g"),
        ("aws", "p3.16xlarge"),
    ],
)
def test_no_fabric_manager_without_a_whole_nvswitch_board(provider: str, itype: str) -> None:
    inst = CAT.lookup(provider, itype)
    assert inst is not None and not inst.fabric_manager


def test_lookup_is_case_insensitive() -> None:
    a = CAT.lookup("AWS", "G5.XLarge")
    b = CAT.lookup("azure", "standard_nc4as_t4_v3")
    assert a is not None and a.instance_type == "g5.xlarge" and a.gpu.name == "NVIDIA A10G"
    assert b is not None and b.instance_type == "Standard_NC4as_T4_v3"


def test_close_matches() -> None:
    assert CAT.close_matches("aws", "p5.48xlarg")[0] == "p5.48xlarge"
    assert "Standard_ND96isr_H100_v5" in CAT.close_matches("azure", "Standard_ND96isr_H100_v4")
    assert CAT.close_matches("gcp", "zzzzzz") == []


def test_find_across_providers() -> None:
    (inst,) = CAT.find("a2-highgpu-8g")
    assert inst.provider == "gcp" and inst.gpu_count == 8


def test_vgpu_slice_counts_as_one() -> None:
    inst = CAT.lookup("azure", "Standard_NV6ads_A10_v5")
    assert inst is not None and (inst.gpu_count, inst.gpu_fraction, inst.driver) == (
        1,
        "1/6",
        "grid",
    )


def test_gpu_names_resolve_in_the_gpu_catalogue() -> None:
    """Every NVIDIA GPU named here is a model of setup_env.knowledge.gpus, with the same cc."""
    from setup_env.knowledge import gpus

    wrong = []
    for g in CAT.gpus.values():
        if g.vendor != "nvidia":
            continue
        model = gpus.lookup(g.name)
        if (
            model is None
            or model.match != "exact"
            or model.compute_capability != g.compute_capability
        ):
            wrong.append((g.name, model and (model.match, model.compute_capability)))
    assert wrong == []


def _broken(mutate: Any) -> dict[str, Any]:
    doc = copy.deepcopy(DOC)
    mutate(doc)
    return doc


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(schema_version=2), "schema_version"),
        (lambda d: d["families"][0]["sizes"].update({"p2.xlarge": 0}), "not a GPU count"),
        (lambda d: d["families"][0].update(gpu="X999"), "not in 'gpus'"),
        (lambda d: d["families"][0].update(host_arch="ppc64le"), "host_arch"),
        (lambda d: d["families"].append(copy.deepcopy(d["families"][0])), "listed twice"),
        (lambda d: d["families"][0].update(sources=["S999"]), "S999"),
        (lambda d: d["gpus"]["T4"].update(compute_capability="seven"), "compute_capability"),
    ],
)
def test_malformed_catalogue_is_a_clear_error(mutate: Any, message: str) -> None:
    with pytest.raises(CatalogError, match=message):
        cloud_catalog.parse(_broken(mutate))


def test_unreadable_file(tmp_path: Path) -> None:
    bad = tmp_path / "c.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(CatalogError, match="not JSON"):
        cloud_catalog.load(bad)
