"""`setup-env verify`: prove the installed PyTorch works on this machine's devices.

One worker process imports torch and runs the checks (``setup_env.act.smoke``); this module only
parses options, shows progress on stderr, and prints the summary, ``--json`` or ``--junit``.
Exit 0: every check passed (warnings allowed); 1: a check failed; 2: bad options; 3: torch is
not installed in that interpreter (or it could not be run at all).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from setup_env._record import replace
from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.decide.smoke_model import CheckResult, VerifyReport
    from setup_env.output.render import Style

_DEVICE = re.compile(r"^(auto|cpu|cuda|xpu|mps)(:\d{1,3})?$")
# What torchrun's rendezvous options may look like: hosts, ports, ids. Passed as argv, never to a
# shell, and still validated: they come from CI configuration a user may not control.
_HOSTPORT = re.compile(r"^[A-Za-z0-9._\-]{1,253}(:\d{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:\d{1,5})?$")
_NNODES = re.compile(r"^\d{1,5}(:\d{1,5})?$")
_RDZV_ID = re.compile(r"^[A-Za-z0-9._\-]{1,128}$")
RDZV_BACKENDS = ("c10d", "etcd", "etcd-v2", "static")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog
    from setup_env.decide.smoke_model import CHECK_NAMES

    epilog(
        parser,
        "0 every check passed (warnings allowed); 1 a check failed; 2 bad options;\n"
        "3 torch is not installed in that interpreter, or it could not be run at all.",
        "  setup-env verify --device cuda --junit verify.xml\n"
        "  setup-env verify --python .venv/bin/python --only import,matmul",
    )

    parser.add_argument(
        "--device",
        metavar="DEV",
        help="device to verify: auto (default: the best of cuda, xpu, mps, cpu), cpu, cuda, "
        "cuda:1, xpu, mps",
    )
    parser.add_argument(
        "--all-devices", action="store_true", help="run the device checks on every visible GPU"
    )
    parser.add_argument("--compile", action="store_true", help="also check torch.compile")
    parser.add_argument(
        "--distributed",
        action="store_true",
        help="also check an all-reduce through torchrun (NCCL over every local GPU, or gloo "
        "over 2 CPU processes)",
    )
    parser.add_argument(
        "--python", metavar="PATH", help="verify the torch of another interpreter (a venv's python)"
    )
    parser.add_argument(
        "--timeout-scale",
        type=float,
        default=None,
        metavar="X",
        help="multiply every check's deadline (default 1; env SETUP_ENV_VERIFY_TIMEOUT_SCALE)",
    )
    parser.add_argument(
        "--only", metavar="NAMES", help="comma-separated checks to run: " + ", ".join(CHECK_NAMES)
    )
    parser.add_argument("--skip", metavar="NAMES", help="comma-separated checks to leave out")
    parser.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report to FILE")
    dist = parser.add_argument_group(
        "multi-node distributed check (passed to torchrun; implies --distributed)"
    )
    dist.add_argument("--nproc-per-node", type=int, metavar="N", help="processes on this node")
    dist.add_argument("--nnodes", metavar="N[:M]", help="number of nodes (or a min:max range)")
    dist.add_argument("--node-rank", type=int, metavar="R", help="this node's rank")
    dist.add_argument("--rdzv-endpoint", metavar="HOST[:PORT]", help="rendezvous endpoint")
    dist.add_argument("--rdzv-backend", choices=RDZV_BACKENDS, help="rendezvous backend (c10d)")
    dist.add_argument("--rdzv-id", metavar="ID", help="rendezvous (job) id")
    dist.add_argument("--master-addr", metavar="HOST", help="static rendezvous: master address")
    dist.add_argument("--master-port", type=int, metavar="PORT", help="static rendezvous: port")


class UsageError(ValueError):
    pass


def _names(text: str | None, flag: str) -> tuple[str, ...]:
    from setup_env.decide.smoke_model import CHECK_NAMES

    if not text:
        return ()
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in CHECK_NAMES]
    if unknown:
        raise UsageError(
            f"{flag}: unknown check {', '.join(unknown)} (known: {', '.join(CHECK_NAMES)})"
        )
    return names


def torchrun_args(args: argparse.Namespace) -> tuple[str, ...]:
    """Validated rendezvous options for torchrun (empty: a single-node --standalone run)."""
    out: list[str] = []
    if args.nnodes is not None:
        if not _NNODES.match(args.nnodes):
            raise UsageError(f"--nnodes: expected N or MIN:MAX, got {args.nnodes!r}")
        out += ["--nnodes", args.nnodes]
    if args.node_rank is not None:
        if args.node_rank < 0:
            raise UsageError("--node-rank must be 0 or more")
        out += ["--node-rank", str(args.node_rank)]
    if args.rdzv_endpoint is not None:
        if not _HOSTPORT.match(args.rdzv_endpoint):
            raise UsageError(f"--rdzv-endpoint: expected HOST[:PORT], got {args.rdzv_endpoint!r}")
        # torchrun's default backend is "static"; the multi-node recipe in its docs uses c10d.
        out += ["--rdzv-backend", args.rdzv_backend or "c10d"]
        out += ["--rdzv-endpoint", args.rdzv_endpoint]
    elif args.rdzv_backend is not None:
        out += ["--rdzv-backend", args.rdzv_backend]
    if args.rdzv_id is not None:
        if not _RDZV_ID.match(args.rdzv_id):
            raise UsageError(f"--rdzv-id: letters, digits, '.', '_', '-' only: {args.rdzv_id!r}")
        out += ["--rdzv-id", args.rdzv_id]
    if args.master_addr is not None:
        if not _HOSTPORT.match(args.master_addr) or ":" in args.master_addr.strip("[]"):
            raise UsageError(
                f"--master-addr: expected a host name or address: {args.master_addr!r}"
            )
        out += ["--master-addr", args.master_addr]
    if args.master_port is not None:
        if not 0 < args.master_port < 65536:
            raise UsageError("--master-port must be 1-65535")
        out += ["--master-port", str(args.master_port)]
    return tuple(out)


def options_from_args(args: argparse.Namespace) -> Any:
    """argparse -> VerifyOptions (raises UsageError with a one-line message)."""
    from setup_env.decide.smoke_model import VerifyOptions

    device = getattr(args, "device", None)
    if device is not None and not _DEVICE.match(device.strip()):
        raise UsageError(f"--device: expected auto, cpu, cuda[:N], xpu[:N] or mps, got {device!r}")
    scale = args.timeout_scale
    if scale is None:
        env = os.environ.get("SETUP_ENV_VERIFY_TIMEOUT_SCALE")
        try:
            scale = float(env) if env else 1.0
        except ValueError:
            raise UsageError(f"SETUP_ENV_VERIFY_TIMEOUT_SCALE: not a number: {env!r}") from None
    if not 0 < scale <= 1000:
        raise UsageError("--timeout-scale must be between 0 and 1000")
    python = args.python
    if python is not None:
        python = os.path.abspath(os.path.expanduser(python))
        if not os.path.isfile(python) or not os.access(python, os.X_OK):
            raise UsageError(f"--python: no executable interpreter at {python}")
    if args.nproc_per_node is not None and not 0 < args.nproc_per_node <= 1024:
        raise UsageError("--nproc-per-node must be 1-1024")
    rdzv = torchrun_args(args)
    return VerifyOptions(
        device=device.strip() if device else None,
        all_devices=bool(args.all_devices),
        compile=bool(args.compile),
        distributed=bool(args.distributed or rdzv or args.nproc_per_node),
        python=python,
        timeout_scale=scale,
        only=_names(args.only, "--only"),
        skip=_names(args.skip, "--skip"),
        nproc_per_node=args.nproc_per_node,
        torchrun_args=rdzv,
    )


# --- rendering (the CLI layer is the only place that prints) -------------------------------------

_WORD = {"pass": "PASS", "warn": "WARN", "fail": "FAIL", "skip": "skip"}
_SEVERITY = {"pass": "ok", "warn": "warning", "fail": "error", "skip": ""}


def _status(style: Style, status: str) -> str:
    word = _WORD.get(status, status)
    sev = _SEVERITY.get(status, "")
    return style.severity(sev, word) if sev else style(word, "dim")


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.0f}ms" if seconds < 1 else f"{seconds:.1f}s"


def progress_line(res: CheckResult, style: Style) -> str:
    """One line per finished check, for the live display on stderr."""
    label = res.name + (f" [{res.device}]" if res.device else "")
    msg = res.message.splitlines()[0] if res.message else ""
    took = style(_duration(res.duration_s), "dim")
    return f"  {_status(style, res.status)}  {label:<24} {msg}  {took}"


def _short(text: str, width: int) -> str:
    text = text.splitlines()[0] if text else ""
    return text if len(text) <= width else text[: width - 1] + "…"


def _torch_missing(res: CheckResult) -> bool:
    """The import check's failure because torch is not installed at all (one fact, said once)."""
    evidence = res.evidence or {}
    return (
        res.name == "import"
        and res.status == "fail"
        and evidence.get("type") == "ModuleNotFoundError"
        and res.message.startswith("torch is not installed")
    )


