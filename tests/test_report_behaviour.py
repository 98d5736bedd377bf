"""The report reader's field rules one at a time (issue 22), on the real collect_env reports in
tests/fixtures/collect_env (each with its .source). Where a rule needs a case no captured report
shows, one line of a real report is cut or changed, and the test says which."""

from __future__ import annotations

from pathlib import Path

import pytest

from setup_env.probe.report import parse

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def changed(text: str, old: str, new: str) -> str:
    """`text` with its first `old` replaced by `new`; the change must land."""
    assert old in text, old
    return text.replace(old, new, 1)


def without(text: str, *starts: str) -> str:
    """`text` without the lines that start with one of `starts` (a report cut or pasted in
    part); each must be there."""
    lines = text.splitlines(keepends=True)
    for s in starts:
        assert any(x.startswith(s) for x in lines), s
    return "".join(x for x in lines if not x.startswith(starts))


# --- cuDNN -----------------------------------------------------------------------------------


def test_a_cudnn_version_given_as_a_bare_number_is_read() -> None:
    # a hand-retyped report; its cuDNN line changed from the library's path to the bare
    # version a person types into the bug template ("cuDNN version: 7.6.5")
    text = read("linux-p100-driver410-torch1.5-handedited.txt")
    path = "/usr/lib/x86_64-linux-gnu/libcudnn.so.7.6.5"
    for typed, read_as in (("7.6.5", "7.6.5"), ("8.0", "8.0"), ("7", None), ("v7.6.5", None)):
        toolkits = parse(changed(text, path, typed)).facts.toolkits
        assert [t.cudnn_version for t in toolkits] == [read_as], typed


# --- Python ----------------------------------------------------------------------------------


def test_an_unreadable_python_version_is_no_version_and_says_so() -> None:
    # a report cut mid-line after "Python version: 3.7 (64-bit runt"; here the number is lost
    # too (the line changed to its cut tail): no version is made up, a note names the text
    text = read("windows10-cpu-torch1.7.1-truncated.txt")
    facts = parse(
        changed(text, "Python version: 3.7 (64-bit runt", "Python version: (64-bit runt")
    ).facts
    assert facts.python.version == ""
    garbled = [n for n in facts.notes if n.code == "collect-env-python-garbled"]
    assert len(garbled) == 1 and "(64-bit runt" in garbled[0].message
    assert garbled[0].source == "collect_env"
    assert "version" not in facts.python.sources
    # the real line is read, with no such note
    facts = parse(text).facts
    assert facts.python.version == "3.7"
    assert facts.python.sources["version"] == "collect_env:Python version"
    assert "collect-env-python-garbled" not in {n.code for n in facts.notes}
    # a paste without a Python line has no version and nothing unreadable in it
    facts = parse(read("mid-report-driver535-cudnn-lines-only.txt")).facts
    assert facts.python.version == ""
    assert "collect-env-python-garbled" not in {n.code for n in facts.notes}


# --- OS --------------------------------------------------------------------------------------


def test_an_os_line_naming_wsl_is_linux_unless_the_python_runs_on_windows() -> None:
    # a hand-written "OS: Windows 11 + WSL2 Ubuntu 24.04": the Python runs in WSL's Linux
    text = read("wsl2-rocm6.4-rx7900xtx-hand-written.txt")
    os_info = parse(text).facts.os
    assert (os_info.family, os_info.wsl) == ("linux", 2)
    # the same line naming WSL 1, and WSL without a number (WSL 2 is the default since 2020)
    for said, wsl in (("WSL1", 1), ("WSL 1", 1), ("WSL", 2)):
        os_info = parse(changed(text, "+ WSL2 Ubuntu", f"+ {said} Ubuntu")).facts.os
        assert (os_info.family, os_info.wsl) == ("linux", wsl), said
        assert os_info.sources["wsl"] == "collect_env:OS"
    # the same line beside a "Python platform" line of a Windows Python (added here, as
    # collect_env run on the Windows side prints it): that Python is a Windows one
    line = "OS: Windows 11 + WSL2 Ubuntu 24.04\n"
    windows = changed(text, line, line + "Python platform: Windows-11-10.0.26100-SP0\n")
    os_info = parse(windows).facts.os
    assert (os_info.family, os_info.wsl, os_info.windows_build) == ("windows", None, "10.0.26100")


def test_a_lowercase_hand_written_windows_os_line_is_windows() -> None:
    # the report's own OS line says "Could not collect"; the user wrote "OS: windows 10" below
    # it. Here that line takes the OS line's place, with no "Python platform" line: the OS
    # line alone says Windows.
    text = read("windows10-quadro-p1000-os-not-collected.txt")
    os_info = parse(changed(text, "OS: Could not collect", "OS: windows 10")).facts.os
    assert os_info.family == "windows"
    assert os_info.sources["family"] == "collect_env:OS"
    assert os_info.distro_name == "windows 10"
    # unchanged, the OS is inferred from the Windows-only driver, not read
    os_info = parse(text).facts.os
    assert os_info.family == "windows" and os_info.sources["family"].startswith("inferred")


