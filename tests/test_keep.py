"""Issue 17, item 5: keep what works. A torch GPU build that works on the machine, where no newer
GPU build fits without a change, is the as-is answer (with the route to a newer one); a CPU build
is never offered over it. The real reports are tests/fixtures/collect_env/ (each with .source)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.decide import causes
from setup_env.decide.model import Finding, Plan
from setup_env.decide.summary import safe_plan
from setup_env.knowledge.variant import Variant
from setup_env.probe.report import parse

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"
# Turing (TITAN RTX, sm_75) on an R440 driver with torch 1.5.0+cu101, CUDA available, Python 3.7:
# the case issue 17 reports (pytorch/pytorch#40682).
WINDOWS = "windows-server2019-titanrtx-quoted.txt"
# Turing (4x TITAN RTX) on driver 440.33.01 with torch 1.4.0 (CUDA 10.0), CUDA available (espnet).
LINUX = "linux-4x-titanrtx-driver440-torch1.4-espnet.txt"


def _diagnose(capsys: pytest.CaptureFixture[str], path: Path, *flags: str) -> tuple[int, str]:
    code = main(["diagnose", *flags, str(path)])
    return code, capsys.readouterr().out


def test_the_issue_report_keeps_its_working_cuda_build(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _diagnose(capsys, FIXTURES / WINDOWS)
    assert code == 0
    assert "As is: keep the installed torch 1.5.0+cu101: CUDA works on 2x TITAN RTX" in out
    # Before: "Best install command (fallback): pip install torch==1.13.1 ... whl/cpu".
    assert "Best install command" not in out
    assert "pip install" not in out
    assert "torch 1.13.1 (cpu) is not offered over a working GPU build" in out
    # ... with the route to a newer one: the driver upgrade (and the Python it needs).
    assert "The route to torch 2.15.0+cu130:" in out
    assert "NVIDIA driver >= 580" in out
    code, text = _diagnose(capsys, FIXTURES / WINDOWS, "--json")
    body = json.loads(text)["diagnose"]
    assert body["plan"] is None
    assert body["plan_error"].startswith("not offered: keep the installed torch 1.5.0+cu101")
    keep = body["keep"]
    assert keep["torch"] == "1.5.0+cu101" and keep["variant"] == "cu101"
    assert keep["device"] == "cuda" and keep["replaced"] == "torch 1.13.1 (cpu)"
    assert [s["kind"] for s in body["route"]["steps"]] == ["python", "driver", "torch"]


def test_a_linux_report_of_the_same_kind(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _diagnose(capsys, FIXTURES / LINUX)
    assert code == 0
    assert "As is: keep the installed torch 1.4.0 (cu100): CUDA works on 4x TITAN RTX" in out
    assert "pip install" not in out
    assert "NVIDIA driver >= 580" in out


def test_the_linux_report_with_its_platform_known(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same report as a later collect_env prints it (a "Python platform" line): the plan
    then has a CPU fallback (torch 1.13.1, the newest for Python 3.7), which is not offered."""
    text = (
        (FIXTURES / LINUX)
        .read_text(encoding="utf-8")
        .replace(
            "Python version: 3.7\n",
            "Python version: 3.7 (64-bit runtime)\n"
            "Python platform: Linux-3.10.0-862.el7.x86_64-x86_64-with-centos-7.5.1804-Core\n",
        )
    )
    report = tmp_path / "report.txt"
    report.write_text(text, encoding="utf-8")
    plan, _err = safe_plan(parse(text).facts)
    assert plan is not None and plan.status == "fallback" and str(plan.variant) == "cpu"
    code, out = _diagnose(capsys, report)
    assert code == 0
    assert "torch==1.13.1" not in out and "whl/cpu" not in out
    assert "torch 1.13.1 (cpu) is not offered over a working GPU build" in out


# --- the rule, on the real report's facts -------------------------------------------------------


def _windows() -> Any:
    return parse((FIXTURES / WINDOWS).read_text(encoding="utf-8")).facts


AVAILABLE = {"cuda": True, "rocm": True, "xpu": None}


def test_kept_only_when_its_accelerator_works() -> None:
    facts = _windows()
    plan, _ = safe_plan(facts)
    assert causes.keep_installed(facts, plan, (), AVAILABLE) is not None
    assert causes.keep_installed(facts, plan, (), {"cuda": False}) is None
    assert causes.keep_installed(facts, plan, (), {"cuda": None}) is None


@pytest.mark.parametrize(
    "code", ["gpu-arch-not-in-wheel", "cuda-newer-than-driver", "no-kernel-image", "gpu-too-old"]
)
def test_not_kept_when_a_finding_says_it_fails_here(code: str) -> None:
    facts = _windows()
    plan, _ = safe_plan(facts)
    broken = (Finding(code, "error", "..."),)
    assert causes.keep_installed(facts, plan, broken, AVAILABLE) is None
    # a warning about something else does not undo it
    assert causes.keep_installed(facts, plan, (Finding(code, "warning", "..."),), AVAILABLE)


def test_not_kept_when_a_gpu_build_fits_as_things_are() -> None:
    facts = _windows()
    fits = Plan(status="ok", torch_version="2.15.0", variant=Variant.parse("cu130"), command="x")
    assert causes.keep_installed(facts, fits, (), AVAILABLE) is None
    cpu_ok = replace(fits, variant=Variant.parse("cpu"))
    assert causes.keep_installed(facts, cpu_ok, (), AVAILABLE) is not None


def test_a_cpu_build_is_not_kept_as_a_gpu_build() -> None:
    facts = _windows()
    torch = facts.package("torch")
    cpu = replace(torch, version="1.5.0+cpu", variant=Variant.parse("cpu"), cuda=None)
    others = tuple(p for p in facts.packages if p.name != "torch")
    facts = replace(facts, packages=(cpu, *others))
    plan, _ = safe_plan(facts)
    assert causes.keep_installed(facts, plan, (), AVAILABLE) is None
