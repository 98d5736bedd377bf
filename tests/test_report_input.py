"""What `diagnose` accepts as a report: quoting, encodings, line ends, and input that used to
hang it (issue 11 row 1). The texts are the real reports of tests/fixtures/collect_env/, re-encoded
or re-quoted the way people paste them."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.probe.report import decode, parse

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"
REPO = Path(__file__).resolve().parent.parent


def _diagnose_stdin(data: bytes, timeout: float) -> subprocess.CompletedProcess[bytes]:
    """The installed CLI in a child, so a hang is a failed test (TimeoutExpired), not a stuck
    suite."""
    return subprocess.run(
        [sys.executable, "-m", "setup_env", "diagnose", "--json", "-"],
        input=data,
        capture_output=True,
        timeout=timeout,
        cwd=REPO,
        check=False,
    )


def test_a_quote_marker_without_a_space_does_not_hang() -> None:
    # Issue 11 row 1: `_clean_line` looped forever on ">x".
    proc = _diagnose_stdin(b"PyTorch version: 2.13.0\n>x\n", timeout=30)
    doc = json.loads(proc.stdout)
    assert doc["diagnose"]["facts"]["packages"][0]["version"] == "2.13.0"


def test_a_long_quote_prefix_is_read_in_linear_time() -> None:
    # Issue 11 row 1: 2 MB of "> > > ..." took 114 s (quadratic). A real report, quoted that
    # deep: the line of quote markers is 2 MB.
    report = (FIXTURES / "linux-h100-cu130-driver570.txt").read_text(encoding="utf-8")
    deep = "> " * 1_000_000
    lines = report.splitlines()
    first = next(i for i, x in enumerate(lines) if x.startswith("PyTorch version"))
    text = "\n".join([deep + lines[first], *lines[first + 1 :]])
    start = time.monotonic()
    proc = _diagnose_stdin(text.encode(), timeout=60)
    elapsed = time.monotonic() - start
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["diagnose"]["facts"]["packages"][0]["version"] == "2.9.0"
    assert elapsed < 30  # the quadratic reader needed minutes for this


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda t: t.encode("utf-16"), id="utf-16-with-bom"),
        pytest.param(lambda t: t.encode("utf-16-le"), id="utf-16-le-no-bom"),
        pytest.param(lambda t: t.encode("utf-16-be"), id="utf-16-be-no-bom"),
        pytest.param(lambda t: b"\xef\xbb\xbf" + t.encode("utf-8"), id="utf-8-with-bom"),
        pytest.param(lambda t: t.replace("\n", "\r\n").encode("utf-8"), id="crlf"),
        pytest.param(
            lambda t: ("\ufeff" + t.replace("\n", "\r\n")).encode("utf-16-le"),
            id="powershell-redirect",
        ),
    ],
)
def test_encodings_read_the_same(encode: Any, tmp_path: Path) -> None:
    name = "windows11-xpu-torch2.7.1.txt"  # a Windows report, with non-ASCII text in it
    text = (FIXTURES / name).read_text(encoding="utf-8")
    data = encode(text)
    assert parse(decode(data)).facts == parse(text).facts
    path = tmp_path / "report.txt"
    path.write_bytes(data)
    assert main(["diagnose", "--json", str(path)]) in (0, 1)


def test_binary_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(bytes(range(256)) * 8)
    assert main(["diagnose", "--json", str(path)]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "bad-input"


def test_text_with_none_of_the_facts_is_refused_with_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # The prose around a real report, without the report.
    path = tmp_path / "prose.txt"
    lines = (FIXTURES / "windows-server2019-titanrtx-quoted.txt").read_text().splitlines()
    path.write_text("\n".join(lines[1:4]) + "\n", encoding="utf-8")
    assert main(["diagnose", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not a `python -m torch.utils.collect_env` report" in err


def test_hand_edited_keys_read_like_the_original() -> None:
    # The same report with its keys re-typed: lower case, odd spacing, a lost colon.
    text = (FIXTURES / "linux-h100-cu130-driver570.txt").read_text(encoding="utf-8")
    edited = (
        text.replace("PyTorch version: ", "pytorch VERSION ")
        .replace("OS: ", "os : ")
        .replace("Nvidia driver version:", "NVIDIA  driver version :")
    )
    a, b = parse(text), parse(edited)
    assert a.facts.package("torch") == b.facts.package("torch")
    assert a.facts.os == b.facts.os
    assert a.facts.nvidia == b.facts.nvidia


def test_a_ci_logs_timestamps_are_not_part_of_the_report() -> None:
    # A report printed in a GitHub Actions log, each line behind its timestamp (the form of
    # intel/torch-xpu-ops#3699): the same facts as the report pasted plain.
    plain = (FIXTURES / "linux-h100-cu130-driver570.txt").read_text(encoding="utf-8")
    logged = "\n".join(
        f"2026-05-16T15:56:05.{8600560 + i}Z {line}" for i, line in enumerate(plain.splitlines())
    )
    assert parse(logged).facts == parse(plain).facts
    # A line that only starts like a date keeps its text.
    assert parse("PyTorch version: 2.9.0\n2026-05-16 was a Saturday\n").fields == {
        "PyTorch version": "2.9.0"
    }
