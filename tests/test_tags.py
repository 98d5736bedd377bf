"""setup_env.knowledge.tags against packaging.tags, the oracle.

packaging's Linux functions read the running machine (glibc through confstr, musl through the
interpreter's ELF header); each case here hands them the glibc / musl version and the ABI answer
of the machine described, so the oracle computes that machine's tags, not this one's.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from packaging import _manylinux, _musllinux, tags

from setup_env.knowledge import tags as ours

GLIBCS = [(2, 5), (2, 12), (2, 16), (2, 17), (2, 24), (2, 28), (2, 31), (2, 34), (2, 35), (2, 39)]
LINUX_ARCHES = ["x86_64", "aarch64", "i686", "ppc64le", "s390x", "armv7l"]
MUSLS = [(1, 1), (1, 2)]
MACOS = [
    (10, 0),
    (10, 3),
    (10, 4),
    (10, 9),
    (10, 15),
    (10, 16),
    (11, 0),
    (12, 7),
    (13, 6),
    (14, 0),
    (14, 4),
    (15, 1),
]
PYTHONS = ["3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]


@pytest.fixture
def machine(monkeypatch: pytest.MonkeyPatch) -> object:
    """Point packaging's machine readers at a described glibc / musl."""

    def describe(glibc: tuple[int, int] | None = None, musl: tuple[int, int] | None = None) -> None:
        monkeypatch.setattr(_manylinux, "_have_compatible_abi", lambda _exe, _archs: True)
        monkeypatch.setattr(_manylinux, "_get_manylinux_module", lambda: None)
        monkeypatch.setattr(_manylinux, "_get_glibc_version", lambda: glibc or (-1, -1))
        version = _musllinux._MuslVersion(*musl) if musl else None
        monkeypatch.setattr(_musllinux, "_get_musl_version", lambda _exe: version)

    return describe


def _oracle_linux(arch: str) -> list[str]:
    return [
        *_manylinux.platform_tags([arch]),
        *_musllinux.platform_tags([arch]),
        f"linux_{arch}",
    ]


@pytest.mark.parametrize("arch", LINUX_ARCHES)
@pytest.mark.parametrize("glibc", GLIBCS)
def test_manylinux_platforms_are_packagings(machine, glibc: tuple[int, int], arch: str) -> None:  # type: ignore[no-untyped-def]
    machine(glibc=glibc)
    theirs = _oracle_linux(arch)
    assert ours.linux_platforms(arch, "glibc", f"{glibc[0]}.{glibc[1]}") == theirs
    # and the same set packaging's own order gives (26.x lists linux_<arch> first)
    assert set(ours.platform_tags("linux", arch, libc_version=f"{glibc[0]}.{glibc[1]}")) == set(
        theirs
    )


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("musl", MUSLS)
def test_musllinux_platforms_are_packagings(machine, musl: tuple[int, int], arch: str) -> None:  # type: ignore[no-untyped-def]
    machine(musl=musl)
    assert ours.linux_platforms(arch, "musl", f"{musl[0]}.{musl[1]}") == _oracle_linux(arch)


def test_linux_machine_spellings() -> None:
    assert ours.linux_platforms("AMD64", "glibc", "2.17")[0] == "manylinux_2_17_x86_64"
    assert ours.linux_platforms("arm64", "glibc", "2.28")[-1] == "linux_aarch64"
    assert ours.linux_platforms("x86_64", None, None) == ["linux_x86_64"]
    assert ours.linux_platforms("x86_64", "glibc", "garbage") == ["linux_x86_64"]


@pytest.mark.parametrize("arch", ["arm64", "x86_64"])
@pytest.mark.parametrize("version", MACOS)
def test_mac_platforms_are_packagings(version: tuple[int, int], arch: str) -> None:
    # the native arch and universal2 only: the legacy intel/fat spellings are on no torch wheel
    # and changed between packaging releases (26.2 'fat32', 26.4 'fat3')
    theirs = [
        t for t in tags.mac_platforms(version, arch) if t.endswith((f"_{arch}", "_universal2"))
    ]
    assert ours.mac_platforms(version, arch) == theirs
    assert ours.platform_tags("macos", arch, macos=f"{version[0]}.{version[1]}") == theirs


