"""The one door when the system says no: permission denied, a link loop, a name too long, an I/O
error; each named with its path and the system's own words (issue 22).

Permissions cannot be denied to root, and CI runs as root. So the cases that need a "no" from
the permission bits run the door in a child process: as root, under ``setpriv`` with the
capabilities that override file permissions taken out of its bounding set (a root process
without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH is held to the owner's bits like any user);
as anyone else, as is. The child imports the very ``setup_env`` this test imports (its
``sys.path``), so what is judged is this tree's code.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import require_in_ci

from setup_env import bounded

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")

CHILD = r"""
import json, sys
from setup_env import bounded

op, path, data = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    if op == "read":
        out = bounded.read_file(path, 1 << 20).decode()
    elif op == "write":
        out = bounded.write_file(path, data)
    elif op == "append":
        out = bounded.append_file(path, data)
    elif op == "check":
        out = bounded.check_writable(path)
    elif op == "check-append":
        out = bounded.check_writable(path, append=True)
    elif op == "check-create":
        out = bounded.check_writable(path, create_folders=True)
    else:
        raise SystemExit(f"unknown op {op}")
    print(json.dumps({"ok": out}))
except (bounded.ReadFailed, bounded.WriteFailed) as exc:
    kind = getattr(exc, "kind", None)
    print(json.dumps({"error": type(exc).__name__, "kind": kind, "text": str(exc)}))
