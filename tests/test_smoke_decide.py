"""Pure verify decisions: error classification on real error text, build/device/
arch judgements against facts, and speed beside a catalogue peak. No torch, no processes."""

from __future__ import annotations

from pathlib import Path

import pytest

from setup_env.decide.smoke import (
    classify_error,
    decide_arch,
    decide_build,
    decide_device,
    last_line,
)
from setup_env.decide.smoke_model import CheckResult
from setup_env.decide.smoke_speed import judge_speed
from setup_env.facts import CpuInfo, Facts, Gpu, InstalledPackage, NvidiaInfo
from setup_env.probe.cpu import parse_cpuinfo, summarize_flags

# Real error text, each from the public report named beside it (copied as posted).
REAL_ERRORS = [
    # https://github.com/pytorch/pytorch/issues/165812
    (
        'venv/lib64/python3.11/site-packages/torch/__init__.py", line 427, in <module>\n'
        "    from torch._C import *  # noqa: F403\n"
        "ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory",
        "missing-library",
        "nvidia-cudnn",
    ),
    # https://github.com/pytorch/pytorch/issues/104259
    (
        "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
        "missing-library",
        "nvidia-cudnn",
    ),
    # https://github.com/semchan/NLUT/issues/15
    (
        "ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or "
        "directory",
        "broken-install",
        "force-reinstall",
    ),
    # https://github.com/pytorch/pytorch/issues/135013 (torch 2.4.0 with NumPy 2.1.0)
    (
        "A module that was compiled using NumPy 1.x cannot be run in\n"
        "NumPy 2.1.0 as it may crash. To support both 1.x and 2.x\n"
        "versions of NumPy, modules must be compiled with NumPy 2.0.\n"
        "Some module may need to rebuild instead e.g. with 'pybind11>=2.12'.",
        "numpy-abi",
        "numpy<2",
    ),
    # https://github.com/xai4space/meteors/issues/20 (the warning torch itself raises)
    (
        "<stdin>:1: UserWarning: Failed to initialize NumPy: _ARRAY_API not found (Triggered "
        "internally at ..\\torch\\csrc\\utils\\tensor_numpy.cpp:84.)",
        "numpy-abi",
        "numpy<2",
    ),
    # https://github.com/pytorch/pytorch/issues/131312
    (
        "ImportError: /home/dp/anaconda3/envs/ComfyUI/lib/python3.11/site-packages/torch/lib/../"
        "../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, "
        "version libnvJitLink.so.12",
        "undefined-symbol",
        "LD_LIBRARY_PATH",
    ),
    # https://github.com/THU-MIG/yolov10/issues/306
    (
        "ImportError: /root/.local/conda/envs/yolov10/lib/python3.9/site-packages/torch/lib/"
        "libtorch_cuda.so: undefined symbol: ncclCommRegister",
        "undefined-symbol",
        "nvidia",
    ),
    # https://github.com/huggingface/diffusers/issues/5247 (French Windows)
    (
        "OSError: [WinError 126] Le module spécifié est introuvable. Error loading "
        '"C:\\ai\\stable-diffusion-webui\\venv\\lib\\site-packages\\torch\\lib\\c10.dll" or one '
        "of its dependencies.",
        "windows-dll",
        "Visual C++",
    ),
    # https://github.com/pytorch/pytorch/pull/162531 (a cu130 wheel on a CUDA 12.8 driver)
    (
        "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found "
        "version 12080). Please update your GPU driver by downloading and installing a new "
        "version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
        "https://pytorch.org/ to install a PyTorch version that has been compiled with your "
        "version of the CUDA driver.",
        "driver-too-old",
        "driver",
    ),
    # https://github.com/ademakdogan/nails_segmentation/issues/8
    (
        "RuntimeError: CUDA error: no kernel image is available for execution on the device",
        "arch-missing",
        "setup-env plan",
    ),
    # https://github.com/jiangyzy/GOAE/issues/16
    (
        "NVIDIA RTX A6000 with CUDA capability sm_86 is not compatible with the current PyTorch "
        "installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 "
        "sm_70.",
        "arch-missing",
        "setup-env plan",
    ),
    # https://github.com/pytorch/pytorch/issues/131117
    (
        "UserWarning: CUDA initialization: CUDA driver initialization failed, you might not have "
        "a CUDA gpu.",
        "no-driver",
        "nvidia-smi",
    ),
]


@pytest.mark.parametrize(("text", "code", "fix_word"), REAL_ERRORS)
def test_classify_real_errors(text: str, code: str, fix_word: str) -> None:
    diag = classify_error(text, torch_version="2.13.0+cu130")
    assert diag is not None
    assert diag.code == code
    assert fix_word in diag.fix
    assert "\n" not in diag.cause


