"""How ``bounded.net`` names what went wrong, each situation made for real on loopback.

Every server here is a real socket on 127.0.0.1 that misbehaves in one way, as a broken origin,
a strict proxy or a network that is not there would: it drops the connection in the body (a
declared length or a chunk cut short, a reset), before any answer, or sends a header line no
HTTP client takes; a proxy refuses the tunnel or takes no connection. What the door says is
checked whole: its kind and its exact words. tests/test_net.py holds the door's rules (proxies,
CA bundle, redirects, the cap) and tests/test_hostile.py the deadline.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from test_net import clean_env, full_queue, nothing_listens  # the loopback helpers

from setup_env import bounded
from setup_env.bounded import net

__all__ = ["clean_env"]  # a fixture: used by name

Script = Callable[[socket.socket], None]


class OneShot:
    """A server on 127.0.0.1 that takes one connection and runs ``script`` on it."""

    def __init__(self, script: Script) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._serve, args=(script,), daemon=True)
        self.thread.start()

    def _serve(self, script: Script) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:  # closed before anyone came
            return
        with conn:
            conn.settimeout(5)
            with contextlib.suppress(OSError):  # the client is gone: nothing more to do
                script(conn)

    def close(self) -> None:
        self.listener.close()
        self.thread.join(timeout=10)


@pytest.fixture
def one_shot() -> Iterator[Callable[[Script], OneShot]]:
    servers: list[OneShot] = []

    def start(script: Script) -> OneShot:
        servers.append(OneShot(script))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def read_head(conn: socket.socket) -> bytes:
    """The request (or CONNECT) up to the blank line that ends its head."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            break
        data += piece
    return data


def answer_then_close(raw: bytes) -> Script:
    def script(conn: socket.socket) -> None:
        read_head(conn)
        conn.sendall(raw)

    return script


def answer_then_reset(raw: bytes) -> Script:
    """``raw``, then a reset (SO_LINGER 0) instead of an orderly close, once what was sent is on
    its way: the client holds the bytes it got, and its next read fails."""

    def script(conn: socket.socket) -> None:
        read_head(conn)
        if raw:
            conn.sendall(raw)
            threading.Event().wait(0.2)
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))

    return script


def failure(url: str, seconds: float = 5.0) -> tuple[str, str]:
    """The HttpError's kind and words; printed, it reads as its words."""
    with pytest.raises(net.HttpError) as err:
        net.http_request(url, bounded.Deadline(seconds), max_bytes=10_000)
    assert str(err.value) == err.value.detail
    return err.value.kind, err.value.detail


LENGTH_1000 = b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


# --- the body broke off: how much of it came ------------------------------------------------------


