"""Which official ROCm wheel carries an AMD GPU's gfx target: the ROCm twin of the CUDA arch
check. Pure: reads the GPU knowledge base (``gpus.json`` "rocm_wheels", each range with its
PyTorch PR) and returns typed answers; the planner and the doctor phrase them.

gfx targets are matched exactly: code built for gfx1100 does not run on gfx1101 or gfx1031 (the
ISA differs per target). ``HSA_OVERRIDE_GFX_VERSION`` makes the runtime claim another target; it
is a community workaround, not a supported configuration, and is only ever named as such.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from setup_env._record import Record, record
from setup_env.knowledge import gpus as catalogue
from setup_env.knowledge.cuda import gfx_runs_on  # the rule lives beside the CUDA rules

__all__ = ["GfxFit", "InstalledGap", "gfx_runs_on", "installed_gap", "wheel_fit"]
from setup_env.knowledge.variant import Variant

# The code a plan or finding carries for each state (consumers test codes, not prose).
MISSING = "rocm-gfx-not-in-wheel"
UNKNOWN = "rocm-gfx-unknown"


@record
class GfxFit(Record):
    """Whether the (torch, ROCm) wheel carries every GPU's gfx target."""

    fits: Optional[bool]  # None: the data has no gfx list for that wheel
    missing: tuple[str, ...] = ()  # the GPUs' gfx ids the wheel lacks
    targets: tuple[str, ...] = ()  # what the wheel carries
    code: Optional[str] = None  # None | MISSING | UNKNOWN


def wheel_fit(torch_version: str, variant: Variant, gfx_ids: Sequence[str]) -> GfxFit:
    """``wheel_fit("2.7.1", Variant.parse("rocm6.3"), ["gfx1201"])`` -> fits."""
    rocm = ".".join(str(p) for p in variant.version)
    try:
        targets = catalogue.load().rocm_gfx(torch_version, rocm)
    except catalogue.CatalogueError:
        targets = None
    if targets is None:
        return GfxFit(None, code=UNKNOWN)
    missing = tuple(sorted({g for g in gfx_ids if g and not gfx_runs_on(g, targets)}))
    return GfxFit(not missing, missing, tuple(targets), MISSING if missing else None)


def first_release_with(
    gfx: str, releases: Sequence[str], variants: Sequence[Variant]
) -> str | None:
    """The oldest of ``releases`` whose ROCm wheel (any of ``variants``) carries ``gfx``."""
    for rel in releases:
        for v in variants:
            if wheel_fit(rel, v, [gfx]).fits:
                return rel
    return None


def never_official(gfx: str) -> bool:
    """True when no ROCm wheel in the data carries ``gfx`` (gfx1010, gfx1031, gfx803...)."""
    try:
        rules = catalogue.load().rocm_wheels
    except catalogue.CatalogueError:
        return False
    return bool(rules) and not any(gfx_runs_on(gfx, r.gfx) for r in rules)


@record
class InstalledGap(Record):
    """An installed ROCm torch that carries no kernels for some of the machine's AMD GPUs."""

    torch_version: str
    variant: Variant
    gpus: tuple[str, ...]  # "AMD Radeon RX 5700 XT (gfx1010)"
    missing: tuple[str, ...]
    targets: tuple[str, ...]


def installed_gap(
    torch_version: str, variant: Optional[Variant], gpus: Sequence[tuple[str, Optional[str]]]
) -> InstalledGap | None:
    """``gpus`` as (name, gfx id) pairs; None when the wheel carries them all or is unknown."""
    if variant is None or not variant.is_rocm:
        return None
    base = torch_version.split("+", 1)[0]
    gfx_ids = [g for _n, g in gpus if g]
    fit = wheel_fit(base, variant, gfx_ids)
    if fit.fits is not False:
        return None
    labels = tuple(f"{n} ({g})" if n != g else str(g) for n, g in gpus if g in fit.missing)
    return InstalledGap(torch_version, variant, labels, fit.missing, fit.targets)
