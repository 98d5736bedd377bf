"""`setup-env matrix arches | refresh | show`, run in-process through `cli.main`.

Index answers come from a real HTTP server on 127.0.0.1 serving tests/fixtures/index/ (SOURCE.md
there); fat binaries are the nvcc-built fixtures in tests/fixtures/fatbin/.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from setup_env.cli import main
from setup_env.knowledge import index, matrix, refresh
from setup_env.knowledge import live as live_mod
from setup_env.knowledge.variant import CPU, Variant

V = Variant.parse

FIX = Path(__file__).parent / "fixtures"
_spec = importlib.util.spec_from_file_location(
    "setup_env_test_loopback", FIX / "index" / "loopback.py"
)
assert _spec and _spec.loader
loopback: Any = sys.modules.get(_spec.name) or importlib.util.module_from_spec(_spec)
if _spec.name not in sys.modules:
    sys.modules[_spec.name] = loopback
    _spec.loader.exec_module(loopback)

HOSTILE = (";", "rm -rf", "$(", "`", "javascript", "data:", "evil", "curl")


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    with loopback.LoopbackServer() as srv:
        yield srv


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# --- arches --------------------------------------------------------------------------------------


def test_arches_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["matrix", "arches", "--json", str(FIX / "fatbin" / "libtiny.so")], capsys)
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/matrix" and doc["schema_version"] == 1
    payload = doc["matrix"]["arches"]
    assert payload["files"] == [
        {
            "name": str(FIX / "fatbin" / "libtiny.so"),
            "size": (FIX / "fatbin" / "libtiny.so").stat().st_size,
            "method": "elf-sections",
            "fatbins": 2,
            "sass": ["sm_75", "sm_80", "sm_90"],
            "ptx": ["compute_90"],
        }
    ]
    assert payload["summary"]["sass_in_every_fatbin"] == ["sm_75", "sm_80", "sm_90"]
    assert payload["summary"]["ptx"] == ["compute_90"] and payload["errors"] == []


def test_arches_text_for_a_wheel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    whl = tmp_path / "torch-2.13.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(whl, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.write(FIX / "fatbin" / "libtiny.so", "torch/lib/libtorch_cuda.so")
        zf.writestr("torch/__init__.py", "")
    code, out, _ = run(["matrix", "--no-color", "arches", str(whl)], capsys)
    assert code == 0
    assert "torch/lib/libtorch_cuda.so" in out
    assert "SASS in every fat binary: sm_75 sm_80 sm_90" in out
    assert "PTX (JIT for newer GPUs): compute_90" in out


def test_arches_cpu_only(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.submodule_search_locations:
        lib = Path(next(iter(spec.submodule_search_locations))) / "lib" / "libc10.so"
    else:  # no torch here: any ELF library of this Python without device code
        lib = Path(sys.executable).resolve()
    code, out, _ = run(["matrix", "arches", str(lib)], capsys)
    assert code == 0
    assert "No CUDA fat binaries" in out


def test_arches_truncated_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "libcut.so"
    bad.write_bytes((FIX / "fatbin" / "libtiny.so").read_bytes()[: 0x2008 + 200])
    code, out, err = run(["matrix", "arches", str(bad)], capsys)
    assert code == 2 and out == ""
    assert "libcut.so" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_arches_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["matrix", "arches", "--json", str(tmp_path / "nope.whl")], capsys)
    assert code == 2 and "no such file" in err


# --- the live view and drift (real captured answers) ---------------------------------------------


def snapshot(srv: Any, variants: list[str], pypi: str = "simple") -> Any:
    return index.fetch_snapshot(
        pypi_url=f"{srv.url}/{pypi}", index_url=f"{srv.url}/whl", variants=variants, timeout=5
    )


def test_live_view_from_real_answers(server: Any) -> None:
    live = live_mod.live_view(snapshot(server, ["cu130", "cu126", "cpu", "cu117", "cu999"]))
    rel = live["releases"]
    # PyPI facts (VERIFIED.md section 1)
    assert rel["2.15.0"]["requires_python"] == ">=3.11"
    assert rel["2.15.0"]["pypi"]["manylinux_2_28_x86_64"] == [
        "cp311", "cp312", "cp313", "cp314", "cp314t", "cp315", "cp315t"
    ]  # fmt: skip
    assert rel["2.14.1"]["pypi"]["macosx_14_0_arm64"][0] == "cp310"
    # index facts, per platform family
    assert rel["2.13.0"]["variants"]["cu130"] == {
        "linux_aarch64": ["cp313", "cp314", "cp314t", "cp315", "cp315t"],
        "linux_x86_64": ["cp313", "cp314", "cp314t", "cp315", "cp315t"],
        "windows_x86_64": ["cp313", "cp314", "cp314t"],
    }
    assert set(rel["2.14.0"]["variants"]["cu126"]) == {"linux_x86_64", "windows_x86_64"}
    # the unlabelled aarch64 wheels on the cu117 page are not counted as cu117 builds
    assert "cu117" not in rel.get("2.0.1", {}).get("variants", {})
    assert rel["1.13.0"]["variants"]["cu117"] == {
        "linux_x86_64": ["cp37m"],
        "windows_x86_64": ["cp37m", "cp310"],
    }
    assert live["absent_variants"] == ["cu999"]
    assert live["companions"]["torchvision"][-1] == "0.29.2"  # lags torch 2.15 (VERIFIED.md)


def test_no_drift_against_itself(server: Any) -> None:
    live = live_mod.live_view(snapshot(server, ["cu130", "cpu"]))
    assert live_mod.drift(live, live) == []


def test_drift_found(server: Any) -> None:
    live = live_mod.live_view(snapshot(server, ["cu130", "cu126"]))
    bundled = json.loads(json.dumps(live))
    del bundled["releases"]["2.15.0"]  # a release the data does not know yet
    bundled["releases"]["2.14.1"]["pypi"]["win_amd64"].remove("cp314t")
    bundled["releases"]["2.13.0"]["variants"]["cu126"] = {"linux_x86_64": []}  # not on the page
    bundled["releases"]["2.14.0"]["variants"].pop("cu126")
    bundled["releases"]["2.12.0"]["variants"]["cu999"] = {"linux_x86_64": []}
    live["absent_variants"] = ["cu999"]
    found = live_mod.drift(bundled, live)
    assert found == [
        "torch 2.13.0+cu126: in the data, not on the index",
        "torch 2.14.0+cu126: on the index, not in the data (linux_x86_64, windows_x86_64)",
        "torch 2.14.1 PyPI win_amd64: +cp314t",
        "torch 2.15.0: new release on PyPI (macosx_14_0_arm64, manylinux_2_28_aarch64, "
        "manylinux_2_28_x86_64, win_amd64)",
        "variant cu999: the index has no page for it any more (404)",
    ]


def test_full_pypi_capture_matches_verified_table(server: Any) -> None:
    """The whole captured PyPI answer (fixtures/reference/captures): every release 1.13.0-2.15.0
    is read, and the
    2.10.0 build-tagged wheels (torch-2.10.0-3-cp310-...) keep their real platform tags."""
    live = live_mod.live_view(snapshot(server, [], pypi="full/simple"))
    rel = live["releases"]
    assert {"1.13.0", "2.6.0", "2.10.0", "2.15.0"} <= set(rel)
    assert set(rel["2.10.0"]["pypi"]) == {
        "macosx_11_0_arm64",
        "macosx_14_0_arm64",
        "manylinux_2_28_aarch64",
        "manylinux_2_28_x86_64",
        "win_amd64",
    }
    assert rel["2.6.0"]["pypi"]["manylinux1_x86_64"] == ["cp39", "cp310", "cp311", "cp312", "cp313"]


def test_hostile_index_cannot_inject(server: Any) -> None:
    snap = index.fetch_snapshot(
        pypi_url=f"{server.url}/simple", index_url=f"{server.url}/whl", variants=[], timeout=5
    )
    hostile_page = index.read_answer(
        index.Fetcher(timeout=5).get(f"{server.url}/hostile/whl/cu130/torch/"), "torch"
    )
    hostile_json = index.read_answer(
        index.Fetcher(timeout=5).get(f"{server.url}/hostile-json/torch/"), "torch"
    )
    snap.variants["cu130"] = hostile_page
    snap.pypi["torch"] = hostile_json
    live = live_mod.live_view(snap)
    text = json.dumps(live)
    for bad in HOSTILE:
        assert bad not in text
    assert "9.0.0" not in live["releases"] and "9.0.1" not in live["releases"]
    assert len(hostile_page.rejected) == len(loopback.HOSTILE_ANCHORS)
    base = bundled_doc()
    merged = refresh.merge_view(base, live, "2026-12-03", ["http://x", "http://y"])
    for bad in HOSTILE:  # ";" is in the bundled sources' prose: only what the merge adds counts
        if bad not in json.dumps(base):
            assert bad not in json.dumps(merged)
    assert matrix.validate(merged) == []


# --- refresh / show through the CLI, on the real bundled matrix -------------------------------


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """user_matrix_path() under tmp_path (never the real home); no $SETUP_ENV_MATRIX."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "cache"))
    monkeypatch.delenv("SETUP_ENV_MATRIX", raising=False)
    assert str(matrix.user_matrix_path()).startswith(str(tmp_path))
    return tmp_path / "cache"


