"""`setup-env diagnose` in-process on real collect_env reports (tests/fixtures/collect_env/)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main

REPORTS = Path(__file__).parent / "fixtures" / "collect_env"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["diagnose", "--json", *argv])
    return code, json.loads(capsys.readouterr().out)


def test_mig_report_whole_findings(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, str(REPORTS / "linux-4x-h100-mig-details.txt"))
    assert code == 0
    assert doc["schema"] == "setup-env/diagnose" and doc["schema_version"] == 1
    body = doc["diagnose"]
    assert body["ok"] is True
    assert body["report"] == {
        "cuda_available": True,
        "xpu_available": None,
        "debug_build": False,
        "truncated": True,
        "layout": "pytorch",
        # Cut at "Nvidia d": the driver line is not in the paste.
        "missing": ["driver"],
        "messages": [],
    }
    assert body["findings"] == [
        {
            "code": "mig-enabled",
            "severity": "warning",
            "title": "MIG is enabled: CUDA sees MIG instances, not whole GPUs, "
            "and a process uses one",
            "evidence": ["GPU 2 NVIDIA H100: MIG mode on"],
            "fix": "select an instance with CUDA_VISIBLE_DEVICES=MIG-<uuid> from `nvidia-smi -L`, "
            "or disable MIG (`sudo nvidia-smi -i <gpu> -mig 0`)",
            "command": "nvidia-smi -L",
        },
        {
            "code": "report-truncated",
            "severity": "info",
            "title": "the report is partial: it stops before its library list ends",
            "evidence": ["what follows the cut (libraries, conda packages) is unknown"],
            "fix": None,
            "command": None,
        },
    ]
    assert body["counts"] == {"error": 0, "warning": 1, "info": 1}
    facts = body["facts"]
    assert [g["name"] for g in facts["nvidia"]["gpus"]] == ["NVIDIA H100"] * 4


def test_cpu_build_on_gpu_report_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, str(REPORTS / "windows10-cpu-build-rtx-truncated.txt"))
    assert code == 1
    assert [f["code"] for f in doc["diagnose"]["findings"]][:1] == ["cpu-build-on-gpu"]


def test_cuda_build_that_reports_cuda_unavailable(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, str(REPORTS / "linux-8x-titanxp-torch1.3-old.txt"))
    assert code == 1
    found = {f["code"]: f for f in doc["diagnose"]["findings"]}
    assert found["torch-cuda-unavailable"]["severity"] == "error"
    assert "Is CUDA available: False" in found["torch-cuda-unavailable"]["evidence"]


def test_text_output_names_the_problem_and_the_fix(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    code = main(["diagnose", str(REPORTS / "macos13-m2max-torch2.10dev.txt")])
    out = capsys.readouterr().out
    assert code == 0
    assert "\x1b[" not in out
    assert "torch      2.10.0.dev20251008" in out
    assert "macOS 13.7.4" in out
    assert "[macos-too-old-for-mps]" in out
    assert "fix: upgrade macOS to 14 or newer" in out


def test_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    data = (REPORTS / "wsl-rocm-rx6800xt.txt").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    code, doc = run_json(capsys, "-")
    assert code == 0
    facts = doc["diagnose"]["facts"]
    assert facts["os"]["wsl"] == 2
    assert facts["rocm"]["gpus"][0]["name"] == "AMD Radeon RX 6800 XT"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"just some words\n", "not a `python -m torch.utils.collect_env` report"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary"),
    ],
)
def test_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "paste.txt"
    path.write_bytes(content)
    assert main(["diagnose", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_missing_file_exits_2_with_json_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["diagnose", "--json", str(tmp_path / "nope.txt")])
    captured = capsys.readouterr()
    assert code == 2
    doc = json.loads(captured.out)
    assert doc["schema"] == "setup-env/error"
    assert doc["error"]["code"] == "bad-input"
    assert "No such file" in captured.err
