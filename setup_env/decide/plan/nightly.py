"""The nightly channel: PyTorch's nightly index, never verified, for the machine's accelerator."""

from __future__ import annotations

from setup_env.decide.model import COMPANIONS, Plan
from setup_env.decide.plan.context import (
    _accelerator,
    _Ctx,
    _no_platform,
    _none,
    asked_variant,
    check_index_url,
    runs_on,
)
from setup_env.decide.plan.formats import _commands
from setup_env.knowledge.variant import CPU, XPU, Variant


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
    elif kind == "nvidia":
        newest = ctx.matrix.newest
        # the newest CUDA whose newest stable build runs every GPU
        fits = []
        for v in variants:
            if not v.is_cuda:
                continue
            # its newest stable build's kernels stand for the nightly's; a CUDA that is nightly
            # only (no stable build yet) is not guessed at
            builds = (
                ctx.matrix.build(v, rel.version, plat) for rel in reversed(ctx.matrix.releases)
            )
            b = next((x for x in builds if x is not None), None)
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
    if variant not in variants:
        # asked for, or the CPU build of a platform the nightlies left (macOS x86_64)
        return _none(
            ctx,
            "nightly-no-variant",
            f"the nightly channel has no {variant} build for {plat} in the data",
        )
    ctx.lead("nightly", f"nightly {variant} build from PyTorch's nightly index")
    ctx.warn(
        "nightly-unverified",
        "nightly builds change daily and their contents are not verified by this data "
        f"({ctx.matrix.retrieved}); pin a stable release for anything that must keep working",
    )
    base = check_index_url(ctx.options.index_url) if ctx.options.index_url else ctx.matrix.index_url
    url = f"{base}/nightly/{variant}"  # both validated without a trailing slash
    packages = ["torch", *[p for p in ctx.options.with_packages if p in COMPANIONS]]
    argv, command, config = _commands(ctx, packages, url, pre=True)
    return ctx.said(
        Plan(
            status="ok",  # no torch_version: a nightly is whatever the index holds today
            variant=variant,
            index_url=url,
            requirements=tuple(packages),
            argv=argv,
            command=command,
            config=config,
            fixes=ctx.ranked(),
            details=ctx.details,
            platform=plat,
            source="nightly",
        )
    )
