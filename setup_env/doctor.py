"""The doctor: a pure function (facts, plan) -> findings.

Each :class:`Finding` has a stable ``code``, a severity, a one-line title, the evidence (which
facts show it) and the fix: a sentence and, where one exists, the exact command. Commands are
built only from validated parts (the planner's command, which the planner builds from validated
parts; paths and values from the facts only after they pass a strict pattern and are quoted).

Nothing here touches the machine or prints. Knowledge about wheels (driver minimums, the
architectures compiled into each wheel, companion versions) comes from the bundled matrix
(``setup_env.matrix``) through :class:`Knowledge`, so a test can hand in its own.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from setup_env.facts import Facts, Gpu, InstalledPackage, Severity

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}

# Values from the outside world that may appear inside a printed command.
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+@:=-]{1,400}$")


@dataclass(frozen=True)
class Finding:
    code: str  # stable id: "cpu-build-on-gpu", "cuda-newer-than-driver", ...
    severity: Severity
    title: str
    evidence: tuple[str, ...] = ()
    fix: Optional[str] = None  # what to do, in words
    command: Optional[str] = None  # the exact command, when one does it
    details: dict[str, str] = field(default_factory=dict)


# --- knowledge from the matrix ---------------------------------------------------------------


def _vtuple(text: Optional[str]) -> tuple[int, ...]:
    if not text:
        return ()
    m = re.match(r"^\s*(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in m.group(1).split(".")) if m else ()


class _MatrixKnowledge:
    """The doctor's view of a :class:`setup_env.matrix.Matrix` (the real, typed API)."""

    def __init__(self, matrix: Any) -> None:
        self.matrix = matrix

    def driver_minimum(self, cuda: str, os_family: str) -> Optional[tuple[str, str]]:
        got = self.matrix.driver_minimum(cuda, "windows" if os_family == "windows" else "linux")
        return (str(got[0]), str(got[1])) if got else None

    def wheel_arches(
        self, torch_version: str, variant: str, platform: str
    ) -> Optional[tuple[str, ...]]:
        got = self.matrix.wheel_arches(torch_version, variant, platform)  # sm_XY / compute_XY
        return tuple(got) if got else None

    def companions(self, torch_version: str) -> Optional[dict[str, str]]:
        """Exact versions where a source names one, else the release pattern (``0.29.*``) the
        matrix pins the companion with."""
        out: dict[str, str] = dict(self.matrix.companions(torch_version))
        base = torch_version.split("+", 1)[0]
        rel = self.matrix.release(base) if _vtuple(base) else None
        for name, comp in rel.companions.items() if rel is not None else ():
            if name not in out and comp.spec and comp.spec.startswith("=="):
                out[name] = comp.spec[2:]
        return out or None


_LOADED: dict[tuple[str, str], Optional[_MatrixKnowledge]] = {}


def matrix_knowledge() -> Optional[_MatrixKnowledge]:
    """The wheel matrix in use (``setup_env.matrix.load_matrix()``: $SETUP_ENV_MATRIX, a refreshed
    copy or the bundled data), loaded once per process and location; None when it can't be read
    (the doctor still runs, knowing less)."""
    import os

    try:
        from setup_env import matrix as matrix_mod
    except ImportError:
        return None
    key = (os.environ.get(matrix_mod.ENV_VAR, ""), str(matrix_mod.user_matrix_path()))
    if key not in _LOADED:
        try:
            _LOADED[key] = _MatrixKnowledge(matrix_mod.load_matrix())
        except (matrix_mod.MatrixError, OSError, ValueError):
            _LOADED[key] = None
    return _LOADED[key]


