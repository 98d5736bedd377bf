"""The one door's limits and text rules, each at exactly the limit and one past it (issue 22)."""

from __future__ import annotations

import errno
import io
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from setup_env import bounded


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x1b[2J", "\\x1b[2J"),
        ("\x85", "\\x85"),
        ("line\u2028sep", "line\\u2028sep"),
        ("tag\U000e0001", "tag\\U000e0001"),  # \u0e0001 would read back as U+E000 and "1"
    ],
)
def test_one_line_escapes_what_is_not_printable(text: str, shown: str) -> None:
    assert bounded.one_line(text) == shown


def test_one_line_cuts_at_exactly_the_limit() -> None:
    assert bounded.one_line("x" * 10, 10) == "x" * 10
    assert bounded.one_line("x" * 11, 10) == "x" * 10 + "…"
    # an escape counts with its full length and is never cut in half
    assert bounded.one_line("x" * 8 + "\n", 10) == "x" * 8 + "\\n"
    assert bounded.one_line("x" * 9 + "\n", 10) == "x" * 9 + "…"
    # without a limit given, a line is 200 characters
    assert bounded.one_line("x" * 200) == "x" * 200
    assert bounded.one_line("x" * 201) == "x" * 200 + "…"


# --- JSON -----------------------------------------------------------------------------------


def test_json_size_limit_exactly_and_one_past() -> None:
    doc = b'{"a": 1}'
    assert bounded.parse_json(doc, "d", max_bytes=len(doc)) == {"a": 1}
    with pytest.raises(bounded.InputError, match=f"d is larger than {len(doc) - 1} bytes"):
        bounded.parse_json(doc, "d", max_bytes=len(doc) - 1)
    docs, error = bounded.parse_json_documents(doc + doc, "f", max_bytes=2 * len(doc))
    assert (docs, error) == ([{"a": 1}, {"a": 1}], None)
    with pytest.raises(bounded.InputError, match="f is larger than"):
        bounded.parse_json_documents(doc + doc, "f", max_bytes=2 * len(doc) - 1)


def test_integer_digits_exactly_and_one_past() -> None:
    n = bounded.MAX_INT_DIGITS
    assert bounded.parse_json("9" * n) == int("9" * n)
    assert bounded.parse_json("-" + "9" * n) == -int("9" * n)  # the sign is no digit
    with pytest.raises(bounded.InputError, match=f"an integer of {n + 1} digits"):
        bounded.parse_json("9" * (n + 1), "the document")
    docs, error = bounded.parse_json_documents("1 " + "9" * (n + 1), "log")
    assert docs == [1] and error == f"log (document 2) is not JSON (an integer of {n + 1} digits)"


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_nesting_exactly_and_one_past() -> None:
    assert bounded.parse_json(nested(5), max_depth=5) is not None
    with pytest.raises(bounded.InputError, match="the document nests deeper than 5 levels"):
        bounded.parse_json(nested(6), "the document", max_depth=5)
    depth = bounded.MAX_JSON_DEPTH
    assert bounded.parse_json(nested(depth)) is not None
    with pytest.raises(bounded.InputError, match=f"deeper than {depth} levels"):
        bounded.parse_json(nested(depth + 1))
    # an object counts as a level too, a scalar does not
    assert bounded.parse_json('{"a": {"b": 1}}', max_depth=2) == {"a": {"b": 1}}
    with pytest.raises(bounded.InputError):
        bounded.parse_json('{"a": {"b": []}}', max_depth=2)
    docs, error = bounded.parse_json_documents(nested(2) + nested(3), "log", max_depth=2)
    assert docs == [[[]]] and error == "log (document 2) nests deeper than 2 levels"


def test_node_count_exactly_and_one_past(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounded, "MAX_JSON_NODES", 4)
    assert bounded.check_shape([1, 2, 3], "d") is None  # the list and its three values
    with pytest.raises(bounded.InputError, match="d has more than 4 values"):
        bounded.check_shape([1, 2, 3, 4], "d")


def test_nan_is_refused_unless_allowed() -> None:
    with pytest.raises(bounded.InputError, match="NaN is not JSON"):
        bounded.parse_json('{"x": NaN}', "doc")
    assert bounded.parse_json("[Infinity]", allow_nan=True) == [float("inf")]
    docs, error = bounded.parse_json_documents("[1] [NaN]", "log")
    assert docs == [[1]] and error is not None and "NaN is not JSON" in error
    assert bounded.parse_json_documents("[NaN]", "log", allow_nan=True)[1] is None


