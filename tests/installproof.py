"""Prove the install commands setup-env prints with the real clients (issue 17 item 1).

A real HTTP server on 127.0.0.1 (a thread) serves a copy of every index a plan's command names,
built from the bundled data, and pip and uv run the printed command against it in dry-run mode
for the planned machine (pip's ``--python-version/--platform/--abi/--implementation
--only-binary=:all:``, uv's ``--python-platform/--python-version``). A command a client refuses,
or that resolves to another wheel than the one the plan names (version with its local label, and
the wheel the target's tags pick), is a failed proof.

The copy (``IndexCopy.from_data``), with tiny stand-in wheels (a valid wheel: ``METADATA`` with
Name, Version, Requires-Python; ``WHEEL`` with the tags; ``RECORD``) whose file names are the real
ones (no dependencies: the proof is about which torch wheel a command selects):

* PyPI (``/pypi/simple/<project>/``, PEP 691 JSON when asked, else PEP 503): torch's files from the
  matrix's ``pypi_files`` (the names of PyPI's captured answer, checked by a test), torchvision's
  from ``companion_files`` and the captured torchvision/torchaudio answers in
  ``tests/fixtures/index``.
* PyTorch's index (``/whl/<variant>/<project>/``, PEP 503 as download.pytorch.org serves it): every
  variant the matrix marks ``verified`` for a release and platform, as ``<version>+<variant>``
  over the interpreters and platform tags of that release's PyPI wheels for the platform (the
  matrix's own assumption, see setup_env/knowledge/matrix.py); a file name captured from the real
  index (``tests/fixtures/index/whl``) replaces the derived one for the same interpreter and
  platform. Companions the same way. Nightly (``/whl/nightly/<variant>/``): one ``.dev`` build
  newer than the newest release per variant and platform the data lists.
* NVIDIA's Jetson redist folders (``/nvidia/redist/jp/<v>/pytorch/``: an HTML listing of the files,
  as NVIDIA's server answers) and the Jetson AI Lab index (``/jetson-ai-lab/jp6/<cu>/<project>/``),
  from ``gpus.json``'s JetPack rows (the wheel file where a row names it; else, for an unconfirmed
  row, a ``torch-<version>-<cpXY>-<abi>-linux_aarch64.whl`` of the row's Python).

The only change made to a printed command: the hosts it names are mapped to the loopback server,
prefix for prefix (``REWRITES``: https://download.pytorch.org/whl -> http://127.0.0.1:PORT/whl,
PyPI -> /pypi/simple, NVIDIA's redist -> /nvidia/redist, the Jetson AI Lab -> /jetson-ai-lab), in
the argv and in a configuration file (requirements.txt, pyproject.toml); PyPI, the default index a
command without ``--index-url`` reaches, is given to the clients as their default index
(``PIP_INDEX_URL``, ``UV_INDEX_URL``), which an ``--index-url`` in the command replaces, as
it replaces PyPI. A URL the map does not cover fails the proof before any client runs, so nothing
leaves the machine. The clients are isolated from the machine's configuration
(``PIP_CONFIG_FILE=/dev/null``, every other ``PIP_*``/``UV_*`` variable removed, ``UV_NO_CONFIG``,
no caches, no proxies).

How each installer format is proven:

* ``pip install ...``: by pip, and the same arguments by ``uv pip install`` (a cross-check);
* ``uv pip install ...``: by uv;
* ``pip install -r requirements.txt`` (the requirements format): the printed file, by pip and uv;
* ``uv sync`` / ``uv add`` (uv-project): the printed pyproject snippet, completed with a name,
  version and ``requires-python``, read by uv (``uv pip install -r pyproject.toml``, which honours
  ``[[tool.uv.index]]`` and ``[tool.uv.sources]`` as ``uv sync`` does);
* ``poetry install`` / ``poetry add``: poetry is not run; its snippet is read (TOML) and each
  dependency resolved by uv from the source it names (an explicit source is the only place
  poetry looks for it).
* ``conda env create --file environment.yml``: conda is not run; the file is read (YAML) and its
  ``pip:`` list, which conda hands to ``pip install -r`` as a requirements file, is run by pip and
  uv as one.
* ``pixi install``: pixi is not run; its manifest is read (TOML) and each
  ``[pypi-dependencies]`` entry resolved by uv (pixi's own resolver) from the index it names.

uv cannot target a free-threaded Python (``--python-version 3.14t`` is refused): those commands
are proven by pip only. A wheel whose version is not PEP 440 (NVIDIA's JetPack 4.6.1 wheel) is
refused by uv and by pip >= 24.1; the plan says so in a warning, and the proof accepts the
refusal only when that warning is there.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import http.server
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional

from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, parse_tag
from packaging.version import InvalidVersion, Version

from setup_env.decide.model import Plan
from setup_env.facts import Facts
from setup_env.knowledge import gpus as catalogue
from setup_env.knowledge.matrix import Matrix
from setup_env.knowledge.tags import platform_of_tag

HERE = Path(__file__).resolve().parent
INDEX_FIXTURES = HERE / "fixtures" / "index"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
PYPI_ROOT = "https://pypi.org/simple"
REWRITES: tuple[tuple[str, str], ...] = (
    ("https://download.pytorch.org/whl", "/whl"),
    (PYPI_ROOT, "/pypi/simple"),
    ("https://developer.download.nvidia.com/compute/redist", "/nvidia/redist"),
    ("https://pypi.jetson-ai-lab.io", "/jetson-ai-lab"),
)
NIGHTLY_DATE = "20261201"
COMPANIONS = ("torchvision", "torchaudio")


# --- stand-in wheels -----------------------------------------------------------------------------


@dataclass(frozen=True)
class StandIn:
    """One wheel of the copy: its real file name and what its METADATA says."""

    filename: str
    requires_python: Optional[str] = None

    @property
    def project(self) -> str:
        return self.filename.split("-", 1)[0]

    @property
    def version(self) -> str:
        return self.filename.split("-")[1]

    @property
    def tag_text(self) -> str:
        return "-".join(self.filename[: -len(".whl")].split("-")[-3:])

    @property
    def tags(self) -> frozenset[Tag]:
        return frozenset(parse_tag(self.tag_text))

    def metadata(self) -> str:
        out = f"Metadata-Version: 2.1\nName: {self.project}\nVersion: {self.version}\n"
        if self.requires_python:
            out += f"Requires-Python: {self.requires_python}\n"
        return out


@lru_cache(maxsize=4096)
def wheel_bytes(standin: StandIn) -> bytes:
    """A minimal valid wheel: dist-info METADATA, WHEEL (one Tag line per tag), RECORD."""
    dist = f"{standin.project}-{standin.version}.dist-info"
    tags = sorted(str(t) for t in standin.tags)
    files = {
        f"{dist}/METADATA": standin.metadata(),
        f"{dist}/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: setup-env-tests\nRoot-Is-Purelib: false\n"
            + "".join(f"Tag: {t}\n" for t in tags)
        ),
    }
    record = ""
    for path, text in files.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{path},sha256={digest},{len(data)}\n"
    files[f"{dist}/RECORD"] = record + f"{dist}/RECORD,,\n"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path, text in files.items():
            zf.writestr(zipfile.ZipInfo(path, (2026, 12, 1, 0, 0, 0)), text)
    return buf.getvalue()


def _valid_version(text: str) -> Optional[Version]:
    try:
        return Version(text)
    except InvalidVersion:
        return None


# --- the copy of the indexes ---------------------------------------------------------------------


@dataclass
class IndexCopy:
    """Every file the loopback server serves, by route."""

    pypi: dict[str, list[StandIn]] = field(default_factory=dict)  # project -> files
    whl: dict[str, dict[str, list[StandIn]]] = field(default_factory=dict)  # "cu130" -> project
    redist: dict[str, list[StandIn]] = field(default_factory=dict)  # "v512" -> files
    ai_lab: dict[str, dict[str, list[StandIn]]] = field(default_factory=dict)  # "jp6/cu126"
    _names: Optional[dict[str, StandIn]] = field(default=None, repr=False)
    _platforms: Optional[frozenset[str]] = field(default=None, repr=False)
    _seen: dict[int, set[str]] = field(default_factory=dict, repr=False)

    def add(self, table: dict[str, list[StandIn]], item: StandIn) -> None:
        files = table.setdefault(item.project, [])
        seen = self._seen.setdefault(id(files), set())
        if item.filename not in seen:
            seen.add(item.filename)
            files.append(item)

    def files_at(self, location: str) -> list[StandIn]:
        """``pypi``, ``whl/<route>``, ``redist/<v>``, ``ai-lab/<route>``: every file there."""
        kind, _, route = location.partition("/")
        if kind == "pypi":
            return [f for fs in self.pypi.values() for f in fs]
        if kind == "whl":
            return [f for fs in self.whl.get(route, {}).values() for f in fs]
        if kind == "redist":
            return list(self.redist.get(route, []))
        return [f for fs in self.ai_lab.get(route, {}).values() for f in fs]

    def platform_tags(self) -> frozenset[str]:
        """Every platform tag a served file carries."""
        if self._platforms is None:
            self._platforms = frozenset(
                str(t.platform)
                for loc in self.locations()
                for f in self.files_at(loc)
                for t in f.tags
            )
        return self._platforms

    def by_name(self, filename: str) -> Optional[StandIn]:
        if self._names is None:
            self._names = {f.filename: f for loc in self.locations() for f in self.files_at(loc)}
        return self._names.get(filename)

    def locations(self) -> list[str]:
        return (
            ["pypi"]
            + [f"whl/{r}" for r in self.whl]
            + [f"redist/{r}" for r in self.redist]
            + [f"ai-lab/{r}" for r in self.ai_lab]
        )

    @classmethod
    def from_data(cls, matrix: Matrix, cat: Optional[catalogue.Catalogue] = None) -> IndexCopy:
        copy = cls()
        cat = cat or catalogue.load()
        companions = _Companions(_companion_files(matrix))
        for files in companions.files.values():
            for item in files:
                copy.add(copy.pypi, item)
        captured = _captured_index_files()
        for rel in matrix.releases:
            rp = rel.requires_python or None
            for tag, pas in rel.pypi_files.items():
                for pa in pas:
                    copy.add(copy.pypi, StandIn(f"torch-{rel.version}-{pa}-{tag}.whl", rp))
            for variant, plats in rel.index.items():
                label = variant.index_variant.label
                page = copy.whl.setdefault(label, {})
                for plat, avail in plats.items():
                    if not avail.verified:
                        continue  # the copy holds what the data confirms
                    for tag in rel.platform_tags(plat):
                        for pa in rel.pypi_files[tag]:
                            name = f"torch-{rel.version}+{label}-{pa}-{tag}.whl"
                            real = captured.get((label, f"{rel.version}+{label}", pa, plat))
                            copy.add(page, StandIn(real or name, rp))
                    for comp in COMPANIONS:
                        c = rel.companions.get(comp)
                        if c is None or not c.spec:
                            continue
                        for item in companions.matching(comp, c.spec, plat):
                            version = item.version
                            name = item.filename.replace(f"-{version}-", f"-{version}+{label}-", 1)
                            copy.add(page, StandIn(name, item.requires_python))
        for (label, _version, _pa, _plat), name in captured.items():
            # Every real file captured (the index may hold interpreters PyPI lacks: 2.13.0+cu130
            # has cp315 wheels), and releases the matrix does not list on that page (1.13.0).
            copy.add(copy.whl.setdefault(label, {}), StandIn(name))
        newest = matrix.newest
        dev = f"{newest.version.major}.{newest.version.minor + 1}.0.dev{NIGHTLY_DATE}"
        for plat, variants in matrix.nightly.items():
            for variant in variants:
                page = copy.whl.setdefault(f"nightly/{variant.label}", {})
                for tag in newest.platform_tags(plat):
                    for pa in newest.pypi_files[tag]:
                        name = f"torch-{dev}+{variant.label}-{pa}-{tag}.whl"
                        copy.add(page, StandIn(name, newest.requires_python or None))
        for row in cat.jetpacks:
            if row.index is None or row.torch is None:
                continue
            cp = "cp" + row.python.replace(".", "")
            abi = cp + ("m" if Version(row.python) < Version("3.8") else "")
            name = row.wheel or f"torch-{row.torch}-{cp}-{abi}-linux_aarch64.whl"
            item = StandIn(name, f">={row.python}")
            if "pypi.jetson-ai-lab.io/" in row.index:
                route = row.index.split("pypi.jetson-ai-lab.io/", 1)[1].strip("/")
                copy.add(copy.ai_lab.setdefault(route, {}), item)
            else:
                folder = row.index.rstrip("/").split("/jp/", 1)[1].split("/")[0]
                copy.add({"torch": copy.redist.setdefault(folder, [])}, item)
        return copy


class _Companions:
    """The companions' PyPI wheels, looked up by (project, specifier, platform)."""

    def __init__(self, files: dict[str, list[StandIn]]) -> None:
        self.files = files
        self._cache: dict[tuple[str, str, str], list[StandIn]] = {}

    def matching(self, project: str, spec: str, platform: str) -> list[StandIn]:
        key = (project, spec, platform)
        if key not in self._cache:
            specifier = SpecifierSet(spec)
            self._cache[key] = [
                f
                for f in self.files.get(project, [])
                if platform_of_tag(f.tag_text.split("-")[-1]) == platform
                and (v := _valid_version(f.version)) is not None
                and v in specifier
            ]
        return self._cache[key]


