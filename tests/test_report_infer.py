"""What a report implies beyond its lines (probe/report/infer.py), rule by rule, on real reports
cut or changed at the point each rule decides: the evidence each stated fact leaves, the Python a
site-packages path names (POSIX, free-threaded, Windows), the OS a report without an OS line
implies or is assumed to run, and what a ROCm build's "Is CUDA available: True" does not mean."""

from __future__ import annotations

import pytest
from test_report_behaviour import FIXTURES, changed, read, without

from setup_env.probe.report import CollectEnvError, parse
from setup_env.probe.report.infer import UNKNOWN_NVIDIA
from setup_env.probe.report.model import Evidence, Report

H100_CU130 = "linux-h100-cu130-driver570.txt"  # every line there, driver 570.172.08
WINDOWS = "windows11-gtx1050ti-cu117.txt"  # driver 535.98, Windows 11


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            H100_CU130,
            [
                Evidence("torch", "2.9.0 (cu130)", "collect_env:PyTorch version"),
                Evidence("os", "linux", "collect_env:OS"),
                Evidence("python", "3.10.12", "collect_env:Python version"),
                Evidence("gpus", "NVIDIA H100 80GB HBM3", "collect_env"),
                Evidence("driver", "570.172.08", "collect_env:Nvidia driver version"),
                Evidence("cuda_available", "True", "collect_env:Is CUDA available"),
            ],
        ),
        (
            WINDOWS,
            [
                Evidence("torch", "2.0.1+cu117 (cu117)", "collect_env:PyTorch version"),
                Evidence("os", "windows", "collect_env:OS"),
                Evidence("python", "3.9.16", "collect_env:Python version"),
                Evidence("gpus", "NVIDIA GeForce GTX 1050 Ti", "collect_env"),
                Evidence("driver", "535.98", "collect_env:Nvidia driver version"),
                Evidence("cuda_available", "True", "collect_env:Is CUDA available"),
            ],
        ),
    ],
)
def test_each_fact_a_whole_report_states_is_evidence_with_its_line(
    name: str, expected: list[Evidence]
) -> None:
    """A report with every line: torch with its build, the OS, the Python, each GPU, the driver
    version and "Is CUDA available", each from the line that states it, in that order."""
    assert list(parse(read(name)).evidence) == expected


# The sm_120 warning of IAHispano/Applio#1006, printed from a virtual environment's
# "...\env\lib\site-packages" (no Python version in the path).
APPLIO = "warning-only-windows11-rtx5090-applio.txt"
APPLIO_SITE = r"\env\lib\site-packages"


def _python(text: str) -> tuple[object, ...]:
    report = parse(text)
    python = report.facts.python
    said = [e for e in report.evidence if e.fact == "python"]
    return python.version, python.free_threaded, python.sources.get("version"), said


def test_a_windows_site_packages_path_names_the_python_in_it() -> None:
    """python.org's Windows installer puts packages in "...\\Python310\\Lib\\site-packages":
    the Applio warning's path changed to that layout says Python 3.10 (inferred, with the
    path); its own venv path names no Python, and the report then has none."""
    text = read(APPLIO)
    assert not _python(text)[0]
    system = changed(text, APPLIO_SITE, r"\Python310\Lib\site-packages")
    version, free_threaded, source, said = _python(system)
    path = (
        r"C:\AI\APPLIO\ApplioV3.2.8-bugfix\Python310\Lib\site-packages\torch\cuda\__init__.py:209:"
    )
    why = f"inferred: a site-packages path names it ({path})"
    assert (version, free_threaded, source) == ("3.10", False, why)
    assert said == [Evidence("python", "3.10", why)]
    # Python 3.9's folder is "Python39": one digit after the 3
    assert _python(changed(text, APPLIO_SITE, r"\Python39\Lib\site-packages"))[0] == "3.9"


# pytorch/pytorch's error 804 report: torch's message from "/opt/conda/lib/python3.9/...".
FORWARD_COMPAT = "message-804-forward-compat-rtx3090.txt"


