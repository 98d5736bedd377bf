"""Read package indexes: PyPI's simple API (PEP 691 JSON) and PyTorch's per-variant pages (PEP 503).

Two sources feed ``setup-env matrix refresh``:

* PyPI, ``GET {pypi}/torch/`` with ``Accept: application/vnd.pypi.simple.v1+json``; a real answer::

    {"meta": {"api-version": "1.1", "_last-serial": "42872345"}, "name": "torch",
     "versions": ["1.0.0", ...],
     "files": [{"filename": "torch-2.9.1-cp314-cp314t-win_amd64.whl", "requires-python": ">=3.10",
                "size": 111163659, "upload-time": "2025-11-12T15:23:20.009736Z", "url": "https://...",
                "hashes": {"sha256": "c88d..."}, "yanked": false}, ...]}

  ``matrix refresh`` takes PyPI's facts only from such a JSON answer (:func:`check_pypi`): an
  HTML page there (a mirror that only speaks PEP 503, an error page, a PyTorch variant page put
  behind the PyPI URL) is an answer of the wrong kind and is refused. PyPI never carries a wheel
  with a local version label (``+cpu``), so a "PyPI" page listing one is refused too.
* PyTorch's index, ``GET {index}/{variant}/torch/``, a PEP 503 page (HTML only)::

    <h1>Links for torch</h1>
    <a href="/whl/cu117/torch-1.13.0%2Bcu117-cp310-cp310-win_amd64.whl#sha256=a0b8...">
      torch-1.13.0+cu117-cp310-cp310-win_amd64.whl</a><br/>

Everything read is validated before it is kept: wheel filenames by
``packaging.utils.parse_wheel_filename`` and then by strict patterns for the parts that end up in
data (release version ``X.Y.Z``, interpreter and platform tags, variant names), links must be
``http(s)`` or relative, answers have a size limit, a content type, and a deadline. A file that
fails is *rejected* (counted, with the reason), never kept, so nothing an index says can reach a
printed install command. A whole answer is refused (``IndexFetchError`` kind ``wrong-kind``) when
it is not what was asked: HTML where PEP 691 JSON was asked, a page whose ``name`` (JSON) or
``Links for ...`` heading (HTML) names another project, an HTML page cut short (it opens
``<html>`` and never closes it). The HTTP client is ``setup_env.bounded.net.http_request``
(``requests``, one deadline for the whole exchange); :func:`fetch_snapshot` holds every page
to one deadline for the whole snapshot.

Nothing here prints: progress goes through a callback the CLI layer passes in.
"""

from __future__ import annotations

import html.parser
import re
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from setup_env._record import Record, record
from setup_env.knowledge.variant import is_index_label

PACKAGES = ("torch", "torchvision", "torchaudio")
PEP691_JSON = "application/vnd.pypi.simple.v1+json"
PEP691_HTML = "application/vnd.pypi.simple.v1+html"
ACCEPT = f"{PEP691_JSON}, {PEP691_HTML};q=0.2, text/html;q=0.1"
DEFAULT_PYPI_URL = "https://pypi.org/simple"
DEFAULT_INDEX_URL = "https://download.pytorch.org/whl"
DEFAULT_TIMEOUT = 20.0  # one request, at most (a silent host is given up on after this)
SNAPSHOT_TIMEOUT = 180.0  # a whole snapshot (~35 pages, ~1 MiB each, on a slow link)
MAX_BYTES = 16 * 1024 * 1024  # PyPI's torch answer is ~0.4 MiB, a variant page ~1 MiB
MAX_REDIRECTS = 5

# The only shapes that may enter the data (and so, later, a printed command).
RELEASE_RE = re.compile(r"\d{1,3}\.\d{1,3}(?:\.\d{1,3})?")
INTERPRETER_RE = re.compile(r"(?:cp|py|pp)\d{1,3}[a-z]{0,2}")
PLATFORM_RE = re.compile(r"[a-z0-9_]{1,64}")
PROJECT_RE = re.compile(r"[a-z0-9]+(?:[-_.][a-z0-9]+)*")


class IndexFetchError(Exception):
    """Fetching or reading one index page failed; ``kind`` says how (for the one-line message)."""

    def __init__(self, url: str, kind: str, detail: str) -> None:
        super().__init__(f"{url}: {detail}")
        self.url = url
        # unreachable | timeout | http | too-large | content-type | invalid
        # | wrong-kind (an answer, but not the one asked: HTML for JSON, another project, cut short)
        # | deadline (not asked, or cut off: the whole snapshot's deadline passed)
        self.kind = kind
        self.detail = detail

    @property
    def unreachable(self) -> bool:
        return self.kind in ("unreachable", "timeout")


