"""The planner: a pure function (facts, matrix, options) -> Plan.

``make_plan`` picks the newest torch release that

1. has a wheel for this interpreter (its wheel tags, Python version, free-threading, OS, glibc,
   macOS version, architecture; traps like 2.6.0's ``manylinux1`` tag on a glibc-2.28 build);
2. has a variant whose compiled GPU code runs EVERY GPU in the machine (VERIFIED.md §3: SASS X.y
   runs on X.z with z >= y, same major; PTX <= the GPU's arch can be JIT-compiled; arch-specific
   ``a`` targets only on that exact arch);
3. whose CUDA the installed driver supports: the toolkit minimum first; the minor-version-
   compatibility floor (same CUDA major) with a warning, never for a GPU on the PTX path.

Within a release it prefers PyPI's own build (a plain ``pip install``), then the release's stable
CUDA on PyTorch's index, then the newest CUDA; only rows the one rule admits are recommended
(``setup_env.knowledge.matrix.plannable``: confidence V, V2 or I, never ?; the ``verified`` flag
is that rule), and a plan resting on an inferred (I) row says so (``row-inferred``). When no GPU
build fits, the plan is a named CPU fallback with ranked fixes. Commands are built only from
validated parts (versions parsed by packaging, variants from the data's closed set, URLs
checked) as argv, then quoted with shlex for display.

The planner is a package, one module a concern, each importing only those before it:
``target`` (the machine planned for; ``spec_facts`` for a machine named on the command line),
``context`` (what every branch shares: candidates, installability, the user's options),
``formats`` (the installer's command), ``fixes`` (the ranked ways out), ``vendors`` (AMD, Intel,
CPU), ``nvidia``, ``stable`` and ``nightly`` (the channels); :func:`make_plan` here picks one.

Nothing here reads the machine or prints. ``spec_facts`` builds the facts of a machine described
on the command line (what-if mode).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan.context import (
    _Ctx,
    asked_variant,
    check_index_url,
    check_options,
    parse_torch_pin,
    runs_on,
)
from setup_env.decide.plan.nightly import _nightly_plan
from setup_env.decide.plan.stable import _stable_plan
from setup_env.decide.plan.target import facts_summary, interpreter_tags, spec_facts

if TYPE_CHECKING:
    from setup_env.facts import Facts

# The planner's public face; the result types live in setup_env.decide.model.
__all__ = [
    "asked_variant",
    "check_index_url",
    "check_options",
    "facts_summary",
    "interpreter_tags",
    "make_plan",
    "parse_torch_pin",
    "runs_on",
    "spec_facts",
]


def make_plan(facts: Facts, options: PlanOptions | None = None, matrix: object = None) -> Plan:
    """The install plan for ``facts``; see the module docstring for the rules."""
    from setup_env.knowledge.matrix import Matrix, load_matrix

    opts = options or PlanOptions()
    m = matrix if isinstance(matrix, Matrix) else load_matrix()
    check_options(opts, m)
    ctx = _Ctx(facts, opts, m)
    for note in m.notes:
        ctx.warn("matrix-note", note)
    if ctx.t.os == "linux" and ctx.t.glibc is None and ctx.t.python is not None:
        ctx.warn(
            "glibc-unknown",
            "this system's glibc version is unknown: the plan assumes it meets the wheels' floor "
            "(glibc >= 2.28 from torch 2.6 on; older systems need torch <= 2.5)",
        )
    if opts.channel == "nightly":
        return _nightly_plan(ctx)
    jetson = None
    if facts.cpu.architecture in ("aarch64", None) and (
        facts.jetson is not None or facts.nvidia is not None
    ):
        from setup_env.decide import (
            jetsonplan,  # loads the GPU catalogue: only where a Jetson may be
        )

        jetson = jetsonplan.jetson_of(facts)
    if jetson is not None and opts.variant is None:
        from setup_env.decide import jetsonplan

        # The JetPack-matched route (setup_env/decide/jetsonplan.py): never a driver install.
        def general(plain: Facts) -> Plan:
            sub = _Ctx(plain, opts, m)
            sub.warnings.extend(ctx.warnings)
            return _stable_plan(sub)

        return jetsonplan.plan(facts, jetson, opts, general)
    return _stable_plan(ctx)