def test_json_documents_one_after_another() -> None:
    assert bounded.parse_json_documents("", "log") == ([], None)
    assert bounded.parse_json_documents(' \n{"a": 1}\n\t[2] \r\n', "log") == ([{"a": 1}, [2]], None)
    docs, error = bounded.parse_json_documents('{"a": 1} {"b":', "log")
    assert docs == [{"a": 1}] and error is not None and error.startswith("log (document 2) is not")
    docs, error = bounded.parse_json_documents("{oops", "log")
    assert docs == [] and error is not None and error.startswith("log is not JSON")
    with pytest.raises(bounded.InputError, match="log is not JSON \\(not UTF-8 or UTF-16"):
        bounded.parse_json_documents(b"\xff\xfe\x00", "log")


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"plain", "plain"),
        (b"\xef\xbb\xbfbom", "bom"),
        ("utf16".encode("utf-16"), "utf16"),  # with its byte-order mark
        (b"\xfe\xff\x00b\x00e", "be"),
        ("é".encode(), "é"),
    ],
)
def test_decode_text(data: bytes, text: str) -> None:
    assert bounded.decode_text(data) == text
    assert bounded.parse_json(b'"' + text.encode() + b'"') == text


def test_decode_text_refuses_what_is_not_text() -> None:
    with pytest.raises(bounded.InputError, match="the log is not UTF-8 or UTF-16 text"):
        bounded.decode_text(b"\xc3\x28", "the log")
    with pytest.raises(bounded.InputError, match=r"^input is not UTF-8"):  # nothing named
        bounded.decode_text(b"\xc3\x28")
    with pytest.raises(bounded.InputError, match="the document is not JSON \\(not UTF-8"):
        bounded.parse_json(b"\xc3\x28", "the document")
    # a str from outside may start with a BOM too
    assert bounded.parse_json("\ufeff[1]") == [1]


# --- files ----------------------------------------------------------------------------------


def test_file_size_exactly_and_one_past(tmp_path: Path) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x" * 10)
    assert bounded.read_file(f, 10) == b"x" * 10
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file(f, 9)
    assert (err.value.kind, err.value.detail) == ("too-large", "over 9 bytes")


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="Linux /proc")
def test_a_file_that_lies_about_its_size_is_refused_not_cut() -> None:
    """/proc files say st_size 0 whatever they hold: the limit is found by reading, and a read
    that lands exactly on the limit must look one byte further, never return the file cut."""
    whole = bounded.read_file("/proc/self/cmdline", 1 << 20)
    assert len(whole) > 2
    assert bounded.read_file("/proc/self/cmdline", len(whole)) == whole
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file("/proc/self/cmdline", len(whole) - 1)
    assert err.value.kind == "too-large"


def test_read_failures_say_what_happened(tmp_path: Path) -> None:
    cases = {
        tmp_path / "missing": ("missing", "no such file"),
        tmp_path / "missing" / "below": ("missing", "no such file"),
        tmp_path: ("not-a-file", "a folder"),
    }
    (tmp_path / "file").write_text("x")
    cases[tmp_path / "file" / "below"] = ("missing", "a part of the path is not a folder")
    for path, (kind, detail) in cases.items():
        with pytest.raises(bounded.ReadFailed) as err:
            bounded.read_file(path, 10)
        assert (err.value.kind, err.value.detail, err.value.path) == (kind, detail, str(path))
        assert str(err.value) == f"{path}: {detail}"


def test_confined_reads_stay_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (root / "in").write_text("inside")
    (tmp_path / "out").write_text("outside")
    (root / "link").symlink_to(tmp_path / "out")
    assert bounded.read_file(root / "in", 100, root=root) == b"inside"
    assert bounded.confined(root, root) == root.resolve()
    for path in (root / "link", root / ".." / "out"):
        with pytest.raises(bounded.ReadFailed) as err:
            bounded.read_file(path, 100, root=root)
        assert err.value.kind == "outside"
    # a sibling whose name starts with the root's is outside too
    (tmp_path / "root2").mkdir()
    with pytest.raises(bounded.ReadFailed):
        bounded.confined(tmp_path / "root2", root)


