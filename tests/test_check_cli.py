"""`setup-env check` (and `setup-env` alone) in-process: replayed hosts, the verdict rules, and one
real run on this machine (torch 2.13.0 CPU installed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.commands.check import decide
from setup_env.decide.model import Finding, Fix, Plan
from setup_env.decide.smoke_model import CheckResult, VerifyReport
from setup_env.knowledge.variant import CPU
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
THIS_MACHINE = HOSTS / "debian12-nogpu-cuda13toolkit"
PLAN = Plan(
    status="ok",
    torch_version="2.13.0",
    variant=CPU,
    index_url="https://download.pytorch.org/whl/cpu",
    command="pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu",
)


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_replayed_machine_is_never_verified(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "check", "--root", str(THIS_MACHINE))
    assert code == 0
    assert doc["schema"] == "setup-env/check"
    body = doc["check"]
    assert body["verdict"] == {
        "state": "ready",
        "line": "READY: torch 2.13.0+cpu is installed and fits this machine "
        "(not verified: a replayed machine)",
        "command": None,
    }
    assert body["verify"] is None
    assert body["verify_skipped"] == "not verified: a replayed machine"
    assert [f["code"] for f in body["findings"]] == ["toolkit-without-driver"]
    assert body["facts"]["os"]["distro_id"] == "debian"


def test_gpu_instance_without_driver_needs_action(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "check", "--root", str(HOSTS / "linux-aws-g5-nitro-nodriver"))
    assert code == 1
    verdict = doc["check"]["verdict"]
    assert verdict["state"] == "action-needed"
    assert verdict["line"].startswith("ACTION NEEDED: this aws g5.xlarge has 1x NVIDIA A10G")
    assert "then install torch" in verdict["line"]
    assert doc["check"]["cloud"]["provider"] == "aws"


def test_unexaminable_root_exits_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "--root", str(tmp_path))  # `setup-env --root X` is check
    assert code == 3
    assert doc["schema"] == "setup-env/error"
    assert doc["error"]["code"] == "unexaminable"


def test_text_report_ends_with_one_verdict_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["check", "--root", str(THIS_MACHINE)]) == 0
    out = capsys.readouterr().out.rstrip().splitlines()
    assert out[-1].startswith("READY: torch 2.13.0+cpu")
    assert sum(line.startswith(("READY", "ACTION NEEDED", "BROKEN")) for line in out) == 1


# --- the verdict rules -----------------------------------------------------------------------


def _facts_without_torch() -> Any:
    from dataclasses import replace

    facts = detect(ReplayHost(THIS_MACHINE), cloud_metadata=False)
    return replace(facts, packages=())


def test_no_torch_means_install_with_the_plans_command() -> None:
    v = decide(_facts_without_torch(), PLAN, (), None, "torch is not installed")
    assert v.state == "action-needed" and v.exit_code == 1
    assert v.line == f"ACTION NEEDED: install torch 2.13.0 (cpu) — run: {PLAN.command}"
    assert v.command == PLAN.command


def test_nothing_fits_gives_the_first_ranked_fix() -> None:
    fixes = (
        Fix(2, "pin-torch", "pin torch 2.11", "pip install torch==2.11.0"),
        Fix(1, "change-python", "use Python 3.12", None),
    )
    v = decide(_facts_without_torch(), Plan(status="none", fixes=fixes), (), None)
    assert v.line == "ACTION NEEDED: no PyTorch build fits this machine; use Python 3.12"


def test_failed_check_is_broken() -> None:
    facts = detect(ReplayHost(THIS_MACHINE), cloud_metadata=False)
    report = VerifyReport(
        ok=False,
        checks=(CheckResult("matmul", "fail", message="NaN", device="cpu", fix="reinstall"),),
        device="cpu",
    )
    v = decide(facts, PLAN, (), report)
    assert v.state == "broken" and v.exit_code == 1
    assert v.line == "BROKEN: torch 2.13.0+cpu fails its checks (matmul[cpu]) — reinstall"


def test_error_finding_needs_action_even_when_checks_pass() -> None:
    facts = detect(ReplayHost(THIS_MACHINE), cloud_metadata=False)
    finding = Finding("cpu-build-on-gpu", "error", "torch is CPU-only", command="pip install x")
    v = decide(facts, PLAN, (finding,), VerifyReport(ok=True, checks=(), device="cpu"))
    assert v.line == "ACTION NEEDED: torch is CPU-only — run: pip install x"


@pytest.mark.torch
def test_real_check_on_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    code = main(["--json"])  # `setup-env --json` is `setup-env check --json`
    captured = capsys.readouterr()
    body = json.loads(captured.out)["check"]
    assert code == 0, body["verdict"]
    assert body["verdict"]["state"] == "ready"
    assert body["verdict"]["line"] == "READY: torch 2.13.0+cpu works on cpu"
    assert body["verify"]["ok"] is True
    assert body["verify"]["device"] == "cpu"
    names = {c["name"] for c in body["verify"]["checks"] if c["status"] == "pass"}
    assert {"import", "roundtrip", "matmul", "train"} <= names
    # Progress went to stderr while verify ran, not into the JSON on stdout; not a terminal, so
    # one line per check, in verify's own format.
    assert "verifying the installed torch" in captured.err
    assert "import" in captured.err and "matmul [cpu]" in captured.err
    assert "\r" not in captured.err
