"""The NVIDIA branch of the planner: every CUDA build of a release judged against every GPU's
architecture and the driver, the best one chosen, and the plan when none fits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from packaging.version import Version

from setup_env.knowledge.variant import CPU, Variant

if TYPE_CHECKING:
    from setup_env.knowledge.matrix import Release
from setup_env.decide.model import Plan
from setup_env.decide.plan.context import (
    _Candidate,
    _ccs,
    _Ctx,
    _cuda_candidates,
    _driver_fit,
    _sm,
    runs_on,
)
from setup_env.decide.plan.fixes import (
    _arch_fixes,
    _driver_fixes,
    _driver_window_findings,
    _smallest_driver,
    _upgrade_driver_fix,
)
from setup_env.decide.plan.formats import _finish
from setup_env.decide.plan.vendors import _cpu_plan


def _evaluate(
    ctx: _Ctx, rel: Release, variant: Variant, via_pypi: bool
) -> tuple[Optional[_Candidate], list[str]]:
    """(candidate, []) or (None, why not)."""
    plat = ctx.t.platform or ""
    b = ctx.matrix.build(variant, rel.version, plat)
    if b is None:
        return None, [f"{variant}: its compiled architectures are not in the data"]
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
        return None, [f"{variant} has no kernels for {', '.join(missing)}"]
    fit = _driver_fit(b, ctx.matrix, ctx.t, ctx.facts, bool(ptx))
    if not fit.runs:
        return None, [f"{variant} (CUDA {b.cuda}) {fit.why_not()}"]
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
        ),
        [],
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
            cand, why = _evaluate(ctx, rel, variant, via_pypi)
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
    """Does ``a`` beat ``b``, a build of the same release met earlier? Only full driver support
    over minor-version compatibility: candidates arrive in preference order, so between equals
    the first stays (with no driver every build is "no-driver", all equal)."""
    return a.compat != "mvc" and b.compat == "mvc"


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
    nv = ctx.facts.nvidia
    assert nv is not None  # a GPU plan is made only for the GPUs facts.nvidia lists
    # the driver by its version, or (where only that is known) by the CUDA version it reports
    drv = nv.driver_version or f"for CUDA {nv.cuda_driver_version}"
    who = "Windows driver (WSL2 uses it)" if t.wsl else "driver"
    if c.compat == "full":
        ctx.reason(
            "driver-full",
            f"the NVIDIA {who} {drv} supports CUDA {b.cuda} (needs >= {c.min_driver})",
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
                if c.mvc_floor and c.mvc_floor != c.min_driver
                else ""
            ),
        )
        _upgrade_driver_fix(
            ctx,
            c.min_driver or "",
            f"torch {c.release.version}",
            prio=1,
            new=True,
            # (no floor where a GPU needs PTX: minor-version compatibility runs no PTX JIT)
            fallback=c.mvc_floor or "",
        )
    if not c.via_pypi:
        pv = c.release.pypi_variant.get(b.platform)
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


def _nvidia_none(
    ctx: _Ctx, installable: list[Release], blockers: dict[str, list[str]], unverified: list[str]
) -> Plan:
    newest = installable[0]
    for line in blockers.get(str(newest.version), [])[:4]:
        ctx.reason("newest-release-blocked", f"torch {newest.version}: {line}")
    plat = ctx.t.platform or ""
    # Which GPUs does no build of any installable release serve?
    for g in ctx.nv:
        if g.cc is None:
            continue
        if not any(
            (b := ctx.matrix.build(v, r.version, plat)) is not None and runs_on(g.cc, b)
            for r in installable
            for v in r.index
        ):
            ctx.reason(
                "arch-missing",
                f"no PyTorch wheel installable here carries kernels for {g.name} ({_sm(g.cc)})",
            )
    if unverified:
        ctx.warn(
            "unverified-fit",
            f"{', '.join(unverified[:3])} would fit but are not confirmed on PyTorch's index; "
            f"run `setup-env matrix refresh` where download.pytorch.org is reachable",
        )
    # Driver: the smallest that brings the newest release a build of which carries every GPU;
    # where that is past a GPU's last driver branch, the build's minor-version-compatibility
    # floor when it is not (a K80 on R410: R470 runs torch 2.7.1+cu118 through MVC).
    # (_smallest_driver weighs only builds that carry every GPU: none where a GPU is orphaned)
    for rel in installable:
        need = _smallest_driver(ctx, rel)
        if need is not None:
            _upgrade_driver_fix(ctx, need[1], need[2], prio=1, fallback=need[3])
            break
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
