"""Root causes: the findings that explain a symptom, ranked above it, and the whole route to a
working build when none fits as things are.

Pure: facts (+ the plan, + the wheel matrix: ``setup_env.knowledge.matrix.Matrix`` or None) in,
findings out. Used by ``doctor.examine`` (this machine, a captured one) and by ``diagnose`` (a
pasted report) alike. The messages torch printed inside a pasted report reach this module as
notes with source ``collect_env:warning`` (see :func:`setup_env.probe.report.read_messages`).

Knowledge lives elsewhere: driver minimums, architectures per wheel and releases come from the
wheel matrix and ``knowledge.cuda`` (which GPU runs which arch list); only the drivers of the CUDA
toolkits older than the matrix's ``cuda`` rows (which start at 11.6) are tabled here, each row with
its source, until the matrix carries them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

from setup_env._record import Record, record, replace
from setup_env.facts import Facts, Gpu, InstalledPackage
from setup_env.knowledge.cuda import MVC_SINCE, driver_fit, sm_of, version_tuple
from setup_env.knowledge.variant import CPU, Variant

if TYPE_CHECKING:
    from setup_env.knowledge.matrix import Matrix

# What each cudaGetDeviceCount() error means, and the fix (CUDA runtime API, cudaError_t).
_DEVICE_COUNT_ERRORS: dict[int, tuple[str, str]] = {
    802: (
        "the system is not yet initialized (on NVSwitch systems: the Fabric Manager is not "
        "running)",
        "start nvidia-fabricmanager (`sudo systemctl enable --now nvidia-fabricmanager`)",
    ),
    803: (
        "the CUDA driver library and the kernel module differ (a libcuda from a container, a "
        "cuda-compat package, or a driver upgrade without a reboot)",
        "reboot after a driver upgrade; drop cuda-compat directories from LD_LIBRARY_PATH",
    ),
    804: (
        "forward compatibility was attempted on a GPU that does not support it: a cuda-compat "
        "libcuda newer than the driver is loaded, which works only on data-center GPUs",
        "remove the cuda-compat directory (e.g. /usr/local/cuda/compat) from LD_LIBRARY_PATH, or "
        "upgrade the NVIDIA driver to one that supports torch's CUDA",
    ),
    999: (
        "an unknown CUDA error (often after suspend/resume, or a stuck nvidia_uvm module)",
        "reboot, or reload the module: `sudo rmmod nvidia_uvm && sudo modprobe nvidia_uvm`",
    ),
}

# Ranking: these explain other findings and come first (within a severity), in this order.
CAUSES: tuple[str, ...] = (
    "gpu-too-old",
    "jetson-desktop-wheel",
    "driver-missing",
    "cuda-newer-than-driver",
    "cpu-build-on-gpu",
    "cuda-build-on-amd",
    "cuda-build-on-intel",
    "rocm-build-on-nvidia",
    "gpu-arch-not-in-wheel",
    "rocm-gfx-not-in-wheel",
    "rosetta-python",
    "cuda-init-error",
    "driver-library-mismatch",
    "driver-unusable",
    "nvidia-libs-mismatch",
    "library-load-failed",
    "several-installs",
    "macos-too-old-for-mps",
)
# These are what the user sees, explained by a cause above when one is found.
SYMPTOMS: frozenset[str] = frozenset(
    {
        "torch-cuda-unavailable",
        "torch-xpu-unavailable",
        "no-kernel-image",
        "mps-unavailable",
        "report-truncated",
    }
)

_SEVERITY = {"error": 0, "warning": 1, "info": 2}


def _rank_key(f: Any) -> tuple[int, int, int]:
    code = f.code
    base = "cuda-init-error" if code.startswith("cuda-init-error") else code
    prio = CAUSES.index(base) if base in CAUSES else len(CAUSES)
    return (_SEVERITY.get(f.severity, 3), 1 if code in SYMPTOMS else 0, prio)


def rank(findings: Sequence[Any]) -> tuple[Any, ...]:
    """Most severe first; within a severity the root causes (in :data:`CAUSES` order) above the
    other findings, and the symptoms they explain last."""
    return tuple(sorted(findings, key=_rank_key))


# --- helpers -----------------------------------------------------------------------------------


def _vt(text: Optional[str]) -> tuple[int, ...]:
    return version_tuple(text) or ()


def _cuda_of(pkg: InstalledPackage) -> Optional[str]:
    if pkg.cuda:
        m = re.match(r"^(\d+)\.(\d+)", pkg.cuda)
        if m:
            return f"{m.group(1)}.{m.group(2)}"
    return pkg.variant.cuda if pkg.variant is not None else None


def is_jetson(facts: Facts) -> bool:
    """An NVIDIA Jetson: its L4T kernel ("5.10.120-tegra"), or a note saying so."""
    return (
        facts.jetson is not None
        or bool(facts.os.kernel and "tegra" in facts.os.kernel)
        or any(n.code == "jetson" for n in facts.notes)
    )


def _messages(facts: Facts) -> list[Any]:
    """torch's messages pasted with a report, read back from their notes."""
    notes = [n for n in facts.notes if n.code.startswith("torch-message-")]
    if not notes:
        return []
    from setup_env.probe.report import read_messages

    out: list[Any] = []
    for n in notes:
        out.extend(read_messages(n.message))
    return out