def _companion_files(matrix: Matrix) -> dict[str, list[StandIn]]:
    """torchvision's and torchaudio's PyPI wheels: the matrix's companion_files and the captured
    PyPI answers in tests/fixtures/index (real file names)."""
    out: dict[str, list[StandIn]] = {name: [] for name in COMPANIONS}
    seen: set[str] = set()
    for version, tags in matrix.torchvision_files.items():
        for tag, pas in tags.items():
            for pa in pas:
                name = f"torchvision-{version}-{pa}-{tag}.whl"
                if name not in seen:
                    seen.add(name)
                    out["torchvision"].append(StandIn(name))
    for project in COMPANIONS:
        doc = json.loads((INDEX_FIXTURES / f"pypi-{project}.json").read_text())
        for f in doc["files"]:
            name = f["filename"]
            if name.endswith(".whl") and name not in seen:
                seen.add(name)
                out[project].append(StandIn(name, f.get("requires-python") or None))
    return out


def _captured_index_files() -> dict[tuple[str, str, str, str], str]:
    """(variant, version, interpreter-abi, platform) -> a real file name from the captured pages
    of download.pytorch.org in tests/fixtures/index/whl (SOURCE.md there)."""
    out: dict[tuple[str, str, str, str], str] = {}
    for page in sorted((INDEX_FIXTURES / "whl").glob("*/torch/index.html")):
        label = page.parent.parent.name
        if label == "nightly":
            continue
        for href in re.findall(r'href="([^"#]+)', page.read_text()):
            name = urllib.parse.unquote(href.rsplit("/", 1)[-1])
            if not name.endswith(".whl") or f"+{label}-" not in name:
                continue
            parts = name[: -len(".whl")].split("-")
            plat = platform_of_tag(parts[-1].split(".")[0])
            if plat is not None:
                out[(label, parts[1], f"{parts[-3]}-{parts[-2]}", plat)] = name
    return out


