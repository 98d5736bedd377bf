"""The planner: a pure function (facts, matrix, options) -> Plan.

``make_plan`` picks the newest torch release that

1. has a wheel for this interpreter (its wheel tags, Python version, free-threading, OS, glibc,
   macOS version, architecture; traps like 2.6.0's ``manylinux1`` tag on a glibc-2.28 build);
2. has a variant whose compiled GPU code runs EVERY GPU in the machine (VERIFIED.md §3: SASS X.y
   runs on X.z with z >= y, same major; PTX <= the GPU's arch can be JIT-compiled; arch-specific
   ``a`` targets only on that exact arch);
3. whose CUDA the installed driver supports: the toolkit minimum first; the minor-version-
   compatibility floor (same CUDA major) with a warning, never for a GPU on the PTX path.

Within a release it prefers PyPI's own build (a plain ``pip install``), then the release's stable
CUDA on PyTorch's index, then the newest CUDA; only variants the data marks ``verified`` are
recommended. When no GPU build fits, the plan is a named CPU fallback with ranked fixes. Commands
are built only from validated parts (versions parsed by packaging, variants from the data's closed
set, URLs checked) as argv, then quoted with shlex for display.

Nothing here reads the machine or prints. ``spec_facts`` builds the facts of a machine described
on the command line (what-if mode).
"""

from __future__ import annotations

import re
import shlex
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal, Optional

from packaging.version import InvalidVersion, Version

from setup_env.facts import (
    AppleInfo,
    CpuInfo,
    Facts,
    Gpu,
    JetsonInfo,
    NvidiaInfo,
    OSInfo,
    PythonInfo,
    RocmInfo,
    XpuInfo,
)
from setup_env.knowledge.variant import CPU, MPS, XPU, Variant

if TYPE_CHECKING:
    from setup_env.knowledge.cuda import DriverFit
    from setup_env.knowledge.matrix import Build, Matrix, Release

Installer = Literal["pip", "uv", "uv-project", "poetry", "requirements"]
Channel = Literal["stable", "nightly"]
INSTALLERS: tuple[str, ...] = ("pip", "uv", "uv-project", "poetry", "requirements")
CHANNELS: tuple[str, ...] = ("stable", "nightly")
COMPANIONS: tuple[str, ...] = ("torchvision", "torchaudio")


class PlanError(ValueError):
    """Bad planning input (an option, a spec); the message is one line for the user."""


@dataclass(frozen=True)
class PlanOptions:
    torch: str | None = None  # pin, e.g. "2.13.0" or "2.13"
    variant: str | None = None  # as typed: "cpu", "cu130", "rocm7.2", "xpu", "mps" (check_options)
    with_packages: tuple[str, ...] = ()  # ("torchvision", "torchaudio")
    channel: Channel = "stable"
    installer: Installer = "pip"
    index_url: str | None = None  # internal mirror replacing https://download.pytorch.org/whl


@dataclass(frozen=True)
class Fix:
    """One way out, ranked: 1 is what an expert would try first."""

    rank: int
    kind: str  # "upgrade-driver" | "pin-torch" | "change-python" | "build-from-source" | "cpu" ...
    summary: str
    command: str | None = None


@dataclass(frozen=True)
class Plan:
    status: Literal["ok", "fallback", "none"]  # fallback: only a CPU build or an older torch fits
    torch_version: str | None = None
    variant: Variant | None = None  # cu130, cpu, rocm7.2, xpu, mps ... (JSON: the label)
    index_url: str | None = None  # None: plain PyPI
    requirements: tuple[str, ...] = ()  # ("torch==2.15.0", "torchvision==0.30.0")
    argv: tuple[str, ...] = ()  # the install command as argv, for `setup-env install`
    command: str = ""  # the same, quoted for a shell, for people
    config: str | None = None  # uv-project / poetry: the pyproject snippet
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    min_driver: str | None = None  # what the chosen wheel needs from the NVIDIA driver
    details: dict[str, str] = field(default_factory=dict)
    # Added by the planner issue (defaults keep the contract):
    platform: str | None = None  # "linux_x86_64" ...
    cuda: str | None = None  # CUDA of the chosen wheel, "13.0"
    driver_compat: str | None = None  # "full" | "mvc" | "no-driver" | None (not CUDA)
    newest_torch: str | None = None  # the newest release in the matrix (for the channel)
    source: str = "pypi"  # "pypi" | "index" | "mirror" | "nightly" | "jetson" | ""
    # Stable codes of the reasons and warnings, in the same order ("driver-mvc", "arch-missing"...)
    reason_codes: tuple[str, ...] = ()
    warning_codes: tuple[str, ...] = ()


# --- the target ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Target:
    os: str  # linux | windows | macos | other
    arch: str  # the interpreter's: x86_64 | aarch64 | arm64 | ...
    platform: Optional[str]
    python: Optional[Version]
    free_threaded: bool
    tags: frozenset[str]
    pyabis: frozenset[str]  # "cp311-cp311"
    glibc: Optional[Version]
    macos: Optional[Version]
    rosetta: bool
    wsl: bool
    driver_os: str  # whose driver numbering applies: linux | windows

    @property
    def py_label(self) -> str:
        if self.python is None:
            return "this Python"
        return f"Python {self.python.major}.{self.python.minor}{'t' if self.free_threaded else ''}"


def _v(text: Optional[str]) -> Optional[Version]:
    if not text:
        return None
    m = re.match(r"^\s*(\d+(?:\.\d+){0,3})", text)
    if not m:
        return None
    try:
        return Version(m.group(1))
    except InvalidVersion:
        return None


def _platform(os_name: str, arch: str) -> Optional[str]:
    """The matrix platform of a target, None where PyTorch publishes no wheels."""
    from setup_env.knowledge.matrix import PLATFORMS
    from setup_env.knowledge.tags import platform_key

    key = platform_key(os_name, arch)
    return key if key in PLATFORMS else None


# A described or thinly captured machine whose glibc / macOS version is unknown is planned for
# these (a current distribution, the macOS torch's newest wheels need).
_ASSUMED_GLIBC = "2.35"
_ASSUMED_MACOS = "14.0"


def interpreter_tags(
    python: str, free_threaded: bool, os_name: str, arch: str, glibc: str | None, macos: str | None
) -> tuple[str, ...]:
    """``cp312-cp312-manylinux_2_28_x86_64``...: the tags of a CPython of that version."""
    from setup_env.knowledge import tags

    plats = tags.platform_tags(
        os_name, arch, libc_version=glibc or _ASSUMED_GLIBC, macos=macos or _ASSUMED_MACOS
    )
    return tuple(tags.cpython_tags(python, plats, free_threaded=free_threaded))


def _target(facts: Facts) -> _Target:
    fam = facts.os.family
    os_name = {"darwin": "macos"}.get(fam, fam)
    from setup_env.knowledge.tags import machine_name

    arch = machine_name(facts.python.machine or facts.cpu.architecture or "")
    if os_name == "linux" and arch == "arm64":
        arch = "aarch64"
    hw = machine_name(facts.cpu.architecture or "")
    rosetta = bool(facts.python.rosetta) or (
        os_name == "macos" and arch == "x86_64" and hw in ("arm64", "aarch64")
    )
    pv = _v(facts.python.version)
    tags = tuple(facts.python.tags)
    if not tags and pv is not None:
        tags = interpreter_tags(
            facts.python.version,
            facts.python.free_threaded,
            os_name,
            arch,
            facts.os.glibc,
            facts.os.macos_version,
        )
    # packaging's cpython_tags() also accepts "<interp>-none-<platform>" for every platform tag;
    # a detector may list only the interpreter's own ABI.
    from setup_env.knowledge.tags import none_tags

    tagset = frozenset(tags) | frozenset(none_tags(tags))
    wsl = (facts.os.wsl or 0) >= 2
    return _Target(
        os=os_name,
        arch=arch,
        platform=_platform(os_name, arch),
        python=pv,
        free_threaded=facts.python.free_threaded,
        tags=tagset,
        pyabis=frozenset("-".join(t.split("-")[:2]) for t in tagset),
        glibc=_v(facts.os.glibc),
        macos=_v(facts.os.macos_version),
        rosetta=rosetta,
        wsl=wsl,
        driver_os=facts.os.driver_os,
    )


# --- GPUs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _NvGpu:
    label: str  # "GPU 0 NVIDIA GeForce RTX 5090"
    name: str
    cc: Optional[tuple[int, int]]
    specific: bool = False  # an "a" target was named (sm_90a)
    # The driver window of its compute capability (setup_env/data/gpus.json "driver_windows").
    first_branch: Optional[int] = None
    last_branch: Optional[int] = None


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


