"""Running a plan: the installer's argv, the environment it targets, its progress, offline.

Nothing here prints; ``setup_env.commands.install`` decides what to say. The pieces:

* ``resolve_python(python, venv)``: the interpreter to install into (``--python PATH``,
  ``--venv DIR`` or this one).
* ``interpreter_record(python)``: what that interpreter says of itself (version, wheel tags,
  ``sys.path``), so detection and planning see *its* Python and *its* installed torch.
  ``TargetHost`` is this machine seen through that interpreter.
* ``install_args(plan)``: the plan's install arguments (requirements and index options), each one
  validated again here: nothing that reaches the installer's argv is taken on trust.
* ``build_argv(...)``: ``PY -m pip install ...`` or ``uv pip install --python PY ...``, with the
  offline route (``--no-index --find-links DIR``) and reinstall flags. Always an argv list: it is
  run with ``subprocess`` directly, never through a shell.
* ``run_installer(argv, on_output)``: runs it with a deadline, hands every chunk of its output to
  ``on_output`` (the CLI streams it to stderr) and keeps the tail for ``classify_failure``.
* ``classify_failure(output)``: reads pip's / uv's own words to tell "the index is unreachable"
  from "no wheel matches" from any other failure.
* ``offline_advice(plan, facts)``: which wheel files to bring over by hand, and the
  ``pip download`` command that fetches them on a connected machine.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Optional

from setup_env import bounded
from setup_env._record import Record, field, record
from setup_env.bounded import net
from setup_env.decide.model import Plan
from setup_env.facts import Facts
from setup_env.knowledge.variant import Variant, is_index_label
from setup_env.probe.host import LiveHost

InstallerName = Literal["pip", "uv"]
INSTALLERS: tuple[InstallerName, ...] = ("pip", "uv")

DEFAULT_PYPI = "https://pypi.org/simple"
PROBE_TIMEOUT = 5.0
INSTALL_TIMEOUT = 3 * 3600.0  # CUDA wheels are GBs: a slow link takes long; a hung one is killed
TAIL_BYTES = 64 * 1024
CHILD_OUTPUT = 1 << 20  # an interpreter describing itself, pip --version: a few KiB

# --- validation: every value that reaches an argv or a printed command --------------------------

# A requirement as the planner writes them: a name, optional extras, optional version clauses.
# No URLs, no markers, no spaces: "torch==2.15.0", "torchvision==0.30.0+cu132", "torch>=2.4,<2.5".
_REQUIREMENT = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?"
    r"(?:\[[A-Za-z0-9._-]+(?:,[A-Za-z0-9._-]+)*\])?"
    r"(?:(?:===|==|!=|~=|>=|<=|<|>)[A-Za-z0-9.*+!_-]{1,64}"
    r"(?:,(?:===|==|!=|~=|>=|<=|<|>)[A-Za-z0-9.*+!_-]{1,64})*)?$"
)
_TORCH_WHEEL = re.compile(r"torch-[0-9][0-9A-Za-z.+!_]*-[a-z0-9_.]+-[a-z0-9_.]+-[a-z0-9_.]+\.whl")
_URL_CHARS = re.compile(r"^[A-Za-z0-9._~:/?#@!&+,;=%\[\]-]+$")
_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})$|^\[[0-9A-Fa-f:.]{2,45}\]$")

# Options a plan's install arguments may carry, with the number of values each takes. Anything
# else (``--extra-index-url`` above all: dependency confusion) is refused, not passed on.
_PLAN_OPTIONS: dict[str, int] = {
    "--index-url": 1,
    "-i": 1,
    "--default-index": 1,  # uv's name for --index-url
    "--pre": 0,
    "--prerelease": 1,  # uv: --prerelease allow
    "--upgrade": 0,
    "-U": 0,
    "--torch-backend": 1,  # uv
    # NVIDIA's Jetson folders (setup_env/decide/jetsonplan.py): pip looks there and nowhere else.
    "--no-index": 0,
    "--find-links": 1,
}
_INDEX_OPTIONS = ("--index-url", "-i", "--default-index")


class InstallError(ValueError):
    """A one-line reason why installing cannot go on; ``code`` is the exit code to return."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


