"""Wheel tags: the platform tags an interpreter accepts, and the platform a wheel's tag is for.

The one home of this knowledge (PEP 425 / PEP 600 / PEP 656, the rules ``packaging.tags``
implements): the detector derives a recorded interpreter's tags with it, the planner the tags of
a described machine (``plan --os linux --glibc 2.28``), the cloud planner those of a fresh
instance, and the matrix (its loader, its refresh, ``scripts/build_matrix.py``) the platform of a
wheel file.

Pure, in the manner of ``packaging.tags.mac_platforms(version, arch)``: every function takes the
machine's facts as arguments (glibc or musl version, macOS version, architecture) and never reads
the machine. ``tests/test_tags.py`` holds it to ``packaging.tags`` as the oracle over glibc and
musl versions, macOS versions, architectures and interpreters. ``packaging`` is not imported here:
``detect`` on glibc Linux derives the live interpreter's tags through this module, and importing
``packaging.tags`` (its logging, 64 ``import _manylinux`` probes) costs ~15 ms of start-up.

Two deliberate differences from ``packaging.tags``, both tested:

* macOS: only the native architecture and ``universal2`` are listed; the legacy ``intel``/``fat*``
  spellings are on no torch wheel and changed between packaging releases (26.2 ``fat32``, 26.4
  ``fat3``).
* Linux order: ``manylinux_*`` newest first, then ``musllinux_*``, then ``linux_<arch>`` (pip's
  order through packaging 25; packaging 26 lists ``linux_<arch>`` first). The set is the same;
  the planner matches tags as a set.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# PEP 600's aliases for the PEP 513/571/599 names (and the architectures each legacy spec covered).
_MANYLINUX_LEGACY = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
# The oldest glibc a manylinux tag names: 2.5 (manylinux1) on x86, 2.17 (manylinux2014) elsewhere.
_X86 = ("x86_64", "i686")

# Machine names as platform.machine() spells them on each OS -> the spelling in wheel tags.
_LINUX_ARCH = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "i386": "i686"}
_MAC_ARCH = {"aarch64": "arm64", "amd64": "x86_64", "x64": "x86_64"}
_WINDOWS_PLATFORM = {
    "amd64": "win_amd64",
    "x86_64": "win_amd64",
    "x64": "win_amd64",
    "arm64": "win_arm64",
    "aarch64": "win_arm64",
    "x86": "win32",
    "i386": "win32",
    "i686": "win32",
}
# Wheel platform tag -> the platform family the matrix lists rows under.
_WINDOWS_FAMILY = {
    "win_amd64": "windows_x86_64",
    "win_arm64": "windows_arm64",
    "win32": "windows_x86",
}
# Patterns, not compiled here: detect imports this module and never parses a tag (re caches them).
_LINUX_TAG = (
    r"(?:manylinux_\d+_\d+|manylinux1|manylinux2010|manylinux2014|musllinux_\d+_\d+|linux)_(\w+)"
)
_MAC_TAG = r"macosx_(\d+)_(\d+)_(\w+)"


def version_tuple(text: str | None) -> tuple[int, int] | None:
    """``"2.35"`` -> (2, 35); ``"14.5.1"`` -> (14, 5); ``"14"`` -> (14, 0); garbage -> None."""
    m = re.match(r"\s*(\d{1,4})(?:\.(\d{1,4}))?", text or "")
    if not m:
        return None
    return int(m.group(1)), int(m.group(2) or 0)


def _norm(machine: str) -> str:
    return machine.strip().lower().replace("-", "_").replace(".", "_")


def linux_arch(machine: str) -> str:
    """``platform.machine()`` on Linux -> the arch in ``linux_<arch>`` tags (AMD64 -> x86_64)."""
    arch = _norm(machine)
    return _LINUX_ARCH.get(arch, arch)


def mac_arch(machine: str) -> str:
    arch = _norm(machine)
    return _MAC_ARCH.get(arch, arch)


def manylinux_platforms(arch: str, glibc: tuple[int, int]) -> list[str]:
    """PEP 600 tags a glibc accepts, newest first, each legacy alias after its ``manylinux_2_N``:
    glibc 2.28 on x86_64 -> manylinux_2_28_x86_64 ... manylinux_2_17_x86_64, manylinux2014_x86_64,
    ..., manylinux_2_5_x86_64, manylinux1_x86_64 (``packaging._manylinux.platform_tags``)."""
    major, minor = glibc
    if major != 2:
        return []  # no other glibc major exists; packaging's _LAST_GLIBC_MINOR starts at 2
    floor = 5 if arch in _X86 else 17
    out: list[str] = []
    for m in range(minor, floor - 1, -1):
        out.append(f"manylinux_2_{m}_{arch}")
        legacy = _MANYLINUX_LEGACY.get(m)
        if legacy:
            out.append(f"{legacy}_{arch}")
    return out


def musllinux_platforms(arch: str, musl: tuple[int, int]) -> list[str]:
    """PEP 656: musl 1.2 on x86_64 -> musllinux_1_2_x86_64, musllinux_1_1_..., musllinux_1_0_..."""
    major, minor = musl
    return [f"musllinux_{major}_{m}_{arch}" for m in range(minor, -1, -1)]


def linux_platforms(machine: str, libc: str | None, libc_version: str | None) -> list[str]:
    """Platform tags a Linux interpreter accepts, most specific first; ``libc`` is ``glibc`` or
    ``musl`` (``platform.libc_ver()`` / the OS probe), its version ``"2.36"``; unknown -> only
    ``linux_<arch>``."""
    arch = linux_arch(machine)
    version = version_tuple(libc_version)
    out: list[str] = []
    if version is not None and libc == "glibc":
        out += manylinux_platforms(arch, version)
    elif version is not None and libc == "musl":
        out += musllinux_platforms(arch, version)
    out.append(f"linux_{arch}")
    return out


def _mac_formats(version: tuple[int, int], arch: str) -> list[str]:
    if arch == "x86_64":
        return [arch, "universal2"] if version >= (10, 4) else []
    if arch == "arm64":
        return [arch, "universal2"]
    return [arch]


def mac_platforms(version: tuple[int, int], machine: str) -> list[str]:
    """macOS platform tags, newest first (``packaging.tags.mac_platforms``' order: 10.x counts by
    minor, 11+ by major, and an interpreter on 11+ still takes 10.x wheels; an arm64 one only
    ``universal2`` ones), native architecture and ``universal2`` only (see the module doc)."""
    arch = mac_arch(machine)
    out: list[str] = []
    if (10, 0) <= version < (11, 0):
        for minor in range(version[1], -1, -1):
            out += [f"macosx_10_{minor}_{fmt}" for fmt in _mac_formats((10, minor), arch)]
    if version >= (11, 0):
        for major in range(version[0], 10, -1):
            out += [f"macosx_{major}_0_{fmt}" for fmt in _mac_formats((major, 0), arch)]
        for minor in range(16, 3, -1):
            if arch == "x86_64":
                out += [f"macosx_10_{minor}_{fmt}" for fmt in _mac_formats((10, minor), arch)]
            else:
                out.append(f"macosx_10_{minor}_universal2")
    return out


def windows_platforms(machine: str) -> list[str]:
    """``AMD64`` -> [win_amd64]; an unknown machine -> []."""
    plat = _WINDOWS_PLATFORM.get(_norm(machine))
    return [plat] if plat else []


def platform_tags(
    system: str,
    machine: str,
    *,
    libc: str | None = "glibc",
    libc_version: str | None = None,
    macos: str | None = None,
) -> list[str]:
    """The platform tags an interpreter on this system accepts, most specific first.

    ``system``: ``linux``, ``macos``/``darwin`` or ``windows`` (any case); a macOS version that is
    unknown gives no tags (the deployment target decides every macOS wheel)."""
    system = system.lower()
    if system == "linux":
        return linux_platforms(machine, libc, libc_version)
    if system in ("macos", "darwin"):
        version = version_tuple(macos)
        return mac_platforms(version, machine) if version else []
    if system == "windows":
        return windows_platforms(machine)
    return []


def interpreter(python: str) -> str | None:
    """``"3.12.4"`` -> ``cp312``; unparsable -> None."""
    v = version_tuple(python)
    return f"cp{v[0]}{v[1]}" if v else None


def cpython_tags(
    python: str,
    platforms: Sequence[str],
    *,
    free_threaded: bool = False,
    abi3: bool = False,
    none: bool = False,
) -> list[str]:
    """``interp-abi-platform`` tags of a CPython, in ``packaging.tags.cpython_tags``' order.

    Always the interpreter's own ABI (``cp312-cp312``, ``cp314-cp314t`` when free-threaded).
    ``abi3``: then the stable ABI of it and every older 3.x down to 3.2 (``abi3t``, PEP 803, on a
    free-threaded build, which cannot load abi3 extensions); ``none``: the ``cp312-none`` tags."""
    interp = interpreter(python)
    if interp is None:
        return []
    major, minor = version_tuple(python) or (0, 0)
    # CPython before 3.8 (built with pymalloc) has the "m" ABI suffix: torch's cp37m wheels.
    pymalloc = "m" if (major, minor) < (3, 8) else ""
    out = [f"{interp}-{interp}{pymalloc}{'t' if free_threaded else ''}-{p}" for p in platforms]
    stable = ("abi3t" if free_threaded else "abi3") if abi3 and (major, minor) >= (3, 2) else None
    if stable:
        out += [f"{interp}-{stable}-{p}" for p in platforms]
    if none:
        out += [f"{interp}-none-{p}" for p in platforms]
    if stable:
        for older in range(minor - 1, 1, -1):
            out += [f"cp{major}{older}-{stable}-{p}" for p in platforms]
    return out


def derive_tags(
    version: str,
    implementation: str,
    free_threaded: bool,
    system: str,
    machine: str,
    libc: str | None = None,
    libc_version: str | None = None,
    macos_version: str | None = None,
) -> list[str]:
    """The tags of an interpreter's own ABI over every platform it accepts, most specific first:
    what the detector records (``probe/host.py``'s ``most_specific_tags``) for a CPython."""
    if implementation != "cpython":
        return []
    plats = platform_tags(
        system, machine, libc=libc, libc_version=libc_version, macos=macos_version
    )
    return cpython_tags(version, plats, free_threaded=free_threaded)


def none_tags(tags: Iterable[str]) -> set[str]:
    """``cp312-cp312-<plat>`` -> ``cp312-none-<plat>``: the tags pip also accepts for a CPython
    (torch 2.2.2's Intel-Mac wheels are ``cp312-none-macosx_10_9_x86_64``)."""
    out = set()
    for tag in tags:
        parts = tag.split("-", 2)
        if len(parts) == 3 and parts[0].startswith("cp"):
            out.add(f"{parts[0]}-none-{parts[2]}")
    return out


# --- from a wheel's tag back to a platform --------------------------------------------------------


def machine_name(arch: str) -> str:
    """A machine as wheel tags name it, whatever the OS: ``AMD64``/``x64`` -> ``x86_64``,
    ``arm64e`` -> ``arm64`` (``arm64``/``aarch64`` stay: which one depends on the OS, see
    :func:`linux_arch` and :func:`mac_arch`)."""
    arch = _norm(arch)
    return {"amd64": "x86_64", "x64": "x86_64", "arm64e": "arm64"}.get(arch, arch)


def platform_key(os_name: str, arch: str) -> str | None:
    """The platform a machine's wheels are for, named as the matrix (and
    :func:`platform_of_tag`) names them: ``linux_x86_64``, ``linux_aarch64``,
    ``windows_x86_64``, ``macos_arm64``... ``os_name``: linux, windows, macos (or darwin);
    ``arch``: the machine in any spelling (AMD64, x64, arm64, aarch64). A platform PyTorch
    publishes nothing for keeps the same shape (``linux_riscv64``); None when either is unknown."""
    os_name = {"darwin": "macos"}.get(os_name, os_name)
    if not _norm(arch):
        return None
    if os_name == "linux":
        return f"linux_{linux_arch(arch)}"
    if os_name == "macos":
        return f"macos_{mac_arch(machine_name(arch))}"
    if os_name == "windows":
        tag = _WINDOWS_PLATFORM.get(_norm(arch))
        return platform_of_tag(tag) if tag else f"windows_{machine_name(arch)}"
    return None


def platform_of_tag(tag: str) -> str | None:
    """The platform family a wheel platform tag is for, as the matrix lists rows:
    ``manylinux_2_28_x86_64`` / ``manylinux2014_aarch64`` / ``musllinux_1_2_x86_64`` /
    ``linux_x86_64`` -> ``linux_<arch>``; ``win_amd64`` -> ``windows_x86_64``;
    ``macosx_14_0_arm64`` -> ``macos_arm64`` (``universal2`` -> ``macos_universal2``); ``any`` or
    an unknown tag -> None."""
    m = re.fullmatch(_LINUX_TAG, tag)
    if m:
        return f"linux_{m.group(1)}"
    m = re.fullmatch(_MAC_TAG, tag)
    if m:
        return f"macos_{m.group(3)}"
    return _WINDOWS_FAMILY.get(tag)


def floor_of_tag(tag: str) -> tuple[str, tuple[int, int]] | None:
    """The oldest OS a platform tag installs on: ``manylinux_2_28_x86_64`` -> ("glibc", (2, 28)),
    ``manylinux2014_aarch64`` -> ("glibc", (2, 17)), ``musllinux_1_2_x86_64`` -> ("musl", (1, 2)),
    ``macosx_11_0_arm64`` -> ("macos", (11, 0));
    tags that name none (``linux_x86_64``, ``win_amd64``) -> None."""
    m = re.fullmatch(r"(many|musl)linux_(\d+)_(\d+)_\w+", tag)
    if m:
        return "glibc" if m.group(1) == "many" else "musl", (int(m.group(2)), int(m.group(3)))
    for minor, legacy in _MANYLINUX_LEGACY.items():
        if tag.startswith(legacy + "_"):
            return "glibc", (2, minor)
    m = re.fullmatch(_MAC_TAG, tag)
    if m:
        return "macos", (int(m.group(1)), int(m.group(2)))
    return None