# --- candidates ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Candidate:
    release: Release
    variant: Variant
    via_pypi: bool
    build: Optional[Build] = None
    compat: Optional[str] = None  # full | mvc | no-driver
    min_driver: Optional[str] = None
    mvc_floor: Optional[str] = None
    ptx_gpus: tuple[str, ...] = ()
    verified: bool = True


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
    """Can this interpreter install the release's wheels (from PyPI, or from the index)?"""
    from setup_env.knowledge.tags import platform_of_tag

    plat = t.platform
    if plat is None:
        return False, "no wheels for this platform"
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
            return False, _why_no_wheel(rel, t)
        tag_plats = {h.split("-", 2)[2] for h in hits}
        for trap in rel.traps:
            if trap.platform_tag in tag_plats and t.glibc is not None and t.glibc < trap.min_glibc:
                return False, f"its {trap.platform_tag} wheel needs glibc {trap.min_glibc}"
    elif not plat.startswith("linux"):
        # Windows and macOS wheels on PyTorch's index carry the same tags as PyPI's.
        if not rel.wheel_tags(plat) & t.tags:
            return False, _why_no_wheel(rel, t)
    else:
        # Linux index wheels are tagged linux_<arch> / manylinux_2_28: same interpreters as
        # PyPI's, and the build's glibc floor below.
        pas = {pa for tag in rel.platform_tags(plat) for pa in rel.pypi_files[tag]}
        if not pas & t.pyabis:
            return False, _why_no_wheel(rel, t)
    return True, ""


def _why_no_wheel(rel: Release, t: _Target) -> str:
    if t.python is not None:
        py = Version(f"{t.python.major}.{t.python.minor}")
        if not rel.allows_python(py):
            return f"needs Python {rel.requires_python}"
        label = f"{py}{'t' if t.free_threaded else ''}"
        plat = t.platform or ""
        if label not in rel.python:
            return f"has no wheel for {t.py_label}"
        if plat == "macos_arm64" and plat in rel.min_macos:
            from setup_env.knowledge.tags import floor_of_tag

            floors = [
                f[1]
                for f in (
                    floor_of_tag(tag)
                    for tag in rel.platform_tags(plat)
                    if _pa_of(t) in rel.pypi_files.get(tag, ())
                )
                if f is not None and f[0] == "macos"
            ]
            if floors:
                low = Version("{}.{}".format(*min(floors)))
                if t.macos is not None and t.macos < low:
                    return f"needs macOS {low} or newer for {t.py_label}"
        if not any(p == plat for p in _platforms_of(rel)):
            return f"has no {plat} wheels"
    return f"has no wheel matching this interpreter's tags ({t.py_label}, {t.platform})"


def _pa_of(t: _Target) -> str:
    if t.python is None:
        return ""
    interp = f"cp{t.python.major}{t.python.minor}"
    return f"{interp}-{interp}{'t' if t.free_threaded else ''}"


def _platforms_of(rel: Release) -> set[str]:
    from setup_env.knowledge.tags import platform_of_tag

    return {p for p in (platform_of_tag(tag) for tag in rel.pypi_files) if p}


# --- the plan ------------------------------------------------------------------------------------


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
        if text:
            self.reasons.append((code, text))

    def lead(self, code: str, text: str) -> None:
        """A reason that goes first (the headline of the plan)."""
        if text:
            self.reasons.insert(0, (code, text))

    def warn(self, code: str, text: str) -> None:
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


def make_plan(facts: Facts, options: PlanOptions | None = None, matrix: object = None) -> Plan:
    """The install plan for ``facts``; see the module docstring for the rules."""
    from setup_env.knowledge.matrix import Matrix, load_matrix

    opts = options or PlanOptions()
    m = matrix if isinstance(matrix, Matrix) else load_matrix()
    check_options(opts, m)
    ctx = _Ctx(facts, opts, m)
    for note in m.notes:
        ctx.warn("matrix-note", note)
    if ctx.t.os == "linux" and ctx.t.glibc is None and ctx.t.python is not None:
        ctx.warn(
            "glibc-unknown",
            "this system's glibc version is unknown: the plan assumes it meets the wheels' floor "
            "(glibc >= 2.28 from torch 2.6 on; older systems need torch <= 2.5)",
        )
    if opts.channel == "nightly":
        return _nightly_plan(ctx)
    jetson = None
    if facts.cpu.architecture in ("aarch64", None) and (
        facts.jetson is not None or facts.nvidia is not None
    ):
        from setup_env.decide import (
            jetsonplan,  # loads the GPU catalogue: only where a Jetson may be
        )

        jetson = jetsonplan.jetson_of(facts)
    if jetson is not None and opts.variant is None:
        from setup_env.decide import jetsonplan

        # The JetPack-matched route (setup_env/decide/jetsonplan.py): never a driver install.
        def general(plain: Facts) -> Plan:
            sub = _Ctx(plain, opts, m)
            sub.warnings.extend(ctx.warnings)
            return _stable_plan(sub)

        return jetsonplan.plan(facts, jetson, opts, m, general)
    return _stable_plan(ctx)


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
    """A mirror base URL, validated (no credentials, query, spaces or shell characters)."""
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


def _stable_plan(ctx: _Ctx) -> Plan:
    t, m, opts = ctx.t, ctx.matrix, ctx.options
    newest = m.newest
    rels = _releases(ctx)
    if not rels:
        have = ", ".join(str(r.version) for r in m.releases[-4:])
        return _none(
            ctx,
            "torch-not-in-matrix",
            f"torch {opts.torch} is not in the wheel matrix (newest: {newest.version}; "
            f"recent: {have})",
            extra_fix=(
                "pin-torch",
                f"pin a release the matrix knows, e.g. --torch {newest.version}",
            ),
        )
    if t.platform is None:
        return _no_platform(ctx)
    # Releases this interpreter can install at all.
    why_not: dict[str, str] = {}
    installable: list[Release] = []
    for rel in rels:
        ok, why = _installable(rel, t, via_pypi=True)
        ok_idx, _w = _installable(rel, t, via_pypi=False)
        if ok or ok_idx:
            installable.append(rel)
        else:
            why_not[str(rel.version)] = why
    if not installable:
        return _nothing_installable(ctx, rels, why_not)
    top = installable[0]
    if top.version != rels[0].version:
        # Group the newer releases by why they don't install: "torch 2.6.0–2.14.1 need glibc..."
        groups: list[tuple[str, list[Release]]] = []
        for rel in rels:
            if rel.version <= top.version:
                break
            why = why_not.get(str(rel.version), "does not install here")
            if groups and groups[-1][0] == why:
                groups[-1][1].append(rel)
            else:
                groups.append((why, [rel]))
        for why, group in groups[:3]:
            span = (
                f"{group[-1].version}–{group[0].version}"
                if len(group) > 1
                else str(group[0].version)
            )
            ctx.reason("newer-release-not-installable", f"torch {span}: {why}")
            _interpreter_fixes(ctx, group[0], why)
        ctx.reason(
            "newest-installable", f"the newest torch this interpreter can install is {top.version}"
        )

    kind = _accelerator(ctx)
    asked = asked_variant(opts, m)
    if asked is not None:
        return _pinned_variant(ctx, installable, asked)
    if kind == "nvidia":
        return _nvidia_plan(ctx, installable)
    if kind == "amd":
        return _simple_accel(ctx, installable, "rocm")
    if kind == "intel":
        return _simple_accel(ctx, installable, "xpu")
    return _cpu_plan(ctx, installable, fallback=False)


def _accelerator(ctx: _Ctx) -> str:
    if ctx.nv:
        if ctx.amd or ctx.intel:
            ctx.warn(
                "mixed-vendors",
                "this machine has GPUs of more than one vendor; one PyTorch build serves one "
                "vendor: planning for the NVIDIA GPUs",
            )
        return "nvidia"
    if ctx.amd:
        return "amd"
    if ctx.intel:
        return "intel"
    return "none"


# --- NVIDIA --------------------------------------------------------------------------------------


def _cuda_candidates(ctx: _Ctx, rel: Release) -> list[tuple[Variant, bool, bool]]:
    """(variant, via PyPI, verified) for a release and platform, preference order."""
    plat = ctx.t.platform or ""
    out: list[tuple[Variant, bool, bool]] = []
    pv = rel.pypi_variant.get(plat)
    ok_pypi, _ = _installable(rel, ctx.t, via_pypi=True)
    if pv is not None and pv.variant.is_cuda and ok_pypi:
        out.append((pv.variant, True, True))
    stable = rel.pypi_variant.get("linux_x86_64")
    ok_idx, _ = _installable(rel, ctx.t, via_pypi=False)
    if ok_idx:
        idx = [v for v in rel.index if v.is_cuda and plat in rel.index[v]]
        idx.sort(key=lambda v: (stable is not None and v == stable.variant, v))
        for v in reversed(idx):
            if not any(v == o[0] for o in out):
                out.append((v, False, rel.index[v][plat].verified))
    return out


