#!/usr/bin/env python3
"""Time `setup-env plan --json` (whole process) and loading the bundled wheel matrix.

    python benchmarks/bench_plan.py [--runs N]

Reported (medians): a fresh process running `plan --json` for this machine (detection included),
the same for a what-if spec (no detection: the planner's own cost), a bare `python -c pass` for
reference, and in-process: reading + validating the bundled matrix into typed rows (no cache),
and one `make_plan`. Targets (issue 3): plan --json under 200 ms, matrix load well under 20 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

from bench_detect import timed_run  # same folder: the one precise whole-process timer

PLAN = [sys.executable, "-m", "setup_env", "plan", "--json"]
SPEC = [*PLAN, "--os", "linux", "--python", "3.12", "--gpu", "H100", "--driver", "535.104.05"]
BARE = [sys.executable, "-c", "pass"]


ENV = dict(os.environ)


def once(argv: list[str]) -> float:
    elapsed, code = timed_run(argv, 120, ENV)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {code}")
    return elapsed


def in_process(runs: int) -> tuple[float, float]:
    from setup_env.decide.plan import make_plan, spec_facts
    from setup_env.knowledge import matrix as mx

    text = mx.BUNDLED_PATH.read_text()
    loads = []
    for _ in range(runs):
        t0 = time.perf_counter()
        mx.parse(json.loads(mx.BUNDLED_PATH.read_text()))
        loads.append(time.perf_counter() - t0)
    m = mx.parse(json.loads(text))
    facts = spec_facts(os="linux", python="3.12", gpus=["H100"], driver="535.104.05")
    plans = []
    for _ in range(runs):
        t0 = time.perf_counter()
        make_plan(facts, None, m)
        plans.append(time.perf_counter() - t0)
    return statistics.median(loads), statistics.median(plans)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument(
        "--no-bytecode",
        action="store_true",
        help="keep PYTHONDONTWRITEBYTECODE as set (every run compiles every module)",
    )
    args = ap.parse_args()
    if not args.no_bytecode:
        # An installed package has .pyc files (pip compiles them); this sandbox sets
        # PYTHONDONTWRITEBYTECODE=1, which would make every run compile every module. Keep the
        # bytecode in a private prefix so the repository stays clean.
        ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="setup-env-bench-")
        print(f"bytecode cached under {ENV['PYTHONPYCACHEPREFIX']}")
    once(PLAN)  # warm the page cache (and the bytecode)
    once(SPEC)
    times: dict[str, list[float]] = {"plan": [], "spec": [], "bare": []}
    for _ in range(args.runs):  # interleaved, so machine load hits all alike
        times["plan"].append(once(PLAN))
        times["spec"].append(once(SPEC))
        times["bare"].append(once(BARE))
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    load, plan = in_process(args.runs)
    print(f"setup-env plan --json (this machine)  median {med['plan']:7.1f} ms  (target < 200)")
    print(f"setup-env plan --json --os ... (spec) median {med['spec']:7.1f} ms")
    print(f"python -c pass                        median {med['bare']:7.1f} ms")
    print(f"matrix load (read+validate+rows)      median {load * 1000:7.1f} ms  (target < 20)")
    print(f"make_plan (H100, driver 535)          median {plan * 1000:7.1f} ms")
    return 0 if med["plan"] < 200 and load < 0.020 else 1


if __name__ == "__main__":
    sys.exit(main())