def check_url(url: str, what: str = "--index-url") -> str:
    """An ``http(s)://`` URL made only of URL characters (so nothing else can ride along)."""
    text = url.strip()
    parts = urllib.parse.urlsplit(text) if _URL_CHARS.match(text) else None
    host = parts.hostname if parts is not None else None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise InstallError(f"{what}: expected an http(s):// URL, got {url!r}")
    netloc_host = parts.netloc.rpartition("@")[2]
    if netloc_host.startswith("["):
        netloc_host = netloc_host[: netloc_host.find("]") + 1]
    else:
        netloc_host = netloc_host.split(":")[0]
    if not _HOST.match(netloc_host):
        raise InstallError(f"{what}: not a valid host in {url!r}")
    if has_dot_segments(parts.path):
        raise InstallError(f"{what}: '.' or '..' path segments are not allowed in {url!r}")
    try:
        port = parts.port
    except ValueError:
        raise InstallError(f"{what}: bad port in {url!r}") from None
    del port
    return text


def has_dot_segments(path: str) -> bool:
    """``/whl/../../x``, ``/%2e%2e/x``, ``/./whl``: a path that climbs out of where it says."""
    segments = urllib.parse.unquote(path).replace("\\", "/").split("/")
    return any(seg in (".", "..") for seg in segments)


def check_requirement(text: str) -> str:
    if not _REQUIREMENT.match(text):
        raise InstallError(f"the plan names a requirement setup-env will not pass on: {text!r}")
    return text


def check_wheel_url(text: str) -> str:
    """A wheel named by its ``https://`` URL (NVIDIA's Jetson builds): URL characters only, a
    ``.whl`` file."""
    url = check_url(text, "the plan's wheel URL")
    parts = urllib.parse.urlsplit(url)
    name = urllib.parse.unquote(parts.path.rsplit("/", 1)[-1])
    if parts.scheme != "https" or parts.query or not _TORCH_WHEEL.fullmatch(name):
        raise InstallError(f"the plan names a requirement setup-env will not pass on: {text!r}")
    return url


def check_dir(path: str, what: str = "--find-links") -> str:
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(full):
        raise InstallError(f"{what}: no folder at {full}")
    return full


# --- the target interpreter -------------------------------------------------------------------


def venv_python(venv: str) -> str:
    """The interpreter of a virtual environment (``bin/python``; ``Scripts\\python.exe``)."""
    for rel in (("bin", "python3"), ("bin", "python"), ("Scripts", "python.exe")):
        candidate = os.path.join(venv, *rel)
        if os.path.isfile(candidate):
            return candidate
    return os.path.join(venv, "Scripts" if os.name == "nt" else "bin", "python")


def resolve_python(python: Optional[str], venv: Optional[str]) -> str:
    """``--python PATH`` / ``--venv DIR`` / this interpreter, as an absolute path that exists."""
    if python is not None and venv is not None:
        raise InstallError("--python and --venv name the same thing: give one of them")
    # An empty value is a mistake (an unset shell variable), not "this interpreter".
    if venv is not None and not venv.strip():
        raise InstallError("--venv: an empty path names no virtual environment")
    if python is not None and not python.strip():
        raise InstallError("--python: an empty path names no interpreter")
    if venv:
        root = os.path.abspath(os.path.expanduser(venv))
        if not os.path.isdir(root):
            raise InstallError(
                f"--venv: no virtual environment at {root} "
                f"(create one: python3 -m venv {shlex.quote(root)})"
            )
        path = venv_python(root)
        if not os.path.isfile(path):
            raise InstallError(f"--venv: {root} has no interpreter (looked for {path})")
    elif python:
        path = os.path.abspath(os.path.expanduser(python))
        if not os.path.isfile(path):
            raise InstallError(f"--python: no interpreter at {path}")
    else:
        return sys.executable
    if not os.access(path, os.X_OK):
        raise InstallError(f"{path} is not executable")
    return path


def is_this_interpreter(python: str) -> bool:
    # abspath, not realpath: a venv's python is a symlink to the base one, yet another environment.
    return os.path.abspath(python) == os.path.abspath(sys.executable)


