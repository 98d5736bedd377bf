"""Root causes ranked above their symptoms, in `doctor` as in `diagnose`, and the route when no
build fits: on the facts of real reports (tests/fixtures/collect_env/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.probe.report import parse

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"


def _doctor_on(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """`doctor --facts` on the facts a real report holds (what `detect --json` would have
    written on that machine)."""
    facts = parse((FIXTURES / name).read_text(encoding="utf-8")).facts
    path = tmp_path / "facts.json"
    path.write_text(facts.to_json(), encoding="utf-8")
    code = main(["doctor", "--json", "--facts", str(path)])
    body: dict[str, Any] = json.loads(capsys.readouterr().out)["doctor"]
    assert code == (1 if body["counts"]["error"] else 0)
    return body


def test_issue_example_old_driver_and_python_36(capsys: pytest.CaptureFixture[str]) -> None:
    # torch 1.3.1+cu101 on driver 410.48, Python 3.6, 8x TITAN Xp: the cause (CUDA 10.1 needs
    # 418.39, no minor-version compatibility) above the symptom, and the route to a named build.
    code = main(["diagnose", "--json", str(FIXTURES / "linux-8x-titanxp-torch1.3-old.txt")])
    body = json.loads(capsys.readouterr().out)["diagnose"]
    assert code == 1
    codes = [f["code"] for f in body["findings"]]
    assert codes[:2] == ["cuda-newer-than-driver", "torch-cuda-unavailable"]
    assert body["findings"][0]["details"]["min_driver"] == "418.39"
    assert body["route"] == {
        "steps": [
            {"kind": "python", "summary": "Python >= 3.10"},
            {"kind": "driver", "summary": "NVIDIA driver >= 525.60.13"},
            {"kind": "torch", "summary": "torch 2.14.1+cu126: the newest build with sm_61"},
        ],
        "torch": "2.14.1",
        "variant": "cu126",
    }


def test_doctor_ranks_the_same_cause_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = _doctor_on("windows10-quadro-m2000-cu92-driver391-pip-conda.txt", tmp_path, capsys)
    codes = [f["code"] for f in body["findings"]]
    assert codes[0] == "cuda-newer-than-driver"
    assert "several-installs" in codes
    assert body["findings"][0]["details"]["min_driver"] == "398.26"  # CUDA 9.2 on Windows


def test_messages_travel_in_the_facts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Only torch's message says the driver is too old (found version 9010): the facts carry it
    # as the driver's CUDA version with source collect_env:warning, and doctor reads it.
    facts = parse((FIXTURES / "linux-driver-too-old-9010-cu102.txt").read_text()).facts
    assert facts.nvidia is not None
    assert facts.nvidia.cuda_driver_version == "9.1"
    assert facts.nvidia.sources["cuda_driver_version"] == "collect_env:warning"
    body = _doctor_on("linux-driver-too-old-9010-cu102.txt", tmp_path, capsys)
    first = body["findings"][0]
    assert first["code"] == "cuda-newer-than-driver"
    assert any(e.endswith("[collect_env:warning]") for e in first["evidence"])


def test_jetson_nvidia_build_is_not_replaced_by_a_desktop_wheel(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Issue 10: on a Jetson with NVIDIA's 2.0.0a0+...nv23.02 it said "no NVIDIA driver or GPU"
    # and recommended pip install torch==2.4.1.
    code = main(["diagnose", "--json", str(FIXTURES / "jetson-agx-orin-nv23.02.txt")])
    body = json.loads(capsys.readouterr().out)["diagnose"]
    assert code == 0
    plan = body["plan"]
    # No desktop (PyPI / download.pytorch.org) command: the Jetson planner's route or none.
    assert plan is None or not plan["command"] or plan["source"] == "jetson", plan
    codes = [f["code"] for f in body["findings"]]
    assert "jetson-nvidia-build" in codes
    assert "toolkit-without-driver" not in codes  # L4T brings the driver
