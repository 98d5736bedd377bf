"""Issue 19, points 3 and 4: a fleet report that reads at a glance at any size, and hostile
node documents handled by construction.

The node documents are real `setup-env check --json` output made here from the captured hosts in
tests/fixtures/hosts (an H100, an 8x MI300X, a CPU-only machine, an RTX 5090 + 4090
workstation), as tests/test_fleet.py makes them. Each copy gets a hostname; every other change
is named where it is made (a verdict set to READY or BROKEN, an ECC count, a driver version, a
throttle reason, a hostile string). The replays have no torch, so their own verdict is ACTION
NEEDED ("install torch"): the nodes a test wants ready get the edit test_fleet_job.py makes.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from setup_env import bounded
from setup_env._record import replace
from setup_env.cli import main
from setup_env.decide import fleet
from setup_env.output import render_fleet
from setup_env.output.render import Style
from setup_env.output.render_check import md
from setup_env.probe import fleet_nodes

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
FORMATS = ("text", "json", "markdown", "html")
# What a node must never get to a terminal raw: escape, bell, carriage return, and the bidi
# override that shows text right to left (and the other bidi controls, zero-width joiners…).
HOSTILE = ("\x1b", "\x07", "\r", "\u202e", "\u2066", "\u200f")
BROKEN_LINE = "BROKEN: torch 2.9.0+cu130 fails its checks (matmul[cuda:0]) — reinstall torch"


def _replay(host: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["check", "--root", str(HOSTS / host), "--json"])
    doc: dict[str, Any] = json.loads(out.getvalue())
    assert doc["schema"] == "setup-env/check"
    return doc


@pytest.fixture(scope="module")
def hosts() -> dict[str, dict[str, Any]]:
    names = {
        "h100": "ubuntu-h100-590",
        "mi300x": "ubuntu2204-rocm623-8x-mi300x",
        "cpu": "ubuntu2404-cpu-only",
        "workstation": "fedora-rtx5090-rtx4090-580",
    }
    return {key: _replay(host) for key, host in names.items()}


def named(doc: dict[str, Any], hostname: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["check"]["node"] = {**out["check"].get("node", {}), "hostname": hostname}
    return out


def ready(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["check"]["verdict"]["state"] = "ready"  # the edit: a node that passed its check
    out["check"]["verdict"]["line"] = "READY"
    return out


def write(folder: Path, docs: dict[str, dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, doc in docs.items():
        (folder / f"{name}.json").write_text(json.dumps(named(doc, name)))
    return folder


def report(
    capsys: pytest.CaptureFixture[str], fmt: str, *paths: object, extra: tuple[str, ...] = ()
) -> tuple[int, str]:
    flags = ["--json"] if fmt == "json" else ["--format", fmt, "--no-color"]
    code = main(["fleet", "report", *flags, *extra, *map(str, paths)])
    return code, capsys.readouterr().out


def body(capsys: pytest.CaptureFixture[str], *paths: object) -> tuple[int, dict[str, Any]]:
    code, out = report(capsys, "json", *paths)
    doc: dict[str, Any] = json.loads(out)
    return code, doc["fleet"]


# --- done when: 40 nodes across NVIDIA, AMD and CPU pools; BROKEN and ECC first --------------


def forty_nodes(hosts: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    h100, mi300x, cpu = ready(hosts["h100"]), ready(hosts["mi300x"]), ready(hosts["cpu"])
    docs = {f"gpu-{i:02d}": h100 for i in range(20)}
    broken = copy.deepcopy(h100)
    broken["check"]["verdict"] = {"state": "broken", "line": BROKEN_LINE, "command": None}
    docs["gpu-20"] = broken  # the edit: torch installed and failing its checks
    ecc = copy.deepcopy(h100)
    ecc["check"]["facts"]["nvidia"]["gpus"][0]["ecc_errors_uncorrected"] = 3  # the edit
    docs["gpu-21"] = ecc
    old = copy.deepcopy(h100)
    old["check"]["facts"]["nvidia"]["driver_version"] = "580.95.05"  # the edit: drift
    docs["gpu-22"] = old
    hot = copy.deepcopy(h100)
    hot["check"]["facts"]["nvidia"]["gpus"][0]["throttle_reasons"] = ["hw_thermal_slowdown"]
    docs["gpu-23"] = hot  # the edit: a throttle reason nvidia-smi reports
    docs.update({f"amd-{i:02d}": mi300x for i in range(10)})  # driver 6.8.5: never vs 590
    docs.update({f"cpu-{i:02d}": cpu for i in range(4)})
    docs["login-01"] = hosts["cpu"]  # as captured: ACTION NEEDED, install torch
    docs["ws-01"] = hosts["workstation"]  # as captured: ACTION NEEDED, no torch fits
    assert len(docs) == 40
    return docs


def test_forty_nodes_in_pools_rank_broken_then_ecc_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    folder = write(tmp_path / "nodes", forty_nodes(hosts))
    code, rep = body(capsys, folder)
    assert code == 1
    assert [(p["label"], p["vendor"], len(p["nodes"])) for p in rep["pools"]] == [
        ("NVIDIA H100 80GB HBM3", "NVIDIA", 24),
        ("AMD Instinct MI300X", "AMD", 10),
        ("no GPU", "none", 5),
        ("NVIDIA GeForce RTX 4090 + NVIDIA GeForce RTX 5090", "NVIDIA", 1),
    ]
    # The one drift is inside the H100 pool: AMD's 6.8.5 is never compared with NVIDIA's 590.
    assert [(d["pool"], d["field"], d["majority"], d["odd_nodes"]) for d in rep["drift"]] == [
        ("NVIDIA H100 80GB HBM3", "driver", "590.48.01", ["gpu-22"])
    ]
    # Broken first, then hardware (ECC above throttling), then not ready, then drift.
    assert [(f["node"], f["severity"]) for f in rep["look_first"]] == [
        ("gpu-20", "broken"),
        ("gpu-21", "ecc"),
        ("gpu-23", "throttle"),
        ("login-01", "not-ready"),
        ("ws-01", "not-ready"),
        ("gpu-22", "drift"),
    ]
    assert rep["look_first"][0]["reasons"] == [f"verdict: {BROKEN_LINE}"]
    assert rep["look_first"][1]["reasons"] == ["GPU 0: 3 uncorrected ECC error(s)"]
    assert rep["summary"].startswith("FLEET NEEDS ATTENTION: 40 nodes in 4 pools, 3 failing")


def test_every_format_shows_the_same_first_nodes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    folder = write(tmp_path / "nodes", forty_nodes(hosts))
    _code, text = report(capsys, "text", folder)
    look = text[text.index("Look first (6 nodes)") :].splitlines()[1:7]
    assert [line.split(":")[0].strip() for line in look] == [
        "gpu-20", "gpu-21", "gpu-23", "login-01", "ws-01", "gpu-22"
    ]  # fmt: skip
    assert "Drift (within each pool)" in text and "[NVIDIA H100 80GB HBM3]" in text
    _code, page = report(capsys, "markdown", folder)
    assert page.index("- **gpu-20** (broken)") < page.index("- **gpu-21** (ecc)")
    assert page.index("### Look first (6)") < page.index("### Pools") < page.index("### Nodes")
    _code, html = report(capsys, "html", folder)
    # Findings before the chart, the broken node first.
    assert html.index("<h2>Look first (6)</h2>") < html.index("<h2>Speed against")
    assert html.index("<td><b>gpu-20</b></td>") < html.index("<td><b>gpu-21</b></td>")


def test_a_long_list_ends_with_how_many_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    # 24 replays as captured: every one ACTION NEEDED, each one to look at.
    folder = write(tmp_path / "nodes", {f"n{i:02d}": hosts["h100"] for i in range(24)})
    _code, text = report(capsys, "text", folder)
    look = text[text.index("Look first (24 nodes)") :].splitlines()
    shown = render_fleet.LOOK_FIRST_TEXT
    assert look[shown + 1] == "  +9 more nodes (--json lists every one)"
    assert look[shown + 2] == "  worst finding per node: 24 not-ready"
    _code, page = report(capsys, "markdown", folder)
    assert f"- +{24 - shown} more nodes (--json lists every one)" in page
    assert "worst finding per node: 24 not-ready" in page
    _code, rep = body(capsys, folder)
    assert len(rep["look_first"]) == 24


# --- done when: 10,000 drifting nodes, HTML at most 2 MB, a histogram per pool -----------------


def thousands(hosts: dict[str, dict[str, Any]], n: int) -> list[fleet_nodes.Node]:
    """n nodes from the four replays, each with a driver and a torch of its own (every node
    drifts) and a matmul speed around its pool's median, every 50th at a third."""
    base = [
        fleet_nodes.node_from_document(hosts[k], f"{k}.json")
        for k in ("h100", "mi300x", "cpu", "workstation")
    ]
    nodes = []
    for i in range(n):
        b = base[i % len(base)]
        tflops = 400.0 * (1 + ((i * 7) % 21 - 10) / 100) / (3 if i % 50 == 3 else 1)
        device = "cuda:0" if b.gpus else "cpu"
        nodes.append(
            replace(
                b,
                name=f"node-{i:05d}",
                path=f"nodes/node-{i:05d}.json",
                driver=f"590.{i}" if b.gpus else None,  # the edits
                torch=f"2.13.{i}",
                variant=f"v{n - i}",
                speed={device: tflops},
            )
        )
    return nodes