def _evaluate(
    ctx: _Ctx, rel: Release, variant: Variant, via_pypi: bool, verified: bool
) -> tuple[Optional[_Candidate], list[str], bool]:
    """(candidate or None, why not, arch fits)."""
    plat = ctx.t.platform or ""
    b = ctx.matrix.build(variant, rel.version, plat)
    if b is None:
        return None, [f"{variant}: its compiled architectures are not in the data"], False
    missing = []
    ptx: list[str] = []
    for g in ctx.nv:
        if g.cc is None:
            continue
        how = runs_on(g.cc, b)
        if how is None:
            missing.append(f"{g.name} ({_sm(g.cc)})")
        elif how == "ptx":
            ptx.append(g.name)
    if missing:
        return None, [f"{variant} has no kernels for {', '.join(missing)}"], False
    fit = _driver_fit(b, ctx.matrix, ctx.t, ctx.facts, bool(ptx))
    if not fit.runs:
        return None, [f"{variant} (CUDA {b.cuda}) {fit.why_not()}"], True
    return (
        _Candidate(
            rel,
            variant,
            via_pypi,
            b,
            fit.compat,
            fit.toolkit_min,
            fit.mvc_floor,
            tuple(ptx),
            verified,
        ),
        [],
        True,
    )


def _nvidia_plan(ctx: _Ctx, installable: list[Release]) -> Plan:
    unknown = [g for g in ctx.nv if g.cc is None]
    for g in unknown:
        ctx.warn(
            "gpu-cc-unknown",
            f"{g.label}: compute capability unknown (not in the GPU catalogue); its "
            f"architecture could not be checked against the wheels",
        )
    ccs = {g.cc for g in ctx.nv if g.cc is not None}
    if len(ccs) > 1:
        names = ", ".join(sorted({f"{g.name} ({_sm(g.cc)})" for g in ctx.nv if g.cc}))
        ctx.reason("mixed-gpus", f"mixed GPUs ({names}): the wheel must carry kernels for each")
    migs = [g for g in (ctx.facts.nvidia.gpus if ctx.facts.nvidia else ()) if g.mig_mode]
    if migs:
        ctx.warn(
            "mig-enabled",
            "MIG mode is on for "
            + ", ".join(f"GPU {g.index}" for g in migs)
            + ": the wheel is the same, but PyTorch sees one MIG instance per process (choose it "
            "with CUDA_VISIBLE_DEVICES=MIG-<uuid>; `nvidia-smi -L` lists them)",
        )
    if ctx.facts.nvidia is not None and ctx.facts.nvidia.error:
        ctx.warn("driver-error", f"the NVIDIA driver reported: {ctx.facts.nvidia.error}")
    _driver_window_findings(ctx)
    blockers: dict[str, list[str]] = {}
    unverified_fits: list[str] = []
    chosen: Optional[_Candidate] = None
    for rel in installable:
        best: Optional[_Candidate] = None
        for variant, via_pypi, verified in _cuda_candidates(ctx, rel):
            cand, why, _arch_fits = _evaluate(ctx, rel, variant, via_pypi, verified)
            if cand is None:
                if verified:
                    blockers.setdefault(str(rel.version), []).extend(why)
                continue
            if not verified:
                unverified_fits.append(f"{rel.version}+{variant}")
                continue
            if best is None or _better(cand, best):
                best = cand
        if best is not None:
            chosen = best
            break
    if chosen is None:
        return _nvidia_none(ctx, installable, blockers, unverified_fits)
    if chosen.release.version != installable[0].version:
        newest = installable[0]
        because = "; ".join(blockers.get(str(newest.version), [])[:3]) or "no fitting variant"
        ctx.reason("newest-release-blocked", f"torch {newest.version}: {because}")
        _driver_fixes(ctx, installable, chosen)
        _arch_fixes(ctx, newest)
    for u in unverified_fits[:2]:
        ctx.warn(
            "unverified-fit",
            f"torch {u} would also fit, but the data doesn't confirm that PyTorch's index "
            f"publishes it; run `setup-env matrix refresh` on a machine that reaches "
            f"download.pytorch.org",
        )
    return _gpu_plan(ctx, chosen, installable)


def _better(a: _Candidate, b: _Candidate) -> bool:
    rank = {"full": 0, "no-driver": 0, "mvc": 1}
    ra, rb = rank.get(a.compat or "", 2), rank.get(b.compat or "", 2)
    if ra != rb:
        return ra < rb
    return False  # candidates arrive in preference order


def _gpu_plan(ctx: _Ctx, c: _Candidate, installable: list[Release]) -> Plan:
    t = ctx.t
    b = c.build
    assert b is not None
    names = sorted({f"{g.name} ({_sm(g.cc)})" for g in ctx.nv if g.cc})
    how = "PyPI's default build" if c.via_pypi else f"the {c.variant} build on PyTorch's index"
    ctx.lead(
        "gpu-build",
        f"torch {c.release.version} {how} (CUDA {b.cuda}) carries kernels for "
        f"{', '.join(names) or 'the GPUs'}: {', '.join(b.arch_names())}",
    )
    if b.confidence in ("I", "?"):
        ctx.warn(
            "arches-inferred",
            f"the architecture list of {c.variant} in torch {c.release.version} is inferred, not "
            f"read from the wheel ({b.source}); `setup-env matrix arches <wheel>` can confirm it",
        )
    if c.ptx_gpus:
        ctx.warn(
            "arch-ptx",
            f"{', '.join(c.ptx_gpus)} run(s) this wheel through PTX JIT compilation: the first "
            f"start compiles kernels (slow) and the driver must be >= {c.min_driver}",
        )
    drv = ctx.facts.nvidia.driver_version if ctx.facts.nvidia else None
    who = "Windows driver (WSL2 uses it)" if t.wsl else "driver"
    if c.compat == "full":
        ctx.reason(
            "driver-full",
            f"the NVIDIA {who} {drv or (ctx.facts.nvidia and ctx.facts.nvidia.cuda_driver_version)}"
            f" supports CUDA {b.cuda} (needs >= {c.min_driver})",
        )
    elif c.compat == "mvc":
        ctx.warn(
            "driver-mvc",
            f"driver {drv} is older than CUDA {b.toolkit}'s own driver ({c.min_driver}); the wheel "
            f"runs through CUDA minor-version compatibility (>= {c.mvc_floor}): PyTorch's "
            f"prebuilt kernels work, PTX JIT and the newest CUDA APIs do not",
        )
        _upgrade_driver_fix(ctx, c.min_driver or "", f"full CUDA {b.cuda} support", prio=30)
    elif c.compat == "no-driver":
        ctx.warn(
            "driver-absent",
            f"no NVIDIA driver was found: install one >= {c.min_driver} before using this wheel"
            + (
                f" (>= {c.mvc_floor} also works, through CUDA minor-version compatibility)"
                if not c.ptx_gpus and c.mvc_floor and c.mvc_floor != c.min_driver
                else ""
            ),
        )
        _upgrade_driver_fix(
            ctx,
            c.min_driver or "",
            f"torch {c.release.version}",
            prio=1,
            new=True,
            fallback=(c.mvc_floor or "") if not c.ptx_gpus else "",
        )
    if not c.via_pypi:
        pv = c.release.pypi_variant.get(t.platform or "")
        if pv is not None:
            ctx.reason(
                "pypi-default-differs",
                f"plain `pip install torch` would give the {pv.variant} build here"
                + (" (no GPU support)" if pv.variant == CPU else "")
                + ", so the command names PyTorch's index",
            )
    if t.wsl:
        ctx.reason("wsl2", "WSL2: the Linux wheel with the Windows NVIDIA driver")
    return _finish(ctx, c.release, c.variant, c.via_pypi, "ok", b, c.compat, installable)


def _driver_fixes(ctx: _Ctx, installable: list[Release], chosen: _Candidate) -> None:
    """Upgrading the driver: the smallest driver that brings the newest release."""
    for rel in installable:
        if rel.version <= chosen.release.version:
            break
        best: Optional[tuple[Version, str, Variant]] = None
        for variant, _via, verified in _cuda_candidates(ctx, rel):
            if not verified:
                continue
            b = ctx.matrix.build(variant, rel.version, ctx.t.platform or "")
            if b is None or any(g.cc is not None and runs_on(g.cc, b) is None for g in ctx.nv):
                continue
            row = ctx.matrix.cuda_version(b.cuda)
            if row is None:
                continue
            v, text = row.toolkit_minimum(b.toolkit).for_os(ctx.t.driver_os)
            if best is None or v < best[0]:
                best = (v, text, variant)
        if best is not None:
            if not _driver_possible(ctx, best[0], best[1]):
                return
            _upgrade_driver_fix(ctx, best[1], f"torch {rel.version} ({best[2]})", prio=10)
            return


