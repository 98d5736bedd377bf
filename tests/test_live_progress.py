"""verify in a terminal: each check shows once (a live line, rewritten in place, then the table);
piped, one progress line per check as before. The terminal is a real pseudo-terminal."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from setup_env.output import render

REPO = Path(__file__).resolve().parents[1]


def test_live_line_rewrites_in_place_and_erases_itself() -> None:
    buf = io.StringIO()
    live = render.LiveLine(buf, live=True)
    live.show("  PASS  import")
    live.show("  PASS  matmul [cpu]")
    live.done()
    assert buf.getvalue() == (
        "\r\x1b[K  PASS  import" + "\r\x1b[K  PASS  matmul [cpu]" + "\r\x1b[K"
    )


def test_live_line_is_plain_lines_off_a_terminal() -> None:
    buf = io.StringIO()  # not a tty
    live = render.LiveLine(buf)
    live.show("a")
    live.show("b")
    live.done()
    assert buf.getvalue() == "a\nb\n"


def test_a_long_live_line_never_wraps() -> None:
    assert render._clip("\x1b[1m" + "x" * 50 + "\x1b[0m", 20) == "x" * 19 + "…"


def _run_verify(stderr_tty: bool) -> tuple[str, str, int]:
    import pty

    argv = [sys.executable, "-m", "setup_env", "verify", "--only", "import,roundtrip,matmul"]
    env = {**os.environ, "NO_COLOR": "1", "TERM": "xterm"}
    if not stderr_tty:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300, cwd=REPO)
        return proc.stdout, proc.stderr, proc.returncode
    master, slave = pty.openpty()
    chunks: list[bytes] = []
    try:
        with subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=slave, env=env, cwd=REPO, text=True
        ) as p:
            os.close(slave)
            while True:
                try:
                    data = os.read(master, 4096)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            out = p.stdout.read() if p.stdout else ""
            rc = p.wait(timeout=300)
    finally:
        os.close(master)
    return out, b"".join(chunks).decode("utf-8", "replace"), rc


@pytest.mark.torch
def test_verify_in_a_terminal_shows_each_check_once() -> None:
    pytest.importorskip("torch")
    out, err, rc = _run_verify(stderr_tty=True)
    assert rc == 0, err
    # The live line: each update starts by returning to column 0 and erasing the line...
    assert err.count("\r\x1b[K") >= 3
    # ...and after the last one nothing is left standing: the terminal shows only the table.
    assert err.endswith("\r\x1b[K")
    visible = err.split("\r\x1b[K")[-1]
    assert visible == ""
    table_rows = [ln for ln in out.splitlines() if ln.startswith(("import ", "matmul "))]
    assert len(table_rows) == 2  # each check once, in the table


@pytest.mark.torch
def test_verify_piped_keeps_one_line_per_check() -> None:
    pytest.importorskip("torch")
    out, err, rc = _run_verify(stderr_tty=False)
    assert rc == 0, err
    assert "import" in out
    assert "\r" not in err and "\x1b[" not in err
    progress = [ln for ln in err.splitlines() if ln.startswith("  ")]
    assert [ln.split()[1] for ln in progress] == ["import", "roundtrip", "matmul"]
