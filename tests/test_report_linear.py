"""Reading a long paste is linear in its length (issue 18 item 5), proved by counting work, not
by a clock: the Python bytecode instructions ``parse`` executes are counted (``sys.settrace``
with opcode events) for a paste and for one four times as long, built from the real reports of
tests/fixtures/collect_env/. Linear reading needs about four times the work; each quadratic path
the reader had (messages deduplicated against a list, a GPU named in a warning looked up in the
list so far, one catalogue look-up per listed GPU) needs far more. Work done inside C (a regex,
``str.count`` on a growing value) is invisible to the count: the wrapped Python version's
bookkeeping is checked against its definition below, and benchmarks/bench_diagnose_long.py times
every shape at 50 KB, 500 KB and 4 MB."""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any, Callable, Optional

import pytest

from setup_env.commands import diagnose
from setup_env.probe.report import parse
from setup_env.probe.report.fields import MAX_GPUS
from setup_env.probe.report.layout import _Wrapped

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"
HEAD = FIXTURES / "linux-h100-cu130-driver570.txt"  # a whole report with every section


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _messages(n: int) -> str:
    """n copies of torch's real messages, each made distinct by a number (GPU name, driver)."""
    rtx = next(
        x for x in _lines(FIXTURES / "warning-only-rtx5090-sm120-torch2.0.1.txt") if "sm_120" in x
    )
    supports = next(
        x
        for x in _lines(FIXTURES / "warning-only-rtx5090-sm120-torch2.0.1.txt")
        if "supports CUDA capabilities" in x
    )
    old = _lines(FIXTURES / "warning-only-gt720-capability-3.5.txt")[2:5]
    driver = _lines(FIXTURES / "message-driver-too-old-11040-rtx3050.txt")[0]
    out: list[str] = []
    for i in range(n):
        out += [rtx.replace("RTX 5090", f"RTX 5090 v{i}"), supports]
        out += [x.replace("GT 720", f"GT 720 v{i}") for x in old]
        out.append(driver.replace("11040", str(10000 + i)))
    return "\n".join(out) + "\n"


def _sections(n: int) -> str:
    """One report's head, then its GPU list, cuDNN files, CPU block and libraries n times."""
    lines = _lines(HEAD)
    start = next(i for i, x in enumerate(lines) if x.startswith("GPU models"))
    return "\n".join(lines[:start] + lines[start:] * n) + "\n"


def _unclosed(n: int) -> str:
    """A Python version whose "(" never closes, absorbing n copies of a real report's CPU lines
    (none of them a key, a heading or a closing bracket)."""
    lines = _lines(HEAD)
    at = next(i for i, x in enumerate(lines) if x.startswith("Python version:"))
    prose = [
        x
        for x in _lines(FIXTURES / "linux-centos9-7x-rtx4090-chinese-lscpu.txt")
        if x.strip() and not any(c in x for c in ":[])")
    ]
    assert len(prose) >= 3, "the fixture no longer has lines to absorb"
    head = [*lines[:at], "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0"]
    return "\n".join(head + prose * n) + "\n"


def _gpus(n: int) -> str:
    """One report's head and a GPU list of n distinct GPUs."""
    lines = _lines(HEAD)
    start = next(i for i, x in enumerate(lines) if x.startswith("GPU models"))
    gpus = [f"GPU {i}: NVIDIA H100 80GB HBM3 v{i}" for i in range(n)]
    return "\n".join([*lines[: start + 1], *gpus]) + "\n"


def _warned_list(n: int) -> str:
    """One report's head, a GPU list of n GPUs of one model, then torch's sm_120 warning naming
    that model n times (each with its own arch list, so none is a repeat): listed GPUs the
    catalogue lacks get the warning's compute capability once, not once per warning. The
    model is "NVIDIA Graphics Device", the name a driver gives a GPU it does not know yet."""
    lines = _lines(HEAD)
    start = next(i for i, x in enumerate(lines) if x.startswith("GPU models"))
    warning = _lines(FIXTURES / "warning-only-rtx5090-sm120-torch2.0.1.txt")
    rtx = next(x for x in warning if "sm_120" in x)
    supports = next(x for x in warning if "supports CUDA capabilities" in x)
    assert supports.endswith(" sm_90."), supports
    rtx = rtx.replace("NVIDIA GeForce RTX 5090", "NVIDIA Graphics Device")
    gpus = [f"GPU {i}: NVIDIA Graphics Device" for i in range(n)]
    messages: list[str] = []
    for i in range(n):
        messages += [rtx, supports.replace(" sm_90.", f" sm_90 compute_{100 + i}.")]
    return "\n".join([*lines[: start + 1], *gpus, "", *messages]) + "\n"


