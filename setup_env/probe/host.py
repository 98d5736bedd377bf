"""The machine seam: the only door through which probes see a machine.

``LiveHost`` reads this machine. ``ReplayHost`` replays a captured folder (``--root DIR``) so that
every detection, and every bug report, can be reproduced anywhere. A captured folder looks like::

    DIR/host.json          interpreter, env, which, links, disk, nvml snapshot, commands,
                           unreadable, exists (seen, not copied), dirs (listings beyond files/)
    DIR/files/<abs path>   copies of the files probes read (files/etc/os-release, files/proc/...)
    DIR/commands/*.txt     stdout of recorded commands (named from host.json)
    DIR/SOURCES.md         where each file came from
    DIR/expected.json      the facts the replay must produce (tests only)

Every command runs as an argv list with a timeout, never through a shell.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from setup_env import bounded
from setup_env._record import MutableRecord, Record, field, mutable_record, record

if TYPE_CHECKING:
    from pathlib import Path

ReadError = Literal["missing", "permission-denied", "not-a-file", "too-large", "os-error"]
RunError = Literal["not-found", "timeout", "permission-denied", "too-large", "os-error"]
RUN_ERRORS: tuple[str, ...] = ("not-found", "timeout", "permission-denied", "too-large", "os-error")

DEFAULT_TIMEOUT = 5.0
# Present wherever NVML can work on Linux: the driver's procfs and control node (also inside
# containers given GPUs), WSL2's GPU bridge and its libnvidia-ml.
NVIDIA_DRIVER_MARKERS = (
    "/proc/driver/nvidia",
    "/dev/nvidiactl",
    "/dev/dxg",
    "/usr/lib/wsl/lib/libnvidia-ml.so.1",
)
MAX_READ = 4 << 20  # 4 MiB: nothing a probe reads is bigger; a bigger one is garbage
MAX_OUTPUT = 8 << 20
MAX_HOST_JSON = 16 << 20  # a real host.json is ~30 KiB


def _read_error(exc: bounded.ReadFailed) -> ReadError:
    kind = exc.kind
    if kind == "outside":
        return "permission-denied"
    return kind


@record
class Read(Record):
    """One file read through the host: its text, or why there is none."""

    path: str
    text: str | None
    error: ReadError | None = None
    detail: str = ""


@record
class CommandResult(Record):
    """One command run through the host: exit status and output, or why it did not run."""

    argv: tuple[str, ...]
    returncode: int | None  # None: it did not run or did not finish
    stdout: str = ""
    stderr: str = ""
    error: RunError | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None and self.returncode == 0

    def describe(self) -> str:
        """One line for a Note: what went wrong running this command."""
        cmd = " ".join(self.argv)
        if self.error == "not-found":
            return f"{self.argv[0]} not found"
        if self.error == "timeout":
            return f"`{cmd}` did not answer in time ({self.detail})"
        if self.error is not None:
            return f"`{cmd}` could not run: {self.error} {self.detail}".strip()
        tail = (self.stderr.strip() or self.stdout.strip()).splitlines()
        last = tail[-1][:200] if tail else ""
        return f"`{cmd}` exited {self.returncode}" + (f": {last}" if last else "")


class Host(Protocol):
    """What a probe may ask of a machine. Nothing else touches it."""

    @property
    def label(self) -> str: ...

    def read(self, path: str, max_bytes: int = MAX_READ) -> Read: ...

    def read_text(self, path: str) -> str | None: ...

    def listdir(self, path: str) -> tuple[str, ...] | None: ...

    def exists(self, path: str) -> bool: ...

    def realpath(self, path: str) -> str: ...

    def which(self, name: str) -> str | None: ...

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> CommandResult: ...

    def env(self, name: str) -> str | None: ...

    def environ(self) -> Mapping[str, str]: ...

    def interpreter(self) -> Mapping[str, Any]: ...

    def disk_free(self, path: str) -> int | None: ...

    def nvml(self) -> Mapping[str, Any]: ...


# --- live ----------------------------------------------------------------------------------


class LiveHost:
    """This machine."""

    label = "live"

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._interp: Mapping[str, Any] | None = None
        self._nvml: Mapping[str, Any] | None = None

    def read(self, path: str, max_bytes: int = MAX_READ) -> Read:
        try:
            data = bounded.read_file(path, max_bytes)
        except bounded.ReadFailed as exc:
            return Read(path, None, _read_error(exc), exc.detail)
        return Read(path, data.decode("utf-8", errors="replace"))

    def read_text(self, path: str) -> str | None:
        return self.read(path).text

    def listdir(self, path: str) -> tuple[str, ...] | None:
        try:
            return tuple(sorted(os.listdir(path)))
        except OSError:
            return None

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def files_root(self) -> str:
        """The folder that stands for ``/`` (for libraries that take a root_dir, like distro)."""
        return os.path.abspath(os.sep)

    def which(self, name: str) -> str | None:
        return shutil.which(name, path=self._environ.get("PATH"))

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> CommandResult:
        """``argv`` in its own process group, output read as it comes (MAX_OUTPUT per stream),
        the whole group killed on timeout or on too much output."""
        args = tuple(str(a) for a in argv)
        try:
            ran = bounded.run(args, timeout, MAX_OUTPUT, env=self._environ)
        except FileNotFoundError:
            return CommandResult(args, None, error="not-found")
        except PermissionError as exc:
            return CommandResult(args, None, error="permission-denied", detail=str(exc))
        except (OSError, ValueError) as exc:  # ENOEXEC, a NUL in an argument, ...
            return CommandResult(args, None, error="os-error", detail=str(exc))
        stdout = ran.stdout.decode("utf-8", errors="replace")
        stderr = ran.stderr.decode("utf-8", errors="replace")
        if ran.timed_out:
            return CommandResult(args, None, stdout, stderr, "timeout", f"{timeout:g} s")
        if ran.too_much_output:
            detail = f"more than {MAX_OUTPUT} bytes of output: killed"
            return CommandResult(args, None, stdout, stderr, "too-large", detail)
        return CommandResult(args, ran.returncode, stdout, stderr)

    def env(self, name: str) -> str | None:
        return self._environ.get(name)

    def environ(self) -> Mapping[str, str]:
        return self._environ

    def interpreter(self) -> Mapping[str, Any]:
        if self._interp is None:
            self._interp = live_interpreter()
        return self._interp

    def disk_free(self, path: str) -> int | None:
        try:
            return shutil.disk_usage(path).free
        except OSError:
            return None

    def nvml(self) -> Mapping[str, Any]:
        if self._nvml is None:
            if sys.platform.startswith("linux") and not any(
                os.path.exists(p) for p in NVIDIA_DRIVER_MARKERS
            ):
                # No NVIDIA kernel driver, no WSL GPU bridge: NVML cannot load. Saying so here
                # spares importing nvidia-ml-py (~20 ms of a ~100 ms detect) on every such machine.
                self._nvml = {"error": "NVML Shared Library Not Found", "code": "library-not-found"}
            else:
                from setup_env.probe import nvml_live  # imported only when NVML is wanted

                self._nvml = nvml_live.snapshot()
        return self._nvml


def _free_threaded() -> bool:
    # Free-threaded builds exist from 3.13 on; sysconfig (and its ~1.5 ms config module) is
    # asked only there.
    return sys.version_info >= (3, 13) and bool(sysconfig_var("Py_GIL_DISABLED"))


def _libc_ver() -> tuple[str, str]:
    """("glibc", "2.36") as platform.libc_ver() says it: glibc answers confstr (what
    platform.libc_ver() asks first) without importing platform; else platform's own search."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION") if hasattr(os, "confstr") else None
    except (OSError, ValueError):
        text = None
    parts = text.split() if text else []
    if len(parts) == 2 and parts[0] == "glibc":
        return "glibc", parts[1]
    import platform

    try:
        return platform.libc_ver()
    except OSError:
        return "", ""


