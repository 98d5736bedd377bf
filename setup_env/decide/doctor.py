"""The doctor: a pure function (facts, plan) -> findings.

Each :class:`Finding` has a stable ``code``, a severity, a one-line title, the evidence (which
facts show it) and the fix: a sentence and, where one exists, the exact command. Commands are
built only from validated parts (the planner's command, which the planner builds from validated
parts; paths and values from the facts only after they pass a strict pattern and are quoted).

Nothing here touches the machine or prints. Knowledge about wheels (driver minimums, the
architectures compiled into each wheel, companion versions) comes from the wheel matrix the caller
hands in (``knowledge.matrix.in_use()``; a test hands in a frozen one; None: the doctor knows
less); the compatibility rules are :mod:`setup_env.knowledge.cuda`'s.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Optional

from setup_env.decide.model import Finding, driver_os, install_command, wheel_platform
from setup_env.facts import CondaPackage, Facts, Gpu, InstalledPackage
from setup_env.knowledge.cuda import CC, Coverage, coverage, driver_fit, parse_cc, sm, version_tuple
from setup_env.knowledge.variant import CPU

if TYPE_CHECKING:
    from setup_env.decide.model import Plan
    from setup_env.knowledge.matrix import Build, Matrix

SEVERITY_ORDER: dict[str, int] = {"error": 0, "warning": 1, "info": 2}

# Values from the outside world that may appear inside a printed command.
_SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+@:=-]{1,400}$")


# --- helpers ---------------------------------------------------------------------------------


def _vtuple(text: Optional[str]) -> tuple[int, ...]:
    return version_tuple(text) or ()


def _cuda_of(pkg: InstalledPackage) -> Optional[str]:
    if pkg.cuda:
        return pkg.cuda
    return pkg.variant.cuda if pkg.variant is not None else None


def _nvidia_gpus(facts: Facts) -> tuple[Gpu, ...]:
    return facts.nvidia.gpus if facts.nvidia is not None else ()


def _cc_of(gpu: Gpu) -> Optional[CC]:
    from setup_env.probe.resolve import compute_capability

    return parse_cc(compute_capability(gpu))  # as reported, else the catalogue's


def _wheel_build(
    facts: Facts, torch: InstalledPackage, matrix: Optional[Matrix]
) -> Optional[Build]:
    if matrix is None or torch.variant is None or not torch.variant.is_cuda:
        return None
    return matrix.wheel_build(torch.version, torch.variant, wheel_platform(facts))


def _coverage(facts: Facts, build: Optional[Build]) -> dict[int, tuple[Gpu, CC, Coverage]]:
    """GPU index -> how it runs the installed wheel (GPUs of unknown architecture left out)."""
    out: dict[int, tuple[Gpu, CC, Coverage]] = {}
    if build is None:
        return out
    for gpu in _nvidia_gpus(facts):
        cc = _cc_of(gpu)
        if cc is not None:
            out[gpu.index] = (gpu, cc, coverage(cc, build.arches))
    return out


def _quote(value: str) -> Optional[str]:
    return shlex.quote(value) if _SAFE_PATH.match(value) else None


# --- the examination -------------------------------------------------------------------------


def examine(facts: Facts, plan: Optional[Plan], matrix: Optional[Matrix]) -> tuple[Finding, ...]:
    """Every finding for these facts, most severe first. ``plan`` supplies the install command for
    fixes that reinstall torch; ``matrix`` the wheel data (None: findings that need it are left
    out)."""
    out: list[Finding] = []
    torch = facts.package("torch")
    nv = _nvidia_gpus(facts)
    amd = facts.rocm.gpus if facts.rocm is not None else ()
    intel = facts.xpu.gpus if facts.xpu is not None else ()
    plan_variant = plan.variant if plan is not None else None

    if torch is None:
        command = install_command(plan, reinstall=False)
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
    if torch is not None and torch.variant == CPU and (nv or amd or intel):
        gpu_names = ", ".join(sorted({g.name for g in (*nv, *amd, *intel)}))
        command = (
            install_command(plan, reinstall=True)
            if plan_variant is not None and not plan_variant.is_cpu
            else None
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
                command=install_command(plan, reinstall=True)
                if plan_variant is not None and plan_variant.is_rocm
                else None,
            )
        )
    if torch is not None and _cuda_of(torch) and intel and not nv and not amd:
        out.append(
            Finding(
                "cuda-build-on-intel",
                "error",
                f"torch {torch.version} is built for NVIDIA CUDA, but the GPU is Intel's",
                evidence=(
                    f"torch CUDA {_cuda_of(torch)}",
                    "GPU: " + ", ".join(sorted({g.name for g in intel})),
                ),
                fix="install the XPU build of torch",
                command=install_command(plan, reinstall=True)
                if plan_variant is not None and str(plan_variant) == "xpu"
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
                command=install_command(plan, reinstall=True)
                if plan_variant is not None and plan_variant.is_cuda
                else None,
            )
        )

    if torch is not None:
        build = _wheel_build(facts, torch, matrix)
        runs = _coverage(facts, build)
        out.extend(_driver_findings(facts, torch, plan, matrix, build, runs))
        out.extend(_arch_findings(facts, torch, plan, build, runs))
        out.extend(_rocm_arch_findings(facts, torch, plan))
        out.extend(_companion_findings(facts, torch, matrix))
        out.extend(_toolkit_findings(facts, torch))
    out.extend(_shadow_findings(facts))
    out.extend(_conda_findings(facts, torch))
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
    # Root causes (setup_env/decide/causes.py) added and ranked above the symptoms they explain.
    from setup_env.decide import causes

    return causes.apply(facts, plan, matrix, out)


def _driver_findings(
    facts: Facts,
    torch: InstalledPackage,
    plan: Optional[Plan],
    matrix: Optional[Matrix],
    build: Optional[Build],
    runs: dict[int, tuple[Gpu, CC, Coverage]],
) -> list[Finding]:
    cuda = _cuda_of(torch)
    nvidia = facts.nvidia
    if not cuda or nvidia is None or not (nvidia.driver_version or nvidia.cuda_driver_version):
        return []
    driver = nvidia.driver_version
    ptx_only = any(c.how == "ptx" for _g, _cc, c in runs.values())
    fit = driver_fit(
        driver,
        str(build.toolkit) if build is not None else cuda,
        driver_os(facts),
        matrix.cuda if matrix is not None else {},
        driver_cuda=nvidia.cuda_driver_version,
        needs_ptx=ptx_only,
    )
    built = f" {build.toolkit}" if build is not None else ""
    evidence = [f"torch {torch.version} is built with CUDA {cuda}{built}"]
    if nvidia.cuda_driver_version:
        evidence.append(f"the driver supports CUDA up to {nvidia.cuda_driver_version}")
    if driver:
        evidence.append(f"NVIDIA driver {driver}")
    if fit.toolkit_min is not None and fit.too_old:
        if fit.mvc_floor is not None:
            evidence.append(
                f"CUDA {fit.cuda} needs driver >= {fit.mvc_floor} (minor-version compatibility), "
                f">= {fit.toolkit_min} for full compatibility"
            )
        else:
            evidence.append(f"CUDA {fit.cuda}{built} needs driver >= {fit.toolkit_min}")
    if fit.compat == "mvc":
        return [
            Finding(
                "cuda-minor-version-compat",
                "info",
                f"driver {driver or nvidia.cuda_driver_version} runs CUDA {cuda} through "
                "minor-version compatibility",
                evidence=tuple(evidence),
                fix=(
                    f"fine for torch; PTX JIT of newer kernels (e.g. some Triton/torch.compile "
                    f"paths) needs driver >= {fit.toolkit_min or 'the toolkit minimum'}"
                ),
                details={"min_driver": fit.toolkit_min or "", "reason": fit.code},
            )
        ]
    if not fit.too_old:
        return []
    command = (
        install_command(plan, reinstall=True)
        if plan is not None
        and plan.variant is not None
        and plan.variant.is_cuda
        and plan.variant != torch.variant
        else None
    )
    floor = fit.mvc_floor or fit.toolkit_min
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
            details={"min_driver": floor or "", "reason": fit.code},
        )
    ]


def _rocm_arch_findings(
    facts: Facts, torch: InstalledPackage, plan: Optional[Plan]
) -> list[Finding]:
    """An installed ROCm torch without the AMD GPU's gfx target (the ROCm twin of the CUDA arch
    check; setup_env.decide.rocmplan reads which gfx targets each ROCm wheel carries)."""
    if facts.rocm is None or not facts.rocm.gpus:
        return []
    from setup_env.decide.rocmplan import MISSING, installed_gap
    from setup_env.probe.resolve import resolve_gpu

    pairs = [(g.name, g.gfx_arch or resolve_gpu(g).gfx) for g in facts.rocm.gpus]
    gap = installed_gap(torch.version, torch.variant, pairs)
    if gap is None:
        return []
    plan_variant = plan.variant if plan is not None else None
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
            command=install_command(plan, reinstall=True)
            if plan_variant and plan_variant != torch.variant
            else None,
        )
    ]


def _arch_findings(
    facts: Facts,
    torch: InstalledPackage,
    plan: Optional[Plan],
    build: Optional[Build],
    runs: dict[int, tuple[Gpu, CC, Coverage]],
) -> list[Finding]:
    if build is None or not runs:
        return []
    out: list[Finding] = []
    ptx: list[str] = []
    missing: list[str] = []
    for gpu, cc, cov in runs.values():
        label = f"GPU {gpu.index} {gpu.name} ({sm(cc)})"
        if cov.how is None:
            missing.append(label)
        elif cov.how == "ptx":
            ptx.append(label)
    wheel = f"torch {torch.version} ({torch.variant}) has " + " ".join(build.arch_names())
    if missing:
        command = (
            install_command(plan, reinstall=True)
            if plan is not None and plan.variant != torch.variant
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


def _companion_findings(
    facts: Facts, torch: InstalledPackage, matrix: Optional[Matrix]
) -> list[Finding]:
    out: list[Finding] = []
    expected = matrix.companion_versions(torch.version) if matrix is not None else {}
    for name in ("torchvision", "torchaudio"):
        pkg = facts.package(name)
        if pkg is None:
            continue
        differ = (
            pkg.variant is not None
            and torch.variant is not None
            and not pkg.variant.same_build(torch.variant)
            and (pkg.variant.is_cpu or torch.variant.is_cpu or _cuda_of(pkg) != _cuda_of(torch))
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


def _by_pip(torch: InstalledPackage) -> bool:
    """Installed by pip or uv (pixi's PyPI installs are uv's), not by conda/mamba/pixi's solver."""
    return bool(torch.installer and re.match(r"^(pip|uv)\b", torch.installer.lower()))