def test_a_report_without_os_and_platform_lines_names_no_os_source() -> None:
    # a paste of the driver and cuDNN lines only: the OS is unknown, and nothing claims to
    # have read it from the report
    report = parse(read("mid-report-driver535-cudnn-lines-only.txt"))
    assert report.facts.os.family == "other"
    assert report.facts.os.sources == {}
    assert "os" in report.missing


def test_windows_is_read_from_the_os_line_or_the_python_platform_alone() -> None:
    # a Windows 11 report (a CPU build: no driver to infer Windows from)
    text = read("windows11-cpu-build-torch2.8dev-xpu-fields.txt")
    os_info = parse(text).facts.os
    assert (os_info.family, os_info.windows_build) == ("windows", "10.0.22631")
    assert os_info.sources["windows_build"] == "collect_env:Python platform"
    assert os_info.distro_name == "Microsoft Windows 11 Enterprise"
    # OS line not collected (as collect_env prints it when it fails): the platform says it
    uncollected = changed(
        text, "OS: Microsoft Windows 11 Enterprise (10.0.22631 64-bit)", "OS: Could not collect"
    )
    os_info = parse(uncollected).facts.os
    assert (os_info.family, os_info.windows_build) == ("windows", "10.0.22631")
    assert os_info.distro_name is None
    assert os_info.sources["family"] == "collect_env:OS"
    # no platform line (older collect_env prints none): the OS line says it, and its build
    os_info = parse(without(text, "Python platform:")).facts.os
    assert (os_info.family, os_info.windows_build) == ("windows", "10.0.22631")
    assert os_info.sources["family"] == "collect_env:OS"


def test_macos_is_read_from_the_os_line_or_the_python_platform_alone() -> None:
    text = read("macos13-m2max-torch2.10dev.txt")
    os_info = parse(text).facts.os
    assert (os_info.family, os_info.macos_version) == ("darwin", "13.7.4")
    assert os_info.sources["macos_version"] == "collect_env:OS"
    os_info = parse(without(text, "Python platform:")).facts.os
    assert (os_info.family, os_info.macos_version) == ("darwin", "13.7.4")
    uncollected = changed(text, "OS: macOS 13.7.4 (arm64)", "OS: Could not collect")
    os_info = parse(uncollected).facts.os
    assert (os_info.family, os_info.macos_version) == ("darwin", "13.7.4")
    # under Rosetta the platform names the x86 compatibility version (10.16): the OS line's
    # version is the machine's
    os_info = parse(read("macos15-rosetta-m2pro.txt")).facts.os
    assert (os_info.family, os_info.macos_version) == ("darwin", "15.3")


# name -> (distro id, distro version, kernel, glibc, wsl) as the report's OS, Python platform
# and Libc version lines say them (read from each report by hand)
LINUX_OS = {
    # "Rocky Linux release 8.10 (Green Obsidian) (x86_64)", a kernel with dots in its tail
    "linux-4x-h100-mig-details.txt": (
        "rocky", "8.10", "4.18.0-553.16.1.el8_10.x86_64", "2.28", None,
    ),
    "driver-missing-rhel7-cu102-cpu-node.txt": ("rhel", "7.6", None, None, None),
    "linux-4x-titanrtx-driver440-torch1.4-espnet.txt": ("centos", "7.5.1804", None, None, None),
    "linux-centos9-7x-rtx4090-chinese-lscpu.txt": (
        "centos", "9", "5.14.0-565.el9.x86_64", "2.34", None,
    ),
    "debian12-cpu-torch2.13.txt": ("debian", "12", "6.18.44-fc-v1045", "2.36", None),
    # "Libc version: gl" (cut) and no platform line: no glibc
    "xpu-fedora40-a770-no-torch-cut.txt": ("fedora", "40", None, None, None),
    # an aarch64 kernel; the Libc line (2.31) wins over the platform's "with-glibc2.29"
    "jetson-agx-orin-nv23.02.txt": ("ubuntu", "20.04.5", "5.10.120-tegra", "2.31", None),
    "linux-aarch64-gh200-pypi-cpu-build-driver550.txt": (
        "ubuntu", "22.04.4", "6.5.0-1013-nvidia-64k", "2.35", None,
    ),
    # the platform line cut at "-x86_64-wi": no kernel read from it
    "aws-ubuntu20-python3.7-cut-before-gpus.txt": ("ubuntu", "20.04.5", None, "2.17", None),
    # "Libc version: glibc-2.2.5" is the symbol-version base, not the library: no glibc,
    # and the platform line ("-with-centos-7.5.1804-Core") names none either
    "driver-missing-centos7-cu110-cut-at-cuda.txt": ("centos", "7", "4.14.0_1-0-0-38", None, None),
    # a WSL 2 kernel
    "wsl2-xpu-torch2.13.txt": (
        "ubuntu", "26.04", "6.18.33.2-microsoft-standard-WSL2", "2.43", 2,
    ),
    # vLLM's layout, its keys padded with spaces
    "vllm-rhel8-cu124-warnings-truncated.txt": ("rhel", "8.3", None, "2.28", None),
    # hand-written: "Windows 11 + WSL2 Ubuntu 24.04" is Ubuntu 24.04 in WSL 2
    "wsl2-rocm6.4-rx7900xtx-hand-written.txt": ("ubuntu", "24.04", None, None, 2),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(LINUX_OS))
