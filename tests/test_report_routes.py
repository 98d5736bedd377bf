"""The report reader's less travelled routes, each alone (issue 22): a message seen only once in
the captured reports, a list's first item on its key's line, a GPU the catalogue does not know,
a report read without a wheel matrix. On the real collect_env reports in
tests/fixtures/collect_env (each with its .source); where a route needs a case no captured
report shows, the report is cut or one line changed, and the test says which."""

from __future__ import annotations

import pytest
from test_report_behaviour import changed, read, without

from setup_env.facts import Facts, Note
from setup_env.knowledge.cuda import driver_fit
from setup_env.knowledge.matrix import in_use
from setup_env.probe.report import CollectEnvError, parse
from setup_env.probe.report.fields import MAX_GPUS
from setup_env.probe.report.infer import UNKNOWN_NVIDIA
from setup_env.probe.report.model import Evidence


def planning(text: str) -> Facts:
    report = parse(text)
    assert report.planning is not None
    return report.planning


# --- torch's messages --------------------------------------------------------------------------

# The title of pytorch/pytorch#72957 (CUDA's error line), whose stored copy starts at the
# report's library list: tail-only-conda-torch1.10.2-cu102-libraries.txt.
CUDA_NO_KERNEL = (
    "RuntimeError: CUDA error: no kernel image is available for execution on the device"
)


def test_cudas_no_kernel_image_error_is_read_and_means_a_loaded_nvidia_driver() -> None:
    """CUDA's error comes from a driver that answered: with no GPU list, an NVIDIA GPU of
    unknown model is inferred from it (not assumed), and the message is read once."""
    tail = read("tail-only-conda-torch1.10.2-cu102-libraries.txt")
    report = parse(CUDA_NO_KERNEL + "\n\n" + tail)
    assert [(m.kind, m.text) for m in report.warnings] == [
        ("no-kernel-image", "no kernel image is available for execution on the device")
    ]
    gpus = planning(CUDA_NO_KERNEL + "\n\n" + tail).gpus
    assert [g.name for g in gpus] == [UNKNOWN_NVIDIA]
    assert gpus[0].source == (
        "inferred: torch's message comes from a loaded NVIDIA driver "
        "(no kernel image is available for execution on the device)"
    )
    assert "gpus" not in {a.fact for a in report.assumptions}
    # the same error twice (the traceback's line and its repetition) is one message
    twice = parse(CUDA_NO_KERNEL + "\n" + CUDA_NO_KERNEL + "\n\n" + tail)
    assert [m.kind for m in twice.warnings] == ["no-kernel-image"]
    # above and below the cuDNN loader message: each keeps its place
    cudnn = read("message-cudnn-load-failed.txt")
    kinds = [m.kind for m in parse(CUDA_NO_KERNEL + "\n" + cudnn).warnings]
    assert kinds == ["no-kernel-image", "library-load"]
    kinds = [m.kind for m in parse(cudnn + "\n" + CUDA_NO_KERNEL).warnings]
    assert kinds == ["library-load", "no-kernel-image"]
    # the library list alone names no GPU: the machine is assumed to have none or one
    assert "gpus" in {a.fact for a in parse(tail).assumptions}
    assert parse(tail).warnings == ()


def test_a_library_message_is_read_where_lower_casing_changes_the_texts_length() -> None:
    """The loader's message in a paste holding a character whose lower case is two characters
    (Turkish dotted capital I, U+0130: its lower case is "i" and a combining dot): the
    library is still read, and only once. The paste's first word "I" is changed to "İ" (what a
    Turkish keyboard types for a capital I)."""
    text = read("message-cudnn-load-failed.txt")
    turkish = changed(text, "I have cuDNN 8", "\u0130 have cuDNN 8")
    assert len(turkish.lower()) == len(turkish) + 1
    for paste in (text, turkish):
        libs = [(m.kind, m.library) for m in parse(paste).warnings]
        assert libs == [("library-load", "libcudnn_ops_infer.so.8")]


LOADER = "libcudnn_ops_infer.so.8: cannot open shared object file: No such file or directory"
# pytorch/pytorch#131312's import error (as in test_report_rules.LIBRARY_ERRORS)
CUSPARSE = (
    "ImportError: /home/dp/anaconda3/envs/ComfyUI/lib/python3.11/site-packages/torch/lib/../"
    "../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, "
    "version libnvJitLink.so.12"
)


def libraries(text: str) -> list[str | None]:
    return [m.library for m in parse(text).warnings if m.kind == "library-load"]


def test_each_library_torch_could_not_load_is_read_in_the_order_pasted() -> None:
    """The cuDNN loader message (message-cudnn-load-failed.txt) and the cuSPARSE import error
    of pytorch/pytorch#131312 pasted one below the other: both libraries are read, in the
    order pasted, each once (cuDNN's message names its file twice)."""
    cudnn = read("message-cudnn-load-failed.txt")
    assert LOADER in cudnn
    assert libraries(cudnn + "\n" + CUSPARSE) == ["libcudnn_ops_infer.so.8", "libcusparse.so.12"]
    assert libraries(CUSPARSE + "\n" + cudnn) == ["libcusparse.so.12", "libcudnn_ops_infer.so.8"]


def test_a_library_message_at_the_very_start_of_a_paste_is_read_whole() -> None:
    """The loader's line of message-cudnn-load-failed.txt pasted from its file name on (the
    "Could not load library ... Error: " before it cut away): the name read is the whole file
    name, its "lib" included."""
    assert libraries(LOADER) == ["libcudnn_ops_infer.so.8"]
    assert libraries(LOADER + "\n" + CUSPARSE) == ["libcudnn_ops_infer.so.8", "libcusparse.so.12"]


def test_the_library_a_loader_message_names_is_the_file_nearest_its_words() -> None:
    """The apex report's cuDNN lines (mid-report-driver535-cudnn-lines-only.txt, ending in the
    path of libcudnn_adv_infer.so.8.5.0) with the loader's line of message-cudnn-load-failed.txt
    (from its file name on) pasted below: the library that failed is the loader's
    libcudnn_ops_infer.so.8, not the cuDNN file listed on the line above it; and in the
    loader's whole line, which names the file twice, the text read starts at the second."""
    apex = read("mid-report-driver535-cudnn-lines-only.txt")
    assert apex.endswith("/libcudnn_adv_infer.so.8.5.0\n")
    assert libraries(apex + LOADER) == ["libcudnn_ops_infer.so.8"]
    (msg,) = parse(read("message-cudnn-load-failed.txt")).warnings
    assert msg.text == LOADER[: LOADER.index(": No such")]