# The folders that hold setup_env and packaging, so that another interpreter can describe itself
# with the same code as this one even when neither is installed there. They are removed from its
# sys.path again before it describes itself, so its import path is its own (bounded.PACKAGE_PARENT
# and _packaging_parent()).
_RECORD_SCRIPT = """
import json, sys
extra = sys.argv[1:]
sys.path[0:0] = extra
try:
    import packaging.tags  # this side's packaging may be too new for that Python: then
except Exception:  # the record derives tags without it (glibc Linux) or leaves them empty
    pass
from setup_env.probe import host
del sys.path[0:len(extra)]
print(json.dumps(host.live_interpreter()))
"""


def _packaging_parent() -> str:
    import packaging

    return os.path.dirname(os.path.dirname(os.path.abspath(packaging.__file__)))


def interpreter_record(python: str, timeout: float = 30.0) -> dict[str, Any]:
    """What ``python`` says of itself: the same record ``LiveHost.interpreter()`` keeps."""
    argv = [python, "-c", _RECORD_SCRIPT, bounded.PACKAGE_PARENT, _packaging_parent()]
    try:
        proc = bounded.run(argv, timeout, CHILD_OUTPUT)
    except (OSError, ValueError) as exc:
        raise InstallError(
            f"cannot run {python}: {getattr(exc, 'strerror', None) or exc}", 3
        ) from None
    if proc.timed_out:
        raise InstallError(f"{python} did not answer within {timeout:g} s", 3)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        version = _python_version(python)
        if version is not None and version < (3, 9):
            raise InstallError(
                f"{python} is Python {version[0]}.{version[1]}: torch and setup-env need 3.9 "
                "or newer",
                3,
            )
        raise InstallError(f"{python} could not describe itself: {err[-1] if err else '?'}", 3)
    try:
        last = proc.stdout.decode("utf-8", "replace").strip().splitlines()[-1]
        data = bounded.parse_json(last, f"{python}'s description of itself")
    except (ValueError, IndexError):
        raise InstallError(f"{python} gave an unreadable description of itself", 3) from None
    if not isinstance(data, dict):
        raise InstallError(f"{python} gave an unreadable description of itself", 3)
    return data


def _python_version(python: str) -> Optional[tuple[int, int]]:
    try:
        proc = bounded.run(
            [python, "-c", "import sys; print('%d %d' % sys.version_info[:2])"], 15, 4096
        )
        major, minor = proc.stdout.decode().split()
        return int(major), int(minor)
    except (OSError, ValueError):
        return None


class TargetHost(LiveHost):
    """This machine, with another interpreter as *the* interpreter (its Python, its packages)."""

    label = "live"

    def __init__(self, record: Mapping[str, Any], environ: Mapping[str, str] | None = None):
        super().__init__(environ)
        self._record = dict(record)

    def interpreter(self) -> Mapping[str, Any]:
        return self._record


def has_pip(python: str, timeout: float = 60.0) -> bool:
    try:
        proc = bounded.run([python, "-m", "pip", "--version"], timeout, CHILD_OUTPUT)
    except (OSError, ValueError):
        return False
    return proc.returncode == 0


@record
class Target(Record):
    """The interpreter to install into and the installer that does it (pip or uv)."""

    python: str
    installer: InstallerName
    uv: Optional[str] = None  # the uv executable when installer == "uv"


def choose_installer(
    python: str,
    wanted: Optional[str],
    which: Callable[[str], Optional[str]] = shutil.which,
    pip_present: Optional[Callable[[str], bool]] = None,
) -> Target:
    """pip when the target has it, uv when asked or when pip is missing and uv is on PATH."""
    present = pip_present or has_pip
    uv = which("uv")
    if wanted == "uv":
        if uv is None:
            raise InstallError(
                "--installer uv: uv is not on PATH (install it: https://docs.astral.sh/uv/, "
                "or use --installer pip)",
                3,
            )
        return Target(python, "uv", uv)
    if present(python):
        return Target(python, "pip")
    if wanted is None and uv is not None:
        return Target(python, "uv", uv)
    raise InstallError(
        f"{python} has no pip: run `{shlex.quote(python)} -m ensurepip`"
        + (" or use --installer uv" if uv else " or install uv (https://docs.astral.sh/uv/)"),
        3,
    )


# --- the argv ---------------------------------------------------------------------------------


