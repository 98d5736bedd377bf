"""A pytest plugin for scripts/mutate: empties setup-env's memo caches before each test, and
runs a mutant's tests fastest first.

mutmut forks each mutant's run from a process that has already run the tests once (to learn
which tests reach which function); a cache filled there (Variant.parse's labels, the loaded
matrix, the GPU and cloud catalogues) would answer from the unmutated code, and a mutant in
the code behind it would survive without a test ever running it.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

# The hits are read back while the test's monkeypatches still hold (a test that makes os.fstat
# fail, say): the os functions used for it are taken now, before any test could replace them
# (shutil.rmtree would call the patched ones).
_listdir, _unlink, _rmdir, _join = os.listdir, os.unlink, os.rmdir, os.path.join


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """The tests fastest first, by mutmut's own timings (mutants/mutmut-stats.json, beside the
    run): mutmut stops a mutant's run at its first failing test, and most mutants fail a quick
    one, so a killed mutant costs its quickest failing test, not the slow ones before it. (The
    clean run mutmut makes first runs them in this order too.)"""
    try:
        with open("mutmut-stats.json", encoding="utf-8") as fh:
            durations = json.load(fh).get("duration_by_test", {})
    except (OSError, ValueError, AttributeError):
        return  # the first run, before mutmut has timed the tests
    items.sort(key=lambda item: durations.get(item.nodeid, math.inf))


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
        for name in _listdir(folder):
            with open(_join(folder, name)) as fh:  # io's own calls, not the os module's
                hits.update(line.strip() for line in fh if line.strip())
            _unlink(_join(folder, name))
        _rmdir(folder)
        if hits:
            from mutmut.state import state

            state()._stats.update(hits)
