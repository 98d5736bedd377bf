"""Shared test helpers.

`require_tools`: a test that needs a program CI installs (.ci/run: shellcheck, SLURM, munge; the
base system's sh, bash, unshare, mount) skips where the program is missing on a developer's
machine, and FAILS under CI=true: a CI that lost a tool must turn red, not quietly skip the tests
that would have run with it.
"""

from __future__ import annotations

import os
import shutil

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
