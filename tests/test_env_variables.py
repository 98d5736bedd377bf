"""A bad value in a SETUP_ENV_* variable fails like the flag it stands for: exit 2, an error
envelope under --json, the variable named (never a warning seen only with -v)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from setup_env.cli import main
from setup_env.commands import _env

ROOT = Path(__file__).resolve().parent.parent
HOST = str(ROOT / "tests" / "fixtures" / "hosts" / "ubuntu2404-cpu-only")

BAD = {
    "SETUP_ENV_NVIDIA_DRIVER_VERSION": "57O.86",
    "SETUP_ENV_CUDA_DRIVER_VERSION": "twelve",
    "SETUP_ENV_NVIDIA_SMI": "/no/such/nvidia-smi",
    "SETUP_ENV_NVIDIA_SMI_TIMEOUT": "10s",
    "SETUP_ENV_NO_NVML": "2",
    "SETUP_ENV_SKIP_PROBES": "rocm,gpu",
    "SETUP_ENV_CLOUD_METADATA": "maybe",
    "SETUP_ENV_DISK_PATH": "/no/such/folder",
    "SETUP_ENV_MATRIX": "/no/such/wheels.json",
    "SETUP_ENV_VERIFY_TIMEOUT_SCALE": "fast",
    "SETUP_ENV_PYPI_URL": "ftp://pypi.example",
    "SETUP_ENV_INDEX_URL": "download.pytorch.org/whl",
    "SETUP_ENV_NODE_NAME": "node 7;reboot",
}


def test_every_variable_the_code_reads_is_checked() -> None:
    """grep: every SETUP_ENV_* the package reads has a check (the test hook excepted)."""
    import re

    names = set()
    for path in (ROOT / "setup_env").rglob("*.py"):
        names |= set(re.findall(r"SETUP_ENV_[A-Z0-9_]*[A-Z0-9]", path.read_text("utf-8")))
    names -= {"SETUP_ENV_VERIFY_TEST_CHECKS"}  # the smoke test's own test hook
    # prefixes (detect's "any SETUP_ENV_NVIDIA* set?") are not variables of their own
    names = {n for n in names if not any(c != n and c.startswith(n) for c in _env.CHECKS)}
    assert names <= set(_env.CHECKS), sorted(names - set(_env.CHECKS))
    assert set(BAD) == set(_env.CHECKS)


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_value_is_exit_2_naming_the_variable(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for other in _env.CHECKS:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(name, BAD[name])
    assert main(["plan", "--root", HOST, "--json"]) == 2
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/error"
    assert doc["error"]["code"] == "usage"
    assert doc["error"]["message"].startswith(f"{name}=")
    assert name in err


@pytest.mark.parametrize(
    "name,value",
    [
        ("SETUP_ENV_NVIDIA_DRIVER_VERSION", "570.86.10"),
        ("SETUP_ENV_CUDA_DRIVER_VERSION", "12.8"),
        ("SETUP_ENV_NVIDIA_SMI_TIMEOUT", "30"),
        ("SETUP_ENV_NO_NVML", "1"),
        ("SETUP_ENV_SKIP_PROBES", "rocm, xpu"),
        ("SETUP_ENV_CLOUD_METADATA", "0"),
        ("SETUP_ENV_DISK_PATH", "/"),
        ("SETUP_ENV_VERIFY_TIMEOUT_SCALE", "2.5"),
        ("SETUP_ENV_PYPI_URL", "https://pypi.org/simple"),
        ("SETUP_ENV_NVIDIA_DRIVER_VERSION", ""),  # empty: not set
    ],
)
def test_good_values_pass(name: str, value: str) -> None:
    assert _env.problem({name: value}) is None


def test_the_bundled_matrix_named_by_the_variable_passes() -> None:
    from setup_env.knowledge.matrix import BUNDLED_PATH

    assert _env.problem({"SETUP_ENV_MATRIX": str(BUNDLED_PATH)}) is None


def test_the_flag_still_wins_over_nothing_but_the_variable_fails_first_in_a_process() -> None:
    """As a user meets it: a typo in the environment of a real process, plain text."""
    env = {**os.environ, "SETUP_ENV_MATRIX": "/no/such/wheels.json", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "plan", "--root", HOST],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "SETUP_ENV_MATRIX" in proc.stderr