def _python_version() -> str:
    return sys.version.split()[0]  # what platform.python_version() reads: "3.11.7", "3.14.0rc1"


def live_interpreter() -> dict[str, Any]:
    """What this Python says of itself, as plain data (the part a capture stores). On Linux it
    is read without importing ``platform`` (os.uname, confstr: a few ms of every start-up)."""
    if sys.platform.startswith("linux"):
        u = os.uname()
        system, release, version, machine = u.sysname, u.release, u.version, u.machine
        mac_ver = win32_ver = None
    else:
        import platform

        system, release = platform.system(), platform.release()
        version, machine = platform.version(), platform.machine()
        mac_ver = platform.mac_ver()[0] or None
        win32_ver = platform.win32_ver()[1] or None
    info: dict[str, Any] = {
        "version": _python_version(),
        "implementation": sys.implementation.name,
        "free_threaded": _free_threaded(),
        "machine": machine,
        "is_64bit": sys.maxsize > 2**32,
        "executable": sys.executable,
        "system": system,
        "release": release,
        "platform_version": version,
        "mac_ver": mac_ver,
        "win32_ver": win32_ver,
        "libc_ver": list(_libc_ver()),
        "sys_path": import_path(),
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
        "tags": most_specific_tags(),
    }
    return info


def sysconfig_var(name: str) -> Any:
    import sysconfig

    return sysconfig.get_config_var(name)


