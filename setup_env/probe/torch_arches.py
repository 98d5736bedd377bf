"""The GPU architectures compiled into an installed torch, read from its libraries, never imported.

``torch/lib/`` of a CUDA build holds the kernels (``libtorch_cuda.so``, ``libc10_cuda.so``; on
Windows ``torch_cuda.dll``); each keeps its device code in CUDA fat binaries, read by
``setup_env.probe.fatbin`` (only the entry headers: a 1.5 GB ``libtorch_cuda.so`` is read in tens of
milliseconds). ELF libraries are read through their section table only, so a CPU build's
``libtorch_cpu.so`` (no ``.nv_fatbin`` section) costs a header read, not a scan of 400 MB.
DLLs and Mach-O files have no such table: only those named ``*cuda*`` are scanned.

``check --gpu/--cloud`` uses this to judge an image for a machine it is not running on: the
architectures are the wheel's own, whatever the matrix says about it.
"""

from __future__ import annotations

import os
from typing import Optional

from setup_env._record import Record, record
from setup_env.facts import InstalledPackage

MAX_WHEEL = 65536  # a wheel's WHEEL file is a few hundred bytes


@record
class TorchArches(Record):
    """What the installed torch's CUDA libraries carry, read from their fat binaries."""

    sass: tuple[str, ...] = ()  # ("sm_75", "sm_80", …, "sm_120")
    ptx: tuple[str, ...] = ()  # ("compute_120",)
    files: tuple[str, ...] = ()  # the libraries read ("torch/lib/libtorch_cuda.so")
    error: Optional[str] = None  # could not be read (then nothing above is known)
    wheel_tags: tuple[str, ...] = ()  # the WHEEL file's tags: "cp311-cp311-manylinux_2_28_x86_64"

    @property
    def arches(self) -> tuple[str, ...]:
        return (*self.sass, *self.ptx)


def _libraries(libdir: str) -> list[str]:
    from setup_env.probe.fatbin import is_library_name

    try:
        names = sorted(os.listdir(libdir))
    except OSError:
        return []
    return [n for n in names if is_library_name(n) and os.path.isfile(os.path.join(libdir, n))]


def read(pkg: Optional[InstalledPackage]) -> Optional[TorchArches]:
    """The SASS and PTX architectures of ``pkg`` (torch) as installed; None without a location."""
    from setup_env.probe import fatbin

    if pkg is None or not pkg.location:
        return None
    libdir = os.path.join(pkg.location, "torch", "lib")
    if not os.path.isdir(libdir):
        return TorchArches(error=f"{libdir}: no such directory", wheel_tags=wheel_tags(pkg))
    found: list[fatbin.FileArches] = []
    errors: list[str] = []
    for name in _libraries(libdir):
        path = os.path.join(libdir, name)
        try:
            # ELF libraries by their fat-binary sections only (never a scan of a 400 MB
            # libtorch_cpu.so); other files (a Windows DLL) scanned where the name says CUDA.
            arches = fatbin.read_file(
                path, f"torch/lib/{name}", scan_elf=False, scan_other="cuda" in name.lower()
            )
        except (fatbin.FatbinError, OSError) as exc:
            errors.append(str(exc))
            continue
        if arches is not None and arches.fatbins:
            found.append(arches)
    if not found and errors:
        return TorchArches(error=errors[0], wheel_tags=wheel_tags(pkg))
    sass = fatbin.arch_sorted(a for fa in found for a in fa.sass)
    ptx = fatbin.arch_sorted(a for fa in found for a in fa.ptx)
    return TorchArches(
        sass=sass, ptx=ptx, files=tuple(fa.name for fa in found), wheel_tags=wheel_tags(pkg)
    )


def wheel_tags(pkg: InstalledPackage) -> tuple[str, ...]:
    """The ``Tag:`` lines of the installed wheel's ``WHEEL`` file (beside its METADATA)."""
    if not pkg.source or not pkg.source.endswith("METADATA"):
        return ()
    from setup_env import bounded

    try:
        data = bounded.read_file(os.path.join(os.path.dirname(pkg.source), "WHEEL"), MAX_WHEEL)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return ()
    return parse_wheel_tags(text)


def parse_wheel_tags(text: str) -> tuple[str, ...]:
    """``WHEEL`` file text -> its tags. Example (torch 2.13.0+cpu)::

    Wheel-Version: 1.0
    Generator: setuptools (81.0.0)
    Root-Is-Purelib: false
    Tag: cp311-cp311-manylinux_2_28_x86_64
    """
    tags = []
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip().lower() == "tag" and value.strip():
            tags.append(value.strip())
    return tuple(tags)