@record
class InstallArgs(Record):
    """A plan's requirements and installer options, checked, ready to become an argv."""

    requirements: tuple[str, ...]
    options: tuple[str, ...]  # validated, in the plan's order ("--index-url", URL, "--pre")
    index_url: Optional[str]


def install_args(plan: Plan) -> InstallArgs:
    """The plan's install arguments, re-validated; built from ``plan.requirements`` and
    ``plan.index_url`` when the plan has no argv (a configuration-only installer)."""
    argv = list(plan.argv)
    if "install" in argv:
        rest = argv[argv.index("install") + 1 :]
    else:
        rest = list(plan.requirements)
        if plan.index_url:
            rest += ["--index-url", plan.index_url]
    reqs: list[str] = []
    opts: list[str] = []
    index_url: Optional[str] = None
    i = 0
    while i < len(rest):
        token = rest[i]
        if token.startswith("-"):
            name, eq, inline = token.partition("=")
            arity = _PLAN_OPTIONS.get(name)
            if arity is None or (eq and arity != 1):
                raise InstallError(
                    f"the plan's command has an option setup-env install does not run: {token!r}"
                )
            if arity == 1:
                if eq:
                    value = inline
                elif i + 1 < len(rest):
                    value = rest[i + 1]
                    i += 1
                else:
                    raise InstallError(f"the plan's command ends after {name}")
                if name in _INDEX_OPTIONS:
                    index_url = check_url(value, name)
                    opts += ["--index-url", index_url]
                elif name == "--torch-backend":
                    if value != "auto" and not is_index_label(value):
                        raise InstallError(f"the plan's --torch-backend is not valid: {value!r}")
                    opts += [name, value]
                elif name == "--find-links":
                    opts += [name, check_url(value, name)]
                elif name == "--prerelease":
                    if value not in ("allow", "if-necessary", "explicit", "disallow"):
                        raise InstallError(f"the plan's --prerelease is not valid: {value!r}")
                    opts += [name, value]
            else:
                opts.append("--upgrade" if name == "-U" else name)
        elif token.startswith("https://"):
            reqs.append(check_wheel_url(token))  # a Jetson wheel named by its URL
        else:
            reqs.append(check_requirement(token))
        i += 1
    if not reqs:
        raise InstallError("the plan names nothing to install")
    if index_url is None and plan.index_url:
        index_url = check_url(plan.index_url, "the plan's index URL")
        opts += ["--index-url", index_url]
    return InstallArgs(tuple(reqs), tuple(opts), index_url)


def build_argv(
    args: InstallArgs,
    target: Target,
    find_links: Sequence[str] = (),
    reinstall: bool = False,
) -> list[str]:
    """The installer's argv for the target interpreter.

    ``find_links``: the offline route: wheels from these folders only (``--no-index``), so an
    unreachable index is never asked. ``reinstall``: replace what is there even when the
    version matches (pip ``--force-reinstall``, uv ``--reinstall``).
    """
    opts = list(args.options)
    if find_links:
        kept: list[str] = []
        i = 0
        while i < len(opts):
            if opts[i] in ("--index-url", "--torch-backend"):
                i += 2
                continue
            kept.append(opts[i])
            i += 1
        opts = ["--no-index"]
        for folder in find_links:
            opts += ["--find-links", folder]
        opts += kept
    if reinstall:
        opts.append("--force-reinstall" if target.installer == "pip" else "--reinstall")
    if target.installer == "uv":
        uv = target.uv or "uv"
        return [uv, "pip", "install", "--python", target.python, *args.requirements, *opts]
    return [target.python, "-m", "pip", "install", *args.requirements, *opts]


def display(argv: Sequence[str]) -> str:
    """The argv as a person would type it in a POSIX shell (for printing only)."""
    return shlex.join(list(argv))


# --- what is installed vs what is planned -----------------------------------------------------


def planned_label(plan: Plan) -> str:
    version = plan.torch_version or "?"
    if plan.variant and "+" not in version:
        return f"{version}+{plan.variant}"
    return version


def _public(version: str) -> str:
    return version.split("+", 1)[0]


def torch_matches(plan: Plan, facts: Facts) -> bool:
    """The planned torch (version and variant) is the one installed."""
    pkg = facts.package("torch")
    if pkg is None or not plan.torch_version:
        return False
    if _public(pkg.version) != _public(plan.torch_version):
        return False
    return plan.variant is None or pkg.variant is None or pkg.variant == plan.variant