def import_path() -> list[str]:
    """sys.path as `python -c "import torch"` sees it: without this program's own first entry
    (the script's folder or the working directory), which is not where packages are installed."""
    paths = list(sys.path)
    if paths and not getattr(sys.flags, "safe_path", False):
        paths = paths[1:]
    return [p for p in paths if p]


def most_specific_tags() -> list[str]:
    """The wheel tags of this interpreter's own ABI, most specific first (``packaging.tags``).

    ``sys_tags()`` yields hundreds of tags (every older Python, ``py3-none-any``...); the ones that
    decide between torch wheels are those of this interpreter and ABI (``cp311-cp311-*``, or
    ``cp314-cp314t-*`` for a free-threaded build) over every platform tag it accepts.
    """
    if sys.platform.startswith("linux") and sys.maxsize > 2**32:
        libc, version = _libc_ver()
        if libc == "glibc" and sys.implementation.name == "cpython":
            # The same list packaging.tags.sys_tags() gives for this ABI, without importing it
            # (and logging, and 64 failed `import _manylinux` probes): ~15 ms of start-up.
            from setup_env.knowledge.tags import derive_tags

            return derive_tags(
                _python_version(),
                "cpython",
                _free_threaded(),
                "Linux",
                os.uname().machine,
                "glibc",
                version,
            )
    try:
        from packaging import tags  # imported here: ~15 ms, only when the interpreter is examined
    except Exception:
        return []

    out: list[str] = []
    first: tags.Tag | None = None
    for tag in tags.sys_tags():
        if first is None:
            first = tag
        if tag.interpreter == first.interpreter and tag.abi == first.abi:
            out.append(str(tag))
    return out


# --- replay --------------------------------------------------------------------------------


