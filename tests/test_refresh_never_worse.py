"""`matrix refresh` never makes the data worse, and `--timeout` bounds the whole refresh (issue 17).

Every answer comes from a real HTTP server on 127.0.0.1 (tests/fixtures/index/loopback.py) serving
the captured registry answers, or answers made from them (SOURCE.md there). The user's copy before
each refresh is the bundled matrix, copied to the cache where `load_matrix` reads it.

Before the fix, against the same server: the cu130 page listing 1 of its wheels removed 27 verified
rows (2.13.0+cu130 among them), the PyPI listing from mid-release removed 24 of torch 2.15.0's 28
file entries, the cpu variant page served as PyPI's answer replaced 18 file entries with its own;
each exit 0. Answers 2.5 s late made `--timeout 3` take 85 s over the default variants.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.exitcodes import ExitCode
from setup_env.knowledge import matrix, refresh

FIX = Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location(
    "setup_env_test_loopback", FIX / "index" / "loopback.py"
)
assert _spec and _spec.loader
loopback: Any = sys.modules.get(_spec.name) or importlib.util.module_from_spec(_spec)
if _spec.name not in sys.modules:
    sys.modules[_spec.name] = loopback
    _spec.loader.exec_module(loopback)

Row = tuple[str, str, str]


def bundled_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(matrix.BUNDLED_PATH.read_text(encoding="utf-8"))
    return doc


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    """The captured answers, plus /agrees/whl/cu130/torch/: a page that lists every cu130 row
    the bundled data holds (the index agreeing with the data, so that only the answer a test
    makes bad is bad)."""
    with loopback.LoopbackServer() as srv:
        page = loopback.variant_page(bundled_doc(), "cu130")
        srv.pages["/agrees/whl/cu130/torch/"] = (page, "text/html")
        yield srv


@pytest.fixture
def user_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's refreshed copy (the bundled data, in the cache under tmp_path)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "cache"))
    monkeypatch.delenv("SETUP_ENV_MATRIX", raising=False)
    target = matrix.user_matrix_path()
    assert str(target).startswith(str(tmp_path))
    target.parent.mkdir(parents=True)
    shutil.copyfile(matrix.BUNDLED_PATH, target)
    assert refresh.current_copy().origin == "user"
    return target


def verified_rows(doc: dict[str, Any]) -> set[Row]:
    return {
        (version, variant, plat)
        for version, r in doc["releases"].items()
        for variant, plats in r["index"].items()
        for plat, row in plats.items()
        if row["verified"]
    }


def file_entries(doc: dict[str, Any]) -> set[Row]:
    """Every (release, platform tag, python-abi) of torch on PyPI, and of torchvision."""
    torch = {
        (v, p, pair)
        for v, r in doc["releases"].items()
        for p, pairs in r["pypi_files"].items()
        for pair in pairs
    }
    tv = doc["companion_files"]["torchvision"]
    return torch | {
        (f"tv{v}", p, pair)
        for v, files in tv.items()
        for p, pairs in files.items()
        for pair in pairs
    }


def refresh_run(
    capsys: pytest.CaptureFixture[str], pypi: str, index: str, *extra: str
) -> tuple[int, dict[str, Any], str]:
    """The refresh twice over the same answers and the same user's copy: --json (its payload),
    then text (its stdout)."""
    argv = ["matrix", "refresh", "--pypi-url", pypi, "--index-url", index, *extra]
    copy = matrix.user_matrix_path()
    before = copy.read_bytes()
    code = main([*argv, "--json"])
    payload = json.loads(capsys.readouterr().out)["matrix"]["refresh"]
    json_result = copy.read_bytes()
    copy.write_bytes(before)
    text_code = main(argv)
    assert copy.read_bytes() == json_result
    text = capsys.readouterr().out
    assert text_code == code, text
    return code, payload, text


# --- bad answers: exit 4, every verified row and every file entry kept, the page named -----------

BAD = [
    pytest.param(
        "simple", "one/whl", "cu130",
        "/one/whl/cu130/torch/: an incomplete answer: lists 1 of the 30 rows the data holds",
        id="a variant page listing 1 of its wheels",
    ),
    pytest.param(
        "stale/simple", "agrees/whl", "cu130",
        "/stale/simple/torch/: a stale or partial listing (it lacks files the data has, which "
        "PyPI never removes); nothing removed: torch 2.15.0: lacks 24 of its 28 files",
        id="a stale PyPI listing",
    ),
    pytest.param(
        "html/simple", "agrees/whl", "cu130",
        "/html/simple/torch/: answered text/html where PEP 691 JSON "
        "(application/vnd.pypi.simple.v1+json) was asked",
        id="HTML where PyPI's JSON was asked",
    ),
    pytest.param(
        "simple", "other/whl", "cu130",
        "/other/whl/cu130/torch/: a page for 'torchaudio', not 'torch'",
        id="a page for another project",
    ),
    pytest.param(
        "simple", "cut/whl", "cu130", "/cut/whl/cu130/torch/: the page is cut short",
        id="a page cut short",
    ),
    pytest.param(
        "simple", "agrees/whl", "cu130,cu126",
        "/agrees/whl/cu126/torch/: an incomplete answer: answered 404, but the data holds 36 "
        "row(s)",
        id="404 for a variant the data holds",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("pypi", "index", "variants", "named"), BAD)
def test_a_bad_answer_keeps_every_verified_row_and_exits_4(
    server: Any,
    user_copy: Path,
    capsys: pytest.CaptureFixture[str],
    pypi: str,
    index: str,
    variants: str,
    named: str,
) -> None:
    before = json.loads(user_copy.read_text())
    code, payload, text = refresh_run(
        capsys, f"{server.url}/{pypi}", f"{server.url}/{index}", "--variants", variants
    )
    after = json.loads(user_copy.read_text())
    assert code == ExitCode.PARTIAL == 4, payload
    assert payload["written"] == str(user_copy)
    assert verified_rows(before) <= verified_rows(after)
    assert file_entries(before) <= file_entries(after)
    assert payload["removed"] == [] and "  removed: " not in text
    listed = payload["failed"] + payload["incomplete"]
    assert any(named in line for line in listed), listed
    assert any(named in line for line in text.splitlines()), text
    last = text.splitlines()[-1]
    assert last.startswith(f"wrote {user_copy}") and "kept" in last


def test_a_page_listing_one_wheel_names_every_row_it_lacks(
    server: Any, user_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's first answer: the rows the page lacks are kept and named; the one wheel it
    lists is still confirmed (2.14.1+cu130 on Windows, sourced to the page)."""
    _code, payload, _text = refresh_run(
        capsys, f"{server.url}/simple", f"{server.url}/one/whl", "--variants", "cu130"
    )
    [kept] = payload["kept"]
    assert kept.startswith("torch+cu130: 29 row(s) ")
    assert "2.13.0 (linux_aarch64 linux_x86_64 windows_x86_64)" in kept
    assert "2.14.1 (linux_aarch64 linux_x86_64)" in kept
    row = json.loads(user_copy.read_text())["releases"]["2.14.1"]["index"]["cu130"]
    assert row["windows_x86_64"]["source"].startswith(f"{server.url}/one/whl/cu130/torch/")
    assert (
        row["linux_x86_64"] == bundled_doc()["releases"]["2.14.1"]["index"]["cu130"]["linux_x86_64"]
    )


