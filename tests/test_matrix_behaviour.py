"""How the wheel matrix is read (issue 22): every value of a document reaches its typed row
unchanged, an optional part left out has its stated default, a malformed document is one
MatrixError that names its file, and which file is in use follows the stated precedence.

Each test reads and parses inside itself (no module-level matrix), on the frozen fixture
tests/fixtures/matrix/wheels-subset.json (see its SOURCE) and platform-notes.json (the bundled
data's platform notes, copied unchanged). Where a test cuts or alters a row to reach a case, it
says so.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "matrix"
SUBSET = FIXTURES / "wheels-subset.json"
V = Variant.parse


def _doc() -> dict[str, Any]:
    """The frozen subset, parsed from its text afresh (a test may change its copy)."""
    doc: dict[str, Any] = json.loads(SUBSET.read_text(encoding="utf-8"))
    return doc


def _with_platform_notes() -> dict[str, Any]:
    doc = _doc()
    notes = json.loads((FIXTURES / "platform-notes.json").read_text(encoding="utf-8"))
    doc["platform_notes"] = notes["platform_notes"]
    return doc


# --- every value reaches its typed row --------------------------------------------------------


def test_a_release_row_is_read_value_for_value() -> None:
    doc = _doc()
    m = mx.parse(doc)
    assert len(m.releases) == len(doc["releases"])
    for rel in m.releases:
        row = doc["releases"][str(rel.version)]
        assert rel.uploaded == row["uploaded"]
        assert rel.requires_python == row["requires_python"]
        assert rel.python == tuple(row["python"])
        assert dict(rel.pypi_files) == {t: tuple(pas) for t, pas in row["pypi_files"].items()}
        assert {
            p: (str(pv.variant), pv.confidence, pv.source) for p, pv in rel.pypi_variant.items()
        } == {
            p: (pv["variant"], pv["confidence"], pv["source"])
            for p, pv in row["pypi_variant"].items()
        }
        assert {
            (str(v), p, a.confidence, a.source)
            for v, plats in rel.index.items()
            for p, a in plats.items()
        } == {
            (v, p, a["confidence"], a["source"])
            for v, plats in row["index"].items()
            for p, a in plats.items()
        }
        assert {
            n: (c.name, c.version, c.spec, c.confidence, c.source)
            for n, c in rel.companions.items()
        } == {
            n: (
                n,
                Version(c["version"]) if c["version"] else None,
                c["spec"],
                c["confidence"],
                c["source"],
            )
            for n, c in row["companions"].items()
        }
        floors = row["platform_min"]
        assert dict(rel.min_glibc) == {
            p: Version(f["glibc"]) for p, f in floors.items() if "glibc" in f
        }
        assert dict(rel.min_macos) == {
            p: Version(f["macos"]) for p, f in floors.items() if "macos" in f
        }
        assert [
            (t.platform_tag, t.min_glibc, t.note, t.confidence, t.source) for t in rel.traps
        ] == [
            (t["platform_tag"], Version(t["min_glibc"]), t["note"], t["confidence"], t["source"])
            for t in row["traps"]
        ]
        assert (rel.confidence, rel.source) == (row["confidence"], row["source"])


def test_the_real_rows_hold_each_kind_of_value_the_reading_is_checked_on() -> None:
    """The round trip above means something only if the subset has each kind of value: a
    companion with an exact version and one with only a pattern, both floors, a trap."""
    m = mx.parse(_doc())
    comps = [c for r in m.releases for c in r.companions.values()]
    assert any(c.version is not None for c in comps)
    assert any(c.version is None and c.spec for c in comps)
    assert any(r.min_glibc for r in m.releases) and any(r.min_macos for r in m.releases)
    assert any(r.traps for r in m.releases)


def test_releases_come_out_oldest_first_whatever_the_files_order() -> None:
    doc = _doc()
    doc["releases"] = dict(reversed(list(doc["releases"].items())))  # the file's order reversed
    m = mx.parse(doc)
    assert [r.version for r in m.releases] == sorted(Version(k) for k in doc["releases"])
    assert m.newest.version == Version("2.15.0")
    assert m.release("2.2.2") is m.releases[0]


def test_whether_a_plan_may_use_an_index_row_is_its_grade_not_its_stored_flag() -> None:
    """The subset's own 2.6.0 xpu row: graded I, stored verified=false by an older rule."""
    doc = _doc()
    stored = doc["releases"]["2.6.0"]["index"]["xpu"]["linux_x86_64"]
    assert (stored["confidence"], stored["verified"]) == ("I", False)
    # and the other way round: a row graded ? that claims verified=true (flag altered here)
    unsure = doc["releases"]["2.13.0"]["index"]
    label = next(
        v for v, ps in unsure.items() if ps.get("linux_aarch64", {}).get("confidence") == "?"
    )
    unsure[label]["linux_aarch64"]["verified"] = True
    m = mx.parse(doc)
    r260, r2130 = m.release("2.6.0"), m.release("2.13.0")
    assert r260 is not None and r2130 is not None
    assert r260.index[V("xpu")]["linux_x86_64"].verified is True
    assert r260.index[V("xpu")]["linux_x86_64"].inferred
    assert V("xpu") in r260.index_variants("linux_x86_64")
    assert r2130.index[V(label)]["linux_aarch64"].verified is False
    assert V(label) not in r2130.index_variants("linux_aarch64")
    assert V(label) in r2130.index_variants("linux_aarch64", verified_only=False)