def _driver_possible(ctx: _Ctx, need: Version, spelled: str = "") -> bool:
    """False (with the reason) when a GPU's last driver branch is older than ``need``
    (``spelled``: the version as NVIDIA writes it, 520.61.05; ``Version`` prints 520.61.5)."""
    for g in ctx.nv:
        if g.cc is None:
            continue
        last = g.last_branch
        if last is not None and _window_fit(need.major, None, last) != "ok":
            why = (
                f"{g.name} ({_sm(g.cc)}) is supported by NVIDIA drivers up to R{last} only; a "
                f"driver >= {spelled or need} is not available for it"
            )
            if why not in (t for _c, t in ctx.reasons):
                ctx.reason("driver-branch-ended", why)
            return False
    return True


def _driver_window_findings(ctx: _Ctx) -> None:
    """A driver older than the first branch that knows a GPU (RTX 50xx before R570): the GPU
    is invisible to CUDA until the driver is upgraded."""
    raw = ctx.facts.nvidia.driver_version if ctx.facts.nvidia else None
    drv = _v(raw)
    if drv is None:
        return
    for g in ctx.nv:
        if g.cc is None or _window_fit(drv.major, g.first_branch, None) == "ok":
            continue
        ctx.reason(
            "driver-older-than-gpu",
            f"driver {raw} is older than R{g.first_branch}, the first driver branch that runs "
            f"{g.name} ({_sm(g.cc)}): CUDA sees no usable GPU until the driver is upgraded",
        )
        _upgrade_driver_fix(ctx, f"{g.first_branch}", f"{g.name} ({_sm(g.cc)})", prio=0)


def _upgrade_driver_fix(
    ctx: _Ctx, need: str, what: str, prio: int, new: bool = False, fallback: str = ""
) -> None:
    """An upgrade-driver fix; never for a driver a GPU cannot run (its driver window's last
    branch: R470 for Kepler, R580 for Maxwell/Pascal/Volta). ``fallback`` is a lower driver
    that also serves (the minor-version-compatibility floor), tried when ``need`` is too new."""
    if not need:
        return
    need_v = _v(need)
    if need_v is not None and any(
        _window_fit(need_v.major, None, g.last_branch) != "ok" for g in ctx.nv
    ):
        if fallback and fallback != need:
            fb = _v(fallback)
            if fb is not None and _driver_possible(ctx, fb, fallback):
                _driver_possible(ctx, need_v, need)
                _upgrade_driver_fix(ctx, fallback, what, prio, new)
                return
        _driver_possible(ctx, need_v, need)
        return
    verb = "Install" if new else "Upgrade"
    branch = need.split(".")[0]
    lasts = [g for g in ctx.nv if g.last_branch is not None]
    cap = min(lasts, key=lambda g: g.last_branch or 0) if lasts else None
    newer = (
        f"R{branch} to R{cap.last_branch}, the last branch for {cap.name}"
        if cap is not None
        else f"R{branch} or newer"
    )
    upto = f", up to R{cap.last_branch} (the last for {cap.name})" if cap is not None else ""
    if ctx.t.wsl:
        ctx.fix(
            prio,
            "upgrade-driver",
            f"{verb} the NVIDIA driver on Windows to >= {need}{upto} for {what} (WSL2 uses the "
            f"Windows driver; never install a Linux NVIDIA driver inside WSL)",
        )
    elif ctx.t.os == "windows":
        ctx.fix(
            prio,
            "upgrade-driver",
            f"{verb} the NVIDIA driver to >= {need}{upto} for {what} (NVIDIA App or "
            f"https://www.nvidia.com/Download/index.aspx)",
        )
    else:
        distro = (ctx.facts.os.distro_id or "").lower()
        cmd = f"sudo ubuntu-drivers install nvidia:{branch}" if distro == "ubuntu" else None
        ctx.fix(
            prio,
            "upgrade-driver",
            f"{verb} the NVIDIA driver to >= {need} (branch {newer}) for {what}, "
            f"from your distribution's packages or NVIDIA's CUDA repository; reboot after",
            cmd,
        )


def _arch_fixes(ctx: _Ctx, newest: Release) -> None:
    """GPUs that no build of the newest release carries."""
    plat = ctx.t.platform or ""
    for g in ctx.nv:
        if g.cc is None:
            continue
        served = False
        for variant in newest.index:
            b = ctx.matrix.build(variant, newest.version, plat)
            if b is not None and runs_on(g.cc, b) is not None:
                served = True
        if not served:
            ctx.reason(
                "arch-dropped-in-newest",
                f"no torch {newest.version} build carries kernels for {g.name} ({_sm(g.cc)})",
            )


def _nvidia_none(
    ctx: _Ctx, installable: list[Release], blockers: dict[str, list[str]], unverified: list[str]
) -> Plan:
    newest = installable[0]
    for line in blockers.get(str(newest.version), [])[:4]:
        ctx.reason("newest-release-blocked", f"torch {newest.version}: {line}")
    plat = ctx.t.platform or ""
    # Which GPUs does no build of any installable release serve?
    orphans = []
    for g in ctx.nv:
        if g.cc is None:
            continue
        if not any(
            (b := ctx.matrix.build(v, r.version, plat)) is not None and runs_on(g.cc, b)
            for r in installable
            for v in r.index
        ):
            orphans.append(g)
    if orphans:
        for g in orphans:
            ctx.reason(
                "arch-missing",
                f"no PyTorch wheel installable here carries kernels for {g.name} ({_sm(g.cc)})"
                if g.cc
                else "",
            )
    if unverified:
        ctx.warn(
            "unverified-fit",
            f"{', '.join(unverified[:3])} would fit but are not confirmed on PyTorch's index; "
            f"run `setup-env matrix refresh` where download.pytorch.org is reachable",
        )
    # Driver: the smallest driver that makes any release work.
    if not orphans:
        need: Optional[tuple[Version, str, str]] = None
        for rel in installable:
            for variant, _via, verified in _cuda_candidates(ctx, rel):
                b = ctx.matrix.build(variant, rel.version, plat)
                if not verified or b is None:
                    continue
                if any(g.cc is not None and runs_on(g.cc, b) is None for g in ctx.nv):
                    continue
                row = ctx.matrix.cuda_version(b.cuda)
                if row is None:
                    continue
                v, text = row.toolkit_minimum(b.toolkit).for_os(ctx.t.driver_os)
                if need is None:
                    need = (v, text, f"torch {rel.version} ({variant})")
            if need is not None:
                break
        if need is not None and _driver_possible(ctx, need[0], need[1]):
            _upgrade_driver_fix(ctx, need[1], need[2], prio=1)
    cc_list = sorted({_ccs(g.cc) for g in ctx.nv if g.cc}, key=Version)
    if len(cc_list) > 1:
        by_cc: dict[str, str] = {}
        for g in ctx.nv:
            if g.cc:
                by_cc.setdefault(_ccs(g.cc), g.name)
        newest_cc = max(cc_list, key=Version)
        ctx.fix(
            5,
            "one-gpu-type",
            f"use only the {by_cc[newest_cc]} GPUs: hide the others with CUDA_VISIBLE_DEVICES and "
            f"plan again with --gpu for that model",
        )
    if cc_list:
        arch_list = ";".join(cc_list)
        ctx.fix(
            20,
            "build-from-source",
            f'build PyTorch from source with TORCH_CUDA_ARCH_LIST="{arch_list}" '
            f"(https://github.com/pytorch/pytorch#from-source)",
        )
    return _cpu_plan(ctx, installable, fallback=True)


# --- ROCm / XPU ----------------------------------------------------------------------------------


