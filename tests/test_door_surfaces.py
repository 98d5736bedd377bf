"""Issue 16, point 4: the surfaces moved behind ``setup_env/bounded.py``, on real conditions.

A real FIFO (``os.mkfifo``, nobody ever writes to it or reads from it) given to every command that
reads or writes a file the user names: before the move a plain ``open()`` waited on it forever.
Each such command runs as a child process with a timeout, so a regression fails the test instead
of hanging it. The node documents are real ``setup-env check --json`` output (a replay of the
captured H100 host in tests/fixtures/hosts); where a test needs a broken one, the one field it
breaks is named in the test.
"""

from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from setup_env import bounded
from setup_env.cli import main
from setup_env.probe import fleet_nodes

ROOT = Path(__file__).resolve().parent.parent
HOSTS = Path(__file__).parent / "fixtures" / "hosts"
H100 = HOSTS / "ubuntu-h100-590"
NO_DRIVER = HOSTS / "linux-aws-g5-nitro-nodriver"
LIB = Path(__file__).parent / "fixtures" / "fatbin" / "libtiny.so"
FIFO_SAYS = "not a regular file (a pipe or a device)"

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")


def cli(*argv: str, timeout: float = 60, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """``python -m setup_env ARGV`` in a child with a deadline: a hang fails, it does not hang."""
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env=env,
        check=False,
    )
    assert time.monotonic() - start < timeout
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, proc.stdout, proc.stderr


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.fixture(scope="module")
def h100_doc() -> dict[str, Any]:
    """A real check document: the captured H100 host replayed."""
    _code, out, err = cli("check", "--json", "--root", str(H100))
    doc: dict[str, Any] = json.loads(out)
    assert doc["schema"] == "setup-env/check", err
    return doc


def node_doc(doc: dict[str, Any], hostname: str) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["check"]["node"]["hostname"] = hostname
    return out


def fleet_folder(tmp_path: Path, doc: dict[str, Any], names: tuple[str, ...]) -> Path:
    folder = tmp_path / "nodes"
    folder.mkdir()
    for name in names:
        (folder / f"{name}.json").write_text(json.dumps(node_doc(doc, name)))
    return folder


# --- fleet report ---------------------------------------------------------------------------------


def test_fleet_report_fifo_among_documents_is_one_unreadable_entry(
    tmp_path: Path, h100_doc: dict[str, Any]
) -> None:
    folder = fleet_folder(tmp_path, h100_doc, ("gpu-a", "gpu-b"))
    stuck = fifo(folder / "stuck.json")
    code, out, err = cli("fleet", "report", "--json", str(folder))
    assert code in (0, 1), err
    body = json.loads(out)["fleet"]
    assert [n["name"] for n in body["nodes"]] == ["gpu-a", "gpu-b"]
    assert body["unreadable"] == [{"path": str(stuck), "reason": f"cannot read: {FIFO_SAYS}"}]


def test_fleet_report_of_a_fifo_alone_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    stuck = fifo(tmp_path / "node.json")
    code, out, err = cli("fleet", "report", str(stuck))
    assert code == 2 and out == ""
    assert str(stuck) in err and FIFO_SAYS in err


def test_fleet_report_output_to_a_fifo_is_refused(tmp_path: Path, h100_doc: dict[str, Any]) -> None:
    folder = fleet_folder(tmp_path, h100_doc, ("gpu-a",))
    target = fifo(tmp_path / "report.html")
    code, _out, err = cli("fleet", "report", "--format", "html", "-o", str(target), str(folder))
    assert code == 2
    assert f"cannot write {target}: {FIFO_SAYS}" in err


def _break(doc: dict[str, Any], field: str, value: Any) -> dict[str, Any]:
    """``doc`` with the one field at the dotted path ``field`` set to ``value``."""
    out = copy.deepcopy(doc)
    *parents, last = field.split(".")
    node: Any = out
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return out


def _with_verify(doc: dict[str, Any]) -> dict[str, Any]:
    """The replay has no verify section (nothing to run on a replay): one matmul-speed result,
    shaped as check writes it, so that its fields can be broken."""
    out = copy.deepcopy(doc)
    out["check"]["verify"] = {
        "checks": [
            {
                "name": "matmul-speed",
                "device": "cuda:0",
                "status": "pass",
                "evidence": {"tflops": 512.5},
            }
        ]
    }
    return out


