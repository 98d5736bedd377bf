"""Issue 17, point 6: an output path the command can't write is refused before any work.

``check --junit``, ``verify --junit``, ``fleet report|slurm|k8s -o`` and ``matrix refresh
--output`` ask ``bounded.check_writable`` first: a missing folder, a folder, a FIFO or a device
is a usage error (exit 2) before the first check runs, document is read, script is written or
index is asked. "No work was done" is proven by the function that does the work: it is replaced
by one that records being called, and it never is. ``$GITHUB_STEP_SUMMARY`` pointing somewhere
unusable is a warning, said before the checks run, and the check goes on (the runner's page is
not the result a job acts on; failing a CI job for it would turn a cosmetic problem red).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from setup_env import bounded
from setup_env.cli import main

ROOT = Path(__file__).resolve().parent.parent
HOSTS = Path(__file__).parent / "fixtures" / "hosts"
NO_DRIVER = HOSTS / "linux-aws-g5-nitro-nodriver"
FIFO_SAYS = "not a regular file (a pipe or a device)"


class Worked(Exception):
    """Raised by the stand-in for a command's work: the work began (the command then ends with
    an internal error, which these tests expect)."""


def forbid(monkeypatch: pytest.MonkeyPatch, target: str) -> list[str]:
    """Replace ``module:attr`` with a function that records its call and stops the command."""
    module, attr = target.split(":")
    calls: list[str] = []

    def worked(*_a: Any, **_k: Any) -> Any:
        calls.append(target)
        raise Worked(target)

    monkeypatch.setattr(f"{module}.{attr}", worked)
    return calls


def bad_path(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A path of ``kind`` and what check_writable says about it."""
    if kind == "missing-folder":
        return tmp_path / "no" / "such" / "x.xml", f"no folder {tmp_path / 'no' / 'such'}"
    if kind == "folder":
        return tmp_path, "it is a folder"
    if kind == "fifo":
        os.mkfifo(tmp_path / "out.xml")
        return tmp_path / "out.xml", FIFO_SAYS
    return Path(os.devnull), FIFO_SAYS


KINDS = ["missing-folder", "folder", "fifo", "device"]