def test_a_linux_reports_distribution_kernel_and_glibc(name: str) -> None:
    os_info = parse(read(name)).facts.os
    assert os_info.family == "linux"
    got = (os_info.distro_id, os_info.distro_version, os_info.kernel, os_info.glibc, os_info.wsl)
    assert got == LINUX_OS[name]
    assert os_info.libc == ("glibc" if os_info.glibc else None)
    # each fact names the line it was read from
    said = {
        "distro_name": "collect_env:OS",
        "kernel": "collect_env:Python platform",
        "glibc": "collect_env:Libc version",
    }
    for fact, line in said.items():
        assert os_info.sources.get(fact) == (line if getattr(os_info, fact) else None), fact


def test_the_glibc_symbol_base_gives_way_to_the_platforms_glibc() -> None:
    # "Libc version: glibc-2.2.5" (platform.libc_ver() on a static binary) is no version; the
    # platform line is read instead. The real report's platform names no glibc; here it is
    # changed to the "-with-glibc2.17" a newer Python prints on the same CentOS 7 machine.
    text = read("driver-missing-centos7-cu110-cut-at-cuda.txt")
    newer = changed(text, "-with-centos-7.5.1804-Core", "-with-glibc2.17")
    os_info = parse(newer).facts.os
    assert (os_info.libc, os_info.glibc) == ("glibc", "2.17")
    assert os_info.sources["glibc"] == "collect_env:Libc version"


def test_a_wsl1_kernel_is_wsl_1() -> None:
    # WSL 1 runs no Linux kernel of its own: its platform line names a "Microsoft" kernel
    # without "-microsoft-standard-WSL2". The real WSL 2 line is changed to WSL 1's form.
    text = read("wsl2-rtx4070laptop-cu121-windows-driver.txt")
    assert parse(text).facts.os.wsl == 2
    wsl1 = changed(
        text, "Linux-5.15.153.1-microsoft-standard-WSL2-", "Linux-4.4.0-19041-Microsoft-"
    )
    os_info = parse(wsl1).facts.os
    assert (os_info.wsl, os_info.kernel) == (1, "4.4.0-19041-Microsoft")
    # a plain Linux kernel is no WSL
    plain = changed(text, "Linux-5.15.153.1-microsoft-standard-WSL2-", "Linux-5.15.0-107-generic-")
    assert parse(plain).facts.os.wsl is None


# --- the Python's machine --------------------------------------------------------------------

GTX1050 = "windows11-gtx1050ti-cu117.txt"  # a CUDA build; "Architecture=9"; MSC ... (AMD64)
GTX1050_PYTHON = (
    "Python version: 3.9.16 (main, May 17 2023, 17:49:16) [MSC v.1916 64 bit (AMD64)] "
    "(64-bit runtime)"
)


def _machine(text: str) -> str:
    return parse(text).facts.python.machine


def test_a_windows_pythons_machine_is_read_from_its_build_line_first() -> None:
    text = read(GTX1050)
    assert _machine(text) == "AMD64"
    # an ARM64 Python says so in the same place
    assert _machine(changed(text, "64 bit (AMD64)]", "64 bit (ARM64)]")) == "ARM64"
    # the build line wins over the CPU's WMI code (an x64 Python emulated on an ARM64 CPU)
    assert _machine(changed(text, "Architecture=9", "Architecture=12")) == "AMD64"


def test_without_its_build_line_a_windows_pythons_machine_is_the_cpus_wmi_code() -> None:
    # older collect_env printed "Python version: 3.7" and no platform line: here the Python line
    # is cut to its number and the platform line dropped; the CPU block's WMI code decides,
    # before the CUDA build's x86_64-only rule
    bare = without(changed(read(GTX1050), GTX1050_PYTHON, "Python version: 3.9.16"),
                         "Python platform:")  # fmt: skip
    assert _machine(bare) == "AMD64"
    assert _machine(changed(bare, "Architecture=9", "Architecture=12")) == "ARM64"
    assert _machine(changed(bare, "Architecture=9", "Architecture=0")) == "x86"
    # a code that names no machine: the CUDA build (x86_64 only on Windows) decides
    assert _machine(changed(bare, "Architecture=9", "Architecture=5")) == "AMD64"


