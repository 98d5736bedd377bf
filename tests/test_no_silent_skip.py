"""Issue 22: a test that needs a tool CI installs fails under CI=true when the tool is missing,
and .ci/run stops when it cannot install one."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import require_in_ci, require_tools

ROOT = Path(__file__).resolve().parent.parent
MISSING = "setup-env-no-such-tool-22"


def test_a_missing_tool_skips_on_a_developer_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=f"{MISSING} not on PATH \\(why\\)"):
        require_tools("sh", MISSING, why="why")


def test_a_missing_tool_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=f"CI must provide {MISSING} not on PATH"):
        require_tools("sh", MISSING, why="why")
    with pytest.raises(pytest.fail.Exception, match="CI must provide this: root"):
        require_in_ci(False, "root")


def test_present_tools_come_back_as_paths_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_tools("sh", "env", why="") == [shutil.which("sh"), shutil.which("env")]
    require_in_ci(True, "never reached")


def _fake_ci_tree(tmp_path: Path, apt_rc: int) -> tuple[Path, dict[str, str]]:
    """A copy of .ci/run whose scripts/test only says it ran, and a PATH with no shellcheck,
    SLURM or munge, whose apt-get exits `apt_rc`."""
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "run", tmp_path / ".ci" / "run")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "test").write_text('#!/bin/sh\necho "tests ran CI=$CI"\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "mktemp", "tail", "rm", "sh"):
        found = shutil.which(tool)
        assert found, f"{tool} is needed"
        (bin_dir / tool).symlink_to(found)
    (bin_dir / "apt-get").write_text(f"#!/bin/sh\necho apt-get $* >&2\nexit {apt_rc}\n")
    for script in (bin_dir / "apt-get", tmp_path / "scripts" / "test", tmp_path / ".ci" / "run"):
        script.chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    return tmp_path / ".ci" / "run", env


def test_ci_run_stops_when_an_install_fails(tmp_path: Path) -> None:
    run, env = _fake_ci_tree(tmp_path, apt_rc=100)
    proc = subprocess.run(
        [str(run)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 1
    assert "tests ran" not in proc.stdout
    assert "could not install shellcheck slurm-wlm munge" in proc.stderr


def test_ci_run_runs_the_tests_under_ci_true_when_installs_succeed(tmp_path: Path) -> None:
    run, env = _fake_ci_tree(tmp_path, apt_rc=0)
    proc = subprocess.run(
        [str(run)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert (proc.returncode, proc.stdout) == (0, "tests ran CI=true\n"), proc.stderr