MISTYPED = [
    ("check.facts.nvidia.gpus", "x", "check.facts.nvidia.gpus is a string, not a list"),
    ("check.facts", [], "check.facts is a list, not an object"),
    ("check.facts.nvidia", 3, "check.facts.nvidia is a number, not an object"),
    ("check.facts.nvidia.gpus.0", "x", "check.facts.nvidia.gpus[0] is a string, not an object"),
    ("check.facts.nvidia.gpus.0.index", "0", "gpus[0].index is a string, not an integer"),
    ("check.facts.nvidia.gpus.0.throttle_reasons", 5, "throttle_reasons is a number, not a list"),
    ("check.facts.nvidia.driver_version", 590, "driver_version is a number, not a string"),
    ("check.facts.packages", {"torch": "2.13"}, "check.facts.packages is an object, not a list"),
    ("check.node.hostname", 17, "check.node.hostname is a number, not a string"),
    ("check.verdict", "ready", "check.verdict is a string, not an object"),
    ("check.verify.checks", 5, "check.verify.checks is a number, not a list"),
    ("check.verify.checks.0.evidence", "fast", "evidence is a string, not an object"),
    ("check.verify.checks.0.evidence.tflops", "9", "tflops is a string, not a number"),
]


@pytest.mark.parametrize(("field", "value", "says"), MISTYPED, ids=[m[0] for m in MISTYPED])
def test_a_mistyped_document_is_one_unreadable_entry_and_the_report_runs(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    h100_doc: dict[str, Any],
    field: str,
    value: Any,
    says: str,
) -> None:
    good = _with_verify(h100_doc)
    folder = fleet_folder(tmp_path, good, ("gpu-a", "gpu-b"))
    broken = _break(node_doc(good, "gpu-c"), field, value)
    (folder / "gpu-c.json").write_text(json.dumps(broken))
    code = main(["fleet", "report", "--json", str(folder)])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    body = json.loads(captured.out)["fleet"]
    assert [n["name"] for n in body["nodes"]] == ["gpu-a", "gpu-b"]
    (entry,) = body["unreadable"]
    assert entry["path"] == str(folder / "gpu-c.json")
    assert entry["reason"].startswith("a field of the wrong type: ") and says in entry["reason"]


def test_a_result_holding_nan_is_still_a_node(tmp_path: Path, h100_doc: dict[str, Any]) -> None:
    """Python's json writes NaN for a float nan (a failed numeric check's evidence can hold
    one): such a document is read, and a NaN speed is no speed."""
    doc = _with_verify(node_doc(h100_doc, "gpu-nan"))
    doc["check"]["verify"]["checks"][0]["evidence"]["tflops"] = float("nan")
    path = tmp_path / "gpu-nan.json"
    path.write_text(json.dumps(doc))
    assert "NaN" in path.read_text()
    nodes, bad = fleet_nodes.load([str(path)])
    assert bad == [] and [n.name for n in nodes] == ["gpu-nan"]
    assert nodes[0].speed == {}


# --- diagnose -------------------------------------------------------------------------------------


def test_diagnose_a_fifo_is_a_clear_usage_error(tmp_path: Path) -> None:
    stuck = fifo(tmp_path / "report.txt")
    code, out, _err = cli("diagnose", "--json", str(stuck))
    assert code == 2
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/error" and doc["error"]["code"] == "bad-input"
    assert doc["error"]["message"] == f"{stuck}: {FIFO_SAYS}"


def test_diagnose_a_folder_is_a_clear_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagnose", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: a folder" in err and len(err.strip().splitlines()) == 1


# --- matrix arches --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["libcuda_stub.so", "torch-2.13.0-cp312-linux_x86_64.whl"])
def test_matrix_arches_a_fifo_is_named_and_refused(tmp_path: Path, name: str) -> None:
    stuck = fifo(tmp_path / name)
    code, out, err = cli("matrix", "arches", str(stuck), str(LIB))
    assert code == 2
    assert f"{stuck}: {FIFO_SAYS}" in err
    assert "sm_" in out  # the real library beside it is still read


# --- --junit and $GITHUB_STEP_SUMMARY -------------------------------------------------------------


def test_check_junit_to_a_fifo_is_refused(tmp_path: Path) -> None:
    target = fifo(tmp_path / "check.xml")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    code, out, _err = cli(
        "check", "--json", "--root", str(NO_DRIVER), "--junit", str(target), env=env
    )
    assert code == 2
    assert json.loads(out)["error"]["message"] == f"cannot write {target}: {FIFO_SAYS}"


