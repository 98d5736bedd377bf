"""What doctor, diagnose and check share to sum findings up: counts by severity, the headline,
a finding and a plan as JSON, and a plan that never raises. Apart from the verdict so that
doctor and diagnose load only these."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from setup_env.decide.model import Finding, Plan
    from setup_env.facts import Facts


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


def safe_plan(facts: Facts) -> tuple[Optional[Plan], Optional[str]]:
    """The plan for these facts, or None and why (the doctor still runs without one)."""
    from setup_env.decide.plan import make_plan

    try:
        return make_plan(facts), None
    except NotImplementedError:
        return None, "the planner is not available in this build"
    except Exception as exc:  # a planner bug must not hide the doctor's findings
        return None, f"planning failed ({type(exc).__name__}: {exc})"
