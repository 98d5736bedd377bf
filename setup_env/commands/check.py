"""`setup-env check` (also `setup-env` alone): the main job.

Detect the machine, plan the PyTorch that belongs on it, run the doctor, verify the installed torch
(when there is one; ``--no-verify`` skips it, ``--root`` never runs it), add cloud advice on a
cloud VM, and end with ONE verdict line:

    READY: torch 2.13.0+cpu works on cpu
    ACTION NEEDED: install torch — run: pip install torch==2.13.0 --index-url ...
    BROKEN: torch 2.9.0+cu130 fails its checks (matmul[cuda:0]) — reinstall torch

With ``plan``'s machine flags (``--gpu H100 --driver 570.86.10``, ``--os/--arch/--glibc``,
``--cloud aws --instance-type p5.48xlarge``) it judges the installed environment for THAT machine
(a CI runner building an image for a GPU fleet): the torch wheel's real architectures read from
its binaries, its CUDA against the target's driver, its wheel tags against the target's OS, CPU
and glibc; verify's CPU checks still run here. ``--expect`` turns an image policy into checks.

This module only gathers; ``decide.verdict`` decides and ``output.render_check`` prints.
Exit codes: 0 ready; 1 action needed or broken; 3 the machine can't be examined; 2 usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Optional

from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.decide.cloudplan import CloudAdvice
    from setup_env.decide.smoke_model import CheckResult, VerifyReport
    from setup_env.decide.verdict import CheckReport, Expect
    from setup_env.facts import Facts
    from setup_env.output.render import Style
    from setup_env.probe.torch_arches import TorchArches

# Kept importable from here: tests and callers know the verdict by this name.
from setup_env.decide.verdict import Verdict, decide

__all__ = ["Verdict", "add_arguments", "decide", "run"]

FORMATS = ("text", "markdown")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog
    from setup_env.commands.plan import add_machine_arguments

    epilog(
        parser,
        "0 ready; 1 action needed or broken; 2 bad options or an output path that can't be\n"
        "written; 3 the machine (--root) can't be examined.",
        "  setup-env check\n"
        '  setup-env check --gpu H100 --driver 570.86.10 --expect "torch>=2.14" --junit out.xml',
    )
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
    parser.add_argument(
        "--all-devices", action="store_true", help="verify on every visible GPU (fleet nodes)"
    )
    parser.add_argument(
        "--expect",
        action="append",
        default=[],
        metavar="POLICY",
        help='an image policy, repeatable: "torch>=2.14", "torchvision==0.29.*", variant=cu130, '
        "cuda=13.0, python=3.12",
    )
    ci = parser.add_argument_group("CI pages")
    ci.add_argument(
        "--format", choices=FORMATS, default="text", help="text (default) or a Markdown page"
    )
    ci.add_argument(
        "--junit", metavar="FILE", help="also write JUnit XML (every stage and check a testcase)"
    )
    ci.add_argument(
        "--no-step-summary",
        action="store_true",
        help="don't append the Markdown summary to $GITHUB_STEP_SUMMARY",
    )
    add_machine_arguments(parser)


# --- gathering ---------------------------------------------------------------------------------


def _progress(live: Any, style: Style) -> Any:
    from setup_env.commands.verify import progress_line

    def report(result: CheckResult) -> None:
        if result.status == "skip" and result.message == "torch did not import":
            return
        live.show(progress_line(result, style))

    return report


def _verify(
    facts: Facts, device: Optional[str], style: Style, all_devices: bool = False
) -> VerifyReport:
    from setup_env.act.smoke import VerifyOptions, run_verify
    from setup_env.output import render

    live = render.LiveLine(sys.stderr)
    live.show("verifying the installed torch...")
    try:
        options = VerifyOptions(device=device, facts=facts, all_devices=all_devices)
        return run_verify(options, progress=_progress(live, style))
    finally:
        live.done()


def _is_target(args: argparse.Namespace) -> bool:
    from setup_env.commands.plan import SPEC_FLAGS

    return bool(
        args.os
        or any(getattr(args, f) for f in SPEC_FLAGS)
        or getattr(args, "cloud", None)
        or getattr(args, "instance_type", None)
    )


def _node() -> dict[str, Any]:
    """Who ran this check (fleet reports group documents by it)."""
    import platform

    node: dict[str, Any] = {"hostname": platform.node() or None}
    for var in ("SLURM_JOB_ID", "SLURM_NODEID", "SLURM_PROCID", "JOB_COMPLETION_INDEX"):
        if os.environ.get(var):
            node[var.lower()] = os.environ[var][:64]
    return node


def _target_facts(local: Facts, target: Facts) -> Facts:
    """The installed environment (this interpreter, its packages) placed on the target machine:
    the target's OS, GPUs, driver and cloud; this machine's Python and packages. The glibc is the
    target's when described (--glibc), else the environment's own (an image carries its glibc)."""
    from setup_env._record import replace

    os_info = target.os
    if not os_info.glibc and os_info.family == local.os.family and local.os.glibc:
        os_info = replace(os_info, glibc=local.os.glibc, libc=local.os.libc)
    return replace(
        target,
        os=os_info,
        python=local.python,
        packages=local.packages,
        toolkits=local.toolkits,
    )


def gather(args: argparse.Namespace, expects: tuple[Expect, ...], err_style: Style) -> CheckReport:
    """Everything check learns, decided (raises SourceError / BadMachine)."""
    from setup_env.commands._source import load_facts
    from setup_env.decide import verdict as V
    from setup_env.decide.doctor import examine
    from setup_env.decide.summary import safe_plan
    from setup_env.knowledge.matrix import in_use

    advice: Optional[CloudAdvice] = None
    target_label: Optional[str] = None
    arches: Optional[TorchArches] = None
    extra: tuple[Any, ...] = ()
    replaces_arch = False
    if _is_target(args):
        from setup_env.commands.plan import described_machine
        from setup_env.probe import torch_arches

        if args.root:
            from setup_env.commands.plan import BadMachine

            raise BadMachine("--root can't be combined with a target machine", ExitCode.USAGE)
        local, _ = load_facts(None)
        described, target_label, advice = described_machine(args)
        facts = _target_facts(local, described)
        plan_facts = facts
        label = f"target: {target_label}"
        arches = torch_arches.read(facts.package("torch"))
        if arches is not None:
            arch_found, replaces_arch = V.target_arch_findings(facts, arches)
            platform_found = V.target_platform_findings(facts, arches.wheel_tags, args.arch)
            extra = (*arch_found, *platform_found)
        extra = (*extra, *V.target_python_findings(facts, args.python))
    else:
        facts, label = load_facts(args.root)
        plan_facts = facts  # on a fresh GPU instance: plus the GPUs its type has (cloudplan.apply)
        try:
            from setup_env.decide.cloudplan import apply

            plan_facts, advice = apply(args, facts)
        except Exception as exc:  # cloud advice is extra; it never stops the check
            print(
                f"setup-env check: no cloud advice ({type(exc).__name__}: {exc})", file=sys.stderr
            )
    plan, plan_error = safe_plan(plan_facts)
    if plan is not None and advice is not None:
        from setup_env.decide.cloudplan import fit_plan

        plan = fit_plan(plan, advice)  # a GRID instance's driver step is the GRID driver
    results = V.evaluate_expectations(facts, expects)
    findings = V.merge_target_findings(
        examine(facts, plan, in_use()), (*extra, *V.expectation_findings(results)), replaces_arch
    )

    verify: Optional[VerifyReport] = None
    skipped: Optional[str] = None
    device = args.device
    if target_label is not None and device is None:
        device = "cpu"  # the target's GPUs are elsewhere: the CPU parts run here
    if facts.package("torch") is None:
        skipped = "not verified: nothing installed to verify"
    elif args.root:
        skipped = "not verified: a replayed machine"
    elif args.no_verify:
        skipped = "not verified: --no-verify"
    else:
        verify = _verify(
            facts if target_label is None else _local_only(facts),
            device,
            err_style,
            bool(args.all_devices),
        )
    verdict = V.decide(facts, plan, findings, verify, skipped, target=target_label)
    return V.CheckReport(
        label=label,
        facts=facts,
        verdict=verdict,
        plan=plan,
        plan_error=plan_error,
        findings=findings,
        verify=verify,
        verify_skipped=skipped,
        advice=advice,
        target=target_label,
        arches=arches,
        expectations=results,
        node=_node() if not args.root else {"hostname": None, "replay": label},
    )


def _local_only(facts: Facts) -> Facts:
    """Facts for verify's CPU run here: no target GPUs (verify would look for them)."""
    from setup_env._record import replace

    return replace(facts, nvidia=None, rocm=None, xpu=None, apple=None)


