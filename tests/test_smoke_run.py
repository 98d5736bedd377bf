"""verify's process handling, for real on this machine's CPU: a hung check is killed at its
deadline and the rest still run, a crashing worker is reported, an interpreter without torch
gives the install hint, and the gloo all-reduce runs through torchrun with 2 processes."""

from __future__ import annotations

import os
import shutil
import sys
import time

import pytest

from setup_env.act.smoke import CheckResult, VerifyOptions, run_verify
from setup_env.act.smoke.runner import TEST_CHECKS_ENV, selected_checks
from setup_env.decide.smoke_model import CHECK_NAMES

NO_TORCH_PYTHON = "/root/.pyenv/versions/3.12.1/bin/python"  # this workplace: no torch there
OLD_PYTHON = "/root/.pyenv/versions/2.7.18/bin/python"


def _has_nvidia_gpu() -> bool:
    return os.path.exists("/proc/driver/nvidia/version") and shutil.which("nvidia-smi") is not None


def test_selected_checks_default_and_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TEST_CHECKS_ENV, raising=False)
    default = selected_checks(VerifyOptions())
    assert default[0] == "import"
    assert "compile" not in default and "distributed" not in default
    everything = selected_checks(VerifyOptions(compile=True, distributed=True))
    assert everything == list(CHECK_NAMES)
    assert selected_checks(VerifyOptions(only=("matmul",))) == ["import", "matmul"]
    assert "conv" not in selected_checks(VerifyOptions(skip=("conv",)))
    monkeypatch.setenv(TEST_CHECKS_ENV, "hang,bogus")
    names = selected_checks(VerifyOptions(only=("roundtrip", "matmul")))
    assert names == ["import", "roundtrip", "_hang", "matmul"]


@pytest.mark.torch
@pytest.mark.slow
def test_hung_check_is_killed_and_remaining_checks_run() -> None:
    seen: list[CheckResult] = []
    t0 = time.monotonic()
    report = run_verify(
        VerifyOptions(
            only=("roundtrip", "matmul", "autograd"), test_checks=("hang", "crash"), device="cpu"
        ),
        seen.append,
    )
    elapsed = time.monotonic() - t0
    by_name = {c.name: c for c in report.checks}
    assert [c.name for c in report.checks] == [
        "import",
        "roundtrip",
        "_hang",
        "_crash",
        "matmul",
        "autograd",
    ]
    assert seen == list(report.checks)  # progress saw every result, in order
    hang = by_name["_hang"]
    assert hang.status == "fail" and "deadline" in hang.message
    assert 2.0 <= hang.duration_s < 10.0  # the test check's 2 s deadline, not forever
    crash = by_name["_crash"]
    assert crash.status == "fail" and "exit status 7" in crash.message
    assert "test crash" in crash.evidence["stderr"]
    assert by_name["matmul"].status == "pass" and by_name["autograd"].status == "pass"
    assert report.workers == 3  # the first was killed, the second crashed
    assert not report.ok and report.counts["fail"] == 2
    assert elapsed < 60


@pytest.mark.torch
def test_interpreter_without_torch_reports_missing() -> None:
    if not os.path.exists(NO_TORCH_PYTHON):
        pytest.skip(f"{NO_TORCH_PYTHON} not on this machine")
    report = run_verify(VerifyOptions(python=NO_TORCH_PYTHON, detect_facts=False))
    assert report.torch_missing and not report.ok
    imp = report.checks[0]
    assert imp.name == "import" and imp.status == "fail"
    assert "not installed" in imp.message and "setup-env plan" in (imp.fix or "")
    assert all(c.status == "skip" for c in report.checks[1:])


def test_interpreter_that_cannot_run_the_worker() -> None:
    if not os.path.exists(OLD_PYTHON):
        pytest.skip(f"{OLD_PYTHON} not on this machine")
    report = run_verify(VerifyOptions(python=OLD_PYTHON, detect_facts=False))
    assert report.error is not None and "SyntaxError" in report.error
    assert not report.torch_missing and not report.ok


def test_missing_interpreter() -> None:
    report = run_verify(VerifyOptions(python="/nonexistent/python", detect_facts=False))
    assert report.error == "no interpreter at /nonexistent/python" and not report.ok


@pytest.mark.torch
@pytest.mark.slow
def test_distributed_gloo_all_reduce_with_two_processes() -> None:
    report = run_verify(VerifyOptions(only=("distributed",), detect_facts=False))
    dist = report.checks[-1]
    assert dist.name == "distributed", report
    assert dist.status == "pass", dist
    ev = dist.evidence
    assert ev["backend"] == "gloo" and ev["world_size"] == 2 and ev["torchrun_exit"] == 0
    assert len(ev["ranks"]) == 2 and all(r["correct"] for r in ev["ranks"])
    assert ev["busbw_gbps"] > 0
    # busbw = algbw * 2(n-1)/n, n = 2
    assert ev["busbw_gbps"] == pytest.approx(ev["algbw_gbps"], rel=0.01)