"""


def unprivileged() -> list[str]:
    """The argv prefix of a process that file permissions apply to."""
    if os.geteuid() != 0:
        return [sys.executable]
    setpriv = shutil.which("setpriv")
    require_in_ci(setpriv is not None, "setpriv (util-linux) to run a root child without DAC caps")
    assert setpriv is not None
    caps = "-dac_override,-dac_read_search"
    return [setpriv, "--bounding-set", caps, "--inh-caps", caps, sys.executable]


def door(op: str, path: Path, data: str = "") -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run(
        [*unprivileged(), "-c", CHILD, op, str(path), data],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


@pytest.fixture
def locked(tmp_path: Path) -> Any:
    """A folder nobody may add to or remove from, holding a writable and a read-only file."""
    folder = tmp_path / "locked"
    folder.mkdir()
    (folder / "rw.xml").write_text("old")
    (folder / "ro.xml").write_text("old")
    (folder / "ro.xml").chmod(0o444)
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


def test_the_child_is_really_held_to_the_permission_bits(tmp_path: Path) -> None:
    # Without this, every "permission denied" below could pass for the wrong reason.
    secret = tmp_path / "secret"
    secret.write_text("x")
    secret.chmod(0)
    proc = subprocess.run(
        [*unprivileged(), "-c", f"open({str(secret)!r}).read()"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 1 and "PermissionError" in proc.stderr


def test_a_file_that_may_not_be_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    secret.chmod(0)
    assert door("read", secret) == {
        "error": "ReadFailed",
        "kind": "permission-denied",
        "text": f"{secret}: Permission denied",
    }


def test_a_new_file_in_a_folder_that_may_not_be_written(locked: Path) -> None:
    target = locked / "new.xml"
    assert door("check", target) == {
        "error": "WriteFailed",
        "kind": None,
        "text": f"{target}: permission denied in {locked}",
    }
    assert door("write", target, "x") == {
        "error": "WriteFailed",
        "kind": None,
        "text": f"{target}: Permission denied",
    }
    assert door("append", target, "x")["text"] == f"{target}: Permission denied"
    assert sorted(p.name for p in locked.iterdir()) == ["ro.xml", "rw.xml"]  # nothing left


def test_a_writable_file_in_a_locked_folder_is_written_in_place(locked: Path) -> None:
    # No temporary file can be made beside it, but the file itself may be written: its inode,
    # owner and mode stay; only its bytes change.
    target = locked / "rw.xml"
    before = target.stat()
    assert door("check", target) == {"ok": None}
    assert door("write", target, "new text") == {"ok": None}
    after = target.stat()
    assert target.read_text() == "new text"
    assert (after.st_ino, after.st_mode) == (before.st_ino, before.st_mode)
    assert door("write", target, "") == {"ok": None}  # shorter: truncated, not overlaid
    assert target.read_bytes() == b""
    assert door("append", target, "a") == {"ok": None}
    assert door("append", target, "b") == {"ok": None}
    assert target.read_text() == "ab"


def test_a_read_only_file_in_a_locked_folder_cannot_be_written(locked: Path) -> None:
    target = locked / "ro.xml"
    # not in place (read-only), not beside it (the folder is locked)
    assert door("check", target)["text"] == f"{target}: permission denied in {locked}"
    assert door("write", target, "x")["text"] == f"{target}: Permission denied"
    assert door("append", target, "x")["text"] == f"{target}: Permission denied"
    assert target.read_text() == "old"


def test_a_read_only_file_in_an_open_folder_is_replaced_but_not_appended(locked: Path) -> None:
    locked.chmod(0o755)
    target = locked / "ro.xml"
    assert door("check", target) == {"ok": None}  # write_file replaces it beside itself
    assert door("check-append", target)["text"] == f"{target}: permission denied"
    assert door("append", target, "x")["text"] == f"{target}: Permission denied"
    assert door("write", target, "new") == {"ok": None}
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o444  # the mode of the file it replaced


# --- what the system refuses for other reasons, said in its words ----------------------------


def test_a_link_loop_is_an_os_error_named_with_its_path(tmp_path: Path) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file(loop, 100)
    assert (err.value.path, err.value.kind) == (str(loop), "os-error")
    assert err.value.detail == os.strerror(errno.ELOOP)


def test_a_name_too_long_is_said_so_by_every_writer(tmp_path: Path) -> None:
    long_name = tmp_path / ("x" * 300)
    for write in (bounded.write_file, bounded.append_file):
        with pytest.raises(bounded.WriteFailed) as err:
            write(long_name, "text")
        assert str(err.value) == f"{long_name}: {os.strerror(errno.ENAMETOOLONG)}"
    with pytest.raises(bounded.ReadFailed) as rerr:
        bounded.read_file(long_name, 10)
    assert (rerr.value.kind, rerr.value.detail) == ("os-error", os.strerror(errno.ENAMETOOLONG))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="Linux /proc")
def test_a_read_the_system_fails_is_an_os_error(tmp_path: Path) -> None:
    # /proc/self/mem is a regular file of size 0 whose first page is never mapped: reading it
    # fails with EIO, a real read error after a good open.
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file("/proc/self/mem", 100)
    assert str(err.value) == f"/proc/self/mem: {os.strerror(errno.EIO)}"
    # not "missing" (diagnose says "no such file" for that) nor "too-large": the system failed
    assert (err.value.kind, err.value.detail) == ("os-error", os.strerror(errno.EIO))


def test_a_file_read_in_several_pieces_comes_back_whole(tmp_path: Path) -> None:
    # read_file takes at most 1 MiB a read: a 2.5 MiB file is three pieces, joined as they were.
    data = bytes(range(256)) * (10 * 1024)  # 2.5 MiB
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert bounded.read_file(path, len(data)) == data
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file(path, len(data) - 1)
    assert str(err.value) == f"{path}: over {len(data) - 1} bytes"


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="Linux /proc")
def test_a_file_that_says_size_0_but_holds_more_is_refused_by_what_it_holds() -> None:
    with pytest.raises(bounded.ReadFailed) as err:
        bounded.read_file("/proc/self/maps", 16)
    assert str(err.value) == "/proc/self/maps: over 16 bytes"


def test_folders_to_be_made_are_judged_by_the_nearest_that_exists(locked: Path) -> None:
    # matrix refresh --output may name folders it will create: the nearest existing folder must
    # be writable, wherever the folders above it stand.
    deep = locked / "new" / "dir" / "wheels.json"
    assert door("check-create", deep)["text"] == f"{deep}: permission denied in {locked}"
    open_sub = locked.parent / "open"
    open_sub.mkdir()
    assert door("check-create", open_sub / "new" / "wheels.json") == {"ok": None}


def test_a_path_through_a_file_or_a_link_loop_is_named(tmp_path: Path) -> None:
    plain = tmp_path / "plain.txt"
    plain.write_text("")
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.check_writable(plain / "x.json")
    assert str(err.value) == f"{plain / 'x.json'}: {os.strerror(errno.ENOTDIR)}"
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.check_writable(loop / "x.json")
    assert str(err.value) == f"{loop / 'x.json'}: {os.strerror(errno.ELOOP)}"


FULL = r"""
import resource, signal, sys
from setup_env import bounded