# --- the loopback server -------------------------------------------------------------------------


class _Handler(http.server.BaseHTTPRequestHandler):
    server: LoopbackIndex

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        path = urllib.parse.unquote(self.path.split("?", 1)[0])
        with self.server.lock:
            self.server.requests.append(path)
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._route(path)

    def _route(self, path: str) -> None:
        copy = self.server.copy
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["files"] and len(parts) == 3:
            name = parts[2]
            meta = name.endswith(".whl.metadata")
            item = copy.by_name(name[: -len(".metadata")] if meta else name)
            if item is None:
                self._send(404, b"not found", "text/plain")
            elif meta:
                self._send(200, item.metadata().encode(), "text/plain")
            else:
                self._send(200, wheel_bytes(item), "application/octet-stream")
            return
        if parts[:2] == ["pypi", "simple"] and len(parts) == 3:
            files = copy.pypi.get(_normalise(parts[2]))
            if files is None:
                self._send(404, b"not found", "text/plain")
            elif JSON_TYPE in self.headers.get("Accept", ""):
                self._send(200, _json_page(parts[2], files), JSON_TYPE)
            else:
                self._send(200, _html_page(parts[2], files), "text/html")
            return
        if parts[:1] == ["whl"] and len(parts) >= 3:
            files = copy.whl.get("/".join(parts[1:-1]), {}).get(_normalise(parts[-1]))
            if files is None:
                self._send(404, b"<html>404</html>", "text/html")
            else:
                self._send(200, _html_page(parts[-1], files), "text/html")
            return
        if parts[:2] == ["jetson-ai-lab", "jp6"] and len(parts) == 4:
            files = copy.ai_lab.get("/".join(parts[1:3]), {}).get(_normalise(parts[3]))
            if files is None:
                self._send(404, b"not found", "text/plain")
            else:
                self._send(200, _html_page(parts[3], files), "text/html")
            return
        if parts[:3] == ["nvidia", "redist", "jp"] and len(parts) >= 5 and parts[4] == "pytorch":
            folder = copy.redist.get(parts[3])
            if folder is None:
                self._send(404, b"not found", "text/plain")
            elif len(parts) == 5:  # NVIDIA's folder listing: plain anchors, relative hrefs
                body = "".join(
                    f'<a href="{urllib.parse.quote(f.filename)}">{html.escape(f.filename)}</a>\n'
                    for f in folder
                )
                self._send(
                    200, f"<html><body><pre>\n{body}</pre></body></html>".encode(), "text/html"
                )
            else:
                item = next((f for f in folder if f.filename == parts[5]), None)
                if item is None:
                    self._send(404, b"not found", "text/plain")
                else:
                    self._send(200, wheel_bytes(item), "application/octet-stream")
            return
        self._send(404, b"not found", "text/plain")


