#!/usr/bin/env python3
"""Time `setup-env fleet report` (whole process) over 1,000 node documents.

    python benchmarks/bench_fleet.py [--nodes 1000] [--runs 7]

The documents are real `setup-env check --json` output made here: one live check of this machine
(verify runs, so it carries a measured speed) and one replay of every captured host in
tests/fixtures/hosts. Node i is a copy of document i mod k with hostname node-NNNN; every 97th
node has its driver edited (to 1.0.0) and every 89th its matmul speed halved, so the report has
drift and slow nodes to find, as a real fleet would. Reported (medians, interleaved runs):
`fleet report DIR --json`, `fleet report DIR` (text), and a bare process that only
`json.load`s the same files, with the ratio of each report to it. Target (issue 13): under 2 s.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_detect import timed_run  # same folder: the one precise whole-process timer

REPO = Path(__file__).resolve().parents[1]
HOSTS = REPO / "tests" / "fixtures" / "hosts"
ENV = dict(os.environ)


def check_json(*argv: str) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "check", "--json", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=ENV,
        cwd=REPO,
    )
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


def make_documents(folder: Path, n: int) -> int:
    base = [check_json("--device", "cpu")]
    base += [check_json("--root", str(h)) for h in sorted(HOSTS.iterdir()) if h.is_dir()]
    size = 0
    for i in range(n):
        doc: dict[str, object] = copy.deepcopy(base[i % len(base)])
        body = doc["check"]
        assert isinstance(body, dict)
        body["node"] = {"hostname": f"node-{i:04d}"}
        facts = body["facts"]
        if i % 97 == 5 and isinstance(facts, dict) and isinstance(facts.get("nvidia"), dict):
            facts["nvidia"]["driver_version"] = "1.0.0"  # drift
        verify = body.get("verify")
        if i % 89 == 7 and isinstance(verify, dict):
            for c in verify["checks"]:
                if c["name"] == "matmul-speed":
                    c["evidence"]["tflops"] = c["evidence"]["tflops"] / 2  # a slow node
        text = json.dumps(doc, indent=2)
        size += len(text)
        (folder / f"node-{i:04d}.json").write_text(text)
    return size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    ENV.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: with bytecode
    ENV["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="setup-env-bench-")
    with tempfile.TemporaryDirectory(prefix="setup-env-fleet-") as tmp:
        folder = Path(tmp)
        size = make_documents(folder, args.nodes)
        print(f"{args.nodes} node documents, {size / 1e6:.1f} MB, in {folder}")
        report_json = [sys.executable, "-m", "setup_env", "fleet", "report", str(folder), "--json"]
        report_text = [sys.executable, "-m", "setup_env", "fleet", "report", str(folder)]
        load_only = [
            sys.executable,
            "-c",
            "import json, os, sys\n"
            "d = sys.argv[1]\n"
            "for n in sorted(os.listdir(d)):\n"
            "    with open(os.path.join(d, n), encoding='utf-8') as f:\n"
            "        json.load(f)\n",
            str(folder),
        ]
        for argv in (report_json, report_text, load_only):  # warm page cache and bytecode
            timed_run(argv, 300, ENV)
        times: dict[str, list[float]] = {"json": [], "text": [], "load": []}
        for _ in range(args.runs):
            for key, argv in (("json", report_json), ("text", report_text), ("load", load_only)):
                elapsed, code = timed_run(argv, 300, ENV)
                if code not in (0, 1):
                    raise SystemExit(f"{' '.join(argv[:6])} exited {code}")
                times[key].append(elapsed)
    med = {k: statistics.median(v) for k, v in times.items()}
    for key, label in (("json", "fleet report --json"), ("text", "fleet report (text)")):
        ratio = med[key] / med["load"]
        print(f"{label:<21} {med[key] * 1000:7.0f} ms  ({ratio:.2f}x json.load alone)")
    print(f"{'json.load alone':<21} {med['load'] * 1000:7.0f} ms  (a process that only reads them)")
    ok = max(med["json"], med["text"]) < 2.0
    print(f"target < 2 s whole-process: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
