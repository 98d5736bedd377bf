"""Issue 16, point 4: one door for input, by construction.

``setup_env/bounded/`` (``__init__``; ``net`` for HTTP) is the one package that opens, reads or
parses what setup-env did not write itself (and the one that writes files): every file is a regular
file read with a size cap (a FIFO or a device is refused, never waited on), every command runs in
its own process group with a deadline and an output cap, every HTTP exchange has one deadline and a
capped body, every outside JSON document is parsed with bounds on depth, size and numbers. This test
reads every module under ``setup_env/`` with ``ast`` and fails when any other module does one of
those things itself. What it forbids outside ``bounded/``:

* **Opening a file**: the builtin ``open`` (called or passed on), ``io.open``, ``io.FileIO``,
  ``codecs.open``, ``os.open``, ``os.fdopen``, ``gzip/bz2/lzma.open``, ``zipfile.ZipFile``,
  ``zipfile.Path``, and any ``.open(...)`` method (``Path.open``, ``tarfile.open``): an open
  blocks forever on a FIFO and reads forever from ``/dev/zero``. ``bounded.read_file``,
  ``open_file`` and ``open_zip`` open regular files only.
* **Reading or writing a whole file by path**: the methods ``.read_text``, ``.read_bytes``,
  ``.write_text``, ``.write_bytes`` (pathlib's, or anyone's), ``shutil.copy*``/``move``/
  ``copytree``/``*_archive``, ``tempfile.mkstemp``/``*TemporaryFile``, ``pkgutil.get_data``,
  ``importlib.resources`` readers, ``platform.freedesktop_os_release``, XML ``parse``/
  ``iterparse`` of a path. Writes go through ``bounded.write_file`` (atomic replace) and
  ``bounded.append_file``; the bundled ``setup_env/data/*.json`` through
  ``bounded.read_bundled``.
* **Raw descriptors**: ``os.read``/``pread``/``readv``, ``os.write``/``pwrite``/``writev``,
  ``os.sendfile`` (``bounded.read_chunks`` reads a child's pipe as it comes).
* **Standard input and the terminal**: ``sys.stdin`` (and ``sys.__stdin__``) in any use, the
  builtin ``input``, ``getpass.getpass``, ``fileinput``, ``pty``: ``bounded.read_stdin`` (capped)
  and ``bounded.read_terminal_line`` are the doors.
* **Commands**: ``subprocess.Popen``/``run``/``call``/``check_call``/``check_output``/
  ``getoutput``/``getstatusoutput``, ``os.system``, ``os.popen``, ``os.exec*``, ``os.spawn*``,
  ``os.posix_spawn*``, ``os.startfile``: ``bounded.run`` and ``bounded.popen_group`` start a
  command in its own process group, so a deadline kills its helpers too. (Importing
  ``subprocess`` for ``PIPE``, ``DEVNULL`` or ``TimeoutExpired`` is fine.)
* **The network**: importing ``socket``, ``ssl``, ``http.client``, ``http.server``,
  ``urllib.request``, ``urllib.error``, ``ftplib``, ``smtplib``, ``poplib``, ``imaplib``,
  ``telnetlib``, ``xmlrpc``, ``asyncio``, ``requests``, ``httpx``, ``urllib3``, ``aiohttp``:
  ``bounded.http_request`` is the one HTTP client. (``urllib.parse`` and ``html.parser`` parse
  strings: fine.)
* **Parsers without bounds**: ``json.load`` and ``json.loads`` (no depth, size or integer limits:
  ``bounded.parse_json``, or ``read_bundled`` for the package's own data), and importing
  ``pickle``, ``marshal``, ``shelve``, ``dbm``, ``sqlite3``, ``tomllib``, ``plistlib``, ``yaml``,
  ``tarfile``, ``mmap``.
* **Libraries that open files themselves**: importing ``distro``.

Names are resolved through the module's imports (``import subprocess as sp; sp.Popen``,
``from os import open as o``, ``from sys import stdin`` are caught); annotations are not code and
are skipped. Listing a folder or asking about a path (``os.listdir``, ``os.walk``, ``os.stat``,
``os.path.exists``, ``shutil.which``, ``shutil.disk_usage``) opens no file and cannot block on a
FIFO: allowed. Reading from a pipe that ``bounded.popen_group`` handed back, through the file
object it returned (the smoke runner's capped line reader), opens nothing: allowed. What a
third-party library does inside itself is its business; the ones known to open files are listed.

The exceptions are few, each with its reason below: two whole files (:data:`EXEMPT_FILES`) and
three single uses (:data:`ALLOWED`). An allowance that no longer matches anything fails the test,
so the list cannot go stale.
"""