def test_ten_thousand_drifting_nodes_fit_in_a_page_of_at_most_2_mb(
    hosts: dict[str, dict[str, Any]],
) -> None:
    rep = fleet.build(thousands(hosts, 10_000))
    assert len({name for d in rep.drift for name in d.odd}) == 10_000  # every node drifts
    page = render_fleet.html_page(rep)
    assert len(page.encode()) <= 2_000_000
    assert "<circle" not in page  # no row of dots per node
    assert page.count('aria-label="NVIDIA H100 80GB HBM3 / ') == 0  # model is in the label
    assert page.count("devices by speed against the pool median") == 4  # one histogram per pool
    assert page.index("<h2>Look first (10000)</h2>") < page.index("<svg")
    assert "+9900 more nodes (--json lists every one)" in page  # the node table
    assert "+9950 more nodes (--json lists every one)" in page  # look first
    assert "worst finding per node: 10000 not-ready" in page
    assert "slow (under 80%): <b>node-" in page  # the outliers, named
    text = render_fleet.text(rep, Style(False))
    assert "(+9950 more nodes (--json lists every one); first: to look at)" in text
    assert "+9985 more nodes (--json lists every one)" in text  # look first
    # Each pool's 2,500 drivers: five values shown, with their nodes, then how many more.
    assert "driver [AMD Instinct MI300X]: 590.1 on 1; 590.1001 on 1 (node-01001); " in text
    assert "; +2494 more values" in text
    page = render_fleet.markdown(rep)
    assert len(page.encode()) <= 200_000
    assert "+9900 more nodes (--json lists every one); first: to look at" in page
    assert "+9985 more nodes (--json lists every one)" in page  # look first


