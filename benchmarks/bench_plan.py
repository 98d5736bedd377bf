#!/usr/bin/env python3
"""Time `setup-env plan --json` (whole process) and loading the bundled wheel matrix.

    python benchmarks/bench_plan.py [--runs N] [--baseline DIR]

Reported (medians of interleaved fresh processes of this interpreter, the package
bytecode-compiled first, as installed): `plan --json` for this machine (detection included), the
same for a what-if spec (no detection: the planner's own cost), a bare `python -c pass` for
reference; with `--baseline DIR` both plans also run from a second tree in the same rounds (see
paired.py). Then, in-process and for the tree under test only: reading + validating the bundled
matrix into typed rows (no cache), and one `make_plan`. Targets: plan --json at most 110 ms
(issue 16), matrix load well under 20 ms (issue 3).

`--importtime` lists, for each tree, what `python -m setup_env plan --json` imports.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import paired  # same folder

BUDGET_MS = 110
PLAN = ["-m", "setup_env", "plan", "--json"]
SPEC = [*PLAN, "--os", "linux", "--python", "3.12", "--gpu", "H100", "--driver", "535.104.05"]


def in_process(root: Path, runs: int) -> tuple[float, float]:
    sys.path.insert(0, str(root))  # the tree under test, not whatever setup_env is installed
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
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    paired.add_arguments(ap)
    args = ap.parse_args()
    trees = paired.trees(args)
    if args.importtime:
        paired.show_imports(trees, PLAN)
        return 0
    paired.header(trees)
    ok = (0, 1)  # 1: no build fits, a result
    plans = [
        paired.Case(f"plan --json {t.label}", [sys.executable, *PLAN], t.env, ok) for t in trees
    ]
    specs = [
        paired.Case(f"plan --json --os ... (spec) {t.label}", [sys.executable, *SPEC], t.env, ok)
        for t in trees
    ]
    bare = paired.bare(trees[0].env)
    cases = [*plans, *specs, bare]
    paired.interleave(cases, args.runs)
    paired.table(cases)
    base = plans[1] if len(plans) > 1 else None
    met = paired.compare("plan --json", plans[0], base, bare, BUDGET_MS)
    if len(specs) > 1:
        ratio = specs[0].median_ms() / specs[1].median_ms()
        print(f"plan --json --os ... (spec) new / baseline: {ratio:.3f}x wall")
    load, plan = in_process(trees[0].root, args.runs)
    print(f"matrix load (read+validate+rows), new  median {load * 1000:7.1f} ms  (target < 20)")
    print(f"make_plan (H100, driver 535), new      median {plan * 1000:7.1f} ms")
    return 0 if met and load < 0.020 else 1


if __name__ == "__main__":
    sys.exit(main())