def test_a_posix_site_packages_path_names_the_python_and_a_t_a_free_threaded_one() -> None:
    """ "/python3.9/site-packages/" is CPython 3.9 with the GIL; a "t" after the version
    ("python3.13t", the free-threaded build's folder) is the free-threaded 3.13."""
    text = read(FORWARD_COMPAT)
    version, free_threaded, source, _said = _python(text)
    assert (version, free_threaded) == ("3.9", False)
    assert str(source).startswith("inferred: a site-packages path names it (/opt/conda/lib/")
    threaded = text.replace("/python3.9/site-packages/", "/python3.13t/site-packages/")
    assert threaded != text
    assert _python(threaded)[:2] == ("3.13", True)


def test_torchs_message_is_quoted_in_the_reason_to_80_characters() -> None:
    """The 804 message has no GPU list: the GPU is inferred from torch's message, whose text
    (longer than 80 characters) is quoted in the reason up to its 80th character."""
    report = parse(read(FORWARD_COMPAT))
    message = next(m for m in report.warnings if m.kind == "device-count-error")
    assert len(message.text) > 80
    gpus = [e for e in report.evidence if e.fact == "gpus"]
    why = f"inferred: torch's message comes from a loaded NVIDIA driver ({message.text[:80]})"
    assert gpus == [Evidence("gpus", UNKNOWN_NVIDIA, why)]
    # the one GPU inferred is GPU 0, as collect_env would have listed it
    assert report.planning is not None and report.planning.nvidia is not None
    assert [(g.index, g.name, g.source) for g in report.planning.nvidia.gpus] == [
        (0, UNKNOWN_NVIDIA, why)
    ]


def test_a_report_without_its_os_line_is_linux_by_its_libc_quoted_to_20_characters() -> None:
    """Without the OS and platform lines, "Libc version: glibc-2.35" says Linux (inferred,
    the value quoted); a garbled value longer than 20 characters is quoted to its 20th."""
    text = without(read(H100_CU130), "OS:", "Python platform:")
    report = parse(text)
    why = "inferred: Libc version: glibc-2.35 (glibc and musl are Linux's)"
    assert (report.facts.os.family, report.facts.os.sources["family"]) == ("linux", why)
    long = changed(text, "Libc version: glibc-2.35", "Libc version: glibc-2.35-0ubuntu3.8+esm1")
    said = parse(long).facts.os.sources["family"]
    assert said == "inferred: Libc version: glibc-2.35-0ubuntu3. (glibc and musl are Linux's)"
    musl = parse(changed(text, "Libc version: glibc-2.35", "Libc version: musl-1.2.4"))
    assert musl.facts.os.family == "linux"


def test_a_report_that_settles_no_os_is_assumed_linux_and_says_so() -> None:
    """Without the OS, platform and libc lines nothing in the H100 report names the OS: the
    facts keep it unknown, the planning facts assume Linux (the source says so), and the
    assumption names Windows as the other answer, each part said in words."""
    text = without(read(H100_CU130), "OS:", "Python platform:", "Libc version:")
    report = parse(text)
    assert report.facts.os.family == "other"
    assert report.planning is not None
    os_info = report.planning.os
    assert (os_info.family, os_info.sources["family"]) == ("linux", "assumed: Linux")
    (assumption,) = [a for a in report.assumptions if a.fact == "os"]
    assert (assumption.value, assumption.alt) == ("Linux (x86_64)", "os:windows")
    assert assumption.why == "the report has no OS line and nothing in it names the OS"
    assert assumption.alternative == "the machine runs Windows"


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.txt")))
def test_every_assumption_says_why_and_names_the_other_answer(name: str) -> None:
    """Every assumption a real report leads to is said in words: what was assumed, why, and
    the other value, with how that other value is planned."""
    try:
        report = parse(read(name))
    except CollectEnvError:  # not a report: nothing assumed (test_collect_env covers it)
        return
    for a in report.assumptions:
        for part in (a.value, a.why, a.alternative, a.alt):
            assert isinstance(part, str) and part.strip(), (name, a)