def test_mac_needs_a_version() -> None:
    assert ours.platform_tags("darwin", "arm64", macos=None) == []
    assert ours.platform_tags("macos", "aarch64", macos="14")[0] == "macosx_14_0_arm64"


@pytest.mark.parametrize(
    ("machine_name", "sysconfig_platform"),
    [("AMD64", "win-amd64"), ("ARM64", "win-arm64"), ("x86", "win32")],
)
def test_windows_platforms(machine_name: str, sysconfig_platform: str) -> None:
    # packaging's one Windows platform: sysconfig.get_platform(), normalized
    theirs = tags._normalize_string(sysconfig_platform)
    assert ours.platform_tags("Windows", machine_name) == [theirs]
    assert ours.platform_tags("windows", "sparc") == []


@pytest.mark.parametrize("python", PYTHONS)
@pytest.mark.parametrize("abi3", [False, True])
def test_cpython_tags_are_packagings(python: str, abi3: bool) -> None:
    plats = ["manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "linux_x86_64"]
    version = tuple(int(p) for p in python.split("."))
    interp = f"cp{version[0]}{version[1]}"
    theirs = [str(t) for t in tags.cpython_tags(version, [interp], plats)]
    # packaging lists abi3 (when it applies) and none after the ABI given; the own-ABI tags first
    own = ours.cpython_tags(python, plats)
    assert own == theirs[: len(plats)]
    full = ours.cpython_tags(python, plats, abi3=abi3, none=True)
    if abi3:
        assert full == theirs
    else:
        assert full == [t for t in theirs if "-abi3-" not in t]


@pytest.mark.parametrize("python", ["3.13", "3.14"])
def test_free_threaded_tags(python: str) -> None:
    """cp313t/cp314t: the own ABI is ``cp31Xt``; the stable ABI is PEP 803's ``abi3t``, never
    ``abi3`` (a free-threaded build cannot load abi3 extensions)."""
    plats = ["manylinux_2_28_aarch64", "linux_aarch64"]
    version = tuple(int(p) for p in python.split("."))
    abi = f"cp{version[0]}{version[1]}t"
    theirs = [str(t) for t in tags.cpython_tags(version, [abi], plats)]
    full = ours.cpython_tags(python, plats, free_threaded=True, abi3=True, none=True)
    if any("-abi3t-" in t for t in theirs):
        assert full == theirs
    else:  # packaging < 26.1 knows no abi3t: the rest is the same
        assert [t for t in full if "-abi3t-" not in t] == theirs
    assert full[0] == f"cp{version[0]}{version[1]}-{abi}-manylinux_2_28_aarch64"
    assert not any("-abi3-" in t for t in full)


def test_derive_tags_live_interpreter() -> None:
    """What the detector derives for this interpreter is packaging's own-ABI list, as a set (the
    Linux order differs by packaging release; see the module doc)."""
    import platform
    import sysconfig

    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("derivation without packaging runs on glibc Linux only")
    first = next(iter(tags.sys_tags()))
    theirs = {
        str(t) for t in tags.sys_tags() if t.interpreter == first.interpreter and t.abi == first.abi
    }
    mine = ours.derive_tags(
        platform.python_version(),
        sys.implementation.name,
        bool(sysconfig.get_config_var("Py_GIL_DISABLED")),
        "Linux",
        platform.machine(),
        *platform.libc_ver(),
    )
    assert set(mine) == theirs


@pytest.mark.parametrize(
    ("tag", "family"),
    [
        ("manylinux_2_28_x86_64", "linux_x86_64"),
        ("manylinux2014_aarch64", "linux_aarch64"),
        ("manylinux1_x86_64", "linux_x86_64"),
        ("musllinux_1_2_aarch64", "linux_aarch64"),
        ("linux_x86_64", "linux_x86_64"),
        ("manylinux2014_ppc64le", "linux_ppc64le"),
        ("manylinux_2_17_s390x", "linux_s390x"),
        ("win_amd64", "windows_x86_64"),
        ("win_arm64", "windows_arm64"),
        ("win32", "windows_x86"),
        ("macosx_14_0_arm64", "macos_arm64"),
        ("macosx_10_9_x86_64", "macos_x86_64"),
        ("macosx_11_0_universal2", "macos_universal2"),
        ("any", None),
        ("manylinux", None),
        ("", None),
    ],
)
def test_platform_of_tag(tag: str, family: str | None) -> None:
    assert ours.platform_of_tag(tag) == family


@pytest.mark.parametrize("arch", LINUX_ARCHES)
@pytest.mark.parametrize("glibc", GLIBCS)
def test_every_generated_tag_maps_back(machine, glibc: tuple[int, int], arch: str) -> None:  # type: ignore[no-untyped-def]
    """Generation and platform_of_tag agree: every tag packaging gives a glibc maps to one family,
    and every manylinux tag states a floor no newer than the glibc."""
    machine(glibc=glibc)
    for tag in _oracle_linux(arch):
        assert ours.platform_of_tag(tag) == f"linux_{arch}"
        floor = ours.floor_of_tag(tag)
        assert floor is None or (floor[0] == "glibc" and floor[1] <= glibc)


@pytest.mark.parametrize(
    ("tag", "floor"),
    [
        ("manylinux_2_28_x86_64", ("glibc", (2, 28))),
        ("manylinux2014_aarch64", ("glibc", (2, 17))),
        ("manylinux2010_x86_64", ("glibc", (2, 12))),
        ("manylinux1_x86_64", ("glibc", (2, 5))),
        ("musllinux_1_2_aarch64", ("musl", (1, 2))),
        ("macosx_11_0_arm64", ("macos", (11, 0))),
        ("macosx_10_9_x86_64", ("macos", (10, 9))),
        ("linux_x86_64", None),
        ("win_amd64", None),
    ],
)
def test_floor_of_tag(tag: str, floor: tuple[str, tuple[int, int]] | None) -> None:
    assert ours.floor_of_tag(tag) == floor


def test_no_packaging_at_import() -> None:
    """detect on glibc Linux derives tags through this module without importing packaging."""
    code = (
        "import sys, setup_env.knowledge.tags; "
        "print(any(m.startswith('packaging') for m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "False"


def test_planner_reads_the_macos_floor_from_the_tags() -> None:
    """plan's "needs macOS X" comes from the release's own macosx_* tags for that interpreter."""
    from setup_env.decide.model import PlanOptions
    from setup_env.decide.plan import make_plan, spec_facts
    from setup_env.knowledge import matrix

    m = matrix.load_matrix(matrix.BUNDLED_PATH)
    rel = m.release("2.15.0")
    assert rel is not None
    floors = [
        ours.floor_of_tag(tag)
        for tag in rel.platform_tags("macos_arm64")
        if "cp312-cp312" in rel.pypi_files[tag]
    ]
    low = min(f[1] for f in floors if f is not None)
    older = f"{low[0] - 1}.6"
    facts = spec_facts(os="macos", arch="arm64", python="3.12", macos=older)
    plan = make_plan(facts, PlanOptions(torch="2.15"), m)
    assert f"needs macOS {low[0]}.{low[1]} or newer for Python 3.12" in " ".join(plan.reasons)


# One spelling map from (OS, machine) to the matrix's platform keys, for the planner's target and
# the doctor's installed wheel alike; platform_of_tag names the same keys from wheel tags.
@pytest.mark.parametrize(
    ("os_name", "arch", "key", "tag"),
    [
        ("linux", "x86_64", "linux_x86_64", "manylinux_2_28_x86_64"),
        ("linux", "aarch64", "linux_aarch64", "manylinux_2_28_aarch64"),
        ("linux", "arm64", "linux_aarch64", "manylinux2014_aarch64"),
        ("windows", "AMD64", "windows_x86_64", "win_amd64"),
        ("windows", "x64", "windows_x86_64", "win_amd64"),
        ("windows", "ARM64", "windows_arm64", "win_arm64"),
        ("darwin", "arm64", "macos_arm64", "macosx_11_0_arm64"),
        ("macos", "aarch64", "macos_arm64", "macosx_14_0_arm64"),
        ("darwin", "x86_64", "macos_x86_64", "macosx_10_9_x86_64"),
        ("linux", "riscv64", "linux_riscv64", "manylinux_2_39_riscv64"),
    ],
)
def test_platform_key_names_what_platform_of_tag_names(
    os_name: str, arch: str, key: str, tag: str
) -> None:
    assert ours.platform_key(os_name, arch) == key
    assert ours.platform_of_tag(tag) == key


@pytest.mark.parametrize(("os_name", "arch"), [("other", "x86_64"), ("linux", ""), ("", "")])
def test_platform_key_unknown(os_name: str, arch: str) -> None:
    assert ours.platform_key(os_name, arch) is None


@pytest.mark.parametrize("minor", [1, 2, 3])
def test_the_stable_abi_starts_at_python_3_2(minor: int) -> None:
    # PEP 384: abi3 exists from 3.2 on; packaging's own rule, at its edge and one either side
    plats = ["linux_x86_64"]
    theirs = [str(t) for t in tags.cpython_tags((3, minor), [f"cp3{minor}m"], plats)]
    assert ours.cpython_tags(f"3.{minor}", plats, abi3=True, none=True) == theirs
    assert (f"cp3{minor}-abi3-linux_x86_64" in theirs) == (minor >= 2)


def test_a_python_version_that_is_none_gives_no_tags() -> None:
    for bad in ("garbage", "", "three.twelve"):
        assert ours.interpreter(bad) is None
        assert ours.cpython_tags(bad, ["linux_x86_64"], abi3=True, none=True) == []


@pytest.mark.parametrize("python", ["3.12", "3.13"])
@pytest.mark.parametrize("free", [False, True])
def test_none_tags_are_packagings_none_tags(python: str, free: bool) -> None:
    # pip accepts cp312-none-<plat> beside cp312-cp312-<plat>: the same set packaging lists
    plats = ["manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "linux_aarch64"]
    version = tuple(int(p) for p in python.split("."))
    abi = f"cp{version[0]}{version[1]}{'t' if free else ''}"
    theirs = {str(t) for t in tags.cpython_tags(version, [abi], plats) if t.abi == "none"}
    own = ours.cpython_tags(python, plats, free_threaded=free)
    assert ours.none_tags(own) == theirs
    # only CPython tags have a none twin: a pure-Python or PyPy tag has none
    assert ours.none_tags(["py3-none-any", "pp310-pypy310_pp73-linux_x86_64", "cp312"]) == set()


def test_an_unknown_libc_gives_only_the_plain_linux_tag() -> None:
    # a version without its libc's name says nothing about manylinux or musllinux
    assert ours.linux_platforms("x86_64", None, "2.36") == ["linux_x86_64"]
    assert ours.linux_platforms("x86_64", "uclibc", "1.0") == ["linux_x86_64"]
    assert ours.linux_platforms("x86_64", "musl", "1.2")[:1] == ["musllinux_1_2_x86_64"]


def test_derive_tags_takes_the_described_machine_whole() -> None:
    # what the detector records for a machine it describes (not this one): the libc, the macOS
    # version and free-threading each reach the tags
    mac = ours.derive_tags("3.12", "cpython", False, "Darwin", "arm64", macos_version="14.0")
    assert mac == ours.cpython_tags("3.12", ours.mac_platforms((14, 0), "arm64"))
    musl = ours.derive_tags("3.12", "cpython", False, "Linux", "x86_64", "musl", "1.2")
    assert musl[0] == "cp312-cp312-musllinux_1_2_x86_64"
    glibc = ours.derive_tags("3.13", "cpython", True, "Linux", "aarch64", "glibc", "2.28")
    assert glibc[0] == "cp313-cp313t-manylinux_2_28_aarch64"
    assert ours.derive_tags("3.10", "pypy", False, "Linux", "x86_64", "glibc", "2.28") == []