def test_driver_too_old_names_the_cuda_it_supports() -> None:
    diag = classify_error(REAL_ERRORS[8][0])
    assert diag is not None and "CUDA 12.8" in diag.cause


def test_missing_cudnn_fix_names_the_wheel_for_torchs_cuda() -> None:
    diag = classify_error(REAL_ERRORS[0][0], torch_version="2.14.1+cu130")
    assert diag is not None and "nvidia-cudnn-cu13" in diag.fix


def test_signals_and_unknown_text() -> None:
    ill = classify_error("", returncode=-4)
    assert ill is not None and ill.code == "illegal-instruction"
    seg = classify_error("", returncode=-11)
    assert seg is not None and "SIGSEGV" in seg.cause
    assert classify_error("RuntimeError: something nobody has seen") is None
    assert classify_error("", returncode=1) is None


def test_last_line_of_a_traceback() -> None:
    tb = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad thing\n'
    assert last_line(tb) == "ValueError: bad thing"
    assert last_line("") == ""


# Arch lists as PyPI wheels really carry them (VERIFIED.md §3).
CU130_X86 = ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
CU130_ARM = ["sm_80", "sm_90", "sm_100", "sm_110", "sm_120"]
CU128_X86 = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]


def _nvidia_facts(cc: str, driver_cuda: str = "13.0", torch: str = "2.13.0+cu130") -> Facts:
    gpu = Gpu(index=0, name="NVIDIA GeForce RTX 5090", compute_capability=cc)
    return Facts(
        nvidia=NvidiaInfo(driver_version="580.65.06", cuda_driver_version=driver_cuda, gpus=(gpu,)),
        packages=(InstalledPackage(name="torch", version=torch, cuda="13.0"),),
    )


def _cuda_info(**over: object) -> dict[str, object]:
    info: dict[str, object] = {
        "torch_version": "2.13.0+cu130",
        "cuda": "13.0",
        "cudnn": "9.13.0",
        "nccl": "2.27.7",
        "arch_list": CU130_X86,
        "driver_cuda": "13.0",
        "devices": ["cuda:0"],
        "device_names": {"cuda:0": "NVIDIA GeForce RTX 5090"},
        "gpus": [{"device": "cuda:0", "name": "NVIDIA GeForce RTX 5090", "capability": "12.0"}],
        "accelerator_count": 1,
    }
    info.update(over)
    return info


def test_arch_pass_and_driver_checks() -> None:
    facts = _nvidia_facts("12.0")
    assert decide_arch(_cuda_info(), facts).status == "pass"
    old = decide_arch(_cuda_info(driver_cuda="12.8"), facts)
    assert old.status == "fail" and "12.8" in old.message and old.fix == "upgrade the NVIDIA driver"
    minor = decide_arch(_cuda_info(cuda="13.2", driver_cuda="13.0"), facts)
    assert minor.status == "warn"


def test_arch_fails_for_gpu_missing_from_wheel_using_facts_when_torch_cannot_see_it() -> None:
    # torch could not initialise CUDA (gpus empty): the facts' compute capability decides.
    res = decide_arch(_cuda_info(gpus=[], driver_cuda=None), _nvidia_facts("7.0"))
    assert res.status == "fail" and "sm_70" in res.message


def test_arch_skips_on_cpu_build() -> None:
    assert decide_arch({"torch_version": "2.13.0+cpu", "cuda": None}, None).status == "skip"


def test_build_detects_shadowed_torch() -> None:
    facts = _nvidia_facts("12.0", torch="2.12.0+cu130")
    res = decide_build(_cuda_info(torch_file="/home/u/.local/torch"), facts, same_interpreter=True)
    assert res.status == "fail" and "shadows" in res.message
    # Verifying another interpreter: this machine's metadata says nothing about it.
    assert decide_build(_cuda_info(), facts, same_interpreter=False).status == "pass"


def test_build_warns_when_loaded_cudnn_is_not_the_wheel() -> None:
    info = _cuda_info(cudnn_wheels={"nvidia-cudnn-cu13": "9.13.0.50"}, cudnn="9.1.0")
    res = decide_build(info, None, same_interpreter=True)
    assert res.status == "warn" and "nvidia-cudnn-cu13" in res.message


