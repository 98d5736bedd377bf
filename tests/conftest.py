"""Suite-wide guards.

Tests point writers at ``/dev/null`` (the device a user types as ``--junit /dev/null``): the writers
must refuse it. A writer that stops refusing (a regression, or a mutant in ``scripts/mutate``)
would replace the machine's ``/dev/null`` with a regular file, and every later ``> /dev/null`` on
the machine would fill it. The guard after each test fails the test that did it and, where the
suite may (root), puts the device back, so one broken writer never breaks the machine or the
tests after it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

import pytest


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
