"""The stable channel: the newest installable release, routed to the branch of the machine's
accelerator, or to the variant the user pinned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from setup_env.knowledge.variant import MPS, Variant

if TYPE_CHECKING:
    from setup_env.knowledge.matrix import Release
from setup_env.decide.model import Plan
from setup_env.decide.plan.context import (
    _accelerator,
    _Ctx,
    _driver_fit,
    _installable,
    _no_platform,
    _none,
    _releases,
    _sm,
    asked_variant,
    runs_on,
)
from setup_env.decide.plan.fixes import _interpreter_fixes, _upgrade_driver_fix
from setup_env.decide.plan.formats import _finish
from setup_env.decide.plan.nvidia import _nvidia_plan
from setup_env.decide.plan.vendors import _cpu_plan, _simple_accel


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
    # Releases this interpreter can install at all. PyTorch's index serves every interpreter
    # PyPI does, under the same glibc floor, without the traps of PyPI's tags: what installs
    # from PyPI installs from the index, so the index's answer is whether any route does (and
    # where none does, both give the same reason).
    why_not: dict[str, str] = {}
    installable: list[Release] = []
    for rel in rels:
        ok, why = _installable(rel, t, via_pypi=False)
        if ok:
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
            why = why_not[str(rel.version)]
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
        return _pinned_variant(ctx, installable, asked, t.platform)
    if kind == "nvidia":
        return _nvidia_plan(ctx, installable)
    if kind == "amd":
        return _simple_accel(ctx, installable, "rocm")
    if kind == "intel":
        return _simple_accel(ctx, installable, "xpu")
    return _cpu_plan(ctx, installable, fallback=False)


def _pinned_variant(ctx: _Ctx, installable: list[Release], variant: Variant, plat: str) -> Plan:
    t = ctx.t
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
        b = ctx.matrix.build(variant, rel.version, plat)  # CUDA variants only have builds
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
            # (toolkit_min is None only without driver data for the build's CUDA, which the
            # matrix loader refuses)
            need, what = fit.toolkit_min or "", f"torch {rel.version} ({variant})"
            if compat is None:
                ctx.warn(
                    fit.code,
                    f"{variant} (CUDA {b.cuda}) {fit.why_not()}; the installed driver is older",
                )
                _upgrade_driver_fix(ctx, need, what, prio=1)
            elif compat == "no-driver" and ctx.nv:
                # NVIDIA GPUs without a driver (a machine planned for elsewhere has no GPUs)
                ctx.warn(
                    "driver-absent",
                    f"no NVIDIA driver was found: install one >= {need} before using {variant} "
                    f"of torch {rel.version}",
                )
                _upgrade_driver_fix(ctx, need, what, prio=1, new=True)
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


def _nothing_installable(ctx: _Ctx, rels: list[Release], why_not: dict[str, str]) -> Plan:
    newest = rels[0]
    if ctx.t.python is None and not ctx.t.tags:
        # Facts from a partial capture or report: no interpreter to match wheels against.
        ctx.fix(
            1,
            "name-python",
            "say which Python will install torch: run `setup-env plan` on that machine, or plan "
            f"for it with `setup-env plan --os {ctx.t.os} --python 3.12 ...`",
        )
        return _none(
            ctx, "no-python", "these facts name no Python interpreter, so no wheel can be matched"
        )
    # every release of rels failed, so each has its reason
    _interpreter_fixes(ctx, newest, why_not[str(newest.version)])
    if ctx.options.torch:
        # a pin that doesn't install: say what would
        alt = None
        for rel in reversed(ctx.matrix.releases):
            if _installable(rel, ctx.t, via_pypi=False)[0]:  # by any route: see _stable_plan
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
        f"torch {newest.version} {why_not[str(newest.version)]}"
        + ("" if ctx.options.torch else "; no torch release in the matrix installs here"),
    )
