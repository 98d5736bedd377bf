#!/usr/bin/env python3
"""Time reading long pastes (issue 18 item 5): time against size, per shape, and the ratio.

    python benchmarks/bench_diagnose_long.py [--sizes 50000,500000,4000000] [--whole]

Each shape is built from real report pieces (tests/fixtures/collect_env/), grown to the size:

- ``reports``: the real reports one after another (a whole thread of pastes);
- ``sections``: one report's head, then its GPU list, cuDNN files, CPU block and library list
  again and again (a report whose sections repeat, no second ``PyTorch version`` line);
- ``messages``: torch's real messages (sm_120 not compatible, found version 11040, Found GPU0 ...
  cuda capability 3.5, cudaGetDeviceCount Error 803, libcudnn_ops_infer.so.8 cannot open), each
  made distinct by a number in its GPU name, driver version or library name;
- ``unclosed``: a report whose ``Python version: 3.10.12 (main, ...`` never closes its
  parenthesis, so every following line is absorbed into it (the lines of real reports);
- ``gpus``: one report's head, then distinct ``GPU n: NVIDIA ...`` lines.

For each shape and size it prints the CPU seconds (``time.process_time``: the machines this runs
on are shared, and wall time there measures the neighbours) ``parse`` takes, best of --runs, and
the ratio of the time per KB at the largest size to that at the smallest: about 1 when reading is
linear, about (largest / smallest) when quadratic; below 1 where fixed costs dominate the small
size, and for ``gpus``, whose list is read up to its cap (MAX_GPUS, 1024 GPUs, about 40 KB). With
``--whole`` it also times the whole ``diagnose --json`` in-process once (parse, doctor, plan,
render). Issue 18's target: under 2 s at 4 MB for every shape. Not a test: it prints, it does not
assert (tests/test_report_linear.py counts the work instead).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "collect_env"
HEAD = "linux-h100-cu130-driver570.txt"  # a whole report with every section


def _read(name: str) -> list[str]:
    return (FIXTURES / name).read_text(encoding="utf-8").splitlines()


def _grow(head: list[str], unit: Callable[[int], list[str]], size: int) -> str:
    out = list(head)
    total = sum(len(x.encode()) + 1 for x in out)
    i = 0
    while total < size:
        for line in unit(i):
            out.append(line)
            total += len(line.encode()) + 1
            if total >= size:
                break
        i += 1
    return "\n".join(out) + "\n"


def reports(size: int) -> str:
    names = [HEAD] + [p.name for p in sorted(FIXTURES.glob("*.txt")) if p.name != HEAD]
    lines = [x for n in names for x in _read(n)]
    return _grow([], lambda i: lines, size)


def sections(size: int) -> str:
    lines = _read(HEAD)
    start = next(i for i, x in enumerate(lines) if x.startswith("GPU models"))
    head, body = lines[:start], lines[start:]
    return _grow(head, lambda i: body, size)


def _message_lines() -> list[str]:
    keep = (
        "with CUDA capability sm_",
        "The current PyTorch install supports",
        "too old (found version",
        "Found GPU0",
        "PyTorch no longer supports",
        "The minimum cuda capability",
        "cudaGetDeviceCount",
        "cannot open shared object",
    )
    out: list[str] = []
    for path in sorted(FIXTURES.glob("*.txt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        out += [x for x in lines if any(k in x for k in keep)]
    return out


def messages(size: int) -> str:
    lines = _message_lines()

    def unit(i: int) -> list[str]:
        n = str(i)
        return [
            x.replace("RTX 5090", f"RTX 5090 v{n}")
            .replace("GT 720", f"GT 720 v{n}")
            .replace("11040", str(10000 + i % 90000))
            .replace("9010", str(9000 + i % 1000))
            .replace("libcudnn_ops_infer", f"libcudnn_ops{n}")
            for x in lines
        ]

    return _grow([], unit, size)


def unclosed(size: int) -> str:
    head = _read(HEAD)
    at = next(i for i, x in enumerate(head) if x.startswith("Python version:"))
    cut = [*head[:at], "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0"]
    rest = [x for n in sorted(FIXTURES.glob("*.txt")) for x in _read(n.name)]
    # Lines that would end the absorption (a key, a section heading, a closing parenthesis) are
    # left out; the absorbed ones are the reports' prose, logs and tables.
    ends = (":", "[", "]", ")", "version", "info", "environment")
    rest = [x for x in rest if x.strip() and not any(e in x.lower() for e in ends)]
    return _grow(cut, lambda i: rest, size)


def gpus(size: int) -> str:
    lines = _read(HEAD)
    start = next(i for i, x in enumerate(lines) if x.startswith("GPU models"))
    head = lines[: start + 1]
    return _grow(head, lambda i: [f"GPU {i}: NVIDIA H100 80GB HBM3 #{i}"], size)


SHAPES: dict[str, Callable[[int], str]] = {
    "reports": reports,
    "sections": sections,
    "messages": messages,
    "unclosed": unclosed,
    "gpus": gpus,
}


def _time(fn: Callable[[], object], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        with contextlib.suppress(ValueError):
            fn()
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="50000,500000,4000000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--whole", action="store_true", help="time diagnose --json in-process too")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from setup_env.probe.report import parse

    sizes = [int(x) for x in args.sizes.split(",")]
    print(f"{'shape':<9} {'what':<8} " + " ".join(f"{s // 1000:>8} KB" for s in sizes) + "  ratio")
    worst = 0.0
    for name in args.shapes.split(","):
        texts = [SHAPES[name](s) for s in sizes]
        rows = [("parse", [_time(lambda t=t: parse(t), args.runs) for t in texts])]
        if args.whole:
            rows.append(("diagnose", [_whole(t) for t in texts]))
        for what, secs in rows:
            per_kb = [t / (len(x.encode()) / 1000) for t, x in zip(secs, texts)]
            ratio = per_kb[-1] / per_kb[0] if per_kb[0] else float("nan")
            worst = max(worst, secs[-1])
            cells = " ".join(f"{t:>9.3f}s" for t in secs)
            print(f"{name:<9} {what:<8} {cells}  {ratio:5.2f}")
    print(f"slowest at the largest size: {worst:.3f} s (target: under 2 s at 4 MB)")
    return 0


def _whole(text: str) -> float:
    from setup_env.cli import main as cli

    with tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", delete=False) as f:
        f.write(text)
    start = time.process_time()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        cli(["diagnose", "--json", f.name])
    took = time.process_time() - start
    Path(f.name).unlink()
    return took


if __name__ == "__main__":
    sys.exit(main())
