"""The wheel matrix's query rules (issue 22), on the frozen fixture matrix
(tests/fixtures/matrix/wheels-subset.json, see its SOURCE) and the bundled one."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

M = mx.load_matrix(Path(__file__).resolve().parent / "fixtures" / "matrix" / "wheels-subset.json")
B = mx.load_matrix(mx.BUNDLED_PATH)
V = Variant.parse


@pytest.mark.parametrize(("grade", "ok"), [("V", True), ("V2", True), ("I", True), ("?", False)])
def test_which_grades_a_plan_may_rest_on(grade: str, ok: bool) -> None:
    assert mx.plannable(grade) is ok


def test_a_toolkit_minimum_is_its_own_update_else_the_newest() -> None:
    row = M.cuda["12.8"]
    updates = sorted(row.updates, key=Version)
    assert len(updates) >= 2
    for u in updates:
        assert row.toolkit_minimum(Version(u)) == row.updates[u]
    assert row.toolkit_minimum(Version("12.8.99")) == row.updates[updates[-1]]


def test_a_floor_per_system_printed_as_nvidia_writes_it() -> None:
    floor = mx.DriverFloor(Version("560.35.05"), Version("561.09"), "V", "560.35.05", "561.09")
    assert floor.for_os("linux") == (Version("560.35.05"), "560.35.05")
    assert floor.for_os("windows") == (Version("561.09"), "561.09")
    bare = mx.DriverFloor(Version("560.35.05"), Version("561.09"), "V")
    assert bare.for_os("linux")[1] == "560.35.5" and bare.for_os("windows")[1] == "561.9"


def test_requires_python() -> None:
    rel = B.release("2.9.0")
    assert rel is not None and rel.requires_python
    assert rel.allows_python("3.10") and not rel.allows_python("3.9")
    assert rel.series == "2.9"


def test_an_installed_torch_finds_its_build() -> None:
    rel = B.newest
    plat = "linux_x86_64"
    variant = next(
        v for v in rel.index if v.is_cuda and (variant_build := B.build(v, rel.version, plat))
    )
    assert variant_build is not None
    assert B.wheel_build(f"{rel.version}+{variant}", variant, plat) == variant_build
    assert B.wheel_build("not a version", variant, plat) is None


@pytest.mark.parametrize(
    ("torch", "companions"),
    [
        ("2.13.0+cu130", {"torchvision": "0.28.0", "torchaudio": "2.11.0"}),  # exact versions
        ("2.14.0", {"torchvision": "0.29.0"}),  # torchaudio: none named
        ("2.14.1", {"torchvision": "0.29.*"}),  # only the release pattern
        ("2.15.0", {}),
        ("0.0.1", {}),
        ("junk", {}),
    ],
)
def test_the_companions_of_a_torch(torch: str, companions: dict[str, str]) -> None:
    assert B.companion_versions(torch) == companions


def test_a_release_by_its_version_and_the_newest() -> None:
    assert B.release(B.newest.version) is B.newest
    assert B.release(str(B.newest.version)) is B.newest
    assert B.release("0.0.1") is None
    assert B.newest.version == max(r.version for r in B.releases)
    assert V("cpu") in B.variants and V("cu92") not in B.variants


def test_index_variants_verified_or_not() -> None:
    for rel in B.releases:
        for plat in ("linux_x86_64", "windows_x86_64"):
            every = set(rel.index_variants(plat, verified_only=False))
            verified = set(rel.index_variants(plat))
            assert verified <= every
            assert verified == {v for v in every if rel.index[v][plat].verified}


def test_a_build_lists_sass_then_ptx() -> None:
    b = mx.Build(V("cu128"), Version("2.7.0"), "linux_x86_64", Version("12.8.0"),
                 ((8, 0), (9, 0)), ((9, 0),), "V", "test")  # fmt: skip
    assert b.cuda == "12.8"
    assert b.arch_names() == ("sm_80", "sm_90", "compute_90")


@pytest.mark.parametrize(
    ("platform", "env", "where"),
    [
        # Windows: the per-user local app data, its default when the variable is unset
        ("win32", {"LOCALAPPDATA": "/lad"}, "/lad/setup-env/wheels.json"),
        ("win32", {}, "HOME/AppData/Local/setup-env/wheels.json"),
        ("win32", {"XDG_CACHE_HOME": "/xdg"}, "HOME/AppData/Local/setup-env/wheels.json"),
        # elsewhere an absolute XDG_CACHE_HOME wins; a relative one is ignored (XDG spec)
        ("linux", {"XDG_CACHE_HOME": "/xdg"}, "/xdg/setup-env/wheels.json"),
        ("darwin", {"XDG_CACHE_HOME": "/xdg"}, "/xdg/setup-env/wheels.json"),
        ("linux", {"XDG_CACHE_HOME": "rel"}, "HOME/.cache/setup-env/wheels.json"),
        ("linux", {}, "HOME/.cache/setup-env/wheels.json"),
        ("darwin", {}, "HOME/Library/Caches/setup-env/wheels.json"),
    ],
)
def test_the_refreshed_matrix_is_kept_in_each_platforms_user_cache(
    monkeypatch: pytest.MonkeyPatch, platform: str, env: dict[str, str], where: str
) -> None:
    monkeypatch.setattr(mx.sys, "platform", platform)
    monkeypatch.setattr(mx.Path, "home", staticmethod(lambda: Path("HOME")))
    for name in ("LOCALAPPDATA", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert mx.user_matrix_path() == Path(where)