def requirements_met(args: InstallArgs, plan: Plan, facts: Facts) -> bool:
    """Every planned requirement is installed at a version it accepts (and torch's variant)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    if not torch_matches(plan, facts):
        return False
    for text in args.requirements:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            return False
        pkg = facts.package(canonicalize_name(req.name))
        if pkg is None or not req.specifier.contains(pkg.version, prereleases=True):
            return False
    return True


def same_version_other_variant(plan: Plan, facts: Facts) -> bool:
    """2.13.0+cpu installed, 2.13.0+cu130 planned: ``torch==2.13.0`` is "already satisfied" for
    pip, so switching the variant needs a forced reinstall."""
    pkg = facts.package("torch")
    return (
        pkg is not None
        and bool(plan.torch_version)
        and _public(pkg.version) == _public(plan.torch_version or "")
        and plan.variant is not None
        and pkg.variant is not None
        and pkg.variant != plan.variant
    )


# --- disk space -------------------------------------------------------------------------------

_GIB = 1 << 30
# What an install needs on the environment's filesystem: the wheels are downloaded, then
# unpacked (2-3x their size). Measured and read sizes: the CPU wheel of torch 2.13.0 for
# Linux x86_64 is 192 MB and unpacks to ~0.7 GB; the PyPI CUDA wheel is ~530 MB (the PyPI
# simple index, VERIFIED.md section 1) and pulls cuda-toolkit / cuDNN / NCCL wheels of several
# GB more; ROCm wheels are the largest (the torch wheel alone is GBs).
SPACE_NEEDED_GIB = {"cpu": 2, "mps": 2, "cuda": 8, "xpu": 8, "rocm": 20}


def space_needed(variant: Optional[Variant]) -> int:
    return SPACE_NEEDED_GIB[variant.kind if variant is not None else "cpu"] * _GIB


# --- the index: reachable? ----------------------------------------------------------------------


def effective_index(
    args: InstallArgs, installer: InstallerName, environ: Mapping[str, str]
) -> tuple[str, bool]:
    """The index the installer will ask, and whether it was named explicitly (by the plan, an
    option or an environment variable) rather than the installer's default."""
    if args.index_url:
        return args.index_url, True
    names = ("PIP_INDEX_URL",) if installer == "pip" else ("UV_DEFAULT_INDEX", "UV_INDEX_URL")
    for name in names:
        value = environ.get(name, "").strip()
        if value:
            return value, True
    return DEFAULT_PYPI, False


def probe_index(url: str, project: str = "torch", timeout: float = PROBE_TIMEOUT) -> Optional[str]:
    """None when the index answers at all (any HTTP status), else why it could not be reached.

    One ``net.http_request`` (proxies from the environment, one deadline for the whole
    exchange); only the status line matters, so at most one byte of the page is taken. A
    ``file:`` index is a folder on this machine: no network path to try."""
    if urllib.parse.urlsplit(url).scheme.lower() == "file":
        return None
    target = url.rstrip("/") + f"/{project}/"
    try:
        net.http_request(
            target,
            bounded.Deadline(timeout),
            headers={"User-Agent": "setup-env"},
            max_bytes=1,
        )
    except net.HttpError as exc:
        if exc.kind == "too-large":
            return None  # it answered, with a page: the network path works
        if exc.kind == "timeout":
            return f"no answer within {timeout:g} s"
        return exc.detail or exc.kind
    except TimeoutError:  # the deadline passed before the first byte was asked for
        return f"no answer within {timeout:g} s"
    return None  # any status: a 404 is the planner's business


# --- the installer's own words ------------------------------------------------------------------

# Real pip and uv messages (tests/fixtures/install/ holds captured ones with their sources).
_UNREACHABLE = re.compile(
    r"NewConnectionError|Failed to establish a new connection|Connection refused|"
    r"Name or service not known|Temporary failure in name resolution|nodename nor servname|"
    r"Network is unreachable|No route to host|ConnectTimeoutError|Connection to \S+ timed out|"
    r"Read timed out|ProxyError|Max retries exceeded|tcp connect error|dns error|"
    r"error sending request for url|Could not connect to|getaddrinfo failed|"
    r"failed to lookup address information",
    re.IGNORECASE,
)
_NO_MATCH = re.compile(
    r"No matching distribution found for (\S+)|Could not find a version that satisfies the "
    r"requirement (\S+)|Because (\S+) was not found in the (?:package registry|provided package "
    r"locations)|No solution found when resolving dependencies",
    re.IGNORECASE,
)
_SPACE = re.compile(r"No space left on device|\[Errno 28\]|os error 28", re.IGNORECASE)


