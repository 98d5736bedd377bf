"""`setup-env capture DIR` (issue 20 item 1): installed with the package, it records this machine
through the Host seam and the one door; `plan --root DIR` on the folder gives the plan a live
`plan` gives here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any]:
    code = main(list(argv))
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_capture_then_plan_root_gives_the_live_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box = tmp_path / "box"
    code, doc = run(capsys, "capture", str(box), "--json")
    assert code == 0, doc
    assert doc["schema"] == "setup-env/capture"
    assert doc["capture"] == {
        "folder": str(box),
        "expected_only": False,
        "replay_matches": True,
        "differs_in": [],
    }
    assert (box / "host.json").is_file() and (box / "SOURCES.md").is_file()
    assert json.loads((box / "host.json").read_text())["label"] == "captured by setup-env capture"
    for extra in ((), ("--with", "torchvision", "--installer", "conda")):
        live_code, live = run(capsys, "plan", "--json", *extra)
        root_code, replayed = run(capsys, "plan", "--json", "--root", str(box), *extra)
        # the same plan; only the label of the machine differs
        assert replayed["plan"].pop("machine") == f"captured machine {box}"
        assert live["plan"].pop("machine") == "this machine"
        assert (root_code, replayed["plan"]) == (live_code, live["plan"])
        assert replayed["plan"]["command"]


def test_capture_detect_root_is_the_live_detect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box = tmp_path / "box"
    assert main(["capture", str(box)]) == 0
    out = capsys.readouterr().out
    assert f"captured this machine into {box}" in out and f"--root {box}" in out
    _, live = run(capsys, "detect", "--json")
    _, replayed = run(capsys, "detect", "--json", "--root", str(box))
    for key in ("os", "python", "nvidia", "packages", "toolkits"):
        assert replayed["facts"][key] == live["facts"][key], key


def test_expected_rewrites_a_fixture_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box = tmp_path / "box"
    assert main(["capture", str(box)]) == 0
    capsys.readouterr()
    code, doc = run(capsys, "capture", "--expected", str(box), "--json")
    assert code == 0 and doc["capture"]["expected_only"] is True
    _, replayed = run(capsys, "detect", "--json", "--root", str(box))
    assert json.loads((box / "expected.json").read_text()) == replayed["facts"]


def test_capture_errors_are_envelopes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, doc = run(capsys, "capture", str(blocker / "sub"), "--json")
    assert code == 3 and doc["schema"] == "setup-env/error"
    assert doc["error"]["code"] == "unexaminable" and str(blocker) in doc["error"]["message"]
    code, doc = run(capsys, "capture", "--expected", str(tmp_path), "--json")
    assert code == 3 and "not a captured machine" in doc["error"]["message"]
    assert main(["capture", "--json"]) == 2  # DIR is required
