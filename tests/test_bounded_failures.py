"""What the system refuses, the one door reports: the path, a kind, the system's own reason,
and nothing left half-done behind it (issue 22). The tests run as root on Linux, where a
permission refusal or an I/O error cannot be provoked honestly, so the system call is made to
fail for one path under tmp_path only; every other call goes through untouched."""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from setup_env import bounded


def _failing(real: Callable[..., Any], when: Callable[..., bool], exc: OSError) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        if when(*args):
            raise exc
        return real(*args, **kwargs)

    return call


def _on(path: Path) -> Callable[..., bool]:
    return lambda target, *_: os.fspath(target) == os.fspath(path)


@pytest.mark.parametrize(
    ("exc", "kind", "detail"),
    [
        (
            PermissionError(errno.EACCES, "Permission denied"),
            "permission-denied",
            "Permission denied",
        ),
        (PermissionError("no reason given"), "permission-denied", "permission denied"),
        (OSError(errno.EIO, "Input/output error"), "os-error", "Input/output error"),
        (OSError("odd failure"), "os-error", "odd failure"),
    ],
)
def test_an_open_the_system_refuses_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError, kind: str, detail: str
) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x")
    monkeypatch.setattr(os, "open", _failing(os.open, _on(f), exc))
    for read in (lambda: bounded.read_file(f, 10), lambda: bounded.open_file(f)):
        with pytest.raises(bounded.ReadFailed) as err:
            read()
        assert (err.value.path, err.value.kind, err.value.detail) == (str(f), kind, detail)


def test_a_fifo_is_refused_by_name_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file(fifo, 10)
    assert (err.value.path, err.value.kind, err.value.detail) == (
        str(fifo),
        "not-a-file",
        "not a regular file (a pipe or a device)",
    )


@pytest.mark.parametrize(
    ("exc", "detail"),
    [(OSError(errno.EIO, "Input/output error"), "Input/output error"), (OSError("odd"), "odd")],
)
def test_a_failing_fstat_is_an_os_error_and_closes_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError, detail: str
) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x")
    opened: list[int] = []
    closed: list[int] = []
    real_open, real_close = os.open, os.close

    def record_open(path: Any, *args: Any, **kwargs: Any) -> int:
        fd = real_open(path, *args, **kwargs)
        if os.fspath(path) == str(f):
            opened.append(fd)
        return fd

    def record_close(fd: int) -> None:
        closed.append(fd)
        real_close(fd)

    monkeypatch.setattr(os, "open", record_open)
    monkeypatch.setattr(os, "close", record_close)
    monkeypatch.setattr(os, "fstat", _failing(os.fstat, lambda fd: fd in opened, exc))
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file(f, 10)
    assert (err.value.path, err.value.kind, err.value.detail) == (str(f), "os-error", detail)
    assert opened and set(opened) <= set(closed)


@pytest.mark.parametrize(
    ("exc", "kind", "detail"),
    [
        (OSError(errno.EIO, "Input/output error"), "os-error", "Input/output error"),
        (OSError("odd"), "os-error", "odd"),
    ],
)
def test_a_read_that_fails_midway_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError, kind: str, detail: str
) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x")
    monkeypatch.setattr(os, "read", _failing(os.read, lambda *_: True, exc))
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file(f, 10)
    assert (err.value.path, err.value.kind, err.value.detail) == (str(f), kind, detail)


def test_a_file_read_in_several_pieces_comes_back_whole(tmp_path: Path) -> None:
    """Reads go a piece of 1 MiB at a time: a bigger file is the pieces joined, byte for byte,
    at exactly its size as the limit."""
    data = bytes(range(256)) * ((1 << 20) // 256) + b"tail"
    f = tmp_path / "f"
    f.write_bytes(data)
    assert bounded.read_file(f, len(data)) == data


def test_a_refusal_without_detail_names_its_kind() -> None:
    err = bounded.ReadFailed("p", "too-large")
    assert (str(err), err.detail) == ("p: too-large", "")


def test_a_temporary_name_already_taken_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "f"
    taken = tmp_path / ".f.00000000.tmp"
    taken.write_bytes(b"someone else's")
    draws = iter([b"\0\0\0\0", b"\1\1\1\1"])
    monkeypatch.setattr(os, "urandom", lambda n: next(draws))
    bounded.write_file(f, "new")
    assert f.read_bytes() == b"new"
    assert taken.read_bytes() == b"someone else's"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".f.00000000.tmp", "f"]