def test_bundled_names_are_plain_file_names() -> None:
    assert bounded.bundled_path("wheels.json") == Path(bounded.DATA_DIR) / "wheels.json"
    for bad in ("", ".", "..", "a/b", "../wheels.json"):
        with pytest.raises(ValueError, match="not a bundled document name"):
            bounded.bundled_path(bad)
    assert isinstance(bounded.read_bundled("wheels.json"), dict)


# --- commands -------------------------------------------------------------------------------


def test_a_command_that_finishes_keeps_its_status_and_output() -> None:
    ran = bounded.run([sys.executable, "-c", "import sys; print('out'); sys.exit(3)"], 30, 100)
    assert (ran.returncode, ran.stdout, ran.timed_out, ran.too_much_output) == (
        3,
        b"out\n",
        False,
        False,
    )


def test_a_command_past_its_deadline_is_killed_and_says_so() -> None:
    ran = bounded.run([sys.executable, "-c", "import time; time.sleep(60)"], 0.5, 100)
    assert ran.returncode is None  # killed: not -9, not 0
    assert (ran.timed_out, ran.too_much_output) == (True, False)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_output_cap_exactly_and_one_past(stream: str) -> None:
    write = f"import sys; sys.{stream}.write('x' * int(sys.argv[1])); sys.{stream}.flush()"
    exact = bounded.run([sys.executable, "-c", write, "100"], 30, 100)
    assert exact.returncode == 0 and getattr(exact, stream) == b"x" * 100
    assert not exact.too_much_output
    over = bounded.run(
        [sys.executable, "-c", write + "; import time; time.sleep(60)", "101"], 30, 100
    )
    assert over.returncode is None and over.too_much_output and not over.timed_out
    assert getattr(over, stream) == b"x" * 100  # what fits is kept


def test_a_deadline_counts_down_and_then_refuses() -> None:
    d = bounded.Deadline(30)
    assert 0 < d.left() <= 30 and 0 < d.require() <= 30
    gone = bounded.Deadline(0)
    with pytest.raises(TimeoutError, match="deadline of 0 s passed"):
        gone.require()


# --- standard input -------------------------------------------------------------------------


class _Stdin(io.TextIOWrapper):
    def isatty(self) -> bool:
        return True


def test_stdin_exactly_and_one_past(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 10)))
    assert bounded.read_stdin(10) == b"x" * 10
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"x" * 11)))
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_stdin(10)
    assert (err.value.path, err.value.kind, err.value.detail) == (
        "stdin",
        "too-large",
        "over 10 bytes",
    )
    # a text stream without a buffer (an IDE's console): read as text, sent on as UTF-8
    monkeypatch.setattr(sys, "stdin", io.StringIO("é" * 5))
    assert bounded.read_stdin(10) == "é".encode() * 5
    monkeypatch.setattr(sys, "stdin", io.StringIO("é" * 11))
    with pytest.raises(bounded.ReadFailed):
        bounded.read_stdin(10)
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_stdin(10)
    assert (err.value.kind, err.value.detail) == ("missing", "no standard input")


def test_a_terminal_line_only_from_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("yes\n"))
    assert not bounded.stdin_is_terminal() and bounded.read_terminal_line() is None
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(b"yes\nmore\n")))
    assert bounded.stdin_is_terminal()
    assert bounded.read_terminal_line() == "yes\n"
    assert bounded.read_terminal_line(2) == "mo"
    closed = _Stdin(io.BytesIO(b""))
    closed.close()
    monkeypatch.setattr(sys, "stdin", closed)
    assert bounded.read_terminal_line() is None
    monkeypatch.setattr(sys, "stdin", None)
    assert not bounded.stdin_is_terminal()


# --- writing --------------------------------------------------------------------------------


def test_write_file_replaces_keeps_the_mode_and_writes_through_a_link(tmp_path: Path) -> None:
    f = tmp_path / "out.txt"
    bounded.write_file(f, "é\n")
    assert f.read_bytes() == "é\n".encode()
    f.chmod(0o600)
    bounded.write_file(f, b"second")
    assert f.read_bytes() == b"second" and stat.S_IMODE(f.stat().st_mode) == 0o600
    bounded.write_file(f, b"third", mode=0o640, fsync=True)
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    link = tmp_path / "link"
    link.symlink_to(f)
    bounded.write_file(link, b"through")
    assert link.is_symlink() and f.read_bytes() == b"through"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "out.txt"]  # no leftovers


