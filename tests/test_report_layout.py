"""How a paste is read line by line (setup_env/probe/report/layout.py, issue 22): vLLM's
sections, which lines a value or a block takes, which lines are kept as paths, what a control
character does, where a second pasted report ends the first, and what counts as a report at
all. On the real reports in tests/fixtures/collect_env (each with its .source); where a rule
needs a case no captured report shows, a real report is cut or changed, and the test says how."""

from __future__ import annotations

import pytest
from test_report_behaviour import changed, read

from setup_env.probe.report import CollectEnvError, parse

VLLM_FULL = "vllm-rocm72-mi350-gfx950-full.txt"


# --- vLLM's sections -------------------------------------------------------------------------


def test_vllm_environment_variables_section_is_read_whole() -> None:
    """vLLM's "Environment Variables" section (the last of its report, after the vLLM Info
    section and its ROCm GPU topology) gives every NAME=value line, an empty value included,
    in the paste's order; the values keep their own "=" and ":"."""
    assert parse(read(VLLM_FULL)).facts.environment == {
        "PYTORCH_NVML_BASED_CUDA_CHECK": "1",
        "PYTORCH_ROCM_ARCH": "gfx90a;gfx942;gfx950;gfx1100;gfx1101;gfx1200;gfx1201;gfx1150;gfx1151",
        "MAX_JOBS": "",
        "LD_LIBRARY_PATH": "/opt/rocm/lib:/usr/local/lib:",
        "TORCHINDUCTOR_COMPILE_THREADS": "1",
        "TORCHINDUCTOR_CACHE_DIR": "/tmp/torchinductor_root",
    }


def test_a_report_without_that_section_has_no_environment() -> None:
    """The same report cut before its "Environment Variables" heading: no variables, and the
    lines of the vLLM Info section above it (build flags, topology) are none either."""
    text = read(VLLM_FULL)
    cut = text[: text.index("==============================\n     Environment Variables")]
    assert parse(cut).facts.environment == {}


def test_vllm_cpu_info_section_is_read_below_its_second_rule() -> None:
    """vLLM's "CPU Info" heading sits between two rules of "="; the lscpu lines under the
    second rule are the CPU block."""
    cpu = parse(read(VLLM_FULL)).facts.cpu
    assert cpu.model == "AMD EPYC 9575F 64-Core Processor"
    assert cpu.logical_cores == 256


# --- a value's continuation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        # vLLM's padded Python line, complete, then the paste cut at "Python" (the next key)
        (
            "vllm-rhel8-cu124-warnings-truncated.txt",
            "3.10.16 | packaged by conda-forge | (main, Dec  5 2024, 14:16:10) [GCC 13.3.0]"
            " (64-bit runtime)",
        ),
        # a hand-written list: "Python: 3.12", then "ROCm: 7.1.1 (Theoretically, ..." (a key
        # of no collect_env report, with a parenthesis of its own)
        ("wsl2-rocm6.4-rx7900xtx-hand-written.txt", "3.12"),
    ],
)
def test_a_complete_python_value_takes_no_next_line(name: str, value: str) -> None:
    """Only a Python value whose bracket is still open continues on the next line; a closed one
    ("(64-bit runtime)", or none at all) ends where its line ends."""
    assert parse(read(name)).fields["Python version"] == value


# --- control characters ----------------------------------------------------------------------


def test_control_characters_are_dropped_not_replaced() -> None:
    """A NUL after the torch version and a BEL inside the driver version (a terminal's junk in
    a paste): the values read as if the characters were not there."""
    text = read("windows11-gtx1050ti-cu117.txt")
    dirty = changed(text, "PyTorch version: 2.0.1+cu117", "PyTorch version: 2.0.1+cu117\x00")
    dirty = changed(dirty, "Nvidia driver version: 5", "Nvidia driver version: \x075")
    assert parse(dirty).facts == parse(text).facts
    assert parse(dirty).fields == parse(text).fields


# --- path lines ------------------------------------------------------------------------------


def test_only_a_line_naming_site_packages_is_read_as_a_path() -> None:
    """ComfyUI's log (no report): its command line "A:\\...>.\\python_embeded\\python.exe ..."
    names a Windows drive too, but the OS is inferred from the site-packages line of torch's
    warning below it, the one line kept as a path."""
    facts = parse(read("warning-only-windows-rtx5070ti-comfyui-portable.txt")).facts
    assert facts.os.family == "windows"
    why = facts.os.sources["family"]
    assert why.startswith("inferred: a Windows path (")
    assert "torch\\cuda\\__init__.py:235" in why
    assert "main.py" not in why


PATH_LINE = "/root/anaconda3/envs/foo/lib/python3.8/site-packages/torch/cuda/__init__.py:83:"