from __future__ import annotations

import ast
import fnmatch
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOOR = "setup_env/bounded/"  # the package: files, commands, stdin (__init__) and HTTP (net)

# Whole files that may do their own input and output, and why.
EXEMPT_FILES: dict[str, str] = {
    "setup_env/act/smoke/worker.py": (
        "the verify worker runs in the torch child, possibly under another interpreter "
        "(verify --python), on the standard library and torch only, and never imports setup_env "
        "(checked below): it reads /proc/cpuinfo for the CPU's name and its --spec argument, and "
        "writes its events to the protocol descriptor; the parent reads those through bounded "
        "(lines capped, bounded.parse_json)"
    ),
    "setup_env/act/smoke/worker_numerics.py": (
        "the verify worker's numeric checks, a part of the worker above (same child, same rules): "
        "standard library and torch only, importing no setup_env module but its sibling workers"
    ),
    "setup_env/act/smoke/dist_worker.py": (
        "one rank of the distributed check, run by torchrun in the torch child, standard library "
        "and torch only, never importing setup_env (checked below): it writes its result file, "
        "which the parent reads with bounded.read_file and bounded.parse_json"
    ),
}


@dataclass(frozen=True)
class Allowed:
    where: str  # a glob over paths relative to the repository root
    what: str  # the resolved name of the use, as violations() reports it
    why: str


ALLOWED: tuple[Allowed, ...] = (
    Allowed(
        "setup_env/probe/*.py",
        "host.read_text",
        "the probes' seam (probe/host.py, Host.read_text): every host reads with "
        "bounded.read_file (live: capped, regular files only; replay: also confined to the "
        "captured folder), so this is the door, one step removed",
    ),
    Allowed(
        "setup_env/probe/fatbin.py",
        "zf.open",
        "a member of a wheel that bounded.open_zip opened (a regular file), streamed in pieces "
        "by scan_stream: nothing outside the archive is opened",
    ),
    Allowed(
        "setup_env/probe/osinfo.py",
        "import distro",
        "distro knows the pre-os-release files of old distributions and opens os-release and "
        "/etc/*-release itself, uncapped: it is asked only when every one of those files was "
        "first read cleanly through the host (bounded) or is absent, so a FIFO or a 60 MB file "
        "never reaches it (tests/test_hostile.py, row 3)",
    ),
)

_NETWORK = "the network: bounded.http_request is the one HTTP client (one deadline, capped body)"
_UNBOUNDED = "a parser without parse_json's bounds on depth, size and numbers"
FORBIDDEN_IMPORTS: dict[str, str] = {
    **dict.fromkeys(
        (
            "socket",
            "ssl",
            "http.client",
            "http.server",
            "urllib.request",
            "urllib.error",
            "ftplib",
            "smtplib",
            "poplib",
            "imaplib",
            "telnetlib",
            "xmlrpc",
            "asyncio",
            "requests",
            "httpx",
            "urllib3",
            "aiohttp",
        ),
        _NETWORK,
    ),
    **dict.fromkeys(
        ("pickle", "marshal", "shelve", "dbm", "sqlite3", "tomllib", "plistlib", "yaml"),
        _UNBOUNDED,
    ),
    "tarfile": "opens archives by path and extracts them",
    "mmap": "maps a file without a size cap or a FIFO check",
    "fileinput": "opens the files named on the command line, or standard input, itself",
    "pty": "a terminal and a process outside bounded.run",
    "distro": "opens os-release and /etc/*-release itself, uncapped",
}