# --- the command ------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> int:
    from setup_env import bounded
    from setup_env.commands._source import SourceError
    from setup_env.commands.plan import BadMachine
    from setup_env.decide.verdict import ExpectError, parse_expect
    from setup_env.output import render, render_check

    style = render.Style(render.use_color(sys.stdout, args.color))
    err_style = render.Style(render.use_color(sys.stderr, args.color))
    try:
        expects = tuple(parse_expect(e) for e in args.expect)
    except ExpectError as exc:
        return render.fail("check", "bad-input", str(exc), ExitCode.USAGE, args.json)
    # Output paths are asked about before any check runs: a --junit it can't write would
    # otherwise throw away minutes of checks. A $GITHUB_STEP_SUMMARY it can't append to is a
    # warning (the runner's page, not the result the job acts on), said now and not tried again.
    if args.junit:
        try:
            bounded.check_writable(args.junit)
        except bounded.WriteFailed as exc:
            message = f"cannot write {args.junit}: {exc.detail}"
            return render.fail("check", "bad-input", message, ExitCode.USAGE, args.json)
    summary_file = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary_file and not args.no_step_summary:
        try:
            bounded.check_writable(summary_file, append=True)
        except bounded.WriteFailed as exc:
            print(f"setup-env check: cannot write $GITHUB_STEP_SUMMARY: {exc}", file=sys.stderr)
            summary_file = None
    try:
        report = gather(args, expects, err_style)
    except BadMachine as exc:
        code = "unexaminable" if exc.code == ExitCode.UNEXAMINABLE else "bad-input"
        return render.fail("check", code, str(exc), exc.code, args.json)
    except SourceError as exc:
        verdict = Verdict("unexaminable", f"CAN'T EXAMINE: {exc}")
        if not args.json:
            print(style(verdict.line, "bold"))
        return render.fail("check", "unexaminable", str(exc), verdict.exit_code, args.json)

    if args.junit:
        try:
            bounded.write_file(
                args.junit, render_check.junit(report, hostname=report.node.get("hostname") or "")
            )
        except OSError as exc:
            message = f"cannot write {args.junit}: {exc.strerror}"
            return render.fail("check", "bad-input", message, ExitCode.USAGE, args.json)
    if summary_file and not args.no_step_summary:
        # GitHub shows this file on the run's page; appending is how steps share it.
        try:
            bounded.append_file(summary_file, render_check.markdown(report) + "\n")
        except OSError as exc:
            print(f"setup-env check: cannot write $GITHUB_STEP_SUMMARY: {exc}", file=sys.stderr)

    if args.json:
        print(render_check.json_doc(report))
    elif args.format == "markdown":
        print(render_check.markdown(report))
    else:
        print(render_check.text(report, style, args.verbose))
    return report.exit_code
