"""What each assumption of a report's diagnosis decides: the plan for the other value.

A report that lacks a line (the driver, the GPU list, the OS, the Python) is planned for the most
likely value (``probe.report.infer``); here each assumption's alternative is planned too, and the
answer it would change is put in words: "if the driver is older than 580.65.06: torch
2.11.0+cu128". Pure: facts and plans in, records out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

from setup_env._record import Record, record, replace
from setup_env.decide.model import Plan
from setup_env.facts import Facts, Gpu, NvidiaInfo
from setup_env.knowledge.cuda import driver_fit, version_tuple
from setup_env.knowledge.matrix import Matrix


@record
class Assumed(Record):
    """An assumption with the answer that changes if it is wrong."""

    fact: str
    value: str
    why: str
    alternative: str  # "the driver is older than 580.65.06"
    changes: str  # "torch 2.11.0+cu128", "no GPU build: the CPU build", "the same answer"
    same: bool = False  # the alternative gives the same install command


def answer(plan: Optional[Plan]) -> str:
    """A plan in a few words: ``torch 2.11.0+cu128``."""
    if plan is None or not plan.command:
        return "no install command fits"
    if plan.variant is None:
        return f"torch {plan.torch_version}"
    return f"torch {plan.torch_version}+{plan.variant}"


def alternatives(
    facts: Facts,
    assumptions: Sequence[object],
    plan: Optional[Plan],
    matrix: Optional[Matrix],
    planner: Callable[[Facts], Optional[Plan]],
) -> tuple[Assumed, ...]:
    """Each assumption (``probe.report.model.Assumption``) with the answer its alternative gives."""
    out: list[Assumed] = []
    for a in assumptions:
        fact = str(getattr(a, "fact", ""))
        alt = str(getattr(a, "alt", ""))
        alternative = str(getattr(a, "alternative", ""))
        other, words = _other(facts, alt, plan, matrix)
        if other is None:
            changes, same = "not worked out", False
        else:
            alt_plan = planner(other)
            same = (
                alt_plan is not None
                and plan is not None
                and bool(plan.command)
                and alt_plan.command == plan.command
            )
            changes = "the same answer" if same else answer(alt_plan)
        out.append(
            Assumed(
                fact,
                str(getattr(a, "value", "")),
                str(getattr(a, "why", "")),
                words or alternative,
                changes,
                same,
            )
        )
    return tuple(out)


def _newest_below(matrix: Matrix, major: int) -> Optional[str]:
    below = [k for k in matrix.cuda if (version_tuple(k) or (0,))[0] < major]
    return max(below, key=lambda k: version_tuple(k) or ()) if below else None


def _other(
    facts: Facts, alt: str, plan: Optional[Plan], matrix: Optional[Matrix]
) -> tuple[Optional[Facts], str]:
    """(the facts with the alternative value, the alternative in words)."""
    kind, _, arg = alt.partition(":")
    nv = facts.nvidia or NvidiaInfo()
    if kind == "driver" and arg:
        sources = {k: v for k, v in nv.sources.items() if k != "cuda_driver_version"}
        other = replace(
            facts,
            nvidia=replace(nv, driver_version=arg, cuda_driver_version=None, sources=sources),
        )
        # The oldest driver the report allows (it ran the installed build).
        return other, f"the driver is as old as {arg} (the oldest that runs the installed build)"
    if kind == "driver-below-plan":
        if matrix is None or plan is None or not plan.cuda:
            return None, ""
        major = (version_tuple(plan.cuda) or (0,))[0]
        below = _newest_below(matrix, major)
        if below is None:
            return None, ""
        fit = driver_fit(None, plan.cuda, facts.os.driver_os, matrix.cuda)
        need = fit.mvc_floor or fit.toolkit_min
        other = replace(facts, nvidia=replace(nv, driver_version=None, cuda_driver_version=below))
        words = f"the driver is older than {need}" if need else f"the driver predates CUDA {major}"
        return other, words
    if kind == "gpus" and arg == "none":
        return replace(facts, nvidia=None), "the machine has no NVIDIA GPU"
    if kind == "gpus" and arg == "nvidia":
        newest = max(matrix.cuda, key=lambda k: version_tuple(k) or ()) if matrix else None
        gpu = Gpu(index=0, name="NVIDIA GPU", source="assumed: the alternative")
        return (
            replace(facts, nvidia=replace(nv, gpus=(gpu,), cuda_driver_version=newest)),
            "the machine has an NVIDIA GPU (and a current driver)",
        )
    if kind == "os" and arg == "windows":
        os_info = replace(facts.os, family="windows", glibc=None, libc=None, distro_name=None)
        python = replace(facts.python, machine="AMD64")
        return replace(facts, os=os_info, python=python), "the machine runs Windows"
    if kind == "python" and arg:
        return replace(facts, python=replace(facts.python, version=arg)), f"Python is {arg}"
    return None, ""