def driver_floor(cuda: str, os_family: str, matrix: Optional[Matrix]) -> Optional[str]:
    """The lowest driver that runs CUDA ``cuda`` (its minor-version-compatibility floor where it
    has one), from the matrix's driver rows (CUDA 8.0 on), by :func:`knowledge.cuda.driver_fit`."""
    if matrix is None:
        return None
    fit = driver_fit(None, cuda, os_family, matrix.cuda)
    return (fit.mvc_floor or fit.toolkit_min) if fit.toolkit_min is not None else None


def _plans_cuda(plan: Any) -> bool:
    variant = plan.variant if plan is not None else None
    return variant is not None and variant.is_cuda


def _command(plan: Any, reinstall: bool = True) -> Optional[str]:
    from setup_env.decide.model import install_command

    return install_command(plan, reinstall)


# --- findings ------------------------------------------------------------------------------------


def apply(
    facts: Facts, plan: Any, matrix: Optional[Matrix], existing: Sequence[Any]
) -> tuple[Any, ...]:
    """The doctor's findings with the root causes added (a more precise one replaces the
    doctor's of the same code), ranked by :func:`rank`."""
    extra = findings(facts, plan, matrix, existing)
    replaced = {f.code for f in extra}
    if "driver-missing" in replaced:
        # Not "nothing to do, torch runs on the CPU": the driver is the cause to fix.
        replaced |= {"toolkit-without-driver"}
    if is_jetson(facts):
        # A Jetson's driver comes with its L4T release: no nvidia-smi is no missing driver.
        replaced |= {"toolkit-without-driver", "gpu-without-driver"}
    kept = [f for f in existing if f.code not in replaced]
    return rank([*kept, *extra])


