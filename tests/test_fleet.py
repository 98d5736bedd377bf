"""`setup-env fleet report` over node documents that this tool wrote.

Every node document here is real `setup-env check --json` output made in the test: replays of the
captured hosts in tests/fixtures/hosts (real H100, RTX 5090/4090, MI300X and TrueNAS machines) and
one live run on this machine (which verifies the installed CPU torch and so measures a real
matmul speed). To make a fleet of N nodes, copies of a document get another hostname (the only
field `check` takes from the node itself that a replay leaves empty). Where a test needs a node
that differs, the change is named in the test (one field edited, like an odd node's driver);
everything else in the document is what check printed.
"""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.probe import fleet_nodes as model

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def check_document(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, Any]:
    main(["check", *argv, "--json"])
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "setup-env/check"
    return doc


def replay(capsys: pytest.CaptureFixture[str], host: str) -> dict[str, Any]:
    return check_document(capsys, "--root", str(HOSTS / host))


@pytest.fixture(scope="module")
def live_doc() -> dict[str, Any]:
    """One real check on this machine: verify runs the installed torch on the CPU."""
    pytest.importorskip("torch")
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "check", "--json", "--device", "cpu"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["check"]["verdict"]["state"] == "ready", doc["check"]["verdict"]
    return doc


def as_node(doc: dict[str, Any], hostname: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["check"]["node"] = {**out["check"].get("node", {}), "hostname": hostname}
    return out


def write_fleet(tmp_path: Path, docs: dict[str, dict[str, Any]]) -> Path:
    folder = tmp_path / "nodes"
    folder.mkdir()
    for name, doc in docs.items():
        (folder / f"{name}.json").write_text(json.dumps(as_node(doc, name)))
    return folder


def fleet_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["fleet", "report", *argv, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "setup-env/fleet"
    return code, doc["fleet"]


# --- done when: identical nodes exit 0; differing ones exit 1 and name the odd node --------------


@pytest.mark.torch
def test_identical_nodes_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], live_doc: dict[str, Any]
) -> None:
    folder = write_fleet(tmp_path, {f"node-{i:02d}": live_doc for i in range(6)})
    code, body = fleet_json(capsys, str(folder))
    assert code == 0, body["summary"]
    assert body["ok"] is True and body["drift"] == [] and body["issues"] == []
    assert [n["name"] for n in body["nodes"]] == [f"node-{i:02d}" for i in range(6)]
    assert all(n["state"] == "ready" for n in body["nodes"])
    assert all(n["speed_tflops"]["cpu"] > 0 for n in body["nodes"])  # measured by verify


def test_a_node_with_another_driver_drifts_within_its_pool_and_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h100 = replay(capsys, "ubuntu-h100-590")  # driver 590.48.01, 1x H100
    older = copy.deepcopy(h100)
    older["check"]["facts"]["nvidia"]["driver_version"] = "580.82.09"  # the edit
    docs = {f"gpu-{i:02d}": h100 for i in range(4)}
    docs["gpu-04"] = older
    code, body = fleet_json(capsys, str(write_fleet(tmp_path, docs)))
    assert code == 1
    (drift,) = body["drift"]
    assert (drift["field"], drift["pool"]) == ("driver", "NVIDIA H100 80GB HBM3")
    assert drift["majority"] == "590.48.01" and drift["odd_nodes"] == ["gpu-04"]
    # All five replays have no torch: every node fails its own verdict; the odd one leads.
    assert body["look_first"][0]["node"] == "gpu-04"
    assert body["look_first"][0]["reasons"][-1] == "driver 580.82.09 (pool: 590.48.01)"


def test_another_machine_is_a_pool_of_its_own_not_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h100 = replay(capsys, "ubuntu-h100-590")  # driver 590.48.01, 1x H100
    other = replay(capsys, "truenas-driver-mismatch-580")  # driver 580.173.02, no GPU listed
    docs = {f"gpu-{i:02d}": h100 for i in range(4)}
    docs["gpu-04"] = other
    code, body = fleet_json(capsys, str(write_fleet(tmp_path, docs)))
    assert code == 1  # every replay lacks torch
    assert [(p["label"], len(p["nodes"])) for p in body["pools"]] == [
        ("NVIDIA H100 80GB HBM3", 4),
        ("no GPU", 1),
    ]
    assert body["drift"] == []  # its driver is not compared with the H100s'