_OPEN = "opens a file itself: a FIFO blocks it, /dev/zero never ends (bounded.read_file/open_file)"
_WRITE = "writes a file itself (bounded.write_file, bounded.append_file)"
_FD = "raw descriptor I/O (bounded.read_chunks reads a child's pipe)"
_CMD = "runs a command outside bounded.run/popen_group (no process group, no deadline)"
_STDIN = "reads standard input or the terminal (bounded.read_stdin, bounded.read_terminal_line)"
FORBIDDEN_CALLS: dict[str, str] = {
    **dict.fromkeys(
        (
            "open",
            "io.open",
            "io.FileIO",
            "codecs.open",
            "os.open",
            "os.fdopen",
            "gzip.open",
            "bz2.open",
            "lzma.open",
            "zipfile.ZipFile",
            "zipfile.Path",
            "pkgutil.get_data",
            "importlib.resources.files",
            "importlib.resources.read_text",
            "importlib.resources.read_binary",
            "importlib.resources.open_text",
            "importlib.resources.open_binary",
            "platform.freedesktop_os_release",
            "xml.etree.ElementTree.parse",
            "xml.etree.ElementTree.iterparse",
            "xml.dom.minidom.parse",
            "xml.sax.parse",
        ),
        _OPEN,
    ),
    **dict.fromkeys(
        (
            "shutil.copy",
            "shutil.copy2",
            "shutil.copyfile",
            "shutil.copyfileobj",
            "shutil.copytree",
            "shutil.move",
            "shutil.unpack_archive",
            "shutil.make_archive",
            "tempfile.mkstemp",
            "tempfile.NamedTemporaryFile",
            "tempfile.TemporaryFile",
            "tempfile.SpooledTemporaryFile",
        ),
        _WRITE,
    ),
    **dict.fromkeys(
        ("os.read", "os.pread", "os.readv", "os.write", "os.pwrite", "os.writev", "os.sendfile"),
        _FD,
    ),
    **dict.fromkeys(
        (
            "subprocess.Popen",
            "subprocess.run",
            "subprocess.call",
            "subprocess.check_call",
            "subprocess.check_output",
            "subprocess.getoutput",
            "subprocess.getstatusoutput",
            "os.system",
            "os.popen",
            "os.startfile",
        ),
        _CMD,
    ),
    **dict.fromkeys(("input", "getpass.getpass", "sys.stdin", "sys.__stdin__"), _STDIN),
    "json.load": "reads a file object itself, without bounds (bounded.read_file + parse_json)",
    "json.loads": "parses without bounds (bounded.parse_json; bounded.read_bundled for data/)",
}
FORBIDDEN_PREFIXES: dict[str, str] = {
    "os.exec": _CMD,
    "os.spawn": _CMD,
    "os.posix_spawn": _CMD,
}
FORBIDDEN_METHODS: dict[str, str] = {
    "open": _OPEN,
    "read_text": _OPEN,
    "read_bytes": _OPEN,
    "write_text": _WRITE,
    "write_bytes": _WRITE,
}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    what: str
    why: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}: {self.why}"


def _module_of(path: str) -> str:
    return path.removesuffix(".py").replace("/", ".").removesuffix(".__init__")


def _aliases(tree: ast.AST, path: str) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from every import in the module."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    top = a.name.split(".")[0]
                    names[top] = top
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = _module_of(path).split(".")
                package = package[: len(package) - node.level]
                base = ".".join([*package, base] if base else package)
            for a in node.names:
                names[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    return names


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str:
    if isinstance(node, ast.Name):
        return aliases.get(node.id, node.id)
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value, aliases)}.{node.attr}"
    return "<expr>"


