"""Issue 18: diagnose answers from every piece of evidence in a report. What a report implies is
inferred (each fact with its source), what it leaves open is assumed and said with the answer the
other value gives, Intel XPU reports are read, and a missing NVIDIA driver is its own cause.
Reports are the real ones in tests/fixtures/collect_env/ (each with its .source)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.decide import causes
from setup_env.decide.doctor import examine
from setup_env.facts import Facts, Gpu, InstalledPackage, Note, OSInfo, PythonInfo, XpuInfo
from setup_env.knowledge.cuda import driver_fit
from setup_env.knowledge.matrix import in_use
from setup_env.knowledge.variant import Variant
from setup_env.probe.report import parse
from setup_env.probe.report.infer import windows_only_driver

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def _json(capsys: pytest.CaptureFixture[str], name: str) -> dict[str, Any]:
    main(["diagnose", "--json", str(FIXTURES / name)])
    body: dict[str, Any] = json.loads(capsys.readouterr().out)["diagnose"]
    return body


def test_python_and_os_from_a_site_packages_path() -> None:
    """A report cut before its OS and Python lines: its warning's path names both."""
    report = parse(_read("linux-driver-too-old-9010-cu102.txt"))
    assert {"os", "python"} <= set(report.missing)  # the paste lacks both lines
    for facts in (report.facts, report.planning):
        assert facts is not None
        assert facts.python.version == "3.8"
        assert facts.os.family == "linux"
    assert report.facts.python.sources["version"].startswith("inferred: ")
    sources = {e.fact: e.source for e in report.evidence}
    assert sources["python"].startswith("inferred: a site-packages path")
    assert sources["os"].startswith("inferred: a Linux path")


def test_cuda_available_with_a_cuda_build_means_a_driver_at_its_floor() -> None:
    """`Is CUDA available: True` with torch 2.x+cu121 and no driver line: the driver runs CUDA
    12.1, so it is at least the floor the matrix's CUDA rules give (not a constant here)."""
    report = parse(_read("linux-4x-h100-mig-details.txt"))
    matrix = in_use()
    assert matrix is not None
    fit = driver_fit(None, "12.1", "linux", matrix.cuda)
    floor = fit.mvc_floor or fit.toolkit_min
    driver = [e for e in report.evidence if e.fact == "driver"]
    assert [e.value for e in driver] == [f">= {floor}"]
    assert driver[0].source.startswith("inferred: Is CUDA available: True")
    assumed = {a.fact: a for a in report.assumptions}
    assert assumed["driver"].alt == f"driver:{floor}"


def test_the_assumed_block_names_the_answer_each_assumption_changes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    name = str(FIXTURES / "linux-4x-h100-mig-details.txt")
    main(["diagnose", name])
    text = capsys.readouterr().out
    assert "Assumed (the report does not say):" in text
    body = _json(capsys, "linux-4x-h100-mig-details.txt")
    (driver,) = [a for a in body["assumptions"] if a["fact"] == "driver"]
    assert driver["changes_answer"] is True
    assert driver["answer_if_wrong"].startswith("torch ")
    assert driver["answer_if_wrong"] != f"torch {body['plan']['torch_version']}"
    assert f"if {driver['if_wrong']}: {driver['answer_if_wrong']}" in text


def test_cuda_available_is_never_a_cpu_build(capsys: pytest.CaptureFixture[str]) -> None:
    """pyro-vision's copy of collect_env prints no CUDA line: "Is CUDA available: Yes" with a bare
    "1.7.1" on Windows is a CUDA build on an NVIDIA GPU, planned as such."""
    body = _json(capsys, "windows10-pyrovision-cuda-yes-cut.txt")
    torch = next(p for p in body["facts"]["packages"] if p["name"] == "torch")
    assert torch["variant"] is None  # unknown CUDA, not "cpu"
    assert body["plan"]["variant"].startswith("cu")
    assert "no GPU found" not in " ".join(body["plan"]["reasons"])
    gpus = [e for e in body["evidence"] if e["fact"] == "gpus"]
    assert gpus and gpus[0]["source"].startswith("inferred: Is CUDA available: Yes")


