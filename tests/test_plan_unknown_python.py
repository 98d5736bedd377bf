"""Facts that name no Python (a capture or paste without the interpreter) get a plan that says so
and how to go on, not a misleading "use Python 3.11–3.15"."""

from __future__ import annotations

from pathlib import Path

from setup_env.decide.plan import make_plan
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


def test_unknown_glibc_judges_pypi_and_the_index_alike() -> None:
    # The same machine, once with glibc 2.35 and its tags, once with glibc unknown and no tags
    # (a thin capture): the same release and build, plus a warning about the assumption.
    from dataclasses import replace

    from setup_env.decide.plan import spec_facts

    known = spec_facts(os="linux", python="3.12", gpus=["NVIDIA A10G"], glibc="2.35")
    unknown = replace(
        known,
        os=replace(known.os, glibc=None),
        python=replace(known.python, tags=("cp312-cp312-linux_x86_64",)),
    )
    a, b = make_plan(known), make_plan(unknown)
    assert (b.torch_version, b.variant, b.index_url) == (a.torch_version, a.variant, a.index_url)
    assert any("glibc version is unknown" in w for w in b.warnings)
    assert not any("glibc version is unknown" in w for w in a.warnings)