# (argv before the path, the flag, argv after, the function that does the work)
COMMANDS: list[tuple[list[str], str, list[str], str]] = [
    (["check", "--root", str(NO_DRIVER)], "--junit", [], "setup_env.commands.check:gather"),
    (["verify"], "--junit", [], "setup_env.act.smoke:run_verify"),
    (["fleet", "report"], "-o", [str(HOSTS)], "setup_env.probe.fleet_nodes:load_all"),
    (["fleet", "slurm", "--nodes", "2"], "-o", [], "setup_env.act.launchers:slurm_script"),
    (
        ["fleet", "k8s", "--nodes", "2", "--image", "img:1"],
        "--output",
        [],
        "setup_env.act.launchers:k8s_manifests",
    ),
    (["matrix", "refresh"], "--output", [], "setup_env.knowledge.refresh:refresh"),
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("before", "flag", "after", "work"), COMMANDS)
@pytest.mark.parametrize("as_json", [False, True])
def test_a_bad_output_path_is_refused_before_any_work(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    before: list[str],
    flag: str,
    after: list[str],
    work: str,
    as_json: bool,
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    calls = forbid(monkeypatch, work)
    path, says = bad_path(tmp_path, kind)
    if kind == "missing-folder" and before[:2] == ["matrix", "refresh"]:
        path, says = Path(os.devnull), FIFO_SAYS  # refresh creates missing folders (below)
    argv = [*before, flag, str(path), *after, *(["--json"] if as_json else [])]
    code = main(argv)
    out, err = capsys.readouterr()
    assert calls == [], f"{argv}: the work ran"
    assert code == 2, (argv, out, err)
    message = f"cannot write {path}: {says}"
    assert message in err
    if as_json:
        assert json.loads(out)["error"] == {"code": "bad-input", "message": message}
    else:
        assert out == ""


@pytest.mark.parametrize(("before", "flag", "after", "work"), COMMANDS)
def test_a_good_output_path_lets_the_work_begin(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    before: list[str],
    flag: str,
    after: list[str],
    work: str,
) -> None:
    # The other half of the proof: the stand-in is where the work begins, and a path that can
    # be written (a new file in a folder that exists) goes through to it.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    calls = forbid(monkeypatch, work)
    main([*before, flag, str(tmp_path / "out.file"), *after])  # an internal error: the stand-in
    assert calls == [work]
    assert not (tmp_path / "out.file").exists()  # asked about, not created


def test_matrix_refresh_output_in_folders_it_will_create_is_fine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = forbid(monkeypatch, "setup_env.knowledge.refresh:refresh")
    main(["matrix", "refresh", "--output", str(tmp_path / "new" / "dir" / "wheels.json")])
    assert calls and not (tmp_path / "new").exists()


def test_matrix_refresh_check_writes_nothing_so_output_is_not_asked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = forbid(monkeypatch, "setup_env.knowledge.refresh:refresh")
    main(["matrix", "refresh", "--check", "--output", os.devnull])
    assert calls


def test_the_issue_command_exits_2_before_any_check_runs() -> None:
    """``check --junit /nonexistent/dir/x.xml`` for real, in a child: exit 2, the one error line,
    and nothing from any check (each finished check prints a progress line on stderr; a full
    check of this machine takes seconds: this one ends at once)."""
    assert not os.path.exists("/nonexistent")
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "check", "--json", "--junit", "/nonexistent/dir/x.xml"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    took = time.monotonic() - start
    assert proc.returncode == 2, proc.stderr
    message = "cannot write /nonexistent/dir/x.xml: no folder /nonexistent/dir"
    assert json.loads(proc.stdout)["error"]["message"] == message
    assert proc.stderr == f"setup-env check: {message}\n"
    assert took < 30


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs (POSIX)")
@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_step_summary_is_a_warning_said_before_the_checks(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
) -> None:
    from setup_env.commands import check

    path, says = bad_path(tmp_path, kind)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(path))
    real_gather: Callable[..., Any] = check.gather
    said_before: list[str] = []

    def gather(*args: Any, **kwargs: Any) -> Any:
        said_before.append(capsys.readouterr().err)  # what was on stderr when the work began
        return real_gather(*args, **kwargs)

    monkeypatch.setattr(check, "gather", gather)
    code = main(["check", "--root", str(NO_DRIVER)])
    out, err = capsys.readouterr()
    warning = f"setup-env check: cannot write $GITHUB_STEP_SUMMARY: {path}: {says}\n"
    assert said_before == [warning]
    assert "GITHUB_STEP_SUMMARY" not in err  # said once, not tried again at the end
    assert code == 1 and ("ACTION NEEDED" in out or "BROKEN" in out)  # the check's own verdict


def test_check_writable(tmp_path: Path) -> None:
    ok = tmp_path / "new.xml"
    bounded.check_writable(ok)  # no file yet, in a folder that may be written
    assert not ok.exists()
    ok.write_text("old")
    bounded.check_writable(ok)
    bounded.check_writable(ok, append=True)
    link = tmp_path / "link.xml"
    link.symlink_to(ok)
    bounded.check_writable(link)
    dangling = tmp_path / "dangling.xml"
    dangling.symlink_to(tmp_path / "gone" / "x.xml")
    with pytest.raises(bounded.WriteFailed, match="no folder"):
        bounded.check_writable(dangling)  # judged by its target, as the writers write through
    a_file_as_folder = ok / "x.xml"
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.check_writable(a_file_as_folder)
    assert str(err.value).startswith(f"{a_file_as_folder}: ")
    bounded.check_writable(tmp_path / "a" / "b" / "c.json", create_folders=True)
    assert not (tmp_path / "a").exists()
    with pytest.raises(bounded.WriteFailed):
        bounded.check_writable(ok / "a" / "c.json", create_folders=True)  # under a file


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
def test_check_writable_permissions(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "rw.xml").write_text("")
    (locked / "ro.xml").write_text("")
    (locked / "ro.xml").chmod(0o444)
    locked.chmod(0o555)
    try:
        with pytest.raises(bounded.WriteFailed, match="permission denied in"):
            bounded.check_writable(locked / "new.xml")
        bounded.check_writable(locked / "rw.xml")  # written in place (write_file does so)
        with pytest.raises(bounded.WriteFailed, match="permission denied"):
            bounded.check_writable(locked / "ro.xml")
        (locked / "ro.xml").chmod(0o444)
        locked.chmod(0o755)
        bounded.check_writable(locked / "ro.xml")  # write_file replaces it beside itself
        with pytest.raises(bounded.WriteFailed, match="permission denied"):
            bounded.check_writable(locked / "ro.xml", append=True)  # append_file can't
    finally:
        locked.chmod(0o755)
