"""CUDA compatibility rules, written once: which GPUs a wheel's code runs on, which drivers run
a wheel's CUDA. The planner, the doctor, ``diagnose`` and ``verify`` all ask here.

**Architectures** (NVIDIA, CUDA C++ Programming Guide, "Binary Compatibility" and
"Feature Availability"; VERIFIED.md §3). :class:`Arch` reads every spelling once: ``8.6``,
``sm_86``, ``8.6+PTX``, ``compute_90``, ``sm_90a``, ``9.0a``, ``sm_100f``. :func:`runs_on` says how
a GPU of compute capability X.z runs a wheel:

* SASS ``sm_XY`` runs on X.z for z >= Y (same major);
* an arch-specific target ``sm_XYa`` runs only on exactly X.Y;
* a family target ``sm_XYf`` runs on the same major family, minor >= Y;
* PTX ``compute_XY`` is JIT-compiled by the driver on any GPU >= X.Y (slow first start);
  ``compute_XYa`` only on X.Y, ``compute_XYf`` only within the family.

**Drivers** (NVIDIA, CUDA Toolkit Release Notes, tables 2 and 3; the numbers come from the matrix
data, ``cuda`` rows, never from this module). :func:`driver_fit` judges a driver against the
wheel's own CUDA release (the toolkit it was built with, e.g. 12.8.0 for torch 2.7.0+cu128):

* driver >= that toolkit's own minimum: ``full``;
* else, from CUDA 11.1 on, driver >= the major's minor-version-compatibility floor: ``mvc``
  (prebuilt kernels run; never for a GPU that needs PTX JIT, which MVC does not cover);
* else ``too-old``. Only "the CUDA version the driver supports" known: same comparisons on X.Y.

Pure, and cheap to import (``re`` only): detect and plan load it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Literal, Optional, Protocol, Union

from setup_env._record import Record, record

CC = tuple[int, int]  # a compute capability: (8, 6)
Suffix = Literal["", "a", "f"]
How = Literal["sass", "ptx"]
Compat = Literal["full", "mvc", "too-old", "no-driver", "unknown"]

# The first CUDA whose applications run on an older driver of the same major (minor-version
# compatibility; CUDA 11.0 applications need an 11.0 driver).
MVC_SINCE: CC = (11, 1)

_ARCH = re.compile(r"(sm_|compute_)?(\d{1,2})(?:\.(\d)|(\d))([af]?)(\+ptx)?")


@record
class Arch(Record):
    """One entry of a wheel's architecture list (equal when every field is; not ordered:
    nothing sorts them)."""

    major: int
    minor: int
    suffix: Suffix = ""  # "a": arch-specific, "f": family-specific
    sass: bool = True  # native code (cubin) for it
    ptx: bool = False  # PTX for it (JIT-compiled by the driver)

    @classmethod
    def parse(cls, text: str) -> Optional[Arch]:
        """Any spelling (``8.6``, ``sm_86``, ``8.6+PTX``, ``compute_90``, ``sm_100a``, ``9.0a``,
        ``sm_100f``); None when it is not one. ``sm_86`` needs no dot; ``8.6`` needs one."""
        t = text.strip().lower() if isinstance(text, str) else ""
        m = _ARCH.fullmatch(t)
        if not m:
            return None
        prefix, major, dot_minor, minor, suffix, plus_ptx = m.groups()
        if prefix is None and dot_minor is None:
            return None  # "86": ambiguous without sm_ or a dot
        if prefix is not None and dot_minor is not None:
            return None  # "sm_8.6" is no spelling anyone writes
        mi = int(dot_minor if prefix is None else minor)
        ptx_only = prefix == "compute_"
        return cls(
            major=int(major),
            minor=mi,
            suffix=suffix,  # type: ignore[arg-type]
            sass=not ptx_only,
            ptx=ptx_only or plus_ptx is not None,
        )

    @property
    def cc(self) -> CC:
        return self.major, self.minor

    def names(self) -> tuple[str, ...]:
        """``("sm_86",)``, ``("compute_90",)`` or both for ``8.6+PTX``."""
        tail = f"{self.major}{self.minor}{self.suffix}"
        return ((f"sm_{tail}",) if self.sass else ()) + ((f"compute_{tail}",) if self.ptx else ())

    def __str__(self) -> str:
        return "+".join(self.names())

    def _covers(self, cc: CC) -> bool:
        """Does code for this target (SASS or PTX, by the rules of its suffix) suit ``cc``?"""
        if self.suffix == "a":
            return self.cc == cc
        return self.major == cc[0] and self.minor <= cc[1]  # plain and family targets alike

    def serves(self, cc: CC) -> Optional[How]:
        """How a GPU of ``cc`` runs this entry: "sass", "ptx" (JIT) or None."""
        if self.sass and self._covers(cc):
            return "sass"
        if self.ptx:
            if self.suffix == "" and self.cc <= cc:
                return "ptx"
            if self.suffix and self._covers(cc):
                return "ptx"
        return None


def parse_cc(text: Optional[str]) -> Optional[CC]:
    """A GPU's compute capability from ``"8.6"`` (nvidia-smi, torch) or ``"sm_86"``."""
    if not text:
        return None
    m = re.match(r"^\s*(\d{1,2})\.(\d)\b", text)
    if m:
        return int(m.group(1)), int(m.group(2))
    a = Arch.parse(text)
    return a.cc if a is not None and not a.suffix else None


