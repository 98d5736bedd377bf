"""The pasted-report reader's rules one at a time (issue 22), on real collect_env reports
(tests/fixtures/collect_env, each with its .source) with one line changed where the rule needs
a case no captured report shows; the change is written beside each test."""

from __future__ import annotations

from pathlib import Path

import pytest

from setup_env.knowledge.variant import Variant
from setup_env.probe.report import decode, parse
from setup_env.probe.report.messages import _M_LIB, _lib_matches, read_messages

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def cudnn(text: str) -> list[str | None]:
    return [t.cudnn_version for t in parse(text).facts.toolkits]


def test_the_newest_of_several_cudnn_libraries_is_reported() -> None:
    text = read("jetson-agx-orin-nv23.02.txt")
    assert cudnn(text) == ["8.6.0"]
    # a second cuDNN generation installed beside it (as on a machine upgraded in place),
    # listed before and after the 8.6 files: the newest is the one reported
    lib = "/usr/lib/aarch64-linux-gnu/"
    for where in (f"{lib}libcudnn.so.8.6.0\n", f"{lib}libcudnn_ops_train.so.8.6.0\n"):
        newer = f"{lib}libcudnn.so.9.1.0\n"
        both = text.replace(where, where + newer)
        assert both != text
        assert cudnn(both) == ["9.1.0"]
        assert cudnn(both.replace("libcudnn.so.9.1.0", "libcudnn.so.7.6.5")) == ["8.6.0"]


def test_a_conda_cpu_build_string_is_the_cpu_variant() -> None:
    # a conda-installed torch: "[conda] pytorch  <version>  <build>  <channel>"
    text = read("linux-h100-cu130-driver570.txt")
    line = "[conda] pytorch                   2.1.0           py3.11_cpu_0    pytorch\n"
    cuda = "py3.11_cuda12.1_cudnn8.9.2_0"
    conda = parse(text.rstrip("\n") + "\n" + line.replace("py3.11_cpu_0", cuda))
    pkgs = {(p.name, p.installer, p.variant) for p in conda.facts.packages}
    cpu = {
        (p.name, p.installer, p.variant)
        for p in parse(text.rstrip("\n") + "\n" + line).facts.packages
    }
    assert ("torch", "conda", Variant.parse("cu121")) in pkgs
    assert ("torch", "conda", Variant.parse("cpu")) in cpu


def test_a_second_pasted_report_does_not_mix_into_the_first() -> None:
    a = read("windows11-gtx1050ti-cu117.txt")
    b = read("linux-h100-cu130-driver570.txt")
    one = parse(a).facts
    both = parse(a + "\n\n" + b).facts
    assert both.nvidia is not None and one.nvidia is not None
    assert [g.name for g in both.nvidia.gpus] == [g.name for g in one.nvidia.gpus]
    assert both.nvidia.driver_version == one.nvidia.driver_version
    assert [(p.name, p.version) for p in both.packages] == [
        (p.name, p.version) for p in one.packages
    ]
    assert both.os.family == "windows"


def test_a_repeated_key_keeps_its_first_value() -> None:
    text = read("linux-h100-cu130-driver570.txt")
    driver = parse(text).facts.nvidia
    assert driver is not None and driver.driver_version == "570.172.08"
    # the same key again further down (a reply that quotes one line of the report)
    line = "Nvidia driver version: 570.172.08\n"
    again = text.replace(line, line + "Nvidia driver version: 999.1.1\n", 1)
    assert again != text
    driver = parse(again).facts.nvidia
    assert driver is not None and driver.driver_version == "570.172.08"


def test_on_a_rocm_build_every_gpu_line_is_amd() -> None:
    text = read("wsl2-rocm62-rx7900xt.txt")
    # the same GPU line without an AMD name in it (HIP reports some cards as "Device 744c")
    plain = text.replace("AMD Radeon RX 7900 XT (gfx1100)", "Device 744c (gfx1100)")
    assert plain != text
    facts = parse(plain).facts
    assert facts.rocm is not None and [g.gfx_arch for g in facts.rocm.gpus] == ["gfx1100"]
    assert facts.nvidia is None or not facts.nvidia.gpus
    # on a CUDA build, a line without an AMD name is NVIDIA's
    cuda = parse(read("linux-h100-cu130-driver570.txt")).facts
    assert (
        cuda.nvidia is not None and cuda.nvidia.gpus and (cuda.rocm is None or not cuda.rocm.gpus)
    )


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be"])
def test_a_report_in_each_encoding_windows_writes_reads_the_same(encoding: str) -> None:
    text = read("windows11-gtx1050ti-cu117.txt")
    assert decode(text.encode(encoding)) == text
    assert parse(decode(text.encode(encoding))).facts == parse(text).facts


