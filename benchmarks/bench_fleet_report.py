#!/usr/bin/env python3
"""Time `setup-env fleet report` over 1,000 and 10,000 nodes where every node drifts, and print
each format's size.

    python benchmarks/bench_fleet_report.py [--nodes 1000 10000] [--runs 3]

The documents are real `setup-env check --json` replays of captured hosts (an H100, an 8x MI300X,
a CPU-only machine and an AWS g5.xlarge), so the fleet has four pools and two GPU vendors. Edits,
to make the worst case for the report: node i's driver is "590.i" (a value of its own: every node
but one per pool is odd), its torch "2.13.i" and its variant "v(n-i)" too (in opposite orders: no
node is the pool's on both), and every node carries a matmul-speed result (a made-up verify
check: replays run no torch) spread around its pool's median, every 50th at a third.

Printed: the documents' total size; in-process, the seconds to read them all, to judge them
(``decide.fleet.build``) and to render each format with the size of its output; then the whole
process (`python -m setup_env fleet report DIR`, median of --runs) for text, --json and
--format html. Wall and CPU seconds both: on a shared machine the CPU time is what the report
costs, the wall time what waiting for it took. Target (issue 19): 10,000 nodes in at most 5 s,
the HTML at most 2 MB. Printed, not asserted (a benchmark, not a test; tests/test_fleet_pools.py
asserts the HTML size bound).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HOSTS = REPO / "tests" / "fixtures" / "hosts"
SOURCES = (
    "ubuntu-h100-590",
    "ubuntu2204-rocm623-8x-mi300x",
    "ubuntu2404-cpu-only",
    "linux-aws-g5-nitro-nodriver",
)
sys.path.insert(0, str(REPO))


def check_json(host: str) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "check", "--json", "--root", str(HOSTS / host)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
        check=False,
    )
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def make_documents(folder: Path, n: int, base: list[dict[str, Any]]) -> int:
    size = 0
    for i in range(n):
        doc = copy.deepcopy(base[i % len(base)])
        body = doc["check"]
        body["node"] = {"hostname": f"node-{i:05d}"}
        facts = body["facts"]
        for vendor in ("nvidia", "rocm"):
            part = facts.get(vendor)
            if isinstance(part, dict) and part.get("gpus"):
                part["driver_version"] = f"590.{i}"  # drift: a value of its own
        # torch and its variant each a value of its own, in opposite orders: the one node per
        # pool whose torch is the pool's (ties go to the smallest value) has an odd variant.
        facts["packages"] = [{"name": "torch", "version": f"2.13.{i}", "variant": f"v{n - i}"}]
        device = "cuda:0" if (facts.get("nvidia") or facts.get("rocm") or {}).get("gpus") else "cpu"
        tflops = 400.0 * (1 + ((i * 7) % 21 - 10) / 100)
        if i % 50 == 3:
            tflops /= 3  # a slow node
        body["verify"] = {
            "checks": [
                {
                    "name": "matmul-speed",
                    "status": "pass",
                    "device": device,
                    "evidence": {"tflops": round(tflops, 3)},
                }
            ]
        }
        text = json.dumps(doc)
        size += len(text)
        (folder / f"node-{i:05d}.json").write_text(text)
    return size


def in_process(folder: Path) -> None:
    from setup_env.decide import fleet
    from setup_env.output import render_fleet
    from setup_env.output.render import Style
    from setup_env.probe import fleet_nodes

    t0, c0 = time.perf_counter(), time.process_time()
    docs = fleet_nodes.load_all([str(folder)])
    t1, c1 = time.perf_counter(), time.process_time()
    report = fleet.build(docs.nodes, docs.bad, docs.allreduce, docs.jobs)
    t2, c2 = time.perf_counter(), time.process_time()
    odd = len({name for d in report.drift for name in d.odd})
    print(
        f"  read {t1 - t0:.2f} s (CPU {c1 - c0:.2f}), judge {t2 - t1:.2f} s (CPU {c2 - c1:.2f}): "
        f"{len(report.nodes)} nodes in "
        f"{len(report.pools)} pools, {odd} drifting, {len(report.look_first)} to look at, "
        f"first: {report.look_first[0].node} ({report.look_first[0].severity})"
    )
    renders = {
        "text": lambda: render_fleet.text(report, Style(False)),
        "markdown": lambda: render_fleet.markdown(report),
        "html": lambda: render_fleet.html_page(report),
        "json": lambda: json.dumps(render_fleet.payload(report), indent=2),
    }
    for name, render in renders.items():
        t, c = time.perf_counter(), time.process_time()
        out = render()
        took, cpu = time.perf_counter() - t, time.process_time() - c
        print(f"  render {name:<8} {took:.2f} s (CPU {cpu:.2f}), {len(out.encode()) / 1e6:.2f} MB")


def whole_process(folder: Path, runs: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    for flags in ([], ["--json"], ["--format", "html"]):
        times, cpus = [], []
        for _ in range(runs):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "setup_env", "fleet", "report", *flags, str(folder)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=600,
                env=env,
                check=False,
            )
            times.append(time.perf_counter() - t)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        label = " ".join(flags) or "text"
        print(
            f"  whole process, {label:<13} median {statistics.median(times):.2f} s "
            f"(CPU {statistics.median(cpus):.2f} s) over {runs}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    base = [check_json(h) for h in SOURCES]
    for n in args.nodes:
        with tempfile.TemporaryDirectory(prefix="setup-env-fleet-") as tmp:
            folder = Path(tmp)
            size = make_documents(folder, n, base)
            print(f"{n} nodes, every one drifting: {size / 1e6:.1f} MB of documents")
            in_process(folder)
            whole_process(folder, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