@pytest.mark.parametrize(
    ("script", "got"),
    [
        # a declared length, then the connection closed: what came is counted, read or not
        (answer_then_close(LENGTH_1000), 0),
        (answer_then_close(LENGTH_1000 + b"hello"), 5),
        # a declared length, then a reset: the read that fails had nothing
        (answer_then_reset(LENGTH_1000), 0),
        # chunked: a whole chunk of 3, then a chunk of 0x64 cut after 5 bytes: all 8 that came
        (answer_then_close(CHUNKED + b"3\r\nabc\r\n64\r\nhello"), 8),
        # the first chunk cut: its 5 bytes, though none was handed on
        (answer_then_close(CHUNKED + b"64\r\nhello"), 5),
        # a whole chunk, then a chunk size that is not hexadecimal
        (answer_then_close(CHUNKED + b"3\r\nabc\r\nzz\r\nabc\r\n"), 3),
    ],
    ids=["length-none", "length-5", "length-reset", "chunk-cut", "first-chunk-cut", "chunk-size"],
)
def test_a_body_that_breaks_off_says_how_many_bytes_came(
    script: Script, got: int, clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    server = one_shot(script)
    assert failure(server.url + "/simple/torch/") == (
        "broken",
        f"answer broke off after {got} bytes (connection closed)",
    )


# --- no answer: dropped, or not HTTP --------------------------------------------------------------


def test_a_connection_reset_before_any_answer_is_an_answer_broken_off(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    server = one_shot(answer_then_reset(b""))
    assert failure(server.url + "/") == ("broken", "answer broke off (connection reset)")


def test_a_header_line_longer_than_http_allows_is_not_an_http_answer(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    # http.client refuses a line over 65536 bytes: a stray service streaming without newlines
    server = one_shot(answer_then_close(b"HTTP/1.1 200 OK\r\nX-Junk: " + b"a" * 70_000))
    assert failure(server.url + "/") == ("broken", "not an HTTP answer (LineTooLong)")


# --- the network or the proxy says no -------------------------------------------------------------


@pytest.mark.skipif(sys.platform != "linux", reason="Linux refuses TCP to a multicast address")
def test_a_connect_the_system_refuses_is_unreachable_in_the_systems_words(
    clean_env: pytest.MonkeyPatch,
) -> None:
    # TCP to a multicast group: the kernel answers ENETUNREACH before any packet leaves
    assert failure("http://224.0.0.1:80/") == ("unreachable", "Network is unreachable")


def refuse_tunnel(status_line: bytes) -> Script:
    def script(conn: socket.socket) -> None:
        read_head(conn)
        conn.sendall(status_line + b"\r\nContent-Length: 0\r\n\r\n")
        threading.Event().wait(0.5)  # the client reads the refusal before the connection goes

    return script


def test_a_proxy_that_refuses_the_tunnel_is_unreachable_in_its_words(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    proxy = one_shot(refuse_tunnel(b"HTTP/1.1 407 Proxy Authentication Required"))
    clean_env.setenv("HTTPS_PROXY", proxy.url)
    assert failure(f"https://127.0.0.1:{nothing_listens()}/simple/torch/") == (
        "unreachable",
        "proxy: Tunnel connection failed: 407 Proxy Authentication Required",
    )


def test_a_proxys_long_refusal_is_cut_to_one_short_line(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    # a corporate proxy's reason phrase can run on; the door keeps its first 160 characters
    reason = b" ".join([b"Blocked by the acceptable use policy of this network."] * 6)
    proxy = one_shot(refuse_tunnel(b"HTTP/1.1 403 " + reason))
    clean_env.setenv("HTTPS_PROXY", proxy.url)
    kind, detail = failure(f"https://127.0.0.1:{nothing_listens()}/simple/torch/")
    assert kind == "unreachable"
    assert detail == (
        "proxy: Tunnel connection failed: 403 Blocked by the acceptable use policy of this "
        "network. Blocked by the acceptable use policy of this network. Blocked by the accepta…"
    )


@pytest.mark.skipif(
    sys.platform != "linux", reason="Linux drops a connection its full queue has no room for"
)
def test_a_proxy_that_takes_no_connection_is_no_connection_within_the_deadline(
    clean_env: pytest.MonkeyPatch,
) -> None:
    # The proxy's listen queue is full and never accepted from: the connect to it runs out of
    # time (urllib3 says so as a proxy error, not as a connect timeout).
    with full_queue() as port:
        clean_env.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
        assert failure(f"http://127.0.0.1:{nothing_listens()}/x", seconds=0.5) == (
            "timeout",
            "no connection within 0.5 s",
        )


def test_headers_that_end_only_after_the_deadline_are_no_answer(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    """Headers dripped for longer than the deadline, then a whole answer with no body: the
    exchange is cut at the deadline, not handed back when the headers happen to end."""

    def drip(conn: socket.socket) -> None:
        read_head(conn)
        head = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Drip: aaaaaaaaaaaaaaaaaaaaaa\r\n\r\n"
        for i in range(len(head)):  # about 0.7 s, over twice the deadline
            conn.sendall(head[i : i + 1])
            threading.Event().wait(0.01)

    server = one_shot(drip)
    assert failure(server.url + "/", seconds=0.3) == (
        "timeout",
        "answer not complete within 0.3 s",
    )


# --- names, addresses and URLs --------------------------------------------------------------------


def test_an_address_is_resolved_only_by_the_connection_itself(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    """A name is looked up ahead, within the deadline; an address needs no look-up: the one
    call the resolver sees is the connection's own."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def recording(host: Any, *args: Any, **kwargs: Any) -> Any:
        asked.append(host)
        return real(host, *args, **kwargs)

    clean_env.setattr(socket, "getaddrinfo", recording)
    server = one_shot(answer_then_close(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    answer = net.http_request(server.url + "/", bounded.Deadline(5), max_bytes=100)
    assert answer.body == b"ok"
    assert asked == ["127.0.0.1"]


def test_a_long_name_the_resolver_never_answers_for_is_cut_in_the_message(
    clean_env: pytest.MonkeyPatch,
) -> None:
    release = threading.Event()

    def stuck(host: Any, *args: Any, **kwargs: Any) -> Any:
        release.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    clean_env.setattr(socket, "getaddrinfo", stuck)
    name = "download-" + "a" * 50 + ".mirror-" + "b" * 50 + ".example"
    try:
        kind, detail = failure(f"https://{name}/whl/", seconds=0.3)
    finally:
        release.set()
    assert kind == "timeout"
    assert detail == (
        "DNS lookup of download-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.mirror-"
        "bbbbbbbbbbbbb…: no answer within 0.3 s"
    )


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("http://example.org:99999/simple/", "bad port in http://example.org:99999/simple/"),
        ("http://example.org:https/simple/", "bad port in http://example.org:https/simple/"),
        (
            "https://mirror.example.org:443443/" + "long/" * 20,
            "bad port in https://mirror.example.org:443443/long/long/long/long/long/long/"
            "long/long/long/l…",
        ),
        (
            "file:///" + "tmp/" * 30,
            "not an http(s) URL: file:///tmp/tmp/tmp/tmp/tmp/tmp/tmp/tmp/tmp/tmp/tmp/tmp/"
            "tmp/tmp/tmp/tmp/tmp/tmp/…",
        ),
    ],
    ids=["port-too-big", "port-not-a-number", "bad-port-long-url", "not-http-long-url"],
)
def test_a_url_the_door_cannot_ask_is_broken_and_quoted_in_short(url: str, detail: str) -> None:
    assert failure(url) == ("broken", detail)


# --- what a whole answer hands back ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "raw"),
    [
        # the length of what a GET would have sent: no body follows a 304 (RFC 9110, 8.6)
        ("GET", b'HTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\nETag: "v1"\r\n\r\n'),
        ("HEAD", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"),
    ],
    ids=["304", "HEAD"],
)
def test_an_answer_without_a_body_is_whole_whatever_length_it_declares(
    method: str, raw: bytes, clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    """Before: 'answer broke off after 0 bytes', for an answer that had nothing to send."""

    def script(conn: socket.socket) -> None:
        read_head(conn)
        conn.sendall(raw)
        threading.Event().wait(0.5)  # held open: the answer is whole without a close

    server = one_shot(script)
    answer = net.http_request(server.url + "/", bounded.Deadline(5), method=method, max_bytes=100)
    assert (answer.body, answer.headers["content-length"]) == (b"", "100")


@pytest.mark.parametrize(
    ("status_line", "reason"),
    [(b"HTTP/1.1 200 OK", "OK"), (b"HTTP/1.1 200", "")],
    ids=["with-reason", "without-reason"],
)
def test_the_reason_phrase_is_handed_back_as_sent(
    status_line: bytes, reason: str, clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    server = one_shot(answer_then_close(status_line + b"\r\nContent-Length: 2\r\n\r\nok"))
    answer = net.http_request(server.url + "/", bounded.Deadline(5), max_bytes=10)
    assert (answer.status, answer.reason, answer.body) == (200, reason, b"ok")


def test_a_body_of_many_reads_comes_back_whole_in_order(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    body = bytes(range(256)) * 600  # 153600 bytes: more than two reads of 64 KiB
    server = one_shot(
        answer_then_close(b"HTTP/1.1 200 OK\r\nContent-Length: 153600\r\n\r\n" + body)
    )
    answer = net.http_request(server.url + "/", bounded.Deadline(10), max_bytes=len(body))
    assert answer.body == body


@pytest.mark.parametrize(("size", "whole"), [(10_000, True), (10_001, False)])
def test_a_body_without_a_length_may_be_exactly_the_cap(
    size: int, whole: bool, clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    # HTTP/1.0 without Content-Length: the body ends when the connection does
    server = one_shot(answer_then_close(b"HTTP/1.0 200 OK\r\n\r\n" + b"x" * size))
    if whole:
        assert failure_or_body(server.url) == b"x" * size
    else:
        assert failure_or_body(server.url) == ("too-large", "answer exceeds 10000 bytes")


def failure_or_body(url: str) -> Any:
    try:
        return net.http_request(url + "/", bounded.Deadline(5), max_bytes=10_000).body
    except net.HttpError as exc:
        return exc.kind, exc.detail


def test_the_body_is_asked_for_as_it_is_not_compressed(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    """The cap counts the bytes held, and a declared length means them: no gzip in between."""
    heads: list[bytes] = []

    def script(conn: socket.socket) -> None:
        heads.append(read_head(conn))
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    server = one_shot(script)
    net.http_request(server.url + "/", bounded.Deadline(5), max_bytes=10)
    lines = [line.lower() for line in heads[0].split(b"\r\n")]
    assert [line for line in lines if line.startswith(b"accept-encoding:")] == [
        b"accept-encoding: identity"
    ]


def test_a_metadata_host_goes_straight_whatever_the_case_of_its_name(
    clean_env: pytest.MonkeyPatch, one_shot: Any
) -> None:
    # A name stands in for the link-local one (never asked from a test); a proxy is set and
    # must not be asked: it is a server that answers nothing.
    proxy = one_shot(lambda conn: None)
    clean_env.setenv("HTTP_PROXY", proxy.url)
    clean_env.setattr(net, "METADATA_HOSTS", net.METADATA_HOSTS | {"localhost"})
    server = one_shot(answer_then_close(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    answer = net.http_request(
        f"http://LocalHost:{server.port}/latest/", bounded.Deadline(5), max_bytes=10
    )
    assert answer.body == b"ok"