def test_undecodable_bytes_become_replacement_characters() -> None:
    assert decode(b"PyTorch version: 2.0\xff\n") == "PyTorch version: 2.0\ufffd\n"
    assert decode(b"\xef\xbb\xbfok") == "ok" and decode(b"ok") == "ok"
    # too short to judge by its NULs: UTF-8
    assert decode(b"a\x00") == "a\x00"


@pytest.mark.parametrize(
    ("tail", "truncated"),
    [
        ("[pip3] torch==2.0.1", False),
        ("[pip3] to", True),  # cut mid-name
        ("[pip3] torch==", True),  # cut after the ==
        ("[conda] numpy                     1.24.4           pypi_0    pypi", False),
        ("[conda] numpy  1.18.5", True),  # a conda line has at least name, version and build
        ("[conda] Could not collect", False),
    ],
)
def test_a_report_cut_in_its_library_lines_is_truncated(tail: str, truncated: bool) -> None:
    text = read("linux-h100-cu130-driver570.txt")
    head = text[: text.index("[pip3]")]
    assert parse(head + tail + "\n").truncated is truncated


def test_an_email_wrapped_python_version_is_joined() -> None:
    text = read("linux-h100-cu130-driver570.txt")
    line = next(x for x in text.splitlines() if x.startswith("Python version:"))
    assert "(" in line and line.rstrip().endswith(")")
    cut = line.index(" ", line.index("("))  # wrapped at a space inside the parentheses
    wrapped = text.replace(line, line[:cut] + "\n" + line[cut + 1 :], 1)
    assert wrapped != text
    assert parse(wrapped).fields["Python version"] == parse(text).fields["Python version"]
    assert parse(wrapped).facts == parse(text).facts


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("find-env-rtx2060-torch1.1-driver418.txt", True),  # "Is CUDA available: Yes" (torch 1.1)
        ("linux-h100-cu130-driver570.txt", True),  # "True"
        ("linux-2x-titanxp-conda-torch1.4-driver410.txt", False),  # "No"
        ("debian12-cpu-torch2.13.txt", False),  # "False"
        ("jetson-orin-nano-no-torch.txt", None),  # "N/A": no torch to ask
    ],
)
def test_each_spelling_of_cuda_available_reads_as_yes_no_or_unknown(
    name: str, said: bool | None
) -> None:
    # old torch printed Yes/No, newer True/False; without torch the answer is unknown
    assert parse(read(name)).cuda_available is said


@pytest.mark.parametrize(
    ("name", "said"),
    [
        ("colab-t4-torch1.7-cu101-driver418.txt", True),  # "Is debug build: True"
        ("linux-2x-titanxp-conda-torch1.4-driver410.txt", False),  # "No"
        ("linux-h100-cu130-driver570.txt", False),  # "False"
    ],
)
def test_each_spelling_of_debug_build_is_read(name: str, said: bool) -> None:
    assert parse(read(name)).debug_build is said


def test_a_rocm_field_cut_mid_value_is_no_rocm_build() -> None:
    # "ROCM used to build PyTorch: N/A" cut after "N/" (a paste cut mid-line) names no ROCm
    # version: the H100 stays an NVIDIA GPU, as on the whole line
    text = read("linux-h100-cu130-driver570.txt")
    cut = text.replace("ROCM used to build PyTorch: N/A\n", "ROCM used to build PyTorch: N/\n")
    assert cut != text
    for facts in (parse(text).facts, parse(cut).facts):
        assert facts.nvidia is not None
        assert [g.name for g in facts.nvidia.gpus] == ["NVIDIA H100 80GB HBM3"]
        assert facts.rocm is None or not facts.rocm.gpus


def test_an_old_conda_build_string_without_the_cuda_dot_names_its_variant() -> None:
    # conda builds before torch 1.2 wrote "cuda90"/"cuda92" for CUDA 9.0/9.2. A paste of only
    # the library lines (cut from the report, as tail-only pastes are) leaves the conda build
    # string the one sign of the variant.
    text = read("windows10-conda-torch1.0-cu90-gtx1050.txt")
    tail = text[text.index("Versions of relevant libraries:") :]
    assert "py3.7_cuda90_cudnn7_1" in tail and "CUDA used" not in tail
    torch = [p for p in parse(tail).facts.packages if p.name == "torch"]
    assert [(p.version, p.variant) for p in torch] == [("1.0.0", Variant.parse("cu90"))]
    # the same line with the dotted form torch 1.2 and later print
    dotted = tail.replace("py3.7_cuda90_cudnn7_1", "py3.7_cuda9.0_cudnn7_1")
    torch = [p for p in parse(dotted).facts.packages if p.name == "torch"]
    assert [(p.version, p.variant) for p in torch] == [("1.0.0", Variant.parse("cu90"))]