@record
class Failure(Record):
    """Why an install failed, as a kind and its detail."""

    kind: Literal["index-unreachable", "no-matching-wheel", "no-space", "other"]
    detail: str = ""


def classify_failure(output: str) -> Failure:
    """Why the installer failed, from what it printed."""
    m = _SPACE.search(output)
    if m:
        return Failure("no-space", _line_of(output, m.start()))
    m = _NO_MATCH.search(output)
    unreachable = _UNREACHABLE.search(output)
    if unreachable:
        return Failure("index-unreachable", _line_of(output, unreachable.start()))
    if m:
        return Failure("no-matching-wheel", _line_of(output, m.start()))
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.lower().startswith("error")]
    return Failure("other", (errors or lines or [""])[-1][:300])


def _line_of(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)].strip()[:300]


# --- the offline route ----------------------------------------------------------------------------

# Platform tags torch wheels have been published with (VERIFIED.md section 1), most specific
# first; the ones this interpreter accepts go into the `pip download --platform` advice.
_TORCH_PLATFORMS = (
    "manylinux_2_28_x86_64",
    "manylinux_2_28_aarch64",
    "manylinux2014_x86_64",
    "manylinux2014_aarch64",
    "manylinux1_x86_64",
    "macosx_14_0_arm64",
    "macosx_11_0_arm64",
    "macosx_10_9_x86_64",
    "win_amd64",
    "win_arm64",
)


@record
class OfflineAdvice(Record):
    """What to fetch on a connected machine and run here when there is no network."""

    patterns: tuple[str, ...]  # wheel file names to bring, as globs
    download: tuple[str, ...]  # argv for a connected machine: pip download ... -d torch-wheels
    then: str  # the command to run here afterwards (display form)
    notes: tuple[str, ...] = field(default_factory=tuple)


def _interp_tag(facts: Facts) -> tuple[str, str]:
    tag = facts.python.tags[0] if facts.python.tags else ""
    parts = tag.split("-")
    if len(parts) == 3:
        return parts[0], parts[1]
    major_minor = "".join(facts.python.version.split(".")[:2]) or "3"
    return f"cp{major_minor}", f"cp{major_minor}"


def _platforms(facts: Facts) -> list[str]:
    accepted = {t.split("-", 2)[2] for t in facts.python.tags if t.count("-") == 2}
    return [p for p in _TORCH_PLATFORMS if p in accepted]


def offline_advice(
    plan: Plan, facts: Facts, args: InstallArgs, then: Sequence[str]
) -> OfflineAdvice:
    interp, abi = _interp_tag(facts)
    platforms = _platforms(facts)
    plat_glob = "*"
    if platforms:
        first = platforms[0]
        m = re.match(r"^manylinux(?:_\d+_\d+|\d+)_(.+)$", first)
        if m:
            plat_glob = f"manylinux*_{m.group(1)}"  # manylinux_2_28_x86_64, manylinux2014_...
        elif first.startswith("macosx_"):
            plat_glob = "macosx_*_" + first.split("_", 3)[-1]  # macosx_14_0_arm64
        else:
            plat_glob = first
    on_pytorch_index = args.index_url is not None and "pypi.org" not in args.index_url
    patterns: list[str] = []
    for req in args.requirements:
        name = re.split(r"[\[=<>!~]", req, maxsplit=1)[0]
        m = re.search(r"===?([A-Za-z0-9.*+!_-]+)", req)
        version = m.group(1) if m else "*"
        if (
            name == "torch"
            and plan.variant
            and on_pytorch_index
            and "+" not in version
            and version != "*"
        ):
            version = f"{version}+{plan.variant}"
        wheel_name = name.replace("-", "_")
        patterns.append(f"{wheel_name}-{version}-{interp}-{abi}-{plat_glob}.whl")
    py_version = ".".join(facts.python.version.split(".")[:2])
    download = ["python3", "-m", "pip", "download", "--only-binary=:all:", "--dest", "torch-wheels"]
    if py_version:
        download += ["--python-version", py_version]
    download += ["--implementation", interp[:2] or "cp", "--abi", abi]
    for plat in platforms:
        download += ["--platform", plat]
    download += list(args.requirements)
    if args.index_url:
        # One index, as the plan says: PyTorch's index carries torch's dependencies too
        # (filelock, sympy, the nvidia-* wheels), and mixing indexes invites dependency confusion.
        download += ["--index-url", args.index_url]
    notes = (
        "torch's dependencies must be in the same folder (filelock, typing-extensions, sympy, "
        "networkx, jinja2, fsspec; for CUDA builds also the cuda-toolkit / nvidia-* wheels): "
        "the `pip download` command above fetches them all",
    )
    return OfflineAdvice(tuple(patterns), tuple(download), display(then), notes)


