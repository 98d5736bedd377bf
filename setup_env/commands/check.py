"""`setup-env check` (also `setup-env` alone): the main job.

Detect the machine, plan the PyTorch that belongs on it, run the doctor, verify the installed torch
(when there is one; ``--no-verify`` skips it, ``--root`` never runs it), add cloud advice on a
cloud VM, and end with ONE verdict line:

    READY: torch 2.13.0+cpu works on cpu
    ACTION NEEDED: install torch — run: pip install torch==2.13.0 --index-url ...
    BROKEN: torch 2.9.0+cu130 fails its checks (matmul[cuda:0]) — run: ...

Exit codes: 0 ready; 1 action needed or broken; 3 the machine can't be examined; 2 usage.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional

from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.cloudplan import CloudAdvice
    from setup_env.doctor import Finding
    from setup_env.facts import Facts
    from setup_env.plan import Plan
    from setup_env.render import Style
    from setup_env.smoke.model import CheckResult, VerifyReport

State = Literal["ready", "action-needed", "broken", "unexaminable"]


@dataclass(frozen=True)
class Verdict:
    state: State
    line: str  # the one line people read: "READY: torch 2.13.0+cpu works on cpu"
    command: Optional[str] = None  # what to run, when something is to be done

    @property
    def exit_code(self) -> int:
        if self.state == "ready":
            return int(ExitCode.OK)
        if self.state == "unexaminable":
            return int(ExitCode.UNEXAMINABLE)
        return int(ExitCode.CHECK_FAILED)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="check a machine captured by scripts/capture_host.py (never runs verify)",
    )
    parser.add_argument(
        "--no-verify", action="store_true", help="skip running the installed torch's checks"
    )
    parser.add_argument(
        "--device",
        metavar="DEV",
        help="verify on this device (cpu, cuda, cuda:1, mps, xpu); default: the best one",
    )


# --- the verdict (pure) ----------------------------------------------------------------------


def _run_hint(command: Optional[str]) -> str:
    return f" — run: {command}" if command else ""


def decide(
    facts: Facts,
    plan: Optional[Plan],
    findings: tuple[Finding, ...],
    verify: Optional[VerifyReport],
    verify_skipped: Optional[str] = None,
) -> Verdict:
    """One verdict from everything check learned. ``verify_skipped`` says why verify did not run."""
    torch = facts.package("torch")
    errors = [f for f in findings if f.severity == "error"]
    if torch is None or (verify is not None and verify.torch_missing):
        if errors:
            first = errors[0]
            then = "; then install torch" + _run_hint(plan.command if plan else None)
            return Verdict(
                "action-needed",
                f"ACTION NEEDED: {first.title}" + (f" — {first.fix}" if first.fix else "") + then,
                first.command or (plan.command if plan else None),
            )
        if plan is not None and plan.status != "none" and plan.command:
            what = f"install torch {plan.torch_version or ''}".rstrip()
            if plan.variant:
                what += f" ({plan.variant})"
            return Verdict(
                "action-needed", f"ACTION NEEDED: {what}{_run_hint(plan.command)}", plan.command
            )
        if plan is not None and plan.fixes:
            fix = sorted(plan.fixes, key=lambda x: x.rank)[0]
            return Verdict(
                "action-needed",
                f"ACTION NEEDED: no PyTorch build fits this machine; {fix.summary}"
                + _run_hint(fix.command),
                fix.command,
            )
        return Verdict(
            "action-needed",
            "ACTION NEEDED: install torch — run `setup-env plan` for the exact command",
        )
    if verify is not None and (verify.error or not verify.ok):
        failed = [c.id for c in verify.failed]
        first_fix = next((c.fix for c in verify.failed if c.fix), None)
        command = next((f.command for f in errors if f.command), None)
        what = verify.error or ("fails its checks (" + ", ".join(failed[:4]) + ")")
        hint = _run_hint(command) if command else (f" — {first_fix}" if first_fix else "")
        return Verdict("broken", f"BROKEN: torch {torch.version} {what}{hint}", command)
    if errors:
        first = errors[0]
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return Verdict(
            "action-needed",
            f"ACTION NEEDED: {first.title}{more}"
            + (_run_hint(first.command) if first.command else f" — {first.fix or ''}".rstrip(" —")),
            first.command,
        )
    if verify is not None:
        device = verify.device or "cpu"
        return Verdict("ready", f"READY: torch {torch.version} works on {device}")
    why = f" ({verify_skipped})" if verify_skipped else ""
    return Verdict("ready", f"READY: torch {torch.version} is installed and fits this machine{why}")


# --- the command -----------------------------------------------------------------------------


def _progress(style: Style) -> Any:
    mark = {
        "pass": ("ok", "green"),
        "warn": ("warn", "yellow"),
        "fail": ("FAIL", "red"),
        "skip": ("skip", "dim"),
    }

    def report(result: CheckResult) -> None:
        word, color = mark.get(result.status, (result.status, "dim"))
        msg = f" {result.message}" if result.message else ""
        print(
            f"  {style(word.ljust(4), color)} {result.id}{style(msg, 'dim')}",
            file=sys.stderr,
            flush=True,
        )

    return report


def _verify(facts: Facts, device: Optional[str], style: Style) -> VerifyReport:
    from setup_env.smoke import VerifyOptions, run_verify

    print("verifying the installed torch...", file=sys.stderr, flush=True)
    return run_verify(VerifyOptions(device=device, facts=facts), progress=_progress(style))


def _summary_lines(facts: Facts, plan: Optional[Plan], style: Style) -> list[str]:
    lines: list[str] = []
    os_text = facts.os.distro_name or facts.os.family
    if facts.os.macos_version:
        os_text = f"macOS {facts.os.macos_version}"
    py = facts.python
    lines.append(f"machine   {os_text}, Python {py.version or 'unknown'} ({py.machine or '?'})")
    gpus = facts.gpus
    if gpus:
        lines.append("GPU       " + ", ".join(f"{g.index}: {g.name}" for g in gpus))
    elif facts.apple is not None and facts.apple.chip:
        lines.append(f"GPU       {facts.apple.chip} (MPS)")
    else:
        lines.append("GPU       none")
    if facts.nvidia is not None and facts.nvidia.driver_version:
        lines.append(f"driver    NVIDIA {facts.nvidia.driver_version}")
    torch = facts.package("torch")
    lines.append(f"torch     {torch.version if torch else 'not installed'}")
    if plan is not None:
        target = f"torch {plan.torch_version} ({plan.variant})" if plan.torch_version else "nothing"
        lines.append(f"plan      {target} [{plan.status}]")
    return lines


def run(args: argparse.Namespace) -> int:
    from setup_env import render
    from setup_env.commands.doctor import (
        Unexaminable,
        counts,
        finding_json,
        headline,
        load_facts,
        plan_json,
        render_findings,
        safe_plan,
    )
    from setup_env.doctor import examine
    from setup_env.matrix import in_use

    style = render.Style(render.use_color(sys.stdout, args.color))
    err_style = render.Style(render.use_color(sys.stderr, args.color))
    try:
        facts, label = load_facts(args.root)
    except Unexaminable as exc:
        verdict = Verdict("unexaminable", f"CAN'T EXAMINE: {exc}")
        if not args.json:
            print(style(verdict.line, "bold"))
        return render.fail("check", "unexaminable", str(exc), verdict.exit_code, args.json)

    advice: Optional[CloudAdvice] = None
    plan_facts = facts  # on a fresh GPU instance: plus the GPUs its type has (cloudplan.apply)
    try:
        from setup_env.cloudplan import apply

        plan_facts, advice = apply(args, facts)
    except Exception as exc:  # cloud advice is extra; it never stops the check
        print(f"setup-env check: no cloud advice ({type(exc).__name__}: {exc})", file=sys.stderr)
    plan, plan_error = safe_plan(plan_facts)
    findings = examine(facts, plan, in_use())

    verify: Optional[VerifyReport] = None
    skipped: Optional[str] = None
    if facts.package("torch") is None:
        skipped = "torch is not installed"
    elif args.root:
        skipped = "not verified: a replayed machine"
    elif args.no_verify:
        skipped = "not verified: --no-verify"
    else:
        verify = _verify(facts, args.device, err_style)
    verdict = decide(facts, plan, findings, verify, skipped)

    if args.json:
        payload = {
            "machine": label,
            "verdict": {"state": verdict.state, "line": verdict.line, "command": verdict.command},
            "facts": facts,
            "plan": plan_json(plan),
            "plan_error": plan_error,
            "counts": counts(findings),
            "findings": [finding_json(f) for f in findings],
            "verify": verify,
            "verify_skipped": skipped,
            "cloud": advice,
        }
        print(render.dumps(render.envelope("check", payload)))
        return verdict.exit_code

    out = [style("setup-env check", "bold") + ("" if label == "live" else f" ({label})")]
    out += ["  " + line for line in _summary_lines(facts, plan, style)]
    if verify is not None:
        c = verify.counts
        out.append(
            f"  verify    {c.get('pass', 0)} passed, {c.get('warn', 0)} warnings, "
            f"{c.get('fail', 0)} failed on {verify.device or '?'} "
            f"({verify.duration_s:.1f}s)"
        )
    if advice is not None and advice.lines:
        out.append(f"  cloud     {advice.provider} {advice.instance_type or ''}".rstrip())
        out += [f"            {line}" for line in advice.lines]
    out.append("")
    out.append(f"{style('doctor', 'bold')}: {headline(findings)}")
    shown = [f for f in findings if f.severity != "info" or args.verbose]
    if shown:
        out.append(render_findings(shown, style, args.verbose))
    if verify is not None and verify.failed:
        out.append(style("failed checks:", "bold"))
        for check in verify.failed:
            out.append(
                f"  {check.id}: {check.message}" + (f"\n    fix: {check.fix}" if check.fix else "")
            )
    if plan_error and args.verbose:
        out.append(style(f"(no install plan: {plan_error})", "dim"))
    out.append("")
    color = {"ready": "green", "action-needed": "yellow", "broken": "red"}.get(verdict.state, "red")
    out.append(style(verdict.line, color, "bold"))
    if verdict.command:
        out.append(f"  $ {verdict.command}")
    print("\n".join(out))
    return verdict.exit_code