class Knowledge:
    """What the doctor needs to know about wheels and drivers. The default reads the wheel matrix
    in use (:func:`matrix_knowledge`); a test may hand in any object with the three methods.
    Every method answers None when the data doesn't say."""

    def __init__(self, matrix: Any = None) -> None:
        self._matrix = matrix
        self._loaded = matrix is not None

    def _m(self) -> Any:
        if not self._loaded:
            self._loaded = True
            self._matrix = matrix_knowledge()
        return self._matrix

    def driver_minimum(self, cuda: str, os_family: str) -> Optional[tuple[str, str]]:
        """(minor-version-compatibility floor, full-compatibility minimum) driver for a CUDA
        version (``"12.6"``) on ``os_family``, or None."""
        fn = getattr(self._m(), "driver_minimum", None)
        if fn is None:
            return None
        try:
            got = fn(cuda, os_family)
        except (KeyError, ValueError, LookupError):
            return None
        if isinstance(got, tuple) and len(got) == 2:
            return (str(got[0]), str(got[1]))
        return None

    def wheel_arches(
        self, torch_version: str, variant: str, platform: str
    ) -> Optional[tuple[str, ...]]:
        """The architectures compiled into a wheel (``("sm_75", "sm_80", "compute_90")``; other
        spellings ``"8.6"``, ``"9.0+PTX"``, ``"sm_90a"`` are understood too)."""
        fn = getattr(self._m(), "wheel_arches", None)
        if fn is None:
            return None
        try:
            got = fn(torch_version, variant, platform)
        except (KeyError, ValueError, LookupError):
            return None
        return tuple(str(a) for a in got) if got else None

    def companions(self, torch_version: str) -> Optional[dict[str, str]]:
        """{"torchvision": "0.28.0", "torchaudio": "2.11.0"} (or "0.29.*") for a torch release."""
        fn = getattr(self._m(), "companions", None)
        if fn is None:
            return None
        try:
            got = fn(torch_version)
        except (KeyError, ValueError, LookupError):
            return None
        return {str(k): str(v) for k, v in dict(got).items()} if got else None


# --- helpers ---------------------------------------------------------------------------------