def findings(
    facts: Facts, plan: Any, matrix: Optional[Matrix], existing: Sequence[Any]
) -> list[Any]:
    """The root-cause findings the doctor's checks do not make, and the existing ones made more
    precise (returned in place of them: same code). ``existing``: the doctor's findings."""
    from setup_env.decide.model import Finding

    codes = {f.code for f in existing}
    out: list[Any] = []
    torch = facts.package("torch")
    messages = _messages(facts)
    os_family = facts.os.driver_os

    # 1. The installed build's CUDA needs a newer driver (the matrix's driver rows, CUDA 8.0 on,
    #    judged by setup_env.knowledge.cuda; and torch's own "driver too old" message).
    too_old = [m for m in messages if m.kind == "driver-too-old"]
    cuda = _cuda_of(torch) if torch is not None else None
    if (cuda or too_old) and "cuda-newer-than-driver" not in codes:
        driver = facts.nvidia.driver_version if facts.nvidia is not None else None
        fit = driver_fit(driver, cuda, os_family, matrix.cuda) if cuda and matrix else None
        floor = (fit.mvc_floor or fit.toolkit_min) if fit is not None else None
        no_mvc = cuda is not None and _vt(cuda)[:2] < MVC_SINCE
        if (driver and fit is not None and fit.compat == "too-old") or too_old:
            evidence = (
                [f"torch {torch.version} is built with CUDA {cuda}"]  # type: ignore[union-attr]
                if cuda
                else []
            )
            if driver:
                evidence.append(f"NVIDIA driver {driver}")
            for m in too_old:
                evidence.append(
                    f"torch says: {m.text} (a driver for CUDA {m.cuda_driver} at most) "
                    f"[collect_env:warning]"
                )
            if floor:
                evidence.append(
                    f"CUDA {cuda} needs driver >= {floor}"
                    + (
                        " (CUDA 11.0 and older have no minor-version compatibility: each "
                        "toolkit has its own minimum)"
                        if no_mvc
                        else ""
                    )
                )
            command = _command(plan) if _plans_cuda(plan) else None
            out.append(
                Finding(
                    "cuda-newer-than-driver",
                    "error",
                    (
                        f"torch's CUDA {cuda} needs a newer NVIDIA driver than "
                        + (driver or f"this one (CUDA {too_old[0].cuda_driver})")
                    )
                    if cuda
                    else "the NVIDIA driver is too old for the installed torch (it runs CUDA "
                    f"{too_old[0].cuda_driver} at most)",
                    evidence=tuple(evidence),
                    fix=(
                        f"upgrade the NVIDIA driver to >= {floor}"
                        if floor
                        else "upgrade the NVIDIA driver"
                    )
                    + (", or install the build that this driver runs" if command else ""),
                    command=command,
                    details={"min_driver": floor or ""},
                )
            )
    elif too_old and "cuda-newer-than-driver" in codes:
        out.extend(
            replace(
                f,
                evidence=(
                    *f.evidence,
                    *(f"torch says: {m.text} [collect_env:warning]" for m in too_old),
                ),
            )
            for f in existing
            if f.code == "cuda-newer-than-driver"
        )

    # 2. A GPU too old for every wheel, or one the installed wheel lacks (torch's messages).
    for m in messages:
        if m.kind == "gpu-too-old" and "gpu-too-old" not in codes:
            codes.add("gpu-too-old")
            out.append(
                Finding(
                    "gpu-too-old",
                    "error",
                    f"{m.gpu} (compute capability {m.cc}) is older than the installed torch "
                    f"supports" + (f" (its minimum is {m.min_cc})" if m.min_cc else ""),
                    evidence=(f"torch says: {m.text} [collect_env:warning]",),
                    fix=_old_gpu_fix(m.cc, facts, matrix),
                )
            )
        if m.kind == "arch-not-compatible" and "gpu-arch-not-in-wheel" not in codes:
            codes.add("gpu-arch-not-in-wheel")
            sm = sm_of(m.cc)
            command = _command(plan) if _plans_cuda(plan) else None
            out.append(
                Finding(
                    "gpu-arch-not-in-wheel",
                    "error",
                    f"the installed torch has no kernels for {m.gpu} ({sm})",
                    evidence=(
                        f"torch says: {m.text} [collect_env:warning]",
                        "the installed wheel's architectures: " + " ".join(m.arches),
                    ),
                    fix=f"install a build whose architectures include {sm}"
                    + ("" if command else ": run `setup-env plan` for it"),
                    command=command,
                    details={"gpu_arch": sm, "wheel_arches": " ".join(m.arches)},
                )
            )
    if any(m.kind == "no-kernel-image" for m in messages) and "gpu-arch-not-in-wheel" not in codes:
        out.append(
            Finding(
                "no-kernel-image",
                "error",
                "CUDA said: no kernel image is available for execution on the device",
                evidence=tuple(
                    f"torch says: {m.text} [collect_env:warning]"
                    for m in messages
                    if m.kind == "no-kernel-image"
                ),
                fix="the installed build lacks this GPU's architecture (or the GPU is too old for "
                "it): install the build `setup-env plan` picks for this GPU",
            )
        )

    # 3. CUDA could not count the devices: the error code names the cause.
    for m in messages:
        if m.kind == "device-count-error" and m.error is not None:
            what, fix = _DEVICE_COUNT_ERRORS.get(
                m.error, (f"CUDA error {m.error} while counting the GPUs", "check `nvidia-smi`")
            )
            out.append(
                Finding(
                    f"cuda-init-error-{m.error}",
                    "error",
                    f"CUDA could not start: {what}",
                    evidence=(f"torch says: {m.text} [collect_env:warning]",),
                    fix=fix,
                )
            )

    # 4. A Jetson: only NVIDIA's JetPack builds of torch use its GPU (before JetPack 7); the
    #    rule and the JetPack-matched fix live in setup_env.decide.jetsonplan.
    if torch is not None and is_jetson(facts):
        from setup_env.decide.jetsonplan import installed_finding

        jf = installed_finding(facts, torch.version, torch.variant)
        if jf is not None:
            out.append(
                Finding(
                    jf.code,
                    "error" if jf.severity == "error" else "info",
                    jf.title,
                    evidence=(*jf.evidence, f"L4T kernel {facts.os.kernel or '?'}"),
                    fix=jf.fix,
                    command="python3 -m pip uninstall -y torch torchvision torchaudio"
                    if jf.severity == "error"
                    else None,
                )
            )

    # 5. ROCm: the wheel has no code for the GPU's gfx target (the doctor's own finding, with
    #    the GPU resolved and the planned command, stands when it made one).
    if any(m.kind == "rocm-no-kernel" for m in messages) and "rocm-gfx-not-in-wheel" not in codes:
        amd = facts.rocm.gpus if facts.rocm is not None else ()
        gfx = sorted({g.gfx_arch for g in amd if g.gfx_arch})
        out.append(
            Finding(
                "rocm-gfx-not-in-wheel",
                "error",
                "the installed ROCm torch has no code for "
                + (", ".join(gfx) if gfx else "this AMD GPU"),
                evidence=tuple(
                    f"torch says: {m.text} [collect_env:warning]"
                    for m in messages
                    if m.kind == "rocm-no-kernel"
                ),
                fix="install a ROCm build whose gfx list has this GPU (check "
                "torch.cuda.get_arch_list()), or build PyTorch with PYTORCH_ROCM_ARCH set to it; "
                "HSA_OVERRIDE_GFX_VERSION (report a listed target) is an unsupported workaround",
            )
        )

    # 6. Libraries: torch could not load one (cuDNN, NCCL, cuBLAS).
    for m in messages:
        if m.kind == "library-load":
            out.append(
                Finding(
                    "library-load-failed",
                    "error",
                    f"torch could not load {m.library}",
                    evidence=(f"torch says: {m.text} [collect_env:warning]",),
                    # Windows wheels carry their CUDA DLLs in torch\lib and find others on PATH
                    fix="reinstall torch so the CUDA and cuDNN DLLs in its torch\\lib folder "
                    "come back, and take other CUDA/cuDNN folders off PATH"
                    if facts.os.family == "windows"
                    else "reinstall torch so its own nvidia-* libraries come back, and drop "
                    "system CUDA/cuDNN directories from LD_LIBRARY_PATH",
                )
            )
            break

    # 8. GPU intent without a driver (a report's "no-nvidia-driver" note: torch's "Found no NVIDIA
    #    driver", or an empty driver line beside a CUDA build from PyTorch's index, a toolkit, a
    #    GPU named in a warning): the driver is missing or not loaded.
    note = next((n for n in facts.notes if n.code == "no-nvidia-driver"), None)
    if note is not None and "driver-missing" not in codes:
        codes.add("driver-missing")
        need = plan.min_driver if plan is not None and _plans_cuda(plan) else None
        fix, command = _driver_install(facts, need)
        out.append(
            Finding(
                "driver-missing",
                "error",
                "the NVIDIA driver is missing or not loaded: torch cannot reach the GPU",
                evidence=tuple(note.message.split("; ")),
                fix=fix,
                command=command,
                details={"min_driver": need or ""},
            )
        )

    # 7. MPS unavailable: which of macOS or the interpreter is the cause.
    for m in messages:
        if m.kind == "mps-unavailable" and "mps-unavailable" not in codes:
            codes.add("mps-unavailable")
            mac = facts.os.macos_version
            why = "MPS is not available to this torch"
            if facts.python.rosetta:
                why += ": the Python is x86_64 under Rosetta (see rosetta-python)"
            elif m.min_macos and mac and _vt(mac) < _vt(m.min_macos):
                why += f": macOS {mac} is older than the {m.min_macos} it needs"
            out.append(
                Finding(
                    "mps-unavailable",
                    "warning",
                    why,
                    evidence=(f"torch says: {m.text} [collect_env:warning]",),
                    fix="use a native arm64 Python on macOS 14 or later",
                )
            )
    return out