def test_past_a_hundred_nodes_the_chart_is_per_pool(hosts: dict[str, dict[str, Any]]) -> None:
    small = render_fleet.html_page(fleet.build(thousands(hosts, render_fleet.NODE_ROWS_UP_TO)))
    big = render_fleet.html_page(fleet.build(thousands(hosts, render_fleet.NODE_ROWS_UP_TO + 1)))
    assert small.count("<circle") == render_fleet.NODE_ROWS_UP_TO and "<rect" not in small
    assert "<circle" not in big and "<rect" in big


# --- hostile documents ----------------------------------------------------------------------------


def test_no_document_string_reaches_the_terminal_unescaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    evil = ready(hosts["h100"])
    fake = "\x1b[2K\rFLEET OK: 40 nodes, 0 failing\x07"
    evil["check"]["verdict"] = {"state": "broken", "line": f"BROKEN{fake}", "command": None}
    evil["check"]["facts"]["nvidia"]["driver_version"] = "590\u202e10.84"  # the edits
    evil["check"]["facts"]["nvidia"]["gpus"][0]["name"] = "H100\u2066\u200f"
    evil["check"]["facts"]["nvidia"]["gpus"][0]["throttle_reasons"] = ["hot\r\x1b[1A"]
    folder = write(tmp_path / "nodes", {"good": ready(hosts["h100"])})
    (folder / "evil.json").write_text(json.dumps(named(evil, f"evil{fake}\u202e")))
    (folder / "job.json").write_text(
        json.dumps(
            {
                "schema": "setup-env/fleet-job",
                "launcher": "slurm\x1b]0;owned\x07",
                "nodes": ["good", "gone\r\x1b[2K"],
                "steps": [{"name": "check\x1b[0m", "state": "failed", "rc": 1}],
            }
        )
    )
    error = {"schema": "setup-env/error", "error": {"message": f"failed{fake}"}}
    (folder / f"name\x1b[31m{fake}.json").write_text(json.dumps(error))
    for fmt in FORMATS:
        code, out = report(capsys, fmt, folder)
        assert code == 1, fmt
        for ch in HOSTILE:
            assert ch not in out, (fmt, repr(ch))
        assert not [line for line in out.splitlines() if line.lstrip().startswith("FLEET OK")]
        if fmt == "text":
            assert "evil\\x1b[2K\\rFLEET OK: 40 nodes, 0 failing\\x07\\u202e" in out
            assert "590\\u202e10.84" in out and "gone\\r\\x1b[2K" in out
            assert "name\\x1b[31m\\x1b[2K\\rFLEET OK" in out  # the file name, escaped
            assert "an error, not a result: failed\\x1b[2K" in out  # its first line