@pytest.mark.torch
def test_device_not_in_this_build_fails_the_device_check() -> None:
    torch_cuda = os.path.exists("/proc/driver/nvidia/version")
    if torch_cuda:
        pytest.skip("this machine has an NVIDIA driver")
    report = run_verify(VerifyOptions(device="cuda", only=("device", "matmul"), detect_facts=False))
    by_name = {c.name: c for c in report.checks}
    assert by_name["device"].status == "fail"
    assert "not built with CUDA" in by_name["device"].message or "no cuda" in (
        by_name["device"].message.lower()
    )
    assert by_name["matmul"].status == "skip"
    assert not report.ok


@pytest.mark.gpu
@pytest.mark.torch
@pytest.mark.skipif(not _has_nvidia_gpu(), reason="needs an NVIDIA GPU with a driver")
def test_full_verify_on_cuda() -> None:
    report = run_verify(VerifyOptions(device="cuda", all_devices=True))
    bad = [c for c in report.checks if c.status == "fail"]
    assert not bad, bad
    assert report.devices and all(d.startswith("cuda:") for d in report.devices)
    speed = [c for c in report.checks if c.name == "matmul-speed"]
    assert speed and all(c.evidence["tflops"] > 1.0 for c in speed)
    h2d = [c for c in report.checks if c.name == "h2d-bandwidth"]
    assert h2d and all(c.status in ("pass", "warn") and c.evidence["gbps"] > 0.5 for c in h2d)


@pytest.mark.gpu
@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.skipif(not _has_nvidia_gpu(), reason="needs an NVIDIA GPU with a driver")
def test_distributed_nccl_on_gpus() -> None:
    report = run_verify(VerifyOptions(device="cuda", only=("distributed",)))
    dist = report.checks[-1]
    assert dist.status == "pass", dist
    assert dist.evidence["backend"] == "nccl"


def test_worker_module_runs_on_python39_syntax() -> None:
    # The worker runs under other interpreters (verify --python): it must compile on 3.9.
    py39 = "/root/.pyenv/versions/3.9.18/bin/python"
    if not os.path.exists(py39):
        pytest.skip("no Python 3.9 here")
    import subprocess

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = [
        os.path.join(here, "setup_env", *f.split("/"))
        for f in (
            "act/smoke/worker.py",
            "act/smoke/worker_numerics.py",
            "act/smoke/dist_worker.py",
            "decide/smoke_model.py",
        )
    ]
    proc = subprocess.run(
        [py39, "-m", "py_compile", *files], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert sys.version_info >= (3, 9)


@pytest.mark.torch
@pytest.mark.slow
def test_compile_on_cpu_with_gcc() -> None:
    if shutil.which("gcc") is None and shutil.which("g++") is None:
        pytest.skip("torch.compile on the CPU needs a C++ compiler")
    report = run_verify(VerifyOptions(compile=True, only=("compile",), detect_facts=False))
    res = report.checks[-1]
    assert res.name == "compile" and res.status == "pass", res
    assert res.evidence["compile_s"] > 0


@pytest.mark.torch
def test_distributed_with_a_rendezvous_host_that_does_not_resolve_fails_before_torchrun() -> None:
    # ".invalid" never resolves (RFC 2606): torchrun would retry it until its timeout.
    for args in (
        ("--nnodes", "2", "--rdzv-backend", "c10d", "--rdzv-endpoint", "node-0.invalid:29500"),
        ("--nnodes", "2", "--master-addr", "node-0.invalid", "--master-port", "29500"),
    ):
        report = run_verify(
            VerifyOptions(only=("distributed",), torchrun_args=args, detect_facts=False)
        )
        dist = report.checks[-1]
        assert dist.name == "distributed" and dist.status == "fail", dist
        assert "the rendezvous host 'node-0.invalid' does not resolve" in dist.message, dist
        assert "torchrun was not started" in dist.message
        assert "getent hosts node-0.invalid" in (dist.fix or "")
        assert "argv" not in dist.evidence and not report.ok


def test_the_rendezvous_host_is_read_from_torchruns_options() -> None:
    from setup_env.act.smoke.runner import _rendezvous_host

    assert _rendezvous_host(("--rdzv-endpoint", "node-0:29500")) == "node-0"
    assert _rendezvous_host(("--rdzv-endpoint", "[fd00::1]:29500")) == "fd00::1"
    assert _rendezvous_host(("--rdzv-endpoint", "node-0")) == "node-0"
    assert _rendezvous_host(("--master-addr", "10.0.0.7", "--master-port", "1")) == "10.0.0.7"
    assert _rendezvous_host(()) is None
