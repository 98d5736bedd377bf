"""HTTP through the one door: one deadline for the whole exchange (connect, headers, body; every
socket read gets only what is left of it), a capped body, proxies from the environment, TLS from
the system (or certifi where present). ``http_request`` is setup-env's one HTTP client.

Apart from ``setup_env.bounded`` so that what never speaks HTTP (detect, plan) never loads it.
"""

from __future__ import annotations

import functools
import io
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from setup_env._record import Record, record
from setup_env.bounded import Deadline, one_line

if TYPE_CHECKING:
    import socket


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


@record
class HttpAnswer(Record):
    """One HTTP answer: status line, headers and the body read within its cap."""

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


def resolve_host(host: str, timeout: float) -> Optional[str]:
    """Look ``host`` up as a connection to it would (``getaddrinfo``), within ``timeout``
    seconds: None when it resolves, else why not (the resolver's message, or "no answer within
    N s"). getaddrinfo takes no deadline, so it runs in a daemon thread, left behind when the
    resolver hangs."""
    import socket
    import threading

    outcome: list[Optional[str]] = []

    def look_up() -> None:
        try:
            socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
            outcome.append(None)
        except (OSError, UnicodeError) as exc:
            outcome.append(one_line(str(exc.args[-1] if exc.args else exc)))

    thread = threading.Thread(target=look_up, name="resolve", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        return f"no answer within {timeout:g} s"
    return outcome[0]