def _cuda_of(pkg: InstalledPackage) -> Optional[str]:
    if pkg.cuda:
        return pkg.cuda
    m = re.match(r"^cu(\d+)(\d)$", pkg.variant or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def _platform(facts: Facts) -> str:
    arch = (facts.cpu.architecture or facts.python.machine or "").lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    if facts.os.family == "windows":
        return "windows_x86_64" if arch in ("", "x86_64") else f"windows_{arch}"
    if facts.os.family == "darwin":
        return "macos_arm64" if arch in ("aarch64", "arm64") else "macos_x86_64"
    return f"linux_{arch or 'x86_64'}"


def _nvidia_gpus(facts: Facts) -> tuple[Gpu, ...]:
    return facts.nvidia.gpus if facts.nvidia is not None else ()


def _parse_arch(token: str) -> Optional[tuple[int, int, str]]:
    """ "sm_86" / "8.6" / "8.6+PTX" / "sm_90a" / "compute_90" -> (major, minor, kind) with kind
    "sass", "ptx", "sass+ptx" or "specific" (arch-specific targets run only on that arch)."""
    t = token.strip().lower()
    ptx = t.endswith("+ptx")
    t = t[:-4] if ptx else t
    m = re.match(r"^(?:sm_|compute_)?(\d+)\.?(\d)([af]?)$", t)
    if not m:
        return None
    kind = "ptx" if token.strip().lower().startswith("compute_") else "sass"
    if m.group(3):
        kind = "specific"
    elif ptx:
        kind = "sass+ptx"
    return int(m.group(1)), int(m.group(2)), kind


def gpu_runs_on(cc: str, arches: Sequence[str]) -> Optional[str]:
    """How a GPU of compute capability ``cc`` runs a wheel with ``arches`` (VERIFIED.md §3):
    "sass" (native code for its major), "ptx" (JIT from PTX: works, slow first start) or None
    (no kernel image for it)."""
    ct = _vtuple(cc)
    if len(ct) < 2:
        return None
    major, minor = ct[0], ct[1]
    via_ptx = False
    for token in arches:
        parsed = _parse_arch(token)
        if parsed is None:
            continue
        a_major, a_minor, kind = parsed
        if kind == "specific":
            if (a_major, a_minor) == (major, minor):
                return "sass"
            continue
        if kind in ("sass", "sass+ptx") and a_major == major and a_minor <= minor:
            return "sass"
        if kind in ("ptx", "sass+ptx") and (a_major, a_minor) <= (major, minor):
            via_ptx = True
    return "ptx" if via_ptx else None


def _quote(value: str) -> Optional[str]:
    return shlex.quote(value) if _SAFE_PATH.match(value) else None


def _install_command(plan: Any, reinstall: bool) -> Optional[str]:
    """The plan's command; with ``reinstall`` the installed torch is removed first, since pip
    counts ``2.13.0+cpu`` as satisfying ``torch==2.13.0`` and would keep it."""
    command = getattr(plan, "command", "") or ""
    if not command or getattr(plan, "status", "none") == "none":
        return None
    if reinstall and re.match(r"^(python3? -m pip|pip3?|uv pip) install ", command):
        prefix = command.split(" install ", 1)[0]
        return f"{prefix} uninstall -y torch torchvision torchaudio && {command}"
    return command


# --- the examination -------------------------------------------------------------------------


def examine(
    facts: Facts, plan: Any = None, *, knowledge: Optional[Knowledge] = None
) -> tuple[Finding, ...]:
    """Every finding for these facts, most severe first. ``plan`` (a :class:`setup_env.plan.Plan`)
    supplies the install command for fixes that reinstall torch."""
    know = knowledge if knowledge is not None else Knowledge()
    out: list[Finding] = []
    torch = facts.package("torch")
    nv = _nvidia_gpus(facts)
    amd = facts.rocm.gpus if facts.rocm is not None else ()
    plan_variant = getattr(plan, "variant", None)

    if torch is None:
        command = _install_command(plan, reinstall=False)
        out.append(
            Finding(
                "torch-not-installed",
                "info",
                "PyTorch is not installed in this Python",
                evidence=("no torch distribution found on sys.path",),
                fix="install the planned build"
                if command
                else "run `setup-env plan` for the command",
                command=command,
            )
        )

    # A CPU-only build on a machine with a GPU it could use.
    if torch is not None and torch.variant == "cpu" and (nv or amd):
        gpu_names = ", ".join(sorted({g.name for g in (*nv, *amd)}))
        command = (
            _install_command(plan, reinstall=True) if plan_variant not in (None, "cpu") else None
        )
        out.append(
            Finding(
                "cpu-build-on-gpu",
                "error",
                f"torch {torch.version} is a CPU-only build, but this machine has a GPU",
                evidence=(
                    f"torch {torch.version} (variant cpu, from {torch.source or 'metadata'})",
                    f"GPU: {gpu_names}",
                ),
                fix=(
                    "replace it with the build the planner picks for this GPU"
                    if command
                    else "install a GPU build of torch: run `setup-env plan` for the exact command"
                ),
                command=command,
            )
        )

    # A build for the other GPU vendor.
    if torch is not None and _cuda_of(torch) and amd and not nv:
        out.append(
            Finding(
                "cuda-build-on-amd",
                "error",
                f"torch {torch.version} is built for NVIDIA CUDA, but the GPU is AMD",
                evidence=(
                    f"torch CUDA {_cuda_of(torch)}",
                    "GPU: " + ", ".join(g.name for g in amd),
                ),
                fix="install a ROCm build of torch",
                command=_install_command(plan, reinstall=True)
                if (plan_variant or "").startswith("rocm")
                else None,
            )
        )
    if torch is not None and torch.hip and nv and not amd:
        out.append(
            Finding(
                "rocm-build-on-nvidia",
                "error",
                f"torch {torch.version} is built for AMD ROCm, but the GPU is NVIDIA",
                evidence=(f"torch HIP {torch.hip}", "GPU: " + ", ".join(g.name for g in nv)),
                fix="install a CUDA build of torch",
                command=_install_command(plan, reinstall=True)
                if (plan_variant or "").startswith("cu")
                else None,
            )
        )

    if torch is not None:
        out.extend(_driver_findings(facts, torch, plan, know))
        out.extend(_arch_findings(facts, torch, plan, know))
        out.extend(_rocm_arch_findings(facts, torch, plan))
        out.extend(_companion_findings(facts, torch, know))
        out.extend(_toolkit_findings(facts, torch))
    out.extend(_shadow_findings(facts))
    out.extend(_environment_findings(facts, torch))
    out.extend(_platform_findings(facts))
    out.extend(_nvidia_state_findings(facts))

    # Warnings and errors the probes noted, unless a finding above already says it.
    codes = {f.code for f in out}
    for note in facts.notes:
        if note.severity in ("warning", "error") and note.code not in codes:
            codes.add(note.code)
            out.append(
                Finding(
                    note.code,
                    note.severity,
                    note.message,
                    evidence=(f"noted by {note.source or 'detection'}",),
                )
            )
    # Root causes (setup_env/causes.py) added and ranked above the symptoms they explain.
    from setup_env import causes

    return causes.apply(facts, plan, know, out)


def _driver_findings(
    facts: Facts, torch: InstalledPackage, plan: Any, know: Knowledge
) -> list[Finding]:
    cuda = _cuda_of(torch)
    nvidia = facts.nvidia
    if not cuda or nvidia is None or not (nvidia.driver_version or nvidia.cuda_driver_version):
        return []
    driver = nvidia.driver_version
    # Under WSL2 the driver is the Windows host's: judge it by the Windows minimums.
    need = know.driver_minimum(cuda, "windows" if facts.os.wsl else facts.os.family)
    too_old = False
    evidence = [f"torch {torch.version} is built with CUDA {cuda}"]
    if nvidia.cuda_driver_version:
        evidence.append(f"the driver supports CUDA up to {nvidia.cuda_driver_version}")
        dmax, tmax = _vtuple(nvidia.cuda_driver_version), _vtuple(cuda)
        if dmax and tmax and tmax[0] > dmax[0]:
            too_old = True
    if driver:
        evidence.append(f"NVIDIA driver {driver}")
        if need is not None and _vtuple(driver) and _vtuple(driver) < _vtuple(need[0]):
            too_old = True
            evidence.append(
                f"CUDA {cuda} needs driver >= {need[0]} (minor-version compatibility), "
                f">= {need[1]} for full compatibility"
            )
    if not too_old:
        if need is not None and driver and _vtuple(driver) < _vtuple(need[1]):
            return [
                Finding(
                    "cuda-minor-version-compat",
                    "info",
                    f"driver {driver} runs CUDA {cuda} through minor-version compatibility",
                    evidence=tuple(evidence),
                    fix=(
                        f"fine for torch; PTX JIT of newer kernels (e.g. some Triton/torch.compile "
                        f"paths) needs driver >= {need[1]}"
                    ),
                )
            ]
        return []
    plan_cuda = getattr(plan, "variant", None) or ""
    command = (
        _install_command(plan, reinstall=True)
        if plan_cuda.startswith("cu") and plan_cuda != torch.variant
        else None
    )
    floor = need[0] if need else None
    fix = f"upgrade the NVIDIA driver to >= {floor}" if floor else "upgrade the NVIDIA driver"
    if command:
        fix += ", or install the build that this driver runs"
    return [
        Finding(
            "cuda-newer-than-driver",
            "error",
            f"torch's CUDA {cuda} is newer than driver "
            f"{driver or nvidia.cuda_driver_version} supports",
            evidence=tuple(evidence),
            fix=fix,
            command=command,
            details={"min_driver": floor or ""},
        )
    ]


def _rocm_arch_findings(facts: Facts, torch: InstalledPackage, plan: Any) -> list[Finding]:
    """An installed ROCm torch without the AMD GPU's gfx target (the ROCm twin of the CUDA arch
    check; setup_env.rocmplan reads which gfx targets each ROCm wheel carries)."""
    if facts.rocm is None or not facts.rocm.gpus:
        return []
    from setup_env.resolve import resolve_gpu
    from setup_env.rocmplan import MISSING, installed_gap

    pairs = [(g.name, g.gfx_arch or resolve_gpu(g).gfx) for g in facts.rocm.gpus]
    gap = installed_gap(torch.version, torch.variant, pairs)
    if gap is None:
        return []
    plan_variant = getattr(plan, "variant", None)
    return [
        Finding(
            MISSING,
            "error",
            "the installed torch has no kernels for " + ", ".join(gap.gpus),
            evidence=(
                f"torch {gap.torch_version} ({gap.variant}) carries " + " ".join(gap.targets),
            ),
            fix=(
                "install the build the plan names"
                if plan_variant and plan_variant != torch.variant
                else f"build PyTorch from source with PYTORCH_ROCM_ARCH={';'.join(gap.missing)} "
                "(HSA_OVERRIDE_GFX_VERSION is an unsupported workaround)"
            ),
            command=_install_command(plan, reinstall=True)
            if plan_variant and plan_variant != torch.variant
            else None,
        )
    ]


def _arch_findings(
    facts: Facts, torch: InstalledPackage, plan: Any, know: Knowledge
) -> list[Finding]:
    cuda = _cuda_of(torch)
    from setup_env.resolve import compute_capability

    gpus = _nvidia_gpus(facts)
    if not cuda or not gpus or not torch.variant:
        return []
    base = torch.version.split("+", 1)[0]
    arches = know.wheel_arches(base, torch.variant, _platform(facts))
    if not arches:
        return []
    out: list[Finding] = []
    ptx: list[str] = []
    missing: list[str] = []
    for gpu in gpus:
        cc = compute_capability(gpu)  # as reported, else the catalogue's (setup_env.resolve)
        if cc is None:
            continue
        how = gpu_runs_on(cc, arches)
        label = f"GPU {gpu.index} {gpu.name} (sm_{cc.replace('.', '')})"
        if how is None:
            missing.append(label)
        elif how == "ptx":
            ptx.append(label)
    wheel = f"torch {torch.version} ({torch.variant}) has " + " ".join(arches)
    if missing:
        command = (
            _install_command(plan, reinstall=True)
            if getattr(plan, "variant", None) != torch.variant
            else None
        )
        out.append(
            Finding(
                "gpu-arch-not-in-wheel",
                "error",
                "the installed torch has no kernels for " + ", ".join(missing),
                evidence=(wheel, *missing),
                fix=(
                    "install a build whose architectures include this GPU"
                    + ("" if command else ": run `setup-env plan` for it")
                ),
                command=command,
            )
        )
    if ptx:
        out.append(
            Finding(
                "gpu-arch-ptx-only",
                "warning",
                "only PTX (JIT-compiled at first use) serves " + ", ".join(ptx),
                evidence=(wheel, *ptx),
                fix="works, but the first start is slow; a build with native kernels avoids it",
            )
        )
    return out


def _companion_findings(facts: Facts, torch: InstalledPackage, know: Knowledge) -> list[Finding]:
    out: list[Finding] = []
    torch_cuda = _cuda_of(torch)
    expected = know.companions(torch.version.split("+", 1)[0]) or {}
    for name in ("torchvision", "torchaudio"):
        pkg = facts.package(name)
        if pkg is None:
            continue
        pkg_cuda = _cuda_of(pkg)
        differ = (
            pkg.variant
            and torch.variant
            and pkg.variant != torch.variant
            and (pkg.variant == "cpu" or torch.variant == "cpu" or pkg_cuda != torch_cuda)
        )
        if differ:
            out.append(
                Finding(
                    "companion-build-mismatch",
                    "error",
                    f"{name} {pkg.version} is built for {pkg.variant}, "
                    f"torch {torch.version} for {torch.variant}",
                    evidence=(f"torch {torch.version}", f"{name} {pkg.version}"),
                    fix=f"reinstall {name} from the same index as torch ({torch.variant})",
                )
            )
        want = expected.get(name)
        if want and _vtuple(pkg.version.split("+", 1)[0])[:2] != _vtuple(want)[:2]:
            out.append(
                Finding(
                    "companion-version-mismatch",
                    "error",
                    f"{name} {pkg.version} does not belong to torch {torch.version} "
                    f"(expects {want})",
                    evidence=(
                        f"torch {torch.version}",
                        f"{name} {pkg.version}",
                        f"the release matrix pairs torch {torch.version.split('+')[0]} "
                        f"with {name} {want}",
                    ),
                    fix=f"install {name}=={want} from the same index as torch",
                )
            )
    return out


def _toolkit_findings(facts: Facts, torch: InstalledPackage) -> list[Finding]:
    cuda = _cuda_of(torch)
    if not cuda or not facts.toolkits:
        return []
    active = facts.toolkits[0]
    if _vtuple(active.version)[:1] == _vtuple(cuda)[:1]:
        return []
    match = next((t for t in facts.toolkits if _vtuple(t.version)[:1] == _vtuple(cuda)[:1]), None)
    command = None
    if match is not None and match.path:
        quoted = _quote(match.path)
        if quoted:
            command = f"export CUDA_HOME={quoted}"
    return [
        Finding(
            "nvcc-major-mismatch",
            "warning",
            f"nvcc is CUDA {active.version} but torch is built with CUDA {cuda}: building CUDA "
            "extensions (torch.utils.cpp_extension, pip installs that compile) will fail",
            evidence=(
                f"nvcc {active.full_version or active.version} ({active.source})",
                f"torch {torch.version} CUDA {cuda}",
            ),
            fix=(
                f"point CUDA_HOME at the CUDA {match.version} toolkit"
                if command and match
                else f"install a CUDA {cuda.split('.')[0]}.x toolkit for extension builds "
                "(running torch does not need one)"
            ),
            command=command,
        )
    ]


def _shadow_findings(facts: Facts) -> list[Finding]:
    out: list[Finding] = []
    for name in ("torch", "torchvision", "torchaudio"):
        installs = [p for p in facts.packages if p.name == name]
        hidden = [p for p in installs if p.shadowed]
        if not hidden:
            continue
        used = next((p for p in installs if not p.shadowed), None)
        evidence = (
            [f"used: {name} {used.version} at {used.location or used.source or '?'}"]
            if used
            else []
        )
        evidence += [
            f"shadowed: {name} {p.version} at {p.location or p.source or '?'}"
            f"{f' ({p.installer})' if p.installer else ''}"
            for p in hidden
        ]
        out.append(
            Finding(
                "several-installs",
                "warning",
                f"{len(installs)} installs of {name}: what runs depends on sys.path order",
                evidence=tuple(evidence),
                fix=(
                    "remove the shadowed install (pip uninstall it in the environment or user site "
                    "that owns it, or `conda remove` a conda one) so one build is left"
                ),
            )
        )
    return out


def _environment_findings(facts: Facts, torch: Optional[InstalledPackage]) -> list[Finding]:
    out: list[Finding] = []
    env = facts.environment
    ld = env.get("LD_LIBRARY_PATH")
    if ld and facts.os.family == "linux" and torch is not None and _cuda_of(torch):
        parts = [p for p in ld.split(":") if p]
        cuda_dirs = [p for p in parts if re.search(r"cuda|cudnn|nvidia", p, re.I)]
        if cuda_dirs and torch.installer != "conda":
            keep = [p for p in parts if p not in cuda_dirs]
            quoted = [_quote(p) for p in keep]
            if not keep:
                command: Optional[str] = "unset LD_LIBRARY_PATH"
            elif all(q is not None for q in quoted) and all(q == p for q, p in zip(quoted, keep)):
                command = "export LD_LIBRARY_PATH=" + ":".join(keep)
            else:
                command = None
            out.append(
                Finding(
                    "ld-library-path-cuda",
                    "warning",
                    "LD_LIBRARY_PATH puts system CUDA libraries ahead of the ones the torch wheel "
                    "ships (cuDNN/cuBLAS version mismatches, undefined symbols)",
                    evidence=tuple(f"LD_LIBRARY_PATH contains {d}" for d in cuda_dirs),
                    fix="drop the CUDA directories from LD_LIBRARY_PATH for Python",
                    command=command,
                )
            )
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    gpus = _nvidia_gpus(facts)
    if cvd is not None and gpus:
        visible = _visible_count(cvd, len(gpus))
        if visible == 0:
            out.append(
                Finding(
                    "cuda-visible-devices-hides-all",
                    "error",
                    "CUDA_VISIBLE_DEVICES hides every GPU from CUDA",
                    evidence=(f"CUDA_VISIBLE_DEVICES={cvd!r}", f"{len(gpus)} GPU(s) present"),
                    fix="unset it, or list the GPU indices or UUIDs to use",
                    command="unset CUDA_VISIBLE_DEVICES",
                )
            )
    return out


def _visible_count(value: str, n_gpus: int) -> int:
    """How many devices CUDA sees under CUDA_VISIBLE_DEVICES: the list is read up to its first
    invalid entry (an index out of range, a negative number, garbage)."""
    count = 0
    seen: set[str] = set()
    for raw in value.split(","):
        item = raw.strip()
        if re.fullmatch(r"\d+", item):
            if int(item) >= n_gpus or item in seen:
                break
        elif not re.match(r"^(GPU|MIG)-[0-9a-fA-F-]+", item):
            break
        seen.add(item)
        count += 1
    return count


def _platform_findings(facts: Facts) -> list[Finding]:
    out: list[Finding] = []
    if facts.python.rosetta:
        out.append(
            Finding(
                "rosetta-python",
                "error",
                "this Python is x86_64 running under Rosetta 2 on an Apple Silicon Mac",
                evidence=(
                    f"Python machine {facts.python.machine or 'x86_64'}",
                    "CPU "
                    + (facts.cpu.model or (facts.apple.chip if facts.apple else None) or "Apple"),
                ),
                fix=(
                    "use a native arm64 Python (python.org universal2, Homebrew under "
                    "/opt/homebrew, or an osx-arm64 conda): x86_64 torch stops at 2.2.2 "
                    "and has no MPS"
                ),
            )
        )
    mac = _vtuple(facts.os.macos_version)
    apple_silicon = (
        facts.apple is not None
        or (facts.cpu.model or "").startswith("Apple M")
        or (facts.python.machine == "arm64" and facts.os.family == "darwin")
    )
    if facts.os.family == "darwin" and mac and apple_silicon and mac < (14,):
        out.append(
            Finding(
                "macos-too-old-for-mps",
                "warning",
                f"macOS {facts.os.macos_version} is too old for current PyTorch on Apple Silicon",
                evidence=(
                    f"macOS {facts.os.macos_version}",
                    "torch >= 2.12 ships only macosx_14_0_arm64 wheels, and MPS needs macOS 14+",
                ),
                fix="upgrade macOS to 14 or newer; until then torch <= 2.11 is the newest that "
                "installs",
            )
        )
    return out


def _nvidia_state_findings(facts: Facts) -> list[Finding]:
    out: list[Finding] = []
    nvidia = facts.nvidia
    if nvidia is not None and nvidia.error:
        # The probe's code decides (facts written before error_code existed: their prose).
        code = nvidia.error_code
        mismatch = code == "driver-library-mismatch" or (
            code is None and "mismatch" in nvidia.error.lower()
        )
        out.append(
            Finding(
                "driver-library-mismatch" if mismatch else "driver-unusable",
                "error",
                (
                    "the NVIDIA kernel module and user-space library differ (typically after an "
                    "unattended driver upgrade)"
                )
                if mismatch
                else "the NVIDIA driver is unusable",
                evidence=(nvidia.error,),
                fix=(
                    "reboot so the new kernel module loads"
                    if mismatch
                    else "check `dmesg` and reinstall the driver"
                ),
                command="sudo reboot" if mismatch else None,
            )
        )
    migs = [g for g in _nvidia_gpus(facts) if g.mig_mode]
    if migs:
        out.append(
            Finding(
                "mig-enabled",
                "warning",
                "MIG is enabled: CUDA sees MIG instances, not whole GPUs, and a process uses one",
                evidence=tuple(f"GPU {g.index} {g.name}: MIG mode on" for g in migs),
                fix=(
                    "select an instance with CUDA_VISIBLE_DEVICES=MIG-<uuid> from `nvidia-smi -L`, "
                    "or disable MIG (`sudo nvidia-smi -i <gpu> -mig 0`)"
                ),
                command="nvidia-smi -L",
            )
        )
    has_driver = nvidia is not None and bool(nvidia.driver_version or nvidia.gpus)
    cloud = facts.cloud
    if (
        cloud is not None
        and cloud.expected_gpus
        and (cloud.expected_gpu_model or "").upper().startswith("NVIDIA")
        and not has_driver
    ):
        out.append(
            Finding(
                "gpu-without-driver",
                "error",
                f"this {cloud.provider} {cloud.instance_type or 'instance'} has "
                f"{cloud.expected_gpus}x {cloud.expected_gpu_model}, "
                "but no NVIDIA driver is loaded",
                evidence=(
                    f"the cloud catalogue lists {cloud.expected_gpus}x "
                    f"{cloud.expected_gpu_model} for {cloud.instance_type}",
                    "no NVIDIA driver found",
                ),
                fix="install the NVIDIA driver (the cloud advice in `setup-env check` names the "
                "route for this image); until then torch can only use the CPU",
            )
        )
    if facts.toolkits and not has_driver and facts.os.family in ("linux", "windows"):
        tk = facts.toolkits[0]
        out.append(
            Finding(
                "toolkit-without-driver",
                "info",
                f"CUDA toolkit {tk.version} is installed, but there is no NVIDIA driver or GPU",
                evidence=(
                    f"nvcc {tk.full_version or tk.version} ({tk.source or tk.path or 'found'})",
                    "no NVIDIA driver found",
                ),
                fix=(
                    "nothing to do for torch: the toolkit does not decide the wheel (wheels "
                    "carry their own CUDA runtime), and without a driver torch runs on the CPU"
                ),
            )
        )
    return out