def _normalise(project: str) -> str:
    return re.sub(r"[-_.]+", "-", project).lower()


def _file_url(item: StandIn) -> str:
    return f"/files/{abs(hash(item.filename)) % 10**8}/{urllib.parse.quote(item.filename)}"


def _html_page(project: str, files: Sequence[StandIn]) -> bytes:
    lines = [
        "<!DOCTYPE html>",
        "<html>",
        "  <body>",
        f"    <h1>Links for {html.escape(project)}</h1>",
    ]
    for f in files:
        rp = (
            f' data-requires-python="{html.escape(f.requires_python)}"' if f.requires_python else ""
        )
        lines.append(
            f'    <a href="{_file_url(f)}"{rp} data-dist-info-metadata="true" '
            f'data-core-metadata="true">{html.escape(f.filename)}</a><br/>'
        )
    lines += ["  </body>", "</html>", ""]
    return "\n".join(lines).encode()


def _json_page(project: str, files: Sequence[StandIn]) -> bytes:
    doc = {
        "meta": {"api-version": "1.1"},
        "name": _normalise(project),
        "files": [
            {
                "filename": f.filename,
                "url": _file_url(f),
                "hashes": {},
                "requires-python": f.requires_python,
                "core-metadata": True,
                "dist-info-metadata": True,
            }
            for f in files
        ],
    }
    return json.dumps(doc).encode()


class LoopbackIndex(http.server.ThreadingHTTPServer):
    """The copy, served on 127.0.0.1 from a thread; use as a context manager."""

    daemon_threads = True

    def __init__(self, copy: IndexCopy) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.copy = copy
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> LoopbackIndex:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


