#!/usr/bin/env python3
"""Time whole-process `setup-env detect --json` against `python -m torch.utils.collect_env`.

    python benchmarks/bench_detect.py [--runs N] [--collect-env-runs M]

Each run is a fresh process (what a user or a CI step pays), runs are interleaved so that load
on the machine hits both sides alike, and medians are reported with the ratio. A bare
`python -c pass` is timed too: no Python program can start faster than that here. Targets
(issue 2): detect at least 20x faster than collect_env and under 150 ms median.

`--importtime` prints the slowest imports of one `python -X importtime -m setup_env detect --json`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import threading
import time

DETECT = [sys.executable, "-m", "setup_env", "detect", "--json"]
COLLECT_ENV = [sys.executable, "-m", "torch.utils.collect_env"]
BARE = [sys.executable, "-c", "pass"]


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


def once(argv: list[str], timeout: float = 120) -> float:
    elapsed, code = timed_run(argv, timeout)
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return elapsed


def importtime(top: int = 15) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *DETECT[1:]],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    rows = []
    for line in proc.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].rstrip()))
    for cumulative, name in sorted(rows, reverse=True)[:top]:
        print(f"{cumulative / 1000:8.1f} ms  {name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="detect runs (default 15)")
    parser.add_argument(
        "--collect-env-runs", type=int, default=5, help="collect_env runs (default 5)"
    )
    parser.add_argument("--importtime", action="store_true", help="show the slowest imports")
    parser.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as set (every run compiles every module)",
    )
    args = parser.parse_args()
    if not args.no_bytecode:
        # As installed (pip compiles .pyc files); this sandbox sets PYTHONDONTWRITEBYTECODE=1,
        # which makes every run compile every module (both sides: collect_env and torch too).
        # The bytecode goes to a private prefix so the repository stays clean.
        import tempfile

        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        os.environ["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="setup-env-bench-")
        print(f"bytecode cached under {os.environ['PYTHONPYCACHEPREFIX']}")
    if args.importtime:
        importtime()
        return 0

    try:
        import importlib.util

        have_torch = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        have_torch = False
    # Warm the file cache once for each side.
    once(DETECT)
    once(BARE)
    if have_torch:
        once(COLLECT_ENV)

    detect: list[float] = []
    bare: list[float] = []
    collect: list[float] = []
    every = max(1, args.runs // max(1, args.collect_env_runs))
    for i in range(args.runs):
        detect.append(once(DETECT))
        bare.append(once(BARE))
        if have_torch and len(collect) < args.collect_env_runs and i % every == 0:
            collect.append(once(COLLECT_ENV))

    def ms(values: list[float]) -> str:
        median = statistics.median(values) * 1000
        low, high = min(values) * 1000, max(values) * 1000
        return f"median {median:7.1f} ms  (min {low:.1f}, max {high:.1f}, n={len(values)})"

    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"python -c pass                      {ms(bare)}")
    print(f"setup-env detect --json             {ms(detect)}")
    if collect:
        print(f"python -m torch.utils.collect_env   {ms(collect)}")
        ratio = statistics.median(collect) / statistics.median(detect)
        print(f"ratio collect_env / detect: {ratio:.1f}x (target >= 20x)")
    else:
        print("torch is not installed here: collect_env not timed")
    over = statistics.median(detect) - statistics.median(bare)
    print(f"detect beyond bare interpreter start-up: {over * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
