"""`matrix refresh` never loses data (issue 11, row 7), against the real loopback index server.

Before the fix a refresh rebuilt on the bundled data instead of the user's current copy, and wrote
(exit 0, "220 changes") when every answer was empty, an error page, a 404 or an HTTP 500. Each
test here failed on that code. Index answers: tests/fixtures/index/ (SOURCE.md there).
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from setup_env import matrix, refresh
from setup_env.cli import main

FIX = Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location(
    "setup_env_test_loopback", FIX / "index" / "loopback.py"
)
assert _spec and _spec.loader
loopback: Any = sys.modules.get(_spec.name) or importlib.util.module_from_spec(_spec)
if _spec.name not in sys.modules:
    sys.modules[_spec.name] = loopback
    _spec.loader.exec_module(loopback)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with loopback.LoopbackServer() as srv:
        yield srv


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """user_matrix_path() under tmp_path (never the real home); no $SETUP_ENV_MATRIX."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "cache"))
    monkeypatch.delenv("SETUP_ENV_MATRIX", raising=False)
    assert str(matrix.user_matrix_path()).startswith(str(tmp_path))
    return tmp_path / "cache"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def refresh_cmd(pypi: str, index: str, *extra: str) -> list[str]:
    return ["matrix", "refresh", "--pypi-url", pypi, "--index-url", index, "--timeout", "5", *extra]


# --- answers with nothing in them: no write, a clear message, exit 3 -----------------------------


@pytest.mark.parametrize(
    ("pypi_route", "index_route", "why"),
    [
        ("status/500/simple", "status/500/whl", "HTTP 500"),  # the repro
        ("status/200/simple", "status/200/whl", "not an HTML project page"),  # error page, 200
        ("garbage/simple", "garbage/whl", "not JSON"),  # 200 with a body that is not JSON
        ("empty/simple", "empty/whl", "lists no"),  # valid answers that list no files
        ("status/500/simple", "status/404/whl", "404"),  # every variant page 404
    ],
)
def test_nothing_usable_writes_nothing(
    server: Any,
    cache_home: Path,
    capsys: pytest.CaptureFixture[str],
    pypi_route: str,
    index_route: str,
    why: str,
) -> None:
    code, out, _ = run(
        refresh_cmd(f"{server.url}/{pypi_route}", f"{server.url}/{index_route}", "--json"),
        capsys,
    )
    payload = json.loads(out)["matrix"]["refresh"]
    assert code == 3, payload
    assert payload["written"] is None and not matrix.user_matrix_path().exists()
    assert "nothing written" in payload["message"]
    assert payload["failed"] and any(why.lower() in f.lower() for f in payload["failed"]), payload
    # text mode says the same in one line
    argv = refresh_cmd(f"{server.url}/{pypi_route}", f"{server.url}/{index_route}")
    code, out, _ = run(argv, capsys)
    assert code == 3 and "nothing written" in out and "kept the bundled data" in out


