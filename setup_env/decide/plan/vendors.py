"""The AMD (ROCm), Intel (XPU) and CPU branches of the planner."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from packaging.version import Version

from setup_env.knowledge.variant import CPU, MPS, Variant

if TYPE_CHECKING:
    from setup_env.knowledge.matrix import Release
from setup_env.decide.model import Plan
from setup_env.decide.plan.context import _Ctx, _installable, _none
from setup_env.decide.plan.fixes import _rosetta
from setup_env.decide.plan.formats import _finish


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
        _rocm_gfx_none(ctx, gfx_ids, gfx_blocked)
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
    from setup_env.probe.resolve import resolve_gpu

    # A GPU whose gfx target is unknown (a report naming "Device 66a1") cannot be said to be
    # carried by the wheel: named apart, the others checked.
    unknown = sorted({g.name for g in ctx.amd if not (g.gfx_arch or resolve_gpu(g).gfx)})
    if unknown:
        ctx.warn(
            "rocm-gpu-gfx-unknown",
            f"the gfx target of {', '.join(unknown)} is unknown, so whether this ROCm wheel "
            "carries it is not checked: torch.cuda.get_arch_list() after install lists what it "
            "carries",
        )
    if gfx_ids:
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
                "that yours is in PyTorch's ROCm build (torch.cuda.get_arch_list() after "
                "install)",
            )
    if blocked:
        ctx.reason(
            "rocm-gfx-not-in-wheel",
            f"{', '.join(blocked[:3])}: no kernels for {', '.join(gfx_ids)}",
        )


def _rocm_gfx_none(ctx: _Ctx, gfx_ids: list[str], blocked: list[str]) -> None:
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
        # Only a GPU newer than the release planned on is served by a later torch; one whose
        # wheels stopped carrying it (gfx906 after rocm7.2) or that no one wheel serves beside
        # the others is not.
        if first is not None and Version(first) > Version(rel_v):
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
        # Otherwise (on Linux PyPI serves a CUDA build, and the cpu index is not confirmed for
        # this release) the next older release is tried.
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
