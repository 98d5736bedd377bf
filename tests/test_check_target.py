"""`setup-env check` for a target machine (a CI runner judging an image for a GPU fleet), image
policies (--expect), and the CI pages (--junit, --format markdown, $GITHUB_STEP_SUMMARY).

The target runs are real: the installed torch of this test venv (2.13.0+cpu), its real WHEEL file
and libraries read from disk; only the target machine is described (as `plan` describes one).
"""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.decide.verdict import (
    ExpectError,
    evaluate_expectations,
    parse_expect,
    target_arch_findings,
    target_platform_findings,
)
from setup_env.facts import Facts, Gpu, InstalledPackage, NvidiaInfo, OSInfo
from setup_env.knowledge.variant import CPU, Variant
from setup_env.probe import torch_arches
from setup_env.probe.torch_arches import TorchArches

FIXTURES = Path(__file__).parent / "fixtures"
HOSTS = FIXTURES / "hosts"
FATBIN = FIXTURES / "fatbin"
THIS_MACHINE = HOSTS / "debian12-nogpu-cuda13toolkit"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main([*argv, "--json"])
    out = capsys.readouterr().out
    return code, json.loads(out)


def _installed_torch() -> InstalledPackage | None:
    from setup_env.probe.detect import detect
    from setup_env.probe.host import LiveHost

    return detect(LiveHost()).package("torch")


# The test extras install torch==2.13.0, the CPU build: these tests need it (marked, so the
# Python 3.9 leg deselects them; where torch is missing or another build, they fail, not skip).
needs_cpu_torch = pytest.mark.torch


# --- done when: a CPU-only torch is not ready for an H100, ready for a CPU target --------------


@needs_cpu_torch
def test_cpu_torch_is_not_ready_for_an_h100(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "check", "--gpu", "H100", "--driver", "570.86.10", "--no-verify")
    body = doc["check"]
    assert code == 1
    assert body["verdict"]["state"] == "action-needed"
    codes = [f["code"] for f in body["findings"] if f["severity"] == "error"]
    assert "cpu-build-on-gpu" in codes
    # The arch list was read from the installed libraries: a CPU build has no fat binaries.
    assert body["torch_arches"]["sass"] == [] and body["torch_arches"]["files"] == []
    assert body["torch_arches"]["error"] is None
    assert any(t.endswith("_x86_64") for t in body["torch_arches"]["wheel_tags"])
    assert body["target"].startswith("the described machine")
    assert [g["name"] for g in body["facts"]["nvidia"]["gpus"]] == ["H100"]


