#!/usr/bin/env python3
"""Time whole-process `setup-env diagnose --json` on a 50 KB paste of real reports.

    python benchmarks/bench_diagnose.py [--runs N] [--size BYTES]

The paste is the real reports of tests/fixtures/collect_env/ one after another (what a whole
issue thread with several reports, prompts and logs looks like), cut at a line end once it
reaches --size bytes (50,000 by default); the first report is the one diagnosed, and every line
is still read and scanned for torch's messages. Each run is a fresh process, interleaved with a
bare `python -c pass`. Target (issue 10): median under 150 ms. Also times the parser alone
in-process, and a 4 MB adversarial paste (the input cap) of torch's message openings repeated,
which must stay linear.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "collect_env"
BARE = [sys.executable, "-c", "pass"]


def paste(size: int) -> str:
    names = ["linux-h100-cu130-driver570.txt"]  # a whole report first
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


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=21, help="diagnose runs (default 21)")
    parser.add_argument("--size", type=int, default=50_000, help="paste size in bytes")
    args = parser.parse_args()

    # Bytecode as a user's install has it (this shell may set PYTHONDONTWRITEBYTECODE, which
    # would make every run recompile the package).
    import compileall

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(
        str(Path(__file__).resolve().parent.parent / "setup_env"), quiet=1, force=False
    )
    text = paste(args.size)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "report.txt"
        path.write_text(text, encoding="utf-8")
        diagnose = [sys.executable, "-m", "setup_env", "diagnose", "--json", str(path)]

        def run(argv: list[str]) -> tuple[float, float]:
            """(wall, CPU) seconds of one whole process. CPU (user + system, from wait4) is
            what the process itself costs; wall also holds the waits of a loaded machine."""
            start = time.perf_counter()
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            watchdog = threading.Timer(120, proc.kill)
            watchdog.start()
            try:
                _, status, usage = os.wait4(proc.pid, 0)
            finally:
                watchdog.cancel()
            wall = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            # diagnose exits 1 when it finds an error: that is a result, not a failure.
            if proc.returncode not in (0, 1):
                raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}")
            return wall, usage.ru_utime + usage.ru_stime

        run(diagnose)
        run(BARE)
        times: list[float] = []
        cpu: list[float] = []
        bare: list[float] = []
        bare_cpu: list[float] = []
        for _ in range(args.runs):
            wall, used = run(diagnose)
            times.append(wall)
            cpu.append(used)
            wall, used = run(BARE)
            bare.append(wall)
            bare_cpu.append(used)

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
    hostile_s = time.perf_counter() - start

    def ms(values: list[float]) -> str:
        median = statistics.median(values) * 1000
        return (
            f"median {median:7.1f} ms  (min {min(values) * 1000:.1f}, "
            f"max {max(values) * 1000:.1f}, n={len(values)})"
        )

    med = statistics.median(times) * 1000
    print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
    print(f"paste: {len(text.encode())} bytes, {text.count(chr(10))} lines of real reports")
    print(f"python -c pass                    {ms(bare)}")
    over = (statistics.median(times) - statistics.median(bare)) * 1000
    print(f"diagnose beyond bare start-up:    {over:7.1f} ms")
    print(
        f"setup-env diagnose --json         {ms(times)}  target < 150 ms: "
        f"{'met' if med < 150 else 'NOT met'}"
    )
    print(f"diagnose CPU time (user+sys)      {ms(cpu)}")
    print(f"python -c pass CPU time           {ms(bare_cpu)}")
    print(f"parse() alone, in-process         {ms(inproc)}")
    print(f"parse() of a 4 MB hostile paste   {hostile_s * 1000:7.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
