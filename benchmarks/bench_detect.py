#!/usr/bin/env python3
"""Time whole-process `setup-env detect --json` against `python -m torch.utils.collect_env`.

    python benchmarks/bench_detect.py [--runs N] [--collect-env-runs M] [--baseline DIR]

Each run is a fresh process (what a user or a CI step pays) of this interpreter, the package
bytecode-compiled first, as installed; runs are interleaved so that load on the machine hits every
side alike, and medians are reported with the ratios. A bare `python -c pass` is timed too: no
Python program can start faster than that here. With `--baseline DIR` the same command runs from
a second tree (e.g. the tree before a reorganisation) in the same rounds (see paired.py). Targets
(issue 16): detect --json at most 100 ms median and at least 30x faster than collect_env.

`--importtime` lists, for each tree, what `python -m setup_env detect --json` imports.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import threading
import time

import paired  # same folder

BUDGET_MS = 100
COLLECT_ENV_RATIO = 30
DETECT = ["-m", "setup_env", "detect", "--json"]
COLLECT_ENV = ["-m", "torch.utils.collect_env"]


def timed_run(
    argv: list[str], timeout: float = 120, env: dict[str, str] | None = None
) -> tuple[float, int]:
    """Wall time of one whole process. Not subprocess.run(timeout=...): its wait polls with
    sleeps growing to 50 ms, which rounds every measurement up to that schedule; a blocking
    wait with a watchdog timer measures to the microsecond."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    try:
        code = proc.wait()
    finally:
        watchdog.cancel()
    return time.perf_counter() - start, code


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    paired.add_arguments(parser)
    parser.add_argument(
        "--collect-env-runs", type=int, default=9, help="collect_env runs (default 9)"
    )
    args = parser.parse_args()
    trees = paired.trees(args)
    if args.importtime:
        paired.show_imports(trees, DETECT)
        return 0
    paired.header(trees)
    env = trees[0].env
    detects = [
        paired.Case(f"detect --json {t.label}", [sys.executable, *DETECT], t.env) for t in trees
    ]
    bare = paired.bare(env)
    cases = [*detects, bare]
    collect = None
    if importlib.util.find_spec("torch") is not None:
        every = max(1, args.runs // max(1, args.collect_env_runs))
        collect = paired.Case("collect_env", [sys.executable, *COLLECT_ENV], env, every=every)
        cases.append(collect)
    paired.interleave(cases, args.runs)
    paired.table(cases)
    base = detects[1] if len(detects) > 1 else None
    met = paired.compare("detect --json", detects[0], base, bare, BUDGET_MS)
    if collect is None:
        print("torch is not installed here: collect_env not timed")
        return 0 if met else 1
    for c in detects:
        ratio = collect.median_ms() / c.median_ms()
        verdict = "PASS" if ratio >= COLLECT_ENV_RATIO else "OVER"
        print(
            f"collect_env / {c.name}: {ratio:.1f}x (target >= {COLLECT_ENV_RATIO}x: {verdict}; "
            f"met at <= {collect.median_ms() / COLLECT_ENV_RATIO:.1f} ms here); "
            f"by CPU time {collect.cpu_ms() / c.cpu_ms():.1f}x (less swayed by other jobs)"
        )
    fast_enough = collect.median_ms() / detects[0].median_ms() >= COLLECT_ENV_RATIO
    return 0 if met and fast_enough else 1


if __name__ == "__main__":
    raise SystemExit(main())