def summary(report: VerifyReport, style: Style, verbose: int = 0) -> str:
    from setup_env.output.render import table

    lines: list[str] = []
    head = f"setup-env verify: torch {report.torch_version or '(none)'}"
    if report.devices:
        head += f" on {', '.join(report.devices)}"
    lines.append(style(head, "bold") + style(f"  ({report.python})", "dim"))
    if report.torch_missing:
        # One fact, one line: no table row, no failure line repeating it.
        lines.append(
            style.severity("error", "torch is not installed") + f" for {report.python}:"
            " run `setup-env plan` for the install command that fits this machine"
        )
        return "\n".join(lines)
    not_run = [
        c for c in report.checks if c.status == "skip" and c.message == "torch did not import"
    ]
    shown = [c for c in report.checks if c not in not_run]
    rows = [
        (
            c.name,
            c.device or "",
            _WORD.get(c.status, c.status),
            _duration(c.duration_s),
            _short(c.message, 90 if verbose else 70),
        )
        for c in shown
    ]
    lines.append(table(("check", "device", "status", "time", "result"), rows))
    if not_run:
        lines.append(style(f"({len(not_run)} checks not run: torch did not import)", "dim"))
    if verbose:
        import json

        for c in shown:
            if c.evidence:
                lines.append(f"  {c.id}: " + json.dumps(dict(c.evidence), default=str))
    problems = [c for c in report.checks if c.status in ("fail", "warn")]
    if problems:
        lines.append("")
    for c in problems:
        lines.append(f"{_status(style, c.status)} {c.id}: {c.message}")
        if c.fix:
            lines.append(f"     fix: {c.fix}")
    n = report.counts
    total = len(report.checks)
    lines.append("")
    if report.torch_missing:
        lines.append(
            style.severity("error", "torch is not installed") + f" for {report.python}:"
            " run `setup-env plan` for the install command that fits this machine"
        )
    elif report.error:
        lines.append(style.severity("error", "could not verify") + f": {report.error}")
    elif report.ok:
        extra = []
        if n.get("warn"):
            extra.append(f"{n['warn']} warning{'s' if n['warn'] != 1 else ''}")
        if n.get("skip"):
            extra.append(f"{n['skip']} skipped")
        lines.append(
            style.severity("ok", "verified") + f": {n.get('pass', 0)} of {total} checks "
            f"passed"
            + (f" ({', '.join(extra)})" if extra else "")
            + f" in {report.duration_s:.1f}s"
        )
    else:
        lines.append(
            style.severity("error", "FAILED") + f": {n.get('fail', 0)} of {total} checks "
            f"failed in {report.duration_s:.1f}s"
        )
    return "\n".join(lines)


