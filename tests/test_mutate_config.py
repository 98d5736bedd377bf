"""scripts/mutate (issue 22) is configured soundly: its modules name real files and tests and
cover the core, the equivalent-mutants file is well-formed, and pyproject's [tool.mutmut] plus
a module's additions is a section mutmut can read. (The mutation run itself is too slow for the
suite: README, Development.)"""

from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The core issue 22 names: knowledge rules, deciders, the report reader, the one door.
CORE = [
    "setup_env/knowledge/tags.py",
    "setup_env/knowledge/cuda.py",
    "setup_env/knowledge/variant.py",
    "setup_env/knowledge/matrix.py",
    "setup_env/decide/doctor.py",
    "setup_env/decide/causes.py",
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "setup_env/decide/plan").glob("*.py")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "setup_env/probe/report").glob("*.py")),
    *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "setup_env/bounded").glob("*.py")),
]


def load() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader(
        "scripts_mutate", str(ROOT / "scripts" / "mutate")
    )
    spec = importlib.util.spec_from_loader("scripts_mutate", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


MUTATE = load()


@pytest.mark.parametrize("name", sorted(MUTATE.MODULES))
def test_a_module_names_files_and_tests_that_exist(name: str) -> None:
    only, tests = MUTATE.MODULES[name]
    for pattern in only:
        assert pattern.startswith("setup_env/") and glob.glob(str(ROOT / pattern)), pattern
    assert tests
    for test in tests:
        assert (ROOT / test).is_file() and Path(test).name.startswith("test_"), test


def test_the_modules_cover_the_core_once() -> None:
    mutated = [
        str(Path(p).relative_to(ROOT))
        for only, _tests in MUTATE.MODULES.values()
        for pattern in only
        for p in glob.glob(str(ROOT / pattern))
        if p.endswith(".py")
    ]
    assert sorted(set(mutated)) == sorted(set(CORE))
    assert len(mutated) == len(set(mutated))  # no file mutated by two modules


def test_the_equivalent_mutants_are_named_and_explained() -> None:
    equivalent = MUTATE.read_equivalent()
    files = {p[: -len(".py")].replace("/", ".") for p in CORE}
    files |= {f[: -len(".__init__")] for f in files if f.endswith(".__init__")}
    for name, reason in equivalent.items():
        module = name.split(".x", 1)[0]
        assert module in files, name
        assert len(reason.split()) >= 3, (name, reason)  # a reason, not a word


def test_a_module_section_is_what_mutmut_reads() -> None:
    section = MUTATE.mutmut_section(["setup_env/knowledge/tags.py"], ["tests/test_tags.py"])
    lines = section.splitlines()
    assert lines[0] == "[tool.mutmut]"
    keys = {}
    for line in lines[1:]:
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" = ")
        keys[key] = json.loads(value)  # strings and arrays of strings: TOML and JSON agree
    assert keys["only_mutate"] == ["setup_env/knowledge/tags.py"]
    assert keys["pytest_add_cli_args_test_selection"] == ["tests/test_tags.py"]
    assert keys["source_paths"] == ["setup_env"]
    # the plugin that empties the memo caches is loaded, and it exists beside the script
    args = keys["pytest_add_cli_args"]
    assert args[args.index("_mutate_plugin") - 1] == "-p"
    assert (ROOT / "scripts" / "_mutate_plugin.py").is_file()
