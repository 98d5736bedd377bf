"""Issue 20, item 8: ``requests`` is setup-env's one HTTP client, behind ``bounded.net``.

What requests brings is checked against real loopback servers: proxies from the environment
(``HTTP_PROXY``, ``NO_PROXY``, ``HTTPS_PROXY`` through a real CONNECT tunnel), the CA bundle
(``REQUESTS_CA_BUNDLE``), and no proxy ever for the cloud metadata address. The deadline over a
whole exchange (a dripping or silent server) is tests/test_hostile.py's rows 5 and 6, unchanged.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import os
import select
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from setup_env import bounded
from setup_env.bounded import net

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "net"
CERT = FIX / "loopback-cert.pem"
KEY = FIX / "loopback-key.pem"

# --- requests is the one HTTP client -------------------------------------------------------------

# Modules that speak HTTP (or open sockets for it) by themselves; requests is the one allowed, and
# only in the door, with the pieces of its own transport it needs (urllib3's connection classes,
# socket/ssl for shutting a socket down and naming a TLS failure).
OTHER_CLIENTS = {
    "http.client", "http.server", "urllib.request", "urllib.error", "httpx", "aiohttp", "pycurl",
    "httplib2", "ftplib", "xmlrpc", "asyncio",
}  # fmt: skip
DOOR_ONLY = {"requests", "urllib3", "socket", "ssl"}
NET = "setup_env/bounded/net.py"


def imports_of(path: Path) -> set[str]:
    """Every module a file imports, lazy (in a function) and type-only ones included."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def offending(name: str, banned: set[str]) -> bool:
    return any(name == b or name.startswith(b + ".") for b in banned)


def test_requests_is_the_only_http_client() -> None:
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "setup_env").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        banned = OTHER_CLIENTS if rel == NET else OTHER_CLIENTS | DOOR_ONLY
        bad = sorted(n for n in imports_of(path) if offending(n, banned))
        if bad:
            found[rel] = bad
    assert found == {}
    assert "requests" in imports_of(ROOT / NET)  # the door does speak through requests


