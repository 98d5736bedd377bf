"""A fresh `pip install torch` has no NumPy (torch does not depend on it). verify must then still
prove the device round trip, warn at import with the fix, and fail the round trip (Tensor.numpy()
is the project's first promise) with the fix `pip install numpy`, never "reinstall torch"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.torch
def test_verify_without_numpy_fails_the_round_trip_with_the_numpy_fix(tmp_path: Path) -> None:
    # A `numpy` package that fails to import, first on the path: what the worker sees is the
    # ModuleNotFoundError of an environment without NumPy.
    shadow = tmp_path / "numpy"
    shadow.mkdir()
    (shadow / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n"
    )
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "verify", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    doc = json.loads(proc.stdout)
    checks = {c["name"]: c for c in doc["verify"]["checks"]}
    assert checks["import"]["status"] == "warn", checks["import"]
    assert "numpy" in (checks["import"]["fix"] or checks["import"]["message"]).lower()
    roundtrip = checks["roundtrip"]
    assert roundtrip["status"] == "fail"
    assert "CPU -> cpu -> CPU intact" in roundtrip["message"]
    assert "not installed" in roundtrip["message"]
    assert roundtrip["fix"] == "pip install numpy"
    assert proc.returncode == 1, proc.stderr