@needs_cpu_torch
@pytest.mark.torch
def test_cpu_torch_is_ready_for_a_cpu_target_and_its_cpu_checks_run(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, doc = run_json(capsys, "check", "--os", "linux", "--arch", "x86_64")
    body = doc["check"]
    assert code == 0, body["verdict"]
    assert body["verdict"]["state"] == "ready"
    assert body["verdict"]["line"].startswith("READY: torch 2.13.0+cpu fits the described machine")
    assert body["verify"]["device"] == "cpu" and body["verify"]["ok"] is True


@needs_cpu_torch
def test_cloud_instance_target_with_policies(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(
        capsys,
        "check",
        "--cloud",
        "aws",
        "--instance-type",
        "p5.48xlarge",
        "--no-verify",
        "--expect",
        "torch>=2.13",
        "--expect",
        "variant=cu130",
    )
    body = doc["check"]
    assert code == 1
    assert body["target"] == "aws p5.48xlarge"
    assert body["expectations"] == [
        {"expect": "torch>=2.13", "ok": True, "actual": "2.13.0+cpu"},
        {"expect": "variant=cu130", "ok": False, "actual": "cpu"},
    ]
    titles = [f["title"] for f in body["findings"] if f["code"] == "expectation-not-met"]
    assert titles == ["expected variant=cu130, but variant is cpu"]


@needs_cpu_torch
def test_wheel_tags_against_the_targets_glibc_and_cpu(capsys: pytest.CaptureFixture[str]) -> None:
    # The installed wheel is manylinux_2_28 x86_64 (its real WHEEL file): CentOS 7's glibc 2.17
    # and an aarch64 machine can't run it.
    for extra, why in ((["--glibc", "2.17"], "needs glibc >= 2.28"), (["--arch", "aarch64"], "")):
        code, doc = run_json(capsys, "check", "--os", "linux", *extra, "--no-verify")
        found = [f for f in doc["check"]["findings"] if f["code"] == "wheel-platform-mismatch"]
        assert code == 1 and len(found) == 1, doc["check"]["findings"]
        assert why in found[0]["title"]
    code, doc = run_json(capsys, "check", "--os", "linux", "--glibc", "2.35", "--no-verify")
    assert code == 0
    assert "wheel-platform-mismatch" not in [f["code"] for f in doc["check"]["findings"]]


def test_target_python_must_be_this_environments() -> None:
    from setup_env.decide.verdict import target_python_findings
    from setup_env.facts import PythonInfo

    facts = Facts(python=PythonInfo(version="3.11.7"))
    assert target_python_findings(facts, "3.11") == ()
    (found,) = target_python_findings(facts, "3.12")
    assert found.code == "python-not-target" and found.severity == "error"


def test_target_and_root_together_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(capsys, "check", "--root", str(THIS_MACHINE), "--gpu", "H100")
    assert code == 2 and doc["error"]["code"] == "bad-input"


# --- the installed torch's real architectures (fat binaries on disk) -----------------------------


def _fake_site(tmp_path: Path, lib: str) -> InstalledPackage:
    """A site-packages whose torch/lib holds a real nvcc-built library as libtorch_cuda.so."""
    libdir = tmp_path / "torch" / "lib"
    libdir.mkdir(parents=True)
    shutil.copy(FATBIN / lib, libdir / "libtorch_cuda.so")
    (libdir / "libtorch_cpu.so").write_bytes(b"\x7fELF" + b"\0" * 60)  # no section table
    return InstalledPackage(
        "torch", "2.9.0+cu130", location=str(tmp_path), variant=Variant.parse("cu130")
    )


def _cuobjdump(lib: str) -> tuple[set[str], set[str]]:
    """What NVIDIA's cuobjdump listed in the library (tests/fixtures/fatbin/*.cuobjdump.txt)."""
    sass, ptx = set(), set()
    for line in (FATBIN / f"{lib}.cuobjdump.txt").read_text().splitlines():
        arch = line.rsplit(".", 2)[-2]  # libtiny.1.sm_75.cubin -> sm_75
        (sass if line.startswith("ELF") else ptx).add(arch)
    return sass, {a.replace("sm_", "compute_") for a in ptx}


@pytest.mark.parametrize("lib", ["libtiny.so", "libvar.so"])
def test_arches_read_from_the_installed_libraries_match_cuobjdump(tmp_path: Path, lib: str) -> None:
    got = torch_arches.read(_fake_site(tmp_path, lib))
    assert got is not None and got.error is None
    sass, ptx = _cuobjdump(lib)
    # cuobjdump names family targets by their sm (sm_100); the reader keeps the suffix (sm_100f).
    assert {a.rstrip("f") for a in got.sass} == sass
    assert set(got.ptx) == ptx
    assert got.files == ("torch/lib/libtorch_cuda.so",)


def _gpu_facts(torch: InstalledPackage, *ccs: str) -> Facts:
    gpus = tuple(Gpu(i, f"GPU sm_{cc}", compute_capability=cc) for i, cc in enumerate(ccs))
    return Facts(
        os=OSInfo(family="linux"),
        nvidia=NvidiaInfo(driver_version="580.82.07", gpus=gpus),
        packages=(torch,),
    )


@pytest.mark.parametrize(
    ("lib", "cc", "code"),
    [
        ("libtiny.so", "9.0", None),  # SASS sm_90
        ("libtiny.so", "8.6", None),  # sm_80 SASS runs on 8.6 (same major, lower minor)
        ("libtiny.so", "12.0", "gpu-arch-ptx-only"),  # only compute_90 PTX can serve it
        ("libtiny.so", "6.0", "gpu-arch-not-in-wheel"),  # Pascal: nothing
        ("libvar.so", "9.0", None),  # sm_90a runs on exactly 9.0
        ("libvar.so", "8.0", "gpu-arch-not-in-wheel"),
    ],
)
def test_target_gpus_against_the_real_arches(
    tmp_path: Path, lib: str, cc: str, code: str | None
) -> None:
    torch = _fake_site(tmp_path, lib)
    arches = torch_arches.read(torch)
    found, replaces = target_arch_findings(_gpu_facts(torch, cc), arches)
    assert replaces is True
    assert [f.code for f in found] == ([code] if code else [])


def test_unreadable_arches_fall_back_to_the_matrix(tmp_path: Path) -> None:
    torch = InstalledPackage(
        "torch", "2.9.0+cu130", location=str(tmp_path), variant=Variant.parse("cu130")
    )
    arches = torch_arches.read(torch)  # no torch/lib at all
    assert arches is not None and arches.error
    found, replaces = target_arch_findings(_gpu_facts(torch, "9.0"), arches)
    assert replaces is False and [f.code for f in found] == ["gpu-arch-unread"]


@pytest.mark.torch
def test_wheel_tags_parse_the_real_wheel_file() -> None:
    torch = _installed_torch()
    assert torch is not None, "the test extras install torch==2.13.0"
    tags = torch_arches.wheel_tags(torch)
    assert tags and all(t.count("-") == 2 for t in tags)


@pytest.mark.parametrize(
    ("tags", "glibc", "arch", "bad"),
    [
        (("cp312-cp312-manylinux_2_28_x86_64",), "2.28", "x86_64", False),
        (("cp312-cp312-manylinux_2_28_x86_64",), "2.27", "x86_64", True),
        (("cp312-cp312-manylinux2014_aarch64",), "2.17", "aarch64", False),
        (("cp312-cp312-manylinux2014_aarch64",), "2.17", "x86_64", True),
        (("cp312-cp312-win_amd64",), None, "x86_64", True),  # a Windows wheel on Linux
        (("py3-none-any",), "2.5", "x86_64", False),
    ],
)
def test_platform_of_wheel_tags(
    tags: tuple[str, ...], glibc: str | None, arch: str, bad: bool
) -> None:
    facts = Facts(os=OSInfo(family="linux", glibc=glibc))
    found = target_platform_findings(facts, tags, arch)
    assert [f.code for f in found] == (["wheel-platform-mismatch"] if bad else [])


# --- --expect ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("torch>=2.13", True),
        ("torch>=2.14", False),
        ("torch==2.13.*", True),
        ("torch<2.13", False),
        ("variant=cpu", True),
        ("variant==cu130", False),
        ("variant!=cu130", True),
        ("python=3.12", True),
        ("python=3.1", False),  # 3.12.7 is not 3.1
        ("torchvision>=0.1", False),  # not installed
    ],
)
def test_expectations(text: str, ok: bool) -> None:
    from setup_env.facts import PythonInfo

    facts = Facts(
        python=PythonInfo(version="3.12.7"),
        packages=(InstalledPackage("torch", "2.13.0+cpu", variant=CPU),),
    )
    (result,) = evaluate_expectations(facts, [parse_expect(text)])
    assert result.ok is ok