def test_a_rocm_wheels_cuda_available_is_no_nvidia_gpu_with_or_without_its_rocm_line() -> None:
    """The WSL2 ROCm 6.2 report with its GPU list cut: "Is CUDA available: True" on a ROCm
    build is HIP answering, not an NVIDIA GPU, whether the build is known from the wheel's
    "+rocm6.2" alone (its "ROCM used to build" line cut too) or from both."""
    text = without(read("wsl2-rocm62-rx7900xt.txt"), "GPU models and configuration:")
    for cut in (text, without(text, "ROCM used to build PyTorch:")):
        report = parse(cut)
        torch = report.facts.package("torch")
        assert torch is not None and torch.variant is not None and torch.variant.is_rocm
        assert report.cuda_available is True
        assert report.planning is not None
        assert report.planning.nvidia is None or report.planning.nvidia.gpus == ()
        assert [e for e in report.evidence if e.value == UNKNOWN_NVIDIA] == []


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.txt")))
def test_each_vendors_gpus_are_numbered_from_0_as_listed_or_inferred(name: str) -> None:
    """collect_env numbers GPUs from 0; a GPU the report only implies (torch's message, an
    XPU build, GPU intent) is GPU 0 of its vendor too, in the facts and in the planning facts."""
    try:
        report = parse(read(name))
    except CollectEnvError:
        return
    assert report.planning is not None
    for facts in (report.facts, report.planning):
        for info in (facts.nvidia, facts.rocm, facts.xpu):
            gpus = info.gpus if info is not None else ()
            assert [g.index for g in gpus] == list(range(len(gpus))), (name, gpus)


def _inferred_gpus(report: Report) -> tuple[list[Evidence], list[tuple[object, ...]]]:
    assert report.planning is not None
    said = [e for e in report.evidence if e.fact == "gpus"]
    p = report.planning
    gpus = [g for info in (p.nvidia, p.rocm, p.xpu) if info is not None for g in info.gpus]
    return said, [(g.index, g.name, g.vendor, g.source) for g in gpus]


@pytest.mark.parametrize(
    ("name", "gpu", "vendor", "why"),
    [
        # torch's HIP error, pasted alone: a running AMD GPU
        (
            "message-hip-invalid-device-function-5700xt.txt",
            "AMD GPU (model not in the report)",
            "amd",
            "inferred: torch's HIP message comes from a running AMD GPU (HIP error: invalid "
            "device function)",
        ),
        # the text around a cut report names the Intel GPU
        (
            "xpu-fedora40-a770-no-torch-cut.txt",
            "Intel Arc A770",
            "intel",
            "inferred: the text names it (Using the latest nightly 2.8.0.dev202503… with my "
            "Intel Arc A770, I get the following:)",
        ),
        # torch 2.7.1+xpu's collect_env has no Intel GPU lines: the build was installed for one
        (
            "windows11-xpu-torch2.7.1.txt",
            "Intel GPU (model not in the report)",
            "intel",
            "inferred: torch 2.7.1+xpu is an XPU build, installed for an Intel GPU",
        ),
    ],
)
def test_a_gpu_the_report_only_implies_is_gpu_0_of_its_vendor_with_the_reason(
    name: str, gpu: str, vendor: str, why: str
) -> None:
    """Each route by which a report implies a GPU it does not list: the GPU (GPU 0 of its
    vendor, in the planning facts) and its evidence, both with the same reason."""
    said, gpus = _inferred_gpus(parse(read(name)))
    assert said == [Evidence("gpus", gpu, why)]
    assert gpus == [(0, gpu, vendor, why)]


