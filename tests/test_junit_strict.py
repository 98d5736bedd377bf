"""JUnit files validate against the strict schema CI servers check them with: Jenkins xUnit's
``junit-10.xsd``, the real file (tests/fixtures/junit/, SOURCE.md names its commit), read by a
real XSD validator (``xmlschema``). And one problem is one failed testcase: the stages that sum
up others pass with their summary (issue 20, item 5)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import xmlschema

from setup_env.cli import main
from setup_env.decide.smoke_model import CheckResult, VerifyReport, count_statuses
from setup_env.output.junit import to_junit

FIX = Path(__file__).resolve().parent / "fixtures"
HOSTS = FIX / "hosts"
SCHEMA = xmlschema.XMLSchema10(FIX / "junit" / "junit-10.xsd")


def problems(text: str) -> list[str]:
    return [str(e.reason or e.message) for e in SCHEMA.iter_errors(text)]


def check_junit(tmp_path: Path, host: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = tmp_path / f"{host}.xml"
    main(["check", "--root", str(HOSTS / host), "--junit", str(out)])
    return out.read_text("utf-8")


def failed(text: str) -> list[tuple[str, str]]:
    root = ET.fromstring(text.encode())
    return [
        (c.get("classname", ""), c.get("name", ""))
        for c in root.iter("testcase")
        if c.find("failure") is not None
    ]


# --- the validator is the real one and it bites ---------------------------------------------------

SUITE = '<testsuite name="x" tests="0" failures="0" errors="0"/>'


@pytest.mark.parametrize(
    "bad",
    [
        f'<testsuites skipped="1">{SUITE}</testsuites>',  # the old bug: skipped on <testsuites>
        '<testsuite name="x" tests="1" failures="0"/>',  # errors is required
        '<testsuite name="x" tests="1" failures="0" errors="0" time="1.2345"/>',  # SUREFIRE_TIME
        '<testsuite name="x" tests="1" failures="0" errors="0"><testcase/></testsuite>',  # no name
        f"<testsuites><testcase name='t'/>{SUITE}</testsuites>",
    ],
)
def test_the_schema_refuses_what_jenkins_refuses(bad: str) -> None:
    assert problems(bad)


def test_the_schema_accepts_a_minimal_report() -> None:
    assert problems(f'<testsuites time="0.100">{SUITE}</testsuites>') == []


# --- what setup-env writes -----------------------------------------------------------------------


def test_verify_junit_is_strict_and_counts_each_check_once() -> None:
    checks = (
        CheckResult("import", "pass", 1.2, "torch imported"),
        CheckResult("matmul", "fail", 0.1, "bad \x1b[31mred\x1b[0m", "cpu", {}, "reinstall"),
        CheckResult("compile", "skip", 0.0, "not asked"),
        CheckResult("matmul-speed", "warn", 0.5, "slow", "cpu"),
    )
    report = VerifyReport(ok=False, checks=checks, counts=count_statuses(checks), duration_s=1.8)
    text = to_junit(report)
    assert problems(text) == []
    assert failed(text) == [("setup-env.verify", "matmul[cpu]")]
    suite = ET.fromstring(text.encode()).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("4", "1", "1")


HOST_FAILURES: dict[str, list[tuple[str, str]]] = {
    # no driver for the GPU: one finding, one failure (not doctor + finding + verdict)
    "linux-aws-g5-nitro-nodriver": [("setup-env.check.doctor", "gpu-without-driver")],
    # no build fits: the plan's failure, not the verdict's too
    "ubuntu-h100-590": [("setup-env.check.stage", "plan")],
    # two findings and no plan: three problems, three failures
    "aws-k80-driver-510-unsupported": [
        ("setup-env.check.stage", "plan"),
        ("setup-env.check.doctor", "driver-unusable"),
        ("setup-env.check.doctor", "driver-not-loaded"),
    ],
    # torch not installed: a note, no failure of its own, so the verdict says it, once
    "ubuntu2404-cpu-only": [("setup-env.check.stage", "verdict")],
    "debian12-nogpu-cuda13toolkit": [],
}


@pytest.mark.parametrize("host", sorted(p.name for p in HOSTS.iterdir() if p.is_dir()))
def test_check_junit_is_strict_for_every_host(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = check_junit(tmp_path, host, monkeypatch)
    assert problems(text) == []
    bad = failed(text)
    suite: Any = ET.fromstring(text.encode()).find("testsuite")
    assert int(suite.get("failures")) == len(bad)
    assert len(bad) == len(set(bad))  # no problem twice
    if host in HOST_FAILURES:
        assert bad == HOST_FAILURES[host]
