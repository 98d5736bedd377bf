"""`setup-env detect` in-process: whole JSON documents, exit codes, the readable summary."""

from __future__ import annotations

import json
import platform
from pathlib import Path

import pytest

from setup_env import __version__
from setup_env.cli import main

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    "name", ["debian12-nogpu-cuda13toolkit", "ubuntu2204-rocm623-8x-mi300x", "macos14-m1-arm64"]
)
def test_json_is_the_envelope_of_the_expected_facts(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    code, out, err = run(capsys, "detect", "--json", "--root", str(HOSTS / name))
    assert (code, err) == (0, "")
    expected = json.loads((HOSTS / name / "expected.json").read_text(encoding="utf-8"))
    assert json.loads(out) == {
        "schema": "setup-env/facts",
        "schema_version": 1,
        "tool": {"name": "setup-env", "version": __version__},
        "facts": expected,
    }


def test_not_a_capture_exits_3_with_an_error_document(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(capsys, "detect", "--json", "--root", str(tmp_path))
    assert code == 3
    assert json.loads(out) == {
        "schema": "setup-env/error",
        "schema_version": 1,
        "tool": {"name": "setup-env", "version": __version__},
        "error": {
            "code": "unexaminable",
            "message": f"{tmp_path} is not a captured machine: no host.json",
        },
    }
    assert err == f"setup-env detect: {tmp_path} is not a captured machine: no host.json\n"
    code, out, err = run(capsys, "detect", "--root", str(tmp_path / "missing"))
    assert (code, out) == (3, "")
    assert "Traceback" not in err


def test_usage_error_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "detect", "--no-such-flag")
    assert code == 2 and "unrecognized arguments: --no-such-flag" in err


def test_summary_of_this_machine(capsys: pytest.CaptureFixture[str]) -> None:
    root = HOSTS / "debian12-nogpu-cuda13toolkit"
    code, out, err = run(capsys, "detect", "--no-color", "--root", str(root))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "Machine (replay:debian12-nogpu-cuda13toolkit)"
    assert lines[1].startswith("  OS        Debian GNU/Linux 12 (bookworm), kernel ")
    assert "glibc 2.36, docker container" in lines[1]
    assert lines[2].startswith("  Python    3.11.7 (cpython, x86_64)")
    assert "  No GPU found (no NVIDIA driver, no AMD or Intel GPU)" in lines
    assert "  13.0.88 at /usr/local/cuda-13.0  (nvcc: /usr/local/bin/nvcc)" in lines
    assert any("does not decide which PyTorch wheel" in line for line in lines)
    assert "  torch 2.13.0+cpu (cpu, pip)" in lines
    assert "\x1b[" not in out


def test_verbose_shows_sources_and_the_gpu_table(capsys: pytest.CaptureFixture[str]) -> None:
    root = HOSTS / "ubuntu2204-rocm623-8x-mi300x"
    code, out, _ = run(capsys, "detect", "-v", "--no-color", "--root", str(root))
    assert code == 0
    assert "            /etc/os-release: distro_id, distro_name, distro_version" in out
    table = [line for line in out.splitlines() if "MI300X" in line]
    assert table[0].split() == [
        "0",
        "AMD",
        "Instinct",
        "MI300X",
        "gfx942",
        "192.0",
        "GiB",
        "0000:1b:00.0",
    ]
    assert len(table) == 8
    assert "  ROCm 6.2.3    amdgpu driver 6.8.5" in out


def test_notes_come_last(capsys: pytest.CaptureFixture[str]) -> None:
    root = HOSTS / "macos-m1pro-rosetta-x86_64"
    code, out, _ = run(capsys, "detect", "--no-color", "--root", str(root))
    assert code == 0
    tail = out.rstrip("\n").splitlines()[-2:]
    assert tail[0] == "Notes"
    assert tail[1].startswith("  warning this Python is x86_64 running under Rosetta 2")
    assert "MPS-capable hardware (not usable from this x86_64 Python)" in out


def test_live_detect_json_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    from setup_env.facts import Facts

    code, out, _ = run(capsys, "detect", "--json")
    assert code == 0
    facts = Facts.from_json(out)
    assert facts.python.version == platform.python_version()
    assert facts.os.family == {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}.get(
        platform.system(), "other"
    )