def arches(entries: Iterable[Union[str, Arch]]) -> tuple[Arch, ...]:
    """Every entry that parses, in order (unreadable entries are left out)."""
    out: list[Arch] = []
    for e in entries:
        a = e if isinstance(e, Arch) else Arch.parse(e)
        if a is not None:
            out.append(a)
    return tuple(out)


@record
class Coverage(Record):
    """Whether a build has a kernel image for a GPU (SASS, PTX or none), and which entry."""

    how: Optional[How]  # "sass", "ptx" (JIT only) or None (no kernel image for this GPU)
    by: Optional[Arch] = None  # the entry that serves it


def coverage(cc: CC, wheel_arches: Iterable[Union[str, Arch]]) -> Coverage:
    """How a GPU of compute capability ``cc`` runs a wheel; native code wins over PTX."""
    ptx: Optional[Arch] = None
    for a in arches(wheel_arches):
        how = a.serves(cc)
        if how == "sass":
            return Coverage("sass", a)
        if how == "ptx" and ptx is None:
            ptx = a
    return Coverage("ptx", ptx) if ptx is not None else Coverage(None)


def runs_on(cc: CC, wheel_arches: Iterable[Union[str, Arch]]) -> Optional[How]:
    """ "sass", "ptx" (JIT-compiled at first use) or None: see the module docstring."""
    return coverage(cc, wheel_arches).how


def sm(cc: CC) -> str:
    return f"sm_{cc[0]}{cc[1]}"


def sm_of(text: Optional[str], unknown: str = "sm_?") -> str:
    """``"8.7"`` (or ``"sm_87"``) -> ``"sm_87"``; ``unknown`` when it is no compute capability."""
    cc = parse_cc(text)
    return sm(cc) if cc is not None else unknown


# --- drivers -------------------------------------------------------------------------------------


def version_tuple(text: Optional[str]) -> Optional[tuple[int, ...]]:
    """``"570.86.10"`` -> (570, 86, 10); ``"12.8"`` -> (12, 8); None when it starts otherwise.
    (Integer tuples order driver versions as NVIDIA numbers them: 570.124.06 > 570.26.)"""
    m = re.match(r"^\s*(\d+(?:\.\d+){0,3})", text or "")
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


@record
class DriverFit(Record):
    """Whether a driver runs a CUDA build: fully, through minor-version compatibility, or not."""

    compat: Compat
    code: str  # stable: "driver-full", "driver-mvc", "driver-too-old", "driver-too-old-ptx",
    #                     "driver-absent", "driver-no-data"
    cuda: str  # "12.8": the wheel's CUDA X.Y
    toolkit_min: Optional[str] = None  # the driver shipped with the wheel's own toolkit (text)
    mvc_floor: Optional[str] = None  # the minor-version-compatibility floor; None: MVC can't help
    judged_by: Literal["driver", "cuda", ""] = ""  # the driver version, or only its CUDA version

    @property
    def runs(self) -> bool:
        """The wheel runs on this driver (or there is no driver yet: install one >= toolkit_min)."""
        return self.compat in ("full", "mvc", "no-driver")

    @property
    def too_old(self) -> bool:
        return self.compat == "too-old"

    def why_not(self) -> str:
        """Why the driver doesn't run the wheel, in words ("" unless it is too old or unknown)."""
        if self.compat == "unknown":
            return f"no driver data for CUDA {self.cuda}"
        if not self.too_old:
            return ""
        if self.judged_by == "cuda" or self.toolkit_min is None:
            need = f" (>= {self.toolkit_min})" if self.toolkit_min else ""
            return f"needs a driver for CUDA {self.cuda}{need}"
        why = f"needs driver >= {self.toolkit_min}"
        if self.mvc_floor is not None and self.mvc_floor != self.toolkit_min:
            why += f" (>= {self.mvc_floor} with minor-version compatibility)"
        return why


def cuda_xy(toolkit: str) -> str:
    """``"12.8.1"`` -> ``"12.8"``."""
    return ".".join(toolkit.split(".")[:2])


class DriverFloorRow(Protocol):
    """A minimum driver per OS, as the matrix's ``cuda`` rows hold it (``matrix.DriverFloor``)."""

    def for_os(self, os_family: str) -> tuple[object, str]: ...


