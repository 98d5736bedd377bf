"""The ranked ways out when the best build does not fit: a newer driver (never past a GPU's last
driver branch), another Python, a torch that still has the GPU's architecture, Rosetta.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from packaging.version import Version

if TYPE_CHECKING:
    from setup_env.knowledge.matrix import Release
from setup_env.decide.plan.context import (
    _Candidate,
    _Ctx,
    _cuda_candidates,
    _macos_floor,
    _sm,
    _window_fit,
    runs_on,
)
from setup_env.decide.plan.target import _v


def _driver_fixes(ctx: _Ctx, installable: list[Release], chosen: _Candidate) -> None:
    """Upgrading the driver: the smallest driver that brings the newest release."""
    for rel in installable:
        if rel.version <= chosen.release.version:
            break
        need = _smallest_driver(ctx, rel)
        if need is not None:
            _upgrade_driver_fix(ctx, need[1], need[2], prio=10, fallback=need[3])
            return


def _smallest_driver(ctx: _Ctx, rel: Release) -> Optional[tuple[Version, str, str, str]]:
    """The smallest driver that fully runs a confirmed build of ``rel`` carrying every GPU:
    (its version, as NVIDIA writes it, "torch X (variant)", the build's minor-version-
    compatibility floor, "" where MVC cannot serve: a CUDA before it, or a GPU on PTX). None
    when no such build, or no driver data for its CUDA."""
    from setup_env.knowledge import cuda

    best: Optional[tuple[Version, str, str, str]] = None
    for variant, _via, verified in _cuda_candidates(ctx, rel):
        b = ctx.matrix.build(variant, rel.version, ctx.t.platform or "")
        if not verified or b is None:
            continue
        hows = [runs_on(g.cc, b) for g in ctx.nv if g.cc is not None]
        if None in hows:
            continue
        fit = cuda.driver_fit(
            None, str(b.toolkit), ctx.t.driver_os, ctx.matrix.cuda, needs_ptx="ptx" in hows
        )
        text = fit.toolkit_min or ""
        v = _v(text)
        if v is not None and (best is None or v < best[0]):
            best = (v, text, f"torch {rel.version} ({variant})", fit.mvc_floor or "")
    return best


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
        if g.cc is None:
            continue
        first = _v(g.first_driver) if g.first_driver else None
        if first is not None:
            # NVIDIA names this model's first driver (RTX PRO 6000 Server Edition: 575.57.08),
            # which is later than its compute capability's first branch.
            if drv >= first:
                continue
            ctx.reason(
                "driver-older-than-gpu",
                f"driver {raw} is older than {g.first_driver}, the first driver NVIDIA supports "
                f"{g.name} ({_sm(g.cc)}) with: upgrade the driver before relying on this GPU",
            )
            _upgrade_driver_fix(ctx, g.first_driver or "", f"{g.name} ({_sm(g.cc)})", prio=0)
            continue
        if _window_fit(drv.major, g.first_branch, None) == "ok":
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


def _interpreter_fixes(ctx: _Ctx, newest: Release, why: str) -> None:
    t = ctx.t
    kinds = {f.kind for _p, f in ctx.fixes}
    if kinds & {"newer-os", "upgrade-os", "change-python", "native-python"}:
        return  # the newest group's fix is the one that matters
    if t.rosetta:
        _rosetta(ctx)
        return
    if "macOS" in why:
        # the floor of the wheels this interpreter takes, which the reason named
        ctx.fix(
            15,
            "upgrade-os",
            f"upgrade macOS to {_macos_floor(newest, t)} or later for torch {newest.version}",
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