def test_empty_answers_keep_an_existing_copy(
    server: Any, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error page must not overwrite a refreshed copy either (byte for byte the same after)."""
    code, out, err = run(
        refresh_cmd(f"{server.url}/simple", f"{server.url}/whl", "--variants", "cu130"), capsys
    )
    assert code == 0, out + err
    target = matrix.user_matrix_path()
    before = target.read_bytes()
    code, out, _ = run(refresh_cmd(f"{server.url}/empty/simple", f"{server.url}/empty/whl"), capsys)
    assert code == 3 and f"kept the refreshed copy {target}" in out
    assert target.read_bytes() == before


def test_an_empty_variant_page_does_not_drop_its_rows(
    server: Any, tmp_path: Path, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """PyPI answers; every variant page is valid but lists no wheels: the PyPI facts are merged,
    every index row is kept (before: each variant page 'read' with no wheels dropped them all)."""
    out_file = tmp_path / "m.json"
    code, out, _ = run(
        refresh_cmd(
            f"{server.url}/simple", f"{server.url}/empty/whl", "--json", "--output",
            str(out_file),
        ),
        capsys,
    )  # fmt: skip
    payload = json.loads(out)["matrix"]["refresh"]
    assert code == 0 and payload["written"] == str(out_file), payload
    new, base = matrix.load_matrix(out_file), matrix.load_matrix(matrix.BUNDLED_PATH)
    for rel in base.releases:
        assert new.release(str(rel.version)).index == rel.index  # type: ignore[union-attr]
    assert any("lists no torch+cu130 wheels" in f for f in payload["failed"])


# --- the base is the user's current copy ---------------------------------------------------------


def test_second_refresh_keeps_what_the_first_verified(
    server: Any, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first refresh reads the cu130 page; a second one reaches PyPI but not the index. The
    second merges into the first's copy: the cu130 rows the page verified stay as they were, and
    rows the page had removed (2.12.0's; 2.15.0's unverified '?' rows) do not come back from the
    bundled data."""
    code, out, err = run(
        refresh_cmd(f"{server.url}/simple", f"{server.url}/whl", "--variants", "cu130"), capsys
    )
    assert code == 0, out + err
    target = matrix.user_matrix_path()
    first = json.loads(target.read_text())
    bundled = json.loads(matrix.BUNDLED_PATH.read_text())
    assert "cu130" not in first["releases"]["2.12.0"]["index"]
    assert bundled["releases"]["2.15.0"]["index"]["cu130"]["linux_x86_64"]["verified"] is False
    assert "cu130" not in first["releases"]["2.15.0"]["index"]
    code, out, err = run(
        refresh_cmd(f"{server.url}/simple", f"{server.url}/status/500/whl", "--variants", "cu130"),
        capsys,
    )
    assert code == 0, out + err
    second = json.loads(target.read_text())
    for version, row in first["releases"].items():
        assert second["releases"][version]["index"] == row["index"], version
    unverified = [
        (v, var, p)
        for v, row in second["releases"].items()
        for var, plats in row["index"].items()
        for p, a in plats.items()
        if not a["verified"] and (not first["releases"][v]["index"].get(var, {}).get(p))
    ]
    assert unverified == []
    assert f"from the refreshed copy {target}" in out and "page(s) failed, their rows kept" in out


def test_a_broken_user_copy_is_not_the_base(
    server: Any, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = matrix.user_matrix_path()
    target.parent.mkdir(parents=True)
    target.write_text('{"schema_version": 1, "releases": [')
    base = refresh.current_copy()
    assert base.origin == "bundled" and "not usable" in base.notes[0]
    code, out, err = run(
        refresh_cmd(f"{server.url}/simple", f"{server.url}/whl", "--variants", "cu130"), capsys
    )
    assert code == 0 and "from the bundled data" in out and "not usable" in err
    assert matrix.validate(json.loads(target.read_text())) == []


def test_an_older_user_copy_is_not_the_base(cache_home: Path) -> None:
    """The copy load_matrix would ignore (older than the bundled data) is not merged into."""
    doc = json.loads(matrix.BUNDLED_PATH.read_text())
    doc["retrieved"] = "2020-01-01"
    target = matrix.user_matrix_path()
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(doc))
    base = refresh.current_copy()
    assert base.origin == "bundled" and "older than the bundled" in base.notes[0]
    doc["retrieved"] = "2099-01-01"
    target.write_text(json.dumps(doc))
    assert refresh.current_copy().origin == "user"


# --- the one writer -------------------------------------------------------------------------------


def test_write_matrix_refuses_an_invalid_document(tmp_path: Path) -> None:
    doc = json.loads(matrix.BUNDLED_PATH.read_text())
    doc["releases"]["2.13.0"]["index"]["cu130"]["linux_x86_64"]["source"] = 5
    target = tmp_path / "wheels.json"
    target.write_text("old")
    with pytest.raises(matrix.MatrixError):
        refresh.write_matrix(target, doc)
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["wheels.json"]