def _driver_install(facts: Facts, need: Optional[str]) -> tuple[str, Optional[str]]:
    """How to install or load the NVIDIA driver on this OS: (fix in words, command or None)."""
    at_least = f" (>= {need} for the planned build)" if need else ""
    if facts.os.wsl and facts.os.wsl >= 2:
        return (
            "install the NVIDIA driver on the Windows host" + at_least + ", not inside WSL2 "
            "(WSL2 reaches it through /usr/lib/wsl/lib); then `wsl --shutdown` and reopen",
            None,
        )
    if facts.os.family == "windows":
        return (
            "install the NVIDIA driver" + at_least + " from https://www.nvidia.com/Download/"
            "index.aspx (or the NVIDIA App), then reopen the terminal",
            None,
        )
    distro = facts.os.distro_id or ""
    if distro in ("ubuntu", "debian"):
        fix = (
            "install the driver" + at_least + " (`sudo ubuntu-drivers install` on Ubuntu, the "
            "nvidia-driver package on Debian); if it is installed, load it: `sudo modprobe "
            "nvidia` (`dmesg` says whether Secure Boot refused the module), or reboot"
        )
        return fix, "sudo ubuntu-drivers install" if distro == "ubuntu" else None
    return (
        "install the distribution's NVIDIA driver package" + at_least + "; if it is installed, "
        "load it: `sudo modprobe nvidia` (`dmesg` says whether Secure Boot refused the module), "
        "or reboot",
        "sudo modprobe nvidia",
    )


