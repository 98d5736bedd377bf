"""The facts assembled from what a layout read (probe/report/build.py), one rule at a time on
real reports cut or changed where the rule decides: Rosetta on a Mac, the ROCm build that files
an unnamed GPU as AMD, the CUDA build line, a Windows CPU's WMI code."""

from __future__ import annotations

from test_report_behaviour import changed, read, without

from setup_env.probe.report import parse
from setup_env.probe.report.fields import MAX_GPUS

ROSETTA = "macos15-rosetta-m2pro.txt"  # an x86_64 Python on an Apple M2 Pro
ROCM37 = "linux-rocm3.7-source-build-device-66a1.txt"  # "GPU models ...: Device 66a1"


def test_an_x86_64_python_on_an_apple_m_cpu_runs_under_rosetta_said_from_the_report() -> None:
    """macOS, an x86_64 interpreter and an "Apple M" CPU: Rosetta 2, with the report as its
    source. An Intel Mac's CPU (the model changed to an Intel Core) is no Rosetta, and
    neither is a report without the CPU block's model."""
    text = read(ROSETTA)
    python = parse(text).facts.python
    assert (python.machine, python.rosetta, python.sources.get("rosetta")) == (
        "x86_64",
        True,
        "collect_env",
    )
    model = next(x for x in text.splitlines() if x.startswith("Apple M"))
    intel = changed(text, model, "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz")
    assert not parse(intel).facts.python.rosetta
    assert "rosetta" not in parse(intel).facts.python.sources
    assert not parse(text.replace(model + "\n", "", 1)).facts.python.rosetta


def test_a_rocm_build_files_an_unnamed_gpu_as_amd_by_its_rocm_line_alone() -> None:
    """ROCm 3.7's "Device 66a1" names no vendor and has no "GPU 0:" of NVIDIA's list: the
    build decides. Its "ROCM used to build" line alone (the HIP runtime line cut away) makes
    it an AMD GPU; without either line the bare name is no GPU at all."""
    text = without(read(ROCM37), "HIP runtime version:")
    facts = parse(text).facts
    assert facts.rocm is not None
    assert [(g.name, g.vendor) for g in facts.rocm.gpus] == [("Device 66a1", "amd")]
    assert facts.nvidia is None
    assert parse(without(text, "ROCM used to build PyTorch:")).facts.gpus == ()


def test_a_cut_rocm_line_is_no_rocm_build() -> None:
    """A paste cut inside "ROCM used to build PyTorch: N/" says no version: not a ROCm build,
    so with the HIP line cut away too "Device 66a1" is no GPU."""
    text = without(read(ROCM37), "HIP runtime version:")
    cut = changed(
        text, "ROCM used to build PyTorch: 3.7.20315-077bcfa0", "ROCM used to build PyTorch: N/"
    )
    assert parse(cut).facts.gpus == ()


def test_an_amd_gpu_list_past_the_cap_is_noted_as_an_nvidia_one_is() -> None:
    """The cap on a GPU list counts every vendor's GPUs: the TITAN Xp report's eight lines
    replaced by MAX_GPUS + 1 AMD cards' lines (filed as AMD by their name) is noted as capped
    and read to the cap, as the same count of NVIDIA lines is."""
    text = read("linux-8x-titanxp-torch1.3-old.txt")
    eight = "".join(f"GPU {n}: TITAN Xp\n" for n in range(8))
    amd = "".join(f"GPU {n}: AMD Radeon RX 7900 XTX\n" for n in range(MAX_GPUS + 1))
    facts = parse(changed(text, eight, amd)).facts
    assert facts.rocm is not None and len(facts.rocm.gpus) == MAX_GPUS
    assert "collect-env-gpus-capped" in {n.code for n in facts.notes}


# torch 2.0.1's sm_120 warning for an RTX 5090 (its whole paste), and the cu126 build's arch
# list from the RTX 5090 D report: two torch installs' warnings in one paste.
RTX5090 = "warning-only-rtx5090-sm120-torch2.0.1.txt"
CU126_ARCHES = "sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90."


def test_a_gpu_named_by_two_warnings_is_one_gpu() -> None:
    """The RTX 5090 warning pasted twice, the second with the cu126 build's arch list (not a
    repeat, so both messages are kept): one GPU, named by the warning, with its capability."""
    text = read(RTX5090)
    warning = "\n".join(text.splitlines()[:2]) + "\n"
    second = changed(warning, "sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.", CU126_ARCHES)
    report = parse(warning + second + text)
    assert len(report.warnings) == 2
    nvidia = report.facts.nvidia
    assert nvidia is not None
    assert [(g.index, g.name, g.compute_capability, g.source) for g in nvidia.gpus] == [
        (0, "NVIDIA GeForce RTX 5090", "12.0", "collect_env:warning")
    ]


def test_a_warning_whose_gpu_name_is_cut_off_adds_no_gpu() -> None:
    """The paste starts after the GPU's name ("with CUDA capability sm_120 ..."): torch's
    message is read, with the capability, but no GPU without a name is made of it."""
    text = read(RTX5090)
    cut = changed(text, "  NVIDIA GeForce RTX 5090 with CUDA", "with CUDA")
    report = parse(cut)
    assert [(m.kind, m.gpu, m.cc) for m in report.warnings] == [
        ("arch-not-compatible", None, "12.0")
    ]
    assert report.facts.gpus == ()