# A file-size limit: a write past it fails with EFBIG (SIGXFSZ ignored), as a full disk would.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (64, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
write = {"write": bounded.write_file, "append": bounded.append_file}[sys.argv[1]]
try:
    write(sys.argv[2], "y" * 1000)
except bounded.WriteFailed as exc:
    print(str(exc))
"""


@pytest.mark.parametrize("op", ["write", "append"])
def test_a_write_that_fails_midway_keeps_the_old_file_and_leaves_nothing(
    tmp_path: Path, op: str
) -> None:
    target = tmp_path / "report.xml"
    target.write_text("old")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run(
        [sys.executable, "-c", FULL, op, str(target)],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"{target}: {os.strerror(errno.EFBIG)}"
    if op == "write":  # replaced atomically or not at all; no temporary file left beside it
        assert target.read_text() == "old"
        assert [p.name for p in tmp_path.iterdir()] == ["report.xml"]
    else:  # an append writes what fits, as the system allows: never past the limit
        assert target.read_text().startswith("old") and target.stat().st_size <= 64


def test_a_write_in_place_that_fails_midway_names_the_file_and_the_reason(locked: Path) -> None:
    # In a locked folder the file is written in place (no temporary beside it): a write the
    # system stops (EFBIG here, as a full disk) is WriteFailed with the path and the system's
    # words. In place there is no old copy to keep: the file holds no more than the limit.
    target = locked / "rw.xml"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run(
        [*unprivileged(), "-c", FULL, "write", str(target)],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == f"{target}: {os.strerror(errno.EFBIG)}"
    assert target.stat().st_size <= 64
    assert sorted(p.name for p in locked.iterdir()) == ["ro.xml", "rw.xml"]


# --- the temporary file beside the target ----------------------------------------------------


def _names_from(monkeypatch: pytest.MonkeyPatch, *draws: bytes) -> None:
    """os.urandom, as write_file draws its temporary names, returns these in turn."""
    left = list(draws)
    monkeypatch.setattr(os, "urandom", lambda n: left.pop(0) if left else b"\xff" * n)


def test_a_temporary_name_another_writer_holds_is_skipped_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "wheels.json"
    target.write_text("old")
    theirs = tmp_path / ".wheels.json.00000000.tmp"
    theirs.write_text("another writer's")
    _names_from(monkeypatch, b"\0" * 4, b"\1" * 4)
    bounded.write_file(target, "new")
    assert target.read_text() == "new"
    assert theirs.read_text() == "another writer's"
    assert sorted(p.name for p in tmp_path.iterdir()) == [theirs.name, "wheels.json"]


def test_when_every_temporary_name_is_taken_nothing_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "wheels.json"
    target.write_text("old")
    (tmp_path / ".wheels.json.00000000.tmp").write_text("")
    _names_from(monkeypatch, *[b"\0" * 4] * 16)  # 16 tries, every one taken
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.write_file(target, "new")
    assert str(err.value) == f"{target}: no temporary name free beside it"
    assert target.read_text() == "old"


def test_the_temporary_file_is_made_beside_the_target_not_in_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A working folder that is gone (deleted under the process) can hold no file: the write
    # works all the same, and the rename stays within the target's own folder (atomic).
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    target = tmp_path / "out" / "report.xml"
    target.parent.mkdir()
    bounded.write_file(target, "<testsuites/>")
    assert target.read_text() == "<testsuites/>"
    assert [p.name for p in target.parent.iterdir()] == ["report.xml"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="Linux /proc")
def test_a_folder_that_takes_no_new_file_is_said_so_by_the_system() -> None:
    # /proc holds no files but its own: the temporary file cannot be made there.
    target = "/proc/setup-env-report.xml"
    with pytest.raises(bounded.WriteFailed) as err:
        bounded.write_file(target, "<testsuites/>")
    assert str(err.value) == f"{target}: {os.strerror(errno.ENOENT)}"


def test_a_long_but_legal_name_is_written(tmp_path: Path) -> None:
    # 250 characters is a legal name (255 is the limit): the temporary name beside it must stay
    # legal too.
    target = tmp_path / ("r" * 250)
    bounded.write_file(target, "report")
    assert target.read_text() == "report"
    assert [p.name for p in tmp_path.iterdir()] == [target.name]