def _old_gpu_fix(cc: Optional[str], facts: Facts, matrix: Optional[Matrix]) -> str:
    newest = newest_with_arch(cc, facts, matrix)
    if newest is not None:
        sm = sm_of(cc)
        return f"install torch {newest[0]}+{newest[1]}: the newest build with {sm}"
    return (
        "no prebuilt torch in the data (1.13 and later) has kernels for this GPU: build torch "
        f"from source with TORCH_CUDA_ARCH_LIST={cc}, or run on the CPU"
    )


def library_findings(facts: Facts, libraries: dict[str, str]) -> list[Any]:
    """pip's nvidia-* libraries built for another CUDA major than torch (from a report's
    library list)."""
    from setup_env.decide.model import Finding

    torch = facts.package("torch")
    cuda = _cuda_of(torch) if torch is not None else None
    if not cuda:
        return []
    major = cuda.split(".")[0]
    wrong = sorted(
        f"{name}=={ver}"
        for name, ver in libraries.items()
        if (m := re.match(r"^nvidia-[a-z0-9-]+-cu(\d+)$", name)) and m.group(1) != major
    )
    if not wrong:
        return []
    return [
        Finding(
            "nvidia-libs-mismatch",
            "error",
            f"pip's NVIDIA libraries are for another CUDA than torch's {cuda}",
            evidence=(f"torch {torch.version} CUDA {cuda}", *wrong),  # type: ignore[union-attr]
            fix=f"uninstall them; torch {torch.version} brings its own CUDA {major} libraries",  # type: ignore[union-attr]
            command="python -m pip uninstall -y " + " ".join(w.split("==")[0] for w in wrong),
        )
    ]


# --- the route -----------------------------------------------------------------------------------


@record
class Step(Record):
    """One step of the route to a working install: what to change, in words."""

    kind: str  # "python" | "driver" | "macos" | "torch"
    summary: str


@record
class Route(Record):
    """Ranked steps that together reach a named build."""

    steps: tuple[Step, ...]
    torch: str
    variant: Variant


def _sm(cc: str) -> str:
    return sm_of(cc)


def newest_with_arch(
    cc: Optional[str], facts: Facts, matrix: Optional[Matrix], driver: Optional[str] = None
) -> Optional[tuple[str, Variant, str]]:
    """(torch version, variant, driver floor) of the newest build in the matrix with native
    kernels for ``cc`` on this platform; among that release's builds, one ``driver`` already
    runs, else the one needing the lowest driver."""
    from setup_env.decide.model import wheel_platform
    from setup_env.knowledge.cuda import parse_cc, runs_on

    target = parse_cc(cc)
    if matrix is None or target is None:
        return None
    plat = wheel_platform(facts)
    os_family = facts.os.driver_os
    for rel in reversed(matrix.releases):
        variants = set(rel.index_variants(plat))
        pv = rel.pypi_variant.get(plat)
        if pv is not None:
            variants.add(pv.variant)
        cands: list[tuple[tuple[int, ...], Variant, str]] = []
        for variant in variants:
            if not variant.is_cuda:
                continue
            b = matrix.build(variant, rel.version, plat)
            if b is None or runs_on(target, b.arches) != "sass":
                continue
            floor = driver_floor(b.cuda, os_family, matrix) or ""
            cands.append((_vt(floor), variant, floor))
        if not cands:
            continue
        fits = [c for c in cands if driver and _vt(driver) >= c[0]]
        pick = max(fits, key=lambda c: c[1]) if fits else min(cands)
        return str(rel.version), pick[1], pick[2]
    return None