@pytest.mark.parametrize(("extra", "python"), [(0, "3.8"), (1, "")])
def test_a_path_line_is_read_to_its_400th_character(extra: int, python: str) -> None:
    """The V100 report whose driver is too old has no Python line: its Python is read from the
    site-packages path of torch's warning. The environment's folder name ("foo") lengthened so
    that "site-packages/" ends at the line's 400th character: still read; one character more,
    and the path is cut before it (a path line is kept to 400 characters)."""
    text = read("linux-driver-too-old-9010-cu102.txt")
    line = next(x for x in text.splitlines() if x.startswith(PATH_LINE))
    end = line.index("site-packages/") + len("site-packages/")
    longer = "f" * (400 - end + 3 + extra)  # "foo" grows by the difference
    facts = parse(changed(text, "/envs/foo/", f"/envs/{longer}/")).facts
    assert facts.python.version == python


# --- what counts as a report -----------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    ["OS", "Python version", "Python platform", "GPU models and configuration"],
)
def test_one_line_naming_the_machine_is_a_report(key: str) -> None:
    """The Debian CPU report cut to one of its lines: the OS, the Python, the platform or the
    GPU line alone is a report (a fragment), read; any other line alone is not."""
    text = read("debian12-cpu-torch2.13.txt")
    line = next(x for x in text.splitlines() if x.startswith(key + ":"))
    assert parse(line + "\n").fields.keys() == {key}
    other = next(x for x in text.splitlines() if x.startswith("CMake version:"))
    with pytest.raises(CollectEnvError):
        parse(other + "\n")


def test_a_library_list_without_torch_cut_inside_a_bracket_is_no_report() -> None:
    """pytorch/pytorch#72957's library list, cut inside its second line's bracket ("[pip")
    before any torch line: numpy's line alone is no report, and the cut line is no crash."""
    text = read("tail-only-conda-torch1.10.2-cu102-libraries.txt")
    cut = text[: text.index("[pip3] torch==1.10.2") + len("[pip")]
    assert cut.endswith("[pip3] numpy==1.21.5\n[pip")
    with pytest.raises(CollectEnvError):
        parse(cut)
    # cut one line later, its torch line makes it a report
    later = text[: text.index("[pip3] torchaudio")]
    assert parse(later).facts.package("torch") is not None


# --- blocks ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("dropped", "libraries"),
    [
        # the heading line lost: the [pip3] lines follow the CPU block directly
        (
            "Versions of relevant libraries:\n",
            {"light-the-torch": "0.8.1", "torch": "2.13.0+cpu"},
        ),
        # the heading and the pip lines lost: the [conda] line follows the CPU block directly
        (
            "Versions of relevant libraries:\n[pip3] light_the_torch==0.8.1\n"
            "[pip3] torch==2.13.0+cpu\n",
            {},
        ),
    ],
)
def test_a_library_line_ends_the_cpu_block_without_its_heading(
    dropped: str, libraries: dict[str, str]
) -> None:
    """The Debian CPU report with its "Versions of relevant libraries:" heading (and then its
    pip lines too) dropped: the first [pip3] or [conda] line still ends the CPU block and
    starts the library list, so the report is whole (not cut before its libraries)."""
    text = read("debian12-cpu-torch2.13.txt")
    report = parse(changed(text, dropped, ""))
    assert report.libraries == libraries
    assert report.truncated is False
    assert report.facts.cpu == parse(text).facts.cpu


def test_a_gpu_list_ended_by_a_key_cut_before_its_colon_reads_on() -> None:
    """vLLM's 4x RTX 3090 report with its driver line cut to "Nvidia driver version" (no colon,
    no value, as vllm-project/vllm's gfx1201 paste ends): the line ends the GPU list, and the
    cuDNN line after it is still read."""
    text = read("vllm-4x-rtx3090-cu128.txt")
    report = parse(
        changed(text, "Nvidia driver version        : 550.54.14", "Nvidia driver version")
    )
    assert [g.name for g in report.facts.gpus] == ["NVIDIA GeForce RTX 3090"] * 4
    assert "Nvidia driver version" not in report.fields
    assert report.fields["cuDNN version"] == "Could not collect"


# --- prose -----------------------------------------------------------------------------------


def test_prose_naming_an_intel_arc_below_the_report_is_read() -> None:
    """pytorch/pytorch#150260's sentence naming "my Intel Arc A770", moved from above the
    report (cut before its Python line) to below its last line, as a note written after a
    paste: read there too, the GPU the report does not list."""
    text = read("xpu-fedora40-a770-no-torch-cut.txt")
    sentence = next(x for x in text.splitlines() if "my Intel Arc A770" in x)
    moved = changed(text, sentence + "\n", "") + "\n" + sentence + "\n"
    for paste in (text, moved):
        planning = parse(paste).planning
        assert planning is not None
        assert [(g.name, g.vendor) for g in planning.gpus] == [("Intel Arc A770", "intel")]


# --- a second report -------------------------------------------------------------------------