class CudaRow(Protocol):
    """What :func:`driver_fit` reads of a CUDA X.Y row (``matrix.CudaVersion``). A protocol, not
    an import: the matrix is built on these rules, so the rules may not import the matrix."""

    @property
    def updates(self) -> Mapping[str, DriverFloorRow]: ...

    @property
    def mvc(self) -> DriverFloorRow: ...


def driver_fit(
    driver: Optional[str],
    toolkit: str,
    os: str,
    table: Mapping[str, CudaRow],
    *,
    driver_cuda: Optional[str] = None,
    needs_ptx: bool = False,
) -> DriverFit:
    """Does an NVIDIA driver run a wheel built with CUDA ``toolkit``?

    ``driver``: the driver version (``"570.86.10"``), or None; ``driver_cuda``: the CUDA version
    the driver supports (nvidia-smi's "CUDA Version", ``cuDriverGetVersion``), used when the
    driver version is unknown or the table has no row. ``toolkit``: the wheel's own CUDA release
    (``"12.8.0"``); an X.Y alone (``"12.8"``) is judged by that minor's newest update, the
    strictest. ``os``: whose driver numbering applies, ``linux`` or ``windows`` (WSL2 runs the
    Windows driver). ``table``: the
    matrix's ``cuda`` rows. ``needs_ptx``: a GPU runs the wheel only through PTX JIT.
    """
    xy = cuda_xy(toolkit)
    need = version_tuple(xy) or (0, 0)
    mvc_ok = need >= MVC_SINCE and not needs_ptx
    row = table.get(xy)
    full_t: Optional[str] = None
    mvc_t: Optional[str] = None
    if row is not None:
        exact = toolkit.count(".") >= 2 and toolkit in row.updates
        newest = max(row.updates, key=lambda k: version_tuple(k) or ())
        floors = row.updates[toolkit if exact else newest]
        full_t = floors.for_os(os)[1]
        mvc_t = row.mvc.for_os(os)[1] if need >= MVC_SINCE else None
    shown_mvc = mvc_t if mvc_ok else None
    d = version_tuple(driver)
    dc = version_tuple(driver_cuda)
    if d is not None and (full_t is not None or dc is None):
        if full_t is None:
            return DriverFit("unknown", "driver-no-data", xy)
        if d >= (version_tuple(full_t) or ()):
            return DriverFit("full", "driver-full", xy, full_t, shown_mvc, "driver")
        if mvc_ok and mvc_t is not None and d >= (version_tuple(mvc_t) or ()):
            return DriverFit("mvc", "driver-mvc", xy, full_t, shown_mvc, "driver")
        ptx_blocked = needs_ptx and mvc_t is not None and d >= (version_tuple(mvc_t) or ())
        code = "driver-too-old-ptx" if ptx_blocked else "driver-too-old"
        return DriverFit("too-old", code, xy, full_t, shown_mvc, "driver")
    if dc is not None:  # no driver version, or no table row for it: the CUDA it supports
        dc = dc[:2]
        if dc >= need:
            return DriverFit("full", "driver-full", xy, full_t, shown_mvc, "cuda")
        if mvc_ok and dc[0] == need[0] and dc >= MVC_SINCE:
            return DriverFit("mvc", "driver-mvc", xy, full_t, shown_mvc, "cuda")
        ptx_blocked = needs_ptx and dc[0] == need[0] and need >= MVC_SINCE
        code = "driver-too-old-ptx" if ptx_blocked else "driver-too-old"
        return DriverFit("too-old", code, xy, full_t, shown_mvc, "cuda")
    if full_t is None:
        return DriverFit("unknown", "driver-no-data", xy)
    return DriverFit("no-driver", "driver-absent", xy, full_t, shown_mvc)


# --- beside the CUDA rules: driver windows and the ROCm gfx check ------------------------------

WindowFit = Literal["ok", "driver-too-old-for-gpu", "driver-past-gpu-last-branch"]


def window_fit(branch: int, first: Optional[int], last: Optional[int]) -> WindowFit:
    """Whether driver branch ``branch`` (570 for 570.86.10) runs a GPU whose driver window is
    ``first``..``last`` (``knowledge.gpus.DriverWindow``; None: no bound). A driver before the
    first branch does not know the GPU (RTX 50xx before R570); one past the last no longer drives
    it (Kepler after R470; Maxwell, Pascal, Volta after R580)."""
    if first is not None and branch < first:
        return "driver-too-old-for-gpu"
    if last is not None and branch > last:
        return "driver-past-gpu-last-branch"
    return "ok"


def gfx_runs_on(gfx: str, targets: Iterable[str]) -> bool:
    """The ROCm twin of :func:`runs_on`: AMD code objects are built per gfx target and match it
    exactly (gfx1100 code does not run on gfx1101 or gfx1031; no PTX-like fallback)."""
    want = gfx.strip().lower()
    return any(want == t.strip().lower() for t in targets)