# --- the machine a command is run for ---------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """The interpreter a plan is for, as the clients' cross-platform options describe it."""

    python: str  # "3.12"
    abi: str  # "cp312", "cp36m", "cp314t"
    platforms: tuple[str, ...]  # platform tags, most specific first
    free_threaded: bool

    @classmethod
    def of(cls, facts: Facts) -> Target:
        tags = facts.python.tags
        if facts.os.family == "linux" and facts.os.glibc is None and facts.python.version:
            # The plan says it assumes a current glibc where the facts name none: so does the
            # proof (the planner's own tag derivation, setup_env.decide.plan.interpreter_tags).
            from setup_env.decide.plan import interpreter_tags

            machine = facts.python.machine or facts.cpu.architecture or "x86_64"
            tags = interpreter_tags(
                facts.python.version, facts.python.free_threaded, "linux", machine, None, None
            )
        if not tags:
            raise ValueError("the facts carry no interpreter tags")
        interp, abi, _plat = tags[0].split("-", 2)
        plats: list[str] = []
        for t in tags:
            p = t.split("-", 2)[2]
            if p not in plats:
                plats.append(p)
        return cls(f"{interp[2]}.{interp[3:]}", abi, tuple(plats), facts.python.free_threaded)

    @property
    def key(self) -> str:
        return f"{self.abi}-{self.platforms[0]}"

    @property
    def version_tuple(self) -> tuple[int, int]:
        major, minor = self.python.split(".")
        return int(major), int(minor)

    def priority(self) -> list[Tag]:
        """The tags an interpreter of this target accepts, best first (packaging's order)."""
        interp = f"cp{self.python.replace('.', '')}"
        out = list(cpython_tags(self.version_tuple, [self.abi], list(self.platforms)))
        out += list(compatible_tags(self.version_tuple, interp, list(self.platforms)))
        return out

    def pip_options(self, present: Optional[frozenset[str]] = None) -> list[str]:
        """pip's options for this target. ``present``: the platform tags any served file carries;
        the others are left out (a tag no file has cannot be picked, and pip checks every link
        against every tag: 35 manylinux tags make a run seconds long)."""
        opts = ["--python-version", self.python, "--implementation", "cp", "--abi", self.abi]
        opts += ["--abi", "none"] + ([] if self.free_threaded else ["--abi", "abi3"])
        plats = [p for p in self.platforms if present is None or p in present]
        for p in plats or self.platforms[:1]:
            opts += ["--platform", p]
        return opts

    def uv_platform(self) -> tuple[str, dict[str, str]]:
        """uv's ``--python-platform`` value and the environment it needs (macOS target)."""
        first = self.platforms[0]
        if first.startswith("win_"):
            return ("aarch64" if first == "win_arm64" else "x86_64") + "-pc-windows-msvc", {}
        if first.startswith("macosx_"):
            _, major, minor, arch = first.split("_", 3)
            machine = "aarch64" if arch in ("arm64", "universal2") else "x86_64"
            return f"{machine}-apple-darwin", {"MACOSX_DEPLOYMENT_TARGET": f"{major}.{minor}"}
        machine = "aarch64" if first.endswith("aarch64") else "x86_64"
        glibc = max(
            (int(m.group(1)) for p in self.platforms if (m := re.match(r"manylinux_2_(\d+)_", p))),
            default=17,
        )
        # uv knows manylinux_2_17, 2_28 and 2_31 ... 2_40
        allowed = [17, 28, *range(31, 41)]
        return f"{machine}-manylinux_2_{max(a for a in allowed if a <= max(glibc, 17))}", {}


