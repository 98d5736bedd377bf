"""What every branch of the planner shares: the planning context (target, options, matrix,
warnings, fixes), the candidate builds of a release and whether this interpreter can install
them, the NVIDIA GPUs with their compute capabilities, and the checks of the user's options.
"""

from __future__ import annotations

import re
import urllib.parse
from typing import TYPE_CHECKING, Optional

from packaging.version import Version

from setup_env._record import Record, record, replace
from setup_env.facts import (
    Facts,
)
from setup_env.knowledge.variant import MPS, Variant

if TYPE_CHECKING:
    from setup_env.knowledge.cuda import DriverFit
    from setup_env.knowledge.matrix import Build, Matrix, Release
from setup_env.decide.model import (
    CHANNELS,
    COMPANIONS,
    INSTALLERS,
    Fix,
    Plan,
    PlanError,
    PlanOptions,
)
from setup_env.decide.plan.target import _ASSUMED_MACOS, _Target, _target


@record
class _NvGpu(Record):
    """One NVIDIA GPU as the planner weighs it: compute capability and driver branches."""

    label: str  # "GPU 0 NVIDIA GeForce RTX 5090"
    name: str
    cc: Optional[tuple[int, int]]
    specific: bool = False  # an "a" target was named (sm_90a)
    # The driver window of its compute capability (setup_env/data/gpus.json "driver_windows").
    first_branch: Optional[int] = None
    last_branch: Optional[int] = None
    first_driver: Optional[str] = None  # the model's own first driver, where NVIDIA names one


def _nvidia_gpus(facts: Facts) -> list[_NvGpu]:
    out: list[_NvGpu] = []
    if facts.nvidia is None:
        return out
    from setup_env.knowledge.cuda import (
        parse_cc,  # CUDA rules load only when there is an NVIDIA GPU
    )
    from setup_env.probe.resolve import resolve_gpu

    for g in facts.nvidia.gpus:
        r = resolve_gpu(g)
        w = r.window
        out.append(
            _NvGpu(
                label=f"GPU {g.index} {g.name}",
                name=g.name,
                cc=parse_cc(r.compute_capability),
                first_branch=w.first_branch if w is not None else None,
                last_branch=w.last_branch if w is not None else None,
                first_driver=w.first_driver if w is not None else None,
            )
        )
    return out


def runs_on(cc: tuple[int, int], build: Build) -> Optional[str]:
    """How a GPU of compute capability ``cc`` runs a build: "sass", "ptx" (JIT) or None."""
    from setup_env.knowledge import cuda

    return cuda.runs_on(cc, build.arches)


def _window_fit(branch: int, first: Optional[int], last: Optional[int]) -> str:
    from setup_env.knowledge import cuda

    return cuda.window_fit(branch, first, last)


def _sm(cc: tuple[int, int]) -> str:
    from setup_env.knowledge import cuda

    return cuda.sm(cc)