def test_with_a_platform_line_the_wmi_code_is_not_the_pythons_machine() -> None:
    # the Python line cut to its number, the platform line kept (a modern collect_env): the
    # CPU's WMI code says what the CPU is, not what the Python is; the CUDA build decides
    text = changed(read(GTX1050), GTX1050_PYTHON, "Python version: 3.9.16")
    assert _machine(changed(text, "Architecture=9", "Architecture=12")) == "AMD64"
    # and a CPU build says nothing of the machine
    cpu = changed(text, "CUDA used to build PyTorch: 11.7", "CUDA used to build PyTorch: N/A")
    assert _machine(changed(cpu, "Architecture=9", "Architecture=12")) == ""


def test_a_pythons_machine_on_linux_and_macos_is_read_from_the_os_line_or_the_platform() -> None:
    # the OS line's "(aarch64)" suffix
    python = parse(read("linux-aarch64-gh200-pypi-cpu-build-driver550.txt")).facts.python
    assert python.machine == "aarch64"
    assert python.sources["machine"] == "collect_env:OS"
    # a machine not said has no source
    python = parse(read("windows10-cpu-torch1.7.1-truncated.txt")).facts.python
    assert python.machine == "" and "machine" not in python.sources
    # a report cut above its OS line: the platform line's "-x86_64-with"
    assert _machine(read("xpu-linux-8x-max1100-ubuntu24-top-cut.txt")) == "x86_64"
    # an OS line without the suffix: the macOS platform line's machine
    text = read("macos13-m2max-torch2.10dev.txt")
    assert _machine(changed(text, "OS: macOS 13.7.4 (arm64)", "OS: macOS 13.7.4")) == "arm64"
    # under Rosetta the OS line and the platform agree on x86_64 (the Python's machine)
    assert _machine(read("macos15-rosetta-m2pro.txt")) == "x86_64"


def test_a_pythons_build_kind_is_read_from_its_version_line() -> None:
    text = read("linux-h100-cu130-driver570.txt")
    line = next(x for x in text.splitlines() if x.startswith("Python version:"))
    python = parse(text).facts.python
    assert (python.implementation, python.free_threaded, python.is_64bit) == (
        "cpython", False, True,
    )  # fmt: skip
    # the same line as a 32-bit, a free-threaded and a PyPy interpreter print it
    py32 = parse(changed(text, line, line.replace("64-bit runtime", "32-bit runtime")))
    assert py32.facts.python.is_64bit is False
    free = line.replace("3.10.12 (main", "3.10.12 experimental free-threading build (main")
    assert parse(changed(text, line, free)).facts.python.free_threaded is True
    pypy = line.replace("[GCC 11.4.0]", "[PyPy 7.3.12 with GCC 11.4.0]")
    assert parse(changed(text, line, pypy)).facts.python.implementation == "pypy"


@pytest.mark.parametrize(
    ("name", "distro"),
    [
        ("linux-4x-h100-mig-details.txt", "Rocky Linux release 8.10 (Green Obsidian)"),
        ("jetson-agx-orin-nv23.02.txt", "Ubuntu 20.04.5 LTS"),  # "(aarch64)"
        ("linux-8x-titanxp-torch1.3-old.txt", "Ubuntu 16.04.4 LTS"),  # no machine suffix
        ("vllm-rhel8-cu124-warnings-truncated.txt", "Red Hat Enterprise Linux release 8.3 (Ootpa)"),
    ],
)
def test_a_linux_distributions_name_is_the_os_line_without_its_machine(
    name: str, distro: str
) -> None:
    os_info = parse(read(name)).facts.os
    assert os_info.distro_name == distro
    assert os_info.sources["distro_name"] == "collect_env:OS"


# --- CPU -------------------------------------------------------------------------------------

# name -> (model, vendor, architecture, logical cores) as the report's CPU block says them
CPUS = {
    # lscpu
    "linux-h100-cu130-driver570.txt": (
        "Intel(R) Xeon(R) Platinum 8462Y+", "GenuineIntel", "x86_64", 128,
    ),
    "jetson-orin-container-top-cut.txt": ("Cortex-A78AE", "ARM", "aarch64", 12),
    # lscpu in a Chinese locale ("架构：", "厂商 ID：", "CPU：" with full-width colons), cut at
    # "BIOS Vendor I" before its model line: no model, the rest read
    "linux-centos9-7x-rtx4090-chinese-lscpu.txt": (None, "GenuineIntel", "x86_64", 128),
    # lscpu cut at "Byte Or": a key cut mid-word is no model
    "jetson-orin-nano-no-torch.txt": (None, None, "aarch64", None),
    # "Model name:" empty and no BIOS model line
    "vllm-tracker-rtx5090d-prompt-glued.txt": (None, "GenuineIntel", "x86_64", 40),
    # macOS: sysctl's one line; an Apple M chip is arm64
    "macos13-m2max-torch2.10dev.txt": ("Apple M2 Max", None, "arm64", None),
    "macos14-x86_64-email-reply.txt": (
        "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz", None, None, None,
    ),
    # Windows: WMI's "Name=" and "Manufacturer="; "Architecture=9" is a code, not a name
    "windows11-gtx1050ti-cu117.txt": (
        "Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz", "GenuineIntel", None, None,
    ),
    # the same with "Key: value"
    "windows11-xpu-torch2.7.1.txt": (
        "12th Gen Intel(R) Core(TM) i7-12700H", "GenuineIntel", None, None,
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CPUS))
def test_a_reports_cpu_block_is_read(name: str) -> None:
    cpu = parse(read(name)).facts.cpu
    assert (cpu.model, cpu.vendor, cpu.architecture, cpu.logical_cores) == CPUS[name]
    assert cpu.sources.get("model") == ("collect_env:CPU" if cpu.model else None)
    assert cpu.sources.get("architecture") == ("collect_env:CPU" if cpu.architecture else None)


