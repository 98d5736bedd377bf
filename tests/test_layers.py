"""The house by layers: imports point down only, and no module imports itself back.

The layer order is written once, here (README "How it is built" describes it). A module may import
modules of its own layer or of a layer below; never one above. Every import counts: top-level,
inside a function (a lazy import is still a dependency) and under ``TYPE_CHECKING`` (a type is a
dependency too). Across the whole package the import graph has no cycle, within a layer
included. The package ``__init__`` a submodule's import runs by Python's rules is not an edge:
only the imports a module writes are.

Both rules are shown failing on a planted violation in a copy of the package, so the scanner is
known to see what it checks.
"""

from __future__ import annotations

import ast
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "setup_env"

# Bottom first. A module belongs to the layer of its longest matching prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # the one door for input, the exit codes, the version
    ("base", ("setup_env", "setup_env._record", "setup_env.bounded", "setup_env.exitcodes")),
    # the bundled data and the pure rules over it; the index client and refresh
    ("knowledge", ("setup_env.knowledge",)),
    # the picture of a machine, typed with the knowledge's vocabulary (Variant)
    ("facts", ("setup_env.facts",)),
    # readers of a machine or of a description of one (probes, pasted reports, binaries, nodes)
    ("probe", ("setup_env.probe",)),
    # pure functions from facts and knowledge to results, and the result types
    ("decide", ("setup_env.decide",)),
    # renderers: text, JSON, Markdown, JUnit, HTML
    ("output", ("setup_env.output",)),
    # what changes or exercises the machine: the installer, the smoke test, the fleet launchers
    ("act", ("setup_env.act",)),
    # argument parsing on top: one decider, one renderer per command
    ("commands", ("setup_env.commands", "setup_env.cli", "setup_env.__main__")),
)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    best, best_len = -1, -1
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            exact_only = p == "setup_env"  # the package itself, not everything under it
            hit = module == p or (not exact_only and module.startswith(p + "."))
            if hit and len(p) > best_len:
                best, best_len = i, len(p)
    if best < 0:
        raise AssertionError(f"{module}: in no layer (add it to LAYERS)")
    return best


def imports_of(path: Path, root: Path, known: set[str]) -> set[str]:
    """Every setup_env module ``path`` imports, wherever the import statement stands."""
    me = module_name(path, root)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join([*base, *([node.module] if node.module else [])])
            else:
                mod = node.module or ""
            # `from pkg import sub` imports the module pkg.sub; `from mod import name` imports mod
            names = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        else:
            continue
        for name in names:
            while name and name not in known:  # `import setup_env.a.b` -> the deepest module
                name = name.rpartition(".")[0]
            if name and name != me:
                out.add(name)
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    files = sorted(root.rglob("*.py"))
    known = {module_name(p, root) for p in files}
    return {module_name(p, root): imports_of(p, root, known) for p in files}


def upward_imports(graph: Mapping[str, set[str]]) -> list[str]:
    out = []
    for mod, deps in sorted(graph.items()):
        for dep in sorted(deps):
            if layer_of(dep) > layer_of(mod):
                lo, hi = LAYERS[layer_of(mod)][0], LAYERS[layer_of(dep)][0]
                out.append(f"{mod} ({lo}) imports {dep} ({hi})")
    return out


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def depth(graph: Mapping[str, set[str]]) -> int:
    """The longest import chain (levels), for the record; meaningful only without cycles."""
    memo: dict[str, int] = {}

    def d(v: str) -> int:
        if v not in memo:
            memo[v] = 0
            memo[v] = 1 + max((d(w) for w in graph.get(v, ())), default=0)
        return memo[v]

    return max(d(v) for v in graph)


# --- the real package ----------------------------------------------------------------------------


def test_every_module_is_in_a_layer() -> None:
    for mod in import_graph(PACKAGE):
        layer_of(mod)  # raises for a module no layer names


def test_imports_point_down_only() -> None:
    assert upward_imports(import_graph(PACKAGE)) == []


def test_no_import_cycles() -> None:
    assert cycles(import_graph(PACKAGE)) == []


# A module a reader can hold in mind: past this, split it by what its parts do (issue 16).
MAX_MODULE_LINES = 900


def oversized_modules(root: Path) -> list[str]:
    """Every module under ``root`` longer than MAX_MODULE_LINES, with its length."""
    out = []
    for path in sorted(root.rglob("*.py")):
        with path.open(encoding="utf-8") as fh:
            lines = sum(1 for _ in fh)
        if lines > MAX_MODULE_LINES:
            out.append(f"{path.relative_to(root).as_posix()}: {lines} lines")
    return out


def test_no_module_is_over_the_size_limit() -> None:
    assert oversized_modules(PACKAGE) == []


def test_the_graph_is_read() -> None:
    """The scanner sees the edges it must see (a scanner that reads nothing passes the rules)."""
    graph = import_graph(PACKAGE)
    assert "setup_env.knowledge.matrix" in graph["setup_env.decide.plan"]  # a lazy import
    assert "setup_env.decide.model" in graph["setup_env.decide.doctor"]
    assert "setup_env.probe.torch_arches" in graph["setup_env.decide.verdict"]
    assert depth(graph) >= 4


# --- planted violations --------------------------------------------------------------------------


@pytest.fixture
def package_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "setup_env"
    shutil.copytree(PACKAGE, dest, ignore=shutil.ignore_patterns("__pycache__", "data"))
    return dest


def _plant(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + f"\n\ndef _planted() -> None:\n    {line}\n")


def test_a_planted_upward_import_fails(package_copy: Path) -> None:
    _plant(package_copy / "knowledge" / "cuda.py", "from setup_env.decide.plan import make_plan")
    assert upward_imports(import_graph(package_copy)) == [
        "setup_env.knowledge.cuda (knowledge) imports setup_env.decide.plan (decide)"
    ]


def test_a_planted_type_checking_import_counts(package_copy: Path) -> None:
    path = package_copy / "facts.py"
    path.write_text(
        path.read_text(encoding="utf-8")
        + "\nif TYPE_CHECKING:\n    from setup_env.probe.host import Host\n"
    )
    assert upward_imports(import_graph(package_copy)) == [
        "setup_env.facts (facts) imports setup_env.probe.host (probe)"
    ]


def test_a_planted_cycle_fails(package_copy: Path) -> None:
    # doctor imports model; model importing doctor back closes a cycle inside one layer.
    _plant(package_copy / "decide" / "model.py", "from setup_env.decide import doctor")
    graph = import_graph(package_copy)
    assert upward_imports(graph) == []  # same layer: only the cycle rule can catch it
    (found,) = cycles(graph)  # one cycle, through every module that both reaches and is reached
    assert {"setup_env.decide.doctor", "setup_env.decide.model"} <= set(found)


def test_a_planted_long_module_fails(package_copy: Path) -> None:
    path = package_copy / "knowledge" / "tags.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text + "#\n" * (MAX_MODULE_LINES - len(text.splitlines())), encoding="utf-8")
    assert oversized_modules(package_copy) == []  # exactly at the limit: fine
    path.write_text(path.read_text(encoding="utf-8") + "#\n", encoding="utf-8")  # one past it
    assert oversized_modules(package_copy) == [f"knowledge/tags.py: {MAX_MODULE_LINES + 1} lines"]


def test_a_module_outside_every_layer_fails() -> None:
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("setup_env_other.thing")