def is_variant(name: str) -> bool:
    return is_index_label(name)


# --- wheel filenames ---------------------------------------------------------------------------


@record
class WheelFile(Record):
    """One validated wheel of an index answer."""

    project: str  # normalized: torch, torchvision, torchaudio
    release: str  # "2.13.0" (the public version, no local label)
    variant: Optional[str]  # "cu130" from "+cu130"; None when the filename has no local label
    interpreters: tuple[str, ...]  # "cp312", "cp313t" (free-threaded), "cp37m", "py3"
    platforms: tuple[str, ...]  # "manylinux_2_28_x86_64", "win_amd64", "macosx_14_0_arm64"
    filename: str
    requires_python: Optional[str] = None
    upload_time: Optional[str] = None
    size: Optional[int] = None
    yanked: bool = False


@record
class Rejected(Record):
    """A file an index listed that was not taken, and why."""

    filename: str
    reason: str


def _interpreter(python_tag: str, abi_tag: str) -> str:
    """cp313 + cp313t -> cp313t; cp37 + cp37m -> cp37m; cp310 + none -> cp310; py3 + none -> py3."""
    if abi_tag.startswith("cp") and abi_tag != "abi3":
        return abi_tag
    return python_tag


def parse_wheel(
    filename: str, project: str, *, allow_prerelease: bool = False
) -> tuple[Optional[WheelFile], Optional[str]]:
    """(wheel, None) when ``filename`` is a valid wheel of ``project``; (None, reason) otherwise.

    ``reason`` is None for files that are simply not of interest (sdists, other projects'
    files, pre-releases), a string for files that are invalid and must be reported.
    """
    from packaging.utils import (
        InvalidWheelFilename,
        canonicalize_name,
        parse_wheel_filename,
    )
    from packaging.version import InvalidVersion

    if not filename.endswith(".whl"):
        return None, None  # sdist or other artefact: not a wheel, not an error
    if len(filename) > 255 or any(
        c.isspace() or ord(c) < 32 or c in "\"'<>;&|`$\\/" for c in filename
    ):
        return None, "characters not allowed in a wheel filename"
    try:
        name, version, _build, tags = parse_wheel_filename(filename)
    except (InvalidWheelFilename, InvalidVersion) as exc:
        return None, f"not a valid wheel filename ({exc})"
    if canonicalize_name(name) != canonicalize_name(project):
        return None, f"belongs to {name}, not {project}"
    if (version.is_prerelease or version.is_devrelease) and not allow_prerelease:
        return None, None
    release = version.base_version if version.local else str(version)
    if version.post is not None or version.epoch:
        return None, None  # 0.2.2.post2 and the like: real, but never a matrix release
    if not RELEASE_RE.fullmatch(release):
        return None, f"version {version} is not a plain release"
    variant = version.local
    if variant is not None and not is_variant(variant):
        return None, f"local label +{variant} is not a known variant pattern"
    interpreters = sorted({_interpreter(t.interpreter, t.abi) for t in tags})
    platforms = sorted({t.platform for t in tags})
    for t in interpreters:
        if not INTERPRETER_RE.fullmatch(t):
            return None, f"interpreter tag {t!r} not allowed"
    for p in platforms:
        if not PLATFORM_RE.fullmatch(p):
            return None, f"platform tag {p!r} not allowed"
    return (
        WheelFile(
            project=canonicalize_name(project),
            release=release,
            variant=variant,
            interpreters=tuple(interpreters),
            platforms=tuple(platforms),
            filename=filename,
        ),
        None,
    )


# --- answers -----------------------------------------------------------------------------------


@dataclass
class Listing:
    """The validated content of one index answer."""

    project: str
    url: str
    wheels: list[WheelFile] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    ignored: int = 0  # sdists, pre-releases: not errors
    form: str = ""  # "pep691-json" | "pep503-html"


def _safe_link(href: str) -> bool:
    """http(s) or relative; nothing else (javascript:, data:, file:, ftp:, //evil...)."""
    if any(ord(c) < 32 or c.isspace() for c in href):
        return False
    parts = urllib.parse.urlsplit(href)
    if parts.scheme:
        return parts.scheme in ("http", "https") and bool(parts.netloc)
    return not href.startswith("//")