@pytest.mark.torch
def test_one_edited_field_is_the_only_drift(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], live_doc: dict[str, Any]
) -> None:
    odd = copy.deepcopy(live_doc)
    odd["check"]["facts"]["packages"][0]["version"] = "2.12.0+cpu"  # the edit: another torch
    docs = {f"n{i}": live_doc for i in range(5)}
    docs["n3"] = odd
    code, body = fleet_json(capsys, str(write_fleet(tmp_path, docs)))
    assert code == 1
    assert [(d["field"], d["odd_nodes"]) for d in body["drift"]] == [("torch", ["n3"])]
    assert body["look_first"][0]["node"] == "n3"


# --- unhealthy GPUs ----------------------------------------------------------------------------


def test_ecc_and_pcie_width_make_a_gpu_unhealthy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    h100 = replay(capsys, "ubuntu-h100-590")
    gpu = h100["check"]["facts"]["nvidia"]["gpus"][0]
    assert (gpu["ecc_errors_uncorrected"], gpu["pcie_width_current"]) == (0, 16)  # as captured
    assert gpu["throttle_reasons"] == ["gpu_idle"]  # idle: not a problem
    ecc = copy.deepcopy(h100)
    ecc["check"]["facts"]["nvidia"]["gpus"][0]["ecc_errors_uncorrected"] = 3  # the edit
    narrow = copy.deepcopy(h100)
    narrow["check"]["facts"]["nvidia"]["gpus"][0]["pcie_width_current"] = 8  # the edit
    docs = {"a": h100, "b": h100, "ecc": ecc, "narrow": narrow}
    _code, body = fleet_json(capsys, str(write_fleet(tmp_path, docs)))
    issues = [(i["node"], i["kind"]) for i in body["issues"] if i["kind"] != "verdict"]
    assert sorted(issues) == [("ecc", "ecc"), ("narrow", "pcie")]
    assert {i["message"] for i in body["issues"] if i["node"] == "narrow" and i["gpu"] == 0} == {
        "GPU 0: PCIe link x8 of x16"
    }


@pytest.mark.torch
def test_a_slow_node_is_flagged_against_the_median(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], live_doc: dict[str, Any]
) -> None:
    slow = copy.deepcopy(live_doc)
    for c in slow["check"]["verify"]["checks"]:
        if c["name"] == "matmul-speed":
            c["evidence"]["tflops"] = round(c["evidence"]["tflops"] * 0.4, 4)  # the edit
    docs = {f"n{i}": live_doc for i in range(4)}
    docs["slow"] = slow
    code, body = fleet_json(capsys, str(write_fleet(tmp_path, docs)))
    assert code == 1
    slow_issues = [i for i in body["issues"] if i["kind"] == "slow"]
    assert [i["node"] for i in slow_issues] == ["slow"]
    ratio = {s["node"]: s["ratio"] for s in body["speed"]}
    assert ratio["n0"] == 1.0 and ratio["slow"] == pytest.approx(0.4, abs=0.01)


def test_gpu_count_against_the_instance_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A real g5.xlarge with no driver loaded: the catalogue says 1x A10G, none is visible.
    g5 = replay(capsys, "linux-aws-g5-nitro-nodriver")
    _code, body = fleet_json(capsys, str(write_fleet(tmp_path, {"g5-a": g5})))
    kinds = [i["message"] for i in body["issues"] if i["kind"] == "gpu-count"]
    assert kinds == ["0 GPU(s) visible; g5.xlarge should have 1"]


# --- inputs ---------------------------------------------------------------------------------------


def test_unreadable_documents_are_listed_not_fatal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = write_fleet(tmp_path, {"h100": replay(capsys, "ubuntu-h100-590")})
    main(["detect", "--root", str(HOSTS / "ubuntu-h100-590"), "--json"])
    (folder / "facts.json").write_text(capsys.readouterr().out)  # a detect document, not check
    (folder / "cut.json").write_text('{"schema": "setup-env/check", "check": {')
    code, body = fleet_json(capsys, str(folder))
    assert code == 1
    reasons = {Path(b["path"]).name: b["reason"] for b in body["unreadable"]}
    assert reasons["facts.json"] == "not a `setup-env check --json` document"
    assert "cut.json" in reasons
    assert [n["name"] for n in body["nodes"]] == ["h100"]