@pytest.mark.parametrize(
    ("exc", "detail"),
    [
        (OSError(errno.EIO, "Input/output error"), "Input/output error"),
        (OSError("odd"), "odd"),
        (PermissionError("no reason given"), "permission denied"),
    ],
)
def test_a_new_file_the_system_refuses_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError, detail: str
) -> None:
    f = tmp_path / "f"
    monkeypatch.setattr(
        os, "open", _failing(os.open, lambda p, *_: str(p).startswith(str(tmp_path)), exc)
    )
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.write_file(f, "x")
    assert (err.value.path, err.value.detail) == (str(f), detail)
    assert not f.exists()


@pytest.mark.parametrize(
    ("exc", "detail"),
    [
        (OSError(errno.EXDEV, "Invalid cross-device link"), "Invalid cross-device link"),
        (OSError("odd"), "odd"),
    ],
)
def test_a_replace_that_fails_leaves_the_old_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exc: OSError, detail: str
) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"old")
    monkeypatch.setattr(os, "replace", _failing(os.replace, lambda *_: True, exc))
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.write_file(f, "new")
    assert (err.value.path, err.value.detail) == (str(f), detail)
    assert [p.name for p in tmp_path.iterdir()] == ["f"]
    assert f.read_bytes() == b"old"


@pytest.mark.parametrize(
    ("call", "exc", "detail"),
    [
        ("open", OSError(errno.EIO, "Input/output error"), "Input/output error"),
        ("open", OSError("odd"), "odd"),
        ("write", OSError(errno.ENOSPC, "No space left on device"), "No space left on device"),
        ("write", OSError("odd"), "odd"),
    ],
)
def test_an_append_the_system_refuses_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, call: str, exc: OSError, detail: str
) -> None:
    f = tmp_path / "log"
    if call == "open":
        monkeypatch.setattr(os, "open", _failing(os.open, _on(f), exc))
    else:
        monkeypatch.setattr(os, "write", _failing(os.write, lambda *_: True, exc))
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.append_file(f, "line\n")
    assert (err.value.path, err.value.detail) == (str(f), detail)


def test_a_deadline_refuses_at_exactly_its_end(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(bounded.time, "monotonic", lambda: now[0])
    deadline = bounded.Deadline(5)
    now[0] = 104.5
    assert deadline.require() == 0.5
    now[0] = 105.0
    with pytest.raises(TimeoutError, match="deadline of 5 s passed"):
        deadline.require()


def test_a_document_too_deep_for_the_parser_itself_is_refused_by_name() -> None:
    """Nesting past the interpreter's own stack ends json's parser with RecursionError: it is
    the same refusal as nesting past the limit, never a crash."""
    deep = "[" * 200_000 + "]" * 200_000
    with pytest.raises(bounded.InputError) as err:
        bounded.parse_json(deep, "the facts", max_depth=64)
    assert str(err.value) == "the facts nests deeper than 64 levels"


def test_the_temporary_file_is_made_beside_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside it, in its folder (not the current one): the rename stays on one file system, so
    a reader sees the old file or the new, never half of one."""
    folder = tmp_path / "folder"
    folder.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    created: list[str] = []
    real_open = os.open

    def record(path: Any, *args: Any, **kwargs: Any) -> int:
        created.append(os.fspath(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", record)
    bounded.write_file(folder / "f", "new")
    assert [os.path.dirname(p) for p in created] == [str(folder)]
    assert list(elsewhere.iterdir()) == []


def test_an_interrupt_while_writing_is_passed_on_and_leaves_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"old")

    def interrupted(fd: int, data: bytes) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        bounded.write_file(f, "new")
    assert [p.name for p in tmp_path.iterdir()] == ["f"]
    assert f.read_bytes() == b"old"


def test_an_open_file_that_cannot_be_wrapped_is_closed_and_the_error_passed_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = tmp_path / "f"
    f.write_bytes(b"x")
    closed: list[int] = []
    real_close = os.close

    def record_close(fd: int) -> None:
        closed.append(fd)
        real_close(fd)

    def no_memory(fd: int, *args: Any) -> Any:
        raise MemoryError

    monkeypatch.setattr(os, "close", record_close)
    monkeypatch.setattr(os, "fdopen", no_memory)
    with pytest.raises(MemoryError):
        bounded.open_file(f)
    assert len(closed) == 1
