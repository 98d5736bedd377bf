"""Issue 17, point 2: a fleet report counts every step of the job, not only the node checks.

`fleet report` reads, beside the nodes' check documents, the all-reduce results (each node's
``verify --json --only distributed`` document) and the launcher's record of the job
(``setup-env/fleet-job``: the node count and names, each step's state). The verdict is the worst
of them: a failed or missing all-reduce, a node that sent no document, a step that did not
finish is never OK, in any format.

The node documents are real ``check --json`` output (a replay of the captured H100 host) with
one edit, named where it is made: the verdict set to ready, so that only the job's steps can
make the fleet not OK. The all-reduce documents are real ``verify --json --only distributed``
output where torch is installed (one passing run, one with a rank that dies); the tests that run
without torch write the few fields of that document the report reads, and say so. The job
records are what the SLURM script's ``record`` function and the pod script print
(tests/test_fleet_slurm.py runs those scripts).
"""

from __future__ import annotations

import copy
import html
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

from setup_env import bounded
from setup_env.cli import main

ROOT = Path(__file__).resolve().parent.parent
H100 = Path(__file__).parent / "fixtures" / "hosts" / "ubuntu-h100-590"
FORMATS = ("text", "json", "markdown", "html")


@pytest.fixture(scope="module")
def ready_doc() -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "check", "--json", "--root", str(H100)],
        capture_output=True, text=True, timeout=120, cwd=ROOT, check=False,
    )  # fmt: skip
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["schema"] == "setup-env/check"
    doc["check"]["verdict"]["state"] = "ready"  # the edit: only the job's steps may fail it
    doc["check"]["verdict"]["line"] = "READY"
    return doc