def test_markdown_and_html_escape_markup_from_documents(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    doc = copy.deepcopy(hosts["h100"])
    doc["check"]["facts"]["nvidia"]["gpus"][0]["ecc_errors_uncorrected"] = 1  # the edit
    folder = write(tmp_path / "nodes", {"<img src=x>|**x**": doc})
    _code, page = report(capsys, "markdown", folder)
    assert r"\<img src=x\>\|\*\*x\*\*" in page and "<img src=x>" not in page
    _code, html = report(capsys, "html", folder)
    assert "&lt;img src=x&gt;|**x**" in html and "<img" not in html


def test_a_lone_surrogate_is_one_named_unreadable_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    folder = write(tmp_path / "nodes", {"good": hosts["h100"]})
    text = json.dumps(named(hosts["h100"], "PLACEHOLDER")).replace("PLACEHOLDER", "bad\\ud800")
    (folder / "bad.json").write_text(text)  # JSON's escape for a lone surrogate
    for fmt in FORMATS:
        code, out = report(capsys, fmt, folder)  # no crash writing any format
        assert code == 1 and "\\ud800" in out, fmt
    code, rep = body(capsys, folder)
    assert [n["name"] for n in rep["nodes"]] == ["good"]
    assert rep["unreadable"] == [
        {
            "path": str(folder / "bad.json"),
            "reason": "check.node.hostname holds a lone surrogate (\\ud800): not text to show",
        }
    ]


def test_an_undecodable_file_name_is_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    folder = tmp_path / "nodes"
    folder.mkdir()
    doc = copy.deepcopy(hosts["h100"])  # no hostname in a replay: named by its file
    (Path(os.fsdecode(bytes(folder) + b"/gpu-\xff.json"))).write_text(json.dumps(doc))
    for fmt in FORMATS:
        code, out = report(capsys, fmt, folder)
        if fmt == "json":
            out = json.loads(out)["fleet"]["nodes"][0]["name"]
        elif fmt == "markdown":
            out = re.sub(r"\\(.)", r"\1", out)  # Markdown's escapes undone
        assert code == 1 and "gpu-\\udcff" in out, fmt


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (
            lambda d: d["check"]["facts"]["nvidia"].update(gpus="x"),
            "a field of the wrong type: check.facts.nvidia.gpus is a string, not a list",
        ),
        (
            lambda d: d["check"]["facts"]["nvidia"]["gpus"][0].update(ecc_errors_uncorrected="3"),
            "a field of the wrong type: check.facts.nvidia.gpus[0].ecc_errors_uncorrected is "
            "a string, not an integer",
        ),
        (
            lambda d: d["check"]["node"].update(hostname=["a"]),
            "a field of the wrong type: check.node.hostname is a list, not a string",
        ),
    ],
)
def test_a_mistyped_field_is_one_named_unreadable_document(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    hosts: dict[str, dict[str, Any]],
    edit: Any,
    reason: str,
) -> None:
    folder = write(tmp_path / "nodes", {"good": hosts["h100"]})
    bad = named(hosts["h100"], "bad")
    edit(bad)
    (folder / "bad.json").write_text(json.dumps(bad))
    code, rep = body(capsys, folder)
    assert code == 1 and [n["name"] for n in rep["nodes"]] == ["good"]
    assert rep["unreadable"] == [{"path": str(folder / "bad.json"), "reason": reason}]
    for fmt in ("text", "markdown", "html"):
        _code, out = report(capsys, fmt, folder)
        shown = re.sub(r"\\(.)", r"\1", out)  # Markdown's escapes undone
        assert "bad.json" in out and reason in shown, fmt