# --- does the installed torch work? --------------------------------------------------------------

_IMPORT_CHECK = "import torch; print(torch.__version__)"


def torch_imports(python: str, timeout: float = 180.0) -> tuple[bool, str]:
    """(True, version) when ``import torch`` succeeds in that interpreter, else (False, why).
    A cold first import of a CUDA build on a network filesystem takes tens of seconds."""
    try:
        proc = bounded.run([python, "-c", _IMPORT_CHECK], timeout, CHILD_OUTPUT)
    except (OSError, ValueError) as exc:
        return False, getattr(exc, "strerror", None) or str(exc)
    if proc.timed_out:
        return False, f"import torch did not finish within {timeout:g} s"
    if proc.returncode == 0:
        return True, proc.stdout.decode("utf-8", "replace").strip()
    lines = [ln for ln in proc.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
    return False, (lines[-1].strip() if lines else f"exit {proc.returncode}")[:300]


# --- running it ---------------------------------------------------------------------------------


@record
class RunResult(Record):
    """How one run of the install command ended: exit status, output tail, duration."""

    returncode: Optional[int]  # None: it could not be started, or was killed at the deadline
    output_tail: str
    duration_s: float
    timed_out: bool = False
    error: Optional[str] = None  # could not start: why


def installer_env(base: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"  # one less request to a possibly absent index
    env.setdefault("PYTHONUNBUFFERED", "1")
    env.setdefault("PYTHONIOENCODING", "utf-8")
    return env


def run_installer(
    argv: Sequence[str],
    on_output: Optional[Callable[[bytes], None]] = None,
    timeout: float = INSTALL_TIMEOUT,
    env: Optional[Mapping[str, str]] = None,
) -> RunResult:
    """Run the installer (argv, no shell), streaming its stdout+stderr to ``on_output`` as it
    comes (pip's progress included), keeping the last ``TAIL_BYTES`` for ``classify_failure``."""
    t0 = time.monotonic()
    try:
        # Its own process group (session): a timeout kills its children too.
        proc = bounded.popen_group(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=installer_env(env),
        )
    except OSError as exc:
        return RunResult(None, "", time.monotonic() - t0, error=exc.strerror or str(exc))
    tail: deque[bytes] = deque()
    size = [0]

    def pump() -> None:
        assert proc.stdout is not None
        for chunk in bounded.read_chunks(proc.stdout):
            if on_output is not None:
                # A closed stderr must not stop the install half-way.
                with contextlib.suppress(Exception):
                    on_output(chunk)
            tail.append(chunk)
            size[0] += len(chunk)
            while size[0] > TAIL_BYTES and len(tail) > 1:
                size[0] -= len(tail.popleft())

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
    except KeyboardInterrupt:
        _kill(proc)
        raise
    reader.join(timeout=5.0)
    if proc.stdout is not None:
        proc.stdout.close()
    text = b"".join(tail).decode("utf-8", "replace")
    return RunResult(
        None if timed_out else proc.returncode, text, time.monotonic() - t0, timed_out=timed_out
    )


def _kill(proc: subprocess.Popen[bytes]) -> None:
    import signal

    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGTERM)
        else:
            proc.terminate()
        proc.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        try:
            if os.name == "posix":
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        except OSError:
            pass
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