def _ccs(cc: tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"


@record
class _Candidate(Record):
    """One torch build the planner considers, and how this machine's driver can run it."""

    release: Release
    variant: Variant
    via_pypi: bool
    build: Optional[Build] = None
    compat: Optional[str] = None  # full | mvc | no-driver
    min_driver: Optional[str] = None
    mvc_floor: Optional[str] = None
    ptx_gpus: tuple[str, ...] = ()


def _driver_fit(
    build: Build, matrix: Matrix, t: _Target, facts: Facts, needs_ptx: bool
) -> DriverFit:
    nv = facts.nvidia
    from setup_env.knowledge import cuda

    return cuda.driver_fit(
        nv.driver_version if nv else None,
        str(build.toolkit),
        t.driver_os,
        matrix.cuda,
        driver_cuda=nv.cuda_driver_version if nv else None,
        needs_ptx=needs_ptx,
    )


def _installable(rel: Release, t: _Target, via_pypi: bool) -> tuple[bool, str]:
    """Can this interpreter install the release's wheels (from PyPI, or from the index)? For a
    target with a platform: one without is planned none before (``_no_platform``)."""
    from setup_env.knowledge.tags import platform_of_tag

    plat = t.platform
    assert plat is not None
    floor = rel.min_glibc.get(plat)
    if floor is not None and t.glibc is not None and t.glibc < floor:
        for trap in rel.traps:
            if platform_of_tag(trap.platform_tag) == plat and t.glibc < trap.min_glibc:
                return False, (
                    f"needs glibc >= {trap.min_glibc} (this system has {t.glibc}); its "
                    f"{trap.platform_tag} tag hides that: pip would install it and `import torch` "
                    f"would fail with 'GLIBC_{trap.min_glibc} not found'"
                )
        return False, f"needs glibc >= {floor} (this system has {t.glibc})"
    # A Linux system whose glibc is unknown (a thin capture, a partial report) has no manylinux
    # tags to match; judge PyPI's wheels as the index's below: by interpreter, glibc assumed.
    glibc_unknown = plat.startswith("linux") and t.glibc is None
    if via_pypi and not glibc_unknown:
        hits = rel.wheel_tags(plat) & t.tags
        if not hits:
            return False, _why_no_wheel(rel, t, plat)
        tag_plats = {h.split("-", 2)[2] for h in hits}
        for trap in rel.traps:
            if trap.platform_tag in tag_plats and t.glibc is not None and t.glibc < trap.min_glibc:
                return False, f"its {trap.platform_tag} wheel needs glibc {trap.min_glibc}"
    elif not plat.startswith("linux"):
        # Windows and macOS wheels on PyTorch's index carry the same tags as PyPI's.
        if not rel.wheel_tags(plat) & t.tags:
            return False, _why_no_wheel(rel, t, plat)
    else:
        # Linux index wheels are tagged linux_<arch> / manylinux_2_28: same interpreters as
        # PyPI's, and the build's glibc floor below.
        pas = {pa for tag in rel.platform_tags(plat) for pa in rel.pypi_files[tag]}
        if not pas & t.pyabis:
            return False, _why_no_wheel(rel, t, plat)
    return True, ""


def _why_no_wheel(rel: Release, t: _Target, plat: str) -> str:
    if t.python is not None:
        py = Version(f"{t.python.major}.{t.python.minor}")
        if not rel.allows_python(py):
            return f"needs Python {rel.requires_python}"
        label = f"{py}{'t' if t.free_threaded else ''}"
        if label not in rel.python:
            return f"has no wheel for {t.py_label}"
        low = _macos_floor(rel, t)
        if low is not None:
            # an unknown macOS is planned as the one its tags were made for
            mac = t.macos if t.macos is not None else Version(_ASSUMED_MACOS)
            if mac < low:
                return f"needs macOS {low} or newer for {t.py_label}"
        if plat not in _platforms_of(rel):
            return f"has no {plat} wheels"
    return f"has no wheel matching this interpreter's tags ({t.py_label}, {plat})"


def _macos_floor(rel: Release, t: _Target) -> Optional[Version]:
    """The oldest macOS of the release's Apple Silicon wheels for this interpreter (its pyabis:
    torch 2.6-2.8's Python 3.13 wheels for macOS are tagged cp313-none); None where the target
    is no Apple Silicon Mac, the release records no floor there, or has no such wheel."""
    plat = t.platform
    if plat != "macos_arm64" or plat not in rel.min_macos:
        return None
    from setup_env.knowledge.tags import floor_of_tag

    floors = [
        f[1]
        for f in (
            floor_of_tag(tag)
            for tag in rel.platform_tags(plat)
            if t.pyabis & set(rel.pypi_files[tag])
        )
        if f is not None
    ]
    return Version("{}.{}".format(*min(floors))) if floors else None


def _platforms_of(rel: Release) -> set[str]:
    from setup_env.knowledge.tags import platform_of_tag

    return {p for p in (platform_of_tag(tag) for tag in rel.pypi_files) if p}


class _Ctx:
    def __init__(self, facts: Facts, options: PlanOptions, matrix: Matrix) -> None:
        self.facts = facts
        self.options = options
        self.matrix = matrix
        self.t = _target(facts)
        self.nv = _nvidia_gpus(facts)
        self.amd = list(facts.rocm.gpus) if facts.rocm else []
        self.intel = list(facts.xpu.gpus) if facts.xpu else []
        self.reasons: list[tuple[str, str]] = []  # (code, text)
        self.warnings: list[tuple[str, str]] = []
        self.fixes: list[tuple[int, Fix]] = []  # (priority, fix)
        self.details: dict[str, str] = {}

    def reason(self, code: str, text: str) -> None:
        self.reasons.append((code, text))

    def lead(self, code: str, text: str) -> None:
        """A reason that goes first (the headline of the plan)."""
        self.reasons.insert(0, (code, text))

    def warn(self, code: str, text: str) -> None:
        # once: two routes may reach the same finding (Rosetta: the Intel-Mac lead and the
        # interpreter fixes), and a plan that says it twice reads as two problems
        if (code, text) not in self.warnings:
            self.warnings.append((code, text))

    def said(self, plan: Plan) -> Plan:
        """``plan`` with the reasons and warnings: the texts and, beside them, their codes."""
        return replace(
            plan,
            reasons=tuple(t for _c, t in self.reasons),
            warnings=tuple(t for _c, t in self.warnings),
            reason_codes=tuple(c for c, _t in self.reasons),
            warning_codes=tuple(c for c, _t in self.warnings),
        )

    def fix(self, prio: int, kind: str, summary: str, command: str | None = None) -> None:
        if any(f.summary == summary for _p, f in self.fixes):
            return
        self.fixes.append((prio, Fix(rank=0, kind=kind, summary=summary, command=command)))

    def ranked(self) -> tuple[Fix, ...]:
        out = sorted(self.fixes, key=lambda pf: pf[0])
        return tuple(
            Fix(rank=i + 1, kind=f.kind, summary=f.summary, command=f.command)
            for i, (_p, f) in enumerate(out)
        )


def check_options(opts: PlanOptions, m: Matrix | None = None) -> None:
    """PlanError for an option the planner can't take (also what `setup-env install` checks
    before it detects or runs anything)."""
    if m is None:
        from setup_env.knowledge.matrix import load_matrix

        m = load_matrix()
    if opts.channel not in CHANNELS:
        raise PlanError(f"unknown channel {opts.channel!r}: choose {', '.join(CHANNELS)}")
    if opts.installer not in INSTALLERS:
        raise PlanError(f"unknown installer {opts.installer!r}: choose {', '.join(INSTALLERS)}")
    if opts.variant is not None:
        asked_variant(opts, m)
    for pkg in opts.with_packages:
        if pkg not in COMPANIONS:
            raise PlanError(f"--with: {pkg!r} is not one of {', '.join(COMPANIONS)}")
    if opts.torch is not None:
        parse_torch_pin(opts.torch)
    if opts.index_url is not None:
        check_index_url(opts.index_url)


def asked_variant(opts: PlanOptions, m: Matrix) -> Variant | None:
    """The variant ``--variant`` names, if any: one the matrix knows, or ``mps``; PlanError else."""
    if opts.variant is None:
        return None
    v = Variant.find(opts.variant)
    if v is None or not (v in m.variants or v == MPS):
        known = ", ".join(str(x) for x in sorted(m.variants))
        raise PlanError(f"unknown variant {opts.variant!r}: the matrix knows {known}")
    return v


def parse_torch_pin(text: str) -> tuple[Version, bool]:
    """``2.13`` -> (2.13, series) ; ``2.13.0`` / ``==2.13.0`` -> (2.13.0, exact)."""
    raw = text.strip()
    if raw.startswith("=="):
        raw = raw[2:]
    if not re.fullmatch(r"\d{1,3}\.\d{1,3}(?:\.\d{1,3})?", raw):
        raise PlanError(f"--torch {text!r}: expected a release like 2.13 or 2.13.0")
    return Version(raw), raw.count(".") == 1


_URL = re.compile(r"^(https?)://([A-Za-z0-9.-]+(?::\d{1,5})?)((?:/[A-Za-z0-9._~%-]+)*)/?$")


def check_index_url(url: str) -> str:
    """A mirror base URL, validated (no credentials, query, spaces or shell characters), given
    back without its trailing slash (the index's folders are joined to it with one)."""
    if "@" in url:
        raise PlanError(
            "--index-url: credentials in the URL would be printed; put them in pip.conf/.netrc"
        )
    m = _URL.match(url.strip())
    if not m:
        raise PlanError(f"--index-url {url!r}: expected a plain http(s) URL like https://host/whl")
    if any(seg in (".", "..") for seg in urllib.parse.unquote(m.group(3)).split("/")):
        raise PlanError(f"--index-url {url!r}: '.' and '..' path segments are not allowed")
    return f"{m.group(1)}://{m.group(2)}{m.group(3)}"


def _releases(ctx: _Ctx) -> list[Release]:
    rels = list(reversed(ctx.matrix.releases))
    if ctx.options.torch is not None:
        pin, series = parse_torch_pin(ctx.options.torch)
        if series:
            rels = [r for r in rels if (r.version.major, r.version.minor) == (pin.major, pin.minor)]
        else:
            rels = [r for r in rels if r.version == pin]
    return rels


# the vendor named when GPUs of another stand beside its (Intel comes last: never named)
_VENDOR_NAMES = {"nvidia": "NVIDIA", "amd": "AMD"}


def _accelerator(ctx: _Ctx) -> Optional[str]:
    """The vendor planned for: NVIDIA before AMD before Intel, the others said; None: no GPU."""
    found = [k for k, gpus in (("nvidia", ctx.nv), ("amd", ctx.amd), ("intel", ctx.intel)) if gpus]
    if len(found) > 1:
        ctx.warn(
            "mixed-vendors",
            "this machine has GPUs of more than one vendor; one PyTorch build serves one "
            f"vendor: planning for the {_VENDOR_NAMES[found[0]]} GPUs",
        )
    return found[0] if found else None


def _cuda_candidates(ctx: _Ctx, rel: Release) -> list[tuple[Variant, bool, bool]]:
    """(variant, via PyPI, verified) for a release and platform, preference order. ``rel`` is
    one this interpreter installs, so it installs from PyTorch's index (whose wheels are PyPI's
    interpreters with the glibc floor: what installs from PyPI installs from there)."""
    plat = ctx.t.platform
    assert plat is not None  # rel installs here
    out: list[tuple[Variant, bool, bool]] = []
    pv = rel.pypi_variant.get(plat)
    ok_pypi, _ = _installable(rel, ctx.t, via_pypi=True)
    if pv is not None and pv.variant.is_cuda and ok_pypi:
        from setup_env.knowledge.matrix import plannable

        out.append((pv.variant, True, plannable(pv.confidence)))
    stable = rel.pypi_variant.get("linux_x86_64")
    idx = [v for v in rel.index if v.is_cuda and plat in rel.index[v]]
    idx.sort(key=lambda v: (stable is not None and v == stable.variant, v))
    for v in reversed(idx):
        if not any(v == o[0] for o in out):
            out.append((v, False, rel.index[v][plat].verified))
    return out


def _no_platform(ctx: _Ctx) -> Plan:
    t = ctx.t
    if t.musl:
        return _none(
            ctx,
            "no-platform",
            "PyTorch publishes no wheels for musl libc (musllinux, as on Alpine), and torch has "
            "no source distribution on PyPI: pip finds nothing to install here",
            extra_fix=(
                "change-os",
                "use a glibc-based system or image (Debian, Ubuntu, python:3.12-slim) for torch",
            ),
        )
    if t.os == "windows" and t.arch in ("arm64", "aarch64"):
        note = ctx.matrix.platform_notes.get("windows_arm64")
        if note is not None:
            # Known to exist for some Pythons, but which releases carry them is not in the data
            # (confidence ?): never planned on (the rule in knowledge.matrix), only said.
            pys = note.python
            span = f"{pys[0]}–{pys[-1]}" if len(pys) > 1 else "".join(pys)
            ctx.reason(
                "platform-unsure",
                f"PyTorch's {note.index_variant} index has native Windows on Arm64 "
                f"{note.wheels.upper()} wheels for Python {span} (none on PyPI); which torch "
                f"releases carry them is not in this data [{note.confidence}: {note.source}]",
            )
            fix = (
                f"with a native arm64 Python {span}, install torch from PyTorch's "
                f"{note.index_variant} index ({ctx.matrix.index_url}/{note.index_variant}); "
                "otherwise use an x64 Python (runs under emulation, CPU only) or WSL2"
            )
        else:
            fix = (
                "no Windows on Arm wheels are in this data; use an x64 Python (runs under "
                "emulation, CPU only) or WSL2"
            )
        return _none(
            ctx,
            "no-platform",
            f"no torch release in this data lists wheels for {t.os} on {t.arch}",
            extra_fix=("change-python", fix),
        )
    return _none(
        ctx, "no-platform", f"PyTorch publishes no wheels for {t.os} on {t.arch or 'this CPU'}"
    )


def _none(ctx: _Ctx, code: str, reason: str, extra_fix: tuple[str, str] | None = None) -> Plan:
    """The plan of none: ``reason`` its headline, ``extra_fix`` (kind, summary) its first fix."""
    ctx.lead(code, reason)
    if extra_fix is not None:
        ctx.fix(1, extra_fix[0], extra_fix[1])
    return ctx.said(
        Plan(
            status="none",
            fixes=ctx.ranked(),
            platform=ctx.t.platform,
            newest_torch=str(ctx.matrix.newest.version),
            source="",
        )
    )
