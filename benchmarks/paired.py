"""Paired whole-process timing: the tree these benchmarks live in against a baseline tree.

Shared by bench_detect.py, bench_plan.py and bench_diagnose.py (not a script, not a test). Each
tree is measured as installed: its package is bytecode-compiled first (`python -m compileall -q`,
what pip does on install), and every run is a fresh process of this same interpreter (so the same
venv, torch included) with PYTHONPATH at the tree under test and an empty folder as the working
directory (`python -m` puts the working directory first on sys.path, and the checkout this runs
from may be another tree). Every case runs once per round, the order rotating each round, so a load
spike from other jobs hits all of them alike; medians are compared.

    --baseline DIR   a checkout of the tree to compare with, e.g. the pre-move tree:
                     git worktree add --detach /work/wt-premove e011f4e
    --tree DIR       the tree under test (default: the checkout holding this file)
    --importtime     instead of timing, list what the command imports, for each tree
"""

from __future__ import annotations

import argparse
import atexit
import functools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BARE = ("-c", "pass")


@functools.lru_cache(maxsize=1)
def workdir() -> str:
    """An empty working directory for every run (see the module docstring), removed at exit."""
    path = tempfile.mkdtemp(prefix="setup-env-bench-cwd-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


@dataclass(frozen=True)
class Tree:
    """One checkout whose ``setup_env`` package is run."""

    label: str
    root: Path
    env: dict[str, str] = field(hash=False)

    def describe(self) -> str:
        def git(*argv: str) -> str:
            proc = subprocess.run(
                ["git", "-C", str(self.root), *argv], capture_output=True, text=True, check=False
            )
            return proc.stdout.strip()

        commit = git("rev-parse", "--short", "HEAD") or "no git"
        dirty = (
            " +uncommitted changes in setup_env/"
            if git("status", "--porcelain", "--", "setup_env")
            else ""
        )
        return f"{self.label:<8} {self.root} ({commit}{dirty})"


def add_arguments(parser: argparse.ArgumentParser, runs: int = 31) -> None:
    parser.add_argument(
        "--runs", type=int, default=runs, help=f"interleaved rounds (default {runs})"
    )
    parser.add_argument(
        "--baseline", type=Path, metavar="DIR", help="a second tree to compare with"
    )
    parser.add_argument(
        "--tree", type=Path, metavar="DIR", default=REPO, help=f"tree under test (default {REPO})"
    )
    parser.add_argument(
        "--importtime",
        action="store_true",
        help="list each tree's imports (python -X importtime) instead of timing",
    )


def base_env() -> dict[str, str]:
    """This environment, as a user's shell would have it for an installed package: bytecode is
    read and written (this sandbox sets PYTHONDONTWRITEBYTECODE=1, which would make every run
    compile whatever has no .pyc yet), beside the sources (no PYTHONPYCACHEPREFIX)."""
    env = dict(os.environ)
    for name in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTHONPATH"):
        env.pop(name, None)
    return env


def prepare(label: str, root: Path) -> Tree:
    """Compile the tree's package and check that a fresh process imports it from there."""
    root = root.resolve()
    if not (root / "setup_env" / "__init__.py").is_file():
        raise SystemExit(f"{root}: no setup_env package there")
    env = base_env()
    env["PYTHONPATH"] = str(root)
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(root / "setup_env")], env=env, check=True
    )
    origin = subprocess.run(
        [sys.executable, "-c", "import setup_env; print(setup_env.__file__)"],
        env=env,
        cwd=workdir(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(origin).resolve().is_relative_to(root):
        raise SystemExit(f"{label}: setup_env comes from {origin}, not from {root}")
    return Tree(label, root, env)


def trees(args: argparse.Namespace) -> list[Tree]:
    out = [prepare("new", args.tree)]
    if args.baseline is not None:
        out.append(prepare("baseline", args.baseline))
    return out


@dataclass(frozen=True)
class Sample:
    wall: float
    cpu: float  # user + system of the child: what the process itself cost, waits excluded


def run_once(argv: Sequence[str], env: dict[str, str], ok: Sequence[int] = (0,)) -> Sample:
    """One whole process. A blocking wait4 with a watchdog timer, not subprocess.run(timeout=):
    its wait polls with sleeps growing to 50 ms, which rounds every measurement up."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=workdir()
    )
    watchdog = threading.Timer(300, proc.kill)
    watchdog.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        watchdog.cancel()
    wall = time.perf_counter() - start
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    if code not in ok:
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return Sample(wall, usage.ru_utime + usage.ru_stime)


@dataclass
class Case:
    name: str
    argv: list[str]
    env: dict[str, str]
    ok: tuple[int, ...] = (0,)
    every: int = 1  # run in one round of this many (collect_env takes seconds)
    samples: list[Sample] = field(default_factory=list)

    def median_ms(self) -> float:
        return statistics.median(s.wall for s in self.samples) * 1000

    def cpu_ms(self) -> float:
        return statistics.median(s.cpu for s in self.samples) * 1000


def bare(env: dict[str, str]) -> Case:
    return Case("python -c pass", [sys.executable, *BARE], env)


def interleave(cases: list[Case], rounds: int) -> None:
    for case in cases:  # warm the page cache, and write any .pyc still missing
        run_once(case.argv, case.env, case.ok)
    for i in range(rounds):
        shift = i % len(cases)
        for case in cases[shift:] + cases[:shift]:
            if i % case.every == 0:
                case.samples.append(run_once(case.argv, case.env, case.ok))


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def header(ts: list[Tree]) -> None:
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}, {sys.executable}")
    for t in ts:
        print(f"tree {t.describe()}")
    print(f"before: {load()}")


def table(cases: list[Case]) -> None:
    print(f"after:  {load()}")
    width = max(len(c.name) for c in cases)
    print(f"{'':<{width}}  median ms   min ms   max ms   CPU ms     n")
    for c in cases:
        walls = [s.wall * 1000 for s in c.samples]
        print(
            f"{c.name:<{width}}  {c.median_ms():9.1f} {min(walls):8.1f} {max(walls):8.1f} "
            f"{c.cpu_ms():8.1f} {len(walls):5d}"
        )


def verdict(ms: float, budget: float) -> str:
    return "PASS" if ms <= budget else "OVER"


def compare(label: str, new: Case, base: Case | None, bare_case: Case, budget: float) -> bool:
    """The lines every benchmark prints for one command: beyond bare start-up, new/baseline, the
    budget. True when the tree under test is within it."""
    for c in (new, base):
        if c is None:
            continue
        over = c.median_ms() - bare_case.median_ms()
        ratio = c.median_ms() / bare_case.median_ms()
        print(f"{c.name}: {over:+.1f} ms beyond python -c pass ({ratio:.2f}x it)")
    if base is not None:
        ratio = new.median_ms() / base.median_ms()
        delta = new.median_ms() - base.median_ms()
        cpu = new.cpu_ms() / base.cpu_ms()
        print(f"{label} new / baseline: {ratio:.3f}x wall ({delta:+.1f} ms), {cpu:.3f}x CPU")
    for c in (new, base):
        if c is not None:
            m = c.median_ms()
            print(f"budget {label} <= {budget:g} ms: {c.name} {m:.1f} ms {verdict(m, budget)}")
    return new.median_ms() <= budget


# ---- python -X importtime -------------------------------------------------------------------


# How a command is run under importtime. Two changes, neither altering what is imported:
# - importtime is reported by the import statement's machinery (C); importlib.import_module goes
#   around it, so what setup-env imports that way (the command module, the probes) would be missing
#   and its own imports would show as roots: import_module is routed through the import statement.
# - importtime's own-time figures are wrong for imports made by two threads at once (each thread's
#   children are subtracted from the other's): a plain threading.Thread (detect's probes) runs its
#   target in the thread that starts it, one after another. Subclasses (watchdogs, pipe readers)
#   still run as threads.
_VISIBLE_IMPORTS = """\
import importlib, runpy, sys, threading
def import_module(name, package=None):
    if package is not None or name.startswith('.'):
        name = importlib.util.resolve_name(name, package)
    __import__(name)
    return sys.modules[name]
importlib.import_module = import_module
start, join = threading.Thread.start, threading.Thread.join
def serial_start(self):
    if type(self) is not threading.Thread:
        return start(self)
    self.serial = True
    self.run()
def serial_join(self, timeout=None):
    if not getattr(self, 'serial', False):
        join(self, timeout)
threading.Thread.start, threading.Thread.join = serial_start, serial_join
del sys.argv[0]
runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)
"""


def _importtime_once(argv: Sequence[str], env: dict[str, str]) -> list[tuple[int, str, int, int]]:
    """(depth, module, self us, cumulative us) in the order the interpreter reports them."""
    if argv[0] == "-m":
        argv = ["-c", _VISIBLE_IMPORTS, *argv[1:]]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        cwd=workdir(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        name = parts[2].rstrip()
        depth = (len(name) - len(name.lstrip(" "))) // 2
        self_us = int(parts[0].rsplit(":", 1)[1])
        rows.append((depth, name.strip(), self_us, int(parts[1])))
    return rows


def summarize_imports(
    runs: list[list[tuple[int, str, int, int]]], bare: set[str], top: int = 25
) -> None:
    """Print what a command imports beyond ``python -c pass``: the roots (the imports a module of
    the program made itself, with everything they pulled in: what deferring one would save) and
    the heaviest modules by their own time. The least of the runs, in ms: other jobs on the machine
    only ever add time. importtime's own overhead is in the figures, so they rank costs rather
    than give them exactly."""
    selfs: dict[str, list[int]] = {}
    cums: dict[str, list[int]] = {}
    roots: dict[str, None] = {}
    for rows in runs:
        for depth, m, s, c in rows:
            if m in bare:
                continue
            selfs.setdefault(m, []).append(s)
            cums.setdefault(m, []).append(c)
            if depth == 0:
                roots[m] = None
    self_ms = {m: min(v) / 1000 for m, v in selfs.items()}
    cum_ms = {m: min(v) / 1000 for m, v in cums.items()}
    total = sum(self_ms.values())
    print(f"{len(self_ms)} modules beyond python -c pass, {total:.1f} ms of import in all")
    print("  roots (cumulative ms: what not importing it at all would save):")
    for m in roots:
        print(f"    {cum_ms[m]:7.1f}  {m}")
    print(f"  heaviest {top} by own time (ms):")
    for m in sorted(self_ms, key=self_ms.__getitem__, reverse=True)[:top]:
        print(f"    {self_ms[m]:7.1f}  {m}")
    setup = sorted(m for m in self_ms if m.startswith("setup_env"))
    third = sorted(m for m in self_ms if not m.startswith("setup_env"))
    print(f"  setup_env modules ({len(setup)}): {', '.join(setup)}")
    print(f"  other modules ({len(third)}): {', '.join(third)}")


def show_imports(ts: list[Tree], argv: Sequence[str], repeat: int = 9) -> None:
    """``python -X importtime argv`` for each tree, ``repeat`` times, the trees interleaved."""
    bare = {m for _ in range(2) for _, m, _, _ in _importtime_once(BARE, ts[0].env)}
    runs: dict[str, list[list[tuple[int, str, int, int]]]] = {t.label: [] for t in ts}
    for _ in range(repeat):
        for t in ts:
            runs[t.label].append(_importtime_once(argv, t.env))
    for t in ts:
        print(f"== {t.describe()}: python {' '.join(argv)}")
        summarize_imports(runs[t.label], bare)
        print()