def test_no_documents_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fleet", "report", str(tmp_path / "missing")]) == 2
    assert "no node documents read" in capsys.readouterr().err


def test_documents_without_hostname_are_named_by_their_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = replay(capsys, "ubuntu-h100-590")
    assert doc["check"]["node"]["hostname"] is None  # a replay knows no hostname
    path = tmp_path / "gpu-node-17.json"
    path.write_text(json.dumps(doc))
    nodes, bad = model.load([str(path)])
    assert bad == [] and [n.name for n in nodes] == ["gpu-node-17"]


# --- renderers ------------------------------------------------------------------------------


def _mixed_fleet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    h100 = replay(capsys, "ubuntu-h100-590")
    rtx = replay(capsys, "fedora-rtx5090-rtx4090-580")
    return write_fleet(tmp_path, {"h100-a": h100, "h100-b": h100, "ws<1>": rtx})


def test_markdown_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _mixed_fleet(tmp_path, capsys)
    assert main(["fleet", "report", "--format", "markdown", str(folder)]) == 1
    page = capsys.readouterr().out
    assert page.startswith("## setup-env fleet report")
    assert "### Pools" in page and "### Nodes" in page
    assert r"ws\<1\>" in page  # a hostname can't inject markup


def test_html_page_is_self_contained(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report.html"
    folder = _mixed_fleet(tmp_path, capsys)
    assert main(["fleet", "report", "--format", "html", "-o", str(out), str(folder)]) == 1
    page = out.read_text()
    assert "ws&lt;1&gt;" in page and "ws<1>" not in page
    assert "<script" not in page and "src=" not in page and "href=" not in page
    # The replays measured no speed (verify doesn't run on a replay); the page says so.
    assert "No speed measured" in page


@pytest.mark.torch
def test_html_picture_has_a_dot_per_device_against_the_median(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], live_doc: dict[str, Any]
) -> None:
    slow = copy.deepcopy(live_doc)
    for c in slow["check"]["verify"]["checks"]:
        if c["name"] == "matmul-speed":
            c["evidence"]["tflops"] = round(c["evidence"]["tflops"] * 0.5, 4)  # the edit
    docs = {f"n{i}": live_doc for i in range(3)}
    docs["slow"] = slow
    out = tmp_path / "report.html"
    assert (
        main(
            [
                "fleet",
                "report",
                "--format",
                "html",
                "-o",
                str(out),
                str(write_fleet(tmp_path, docs)),
            ]
        )
        == 1
    )
    page = out.read_text()
    svg = page[page.index("<svg") : page.index("</svg>") + len("</svg>")]
    root = ET.fromstring(svg)  # well-formed SVG
    circles = root.findall("{http://www.w3.org/2000/svg}circle")
    assert len(circles) == 4  # one device (cpu) per node
    assert [c.get("fill") for c in circles].count("#c00") == 1  # the slow node, at 50%
    tips = [c.findtext("{http://www.w3.org/2000/svg}title") or "" for c in circles]
    assert any(t.startswith("slow cpu (cpu):") and "50% of" in t for t in tips)


def test_text_report_rows_and_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _mixed_fleet(tmp_path, capsys)
    assert main(["fleet", "report", "--no-color", str(folder)]) == 1
    out = capsys.readouterr().out
    assert "1x NVIDIA H100 80GB HBM3" in out
    assert "590.48.01" in out and "580.82.09" in out
    assert out.rstrip().splitlines()[-1].startswith("FLEET NEEDS ATTENTION: 3 nodes")


def test_two_documents_from_one_host_keep_their_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = as_node(replay(capsys, "ubuntu-h100-590"), "gpu-01")
    for name in ("first.json", "rerun.json"):
        (tmp_path / name).write_text(json.dumps(doc))
    nodes, _bad = model.load([str(tmp_path)])
    assert sorted(n.name for n in nodes) == ["gpu-01 (first.json)", "gpu-01 (rerun.json)"]