def test_write_file_refuses_a_folder_and_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, why in ((tmp_path, "it is a folder"), (fifo, "not a regular file")):
        with pytest.raises(bounded.WriteFailed) as err:
            bounded.write_file(path, b"x")
        assert why in str(err.value) and err.value.path == str(path)
        with pytest.raises(bounded.WriteFailed):
            bounded.append_file(path, b"x")
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.write_file(tmp_path / "no" / "f", b"x")
    assert str(err.value).startswith(f"{tmp_path / 'no' / 'f'}: ")


def test_append_file_creates_then_appends(tmp_path: Path) -> None:
    f = tmp_path / "log"
    bounded.append_file(f, "a\n")
    bounded.append_file(f, b"b\n")
    assert f.read_bytes() == b"a\nb\n"


def test_check_writable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    bounded.check_writable(tmp_path / "file")
    bounded.check_writable(tmp_path / "file", append=True)
    bounded.check_writable(tmp_path / "new")
    bounded.check_writable(tmp_path / "a" / "b" / "new", create_folders=True)
    cases = {
        tmp_path / "a" / "new": f"no folder {tmp_path / 'a'}",
        tmp_path / "file" / "new": os.strerror(errno.ENOTDIR),
        tmp_path: "it is a folder",
    }
    for path, why in cases.items():
        with pytest.raises(bounded.WriteFailed) as err:
            bounded.check_writable(path)
        assert str(err.value) == f"{path}: {why}"
    assert not (tmp_path / "a").exists() and not (tmp_path / "new").exists()  # nothing made


def test_open_file_reads_a_regular_file_in_pieces(tmp_path: Path) -> None:
    f = tmp_path / "lib.so"
    f.write_bytes(b"\x7fELF" + bytes(range(256)))
    with bounded.open_file(f) as fh:
        assert fh.read(4) == b"\x7fELF"
        fh.seek(4 + 255)
        assert fh.read() == b"\xff"
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.open_file(f, root=root)
    assert err.value.kind == "outside"
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.open_file(fifo)
    assert (err.value.kind, err.value.detail) == (
        "not-a-file",
        "not a regular file (a pipe or a device)",
    )


def test_text_stdin_with_a_lone_surrogate_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("a\ud800b"))
    assert bounded.read_stdin(10) == b"a?b"


def test_a_new_file_gets_0666_less_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        bounded.write_file(tmp_path / "w", b"x")
        bounded.append_file(tmp_path / "a", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "w").stat().st_mode) == 0o666
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o666


def test_a_killed_group_takes_its_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    code = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open(sys.argv[1], 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    ran = bounded.run([sys.executable, "-c", code, str(pidfile)], 3, 100)
    assert ran.timed_out and ran.returncode is None
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        if Path(f"/proc/{grandchild}/stat").read_text().split(")")[1].split()[0] == "Z":
            break
        time.sleep(0.02)
    else:
        pytest.fail(f"the grandchild {grandchild} outlived its group")


def test_a_command_gets_its_environment_and_folder(tmp_path: Path) -> None:
    code = "import os, sys; print(os.environ.get('SETUP_ENV_T'), os.getcwd(), sys.stdin.read())"
    ran = bounded.run(
        [sys.executable, "-c", code], 30, 1000, env={"SETUP_ENV_T": "1"}, cwd=str(tmp_path)
    )
    assert ran.stdout.decode().split() == ["1", str(tmp_path)]  # and stdin is empty, not ours


def test_stdin_is_read_as_bytes_and_never_past_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # a UTF-16 paste through a pipe arrives as its bytes (the reader decodes it, BOM and all)
    utf16 = "report".encode("utf-16")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(utf16)))
    assert bounded.read_stdin(100) == utf16
    # past the limit: one byte more is read, never the rest
    stdin = io.TextIOWrapper(io.BytesIO(b"x" * 20))
    monkeypatch.setattr(sys, "stdin", stdin)
    with pytest.raises(bounded.ReadFailed):
        bounded.read_stdin(10)
    assert stdin.buffer.read() == b"x" * 9
    # a text stream: characters counted as they come, exactly up to the limit
    monkeypatch.setattr(sys, "stdin", io.StringIO("x" * 10))
    assert bounded.read_stdin(10) == b"x" * 10
    text = io.StringIO("x" * 20)
    monkeypatch.setattr(sys, "stdin", text)
    with pytest.raises(bounded.ReadFailed):
        bounded.read_stdin(10)
    assert text.read() == "x" * 9


