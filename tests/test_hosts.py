"""Every captured machine under tests/fixtures/hosts/ replays to its expected facts.

Adding a machine to the tests means adding a folder (host.json, files/, commands/, SOURCES.md,
expected.json written by ``setup-env capture --expected DIR`` and reviewed by a person).
"""

from __future__ import annotations

import difflib
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from setup_env.facts import Facts
from setup_env.knowledge.variant import CPU
from setup_env.probe.detect import detect
from setup_env.probe.host import LiveHost, ReplayHost

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
ROOT = Path(__file__).resolve().parent.parent
FOLDERS = sorted(p for p in HOSTS.iterdir() if p.is_dir())


def _diff(expected: object, actual: object) -> str:
    a = json.dumps(expected, indent=2, sort_keys=True).splitlines()
    b = json.dumps(actual, indent=2, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(a, b, "expected.json", "replayed", lineterm="", n=2))


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_host_replays_to_expected_facts(folder: Path) -> None:
    expected_path = folder / "expected.json"
    assert expected_path.is_file(), f"{folder.name}: no expected.json"
    assert (folder / "SOURCES.md").is_file(), f"{folder.name}: no SOURCES.md naming its sources"
    expected = json.loads(expected_path.read_text(encoding="utf-8"))
    facts = detect(ReplayHost(folder))
    actual = facts.to_dict()
    if actual != expected:
        pytest.fail(
            f"{folder.name} no longer replays to its expected facts "
            f"(if the change is intended, review and run "
            f"`setup-env capture --expected {folder}`):\n{_diff(expected, actual)}"
        )
    # The facts document survives a JSON round trip unchanged.
    assert Facts.from_json(facts.to_json()).to_dict() == expected


def test_there_are_hosts() -> None:
    assert len(FOLDERS) >= 7


# --- this machine: what the issue asks detect to report -------------------------------------


def test_this_machine_fixture_reports_debian_python_toolkit_and_torch() -> None:
    facts = detect(ReplayHost(HOSTS / "debian12-nogpu-cuda13toolkit"))
    assert (facts.os.distro_id, facts.os.distro_version) == ("debian", "12")
    assert facts.python.version.startswith("3.11.")
    assert facts.nvidia is None and facts.gpus == ()
    assert [(t.version, t.full_version) for t in facts.toolkits] == [("13.0", "13.0.88")]
    torch = facts.package("torch")
    assert torch is not None and (torch.version, torch.variant) == ("2.13.0+cpu", CPU)


# --- the capture script ------------------------------------------------------------------


def _capture_module() -> ModuleType:
    from setup_env.act import capture

    return capture


def test_capture_of_this_machine_replays_to_the_live_facts(tmp_path: Path) -> None:
    capture = _capture_module()
    live = capture.capture(tmp_path / "cap")
    replayed = detect(ReplayHost(tmp_path / "cap")).to_dict()
    assert replayed == live
    # Nothing bulky was copied: no library, no whole site-packages.
    files = [p for p in (tmp_path / "cap").rglob("*") if p.is_file()]
    assert all(p.stat().st_size < 1_000_000 for p in files)
    assert not any(p.suffix in (".so", ".py") and p.name != "version.py" for p in files)


def test_capture_redacts_identifiers() -> None:
    capture = _capture_module()
    redact = capture.make_redactor()
    text = (
        "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-6f4d3c2a-1b2c-4d5e-8f90-123456789abc)\n"
        "    Serial Number                         : 1564720004631\n"
        "  Uuid:                    GPU-124d13ccd7b050e5\n"
        "instance-id: i-0abc123def4567890\n"
    )
    assert redact(text) == (
        "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-00000000-0000-0000-0000-000000000000)\n"
        "    Serial Number                         : REDACTED\n"
        "  Uuid:                    GPU-XX\n"
        "instance-id: i-00000000000000000\n"
    )
    tree = capture.redact_tree({"gpus": [{"uuid": "GPU-1", "serial": "42", "name": "T4"}]}, redact)
    assert tree == {"gpus": [{"uuid": "REDACTED", "serial": "REDACTED", "name": "T4"}]}


def test_capture_paths_with_colons_replay(tmp_path: Path) -> None:
    capture = _capture_module()
    assert capture.local_name("/sys/bus/pci/devices/0000:03:00.0/class") == (
        "sys/bus/pci/devices/0000%3A03%3A00.0/class"
    )
    assert capture.local_name("C:\\Program Files\\x") == "C/Program Files/x"


def test_live_detection_reports_what_the_interpreter_itself_knows() -> None:
    # Only what cannot differ between the machine and this interpreter's own view of it: any
    # machine (a CI runner, a laptop) passes, and a probe that misreads the live machine fails.
    import platform

    live = detect(LiveHost())
    family = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}.get(platform.system())
    assert live.os.family == (family or "other")
    assert live.python.version == platform.python_version()
    assert live.python.machine == platform.machine()
    assert live.python.executable == sys.executable
    assert live.python.free_threaded is bool(
        getattr(sys, "_is_gil_enabled", lambda: True)() is False
    )
    if family == "linux" and platform.libc_ver()[0] == "glibc":
        assert live.os.libc == "glibc"
        assert live.os.glibc == platform.libc_ver()[1]
    if family == "linux":
        assert live.os.kernel == platform.release()


def test_a_hung_nvidia_smi_with_an_nvidia_gpu_on_the_bus_is_not_a_machine_without_a_gpu() -> None:
    from setup_env.decide.doctor import examine

    facts = detect(ReplayHost(HOSTS / "linux-h100-nvidia-smi-hangs"))
    assert facts.nvidia is not None and facts.nvidia.error_code == "gpu-unexaminable"
    assert "0000:19:00.0" in (facts.nvidia.error or "") and "hung" in (facts.nvidia.error or "")
    finding = next(f for f in examine(facts, None, None) if f.code == "gpu-unexaminable")
    assert finding.severity == "error" and "could not be examined" in finding.title
