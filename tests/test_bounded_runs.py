"""The one door's command runner and deadlines: what a command's output may hold, what it may
read, and when an operation may still start (issue 22)."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from setup_env import bounded


class Pipe:
    """A real pipe whose write end a thread fills piece by piece, as a child writes."""

    def __init__(self, pieces: list[bytes]) -> None:
        r, w = os.pipe()
        self.reader = os.fdopen(r, "rb", buffering=0)
        self._w = w
        self.pieces = pieces
        self.broken = False
        self._thread = threading.Thread(target=self._write, daemon=True)
        self._thread.start()

    def _write(self) -> None:
        try:
            for piece in self.pieces:
                view = memoryview(piece)
                while view:
                    view = view[os.write(self._w, view) :]
        except BrokenPipeError:
            self.broken = True
        finally:
            os.close(self._w)

    def join(self) -> None:
        self._thread.join(30)


def capped(pieces: list[bytes], cap: int) -> tuple[bounded.CappedReader, Pipe, list[int]]:
    pipe = Pipe(pieces)
    calls: list[int] = []
    reader = bounded.CappedReader(pipe.reader, cap, on_full=lambda: calls.append(1))
    reader.start()
    reader.join(30)
    pipe.join()
    return reader, pipe, calls


def test_output_of_exactly_the_cap_in_pieces_is_kept_whole() -> None:
    reader, _pipe, calls = capped([b"a" * 60, b"b" * 40], cap=100)
    assert (bytes(reader.data), reader.over, calls) == (b"a" * 60 + b"b" * 40, False, [])


def test_one_byte_past_the_cap_keeps_the_first_cap_bytes_and_says_so_once() -> None:
    reader, _pipe, calls = capped([b"a" * 60, b"b" * 41, b"c" * 10, b"d" * 10], cap=100)
    assert bytes(reader.data) == b"a" * 60 + b"b" * 40  # nothing after the cap, not a byte
    assert reader.over is True
    assert calls == [1]  # the command is killed once, however much more comes


def test_past_the_cap_the_pipe_is_drained_not_broken() -> None:
    # The writer (a child whose group is being killed) never meets a broken pipe: what it writes
    # after the cap is read and dropped until it ends.
    reader, pipe, calls = capped([b"x" * 65536] * 16, cap=1000)
    assert not pipe.broken
    assert len(reader.data) == 1000 and calls == [1]


def test_a_command_never_reads_setup_envs_own_standard_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # setup-env's stdin may be a pasted report or the user's terminal: a probe's command (cat,
    # a tool that prompts) gets an empty stdin of its own, never that.
    r, w = os.pipe()
    os.write(w, b"the user's pasted report\n")
    os.close(w)
    saved = os.dup(0)
    try:
        os.dup2(r, 0)
        ran = bounded.run([sys.executable, "-c", "import sys; print(repr(sys.stdin.read()))"],
                          timeout=30, max_output=1000)  # fmt: skip
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(r)
    assert (ran.returncode, ran.stdout.strip()) == (0, b"''")


def test_a_deadline_with_time_left_lets_the_work_start() -> None:
    deadline = bounded.Deadline(0.5)
    left = deadline.require()
    assert 0 < left <= 0.5
    spent = bounded.Deadline(-0.001)
    with pytest.raises(TimeoutError, match=r"deadline of -0\.001 s passed"):
        spent.require()


def test_a_bundled_document_that_leads_outside_the_data_folder_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"schema_version": 1}')
    (data / "gpus.json").symlink_to(outside)
    (data / "wheels.json").write_text('{"schema_version": 1}')
    monkeypatch.setattr(bounded, "DATA_DIR", str(data))
    assert bounded.read_bundled("wheels.json") == {"schema_version": 1}
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_bundled("gpus.json")
    assert err.value.kind == "outside"


# --- the defaults the callers rely on ----------------------------------------------------------


def test_one_line_cuts_at_200_characters_by_default() -> None:
    assert bounded.one_line("x" * 200) == "x" * 200
    assert bounded.one_line("x" * 201) == "x" * 200 + "…"


def test_undecodable_bytes_are_called_input_unless_named() -> None:
    with pytest.raises(bounded.InputError) as err:
        bounded.decode_text(b"\xc3")
    assert str(err.value) == "input is not UTF-8 or UTF-16 text (unexpected end of data)"
    with pytest.raises(bounded.InputError) as err:
        bounded.decode_text(b"\xc3", "nodes/a.json")
    assert str(err.value).startswith("nodes/a.json is not UTF-8 or UTF-16 text")


def test_a_read_failure_without_detail_says_its_kind() -> None:
    assert str(bounded.ReadFailed("/etc/x.json", "missing")) == "/etc/x.json: missing"
    assert bounded.ReadFailed("/etc/x.json", "missing").detail == ""


# --- JSON given as text ---------------------------------------------------------------------------


def test_text_with_a_byte_order_mark_parses_and_only_the_mark_is_dropped() -> None:
    assert bounded.parse_json('\ufeff{"a": 1}') == {"a": 1}
    assert bounded.parse_json_documents('\ufeff{"a": 1}', "nodes") == ([{"a": 1}], None)
    with pytest.raises(bounded.InputError) as err:  # a stray letter is no mark
        bounded.parse_json("X1")
    assert str(err.value) == "the document is not JSON (Expecting value: line 1 column 1 (char 0))"
    assert bounded.parse_json_documents('X{"a": 1}', "nodes") == (
        [],
        "nodes is not JSON (Expecting value: line 1 column 1 (char 0))",
    )


def test_nesting_past_what_the_parser_can_hold_is_said_as_depth() -> None:
    with pytest.raises(bounded.InputError) as err:
        bounded.parse_json("[" * 100_000 + "]" * 100_000, "check.json")
    assert str(err.value) == "check.json nests deeper than 64 levels"


ESCAPES = r"""
import subprocess, sys
helper = subprocess.Popen(
    [sys.executable, "-c", "import time; time.sleep(20)"],
    start_new_session=True, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
)  # a helper that leaves the group and keeps our stdout open
print(helper.pid, flush=True)
"""


@pytest.mark.slow
def test_a_helper_that_leaves_the_group_cannot_hold_the_run_past_its_bound() -> None:
    # run() kills the command's group; a helper in a session of its own survives that and keeps
    # the pipe open. run() still returns, with what was read, while the helper lives on.
    ran = bounded.run([sys.executable, "-c", ESCAPES], timeout=30, max_output=1000)
    helper = int(ran.stdout.split()[0])
    try:
        os.kill(helper, 0)  # still alive: run() did not wait for it
    finally:
        os.kill(helper, 9)
    assert ran.returncode == 0 and not ran.timed_out