def test_no_stdin_is_missing_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_stdin(10)
    assert str(err.value) == "stdin: no standard input" and err.value.path == "stdin"


def test_a_closed_stdin_is_no_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    closed = io.TextIOWrapper(io.BytesIO(b""))
    closed.close()
    monkeypatch.setattr(sys, "stdin", closed)
    assert bounded.stdin_is_terminal() is False
    assert bounded.read_terminal_line() is None


def test_a_terminal_line_is_cut_at_1024_characters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", _Stdin(io.BytesIO(b"y" * 2000 + b"\n")))
    assert bounded.read_terminal_line() == "y" * 1024


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux /proc")
def test_a_read_that_lands_exactly_on_the_limit_looks_one_byte_further() -> None:
    """/proc/<pid>/smaps answers in pieces of about a page, whatever is asked. With the limit
    at exactly the first piece, the reader has read `limit` bytes and the file is not at its
    end: it must ask once more and refuse, never return the first piece as the whole file."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        path = f"/proc/{child.pid}/smaps"
        deadline = time.monotonic() + 10
        while True:  # until the interpreter has mapped what it maps (a stable answer)
            fd = os.open(path, os.O_RDONLY)
            try:
                first = len(os.read(fd, 1 << 20))
                rest = len(os.read(fd, 1 << 20))
            finally:
                os.close(fd)
            if rest > 0 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert rest > 0, "smaps came in one piece: nothing to test the landing with"
        with pytest.raises(bounded.ReadFailed) as err:
            bounded.read_file(path, first)
        assert err.value.kind == "too-large"
    finally:
        child.kill()
        child.wait(timeout=10)


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\x9f", "\\x9f"),  # the last code below 0x100: two hex digits
        ("\u0378", "\\u0378"),  # 0x100 and up: four (U+0378 is unassigned, so not printable)
        ("\uffff", "\\uffff"),  # the last below 0x10000
        ("\U000e0001", "\\U000e0001"),  # from 0x10000: \U and eight
    ],
)
def test_one_line_escape_widths_at_their_edges(char: str, shown: str) -> None:
    assert bounded.one_line(char) == shown


def test_a_refusal_names_the_path_and_why(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.confined(tmp_path, root)
    assert (err.value.path, err.value.detail) == (str(tmp_path), f"outside {root}")
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file(big, 10)
    assert str(err.value) == f"{big}: over 10 bytes"


def test_not_json_says_what_and_why_in_one_line() -> None:
    with pytest.raises(bounded.InputError) as err:
        bounded.parse_json("{\n  'a': 1\n}", "the facts")
    message = str(err.value)
    assert message.startswith("the facts is not JSON (Expecting property name enclosed in double")
    assert "\n" not in message
    docs, error = bounded.parse_json_documents("[1] {'a'", "log")
    assert docs == [[1]] and error is not None
    assert error.startswith("log (document 2) is not JSON (Expecting property name")
    # integers are bounded in every document, also where NaN is allowed
    with pytest.raises(bounded.InputError, match="an integer of 41 digits"):
        bounded.parse_json("9" * 41, allow_nan=True)
    docs, error = bounded.parse_json_documents("9" * 41, "log", allow_nan=True)
    assert docs == [] and error == "log is not JSON (an integer of 41 digits)"


def test_writing_in_place_for_a_file_in_a_locked_folder(tmp_path: Path) -> None:
    """write_file's way for a writable file in a folder it may not create in (a non-root user's
    case; the tests run as root, who may create anywhere, so the step is called directly)."""
    f = tmp_path / "config"
    f.write_bytes(b"old and longer")
    bounded._write_in_place(str(f), str(f), b"new", fsync=True)
    assert f.read_bytes() == b"new"  # truncated first, then written
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(bounded.WriteFailed) as err:
        bounded._write_in_place("shown", str(fifo), b"x", fsync=False)
    # no reader: the non-blocking open fails at once (ENXIO) instead of waiting for one
    assert str(err.value) == f"shown: {os.strerror(errno.ENXIO)}"
    with pytest.raises(bounded.WriteFailed) as err:
        bounded._write_in_place("shown", str(tmp_path / "missing"), b"x", fsync=False)
    assert str(err.value) == f"shown: {os.strerror(errno.ENOENT)}"
