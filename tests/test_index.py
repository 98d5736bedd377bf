"""Index readers on real registry answers, and the HTTP client against a real loopback server.

Fixtures: tests/fixtures/index/ (SOURCE.md says where each answer comes from). Nothing here talks
to anything but 127.0.0.1.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from setup_env.knowledge import index

FIX = Path(__file__).parent / "fixtures" / "index"
_spec = importlib.util.spec_from_file_location("setup_env_test_loopback", FIX / "loopback.py")
assert _spec and _spec.loader
loopback: Any = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = loopback
_spec.loader.exec_module(loopback)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with loopback.LoopbackServer() as srv:
        yield srv


# --- filenames ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filename", "release", "variant", "interpreters", "platforms"),
    [
        # real filenames (PyPI captures, PyTorch index pages in the fixtures)
        ("torch-2.13.0+cu130-cp314-cp314t-manylinux_2_28_x86_64.whl", "2.13.0", "cu130",
         ("cp314t",), ("manylinux_2_28_x86_64",)),
        ("torch-2.10.0-3-cp313-cp313t-manylinux_2_28_x86_64.whl", "2.10.0", None,
         ("cp313t",), ("manylinux_2_28_x86_64",)),  # build tag "3": not part of the platform
        ("torch-2.10.0-2-cp310-none-macosx_11_0_arm64.whl", "2.10.0", None,
         ("cp310",), ("macosx_11_0_arm64",)),
        ("torch-1.13.0+cu117-cp37-cp37m-linux_x86_64.whl", "1.13.0", "cu117",
         ("cp37m",), ("linux_x86_64",)),
        ("torchaudio-2.11.1-py3-none-manylinux_2_28_aarch64.whl", "2.11.1", None,
         ("py3",), ("manylinux_2_28_aarch64",)),
        ("torch-2.0.0.dev20230207+rocm5.3-cp39-cp39-linux_x86_64.whl", None, None, None, None),
    ],
)  # fmt: skip
def test_parse_wheel_real_names(
    filename: str,
    release: str | None,
    variant: str | None,
    interpreters: tuple[str, ...] | None,
    platforms: tuple[str, ...] | None,
) -> None:
    project = filename.split("-")[0]
    wheel, reason = index.parse_wheel(filename, project)
    if release is None:  # a nightly: ignored (not an error) by the stable refresh
        assert wheel is None and reason is None
        return
    assert reason is None and wheel is not None
    assert (wheel.release, wheel.variant, wheel.interpreters, wheel.platforms) == (
        release,
        variant,
        interpreters,
        platforms,
    )


def test_compressed_tag_sets() -> None:
    w, _ = index.parse_wheel(
        "nvidia_cuda_cuobjdump-13.2.86-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        "nvidia-cuda-cuobjdump",
    )
    assert w is not None and w.platforms == ("manylinux2014_x86_64", "manylinux_2_17_x86_64")


@pytest.mark.parametrize(
    "filename",
    [
        "torch-2.13.0+cu130; rm -rf /-cp312-cp312-manylinux_2_28_x86_64.whl",
        "torch-2.13.0+cu130$(id)-cp312-cp312-win_amd64.whl",
        "torch-2.13.0+cu1300-cp312-cp312-win_amd64.whl",
        "torch-2.13.0+rocm6-cp312-cp312-linux_x86_64.whl",
        "torch-2.13.0+cpu.cxx11.abi-cp312-cp312-linux_x86_64.whl",
        "torch-2.13.0+cu130-cp312-cp312-win`id`.whl",
        "torch-2.13.0+cu130-cp312-cp312-win_amd64 .whl",
        "torch-2.13.0-cp312-cp312-win_amd64\n.whl",
        "torch-1.2.3.4.5-cp312-cp312-win_amd64.whl",
        "torch.whl",
        "evil-1.0-py3-none-any.whl",
    ],
)
def test_hostile_or_invalid_names_rejected(filename: str) -> None:
    wheel, reason = index.parse_wheel(filename, "torch")
    assert wheel is None
    assert reason  # rejected with a reason, not silently ignored


@pytest.mark.parametrize(
    ("name", "ok"),
    [
        ("cpu", True), ("cu118", True), ("cu130", True), ("rocm6.4", True), ("rocm5.4.2", True),
        ("xpu", True), ("cu1300", False), ("cu13", False), ("rocm6", False),
        ("cu130; rm -rf /", False), ("cu130\n", False), ("CPU", False), ("", False),
        ("javascript:", False),
    ],
)  # fmt: skip
def test_variant_pattern(name: str, ok: bool) -> None:
    assert index.is_variant(name) is ok


# --- documents ---------------------------------------------------------------------------------


def test_pep691_real_torch_answer() -> None:
    listing = index.parse_pep691((FIX / "pypi-torch.json").read_bytes(), "torch", "x")
    assert listing.form == "pep691-json" and not listing.rejected
    releases = sorted(
        {w.release for w in listing.wheels}, key=lambda v: tuple(map(int, v.split(".")))
    )
    assert releases == ["2.12.0", "2.12.1", "2.13.0", "2.14.0", "2.14.1", "2.15.0"]
    by: dict[tuple[str, str], set[str]] = {
        (w.release, p): set() for w in listing.wheels for p in w.platforms
    }
    for w in listing.wheels:
        for p in w.platforms:
            by[(w.release, p)].update(w.interpreters)
    # VERIFIED.md section 1: 2.15.0 is cp311-cp315 + cp314t/cp315t; 2.12.0 also had cp313t
    assert by[("2.15.0", "manylinux_2_28_x86_64")] == {
        "cp311", "cp312", "cp313", "cp314", "cp315", "cp314t", "cp315t"
    }  # fmt: skip
    assert "cp313t" in by[("2.12.0", "win_amd64")] and "cp313t" not in by[("2.12.1", "win_amd64")]
    assert {w.requires_python for w in listing.wheels if w.release == "2.15.0"} == {">=3.11"}
    assert all(w.variant is None for w in listing.wheels)  # PyPI wheels carry no local label


def test_pep691_and_pep503_of_the_same_project_agree() -> None:
    """PyPI served torchaudio in both forms within the same second: same wheels."""
    a = index.parse_pep691((FIX / "pypi-torchaudio.json").read_bytes(), "torchaudio")
    b = index.parse_pep503((FIX / "pypi-torchaudio.html").read_bytes(), "torchaudio")
    key = lambda w: (w.filename, w.release, w.interpreters, w.platforms)  # noqa: E731
    assert sorted(map(key, a.wheels)) == sorted(map(key, b.wheels))
    assert len(a.wheels) > 100 and b.form == "pep503-html"
    # data-requires-python="&gt;=3.10" is unescaped
    assert {w.requires_python for w in b.wheels if w.release == "2.11.1"} == {">=3.10"}


def test_pep503_pytorch_pages() -> None:
    cu117 = index.parse_pep503((FIX / "whl/cu117/torch/index.html").read_bytes(), "torch")
    assert [(w.release, w.variant) for w in cu117.wheels] == [
        ("1.13.0", "cu117"),
        ("1.13.0", "cu117"),
        ("1.13.0", "cu117"),
        ("2.0.1", None),  # unlabelled aarch64 CPU wheels listed on the cu117 page
        ("2.0.1", None),
    ]
    cu130 = index.parse_pep503((FIX / "whl/cu130/torch/index.html").read_bytes(), "torch")
    assert {w.variant for w in cu130.wheels} == {"cu130"} and not cu130.rejected
    assert {w.release for w in cu130.wheels} == {"2.9.1", "2.13.0", "2.14.1"}
    nightly = index.parse_pep503((FIX / "whl/nightly/torch/index.html").read_bytes(), "torch")
    assert nightly.wheels == [] and nightly.ignored == 8 and not nightly.rejected


def test_hostile_html_rejected() -> None:
    page = (FIX / "whl/cu130/torch/index.html").read_text()
    page = page.replace("  </body>", "\n".join(loopback.HOSTILE_ANCHORS) + "\n  </body>")
    listing = index.parse_pep503(page, "torch")
    assert len(listing.rejected) == len(loopback.HOSTILE_ANCHORS)
    assert {w.variant for w in listing.wheels} == {"cu130"}
    kept = json.dumps([w.__dict__ for w in listing.wheels])
    for bad in (";", "rm -rf", "$(", "`", "javascript", "data:", "cu131", "cu132", "evil"):
        assert bad not in kept


def test_hostile_json_rejected() -> None:
    doc = json.loads((FIX / "pypi-torch.json").read_text())
    clean = len(index.parse_pep691(json.dumps(doc), "torch").wheels)
    doc["files"] += loopback.HOSTILE_FILES
    listing = index.parse_pep691(json.dumps(doc), "torch")
    assert len(listing.wheels) == clean
    assert len(listing.rejected) == len(loopback.HOSTILE_FILES)
    assert "9.0.0" not in {w.release for w in listing.wheels}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not JSON"),
        (b"[]", "not an object"),
        (b'{"meta": {"api-version": "2.0"}, "name": "torch", "files": []}', "unsupported"),
        (b'{"meta": {"api-version": "1.1"}, "name": "numpy", "files": []}', "not 'torch'"),
        (b'{"meta": {"api-version": "1.1"}, "name": "torch"}', "no files list"),
    ],
)
def test_bad_pep691_documents(body: bytes, message: str) -> None:
    with pytest.raises(index.IndexFetchError, match=message):
        index.parse_pep691(body, "torch", "u")


def test_truncated_json_is_invalid() -> None:
    body = (FIX / "pypi-torch.json").read_bytes()
    with pytest.raises(index.IndexFetchError, match="not JSON"):
        index.parse_pep691(body[: len(body) // 2], "torch", "u")


def test_project_url_validates_its_parts() -> None:
    assert index.project_url("http://h/whl/", "torch", "cu130") == "http://h/whl/cu130/torch/"
    with pytest.raises(ValueError):
        index.project_url("http://h/whl", "torch", "cu130/../../etc")
    with pytest.raises(ValueError):
        index.project_url("http://h/whl", "torch; rm", None)


# --- HTTP against the loopback server ----------------------------------------------------------


def test_fetch_negotiates_pep691_json(server: Any) -> None:
    f = index.Fetcher(timeout=5)
    answer = f.get(f"{server.url}/simple/torch/")
    assert answer.content_type == index.PEP691_JSON
    assert server.requests[-1][1].startswith(index.PEP691_JSON)
    listing = index.read_answer(answer, "torch")
    assert listing.form == "pep691-json" and len(listing.wheels) > 100


def test_html_only_mirror_is_read_as_pep503(server: Any) -> None:
    f = index.Fetcher(timeout=5)
    answer = f.get(f"{server.url}/simple/torchaudio/", accept="text/html")
    assert answer.content_type == "text/html"
    assert index.read_answer(answer, "torchaudio").form == "pep503-html"


def test_redirect_followed(server: Any) -> None:
    answer = index.Fetcher(timeout=5).get(f"{server.url}/moved/whl/cu130/torch/")
    assert answer.url == f"{server.url}/whl/cu130/torch/"
    assert index.read_answer(answer, "torch").wheels


@pytest.mark.parametrize(
    ("path", "kind", "message"),
    [
        ("/status/500/torch/", "http", "HTTP 500"),
        ("/status/404/torch/", "http", "HTTP 404"),
        ("/status/403/torch/", "http", "HTTP 403"),
        ("/loop/torch/", "http", "redirects"),
        ("/to-ftp/torch/", "invalid", "ftp"),
        ("/huge/torch/", "too-large", "exceeds"),
        ("/huge-declared/torch/", "too-large", "1073741824 bytes"),
    ],
)
def test_fetch_failures(server: Any, path: str, kind: str, message: str) -> None:
    with pytest.raises(index.IndexFetchError, match=message) as info:
        index.Fetcher(timeout=5, max_bytes=8 * 1024 * 1024).get(server.url + path)
    assert info.value.kind == kind


@pytest.mark.parametrize(
    ("path", "kind", "message"),
    [
        ("/garbage/torch/", "invalid", "not JSON"),
        ("/truncated/torch/", "invalid", "not JSON"),
        ("/wrong-type/torch/", "content-type", "text/plain"),
    ],
)
def test_bad_answers(server: Any, path: str, kind: str, message: str) -> None:
    answer = index.Fetcher(timeout=5).get(server.url + path)
    with pytest.raises(index.IndexFetchError, match=message) as info:
        index.read_answer(answer, "torch")
    assert info.value.kind == kind


@pytest.mark.parametrize("path", ["/slow/torch/", "/trickle/torch/"])
def test_slow_answers_time_out(server: Any, path: str) -> None:
    start = time.monotonic()
    with pytest.raises(index.IndexFetchError) as info:
        index.Fetcher(timeout=0.6).get(server.url + path)
    assert info.value.kind == "timeout"
    assert time.monotonic() - start < 2.5


def test_refused_connection_is_unreachable() -> None:
    with loopback.LoopbackServer() as srv:  # a port that was just open and is now closed
        url = srv.url
    with pytest.raises(index.IndexFetchError) as info:
        index.Fetcher(timeout=2).get(f"{url}/simple/torch/")
    assert info.value.kind == "unreachable" and info.value.unreachable


def test_only_http_urls() -> None:
    for url in ("file:///etc/passwd", "ftp://x/y", "javascript:alert(1)", "/relative"):
        with pytest.raises(index.IndexFetchError, match="only http"):
            index.Fetcher(timeout=1).get(url)


def test_snapshot(server: Any) -> None:
    lines: list[str] = []
    snap = index.fetch_snapshot(
        pypi_url=f"{server.url}/simple",
        index_url=f"{server.url}/whl",
        variants=["cu130", "cu126", "cpu", "cu999"],
        timeout=5,
        progress=lines.append,
    )
    assert set(snap.pypi) == {"torch", "torchvision", "torchaudio"}
    assert set(snap.variants) == {"cu130", "cu126", "cpu"}
    assert snap.absent_variants == ["cu999"] and snap.errors == []
    assert len(lines) == 7  # one progress line per page fetched
    assert any("not published (404)" in line for line in lines)


def test_snapshot_offline_asks_each_host_once() -> None:
    with loopback.LoopbackServer() as srv:
        url = srv.url
    start = time.monotonic()
    snap = index.fetch_snapshot(
        pypi_url=f"{url}/simple", index_url=f"{url}/whl", variants=["cu130", "cpu"], timeout=2
    )
    assert not snap.reached_any and snap.fetched == 0
    assert [e.kind for e in snap.errors] == ["unreachable"] * 5
    assert sum("skipped" in e.detail for e in snap.errors) == 4
    assert time.monotonic() - start < 3


# --- answers of the wrong kind are refused (issue 17) --------------------------------------------


def test_pep503_page_for_another_project_is_refused() -> None:
    """PyPI's torchaudio page ("Links for torchaudio") where torch's was asked."""
    with pytest.raises(index.IndexFetchError, match="a page for 'torchaudio', not 'torch'") as info:
        index.parse_pep503((FIX / "pypi-torchaudio.html").read_bytes(), "torch", "u")
    assert info.value.kind == "wrong-kind"


def test_pep691_page_for_another_project_is_refused() -> None:
    body = (FIX / "pypi-torchvision.json").read_bytes()
    with pytest.raises(index.IndexFetchError, match="'torchvision', not 'torch'") as info:
        index.parse_pep691(body, "torch", "u")
    assert info.value.kind == "wrong-kind"


def test_a_page_cut_short_is_refused(server: Any) -> None:
    """A page that stops before ``</html>`` (honest Content-Length: the transport can't tell)."""
    answer = index.Fetcher(timeout=5).get(f"{server.url}/cut/whl/cu130/torch/")
    with pytest.raises(index.IndexFetchError, match="cut short") as info:
        index.read_answer(answer, "torch")
    assert info.value.kind == "wrong-kind"


def test_html_where_pep691_json_was_asked_is_refused(server: Any) -> None:
    """The captured cpu variant page served where PyPI's JSON was asked: read as PEP 503 it
    would give PyPI's facts from another page."""
    answer = index.Fetcher(timeout=5).get(f"{server.url}/html/simple/torch/", index.PEP691_JSON)
    assert answer.content_type == "text/html"
    assert index.read_answer(answer, "torch").wheels  # a valid PEP 503 page, as such
    with pytest.raises(index.IndexFetchError, match="text/html where PEP 691 JSON") as info:
        index.read_answer(answer, "torch", expect="json")
    assert info.value.kind == "wrong-kind"


def test_a_pypi_page_with_local_labels_is_not_pypi() -> None:
    cpu = index.parse_pep503((FIX / "whl/cpu/torch/index.html").read_bytes(), "torch", "u")
    with pytest.raises(index.IndexFetchError, match=r"\(\+cpu\), which PyPI never serves"):
        index.check_pypi(cpu)
    index.check_pypi(index.parse_pep691((FIX / "pypi-torch.json").read_bytes(), "torch"))


def test_snapshot_asks_pypi_for_json_only(server: Any) -> None:
    before = len(server.requests)
    snap = index.fetch_snapshot(
        pypi_url=f"{server.url}/html/simple", index_url=None, timeout=5, variants=[]
    )
    asked = server.requests[before:]
    assert [a for _, a in asked] == [index.PEP691_JSON] * 3
    assert snap.pypi == {} and [e.kind for e in snap.errors] == ["wrong-kind"] * 3


# --- one deadline for a whole snapshot (issue 17) -----------------------------------------------


def test_snapshot_one_deadline_for_every_page() -> None:
    """Each answer takes 1 s; a 1.5 s deadline reads the first page, cuts the second off at the
    deadline and asks none of the rest (before: 1.5 s per page, 5 pages, ~5 s)."""
    with loopback.LoopbackServer() as srv:
        srv.delay_seconds = 1.0
        start = time.monotonic()
        snap = index.fetch_snapshot(
            pypi_url=f"{srv.url}/delay/simple",
            index_url=f"{srv.url}/delay/whl",
            variants=["cu130", "cpu"],
            timeout=1.5,
        )
        took = time.monotonic() - start
        asked = len(srv.requests)
    assert took < 2.5, took
    assert set(snap.pypi) == {"torch"} and asked == 2
    assert [e.kind for e in snap.errors] == ["deadline"] * 4
    assert "no answer before the deadline of 1.5 s" in snap.errors[0].detail
    assert all("not asked" in e.detail for e in snap.errors[1:])