@pytest.mark.parametrize(
    "text", ["torch>>2", "gpu=H100", "torch[cuda]>=2", "torch; python_version>'3'"]
)
def test_bad_expectations_are_usage_errors(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ExpectError):
        parse_expect(text)
    code, doc = run_json(capsys, "check", "--root", str(THIS_MACHINE), "--expect", text)
    assert code == 2 and doc["error"]["code"] == "bad-input"


def test_torch_arches_type_is_plain_data() -> None:
    a = TorchArches(sass=("sm_90",), ptx=("compute_90",))
    assert a.arches == ("sm_90", "compute_90")


# --- CI pages -----------------------------------------------------------------------------------


def test_junit_every_stage_and_finding_a_testcase(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    out = tmp_path / "check.xml"
    code = main(
        ["check", "--root", str(HOSTS / "linux-aws-g5-nitro-nodriver"), "--junit", str(out)]
    )
    capsys.readouterr()
    assert code == 1
    root = ET.parse(out).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    cases = {(c.get("classname"), c.get("name")): c for c in suite.iter("testcase")}
    stages = [n for (cls, n) in cases if cls == "setup-env.check.stage"]
    assert stages == ["detect", "plan", "doctor", "verify", "verdict"]
    assert cases[("setup-env.check.stage", "verify")].find("skipped") is not None
    assert cases[("setup-env.check.doctor", "gpu-without-driver")].find("failure") is not None
    # one problem, one failed testcase: the doctor stage and the verdict sum it up, passing
    failed = [k for k, c in cases.items() if c.find("failure") is not None]
    assert failed == [("setup-env.check.doctor", "gpu-without-driver")]
    assert "gpu-without-driver" in (
        cases[("setup-env.check.stage", "doctor")].findtext("system-out") or ""
    )
    assert cases[("setup-env.check.stage", "verdict")].findtext("system-out")
    assert int(suite.get("tests", "0")) == len(cases)
    assert int(suite.get("failures", "0")) == len(failed)


def test_markdown_page_and_github_step_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    assert main(["check", "--root", str(THIS_MACHINE), "--format", "markdown"]) == 0
    page = capsys.readouterr().out
    written = summary.read_text()
    assert written.startswith("# earlier step\n")  # appended, as GitHub steps share the file
    assert page.strip() in written
    assert "## setup-env check" in page
    assert "✅ **READY: torch 2.13.0+cpu is installed and fits this machine" in page
    assert "| torch | 2.13.0+cpu |" in page
    assert "(`toolkit-without-driver`)" in page
    assert "### Verify" in page and "a replayed machine" in page


def test_step_summary_can_be_turned_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    main(["check", "--root", str(THIS_MACHINE), "--no-step-summary"])
    capsys.readouterr()
    assert not summary.exists()


def test_markdown_escapes_what_the_machine_says() -> None:
    from setup_env.output.render_check import md

    assert md("a|b <script> `x` *y*\nz") == r"a\|b \<script\> \`x\` \*y\* z"


# --- output fixes -------------------------------------------------------------------------------


def test_check_shows_its_findings_and_the_command_once(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["check", "--root", str(THIS_MACHINE)]) == 0
    out = capsys.readouterr().out
    assert "doctor: 1 note" in out
    assert "INFO  CUDA toolkit 13.0 is installed" in out  # the note itself, not just its count

    assert main(["check", "--root", str(HOSTS / "ubuntu2404-cpu-only")]) == 1
    lines = capsys.readouterr().out.rstrip().splitlines()
    command = "pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cpu"
    assert lines[-2] == "ACTION NEEDED: install torch 2.15.0 (cpu)"
    assert lines[-1] == f"  $ {command}"
    assert sum(command in line for line in lines) == 1


def test_driver_versions_keep_nvidias_spelling(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 520.61.05 (CUDA 11.8's driver): the zero is NVIDIA's; a parsed Version would print 520.61.5.
    monkeypatch.setenv("NO_COLOR", "1")
    argv = ["--gpu", "RTX 3090", "--driver", "520.61.05", "--no-verify"]
    main(["check", *argv])
    text = capsys.readouterr().out
    assert "NVIDIA 520.61.05" in text
    _, doc = run_json(capsys, "check", *argv)
    both = text + json.dumps(doc)
    assert "520.61.5" not in both
    assert doc["check"]["facts"]["nvidia"]["driver_version"] == "520.61.05"