def test_is_xpu_available_true_alone_implies_an_intel_gpu_and_false_on_an_xpu_build_none() -> None:
    """The Arc Pro B60 report (torch 2.11.0+xpu) with torch's own Intel GPU list cut away:
    "Is XPU available: True" is the reason for an Intel GPU; changed to "False", the XPU build
    alone implies none (torch looked and found no GPU)."""
    text = read("linux-arc-pro-b60-xpu-torch2.11.txt")
    detected = text[text.index("Intel GPU models detected:") : text.index("HIP runtime version:")]
    cut = text.replace(detected, "", 1)
    why = "inferred: Is XPU available: True"
    unknown = "Intel GPU (model not in the report)"
    assert _inferred_gpus(parse(cut)) == (
        [Evidence("gpus", unknown, why)],
        [(0, unknown, "intel", why)],
    )
    off = changed(cut, "Is XPU available: True", "Is XPU available: False")
    assert _inferred_gpus(parse(off)) == ([], [])


@pytest.mark.parametrize(
    ("name", "message", "source", "what", "intent"),
    [
        # torch said it found no driver, and its build came from PyTorch's CUDA index
        (
            "driver-missing-centos7-cu110-cut-at-cuda.txt",
            "torch says: Found no NVIDIA driver on your system [collect_env:warning]; torch "
            "1.7.0+cu110 is a CUDA build from PyTorch's index [collect_env:PyTorch version]",
            "collect_env:warning",
            "torch found no NVIDIA driver",
            "torch says: Found no NVIDIA driver on your system; torch 1.7.0+cu110 is a CUDA build "
            "from PyTorch's index",
        ),
        # no driver line value, a CUDA build without the +cu label and an installed toolkit
        (
            "driver-missing-ubuntu20-cu113-toolkit-no-gpu-list.txt",
            "Nvidia driver version: Could not collect [collect_env:Nvidia driver version]; torch "
            "1.10.2 is built with CUDA 11.3 [collect_env:CUDA used to build PyTorch]; a CUDA "
            "toolkit 11.3 (nvcc) is installed [collect_env:CUDA runtime version (nvcc --version)]",
            "collect_env:Nvidia driver version",
            "Nvidia driver version: Could not collect",
            "torch 1.10.2 is built with CUDA 11.3; a CUDA toolkit 11.3 (nvcc) is installed",
        ),
    ],
)
def test_a_missing_driver_with_gpu_intent_is_said_whole(
    name: str, message: str, source: str, what: str, intent: str
) -> None:
    """A report that shows no driver and shows why it wanted one: the note names each sign with
    its line, the driver's evidence is "none", and the GPU is assumed, its driver missing or not
    loaded, with "no NVIDIA GPU" as the other answer."""
    report = parse(read(name))
    assert report.planning is not None
    (note,) = [n for n in report.planning.notes if n.code == "no-nvidia-driver"]
    assert (note.message, note.source, note.severity) == (message, source, "info")
    driver = [e for e in report.evidence if e.fact == "driver"]
    assert driver == [Evidence("driver", "none (missing or not loaded)", f"inferred: {what}")]
    gpus = [(a.value, a.why, a.alternative, a.alt) for a in report.assumptions if a.fact == "gpus"]
    assert gpus == [
        (
            "an NVIDIA GPU whose driver is missing or not loaded",
            f"the report shows GPU intent ({intent})",
            "the machine has no NVIDIA GPU",
            "gpus:none",
        )
    ]


@pytest.mark.parametrize(
    ("name", "value", "why", "alternative"),
    [
        # cut before its GPU list, a CPU build: nothing names a GPU
        (
            "aws-ubuntu20-python3.7-cut-before-gpus.txt",
            "no GPU",
            "the report has no GPU list and nothing in it names a GPU",
            "the machine has an NVIDIA GPU",
        ),
        # a CUDA build torch saw no GPU for, cut before its driver line
        (
            "vllm-omni-cu128-no-cuda-truncated.txt",
            "no NVIDIA GPU (torch saw none)",
            "CUDA is unavailable to the CUDA build and the report is cut before its driver line",
            "the machine has an NVIDIA GPU whose driver is not loaded",
        ),
    ],
)
def test_no_gpu_is_assumed_with_an_nvidia_gpu_as_the_other_answer(
    name: str, value: str, why: str, alternative: str
) -> None:
    """Where nothing shows a GPU, none is assumed, said whole, and an NVIDIA GPU is the
    answer that would change the plan ("gpus:nvidia")."""
    report = parse(read(name))
    gpus = [(a.value, a.why, a.alternative, a.alt) for a in report.assumptions if a.fact == "gpus"]
    assert gpus == [(value, why, alternative, "gpus:nvidia")]


