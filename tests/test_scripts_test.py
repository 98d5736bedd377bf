"""./scripts/test says what it does, one line per step, before each step (the pip install takes
minutes on a fresh clone), and explains its torch pin by the project's own reasons."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "test"


def test_the_torch_pin_is_explained_by_the_projects_reasons() -> None:
    text = SCRIPT.read_text("utf-8")
    comment = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    assert "torch==2.13.0" in text
    assert "CPU build" in comment and "on disk" in comment and "CUDA" in comment
    assert ".md" not in comment  # no document outside the project


def test_ci_still_runs_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert "./scripts/test" in readme
    ci = (ROOT / ".ci" / "run").read_text("utf-8")
    assert "./scripts/test" in ci


@pytest.mark.skipif(not shutil.which("bash"), reason="bash")
def test_each_step_is_announced_before_it_runs(tmp_path: Path) -> None:
    """A stand-in interpreter records the commands; the script's own lines come first."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    stub = venv / "bin" / "python"
    stub.write_text('#!/bin/sh\necho "RUN python $*" >&2\nexit 0\n')
    stub.chmod(0o755)
    tools = tmp_path / "tools"  # no python3.9 on this PATH: the 3.9 leg is not run
    tools.mkdir()
    for name in ("dirname",):
        found = shutil.which(name)
        assert found
        (tools / name).symlink_to(found)
    env = {
        "PATH": str(tools),
        "HOME": str(tmp_path),
        "SETUP_ENV_TEST_VENV": str(venv),
    }
    proc = subprocess.run(
        [shutil.which("bash") or "bash", str(SCRIPT), "-q"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    announce = [i for i, x in enumerate(lines) if x.startswith("scripts/test: installing")]
    pip = [i for i, x in enumerate(lines) if x.startswith("RUN python -m pip install")]
    assert announce and pip and announce[0] < pip[0]
    assert "torch==2.13.0" in lines[announce[0]]
    for what in ("ruff check", "mypy", "pytest -q"):
        assert any(x.startswith(f"scripts/test: {what}") for x in lines), what
    # every step is closed with its time
    assert sum(1 for x in lines if x.startswith("scripts/test: done in ")) >= 5
    assert "RUN python -m pytest -q" in proc.stderr


def test_shellcheck_passes() -> None:
    shellcheck = shutil.which("shellcheck")
    if not shellcheck:
        pytest.skip("shellcheck is not installed here (CI installs it)")
    proc = subprocess.run([shellcheck, str(SCRIPT)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout


def test_the_script_is_executable() -> None:
    assert os.access(SCRIPT, os.X_OK)