def node(doc: dict[str, Any], name: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["check"]["node"] = {**out["check"].get("node", {}), "hostname": name}
    return out


def allreduce_doc(status: str, message: str) -> dict[str, Any]:
    """The fields of a ``verify --json --only distributed`` document the report reads (written
    here for the tests that run without torch; the real ones are used below where torch is)."""
    return {
        "schema": "setup-env/verify",
        "schema_version": 1,
        "verify": {
            "ok": status == "pass",
            "checks": [
                {"name": "import", "status": "pass", "message": "torch imported"},
                {"name": "distributed", "status": status, "message": message},
            ],
        },
    }


def record(
    names: list[str],
    check: tuple[str, Optional[int]] = ("done", 0),
    allreduce: tuple[str, Optional[int]] = ("done", 0),
    ended: str = "finished",
    expected: Optional[int] = None,
) -> dict[str, Any]:
    """A job record as the SLURM script writes it."""
    return {
        "schema": "setup-env/fleet-job",
        "schema_version": 1,
        "launcher": "slurm",
        "job_id": "42",
        "expected_nodes": len(names) if expected is None else expected,
        "nodes": names,
        "ended": ended,
        "steps": [
            {"name": "check", "state": check[0], "rc": check[1]},
            {"name": "allreduce", "state": allreduce[0], "rc": allreduce[1]},
        ],
    }


def job_folder(
    tmp_path: Path,
    ready: dict[str, Any],
    checks: list[str],
    allreduce: dict[str, dict[str, Any]],
    job: Optional[dict[str, Any]],
) -> list[str]:
    """The SLURM script's layout: fleet-job.json, nodes/NAME.json, allreduce/NAME.json."""
    out = tmp_path / "out"
    (out / "nodes").mkdir(parents=True)
    (out / "allreduce").mkdir()
    for name in checks:
        (out / "nodes" / f"{name}.json").write_text(json.dumps(node(ready, name)))
    for name, doc in allreduce.items():
        (out / "allreduce" / f"{name}.json").write_text(json.dumps(doc))
    paths = [str(out / "nodes"), str(out / "allreduce")]
    if job is not None:
        (out / "fleet-job.json").write_text(json.dumps(job))
        paths.insert(0, str(out / "fleet-job.json"))
    return paths


def report(
    capsys: pytest.CaptureFixture[str], paths: list[str], fmt: str, *extra: str
) -> tuple[int, str]:
    flags = ["--json"] if fmt == "json" else ["--format", fmt]
    code = main(["fleet", "report", *flags, *extra, *paths])
    return code, capsys.readouterr().out


def assert_not_ok_everywhere(
    capsys: pytest.CaptureFixture[str], paths: list[str], *extra: str
) -> dict[str, Any]:
    """Exit 1 and "not OK" in every format; the JSON payload."""
    body: dict[str, Any] = {}
    for fmt in FORMATS:
        code, out = report(capsys, paths, fmt, *extra)
        assert code == 1, (fmt, out)
        assert "FLEET OK" not in out and "FLEET NEEDS ATTENTION" in out, fmt
        if fmt == "json":
            body = json.loads(out)["fleet"]
            assert body["ok"] is False
        elif fmt == "markdown":
            assert out.splitlines()[2].startswith("❌")
        elif fmt == "html":
            assert '<p class="bad">' in out and '<p class="ok">' not in out
    return body


PASS = ("pass", "2 ranks (gloo): all-reduce exact; bus bandwidth 1.1 GB/s (8 MiB messages)")
DEAD = ("fail", "torchrun (gloo, 2 per node) failed (exit status 1): rank 1 died")


# --- the issue's two fleets --------------------------------------------------------------------


def test_one_failed_allreduce_is_not_ok_in_any_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    names = ["gpu-a", "gpu-b", "gpu-c"]
    results = {n: allreduce_doc(*PASS) for n in names}
    results["gpu-b"] = allreduce_doc(*DEAD)
    job = record(names, allreduce=("failed", 1))
    body = assert_not_ok_everywhere(capsys, job_folder(tmp_path, ready_doc, names, results, job))
    assert [(r["node"], r["status"]) for r in body["allreduce"]] == [
        ("gpu-a", "pass"),
        ("gpu-b", "fail"),
        ("gpu-c", "pass"),
    ]
    (issue,) = body["issues"]
    assert issue["node"] == "gpu-b" and issue["kind"] == "allreduce"
    assert body["look_first"][0]["node"] == "gpu-b"
    assert body["problems"] == ["all-reduce: failed (exit 1)"]
    assert "all-reduce failed on 1" in body["summary"]


def test_the_failed_allreduce_alone_without_the_record_is_not_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    # The documents alone (no record): the failed result itself makes the fleet not OK.
    names = ["gpu-a", "gpu-b"]
    results = {"gpu-a": allreduce_doc(*PASS), "gpu-b": allreduce_doc(*DEAD)}
    body = assert_not_ok_everywhere(capsys, job_folder(tmp_path, ready_doc, names, results, None))
    assert body["steps"] == [] and body["expected_nodes"] is None


def test_a_missing_node_is_not_ok_in_any_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    names = ["gpu-a", "gpu-b", "gpu-c"]
    present = ["gpu-a", "gpu-c"]  # gpu-b never wrote its document (dead, unreachable)
    results = {n: allreduce_doc(*PASS) for n in present}
    job = record(names, check=("failed", 1), allreduce=("failed", 1))
    paths = job_folder(tmp_path, ready_doc, present, results, job)
    body = assert_not_ok_everywhere(capsys, paths)
    assert body["expected_nodes"] == 3 and body["missing_nodes"] == ["gpu-b"]
    assert body["missing_count"] == 1
    assert [n["name"] for n in body["nodes"]] == present
    assert body["look_first"][0]["node"] == "gpu-b"
    assert "1 of 3 missing" in body["summary"]
    _code, text = report(capsys, paths, "text")
    assert "no check document from gpu-b" in text


def test_fewer_documents_than_nodes_is_not_ok_with_the_count_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    # No names (a Kubernetes job's pods, or --nodes given by hand): the count is enough.
    paths = job_folder(tmp_path, ready_doc, ["a", "b", "c"], {}, None)
    assert report(capsys, paths, "json")[0] == 0  # as before: three ready nodes
    body = assert_not_ok_everywhere(capsys, paths, "--nodes", "4")
    assert body["missing_nodes"] == [] and body["missing_count"] == 1
    assert body["problems"] == ["1 of 4 nodes sent no check document"]


def test_a_node_without_its_allreduce_result_is_not_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    names = ["a", "b"]
    paths = job_folder(tmp_path, ready_doc, names, {"a": allreduce_doc(*PASS)}, record(names))
    body = assert_not_ok_everywhere(capsys, paths)
    assert body["allreduce"][1] == {
        "node": "b",
        "status": "missing",
        "message": "no all-reduce result from this node",
    }


def test_every_step_passed_is_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    names = ["a", "b", "c"]
    results = {n: allreduce_doc(*PASS) for n in names}
    paths = job_folder(tmp_path, ready_doc, names, results, record(names))
    for fmt in FORMATS:
        code, out = report(capsys, paths, fmt)
        assert code == 0, (fmt, out)
        assert "FLEET OK: 3 nodes" in out and "all-reduce passed" in out
    code, out = report(capsys, paths, "text")
    assert "ok   check: done" in out and "ok   all-reduce: done" in out


# --- a job that did not finish ---------------------------------------------------------------


def test_a_job_stopped_at_its_time_limit_names_the_steps_that_did_not_finish(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    names = ["a", "b"]
    job = record(names, allreduce=("timed-out", None), ended="time-limit")
    body = assert_not_ok_everywhere(capsys, job_folder(tmp_path, ready_doc, names, {}, job))
    assert [(s["name"], s["state"]) for s in body["steps"]] == [
        ("check", "done"),
        ("allreduce", "timed-out"),
    ]
    assert body["problems"] == [
        "all-reduce: stopped at the job's time limit",
        "the job reached its time limit",
    ]
    paths = job_folder(tmp_path / "again", ready_doc, names, {}, job)
    said = "all-reduce: stopped at the job's time limit"
    assert said in report(capsys, paths, "text")[1]
    assert said in report(capsys, paths, "markdown")[1]
    assert html.escape(said) in report(capsys, paths, "html")[1]


def test_a_record_without_any_node_document_is_a_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    # The job was stopped during the checks: no node wrote a document. That is a report (exit
    # 1, every node missing), not "no documents" (exit 2).
    names = ["a", "b"]
    job = record(names, check=("timed-out", None), allreduce=("pending", None), ended="time-limit")
    body = assert_not_ok_everywhere(capsys, job_folder(tmp_path, ready_doc, [], {}, job))
    assert body["nodes"] == [] and body["missing_nodes"] == names
    assert body["problems"][:2] == [
        "check: stopped at the job's time limit",
        "all-reduce: did not start",
    ]


def test_the_record_written_at_the_start_is_never_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    job = record(["a"], check=("running", None), allreduce=("pending", None), ended="running")
    body = assert_not_ok_everywhere(capsys, job_folder(tmp_path, ready_doc, [], {}, job))
    assert "the job had not finished when this report was made" in body["problems"]


# --- what the reader takes and leaves ----------------------------------------------------------


def test_a_pod_log_holds_its_check_allreduce_and_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    pod = {
        "schema": "setup-env/fleet-job",
        "schema_version": 1,
        "launcher": "k8s",
        "node": "fleet-0",
        "expected_nodes": 2,
        "ended": "finished",
        "steps": [
            {"name": "check", "state": "done", "rc": 0},
            {"name": "allreduce", "state": "failed", "rc": 1},
        ],
    }
    log = tmp_path / "fleet-0-x7k2p.json"  # kubectl logs > nodes/POD.json
    text = "\n".join(
        json.dumps(d, indent=2) for d in (node(ready_doc, "fleet-0"), allreduce_doc(*DEAD), pod)
    )
    log.write_text(text + "\n")
    body = assert_not_ok_everywhere(capsys, [str(log)])
    assert [n["name"] for n in body["nodes"]] == ["fleet-0"]
    assert body["allreduce"][0]["status"] == "fail" and body["missing_count"] == 1
    assert "all-reduce on fleet-0: failed (exit 1)" in body["problems"]
    # A log cut short: what came before the cut is kept; the rest is one unreadable entry.
    log.write_text(text[: len(text) - 40])
    code, out = report(capsys, [str(log)], "json")
    body = json.loads(out)["fleet"]
    assert code == 1 and [n["name"] for n in body["nodes"]] == ["fleet-0"]
    assert body["allreduce"][0]["status"] == "fail"
    (bad,) = body["unreadable"]
    assert bad["path"] == str(log) and "document 3" in bad["reason"]


def test_an_error_instead_of_an_allreduce_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    # verify refused its options (an empty rendezvous host): its error envelope is what srun
    # wrote for the node. Unreadable as a result, and the node has none: not OK twice over.
    error = {
        "schema": "setup-env/error",
        "schema_version": 1,
        "error": {"code": "bad-input", "message": "--rdzv-endpoint: expected HOST[:PORT]"},
    }
    paths = job_folder(tmp_path, ready_doc, ["a"], {"a": error}, record(["a"]))
    body = assert_not_ok_everywhere(capsys, paths)
    assert body["unreadable"][0]["reason"] == (
        "an error, not a result: --rdzv-endpoint: expected HOST[:PORT]"
    )
    assert body["allreduce"][0]["status"] == "missing"


def test_a_verify_document_without_the_distributed_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    no_torch = {
        "schema": "setup-env/verify",
        "schema_version": 1,
        "verify": {"ok": False, "torch_missing": True, "error": "torch is not installed"},
    }
    paths = job_folder(tmp_path, ready_doc, ["a"], {"a": no_torch}, record(["a"]))
    body = assert_not_ok_everywhere(capsys, paths)
    assert body["allreduce"][0] == {
        "node": "a",
        "status": "fail",
        "message": "the all-reduce did not run (torch is not installed)",
    }


def test_a_fleet_report_beside_the_inputs_is_passed_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    names = ["a", "b"]
    results = {n: allreduce_doc(*PASS) for n in names}
    paths = job_folder(tmp_path, ready_doc, names, results, record(names))
    out = tmp_path / "out"
    assert main(["fleet", "report", "--json", "-o", str(out / "report.json"), *paths]) == 0
    code, text = report(capsys, [str(out)], "json")  # the whole folder, report.json in it
    assert code == 0 and json.loads(text)["fleet"]["unreadable"] == []


def test_a_record_with_a_field_of_the_wrong_type_is_one_unreadable_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    job = record(["a"])
    job["expected_nodes"] = "2"  # the edit
    paths = job_folder(tmp_path, ready_doc, ["a"], {"a": allreduce_doc(*PASS)}, job)
    body = assert_not_ok_everywhere(capsys, paths)
    assert body["unreadable"] == [
        {
            "path": paths[0],
            "reason": "a field of the wrong type: the job record.expected_nodes is a string, "
            "not an integer",
        }
    ]
    job["expected_nodes"], job["steps"][0]["state"] = 1, "finished"  # another edit
    Path(paths[0]).write_text(json.dumps(job))
    assert (
        "steps[0].state is 'finished'"
        in assert_not_ok_everywhere(capsys, paths)["unreadable"][0]["reason"]
    )


def test_a_fleet_of_check_documents_alone_reads_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    paths = job_folder(tmp_path, ready_doc, ["a", "b"], {}, None)
    code, out = report(capsys, paths, "text")
    assert code == 0 and "Job" not in out
    assert out.rstrip().endswith(
        "FLEET OK: 2 nodes, 0 failing, 0 drifting fields, 0 GPU/node problems"
    )


def test_parse_json_documents() -> None:
    docs, error = bounded.parse_json_documents(b'{"a": 1}\n  [2]\n\n"x" ')
    assert docs == [{"a": 1}, [2], "x"] and error is None
    assert bounded.parse_json_documents(b"") == ([], None)
    assert bounded.parse_json_documents("\ufeff{}") == ([{}], None)
    docs, error = bounded.parse_json_documents(b'{"a": 1} {"b": ')
    assert (
        docs == [{"a": 1}]
        and error is not None
        and error.startswith("the file (document 2) is not JSON")
    )
    assert bounded.parse_json_documents(b"[NaN]", allow_nan=True)[0] != []
    assert bounded.parse_json_documents(b"{} [NaN]")[1] == (
        "the file (document 2) is not JSON (NaN is not JSON)"
    )
    assert bounded.parse_json_documents(b"[" * 100 + b"]" * 100)[1] == (
        "the file nests deeper than 64 levels"
    )
    with pytest.raises(bounded.InputError, match="not UTF-8"):
        bounded.parse_json_documents(b"\xff\x00\xfe")


# --- real all-reduce results -------------------------------------------------------------------


@pytest.mark.torch
@pytest.mark.slow
def test_real_allreduce_results_one_rank_dead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], ready_doc: dict[str, Any]
) -> None:
    """Two real ``verify --json --only distributed`` runs (gloo, 2 ranks on this machine): one
    passes; in the other, rank 1 dies as it starts (a ``sitecustomize`` on its path exits the
    rank's interpreter), so torchrun fails. The report over them is not OK."""
    pytest.importorskip("torch")
    dead = tmp_path / "dead-rank"
    dead.mkdir()
    (dead / "sitecustomize.py").write_text(
        'import os\nif os.environ.get("RANK") == "1":\n    os._exit(7)\n'
    )
    runs = {}
    for name, path in (("a", ""), ("b", str(dead))):
        env = {**os.environ, "PYTHONPATH": f"{ROOT}:{path}".rstrip(":")}
        proc = subprocess.run(
            [sys.executable, "-m", "setup_env", "verify", "--json", "--only", "distributed"],
            capture_output=True, text=True, timeout=300, cwd=ROOT, env=env, check=False,
        )  # fmt: skip
        runs[name] = (proc.returncode, json.loads(proc.stdout))
    assert runs["a"][0] == 0 and runs["b"][0] == 1
    results = {name: doc for name, (_rc, doc) in runs.items()}
    job = record(["a", "b"], allreduce=("failed", 1))
    body = assert_not_ok_everywhere(
        capsys, job_folder(tmp_path, ready_doc, ["a", "b"], results, job)
    )
    assert [(r["node"], r["status"]) for r in body["allreduce"]] == [("a", "pass"), ("b", "fail")]
    assert body["allreduce"][1]["message"].startswith("torchrun (gloo, 2 per node) failed")


def test_a_pod_document_is_named_by_its_node_not_its_pod(
    ready_doc: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A check run in a pod records the node (SETUP_ENV_NODE_NAME, from spec.nodeName) beside
    the pod's hostname: the report's row is the node."""
    for i, name in enumerate(("gpu-node-a", "gpu-node-b")):
        doc = copy.deepcopy(ready_doc)
        doc["check"]["node"] = {"hostname": f"setup-env-fleet-{i}", "node_name": name}
        (tmp_path / f"setup-env-fleet-{i}-x7k2p.json").write_text(json.dumps(doc))
    assert main(["fleet", "report", "--json", str(tmp_path)]) == 0
    rep = json.loads(capsys.readouterr().out)["fleet"]
    assert [n["name"] for n in rep["nodes"]] == ["gpu-node-a", "gpu-node-b"]