def test_device_fails_for_cpu_build_on_gpu_machine() -> None:
    info = {"torch_version": "2.13.0+cpu", "cuda": None, "devices": ["cpu"]}
    res = decide_device(info, _nvidia_facts("9.0"), None)
    assert (
        res.status == "fail"
        and "CPU-only build" in res.message
        and "setup-env plan" in (res.fix or "")
    )
    # Asked for the CPU on purpose: fine.
    assert decide_device(info, _nvidia_facts("9.0"), "cpu").status == "pass"
    # No GPU in the facts: the CPU is the best device.
    assert decide_device(info, Facts(), None).status == "pass"


def test_device_explains_cuda_unavailable_with_driver_warning() -> None:
    info = _cuda_info(devices=["cpu"], accelerator_unavailable=REAL_ERRORS[8][0])
    res = decide_device(info, _nvidia_facts("9.0", driver_cuda="12.8"), None)
    assert res.status == "fail" and "driver" in res.message and "driver" in (res.fix or "")


def test_device_error_from_worker() -> None:
    info = {
        "torch_version": "2.13.0+cpu",
        "devices": [],
        "device_error": "--device cuda: torch 2.13.0+cpu is not built with CUDA support",
    }
    assert decide_device(info, None, "cuda").status == "fail"


class _Peaks:  # the shape setup_env.knowledge.gpus.lookup() returns (attributes), see judge_speed
    bf16_tflops = 989.0
    fp32_tflops = 67.0
    memory_gbps = 3350.0


def test_speed_ratio_and_warning() -> None:
    good = CheckResult(
        "matmul-speed",
        "pass",
        0.3,
        "700 TFLOP/s (bfloat16, 8192x8192)",
        "cuda:0",
        {"tflops": 700.0, "dtype": "bfloat16"},
    )
    res = judge_speed(good, _Peaks())
    assert res.status == "pass" and res.evidence["ratio"] == pytest.approx(0.708, abs=1e-3)
    slow = CheckResult("memory-bandwidth", "pass", 0.2, "400 GB/s", "cuda:0", {"gbps": 400.0})
    res = judge_speed(slow, {"memory_gbps": 3350.0})
    assert res.status == "warn" and "400" in res.message and res.evidence["ratio"] < 0.4
    # No catalogue entry: the measured figure alone, unchanged.
    assert judge_speed(slow, None) == slow


def test_h2d_against_pcie_link_from_facts() -> None:
    gpu = Gpu(index=0, name="H100", pcie_gen_max=5, pcie_width_max=16, pcie_width_current=4)
    res = judge_speed(
        CheckResult("h2d-bandwidth", "pass", 0.2, "13 GB/s (pinned)", "cuda:0", {"gbps": 13.0}),
        None,
        gpu,
    )
    assert res.status == "warn" and res.evidence["pcie_link"] == "gen5 x16"
    assert res.evidence["pcie_link_current"] == "x4"


def test_speed_against_the_real_gpu_catalogue() -> None:
    gpus = pytest.importorskip("setup_env.knowledge.gpus")
    peaks = gpus.lookup("NVIDIA H200")
    assert peaks is not None
    healthy = CheckResult("memory-bandwidth", "pass", 0.2, "3900 GB/s", "cuda:0", {"gbps": 3900.0})
    res = judge_speed(healthy, peaks)
    assert res.status == "pass" and res.evidence["peak"] == peaks.memory_gbps
    throttled = CheckResult(
        "matmul-speed", "pass", 0.3, "150 TFLOP/s", "cuda:0", {"tflops": 150.0, "dtype": "bfloat16"}
    )
    res = judge_speed(throttled, peaks)
    assert res.status == "warn" and "150" in res.message and res.evidence["ratio"] < 0.25


def _cpu_from(name: str) -> CpuInfo:
    text = (Path(__file__).parent / "fixtures" / "sigill" / name).read_text()
    level, flags = summarize_flags(parse_cpuinfo(text).flags)
    return CpuInfo(architecture="x86_64", isa_level=level, flags=flags)


def test_illegal_instruction_on_a_cpu_without_the_wheels_baseline_blames_the_cpu() -> None:
    # A QEMU virtual CPU with neither SSE4.2 nor AVX (pytorch#22338).
    diag = classify_error("", returncode=-4, cpu=_cpu_from("qemu-virtual-cpu.cpuinfo"))
    assert diag is not None and diag.code == "cpu-lacks-isa", diag
    assert "the CPU lacks SSE4.2, AVX" in diag.cause
    assert "-cpu host" in diag.fix


