"""The bundled wheel matrix: generated, sourced, consistent with VERIFIED.md, loaded safely.

Sources: tests/fixtures/reference/VERIFIED.md (overrides), captures/pypi-simple-torch.json and
captures/pypi-simple-torchvision.json (real PyPI PEP 691 answers, 2026-12-02).
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, Variant

V = Variant.parse

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "tests" / "fixtures" / "reference"
CAPTURE = REFERENCE / "captures" / "pypi-simple-torch.json"


@pytest.fixture(scope="module")
def doc() -> dict:
    return json.loads(mx.BUNDLED_PATH.read_text())


@pytest.fixture(scope="module")
def m() -> mx.Matrix:
    return mx.load_matrix(mx.BUNDLED_PATH)


def test_committed_data_is_what_the_script_generates() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_matrix.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr


def test_check_reports_drift(tmp_path: Path) -> None:
    stale = tmp_path / "wheels.json"
    stale.write_text(mx.BUNDLED_PATH.read_text().replace('"2.15.0"', '"2.15.9"', 1))
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_matrix.py"), "--check", "--out", str(stale)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "differs" in proc.stderr


def test_header(doc: dict) -> None:
    assert doc["schema_version"] == mx.SCHEMA_VERSION
    assert doc["generated_by"] == "scripts/build_matrix.py"
    assert doc["retrieved"] == "2026-12-02"
    assert doc["source"]
    assert mx.validate(doc) == []


def test_every_release_of_the_capture_is_there(m: mx.Matrix) -> None:
    capture = json.loads(CAPTURE.read_text())
    want = sorted(
        (v for v in map(Version, capture["versions"]) if Version("1.13") <= v <= Version("2.15")),
    )
    assert [r.version for r in m.releases] == want
    assert str(m.newest.version) == "2.15.0"


def test_pypi_files_are_read_from_the_capture(m: mx.Matrix) -> None:
    """Every wheel tag of the capture (1.13 -> 2.15, not yanked) is in the data, and no other."""
    capture = json.loads(CAPTURE.read_text())
    seen: dict[str, set[str]] = {}
    for f in capture["files"]:
        if not f["filename"].endswith(".whl") or f.get("yanked"):
            continue
        _n, ver, _b, tags = parse_wheel_filename(f["filename"])
        if not Version("1.13") <= ver <= Version("2.15.0"):
            continue
        seen.setdefault(str(ver), set()).update(str(t) for t in tags)
    for rel in m.releases:
        have = {f"{pa}-{tag}" for tag, pas in rel.pypi_files.items() for pa in pas}
        assert have == seen[str(rel.version)], rel.version


# --- VERIFIED.md, section by section -------------------------------------------------------------


def test_verified_1_python_and_tags(m: mx.Matrix) -> None:
    r215 = m.release("2.15.0")
    assert r215 is not None
    assert str(r215.requires_python) == ">=3.11"
    assert set(r215.python) == {"3.11", "3.12", "3.13", "3.14", "3.15", "3.14t", "3.15t"}
    assert "3.13t" in m.release("2.12.0").python  # type: ignore[union-attr]
    assert "3.13t" not in m.release("2.12.1").python  # type: ignore[union-attr]
    for rel in m.releases:
        if rel.version >= Version("2.12"):
            assert rel.min_macos["macos_arm64"] == Version("14.0"), rel.version
        if rel.version >= Version("2.7"):
            assert "manylinux_2_28_x86_64" in rel.pypi_files, rel.version
    assert m.release("2.11.0").min_macos["macos_arm64"] == Version("11.0")  # type: ignore[union-attr]
    macx = [str(r.version) for r in m.releases if r.platform_tags("macos_x86_64")]
    assert macx[-1] == "2.2.2"


def test_verified_1_trap_2_6_manylinux1(m: mx.Matrix) -> None:
    r = m.release("2.6.0")
    assert r is not None
    assert "manylinux1_x86_64" in r.pypi_files
    assert r.min_glibc["linux_x86_64"] == Version("2.28")
    assert r.traps and r.traps[0].platform_tag == "manylinux1_x86_64"
    assert m.release("2.5.1").min_glibc["linux_x86_64"] == Version("2.17")  # type: ignore[union-attr]


def test_verified_2_pypi_default_variant(m: mx.Matrix) -> None:
    pv = lambda rel, plat: m.release(rel).pypi_variant[plat].variant  # type: ignore[union-attr]  # noqa: E731
    assert pv("2.14.1", "linux_x86_64") == V("cu130")
    assert pv("2.14.1", "linux_aarch64") == V("cu130")
    assert pv("2.15.0", "linux_x86_64") == V("cu132")
    assert pv("2.15.0", "linux_aarch64") == V("cu132")
    assert pv("2.15.0", "windows_x86_64") == CPU
    assert pv("2.15.0", "macos_arm64") == CPU
    assert pv("2.9.1", "linux_x86_64") == V("cu128")
    assert pv("2.11.0", "linux_aarch64") == V("cu130")
    b = m.build(V("cu132"), "2.15.0", "linux_x86_64")
    assert b is not None and str(b.toolkit) == "13.2.2"


@pytest.mark.parametrize(
    ("rel", "variant", "plat", "sass"),
    [
        ("2.15.0", "cu132", "linux_x86_64", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"),
        ("2.15.0", "cu132", "linux_aarch64", "sm_80 sm_90 sm_100 sm_110 sm_120"),
        ("2.14.1", "cu130", "linux_x86_64", "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"),
        ("2.14.1", "cu130", "linux_aarch64", "sm_80 sm_90 sm_100 sm_110 sm_120"),
        ("2.9.1", "cu128", "linux_x86_64", "sm_70 sm_75 sm_80 sm_86 sm_90 sm_100 sm_120"),
    ],
)
def test_verified_3_measured_arches(
    m: mx.Matrix, rel: str, variant: str, plat: str, sass: str
) -> None:
    b = m.build(V(variant), rel, plat)
    assert b is not None
    assert " ".join(b.arch_names()) == sass  # no PTX: none was seen in the fat binaries
    assert b.measured.startswith("VERIFIED.md §3")


def test_no_ptx_is_counted_on(m: mx.Matrix) -> None:
    """VERIFIED §3: no PTX entries were seen; the data must not promise PTX JIT."""
    assert all(not b.ptx for b in m.builds.values())


def test_verified_5_index_of_2_15(m: mx.Matrix) -> None:
    r = m.release("2.15.0")
    assert r is not None
    verified = {(v, p) for v, ps in r.index.items() for p, a in ps.items() if a.verified}
    assert verified == {
        (CPU, "linux_x86_64"),
        (CPU, "linux_aarch64"),
        (CPU, "windows_x86_64"),
        (V("cu130"), "windows_x86_64"),
    }
    assert V("cu126") not in r.index  # dropped (RFC #190385; no real use found)
    assert m.release("2.14.1").index[V("cu126")]["linux_x86_64"].verified  # type: ignore[union-attr]
    assert m.release("2.13.0").index[V("cu129")]["linux_x86_64"].verified  # type: ignore[union-attr]
    assert V("cu129") not in m.release("2.14.0").index  # type: ignore[union-attr]


def test_companions(m: mx.Matrix) -> None:
    r = m.release("2.15.0")
    assert r is not None and r.companions["torchvision"].spec is None  # none on PyPI yet
    assert m.companion_versions("2.14.0") == {"torchvision": "0.29.0"}
    want = {"torchvision": "0.28.0", "torchaudio": "2.11.0"}
    assert m.companion_versions("2.13.0+cu129") == want
    for rel in m.releases:
        tv = rel.companions["torchvision"]
        if tv.version is not None:
            assert str(tv.version) in m.torchvision_files, rel.version


def test_every_index_cuda_variant_has_arches_or_is_unverified(m: mx.Matrix) -> None:
    for rel in m.releases:
        for variant, plats in rel.index.items():
            if not variant.is_cuda:
                continue
            for plat, av in plats.items():
                if av.verified:
                    assert m.build(variant, rel.version, plat) is not None, (
                        rel.version,
                        variant,
                        plat,
                    )


def test_driver_rows(m: mx.Matrix) -> None:
    # NVIDIA tables 2 and 3: (minor-version-compatibility floor, the newest update's minimum)
    for xy, os_family, floor, newest in (
        ("12.6", "linux", "525.60.13", "560.35.05"),
        ("11.8", "windows", "452.39", "520.06"),
        ("13.2", "linux", "580", "595.71.05"),
    ):
        row = m.cuda[xy]
        top = row.updates[max(row.updates, key=Version)]
        assert (row.mvc.for_os(os_family)[1], top.for_os(os_family)[1]) == (floor, newest)
    for b in m.builds.values():
        row = m.cuda_version(b.cuda)
        assert row is not None, b
        full = row.toolkit_minimum(b.toolkit)
        assert full.linux >= row.mvc.linux


def test_variants_closed_set(m: mx.Matrix) -> None:
    for v in m.variants:
        assert v.on_index and mx.is_variant_label(str(v)), v


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "value", "needle"),
    [
        (
            ("releases", "2.15.0", "pypi_variant", "linux_x86_64", "variant"),
            "cu132; rm -rf ~",
            "bad variant",
        ),
        (("index_url",), "http://evil.example/whl", "index_url"),
        (
            ("releases", "2.14.1", "companions", "torchvision", "spec"),
            "==0.29.0 --index-url x",
            "spec",
        ),
        (("schema_version",), 99, "schema_version"),
        (("releases", "2.14.1", "confidence"), "sure", "confidence"),
        (("cuda", "13.0", "mvc", "linux"), "580; reboot", "driver"),
    ],
)
def test_validate_rejects(doc: dict, path: tuple, value: object, needle: str) -> None:
    bad = copy.deepcopy(doc)
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    problems = mx.validate(bad)
    assert problems and any(needle in p for p in problems), problems
    with pytest.raises(mx.MatrixError):
        mx.parse(bad)


def test_validate_rejects_unknown_index_variant(doc: dict) -> None:
    bad = copy.deepcopy(doc)
    bad["releases"]["2.15.0"]["index"]["cu13$(id)"] = {}
    assert any("bad variant name" in p for p in mx.validate(bad))


# --- loading -----------------------------------------------------------------------------------


def test_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: dict) -> None:
    monkeypatch.delenv(mx.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert mx.load_matrix().origin == "bundled"
    user = mx.user_matrix_path()
    assert user == tmp_path / "cache" / "setup-env" / "wheels.json"
    user.parent.mkdir(parents=True)
    newer = copy.deepcopy(doc)
    newer["retrieved"] = "2026-12-24"
    user.write_text(json.dumps(newer))
    got = mx.load_matrix()
    assert got.origin == "user" and got.retrieved == "2026-12-24"
    older = copy.deepcopy(doc)
    older["retrieved"] = "2026-01-01"
    user.write_text(json.dumps(older))
    got = mx.load_matrix()
    assert got.origin == "bundled" and any("older" in n for n in got.notes)
    user.write_text("{ not json")
    got = mx.load_matrix()
    assert got.origin == "bundled" and any("refreshed matrix ignored" in n for n in got.notes)
    env = tmp_path / "env.json"
    env.write_text(json.dumps(newer))
    monkeypatch.setenv(mx.ENV_VAR, str(env))
    assert mx.load_matrix().origin == "env"
    explicit = tmp_path / "explicit.json"
    explicit.write_text(json.dumps(doc))
    assert mx.load_matrix(explicit).origin == "explicit"
    env.write_text(json.dumps({"schema_version": 1}))
    got = mx.load_matrix()
    assert got.origin in ("bundled", "user") and any(mx.ENV_VAR in n for n in got.notes)


def test_explicit_malformed_raises_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "w.json"
    bad.write_text('{"schema_version": 1, "releases": {}}')
    with pytest.raises(mx.MatrixError) as err:
        mx.load_matrix(bad)
    assert "\n" not in str(err.value)
    with pytest.raises(mx.MatrixError):
        mx.load_matrix(tmp_path / "missing.json")