def test_an_unknown_lscpu_model_gives_way_to_the_bios_model() -> None:
    # lscpu prints "Model name: -" where it cannot name the CPU (the real line is changed to
    # that); the BIOS's model line below it names it
    text = read("linux-arc-pro-b60-xpu-torch2.11.txt")
    model = "Intel(R) Core(TM) Ultra 7 265K"
    assert parse(text).facts.cpu.model == model
    unknown = changed(text, f"Model name:                              {model}\n",
                      "Model name:                              -\n")  # fmt: skip
    assert parse(unknown).facts.cpu.model == model + " To Be Filled By O.E.M. CPU @ 3.9GHz"


def test_lscpus_flags_are_summarised_into_an_isa_level() -> None:
    cpu = parse(read("linux-h100-cu130-driver570.txt")).facts.cpu
    assert cpu.isa_level == "x86-64-v4" and "avx512f" in cpu.flags
    assert cpu.sources["isa_level"] == cpu.sources["flags"] == "collect_env:CPU Flags"
    cpu = parse(read("debian12-cpu-torch2.13.txt")).facts.cpu
    assert cpu.isa_level == "x86-64-v3" and "avx2" in cpu.flags and "avx512f" not in cpu.flags
    # no Flags line: nothing said of the ISA
    cpu = parse(read("linux-arc-pro-b60-xpu-torch2.11.txt")).facts.cpu
    assert (cpu.isa_level, cpu.flags) == (None, ())
    assert "isa_level" not in cpu.sources and "flags" not in cpu.sources


# --- packages --------------------------------------------------------------------------------


def _pkgs(text: str) -> list[tuple[str, str, str | None, str | None, bool]]:
    """(name, version, variant, installer, shadowed) of each package read, in order."""
    return [
        (p.name, p.version, str(p.variant) if p.variant else None, p.installer, p.shadowed)
        for p in parse(text).facts.packages
    ]


def test_only_torch_and_its_companions_are_read_from_the_library_lines() -> None:
    # 19 pip lines, among them clip-anytorch, gpytorch, torchdata, welford-torch: only torch,
    # torchaudio and torchvision are packages the plan weighs
    text = read("linux-h100-cu130-driver570.txt")
    assert _pkgs(text) == [
        ("torch", "2.9.0", "cu130", "pip", False),
        ("torchaudio", "2.9.0", None, "pip", False),
        ("torchvision", "0.24.0", None, "pip", False),
    ]
    # conda's name "pytorch" is torch; pytorch-mutex and the rest are not
    tail = read("tail-only-conda-torch1.10.2-cu102-libraries.txt")
    assert [p[0] for p in _pkgs(tail)] == ["torch", "torchaudio", "torchvision"]


def test_a_library_line_without_a_version_is_not_a_package() -> None:
    text = read("linux-h100-cu130-driver570.txt")
    # "[pip3] torchvision==0.24.0" with its version replaced by a non-version (a local path)
    odd = changed(text, "[pip3] torchvision==0.24.0", "[pip3] torchvision==file")
    assert [p[0] for p in _pkgs(odd)] == ["torch", "torchaudio"]
    # a pip line that is no "name==version"
    odd = changed(text, "[pip3] torchvision==0.24.0", "[pip3] torchvision 0.24.0")
    assert [p[0] for p in _pkgs(odd)] == ["torch", "torchaudio"]
    # a conda line of one word
    tail = read("tail-only-conda-torch1.10.2-cu102-libraries.txt")
    line = "[conda] torchvision               0.11.3               py37_cu102    pytorch"
    odd = changed(tail, line, "[conda] torchvision")
    assert [(p[0], p[1]) for p in _pkgs(odd)] == [
        ("torch", "1.10.2"), ("torchaudio", "0.10.2"), ("torchvision", "0.11.3"),
    ]  # fmt: skip


