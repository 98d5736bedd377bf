"""`setup-env doctor`: what is wrong with the installed PyTorch on this machine, with the fix.

Exit codes: 0 no error-level finding; 1 at least one; 2 usage; 3 the machine (``--root``) or the
facts file (``--facts``) could not be examined.

The helpers it shares with ``diagnose`` and ``check`` live in ``decide.verdict`` (``counts``,
``headline``, ``finding_json``, ``plan_json``, ``safe_plan``), ``setup_env.output.render_check``
(``render_findings``) and ``setup_env.commands._source`` (``load_facts``); they stay importable
from here.
"""

from __future__ import annotations

import argparse
import sys

from setup_env.commands._source import SourceError, load_facts
from setup_env.decide.summary import counts, finding_json, headline, plan_json, safe_plan
from setup_env.exitcodes import ExitCode
from setup_env.output.render_check import render_findings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog

    epilog(
        parser,
        "0 no error-level finding; 1 at least one; 2 bad options; 3 the machine (--root) or\n"
        "the facts file (--facts) could not be examined.",
    )
    src = parser.add_mutually_exclusive_group()
    src.add_argument(
        "--root",
        metavar="DIR",
        help="examine a machine captured by `setup-env capture DIR` instead of this one",
    )
    src.add_argument(
        "--facts",
        metavar="FILE",
        help="examine the facts in FILE (`setup-env detect --json` output from another machine)",
    )


def run(args: argparse.Namespace) -> int:
    from setup_env.decide.doctor import examine
    from setup_env.knowledge.matrix import in_use
    from setup_env.output import render

    try:
        facts, label = load_facts(args.root, args.facts)
    except SourceError as exc:
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