def exit_code(report: VerifyReport) -> ExitCode:
    if report.torch_missing or report.error:
        return ExitCode.UNEXAMINABLE
    return ExitCode.OK if report.ok else ExitCode.CHECK_FAILED


def run(args: argparse.Namespace) -> int:
    from setup_env import bounded
    from setup_env.act.smoke import run_verify
    from setup_env.output import render
    from setup_env.output.junit import to_junit

    try:
        options = options_from_args(args)
    except UsageError as exc:
        return render.fail("verify", "bad-input", str(exc), ExitCode.USAGE, args.json)
    if args.junit:
        # Checked before any check runs: finding out after minutes of checks threw them away.
        try:
            bounded.check_writable(args.junit)
        except bounded.WriteFailed as exc:
            message = f"cannot write {args.junit}: {exc.detail}"
            return render.fail("verify", "bad-input", message, ExitCode.USAGE, args.json)
    err_style = render.Style(render.use_color(sys.stderr, args.color))
    out_style = render.Style(render.use_color(sys.stdout, args.color))

    # In a terminal one live line shows the check that just finished and is erased before the
    # table (each check then appears once); piped or in CI, one line per check as before.
    live = render.LiveLine(sys.stderr)

    def progress(res: CheckResult) -> None:
        if res.status == "skip" and res.message == "torch did not import":
            return  # the import failure says it all; the summary counts these
        if _torch_missing(res):  # said once, by the summary, with what to do
            res = replace(res, message="")
        live.show(progress_line(res, err_style))

    if live.live:  # from the first second: importing torch alone can take seconds
        live.show(f"  {err_style('....', 'dim')}  {'import':<24} loading torch")
    try:
        report = run_verify(options, progress)
    finally:
        live.done()
    if args.junit:
        try:
            bounded.write_file(args.junit, to_junit(report))
        except OSError as exc:
            message = f"cannot write {args.junit}: {exc.strerror}"
            return render.fail("verify", "bad-input", message, ExitCode.USAGE, args.json)
    if args.json:
        print(render.dumps(render.envelope("verify", report)))
    else:
        print(summary(report, out_style, args.verbose))
    return int(exit_code(report))
