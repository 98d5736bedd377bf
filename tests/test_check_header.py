"""`check` for a described machine names the target's CPU in its header, not the runner's."""

from __future__ import annotations

import platform

import pytest

from setup_env.cli import main


def test_the_header_names_the_targets_arch(capsys: pytest.CaptureFixture[str]) -> None:
    here = platform.machine().lower()
    target = "x86_64" if here in ("aarch64", "arm64") else "aarch64"
    main(["check", "--os", "linux", "--arch", target, "--no-verify", "--no-color"])
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.strip().startswith("machine"))
    assert row.rstrip().endswith(f"({target})"), row
    main(["check", "--os", "linux", "--arch", target, "--no-verify", "--format", "markdown"])
    page = capsys.readouterr().out
    assert any(line.startswith("| machine |") and target in line for line in page.splitlines())
