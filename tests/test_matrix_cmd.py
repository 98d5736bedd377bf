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

from setup_env import index
from setup_env.cli import main
from setup_env.commands import matrix as cmd

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
    live = cmd.live_view(snapshot(server, ["cu130", "cu126", "cpu", "cu117", "cu999"]))
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
    live = cmd.live_view(snapshot(server, ["cu130", "cpu"]))
    assert cmd.drift(live, live) == []


def test_drift_found(server: Any) -> None:
    live = cmd.live_view(snapshot(server, ["cu130", "cu126"]))
    bundled = json.loads(json.dumps(live))
    del bundled["releases"]["2.15.0"]  # a release the data does not know yet
    bundled["releases"]["2.14.1"]["pypi"]["win_amd64"].remove("cp314t")
    bundled["releases"]["2.13.0"]["variants"]["cu126"] = {"linux_x86_64": []}  # not on the page
    bundled["releases"]["2.14.0"]["variants"].pop("cu126")
    bundled["releases"]["2.12.0"]["variants"]["cu999"] = {"linux_x86_64": []}
    live["absent_variants"] = ["cu999"]
    found = cmd.drift(bundled, live)
    assert found == [
        "torch 2.13.0+cu126: in the data, not on the index",
        "torch 2.14.0+cu126: on the index, not in the data (linux_x86_64, windows_x86_64)",
        "torch 2.14.1 PyPI win_amd64: +cp314t",
        "torch 2.15.0: new release on PyPI (macosx_14_0_arm64, manylinux_2_28_aarch64, "
        "manylinux_2_28_x86_64, win_amd64)",
        "variant cu999: the index has no page for it any more (404)",
    ]


def test_full_pypi_capture_matches_verified_table(server: Any) -> None:
    """The whole captured PyPI answer (../shared): every release 1.13.0-2.15.0 is read, and the
    2.10.0 build-tagged wheels (torch-2.10.0-3-cp310-...) keep their real platform tags."""
    live = cmd.live_view(snapshot(server, [], pypi="shared/simple"))
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
    live = cmd.live_view(snap)
    text = json.dumps(live)
    for bad in HOSTILE:
        assert bad not in text
    assert "9.0.0" not in live["releases"] and "9.0.1" not in live["releases"]
    assert len(hostile_page.rejected) == len(loopback.HOSTILE_ANCHORS)
    merged = cmd.merge_view({"releases": []}, live, "2026-12-03T00:00:00Z", ["http://x"])
    for bad in HOSTILE:
        assert bad not in json.dumps(merged)


def test_platform_families() -> None:
    assert cmd.platform_of("manylinux_2_28_x86_64") == "linux_x86_64"
    assert cmd.platform_of("manylinux2014_aarch64") == "linux_aarch64"
    assert cmd.platform_of("linux_x86_64") == "linux_x86_64"
    assert cmd.platform_of("win_amd64") == "windows_x86_64"
    assert cmd.platform_of("macosx_14_0_arm64") == "macos_arm64"
    assert cmd.platform_of("macosx_10_9_x86_64") == "macos_x86_64"


# --- refresh / show through the CLI (need the matrix loader and bundled data) --------------------


def _matrix_ready() -> Any:
    try:
        from setup_env import matrix  # type: ignore[attr-defined]
    except ImportError:
        return None
    return matrix if Path(cmd._bundled_path()).exists() else None


needs_matrix = pytest.mark.skipif(
    _matrix_ready() is None, reason="setup_env.matrix / data/wheels.json not in this tree yet"
)


def test_refresh_check_offline_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if _matrix_ready() is None:
        pytest.skip("setup_env.matrix / data/wheels.json not in this tree yet")
    with loopback.LoopbackServer() as srv:
        dead = srv.url
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
    assert code == 0 and "kept the bundled data" in out and not (tmp_path / "m.json").exists()


@needs_matrix
def test_refresh_writes_validated_copy(
    server: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = _matrix_ready()
    target = tmp_path / "wheels.json"
    code, out, err = run(
        ["matrix", "refresh", "--json", "-v", "--pypi-url", f"{server.url}/simple",
         "--index-url", f"{server.url}/hostile/whl", "--variants", "cu130",
         "--output", str(target)],
        capsys,
    )  # fmt: skip
    payload = json.loads(out)["matrix"]["refresh"]
    assert code == 0, payload
    assert payload["written"] == str(target)
    doc = json.loads(target.read_text())
    assert m.validate(doc) == []
    for bad in HOSTILE:
        assert bad not in target.read_text()
    assert len([line for line in err.splitlines() if line.startswith("  http")]) == 4


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["matrix", "refresh", "--variants", "cu130;rm"], capsys)
    assert code == 2 and "not a variant name: 'cu130;rm'" in err
    code, _, _ = run(["matrix", "bogus"], capsys)
    assert code == 2