def test_verify_junit_to_a_fifo_is_refused_before_any_check_runs(tmp_path: Path) -> None:
    target = fifo(tmp_path / "verify.xml")
    code, out, _err = cli("verify", "--json", "--junit", str(target), timeout=30)
    assert code == 2
    assert json.loads(out)["error"]["message"] == f"cannot write {target}: {FIFO_SAYS}"


def test_step_summary_fifo_is_a_warning_and_the_check_still_ends(tmp_path: Path) -> None:
    summary = fifo(tmp_path / "summary.md")
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    code, out, err = cli("check", "--root", str(NO_DRIVER), env=env)
    assert code == 1  # the replayed machine's own verdict (a GPU without its driver)
    assert f"cannot write $GITHUB_STEP_SUMMARY: {summary}: {FIFO_SAYS}" in err
    assert "ACTION NEEDED" in out or "BROKEN" in out


def test_step_summary_is_appended_to_and_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "new" / "summary.md"
    summary.parent.mkdir()
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    main(["check", "--root", str(NO_DRIVER)])
    main(["check", "--root", str(NO_DRIVER)])
    capsys.readouterr()
    assert summary.read_text().count("## setup-env check") == 2


# --- the helpers themselves -----------------------------------------------------------------------


def test_write_file_replaces_atomically_keeping_mode_and_links(tmp_path: Path) -> None:
    target = tmp_path / "out.xml"
    target.write_text("old\n")
    target.chmod(0o640)
    link = tmp_path / "link.xml"
    link.symlink_to(target)
    bounded.write_file(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.xml", "out.xml"]  # no temp left
    bounded.write_file(tmp_path / "fresh.json", b"{}", mode=0o644)
    assert stat.S_IMODE((tmp_path / "fresh.json").stat().st_mode) == 0o644


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_writers_refuse_fifos_devices_and_folders(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        target, says = fifo(tmp_path / "x"), FIFO_SAYS
    elif kind == "device":
        target, says = Path(os.devnull), FIFO_SAYS
    else:
        target, says = tmp_path, "it is a folder"
    for write in (bounded.write_file, bounded.append_file):
        with pytest.raises(bounded.WriteFailed) as err:
            write(target, "text")
        assert str(err.value) == f"{target}: {says}" and err.value.strerror == says


def test_write_file_missing_folder_says_so(tmp_path: Path) -> None:
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.write_file(tmp_path / "no" / "x.xml", "text")
    assert "No such file or directory" in str(err.value)


def test_open_file_and_read_bundled_refuse_what_they_should(tmp_path: Path) -> None:
    stuck = fifo(tmp_path / "lib.so")
    with pytest.raises(bounded.ReadFailed, match="not a regular file"):
        bounded.open_file(stuck)
    with pytest.raises(bounded.ReadFailed, match="not a regular file"), bounded.open_zip(stuck):
        pass
    for name in ("../bounded.py", "/etc/passwd", "", ".."):
        with pytest.raises(ValueError, match="not a bundled document name"):
            bounded.read_bundled(name)
    assert bounded.read_bundled("gpus.json")["schema_version"] == 1


def test_read_stdin_is_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"x" * 101), encoding="utf-8"))
    with pytest.raises(bounded.ReadFailed, match="over 100 bytes"):
        bounded.read_stdin(100)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"hello"), encoding="utf-8"))
    assert bounded.read_stdin(100) == b"hello"
    assert bounded.read_terminal_line() is None  # not a terminal: nobody to ask


# --- the index probe: one bounded.http_request ----------------------------------------------------


def test_probe_index_answers_none_for_a_page_and_a_file_index(tmp_path: Path) -> None:
    import http.server
    import threading

    from setup_env.act import installer

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # a real-sized simple page: only its status line is needed
            body = b"<a href='torch-2.13.0.whl'>x</a>\n" * 40_000
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        start = time.monotonic()
        assert installer.probe_index(f"http://127.0.0.1:{server.server_address[1]}/simple") is None
        assert time.monotonic() - start < 5
    finally:
        server.shutdown()
        server.server_close()
    assert installer.probe_index((tmp_path / "simple").as_uri()) is None


def test_probe_index_that_never_answers_meets_its_deadline() -> None:
    import socket

    from setup_env.act import installer

    with socket.socket() as listener:  # the handshake completes; nobody ever answers
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        start = time.monotonic()
        why = installer.probe_index(
            f"http://127.0.0.1:{listener.getsockname()[1]}/simple", timeout=1
        )
        assert time.monotonic() - start < 10
    assert why == "no answer within 1 s"
