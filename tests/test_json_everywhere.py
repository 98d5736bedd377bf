"""`--json` gives the versioned envelope for every command: the launchers' script and manifests
inside it, and an error envelope for every failure (a missing file to `matrix arches` included)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from setup_env.cli import main

FIX = Path(__file__).resolve().parent / "fixtures"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_fleet_slurm_json_carries_the_script(capsys: pytest.CaptureFixture[str]) -> None:
    code, plain, _ = _run(["fleet", "slurm", "--nodes", "3", "--partition", "gpu"], capsys)
    assert code == 0 and plain.startswith("#!/bin/bash")
    code, out, _ = _run(["fleet", "slurm", "--nodes", "3", "--partition", "gpu", "--json"], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/launcher" and doc["schema_version"] == 1
    body = doc["launcher"]
    assert (body["kind"], body["nodes"], body["format"]) == ("slurm", 3, "sbatch")
    assert body["text"] == plain and body["written_to"] is None


def test_fleet_k8s_json_carries_the_manifests(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["fleet", "k8s", "--nodes", "2", "--image", "registry/setup-env:1"]
    code, plain, _ = _run(argv, capsys)
    assert code == 0
    code, out, _ = _run([*argv, "--json"], capsys)
    assert code == 0
    body = json.loads(out)["launcher"]
    assert body["kind"] == "k8s" and body["text"] == plain
    kinds = [m["kind"] for m in body["manifests"]]
    assert "Job" in kinds and "Service" in kinds


def test_fleet_json_with_output_writes_the_file_and_prints_the_envelope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "check.sbatch"
    code, out, _ = _run(["fleet", "slurm", "--nodes", "2", "--json", "-o", str(target)], capsys)
    assert code == 0
    body = json.loads(out)["launcher"]
    assert body["written_to"] == str(target)
    assert target.read_text() == body["text"]


def test_matrix_arches_json_on_a_missing_file_is_an_error_envelope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.whl"
    code, out, err = _run(["matrix", "arches", "--json", str(missing)], capsys)
    assert code == 2
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/error"
    assert doc["error"]["code"] == "bad-input" and "nope.whl" in doc["error"]["message"]
    assert "no such file" in err
    # one good file and one missing: still the error (exit 2), the missing one named
    good = str(FIX / "fatbin" / "libtiny.so")
    code, out, _ = _run(["matrix", "arches", "--json", good, str(missing)], capsys)
    assert code == 2 and json.loads(out)["schema"] == "setup-env/error"


def test_matrix_arches_json_on_readable_files_is_the_matrix_document(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _run(["matrix", "arches", "--json", str(FIX / "fatbin" / "libtiny.so")], capsys)
    assert code == 0 and json.loads(out)["schema"] == "setup-env/matrix"


@pytest.mark.parametrize(
    "argv",
    [
        ["detect", "--root", "/no/such/box"],
        ["plan", "--root", "/no/such/box"],
        ["doctor", "--root", "/no/such/box"],
        ["check", "--root", "/no/such/box"],
        ["diagnose", "/no/such/report.txt"],
        ["fleet", "report", "/no/such/folder"],
        ["fleet", "slurm", "--nodes", "0"],
        ["fleet", "k8s", "--nodes", "2", "--image", "bad image"],
        ["matrix", "show", "--file", "/no/such/wheels.json"],
        ["matrix", "refresh", "--variants", "x!"],
        ["matrix", "arches", "/no/such/lib.so"],
        ["verify", "--device", "tpu"],
        ["install", "--dry-run", "--torch", "x.y"],
        ["plan", "--no-such-flag"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_every_failure_under_json_is_an_error_envelope(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _run([*argv, "--json"], capsys)
    assert code in (2, 3)
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/error" and doc["error"]["message"]