def test_bom_and_utf16_read_undecodable_and_oversized_named(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    hosts: dict[str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = tmp_path / "nodes"
    folder.mkdir()
    text = json.dumps(named(hosts["h100"], "PLACEHOLDER"), ensure_ascii=False)
    (folder / "bom.json").write_bytes(b"\xef\xbb\xbf" + text.replace("PLACEHOLDER", "bom").encode())
    # Windows PowerShell's `>`: UTF-16 LE with a byte-order mark.
    (folder / "utf16.json").write_bytes(text.replace("PLACEHOLDER", "utf16").encode("utf-16"))
    (folder / "latin1.json").write_bytes(text.replace("PLACEHOLDER", "caf\xe9").encode("latin-1"))
    # The cap, lowered: the UTF-16 file (2 bytes a character) is under it, big.json over it.
    monkeypatch.setattr(fleet_nodes, "MAX_DOCUMENT", 2 * len(text) + 100)
    (folder / "big.json").write_text(text.replace("PLACEHOLDER", "big") + " " * (len(text) + 200))
    code, rep = body(capsys, folder)
    assert code == 1 and [n["name"] for n in rep["nodes"]] == ["bom", "utf16"]
    assert {Path(b["path"]).name: b["reason"] for b in rep["unreadable"]} == {
        "big.json": "too large for a check document",
        "latin1.json": "the document is not JSON (not UTF-8 or UTF-16 text)",
    }


def test_json_shape_limits_count_every_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "MAX_JSON_NODES", 6)
    bounded.check_shape({"a": [1, 2], "b": {"c": 3}}, "doc")  # 6 values: the object, a, 1, 2, b, c
    with pytest.raises(bounded.InputError, match="more than 6 values"):
        bounded.check_shape({"a": [1, 2, 3], "b": {"c": 3}}, "doc")
    with pytest.raises(bounded.InputError, match="nests deeper than 3 levels"):
        bounded.check_shape([[[[]]]], "doc", max_depth=3)
    bounded.check_shape([[[1]]], "doc", max_depth=3)


def test_speed_is_judged_against_the_pool_not_the_fleet(hosts: dict[str, dict[str, Any]]) -> None:
    h100 = fleet_nodes.node_from_document(hosts["h100"], "h100.json")
    # The edits: the same GPU model in a cloud instance type (SXM, faster) and on premises.
    cloud = [
        replace(h100, name=f"p5-{i}", instance_type="p5.48xlarge", speed={"cuda:0": 700.0})
        for i in range(3)
    ]
    onprem = [replace(h100, name=f"lab-{i}", speed={"cuda:0": 400.0}) for i in range(3)]
    rep = fleet.build(cloud + onprem)
    assert [p.label for p in rep.pools] == [
        "NVIDIA H100 80GB HBM3",
        "p5.48xlarge (NVIDIA H100 80GB HBM3)",
    ]
    assert [i for i in rep.issues if i.kind == "slow"] == []  # 400 is not slow beside 700
    slow = replace(h100, name="lab-3", speed={"cuda:0": 150.0})
    rep = fleet.build([*cloud, *onprem, slow])
    assert [(i.node, i.message) for i in rep.issues if i.kind == "slow"] == [
        ("lab-3", "cuda:0 (NVIDIA H100 80GB HBM3): 150 TFLOP/s, 38% of the pool median 400")
    ]
    assert {p.pool for p in rep.speed if p.node.startswith("p5")} == {
        "p5.48xlarge (NVIDIA H100 80GB HBM3)"
    }


def test_fewer_gpus_than_the_pool_is_a_hardware_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    mi300x = ready(hosts["mi300x"])
    assert len(mi300x["check"]["facts"]["rocm"]["gpus"]) == 8  # as captured
    seven = copy.deepcopy(mi300x)
    del seven["check"]["facts"]["rocm"]["gpus"][7]  # the edit: a GPU fell off the bus
    old = copy.deepcopy(mi300x)
    old["check"]["facts"]["rocm"]["driver_version"] = "6.8.0"  # the edit: drift
    docs = {f"amd-{i}": mi300x for i in range(4)}
    docs.update({"amd-7gpu": seven, "amd-old": old, "login": hosts["cpu"]})
    _code, rep = body(capsys, write(tmp_path / "nodes", docs))
    assert [(f["node"], f["severity"]) for f in rep["look_first"]] == [
        ("amd-7gpu", "gpus"),
        ("login", "not-ready"),
        ("amd-old", "drift"),
    ]
    assert rep["look_first"][0]["reasons"] == ["GPU count 7 (pool: 8)"]


def test_a_job_of_many_pods_lists_failed_steps_first_then_how_many_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], hosts: dict[str, dict[str, Any]]
) -> None:
    folder = write(tmp_path / "nodes", {f"pod-{i:03d}": ready(hosts["h100"]) for i in range(120)})
    for i in range(120):
        # Each pod's own record, as the pod script writes it (tests/test_fleet_k8s.py).
        state = "failed" if i == 117 else "done"
        record = {
            "schema": "setup-env/fleet-job",
            "launcher": "k8s",
            "node": f"pod-{i:03d}",
            "steps": [{"name": "check", "state": state, "rc": 1 if i == 117 else 0}],
        }
        (folder / f"pod-{i:03d}.job.json").write_text(json.dumps(record))
    _code, text = report(capsys, "text", folder)
    job = text[text.index("\nJob\n") :].splitlines()[2:]
    assert job[0] == "  FAIL check on pod-117: failed (exit 1)"
    assert job[50] == "  +70 more steps (--json lists every one)"
    _code, page = report(capsys, "markdown", folder)
    lines = page.splitlines()
    job = lines[lines.index("### Job") + 2 :]
    assert job[0] == f"- ❌ {md('check on pod-117: failed (exit 1)')}"
    assert job[100] == f"- {md('+20 more steps (--json lists every one)')}"
    _code, rep = body(capsys, folder)
    assert len(rep["steps"]) == 120