def _opcodes(fn: Callable[[], Any]) -> int:
    """The bytecode instructions ``fn()`` executes (deterministic: no clock)."""
    count = 0

    def tracer(frame: FrameType, event: str, arg: Any) -> Optional[Callable[..., Any]]:
        nonlocal count
        frame.f_trace_opcodes = True
        frame.f_trace_lines = False
        if event == "opcode":
            count += 1
        return tracer

    parse(_sections(1))  # imports and the catalogue load, outside the count
    old = sys.gettrace()
    sys.settrace(tracer)  # type: ignore[arg-type]
    try:
        fn()
    finally:
        sys.settrace(old)
    return count


@pytest.mark.parametrize(
    ("shape", "n"),
    [(_messages, 60), (_sections, 15), (_unclosed, 40), (_gpus, 150), (_warned_list, 100)],
    ids=[
        "distinct-messages",
        "repeated-sections",
        "unclosed-python",
        "distinct-gpus",
        "warnings-of-a-listed-gpu",
    ],
)
def test_reading_work_grows_linearly(shape: Callable[[int], str], n: int) -> None:
    small, large = shape(n), shape(4 * n)
    assert 3.5 < len(large) / len(small) < 4.5
    work = _opcodes(lambda: parse(small)), _opcodes(lambda: parse(large))
    # Linear: about 4x (fixed costs make it less). Quadratic: about 16x.
    assert work[1] / work[0] < 5, work


def test_the_quadratic_counter_would_see_quadratic_work() -> None:
    # The measure itself: a deduplication against a list, as the reader had, is seen.
    def dedup(n: int) -> None:
        seen: list[int] = []
        for i in range(n):
            if all(s != i for s in seen):
                seen.append(i)

    assert _opcodes(lambda: dedup(400)) / _opcodes(lambda: dedup(100)) > 12


def test_the_wrapped_python_version_is_what_counting_brackets_says() -> None:
    # _Wrapped keeps the balance as lines arrive instead of re-counting the whole value each line
    # (quadratic, C-level, so invisible to the opcode count): the same answers on real lines.
    def unclosed(value: str) -> bool:
        return "runtime)" not in value and (
            value.count("(") > value.count(")") or value.count("[") > value.count("]")
        )

    lines = [x.strip() for x in _lines(HEAD) + _lines(FIXTURES / "macos10.15-no-torch-py27.txt")]
    lines += ["(", "[", ")", "]", "runtime", ")", "(64-bit runtime)", "x [y", "] (z"]
    for first in range(0, len(lines), 7):
        wrapped = _Wrapped()
        wrapped.start(lines[first])
        value = lines[first]
        for line in lines[first + 1 : first + 40]:
            assert wrapped.unclosed() == unclosed(value), value
            wrapped.add(line)
            value = value + " " + line
            assert wrapped.value() == value


def test_a_wrapped_python_version_is_read_whole() -> None:
    report = parse(_unclosed(3))
    value = report.fields["Python version"]
    assert value.startswith("3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0 ")
    assert report.facts.python.version == "3.10.12"


def test_a_gpu_list_longer_than_a_machine_is_read_to_the_cap_and_says_so() -> None:
    report = parse(_gpus(MAX_GPUS + 5))
    assert report.facts.nvidia is not None
    assert len(report.facts.nvidia.gpus) == MAX_GPUS
    assert "collect-env-gpus-capped" in {n.code for n in report.facts.notes}
    short = parse(_gpus(8))
    assert "collect-env-gpus-capped" not in {n.code for n in short.facts.notes}


def test_a_4_mb_report_is_accepted_and_a_larger_than_the_cap_is_refused(tmp_path: Path) -> None:
    big = _sections(1 + 5_000_000 // len(_sections(1)))
    assert 4 * 2**20 < len(big.encode()) < diagnose.MAX_BYTES
    path = tmp_path / "big.txt"
    path.write_text(big, encoding="utf-8")
    assert diagnose._read(str(path)) == big
    path.write_bytes(b"x" * (diagnose.MAX_BYTES + 1))
    with pytest.raises(ValueError, match=r"larger than 8 MiB"):
        diagnose._read(str(path))
