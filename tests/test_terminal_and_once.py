"""The terminal edges: a terminal that reports 0 columns has an unknown width (the live line
still names the check), and a fact is said once per run ("torch is not installed")."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from setup_env.commands import verify as verify_cmd
from setup_env.decide.smoke_model import CheckResult, VerifyReport, count_statuses
from setup_env.output import render

REPO = Path(__file__).resolve().parents[1]


def _zero_column_terminal() -> tuple[int, int]:
    """A pseudo-terminal whose window size is 0x0 (what a fresh pty, a serial console or some
    CI runners report)."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 0, 0, 0, 0))
    assert os.get_terminal_size(slave).columns == 0
    return master, slave


def _drain(master: int) -> str:
    import select

    chunks = []
    while select.select([master], [], [], 0.2)[0]:
        data = os.read(master, 4096)
        if not data:
            break
        chunks.append(data)
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminals")
def test_zero_columns_is_an_unknown_width_and_the_check_name_shows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    master, slave = _zero_column_terminal()
    try:
        with os.fdopen(os.dup(slave), "w", encoding="utf-8") as stream:
            assert render._terminal_width(stream) > 0
            live = render.LiveLine(stream)
            assert live.live  # it is a terminal
            live.show("  PASS  matmul [cpu]               1024x1024 float32  12ms")
            live.done()
        shown = _drain(master)
    finally:
        os.close(slave)
        os.close(master)
    assert "matmul [cpu]" in shown
    assert "…" not in shown


def test_columns_from_the_environment_when_the_terminal_says_0(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    master, slave = _zero_column_terminal()
    try:
        with os.fdopen(os.dup(slave), "w", encoding="utf-8") as stream:
            assert render._terminal_width(stream) == 40
    finally:
        os.close(slave)
        os.close(master)


def _missing_report() -> VerifyReport:
    checks = (
        CheckResult(
            "import",
            "fail",
            0.0,
            "torch is not installed for /venv/bin/python",
            None,
            {"type": "ModuleNotFoundError"},
            "get the right build for this machine with `setup-env plan`",
        ),
        CheckResult("matmul", "skip", 0.0, "torch did not import"),
    )
    return VerifyReport(
        ok=False,
        checks=checks,
        counts=count_statuses(checks),
        python="/venv/bin/python",
        torch_missing=True,
    )


def test_verify_summary_says_torch_is_missing_once() -> None:
    text = verify_cmd.summary(_missing_report(), render.Style(False))
    assert text.count("not installed") == 1
    assert "setup-env plan" in text


def test_verify_run_says_torch_is_missing_once_stdout_and_stderr_together(
    tmp_path: Path,
) -> None:
    """A real interpreter without torch: the whole run (summary and progress) says it once."""
    venv.create(tmp_path / "venv", with_pip=False)
    python = tmp_path / "venv" / "bin" / "python"
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "verify", "--python", str(python)],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 3, proc.stderr
    assert (proc.stdout + proc.stderr).count("not installed") == 1
    assert "FAIL" in proc.stderr and "import" in proc.stderr  # the progress line still shows


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX pseudo-terminals")
def test_verify_on_a_zero_column_terminal_names_the_running_check_from_the_start(
    tmp_path: Path,
) -> None:
    """stderr is a 0x0 pseudo-terminal: the first live line (before torch has even loaded)
    names the check that runs, in full, and the run still says 'not installed' once."""
    venv.create(tmp_path / "venv", with_pip=False)
    python = tmp_path / "venv" / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env.update({"NO_COLOR": "1", "TERM": "xterm", "PYTHONPATH": str(REPO)})
    master, slave = _zero_column_terminal()
    try:
        with subprocess.Popen(
            [sys.executable, "-m", "setup_env", "verify", "--python", str(python)],
            stdout=subprocess.PIPE,
            stderr=slave,
            env=env,
            cwd=REPO,
            text=True,
        ) as proc:
            os.close(slave)
            chunks: list[bytes] = []
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            out = proc.stdout.read() if proc.stdout else ""
            rc = proc.wait(timeout=300)
    finally:
        os.close(master)
    err = b"".join(chunks).decode("utf-8", "replace")
    assert rc == 3
    first = err.split("\r\x1b[K")[1]
    assert "import" in first and "loading torch" in first
    assert "…" not in err
    assert (out + err).count("not installed") == 1