def test_html_where_json_was_asked_changes_no_pypi_fact(
    server: Any, user_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = json.loads(user_copy.read_text())
    refresh_run(
        capsys, f"{server.url}/html/simple", f"{server.url}/agrees/whl", "--variants", "cu130"
    )
    after = json.loads(user_copy.read_text())
    for version, r in before["releases"].items():
        got = after["releases"][version]
        assert (got["pypi_files"], got["python"], got["requires_python"], got["uploaded"]) == (
            r["pypi_files"], r["python"], r["requires_python"], r["uploaded"]
        ), version  # fmt: skip
    assert after["companion_files"]["torchvision"] == before["companion_files"]["torchvision"]


# --- complete answers: rows leave, each one named, exit 0 -----------------------------------------


def test_a_complete_page_removes_what_it_no_longer_lists(
    server: Any, user_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A page that lists every cu130 row of the data but 2.12.0's (one verified release on each
    platform) and 2.15.0's unverified Linux ones is complete: those rows leave, each named in the
    summary; nothing else does."""
    before = json.loads(user_copy.read_text())
    drop = {("2.12.0", p) for p in ("linux_x86_64", "linux_aarch64", "windows_x86_64")}
    drop |= {("2.15.0", "linux_x86_64"), ("2.15.0", "linux_aarch64")}
    server.pages["/less/whl/cu130/torch/"] = (
        loopback.variant_page(bundled_doc(), "cu130", drop),
        "text/html",
    )
    code, payload, text = refresh_run(
        capsys, f"{server.url}/simple", f"{server.url}/less/whl", "--variants", "cu130"
    )
    after = json.loads(user_copy.read_text())
    assert code == 0, payload
    assert payload["failed"] == [] and payload["incomplete"] == [] and payload["kept"] == []
    page = f"{server.url}/less/whl/cu130/torch/"
    assert payload["removed"] == [
        f"torch 2.12.0+cu130 on linux_aarch64, linux_x86_64, windows_x86_64 (verified): {page} "
        "no longer lists it",
        f"torch 2.15.0+cu130 on linux_aarch64, linux_x86_64 (unverified): {page} "
        "no longer lists it",
    ]
    assert [line for line in text.splitlines() if line.startswith("  removed: ")] == [
        f"  removed: {line}" for line in payload["removed"]
    ]
    assert "2 row(s) removed" in text.splitlines()[-1]
    gone = {("2.12.0", "cu130", p) for p in ("linux_x86_64", "linux_aarch64", "windows_x86_64")}
    assert verified_rows(before) - verified_rows(after) == gone
    assert "cu130" not in after["releases"]["2.12.0"]["index"]
    assert set(after["releases"]["2.15.0"]["index"]["cu130"]) == {"windows_x86_64"}
    assert file_entries(before) <= file_entries(after)


def test_a_page_lacking_two_verified_releases_on_a_platform_removes_nothing(
    server: Any, user_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mirror that lost two releases' Windows wheels: not complete for windows_x86_64."""
    before = json.loads(user_copy.read_text())
    drop = {("2.12.0", "windows_x86_64"), ("2.13.0", "windows_x86_64")}
    server.pages["/two/whl/cu130/torch/"] = (
        loopback.variant_page(bundled_doc(), "cu130", drop),
        "text/html",
    )
    code, payload, _ = refresh_run(
        capsys, f"{server.url}/simple", f"{server.url}/two/whl", "--variants", "cu130"
    )
    assert code == 4 and payload["removed"] == []
    assert (
        "lacks 2 verified releases on windows_x86_64 (2.12.0, 2.13.0)" in payload["incomplete"][0]
    )
    assert verified_rows(before) <= verified_rows(json.loads(user_copy.read_text()))


# --- the rule itself ------------------------------------------------------------------------------


def rows(*spec: str) -> dict[tuple[str, str], bool]:
    """'2.12.0 linux_x86_64 V' -> {("2.12.0", "linux_x86_64"): True}; '?' for unverified."""
    out = {}
    for s in spec:
        version, plat, mark = s.split()
        out[(version, plat)] = mark == "V"
    return out


TEN = [f"2.{m}.0 linux_x86_64 V" for m in range(5, 15)]


@pytest.mark.parametrize(
    ("data", "listed", "why"),
    [
        (TEN, TEN, None),
        (TEN, TEN[:1], "lists 1 of the 10 rows the data holds (10 verified), lacks 9"),
        (TEN, TEN[1:], None),  # one verified release gone: the data had a row too many
        (TEN, TEN[2:], "lacks 2 verified releases on linux_x86_64 (2.5.0, 2.6.0)"),
        (
            [*TEN[:2], "2.7.0 linux_aarch64 V", "2.8.0 linux_aarch64 ?"],
            [*TEN[:2], "2.8.0 linux_aarch64 ?"],
            "lists none of the verified releases on linux_aarch64 (2.7.0)",
        ),
        ([*TEN[:3], "2.15.0 linux_x86_64 ?"], TEN[:3], None),  # an unverified row gone
        ([], ["2.15.0 linux_x86_64 V"], None),  # a new variant: nothing to lose
    ],
)
def test_judge_variant(data: list[str], listed: list[str], why: str | None) -> None:
    assert refresh.judge_variant(rows(*data), set(rows(*listed))) == why


def test_file_gaps() -> None:
    old, new = {"win_amd64": ["cp312-cp312", "cp313-cp313"]}, {"win_amd64": ["cp312-cp312"]}
    data = {"2.14.1": old, "2.15.0": old}
    gaps = refresh.file_gaps
    assert gaps(data, {"2.14.1": old}, "torch") == [
        "torch 2.15.0: not listed (2 file(s) in the data)"  # a stale listing
    ]
    assert gaps(data, {"2.15.0": old}, "torch") == []  # a mirror of the newer releases only
    assert gaps(data, {"2.14.1": new, "2.15.0": old}, "torch") == [
        "torch 2.14.1: lacks 1 of its 2 files (cp313-cp313 win_amd64)"
    ]


# --- --timeout: one deadline for the whole refresh ------------------------------------------------


def test_timeout_bounds_the_whole_refresh(
    user_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each answer 2.5 s late, the default variants (33 pages after PyPI's torch): --timeout 3
    ends in ~3 s (it took 85 s), with what answered in time merged and the rest listed."""
    before = json.loads(user_copy.read_text())
    with loopback.LoopbackServer() as slow:
        slow.delay_seconds = 2.5
        argv = ["matrix", "refresh", "--json", "--pypi-url", f"{slow.url}/delay/simple",
                "--index-url", f"{slow.url}/delay/whl", "--timeout", "3"]  # fmt: skip
        start = time.monotonic()
        code = main(argv)
        took = time.monotonic() - start
        asked = len(slow.requests)
    payload = json.loads(capsys.readouterr().out)["matrix"]["refresh"]
    # 3 s, plus the merge and the write of what answered; the bound is loose (a loaded CI
    # machine), the fault it guards was 85 s
    assert 2.5 <= took < 10, took
    assert code == 4 and asked == 2, payload
    assert payload["written"] == str(user_copy) and payload["pages_read"] == 1
    [late] = payload["failed"]
    assert late.startswith("33 page(s) without an answer before the deadline of 3 s: ")
    assert "simple/torchvision" in late and "cu130/torch" in late
    assert verified_rows(before) <= verified_rows(json.loads(user_copy.read_text()))