def _add(listing: Listing, filename: str, extra: Mapping[str, Any], allow_prerelease: bool) -> None:
    wheel, reason = parse_wheel(filename, listing.project, allow_prerelease=allow_prerelease)
    if wheel is None:
        if reason is None:
            listing.ignored += 1
        else:
            listing.rejected.append(Rejected(filename[:200], reason))
        return
    requires = extra.get("requires-python")
    if requires is not None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            requires = str(SpecifierSet(requires))
        except (InvalidSpecifier, TypeError):
            listing.rejected.append(Rejected(filename, f"bad Requires-Python {requires!r}"))
            return
    upload = extra.get("upload-time")
    if upload is not None and not (
        isinstance(upload, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z?", upload)
    ):
        listing.rejected.append(Rejected(filename, f"bad upload-time {upload!r}"))
        return
    size = extra.get("size")
    if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size < 0):
        listing.rejected.append(Rejected(filename, f"bad size {size!r}"))
        return
    yanked = extra.get("yanked", False)
    listing.wheels.append(
        WheelFile(
            project=wheel.project,
            release=wheel.release,
            variant=wheel.variant,
            interpreters=wheel.interpreters,
            platforms=wheel.platforms,
            filename=wheel.filename,
            requires_python=requires,
            upload_time=upload,
            size=size,
            yanked=bool(yanked),
        )
    )


def parse_pep691(
    data: bytes | str, project: str, url: str = "", *, allow_prerelease: bool = False
) -> Listing:
    """A PEP 691 JSON project page -> Listing; a malformed document raises IndexFetchError."""
    from setup_env import bounded

    try:
        doc = bounded.parse_json(data, "the answer")
    except bounded.InputError as exc:
        raise IndexFetchError(url, "invalid", str(exc)) from None
    if not isinstance(doc, dict):
        raise IndexFetchError(url, "invalid", "not a PEP 691 project page (not an object)")
    meta = doc.get("meta")
    api = meta.get("api-version") if isinstance(meta, dict) else None
    if not isinstance(api, str) or not api.startswith("1."):
        raise IndexFetchError(url, "invalid", f"unsupported simple API version {api!r}")
    from packaging.utils import canonicalize_name

    name = doc.get("name")
    if not isinstance(name, str) or canonicalize_name(name) != canonicalize_name(project):
        raise IndexFetchError(
            url,
            "wrong-kind",
            f"answer is for project {bounded.one_line(repr(name), 80)}, not {project!r}",
        )
    files = doc.get("files")
    if not isinstance(files, list):
        raise IndexFetchError(url, "invalid", "no files list")
    listing = Listing(project=canonicalize_name(project), url=url, form="pep691-json")
    for entry in files:
        if not isinstance(entry, dict) or not isinstance(entry.get("filename"), str):
            listing.rejected.append(Rejected(repr(entry)[:80], "file entry without a filename"))
            continue
        link = entry.get("url")
        if not isinstance(link, str) or not _safe_link(link):
            listing.rejected.append(Rejected(entry["filename"][:200], f"unsafe url {link!r:.80}"))
            continue
        link_name = urllib.parse.unquote(urllib.parse.urlsplit(link).path.rsplit("/", 1)[-1])
        if link_name != entry["filename"]:
            listing.rejected.append(Rejected(entry["filename"][:200], "url and filename differ"))
            continue
        yanked = entry.get("yanked", False)
        extra = {
            "requires-python": entry.get("requires-python"),
            "upload-time": entry.get("upload-time"),
            "size": entry.get("size"),
            "yanked": yanked is not False,  # PEP 691: false, true or a reason string
        }
        _add(listing, entry["filename"], extra, allow_prerelease)
    return listing


class _Anchors(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.anchors: list[tuple[dict[str, Optional[str]], str]] = []
        self._current: Optional[dict[str, Optional[str]]] = None
        self._text: list[str] = []
        self.meta_api: Optional[str] = None
        self.headings: list[str] = []  # the text of <title> and <h1>: "Links for torch"
        self._heading: Optional[list[str]] = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Optional[str]]]) -> None:
        if tag == "a":
            self._current = dict(attrs)
            self._text = []
        elif tag in ("title", "h1"):
            self._heading = []
        elif tag == "meta":
            a = dict(attrs)
            if a.get("name") == "pypi:repository-version":
                self.meta_api = a.get("content")

    def handle_data(self, data: str) -> None:
        if self._current is not None:
            self._text.append(data)
        if self._heading is not None:
            self._heading.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._current is not None:
            self.anchors.append((self._current, "".join(self._text).strip()))
            self._current = None
        elif tag in ("title", "h1") and self._heading is not None:
            self.headings.append(" ".join("".join(self._heading).split()))
            self._heading = None


