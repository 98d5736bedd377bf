"""A pytest plugin for scripts/mutate: empties setup-env's memo caches before each test.

mutmut forks each mutant's run from a process that has already run the tests once (to learn
which tests reach which function); a cache filled there (Variant.parse's labels, the loaded
matrix, the GPU and cloud catalogues) would answer from the unmutated code, and a mutant in
the code behind it would survive without a test ever running it.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest


def pytest_runtest_setup(item: Any) -> None:
    variant = sys.modules.get("setup_env.knowledge.variant")
    if variant is not None:
        variant._PARSED.clear()
        variant._INDEX_LABELS.clear()
    matrix = sys.modules.get("setup_env.knowledge.matrix")
    if matrix is not None:
        matrix._CACHE.clear()
    for name in ("setup_env.knowledge.gpus", "setup_env.knowledge.cloud_catalog"):
        module = sys.modules.get(name)
        for value in vars(module).values() if module is not None else ():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: Any) -> Iterator[None]:
    """While mutmut learns which tests reach which functions, the functions a test ran in its
    child processes count as the test's own (scripts/sitecustomize.py reports them)."""
    if os.environ.get("MUTANT_UNDER_TEST") != "stats":
        yield
        return
    folder = tempfile.mkdtemp(prefix="setup-env-mutate-hits-")
    os.environ["SETUP_ENV_MUTATE_HITS"] = folder
    try:
        yield
    finally:
        os.environ.pop("SETUP_ENV_MUTATE_HITS", None)
        hits: set[str] = set()
        for name in os.listdir(folder):
            with open(os.path.join(folder, name)) as fh:
                hits.update(line.strip() for line in fh if line.strip())
        shutil.rmtree(folder, ignore_errors=True)
        if hits:
            from mutmut.state import state

            state()._stats.update(hits)