def _conda_findings(facts: Facts, torch: Optional[InstalledPackage]) -> list[Finding]:
    """A torch wheel from pip inside a conda/pixi environment that conda also put PyTorch or
    CUDA libraries into (setup_env.probe.condaenv reads conda-meta/). PyTorch's own advice since
    its conda channel ended (pytorch/pytorch#138506): one route per environment, pip's wheels or
    conda-forge's ``pytorch`` with a ``cuda-version`` pin, never both."""
    env = facts.conda_env
    if env is None or torch is None or not _by_pip(torch):
        return []
    out: list[Finding] = []
    where = f"{env.manager} environment {env.name or env.prefix or ''}".strip()
    wheel = f"torch {torch.version} installed by {torch.installer}"

    def said(pkgs: tuple[CondaPackage, ...]) -> tuple[str, ...]:
        shown = [f"conda-meta: {p.name} {p.version} {p.build} ({p.channel or '?'})" for p in pkgs]
        return tuple(shown[:6]) + ((f"... and {len(pkgs) - 6} more",) if len(pkgs) > 6 else ())

    if env.torch_packages:
        out.append(
            Finding(
                "pip-torch-over-conda-pytorch",
                "error",
                f"two PyTorch installs share the {where}: pip's torch wheel and conda's "
                "pytorch write the same site-packages/torch folder",
                evidence=(wheel, *said(env.torch_packages)),
                fix=(
                    "keep one: `pip uninstall torch`, then reinstall conda's pytorch (its files "
                    "were overwritten), or remove conda's pytorch packages and keep the wheel"
                ),
            )
        )
    if env.cuda_packages and _cuda_of(torch):
        pin = next((p.version for p in env.cuda_packages if p.name == "cuda-version"), None)
        command = None
        if pin is not None and re.match(r"^\d{2}\.\d{1,2}$", pin):
            if env.manager == "pixi":
                command = f'pixi remove --pypi torch && pixi add pytorch-gpu "cuda-version={pin}"'
            else:
                command = (
                    "pip uninstall -y torch && conda install -c conda-forge "
                    f'"pytorch=*=cuda*" "cuda-version={pin}"'
                )
        out.append(
            Finding(
                "pip-torch-conda-cuda",
                "warning",
                f"torch from pip (CUDA {_cuda_of(torch)}) shares the {where} with conda's CUDA "
                "libraries: two copies of CUDA, and which one loads depends on the library "
                "search path (cuDNN/cuBLAS/NCCL mismatches, undefined symbols)",
                evidence=(wheel, *said(env.cuda_packages)),
                fix=(
                    "one route per environment: conda-forge's pytorch pinned to the environment's "
                    "cuda-version in place of the wheel, or keep the wheel (it carries its own "
                    "CUDA libraries) and remove the conda CUDA packages nothing else needs"
                ),
                command=command,
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
    if nvidia is not None and nvidia.error and nvidia.error_code == "gpu-unexaminable":
        out.append(
            Finding(
                "gpu-unexaminable",
                "error",
                "the NVIDIA GPU could not be examined: nvidia-smi does not answer (a wedged "
                "driver or GPU), so this is not a machine without a GPU",
                evidence=(nvidia.error,),
                fix="look for Xid errors in `sudo dmesg | grep -i xid`; stop what holds the GPU "
                "and reset it (`sudo nvidia-smi -r -i <gpu>`) or reboot; check again when "
                "`nvidia-smi` answers",
                command="sudo dmesg | grep -i xid",
            )
        )
    elif nvidia is not None and nvidia.error:
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