def _simple_accel(ctx: _Ctx, installable: list[Release], family: Literal["rocm", "xpu"]) -> Plan:
    t = ctx.t
    plat = t.platform or ""
    what = "AMD" if family == "rocm" else "Intel"
    gpus_ = ctx.amd if family == "rocm" else ctx.intel
    names = ", ".join(
        sorted(
            {
                g.name + (f" ({g.gfx_arch})" if g.gfx_arch not in (None, g.name) else "")
                for g in gpus_
            }
        )
    )
    unverified: list[str] = []
    gfx_ids = _amd_gfx(ctx) if family == "rocm" else []
    gfx_blocked: list[str] = []  # "2.6.0+rocm6.2.4" whose wheel lacks a GPU's gfx
    for rel in installable:
        ok, _w = _installable(rel, t, via_pypi=False)
        if not ok:
            continue
        vs = [v for v in rel.index if v.kind == family and plat in rel.index[v]]
        good = [v for v in vs if rel.index[v][plat].verified]
        unverified += [f"{rel.version}+{v}" for v in vs if v not in good]
        if family == "rocm" and gfx_ids:
            from setup_env.decide.rocmplan import wheel_fit

            fitting = [v for v in good if wheel_fit(str(rel.version), v, gfx_ids).fits is not False]
            gfx_blocked += [f"{rel.version}+{v}" for v in good if v not in fitting]
            good = fitting
        if not good:
            continue
        variant = max(good) if family == "rocm" else good[0]
        ctx.lead(
            "accelerator-build",
            f"{what} GPU(s) {names}: torch {rel.version} from PyTorch's {variant} index "
            f"(PyPI's wheels carry no {what} GPU support)",
        )
        if rel.version != installable[0].version:
            ctx.reason(
                "newest-release-blocked",
                f"torch {installable[0].version}: no {family} build is confirmed in the data",
            )
            if unverified:
                ctx.warn(
                    "unverified-fit",
                    f"{', '.join(unverified[:3])} may exist but are not confirmed on PyTorch's "
                    "index; run `setup-env matrix refresh` where download.pytorch.org is "
                    "reachable",
                )
        if family == "rocm":
            _rocm_gfx_lines(ctx, str(rel.version), variant, gfx_ids, gfx_blocked)
        else:
            ctx.warn(
                "xpu-driver-needed",
                "XPU wheels need Intel's GPU driver (Linux: the i915/xe kernel driver plus the "
                "level-zero and compute runtime packages; Windows: the Arc/Iris Xe driver)",
            )
        return _finish(ctx, rel, variant, False, "ok", None, None, installable)
    if family == "rocm" and plat != "linux_x86_64":
        ctx.reason(
            "rocm-linux-only", f"PyTorch publishes ROCm wheels for Linux x86_64 only, not {plat}"
        )
    elif family == "rocm" and gfx_blocked:
        _rocm_gfx_none(ctx, installable, gfx_ids, gfx_blocked)
    else:
        ctx.reason(
            "no-accelerator-build", f"no confirmed {family} build of torch fits this interpreter"
        )
    return _cpu_plan(ctx, installable, fallback=True)


def _amd_gfx(ctx: _Ctx) -> list[str]:
    from setup_env.probe.resolve import resolve_gpu

    out: list[str] = []
    for g in ctx.amd:
        gfx = g.gfx_arch or resolve_gpu(g).gfx
        if gfx and gfx not in out:
            out.append(gfx)
    return out


def _rocm_gfx_lines(
    ctx: _Ctx, version: str, variant: Variant, gfx_ids: list[str], blocked: list[str]
) -> None:
    from setup_env.decide.rocmplan import wheel_fit

    fit = wheel_fit(version, variant, gfx_ids)
    if fit.fits:
        ctx.reason(
            "rocm-gfx-in-wheel",
            f"torch {version}+{variant} carries {', '.join(gfx_ids)} (PYTORCH_ROCM_ARCH of "
            f"PyTorch's build: {' '.join(fit.targets)})",
        )
    else:
        ctx.warn(
            "rocm-gfx-unchecked",
            "the data doesn't list which gfx architectures this ROCm wheel carries: check "
            "that yours is in PyTorch's ROCm build (torch.cuda.get_arch_list() after install)",
        )
    if blocked:
        ctx.reason(
            "rocm-gfx-not-in-wheel",
            f"{', '.join(blocked[:3])}: no kernels for {', '.join(gfx_ids)}",
        )


def _rocm_gfx_none(
    ctx: _Ctx, installable: list[Release], gfx_ids: list[str], blocked: list[str]
) -> None:
    """No official ROCm wheel carries the GPU's gfx: CPU, with the ways out ranked."""
    from setup_env.decide.rocmplan import first_release_with, never_official, wheel_fit

    newest = blocked[0]
    rel_v, label = newest.split("+", 1)
    missing = [g for g in gfx_ids if not wheel_fit(rel_v, Variant.parse(label), [g]).fits]
    names = ", ".join(g.name for g in ctx.amd if g.gfx_arch in missing and g.name != g.gfx_arch)
    ctx.reason(
        "rocm-gfx-not-in-wheel",
        f"no official ROCm wheel of torch {newest.split('+')[0]} carries {', '.join(missing)}"
        + (f" ({names})" if names else "")
        + ": PyTorch builds for a fixed list of gfx targets",
    )
    never = [g for g in missing if never_official(g)]
    later = {}
    for g in missing:
        if g in never:
            continue
        rels = sorted((str(r.version) for r in ctx.matrix.releases), key=Version)
        variants = sorted({v for r in ctx.matrix.releases for v in r.index if v.is_rocm})
        first = first_release_with(g, rels, variants)
        if first is not None:
            later[g] = first
    for g, first in later.items():
        ctx.fix(
            5,
            "pin-torch",
            f"torch {first} or newer carries {g}: plan without the --torch pin "
            f"(or with --torch {'.'.join(first.split('.')[:2])})",
        )
    arch = ";".join(missing)
    ctx.fix(
        10,
        "build-from-source",
        f"build PyTorch from source for your GPU: PYTORCH_ROCM_ARCH={arch} python setup.py "
        f"develop, on ROCm (https://github.com/pytorch/pytorch#amd-rocm-support)",
    )
    if never:
        ctx.warn(
            "rocm-gfx-never-official",
            f"{', '.join(never)} is in no official PyTorch ROCm wheel; HSA_OVERRIDE_GFX_VERSION "
            f"(making the runtime report a listed target) is a community workaround, not a "
            f"supported configuration: kernels may fail or give wrong results",
        )


# --- CPU / Apple ---------------------------------------------------------------------------------


def _cpu_plan(ctx: _Ctx, installable: list[Release], fallback: bool) -> Plan:
    t = ctx.t
    plat = t.platform or ""
    for rel in installable:
        pv = rel.pypi_variant.get(plat)
        ok_pypi, _ = _installable(rel, t, via_pypi=True)
        if pv is not None and pv.variant == CPU and ok_pypi:
            return _cpu_done(ctx, rel, CPU, True, fallback, installable)
        ok_idx, _ = _installable(rel, t, via_pypi=False)
        av = rel.index.get(CPU, {}).get(plat)
        if av is not None and av.verified and ok_idx:
            return _cpu_done(ctx, rel, CPU, False, fallback, installable)
        if pv is not None and ok_pypi and plat.startswith("linux") and not fallback:
            # PyPI serves a CUDA build here and the cpu index is not confirmed for this
            # release: the CUDA wheel also runs on CPU (just bigger).
            continue
    return _none(ctx, "no-cpu-build", "no CPU build of torch fits this interpreter either")


def _cpu_done(
    ctx: _Ctx, rel: Release, variant: Variant, via_pypi: bool, fallback: bool, inst: list[Release]
) -> Plan:
    t = ctx.t
    if t.platform == "macos_arm64":
        mps = t.macos is None or t.macos >= Version("14")
        if mps:
            ctx.lead(
                "mps",
                f"Apple Silicon: PyPI's torch {rel.version} wheel has the MPS (Metal) backend",
            )
            variant = MPS
        else:
            ctx.lead("apple-old-macos", f"Apple Silicon on macOS {t.macos}: torch {rel.version}")
            ctx.warn(
                "mps-needs-macos-14",
                "PyTorch's MPS backend is built for macOS 14 (Sonoma) or later; on older macOS "
                "torch may fall back to the CPU",
            )
    elif t.platform == "macos_x86_64":
        ctx.lead(
            "intel-mac",
            f"Intel Mac: PyTorch stopped publishing macOS x86_64 wheels after 2.2.2; torch "
            f"{rel.version} is the newest for this machine (CPU only)",
        )
        if t.rosetta:
            _rosetta(ctx)
    elif fallback:
        ctx.lead(
            "cpu-fallback",
            f"fallback: the CPU build of torch {rel.version}; no GPU build fits (see the fixes)",
        )
        ctx.fix(
            90,
            "cpu",
            "keep the CPU build (no GPU acceleration) until one of the fixes above is applied",
        )
    else:
        src = "PyPI's default build" if via_pypi else "the CPU build from PyTorch's cpu index"
        ctx.lead("no-gpu", f"no GPU found: {src} of torch {rel.version}")
        if not via_pypi:
            pv = rel.pypi_variant.get(t.platform or "")
            if pv is not None and pv.variant != CPU:
                ctx.reason(
                    "pypi-default-differs",
                    f"PyPI's {t.platform} wheel is the {pv.variant} build (several GB of CUDA "
                    f"libraries); the cpu index avoids downloading them",
                )
    status: Literal["ok", "fallback"] = "fallback" if fallback else "ok"
    return _finish(ctx, rel, variant, via_pypi, status, None, None, inst)