def test_nothing_after_a_second_report_begins_is_read() -> None:
    """The Windows GTX 1050 Ti report, then the H100 report, then the log of
    stable-diffusion-ui's start.sh with torch's "Unexpected error from cudaGetDeviceCount()":
    the first report ends where the second begins, so neither the H100 nor the message
    after it is read into it."""
    first = read("windows11-gtx1050ti-cu117.txt")
    log = read("message-803-unsupported-driver-combination.txt")
    assert parse(first).warnings == () and parse(log).warnings != ()
    report = parse(first + read("linux-h100-cu130-driver570.txt") + log)
    assert report.warnings == ()
    assert [g.name for g in report.facts.gpus] == ["NVIDIA GeForce GTX 1050 Ti"]


# --- how many path lines are kept -------------------------------------------------------------

COMFY_PATH = "A:\\Sin Sincronización\\Chrome\\ComfyUI_windows_portable\\python_embeded\\Lib\\"


def _line(name: str, start: str) -> str:
    return next(x for x in read(name).splitlines() if x.startswith(start))


@pytest.mark.parametrize(("before", "read_as"), [(7, "3.8"), (8, "")])
def test_the_ninth_site_packages_line_is_not_kept(before: int, read_as: str) -> None:
    """Eight path lines are kept, no more. ComfyUI's warning line (its embedded Python's
    site-packages, which names no version) repeated 7 or 8 times, as a log repeats a warning,
    then the V100 warning's line, whose path names python3.8: read as the eighth line, not as
    the ninth."""
    comfy = _line("warning-only-windows-rtx5070ti-comfyui-portable.txt", COMFY_PATH)
    v100 = _line("linux-driver-too-old-9010-cu102.txt", PATH_LINE)
    facts = parse("\n".join([comfy] * before + [v100]) + "\n").facts
    assert facts.python.version == read_as


@pytest.mark.parametrize(("before", "gpu"), [(7, True), (8, False)])
def test_prose_after_eight_path_lines_is_not_kept(before: int, gpu: bool) -> None:
    """pytorch/pytorch#150260 with ComfyUI's site-packages line (torch's warning, without the
    message after it) put 7 or 8 times above its sentence naming "my Intel Arc A770": the
    sentence is the eighth path line kept, or a ninth, not kept (no Intel GPU read from it)."""
    text = read("xpu-fedora40-a770-no-torch-cut.txt")
    sentence = next(x for x in text.splitlines() if "my Intel Arc A770" in x)
    comfy = _line("warning-only-windows-rtx5070ti-comfyui-portable.txt", COMFY_PATH)
    planning = parse(changed(text, sentence, "\n".join([comfy] * before + [sentence]))).planning
    assert planning is not None
    named = [g.name for g in planning.gpus if g.name == "Intel Arc A770"]
    assert named == (["Intel Arc A770"] if gpu else [])


@pytest.mark.parametrize(("extra", "gpu"), [(0, True), (1, False)])
def test_a_prose_line_is_read_to_its_400th_character(extra: int, gpu: bool) -> None:
    """pytorch/pytorch#150260's sentence lengthened ("very " put before "latest" until "Intel
    Arc A770" ends at the line's 400th character): the GPU is read; one character more, and
    the line is cut inside its name."""
    text = read("xpu-fedora40-a770-no-torch-cut.txt")
    sentence = next(x for x in text.splitlines() if "my Intel Arc A770" in x)
    end = sentence.index("Intel Arc A770") + len("Intel Arc A770")
    pad = 400 - end + extra
    longer = changed(sentence, "latest", "very " * (pad // 5) + "x" * (pad % 5) + "latest")
    assert longer.index("Intel Arc A770") + len("Intel Arc A770") == 400 + extra
    planning = parse(changed(text, sentence, longer)).planning
    assert planning is not None
    named = [g.name for g in planning.gpus if g.name == "Intel Arc A770"]
    assert named == (["Intel Arc A770"] if gpu else [])


@pytest.mark.parametrize(
    "cut_after",
    [
        "GPU models and configuration: Could not collect\n",
        # cut inside the next line, before its colon
        "GPU models and configuration: Could not collect\nNvidia driver version",
    ],
)
def test_prose_after_a_gpu_list_that_a_cut_ends_is_read(cut_after: str) -> None:
    """The Debian CPU report (no GPU listed: "Could not collect") cut after its GPU line, or
    inside the driver line below it, its fence closed, and pytorch/pytorch#150260's sentence
    naming "my Intel Arc A770" after it: the GPU list is over, so the sentence is prose, read
    as the GPU the report does not list."""
    text = read("debian12-cpu-torch2.13.txt")
    sentence = next(
        x for x in read("xpu-fedora40-a770-no-torch-cut.txt").splitlines() if "Intel Arc" in x
    )
    cut = text[: text.index(cut_after) + len(cut_after)].rstrip("\n")
    planning = parse(f"```\n{cut}\n```\n\n{sentence}\n").planning
    assert planning is not None
    assert [(g.name, g.vendor) for g in planning.gpus] == [("Intel Arc A770", "intel")]
