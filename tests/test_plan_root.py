"""`plan --root DIR` with spec flags (`--gpu`, `--driver`...): the captured machine's OS, CPU and
Python, read through the Host seam, with the named GPUs. Before, the command read this machine's
``platform.system()`` for the what-if, so it refused ``--root`` with ``--gpu`` (exit 2): a Windows
or Mac capture could not be planned for another GPU.

Each case compares the whole plan with the one for the same machine spelled out by hand from the
capture's expected.json (``--os --arch --python --glibc/--macos``), so the facts read through
the seam are the capture's, not this machine's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

HOSTS = Path(__file__).parent / "fixtures" / "hosts"


@pytest.fixture(autouse=True)
def _bundled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(mx.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def plan_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["plan", "--json", *argv])
    out = capsys.readouterr().out
    doc: dict[str, Any] = json.loads(out)
    return code, doc


def spelled_out(host: str) -> list[str]:
    """The spec flags for a captured machine, from what its expected.json says was detected."""
    exp = json.loads((HOSTS / host / "expected.json").read_text())
    os_name = {"darwin": "macos"}.get(exp["os"]["family"], exp["os"]["family"])
    machine = exp["python"]["machine"].lower()
    argv = ["--os", os_name, "--arch", {"amd64": "x86_64"}.get(machine, machine)]
    if exp["python"]["version"]:
        argv += ["--python", ".".join(exp["python"]["version"].split(".")[:2])]
    if exp["os"]["glibc"]:
        argv += ["--glibc", exp["os"]["glibc"]]
    if exp["os"]["macos_version"]:
        argv += ["--macos", exp["os"]["macos_version"]]
    return argv


@pytest.mark.parametrize(
    ("host", "gpu"),
    [
        ("windows-geforce-526", ["--gpu", "RTX 4090", "--driver", "560.94"]),
        ("macos14-m1-arm64", ["--gpu", "M1"]),
        ("macos-m1pro-rosetta-x86_64", ["--gpu", "M1 Pro"]),
        ("amzn2-glibc226-cpu", ["--gpu", "A10G", "--driver", "535.104.05"]),
    ],
)
def test_root_with_a_gpu_plans_for_the_captured_os(
    capsys: pytest.CaptureFixture[str], host: str, gpu: list[str]
) -> None:
    code, got = plan_json(capsys, "--root", str(HOSTS / host), *gpu)
    want_code, want = plan_json(capsys, *spelled_out(host), *gpu)
    assert code == want_code, got
    assert got["plan"]["machine"].startswith(f"captured machine {HOSTS / host} (")
    got["plan"]["machine"] = want["plan"]["machine"]
    assert got == want
    exp = json.loads((HOSTS / host / "expected.json").read_text())
    assert got["plan"]["facts"]["os"] in (exp["os"]["family"], {"darwin": "macos"}.get(
        exp["os"]["family"]))  # fmt: skip


def test_root_windows_plan_is_a_windows_plan(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = plan_json(
        capsys, "--root", str(HOSTS / "windows-geforce-526"), "--gpu", "RTX 4090",
        "--driver", "560.94",
    )  # fmt: skip
    assert code == 0
    plan = doc["plan"]
    assert plan["facts"]["os"] == "windows" and plan["facts"]["glibc"] is None
    # a CUDA build from PyTorch's index: on Windows plain PyPI serves CPU builds only
    assert plan["source"] == "index" and Variant.parse(plan["variant"]).is_cuda


def test_root_and_os_still_conflict(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["plan", "--root", str(HOSTS / "macos14-m1-arm64"), "--os", "linux"])
    _, err = capsys.readouterr()
    assert code == 2 and "--root can't be combined with --os" in err
