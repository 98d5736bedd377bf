"""The report reader's field rules one at a time (issue 22), on the real collect_env reports in
tests/fixtures/collect_env (each with its .source). Where a rule needs a case no captured report
shows, one line of a real report is cut or changed, and the test says which."""

from __future__ import annotations

from pathlib import Path

from setup_env.probe.report import parse

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def changed(text: str, old: str, new: str) -> str:
    """`text` with its first `old` replaced by `new`; the change must land."""
    assert old in text, old
    return text.replace(old, new, 1)


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
    facts = parse(changed(text, "Python version: 3.7 (64-bit runt", "Python version: (64-bit runt")).facts
    assert facts.python.version == ""
    garbled = [n for n in facts.notes if n.code == "collect-env-python-garbled"]
    assert len(garbled) == 1 and "(64-bit runt" in garbled[0].message
    # the real line is read, with no such note
    facts = parse(text).facts
    assert facts.python.version == "3.7"
    assert "collect-env-python-garbled" not in {n.code for n in facts.notes}


# --- OS --------------------------------------------------------------------------------------


def test_an_os_line_naming_wsl_is_linux_unless_the_python_runs_on_windows() -> None:
    # a hand-written "OS: Windows 11 + WSL2 Ubuntu 24.04": the Python runs in WSL's Linux
    text = read("wsl2-rocm6.4-rx7900xtx-hand-written.txt")
    os_info = parse(text).facts.os
    assert (os_info.family, os_info.wsl) == ("linux", 2)
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