def dead_url() -> str:
    with loopback.LoopbackServer() as srv:
        return str(srv.url)


def bundled_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(matrix.BUNDLED_PATH.read_text(encoding="utf-8"))
    return doc


def test_refresh_check_offline_exit_3(
    tmp_path: Path, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = dead_url()
    code, out, err = run(
        ["matrix", "refresh", "--check", "--pypi-url", dead, "--index-url", dead, "--timeout", "2"],
        capsys,
    )
    assert code == 3 and "connection refused" in err
    assert "kept the bundled data" in out
    code, out, _ = run(
        ["matrix", "refresh", "--pypi-url", dead, "--index-url", dead, "--output",
         str(tmp_path / "m.json"), "--timeout", "2"],
        capsys,
    )  # fmt: skip
    # issue 17: exit 0 only when every source asked answered (it was 0 offline)
    assert code == 3 and "kept the bundled data" in out and not (tmp_path / "m.json").exists()
    assert not matrix.user_matrix_path().exists()


def test_refresh_writes_validated_copy(
    server: Any, tmp_path: Path, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "wheels.json"
    code, out, err = run(
        ["matrix", "refresh", "--json", "-v", "--pypi-url", f"{server.url}/simple",
         "--index-url", f"{server.url}/hostile/whl", "--variants", "cu130",
         "--output", str(target)],
        capsys,
    )  # fmt: skip
    payload = json.loads(out)["matrix"]["refresh"]
    # issue 17: the captured cu130 page lists 3 of the 10 releases the data holds for cu130, an
    # incomplete answer: written, exit 4 (it was 0)
    assert code == 4, payload
    assert payload["written"] == str(target)
    assert len(payload["incomplete"]) == 1
    assert "/hostile/whl/cu130/torch/: an incomplete answer" in payload["incomplete"][0]
    doc = json.loads(target.read_text())
    assert matrix.validate(doc) == []
    base = matrix.BUNDLED_PATH.read_text(encoding="utf-8")
    for bad in HOSTILE:  # ";" is in the bundled sources' prose: only what refresh adds counts
        if bad not in base:
            assert bad not in target.read_text()
    assert len([line for line in err.splitlines() if line.startswith("  http")]) == 4
    assert len([line for line in err.splitlines() if line.startswith("  rejected")]) == len(
        loopback.HOSTILE_ANCHORS
    )


def test_refresh_merges_live_data_and_load_matrix_uses_it(
    server: Any, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["matrix", "refresh", "--pypi-url", f"{server.url}/simple",
         "--index-url", f"{server.url}/whl", "--variants", "cu130,cu126,cu999"],
        capsys,
    )  # fmt: skip
    target = matrix.user_matrix_path()
    # issue 17: the captured cu130 and cu126 pages list a few of the releases the data holds for
    # them: incomplete answers, so exit 4 (it was 0) and nothing they lack is removed
    assert code == 4, out + err
    assert f"wrote {target}" in out and "note:" not in err  # it is the copy in use now
    assert "incomplete: " in out and "/whl/cu130/torch/: an incomplete answer" in out
    doc = json.loads(target.read_text())
    assert matrix.validate(doc) == []
    m = matrix.load_matrix()
    assert m.origin == "user" and m.path == str(target)
    base = matrix.load_matrix(matrix.BUNDLED_PATH)
    # PyPI facts re-read (VERIFIED.md section 1), exact python-abi pairs kept
    r215 = m.release("2.15.0")
    assert r215 is not None and str(r215.requires_python) == ">=3.11"
    assert "cp314-cp314t" in r215.pypi_files["manylinux_2_28_x86_64"]
    assert r215.python == base.release("2.15.0").python  # type: ignore[union-attr]
    assert r215.pypi_files == base.release("2.15.0").pypi_files  # type: ignore[union-attr]
    # the cu130 page lists 2.13.0 on three platforms: verified, sourced to the page
    cu130 = m.release("2.13.0").index[V("cu130")]  # type: ignore[union-attr]
    assert set(cu130) == {"linux_x86_64", "linux_aarch64", "windows_x86_64"}
    assert all(a.verified and "/whl/cu130/torch/" in a.source for a in cu130.values())
    # ... and has no 2.12.0 wheel: an incomplete page does not decide that (issue 17; before,
    # "the page, once read, decides" dropped the verified row)
    assert V("cu130") in base.release("2.12.0").index  # type: ignore[union-attr]
    assert m.release("2.12.0").index[V("cu130")] == base.release("2.12.0").index[V("cu130")]  # type: ignore[union-attr]
    assert "torch+cu130: " in out and "2.12.0 (linux_aarch64 linux_x86_64 windows_x86_64)" in out
    # pages not read keep the bundled rows; arch lists and the driver table are kept
    assert m.release("2.13.0").index[V("rocm7.2")] == base.release("2.13.0").index[V("rocm7.2")]  # type: ignore[union-attr]
    assert m.wheel_build("2.14.1", V("cu130"), "linux_x86_64") == base.wheel_build(
        "2.14.1", V("cu130"), "linux_x86_64"
    )
    assert m.cuda == base.cuda
    assert doc["generated_by"] == "setup-env matrix refresh"
    assert target.stat().st_mode & 0o777 == 0o644
    tv = doc["companion_files"]["torchvision"]
    assert "0.14.0" in tv  # not in the served subset (>= 0.27): the bundled row stays
    # read from PyPI's answer; the same capture the bundled rows were built from
    assert tv["0.29.2"]["win_amd64"] == ["py3-none"]
    assert tv["0.28.0"] == bundled_doc()["companion_files"]["torchvision"]["0.28.0"]
    # show now reads the refreshed copy and says so
    code, out, _ = run(["matrix", "show", "--no-color"], capsys)
    assert code == 0 and "refreshed copy" in out and str(target) in out


def test_refresh_adds_a_release_the_data_lacks(server: Any) -> None:
    base = bundled_doc()
    del base["releases"]["2.15.0"]
    live = live_mod.live_view(snapshot(server, ["cu130"]))
    new = refresh.merge_view(
        base, live, "2026-12-03", [f"{server.url}/simple", f"{server.url}/whl"]
    )
    assert matrix.validate(new) == []
    m = matrix.parse(new)
    rel = m.release("2.15.0")
    assert rel is not None
    assert str(rel.requires_python) == ">=3.11"  # VERIFIED.md section 1
    assert rel.python[:2] == ("3.11", "3.12") and "3.15t" in rel.python
    assert rel.min_glibc["linux_x86_64"] == Version("2.28")  # from manylinux_2_28 tags
    assert rel.min_macos["macos_arm64"] == Version("14.0")
    assert rel.pypi_variant == {}  # PyPI filenames don't say which build plain pip serves
    assert rel.uploaded.startswith("2026-")
    # torchvision 0.30 is not on PyPI yet (VERIFIED.md: torchvision lags torch 2.15)
    tv = rel.companions["torchvision"]
    assert tv.spec is None and "no torchvision 0.30" in tv.source
    assert m.newest.version == Version("2.15.0")


def test_refresh_check_full_captures_no_pypi_drift(
    cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The bundled data was generated from the same PyPI captures: no drift on PyPI's part; the
    unreachable PyTorch index makes the check incomplete (exit 3), never "no drift"."""
    dead = dead_url()
    with loopback.LoopbackServer() as srv:
        code, out, _ = run(
            ["matrix", "refresh", "--check", "--json", "--pypi-url", f"{srv.url}/full/simple",
             "--index-url", dead, "--timeout", "5"],
            capsys,
        )  # fmt: skip
    payload = json.loads(out)["matrix"]["refresh"]
    assert payload["drift"] == [], payload["drift"][:5]
    assert payload["reached"] and code == 3
    assert "page(s) failed" in payload["message"]


def test_refresh_check_reports_drift_exit_1(
    server: Any, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        ["matrix", "refresh", "--check", "--pypi-url", f"{server.url}/simple",
         "--index-url", f"{server.url}/whl", "--variants", "cu126"],
        capsys,
    )  # fmt: skip
    assert code == 1
    # the captured cu126 page holds 2.14.0/2.14.1 only: older releases are drift
    assert "drift: torch 2.13.0+cu126: in the data, not on the index" in out
    assert not matrix.user_matrix_path().exists()  # --check writes nothing


def test_user_copy_older_than_bundled_is_ignored(
    cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = bundled_doc()
    doc["retrieved"] = "2020-01-01"
    target = matrix.user_matrix_path()
    target.parent.mkdir(parents=True)
    target.write_text(json.dumps(doc))
    code, out, err = run(["matrix", "show"], capsys)
    assert code == 0 and "bundled with setup-env" in out
    assert "older than the bundled data" in err


def test_show_summary_reads_the_bundled_data(
    cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["matrix", "show", "--no-color"], capsys)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert "bundled with setup-env, retrieved 2026-12-02" in lines[0]
    row = next(line.split() for line in lines if line.startswith("2.14.1 "))
    # VERIFIED.md section 2: plain PyPI on Linux is +cu130 for 2.14.1; Windows/macOS CPU
    assert "cu130:" in row and "3.10-3.14" in row
    assert next(line for line in lines if line.startswith("2.15.0 ")).split()[2] == "3.11-3.15"
    assert any(line.startswith("1.13.0 ") for line in lines)


def test_show_torch_details(cache_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["matrix", "show", "--no-color", "--torch", "2.14", "-v"], capsys)
    assert code == 0
    assert "torch 2.14.1" in out and "torch 2.14.0" in out and "torch 2.13.0" not in out
    cu130 = [line.split() for line in out.splitlines() if line.strip().startswith("cu130 ")]
    # VERIFIED.md section 3: 2.14.1+cu130 x86_64 SASS sm_75..sm_120, aarch64 sm_80..sm_120
    assert cu130[0][1:4] == ["linux", "windows", "13.0.2"]
    assert cu130[0][4:10] == ["sm_75", "sm_80", "sm_86", "sm_90", "sm_100", "sm_120"]
    assert "sm_110" in cu130[1] and "sm_75" not in cu130[1]
    assert ">=580" in cu130[0]  # CUDA 13 needs an R580 driver
    assert "VERIFIED.md" in out  # -v names the sources


def test_show_variant_filter(cache_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["matrix", "show", "--no-color", "--variant", "cu118"], capsys)
    assert code == 0
    versions = [line.split()[0] for line in out.splitlines()[3:] if line[:1].isdigit()]
    assert versions[0] == "2.7.1" and versions[-1] == "2.0.0"
    assert ">=450.80.02" in out  # CUDA 11.x minor-version-compatibility floor on Linux


def test_show_json(cache_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        ["matrix", "show", "--json", "--torch", "2.14.1", "--variant", "cu130"], capsys
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/matrix"
    show = doc["matrix"]["show"]
    assert show["origin"] == "bundled" and show["filters"] == {
        "torch": "2.14.1",
        "variant": "cu130",
    }
    [rel] = show["releases"]
    assert rel["version"] == "2.14.1" and rel["requires_python"] == ">=3.10"
    # variants serialise as their labels; read back, they are the same Variants
    assert V(rel["platforms"]["linux_x86_64"]["pypi_variant"]) == V("cu130")
    assert V(rel["platforms"]["windows_x86_64"]["pypi_variant"]) == CPU
    assert {V(r["variant"]) for r in rel["index"]} == {V("cu130")}
    x86 = next(r for r in rel["index"] if "linux_x86_64" in r["platforms"])
    assert x86["sass"][-1] == "sm_120" and x86["toolkit"] == "13.0.2"
    assert x86["driver_minimum"]["linux"]["minor_version_compat"] == "580"
    assert show["cuda"]["12.6"]["minor_version_compat"]["linux"] == "525.60.13"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--torch", "2.16"], "no torch 2.16 in the matrix (it knows 1.13.0 to 2.15.0)"),
        (["--torch", "2.x; rm"], "expected a release like 2.14"),
        (["--variant", "cu12;x"], "expected cpu, cuXYZ"),
        (["--torch", "2.15", "--variant", "cu126"], "no variant cu126 for torch 2.15"),
    ],
)
def test_show_bad_filters_exit_2(
    argv: list[str], message: str, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["matrix", "show", *argv], capsys)
    assert code == 2 and out == "" and message in err
    assert len(err.strip().splitlines()) == 1


def test_show_malformed_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "m.json"
    bad.write_text('{"schema_version": 1, "releases": {}}')
    code, out, err = run(["matrix", "show", "--file", str(bad)], capsys)
    assert code == 2 and out == "" and "invalid wheel matrix" in err


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["matrix", "refresh", "--variants", "cu130;rm"], capsys)
    assert code == 2 and "not a variant name: 'cu130;rm'" in err
    code, _, _ = run(["matrix", "bogus"], capsys)
    assert code == 2


# --- refresh never loses data (issue 11, row 7) -------------------------------------------------
#
# Before the fix a refresh rebuilt on the bundled data instead of the user's current copy, and
# wrote (exit 0, "220 changes") when every answer was empty, an error page, a 404 or an HTTP 500.
# Each test in this section failed on that code.


def refresh_cmd(pypi: str, index: str, *extra: str) -> list[str]:
    return ["matrix", "refresh", "--pypi-url", pypi, "--index-url", index, "--timeout", "5", *extra]


@pytest.fixture(scope="module")
def built(server: Any) -> str:
    """An index whose cu130 page lists every row the bundled data holds for cu130 but 2.12.0's
    and 2.15.0's Linux rows (pages built from the data: ``loopback.variant_page``): a complete
    answer that drops one verified release per platform and the unverified 2.15.0 rows."""
    drop = {("2.12.0", p) for p in ("linux_x86_64", "linux_aarch64", "windows_x86_64")}
    drop |= {("2.15.0", "linux_x86_64"), ("2.15.0", "linux_aarch64")}
    page = loopback.variant_page(bundled_doc(), "cu130", drop)
    server.pages["/built/whl/cu130/torch/"] = (page, "text/html")
    return f"{server.url}/built/whl"


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
    server: Any, built: str, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An error page must not overwrite a refreshed copy either (byte for byte the same after)."""
    code, out, err = run(refresh_cmd(f"{server.url}/simple", built, "--variants", "cu130"), capsys)
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
    # issue 17: exit 0 only when every page asked answered; empty pages did not (it was 0)
    assert code == 4 and payload["written"] == str(out_file), payload
    new, base = matrix.load_matrix(out_file), matrix.load_matrix(matrix.BUNDLED_PATH)
    for rel in base.releases:
        assert new.release(str(rel.version)).index == rel.index  # type: ignore[union-attr]
    assert any("lists no torch+cu130 wheels" in f for f in payload["failed"])


# --- the base is the user's current copy ---------------------------------------------------------


def test_second_refresh_keeps_what_the_first_verified(
    server: Any, built: str, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first refresh reads a complete cu130 page; a second one reaches PyPI but not the index.
    The second merges into the first's copy: the cu130 rows the page verified stay as they were,
    and rows the page had removed (2.12.0's; 2.15.0's unverified '?' Linux rows) do not come back
    from the bundled data."""
    code, out, err = run(refresh_cmd(f"{server.url}/simple", built, "--variants", "cu130"), capsys)
    assert code == 0, out + err
    target = matrix.user_matrix_path()
    first = json.loads(target.read_text())
    bundled = json.loads(matrix.BUNDLED_PATH.read_text())
    assert "cu130" not in first["releases"]["2.12.0"]["index"]
    assert bundled["releases"]["2.15.0"]["index"]["cu130"]["linux_x86_64"]["verified"] is False
    assert set(first["releases"]["2.15.0"]["index"]["cu130"]) == {"windows_x86_64"}
    code, out, err = run(
        refresh_cmd(f"{server.url}/simple", f"{server.url}/status/500/whl", "--variants", "cu130"),
        capsys,
    )
    # issue 17: exit 0 only when every page asked answered; the cu130 page did not (it was 0)
    assert code == 4, out + err
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
    server: Any, built: str, cache_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = matrix.user_matrix_path()
    target.parent.mkdir(parents=True)
    target.write_text('{"schema_version": 1, "releases": [')
    base = refresh.current_copy()
    assert base.origin == "bundled" and "not usable" in base.notes[0]
    code, out, err = run(refresh_cmd(f"{server.url}/simple", built, "--variants", "cu130"), capsys)
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