def _annotation_nodes(tree: ast.AST) -> set[int]:
    """ids of every node inside an annotation (types, not code that runs)."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns:
            roots.append(node.returns)
        elif isinstance(node, (ast.arg, ast.AnnAssign)) and node.annotation:
            roots.append(node.annotation)
    return {id(n) for root in roots for n in ast.walk(root)}


def _forbidden_import(module: str) -> str | None:
    parts = module.split(".")
    for i in range(len(parts), 0, -1):
        why = FORBIDDEN_IMPORTS.get(".".join(parts[:i]))
        if why:
            return why
    return None


def _forbidden_name(name: str) -> str | None:
    if name in FORBIDDEN_CALLS:
        return FORBIDDEN_CALLS[name]
    for prefix, why in FORBIDDEN_PREFIXES.items():
        if name.startswith(prefix):
            return why
    return None


def violations(source: str, path: str) -> list[Violation]:
    """Every way ``source`` (the module at ``path``, relative to the repository root) opens,
    reads or parses outside input itself. Allowances are not applied here."""
    tree = ast.parse(source, filename=path)
    aliases = _aliases(tree, path)
    skip = _annotation_nodes(tree)
    found: list[Violation] = []

    def add(node: ast.AST, what: str, why: str) -> None:
        found.append(Violation(path, getattr(node, "lineno", 0), what, why))

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                why = _forbidden_import(a.name)
                if why:
                    add(node, f"import {a.name}", why)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            why = _forbidden_import(node.module)
            for a in node.names:
                full = f"{node.module}.{a.name}"
                why_here = why or _forbidden_import(full) or _forbidden_name(full)
                if why_here:
                    add(node, f"from {node.module} import {a.name}", why_here)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in ("open", "input") and node.id not in aliases:
                add(node, node.id, FORBIDDEN_CALLS[node.id])
            elif node.id in aliases:
                why = _forbidden_name(aliases[node.id])
                if why:  # a name imported from a forbidden place (from os import read)
                    add(node, aliases[node.id], why)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            name = _dotted(node, aliases)
            why = _forbidden_name(name) or FORBIDDEN_METHODS.get(node.attr)
            if why:
                add(node, name, why)
    return sorted(set(found), key=lambda v: (v.line, v.what))


def package_modules(root: Path = ROOT) -> list[str]:
    """Every module under ``setup_env/``, as paths relative to ``root``."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in (root / "setup_env").rglob("*.py")
        if "__pycache__" not in p.parts
    )


def check_tree(root: Path = ROOT) -> tuple[list[Violation], set[Allowed]]:
    """The violations in the package under ``root`` that no allowance covers, and the
    allowances that covered something."""
    bad: list[Violation] = []
    used: set[Allowed] = set()
    for rel in package_modules(root):
        if rel.startswith(DOOR) or rel in EXEMPT_FILES:
            continue
        for v in violations((root / rel).read_text(encoding="utf-8"), rel):
            allowed = [a for a in ALLOWED if fnmatch.fnmatch(rel, a.where) and a.what == v.what]
            if allowed:
                used.update(allowed)
            else:
                bad.append(v)
    return bad, used


# --- the real tree ------------------------------------------------------------------------------


def test_only_bounded_opens_reads_or_parses_outside_input() -> None:
    bad, _used = check_tree()
    assert not bad, "outside input read past setup_env/bounded/:\n" + "\n".join(map(str, bad))


def test_every_allowance_is_still_needed() -> None:
    _bad, used = check_tree()
    stale = [a for a in ALLOWED if a not in used]
    assert not stale, f"allowances that match nothing any more (remove them): {stale}"


def test_exempt_files_exist_and_never_import_setup_env() -> None:
    """The workers' exemption holds only while they stay out of the package (they run in the
    torch child, possibly under another interpreter)."""
    for rel in EXEMPT_FILES:
        tree = ast.parse((ROOT / rel).read_text(encoding="utf-8"))
        imported = [
            a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
        ] + [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        siblings = {f.removesuffix(".py").replace("/", ".") for f in EXEMPT_FILES}
        assert not [m for m in imported if m.split(".")[0] == "setup_env" and m not in siblings], (
            rel
        )
        assert not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree)), (
            f"{rel}: a relative import"
        )


def test_the_walk_sees_the_whole_package() -> None:
    modules = package_modules()
    assert f"{DOOR}__init__.py" in modules and f"{DOOR}net.py" in modules
    assert "setup_env/cli.py" in modules
    assert "setup_env/probe/fleet_nodes.py" in modules and "setup_env/act/installer.py" in modules
    assert len(modules) > 60


# --- the checker catches what it should: planted violations -------------------------------------

