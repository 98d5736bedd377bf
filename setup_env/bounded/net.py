"""HTTP through the one door: ``requests`` with one deadline for the whole exchange (connect,
headers, body), a capped body, proxies and CA bundle from the environment as requests takes them
(``HTTPS_PROXY``, ``NO_PROXY``, ``REQUESTS_CA_BUNDLE``), never a proxy for the link-local cloud
metadata service. ``http_request`` is setup-env's one HTTP client.

requests' own ``timeout`` is per socket read: a server that drips one byte every 50 ms never trips
it. So the deadline is kept three ways: every socket is made with what is left of it as its
timeout (a silent server is cut by the socket), the body is streamed and the deadline checked
between chunks, and a timer shuts every socket of the exchange down at the deadline (a server
dripping headers, or a body one byte at a time, is cut by the timer).

Apart from ``setup_env.bounded`` so that what never speaks HTTP (detect, plan) never loads it;
``requests`` itself is imported only when a request is made.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from setup_env._record import Record, record
from setup_env.bounded import Deadline, one_line

if TYPE_CHECKING:
    import socket

    import requests

CHUNK = 65536

# The cloud metadata services live on link-local addresses that no proxy can reach: asked through
# a corporate proxy they either fail or, worse, answer for the proxy's own machine. Whatever the
# caller says, these hosts are asked directly (requests' trust_env off: no proxy, no netrc).
METADATA_HOSTS = frozenset(
    {"169.254.169.254", "fd00:ec2::254", "metadata.google.internal", "metadata"}
)


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


class _Cutter:
    """Every connection the exchange opens, shut down together when the deadline passes.

    It keeps a duplicate of each TCP socket's descriptor as the socket is made: TLS wraps the
    socket into a new object (the first one is detached), and a proxy's tunnel runs over it, but
    the connection under them is the same, and ``shutdown`` on any descriptor of it ends it for
    all: a read blocked in another thread, in TLS or not, wakes at once. The duplicates are
    closed when the exchange ends (before any shutdown could reach a reused descriptor)."""

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline
        self._lock = threading.Lock()
        self._dups: list[socket.socket] = []
        self.fired = False
        self.connected = False
        self._timer = threading.Timer(max(deadline.left(), 0.0), self.fire)
        self._timer.daemon = True

    def start(self) -> None:
        self._timer.start()

    def add(self, sock: socket.socket) -> None:
        sock.settimeout(max(self._deadline.left(), 0.001))
        dup = sock.dup()
        with self._lock:
            self.connected = True
            self._dups.append(dup)
            if self.fired:
                _shut(dup)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            for dup in self._dups:
                _shut(dup)

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            for dup in self._dups:
                dup.close()
            self._dups.clear()


def _shut(sock: socket.socket) -> None:
    import socket

    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def load() -> None:
    """Import requests now. Its import takes tens of milliseconds (hundreds on a busy machine);
    a caller with a short budget (cloud metadata: under a second) calls this before its budget
    starts, so the budget is spent on the network, not on the import."""
    import requests.adapters  # noqa: F401
    import urllib3.connectionpool  # noqa: F401


def _session(cutter: _Cutter, trust_env: bool) -> requests.Session:
    """A requests session whose connections hand their sockets to ``cutter`` as they are made.

    One session per exchange: nothing is pooled, so the cutter owns every socket involved (a
    proxy's too: the CONNECT tunnel runs over the first socket)."""
    import requests
    import requests.adapters
    from urllib3.connection import HTTPConnection, HTTPSConnection
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Conn(HTTPConnection):
        def _new_conn(self) -> Any:
            sock = super()._new_conn()
            cutter.add(sock)
            return sock

    class TlsConn(HTTPSConnection):
        def _new_conn(self) -> Any:
            sock = super()._new_conn()
            cutter.add(sock)
            return sock

    class Pool(HTTPConnectionPool):
        ConnectionCls = Conn

    class TlsPool(HTTPSConnectionPool):
        ConnectionCls = TlsConn

    pools = {"http": Pool, "https": TlsPool}

    class Adapter(requests.adapters.HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

        def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
            manager = super().proxy_manager_for(proxy, **kwargs)
            manager.pool_classes_by_scheme = pools
            return manager

    session = requests.Session()
    session.trust_env = trust_env
    adapter = Adapter(max_retries=0)  # no retries: the deadline is for the whole operation
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def http_request(
    url: str,
    deadline: Deadline,
    *,
    method: str = "GET",
    headers: Mapping[str, str] | None = None,
    max_bytes: int,
    use_proxy: bool = True,
) -> HttpAnswer:
    """One HTTP exchange (no redirects followed) within ``deadline``: HttpError otherwise.

    ``use_proxy=False`` (and any cloud metadata host): no proxy and nothing else from the
    environment. TimeoutError when the deadline has passed before anything is asked."""
    import urllib.parse

    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise HttpError("broken", f"not an http(s) URL: {one_line(url, 80)}")
    try:
        parts.port  # noqa: B018 - a bad port raises here, with a clear message
    except ValueError:
        raise HttpError("broken", f"bad port in {one_line(url, 80)}") from None
    trust_env = use_proxy and parts.hostname.lower() not in METADATA_HOSTS
    left = deadline.require()

    import requests

    # identity: the cap counts the bytes that are held, and a declared length means them
    send_headers = {"Accept-Encoding": "identity", **(headers or {})}
    # Through a proxy the proxy looks the name up; without one, this process does.
    if not (trust_env and requests.utils.get_environ_proxies(url)):
        _resolve_within(parts.hostname, deadline)
    cutter = _Cutter(deadline)
    session = _session(cutter, trust_env)
    resp: Optional[requests.Response] = None
    size = 0
    try:
        cutter.start()
        try:
            resp = session.request(
                method,
                url,
                headers=send_headers,
                timeout=(left, left),
                allow_redirects=False,
                stream=True,
            )
            declared = resp.headers.get("Content-Length", "").strip()
            if declared.isdigit() and int(declared) > max_bytes:
                raise HttpError("too-large", f"answer of {int(declared)} bytes exceeds {max_bytes}")
            chunks: list[bytes] = []
            for chunk in resp.iter_content(CHUNK):
                size += len(chunk)
                if size > max_bytes:
                    raise HttpError("too-large", f"answer exceeds {max_bytes} bytes")
                chunks.append(chunk)
                if deadline.left() <= 0:
                    raise HttpError("timeout", f"answer not complete within {deadline.seconds:g} s")
            if cutter.fired:  # cut at the deadline: what came may look whole but is not
                raise HttpError("timeout", f"answer not complete within {deadline.seconds:g} s")
            # A body shorter than its Content-Length is urllib3's IncompleteRead (requests'
            # ChunkedEncodingError, below); an answer with no body (HEAD, 304) declares a length
            # that never comes, and is whole.
        except requests.RequestException as exc:
            raise _error(exc, cutter, deadline, resp, size) from None
        return HttpAnswer(
            resp.status_code,
            resp.reason or "",
            {k.lower(): v for k, v in resp.headers.items()},
            b"".join(chunks),
        )
    finally:
        cutter.stop()
        if resp is not None:
            resp.close()
        session.close()


def _error(exc: Exception, cutter: _Cutter, deadline: Deadline, resp: Any, size: int) -> HttpError:
    """requests' exception -> HttpError, by what happened (the deadline first: a socket the
    timer shut down breaks with whatever error the read in flight happened to get)."""
    import requests

    timed_out = isinstance(exc, requests.Timeout) or cutter.fired or deadline.left() <= 0
    if timed_out:
        if not cutter.connected or isinstance(exc, requests.ConnectTimeout):
            return HttpError("timeout", f"no connection within {deadline.seconds:g} s")
        return HttpError("timeout", f"answer not complete within {deadline.seconds:g} s")
    cause = _root(exc)
    if resp is not None:  # the headers came: the body broke off
        got = _received(cause, size)
        return HttpError("broken", f"answer broke off after {got} bytes (connection closed)")
    if isinstance(exc, requests.exceptions.ProxyError):
        return HttpError("unreachable", f"proxy: {_reason(cause)}")
    if isinstance(exc, requests.exceptions.SSLError) or not cutter.connected:
        return HttpError("unreachable", _reason(cause))
    if type(cause).__module__ == "http.client":  # BadStatusLine, LineTooLong, ...
        return HttpError("broken", f"not an HTTP answer ({type(cause).__name__})")
    return HttpError("broken", f"answer broke off ({_reason(cause)})")


def _root(exc: BaseException) -> BaseException:
    """The first error under requests' and urllib3's wrappers: the OSError or http.client error
    that happened (or a wrapper with nothing under it: urllib3's IncompleteRead). Each wrapper is
    raised while the error it wraps is handled, so Python's own ``__context__`` leads down to it
    (a context chain has no loop: Python cuts one before it can form)."""
    current = exc
    while type(current).__module__.startswith(("requests", "urllib3")):
        if current.__context__ is None:
            break
        current = current.__context__
    return current


def _received(cause: BaseException, size: int) -> int:
    """The body bytes that came before the connection closed: ``size`` handed on, and those of
    the read that failed, which never reached the caller. urllib3's IncompleteRead (a declared
    length cut short) counts every body byte read (``partial``, an int); http.client's (a chunk
    cut short) holds the bytes of that chunk (``partial``, bytes)."""
    partial = getattr(cause, "partial", None)
    if isinstance(partial, int):
        return max(size, partial)
    if isinstance(partial, bytes):
        return size + len(partial)
    return size


def _reason(exc: BaseException) -> str:
    import socket
    import ssl

    if isinstance(exc, ssl.SSLCertVerificationError):
        return "TLS certificate not trusted"
    if isinstance(exc, ssl.SSLError) and exc.reason:  # WRONG_VERSION_NUMBER: not TLS there
        return f"TLS failed ({exc.reason.lower().replace('_', ' ')})"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset"
    if isinstance(exc, socket.gaierror):
        return "DNS lookup failed"
    if isinstance(exc, OSError) and exc.strerror:
        return one_line(exc.strerror, 160)
    return one_line(str(exc) or type(exc).__name__, 160)


def _look_up(host: str, timeout: float) -> tuple[bool, Optional[str]]:
    """``getaddrinfo(host)`` within ``timeout`` seconds: (answered, why it failed or None).
    getaddrinfo takes no deadline, so it runs in a daemon thread, left behind when the resolver
    hangs (answered False)."""
    import socket

    outcome: list[Optional[str]] = []

    def look_up() -> None:
        try:
            socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
            outcome.append(None)
        except (OSError, UnicodeError) as exc:
            outcome.append(one_line(str(exc.args[-1] if exc.args else exc)))

    thread = threading.Thread(target=look_up, name="resolve", daemon=True)
    thread.start()
    thread.join(max(timeout, 0.0))
    if not outcome:
        return False, None
    return True, outcome[0]


def resolve_host(host: str, timeout: float) -> Optional[str]:
    """Look ``host`` up as a connection to it would (``getaddrinfo``), within ``timeout``
    seconds: None when it resolves, else why not (the resolver's message, or "no answer within
    N s")."""
    answered, why = _look_up(host, timeout)
    if not answered:
        return f"no answer within {timeout:g} s"
    return why


def _is_address(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host)  # urlsplit's hostname: no brackets
    except ValueError:
        return False
    return True


def _resolve_within(host: str, deadline: Deadline) -> None:
    """The name looked up before requests connects, within what is left of ``deadline``: a
    resolver that hangs (getaddrinfo has no timeout, and requests' socket timeouts start only
    after it) ends the exchange at the deadline instead of minutes later. Addresses need no
    look-up. requests looks the name up again when it connects: a resolver that has just
    answered answers again (a hang between the two is the one case left to the OS's own
    resolver timeout)."""
    if _is_address(host):
        return
    answered, why = _look_up(host, deadline.left())
    if not answered:
        name = one_line(host, 80)
        raise HttpError("timeout", f"DNS lookup of {name}: no answer within {deadline.seconds:g} s")
    if why is not None:
        raise HttpError("unreachable", f"DNS lookup failed ({why})")