def route(facts: Facts, plan: Any, matrix: Optional[Matrix]) -> Optional[Route]:
    """When no build fits as things are (or only a fallback does), the ranked steps that reach
    the newest build for this machine's GPU (or, without an NVIDIA GPU, the newest build for the
    platform), and that build. None when the plan already fits, or nothing is known enough."""
    if plan is not None and getattr(plan, "status", "none") == "ok":
        return None
    if not facts.python.version or facts.os.family == "other" or is_jetson(facts):
        return None
    if matrix is None:
        return None
    from setup_env.decide.model import wheel_platform

    py = facts.python.version
    steps: list[Step] = []
    gpus: list[Gpu] = [
        g for g in (facts.nvidia.gpus if facts.nvidia else ()) if g.compute_capability
    ]
    driver = facts.nvidia.driver_version if facts.nvidia is not None else None
    unknown = [g for g in (facts.nvidia.gpus if facts.nvidia else ()) if not g.compute_capability]
    newest_cc = _newest_arch(facts, matrix) if unknown and not gpus else None
    if gpus or newest_cc:
        # A GPU of unknown model (a report that names none) is routed as one the newest build
        # carries kernels for: the answer an assumption states (probe/report/infer.py).
        cc = min((g.compute_capability or "" for g in gpus), key=_vt) if gpus else newest_cc or ""
        got = newest_with_arch(cc, facts, matrix, driver)
        if got is None:
            return None
        version, variant, floor = got
        rel = matrix.release(version)
        if rel is not None and not rel.allows_python(py):
            steps.append(Step("python", f"Python >= {_lowest_python(rel)}"))
        if floor and (not driver or _vt(driver) < _vt(floor)):
            steps.append(Step("driver", f"NVIDIA driver >= {floor}"))
        steps.append(
            Step(
                "torch",
                f"torch {version}+{variant}: the newest build with {_sm(cc)}"
                if gpus
                else f"torch {version}+{variant}: the newest CUDA build",
            )
        )
        return Route(tuple(steps), version, variant) if len(steps) > 1 else None
    plat = wheel_platform(facts)
    for rel in reversed(matrix.releases):
        if rel.platform_tags(plat) or CPU in rel.index_variants(plat):
            if not rel.allows_python(py):
                steps.append(Step("python", f"Python >= {_lowest_python(rel)}"))
            steps.append(Step("torch", f"torch {rel.version} (CPU): the newest for {plat}"))
            return Route(tuple(steps), str(rel.version), CPU) if len(steps) > 1 else None
    return None


def _newest_arch(facts: Facts, matrix: Matrix) -> Optional[str]:
    """The newest native architecture ("12.0") of the newest release's default CUDA build."""
    from setup_env.decide.model import wheel_platform

    plat = wheel_platform(facts)
    for rel in reversed(matrix.releases):
        pv = rel.pypi_variant.get(plat)
        variants = [pv.variant] if pv is not None else []
        variants += [v for v in rel.index_variants(plat) if v.is_cuda]
        for variant in variants:
            b = matrix.build(variant, rel.version, plat) if variant.is_cuda else None
            if b is not None:
                native = [a for a in b.arches if a.sass and not a.suffix]
                if native:
                    top = max(native, key=lambda a: (a.major, a.minor))
                    return f"{top.major}.{top.minor}"
    return None


def _lowest_python(rel: Any) -> str:
    plain = [p for p in rel.python if not p.endswith("t")]
    return min(plain, key=_vt) if plain else str(rel.requires_python).lstrip(">=")


# --- keep what works -------------------------------------------------------------------------

# Findings that say the installed build does NOT work on this machine's GPU: with any of them (as
# an error) the installed build is not kept as the answer.
_BROKEN_BUILD: frozenset[str] = frozenset(
    {
        "gpu-too-old",
        "jetson-desktop-wheel",
        "cuda-newer-than-driver",
        "cpu-build-on-gpu",
        "cuda-build-on-amd",
        "rocm-build-on-nvidia",
        "gpu-arch-not-in-wheel",
        "rocm-gfx-not-in-wheel",
        "no-kernel-image",
        "torch-cuda-unavailable",
        "driver-library-mismatch",
        "driver-unusable",
        "library-load-failed",
        "cuda-init-error",
    }
)