# Real import errors, each from the public report named beside it (as in test_smoke_decide.py).
LIBRARY_ERRORS = [
    # https://github.com/pytorch/pytorch/issues/104259
    (
        "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory",
        ["libcudnn.so.8"],
    ),
    # https://github.com/pytorch/pytorch/issues/131312
    (
        "ImportError: /home/dp/anaconda3/envs/ComfyUI/lib/python3.11/site-packages/torch/lib/../"
        "../nvidia/cusparse/lib/libcusparse.so.12: undefined symbol: __nvJitLinkComplete_12_4, "
        "version libnvJitLink.so.12",
        ["libcusparse.so.12"],
    ),
    # https://github.com/semchan/NLUT/issues/15: torch's own library, not a CUDA one
    (
        "ImportError: libtorch_cuda_cu.so: cannot open shared object file: No such file or "
        "directory",
        [],
    ),
    # https://github.com/THU-MIG/yolov10/issues/306: a symbol named after NCCL, no NCCL file
    (
        "ImportError: /root/.local/conda/envs/yolov10/lib/python3.9/site-packages/torch/lib/"
        "libtorch_cuda.so: undefined symbol: ncclCommRegister",
        [],
    ),
    # tests/fixtures/collect_env/message-cudnn-load-failed.txt: the name twice in one message
    (read("message-cudnn-load-failed.txt"), ["libcudnn_ops_infer.so.8"]),
]


@pytest.mark.parametrize(("error", "libraries"), LIBRARY_ERRORS)
def test_a_cuda_library_torch_could_not_load_is_read_by_its_file_name(
    error: str, libraries: list[str]
) -> None:
    def loads(text: str) -> list[str | None]:
        return [m.library for m in read_messages(text) if m.kind == "library-load"]

    assert loads(error) == libraries
    # pasted below a whole report, and with the report's libraries around it
    report = read("linux-h100-cu130-driver570.txt")
    assert loads(report + "\n" + error + "\n") == libraries
    assert loads(error + "\n" + report) == libraries
    # the scan that looks only where a library name starts finds what the pattern finds
    # everywhere (issue 18 made it fast; it must not make it miss)
    both = report + "\n" + error + "\n" + report
    assert [m.span() for m in _lib_matches(both, both.lower())] == [
        m.span() for m in _M_LIB.finditer(both)
    ]


@pytest.mark.parametrize("extra", [0, 11, 12, 40])
def test_the_path_an_os_guess_rests_on_is_named_whole_up_to_90_characters(extra: int) -> None:
    # a report cut before its OS line: the OS is guessed from the path in torch's warning, and
    # the evidence names that path (not the whole warning line). The conda env's name is made
    # longer (the one change) to bring the 79-character path to 90 and past it: up to 90 it is
    # named whole, past that its start and its end are kept around an ellipsis.
    text = read("linux-driver-too-old-9010-cu102.txt")
    path = "/root/anaconda3/envs/foo/lib/python3.8/site-packages/torch/cuda/__init__.py:83:"
    assert len(path) == 79 and path in text
    longer = path.replace("/foo/", "/foo" + "x" * extra + "/")
    said = {e.fact: e.source for e in parse(text.replace(path, longer)).evidence}["os"]
    assert said.startswith("inferred: a Linux path (")
    named = said[len("inferred: a Linux path (") : -1]
    if len(longer) <= 90:
        assert named == longer
    else:
        assert named == longer[:40] + "…" + longer[-45:]


@pytest.mark.parametrize(
    "name",
    [
        "wsl2-rocm62-rx7900xt.txt",  # an AMD GPU line
        "linux-h100-cu130-driver570.txt",  # an NVIDIA one
    ],
)
def test_each_gpu_read_from_the_gpu_block_names_the_report_as_its_source(name: str) -> None:
    facts = parse(read(name)).facts
    gpus = [*(facts.nvidia.gpus if facts.nvidia else ()), *(facts.rocm.gpus if facts.rocm else ())]
    assert gpus
    assert {g.source for g in gpus} == {"collect_env"}