def test_the_imported_torchs_variant_by_each_route() -> None:
    # its version's local tag
    assert _pkgs(read("linux-4x-h100-mig-details.txt"))[0][2] == "cu121"
    # no tag: the CUDA it was built with
    h100 = read("linux-h100-cu130-driver570.txt")
    assert _pkgs(h100)[0][2] == "cu130"
    # the CUDA line cut to "13" (a paste cut mid-line) names no CUDA build, and with CUDA
    # available it is no CPU build either: unknown
    cut = changed(h100, "CUDA used to build PyTorch: 13.0", "CUDA used to build PyTorch: 13")
    torch = parse(cut).facts.package("torch")
    assert torch is not None and (torch.variant, torch.cuda) == (None, None)
    # no tag, no CUDA or ROCm, CUDA not available, a release version on Windows: a CPU build
    assert _pkgs(read("windows10-cpu-build-rtx-truncated.txt"))[0][2] == "cpu"
    # ... but a source build ("+git") may be any build, and so may any torch on macOS
    assert _pkgs(read("linux-xpu-vllm-source-build.txt"))[0][2] is None
    assert _pkgs(read("macos14-x86_64-email-reply.txt"))[0][2] is None
    # and CUDA available without the build line (cut): not a CPU build
    assert _pkgs(read("windows10-pyrovision-cuda-yes-cut.txt"))[0][2] is None


def test_a_release_torch_says_cuda_available_is_not_read_as_a_cpu_build() -> None:
    # the Windows CPU build's report with "Is CUDA available" changed from False to True: a
    # torch that sees CUDA is no CPU build
    text = read("windows10-cpu-build-rtx-truncated.txt")
    yes = changed(text, "Is CUDA available: False", "Is CUDA available: True")
    assert _pkgs(yes)[0][2] is None
    # a "1.10.0a0+..." pre-release is a source build: unknown
    pre = changed(text, "PyTorch version: 1.10.0", "PyTorch version: 1.10.0a0+0aef44c")
    assert _pkgs(pre)[0][2] is None


def test_without_an_importable_torch_the_pip_listed_torch_is_not_the_one_that_runs() -> None:
    # "PyTorch version: N/A" above "[pip3] torch==1.7.0.dev20200803": that pip is another
    # interpreter's; its torch is not read, its torchvision is
    text = read("macos10.15-no-torch-py27.txt")
    assert _pkgs(text) == [("torchvision", "0.8.0.dev20200804", None, "pip", False)]


def test_a_second_torch_in_the_environment_is_shadowed_by_the_imported_one() -> None:
    # the imported torch 1.7.0a0+9ddd3df beside "[pip3] torch==1.7.0a0+a9603c7"
    pkgs = _pkgs(read("linux-rocm3.7-source-build-device-66a1.txt"))
    assert [p for p in pkgs if p[0] == "torch"] == [
        ("torch", "1.7.0a0+9ddd3df", "rocm3.7", None, False),
        ("torch", "1.7.0a0+a9603c7", None, "pip", True),
    ]


def test_a_pip_torch_inside_conda_is_one_install_when_pip_lists_the_same_version() -> None:
    # "[pip] torch==1.3.0", "[conda] pytorch 1.3.0 py3.7_cuda92_cudnn7_0" and "[conda] torch
    # 1.3.1 pypi_0 pypi": conda's pypi torch is another version, a second install, shadowed
    text = read("windows10-quadro-m2000-cu92-driver391-pip-conda.txt")
    torches = [p for p in _pkgs(text) if p[0] == "torch"]
    assert torches == [
        ("torch", "1.3.0", "cu92", "pip", False),
        ("torch", "1.3.1", None, "pip", True),
    ]
    # the pypi line with pip's own version (changed from 1.3.1): the same install, once
    pypi = "[conda] torch                     1.3.1                    pypi_0    pypi"
    same = changed(text, pypi, pypi.replace("1.3.1", "1.3.0"))
    assert [p for p in _pkgs(same) if p[0] == "torch"] == [("torch", "1.3.0", "cu92", "pip", False)]
    # without pip's list (its lines dropped), conda's pypi line is not read as an install:
    # the torch is conda's
    no_pip = "".join(x for x in text.splitlines(keepends=True) if not x.startswith("[pip]"))
    torches = [p for p in _pkgs(no_pip) if p[0] == "torch"]
    assert torches == [("torch", "1.3.0", "cu92", "conda", False)]


def test_a_companion_listed_at_two_versions_keeps_the_first_and_shadows_the_second() -> None:
    # torchvision in pip's list (0.4.1) and conda's (0.4.1, "py37_cu92"): one install; here
    # conda's line changed to 0.4.2, a second install
    text = read("windows10-quadro-m2000-cu92-driver391-pip-conda.txt")
    vision = [p for p in _pkgs(text) if p[0] == "torchvision"]
    assert vision == [("torchvision", "0.4.1", None, "pip", False)]
    conda = "[conda] torchvision               0.4.1                 py37_cu92    pytorch"
    two = changed(text, conda, conda.replace("0.4.1", "0.4.2"))
    vision = [p for p in _pkgs(two) if p[0] == "torchvision"]
    assert vision == [
        ("torchvision", "0.4.1", None, "pip", False),
        ("torchvision", "0.4.2", None, "conda", True),
    ]


# --- GPUs ------------------------------------------------------------------------------------