# --- what a plan names ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """The wheels a plan names for a target: project -> file name (None: the plan names a project
    but the copy holds no wheel of it for the target, itself a failed proof)."""

    wheels: Mapping[str, Optional[str]]
    location: str
    unrunnable: str = ""  # why no client can run this command (a non-PEP 440 wheel)


def plan_location(plan: Plan) -> str:
    """Where the plan says its torch comes from (from its fields, never from its argv)."""
    if plan.source == "jetson":
        row = catalogue.load().jetpack(plan.details.get("jetpack", ""))
        assert row is not None and row.index is not None
        if row.index.startswith("https://pypi.jetson-ai-lab.io/"):
            return "ai-lab/" + row.index.split("pypi.jetson-ai-lab.io/", 1)[1].strip("/")
        return "redist/" + row.index.rstrip("/").split("/jp/", 1)[1].split("/")[0]
    if plan.index_url:
        for prefix in ("https://download.pytorch.org/whl/",):
            if plan.index_url.startswith(prefix):
                return "whl/" + plan.index_url[len(prefix) :].strip("/")
        raise ValueError(f"no copy of {plan.index_url}")
    return "pypi"


def expected(plan: Plan, target: Target, copy: IndexCopy) -> Expected:
    location = plan_location(plan)
    files = copy.files_at(location)
    priority = {t: i for i, t in enumerate(target.priority())}
    wheels: dict[str, Optional[str]] = {}
    unrunnable = ""
    label = plan.variant.index_variant.label if plan.variant is not None else ""
    for req in plan.requirements:
        name = re.split(r"[ =<>!~@\[;]", req, maxsplit=1)[0]
        if plan.source == "jetson" and name == "torch":
            row = catalogue.load().jetpack(plan.details.get("jetpack", ""))
            assert row is not None
            pick = [f for f in files if f.project == "torch" and f.version == row.torch]
        else:
            spec = req[len(name) :].strip()
            pick = []
            for f in files:
                if f.project != name:
                    continue
                v = _valid_version(f.version)
                if v is None:
                    continue
                if location.startswith("whl/") and v.local != label:
                    continue
                if name == "torch" and plan.torch_version:
                    if v.public != plan.torch_version:
                        continue
                elif spec and not SpecifierSet(spec).contains(v, prereleases=True):
                    continue
                pick.append(f)
        ranked = [
            (min((priority[t] for t in f.tags if t in priority), default=None), f) for f in pick
        ]
        ok = [(r, f) for r, f in ranked if r is not None and _python_ok(f, target)]
        if not ok:
            wheels[name] = None
            continue
        newest = max(
            Version(f.version) if _valid_version(f.version) else Version("0") for _, f in ok
        )
        best = min(
            (rf for rf in ok if (_valid_version(rf[1].version) or Version("0")) == newest),
            key=lambda rf: rf[0],
        )
        wheels[name] = best[1].filename
        if _valid_version(best[1].version) is None:
            unrunnable = f"{best[1].filename}: its version is not PEP 440"
    return Expected(wheels, location, unrunnable)


def _python_ok(f: StandIn, target: Target) -> bool:
    if not f.requires_python:
        return True
    return SpecifierSet(f.requires_python).contains(f"{target.python}.0", prereleases=True)


# --- running the clients -------------------------------------------------------------------------


@dataclass(frozen=True)
class Invocation:
    """One client run of one printed command for one target."""

    format: str  # pip | uv | requirements | uv-project | poetry
    client: str  # pip | uv
    command: str  # the printed command (and its configuration), as shown to the user
    args: tuple[str, ...]  # the install arguments after the map (for pip/uv: after `install`)
    files: tuple[tuple[str, str], ...] = ()  # (name, text) written into the working folder
    target: Optional[Target] = None

    @property
    def key(self) -> tuple[Any, ...]:
        return (self.client, self.args, self.files, self.target)


@dataclass(frozen=True)
class Outcome:
    invocation: Invocation
    ok: bool
    chosen: Mapping[str, str]  # project -> the wheel file the client picked
    message: str


def rewrite(text: str, base: str) -> str:
    for real, local in REWRITES:
        text = text.replace(real, base + local)
    return text


def foreign_urls(texts: Iterable[str], base: str) -> list[str]:
    urls = [u for t in texts for u in re.findall(r"[a-z][a-z0-9+.-]*://[^\s'\"\],]+", t)]
    return [u for u in urls if not u.startswith(base + "/")]


def installer_format(plan: Plan) -> str:
    """Which installer format a printed command is: pip, uv, requirements, uv-project, poetry."""
    argv = list(plan.argv)
    if argv[:3] == ["pip", "install", "-r"]:
        return "requirements"
    if argv[:2] == ["pip", "install"]:
        return "pip"
    if argv[:3] == ["uv", "pip", "install"]:
        return "uv"
    if argv[:2] in (["uv", "sync"], ["uv", "add"]):
        return "uv-project"
    if argv[:2] in (["poetry", "install"], ["poetry", "add"]):
        return "poetry"
    if argv == ["conda", "env", "create", "--file", "environment.yml"]:
        return "conda"
    if argv == ["pixi", "install"]:
        return "pixi"
    raise AssertionError(f"a command the harness does not know: {plan.command!r}")


def invocations(plan: Plan, target: Target, base: str) -> list[Invocation]:
    """The client runs that prove a plan's printed command, after the host map."""
    fmt = installer_format(plan)
    argv = [rewrite(a, base) for a in plan.argv]
    config = rewrite(plan.config, base) if plan.config is not None else None
    shown = plan.command + (f"\n{plan.config}" if plan.config else "")
    out: list[Invocation] = []

    def run_by(
        clients: Sequence[str], args: Sequence[str], files: Sequence[tuple[str, str]] = ()
    ) -> None:
        for client in clients:
            out.append(Invocation(fmt, client, shown, tuple(args), tuple(files), target))

    if fmt == "pip":
        run_by(("pip", "uv"), argv[2:])
    elif fmt == "uv":
        run_by(("uv",), argv[3:])
    elif fmt == "requirements":
        assert argv == ["pip", "install", "-r", "requirements.txt"] and config is not None, argv
        run_by(("pip", "uv"), argv[2:], [("requirements.txt", config)])
    elif fmt == "uv-project":
        assert config is not None, plan.command
        body = config.replace(
            "[project]\n",
            f'[project]\nname = "proof"\nversion = "0"\nrequires-python = ">={target.python}"\n',
            1,
        )
        run_by(("uv",), ["-r", "pyproject.toml"], [("pyproject.toml", body)])
    elif fmt == "conda":
        assert config is not None, plan.command
        run_by(("pip", "uv"), ["-r", "requirements.txt"], [("requirements.txt", conda_pip(config))])
    elif fmt == "pixi":
        assert config is not None, plan.command
        reqs, index, pre = pixi_requirements(config)
        extra = ["--index-url", index] if index else []
        run_by(("uv",), [*reqs, *extra, *(["--prerelease=allow"] if pre else [])])
    else:
        assert config is not None, plan.command
        reqs, index = poetry_requirements(config)
        run_by(("uv",), [*reqs, *(["--index-url", index] if index else [])])
    return out


