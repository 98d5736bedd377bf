"""A VerifyReport as JUnit XML, the format CI systems (GitHub Actions reporters, GitLab, Jenkins)
read: one <testcase> per check; fail -> <failure>, skip -> <skipped>, warn -> passes with the
warning in <system-out>. Built with ElementTree, so it is always well formed."""

from __future__ import annotations

import json
import platform
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

from setup_env.decide.smoke_model import VerifyReport

# XML 1.0 forbids most control characters (an ANSI escape in a message would break the file).
_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: object) -> str:
    return _BAD_XML.sub("", str(text))


def to_junit(report: VerifyReport, suite: str = "setup-env verify") -> str:
    counts = report.counts
    tests = len(report.checks)
    failures = sum(1 for c in report.checks if c.status == "fail")
    skipped = sum(1 for c in report.checks if c.status == "skip")
    attrs = {
        "name": suite,
        "tests": str(tests),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
        "time": f"{report.duration_s:.3f}",
    }
    # The strict schema (Jenkins' junit-10.xsd) allows "skipped" on <testsuite> only.
    root = ET.Element("testsuites", {k: v for k, v in attrs.items() if k != "skipped"})
    ts = ET.SubElement(
        root,
        "testsuite",
        {
            **attrs,
            "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
            "hostname": _clean(platform.node()),
        },
    )
    props = ET.SubElement(ts, "properties")
    for name, value in (
        ("python", report.python),
        ("torch", report.torch_version or ""),
        ("device", report.device or ""),
        ("devices", " ".join(report.devices)),
        ("warnings", str(counts.get("warn", 0))),
    ):
        ET.SubElement(props, "property", {"name": name, "value": _clean(value)})
    for c in report.checks:
        case = ET.SubElement(
            ts,
            "testcase",
            {"classname": "setup-env.verify", "name": _clean(c.id), "time": f"{c.duration_s:.3f}"},
        )
        detail = c.message + (f"\nfix: {c.fix}" if c.fix else "")
        if c.status == "fail":
            el = ET.SubElement(case, "failure", {"message": _clean(c.message), "type": "fail"})
            el.text = _clean(detail)
        elif c.status == "skip":
            ET.SubElement(case, "skipped", {"message": _clean(c.message)})
        out = ET.SubElement(case, "system-out")
        prefix = "warning: " if c.status == "warn" else ""
        out.text = _clean(f"{prefix}{detail}\n{json.dumps(dict(c.evidence), default=str)}")
    ET.indent(root)  # Python 3.9+
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
