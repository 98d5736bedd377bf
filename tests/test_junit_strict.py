"""JUnit files hold to the strict schema CI servers validate against (Jenkins xunit's
junit-10.xsd): the attributes and children each element may have, the required ones, the time
format. The rules are restated here (the schema itself is not vendored)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from setup_env.cli import main
from setup_env.decide.smoke_model import CheckResult, VerifyReport, count_statuses
from setup_env.output.junit import to_junit

HOST = Path(__file__).resolve().parent / "fixtures" / "hosts" / "ubuntu2404-cpu-only"

# element -> (allowed attributes, required attributes, allowed children)
RULES: dict[str, tuple[set[str], set[str], set[str]]] = {
    "testsuites": ({"name", "time", "tests", "failures", "errors"}, set(), {"testsuite"}),
    "testsuite": (
        {
            "name",
            "tests",
            "failures",
            "errors",
            "group",
            "time",
            "skipped",
            "timestamp",
            "hostname",
            "id",
            "package",
            "file",
            "log",
            "url",
        },
        {"name", "tests", "failures", "errors"},
        {"testsuite", "properties", "testcase", "system-out", "system-err"},
    ),
    "properties": (set(), set(), {"property"}),
    "property": ({"name", "value"}, {"name", "value"}, set()),
    "testcase": (
        {"name", "time", "classname", "group"},
        {"name"},
        {"skipped", "error", "failure", "system-out", "system-err"},
    ),
    "failure": ({"type", "message"}, set(), set()),
    "error": ({"type", "message"}, set(), set()),
    "skipped": ({"type", "message"}, set(), set()),
    "system-out": (set(), set(), set()),
    "system-err": (set(), set(), set()),
}
TIME = re.compile(r"(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?")


def problems(text: str) -> list[str]:
    root = ET.fromstring(text.split("?>", 1)[1] if text.startswith("<?xml") else text)
    found: list[str] = []
    if root.tag not in ("testsuites", "testsuite"):
        found.append(f"root <{root.tag}>")

    def walk(el: ET.Element) -> None:
        if el.tag not in RULES:
            found.append(f"<{el.tag}> is not in the schema")
            return
        allowed, required, children = RULES[el.tag]
        found.extend(f"<{el.tag} {a}=...> not allowed" for a in set(el.attrib) - allowed)
        found.extend(f"<{el.tag}> lacks {a}" for a in required - set(el.attrib))
        if "time" in el.attrib and el.tag != "testcase" and not TIME.fullmatch(el.attrib["time"]):
            found.append(f"<{el.tag} time={el.attrib['time']!r}>")
        for child in el:
            if child.tag not in children:
                found.append(f"<{child.tag}> inside <{el.tag}>")
            walk(child)

    walk(root)
    return found


def test_the_checker_catches_the_old_skipped_attribute() -> None:
    suite = '<testsuite name="x" tests="0" failures="0" errors="0"/>'
    bad = f'<testsuites skipped="1">{suite}</testsuites>'
    assert problems(bad) == ["<testsuites skipped=...> not allowed"]


def test_verify_junit_is_strict() -> None:
    checks = (
        CheckResult("import", "pass", 1.2, "torch imported"),
        CheckResult("matmul", "fail", 0.1, "bad", "cpu", {}, "reinstall"),
        CheckResult("compile", "skip", 0.0, "not asked"),
        CheckResult("matmul-speed", "warn", 0.5, "slow", "cpu"),
    )
    report = VerifyReport(ok=False, checks=checks, counts=count_statuses(checks), duration_s=1.8)
    assert problems(to_junit(report)) == []


def test_check_junit_is_strict(tmp_path: Path) -> None:
    out = tmp_path / "check.xml"
    main(["check", "--root", str(HOST), "--junit", str(out)])
    assert problems(out.read_text("utf-8")) == []
