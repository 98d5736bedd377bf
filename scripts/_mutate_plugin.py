"""A pytest plugin for scripts/mutate: empties setup-env's memo caches before each test.

mutmut forks each mutant's run from a process that has already run the tests once (to learn
which tests reach which function); a cache filled there (Variant.parse's labels, the loaded
matrix, the GPU and cloud catalogues) would answer from the unmutated code, and a mutant in
the code behind it would survive without a test ever running it.
"""

from __future__ import annotations

import sys
from typing import Any


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
