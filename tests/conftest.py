"""Shared test helpers and suite-wide guards.

`require_tools`: a test that needs a program CI installs (.ci/run: shellcheck, SLURM, munge; the
base system's sh, bash, unshare, mount) skips where the program is missing on a developer's
machine, and FAILS under CI=true: a CI that lost a tool must turn red, not quietly skip the tests
that would have run with it.

`/dev/null` stays a device: tests point writers at it (the device a user types as
``--junit /dev/null``), and the writers must refuse it. A writer that stops refusing (a
regression, or a mutant in ``scripts/mutate``) would replace the machine's ``/dev/null`` with a
regular file, and every later ``> /dev/null`` on the machine would fill it. The guard after each
test fails the test that did it and, where the suite may (root), puts the device back, so one
broken writer never breaks the machine or the tests after it.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator

import pytest


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def require_tools(*tools: str, why: str) -> list[str]:
    """The full paths of `tools`; skip (fail under CI=true) naming the missing ones and `why`."""
    found = {tool: shutil.which(tool) for tool in tools}
    missing = [tool for tool, path in found.items() if path is None]
    if missing:
        message = f"{', '.join(missing)} not on PATH ({why})"
        if in_ci():
            pytest.fail(f"CI must provide {message}; .ci/run installs it")
        pytest.skip(message)
    return [path for path in found.values() if path is not None]


def require_in_ci(condition: bool, why: str) -> None:
    """Skip when `condition` does not hold (fail under CI=true, where CI arranges it)."""
    if not condition:
        if in_ci():
            pytest.fail(f"CI must provide this: {why}")
        pytest.skip(why)


def _devnull_is_a_device() -> bool:
    try:
        return stat.S_ISCHR(os.lstat(os.devnull).st_mode)
    except OSError:
        return False


def _restore_devnull() -> bool:
    if not hasattr(os, "mknod") or not hasattr(os, "geteuid") or os.geteuid() != 0:
        return False
    try:
        st = os.lstat(os.devnull)
    except FileNotFoundError:
        st = None
    try:
        if st is not None:
            os.unlink(os.devnull)
        os.mknod(os.devnull, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        os.chmod(os.devnull, 0o666)
    except OSError:
        return False
    return True


_DEVNULL_WAS_A_DEVICE = os.name == "posix" and _devnull_is_a_device()


@pytest.fixture(autouse=True)
def _devnull_stays_a_device() -> Iterator[None]:
    yield
    if _DEVNULL_WAS_A_DEVICE and not _devnull_is_a_device():
        restored = _restore_devnull()
        pytest.fail(
            f"{os.devnull} is no longer a device after this test: a writer replaced it"
            + (" (put back)" if restored else " (not put back: needs root)"),
            pytrace=False,
        )