@record
class Keep(Record):
    """The as-is answer when the installed GPU build works and no newer GPU build fits without a
    change: keep it (the route to a newer one, when there is one, is :func:`route`'s)."""

    torch: str  # "1.4.0"
    variant: Optional[Variant]  # cu100 (None: the report names the CUDA only)
    device: str  # "cuda" | "rocm" | "xpu"
    gpus: tuple[str, ...]  # "4x TITAN RTX"
    evidence: tuple[str, ...]
    replaced: Optional[str] = None  # what the plan would put in its place: "torch 1.13.1 (cpu)"
    planned: bool = False  # a plan was made (and has no GPU build that fits as things are)

    @property
    def label(self) -> str:
        tagged = "+" in self.torch  # "1.5.0+cu101" names its variant already
        return f"torch {self.torch}" + (
            f" ({self.variant})" if self.variant is not None and not tagged else ""
        )

    @property
    def summary(self) -> str:
        on = f" on {', '.join(self.gpus)}" if self.gpus else ""
        what = {"cuda": "CUDA", "rocm": "ROCm", "xpu": "XPU"}[self.device]
        return f"keep the installed {self.label}: {what} works{on}"


def _device_of(pkg: InstalledPackage) -> Optional[str]:
    v = pkg.variant
    if (v is not None and v.is_rocm) or pkg.hip:
        return "rocm"
    if (v is not None and v.kind == "xpu") or pkg.xpu:
        return "xpu"
    if (v is not None and v.is_cuda) or pkg.cuda:
        return "cuda"
    return None


def _counted(names: Sequence[str]) -> tuple[str, ...]:
    seen: dict[str, int] = {}
    for n in names:
        seen[n] = seen.get(n, 0) + 1
    return tuple(f"{k}x {n}" if k > 1 else n for n, k in seen.items())


def keep_installed(
    facts: Facts, plan: Any, findings: Sequence[Any], available: Mapping[str, Optional[bool]]
) -> Optional[Keep]:
    """The installed GPU build, when it is the answer as things are.

    Its accelerator must be reported available to it (``available``, by device "cuda", "rocm",
    "xpu": collect_env's "Is CUDA available" / "Is XPU available"), no finding may say it fails on
    this machine's GPUs (their architectures missing from the wheel, the driver too old for its
    CUDA, a message from torch...), and the plan must offer no GPU build (it is a CPU fallback, or
    none): no GPU build fits without a change. Then the working build stays: a CPU build is never
    offered over a working GPU build."""
    torch = facts.package("torch")
    device = _device_of(torch) if torch is not None else None
    if torch is None or device is None or available.get(device) is not True:
        return None
    if any(f.severity == "error" and _base(f.code) in _BROKEN_BUILD for f in findings):
        return None
    planned = plan.variant if plan is not None else None
    if plan is not None and plan.command and planned is not None and not planned.is_cpu:
        return None  # a GPU build fits as things are: the plan's command is the answer
    if device == "cuda":
        gpus = [g.name for g in (facts.nvidia.gpus if facts.nvidia else ()) if g.name]
        what = "CUDA"
    elif device == "rocm":
        gpus = [g.name for g in (facts.rocm.gpus if facts.rocm else ()) if g.name]
        what = "CUDA (HIP)"
    else:
        gpus = [g.name for g in (facts.xpu.gpus if facts.xpu else ()) if g.name]
        what = "XPU"
    evidence = [f"torch {torch.version} reports {what} available"]
    driver = facts.nvidia.driver_version if facts.nvidia is not None and device == "cuda" else None
    cuda = _cuda_of(torch)
    if driver and cuda:
        evidence.append(f"NVIDIA driver {driver} runs its CUDA {cuda}")
    replaced = None
    if plan is not None and plan.command and plan.torch_version:
        replaced = f"torch {plan.torch_version} ({plan.variant})"
    return Keep(
        torch=torch.version,
        variant=torch.variant,
        device=device,
        gpus=_counted(gpus),
        evidence=tuple(evidence),
        replaced=replaced,
        planned=plan is not None,
    )


def _base(code: str) -> str:
    return "cuda-init-error" if code.startswith("cuda-init-error") else code