def test_a_mig_line_marks_the_gpu_above_it_and_only_that_one() -> None:
    # GPU 2 carries seven MIG devices; of GPUs 0, 1 and 3 the list says nothing
    text = read("linux-4x-h100-mig-details.txt")
    nvidia = parse(text).facts.nvidia
    assert nvidia is not None
    assert [(g.index, g.mig_mode) for g in nvidia.gpus] == [
        (0, None), (1, None), (2, True), (3, None),
    ]  # fmt: skip
    # the MIG lines moved above the first GPU line mark no GPU
    mig = "".join(f"  MIG 1g.12gb     Device  {n}:\n" for n in range(7))
    moved = changed(changed(text, mig, ""), "GPU 0: NVIDIA H100\n", mig + "GPU 0: NVIDIA H100\n")
    nvidia = parse(moved).facts.nvidia
    assert nvidia is not None
    assert [g.mig_mode for g in nvidia.gpus] == [None] * 4


@pytest.mark.parametrize(("listed", "read_as"), [(1024, 1024), (1025, 1024)])
def test_at_most_max_gpus_are_read_from_one_gpu_list(listed: int, read_as: int) -> None:
    # the 8 "GPU n: TITAN Xp" lines repeated to `listed` lines (a paste of many machines'
    # lists): MAX_GPUS (1024) are read, the rest of the list is not
    text = read("linux-8x-titanxp-torch1.3-old.txt")
    eight = "".join(f"GPU {n}: TITAN Xp\n" for n in range(8))
    many = "".join(f"GPU {n}: TITAN Xp\n" for n in range(listed))
    nvidia = parse(changed(text, eight, many)).facts.nvidia
    assert nvidia is not None and len(nvidia.gpus) == read_as
    assert nvidia.gpus[-1].index == read_as - 1


def test_an_amd_gpus_gfx_target_is_read_from_its_name_and_dropped_from_it() -> None:
    # "AMD Radeon Graphics (gfx906:sramecc+:xnack-)": the target with its feature flags
    rocm = parse(read("vllm-gfx906-rocm63.txt")).facts.rocm
    assert rocm is not None
    assert [(g.index, g.name, g.gfx_arch, g.vendor) for g in rocm.gpus] == [
        (0, "AMD Radeon Graphics", "gfx906", "amd"),
    ]
    # "Device 66a1" on a ROCm build: an AMD GPU without a target
    rocm = parse(read("linux-rocm3.7-source-build-device-66a1.txt")).facts.rocm
    assert rocm is not None
    assert [(g.name, g.gfx_arch) for g in rocm.gpus] == [("Device 66a1", None)]


def test_an_amd_gpu_named_on_a_cuda_build_is_amd() -> None:
    # a CUDA build's GPU list with its one line changed to an AMD card's name (a machine with
    # an AMD GPU and a CUDA torch): the name says AMD, the build does not decide
    text = read("windows11-gtx1050ti-cu117.txt")
    amd = changed(text, "GPU 0: NVIDIA GeForce GTX 1050 Ti", "GPU 0: AMD Radeon RX 7900 XTX")
    facts = parse(amd).facts
    assert facts.rocm is not None and [g.name for g in facts.rocm.gpus] == [
        "AMD Radeon RX 7900 XTX"
    ]
    assert facts.nvidia is None or not facts.nvidia.gpus


def test_conda_build_strings_name_their_variant() -> None:
    # "[conda] pytorch 1.4.0 py3.7_cuda10.0.130_cudnn7.6.3_0": the dotted CUDA 10.0, with its
    # patch level; a paste of the library lines only (cut from the report), so that the build
    # string is the one sign of the variant (pip lists no torch here: conda's line alone
    # makes the paste a report)
    text = read("linux-2x-titanxp-conda-torch1.4-driver410.txt")
    tail = text[text.index("Versions of relevant libraries:") :]
    assert _pkgs(tail)[0][:4] == ("torch", "1.4.0", "cu100", "conda")
    # the undotted three-digit form of the conda builds before torch 1.2 (CUDA 10.0 as
    # "cuda100"), the line changed to it
    old = changed(tail, "py3.7_cuda10.0.130_cudnn7.6.3_0", "py3.7_cuda100_cudnn7_1")
    assert _pkgs(old)[0][:4] == ("torch", "1.4.0", "cu100", "conda")
    # a build string that names neither CUDA nor the CPU: no variant
    plain = changed(tail, "py3.7_cuda10.0.130_cudnn7.6.3_0", "py37_0")
    assert _pkgs(plain)[0][:4] == ("torch", "1.4.0", None, "conda")


def test_the_pip_libraries_are_read_by_their_normalised_name() -> None:
    libraries = parse(read("linux-h100-cu130-driver570.txt")).libraries
    # "[pip3] mypy_extensions==1.1.0", "[pip3] DISTS-pytorch==0.1"
    assert libraries["mypy-extensions"] == "1.1.0"
    assert libraries["dists-pytorch"] == "0.1"
    assert libraries["triton"] == "3.5.0+gitbbb06c03"
    assert "mypy_extensions" not in libraries and "DISTS-pytorch" not in libraries
    # conda's lines are not pip's libraries: "[conda] numpy 1.19.5 pypi_0 pypi" is not read,
    # "[pip3] numpy==1.21.5" is
    libraries = parse(read("tail-only-conda-torch1.10.2-cu102-libraries.txt")).libraries
    assert libraries["numpy"] == "1.21.5" and "cudatoolkit" not in libraries