@record
class _Recorded(Record):
    """One command's result as a capture stores it, for replay."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    error: RunError | None
    detail: str = ""


_STR_MAPS = ("env", "links")
_STR_LISTS = ("unreadable", "exists")
_INTERPRETER_TYPES: dict[str, tuple[type, ...]] = {
    "version": (str,),
    "implementation": (str,),
    "free_threaded": (bool,),
    "machine": (str,),
    "is_64bit": (bool,),
    "executable": (str,),
    "system": (str,),
    "release": (str,),
    "platform_version": (str,),
    "mac_ver": (str, type(None)),
    "win32_ver": (str, type(None)),
    "prefix": (str,),
    "base_prefix": (str,),
}
_INTERPRETER_LISTS = ("libc_ver", "sys_path", "tags")
_NVML_TYPES: dict[str, tuple[type, ...]] = {
    "error": (str,),
    "code": (str,),
    "nvml_version": (str,),
    "driver_version": (str,),
    "cuda_driver_version": (int, type(None)),
}
_NVML_GPU_STR = ("name", "pci_bus_id", "uuid")
_NVML_GPU_INT = (
    "index",
    "memory_total",
    "mig_mode",
    "persistence_mode",
    "ecc_uncorrected_volatile",
    "pcie_gen_current",
    "pcie_gen_max",
    "pcie_width_current",
    "pcie_width_max",
    "clocks_event_reasons",
)


def _bad(where: str, what: str) -> bounded.InputError:
    return bounded.InputError(f"{where} {what}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str_map(doc: Mapping[str, Any], key: str, nullable: bool = False) -> None:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise _bad(key, "must be an object")
    for k, v in value.items():
        if not (isinstance(v, str) or (nullable and v is None)):
            raise _bad(f"{key}[{bounded.one_line(k, 60)!r}]", "must be a string")


def _str_list(value: Any, where: str) -> None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _bad(where, "must be a list of strings")


def _check_interpreter(interp: Any) -> None:
    if not isinstance(interp, dict):
        raise _bad("interpreter", "must be an object")
    for key, types in _INTERPRETER_TYPES.items():
        if key in interp and not isinstance(interp[key], types):
            raise _bad(f"interpreter.{key}", "has the wrong type")
    for key in _INTERPRETER_LISTS:
        if key in interp:
            _str_list(interp[key], f"interpreter.{key}")


def _check_nvml(snap: Any) -> None:
    if not isinstance(snap, dict):
        raise _bad("nvml", "must be an object")
    for key, types in _NVML_TYPES.items():
        if key in snap and not isinstance(snap[key], types):
            raise _bad(f"nvml.{key}", "has the wrong type")
    gpus = snap.get("gpus", [])
    if not isinstance(gpus, list):
        raise _bad("nvml.gpus", "must be a list")
    for i, gpu in enumerate(gpus):
        where = f"nvml.gpus[{i}]"
        if not isinstance(gpu, dict):
            raise _bad(where, "must be an object")
        for key in _NVML_GPU_STR:
            if gpu.get(key) is not None and not isinstance(gpu[key], str):
                raise _bad(f"{where}.{key}", "must be a string")
        for key in _NVML_GPU_INT:
            if gpu.get(key) is not None and not _is_int(gpu[key]):
                raise _bad(f"{where}.{key}", "must be an integer")
        cc = gpu.get("compute_capability")
        if cc is not None and not (
            isinstance(cc, list) and len(cc) == 2 and all(_is_int(v) for v in cc)
        ):
            raise _bad(f"{where}.compute_capability", "must be [major, minor]")
        errors = gpu.get("errors", {})
        if not isinstance(errors, dict) or not all(isinstance(v, str) for v in errors.values()):
            raise _bad(f"{where}.errors", "must map fields to messages")


def _check_command(item: Any, where: str) -> None:
    if not isinstance(item, dict):
        raise _bad(where, "must be an object")
    argv = item.get("argv")
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise _bad(f"{where}.argv", "must be a non-empty list of strings")
    for key in ("stdout", "stderr", "detail", "stdout_file"):
        if key in item and not isinstance(item[key], str):
            raise _bad(f"{where}.{key}", "must be a string")
    rc = item.get("returncode", 0)
    if rc is not None and not _is_int(rc):
        raise _bad(f"{where}.returncode", "must be an integer or null")
    error = item.get("error")
    if error is not None and error not in RUN_ERRORS:
        raise _bad(f"{where}.error", f"must be one of {', '.join(RUN_ERRORS)}")


def validate_host_doc(doc: Any) -> dict[str, Any]:
    """host.json, checked before use: every key a replay reads has the type it expects.

    Raises :class:`bounded.InputError` naming the first wrong key (``env["PATH"] must be a
    string``). Unknown keys are left alone (a newer capture may add some)."""
    if not isinstance(doc, dict):
        raise bounded.InputError("must be a JSON object")
    for key in _STR_MAPS:
        _str_map(doc, key)
    _str_map(doc, "which", nullable=True)
    for key in _STR_LISTS:
        _str_list(doc.get(key, []), key)
    dirs = doc.get("dirs", {})
    if not isinstance(dirs, dict):
        raise _bad("dirs", "must be an object")
    for k, v in dirs.items():
        _str_list(v, f"dirs[{bounded.one_line(k, 60)!r}]")
    disk = doc.get("disk_free", {})
    if not isinstance(disk, dict) or not all(v is None or _is_int(v) for v in disk.values()):
        raise _bad("disk_free", "must map paths to integers")
    if "interpreter" in doc:
        _check_interpreter(doc["interpreter"])
    if "nvml" in doc and doc["nvml"] is not None:
        _check_nvml(doc["nvml"])
    commands = doc.get("commands", [])
    if not isinstance(commands, list):
        raise _bad("commands", "must be a list")
    for i, item in enumerate(commands):
        _check_command(item, f"commands[{i}]")
    return doc


class ReplayError(ValueError):
    """The captured folder itself is unusable (no host.json, bad JSON)."""


@mutable_record
class ReplayHost(MutableRecord):
    """A captured machine, read back from a folder."""

    root: Path
    _doc: dict[str, Any] = field(default_factory=dict, repr=False)
    _commands: list[_Recorded] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        from pathlib import Path

        self.root = Path(self.root)
        doc_path = self.root / "host.json"
        try:
            data = bounded.read_file(doc_path, MAX_HOST_JSON)
        except bounded.ReadFailed as exc:
            if exc.kind == "missing":
                raise ReplayError(f"{self.root} is not a captured machine: no host.json") from None
            raise ReplayError(f"{doc_path}: unreadable: {exc.detail or exc.kind}") from None
        try:
            parsed = bounded.parse_json(data, "host.json")
        except bounded.InputError as exc:
            raise ReplayError(f"{doc_path}: unreadable: {exc}") from None
        try:
            doc = validate_host_doc(parsed)
        except bounded.InputError as exc:
            raise ReplayError(f"{doc_path}: {exc}") from None
        self._doc = doc
        for i, item in enumerate(doc.get("commands", [])):
            stdout = item.get("stdout", "")
            if "stdout_file" in item:
                try:
                    raw = bounded.read_file(
                        self.root / item["stdout_file"], MAX_OUTPUT, root=self.root
                    )
                except bounded.ReadFailed as exc:
                    raise ReplayError(
                        f"{doc_path}: commands[{i}].stdout_file {bounded.one_line(exc.path, 120)}"
                        f" is unusable: {exc.detail or exc.kind}"
                    ) from None
                stdout = raw.decode("utf-8", errors="replace")
            self._commands.append(
                _Recorded(
                    tuple(item["argv"]),
                    item.get("returncode", 0),
                    stdout,
                    item.get("stderr", ""),
                    item.get("error"),
                    item.get("detail", ""),
                )
            )

    @property
    def label(self) -> str:
        return f"replay:{self.root.name}"

    def _local(self, path: str) -> Path:
        """Where a captured file lives under ``files/``.

        Links recorded in host.json are followed first (``/usr/local/cuda`` ->
        ``/usr/local/cuda-13.0``). A ``:`` in a name (PCI bus ids such as ``0000:01:00.0``) is
        stored as ``%3A`` so that a checkout works on Windows too; a Windows drive ``C:`` becomes
        ``C``. Folders written by hand with the raw ``:`` (or with it dropped) are read as well.
        """
        path = self._follow_links(path.replace("\\", "/"))
        if len(path) >= 2 and path[1] == ":" and path[0].isalpha():
            path = path[0] + path[2:]
        rel = path.lstrip("/")
        base = self.root / "files"
        encoded = base / rel.replace(":", "%3A")
        if ":" not in rel or encoded.exists():
            return encoded
        for alt in (base / rel, base / rel.replace(":", "")):
            if alt.exists():
                return alt
        return encoded

    def _follow_links(self, path: str) -> str:
        links: Mapping[str, str] = self._doc.get("links", {})
        if not links:
            return path
        for _ in range(8):  # a chain of links, never a loop
            for link, target in links.items():
                if path == link or path.startswith(link.rstrip("/") + "/"):
                    path = target + path[len(link.rstrip("/")) :]
                    break
            else:
                return path
        return path

    def files_root(self) -> str:
        """The folder that stands for ``/`` (for libraries that take a root_dir, like distro)."""
        return str(self.root / "files")

    def read(self, path: str, max_bytes: int = MAX_READ) -> Read:
        if path in self._doc.get("unreadable", []):
            return Read(path, None, "permission-denied", "recorded as unreadable")
        try:
            data = bounded.read_file(self._local(path), max_bytes, root=self.root)
        except bounded.ReadFailed as exc:
            return Read(path, None, _read_error(exc), exc.detail)
        return Read(path, data.decode("utf-8", errors="replace"))

    def read_text(self, path: str) -> str | None:
        return self.read(path).text

    def listdir(self, path: str) -> tuple[str, ...] | None:
        local = self._local(path)
        dirs: Mapping[str, list[str]] = self._doc.get("dirs", {})
        names: set[str] = set(dirs.get(path, ()))
        try:
            names.update(p.name.replace("%3A", ":") for p in local.iterdir())
        except OSError:
            if path not in dirs:
                return None
        # Links recorded inside this folder (``/usr/local/cuda``) are entries too.
        prefix = path.rstrip("/") + "/"
        for link in self._doc.get("links", {}):
            if link.startswith(prefix) and "/" not in link[len(prefix) :]:
                names.add(link[len(prefix) :])
        return tuple(sorted(names))

    def exists(self, path: str) -> bool:
        # "exists" lists what a capture saw but could not copy: device nodes (/dev/kfd), empty
        # folders, files it chose not to keep.
        return (
            self._local(path).exists()
            or path in self._doc.get("links", {})
            or path in self._doc.get("exists", [])
            or path in self._doc.get("dirs", {})
        )

    def realpath(self, path: str) -> str:
        return self._follow_links(path)

    def which(self, name: str) -> str | None:
        found = self._doc.get("which", {}).get(name)
        return found if isinstance(found, str) else None

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> CommandResult:
        args = tuple(str(a) for a in argv)
        for rec in self._commands:
            if rec.argv == args:
                detail = rec.detail or (f"{timeout:g} s" if rec.error == "timeout" else "")
                return CommandResult(
                    args, rec.returncode, rec.stdout, rec.stderr, rec.error, detail
                )
        # A command the capture did not record did not exist on that machine.
        return CommandResult(args, None, error="not-found")

    def env(self, name: str) -> str | None:
        value = self._doc.get("env", {}).get(name)
        return value if isinstance(value, str) else None

    def environ(self) -> Mapping[str, str]:
        env = self._doc.get("env", {})
        return {k: v for k, v in env.items() if isinstance(v, str)}

    def interpreter(self) -> Mapping[str, Any]:
        interp = self._doc.get("interpreter", {})
        return interp if isinstance(interp, dict) else {}

    def disk_free(self, path: str) -> int | None:
        disk = self._doc.get("disk_free", {})
        value = disk.get(path)
        return value if isinstance(value, int) else None

    def nvml(self) -> Mapping[str, Any]:
        snap = self._doc.get("nvml")
        if isinstance(snap, dict):
            return snap
        return {"error": "NVML library not found", "code": "library-not-found"}


# --- recording (setup-env capture: setup_env/act/capture.py) ------------------------------------


class RecordingHost:
    """Wraps a host and writes down everything probes asked of it, so it can be replayed.

    ``capture()`` returns the raw material of a replay folder (``host.json`` document plus file
    texts and command outputs); redaction and writing are the capture script's job.
    """

    def __init__(self, inner: Host) -> None:
        import threading

        self.inner = inner
        self._lock = threading.Lock()
        self.files: dict[str, str] = {}
        self.unreadable: set[str] = set()
        self.existing: set[str] = set()
        self.listings: dict[str, tuple[str, ...]] = {}
        self.links: dict[str, str] = {}
        self.which_seen: dict[str, str | None] = {}
        self.commands: list[CommandResult] = []
        self.env_seen: dict[str, str | None] = {}
        self.environ_read = False
        self.interp: Mapping[str, Any] | None = None
        self.disk: dict[str, int | None] = {}
        self.nvml_snapshot: Mapping[str, Any] | None = None

    @property
    def label(self) -> str:
        return f"recording:{self.inner.label}"

    def read(self, path: str, max_bytes: int = MAX_READ) -> Read:
        result = self.inner.read(path, max_bytes)
        with self._lock:
            if result.text is not None:
                self.files[path] = result.text
            elif result.error == "permission-denied":
                self.unreadable.add(path)
        return result

    def read_text(self, path: str) -> str | None:
        return self.read(path).text

    def listdir(self, path: str) -> tuple[str, ...] | None:
        names = self.inner.listdir(path)
        if names is not None:
            with self._lock:
                self.listings[path] = names
        return names

    def exists(self, path: str) -> bool:
        found = self.inner.exists(path)
        if found:
            with self._lock:
                self.existing.add(path)
        return found

    def realpath(self, path: str) -> str:
        real = self.inner.realpath(path)
        if real != path:
            with self._lock:
                self.links[path] = real
        return real

    def files_root(self) -> str | None:
        root = getattr(self.inner, "files_root", None)
        return root() if callable(root) else None

    def which(self, name: str) -> str | None:
        found = self.inner.which(name)
        with self._lock:
            self.which_seen[name] = found
        return found

    def run(self, argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT) -> CommandResult:
        result = self.inner.run(argv, timeout)
        with self._lock:
            self.commands.append(result)
        return result

    def env(self, name: str) -> str | None:
        value = self.inner.env(name)
        with self._lock:
            self.env_seen[name] = value
        return value

    def environ(self) -> Mapping[str, str]:
        self.environ_read = True
        return self.inner.environ()

    def interpreter(self) -> Mapping[str, Any]:
        self.interp = self.inner.interpreter()
        return self.interp

    def disk_free(self, path: str) -> int | None:
        free = self.inner.disk_free(path)
        with self._lock:
            self.disk[path] = free
        return free

    def nvml(self) -> Mapping[str, Any]:
        self.nvml_snapshot = self.inner.nvml()
        return self.nvml_snapshot
