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


# mutmut 3.8.1's stored `test_selection` fingerprint of a run made with these tests (read from
# mutants/mutmut-stats.json of a plan-vendors run, 2026-12-04)
RUN_TESTS = [
    "tests/test_plan_rules.py",
    "tests/test_plan.py",
    "tests/test_gpu_knowledge.py",
    "tests/test_plan_behaviour.py",
]
RUN_FINGERPRINT = "355e9b5e1aca"


def _last_run(tmp_path: Path, tests: list[str]) -> Path:
    """A work dir as a finished run leaves it: its pyproject names the tests, mutmut's stats
    carry their fingerprint."""
    (tmp_path / "mutants").mkdir()
    (tmp_path / "pyproject.toml").write_text(MUTATE.mutmut_section(["x.py"], tests))
    stats = {"config_fingerprint": {"test_execution": "26abaa948f95"}, "duration_by_test": {}}
    stats["config_fingerprint"]["test_selection"] = RUN_FINGERPRINT
    (tmp_path / "mutants" / "mutmut-stats.json").write_text(json.dumps(stats))
    return tmp_path / "mutants" / "mutmut-stats.json"


def _fingerprint(stats: Path) -> dict[str, str]:
    doc = json.loads(stats.read_text())
    fingerprint: dict[str, str] = doc["config_fingerprint"]
    return fingerprint


def test_the_selection_hash_is_mutmuts_own() -> None:
    assert MUTATE._selection_hash(RUN_TESTS) == RUN_FINGERPRINT


def test_a_test_file_added_keeps_the_last_runs_results(tmp_path: Path) -> None:
    """--again after a test file joins a module: mutmut must see the selection it expects (or it
    drops every result), and the rest of its stats stay as they were."""
    stats = _last_run(tmp_path, RUN_TESTS)
    added = [*RUN_TESTS, "tests/test_conda_pixi.py"]
    MUTATE.keep_results_for_added_tests(tmp_path, added)
    assert _fingerprint(stats) == {
        "test_execution": "26abaa948f95",
        "test_selection": MUTATE._selection_hash(added),
    }


@pytest.mark.parametrize(
    "tests",
    [RUN_TESTS[1:], [*RUN_TESTS[1:], "tests/test_conda_pixi.py"], RUN_TESTS],
    ids=["one removed", "one removed one added", "same"],
)
def test_a_test_file_removed_lets_mutmut_reset(tmp_path: Path, tests: list[str]) -> None:
    """A removed file may turn a killed mutant into a survivor: the fingerprint is left alone,
    so mutmut itself drops the results (or, unchanged, keeps them)."""
    stats = _last_run(tmp_path, RUN_TESTS)
    MUTATE.keep_results_for_added_tests(tmp_path, tests)
    assert _fingerprint(stats)["test_selection"] == RUN_FINGERPRINT


def test_a_run_made_with_other_tests_is_left_to_mutmut(tmp_path: Path) -> None:
    """The pyproject beside the stats says one list, the stats were made with another: no guess."""
    stats = _last_run(tmp_path, RUN_TESTS[:2])
    MUTATE.keep_results_for_added_tests(tmp_path, RUN_TESTS)
    assert _fingerprint(stats)["test_selection"] == RUN_FINGERPRINT


def test_again_keeps_the_results_through_prepare(tmp_path: Path) -> None:
    """The whole --again preparation (the tree copied over the last run's work dir): the
    fingerprint is read from the last run's pyproject before the copy replaces it."""
    module = "plan-init"
    _only, tests = MUTATE.MODULES[module]
    assert set(RUN_TESTS) < set(tests)  # the plan list has grown since that run
    stats = _last_run(tmp_path, RUN_TESTS)
    MUTATE.prepare(module, tmp_path, again=True)
    assert _fingerprint(stats)["test_selection"] == MUTATE._selection_hash(tests)
    assert f"pytest_add_cli_args_test_selection = {json.dumps(tests)}" in (
        (tmp_path / "pyproject.toml").read_text()
    )


def test_a_module_without_functions_has_no_mutants_not_a_failure(tmp_path: Path) -> None:
    """mutmut mutates function bodies only: a file of records and imports gives no mutant, and
    mutmut then stops with an error that is not the run failing."""
    meta = tmp_path / "mutants" / "setup_env" / "probe" / "report" / "model.py.meta"
    assert not MUTATE.no_mutants(tmp_path)  # no run at all is not "no mutants"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {}, "hash_by_function_name": {}}))
    assert MUTATE.no_mutants(tmp_path)
    meta.write_text(json.dumps({"exit_code_by_key": {"setup_env.x__mutmut_1": None}}))
    assert not MUTATE.no_mutants(tmp_path)