def test_a_library_message_is_read_below_a_paste_that_starts_with_a_library_name() -> None:
    """The apex report's cuDNN lines (mid-report-driver535-cudnn-lines-only.txt) from its
    "cuDNN version:" line on, the driver line above it cut away, so that the paste starts with
    "cuDNN", with the loader's line of message-cudnn-load-failed.txt (from its file name on)
    below: the message is still read (the paths listed under "cuDNN version:" are none)."""
    lines = read("mid-report-driver535-cudnn-lines-only.txt").splitlines(keepends=True)
    assert lines[1].startswith("cuDNN version:")
    fragment = "".join(lines[1:])
    assert libraries(fragment + "\n" + LOADER) == ["libcudnn_ops_infer.so.8"]
    assert libraries("".join(lines)) == []


@pytest.mark.parametrize(
    ("found", "cuda"),
    [("11040", "11.4"), ("11000", "11.0"), ("10010", "10.1"), ("12090", "12.9")],
)
def test_the_cuda_a_too_old_driver_runs_is_read_from_its_version_number(
    found: str, cuda: str
) -> None:
    """torch's "too old (found version 11040)" (message-driver-too-old-11040-rtx3050.txt): the
    number is CUDA's major times 1000 plus its minor times 10. The number changed to other
    drivers' (R450's 11000, R418's 10010, R575's 12090) at the thousands boundary."""
    text = read("message-driver-too-old-11040-rtx3050.txt")
    msgs = parse(changed(text, "(found version 11040)", f"(found version {found})")).warnings
    assert [(m.kind, m.cuda_driver) for m in msgs] == [("driver-too-old", cuda)]


def test_messages_of_different_kinds_are_read_in_the_order_pasted() -> None:
    """The too-old driver message (message-driver-too-old-11040-rtx3050.txt) and the cuDNN
    loader message (message-cudnn-load-failed.txt) pasted one below the other, in both
    orders: both are read, in the order pasted."""
    driver = read("message-driver-too-old-11040-rtx3050.txt")
    cudnn = read("message-cudnn-load-failed.txt")
    kinds = [m.kind for m in parse(driver + "\n" + cudnn).warnings]
    assert kinds == ["driver-too-old", "library-load"]
    kinds = [m.kind for m in parse(cudnn + "\n" + driver).warnings]
    assert kinds == ["library-load", "driver-too-old"]


def test_a_warning_pasted_from_the_gpus_name_on_names_the_whole_gpu() -> None:
    """torch's sm_120 warning (warning-only-rtx5090-sm120-torch2.0.1.txt, indented by two
    spaces) pasted without its indentation, so that the GPU's name opens the paste: the name
    is read whole."""
    text = read("warning-only-rtx5090-sm120-torch2.0.1.txt")
    assert text.startswith("  NVIDIA GeForce RTX 5090 with")
    for paste in (text, text[2:]):
        (msg,) = [m for m in parse(paste).warnings if m.kind == "arch-not-compatible"]
        assert msg.gpu == "NVIDIA GeForce RTX 5090"


def test_a_warning_cut_before_its_gpus_name_names_no_gpu() -> None:
    """The same warning cut before "with CUDA capability" (the GPU's name lost), alone and
    below the TITAN Xp report's cut last line: no GPU name is read (the line above gives none),
    the capability still is."""
    text = read("warning-only-rtx5090-sm120-torch2.0.1.txt")
    cut = text[text.index("with CUDA capability") :]
    report = read("linux-8x-titanxp-torch1.3-old.txt")
    for paste in (cut, report + cut):
        (msg,) = [m for m in parse(paste).warnings if m.kind == "arch-not-compatible"]
        assert (msg.gpu, msg.cc) == (None, "12.0")
        assert msg.text.startswith("with CUDA capability sm_120 is not compatible")


# Each real message alone: the kind and the values read from it.
MESSAGES = [
    ("message-driver-too-old-11040-rtx3050.txt", "driver-too-old", {"cuda_driver": "11.4"}),
    (
        "warning-only-rtx5090-sm120-torch2.0.1.txt",
        "arch-not-compatible",
        {
            "gpu": "NVIDIA GeForce RTX 5090",
            "cc": "12.0",
            "arches": ("sm_37", "sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"),
        },
    ),
    # torch 1.x's form: "The minimum cuda capability supported by this library is 3.7."
    (
        "warning-only-gt720-capability-3.5.txt",
        "gpu-too-old",
        {"gpu": "GeForce GT 720", "cc": "3.5", "min_cc": "3.7", "max_cc": None},
    ),
    # torch 2.x's form: "Minimum and Maximum ... is (8.0) - (12.0)", a GPU above the maximum
    (
        "warning-only-dgx-spark-gb10-cc12.1.txt",
        "gpu-too-new",
        {"gpu": "NVIDIA GB10", "cc": "12.1", "min_cc": "8.0", "max_cc": "12.0"},
    ),
    ("message-803-unsupported-driver-combination.txt", "device-count-error", {"error": 803}),
    ("message-mps-macos26.txt", "mps-unavailable", {"min_macos": "14.0"}),
    ("message-hip-invalid-device-function-5700xt.txt", "rocm-no-kernel", {}),
    ("driver-missing-centos7-cu110-cut-at-cuda.txt", "no-driver", {}),
]


@pytest.mark.parametrize(("name", "kind", "values"), MESSAGES)
def test_each_message_is_read_into_its_kind_and_values(
    name: str, kind: str, values: dict[str, object]
) -> None:
    (msg,) = [m for m in parse(read(name)).warnings if m.kind == kind]
    assert {k: getattr(msg, k) for k in values} == values


@pytest.mark.parametrize(("name", "kind"), [(n, k) for n, k, _ in MESSAGES])
def test_each_message_keeps_its_place_beside_another(name: str, kind: str) -> None:
    """Each real message pasted above and below the cuDNN loader message
    (message-cudnn-load-failed.txt): the messages are read in the order pasted."""
    text, cudnn = read(name), read("message-cudnn-load-failed.txt")
    kinds = [m.kind for m in parse(text + "\n" + cudnn).warnings]
    assert kinds.index(kind) < kinds.index("library-load")
    kinds = [m.kind for m in parse(cudnn + "\n" + text).warnings]
    assert kinds.index("library-load") < kinds.index(kind)