def conda_pip(config: str) -> str:
    """The ``pip:`` list of a printed environment.yml as the requirements file conda writes from
    it (conda-env's pip installer: one line per item, then ``pip install -U -r``)."""
    import yaml

    doc = yaml.safe_load(config)
    sections = [d["pip"] for d in doc["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, doc
    return "\n".join(str(line) for line in sections[0]) + "\n"


def load_toml(text: str) -> dict[str, Any]:
    try:
        import tomllib  # Python 3.11+
    except ModuleNotFoundError:  # Python 3.9/3.10: the test extra's tomli
        import tomli as tomllib
    doc: dict[str, Any] = tomllib.loads(text)
    return doc


def pixi_requirements(config: str) -> tuple[list[str], Optional[str], bool]:
    """The ``[pypi-dependencies]`` of a printed pixi.toml as requirements, the one index they
    name (the planner names one at most) and whether pre-releases are allowed."""
    doc = load_toml(config)
    reqs: list[str] = []
    index: Optional[str] = None
    for name, value in doc["pypi-dependencies"].items():
        spec = value if isinstance(value, str) else value["version"]
        reqs.append(name if spec == "*" else f"{name}{spec}")
        if isinstance(value, dict) and "index" in value:
            assert index in (None, value["index"])
            index = value["index"]
    pre = doc.get("pypi-options", {}).get("prerelease-mode") == "allow"
    return reqs, index, pre


def poetry_requirements(config: str) -> tuple[list[str], Optional[str]]:
    """The dependencies of a printed ``[tool.poetry.dependencies]`` snippet, as requirements, and
    the URL of the explicit source they name (one at most, as the planner writes them)."""
    try:
        import tomllib  # Python 3.11+

        doc = tomllib.loads(config)
    except ModuleNotFoundError:  # Python 3.9/3.10: the snippet's own two line forms
        doc = _mini_toml(config)
    deps = doc["tool"]["poetry"]["dependencies"]
    sources = {s["name"]: s for s in doc["tool"]["poetry"].get("source", [])}
    reqs: list[str] = []
    index: Optional[str] = None
    for name, value in deps.items():
        spec = value if isinstance(value, str) else value["version"]
        reqs.append(name if spec == "*" else f"{name}=={spec}")
        if isinstance(value, dict) and "source" in value:
            source = sources[value["source"]]
            assert source.get("priority") == "explicit", source
            assert index in (None, source["url"])
            index = source["url"]
    return reqs, index


def _mini_toml(text: str) -> dict[str, Any]:
    deps: dict[str, Any] = {}
    sources: list[dict[str, str]] = []
    section = ""
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("["):
            section = line
            if line == "[[tool.poetry.source]]":
                sources.append({})
            continue
        key, _, value = (p.strip() for p in line.partition("="))
        if section == "[tool.poetry.dependencies]":
            if value.startswith("{"):
                deps[key] = dict(re.findall(r'([\w-]+) = "([^"]*)"', value))
            else:
                deps[key] = json.loads(value)
        elif section == "[[tool.poetry.source]]":
            sources[-1][key] = json.loads(value)
    return {"tool": {"poetry": {"dependencies": deps, "source": sources}}}


def names_an_index(inv: Invocation) -> bool:
    """Does the command (or its requirements file) name the index itself? Then PyPI is not given
    as the clients' default: uv lets an environment variable override a file's --index-url."""
    texts = [*inv.args, *(text for name, text in inv.files if name.endswith(".txt"))]
    return any(
        re.search(r"(^|\s)(--index-url|-i|--default-index|--no-index)\b", t, re.M) for t in texts
    )


def _environment(base: str, extra: Mapping[str, str], pypi: bool = True) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_")) and k.lower() not in _PROXIES
    }
    env.update(
        PIP_CONFIG_FILE=os.devnull,
        PIP_NO_CACHE_DIR="1",
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_NO_INPUT="1",
        UV_NO_CONFIG="1",
        UV_NO_CACHE="1",
        UV_PYTHON_DOWNLOADS="never",
        UV_NO_PROGRESS="1",
        NO_PROXY="*",
        NO_COLOR="1",
    )
    if pypi:
        # PyPI, where a command that names no index goes. uv's --index-url and --default-index
        # are two settings and the second beats the first: give the one a command replaces.
        env.update(PIP_INDEX_URL=f"{base}/pypi/simple", UV_INDEX_URL=f"{base}/pypi/simple")
    env.update(extra)
    return env


_PROXIES = {"http_proxy", "https_proxy", "all_proxy", "no_proxy", "ftp_proxy"}


@lru_cache(maxsize=1)
def uv_binary() -> str:
    """The uv of the test extra (the ``uv`` package's binary), else one on PATH."""
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found]

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError) as exc:
        import shutil

        found = shutil.which("uv")
        if found is None:
            raise RuntimeError(
                "uv is not installed: it is in the test extra (pyproject.toml)"
            ) from exc
        return found