_LINKS_FOR = re.compile(r"links for (\S+)", re.IGNORECASE)


def parse_pep503(
    data: bytes | str, project: str, url: str = "", *, allow_prerelease: bool = False
) -> Listing:
    """A PEP 503 HTML project page -> Listing (anchor text is the filename, href must agree)."""
    from packaging.utils import canonicalize_name

    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise IndexFetchError(url, "invalid", f"page is not UTF-8 ({exc})") from None
    parser = _Anchors()
    try:
        parser.feed(text)
        parser.close()
    except (ValueError, AssertionError) as exc:  # html.parser on broken markup
        raise IndexFetchError(url, "invalid", f"unreadable HTML ({exc})") from None
    if parser.meta_api is not None and not parser.meta_api.startswith("1."):
        raise IndexFetchError(url, "invalid", f"unsupported repository version {parser.meta_api!r}")
    lower = text.lower()
    if not parser.anchors and "<a" not in lower and "<html" not in lower:
        raise IndexFetchError(url, "invalid", "not an HTML project page")
    if "<html" in lower and "</html>" not in lower:
        raise IndexFetchError(url, "wrong-kind", "the page is cut short (it never closes <html>)")
    for heading in parser.headings:  # PEP 503 pages say "Links for <project>" (PyPI, PyTorch)
        m = _LINKS_FOR.fullmatch(heading)
        if m and canonicalize_name(m.group(1)) != canonicalize_name(project):
            from setup_env import bounded

            raise IndexFetchError(
                url,
                "wrong-kind",
                f"a page for {bounded.one_line(m.group(1), 60)!r}, not {project!r}",
            )
    listing = Listing(project=canonicalize_name(project), url=url, form="pep503-html")
    for attrs, label in parser.anchors:
        href = attrs.get("href") or ""
        if not _safe_link(href):
            listing.rejected.append(Rejected(label[:200], f"unsafe link {href!r:.80}"))
            continue
        link_name = urllib.parse.unquote(urllib.parse.urlsplit(href).path.rsplit("/", 1)[-1])
        if label != link_name:
            listing.rejected.append(Rejected(label[:200], "link text and href differ"))
            continue
        extra: dict[str, Any] = {
            "requires-python": attrs.get("data-requires-python"),
            "yanked": "data-yanked" in attrs,
        }
        _add(listing, label, extra, allow_prerelease)
    return listing


# --- HTTP --------------------------------------------------------------------------------------


@record
class Answer(Record):
    """One index page as fetched: final URL, status, type and body."""

    url: str  # after redirects
    status: int
    content_type: str
    body: bytes
    elapsed: float


