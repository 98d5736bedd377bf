"""Every command's --help: each option says what it does in one line, the help ends with the
exit codes, and the examples that run from a checkout (a captured machine, a fat binary) run."""

from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from setup_env.cli import COMMANDS, build_parser

ROOT = Path(__file__).resolve().parent.parent


def _parsers(
    parser: argparse.ArgumentParser, name: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """``parser`` and every subparser below it, each with its command line."""
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}".strip())


def _all() -> list[tuple[str, argparse.ArgumentParser]]:
    return [(n, p) for n, p in _parsers(build_parser(), "") if n]


def test_the_walk_reaches_every_command_and_action() -> None:
    names = {n for n, _ in _all()}
    assert set(COMMANDS) <= names
    assert {"matrix show", "matrix refresh", "matrix arches"} <= names
    assert {"fleet report", "fleet slurm", "fleet k8s"} <= names


@pytest.mark.parametrize("name,parser", _all(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_option_has_a_one_line_description(
    name: str, parser: argparse.ArgumentParser
) -> None:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            missing += [
                f"{name} {c.dest}" for c in action._choices_actions if not (c.help or "").strip()
            ]
            continue
        if action.help == argparse.SUPPRESS:
            continue  # hidden on purpose (--color, the opposite of --no-color)
        label = "/".join(action.option_strings) or action.dest
        text = (action.help or "").strip()
        if not text or "\n" in text:
            missing.append(f"setup-env {name} {label}")
    assert not missing, f"options without a one-line description: {missing}"


@pytest.mark.parametrize("name,parser", _all(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_help_ends_with_its_exit_codes(name: str, parser: argparse.ArgumentParser) -> None:
    text = parser.format_help().rstrip()
    last = text.split("\n\n")[-1]
    assert last.startswith("exit codes: "), f"setup-env {name} --help ends with {last!r}"
    assert "0 " in last and "2 " in last and "130 interrupted" in last


def test_a_parser_that_lacks_a_description_is_caught() -> None:
    """The walk itself: an option added without help fails the check."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--bare")
    with pytest.raises(AssertionError, match="--bare"):
        test_every_option_has_a_one_line_description("x", parser)


def _examples(name: str) -> list[str]:
    parser = dict(_all())[name]
    epilog = parser.epilog or ""
    block = epilog.split("examples:\n", 1)[1].split("\n\n", 1)[0]
    lines = [line.strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def _run(line: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(line.replace("/tmp/box", str(tmp / "box")), comments=True)
    if argv[0] == "setup-env":
        argv = [sys.executable, "-m", "setup_env", *argv[1:]]
    elif argv[0] == "python":
        argv[0] = sys.executable
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_matrix_arches_example_runs_from_a_checkout(tmp_path: Path) -> None:
    lines = [x for x in _examples("matrix arches") if "tests/fixtures" in x]
    assert lines
    for line in lines:
        proc = _run(line, tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert "sm_80" in proc.stdout


def test_plan_root_examples_run_capture_included(tmp_path: Path) -> None:
    """`plan --help` shows how to capture a machine and plan for it: both steps run as shown."""
    lines = [x for x in _examples("plan") if "--root" in x or "setup-env capture" in x]
    assert any(x.startswith("setup-env capture /tmp/box") for x in lines)
    for line in lines:
        proc = _run(line, tmp_path)
        assert proc.returncode == 0, f"{line}: {proc.stderr}"
    assert (tmp_path / "box" / "host.json").is_file()