@pytest.mark.parametrize(
    ("driver", "windows"),
    [
        ("546.33", True),
        ("572.16", True),
        ("426.25", True),
        ("440.82", False),
        ("470.57.02", False),
        ("550.54.15", False),
        ("460.39", False),
        ("418.67", False),
        # the edges of the rule: before R400 every branch had Unix releases (R396: 396.54);
        # R465 is a multiple of five below R470, where two-part numbers were still Unix's too;
        # R471 is past R470 and no multiple of five
        ("396.54", False),
        ("465.89", False),
        ("471.41", True),
        ("470.05", True),  # at R470 itself a two-part number is Windows' (the WSL preview driver)
        ("", False),
        ("N/A", False),
    ],
)
def test_windows_only_driver_numbers(driver: str, windows: bool) -> None:
    assert windows_only_driver(driver) is windows


def test_a_refusal_says_which_line_would_decide(capsys: pytest.CaptureFixture[str]) -> None:
    """A source build that names no toolchain, in a report older than collect_env's Intel GPU
    lines: the xpu and the CPU build are equally likely, and the refusal says which line decides."""
    body = _json(capsys, "linux-xpu-vllm-source-build.txt")
    assert body["plan"] is None
    assert "Intel GPU models detected:" in body["plan_error"]
    assert "would decide" in body["plan_error"]


# --- Intel XPU ---------------------------------------------------------------------------------


def test_xpu_fields_are_read() -> None:
    report = parse(_read("linux-max1100-xpu-onboard-top-cut.txt"))
    xpu = report.facts.xpu
    assert xpu is not None
    # The detected list is cut after its second GPU; the system's onboard list has all eight.
    assert [g.name for g in xpu.gpus] == ["Intel(R) Data Center GPU Max 1100"] * 8
    assert xpu.sources["gpus"] == "collect_env:Intel GPU models onboard"
    assert xpu.driver_version == "25.18.33578.15-1146~22.04"
    assert report.xpu_available is True


def test_an_installed_xpu_build_is_evidence_of_an_intel_gpu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """torch 2.7.1+xpu on Windows, from a collect_env without the Intel GPU lines."""
    body = _json(capsys, "windows11-xpu-torch2.7.1.txt")
    assert body["plan"]["variant"] == "xpu"
    gpus = [e for e in body["evidence"] if e["fact"] == "gpus"]
    assert gpus[0]["source"].startswith("inferred: torch 2.7.1+xpu is an XPU build")


def test_an_xpu_toolchain_date_makes_a_source_build_an_xpu_build() -> None:
    text = _read("linux-arc-pro-b60-xpu-torch2.11.txt").replace(
        "PyTorch version: 2.11.0+xpu", "PyTorch version: 2.11.0a0+git1234567"
    )
    torch = parse(text).facts.package("torch")
    assert torch is not None and str(torch.variant) == "xpu"


def _facts(torch: str, variant: str, **kw: Any) -> Facts:
    return Facts(
        os=OSInfo(family="linux", distro_id="ubuntu", glibc="2.39"),
        python=PythonInfo(version="3.12.3", machine="x86_64"),
        packages=(InstalledPackage("torch", torch, variant=Variant.parse(variant)),),
        **kw,
    )


def test_doctor_xpu_findings() -> None:
    intel = XpuInfo(gpus=(Gpu(index=0, name="Intel(R) Arc(TM) B580 Graphics", vendor="intel"),))
    cpu = examine(_facts("2.11.0+cpu", "cpu", xpu=intel), None, in_use())
    assert "cpu-build-on-gpu" in {f.code for f in cpu}
    cuda = examine(_facts("2.11.0+cu128", "cu128", xpu=intel), None, in_use())
    assert "cuda-build-on-intel" in {f.code for f in cuda}
    ok = examine(_facts("2.11.0+xpu", "xpu", xpu=intel), None, in_use())
    assert not {"cpu-build-on-gpu", "cuda-build-on-intel"} & {f.code for f in ok}


# --- a missing or unloaded driver --------------------------------------------------------------


