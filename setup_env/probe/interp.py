"""The Python that torch would be installed into: version, ABI, architecture, wheel tags, Rosetta.

Sources: the host's interpreter record (``platform``, ``sysconfig``, ``packaging.tags`` as the
interpreter itself computed them). A captured folder written by hand may lack ``tags``: they
are then derived here from the version, architecture and C library with ``packaging.tags``'
own pure functions (``cpython_tags``, ``mac_platforms``), marked ``derived`` in the sources.
Rosetta 2: ``sysctl.proc_translated`` (1 inside Rosetta), or an x86_64 Python on hardware whose
``hw.optional.arm64`` is 1.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from setup_env.facts import Note, PythonInfo
from setup_env.probe.host import Host

_MANYLINUX_LEGACY = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
_WINDOWS_PLATFORMS = {"amd64": "win_amd64", "x86_64": "win_amd64", "arm64": "win_arm64"}


def linux_platforms(machine: str, libc: str | None, libc_version: str | None) -> list[str]:
    """Platform tags a Linux interpreter accepts, most specific first (as packaging orders them).

    glibc 2.36 on x86_64 -> manylinux_2_36_x86_64 ... manylinux_2_17_x86_64, manylinux2014_x86_64,
    ..., manylinux1_x86_64, linux_x86_64.
    """
    arch = machine.lower().replace("-", "_")
    if arch == "amd64":
        arch = "x86_64"
    out: list[str] = []
    m = re.match(r"^(\d+)\.(\d+)", libc_version or "")
    if libc == "glibc" and m and int(m.group(1)) == 2:
        floor = 5 if arch in ("x86_64", "i686") else 17
        for minor in range(int(m.group(2)), floor - 1, -1):
            out.append(f"manylinux_2_{minor}_{arch}")
            legacy = _MANYLINUX_LEGACY.get(minor)
            if legacy and (minor != 5 or arch in ("x86_64", "i686")):
                out.append(f"{legacy}_{arch}")
    elif libc == "musl" and m and int(m.group(1)) == 1:
        out.extend(f"musllinux_1_{minor}_{arch}" for minor in range(int(m.group(2)), -1, -1))
    out.append(f"linux_{arch}")
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
    """The most specific tags (this interpreter and ABI, every platform) from plain facts.

    The same order as ``packaging.tags.cpython_tags`` for the interpreter's own ABI: one tag per
    platform, platforms most specific first.
    """
    parts = [int(p) for p in re.findall(r"\d+", version)[:2]]
    if implementation != "cpython" or len(parts) < 2:
        return []
    system = system.lower()
    if system == "linux":
        platforms = linux_platforms(machine, libc, libc_version)
    elif system == "darwin":
        mac = [int(p) for p in re.findall(r"\d+", macos_version or "")[:2]]
        if not mac:
            return []
        mac_arch = "x86_64" if machine == "x86_64" else "arm64"
        platforms = mac_platforms(mac[0], mac[1] if len(mac) > 1 else 0, mac_arch)
    elif system == "windows":
        plat = _WINDOWS_PLATFORMS.get(machine.lower())
        if plat is None:
            return []
        platforms = [plat]
    else:
        return []
    interpreter = f"cp{parts[0]}{parts[1]}"
    abi = interpreter + ("t" if free_threaded else "")
    return [f"{interpreter}-{abi}-{platform}" for platform in platforms]


def mac_platforms(major: int, minor: int, arch: str) -> list[str]:
    """macOS platform tags, newest first, for the architectures wheels are built for.

    The order packaging.tags.mac_platforms uses (11+ counts by major, 10.x by minor, and an
    x86_64 interpreter on 11+ still takes 10.x wheels), keeping only the native arch and
    ``universal2``: the legacy i386/fat/intel tags are never on a torch wheel, and their exact
    spelling has changed between packaging releases.
    """
    versions = [(m, 0) for m in range(major, 10, -1)] if major >= 11 else []
    versions += [(10, m) for m in range(minor if major == 10 else 16, 3, -1)]
    out: list[str] = []
    for ma, mi in versions:
        if arch == "x86_64" or ma >= 11:  # no arm64 wheel claims macOS 10.x
            out.append(f"macosx_{ma}_{mi}_{arch}")
        out.append(f"macosx_{ma}_{mi}_universal2")
    return out


def detect(
    host: Host,
    sysctl: Mapping[str, str] | None = None,
    libc: tuple[str | None, str | None] = (None, None),
    macos_version: str | None = None,
) -> tuple[PythonInfo, list[Note]]:
    """``sysctl``: the Darwin sysctl values (apple.darwin_sysctl) when on a Mac; ``libc`` and
    ``macos_version``: what the OS probe found, used only to derive missing wheel tags."""
    interp: Mapping[str, Any] = host.interpreter()
    notes: list[Note] = []
    sources: dict[str, str] = {}
    if not interp:
        notes.append(
            Note("interpreter-unknown", "the Python interpreter was not recorded", "interpreter")
        )
        return PythonInfo(), notes
    version = str(interp.get("version") or "")
    implementation = str(interp.get("implementation") or "cpython")
    free_threaded = bool(interp.get("free_threaded", False))
    machine = str(interp.get("machine") or "")
    is_64bit = bool(interp.get("is_64bit", True))
    for key in ("version", "implementation", "free_threaded", "machine", "is_64bit"):
        if key in interp:
            sources[key] = "interpreter"
    executable = interp.get("executable")

    raw_tags = interp.get("tags")
    tags: tuple[str, ...] = ()
    if isinstance(raw_tags, Sequence) and not isinstance(raw_tags, str):
        tags = tuple(str(t) for t in raw_tags)
        sources["tags"] = "packaging.tags.sys_tags"
    else:
        system = str(interp.get("system") or "")
        tags = tuple(
            derive_tags(
                version,
                implementation,
                free_threaded,
                system,
                machine,
                libc[0],
                libc[1],
                macos_version,
            )
        )
        if tags:
            sources["tags"] = "derived"

    rosetta = None
    if str(interp.get("system") or "").lower() == "darwin" and sysctl is not None:
        translated = sysctl.get("sysctl.proc_translated")
        if translated in ("0", "1"):
            rosetta = translated == "1"
            sources["rosetta"] = "sysctl sysctl.proc_translated"
        elif machine == "x86_64" and sysctl.get("hw.optional.arm64") == "1":
            rosetta = True
            sources["rosetta"] = "x86_64 Python on hw.optional.arm64=1"
        else:
            rosetta = False
            sources["rosetta"] = "sysctl (no sysctl.proc_translated: not Apple Silicon)"
        if rosetta:
            notes.append(
                Note(
                    "python-under-rosetta",
                    "this Python is x86_64 running under Rosetta 2 on an Apple Silicon Mac: "
                    "it cannot use the Apple GPU (MPS), and current torch releases publish no "
                    "x86_64 macOS wheels; use an arm64 Python",
                    "sysctl.proc_translated",
                )
            )
    if not is_64bit:
        notes.append(
            Note(
                "python-32bit",
                "this Python is a 32-bit build: PyTorch publishes 64-bit wheels only",
                "interpreter",
            )
        )
    return (
        PythonInfo(
            version=version,
            implementation=implementation,
            free_threaded=free_threaded,
            machine=machine,
            is_64bit=is_64bit,
            executable=executable if isinstance(executable, str) else None,
            tags=tags,
            rosetta=rosetta,
            sources=sources,
        ),
        notes,
    )
