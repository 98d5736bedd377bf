"""The machine seam: LiveHost against this machine, ReplayHost against small captured folders."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from setup_env.probe.host import LiveHost, RecordingHost, ReplayError, ReplayHost


def make_replay(root: Path, doc: dict[str, Any], files: dict[str, str] | None = None) -> ReplayHost:
    root.mkdir(parents=True, exist_ok=True)
    (root / "host.json").write_text(json.dumps(doc), encoding="utf-8")
    for path, text in (files or {}).items():
        local = root / "files" / path.lstrip("/").replace(":", "%3A")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_text(text, encoding="utf-8")
    return ReplayHost(root)


def test_live_run_times_out_on_a_hung_command() -> None:
    start = time.monotonic()
    result = LiveHost().run(["sleep", "10"], timeout=0.2)
    elapsed = time.monotonic() - start
    assert (result.error, result.returncode, result.ok) == ("timeout", None, False)
    assert elapsed < 5
    assert "did not answer in time (0.2 s)" in result.describe()


def test_live_run_reports_a_missing_program() -> None:
    result = LiveHost().run(["setup-env-no-such-program-xyz"], timeout=1)
    assert result.error == "not-found"
    assert result.describe() == "setup-env-no-such-program-xyz not found"


def test_live_run_captures_output_and_exit_status() -> None:
    result = LiveHost().run([sys.executable, "-c", "import sys; print('hi'); sys.exit(3)"])
    assert (result.returncode, result.stdout, result.ok) == (3, "hi\n", False)


def test_live_read_errors_are_values_not_exceptions(tmp_path: Path) -> None:
    host = LiveHost()
    assert host.read(str(tmp_path / "absent")).error == "missing"
    assert host.read(str(tmp_path)).error == "not-a-file"
    big = tmp_path / "big"
    big.write_bytes(b"x" * 100)
    assert host.read(str(big), max_bytes=10).error == "too-large"


def test_live_interpreter_records_wheel_tags_of_its_own_abi() -> None:
    interp = LiveHost().interpreter()
    tags = interp["tags"]
    assert tags and all(t.split("-")[:2] == tags[0].split("-")[:2] for t in tags)
    # sys.path as `python -c` sees it: not this program's own first entry.
    assert interp["sys_path"] == [p for p in sys.path[1:] if p]


def test_replay_without_host_json_is_a_replay_error(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match=r"no host\.json"):
        ReplayHost(tmp_path)
    (tmp_path / "host.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ReplayError, match="unreadable"):
        ReplayHost(tmp_path)


def test_replay_unreadable_timeout_links_and_colons(tmp_path: Path) -> None:
    host = make_replay(
        tmp_path,
        {
            "unreadable": ["/proc/cpuinfo"],
            "links": {"/usr/local/cuda": "/usr/local/cuda-12.4"},
            "exists": ["/dev/kfd"],
            "dirs": {"/opt": ["rocm"]},
            "commands": [
                {"argv": ["rocminfo"], "returncode": None, "error": "timeout"},
            ],
        },
        {
            "/usr/local/cuda-12.4/version.json": "{}",
            "/sys/bus/pci/devices/0000:03:00.0/vendor": "0x1002\n",
        },
    )
    read = host.read("/proc/cpuinfo")
    assert (read.text, read.error) == (None, "permission-denied")
    timed_out = host.run(["rocminfo"], timeout=10)
    assert timed_out.error == "timeout" and "10 s" in timed_out.describe()
    assert host.run(["nvidia-smi"]).error == "not-found"
    assert host.read_text("/usr/local/cuda/version.json") == "{}"
    assert host.realpath("/usr/local/cuda/bin/nvcc") == "/usr/local/cuda-12.4/bin/nvcc"
    assert host.listdir("/usr/local") == ("cuda", "cuda-12.4")
    assert host.listdir("/sys/bus/pci/devices") == ("0000:03:00.0",)
    assert host.read_text("/sys/bus/pci/devices/0000:03:00.0/vendor") == "0x1002\n"
    assert host.exists("/dev/kfd") and host.exists("/opt") and not host.exists("/nope")
    assert host.listdir("/opt") == ("rocm",)


def test_replay_reads_hand_written_colon_names(tmp_path: Path) -> None:
    # A folder written by hand with the raw ':' (Linux only) is read as well.
    host = make_replay(tmp_path, {})
    raw = tmp_path / "files" / "proc/driver/nvidia/gpus/0000:01:00.0/information"
    raw.parent.mkdir(parents=True)
    raw.write_text("Model: Tesla T4\n", encoding="utf-8")
    assert host.read_text("/proc/driver/nvidia/gpus/0000:01:00.0/information") == (
        "Model: Tesla T4\n"
    )


def test_recording_host_writes_down_what_was_asked(tmp_path: Path) -> None:
    inner = make_replay(
        tmp_path,
        {"which": {"nvcc": "/usr/bin/nvcc"}, "unreadable": ["/secret"]},
        {"/etc/os-release": "ID=debian\n"},
    )
    rec = RecordingHost(inner)
    rec.read_text("/etc/os-release")
    rec.read_text("/secret")
    rec.which("nvcc")
    rec.run(["nvcc", "--version"])
    assert rec.files == {"/etc/os-release": "ID=debian\n"}
    assert rec.unreadable == {"/secret"}
    assert rec.which_seen == {"nvcc": "/usr/bin/nvcc"}
    assert [c.argv for c in rec.commands] == [("nvcc", "--version")]