class Fetcher:
    """GET with one deadline, a size limit and redirect rules; every failure is an
    IndexFetchError.

    The deadline (``timeout``) covers the whole exchange, redirects included: connecting, the
    headers and the body (``bounded.net`` shuts the connection down when it passes), so a server
    that drips its headers one byte at a time is cut off at the deadline like one that is silent.
    Proxies and the CA bundle come from the environment (``https_proxy``, ``no_proxy``,
    ``REQUESTS_CA_BUNDLE``), as requests and pip take them. Redirects are followed here, at most
    MAX_REDIRECTS, never from https to plain http, each hop's body capped."""

    def __init__(
        self,
        timeout: float = DEFAULT_TIMEOUT,
        max_bytes: int = MAX_BYTES,
        user_agent: str = "setup-env",
    ) -> None:
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.user_agent = user_agent

    def close(self) -> None:
        pass  # one connection per request, closed when it is done

    def get(self, url: str, accept: str = ACCEPT, *, within: Any = None) -> Answer:
        """``within``: a ``bounded.Deadline`` this request must also end by (a whole snapshot's):
        the request gets what is left of it when that is less than ``timeout``."""
        from setup_env import bounded
        from setup_env.bounded import net

        start = time.monotonic()
        if not _safe_link(url) or not urllib.parse.urlsplit(url).scheme:
            raise IndexFetchError(url, "invalid", "only http:// and https:// URLs can be fetched")
        seconds = self.timeout
        outer: Optional[bounded.Deadline] = within
        if outer is not None:
            left = outer.left()
            if left <= 0:
                raise IndexFetchError(
                    url, "deadline", f"not asked: the deadline of {outer.seconds:g} s had passed"
                )
            seconds = min(seconds, left)
        deadline = bounded.Deadline(seconds)
        headers = {"Accept": accept, "User-Agent": self.user_agent}
        current = url
        for _hop in range(MAX_REDIRECTS + 1):
            try:
                resp = net.http_request(
                    current, deadline, headers=headers, max_bytes=self.max_bytes
                )
            except net.HttpError as exc:
                # the whole deadline ran out, not this host's patience: not a dead host
                if exc.kind == "timeout" and outer is not None and outer.left() <= 0.05:
                    raise IndexFetchError(
                        url, "deadline", f"no answer before the deadline of {outer.seconds:g} s"
                    ) from None
                raise IndexFetchError(url, _KINDS.get(exc.kind, "invalid"), exc.detail) from None
            if resp.status in (301, 302, 303, 307, 308) and resp.headers.get("location"):
                target = urllib.parse.urljoin(current, resp.headers["location"].strip())
                if urllib.parse.urlsplit(target).scheme not in ("http", "https"):
                    raise IndexFetchError(
                        url, "invalid", f"redirected to {bounded.one_line(target, 80)!r}"
                    )
                if current.startswith("https:") and target.startswith("http:"):
                    raise IndexFetchError(url, "invalid", "redirected from https to plain http")
                current = target
                continue
            if resp.status != 200:
                raise IndexFetchError(
                    url, "http", f"HTTP {resp.status} {bounded.one_line(resp.reason, 60)}".strip()
                )
            ctype = resp.headers.get("content-type", "").split(";")[0].strip().lower()
            return Answer(current, resp.status, ctype, resp.body, time.monotonic() - start)
        raise IndexFetchError(url, "http", f"more than {MAX_REDIRECTS} redirects")


# net.HttpError kinds -> IndexFetchError kinds
_KINDS = {
    "unreachable": "unreachable",
    "timeout": "timeout",
    "too-large": "too-large",
    "broken": "invalid",
}


def read_answer(
    answer: Answer, project: str, *, allow_prerelease: bool = False, expect: str = "any"
) -> Listing:
    """Parse an answer by its content type (PEP 691 JSON, or PEP 503 / PEP 691 HTML).

    ``expect="json"``: only PEP 691 JSON was asked for (PyPI's facts come from nothing else); an
    HTML answer is refused (``wrong-kind``) instead of read."""
    if answer.content_type == PEP691_JSON or answer.content_type == "application/json":
        return parse_pep691(answer.body, project, answer.url, allow_prerelease=allow_prerelease)
    if expect == "json":
        from setup_env import bounded

        got = bounded.one_line(answer.content_type or "(no content type)", 60)
        kind = "wrong-kind" if answer.content_type in (PEP691_HTML, "text/html") else "content-type"
        raise IndexFetchError(
            answer.url, kind, f"answered {got} where PEP 691 JSON ({PEP691_JSON}) was asked"
        )
    if answer.content_type in (PEP691_HTML, "text/html"):
        return parse_pep503(answer.body, project, answer.url, allow_prerelease=allow_prerelease)
    raise IndexFetchError(
        answer.url, "content-type", f"unexpected content type {answer.content_type or '(none)'!r}"
    )


def check_pypi(listing: Listing) -> None:
    """IndexFetchError (``wrong-kind``) when ``listing`` cannot be PyPI's: PyPI refuses uploads
    with a local version label, so a page with ``torch-2.13.0+cpu-...`` wheels is another index's
    page (a PyTorch variant page behind the PyPI URL), not PyPI's facts."""
    labels = sorted({w.variant for w in listing.wheels if w.variant is not None})
    if labels:
        shown = ", ".join(f"+{v}" for v in labels[:3]) + (", ..." if len(labels) > 3 else "")
        raise IndexFetchError(
            listing.url,
            "wrong-kind",
            f"lists wheels with a local version label ({shown}), which PyPI never serves: "
            "not a PyPI project page",
        )


def project_url(base: str, project: str, variant: Optional[str] = None) -> str:
    """``{base}/{variant}/{project}/`` with each part validated (no injection into the path)."""
    if not PROJECT_RE.fullmatch(project):
        raise ValueError(f"bad project name {project!r}")
    if variant is not None and not is_variant(variant):
        raise ValueError(f"bad variant name {variant!r}")
    root = base.rstrip("/")
    return f"{root}/{variant}/{project}/" if variant else f"{root}/{project}/"


# --- a whole snapshot --------------------------------------------------------------------------