PLANTED = [
    ('open("x")', "open"),
    ('with open("x", "rb") as f:\n    f.read()', "open"),
    ('import functools\nfunctools.partial(open, "x")', "open"),
    ('from pathlib import Path\nPath("x").read_text()', "<expr>.read_text"),
    ('import pathlib\npathlib.Path("x").write_bytes(b"")', "<expr>.write_bytes"),
    ('from pathlib import Path\np = Path("x")\nwith p.open() as f:\n    pass', "p.open"),
    ('import io\nio.open("x")', "io.open"),
    ('import os\nos.open("x", os.O_RDONLY)', "os.open"),
    ("import os\nos.read(0, 10)", "os.read"),
    ("from os import read\nread(0, 10)", "os.read"),
    ('from os import open as o\no("x", 0)', "os.open"),
    ('import os\nos.system("ls")', "os.system"),
    ('import os\nos.execvp("ls", ["ls"])', "os.execvp"),
    ('import subprocess\nsubprocess.run(["ls"])', "subprocess.run"),
    ('import subprocess as sp\nsp.Popen(["ls"])', "subprocess.Popen"),
    ("from subprocess import check_output", "from subprocess import check_output"),
    ("import json\njson.loads(text)", "json.loads"),
    ("import json\njson.load(fh)", "json.load"),
    ("from json import loads", "from json import loads"),
    ("import sys\nsys.stdin.read()", "sys.stdin"),
    ("import sys\nsys.stdin.buffer.read(10)", "sys.stdin"),
    ("from sys import stdin", "from sys import stdin"),
    ('input("? ")', "input"),
    ("import socket", "import socket"),
    ("import http.client", "import http.client"),
    ("import urllib.request", "import urllib.request"),
    ("from urllib import request", "from urllib import request"),
    (
        'from urllib.request import urlopen\nurlopen("http://x")',
        "from urllib.request import urlopen",
    ),
    ('import shutil\nshutil.copyfile("a", "b")', "shutil.copyfile"),
    ("import tempfile\ntempfile.mkstemp()", "tempfile.mkstemp"),
    ('import zipfile\nzipfile.ZipFile("x.whl")', "zipfile.ZipFile"),
    ("import tarfile", "import tarfile"),
    ("import pickle", "import pickle"),
    ("import distro", "import distro"),
    ("import platform\nplatform.freedesktop_os_release()", "platform.freedesktop_os_release"),
    ('import xml.etree.ElementTree as ET\nET.parse("x.xml")', "xml.etree.ElementTree.parse"),
]


@pytest.mark.parametrize(("source", "what"), PLANTED, ids=[w for _s, w in PLANTED])
def test_planted_violation_is_reported(source: str, what: str) -> None:
    found = violations(source, "setup_env/decide/planted.py")
    assert what in [v.what for v in found], found


CLEAN = """
from __future__ import annotations
import os
import subprocess
import urllib.parse
from setup_env import bounded

def f(path: str, proc: subprocess.Popen[bytes]) -> object:
    data = bounded.read_file(path, 1 << 20)
    doc = bounded.parse_json(data, "the document")
    ran = bounded.run(["ls"], 5.0, 1 << 20)
    child = bounded.popen_group(["ls"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    bounded.write_file(path, "text")
    names = os.listdir(os.path.dirname(path)) if os.path.exists(path) else []
    return doc, ran, child, names, urllib.parse.urlsplit("http://x").netloc
"""


def test_the_doors_themselves_are_clean() -> None:
    assert violations(CLEAN, "setup_env/decide/clean.py") == []


def test_an_allowance_holds_only_where_it_is_given(tmp_path: Path) -> None:
    """The same call is allowed in a probe and reported in a decider; a planted ``open`` in a
    copy of the package is found by the walk over the tree (not only in a string)."""
    tree = tmp_path / "repo"
    shutil.copytree(ROOT / "setup_env", tree / "setup_env", ignore=shutil.ignore_patterns("data"))
    assert check_tree(tree)[0] == []
    (tree / "setup_env" / "probe" / "planted.py").write_text(
        "def f(host):\n    return host.read_text('/etc/os-release')\n"
    )
    (tree / "setup_env" / "decide" / "planted.py").write_text(
        "def f(host):\n    return host.read_text('/etc/os-release')\n"
    )
    (tree / "setup_env" / "output" / "planted.py").write_text(
        "def f(path):\n    with open(path) as fh:\n        return fh.read()\n"
    )
    bad, _used = check_tree(tree)
    assert sorted((v.path, v.what) for v in bad) == [
        ("setup_env/decide/planted.py", "host.read_text"),
        ("setup_env/output/planted.py", "open"),
    ]