def test_a_build_row_is_one_build_per_release_and_platform_it_names() -> None:
    doc = _doc()
    m = mx.parse(doc)
    expected = 0
    for b in doc["builds"]:
        for rel in b["releases"]:
            for plat in b["platforms"]:
                expected += 1
                got = m.build(V(b["variant"]), rel, plat)
                assert got is not None, (b["variant"], rel, plat)
                assert (got.variant, got.release, got.platform) == (
                    V(b["variant"]),
                    Version(rel),
                    plat,
                )
                assert got.toolkit == Version(b["toolkit"])
                assert got.sass == tuple(tuple(map(int, a.split("."))) for a in b["sass"])
                assert got.ptx == ()
                assert (got.confidence, got.source) == (b["confidence"], b["source"])
                assert (got.note, got.measured) == (b.get("note", ""), b.get("measured", ""))
    assert len(m.builds) == expected
    assert any(b.get("note") for b in doc["builds"]) and any(
        b.get("measured") for b in doc["builds"]
    )


def test_a_builds_ptx_targets_are_read_after_its_sass() -> None:
    """No real build lists PTX (VERIFIED §3); the 2.15.0 cu132 x86_64 row is given one here."""
    doc = _doc()
    row = next(
        b
        for b in doc["builds"]
        if b["variant"] == "cu132"
        and "2.15.0" in b["releases"]
        and "linux_x86_64" in b["platforms"]
    )
    row["ptx"] = ["12.0"]
    b = mx.parse(doc).build(V("cu132"), "2.15.0", "linux_x86_64")
    assert b is not None and b.ptx == ((12, 0),)
    assert b.arch_names()[-2:] == ("sm_120", "compute_120")


def test_a_build_without_a_note_or_a_measurement_has_neither() -> None:
    doc = _doc()
    noted = next(b for b in doc["builds"] if b.get("note"))
    measured = next(b for b in doc["builds"] if b.get("measured"))
    del noted["note"], measured["measured"]  # cut here
    m = mx.parse(doc)
    for row in (noted, measured):
        b = m.build(V(row["variant"]), row["releases"][0], row["platforms"][0])
        assert b is not None and (b.note, b.measured) == ("", "")


def test_a_cuda_row_keeps_each_driver_floor_as_nvidia_writes_it() -> None:
    doc = _doc()
    m = mx.parse(doc)
    assert set(m.cuda) == set(doc["cuda"])
    for xy, row in doc["cuda"].items():
        got = m.cuda_version(xy)
        assert got is not None and got.version == xy
        assert (got.confidence, got.source) == (row["confidence"], row["source"])
        assert set(got.updates) == set(row["updates"])
        for floor, want in [(got.mvc, row["mvc"])] + [
            (got.updates[u], row["updates"][u]) for u in row["updates"]
        ]:
            assert (floor.linux, floor.windows) == (
                Version(want["linux"]),
                Version(want["windows"]),
            )
            assert (floor.linux_text, floor.windows_text) == (want["linux"], want["windows"])
            assert floor.windows_confidence == want["windows_confidence"]
    # "560.35.05" is printed as written, not as packaging's 560.35.5
    assert m.cuda["12.6"].toolkit_minimum(Version("12.6.3")).for_os("linux")[1] == "560.35.05"


def test_a_windows_floor_without_a_grade_is_unverified() -> None:
    doc = _doc()
    del doc["cuda"]["12.8"]["mvc"]["windows_confidence"]  # cut here
    assert mx.parse(doc).cuda["12.8"].mvc.windows_confidence == "?"


def test_the_newest_update_is_the_newest_by_version_not_by_text() -> None:
    """A toolkit the data does not list gets its newest update's floor; the 12.6.3 row is
    renamed 12.6.10 here, so that text order (12.6.3 > 12.6.10) and version order differ."""
    doc = _doc()
    updates = doc["cuda"]["12.6"]["updates"]
    updates["12.6.10"] = updates.pop("12.6.3")
    row = mx.parse(doc).cuda["12.6"]
    assert row.toolkit_minimum(Version("12.6.11")) == row.updates["12.6.10"]
    assert row.toolkit_minimum(Version("12.6.2")) == row.updates["12.6.2"]


