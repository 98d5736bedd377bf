"""`setup-env plan` (skeleton: the issue that owns this command fills it in)."""

from __future__ import annotations

import argparse
import sys

from setup_env.exitcodes import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    print("setup-env plan: not built yet", file=sys.stderr)
    return int(ExitCode.USAGE)
