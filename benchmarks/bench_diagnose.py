#!/usr/bin/env python3
"""Time whole-process `setup-env diagnose` (text and --json) on a 50 KB paste of real reports.

    python benchmarks/bench_diagnose.py [--runs N] [--size BYTES] [--baseline DIR]

No real report in tests/fixtures/collect_env/ comes near 50 KB (the largest,
linux-h100-cu130-driver570.txt, is 5,397 bytes), so the 50 KB input is a paste: the real reports
one after another (what a whole issue thread with several reports, prompts and logs looks like),
cut at a line end once it reaches --size bytes (50,000 by default); the first report is the one
diagnosed, and every line is still read and scanned for torch's messages. The largest single real
report is timed too (--json), as it is. A run that exits 1 (diagnose found an error in the
report) is a result, not a failure.

Each run is a fresh process of this interpreter (the package bytecode-compiled first, as
installed), interleaved with a bare `python -c pass`; with `--baseline DIR` the same inputs run
from a second tree in the same rounds (see paired.py). Target (issue 16): diagnose of the 50 KB
paste at most 120 ms median, as people run it (text, which imports its renderer too) and as tools
do (--json). Also times, for the tree under test, the parser alone in-process and a 4 MB
adversarial paste (the input cap) of torch's message openings repeated, which must stay linear.

`--importtime` lists, for each tree, what `python -m setup_env diagnose --json PASTE` imports.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from pathlib import Path

import paired  # same folder

BUDGET_MS = 120
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "collect_env"
FIRST = "linux-h100-cu130-driver570.txt"  # a whole report, and the largest


def paste(size: int) -> str:
    names = [FIRST]
    names += [p.name for p in sorted(FIXTURES.glob("*.txt")) if p.name not in names]
    out: list[str] = []
    total = 0
    while total < size:
        for name in names:
            for line in (FIXTURES / name).read_text(encoding="utf-8").splitlines():
                out.append(line)
                total += len(line.encode()) + 1
                if total >= size:
                    return "\n".join(out) + "\n"
    return "\n".join(out) + "\n"


def adversarial(size: int) -> str:
    unit = (
        "Found GPU0 x which is of cuda capability 3. with CUDA capability sm_12 is not "
        "compatible with the current PyTorch installation. > > >x cudaGetDeviceCount() Error "
        "libnccl.so.2 HIP error: \n"
    )
    return unit * (size // len(unit))


def in_process(root: Path, text: str) -> tuple[list[float], float]:
    sys.path.insert(0, str(root))  # the tree under test, not whatever setup_env is installed
    from setup_env.probe.report import parse

    parse(text)
    inproc = []
    for _ in range(20):
        start = time.perf_counter()
        parse(text)
        inproc.append(time.perf_counter() - start)
    hostile = adversarial(4_000_000)
    start = time.perf_counter()
    with contextlib.suppress(ValueError):
        parse(hostile)
    return inproc, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    paired.add_arguments(parser)
    parser.add_argument("--size", type=int, default=50_000, help="paste size in bytes")
    args = parser.parse_args()
    trees = paired.trees(args)
    text = paste(args.size)
    largest = max(FIXTURES.glob("*.txt"), key=lambda p: p.stat().st_size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.txt"
        path.write_text(text, encoding="utf-8")
        argv = ["-m", "setup_env", "diagnose", "--json", str(path)]
        if args.importtime:
            paired.show_imports(trees, argv)
            return 0
        paired.header(trees)
        print(f"paste: {len(text.encode())} bytes, {text.count(chr(10))} lines of real reports")
        print(f"largest single report: {largest.name}, {largest.stat().st_size} bytes")
        ok = (0, 1)  # 1: diagnose found an error, a result
        # The budget is for `diagnose` as people run it (text) and as tools do (--json).
        pastes = [
            paired.Case(f"diagnose --json 50KB {t.label}", [sys.executable, *argv], t.env, ok)
            for t in trees
        ]
        texts = [
            paired.Case(
                f"diagnose 50KB {t.label}",
                [sys.executable, *[a for a in argv if a != "--json"]],
                t.env,
                ok,
            )
            for t in trees
        ]
        singles = [
            paired.Case(
                f"diagnose --json {largest.stat().st_size // 1000}KB {t.label}",
                [sys.executable, *argv[:-1], str(largest)],
                t.env,
                ok,
            )
            for t in trees
        ]
        bare = paired.bare(trees[0].env)
        cases = [*pastes, *texts, *singles, bare]
        paired.interleave(cases, args.runs)
    paired.table(cases)
    met = True
    for label, pair in (("diagnose --json 50KB", pastes), ("diagnose 50KB", texts)):
        base = pair[1] if len(pair) > 1 else None
        met = paired.compare(label, pair[0], base, bare, BUDGET_MS) and met
    if len(singles) > 1:
        ratio = singles[0].median_ms() / singles[1].median_ms()
        print(f"{singles[0].name} / baseline: {ratio:.3f}x wall")
    inproc, hostile_s = in_process(trees[0].root, text)
    median = statistics.median(inproc) * 1000
    print(f"parse() alone, in-process, new        median {median:7.1f} ms")
    print(f"parse() of a 4 MB hostile paste, new  {hostile_s * 1000:7.1f} ms")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