def test_the_gpu_list_and_the_hip_runtime_are_the_sources_they_are_read_from() -> None:
    """The H100 report's GPUs come from its GPU list, its driver from its driver line; a GT 720
    named only by torch's warning comes from the warning (not the GPU list); the WSL2
    ROCm report's version from its HIP runtime line (its GPU list cut: no GPUs, the version
    stays)."""
    nvidia = parse(read("linux-h100-cu130-driver570.txt")).facts.nvidia
    assert nvidia is not None
    assert nvidia.sources == {
        "driver_version": "collect_env:Nvidia driver version",
        "gpus": "collect_env:GPU models and configuration",
    }
    # a paste of torch's warning alone: its GPU comes from the warning, and says so
    warned = parse(read("warning-only-gt720-capability-3.5.txt")).facts.nvidia
    assert warned is not None and warned.sources == {"gpus": "collect_env:warning"}
    text = read("wsl2-rocm62-rx7900xt.txt")
    for cut in (text, without(text, "GPU models and configuration:")):
        rocm = parse(cut).facts.rocm
        assert rocm is not None
        assert (rocm.version, rocm.sources) == (
            "6.2",
            {"version": "collect_env:HIP runtime version"},
        )
    no_hip = parse(without(text, "HIP runtime version:")).facts.rocm
    assert no_hip is not None and (no_hip.version, no_hip.sources) == (None, {})


ARC_B60 = "linux-arc-pro-b60-xpu-torch2.11.txt"


def test_an_available_xpu_is_an_intel_gpu_machine_even_with_its_lists_cut() -> None:
    """The Arc Pro B60 report with its Intel driver and GPU lists cut away: "Is XPU available:
    True" alone still makes it an Intel GPU machine (no GPU named, no driver), and with
    "False" and no lists it is none."""
    text = read(ARC_B60)
    start = text.index("Intel GPU driver version:")
    end = text.index("HIP runtime version:")
    cut = text[:start] + text[end:]
    xpu = parse(cut).facts.xpu
    assert xpu is not None and (xpu.gpus, xpu.driver_version) == ((), None)
    off = changed(cut, "Is XPU available: True", "Is XPU available: False")
    assert parse(off).facts.xpu is None


def test_the_cuda_toolkit_is_read_with_its_full_version() -> None:
    """ "CUDA runtime version: 13.0.88" (nvcc's): toolkit 13.0, release 13.0.88, from that line."""
    (toolkit,) = parse(read("linux-h100-cu130-driver570.txt")).facts.toolkits
    assert (toolkit.version, toolkit.full_version, toolkit.source) == (
        "13.0",
        "13.0.88",
        "collect_env:CUDA runtime version (nvcc --version)",
    )


def test_a_report_cut_in_its_library_lines_says_so_in_a_note() -> None:
    """A report that stops inside its library list ("[pip3] to") is truncated, and its facts
    carry the note that says what follows the cut is unknown; whole, no such note."""
    text = read("linux-h100-cu130-driver570.txt")
    head = text[: text.index("[pip3]")]
    codes = {n.code for n in parse(head + "[pip3] to\n").facts.notes}
    assert "collect-env-truncated" in codes
    assert "collect-env-truncated" not in {n.code for n in parse(text).facts.notes}


def test_the_systems_intel_gpu_list_is_read_where_torch_lists_none() -> None:
    """The Max 1100 report (cut above torch's own list): the 8 GPUs of "Intel GPU models
    onboard", each an Intel GPU from that list, and the driver from the compute runtime."""
    xpu = parse(read("linux-max1100-xpu-onboard-top-cut.txt")).facts.xpu
    assert xpu is not None
    onboard = "collect_env:Intel GPU models onboard"
    assert [(g.index, g.name, g.vendor, g.source) for g in xpu.gpus] == [
        (i, "Intel(R) Data Center GPU Max 1100", "intel", onboard) for i in range(8)
    ]
    assert (xpu.driver_version, xpu.sources) == (
        "25.18.33578.15-1146~22.04",
        {"gpus": onboard, "driver_version": "collect_env:Intel GPU driver version"},
    )


def test_torchs_intel_gpu_list_wins_over_the_systems_of_the_same_length() -> None:
    """The Arc Pro B60 report with its onboard "N/A" changed to the one GPU xpu-smi would list:
    torch's list (as long, and with the GPU's properties) is the one read; with torch's list
    cut away the system's is; with both gone ("N/A" is no item) there is no GPU."""
    text = read(ARC_B60)
    one = changed(
        text,
        "Intel GPU models onboard:\nN/A",
        "Intel GPU models onboard:\n* Intel(R) Arc(TM) Pro B60 Graphics",
    )
    xpu = parse(one).facts.xpu
    assert xpu is not None and xpu.sources["gpus"] == "collect_env:Intel GPU models detected"
    detected = text[text.index("Intel GPU models detected:") : text.index("HIP runtime version:")]
    system = parse(one.replace(detected, "", 1)).facts.xpu
    assert system is not None and [(g.name, g.source) for g in system.gpus] == [
        ("Intel(R) Arc(TM) Pro B60 Graphics", "collect_env:Intel GPU models onboard")
    ]
    neither = parse(text.replace(detected, "", 1)).facts.xpu
    assert neither is not None and neither.gpus == ()


def test_a_jetsons_cuda_is_its_toolkits_read_from_that_line() -> None:
    """The AGX Orin report (torch 1.14.0a0+...nv23.02, L4T kernel): a Jetson whose CUDA is
    the installed toolkit's (JetPack's own), from the "CUDA runtime version" line."""
    jetson = parse(read("jetson-agx-orin-nv23.02.txt")).facts.jetson
    assert jetson is not None
    assert (jetson.cuda, jetson.sources) == (
        "11.4",
        {"cuda": "collect_env:CUDA runtime version (nvcc --version)"},
    )
