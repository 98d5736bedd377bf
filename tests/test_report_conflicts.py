"""Issue 18, item 2: diagnose never contradicts the report it reads. Every real report in
tests/fixtures/collect_env/ (each with its .source) is diagnosed, and the answer is checked against
what the report itself states: CUDA available with a CUDA build, a GPU named in torch's warning,
an XPU torch reports available, an installed torch that works."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"
REPORTS = sorted(
    p.name for p in FIXTURES.glob("*.txt") if (FIXTURES / (p.name + ".source")).exists()
)
# Findings that say the machine has no usable NVIDIA GPU or driver.
NO_NVIDIA = {"toolkit-without-driver", "gpu-without-driver", "driver-missing"}


def diagnose(capsys: pytest.CaptureFixture[str], name: str) -> dict[str, Any]:
    main(["diagnose", "--json", str(FIXTURES / name)])
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)["diagnose"]
    return doc


def _torch(body: dict[str, Any]) -> dict[str, Any] | None:
    pkgs = body["facts"]["packages"]
    return next((p for p in pkgs if p["name"] == "torch" and not p["shadowed"]), None)


def conflicts(body: dict[str, Any]) -> list[str]:
    """What the diagnosis says against the report (empty: no conflict)."""
    out: list[str] = []
    report = body["report"]
    torch = _torch(body)
    codes = {f["code"] for f in body["findings"]}
    plan = body["plan"] if body["plan"] and body["plan"]["command"] else None
    planned = plan["variant"] if plan else None
    assumed = {(a["fact"], a["value"]) for a in body["assumptions"]}
    cuda_build = torch is not None and bool(
        torch["cuda"] or (torch["variant"] or "").startswith("cu")
    )
    if report["cuda_available"] and cuda_build:
        if codes & NO_NVIDIA:
            out.append(f"CUDA available with a CUDA build, yet {sorted(codes & NO_NVIDIA)}")
        if planned == "cpu":
            out.append("CUDA available with a CUDA build, yet the CPU build is planned")
        if ("gpus", "no GPU") in assumed:
            out.append("CUDA available with a CUDA build, yet 'no GPU' is assumed")
    rocm = torch is not None and bool(torch["hip"] or (torch["variant"] or "").startswith("rocm"))
    if report["cuda_available"] and not rocm:
        if torch is not None and torch["variant"] == "cpu":
            out.append("CUDA available, yet its torch is read as a CPU build")
        reasons = " ".join(body["plan"]["reasons"]) if plan else ""
        if "no GPU found" in reasons:
            out.append("CUDA available, yet the plan says no GPU was found")
    named = [m for m in report["messages"] if m["kind"] in ("arch-not-compatible", "gpu-too-old")]
    if named and (("gpus", "no GPU") in assumed or "toolkit-without-driver" in codes):
        out.append("a GPU named in torch's warning, yet the answer says there is none")
    if report["xpu_available"] and planned not in (None, "xpu") and body["keep"] is None:
        out.append(f"XPU available, yet the plan is {planned}")
    if torch is not None and "torch-not-installed" in codes:
        out.append("the report names its torch, yet torch is called not installed")
    works = (
        torch is not None
        and (report["cuda_available"] or report["xpu_available"])
        and not any(f["severity"] == "error" for f in body["findings"])
    )
    if works and planned == "cpu":
        out.append("an installed GPU build works, yet the CPU build is offered over it")
    return out


@pytest.mark.parametrize("name", REPORTS)
def test_no_answer_contradicts_its_report(capsys: pytest.CaptureFixture[str], name: str) -> None:
    assert conflicts(diagnose(capsys, name)) == []


@pytest.mark.parametrize("name", REPORTS)
def test_every_assumption_says_what_it_changes(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """Issue 18, item 1: each fact has its source; each assumption the answer it would change."""
    body = diagnose(capsys, name)
    for e in body["evidence"]:
        assert e["source"], e
    for a in body["assumptions"]:
        assert a["value"] and a["why"] and a["if_wrong"] and a["answer_if_wrong"], a
    if body["plan"] is None and body["keep"] is None and body["route"] is None:
        # A refusal says what would decide it.
        assert body["plan_error"] and "would decide" in body["plan_error"], body["plan_error"]


def test_the_conflict_check_can_fail() -> None:
    """The checker itself: a diagnosis that plans the CPU build and finds no driver on a report
    whose CUDA build has CUDA available is two conflicts."""
    body = {
        "report": {"cuda_available": True, "xpu_available": None, "messages": []},
        "facts": {
            "packages": [
                {
                    "name": "torch",
                    "shadowed": False,
                    "cuda": "12.1",
                    "hip": None,
                    "variant": "cu121",
                }
            ]
        },
        "findings": [{"code": "toolkit-without-driver", "severity": "info"}],
        "plan": {"command": "pip install torch", "variant": "cpu", "reasons": ["no GPU found"]},
        "assumptions": [],
        "keep": None,
    }
    # the no-driver finding, the CPU plan, "no GPU found", the CPU build over a working one
    assert len(conflicts(body)) == 4
