"""`setup-env install`: run the plan, then verify what was installed.

Detects the machine as the target interpreter sees it (``--python PATH`` / ``--venv DIR`` or this
one), plans (the same options as ``setup-env plan``), and runs the installer's command as an argv
list (never through a shell): ``PY -m pip install ...`` or ``uv pip install --python PY ...``, its
progress streamed to stderr. A working torch is not replaced without ``--force``; the same one
is not reinstalled without ``--reinstall``. When the index cannot be reached it says so and
prints the offline route (``--find-links DIR`` with wheels brought over by hand).

Exit codes: 0 installed (or already there) and verified; 1 nothing fits, the installer failed,
verify failed, the user declined, or a working torch would have been replaced; 2 bad options,
or no terminal to confirm on without ``--yes``; 3 the environment cannot take it: no such
interpreter, no installer, the index unreachable, not enough disk space.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, Optional

from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.act.installer import InstallArgs, OfflineAdvice
    from setup_env.decide.model import Plan
    from setup_env.facts import Facts

EPILOG = """\
offline: on a machine that reaches the index, `pip download` the wheels (the message printed when
the index is unreachable gives the exact command), copy the folder over, then
`setup-env install --find-links DIR` (pip gets --no-index --find-links DIR).

exit codes: 0 installed (or already installed) and verified; 1 nothing fits, the installer or
verify failed, declined, or a working torch would be replaced (use --force); 2 bad options or no
terminal to confirm on (use --yes); 3 no such interpreter, no pip/uv, index unreachable, or not
enough disk space.
3 also: setup-env itself failed (internal error, please report it); 130 interrupted.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.epilog = EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    where = parser.add_argument_group("where to install (default: this interpreter's environment)")
    where.add_argument("--python", metavar="PATH", help="the interpreter to install into")
    where.add_argument("--venv", metavar="DIR", help="the virtual environment to install into")
    plan = parser.add_argument_group("what to install (as for `setup-env plan`)")
    plan.add_argument("--torch", metavar="VERSION", help="pin a torch release, e.g. 2.13 or 2.13.0")
    plan.add_argument("--variant", metavar="V", help="cpu, cu130, rocm7.2, xpu, ...")
    plan.add_argument(
        "--with", dest="with_packages", metavar="PKGS", help="also install: torchvision,torchaudio"
    )
    plan.add_argument(
        "--channel",
        choices=("stable", "nightly"),
        default="stable",
        help="stable releases (default) or nightly builds",
    )
    plan.add_argument(
        "--installer",
        choices=("pip", "uv"),
        help="pip (default when the target has pip) or uv (default when it has not)",
    )
    plan.add_argument("--index-url", metavar="URL", help="an internal mirror of the PyTorch index")
    run = parser.add_argument_group("how")
    run.add_argument(
        "--find-links",
        metavar="DIR",
        action="append",
        help="offline: install only wheels from DIR (repeatable); the index is not asked",
    )
    run.add_argument("--dry-run", action="store_true", help="print the command, install nothing")
    run.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    run.add_argument("--force", action="store_true", help="replace an installed torch that works")
    run.add_argument(
        "--reinstall",
        action="store_true",
        help="reinstall even when the planned versions are installed (implies --force)",
    )
    run.add_argument("--no-verify", action="store_true", help="do not run verify afterwards")
    run.add_argument(
        "--skip-index-check",
        action="store_true",
        help="do not probe the index before running the installer",
    )
    run.add_argument(
        "--no-space-check", action="store_true", help="do not check free disk space first"
    )
    run.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="S",
        help="stop the installer after S seconds (default 3 hours)",
    )