def test_illegal_instruction_on_a_cpu_with_avx2_blames_the_build_not_the_cpu() -> None:
    # An i3-7100U has SSE4.2, AVX, AVX2 and FMA (pytorch#2714): the build is wrong for it.
    diag = classify_error("Illegal instruction (core dumped)", cpu=_cpu_from("i3-7100u.cpuinfo"))
    assert diag is not None and diag.code == "illegal-instruction-build", diag
    assert "although the CPU has SSE4.2/AVX/AVX2/FMA" in diag.cause
    assert "lacks" not in diag.cause and "--force-reinstall" in diag.fix


def test_illegal_instruction_with_one_baseline_flag_missing_names_it() -> None:
    cpu = _cpu_from("i3-7100u.cpuinfo")
    no_avx = CpuInfo(isa_level=cpu.isa_level, flags=tuple(f for f in cpu.flags if f != "avx"))
    diag = classify_error("", returncode=-4, cpu=no_avx)
    assert diag is not None and diag.code == "cpu-lacks-isa"
    assert "lacks AVX," in diag.cause


def test_illegal_instruction_without_x86_flags_claims_nothing_about_the_cpu() -> None:
    for cpu in (None, CpuInfo(architecture="aarch64", isa_level="armv8.2-a", flags=("asimd",))):
        diag = classify_error("", returncode=-4, cpu=cpu)
        assert diag is not None and diag.code == "illegal-instruction"
        assert "not checked" in diag.cause


@pytest.mark.parametrize(
    "name", ["openblas.txt", "libgomp.txt", "python-thread.txt", "fork-eagain.txt"]
)
def test_no_more_threads_or_processes_is_the_machines_limit(name: str) -> None:
    text = (Path(__file__).parent / "fixtures" / "process-limit" / name).read_text()
    diag = classify_error(text)
    assert diag is not None and diag.code == "process-limit", (name, diag)
    assert "ulimit -u" in diag.fix and "pids" in diag.fix
    # The same errno in another context is not this finding.
    assert classify_error("open: [Errno 2] No such file or directory") is None


def test_device_fails_when_the_nvidia_gpu_on_the_bus_could_not_be_examined() -> None:
    from setup_env.probe.detect import detect
    from setup_env.probe.host import ReplayHost

    # The replayed machine: an H100 on the PCI bus, nvidia-smi hangs.
    host = Path(__file__).parent / "fixtures" / "hosts" / "linux-h100-nvidia-smi-hangs"
    facts = detect(ReplayHost(host))
    info = {"torch_version": "2.13.0+cpu", "cuda": None, "devices": ["cpu"]}
    res = decide_device(info, facts, None)
    assert res.status == "fail", res
    assert "the GPU could not be examined" in res.message and "0000:19:00.0" in res.message
    assert "dmesg" in (res.fix or "")
    # Asked for the CPU on purpose: passes, and says the machine has a GPU.
    res = decide_device(info, facts, "cpu")
    assert res.status == "pass" and "also has a GPU" in res.message


def test_numpy_abi_mismatch_names_the_numpy_to_reinstall_not_torch() -> None:
    # numpy/numpy#25865: a module built for NumPy 1.x (ABI 0x1000009) under NumPy 2 (0x2000000).
    text = (
        "RuntimeError: module compiled against ABI version 0x1000009 but this version of numpy "
        "is 0x2000000"
    )
    diag = classify_error(text, numpy_version="2.0.0")
    assert diag is not None and diag.code == "numpy-abi", diag
    assert "built against NumPy 1.x is loaded with NumPy 2.0.0" in diag.cause
    assert diag.fix.startswith('pip install --force-reinstall "numpy<2"')
    assert "not torch" in diag.fix


def test_numpy_not_available_with_numpy_installed_is_the_abi_not_a_missing_numpy() -> None:
    # torch 2.2.2 (built for NumPy 1.x) with NumPy 2.0.1: pytorch-unflow#17's setup.
    diag = classify_error(
        "RuntimeError: Numpy is not available", torch_version="2.2.2", numpy_version="2.0.1"
    )
    assert diag is not None and diag.code == "numpy-abi" and '"numpy<2"' in diag.fix, diag
    # A torch built for NumPy 2: no version to go back to, NumPy itself is reinstalled.
    diag = classify_error(
        "RuntimeError: Numpy is not available", torch_version="2.13.0+cpu", numpy_version="1.26.4"
    )
    assert diag is not None and diag.code == "numpy-abi"
    assert diag.fix.startswith("pip install --force-reinstall numpy ")
    # No NumPy at all: that is the missing NumPy.
    missing = classify_error("RuntimeError: Numpy is not available", torch_version="2.13.0+cpu")
    assert missing is not None and missing.code == "numpy-missing"
