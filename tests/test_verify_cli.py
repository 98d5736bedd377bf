"""`setup-env verify` end to end: the whole default run on this CPU (once, shared), its --json
envelope, JUnit file, progress display and exit codes; option validation in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.commands import verify as verify_cmd
from setup_env.decide.smoke_model import CheckResult, VerifyReport, count_statuses
from setup_env.output import render
from setup_env.output.junit import to_junit

NO_TORCH_PYTHON = "/root/.pyenv/versions/3.12.1/bin/python"

# Runs the CLI in a fresh interpreter and reports whether the parent imported torch.
_SCRIPT = """
import sys
from setup_env.cli import main
rc = main(sys.argv[1:])
print("PARENT-IMPORTED-TORCH=%s" % ("torch" in sys.modules), file=sys.stderr)
sys.exit(rc)
"""


@pytest.fixture(scope="module")
def full_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    junit = tmp_path_factory.mktemp("verify") / "verify.xml"
    env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="1")
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT, "verify", "--json", "--junit", str(junit)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    return {
        "rc": proc.returncode,
        "doc": json.loads(proc.stdout),
        "stderr": proc.stderr,
        "junit": junit,
    }


@pytest.mark.torch
def test_full_verify_on_cpu_passes(full_run: dict[str, Any]) -> None:
    assert full_run["rc"] == 0, full_run["stderr"]
    doc = full_run["doc"]
    assert doc["schema"] == "setup-env/verify" and doc["schema_version"] == 1
    report = doc["verify"]
    assert report["ok"] is True and report["torch_missing"] is False
    assert report["devices"] == ["cpu"] and report["workers"] == 1
    statuses = {c["name"]: c["status"] for c in report["checks"]}
    assert statuses == {
        "import": "pass",
        "build": "pass",
        "deps": "pass",
        "device": "pass",
        "arch": "skip",
        "roundtrip": "pass",
        "matmul": "pass",
        "linear": "pass",
        "conv": "pass",
        "softmax": "pass",
        "layer-norm": "pass",
        "attention": "pass",
        "reduction": "pass",
        "optimizer": "pass",
        "autograd": "pass",
        "train": "pass",
        "autocast": "pass",
        "matmul-speed": "pass",
        "memory-bandwidth": "pass",
        "h2d-bandwidth": "skip",
    }
    by_name = {c["name"]: c for c in report["checks"]}
    # Measured figures on the CPU, with no catalogue peak to compare against.
    speed = by_name["matmul-speed"]["evidence"]
    assert speed["tflops"] > 0 and "ratio" not in speed
    assert by_name["memory-bandwidth"]["evidence"]["gbps"] > 0
    assert by_name["matmul"]["evidence"]["dtypes"]["float32"]["ok"] is True
    # The reference never goes through the op under test; CPU speed beside NumPy's.
    assert by_name["matmul"]["evidence"]["reference"] == "numpy float64"
    assert speed["yardstick_tflops"] > 0 and speed["ratio_to_yardstick"] >= 0.1
    assert report["counts"] == {"pass": 18, "warn": 0, "fail": 0, "skip": 2}


@pytest.mark.torch
def test_parent_never_imports_torch(full_run: dict[str, Any]) -> None:
    assert "PARENT-IMPORTED-TORCH=False" in full_run["stderr"]


@pytest.mark.torch
def test_progress_is_one_line_per_check_without_colour(full_run: dict[str, Any]) -> None:
    lines = [ln for ln in full_run["stderr"].splitlines() if ln.startswith("  ")]
    assert len(lines) == len(full_run["doc"]["verify"]["checks"])
    assert lines[0].split()[:2] == ["PASS", "import"]
    assert "\x1b[" not in full_run["stderr"]  # NO_COLOR wins over FORCE_COLOR


@pytest.mark.torch
def test_junit_file_parses_with_right_counts(full_run: dict[str, Any]) -> None:
    root = ET.parse(full_run["junit"]).getroot()
    assert root.tag == "testsuites"
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert len(cases) == 20 == int(suite.get("tests", "0"))
    assert suite.get("failures") == "0" and suite.get("skipped") == "2"
    assert sum(1 for c in cases if c.find("skipped") is not None) == 2
    assert {c.get("name") for c in cases} >= {"import", "matmul[cpu]", "h2d-bandwidth[cpu]"}
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["torch"] == full_run["doc"]["verify"]["torch_version"]


def _report(*checks: CheckResult, **kw: Any) -> VerifyReport:
    ok = not any(c.status == "fail" for c in checks)
    return VerifyReport(ok=kw.pop("ok", ok), checks=checks, counts=count_statuses(checks), **kw)


def test_junit_failures_and_hostile_text() -> None:
    report = _report(
        CheckResult("import", "pass", 1.2, "torch imported"),
        CheckResult(
            "matmul",
            "fail",
            0.1,
            "float16: 3 non-finite values \x1b[31m<&>",
            "cuda:0",
            {"dtypes": {"float16": {"nonfinite": 3}}},
            "reinstall",
        ),
        CheckResult("matmul-speed", "warn", 0.3, "12% of peak", "cuda:0", {"ratio": 0.12}),
        CheckResult("h2d-bandwidth", "skip", 0.0, "no host-to-device copy on the CPU", "cpu"),
    )
    root = ET.fromstring(to_junit(report))
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")
    failure = suite.find("testcase[@name='matmul[cuda:0]']/failure")
    assert failure is not None and "<&>" in (failure.get("message") or "")
    assert "fix: reinstall" in (failure.text or "")
    warn_out = suite.find("testcase[@name='matmul-speed[cuda:0]']/system-out")
    assert warn_out is not None and (warn_out.text or "").startswith("warning: ")


def test_exit_codes() -> None:
    passing = _report(CheckResult("import", "pass"), CheckResult("speed", "warn"))
    assert verify_cmd.exit_code(passing) == 0
    assert verify_cmd.exit_code(_report(CheckResult("matmul", "fail"))) == 1
    missing = _report(CheckResult("import", "fail"), ok=False, torch_missing=True)
    assert verify_cmd.exit_code(missing) == 3


@pytest.mark.torch
def test_no_torch_interpreter_exit_3_with_hint(capsys: pytest.CaptureFixture[str]) -> None:
    if not os.path.exists(NO_TORCH_PYTHON):
        pytest.skip(f"{NO_TORCH_PYTHON} not on this machine")
    rc = main(["verify", "--python", NO_TORCH_PYTHON, "--no-color"])
    out, err = capsys.readouterr()
    assert rc == 3
    assert "torch is not installed" in out and "setup-env plan" in out
    assert "FAIL" in err and "import" in err
    rc = main(["verify", "--python", NO_TORCH_PYTHON, "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 3 and doc["verify"]["torch_missing"] is True


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--device", "tpu"], "--device"),
        (["--device", "cuda;rm -rf /"], "--device"),
        (["--only", "matmul,nope"], "unknown check nope"),
        (["--timeout-scale", "0"], "--timeout-scale"),
        (["--python", "/nonexistent/python"], "no executable interpreter"),
        (["--rdzv-endpoint", "host:29400;reboot"], "--rdzv-endpoint"),
        (["--nnodes", "two"], "--nnodes"),
        (["--rdzv-id", "job id"], "--rdzv-id"),
        (["--master-port", "70000"], "--master-port"),
    ],
)
def test_bad_options_are_one_line_usage_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["verify", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_rendezvous_options_become_torchrun_args() -> None:
    parser = verify_cmd.argparse.ArgumentParser()
    verify_cmd.add_arguments(parser)
    args = parser.parse_args(
        [
            "--nnodes",
            "2",
            "--node-rank",
            "1",
            "--rdzv-endpoint",
            "10.0.0.5:29400",
            "--rdzv-id",
            "job-42",
            "--nproc-per-node",
            "8",
        ]
    )
    opts = verify_cmd.options_from_args(args)
    assert opts.distributed is True and opts.nproc_per_node == 8
    assert opts.torchrun_args == (
        "--nnodes",
        "2",
        "--node-rank",
        "1",
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        "10.0.0.5:29400",
        "--rdzv-id",
        "job-42",
    )
    single = verify_cmd.options_from_args(parser.parse_args([]))
    assert single.torchrun_args == () and single.distributed is False


def test_summary_text_lists_fixes() -> None:
    report = _report(
        CheckResult("import", "pass", 1.0, "torch 2.13.0+cpu imported"),
        CheckResult(
            "device",
            "fail",
            0.0,
            "this machine has an NVIDIA GPU but verify runs on the CPU",
            fix="run `setup-env plan`",
        ),
        torch_version="2.13.0+cpu",
        devices=("cpu",),
        python="/usr/bin/python3",
    )
    text = verify_cmd.summary(report, render.Style(False))
    assert "FAIL device:" in text and "fix: run `setup-env plan`" in text
    assert text.splitlines()[-1].startswith("FAILED: 1 of 2 checks failed")
    colored = verify_cmd.progress_line(report.checks[1], render.Style(True))
    assert "\x1b[" in colored and "device" in colored


def test_colour_follows_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("FORCE_COLOR", "1")
    style = render.Style(render.use_color(sys.stderr))
    line = verify_cmd.progress_line(CheckResult("matmul", "pass", 0.01, "ok", "cpu"), style)
    assert "\x1b[" not in line and "matmul [cpu]" in line


def test_junit_unwritable_path_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not os.path.exists(NO_TORCH_PYTHON):
        pytest.skip(f"{NO_TORCH_PYTHON} not on this machine")
    bad = tmp_path / "no-such-dir" / "x.xml"
    assert main(["verify", "--python", NO_TORCH_PYTHON, "--junit", str(bad)]) == 2
    assert "cannot write" in capsys.readouterr().err