class _Out:
    """Narrative to stdout (or to stderr under --json), errors to stderr, one JSON document."""

    def __init__(self, args: argparse.Namespace) -> None:
        from setup_env.output import render

        self.json = bool(args.json)
        stream = sys.stderr if self.json else sys.stdout
        self.stream = stream
        self.style = render.Style(render.use_color(stream, args.color))
        self.err_style = render.Style(render.use_color(sys.stderr, args.color))
        self.doc: dict[str, Any] = {"action": None}

    def say(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    def error(self, text: str) -> None:
        head = self.err_style.severity("error", "setup-env install")
        print(f"{head}: {text}", file=sys.stderr, flush=True)

    def finish(self, code: int, action: str, message: str = "") -> int:
        from setup_env.output import render

        self.doc["action"] = action
        self.doc["message"] = message
        self.doc["exit_code"] = int(code)
        if self.json:
            print(render.dumps(render.envelope("install", self.doc)))
        return int(code)


def _plan_options(args: argparse.Namespace, installer: str) -> Any:
    from setup_env.act.installer import InstallError, check_url
    from setup_env.decide.model import PlanError, PlanOptions
    from setup_env.decide.plan import check_options

    options = PlanOptions(
        torch=args.torch.strip() if args.torch else None,
        variant=args.variant.strip().lower() if args.variant else None,
        with_packages=tuple(n.strip() for n in (args.with_packages or "").split(",") if n.strip()),
        channel=args.channel,
        installer=installer,  # type: ignore[arg-type]
        index_url=check_url(args.index_url) if args.index_url else None,
    )
    try:
        check_options(options)  # the planner's own rules: one place decides what is valid
    except PlanError as exc:
        raise InstallError(str(exc)) from None
    return options


def _validate_early(args: argparse.Namespace) -> None:
    """Every option checked before anything is detected or run."""
    from setup_env.act.installer import InstallError

    _plan_options(args, "pip")
    if args.timeout is not None and not 0 < args.timeout <= 7 * 86400:
        raise InstallError("--timeout must be between 0 and 604800 seconds")


def _user_flags(args: argparse.Namespace) -> list[str]:
    """The planner options the user gave, to repeat in a suggested command."""
    out: list[str] = []
    if args.venv:
        out += ["--venv", args.venv]
    elif args.python:
        out += ["--python", args.python]
    for flag, value in (
        ("--torch", args.torch),
        ("--variant", args.variant),
        ("--with", args.with_packages),
        ("--installer", args.installer),
    ):
        if value:
            out += [flag, value]
    if args.channel != "stable":
        out += ["--channel", args.channel]
    for flag, on in (("--force", args.force), ("--reinstall", args.reinstall)):
        if on:
            out.append(flag)
    return out


def run(args: argparse.Namespace) -> int:
    from setup_env.act import installer as inst
    from setup_env.act.installer import InstallError

    out = _Out(args)
    try:
        _validate_early(args)
        find_links = [inst.check_dir(d) for d in (args.find_links or [])]
        python = inst.resolve_python(args.python, args.venv)
    except InstallError as exc:  # nothing was done yet: the error envelope, as every command
        from setup_env.output import render

        kind = "usage" if exc.code == ExitCode.USAGE else "unexaminable"
        return render.fail("install", kind, str(exc), exc.code, bool(args.json))
    try:
        return _run(args, out, python, find_links)
    except InstallError as exc:
        out.error(str(exc))
        return out.finish(exc.code, "stopped", str(exc))


def _run(args: argparse.Namespace, out: _Out, python: str, find_links: list[str]) -> int:
    from setup_env.act import installer as inst
    from setup_env.act.installer import InstallError
    from setup_env.decide.plan import make_plan
    from setup_env.probe.detect import detect
    from setup_env.probe.host import LiveHost

    target = inst.choose_installer(python, args.installer)
    if inst.is_this_interpreter(python):
        host: LiveHost = LiveHost()
    else:
        host = inst.TargetHost(inst.interpreter_record(python))
    facts = detect(host)
    record = host.interpreter()
    out.doc.update(python=python, installer=target.installer)
    out.say(
        f"target: {python} (Python {facts.python.version or '?'}), installer: {target.installer}"
    )

    try:
        plan = make_plan(facts, _plan_options(args, target.installer))
    except NotImplementedError:
        raise InstallError("the planner is not available in this build of setup-env", 3) from None
    except (ValueError, LookupError) as exc:
        raise InstallError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    out.doc["plan"] = {
        "status": plan.status,
        "torch_version": plan.torch_version,
        "variant": plan.variant,
        "index_url": plan.index_url,
        "requirements": list(plan.requirements),
        "command": plan.command,
    }
    if plan.status == "none" or not plan.torch_version:
        return _no_plan(out, plan)
    label = inst.planned_label(plan)
    out.say(f"plan: torch {label}" + (f" from {plan.index_url}" if plan.index_url else ""))
    if plan.status == "fallback":
        for reason in plan.reasons[:3]:
            out.say(f"  {reason}")
    for warning in plan.warnings:
        out.say(out.style.severity("warning", "warning") + f": {warning}")

    try:
        iargs = inst.install_args(plan)
    except InstallError as exc:
        raise InstallError(str(exc), int(ExitCode.CHECK_FAILED)) from None
    installed = facts.package("torch")
    out.doc["installed_before"] = installed.version if installed else None
    met = inst.requirements_met(iargs, plan, facts)
    reinstall = bool(args.reinstall)
    if met and not reinstall:
        out.say(
            f"torch {installed.version if installed else label} is already installed there: "
            "nothing to install"
        )
        out.doc["argv"] = None
        if args.dry_run:
            return out.finish(ExitCode.OK, "already-installed", "nothing to install")
        return _verify(args, out, python, host, "already-installed")
    if installed is not None and not met:
        change = f"installed torch {installed.version} -> planned torch {label}"
        out.doc["change"] = change
        out.say(f"change: {change}")
        if not (args.force or reinstall):
            works, why = inst.torch_imports(python)
            if works:
                msg = (
                    f"torch {installed.version} is installed there and works; not replacing it "
                    f"with {label}. Re-run with --force to replace it, or install into a new "
                    "environment (--venv DIR)"
                )
                out.error(msg)
                return out.finish(ExitCode.CHECK_FAILED, "refused", msg)
            out.say(f"the installed torch does not import ({why}): replacing it")
        reinstall = reinstall or inst.same_version_other_variant(plan, facts)

    argv = inst.build_argv(iargs, target, find_links, reinstall=reinstall)
    out.doc["argv"] = argv
    out.doc["command"] = inst.display(argv)
    out.say(("would run: " if args.dry_run else "command: ") + inst.display(argv))

    if not args.no_space_check:
        _check_space(host, record, python, plan, label)
    if not find_links and not args.skip_index_check:
        url, explicit = inst.effective_index(iargs, target.installer, os.environ)
        if explicit:
            unreachable = inst.probe_index(url)
            if unreachable is not None:
                return _unreachable(out, args, plan, facts, iargs, url, unreachable)
    if args.dry_run:
        out.say("dry run: nothing was installed")
        return out.finish(ExitCode.OK, "dry-run", "")

    if not args.yes:
        answer = _confirm(f"Install torch {label} into {python}?")
        if answer is None:
            msg = "no terminal to ask for confirmation on: re-run with --yes to install unattended"
            out.error(msg)
            return out.finish(ExitCode.USAGE, "not-confirmed", msg)
        if not answer:
            out.say("nothing was installed")
            return out.finish(ExitCode.CHECK_FAILED, "declined", "declined")

    def stream(chunk: bytes) -> None:
        buf = getattr(sys.stderr, "buffer", None)
        if buf is not None:
            sys.stderr.flush()
            buf.write(chunk)
            buf.flush()
        else:
            sys.stderr.write(chunk.decode("utf-8", "replace"))
            sys.stderr.flush()

    timeout = args.timeout if args.timeout is not None else inst.INSTALL_TIMEOUT
    result = inst.run_installer(argv, stream, timeout=timeout)
    out.doc["installer_exit"] = result.returncode
    out.doc["installer_s"] = round(result.duration_s, 2)
    if result.error is not None:
        raise InstallError(f"could not start {argv[0]}: {result.error}", 3)
    if result.timed_out:
        msg = f"the installer did not finish within {timeout:g} s and was stopped"
        out.error(msg)
        return out.finish(ExitCode.CHECK_FAILED, "failed", msg)
    if result.returncode != 0:
        return _failed(out, args, plan, facts, iargs, result, find_links)
    out.say(f"installed torch {label} in {result.duration_s:.0f}s")
    return _verify(args, out, python, host, "installed", plan)


def _confirm(question: str) -> Optional[bool]:
    """True/False from the terminal; None when there is no terminal to ask on."""
    from setup_env import bounded

    if not bounded.stdin_is_terminal():
        return None
    try:
        print(f"{question} [y/N] ", end="", file=sys.stderr, flush=True)
    except OSError:
        return None
    reply = bounded.read_terminal_line()
    if reply is None:
        return None
    return reply.strip().lower() in ("y", "yes")


def _no_plan(out: _Out, plan: Plan) -> int:
    msg = "no PyTorch build fits this environment"
    out.error(msg + (f": {plan.reasons[0]}" if plan.reasons else ""))
    for reason in plan.reasons[1:]:
        out.say(f"  {reason}")
    for fix in sorted(plan.fixes, key=lambda f: f.rank):
        out.say(f"  {fix.rank}. {fix.summary}" + (f": {fix.command}" if fix.command else ""))
    return out.finish(ExitCode.CHECK_FAILED, "no-plan", msg)


def _check_space(host: Any, record: Any, python: str, plan: Plan, label: str) -> None:
    from setup_env.act import installer as inst
    from setup_env.act.installer import InstallError
    from setup_env.output.render import human_bytes

    prefix = str(record.get("prefix") or os.path.dirname(os.path.dirname(python)))
    free = host.disk_free(prefix)
    need = inst.space_needed(plan.variant)
    if free is not None and free < need:
        raise InstallError(
            f"not enough disk space: torch {label} needs about {human_bytes(need)} in {prefix}, "
            f"{human_bytes(free)} free there: free some space or use --venv DIR on a bigger disk "
            "(--no-space-check to try anyway)",
            3,
        )


def _advice(
    out: _Out,
    args: argparse.Namespace,
    plan: Plan,
    facts: Facts,
    iargs: InstallArgs,
) -> OfflineAdvice:
    from setup_env.act import installer as inst

    then = ["setup-env", "install", *_user_flags(args), "--find-links", "torch-wheels"]
    advice = inst.offline_advice(plan, facts, iargs, then)
    out.doc["offline"] = {
        "patterns": list(advice.patterns),
        "download": list(advice.download),
        "then": advice.then,
    }
    out.say("offline route: on a machine that can reach the index, download the wheels:")
    out.say(f"  {inst.display(advice.download)}")
    out.say("copy the torch-wheels folder here; it must hold " + ", ".join(advice.patterns))
    for note in advice.notes:
        out.say(f"note: {note}")
    out.say("then run:")
    out.say(f"  {advice.then}")
    return advice


def _unreachable(
    out: _Out,
    args: argparse.Namespace,
    plan: Plan,
    facts: Facts,
    iargs: InstallArgs,
    url: str,
    why: str,
) -> int:
    msg = f"the package index {url} cannot be reached ({why})"
    out.error(msg)
    _advice(out, args, plan, facts, iargs)
    return out.finish(ExitCode.UNEXAMINABLE, "index-unreachable", msg)


def _failed(
    out: _Out,
    args: argparse.Namespace,
    plan: Plan,
    facts: Facts,
    iargs: InstallArgs,
    result: Any,
    find_links: list[str],
) -> int:
    from setup_env.act import installer as inst

    failure = inst.classify_failure(result.output_tail)
    out.doc["failure"] = {"kind": failure.kind, "detail": failure.detail}
    if failure.kind == "index-unreachable":
        msg = f"the installer could not reach the package index ({failure.detail})"
        out.error(msg)
        _advice(out, args, plan, facts, iargs)
        return out.finish(ExitCode.UNEXAMINABLE, "index-unreachable", msg)
    if failure.kind == "no-space":
        msg = f"the disk filled up while installing: {failure.detail}"
        out.error(msg)
        return out.finish(ExitCode.UNEXAMINABLE, "no-space", msg)
    if failure.kind == "no-matching-wheel" and find_links:
        msg = f"the wheel folder has no wheel that fits: {failure.detail}"
        out.error(msg)
        _advice(out, args, plan, facts, iargs)
        return out.finish(ExitCode.CHECK_FAILED, "failed", msg)
    msg = f"the installer failed (exit {result.returncode}): {failure.detail}"
    out.error(msg)
    return out.finish(ExitCode.CHECK_FAILED, "failed", msg)


def _verify(
    args: argparse.Namespace,
    out: _Out,
    python: str,
    host: Any,
    action: str,
    plan: Optional[Plan] = None,
) -> int:
    from setup_env.act import installer as inst
    from setup_env.act.smoke import VerifyOptions, run_verify
    from setup_env.commands import verify as verify_cmd
    from setup_env.output import render
    from setup_env.probe.detect import detect

    facts = detect(host)  # again: the packages changed
    now = facts.package("torch")
    out.doc["installed_after"] = now.version if now else None
    if plan is not None and now is not None and not inst.torch_matches(plan, facts):
        out.say(
            out.style.severity("warning", "warning")
            + f": torch {now.version} is installed there, not the planned "
            f"{inst.planned_label(plan)}"
        )
    if args.no_verify:
        return out.finish(ExitCode.OK, action, "")
    out.say("verifying ...")
    err_style = render.Style(render.use_color(sys.stderr, args.color))

    def progress(res: Any) -> None:
        if res.status == "skip" and res.message == "torch did not import":
            return
        render.log(verify_cmd.progress_line(res, err_style))

    report = run_verify(VerifyOptions(python=python, facts=facts), progress)
    out.doc["verify"] = report
    out.say(verify_cmd.summary(report, out.style, args.verbose))
    return out.finish(verify_cmd.exit_code(report), action, "")