def _rosetta(ctx: _Ctx) -> None:
    ctx.warn(
        "rosetta",
        "this Python is an x86_64 build running under Rosetta 2 on an Apple Silicon Mac: it can "
        "only install torch <= 2.2.2 and never gets MPS",
    )
    ctx.fix(
        1,
        "native-python",
        "install a native arm64 Python (python.org universal2 installer, Homebrew in /opt/homebrew,"
        " or `uv python install`) and plan again: torch "
        f"{ctx.matrix.newest.version} with MPS",
    )


# --- pins ----------------------------------------------------------------------------------------


def _pinned_variant(ctx: _Ctx, installable: list[Release], variant: Variant) -> Plan:
    t = ctx.t
    plat = t.platform or ""
    if variant == MPS:
        if plat != "macos_arm64":
            return _none(ctx, "mps-apple-only", "--variant mps: MPS is Apple Silicon only")
        return _cpu_plan(ctx, installable, fallback=False)
    for rel in installable:
        pv = rel.pypi_variant.get(plat)
        via_pypi = pv is not None and pv.variant == variant and _installable(rel, t, True)[0]
        av = rel.index.get(variant, {}).get(plat)
        on_index = av is not None and av.verified and _installable(rel, t, False)[0]
        if not (via_pypi or on_index):
            continue
        if rel.version != installable[0].version:
            ctx.reason(
                "newest-release-blocked",
                f"torch {installable[0].version} has no confirmed {variant} build for {plat}",
            )
        b = ctx.matrix.build(variant, rel.version, plat) if variant.is_cuda else None
        compat = None
        if b is not None:
            missing = [
                f"{g.name} ({_sm(g.cc)})"
                for g in ctx.nv
                if g.cc is not None and runs_on(g.cc, b) is None
            ]
            if missing:
                ctx.warn(
                    "arch-missing",
                    f"{variant} of torch {rel.version} has no kernels for {', '.join(missing)}: "
                    f"'no kernel image is available' at run time",
                )
            jit = [g.name for g in ctx.nv if g.cc is not None and runs_on(g.cc, b) == "ptx"]
            if jit:
                ctx.warn(
                    "arch-ptx",
                    f"{', '.join(jit)} run(s) {variant} of torch {rel.version} through PTX JIT "
                    "compilation only (slow first start)",
                )
            ptx = bool(jit)
            fit = _driver_fit(b, ctx.matrix, t, ctx.facts, ptx)
            compat = fit.compat if fit.runs else None
            if compat is None:
                ctx.warn(
                    fit.code,
                    f"{variant} (CUDA {b.cuda}) {fit.why_not()}; the installed driver is older",
                )
                _upgrade_driver_fix(
                    ctx, fit.toolkit_min or "", f"torch {rel.version} ({variant})", prio=1
                )
        ctx.lead(
            "variant-as-asked", f"torch {rel.version} {variant}, as asked (--variant {variant})"
        )
        return _finish(ctx, rel, variant, via_pypi, "ok", b, compat, installable)
    unverified = [str(r.version) for r in installable if plat in r.index.get(variant, {})]
    newest_with = next(
        (
            r
            for r in reversed(ctx.matrix.releases)
            if r.index.get(variant, {}).get(plat) is not None and r.index[variant][plat].verified
        ),
        None,
    )
    msg = f"no confirmed {variant} build of torch for {plat} and {t.py_label}"
    if ctx.options.torch:
        msg += f" in torch {ctx.options.torch}"
    if unverified:
        ctx.warn(
            "unverified-variant",
            f"{variant} for torch {', '.join(unverified[:3])} is listed as unverified (PyTorch's "
            f"index could not be read); `setup-env matrix refresh` can confirm it",
        )
    if newest_with is not None:
        ctx.fix(
            2,
            "pin-torch",
            f"the newest torch with a confirmed {variant} build for {plat} is "
            f"{newest_with.version}: --torch {newest_with.version} --variant {variant}",
        )
    return _none(ctx, "no-variant-build", msg)


# --- when nothing installs -----------------------------------------------------------------------


def _interpreter_fixes(ctx: _Ctx, newest: Release, why: str) -> None:
    t = ctx.t
    kinds = {f.kind for _p, f in ctx.fixes}
    if kinds & {"newer-os", "upgrade-os", "change-python", "native-python"}:
        return  # the newest group's fix is the one that matters
    if t.rosetta:
        _rosetta(ctx)
        return
    if "macOS" in why:
        ctx.fix(
            15,
            "upgrade-os",
            f"upgrade macOS to {newest.min_macos.get('macos_arm64', '14.0')} or later for torch "
            f"{newest.version}",
        )
    elif "Python" in why or "wheel for" in why:
        pys = [p for p in newest.python if not p.endswith("t")] or list(newest.python)
        want = f"{pys[0]}–{pys[-1]}" if len(pys) > 1 else pys[0]
        if t.free_threaded:
            fts = [p for p in newest.python if p.endswith("t")]
            want += f" (free-threaded: {', '.join(fts)})" if fts else ""
        ctx.fix(
            15,
            "change-python",
            f"use Python {want} for torch {newest.version} (e.g. `uv venv --python {pys[0]}`)",
        )
    elif "glibc" in why:
        ctx.fix(
            15,
            "newer-os",
            f"torch {newest.version} needs glibc >= "
            f"{newest.min_glibc.get(t.platform or '', '2.28')}: move to a newer distribution "
            f"(RHEL/Rocky 8+, Ubuntu 20.04+, Debian 11+) or run in a container built on one",
        )


def _nothing_installable(ctx: _Ctx, rels: list[Release], why_not: dict[str, str]) -> Plan:
    newest = rels[0]
    if ctx.t.python is None and not ctx.t.tags:
        # Facts from a partial capture or report: no interpreter to match wheels against.
        ctx.fix(
            1,
            "name-python",
            "say which Python will install torch: run `setup-env plan` on that machine, or plan "
            f"for it with `setup-env plan --os {ctx.t.os or 'linux'} --python 3.12 ...`",
        )
        return _none(
            ctx, "no-python", "these facts name no Python interpreter, so no wheel can be matched"
        )
    _interpreter_fixes(ctx, newest, why_not.get(str(newest.version), ""))
    if ctx.options.torch:
        # a pin that doesn't install: say what would
        alt = None
        for rel in reversed(ctx.matrix.releases):
            if _installable(rel, ctx.t, True)[0] or _installable(rel, ctx.t, False)[0]:
                alt = rel
                break
        if alt is not None:
            ctx.fix(
                5,
                "pin-torch",
                f"torch {alt.version} is the newest release that installs for {ctx.t.py_label} "
                f"on {ctx.t.platform}: --torch {alt.version}",
            )
    return _none(
        ctx,
        "nothing-installable",
        f"torch {newest.version} {why_not.get(str(newest.version), 'does not install here')}"
        + ("" if ctx.options.torch else "; no torch release in the matrix installs here"),
    )


def _no_platform(ctx: _Ctx) -> Plan:
    t = ctx.t
    if t.os == "windows" and t.arch in ("arm64", "aarch64"):
        ctx.fix(
            10,
            "change-python",
            "PyTorch publishes no stable Windows on Arm wheels; use an x64 Python (runs under "
            "emulation, CPU only) or WSL2",
        )
    return _none(
        ctx, "no-platform", f"PyTorch publishes no wheels for {t.os} on {t.arch or 'this CPU'}"
    )


def _none(ctx: _Ctx, code: str, reason: str, extra_fix: tuple[str, str] | None = None) -> Plan:
    ctx.lead(code, reason)
    if extra_fix is not None:
        ctx.fix(1, extra_fix[0], extra_fix[1])
    return ctx.said(
        Plan(
            status="none",
            fixes=ctx.ranked(),
            details=ctx.details,
            platform=ctx.t.platform,
            newest_torch=str(ctx.matrix.newest.version),
            source="",
        )
    )


# --- nightly -------------------------------------------------------------------------------------


