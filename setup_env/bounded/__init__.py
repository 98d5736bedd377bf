"""Bounded input: the one way setup-env reads anything it did not write itself.

Every file, pipe, HTTP body and answer typed at the terminal comes in through here, with a size
cap and a deadline; every file setup-env writes goes out through here too
(tests/test_one_door.py holds the rest of the package to that):

* :func:`read_file` opens without blocking (a FIFO cannot hang it), reads regular files only,
  at most ``max_bytes``, and, given ``root``, only paths that stay inside ``root`` once links are
  resolved (a replay folder cannot send a read to ``/dev/zero`` or ``/etc/shadow``).
  :func:`open_file` / :func:`open_zip` open such a file for a reader that seeks (an ELF
  library, a wheel); :func:`read_bundled` reads a document shipped in ``setup_env/data/``.
* :func:`read_stdin` and :func:`read_terminal_line`: standard input, with a cap.
* :func:`write_file` replaces a file atomically, :func:`append_file` appends to one; both
  refuse a FIFO, a device or a folder with a clear error instead of blocking or writing there.
  :func:`check_writable` asks the same before anything is written (a command refuses an output
  path it could not use before it starts working).
* :func:`run` starts a command in its own process group (session), reads its output as it
  comes with a cap, and kills the whole group on timeout, on too much output and when it ends
  (a wrapper's ``sleep`` or a forked helper does not outlive it, nor keep our pipes open).
* :class:`Deadline` plus :func:`net.http_request` (``setup_env.bounded.net``, on ``requests``):
  one wall-clock deadline for a whole HTTP exchange, connect, headers and body; the body is
  streamed against it and a timer shuts the exchange's sockets down when it passes, so a server
  dripping one byte at a time meets the same deadline as one that never answers.
* :func:`parse_json` decodes (UTF-8, or UTF-16/UTF-8 with a BOM) and parses a document from
  outside with a cap on size, nesting depth, node count and integer length; every failure is
  an :class:`InputError` with a one-line message.
* :func:`one_line` shows untrusted text on one line, control characters escaped.

``subprocess``, ``threading`` and ``signal`` are imported where a command is run: reading a
bundled document (every plan) does not pay for them.

Nothing here decides or prints.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Optional

from setup_env._record import Record, record

if TYPE_CHECKING:
    import subprocess  # imported where a command is run
    import zipfile
    from pathlib import Path

ReadKind = Literal["missing", "permission-denied", "not-a-file", "too-large", "outside", "os-error"]

MAX_JSON_DEPTH = 64  # the deepest real document (a detect --json) nests 6 levels
MAX_JSON_NODES = 2_000_000
MAX_INT_DIGITS = 40


class InputError(ValueError):
    """Input from outside is unusable; the message is one line, fit to show a user."""


class ReadFailed(OSError):
    """A bounded read failed; ``kind`` says how."""

    def __init__(self, path: str, kind: ReadKind, detail: str = "") -> None:
        super().__init__(f"{path}: {detail or kind}")
        self.path = path
        self.kind = kind
        self.detail = detail


# --- text ------------------------------------------------------------------------------------

_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def one_line(text: str, limit: int = 200) -> str:
    """``text`` as one printable line: control and other non-printable characters escaped
    (``\\n``, ``\\x1b``, ``\\u2028``, ``\\U000e0001``), cut to ``limit`` characters with an
    ellipsis."""
    out: list[str] = []
    size = 0
    for ch in text:
        if ch.isprintable():
            piece = ch
        elif ch in _ESCAPES:
            piece = _ESCAPES[ch]
        else:
            code = ord(ch)
            if code < 0x100:
                piece = f"\\x{code:02x}"
            elif code < 0x10000:
                piece = f"\\u{code:04x}"
            else:  # \U and eight digits: "\u11af9" would read back as U+11AF and a "9"
                piece = f"\\U{code:08x}"
        size += len(piece)
        if size > limit:
            out.append("…")
            break
        out.append(piece)
    return "".join(out)


def decode_text(data: bytes, what: str = "input") -> str:
    """Bytes of a document -> text: a UTF-8 or UTF-16 byte-order mark is honoured (Windows
    PowerShell's ``>`` writes UTF-16 LE with a BOM), else strict UTF-8."""
    try:
        if data.startswith(b"\xef\xbb\xbf"):
            return data[3:].decode("utf-8")
        if data.startswith((b"\xff\xfe", b"\xfe\xff")):
            return data.decode("utf-16")
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{what} is not UTF-8 or UTF-16 text ({exc.reason})") from None


# --- JSON ------------------------------------------------------------------------------------


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise InputError(f"an integer of {len(text)} digits")
    return int(text)


def _parse_constant(name: str) -> Any:
    raise InputError(f"{name} is not JSON")


def check_shape(doc: Any, what: str, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Raise InputError when ``doc`` nests deeper than ``max_depth`` or has too many nodes."""
    # Only objects and lists go on the stack; the values in each are counted in one step (a
    # fleet report checks 10,000 documents: a push and pop per number and string cost seconds).
    if not isinstance(doc, (dict, list)):
        return
    stack: list[tuple[Any, int]] = [(doc, 1)]
    nodes = 1
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise InputError(f"{what} nests deeper than {max_depth} levels")
        children = node.values() if isinstance(node, dict) else node
        nodes += len(children)
        if nodes > MAX_JSON_NODES:
            raise InputError(f"{what} has more than {MAX_JSON_NODES} values")
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))


def parse_json(
    data: bytes | str,
    what: str = "the document",
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_JSON_DEPTH,
    allow_nan: bool = False,
) -> Any:
    """A JSON document from outside, parsed within bounds; InputError on anything wrong.

    ``allow_nan``: ``NaN`` and ``Infinity`` are numbers, as Python's ``json.dumps`` writes them
    (a verify result's evidence can hold one); otherwise they are refused, as JSON does."""
    if max_bytes is not None and len(data) > max_bytes:
        raise InputError(f"{what} is larger than {max_bytes} bytes")
    try:
        text = decode_text(data, what) if isinstance(data, bytes) else data.lstrip("\ufeff")
    except InputError:
        raise InputError(f"{what} is not JSON (not UTF-8 or UTF-16 text)") from None
    try:
        if allow_nan:
            doc = json.loads(text, parse_int=_parse_int)
        else:
            doc = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant)
    except InputError as exc:
        raise InputError(f"{what} is not JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"{what} nests deeper than {max_depth} levels") from None
    except ValueError as exc:  # JSONDecodeError, and int/str conversion limits
        raise InputError(f"{what} is not JSON ({one_line(str(exc), 120)})") from None
    check_shape(doc, what, max_depth)
    return doc


def parse_json_documents(
    data: bytes | str,
    what: str = "the file",
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_JSON_DEPTH,
    allow_nan: bool = False,
) -> tuple[list[Any], str | None]:
    """The JSON documents written one after another in ``data`` (a pod's log: its check
    document, then its all-reduce document; whitespace between them), each parsed within the
    bounds of :func:`parse_json`. Returns the documents read and, when the rest could not be
    read, why (one line): what came before a truncated or broken document is kept. Empty
    ``data`` is no documents and no error; ``data`` that is not text is an error."""
    if max_bytes is not None and len(data) > max_bytes:
        raise InputError(f"{what} is larger than {max_bytes} bytes")
    try:
        text = decode_text(data, what) if isinstance(data, bytes) else data.lstrip("\ufeff")
    except InputError:
        raise InputError(f"{what} is not JSON (not UTF-8 or UTF-16 text)") from None
    if allow_nan:
        decoder = json.JSONDecoder(parse_int=_parse_int)
    else:
        decoder = json.JSONDecoder(parse_int=_parse_int, parse_constant=_parse_constant)
    docs: list[Any] = []
    at, end = 0, len(text)
    while True:
        while at < end and text[at] in " \t\r\n":
            at += 1
        if at >= end:
            return docs, None
        where = f"{what} (document {len(docs) + 1})" if docs else what
        try:
            doc, at = decoder.raw_decode(text, at)
        except InputError as exc:  # an integer too long, NaN where it is refused
            return docs, f"{where} is not JSON ({exc})"
        except RecursionError:
            return docs, f"{where} nests deeper than {max_depth} levels"
        except ValueError as exc:  # JSONDecodeError, and int/str conversion limits
            return docs, f"{where} is not JSON ({one_line(str(exc), 120)})"
        try:
            check_shape(doc, where, max_depth)
        except InputError as exc:
            return docs, str(exc)
        docs.append(doc)


# --- files -----------------------------------------------------------------------------------


def confined(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> Path:
    """``path`` with links resolved, when it stays inside ``root``; ReadFailed("outside")."""
    from pathlib import Path

    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and real_root not in real.parents:
        raise ReadFailed(str(path), "outside", f"outside {root}")
    return real


def _open_regular(
    path: str | os.PathLike[str], root: str | os.PathLike[str] | None
) -> tuple[int, os.stat_result]:
    """A descriptor of the regular file ``path`` and its fstat; ReadFailed otherwise.

    Opened with O_NONBLOCK: a FIFO or a device opens at once and is then refused by fstat,
    instead of blocking forever (a FIFO) or reading forever (``/dev/zero``)."""
    name = str(path)
    target: str | os.PathLike[str] = confined(path, root) if root is not None else path
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    flags |= getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(target, flags)
    except FileNotFoundError:
        raise ReadFailed(name, "missing", "no such file") from None
    except NotADirectoryError:
        raise ReadFailed(name, "missing", "a part of the path is not a folder") from None
    except PermissionError as exc:
        raise ReadFailed(name, "permission-denied", exc.strerror or "permission denied") from None
    except IsADirectoryError:
        raise ReadFailed(name, "not-a-file", "a folder") from None
    except OSError as exc:
        raise ReadFailed(name, "os-error", exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise ReadFailed(name, "not-a-file", "a folder")
        if not stat.S_ISREG(st.st_mode):
            raise ReadFailed(name, "not-a-file", "not a regular file (a pipe or a device)")
    except BaseException as exc:
        os.close(fd)
        if isinstance(exc, OSError) and not isinstance(exc, ReadFailed):
            raise ReadFailed(name, "os-error", exc.strerror or str(exc)) from None
        raise
    return fd, st


def read_file(
    path: str | os.PathLike[str], max_bytes: int, *, root: str | os.PathLike[str] | None = None
) -> bytes:
    """At most ``max_bytes`` of the regular file ``path`` (confined to ``root`` when given).

    Opened with O_NONBLOCK: a FIFO or a device opens at once and is then refused by fstat,
    instead of blocking forever (a FIFO) or reading forever (``/dev/zero``)."""
    name = str(path)
    fd, st = _open_regular(path, root)
    try:
        if st.st_size > max_bytes:
            raise ReadFailed(name, "too-large", f"over {max_bytes} bytes")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            try:
                chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            except BlockingIOError:  # pragma: no cover - regular files do not block
                break
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:  # /proc and /sys files say st_size 0 or 4096, whatever they hold
            raise ReadFailed(name, "too-large", f"over {max_bytes} bytes")
        return b"".join(chunks)
    except OSError as exc:  # a folder never gets here: _open_regular refuses it
        if isinstance(exc, ReadFailed):
            raise
        raise ReadFailed(name, "os-error", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def open_file(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> io.BufferedReader:
    """The regular file ``path`` opened for a reader that seeks and reads in pieces (an ELF
    library's section table, a wheel's central directory): no size cap, since a regular file
    ends, but never a FIFO or a device (ReadFailed, as :func:`read_file`)."""
    fd, _st = _open_regular(path, root)
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


@contextlib.contextmanager
def open_zip(path: str | os.PathLike[str]) -> Iterator[zipfile.ZipFile]:
    """A zip archive (a wheel) over :func:`open_file`: its members are read from it, in pieces,
    never extracted. ReadFailed when it is no regular file; ``zipfile.BadZipFile`` when it is
    not a zip archive."""
    import zipfile

    with open_file(path) as raw, zipfile.ZipFile(raw) as archive:
        yield archive


# --- documents shipped with setup-env ------------------------------------------------------------

# setup_env/data, as a string: pathlib is not on detect's way
DATA_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "data")
# The folder that holds the setup_env package: a child interpreter that must import this very code
# (the installer's interpreter record, the verify worker) gets it on its PYTHONPATH.
PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MAX_BUNDLED = 64 << 20  # the largest (wheels.json) is ~1 MiB


def bundled_path(name: str) -> Path:
    """Where the document ``name`` shipped in ``setup_env/data/`` lives."""
    if not name or name != os.path.basename(name) or name in (".", ".."):
        raise ValueError(f"not a bundled document name: {name!r}")
    from pathlib import Path

    return Path(DATA_DIR) / name


def read_bundled(name: str) -> Any:
    """The JSON document ``name`` shipped in ``setup_env/data/``, read through :func:`read_file`
    (a regular file inside that folder, capped) and parsed with plain ``json``: it has the trust
    of the code (generated and checked by scripts/ and the tests), and the hostile-input walk of
    :func:`parse_json` would cost ~10 ms of every plan. ReadFailed when it can't be read;
    ValueError (``json.JSONDecodeError``, ``UnicodeDecodeError``) when it is not JSON."""
    data = read_file(bundled_path(name), MAX_BUNDLED, root=DATA_DIR)
    return json.loads(data)


# --- standard input --------------------------------------------------------------------------


def read_stdin(max_bytes: int) -> bytes:
    """Standard input to its end, at most ``max_bytes`` (ReadFailed "too-large" past them, having
    read one byte more, never the rest)."""
    stream = sys.stdin
    if stream is None:
        raise ReadFailed("stdin", "missing", "no standard input")
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        data = buffer.read(max_bytes + 1)
    else:
        data = stream.read(max_bytes + 1).encode("utf-8", "replace")
    if len(data) > max_bytes:
        raise ReadFailed("stdin", "too-large", f"over {max_bytes} bytes")
    return bytes(data)


def stdin_is_terminal() -> bool:
    """Whether standard input is a terminal someone can answer on."""
    stream = sys.stdin
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError):  # closed
        return False


def read_terminal_line(max_chars: int = 1024) -> str | None:
    """One line typed at the terminal (at most ``max_chars``); None when standard input is no
    terminal, or it is closed."""
    if not stdin_is_terminal():
        return None
    try:
        return sys.stdin.readline(max_chars)
    except (OSError, EOFError, ValueError):
        return None


# --- writing ---------------------------------------------------------------------------------


class WriteFailed(OSError):
    """A file could not be written; ``detail`` (also ``strerror``) says why, in one line."""

    def __init__(self, path: str, detail: str) -> None:
        super().__init__(detail)
        self.path = path
        self.detail = detail
        self.strerror = detail

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


def _refuse_special(name: str, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise WriteFailed(name, "it is a folder")
    if not stat.S_ISREG(st.st_mode):
        raise WriteFailed(name, "not a regular file (a pipe or a device)")


def _existing(name: str, path: str) -> os.stat_result | None:
    """The stat of what is at ``path`` when it is a regular file; None when nothing is there;
    WriteFailed for a folder, a FIFO, a device or a socket."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise WriteFailed(name, exc.strerror or str(exc)) from None
    _refuse_special(name, st)
    return st


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


_WRITE_FLAGS = (
    getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
)


def write_file(
    path: str | os.PathLike[str],
    data: str | bytes,
    *,
    mode: int | None = None,
    fsync: bool = False,
) -> None:
    """Replace the file at ``path`` with ``data`` (text is written as UTF-8), atomically: a new
    file beside it, then a rename, so a reader never sees half of it. A link is written
    through (its target is replaced). The new file keeps the mode of the one it replaces, else
    gets ``0666`` less the umask (as ``open(path, "w")``); ``mode`` sets it outright.
    WriteFailed for a folder, a FIFO or a device (never opened: a FIFO would block), and for
    what the system refuses."""
    name = str(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    target = os.path.realpath(path)
    st = _existing(name, target)
    folder = os.path.dirname(target)
    fd = tmp = None
    for _ in range(16):
        # the name's first 200 characters: a legal name (255) must leave a legal temporary one
        tmp = os.path.join(folder, f".{os.path.basename(target)[:200]}.{os.urandom(4).hex()}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _WRITE_FLAGS, 0o666)
            break
        except FileExistsError:
            continue
        except PermissionError as exc:
            if st is None:
                raise WriteFailed(name, exc.strerror or "permission denied") from None
            _write_in_place(name, target, payload, fsync)  # a writable file in a locked folder
            return
        except OSError as exc:
            raise WriteFailed(name, exc.strerror or str(exc)) from None
    if fd is None or tmp is None:  # pragma: no cover - 16 random names taken
        raise WriteFailed(name, "no temporary name free beside it")
    try:
        try:
            keep = stat.S_IMODE(st.st_mode) if st is not None else None
            new_mode = mode if mode is not None else keep
            if new_mode is not None:  # else 0666 less the umask, as open() creates a file
                os.chmod(tmp, new_mode)
            _write_all(fd, payload)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, WriteFailed):
            raise WriteFailed(name, exc.strerror or str(exc)) from None
        raise


def check_writable(
    path: str | os.PathLike[str], *, append: bool = False, create_folders: bool = False
) -> None:
    """Raise WriteFailed, with the reason, when :func:`write_file` (``append``:
    :func:`append_file`) could not write at ``path``; nothing is created or changed. Asked
    before a command works, so an output path it can't use costs nothing (a check of minutes,
    then "cannot write"). Fine: a regular file that may be written (for ``write_file`` also
    one in a folder that may be written: it is replaced), or no file yet in an existing folder
    that may be written (``create_folders``: or in folders the caller will create, under the
    nearest existing one, which must be writable). Refused: a folder, a FIFO, a device, a
    missing folder, no permission. A link is judged by its target, as the writers write
    through it."""
    name = str(path)
    target = os.path.realpath(path)
    st = _existing(name, target)
    folder = os.path.dirname(target) or os.sep
    if st is not None and os.access(target, os.W_OK):
        return
    if st is None and create_folders:
        while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
            folder = os.path.dirname(folder)
    try:
        folder_st = os.stat(folder)
    except FileNotFoundError:
        raise WriteFailed(name, f"no folder {folder}") from None
    except OSError as exc:
        raise WriteFailed(name, exc.strerror or str(exc)) from None
    if not stat.S_ISDIR(folder_st.st_mode):
        raise WriteFailed(name, f"{folder} is not a folder")
    if st is not None and append:
        raise WriteFailed(name, "permission denied")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise WriteFailed(name, f"permission denied in {folder}")


def _write_in_place(name: str, target: str, payload: bytes, fsync: bool) -> None:
    try:
        fd = os.open(target, os.O_WRONLY | _WRITE_FLAGS)
    except OSError as exc:
        raise WriteFailed(name, exc.strerror or str(exc)) from None
    try:
        _refuse_special(name, os.fstat(fd))  # replaced by a FIFO since: not written
        os.ftruncate(fd, 0)
        _write_all(fd, payload)
        if fsync:
            os.fsync(fd)
    except OSError as exc:
        if isinstance(exc, WriteFailed):
            raise
        raise WriteFailed(name, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def append_file(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Append ``data`` (text as UTF-8) to the file at ``path``, created when missing (mode
    ``0666`` less the umask). WriteFailed for a folder, a FIFO or a device: nothing is written
    there, and nothing blocks (O_NONBLOCK: a FIFO that appears in between opens at once or
    fails, and fstat refuses it)."""
    name = str(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    _existing(name, os.fspath(path))
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _WRITE_FLAGS, 0o666)
    except OSError as exc:
        raise WriteFailed(name, exc.strerror or str(exc)) from None
    try:
        _refuse_special(name, os.fstat(fd))
        _write_all(fd, payload)
    except OSError as exc:
        if isinstance(exc, WriteFailed):
            raise
        raise WriteFailed(name, exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


# --- commands --------------------------------------------------------------------------------


@record
class Ran(Record):
    """What a bounded command did. ``returncode`` None: it was killed (timeout, output)."""

    returncode: Optional[int]
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    too_much_output: bool = False


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group of ``proc`` (its own session): grandchildren included."""
    if os.name == "posix":
        import signal

        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.kill()


def popen_group(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` in a new session (POSIX) or process group (Windows), argv only."""
    import subprocess

    if os.name == "posix":
        kwargs["start_new_session"] = True
    else:  # pragma: no cover - Windows
        # Windows only: no test on Linux sees a change here (scripts/mutate skips it)
        group = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)  # pragma: no mutate
        kwargs["creationflags"] = kwargs.get("creationflags", 0) | group  # pragma: no mutate
    return subprocess.Popen(list(argv), **kwargs)


def read_chunks(stream: io.BufferedReader | Any) -> Iterator[bytes]:
    """A child's pipe as its output comes: pieces of up to 64 KiB, until end of file or until
    the pipe breaks. The caller keeps what it needs of them (a tail, a capped buffer)."""
    fd = stream.fileno()
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        yield chunk


class CappedReader:
    """Reads a pipe as bytes arrive, in a thread of its own, keeps at most ``cap`` bytes;
    ``on_full`` when over it."""

    def __init__(self, stream: io.BufferedReader | Any, cap: int, on_full: Any = None) -> None:
        import threading

        self.stream = stream
        self.cap = cap
        self.data = bytearray()
        self.over = False
        self.on_full = on_full
        self._thread = threading.Thread(target=self.run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self, timeout: float | None = None) -> None:
        self._thread.join(timeout)

    def run(self) -> None:
        try:
            for chunk in read_chunks(self.stream):
                room = self.cap - len(self.data)
                if len(chunk) > room:
                    self.data += chunk[: max(room, 0)]
                    if not self.over:
                        self.over = True
                        if self.on_full is not None:
                            self.on_full()
                    continue  # keep draining (the group is being killed) until EOF
                self.data += chunk
        finally:
            with contextlib.suppress(OSError):
                self.stream.close()


def run(
    argv: Sequence[str],
    timeout: float,
    max_output: int,
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> Ran:
    """Run ``argv`` (no shell) with a wall-clock ``timeout`` and ``max_output`` bytes per
    stream. Raises what ``Popen`` raises when it cannot start (FileNotFoundError, ...)."""
    import subprocess
    import threading

    proc = popen_group(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    full = threading.Event()

    def on_full() -> None:
        full.set()
        kill_group(proc)

    out = CappedReader(proc.stdout, max_output, on_full)
    err = CappedReader(proc.stderr, max_output, on_full)
    out.start()
    err.start()
    # A thread blocks in waitpid while this one waits on it: ``proc.wait(timeout=...)`` polls
    # with sleeps that grow to 50 ms, which adds up to them to every command's time.
    waiter = threading.Thread(target=proc.wait, daemon=True)
    waiter.start()
    try:
        waiter.join(timeout)
        timed_out = waiter.is_alive()
    finally:
        # Always: the group may hold helpers that outlive the child and keep the pipes open.
        kill_group(proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        out.join(timeout=5)
        err.join(timeout=5)
    killed = timed_out or full.is_set()
    return Ran(
        None if killed else proc.returncode,
        bytes(out.data),
        bytes(err.data),
        timed_out=timed_out,
        too_much_output=full.is_set() and not timed_out,
    )


# --- HTTP ------------------------------------------------------------------------------------


class Deadline:
    """One wall-clock deadline for a whole operation."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self) -> float:
        return self.at - time.monotonic()

    def require(self) -> float:
        """What is left, or TimeoutError when nothing is."""
        left = self.left()
        if left <= 0:
            raise TimeoutError(f"deadline of {self.seconds:g} s passed")
        return left