def test_a_run_keeps_bytecode_in_its_own_folder_emptied_by_each_prepare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mutated file holds every mutant's copy of its functions (megabytes): a test that starts
    `python -m setup_env` compiles it again unless bytecode is written. It is written to the
    run's own folder, which every prepare (a first run or --again) empties, so a rerun never
    loads bytecode of a file that has changed since."""
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = MUTATE.run_env(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in env
    cache = Path(env["PYTHONPYCACHEPREFIX"])
    assert cache.parent == tmp_path
    stale = cache / "setup_env" / "probe" / "report" / "infer.cpython-311.pyc"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old")
    MUTATE.prepare("report-infer", tmp_path, again=True)
    assert not cache.exists()
    assert (tmp_path / "setup_env" / "probe" / "report" / "infer.py").is_file()


def test_again_reruns_the_survivors_and_relinks_a_function_no_test_reached(
    tmp_path: Path,
) -> None:
    """--again's second pass: the last run's survivors (a killed one and one never checked are
    not rerun), and a mutant of a function new since the last run, which mutmut left without
    tests: its stats are dropped so that mutmut links every function again."""
    stats = _last_run(tmp_path, RUN_TESTS)
    meta = tmp_path / "mutants" / "setup_env" / "x.py.meta"
    meta.parent.mkdir()
    before = {
        "setup_env.x.x_a__mutmut_1": "survived",
        "setup_env.x.x_a__mutmut_2": "killed",
        "setup_env.x.x_a__mutmut_3": "not checked",
    }
    after = {"setup_env.x.x_a__mutmut_1": 0, "setup_env.x.x_a__mutmut_2": 1}
    meta.write_text(json.dumps({"exit_code_by_key": after}))
    assert MUTATE.second_pass(tmp_path, before) == ["setup_env.x.x_a__mutmut_1"]
    assert stats.is_file()  # every function has its tests: the links are kept
    after["setup_env.x.x_new__mutmut_1"] = 33  # mutmut's "no tests"
    meta.write_text(json.dumps({"exit_code_by_key": after}))
    assert MUTATE.second_pass(tmp_path, before) == [
        "setup_env.x.x_a__mutmut_1",
        "setup_env.x.x_new__mutmut_1",
    ]
    assert not stats.exists()
    # a survivor listed as equivalent is not run again (its function unchanged)
    listed = next(iter(MUTATE.read_equivalent()))
    assert MUTATE.second_pass(tmp_path, {**before, listed: "survived"}) == [
        "setup_env.x.x_a__mutmut_1",
        "setup_env.x.x_new__mutmut_1",
    ]


def _plugin() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "_mutate_plugin_under_test", ROOT / "scripts" / "_mutate_plugin.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_a_mutants_tests_run_fastest_first_by_mutmuts_timings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mutmut stops at a mutant's first failing test: its tests are ordered by the durations in
    mutmut's stats (untimed ones last, ties in collection order); without stats, untouched."""
    plugin = _plugin()
    monkeypatch.chdir(tmp_path)
    names = ["t.py::slow", "t.py::untimed", "t.py::fast", "t.py::also_fast"]
    items = [_Item(n) for n in names]
    plugin.pytest_collection_modifyitems(items)
    assert [i.nodeid for i in items] == names  # no stats yet: collection order
    durations = {"t.py::slow": 2.5, "t.py::fast": 0.01, "t.py::also_fast": 0.01}
    (tmp_path / "mutmut-stats.json").write_text(json.dumps({"duration_by_test": durations}))
    plugin.pytest_collection_modifyitems(items)
    assert [i.nodeid for i in items] == [
        "t.py::fast",
        "t.py::also_fast",
        "t.py::slow",
        "t.py::untimed",
    ]


def test_again_makes_the_mutated_files_newer_than_their_mutants(tmp_path: Path) -> None:
    """mutmut makes a file's mutants again only when the file is newer than them. The copy
    keeps the edit's time, which can be older than mutants made since (a run of another tree
    in the same work dir): --again leaves each mutated file newer than its mutants."""
    module = "report-build"
    (only,), _tests = MUTATE.MODULES[module]
    mutant = tmp_path / "mutants" / only
    mutant.parent.mkdir(parents=True)
    mutant.write_text("# mutants of older code\n")
    MUTATE.prepare(module, tmp_path, again=True)
    copied = tmp_path / only
    assert copied.read_text() == (ROOT / only).read_text()
    # mutmut keeps the mutants only when the file is older than them
    assert copied.stat().st_mtime_ns >= mutant.stat().st_mtime_ns


def test_a_listed_equivalent_that_a_test_detects_is_named_for_mending() -> None:
    """A listed mutant that a test kills (its function renumbered, or the listing wrong) is
    named, so that the list is mended; a listed survivor and an unlisted kill are not."""
    listed = {"setup_env.x.x_a__mutmut_1": "why", "setup_env.x.x_a__mutmut_2": "why"}
    got = {
        "setup_env.x.x_a__mutmut_1": "killed",
        "setup_env.x.x_a__mutmut_2": "survived",
        "setup_env.x.x_a__mutmut_3": "killed",
        "setup_env.x.x_a__mutmut_4": "timeout",
    }
    assert MUTATE.stale_equivalents(got, listed) == ["setup_env.x.x_a__mutmut_1"]
    listed["setup_env.x.x_a__mutmut_4"] = "why"
    assert MUTATE.stale_equivalents(got, listed) == [
        "setup_env.x.x_a__mutmut_1",
        "setup_env.x.x_a__mutmut_4",
    ]
