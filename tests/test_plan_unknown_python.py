"""Facts that name no Python (a capture or paste without the interpreter) get a plan that says so
and how to go on, not a misleading "use Python 3.11–3.15"."""

from __future__ import annotations

from pathlib import Path

from setup_env.plan import make_plan
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def test_facts_without_a_python_version() -> None:
    # The WSL2 capture holds nvidia-smi output only: no interpreter was recorded.
    facts = detect(ReplayHost(HOSTS / "wsl2-rtx4070-555"))
    assert facts.python.version == "" and not facts.python.tags
    plan = make_plan(facts)
    assert plan.status == "none"
    assert plan.reasons[0] == "these facts name no Python interpreter, so no wheel can be matched"
    assert [f.kind for f in plan.fixes][:1] == ["name-python"]
    assert "--python 3.12" in plan.fixes[0].summary