def test_the_scan_sees_lazy_and_from_imports(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text(
        "def f():\n    import http.client\n    from urllib import request\n"
        "    from socket import socket\n",
        encoding="utf-8",
    )
    names = imports_of(sample)
    assert offending("http.client", OTHER_CLIENTS)
    assert {"http.client", "urllib.request", "socket"} <= names


@pytest.mark.parametrize(
    "argv",
    [
        ["detect", "--json", "--root", "tests/fixtures/hosts/debian12-nogpu-cuda13toolkit"],
        ["plan", "--json", "--root", "tests/fixtures/hosts/debian12-nogpu-cuda13toolkit"],
    ],
)
def test_detect_and_plan_never_load_requests(argv: list[str]) -> None:
    """``python -X importtime`` of a real process: what it prints names every module loaded."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "setup_env", *argv],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    loaded = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if "|" in line}
    assert "setup_env.facts" in loaded  # the listing is real
    assert not {m for m in loaded if m.split(".")[0] in ("requests", "urllib3", "http")}


# --- loopback servers ----------------------------------------------------------------------------


class Origin(BaseHTTPRequestHandler):
    """Answers every GET with the path it was asked for; counts the requests it saw."""

    seen: list[str]

    def do_GET(self) -> None:
        self.server.seen.append(self.path)  # type: ignore[attr-defined]
        body = f"origin {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class Proxy(BaseHTTPRequestHandler):
    """A forward proxy: a plain GET is answered by the proxy itself (naming the absolute URL it
    was asked for); CONNECT opens a real tunnel to the target and relays bytes both ways."""

    def do_GET(self) -> None:
        self.server.seen.append(f"GET {self.path}")  # type: ignore[attr-defined]
        body = f"proxy {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self) -> None:
        self.server.seen.append(f"CONNECT {self.path}")  # type: ignore[attr-defined]
        host, port = self.path.rsplit(":", 1)
        upstream = socket.create_connection((host, int(port)), timeout=5)
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        client = self.connection
        try:
            while True:
                ready, _, _ = select.select([client, upstream], [], [], 5)
                if not ready:
                    return
                for src in ready:
                    data = src.recv(65536)
                    if not data:
                        return
                    (upstream if src is client else client).sendall(data)
        except OSError:
            return
        finally:
            upstream.close()

    def log_message(self, *args: object) -> None:
        pass


def serve(handler: Any, tls: bool = False) -> tuple[ThreadingHTTPServer, str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.seen = []  # type: ignore[attr-defined]
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(CERT, KEY)
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    scheme = "https" if tls else "http"
    return server, f"{scheme}://127.0.0.1:{server.server_address[1]}"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "REQUESTS_CA_BUNDLE",
                "CURL_CA_BUNDLE"):  # fmt: skip
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.lower(), raising=False)
    return monkeypatch


@pytest.fixture
def origin() -> Iterator[tuple[ThreadingHTTPServer, str]]:
    server, url = serve(Origin)
    yield server, url
    server.shutdown()
    server.server_close()


@pytest.fixture
def tls_origin() -> Iterator[tuple[ThreadingHTTPServer, str]]:
    server, url = serve(Origin, tls=True)
    yield server, url
    server.shutdown()
    server.server_close()


@pytest.fixture
def proxy() -> Iterator[tuple[ThreadingHTTPServer, str]]:
    server, url = serve(Proxy)
    yield server, url
    server.shutdown()
    server.server_close()


def nothing_listens() -> int:
    """A port on 127.0.0.1 that nothing listens on (taken, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def full_queue() -> Iterator[int]:
    """A port on 127.0.0.1 whose listen queue is full and never accepted from: Linux drops
    further connection attempts (no refusal), so a connect to it runs out of time."""
    srv = socket.socket()
    held: list[socket.socket] = []
    try:
        srv.bind(("127.0.0.1", 0))
        srv.listen(0)
        port = srv.getsockname()[1]
        for _ in range(3):
            c = socket.socket()
            c.setblocking(False)
            c.connect_ex(("127.0.0.1", port))
            held.append(c)
        yield int(port)
    finally:
        for c in held:
            c.close()
        srv.close()


def get(url: str, seconds: float = 5.0, **kw: Any) -> net.HttpAnswer:
    return net.http_request(url, bounded.Deadline(seconds), max_bytes=10_000, **kw)


# --- proxies and CA bundle from the environment --------------------------------------------------


def test_http_proxy_from_the_environment_is_used(
    clean_env: pytest.MonkeyPatch, origin: Any, proxy: Any
) -> None:
    (osrv, ourl), (psrv, purl) = origin, proxy
    clean_env.setenv("HTTP_PROXY", purl)
    answer = get(ourl + "/simple/torch/")
    assert answer.body == f"proxy {ourl}/simple/torch/".encode()
    assert psrv.seen == [f"GET {ourl}/simple/torch/"] and osrv.seen == []


def test_no_proxy_sends_the_request_straight(
    clean_env: pytest.MonkeyPatch, origin: Any, proxy: Any
) -> None:
    (osrv, ourl), (psrv, purl) = origin, proxy
    clean_env.setenv("HTTP_PROXY", purl)
    clean_env.setenv("NO_PROXY", "127.0.0.1")
    assert get(ourl + "/x").body == b"origin /x"
    assert psrv.seen == [] and osrv.seen == ["/x"]


def test_use_proxy_false_ignores_the_environment(
    clean_env: pytest.MonkeyPatch, origin: Any, proxy: Any
) -> None:
    (osrv, ourl), (psrv, purl) = origin, proxy
    clean_env.setenv("HTTP_PROXY", purl)
    assert get(ourl + "/y", use_proxy=False).body == b"origin /y"
    assert psrv.seen == [] and osrv.seen == ["/y"]


def test_metadata_address_never_goes_through_a_proxy(
    clean_env: pytest.MonkeyPatch, origin: Any, proxy: Any
) -> None:
    """Even when the caller forgets use_proxy=False: a proxy must never see metadata traffic (it
    would answer for its own machine, or fail). The real link-local address is never asked from a
    test: loopback stands in for it in the door's list of metadata hosts."""
    assert {"169.254.169.254", "metadata.google.internal"} <= net.METADATA_HOSTS
    (osrv, ourl), (psrv, purl) = origin, proxy
    for var in ("HTTP_PROXY", "ALL_PROXY"):
        clean_env.setenv(var, purl)
    clean_env.setattr(net, "METADATA_HOSTS", net.METADATA_HOSTS | {"127.0.0.1"})
    assert get(ourl + "/latest/meta-data/").body == b"origin /latest/meta-data/"
    assert psrv.seen == [] and osrv.seen == ["/latest/meta-data/"]


def test_tls_is_verified_against_certifi_by_default(
    clean_env: pytest.MonkeyPatch, tls_origin: Any
) -> None:
    _srv, url = tls_origin
    with pytest.raises(net.HttpError) as err:
        get(url + "/z")
    assert (err.value.kind, err.value.detail) == ("unreachable", "TLS certificate not trusted")


def test_tls_to_a_plain_http_server_says_so(clean_env: pytest.MonkeyPatch, origin: Any) -> None:
    _srv, url = origin
    with pytest.raises(net.HttpError) as err:
        get(url.replace("http:", "https:") + "/")
    assert err.value.kind == "unreachable"
    assert err.value.detail == "TLS failed (wrong version number)"


def test_requests_ca_bundle_is_honoured(clean_env: pytest.MonkeyPatch, tls_origin: Any) -> None:
    srv, url = tls_origin
    clean_env.setenv("REQUESTS_CA_BUNDLE", str(CERT))
    assert get(url + "/z").body == b"origin /z"
    assert srv.seen == ["/z"]


def test_https_proxy_tunnels_with_connect(
    clean_env: pytest.MonkeyPatch, tls_origin: Any, proxy: Any
) -> None:
    (osrv, ourl), (psrv, purl) = tls_origin, proxy
    clean_env.setenv("HTTPS_PROXY", purl)
    clean_env.setenv("REQUESTS_CA_BUNDLE", str(CERT))
    assert get(ourl + "/t").body == b"origin /t"  # TLS end to end, through the tunnel
    assert psrv.seen == [f"CONNECT {ourl.split('://', 1)[1]}"] and osrv.seen == ["/t"]


# --- the door's own rules ------------------------------------------------------------------------


def test_a_redirect_is_handed_back_not_followed(clean_env: pytest.MonkeyPatch) -> None:
    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(302)
            self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server, url = serve(Redirect)
    try:
        answer = get(url + "/here")
    finally:
        server.shutdown()
        server.server_close()
    assert (answer.status, answer.headers["location"]) == (302, "/elsewhere")


def test_body_over_the_cap_without_a_length_is_refused(clean_env: pytest.MonkeyPatch) -> None:
    class Endless(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.0"  # no Content-Length: the body ends when the connection does

        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(100):
                    self.wfile.write(b"x" * 1000)
            except OSError:
                pass

        def log_message(self, *args: object) -> None:
            pass

    server, url = serve(Endless)
    try:
        with pytest.raises(net.HttpError) as err:
            get(url)
    finally:
        server.shutdown()
        server.server_close()
    assert (err.value.kind, err.value.detail) == ("too-large", "answer exceeds 10000 bytes")


def test_refused_and_bad_urls_are_clear_errors(clean_env: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens once it is closed
    with pytest.raises(net.HttpError) as err:
        get(f"http://127.0.0.1:{port}/")
    assert (err.value.kind, err.value.detail) == ("unreachable", "connection refused")
    with pytest.raises(net.HttpError) as err:
        get("ftp://example.org/")
    assert err.value.kind == "broken" and "not an http(s) URL" in err.value.detail


_spec = importlib.util.spec_from_file_location(
    "setup_env_test_net_hostile", ROOT / "tests" / "fixtures" / "hostile" / "servers.py"
)
assert _spec is not None and _spec.loader is not None
hostile: Any = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = hostile
_spec.loader.exec_module(hostile)


@pytest.mark.parametrize(
    ("mode", "kind", "detail"),
    [
        ("cut-body", "broken", "answer broke off after 3 bytes (connection closed)"),
        ("not-http", "broken", "not an HTTP answer (BadStatusLine)"),
        ("silent", "timeout", "answer not complete within 1 s"),
        ("drip-headers", "timeout", "answer not complete within 1 s"),
        ("drip-body", "timeout", "answer not complete within 1 s"),
    ],
)
def test_hostile_answers_keep_their_words(
    mode: str, kind: str, detail: str, clean_env: pytest.MonkeyPatch
) -> None:
    """requests' exceptions are mapped back to the door's own kinds and messages."""
    with hostile.HostileServer(mode, seconds=6) as srv, pytest.raises(net.HttpError) as err:
        get(srv.url + "/simple/torch/", seconds=1.0)
    assert (err.value.kind, err.value.detail) == (kind, detail)


class TlsDrip:
    """TLS on 127.0.0.1 (the fixture certificate), then a status line and headers that never end,
    one byte at a time for up to 60 s; ``cut`` is set when the client's end is gone before that."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(CERT, KEY)
        self.cut = threading.Event()
        self.url = f"https://127.0.0.1:{self.listener.getsockname()[1]}"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        try:
            with self.ctx.wrap_socket(conn, server_side=True) as tls:
                tls.settimeout(5)
                tls.recv(65536)
                head = b"HTTP/1.1 200 OK\r\n" + b"X-Drip: " + b"a" * 10_000
                for i in range(1200):  # 60 s at 50 ms a byte
                    tls.sendall(head[i : i + 1])
                    select.select([], [], [], 0.05)
        except OSError:
            self.cut.set()

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=10)


def test_a_dripping_tls_server_is_cut_at_the_deadline(clean_env: pytest.MonkeyPatch) -> None:
    """The cut reaches under TLS: the server sees the connection end while it still drips (a
    timer that shut only the socket object TLS had detached would leave it dripping for 60 s)."""
    clean_env.setenv("REQUESTS_CA_BUNDLE", str(CERT))
    server = TlsDrip()
    try:
        with pytest.raises(net.HttpError) as err:
            get(server.url + "/simple/torch/", seconds=1.0)
        assert server.cut.wait(10)
    finally:
        server.close()
    assert (err.value.kind, err.value.detail) == ("timeout", "answer not complete within 1 s")


# --- the name look-up inside the deadline --------------------------------------------------------
# getaddrinfo takes no timeout, and requests' socket timeouts start only after it: a resolver that
# hangs (a dead nameserver in resolv.conf, a VPN gone) would hold an exchange for the resolver's own
# minutes. The system resolver stands in here as a function that never answers, or answers "no".


class StuckResolver:
    """``socket.getaddrinfo`` for names: blocks until released (addresses pass through)."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.asked: list[str] = []
        self._real = socket.getaddrinfo

    def __call__(self, host: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(host, str) and host.endswith(".example"):
            self.asked.append(host)
            self.release.wait(30)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return self._real(host, *args, **kwargs)


@pytest.fixture
def stuck_resolver(clean_env: pytest.MonkeyPatch) -> Iterator[StuckResolver]:
    resolver = StuckResolver()
    clean_env.setattr(socket, "getaddrinfo", resolver)
    yield resolver
    resolver.release.set()


def test_a_resolver_that_hangs_ends_the_exchange_at_the_deadline(
    stuck_resolver: StuckResolver,
) -> None:
    with pytest.raises(net.HttpError) as err:
        get("https://download.pytorch.example/whl/cu128/torch/", seconds=0.3)
    assert err.value.kind == "timeout"
    assert err.value.detail == "DNS lookup of download.pytorch.example: no answer within 0.3 s"
    # answered while the resolver was still stuck: the exchange did not wait for it
    assert stuck_resolver.asked == ["download.pytorch.example"]
    assert not stuck_resolver.release.is_set()


def test_a_name_the_resolver_does_not_know_is_unreachable(clean_env: pytest.MonkeyPatch) -> None:
    def no_such_name(host: Any, *args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    clean_env.setattr(socket, "getaddrinfo", no_such_name)
    with pytest.raises(net.HttpError) as err:
        get("https://pypi.example/simple/torch/")
    assert err.value.kind == "unreachable"
    assert err.value.detail == "DNS lookup failed (Name or service not known)"


def test_through_a_proxy_the_name_is_the_proxys_to_look_up(
    clean_env: pytest.MonkeyPatch, stuck_resolver: StuckResolver, proxy: Any
) -> None:
    # A site whose names only its proxy resolves: asking the local resolver first would fail.
    psrv, purl = proxy
    clean_env.setenv("HTTP_PROXY", purl)
    answer = get("http://mirror.example/simple/torch/", seconds=5)
    assert answer.body == b"proxy http://mirror.example/simple/torch/"
    assert psrv.seen == ["GET http://mirror.example/simple/torch/"]
    assert stuck_resolver.asked == []


def test_an_address_is_not_looked_up(stuck_resolver: StuckResolver, origin: Any) -> None:
    osrv, ourl = origin
    assert get(ourl + "/z").body == b"origin /z"
    assert osrv.seen == ["/z"] and stuck_resolver.asked == []


def test_the_real_resolver_is_asked_for_a_name(clean_env: pytest.MonkeyPatch, origin: Any) -> None:
    # localhost is in every hosts file: looked up for real (no stand-in resolver), it resolves
    # and the exchange goes on; a label over 63 characters is refused by the name's own
    # encoding before any query leaves the machine, in the resolver's words
    osrv, _url = origin
    assert net.resolve_host("localhost", 5) is None
    port = osrv.server_address[1]
    assert get(f"http://localhost:{port}/named").body == b"origin /named"
    too_long = "a" * 64 + ".example"
    why = net.resolve_host(too_long, 5)  # the words differ between Python versions
    assert why is not None and why.startswith("encoding with 'idna' codec failed (")
    assert "too long" in why
    with pytest.raises(net.HttpError) as err:
        get(f"http://{too_long}/x")
    assert (err.value.kind, err.value.detail) == ("unreachable", f"DNS lookup failed ({why})")


def test_a_resolver_slower_than_the_timeout_is_no_answer(clean_env: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo

    def slow(host: Any, *args: Any, **kwargs: Any) -> Any:
        threading.Event().wait(0.8)
        return real("localhost", *args, **kwargs)

    clean_env.setattr(socket, "getaddrinfo", slow)
    assert net.resolve_host("slow.example", 0.1) == "no answer within 0.1 s"
    assert net.resolve_host("slow.example", 10) is None  # the same resolver, waited for


HANGING_RESOLVER = r"""
import socket, threading
from setup_env.bounded import net

socket.getaddrinfo = lambda *a, **k: threading.Event().wait()  # never answers
print(net.resolve_host("stuck.example", 0.1))
"""


def test_a_resolver_that_never_answers_does_not_keep_setup_env_from_exiting() -> None:
    # The look-up thread is left behind, and must not hold the interpreter at exit.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run(
        [sys.executable, "-c", HANGING_RESOLVER],
        capture_output=True, text=True, timeout=30, env=env, check=False,
    )  # fmt: skip
    assert (proc.returncode, proc.stdout) == (0, "no answer within 0.1 s\n"), proc.stderr[-2000:]


@pytest.mark.skipif(
    sys.platform != "linux", reason="Linux drops a connection its full queue has no room for"
)
def test_a_server_that_takes_no_connection_is_no_connection_within_the_deadline(
    clean_env: pytest.MonkeyPatch,
) -> None:
    # A listening socket whose queue is full and never accepted from: Linux drops further
    # connection attempts (no refusal), so the connect itself runs out of time.
    with full_queue() as port, pytest.raises(net.HttpError) as err:
        get(f"http://127.0.0.1:{port}/x", seconds=0.5)
    assert (err.value.kind, err.value.detail) == ("timeout", "no connection within 0.5 s")


def test_a_proxy_that_is_not_there_is_unreachable_and_said_to_be_the_proxy(
    clean_env: pytest.MonkeyPatch, origin: Any
) -> None:
    osrv, ourl = origin
    clean_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{nothing_listens()}")
    with pytest.raises(net.HttpError) as err:
        get(ourl + "/via-proxy")
    assert (err.value.kind, err.value.detail) == ("unreachable", "proxy: connection refused")
    assert osrv.seen == []  # never sent around the proxy
