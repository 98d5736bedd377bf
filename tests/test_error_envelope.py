"""Every command fails the same way under --json: an error envelope on stdout ({"code",
"message"}), one line on stderr, and the stable exit code. CI parses stdout; it must never be
empty or a different shape depending on the command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from setup_env.cli import main

EMPTY = str(Path(__file__).parent / "fixtures")  # a folder, but no captured machine


@pytest.mark.parametrize(
    ("argv", "code", "exit_code"),
    [
        (["detect", "--json", "--root", EMPTY], "unexaminable", 3),
        (["doctor", "--json", "--root", EMPTY], "unexaminable", 3),
        (["check", "--json", "--root", EMPTY], "unexaminable", 3),
        (["plan", "--json", "--root", EMPTY], "unexaminable", 3),
        (["plan", "--json", "--os", "linux", "--torch", "latest"], "bad-input", 2),
        (["matrix", "show", "--json", "--torch", "9.9"], "bad-input", 2),
        (["verify", "--json", "--python", "/nonexistent/python"], "bad-input", 2),
    ],
)
def test_failures_share_one_envelope(
    capsys: pytest.CaptureFixture[str], argv: list[str], code: str, exit_code: int
) -> None:
    assert main(argv) == exit_code
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/error" and doc["schema_version"] == 1
    assert set(doc["error"]) == {"code", "message"} and doc["error"]["code"] == code
    assert err == f"setup-env {argv[0]}{' show' if argv[0] == 'matrix' else ''}: " + (
        doc["error"]["message"] + "\n"
    )