def test_the_documents_own_tables_are_read() -> None:
    doc = _with_platform_notes()
    m = mx.parse(doc, path="/data/w.json", origin="user")
    assert (m.schema_version, m.source, m.retrieved, m.generated_by) == (
        1, doc["source"], doc["retrieved"], doc["generated_by"],
    )  # fmt: skip
    assert (m.path, m.origin, m.index_url) == ("/data/w.json", "user", doc["index_url"])
    tv = doc["companion_files"]["torchvision"]
    assert {v: dict(f) for v, f in m.torchvision_files.items()} == {
        v: {t: tuple(x) for t, x in f.items()} for v, f in tv.items()
    }
    assert dict(m.nightly) == {
        p: tuple(V(x) for x in vs) for p, vs in doc["nightly"]["variants"].items()
    }
    note = m.platform_notes["windows_arm64"]
    want = doc["platform_notes"]["windows_arm64"]
    assert (note.platform, note.wheels, note.python, note.index_variant) == (
        "windows_arm64", want["wheels"], tuple(want["python"]), want["index_variant"],
    )  # fmt: skip
    assert (note.confidence, note.source, note.note) == (
        want["confidence"],
        want["source"],
        want["note"],
    )


def test_a_platform_note_without_wheels_or_a_note_is_of_cpu_wheels_and_says_nothing() -> None:
    doc = _with_platform_notes()
    for key in ("wheels", "note"):
        del doc["platform_notes"]["windows_arm64"][key]  # cut here
    note = mx.parse(doc).platform_notes["windows_arm64"]
    assert (note.wheels, note.note) == ("cpu", "")


def test_a_document_without_its_optional_tables_has_empty_ones() -> None:
    doc = _doc()
    for key in ("index_url", "companion_files", "nightly"):
        del doc[key]  # cut here
    m = mx.parse(doc)
    assert m.index_url == mx.DEFAULT_INDEX_URL
    assert (dict(m.torchvision_files), dict(m.nightly), dict(m.platform_notes)) == ({}, {}, {})
    assert (m.path, m.origin) == ("", "bundled")


def test_a_release_row_without_its_optional_parts() -> None:
    """The 2.6.0 row with uploaded, requires_python, pypi_variant, companions, platform_min
    and traps cut: no date, any Python, nothing known of PyPI's variant, companions or floors."""
    doc = _doc()
    row = doc["releases"]["2.6.0"]
    for key in (
        "uploaded",
        "requires_python",
        "pypi_variant",
        "companions",
        "platform_min",
        "traps",
    ):
        del row[key]
    rel = mx.parse(doc).release("2.6.0")
    assert rel is not None
    assert (rel.uploaded, rel.requires_python) == ("", "")
    assert rel.allows_python("3.8") and rel.allows_python("3.15")
    assert (dict(rel.pypi_variant), dict(rel.companions)) == ({}, {})
    assert (dict(rel.min_glibc), dict(rel.min_macos), rel.traps) == ({}, {}, ())


def test_a_companion_without_a_version_or_spec_has_none() -> None:
    doc = _doc()
    comp = doc["releases"]["2.14.1"]["companions"]["torchvision"]
    assert comp["version"] is None and comp["spec"] == "==0.29.*"
    del comp["version"], comp["spec"]  # cut here
    c = mx.parse(doc).release("2.14.1").companions["torchvision"]  # type: ignore[union-attr]
    assert (c.version, c.spec) == (None, None)


def test_a_trap_without_a_note_has_an_empty_one() -> None:
    doc = _doc()
    del doc["releases"]["2.6.0"]["traps"][0]["note"]  # cut here
    rel = mx.parse(doc).release("2.6.0")
    assert rel is not None and rel.traps[0].note == ""
    assert rel.traps[0].platform_tag == "manylinux1_x86_64"


def test_the_wheel_tags_of_a_platform_join_interpreter_and_platform_tags() -> None:
    rel = mx.parse(_doc()).release("2.6.0")
    assert rel is not None
    tags = rel.wheel_tags("linux_x86_64")
    assert "cp39-cp39-manylinux1_x86_64" in tags
    assert tags == frozenset(
        f"{pa}-{t}" for t in rel.platform_tags("linux_x86_64") for pa in rel.pypi_files[t]
    )
    assert all(t.endswith("x86_64") and "manylinux" in t for t in tags)
    assert rel.wheel_tags("windows_arm64") == frozenset()


def test_the_summary_a_plan_reports() -> None:
    m = mx.parse(_doc(), path="/data/w.json", origin="env")
    assert m.summary() == {
        "path": "/data/w.json",
        "origin": "env",
        "retrieved": "2026-12-02",
        "schema_version": 1,
        "newest_release": "2.15.0",
        "notes": [],
    }


# --- a malformed document --------------------------------------------------------------------