def _nightly_plan(ctx: _Ctx) -> Plan:
    t = ctx.t
    plat = t.platform
    if plat is None:
        return _no_platform(ctx)
    variants = ctx.matrix.nightly.get(plat, ())
    kind = _accelerator(ctx)
    asked = asked_variant(ctx.options, ctx.matrix)
    variant: Variant
    if asked is not None:
        variant = asked
        if variant not in variants:
            return _none(
                ctx,
                "nightly-no-variant",
                f"the nightly channel has no {variant} build for {plat} in the data",
            )
    elif plat.startswith("macos"):
        variant = CPU
    elif kind == "nvidia":
        newest = ctx.matrix.newest
        # the newest CUDA whose newest stable build runs every GPU
        fits = []
        for v in variants:
            if not v.is_cuda:
                continue
            b = None
            for rel in reversed(ctx.matrix.releases):
                b = ctx.matrix.build(v, rel.version, plat)
                if b is not None:
                    break
            if b is not None and all(g.cc is None or runs_on(g.cc, b) for g in ctx.nv):
                fits.append(v)
        if not fits:
            return _none(
                ctx,
                "nightly-no-gpu-build",
                f"no nightly CUDA build is known to carry kernels for these GPUs "
                f"(data of {newest.version})",
            )
        stable = newest.pypi_variant.get("linux_x86_64")
        variant = stable.variant if stable and stable.variant in fits else max(fits)
    elif kind == "amd":
        rocms = [v for v in variants if v.is_rocm]
        if not rocms:
            return _none(
                ctx, "nightly-no-variant", f"the nightly channel has no ROCm build for {plat}"
            )
        variant = max(rocms)
    elif kind == "intel" and XPU in variants:
        variant = XPU
    else:
        variant = CPU
    ctx.lead("nightly", f"nightly {variant} build from PyTorch's nightly index")
    ctx.warn(
        "nightly-unverified",
        "nightly builds change daily and their contents are not verified by this data "
        f"({ctx.matrix.retrieved}); pin a stable release for anything that must keep working",
    )
    base = check_index_url(ctx.options.index_url) if ctx.options.index_url else ctx.matrix.index_url
    url = f"{base.rstrip('/')}/nightly/{variant}"
    packages = ["torch", *[p for p in ctx.options.with_packages if p in COMPANIONS]]
    argv, command, config = _commands(ctx, packages, url, pre=True)
    return ctx.said(
        Plan(
            status="ok",
            torch_version=None,
            variant=variant,
            index_url=url,
            requirements=tuple(packages),
            argv=argv,
            command=command,
            config=config,
            fixes=ctx.ranked(),
            details=ctx.details,
            platform=plat,
            newest_torch=None,
            source="nightly",
        )
    )


# --- commands ------------------------------------------------------------------------------------


def _finish(
    ctx: _Ctx,
    rel: Release,
    variant: Variant,
    via_pypi: bool,
    status: Literal["ok", "fallback"],
    build: Optional[Build],
    compat: Optional[str],
    installable: Sequence[Release],
) -> Plan:
    opts = ctx.options
    t = ctx.t
    index_variant = variant.index_variant
    url: Optional[str] = None
    source = "pypi"
    if not via_pypi:
        if opts.index_url:
            url = f"{check_index_url(opts.index_url).rstrip('/')}/{index_variant}"
            source = "mirror"
        else:
            url = f"{ctx.matrix.index_url.rstrip('/')}/{index_variant}"
            source = "index"
    elif opts.index_url:
        ctx.warn(
            "mirror-unused",
            "--index-url names a mirror of PyTorch's index, but this plan installs from PyPI",
        )
    requirements = [f"torch=={rel.version}"]
    for name in opts.with_packages:
        comp = rel.companions.get(name)
        if comp is None or comp.spec is None:
            alt = _newest_with_companion(ctx, name, installable)
            msg = f"{name}: no {name} release is known for torch {rel.version}"
            if name == "torchvision" and rel.version >= Version("2.15"):
                msg += " (none on PyPI yet)"
            ctx.warn("companion-unknown", msg + "; installing torch without it")
            if alt is not None:
                ctx.fix(
                    8,
                    "pin-torch",
                    f"torch {alt.version} is the newest with a known {name} "
                    f"({alt.companions[name].spec or ''}): --torch {alt.version}",
                )
            continue
        if not _companion_wheel(ctx, name, comp.version):
            ctx.warn(
                "companion-no-wheel",
                f"{name} {comp.version}: no wheel on PyPI for {t.py_label} on {t.platform}; "
                f"pip may try to build it from source",
            )
        requirements.append(f"{name}{comp.spec}")
    argv, command, config = _commands(ctx, requirements, url, pre=False)
    min_driver = None
    cuda = None
    if build is not None:
        cuda = build.cuda
        row = ctx.matrix.cuda_version(build.cuda)
        if row is not None:
            min_driver = row.toolkit_minimum(build.toolkit).for_os(t.driver_os)[1]
            ctx.details["mvc_floor"] = row.mvc.for_os(t.driver_os)[1]
        ctx.details["arches"] = " ".join(build.arch_names())
        ctx.details["arches_source"] = build.measured or build.source
    ctx.details["release_uploaded"] = rel.uploaded
    ctx.details["requires_python"] = str(rel.requires_python)
    return ctx.said(
        Plan(
            status=status,
            torch_version=str(rel.version),
            variant=variant,
            index_url=url,
            requirements=tuple(requirements),
            argv=argv,
            command=command,
            config=config,
            fixes=ctx.ranked(),
            min_driver=min_driver,
            details=dict(ctx.details),
            platform=t.platform,
            cuda=cuda,
            driver_compat=compat,
            newest_torch=str(ctx.matrix.newest.version),
            source=source,
        )
    )


def _newest_with_companion(
    ctx: _Ctx, name: str, installable: Sequence[Release]
) -> Optional[Release]:
    for rel in installable:
        comp = rel.companions.get(name)
        if comp is not None and comp.spec is not None:
            return rel
    return None


def _companion_wheel(ctx: _Ctx, name: str, version: Optional[Version]) -> bool:
    if name != "torchvision" or version is None or not ctx.t.tags:
        return True
    files = ctx.matrix.torchvision_files.get(str(version))
    if files is None:
        return True
    from setup_env.knowledge.tags import platform_of_tag

    have = {
        f"{pa}-{tag}"
        for tag, pas in files.items()
        if platform_of_tag(tag) == ctx.t.platform
        for pa in pas
    }
    # py3-none wheels and the like match any interpreter of the platform
    if any(not h.startswith("cp") for h in have):
        return True
    return bool(have & ctx.t.tags) or not have


def _commands(
    ctx: _Ctx, requirements: Sequence[str], url: Optional[str], pre: bool
) -> tuple[tuple[str, ...], str, Optional[str]]:
    inst = ctx.options.installer
    reqs = list(requirements)
    idx = ["--index-url", url] if url else []
    pre_flag = ["--pre"] if pre else []
    config: Optional[str] = None
    if inst == "pip":
        argv = ["pip", "install", *pre_flag, *reqs, *idx]
    elif inst == "uv":
        argv = ["uv", "pip", "install", *pre_flag, *reqs, *idx]
    elif inst == "requirements":
        lines = ([f"--index-url {url}"] if url else []) + (["--pre"] if pre else []) + reqs
        config = "\n".join(lines) + "\n"
        argv = ["pip", "install", "-r", "requirements.txt"]
    elif inst == "uv-project":
        config = _uv_project(reqs, url, ctx)
        argv = ["uv", "sync"] if url else ["uv", "add", *reqs]
    else:
        config = _poetry(reqs, url, ctx)
        argv = ["poetry", "install"] if url else ["poetry", "add", *reqs]
    return tuple(argv), " ".join(shlex.quote(a) for a in argv), config


def _index_name(url: str) -> str:
    tail = url.rstrip("/").rsplit("/", 1)[-1]
    return "pytorch-" + re.sub(r"[^a-z0-9]+", "-", tail.lower()).strip("-")