@dataclass
class Snapshot:
    """Everything one refresh read, validated; the CLI turns it into matrix data."""

    pypi: dict[str, Listing] = field(default_factory=dict)  # project -> listing
    variants: dict[str, Listing] = field(default_factory=dict)  # variant -> torch listing
    absent_variants: list[str] = field(default_factory=list)  # 404: the index has no such page
    errors: list[IndexFetchError] = field(default_factory=list)
    fetched: int = 0

    @property
    def reached_any(self) -> bool:
        return bool(self.pypi or self.variants or self.absent_variants)

    @property
    def rejected(self) -> list[tuple[str, Rejected]]:
        out = [(lst.url, r) for lst in self.pypi.values() for r in lst.rejected]
        out += [(lst.url, r) for lst in self.variants.values() for r in lst.rejected]
        return out


Progress = Callable[[str], None]


def fetch_snapshot(
    *,
    pypi_url: str = DEFAULT_PYPI_URL,
    index_url: Optional[str] = DEFAULT_INDEX_URL,
    variants: Iterable[str] = (),
    packages: Iterable[str] = PACKAGES,
    timeout: float = SNAPSHOT_TIMEOUT,
    max_bytes: int = MAX_BYTES,
    progress: Optional[Progress] = None,
    fetcher: Optional[Fetcher] = None,
    deadline: Any = None,
) -> Snapshot:
    """Fetch PyPI's pages for ``packages`` and PyTorch's torch page for each variant.

    ``timeout`` (or ``deadline``, a ``bounded.Deadline`` the caller already started) is one
    deadline for the whole snapshot: each request gets what is left of it, at most
    ``DEFAULT_TIMEOUT``; once it has passed, the pages not yet asked are not asked (each is an
    error of kind ``deadline``). A host that cannot be reached at all (DNS, refused, timeout) is
    not asked again in the same run. PyPI's pages are asked for PEP 691 JSON and refused in any
    other form (:func:`read_answer`, :func:`check_pypi`).
    """
    from setup_env import bounded
    from setup_env.bounded import net

    say = progress or (lambda _m: None)
    snap = Snapshot()
    if deadline is None:
        net.load()  # the HTTP client's import is not the indexes' time
    until: bounded.Deadline = deadline if deadline is not None else bounded.Deadline(timeout)
    own = fetcher is None
    client = fetcher or Fetcher(timeout=min(DEFAULT_TIMEOUT, until.seconds), max_bytes=max_bytes)
    dead_hosts: set[str] = set()

    def fetch(url: str, project: str, pypi: bool) -> Optional[Listing]:
        """The listing of ``url``; None after recording why there is none (a 404 of a variant
        page is recorded by the caller, from the error it gets)."""
        host = urllib.parse.urlsplit(url).netloc
        if until.left() <= 0:
            detail = f"not asked: the deadline of {until.seconds:g} s had passed"
            snap.errors.append(IndexFetchError(url, "deadline", detail))
            return None
        if host in dead_hosts:
            snap.errors.append(IndexFetchError(url, "unreachable", "skipped: host unreachable"))
            return None
        try:
            answer = client.get(url, PEP691_JSON if pypi else ACCEPT, within=until)
            snap.fetched += 1
            listing = read_answer(answer, project, expect="json" if pypi else "any")
            if pypi:
                check_pypi(listing)
        except IndexFetchError as exc:
            if not pypi and exc.kind == "http" and exc.detail.startswith("HTTP 404"):
                raise
            if exc.unreachable:
                dead_hosts.add(host)
            snap.errors.append(exc)
            say(f"  {url}: {exc.detail}")
            return None
        say(
            f"  {url}: {len(listing.wheels)} wheels"
            + (f", {len(listing.rejected)} rejected" if listing.rejected else "")
            + f" ({human_size(len(answer.body))}, {answer.elapsed:.1f} s)"
        )
        return listing

    try:
        for project in packages:
            listing = fetch(project_url(pypi_url, project), project, pypi=True)
            if listing is not None:
                snap.pypi[listing.project] = listing
        for variant in variants if index_url else ():
            url = project_url(index_url or "", "torch", variant)
            try:
                listing = fetch(url, "torch", pypi=False)
            except IndexFetchError:  # 404: the index has no page for this variant
                snap.absent_variants.append(variant)
                say(f"  {url}: not published (404)")
                continue
            if listing is not None:
                snap.variants[variant] = listing
    finally:
        if own:
            client.close()
    return snap


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} KiB"
    return f"{n / 1024 / 1024:.1f} MiB"
