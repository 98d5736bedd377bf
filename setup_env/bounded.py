"""Bounded input: the one way setup-env reads anything it did not write itself.

Every file, pipe and HTTP body comes in through here, with a size cap and a deadline:

* :func:`read_file` opens without blocking (a FIFO cannot hang it), reads regular files only,
  at most ``max_bytes``, and, given ``root``, only paths that stay inside ``root`` once links are
  resolved (a replay folder cannot send a read to ``/dev/zero`` or ``/etc/shadow``).
* :func:`run` starts a command in its own process group (session), reads its output as it
  comes with a cap, and kills the whole group on timeout, on too much output and when it ends
  (a wrapper's ``sleep`` or a forked helper does not outlive it, nor keep our pipes open).
* :class:`Deadline` plus :func:`http_request`: one wall-clock deadline for a whole HTTP
  exchange, connect, headers and body; every socket read is given only what is left of it, so a
  server dripping one byte at a time meets the same deadline as one that never answers.
* :func:`parse_json` decodes (UTF-8, or UTF-16/UTF-8 with a BOM) and parses a document from
  outside with a cap on size, nesting depth, node count and integer length; every failure is
  an :class:`InputError` with a one-line message.
* :func:`one_line` shows untrusted text on one line, control characters escaped.

Nothing here decides or prints.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import signal
import stat
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

if TYPE_CHECKING:
    import socket  # imported where HTTP is spoken: detect and plan never need it

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
    (``\\n``, ``\\x1b``, ``\\u2028``), cut to ``limit`` characters with an ellipsis."""
    out: list[str] = []
    size = 0
    for ch in text:
        if ch.isprintable():
            piece = ch
        elif ch in _ESCAPES:
            piece = _ESCAPES[ch]
        else:
            code = ord(ch)
            piece = f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
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
    stack: list[tuple[Any, int]] = [(doc, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_JSON_NODES:
            raise InputError(f"{what} has more than {MAX_JSON_NODES} values")
        if isinstance(node, (dict, list)):
            if depth > max_depth:
                raise InputError(f"{what} nests deeper than {max_depth} levels")
            children = node.values() if isinstance(node, dict) else node
            stack.extend((child, depth + 1) for child in children)


def parse_json(
    data: bytes | str,
    what: str = "the document",
    *,
    max_bytes: int | None = None,
    max_depth: int = MAX_JSON_DEPTH,
) -> Any:
    """A JSON document from outside, parsed within bounds; InputError on anything wrong."""
    if max_bytes is not None and len(data) > max_bytes:
        raise InputError(f"{what} is larger than {max_bytes} bytes")
    try:
        text = decode_text(data, what) if isinstance(data, bytes) else data.lstrip("\ufeff")
    except InputError:
        raise InputError(f"{what} is not JSON (not UTF-8 or UTF-16 text)") from None
    try:
        doc = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant)
    except InputError as exc:
        raise InputError(f"{what} is not JSON ({exc})") from None
    except RecursionError:
        raise InputError(f"{what} nests deeper than {max_depth} levels") from None
    except ValueError as exc:  # JSONDecodeError, and int/str conversion limits
        raise InputError(f"{what} is not JSON ({one_line(str(exc), 120)})") from None
    check_shape(doc, what, max_depth)
    return doc


# --- files -----------------------------------------------------------------------------------


def confined(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> Path:
    """``path`` with links resolved, when it stays inside ``root``; ReadFailed("outside")."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and real_root not in real.parents:
        raise ReadFailed(str(path), "outside", f"outside {root}")
    return real


def read_file(
    path: str | os.PathLike[str], max_bytes: int, *, root: str | os.PathLike[str] | None = None
) -> bytes:
    """At most ``max_bytes`` of the regular file ``path`` (confined to ``root`` when given).

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
    except IsADirectoryError:
        raise ReadFailed(name, "not-a-file", "a folder") from None
    except OSError as exc:
        if isinstance(exc, ReadFailed):
            raise
        raise ReadFailed(name, "os-error", exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


# --- commands --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ran:
    """What a bounded command did. ``returncode`` None: it was killed (timeout, output)."""

    returncode: Optional[int]
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    too_much_output: bool = False


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group of ``proc`` (its own session): grandchildren included."""
    if os.name == "posix":
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.poll() is None:
        with contextlib.suppress(OSError):
            proc.kill()


def popen_group(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen`` in a new session (POSIX) or process group (Windows), argv only."""
    if os.name == "posix":
        kwargs["start_new_session"] = True
    else:  # pragma: no cover - Windows
        kwargs["creationflags"] = kwargs.get("creationflags", 0) | getattr(
            subprocess, "CREATE_NEW_PROCESS_GROUP", 0
        )
    return subprocess.Popen(list(argv), **kwargs)


class CappedReader(threading.Thread):
    """Reads a pipe as bytes arrive, keeps at most ``cap`` bytes; ``on_full`` when over it."""

    def __init__(self, stream: io.BufferedReader | Any, cap: int, on_full: Any = None) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.cap = cap
        self.data = bytearray()
        self.over = False
        self.on_full = on_full

    def run(self) -> None:
        fd = self.stream.fileno()
        try:
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                room = self.cap - len(self.data)
                if len(chunk) > room:
                    self.data += chunk[: max(room, 0)]
                    if not self.over:
                        self.over = True
                        if self.on_full is not None:
                            self.on_full()
                    continue  # keep draining (the group is being killed) until EOF
                self.data += chunk
        except OSError:
            pass
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
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
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


class _DeadlineSocket:
    """A connected socket whose every read and write gets only what is left of the deadline."""

    def __init__(self, sock: socket.socket, deadline: Deadline) -> None:
        self._sock = sock
        self._deadline = deadline
        self._io_refs = 0  # as socket.socket: close for real once the last reader is closed
        self._closed = False

    def _arm(self) -> None:
        self._sock.settimeout(self._deadline.require())

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        self._arm()
        return self._sock.recv_into(buffer, nbytes, flags)

    def recv(self, size: int, flags: int = 0) -> bytes:
        self._arm()
        return self._sock.recv(size, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        self._arm()
        self._sock.sendall(data, flags)

    def makefile(self, mode: str = "rb", buffering: int = -1, **_: Any) -> io.BufferedReader:
        if mode not in ("r", "rb"):
            raise ValueError(f"unsupported makefile mode {mode!r}")
        import socket

        raw = socket.SocketIO(self, "rb")  # type: ignore[arg-type]
        self._io_refs += 1
        return io.BufferedReader(raw, buffering if buffering > 0 else io.DEFAULT_BUFFER_SIZE)

    def _decref_socketios(self) -> None:
        self._io_refs -= 1
        if self._closed and self._io_refs <= 0:
            self._sock.close()

    def settimeout(self, _value: float | None) -> None:
        pass  # the deadline decides

    def fileno(self) -> int:
        return self._sock.fileno()

    def close(self) -> None:
        self._closed = True
        if self._io_refs <= 0:
            self._sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    reason: str
    headers: Mapping[str, str]  # lower-case names
    body: bytes


class HttpError(Exception):
    """``kind``: unreachable (connect failed), timeout, too-large, broken (not HTTP, cut)."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail


@functools.lru_cache(maxsize=1)  # the CA bundle is read once, not per request
def _ssl_context() -> Any:
    import ssl

    cafile = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
    if not cafile and not os.environ.get("SSL_CERT_FILE"):
        try:
            import certifi  # what requests and pip use when it is there

            cafile = certifi.where()
        except ImportError:
            cafile = None
    return ssl.create_default_context(cafile=cafile or None)


def _proxy_for(scheme: str, host: str, use_proxy: bool) -> Optional[Any]:
    if not use_proxy:
        return None
    import urllib.parse
    import urllib.request

    proxies = urllib.request.getproxies()
    url = proxies.get(scheme)
    if not url or urllib.request.proxy_bypass(host):
        return None
    parts = urllib.parse.urlsplit(url if "://" in url else f"http://{url}")
    return parts if parts.hostname else None


def http_request(
    url: str,
    deadline: Deadline,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    max_bytes: int,
    use_proxy: bool = True,
) -> HttpAnswer:
    """One HTTP exchange (no redirects followed) within ``deadline``: HttpError otherwise."""
    import base64
    import http.client
    import socket
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpError("broken", f"not an http(s) URL: {one_line(url, 80)}")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise HttpError("broken", f"bad port in {one_line(url, 80)}") from None
    host = parts.hostname
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    send_headers = dict(headers or {})
    proxy = _proxy_for(parts.scheme, host, use_proxy)
    left = deadline.require()
    conn: http.client.HTTPConnection
    resp: http.client.HTTPResponse | None = None
    if proxy is not None:
        if proxy.username:
            user = urllib.parse.unquote(proxy.username)
            cred = f"{user}:{urllib.parse.unquote(proxy.password or '')}"
            auth = "Basic " + base64.b64encode(cred.encode()).decode()
        else:
            auth = ""
        pport = proxy.port or 80
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(
                proxy.hostname, pport, timeout=left, context=_ssl_context()
            )
            conn.set_tunnel(host, port, {"Proxy-Authorization": auth} if auth else None)
        else:
            conn = http.client.HTTPConnection(proxy.hostname, pport, timeout=left)
            path = url
            if auth:
                send_headers["Proxy-Authorization"] = auth
    elif parts.scheme == "https":
        conn = http.client.HTTPSConnection(host, port, timeout=left, context=_ssl_context())
    else:
        conn = http.client.HTTPConnection(host, port, timeout=left)
    try:
        try:
            conn.connect()
        except (TimeoutError, socket.timeout):
            raise HttpError("timeout", f"no connection within {deadline.seconds:g} s") from None
        except OSError as exc:
            raise HttpError("unreachable", _os_reason(exc)) from None
        if conn.sock is None:  # pragma: no cover - connect() always sets it
            raise HttpError("unreachable", "no connection")
        conn.sock = _DeadlineSocket(conn.sock, deadline)
        conn.request(method, path, headers=send_headers)
        resp = conn.getresponse()
        declared = resp.getheader("Content-Length")
        if declared and declared.strip().isdigit() and int(declared) > max_bytes:
            raise HttpError("too-large", f"answer of {int(declared)} bytes exceeds {max_bytes}")
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = resp.read1(65536)
            if not chunk:
                if resp.length:  # http.client does not say when a Content-Length falls short
                    raise http.client.IncompleteRead(b"".join(chunks), resp.length)
                break
            size += len(chunk)
            if size > max_bytes:
                raise HttpError("too-large", f"answer exceeds {max_bytes} bytes")
            chunks.append(chunk)
        return HttpAnswer(
            resp.status,
            resp.reason or "",
            {k.lower(): v for k, v in resp.getheaders()},
            b"".join(chunks),
        )
    except (TimeoutError, socket.timeout):
        raise HttpError("timeout", f"answer not complete within {deadline.seconds:g} s") from None
    except http.client.IncompleteRead as exc:
        raise HttpError(
            "broken", f"answer broke off after {len(exc.partial)} bytes (connection closed)"
        ) from None
    except http.client.HTTPException as exc:
        raise HttpError("broken", f"not an HTTP answer ({type(exc).__name__})") from None
    except OSError as exc:
        raise HttpError("broken", f"answer broke off ({_os_reason(exc)})") from None
    finally:
        if resp is not None:
            resp.close()
        conn.close()


def _os_reason(exc: OSError) -> str:
    import socket
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        return "TLS certificate not trusted"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset"
    if isinstance(exc, socket.gaierror):
        return "DNS lookup failed"
    return one_line(exc.strerror or str(exc) or type(exc).__name__, 160)