def _toml(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split(req: str) -> tuple[str, str]:
    name, _, spec = req.partition("==")
    return name, spec


def _uv_project(reqs: list[str], url: Optional[str], ctx: _Ctx) -> str:
    deps = ", ".join(_toml(r) for r in reqs)
    out = ["[project]", f"dependencies = [{deps}]"]
    if url:
        name = _index_name(url)
        out += ["", "[[tool.uv.index]]", f"name = {_toml(name)}", f"url = {_toml(url)}"]
        out.append("explicit = true")
        out += ["", "[tool.uv.sources]"]
        for r in reqs:
            out.append(f"{_split(r)[0]} = [{{ index = {_toml(name)} }}]")
    if ctx.options.channel == "nightly":
        out += ["", "[tool.uv]", 'prerelease = "allow"']
    return "\n".join(out) + "\n"


def _poetry(reqs: list[str], url: Optional[str], ctx: _Ctx) -> str:
    out = ["[tool.poetry.dependencies]"]
    name = _index_name(url) if url else None
    for r in reqs:
        pkg, spec = _split(r)
        spec = spec or "*"
        if name:
            allow = ", allow-prereleases = true" if ctx.options.channel == "nightly" else ""
            out.append(f"{pkg} = {{ version = {_toml(spec)}, source = {_toml(name)}{allow} }}")
        else:
            out.append(f"{pkg} = {_toml(spec)}")
    if url and name:
        out += ["", "[[tool.poetry.source]]", f"name = {_toml(name)}", f"url = {_toml(url)}"]
        out.append('priority = "explicit"')
    return "\n".join(out) + "\n"


# --- what-if: facts from a spec ------------------------------------------------------------------


def spec_facts(
    *,
    os: str,
    arch: str | None = None,
    python: str | None = None,
    gpus: Sequence[str] = (),
    driver: str | None = None,
    glibc: str | None = None,
    macos: str | None = None,
    wsl: bool = False,
    jetpack: str | None = None,
) -> Facts:
    """The facts of a machine described by a spec (``--os linux --gpu "RTX 5090" ...``)."""
    from setup_env.knowledge.gpus import identify

    named = [identify(n.strip()) for n in gpus if n.strip() and len(n.strip()) <= 100]
    jetson_model = next(
        (f.nvidia for f in named if f.nvidia is not None and f.nvidia.segment == "embedded"), None
    )
    if jetson_model is not None and os.lower() not in ("linux", "macos", "darwin", "mac", "osx"):
        raise PlanError(f"--gpu {jetson_model.name!r}: a Jetson runs Linux (L4T): use --os linux")
    if arch is None and jetson_model is not None:
        arch = "aarch64"  # a Jetson is an aarch64 machine
    os_name = {"darwin": "macos", "mac": "macos", "osx": "macos", "win": "windows"}.get(
        os.lower(), os.lower()
    )
    if os_name not in ("linux", "windows", "macos"):
        raise PlanError(f"--os {os!r}: choose linux, windows or macos")
    from setup_env.knowledge.tags import machine_name

    a = machine_name(arch or ("arm64" if os_name == "macos" else "x86_64"))
    if a not in ("x86_64", "aarch64", "arm64"):
        raise PlanError(f"--arch {arch!r}: choose x86_64, aarch64 or arm64")
    if os_name == "linux" and a == "arm64":
        a = "aarch64"
    if os_name == "macos" and a == "aarch64":
        a = "arm64"
    py = (python or "3.12").strip()
    m = re.fullmatch(r"(3)\.(\d{1,2})(t?)", py)
    if not m:
        raise PlanError(f"--python {python!r}: expected a version like 3.12 or 3.13t")
    free = bool(m.group(3))
    pyver = f"3.{m.group(2)}"
    if glibc is not None and not re.fullmatch(r"2\.\d{1,2}", glibc):
        raise PlanError(f"--glibc {glibc!r}: expected a version like 2.17 or 2.35")
    if macos is not None and not re.fullmatch(r"\d{2}(?:\.\d{1,2}){0,2}", macos):
        raise PlanError(f"--macos {macos!r}: expected a version like 13.6 or 14")
    if driver is not None and not re.fullmatch(r"\d{3,4}(?:\.\d{1,3}){0,2}", driver):
        raise PlanError(f"--driver {driver!r}: expected a version like 570.86.10")
    if glibc is not None and os_name != "linux":
        raise PlanError("--glibc applies to --os linux only")
    if macos is not None and os_name != "macos":
        raise PlanError("--macos applies to --os macos only")
    src = "spec"
    tags = interpreter_tags(pyver, free, os_name, a, glibc, macos)
    nv: list[Gpu] = []
    amd: list[Gpu] = []
    intel: list[Gpu] = []
    apple: Optional[AppleInfo] = None
    for i, name in enumerate(gpus):
        name = name.strip()
        if not name or len(name) > 100:
            raise PlanError(f"--gpu {name!r}: empty or too long")
        found = identify(name)
        if found.vendor == "amd" and found.amd is not None:
            amd.append(Gpu(index=i, name=name, vendor="amd", gfx_arch=found.amd.gfx, source=src))
        elif found.vendor == "intel":
            intel.append(Gpu(index=i, name=name, vendor="intel", source=src))
        elif found.vendor == "apple":
            gen, variant = found.apple_generation, found.apple_variant
            apple = AppleInfo(
                chip=f"Apple M{gen}" + (f" {variant}" if variant else ""),
                generation=gen,
                variant=variant,
                mps_eligible=True,
                sources={"chip": src},
            )
        elif found.nvidia is not None:
            cc = found.nvidia.compute_capability
            nv.append(Gpu(index=i, name=name, vendor="nvidia", compute_capability=cc, source=src))
        else:
            close = f"; closest known: {', '.join(found.suggestions)}" if found.suggestions else ""
            raise PlanError(
                f"--gpu {name!r}: not a GPU the catalogue knows ({found.code}){close}; give a "
                f'model ("RTX 5090", "MI300X") or an architecture (sm_120, gfx1100)'
            )
    if (amd or intel) and os_name == "macos":
        raise PlanError("--gpu: AMD/Intel GPUs are planned on linux or windows")
    if nv and os_name == "macos":
        raise PlanError("--gpu: NVIDIA GPUs are not supported on macOS by PyTorch")
    nvidia = None
    if nv or driver:
        nvidia = NvidiaInfo(
            driver_version=driver, gpus=tuple(nv), sources={"driver_version": src, "gpus": src}
        )
    jetson = _spec_jetson(jetpack, jetson_model, os_name, a)
    return Facts(
        os=OSInfo(
            family="darwin" if os_name == "macos" else os_name,  # type: ignore[arg-type]
            libc="glibc" if os_name == "linux" else None,
            glibc=glibc if os_name == "linux" else None,
            macos_version=macos,
            wsl=2 if wsl else None,
            sources={"family": src},
        ),
        python=PythonInfo(
            version=pyver,
            free_threaded=free,
            machine=a,
            tags=tags,
            sources={"version": src, "tags": "derived from the spec"},
        ),
        cpu=CpuInfo(architecture=a, sources={"architecture": src}),
        nvidia=nvidia,
        apple=apple,
        rocm=RocmInfo(gpus=tuple(amd), sources={"gpus": src}) if amd else None,
        xpu=XpuInfo(gpus=tuple(intel), sources={"gpus": src}) if intel else None,
        jetson=jetson,
    )


def _spec_jetson(jetpack: str | None, model: object, os_name: str, arch: str) -> JetsonInfo | None:
    """``--jetpack 6.2`` with ``--gpu "Jetson AGX Orin"``: the Jetson of a what-if."""
    from setup_env.knowledge import gpus

    if jetpack is None:
        return None
    if model is None or not isinstance(model, gpus.GpuModel):
        raise PlanError('--jetpack needs --gpu naming a Jetson module ("Jetson AGX Orin")')
    if os_name != "linux" or arch != "aarch64":
        raise PlanError("--jetpack: a Jetson is --os linux --arch aarch64")
    if not re.fullmatch(r"\d{1,2}(?:\.\d{1,2}){0,2}", jetpack.strip()):
        raise PlanError(f"--jetpack {jetpack!r}: expected a version like 6.2")
    row = gpus.load().jetpack(jetpack.strip())
    if row is None:
        known = ", ".join(j.jetpack for j in gpus.load().jetpacks)
        raise PlanError(f"--jetpack {jetpack!r}: not in the JetPack table (known: {known})")
    return JetsonInfo(
        module=model.name,
        l4t=row.l4t,
        jetpack=row.jetpack,
        cuda=row.cuda,
        compute_capability=model.compute_capability,
        sources={"jetpack": "spec", "l4t": "JetPack table", "cuda": "JetPack table"},
    )


def facts_summary(facts: Facts) -> dict[str, object]:
    """The parts of the facts the plan used, for the JSON output."""
    nv = facts.nvidia
    gpus_ = []
    for g in facts.gpus:
        from setup_env.probe.resolve import resolve_gpu  # the catalogue loads only for a GPU

        r = resolve_gpu(g)  # what the GPU knowledge base adds, each field with its source
        w = r.window
        gpus_.append(
            {
                "index": g.index,
                "name": g.name,
                "vendor": g.vendor,
                "compute_capability": r.compute_capability if g.vendor == "nvidia" else None,
                "gfx_arch": r.gfx,
                "mig_mode": g.mig_mode,
                "catalogue_match": r.match,
                "driver_window": (
                    {"first_branch": w.first_branch, "last_branch": w.last_branch}
                    if w is not None
                    else None
                ),
                "sources": dict(r.sources),
            }
        )
    return {
        "os": facts.os.family,
        "distro": facts.os.distro_id,
        "glibc": facts.os.glibc,
        "macos": facts.os.macos_version,
        "wsl": facts.os.wsl,
        "arch": facts.python.machine or facts.cpu.architecture,
        "cpu_arch": facts.cpu.architecture,
        "python": facts.python.version,
        "free_threaded": facts.python.free_threaded,
        "rosetta": facts.python.rosetta,
        "nvidia_driver": nv.driver_version if nv else None,
        "cuda_driver": nv.cuda_driver_version if nv else None,
        "apple_chip": facts.apple.chip if facts.apple else None,
        "gpus": gpus_,
    }
