"""`setup-env doctor`: what is wrong with the installed PyTorch on this machine, with the fix.

Exit codes: 0 no error-level finding; 1 at least one; 2 usage; 3 the machine (``--root``) or the
facts file (``--facts``) could not be examined.

The helpers here (``load_facts``, ``safe_plan``, ``render_findings``, ``findings_json``) are
shared with ``diagnose`` and ``check``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

from setup_env.commands._source import SourceError
from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.doctor import Finding
    from setup_env.facts import Facts
    from setup_env.plan import Plan
    from setup_env.render import Style

_LABEL = {"error": "ERROR", "warning": "WARN ", "info": "INFO "}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    src = parser.add_mutually_exclusive_group()
    src.add_argument(
        "--root",
        metavar="DIR",
        help="examine a machine captured by scripts/capture_host.py instead of this one",
    )
    src.add_argument(
        "--facts",
        metavar="FILE",
        help="examine the facts in FILE (`setup-env detect --json` output from another machine)",
    )


# The facts source could not be read (check.py catches it under this name).
Unexaminable = SourceError


def load_facts(root: Optional[str], facts_file: Optional[str] = None) -> tuple[Facts, str]:
    """Facts from ``--facts FILE``, a replayed ``--root DIR``, or this machine; and a label."""
    from setup_env.commands._source import open_host, read_facts_file

    if facts_file:
        return read_facts_file(facts_file), facts_file
    from setup_env.probe.detect import detect

    host = open_host(root)
    return detect(host), host.label


def safe_plan(facts: Facts) -> tuple[Optional[Plan], Optional[str]]:
    """The plan for these facts, or None and why (the doctor still runs without one)."""
    from setup_env.plan import make_plan

    try:
        return make_plan(facts), None
    except NotImplementedError:
        return None, "the planner is not available in this build"
    except Exception as exc:  # a planner bug must not hide the doctor's findings
        return None, f"planning failed ({type(exc).__name__}: {exc})"


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    out = {"error": 0, "warning": 0, "info": 0}
    for f in findings:
        out[f.severity] += 1
    return out


def headline(findings: Sequence[Finding]) -> str:
    c = counts(findings)
    if not findings:
        return "no problems found"
    pairs = (("error", c["error"]), ("warning", c["warning"]), ("note", c["info"]))
    parts = [f"{n} {word}{'' if n == 1 else 's'}" for word, n in pairs if n]
    return ", ".join(parts)


def render_findings(findings: Sequence[Finding], style: Style, verbose: int = 0) -> str:
    """Findings, most severe first, each with its evidence and the fix (command under it)."""
    lines: list[str] = []
    for f in findings:
        label = style.severity(f.severity, _LABEL[f.severity])
        lines.append(f"{label} {f.title}  {style('[' + f.code + ']', 'dim')}")
        for ev in f.evidence if (verbose or f.severity != "info") else f.evidence[:1]:
            lines.append(f"       {style('·', 'dim')} {ev}")
        if f.fix:
            lines.append(f"       fix: {f.fix}")
        if f.command:
            lines.append(f"         {style('$ ' + f.command, 'bold')}")
    return "\n".join(lines)


def finding_json(f: Finding) -> dict[str, Any]:
    return {
        "code": f.code,
        "severity": f.severity,
        "title": f.title,
        "evidence": list(f.evidence),
        "fix": f.fix,
        "command": f.command,
        **({"details": dict(f.details)} if f.details else {}),
    }


def plan_json(plan: Optional[Plan]) -> Any:
    from setup_env.facts import to_jsonable

    return to_jsonable(plan) if plan is not None else None


def run(args: argparse.Namespace) -> int:
    from setup_env import render
    from setup_env.doctor import examine
    from setup_env.matrix import in_use

    try:
        facts, label = load_facts(args.root, args.facts)
    except Unexaminable as exc:
        return render.fail("doctor", "unexaminable", str(exc), ExitCode.UNEXAMINABLE, args.json)
    plan, plan_error = safe_plan(facts)
    findings = examine(facts, plan, in_use())
    code = ExitCode.CHECK_FAILED if any(f.severity == "error" for f in findings) else ExitCode.OK
    if args.json:
        payload = {
            "machine": label,
            "ok": code == ExitCode.OK,
            "counts": counts(findings),
            "findings": [finding_json(f) for f in findings],
            "plan": plan_json(plan),
            "plan_error": plan_error,
        }
        print(render.dumps(render.envelope("doctor", payload)))
        return int(code)
    style = render.Style(render.use_color(sys.stdout, args.color))
    where = "this machine" if label == "live" else label
    print(f"{style('setup-env doctor', 'bold')} ({where}): {headline(findings)}")
    if findings:
        print(render_findings(findings, style, args.verbose))
    if plan_error and args.verbose:
        print(style(f"(no install plan: {plan_error})", "dim"))
    return int(code)