def test_a_malformed_document_names_its_first_problem_and_counts_the_rest() -> None:
    doc = _doc()
    doc["releases"]["2.15.0"]["confidence"] = "sure"  # altered here: one problem
    problems = mx.validate(doc)
    assert len(problems) == 1
    with pytest.raises(mx.MatrixError) as one:
        mx.parse(doc, path="/data/w.json")
    assert str(one.value) == f"/data/w.json: invalid wheel matrix: {problems[0]}"
    doc["releases"]["2.14.1"]["confidence"] = "sure"  # two
    first = mx.validate(doc)[0]
    with pytest.raises(mx.MatrixError) as two:
        mx.parse(doc)
    assert str(two.value) == f"invalid wheel matrix: {first} (and 1 more)"
    doc["releases"]["2.13.0"]["confidence"] = "sure"  # three
    with pytest.raises(mx.MatrixError) as three:
        mx.parse(doc)
    assert str(three.value).endswith(" (and 2 more)")


def test_a_value_of_the_wrong_type_is_a_matrix_error_not_a_crash() -> None:
    """A list where an object is expected (12.8's driver updates, altered here)."""
    doc = _doc()
    doc["cuda"]["12.8"]["updates"] = list(doc["cuda"]["12.8"]["updates"])
    with pytest.raises(mx.MatrixError) as err:
        mx.parse(doc, path="/data/w.json")
    assert str(err.value) == (
        "/data/w.json: invalid wheel matrix: a value has the wrong type or shape "
        "(AttributeError: 'list' object has no attribute 'values')"
    )
    with pytest.raises(mx.MatrixError) as bare:
        mx.parse(doc)
    assert str(bare.value).startswith("invalid wheel matrix: a value has the wrong type")


# --- reading a file ----------------------------------------------------------------------------


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_loaded_matrix_names_its_file_and_how_it_was_chosen(tmp_path: Path) -> None:
    path = _write(tmp_path / "w.json", _doc())
    m = mx.load_matrix(path)
    assert (m.path, m.origin, m.retrieved) == (str(path), "explicit", "2026-12-02")


def test_a_matrix_file_at_the_size_cap_is_read_and_one_byte_more_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "w.json", _doc())
    size = path.stat().st_size
    monkeypatch.setattr(mx, "MAX_MATRIX_FILE", size)
    assert mx.read_document(path)["retrieved"] == "2026-12-02"
    monkeypatch.setattr(mx, "MAX_MATRIX_FILE", size - 1)
    with pytest.raises(mx.MatrixError) as err:
        mx.read_document(path)
    assert str(err.value) == f"{path}: cannot read the wheel matrix (over {size - 1} bytes)"