def test_the_driver_floor_comes_from_the_wheels_label_without_its_cuda_line() -> None:
    """The 4x H100 report (torch 2.4.0+cu121, CUDA available, no driver line) with its "CUDA
    used to build PyTorch" line cut too: the "+cu121" label alone gives CUDA 12.1's driver
    floor, the same as with the line."""
    text = read("linux-4x-h100-mig-details.txt")
    whole = [e for e in parse(text).evidence if e.fact == "driver"]
    assert len(whole) == 1 and whole[0].value.startswith(">= ")
    report = parse(without(text, "CUDA used to build PyTorch:"))
    torch = report.facts.package("torch")
    assert torch is not None and torch.cuda is None
    assert [e for e in report.evidence if e.fact == "driver"] == whole


def test_a_driver_assumed_keeps_what_the_report_said_about_its_gpus() -> None:
    """The 4x H100 report (its GPUs listed, no driver line): the planning facts assume a
    current driver (its source says so) and keep the GPU list's source beside it."""
    report = parse(read("linux-4x-h100-mig-details.txt"))
    assert report.planning is not None and report.planning.nvidia is not None
    assert report.planning.nvidia.sources == {
        "gpus": "collect_env:GPU models and configuration",
        "cuda_driver_version": "assumed: a current driver",
    }


def test_a_fragment_that_names_no_os_assumes_no_machine_and_no_python() -> None:
    """The apex report's driver and cuDNN lines alone (no torch, no GPU, no message, no OS):
    nothing is planned for, so no OS, machine or Python is assumed either."""
    report = parse(read("mid-report-driver535-cudnn-lines-only.txt"))
    assert report.planning is not None
    assert report.planning.os.family == "other"
    assert (report.planning.python.machine, report.planning.python.version) == ("", "")
    assert report.assumptions == ()


def test_the_driver_assumed_names_the_floor_cuda_available_implies() -> None:
    """The 4x H100 report (torch 2.4.0+cu121, CUDA available, no driver line): the current
    driver assumed says why with CUDA 12.1's floor, and its other answer is a driver as old as
    that floor."""
    report = parse(read("linux-4x-h100-mig-details.txt"))
    floor = next(e.value for e in report.evidence if e.fact == "driver")[3:]
    (driver,) = [a for a in report.assumptions if a.fact == "driver"]
    assert driver.why == (
        f"the report has no driver version; CUDA available with its build means >= {floor}"
    )
    assert driver.alternative == (
        f"the driver is older than the planned build needs (as old as {floor})"
    )
    assert driver.alt == f"driver:{floor}"


def test_a_mac_whose_machine_the_report_does_not_say_is_assumed_apple_silicon() -> None:
    """The macOS 13 M2 Max report with every sign of its machine cut (the OS line's "(arm64)",
    the platform line, the CPU's model): a Mac's most common machine, arm64, is planned for;
    the facts read keep it unknown."""
    text = read("macos13-m2max-torch2.10dev.txt")
    text = changed(text, "OS: macOS 13.7.4 (arm64)", "OS: macOS 13.7.4")
    text = changed(text, "Python platform: macOS-13.7.4-arm64-arm-64bit\n", "")
    text = changed(text, "CPU:\nApple M2 Max\n", "CPU:\n")
    report = parse(text)
    assert (report.facts.python.machine, report.facts.cpu.architecture) == ("", None)
    assert report.planning is not None and report.planning.python.machine == "arm64"