def run(
    inv: Invocation, base: str, timeout: float = 120.0, present: Optional[frozenset[str]] = None
) -> Outcome:
    assert inv.target is not None
    foreign = foreign_urls([*inv.args, *(text for _, text in inv.files)], base)
    if foreign:
        return Outcome(inv, False, {}, f"names hosts the harness has no copy of: {foreign}")
    with tempfile.TemporaryDirectory(prefix="setup-env-proof-") as tmp:
        work = Path(tmp)
        for name, text in inv.files:
            (work / name).write_text(text)
        if inv.client == "pip":
            report = work / "report.json"
            cmd = [
                sys.executable, "-m", "pip", "install", "--dry-run", "--report", str(report),
                "--quiet", "--no-cache-dir", "--disable-pip-version-check", "--no-input",
                "--target", str(work / "target"), "--only-binary=:all:",
                *inv.target.pip_options(present), *inv.args,
            ]  # fmt: skip
            env = _environment(base, {}, pypi=not names_an_index(inv))
        else:
            platform, extra = inv.target.uv_platform()
            cmd = [
                uv_binary(), "pip", "install", "--dry-run", "-v", "--python", sys.executable,
                "--target", str(work / "target"), "--no-cache", "--no-config",
                "--python-platform", platform, "--python-version", inv.target.python, *inv.args,
            ]  # fmt: skip
            env = _environment(base, extra, pypi=not names_an_index(inv))
        try:
            proc = subprocess.run(
                cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return Outcome(inv, False, {}, f"{inv.client} ran past {timeout} s")
        tail = _tail(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            return Outcome(inv, False, {}, f"{inv.client} exit {proc.returncode}: {tail}")
        chosen = (
            _pip_choice(report) if inv.client == "pip" else _uv_choice(proc.stdout + proc.stderr)
        )
        if not chosen:
            return Outcome(inv, False, {}, f"{inv.client} chose nothing: {tail}")
        return Outcome(inv, True, chosen, "")


def _tail(text: str) -> str:
    lines = [
        ln for ln in text.splitlines() if ln.strip() and not ln.startswith(("DEBUG", " TRACE"))
    ]
    return " | ".join(lines[-6:])[-900:]


def _pip_choice(report: Path) -> dict[str, str]:
    doc = json.loads(report.read_text())
    out: dict[str, str] = {}
    for item in doc.get("install", []):
        url = item["download_info"]["url"]
        out[_normalise(item["metadata"]["name"])] = urllib.parse.unquote(url.rsplit("/", 1)[-1])
    return out


_UV_SELECT = re.compile(r"Selecting: (\S+?)==(\S+) \[[^\]]*\] \(([^)]+\.whl)\)")
_UV_PLUS = re.compile(r"^ \+ (\S+?)(?:==(\S+)| @ (\S+))$", re.M)


def _uv_choice(text: str) -> dict[str, str]:
    """What uv would install: the `+ name==version` lines, each with the wheel uv's resolver
    selected for it (`Selecting: name==version [...] (file)`), or the URL's file."""
    selected = {(_normalise(m.group(1)), m.group(2)): m.group(3) for m in _UV_SELECT.finditer(text)}
    out: dict[str, str] = {}
    for m in _UV_PLUS.finditer(text):
        name = _normalise(m.group(1))
        if m.group(3):
            out[name] = urllib.parse.unquote(m.group(3).rsplit("/", 1)[-1])
        else:
            out[name] = selected.get((name, m.group(2)), f"? {m.group(2)} (no Selecting line)")
    return out


# --- proving a plan ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Proof:
    command: str
    format: str
    client: str
    target: str
    ok: bool
    message: str


def check(plan: Plan, want: Expected, outcome: Outcome) -> Proof:
    """One client's outcome held against the wheels the plan names."""
    inv = outcome.invocation
    assert inv.target is not None

    def verdict(ok: bool, message: str) -> Proof:
        return Proof(inv.command, inv.format, inv.client, inv.target.key, ok, message)

    missing = [name for name, f in want.wheels.items() if f is None]
    if missing:
        return verdict(
            False, f"the copy holds no wheel of {missing} at {want.location} for this target"
        )
    if want.unrunnable and not outcome.ok:
        # pip >= 24.1 and uv refuse a non-PEP 440 version (an older pip takes it): accepted only
        # where the plan says so in a warning.
        if "version" in outcome.message.lower() and any("PEP 440" in w for w in plan.warnings):
            return verdict(True, f"refused as the plan warns: {want.unrunnable}")
        return verdict(False, f"{want.unrunnable}, and the plan does not warn: {outcome.message}")
    if not outcome.ok:
        return verdict(False, outcome.message)
    if dict(outcome.chosen) != dict(want.wheels):
        return verdict(
            False, f"resolved to {dict(outcome.chosen)}, the plan names {dict(want.wheels)}"
        )
    for filename in want.wheels.values():
        assert filename is not None
        plat_tag = filename[: -len(".whl")].split("-")[-1]
        platforms = {platform_of_tag(p) for p in plat_tag.split(".")}
        if plan.platform and plan.platform not in platforms:
            return verdict(False, f"{filename} is not a {plan.platform} wheel")
    return verdict(True, "")


def describe(proofs: Sequence[Proof]) -> str:
    bad = [p for p in proofs if not p.ok]
    return "\n".join(
        f"- [{p.format}/{p.client} {p.target}] {p.command!r}: {p.message}" for p in bad
    )


def prove(
    plans: Sequence[tuple[Plan, Facts]], server: LoopbackIndex, workers: int = 0
) -> list[Proof]:
    """Run every client invocation the plans need (each distinct one once, in parallel) and hold
    each outcome against the wheels its plan names."""
    from concurrent.futures import ThreadPoolExecutor

    jobs: list[tuple[Plan, Expected, Invocation]] = []
    for plan, facts in plans:
        target = Target.of(facts)
        want = expected(plan, target, server.copy)
        for inv in invocations(plan, target, server.base):
            if inv.client == "uv" and target.free_threaded:
                continue  # uv has no free-threaded --python-version (module docstring)
            jobs.append((plan, want, inv))
    distinct = {inv.key: inv for _, _, inv in jobs}
    uv_binary()  # once, before the threads (the uv package's lookup reads sysconfig)
    with ThreadPoolExecutor(max_workers=workers or max(2, (os.cpu_count() or 2) * 2)) as pool:
        present = server.copy.platform_tags()
        outcomes = dict(
            zip(
                distinct,
                pool.map(lambda i: run(i, server.base, present=present), distinct.values()),
            )
        )
    return [check(plan, want, outcomes[inv.key]) for plan, want, inv in jobs]