def test_a_library_listed_twice_keeps_its_first_version() -> None:
    # a second "[pip3] numpy==" line added below the first (pip3 and pip listing two
    # interpreters): the first is the one read
    text = read("linux-h100-cu130-driver570.txt")
    twice = changed(text, "[pip3] numpy==1.24.4\n", "[pip3] numpy==1.24.4\n[pip3] numpy==2.1.0\n")
    assert parse(twice).libraries["numpy"] == "1.24.4"


def test_each_xpu_device_line_is_an_intel_gpu() -> None:
    # "* [0] _XpuDeviceProperties(name='Intel(R) Graphics [0xb080]', ...": torch's own list
    xpu = parse(read("wsl2-xpu-torch2.13.txt")).facts.xpu
    assert xpu is not None
    assert [(g.index, g.name, g.vendor) for g in xpu.gpus] == [
        (0, "Intel(R) Graphics [0xb080]", "intel")
    ]
    assert xpu.sources["gpus"] == "collect_env:Intel GPU models detected"
    # torch's list cut after two of the eight GPUs the system lists: the system's list
    xpu = parse(read("linux-max1100-xpu-onboard-top-cut.txt")).facts.xpu
    assert xpu is not None
    assert [(g.index, g.name) for g in xpu.gpus] == [
        (n, "Intel(R) Data Center GPU Max 1100") for n in range(8)
    ]
    assert xpu.sources["gpus"] == "collect_env:Intel GPU models onboard"


# --- layout: where the GPU list ends ---------------------------------------------------------
# On a ROCm build every line of the GPU list is an AMD GPU, so a line wrongly kept in the list
# shows as a GPU.

ROCM = "wsl2-rocm62-rx7900xt.txt"  # "GPU models and configuration: AMD Radeon RX 7900 XT (gfx1100)"


def _amd_names(text: str) -> list[str]:
    rocm = parse(text).facts.rocm
    return [g.name for g in rocm.gpus] if rocm else []


def test_a_key_cut_before_its_colon_ends_the_gpu_list() -> None:
    # the report cut inside the line after its GPU line, before that key's colon
    text = read(ROCM)
    assert _amd_names(text) == ["AMD Radeon RX 7900 XT"]
    cut = text[
        : text.index("Nvidia driver version: Could not collect") + len("Nvidia driver version")
    ]
    assert _amd_names(cut) == ["AMD Radeon RX 7900 XT"]


def test_a_closing_fence_ends_the_gpu_list() -> None:
    # the report cut after its GPU line and its fence closed there; the paste goes on with the
    # report's own first line (its shell prompt), which is no GPU
    text = read(ROCM)
    gpu = "GPU models and configuration: AMD Radeon RX 7900 XT (gfx1100)\n"
    prompt = "(xinf) root@DESKTOP-ESRGKIB:~/vllm# python3 collect_env.py \n"
    assert prompt in text
    fenced = text[: text.index(gpu) + len(gpu)] + "```\n" + prompt
    assert _amd_names(fenced) == ["AMD Radeon RX 7900 XT"]


def test_a_conda_line_cut_short_still_names_its_package() -> None:
    # the library lines of a conda torch (pip lists no torch here), the paste cut inside
    # conda's torch line
    text = read("linux-2x-titanxp-conda-torch1.4-driver410.txt")
    tail = text[text.index("Versions of relevant libraries:") :]
    line = next(x for x in tail.splitlines() if x.startswith("[conda] pytorch "))
    assert line.split()[2:] == ["1.4.0", "py3.7_cuda10.0.130_cudnn7.6.3_0", "pytorch"]
    # before its channel column: the build string still names the variant
    no_channel = changed(tail, line, line[: line.rindex(" pytorch")])
    assert _pkgs(no_channel)[0][:4] == ("torch", "1.4.0", "cu100", "conda")
    # after its version: the package and version, no variant
    no_build = changed(tail, line, "[conda] pytorch                   1.4.0")
    assert _pkgs(no_build)[0][:4] == ("torch", "1.4.0", None, "conda")


def test_a_pypi_line_cut_before_its_channel_is_still_pips() -> None:
    # conda's "torch 1.3.1 pypi_0 pypi" cut before "pypi": its build "pypi_0" still says pip
    # installed it, so it is read as pip's second torch, not as a conda build
    text = read("windows10-quadro-m2000-cu92-driver391-pip-conda.txt")
    pypi = "[conda] torch                     1.3.1                    pypi_0    pypi"
    cut = changed(text, pypi, pypi[: pypi.rindex(" pypi")])
    torches = [p for p in _pkgs(cut) if p[0] == "torch"]
    assert torches == [
        ("torch", "1.3.0", "cu92", "pip", False),
        ("torch", "1.3.1", None, "pip", True),
    ]