def test_the_gpu_a_warning_names_is_read_from_the_warnings_own_line() -> None:
    """torch's sm_120 warning (warning-only-rtx5090-sm120-torch2.0.1.txt) pasted below the
    TITAN Xp report, whose paste ends cut inside a library line ("[pip3] to"): the GPU is the
    one the warning's line names, no word of the line above it joins the name."""
    warning = read("warning-only-rtx5090-sm120-torch2.0.1.txt")
    report = read("linux-8x-titanxp-torch1.3-old.txt")
    assert report.endswith("\n[pip3] to\n")
    for paste in (warning, report + warning):
        (msg,) = [m for m in parse(paste).warnings if m.kind == "arch-not-compatible"]
        assert (msg.gpu, msg.cc) == ("NVIDIA GeForce RTX 5090", "12.0")
        assert msg.text.startswith("NVIDIA GeForce RTX 5090 with CUDA capability sm_120 ")
    names = [g.name for g in parse(report + warning).facts.gpus]
    assert names == ["TITAN Xp"] * 8 + ["NVIDIA GeForce RTX 5090"]


# --- GPUs named by torch's warnings ----------------------------------------------------------


def test_a_listed_gpu_the_catalogue_does_not_know_takes_its_capability_from_the_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The RTX 5090 D report (GPU list and torch's sm_120 warning naming the same GPU) read as
    before the catalogue knew that GPU (the catalogue's fill made a no-op): the listed GPU
    takes compute capability 12.0 from the warning and is not listed twice."""
    text = read("linux-rtx5090d-cu126-sm120-warning.txt")
    monkeypatch.setattr("setup_env.probe.resolve.fill", lambda gpu: gpu)
    gpus = parse(text).facts.gpus
    assert [(g.name, g.compute_capability, g.source) for g in gpus] == [
        ("NVIDIA GeForce RTX 5090 D", "12.0", "collect_env")
    ]
    # the warning cut away: the listed GPU has no capability (nothing else gives it one)
    cut = text[text.index("PyTorch version:") :]
    assert [g.compute_capability for g in parse(cut).facts.gpus] == [None]


@pytest.mark.parametrize(("listed", "read_as"), [(MAX_GPUS - 1, MAX_GPUS), (MAX_GPUS, MAX_GPUS)])
def test_a_gpu_named_only_by_a_warning_joins_the_list_while_it_is_under_max_gpus(
    listed: int, read_as: int
) -> None:
    """The 8 "GPU n: TITAN Xp" lines repeated to `listed` lines, and the RTX 5090 warning of
    warning-only-rtx5090-sm120-torch2.0.1.txt pasted below the report: the GPU it names is
    added after the list while the list holds fewer than MAX_GPUS GPUs, never past them."""
    text = read("linux-8x-titanxp-torch1.3-old.txt")
    eight = "".join(f"GPU {n}: TITAN Xp\n" for n in range(8))
    many = "".join(f"GPU {n}: TITAN Xp\n" for n in range(listed))
    text = changed(text, eight, many) + "\n" + read("warning-only-rtx5090-sm120-torch2.0.1.txt")
    gpus = parse(text).facts.gpus
    assert len(gpus) == read_as
    assert ("NVIDIA GeForce RTX 5090" in {g.name for g in gpus}) == (listed < MAX_GPUS)
    assert gpus[-1].index == read_as - 1


# --- Jetson ----------------------------------------------------------------------------------


def test_a_jetson_without_nvcc_has_no_jetpack_cuda() -> None:
    """The Orin container report names its CUDA by nvcc ("CUDA runtime version: 12.2.140");
    changed to "Could not collect" (a container without the toolkit): the Jetson is still
    read from its GPU, with no CUDA and no source for one."""
    text = read("jetson-orin-container-top-cut.txt")
    jetson = parse(text).facts.jetson
    assert jetson is not None and jetson.cuda == "12.2"
    no_nvcc = changed(
        text, "CUDA runtime version: 12.2.140", "CUDA runtime version: Could not collect"
    )
    jetson = parse(no_nvcc).facts.jetson
    assert jetson is not None
    assert (jetson.module, jetson.cuda, jetson.compute_capability) == ("Orin (nvgpu)", None, "8.7")
    assert jetson.sources == {"module": "collect_env:GPU models and configuration"}


# --- Intel GPU lists ------------------------------------------------------------------------


def test_the_intel_onboard_lists_first_item_on_its_keys_line_is_read() -> None:
    """The Max 1100 report (torch's own list cut after two of the system's eight GPUs) with the
    line break after "Intel GPU models onboard:" lost: the eight GPUs are still read."""
    text = read("linux-max1100-xpu-onboard-top-cut.txt")
    first = "Intel GPU models onboard:\n* Intel(R) Data Center GPU Max 1100\n"
    joined = changed(text, first, "Intel GPU models onboard: * Intel(R) Data Center GPU Max 1100\n")
    for paste in (text, joined):
        xpu = parse(paste).facts.xpu
        assert xpu is not None
        assert [g.name for g in xpu.gpus] == ["Intel(R) Data Center GPU Max 1100"] * 8
        assert xpu.sources["gpus"] == "collect_env:Intel GPU models onboard"


def test_the_intel_driver_lists_first_item_on_its_keys_line_is_read() -> None:
    """The Windows B580 report with the line break after "Intel GPU driver version:" lost: the
    display driver's version is still read."""
    text = read("xpu-windows11-b580-torch2.13.txt")
    first = "Intel GPU driver version:\n* 32.0.101.8826"
    joined = changed(text, first, "Intel GPU driver version: * 32.0.101.8826")
    for paste in (text, joined):
        xpu = parse(paste).facts.xpu
        assert xpu is not None and xpu.driver_version == "32.0.101.8826"
        assert xpu.sources["driver_version"] == "collect_env:Intel GPU driver version"


# --- the OS of a report without its OS lines ---------------------------------------------------


def test_a_glibc_or_musl_libc_line_makes_a_report_without_os_lines_linux() -> None:
    """The Debian report without its "OS:" and "Python platform:" lines: its "Libc version:
    glibc-2.36" says Linux; the same line changed to musl's says Linux too; without the libc
    line nothing names the OS and Linux is assumed (said as an assumption)."""
    text = without(read("debian12-cpu-torch2.13.txt"), "OS:", "Python platform:")
    for libc in ("glibc-2.36", "musl-1.2.5"):
        report = parse(changed(text, "Libc version: glibc-2.36", f"Libc version: {libc}"))
        assert report.facts.os.family == "linux"
        assert report.facts.os.sources["family"] == (
            f"inferred: Libc version: {libc} (glibc and musl are Linux's)"
        )
        assert "os" not in {a.fact for a in report.assumptions}
    # a libc line naming neither (collect_env's "N/A" where platform.libc_ver() finds none)
    report = parse(changed(text, "Libc version: glibc-2.36", "Libc version: N/A"))
    assert report.facts.os.family == "other"
    assert "os" in {a.fact for a in report.assumptions}


def test_cudnns_windows_loader_message_is_read_and_its_dll_makes_the_os_windows() -> None:
    """cuDNN's loader message on Windows (message-cudnn-dll-load-failed-windows.txt, quoted with
    ">" as in pytorch/pytorch#46312): the DLL is read as the library torch could not load, the
    DLL says Windows (inferred, the DLL named), and an NVIDIA GPU is assumed from it (CUDA's
    library, no GPU list). Its Linux twin (message-cudnn-load-failed.txt) says Linux."""
    report = parse(read("message-cudnn-dll-load-failed-windows.txt"))
    assert [(m.kind, m.library, m.text) for m in report.warnings] == [
        (
            "library-load",
            "cudnn_ops_infer64_8.dll",
            "Could not load library cudnn_ops_infer64_8.dll",
        )
    ]
    assert report.facts.os.family == "windows"
    assert report.facts.os.sources["family"] == (
        "inferred: torch's message names a Windows DLL (cudnn_ops_infer64_8.dll)"
    )
    (gpus,) = [a for a in report.assumptions if a.fact == "gpus"]
    assert gpus.why == (
        "torch failed to load CUDA's cudnn_ops_infer64_8.dll; the report has no GPU list"
    )
    linux = parse(read("message-cudnn-load-failed.txt")).facts.os
    assert linux.family == "linux"
    assert linux.sources["family"] == (
        "inferred: torch's message names a Linux shared library (libcudnn_ops_infer.so.8)"
    )


def test_a_windows_site_packages_path_makes_a_report_without_os_lines_windows() -> None:
    """The Windows 11 report (NumPy's warning above it names "C:\\Users\\...\\site-packages\\
    torch\\...") without its "OS:" and "Python platform:" lines: the path says Windows, and the
    path (not the warning's line) is named, its middle elided past 90 characters."""
    text = without(
        read("windows11-cpu-build-torch2.8dev-xpu-fields.txt"), "OS:", "Python platform:"
    )
    path = (
        "C:\\Users\\user\\miniforge3\\envs\\py310\\lib\\site-packages\\torch\\_subclasses\\"
        "functional_tensor.py:279:"
    )
    assert path + " UserWarning" in text and len(path) > 90
    family = parse(text).facts.os
    assert family.family == "windows"
    assert family.sources["family"] == f"inferred: a Windows path ({path[:40]}…{path[-45:]})"


def test_a_macos_site_packages_path_makes_a_report_without_os_lines_darwin() -> None:
    """The macOS 10.12 report (its traceback's "/Users/.../site-packages/..." paths) without its
    "OS:" line: the path says macOS, and the path is named."""
    text = without(read("driver-missing-macos10.12-cuda9.2-source-cut.txt"), "OS:")
    report = parse(text)
    assert report.facts.os.family == "darwin"
    assert report.facts.os.sources["family"].startswith("inferred: a macOS path (/Users/tesfaz1/")
    assert "os" not in {a.fact for a in report.assumptions}


# --- the driver a CUDA build implies ---------------------------------------------------------

H100 = "linux-4x-h100-mig-details.txt"  # torch 2.4.0+cu121, CUDA available, no driver line


def test_a_cuda_build_newer_than_the_matrix_knows_implies_no_driver_floor() -> None:
    """The H100 report's build changed from CUDA 12.1 to 13.3 (a CUDA the bundled matrix does
    not know): no driver floor is inferred, and the driver assumed is a current one with no
    floor named; the matrix's newest CUDA (13.2) still gives its floor."""
    text = read(H100)

    def cuda(version: str) -> str:
        tag = "cu" + version.replace(".", "")
        out = changed(text, "PyTorch version: 2.4.0+cu121", f"PyTorch version: 2.4.0+{tag}")
        return changed(
            out, "CUDA used to build PyTorch: 12.1", f"CUDA used to build PyTorch: {version}"
        )

    report = parse(cuda("13.3"))
    assert [e for e in report.evidence if e.fact == "driver"] == []
    (driver,) = [a for a in report.assumptions if a.fact == "driver"]
    assert driver.why == "the report has no driver version"
    assert driver.alternative == "the driver is older than the planned build needs"
    assert driver.alt == "driver-below-plan"
    report = parse(cuda("13.2"))
    floor = [e.value for e in report.evidence if e.fact == "driver"]
    assert len(floor) == 1 and floor[0].startswith(">= ")
    (driver,) = [a for a in report.assumptions if a.fact == "driver"]
    assert driver.alt == "driver:" + floor[0][3:]


def test_without_a_wheel_matrix_a_report_is_read_with_no_driver_inferred_or_assumed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The H100 report read where no wheel matrix can be loaded (knowledge.matrix.in_use gives
    None): its GPUs and build are read, no driver floor is inferred and no driver assumed
    (there is no newest CUDA to assume a driver for)."""
    monkeypatch.setattr("setup_env.knowledge.matrix.in_use", lambda: None)
    report = parse(read(H100))
    assert [g.name for g in report.facts.gpus] == ["NVIDIA H100"] * 4
    assert [e for e in report.evidence if e.fact == "driver"] == []
    assert "driver" not in {a.fact for a in report.assumptions}
    nvidia = planning(read(H100)).nvidia
    assert nvidia is not None and nvidia.cuda_driver_version is None


def test_the_driver_floor_a_windows_report_implies_is_windows_drivers() -> None:
    """The Windows 11 GTX 1050 Ti report (torch 2.0.1+cu117, CUDA available) without its
    "Nvidia driver version:" line: the driver floor inferred is CUDA 11.7's for Windows drivers
    (their numbering differs from Linux's), as the matrix's CUDA rules give it."""
    text = without(read("windows11-gtx1050ti-cu117.txt"), "Nvidia driver version:")
    matrix = in_use()
    assert matrix is not None
    fit = driver_fit(None, "11.7", "windows", matrix.cuda)
    floor = fit.mvc_floor or fit.toolkit_min
    assert floor != driver_fit(None, "11.7", "linux", matrix.cuda).toolkit_min
    report = parse(text)
    assert [e.value for e in report.evidence if e.fact == "driver"] == [f">= {floor}"]
    (driver,) = [a for a in report.assumptions if a.fact == "driver"]
    assert driver.alt == f"driver:{floor}"


def test_the_driver_assumed_runs_the_newest_cuda_the_matrix_knows() -> None:
    """The H100 report (no driver line): the driver assumed is one that runs the matrix's
    newest CUDA, and the facts planned from carry that CUDA as the driver's."""
    matrix = in_use()
    assert matrix is not None
    newest = max(matrix.cuda, key=lambda k: tuple(int(x) for x in k.split(".")))
    report = parse(read(H100))
    (driver,) = [a for a in report.assumptions if a.fact == "driver"]
    assert driver.value == f"a current NVIDIA driver (one that runs CUDA {newest})"
    nvidia = planning(read(H100)).nvidia
    assert nvidia is not None and nvidia.cuda_driver_version == newest
    assert nvidia.sources["cuda_driver_version"] == "assumed: a current driver"


def test_a_site_packages_path_cut_before_its_root_names_no_os() -> None:
    """The CentOS 7 report (torch's warning above it names "`home/python3_env/.../python3.6/
    site-packages/...", the path's leading "/" lost to the paste's backtick) without its "OS:",
    "Libc version:" and "Python platform:" lines: the cut path is rooted nowhere, so it names no
    OS: Linux is assumed (and said), not inferred."""
    text = read("driver-missing-centos7-cu110-cut-at-cuda.txt")
    assert text.startswith("`home/python3_env/venv-py3/lib/python3.6/site-packages/")
    report = parse(without(text, "OS:", "Libc version:", "Python platform:"))
    assert report.facts.os.family == "other"
    assert "os" in {a.fact for a in report.assumptions}
    # the same path with its root (the backtick dropped): a Linux path
    rooted = parse(
        without(text[1:].replace("home/", "/home/", 1), "OS:", "Libc version:", "Python platform:")
    )
    assert rooted.facts.os.family == "linux"
    assert rooted.facts.os.sources["family"].startswith("inferred: a Linux path (/home/")


def test_a_cuda_build_named_only_by_its_library_line_is_a_cuda_build() -> None:
    """The library list of pytorch/pytorch#72957 alone (tail-only-conda-torch1.10.2-cu102-
    libraries.txt: "[pip3] torch==1.10.2+cu102"-like lines, no "CUDA used to build" line): the
    torch named is evidence with its build, and being a CUDA build it was installed for an
    NVIDIA GPU, which is assumed (not "no GPU")."""
    report = parse(read("tail-only-conda-torch1.10.2-cu102-libraries.txt"))
    assert [e for e in report.evidence if e.fact == "torch"] == [
        Evidence("torch", "1.10.2 (cu102)", "collect_env:[pip3]")
    ]
    (gpus,) = [a for a in report.assumptions if a.fact == "gpus"]
    assert (gpus.value, gpus.why, gpus.alt) == (
        "an NVIDIA GPU",
        "torch 1.10.2 is a CUDA build, installed for an NVIDIA GPU; the report has no GPU list",
        "gpus:none",
    )


# --- notes -------------------------------------------------------------------------------------


def _notes(text: str, code: str) -> list[Note]:
    return [n for n in parse(text).facts.notes if n.code == code]


def test_a_jetson_is_noted_from_its_l4t_kernel_or_nvidias_torch_build() -> None:
    """The AGX Orin report (kernel 5.10.120-tegra, torch 2.0.0a0+ec3941ad.nv23.02): the note
    names both; the Orin Nano report without torch names the kernel alone; the AGX Orin report
    without its "Python platform:" line (no kernel) is still noted, from its torch build."""
    orin = read("jetson-agx-orin-nv23.02.txt")
    build = "torch 2.0.0a0+ec3941ad.nv23.02 is NVIDIA's Jetson build"
    assert _notes(orin, "jetson") == [
        Note(
            "jetson",
            f"an NVIDIA Jetson (L4T kernel 5.10.120-tegra; {build})",
            "collect_env:Python platform",
            "info",
        )
    ]
    (nano,) = _notes(read("jetson-orin-nano-no-torch.txt"), "jetson")
    assert nano.message == "an NVIDIA Jetson (L4T kernel 5.10.216-tegra)"
    (no_kernel,) = _notes(without(orin, "Python platform:"), "jetson")
    assert no_kernel.message == f"an NVIDIA Jetson (L4T kernel ?; {build})"
    assert _notes(read("debian12-cpu-torch2.13.txt"), "jetson") == []


def test_each_message_is_a_note_of_its_kind() -> None:
    """The 803 message (message-803-unsupported-driver-combination.txt) is a note of its kind,
    with the message's text, from the pasted warning."""
    (msg,) = parse(read("message-803-unsupported-driver-combination.txt")).warnings
    notes = _notes(
        read("message-803-unsupported-driver-combination.txt"), "torch-message-device-count-error"
    )
    assert notes == [
        Note("torch-message-device-count-error", msg.text, "collect_env:warning", "info")
    ]


@pytest.mark.parametrize(("listed", "noted"), [(MAX_GPUS - 1, False), (MAX_GPUS + 1, True)])
def test_a_gpu_list_longer_than_max_gpus_is_noted(listed: int, noted: bool) -> None:
    """The 8 "GPU n: TITAN Xp" lines repeated to `listed` lines: past MAX_GPUS the note says
    only the first MAX_GPUS were read; under it, no note."""
    text = read("linux-8x-titanxp-torch1.3-old.txt")
    eight = "".join(f"GPU {n}: TITAN Xp\n" for n in range(8))
    many = "".join(f"GPU {n}: TITAN Xp\n" for n in range(listed))
    notes = _notes(changed(text, eight, many), "collect-env-gpus-capped")
    assert notes == (
        [
            Note(
                "collect-env-gpus-capped",
                f"the GPU list is longer than a machine's: its first {MAX_GPUS} GPUs are read",
                "collect_env:GPU models and configuration",
                "info",
            )
        ]
        if noted
        else []
    )


# --- what counts as a report -----------------------------------------------------------------


def test_two_of_collect_envs_lines_are_a_report_one_alone_is_not() -> None:
    """The apex fragment (mid-report-driver535-cudnn-lines-only.txt: the "Nvidia driver
    version:" and "cuDNN version:" lines, neither among the lines that make a report alone) is
    read; either line cut away, the one left is refused."""
    lines = read("mid-report-driver535-cudnn-lines-only.txt").splitlines(keepends=True)
    assert parse("".join(lines)).fields.keys() == {"Nvidia driver version", "cuDNN version"}
    for cut in (lines[:1], lines[1:]):
        with pytest.raises(CollectEnvError):
            parse("".join(cut))


def test_a_torch_library_line_alone_is_a_report_another_library_is_not() -> None:
    """Single lines of pytorch/pytorch#72957's library list: pip's "torch==1.10.2" and conda's
    "pytorch 1.10.2 py3.7_cuda10.2..." are each read as a report of that torch; numpy's line
    alone is refused."""
    tail = read("tail-only-conda-torch1.10.2-cu102-libraries.txt").splitlines()
    pip = next(x for x in tail if x.startswith("[pip3] torch=="))
    conda = next(x for x in tail if x.startswith("[conda] pytorch "))
    numpy = next(x for x in tail if x.startswith("[pip3] numpy=="))
    for line in (pip, conda):
        torch = parse(line + "\n").facts.package("torch")
        assert torch is not None and torch.version == "1.10.2", line
        assert parse(line + "\n").layout == "pytorch"
    with pytest.raises(CollectEnvError):
        parse(numpy + "\n")


def test_torchs_list_of_detected_xpus_alone_is_a_report() -> None:
    """The XPU CI log (xpu-ci-log-timestamps-max1100-cut-before-python.txt) from its "Intel GPU
    models detected:" line on: torch's own list of the Intel GPUs is a report of them."""
    text = read("xpu-ci-log-timestamps-max1100-cut-before-python.txt")
    lines = text.splitlines(keepends=True)
    at = next(i for i, x in enumerate(lines) if "Intel GPU models detected:" in x)
    detected = "".join(
        x for x in lines[at:] if "Intel GPU models detected:" in x or "_XpuDeviceProperties(" in x
    )
    report = parse(detected)
    assert report.fields.keys() == {"Intel GPU models detected"}
    xpu = report.facts.xpu
    assert xpu is not None and len(xpu.gpus) >= 1
    assert {g.name for g in xpu.gpus} == {"Intel(R) Data Center GPU Max 1100"}


def test_a_report_ends_where_a_second_begins_only_after_five_of_its_lines() -> None:
    """The Windows GTX 1050 Ti report cut after its first four key lines (PyTorch version to
    "ROCM used to build"), then the H100 report pasted whole: four lines are a fragment, so the
    second report's lines are read into it (its H100); cut after its fifth ("OS:"), the first
    report is whole enough to end where the second begins, and none of the H100's lines mix in
    (the first is cut before its GPU list: no GPU)."""
    a = read("windows11-gtx1050ti-cu117.txt")
    b = read("linux-h100-cu130-driver570.txt")
    four = a[
        : a.index("ROCM used to build PyTorch: N/A\n") + len("ROCM used to build PyTorch: N/A\n")
    ]
    five = a[: a.index("OS: Microsoft Windows 11 Pro\n") + len("OS: Microsoft Windows 11 Pro\n")]
    assert [g.name for g in parse(four + b).facts.gpus] == ["NVIDIA H100 80GB HBM3"]
    assert parse(four + b).facts.package("torch").version == "2.0.1+cu117"  # type: ignore[union-attr]
    facts = parse(five + b).facts
    assert facts.gpus == () and facts.os.family == "windows"


# --- evidence --------------------------------------------------------------------------------


def test_each_fact_a_report_states_is_evidence_from_its_line() -> None:
    """The Debian report: its OS, Python, "Is CUDA available" and "Is XPU available" lines are
    each evidence, with the line named; a paste without those lines (pytorch/pytorch#72957's
    library list) has none of them, not an "other" OS; a driver known only from torch's
    message is evidence from the warning, the OS its path implies evidence once, inferred."""
    facts = {"os", "python", "cuda_available", "xpu_available", "driver"}

    def evidence(name: str) -> list[Evidence]:
        return [e for e in parse(read(name)).evidence if e.fact in facts]

    assert evidence("debian12-cpu-torch2.13.txt") == [
        Evidence("os", "linux", "collect_env:OS"),
        Evidence("python", "3.11.7", "collect_env:Python version"),
        Evidence("cuda_available", "False", "collect_env:Is CUDA available"),
        Evidence("xpu_available", "False", "collect_env:Is XPU available"),
    ]
    assert evidence("tail-only-conda-torch1.10.2-cu102-libraries.txt") == []
    old = evidence("linux-driver-too-old-9010-cu102.txt")
    assert [(e.fact, e.value) for e in old] == [
        ("driver", "supports CUDA 9.1"),
        ("os", "linux"),
        ("python", "3.8"),
    ]
    assert old[0].source == "collect_env:warning"
    assert old[1].source.startswith("inferred: a Linux path (")
    # each GPU listed is evidence, from the GPU list; one named by torch's warning, from it
    gpus = [e for e in parse(read(H100)).evidence if e.fact == "gpus"]
    assert gpus == [Evidence("gpus", "NVIDIA H100", "collect_env")] * 4
    gpus = [e for e in parse(read("warning-only-gt720-capability-3.5.txt")).evidence]
    assert [e for e in gpus if e.fact == "gpus"] == [
        Evidence("gpus", "GeForce GT 720", "collect_env:warning")
    ]


# --- what a report implies, and what it leaves open, route by route ---------------------------

ASSUMED_OS = ("os", "Linux (x86_64)", "os:windows")
ASSUMED_PYTHON = ("python", "Python 3.12", "python:3.9")
ASSUMED_DRIVER = (
    "driver",
    "a current NVIDIA driver (one that runs CUDA 13.2)",
    "driver-below-plan",
)
ANY_NVIDIA = ("gpus", "an NVIDIA GPU", "gpus:none")
UNLOADED = ("gpus", "an NVIDIA GPU whose driver is missing or not loaded", "gpus:none")


@pytest.mark.parametrize(
    ("name", "gpu", "assumed"),
    [
        # ROCm's HIP message alone: an AMD GPU answered; OS and Python left open
        (
            "message-hip-invalid-device-function-5700xt.txt",
            ("AMD GPU (model not in the report)", "amd", "inferred: torch's HIP message comes"),
            [ASSUMED_OS, ASSUMED_PYTHON],
        ),
        # prose naming "my Intel Arc A770" above a report cut before its Python line
        (
            "xpu-fedora40-a770-no-torch-cut.txt",
            ("Intel Arc A770", "intel", "inferred: the text names it (Using the latest"),
            [ASSUMED_PYTHON],
        ),
        # torch's "Found no NVIDIA driver" beside a +cu110 build: a GPU whose driver is not
        # loaded
        (
            "driver-missing-centos7-cu110-cut-at-cuda.txt",
            (
                "NVIDIA GPU (model not in the report)",
                "nvidia",
                "assumed: the report shows GPU intent (torch says: Found no NVIDIA driver",
            ),
            [UNLOADED],
        ),
        # an empty driver line beside a CUDA build and a toolkit
        (
            "driver-missing-ubuntu20-cu113-toolkit-no-gpu-list.txt",
            (
                "NVIDIA GPU (model not in the report)",
                "nvidia",
                "assumed: the report shows GPU intent (torch 1.10.2 is built with CUDA 11.3; a "
                "CUDA toolkit 11.3 (nvcc) is installed)",
            ),
            [UNLOADED],
        ),
        # cuDNN's Windows loader message alone: a GPU for CUDA's library, a current driver
        (
            "message-cudnn-dll-load-failed-windows.txt",
            (
                "NVIDIA GPU (model not in the report)",
                "nvidia",
                "assumed: torch failed to load CUDA's cudnn_ops_infer64_8.dll",
            ),
            [ANY_NVIDIA, ASSUMED_DRIVER, ASSUMED_PYTHON],
        ),
        # a CUDA build torch saw no GPU for, the report cut before its driver line
        (
            "vllm-omni-cu128-no-cuda-truncated.txt",
            None,
            [("gpus", "no NVIDIA GPU (torch saw none)", "gpus:nvidia")],
        ),
    ],
)
def test_each_route_of_inference_on_its_report(
    name: str, gpu: tuple[str, str, str] | None, assumed: list[tuple[str, str, str]]
) -> None:
    report = parse(read(name))
    gpus = planning(read(name)).gpus
    if gpu is None:
        assert gpus == ()
    else:
        ((got_name, vendor, source),) = [(g.name, g.vendor, g.source or "") for g in gpus]
        assert (got_name, vendor) == gpu[:2]
        assert source.startswith(gpu[2]), source
    assert [(a.fact, a.value, a.alt) for a in report.assumptions] == assumed


def test_a_missing_driver_is_noted_with_the_reports_gpu_intent() -> None:
    """The Ubuntu report (empty driver line, a +cu113 build, a CUDA 11.3 toolkit): the note
    names the driver line and each sign of GPU intent with its line; the CentOS report
    (torch's "Found no NVIDIA driver"): the note starts with torch's words, from the warning."""
    (note,) = [
        n
        for n in planning(read("driver-missing-ubuntu20-cu113-toolkit-no-gpu-list.txt")).notes
        if n.code == "no-nvidia-driver"
    ]
    assert note.message.split("; ") == [
        "Nvidia driver version: Could not collect [collect_env:Nvidia driver version]",
        "torch 1.10.2 is built with CUDA 11.3 [collect_env:CUDA used to build PyTorch]",
        "a CUDA toolkit 11.3 (nvcc) is installed "
        "[collect_env:CUDA runtime version (nvcc --version)]",
    ]
    assert (note.source, note.severity) == ("collect_env:Nvidia driver version", "info")
    (note,) = [
        n
        for n in planning(read("driver-missing-centos7-cu110-cut-at-cuda.txt")).notes
        if n.code == "no-nvidia-driver"
    ]
    assert note.message.split("; ") == [
        "torch says: Found no NVIDIA driver on your system [collect_env:warning]",
        "torch 1.7.0+cu110 is a CUDA build from PyTorch's index [collect_env:PyTorch version]",
    ]
    assert note.source == "collect_env:warning"


@pytest.mark.parametrize(
    ("name", "family", "machine"),
    [
        ("tail-only-conda-torch1.10.2-cu102-libraries.txt", "linux", "x86_64"),
        ("message-cudnn-dll-load-failed-windows.txt", "windows", "AMD64"),
    ],
)
def test_a_report_without_its_python_line_is_planned_for_the_commonest_python(
    name: str, family: str, machine: str
) -> None:
    """A paste without a Python line or a site-packages path: Python 3.12 on the OS's commonest
    machine (x86_64 on Linux, AMD64 on Windows), each said as assumed."""
    facts = planning(read(name))
    assert (facts.os.family, facts.python.version, facts.python.machine) == (
        family,
        "3.12",
        machine,
    )
    assert facts.python.sources["version"] == "assumed: Python 3.12"
    assert parse(read(name)).facts.python.version == ""


def test_a_rocm_builds_cuda_available_names_no_nvidia_gpu() -> None:
    """The WSL ROCm 6.2 report (torch 2.5.1+rocm6.2, "Is CUDA available: True": HIP answers
    torch.cuda) without its GPU line: no NVIDIA GPU is inferred from CUDA being available, and
    the machine is not assumed to have no GPU (a ROCm build was installed for an AMD one)."""
    text = without(read("wsl2-rocm62-rx7900xt.txt"), "GPU models and configuration:")
    report = parse(text)
    assert report.cuda_available is True
    assert planning(text).gpus == ()
    assert [a.fact for a in report.assumptions] == []
    assert [e.fact for e in report.evidence if e.fact == "gpus"] == []


@pytest.mark.parametrize(
    ("name", "missing"),
    [
        # a whole report: nothing missing
        ("debian12-cpu-torch2.13.txt", ()),
        # collect_env without its driver line (the line was cut away)
        ("linux-4x-h100-mig-details.txt", ("driver",)),
        # an empty driver line is the driver said absent, not missing
        ("driver-missing-ubuntu20-cu113-toolkit-no-gpu-list.txt", ()),
        # an XPU build from before collect_env listed Intel GPUs ("Is XPU available" absent)
        ("windows11-xpu-torch2.7.1.txt", ("gpus",)),
        # macOS has no GPU list or NVIDIA driver to miss (a GPU line there, or none)
        ("macos14-x86_64-email-reply.txt", ()),
        ("driver-missing-macos10.12-cuda9.2-source-cut.txt", ("python",)),
        # a source build of unknown variant without "Is XPU available" (collect_env before 2.8)
        ("linux-xpu-vllm-source-build.txt", ("gpus",)),
        # torch known from its library line, the driver's CUDA from torch's message; without an
        # OS nothing says a driver line is due
        ("tail-only-conda-torch1.10.2-cu102-libraries.txt", ("os", "python", "gpus")),
        ("linux-driver-too-old-9010-cu102.txt", ("os", "python", "gpus")),
        # a GPU named by torch's warning is no missing GPU list
        ("warning-only-dgx-spark-gb10-cc12.1.txt", ("torch", "os", "python")),
        # a report cut above its torch line
        ("jetson-orin-container-top-cut.txt", ("torch",)),
        # cut before its Python line, the GPU list and the driver line
        ("xpu-fedora40-a770-no-torch-cut.txt", ("python", "gpus", "driver")),
    ],
)
def test_what_a_report_lacks_is_named_and_nothing_else(name: str, missing: tuple[str, ...]) -> None:
    assert parse(read(name)).missing == missing


# --- layout: where blocks end ------------------------------------------------------------------

ROCM = "wsl2-rocm62-rx7900xt.txt"  # "GPU models and configuration: AMD Radeon RX 7900 XT (gfx1100)"


@pytest.mark.parametrize("close", ["~~~", "</details>"])
def test_a_tilde_fence_or_a_closing_details_tag_ends_the_gpu_list(close: str) -> None:
    """The ROCm report cut after its GPU line, a "~~~" fence or "</details>" closing there, and
    the report's own first line (its shell prompt) pasted after it: the prompt is no GPU (on a
    ROCm build every line of the GPU list would be an AMD GPU)."""
    text = read(ROCM)
    gpu = "GPU models and configuration: AMD Radeon RX 7900 XT (gfx1100)\n"
    prompt = "(xinf) root@DESKTOP-ESRGKIB:~/vllm# python3 collect_env.py \n"
    assert prompt in text
    closed = text[: text.index(gpu) + len(gpu)] + close + "\n" + prompt
    rocm = parse(closed).facts.rocm
    assert rocm is not None
    assert [g.name for g in rocm.gpus] == ["AMD Radeon RX 7900 XT"]


def test_an_email_wrapped_python_line_open_in_its_brackets_is_joined() -> None:
    """The macOS 14 e-mail reply wraps its Python line inside "[Clang 15.0.0 ...]" (its
    parentheses balanced, its bracket open): the next line is joined to the value."""
    fields = parse(read("macos14-x86_64-email-reply.txt")).fields
    assert fields["Python version"] == (
        "3.10.13 (main, Dec 22 2023, 22:08:50) [Clang 15.0.0 (clang-1500.1.0.2.5)] (64-bit runtime)"
    )


def test_a_cudnn_list_directly_above_the_library_lines_ends_at_the_first_of_them() -> None:
    """The apex report's cuDNN lines (mid-report-driver535-cudnn-lines-only.txt) with the
    library lines of pytorch/pytorch#72957 pasted directly below them (the lines between cut
    away): the library lines are libraries, not cuDNN files, and the cuDNN version stands."""
    apex = read("mid-report-driver535-cudnn-lines-only.txt")
    libs = read("tail-only-conda-torch1.10.2-cu102-libraries.txt")
    libs = libs[libs.index("[pip3]") :]
    report = parse(apex + libs)
    assert report.libraries["numpy"] == "1.21.5"
    torch = report.facts.package("torch")
    assert torch is not None and torch.version == "1.10.2"
    assert [t.cudnn_version for t in parse(apex + libs).facts.toolkits] == [
        t.cudnn_version for t in parse(apex).facts.toolkits
    ]


def test_a_second_report_pasted_below_the_firsts_cpu_block_does_not_mix_in() -> None:
    """The H100 report cut inside its CPU block, the Windows GTX 1050 Ti report pasted whole
    below: the second report's "PyTorch version:" line ends the first inside the CPU block too,
    so none of its libraries or GPUs are read into the first."""
    a = read("linux-h100-cu130-driver570.txt")
    b = read("windows11-gtx1050ti-cu117.txt")
    cpu = a.index("\nCPU:\n")
    cut = a[: a.index("\n", a.index("Model name:", cpu)) + 1]
    report = parse(cut + b)
    assert [g.name for g in report.facts.gpus] == ["NVIDIA H100 80GB HBM3"]
    assert report.libraries == {}
    assert report.facts.os.family == "linux"


def test_a_loader_message_is_read_whatever_the_case_of_its_words() -> None:
    """The loader's line of message-cudnn-load-failed.txt (from its file name on) with its
    words capitalised ("Cannot Open Shared Object File", as a log that title-cases them would
    print them): the library is read, as in the original."""
    assert libraries(LOADER) == ["libcudnn_ops_infer.so.8"]
    title = LOADER.replace("cannot open shared object file", "Cannot Open Shared Object File")
    assert title != LOADER
    assert libraries(title) == ["libcudnn_ops_infer.so.8"]


def test_cudnns_windows_loader_message_keeps_its_place_beside_another() -> None:
    """cuDNN's Windows loader message (message-cudnn-dll-load-failed-windows.txt) and the too-old
    driver message (message-driver-too-old-11040-rtx3050.txt) pasted one below the other, in
    both orders: both are read, in the order pasted."""
    dll = read("message-cudnn-dll-load-failed-windows.txt")
    driver = read("message-driver-too-old-11040-rtx3050.txt")
    assert [m.kind for m in parse(dll + "\n" + driver).warnings] == [
        "library-load",
        "driver-too-old",
    ]
    assert [m.kind for m in parse(driver + "\n" + dll).warnings] == [
        "driver-too-old",
        "library-load",
    ]