def test_driver_missing_is_the_first_cause(capsys: pytest.CaptureFixture[str]) -> None:
    body = _json(capsys, "driver-missing-ubuntu20-cu113-toolkit-no-gpu-list.txt")
    first = body["findings"][0]
    assert first["code"] == "driver-missing"
    assert "toolkit-without-driver" not in {f["code"] for f in body["findings"]}
    assert any("CUDA toolkit 11.3" in e for e in first["evidence"])
    assert first["command"] == "sudo ubuntu-drivers install"  # Ubuntu 20.04
    # The route ends at a CUDA build, the driver among its steps.
    assert body["route"]["variant"].startswith("cu")
    assert "driver" in [s["kind"] for s in body["route"]["steps"]]


@pytest.mark.parametrize(
    ("os_info", "says"),
    [
        (OSInfo(family="windows"), "nvidia.com"),
        (OSInfo(family="linux", wsl=2, distro_id="ubuntu"), "Windows host"),
        (OSInfo(family="linux", distro_id="rocky"), "modprobe nvidia"),
    ],
)
def test_driver_missing_fix_per_os(os_info: OSInfo, says: str) -> None:
    facts = Facts(
        os=os_info,
        python=PythonInfo(version="3.12.3", machine="x86_64"),
        notes=(Note("no-nvidia-driver", "torch says: x [collect_env:warning]", "", "info"),),
    )
    found = causes.findings(facts, None, in_use(), ())
    (f,) = [f for f in found if f.code == "driver-missing"]
    assert says in f.fix


def test_driver_missing_plan_depends_on_the_driver(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The plan is the CUDA build that fits once the driver is there, marked as depending on it.
    The real CentOS report (torch's no-driver message), its Python line set to 3.12 so that a
    current wheel exists (the only change; 3.6 has none and gets a route instead)."""
    text = _read("driver-missing-centos7-cu110-cut-at-cuda.txt").replace(
        "Python version: 3.6.4 (default, Mar 17 2022, 20:24:30)  [GCC 8.2.0]",
        "Python version: 3.12.3 (main, Jan 22 2026, 20:57:42) [GCC 13.3.0]",
    )
    assert "3.12.3" in text
    report = tmp_path / "report.txt"
    report.write_text(text, encoding="utf-8")
    main(["diagnose", "--json", str(report)])
    body = json.loads(capsys.readouterr().out)["diagnose"]
    assert body["findings"][0]["code"] == "driver-missing"
    assert body["plan"]["variant"].startswith("cu")
    assert "driver-absent" in body["plan"]["warning_codes"]
    assert body["plan_depends_on"] == [f"nvidia-driver>={body['plan']['min_driver']}"]
    main(["diagnose", str(report)])
    assert "depends on the NVIDIA driver" in capsys.readouterr().out


def test_an_xpu_build_that_reports_xpu_unavailable() -> None:
    """torch's own verdict: an XPU build with `Is XPU available: False` is an error whose fix
    installs Intel's driver for that OS."""
    from setup_env.commands.diagnose import report_findings
    from setup_env.probe.report import Report

    for family, says in (("linux", "intel-opencl-icd"), ("windows", "graphics driver")):
        facts = Facts(
            os=OSInfo(family=family),  # type: ignore[arg-type]
            python=PythonInfo(version="3.12.3"),
            packages=(InstalledPackage("torch", "2.11.0+xpu", variant=Variant.parse("xpu")),),
        )
        found = report_findings(Report(facts=facts, xpu_available=False), ())
        (f,) = [f for f in found if f.code == "torch-xpu-unavailable"]
        assert f.severity == "error" and says in (f.fix or "")
        working = report_findings(Report(facts=facts, xpu_available=True), ())
        assert "torch-xpu-unavailable" not in {f.code for f in working}


def test_the_intel_driver_on_windows() -> None:
    """Windows prints the display driver's version (WMI) with its date: `* 32.0.101.8826 (...)`."""
    report = parse(_read("xpu-windows11-b580-torch2.13.txt"))
    xpu = report.facts.xpu
    assert xpu is not None and xpu.driver_version == "32.0.101.8826"
    assert [g.name for g in xpu.gpus] == ["Intel(R) Arc(TM) B580 Graphics"]