def test_a_matrix_file_that_is_not_json_is_named_as_the_wheel_matrix(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(SUBSET.read_text(encoding="utf-8")[:-200], encoding="utf-8")  # cut short
    with pytest.raises(mx.MatrixError) as err:
        mx.read_document(path)
    assert str(err.value).startswith(f"{path}: the wheel matrix is not JSON (")


def test_a_missing_matrix_file_is_named_with_the_reason(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.json"
    with pytest.raises(mx.MatrixError) as err:
        mx.load_matrix(missing)
    assert str(err.value) == f"{missing}: cannot read the wheel matrix (No such file or directory)"


def test_two_matrix_files_are_never_mistaken_for_each_other(tmp_path: Path) -> None:
    """Same size and same modification time (set here), another retrieval date."""
    a, b = _doc(), _doc()
    b["retrieved"] = "2026-12-24"
    pa, pb = _write(tmp_path / "a.json", a), _write(tmp_path / "b.json", b)
    assert pa.stat().st_size == pb.stat().st_size
    t = pa.stat().st_mtime_ns
    os.utime(pb, ns=(t, t))
    assert mx.load_matrix(pa).retrieved == "2026-12-02"
    assert mx.load_matrix(pb).retrieved == "2026-12-24"


def test_a_matrix_file_rewritten_is_read_again(tmp_path: Path) -> None:
    doc = _doc()
    path = _write(tmp_path / "w.json", doc)
    assert mx.load_matrix(path).retrieved == "2026-12-02"
    doc["retrieved"] = "2026-12-24"
    _write(path, doc)
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    assert mx.load_matrix(path).retrieved == "2026-12-24"


def test_one_file_read_by_two_routes_says_which_route_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "w.json", _doc())
    monkeypatch.setenv(mx.ENV_VAR, str(path))
    assert mx.load_matrix(path).origin == "explicit"
    assert mx.load_matrix().origin == "env"
    assert mx.load_matrix(path).origin == "explicit"


# --- which file is in use -----------------------------------------------------------------------


@pytest.fixture
def user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user cache of its own, no SETUP_ENV_MATRIX; the refreshed copy's path."""
    monkeypatch.delenv(mx.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(mx.sys, "platform", "linux")
    user = mx.user_matrix_path()
    user.parent.mkdir(parents=True)
    return user


def _bundled_retrieved() -> str:
    return str(mx.read_document(mx.BUNDLED_PATH)["retrieved"])


@pytest.mark.parametrize(
    ("days", "origin"),
    [(-1, "bundled"), (0, "user"), (1, "user")],
)
def test_a_refreshed_copy_is_used_unless_it_is_older_than_the_bundled_data(
    user_cache: Path, days: int, origin: str
) -> None:
    """Retrieved a day before the bundled data, the same day, a day after."""
    import datetime

    bundled = datetime.date.fromisoformat(_bundled_retrieved())
    doc = _doc()
    doc["retrieved"] = (bundled + datetime.timedelta(days=days)).isoformat()
    _write(user_cache, doc)
    m = mx.load_matrix()
    assert m.origin == origin
    assert bool(m.notes) is (origin == "bundled")


def test_a_broken_setting_is_noted_on_the_refreshed_copy_used_instead(
    user_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _doc()
    doc["retrieved"] = _bundled_retrieved()
    _write(user_cache, doc)
    monkeypatch.setenv(mx.ENV_VAR, str(tmp_path / "nowhere.json"))
    m = mx.load_matrix()
    assert m.origin == "user"
    assert len(m.notes) == 1 and m.notes[0].startswith(f"{mx.ENV_VAR} ignored: ")


# --- what validation finds ---------------------------------------------------------------------
#
# Each case alters one part of the real subset (said in its id) and names the one problem it
# makes: where it is (the row, the field) and what is wrong, as the user reads it.

Doc = dict[str, Any]
Q = ("V", "V2", "I", "?")
PY215 = ("releases", "2.15.0")


def _at(doc: Doc, *path: str) -> Any:
    node: Any = doc
    for key in path:
        node = node[int(key)] if isinstance(node, list) else node[key]
    return node


def _set(path: tuple[str, ...], value: Any) -> Any:
    def alter(doc: Doc) -> None:
        node = _at(doc, *path[:-1])
        node[int(path[-1]) if isinstance(node, list) else path[-1]] = value

    return alter


def _drop(path: tuple[str, ...]) -> Any:
    def alter(doc: Doc) -> None:
        del _at(doc, *path[:-1])[path[-1]]

    return alter


def _add(path: tuple[str, ...], key: str, value: Any) -> Any:
    def alter(doc: Doc) -> None:
        _at(doc, *path)[key] = value

    return alter


def _build(i: int, key: str, value: Any) -> Any:
    def alter(doc: Doc) -> None:
        doc["builds"][i][key] = value

    return alter


META = {"confidence": "V", "source": "test"}
R = "releases[2.15.0]"
P26 = ("releases", "2.6.0")
R26 = "releases[2.6.0]"


@pytest.mark.parametrize(
    ("alter", "problems"),
    [
        # the header
        pytest.param(_set(("schema_version",), 2), ["schema_version 2 is not 1"], id="schema-2"),
        pytest.param(_drop(("source",)), ["source: missing"], id="no-source"),
        pytest.param(_drop(("generated_by",)), ["generated_by: missing"], id="no-generated-by"),
        pytest.param(
            _set(("retrieved",), "02-12-2026"), ["retrieved: expected YYYY-MM-DD"], id="date"
        ),
        pytest.param(_drop(("index_url",)), [], id="no-index-url-is-the-default"),
        # a release row
        pytest.param(_set((*PY215, "confidence"), "sure"),
                     [f"{R}.confidence: 'sure' not one of {Q}"], id="release-grade"),
        pytest.param(_drop((*PY215, "source")), [f"{R}.source: missing"], id="release-source"),
        pytest.param(_drop((*PY215, "requires_python")), [], id="no-requires-python"),
        pytest.param(_set((*PY215, "requires_python"), ">= 3.11"),
                     [f"{R}.requires_python: '>= 3.11' is not a specifier"], id="requires-python"),
        pytest.param(_set((*PY215, "pypi_files"), []),
                     [f"{R}.pypi_files: expected an object"], id="pypi-files-list"),
        pytest.param(_add((*PY215, "pypi_files"), "Manylinux_2_28_x86_64", ["cp311-cp311"]),
                     [f"{R}.pypi_files: bad platform tag 'Manylinux_2_28_x86_64'"], id="tag"),
        pytest.param(_add((*PY215, "pypi_files"), "manylinux_2_28_x86_64", ["cp311"]),
                     [f"{R}.pypi_files[manylinux_2_28_x86_64]: bad interpreter tags"], id="pyabi"),
        pytest.param(_add((*PY215, "pypi_files"), "manylinux_2_28_x86_64", {}),
                     [f"{R}.pypi_files[manylinux_2_28_x86_64]: bad interpreter tags"],
                     id="pyabi-not-a-list"),
        pytest.param(_set((*PY215, "python"), ["3.11", "three"]),
                     [f"{R}.python: bad Python versions"], id="python"),
        pytest.param(_set((*PY215, "python"), {}), [f"{R}.python: bad Python versions"],
                     id="python-not-a-list"),
        pytest.param(_add((*PY215, "pypi_variant"), "linux_riscv64",
                          {"variant": "cpu", **META}),
                     [f"{R}.pypi_variant: unknown platform 'linux_riscv64'"], id="pypi-platform"),
        pytest.param(_set((*PY215, "pypi_variant", "linux_x86_64", "confidence"), "sure"),
                     [f"{R}.pypi_variant[linux_x86_64].confidence: 'sure' not one of {Q}"],
                     id="pypi-variant-grade"),
        pytest.param(_set((*PY215, "pypi_variant", "linux_x86_64", "variant"), "cu13x"),
                     [f"{R}.pypi_variant[linux_x86_64]: bad variant 'cu13x'"], id="pypi-variant"),
        pytest.param(_set((*PY215, "index"), []), [f"{R}.index: expected an object"],
                     id="index-list"),
        pytest.param(_set((*PY215, "index", "cpu"), []), [f"{R}.index[cpu]: expected an object"],
                     id="index-row-list"),
        pytest.param(_add((*PY215, "index", "cpu"), "linux_riscv64",
                          {"verified": False, **META}),
                     [f"{R}.index[cpu]: unknown platform 'linux_riscv64'"], id="index-platform"),
        pytest.param(_set((*PY215, "index", "cpu", "linux_x86_64", "confidence"), "sure"),
                     [f"{R}.index[cpu][linux_x86_64].confidence: 'sure' not one of {Q}"],
                     id="index-grade"),
        pytest.param(_set((*PY215, "index", "cpu", "linux_x86_64", "verified"), "yes"),
                     [f"{R}.index[cpu][linux_x86_64].verified: expected true/false"],
                     id="index-verified"),
        pytest.param(_add((*PY215, "companions"), "torchtext", {"version": None, **META}),
                     [f"{R}.companions[torchtext]: unknown companion"], id="companion-name"),
        pytest.param(_set((*PY215, "companions", "torchvision", "confidence"), "sure"),
                     [f"{R}.companions[torchvision].confidence: 'sure' not one of {Q}"],
                     id="companion-grade"),
        pytest.param(_set((*PY215, "companions", "torchvision", "version"), "0.30"),
                     [f"{R}.companions[torchvision].version: bad version '0.30'"],
                     id="companion-version"),
        pytest.param(_add((*P26, "platform_min"), "linux_riscv64", {"glibc": "2.28"}),
                     [f"{R26}.platform_min[linux_riscv64]: bad entry"], id="floor-platform"),
        pytest.param(_set((*P26, "platform_min", "linux_x86_64"), "2.28"),
                     [f"{R26}.platform_min[linux_x86_64]: bad entry"], id="floor-not-an-object"),
        pytest.param(_set((*P26, "platform_min", "linux_x86_64", "glibc"), "2.28.1"),
                     [f"{R26}.platform_min[linux_x86_64].glibc: bad version"], id="glibc"),
        pytest.param(_set((*P26, "platform_min", "macos_arm64", "macos"), "11"),
                     [f"{R26}.platform_min[macos_arm64].macos: bad version"], id="macos"),
        pytest.param(_set((*P26, "traps", "0", "min_glibc"), "2.28.0"),
                     [f"{R26}.traps[0].min_glibc: bad version"], id="trap-glibc"),
        pytest.param(_set((*P26, "traps", "0", "confidence"), "sure"),
                     [f"{R26}.traps[0].confidence: 'sure' not one of {Q}"], id="trap-grade"),
        # the builds
        pytest.param(_set(("builds",), {}), ["builds: expected a list"], id="builds-object"),
        pytest.param(_build(0, "confidence", "sure"),
                     [f"builds[0].confidence: 'sure' not one of {Q}"], id="build-grade"),
        pytest.param(_build(0, "variant", "cpu"), ["builds[0].variant: bad CUDA variant 'cpu'"],
                     id="build-not-cuda"),
        pytest.param(_build(0, "variant", "CU118"),
                     ["builds[0].variant: bad CUDA variant 'CU118'"], id="build-spelling"),
        pytest.param(_build(0, "variant", "cu13x"),
                     ["builds[0].variant: bad CUDA variant 'cu13x'"], id="build-variant"),
        pytest.param(_build(0, "toolkit", "11.8"), ["builds[0].toolkit: bad toolkit version"],
                     id="toolkit"),
        pytest.param(_build(0, "toolkit", None), ["builds[0].toolkit: bad toolkit version"],
                     id="toolkit-none"),
        pytest.param(_build(0, "sass", ["8.0", "sm_90"]),
                     ["builds[0].sass: expected a list of compute capabilities"], id="sass"),
        pytest.param(_build(0, "sass", {}),
                     ["builds[0].sass: expected a list of compute capabilities"], id="sass-object"),
        pytest.param(_build(0, "ptx", ["9"]),
                     ["builds[0].ptx: expected a list of compute capabilities"], id="ptx"),
        pytest.param(_build(0, "releases", ["2.16.0"]),
                     ["builds[0]: release '2.16.0' is not in releases"], id="build-release"),
        pytest.param(_build(0, "platforms", ["linux_riscv64"]),
                     ["builds[0]: unknown platform 'linux_riscv64'"], id="build-platform"),
        # the CUDA driver rows
        pytest.param(_set(("cuda", "12.8", "confidence"), "sure"),
                     [f"cuda[12.8].confidence: 'sure' not one of {Q}"], id="cuda-grade"),
        pytest.param(_set(("cuda", "12.8", "updates", "12.8.1", "linux"), "570.124.06; x"),
                     ["cuda[12.8]: bad driver version"], id="update-driver"),
        pytest.param(_set(("cuda", "12.8", "mvc", "windows"), "latest"),
                     ["cuda[12.8]: bad driver version"], id="mvc-driver"),
        # the document's other tables
        pytest.param(_set(("nightly", "variants", "linux_x86_64"), ["cpu", "cu13x"]),
                     ["nightly.variants[linux_x86_64]: bad entry"], id="nightly-variant"),
        pytest.param(_set(("nightly", "variants", "linux_riscv64"), ["cpu"]),
                     ["nightly.variants[linux_riscv64]: bad entry"], id="nightly-platform"),
        pytest.param(_set(("companion_files", "torchvision", "0.30"), {}),
                     ["companion_files.torchvision[0.30]: bad entry"], id="tv-version"),
        pytest.param(_set(("companion_files", "torchvision", "0.30.0"), []),
                     ["companion_files.torchvision[0.30.0]: bad entry"], id="tv-files"),
    ],
)  # fmt: skip
def test_validation_names_each_fault_where_it_is(alter: Any, problems: list[str]) -> None:
    doc = _doc()
    alter(doc)
    assert mx.validate(doc) == problems


def test_the_trap_and_floor_cases_alter_real_rows() -> None:
    """The cases above reach into 2.6.0's glibc floor and trap and 2.15.0's PyPI variant:
    the subset has them, so each case changes one real value."""
    doc = _doc()
    assert _at(doc, "releases", "2.6.0", "traps")[0]["min_glibc"] == "2.28"
    assert set(_at(doc, "releases", "2.6.0", "platform_min")) >= {"linux_x86_64", "macos_arm64"}
    assert _at(doc, *PY215, "pypi_variant", "linux_x86_64")["variant"] == "cu132"
    assert doc["builds"][0]["toolkit"] == "11.8.0" and mx.validate(doc) == []


def _notes_set(key: str, value: Any) -> Any:
    def alter(doc: Doc) -> None:
        doc["platform_notes"]["windows_arm64"][key] = value

    return alter


N = "platform_notes[windows_arm64]"


def _note_as(platform: str) -> Any:
    """The Windows on Arm64 note filed under another name as well."""

    def alter(doc: Doc) -> None:
        doc["platform_notes"][platform] = doc["platform_notes"]["windows_arm64"]

    return alter


@pytest.mark.parametrize(
    ("alter", "problems"),
    [
        pytest.param(_notes_set("confidence", "sure"), [f"{N}.confidence: 'sure' not one of {Q}"],
                     id="grade"),
        pytest.param(_notes_set("index_variant", "cu13x"), [f"{N}.index_variant: bad variant"],
                     id="index-variant"),
        pytest.param(_notes_set("python", ["3.11", "three"]), [f"{N}.python: bad Python versions"],
                     id="python"),
        pytest.param(_notes_set("python", {}), [f"{N}.python: bad Python versions"],
                     id="python-not-a-list"),
        pytest.param(_notes_set("python", ["3.13", "3.13t"]), [], id="free-threaded-python"),
        pytest.param(_note_as("linux_x86_64"),
                     ["platform_notes[linux_x86_64]: not a platform without release rows"],
                     id="a-platform-with-release-rows"),
        pytest.param(_note_as("Windows Arm64"),
                     ["platform_notes[Windows Arm64]: not a platform without release rows"],
                     id="not-a-platform-name"),
        pytest.param(_set(("platform_notes",), ["windows_arm64"]),
                     ["platform_notes: expected an object"], id="not-an-object"),
    ],
)  # fmt: skip
def test_validation_of_a_platform_note(alter: Any, problems: list[str]) -> None:
    """The bundled data's Windows on Arm64 note, joined to the subset, one value altered."""
    doc = _with_platform_notes()
    assert mx.validate(doc) == []
    alter(doc)
    assert mx.validate(doc) == problems


def _first(mapping: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    """``mapping`` with ``key: value`` put first (validation walks a table in its order)."""
    return {key: value, **{k: v for k, v in mapping.items() if k != key}}


def _release_key_first(doc: Doc) -> None:
    doc["releases"] = _first(doc["releases"], "2.15", {})


def _release_not_an_object_first(doc: Doc) -> None:
    doc["releases"] = _first(doc["releases"], "2.2.2", [])


def _index_row_not_an_object_first(doc: Doc) -> None:
    doc["releases"]["2.15.0"]["index"]["cpu"] = []  # cpu is the first variant of 2.15.0


def _companion_not_an_object_first(doc: Doc) -> None:
    doc["releases"]["2.15.0"]["companions"]["torchvision"] = "0.30.0"  # torchaudio follows


def _floor_bad_first(doc: Doc) -> None:
    doc["releases"]["2.15.0"]["platform_min"] = _first(
        doc["releases"]["2.15.0"]["platform_min"], "linux_riscv64", {"glibc": "2.28"}
    )


def _build_not_an_object_first(doc: Doc) -> None:
    doc["builds"][0] = []


def _cuda_row_not_an_object_first(doc: Doc) -> None:
    doc["cuda"] = _first(doc["cuda"], "10.2", [])


def _note_not_an_object_first(doc: Doc) -> None:
    doc["platform_notes"] = _first(doc["platform_notes"], "linux_riscv64", [])


@pytest.mark.parametrize(
    ("skipped", "first"),
    [
        (_release_key_first, "releases[2.15]: not a release version X.Y.Z"),
        (_release_not_an_object_first, "releases[2.2.2]: expected an object"),
        (_index_row_not_an_object_first, f"{R}.index[cpu]: expected an object"),
        (_companion_not_an_object_first, f"{R}.companions[torchvision]: expected an object"),
        (_floor_bad_first, f"{R}.platform_min[linux_riscv64]: bad entry"),
        (_build_not_an_object_first, "builds[0]: expected an object"),
        (_cuda_row_not_an_object_first, "cuda[10.2]: expected an object"),
        (_note_not_an_object_first, "platform_notes[linux_riscv64]: expected an object"),
    ],
)
def test_a_row_that_cannot_be_read_does_not_hide_the_faults_after_it(
    skipped: Any, first: str
) -> None:
    """A row validation must pass over comes first in its table; a fault in the rows after it
    (the last of each table, altered here) is still found."""
    doc = _with_platform_notes()
    skipped(doc)
    rel = doc["releases"]["2.15.0"]
    rel["index"]["xpu"]["linux_x86_64"]["confidence"] = "sure"
    rel["companions"]["torchaudio"]["confidence"] = "sure"
    rel["platform_min"]["macos_arm64"]["macos"] = "14"
    doc["builds"][-1]["confidence"] = "sure"
    doc["cuda"]["13.2"]["confidence"] = "sure"
    doc["platform_notes"]["windows_arm64"]["confidence"] = "sure"
    problems = mx.validate(doc)
    assert first in problems
    assert {
        f"{R}.index[xpu][linux_x86_64].confidence: 'sure' not one of {Q}",
        f"{R}.companions[torchaudio].confidence: 'sure' not one of {Q}",
        f"{R}.platform_min[macos_arm64].macos: bad version",
        f"builds[{len(doc['builds']) - 1}].confidence: 'sure' not one of {Q}",
        f"cuda[13.2].confidence: 'sure' not one of {Q}",
        f"{N}.confidence: 'sure' not one of {Q}",
    } <= set(problems)


@pytest.mark.parametrize(
    ("alter", "problem"),
    [
        (_set(("releases",), {}), "releases: missing or empty"),
        (_set(("releases",), []), "releases: missing or empty"),
        (_set(("cuda",), {}), "cuda: missing or empty"),
        (_set(("cuda",), []), "cuda: missing or empty"),
        (_drop(("cuda", "11.8")), "build cu118 uses CUDA 11.8, which has no driver row"),
        (_drop(("releases", "2.2.2")), "builds[0]: release '2.2.2' is not in releases"),
    ],
)
def test_a_missing_table_or_row_is_named_among_what_it_leaves_unmatched(
    alter: Any, problem: str
) -> None:
    doc = _doc()
    alter(doc)
    assert problem in mx.validate(doc)
    with pytest.raises(mx.MatrixError):
        mx.parse(doc)


def test_a_cuda_row_without_updates_is_empty() -> None:
    doc = _doc()
    doc["cuda"]["12.8"]["updates"] = {}
    assert mx.validate(doc) == ["cuda[12.8].updates: empty"]


def test_values_that_equal_their_defaults_in_the_real_data_are_still_read() -> None:
    """Every real release is graded V, the index is PyTorch's and the one platform note is of
    CPU wheels, the very values a missing field would get; altered here, each is read as
    written: a release from a secondary copy (V2), a mirror of the index, a note of XPU wheels."""
    doc = _with_platform_notes()
    doc["releases"]["2.15.0"]["confidence"] = "V2"
    doc["index_url"] = "https://mirror.example.org/pytorch/whl"
    doc["platform_notes"]["windows_arm64"]["wheels"] = "xpu"
    m = mx.parse(doc)
    assert m.newest.confidence == "V2"
    assert {r.confidence for r in m.releases[:-1]} == {"V"}
    assert m.index_url == "https://mirror.example.org/pytorch/whl"
    assert m.platform_notes["windows_arm64"].wheels == "xpu"
