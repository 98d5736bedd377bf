"""Pure judgements of verify's measurements: a speed beside the catalogue's peak (or, on a CPU,
beside a yardstick measured in the same run), and torch's own dependencies as the worker found
them. No torch, no machine access.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

from setup_env.decide.smoke_model import CheckResult, result

# --- speed beside the catalogue ---------------------------------------------------------------

# Below these fractions of the catalogue peak a figure is worth a warning. Small verify-sized
# runs don't reach peak: a healthy H100 reaches ~0.6-0.7 of dense bf16 peak on an 8192 matmul and
# ~0.8-0.9 of memory bandwidth on a device copy; pinned host copies ~0.7-0.8 of the PCIe link.
SPEED_WARN_BELOW = {"matmul-speed": 0.25, "memory-bandwidth": 0.4, "h2d-bandwidth": 0.35}

# Usable GB/s per lane after encoding overhead (PCIe 1-2: 8b/10b; 3-5: 128b/130b; 6: FLIT).
PCIE_LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}


def _peak_attr(peaks: Any, *names: str) -> float | None:
    if peaks is None:
        return None
    for n in names:
        v = peaks.get(n) if isinstance(peaks, Mapping) else getattr(peaks, n, None)
        if isinstance(v, (int, float)) and v > 0:
            return float(v)
    return None


def judge_speed(res: CheckResult, peaks: Any, gpu: Any = None) -> CheckResult:
    """Put a measured figure beside its peak: ratio in the evidence; far below peak is a warning.

    ``peaks`` is the GPU catalogue entry (``knowledge.gpus.lookup(name)``: an object or mapping
    with peak bf16/fp32 TFLOP/s and memory GB/s) or None; ``gpu`` a facts Gpu (for the PCIe link).
    """
    if res.status != "pass":
        return res
    ev = dict(res.evidence)
    measured: Optional[float] = None
    peak: Optional[float] = None
    unit = ""
    if res.name == "matmul-speed":
        measured = ev.get("tflops")
        dtype = str(ev.get("dtype") or "")
        if dtype == "bfloat16" or dtype == "float16":
            peak = _peak_attr(
                peaks, "bf16_tflops", "peak_bf16_tflops", "fp16_tflops", "peak_fp16_tflops"
            )
        else:
            peak = _peak_attr(peaks, "fp32_tflops", "peak_fp32_tflops")
        unit = "TFLOP/s"
    elif res.name == "memory-bandwidth":
        measured = ev.get("gbps")
        peak = _peak_attr(
            peaks, "memory_gbps", "peak_memory_gbps", "memory_bandwidth_gbps", "mem_bw_gbps"
        )
        unit = "GB/s"
    elif res.name == "h2d-bandwidth":
        measured = ev.get("gbps")
        unit = "GB/s"
        gen = getattr(gpu, "pcie_gen_max", None)
        width = getattr(gpu, "pcie_width_max", None)
        if isinstance(gen, int) and isinstance(width, int) and gen in PCIE_LANE_GBPS:
            peak = PCIE_LANE_GBPS[gen] * width
            ev["pcie_link"] = f"gen{gen} x{width}"
            cur_w = getattr(gpu, "pcie_width_current", None)
            if isinstance(cur_w, int) and cur_w < width:
                ev["pcie_link_current"] = f"x{cur_w}"
    if not isinstance(measured, (int, float)) or peak is None:
        return res
    ratio = float(measured) / peak
    ev["peak"] = round(peak, 2)
    ev["ratio"] = round(ratio, 3)
    msg = f"{res.message} = {ratio:.0%} of the {peak:g} {unit} peak"
    threshold = SPEED_WARN_BELOW.get(res.name, 0.0)
    if ratio < threshold:
        why = {
            "matmul-speed": "a throttled GPU (power/thermal), wrong clocks, or a shared GPU",
            "memory-bandwidth": "a throttled GPU or wrong memory clocks",
            "h2d-bandwidth": "a PCIe link running narrower or slower than it should "
            "(check `nvidia-smi -q -d PCI`), or a NUMA-remote CPU",
        }[res.name]
        return CheckResult(
            res.name,
            "warn",
            res.duration_s,
            f"{msg}: far below peak (under {threshold:.0%}); possible cause: {why}",
            res.device,
            ev,
            "check `nvidia-smi -q -d PERFORMANCE,CLOCK,PCI` for throttle reasons and link state",
        )
    return CheckResult(res.name, res.status, res.duration_s, msg, res.device, ev, res.fix)


# --- torch's own dependencies -------------------------------------------------------------------


def _marker_applies(marker: Any, env: Mapping[str, str]) -> bool:
    """Whether a requirement's marker holds in the worker's environment (unknown: no)."""
    try:
        return bool(marker.evaluate({**env, "extra": ""}))
    except Exception:  # a marker this packaging cannot evaluate
        return False


def decide_deps(info: Mapping[str, Any]) -> CheckResult:
    """Every Requires-Dist of the installed torch that applies here is installed at a version its
    specifier allows and can be found for import (what ``pip check`` reads, plus the import).

    ``info["requirements"]`` is the worker's report: ``requires`` (the raw Requires-Dist lines),
    ``found`` (per name: ``installed`` version or None, ``import_errors``) and ``environment``
    (the worker interpreter's marker values).
    """
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    rep = info.get("requirements")
    if not isinstance(rep, Mapping):
        return result("deps", "skip", "the worker did not report torch's requirements")
    if rep.get("error"):
        return result("deps", "skip", f"torch's requirements could not be read: {rep['error']}")
    env = {str(k): str(v) for k, v in dict(rep.get("environment") or {}).items()}
    found = {canonicalize_name(str(k)): v for k, v in dict(rep.get("found") or {}).items()}
    problems: list[str] = []
    fixes: list[str] = []
    ok: list[str] = []
    for line in rep.get("requires") or []:
        try:
            req = Requirement(str(line))
        except InvalidRequirement:
            continue
        if req.marker is not None and not _marker_applies(req.marker, env):
            continue
        name = canonicalize_name(req.name)
        entry = found.get(name)
        if not isinstance(entry, Mapping):
            continue
        wanted = f"{req.name}{req.specifier}"
        installed = entry.get("installed")
        if not installed:
            problems.append(f"{req.name} is not installed (torch requires {wanted})")
            fixes.append(f'"{wanted}"')
            continue
        if req.specifier and not req.specifier.contains(str(installed), prereleases=True):
            problems.append(f"{req.name} {installed} does not satisfy {wanted}")
            fixes.append(f'"{wanted}"')
            continue
        errors = dict(entry.get("import_errors") or {})
        if errors:
            mod, err = next(iter(errors.items()))
            problems.append(f"{req.name} {installed} is installed but `import {mod}` fails: {err}")
            fixes.append(f'--force-reinstall "{wanted}"')
            continue
        ok.append(req.name)
    ev = {"requires": list(rep.get("requires") or []), "ok": ok}
    if problems:
        fix = "pip install " + " ".join(dict.fromkeys(fixes)) + " (torch itself is fine)"
        return result(
            "deps",
            "fail",
            "; ".join(problems) + ": torch.optim, torch.compile and other parts fail without it",
            ev,
            fix,
        )
    return result("deps", "pass", f"{len(ok)} requirements of torch present: {', '.join(ok)}", ev)


# --- CPU speed beside a yardstick measured in the same run --------------------------------------

# torch (on one thread) below this fraction of NumPy doing the same work on the same machine, in
# the same run, is a failure: a healthy torch CPU build is within ~2x of NumPy's BLAS either way;
# 10x slower is a debug build, a missing BLAS or a broken kernel. Thread settings are judged
# from the facts (torch's thread count vs the CPUs), not from this timing.
CPU_SPEED_FAIL_BELOW = {"matmul-speed": 0.1, "memory-bandwidth": 0.1}
_CPU_YARDSTICK = {
    "matmul-speed": ("best_tflops", "tflops", "yardstick_tflops", "TFLOP/s"),
    "memory-bandwidth": ("best_gbps", "gbps", "yardstick_gbps", "GB/s"),
}


def judge_cpu_speed(res: CheckResult) -> CheckResult:
    """A CPU figure against the NumPy yardstick the worker measured beside it (best of repeated
    runs on both sides, so a busy machine slows both alike)."""
    if res.status != "pass" or res.name not in _CPU_YARDSTICK:
        return res
    best_key, key, yard_key, unit = _CPU_YARDSTICK[res.name]
    ev = dict(res.evidence)
    measured = ev.get(best_key, ev.get(key))
    yard = ev.get(yard_key)
    if not isinstance(measured, (int, float)) or not isinstance(yard, (int, float)) or yard <= 0:
        return res
    ratio = float(measured) / float(yard)
    ev["ratio_to_yardstick"] = round(ratio, 3)
    msg = (
        f"{res.message}; best {measured:g} = {ratio:.2f}x NumPy's {yard:g} {unit} on the same work"
    )
    floor = CPU_SPEED_FAIL_BELOW[res.name]
    if ratio >= floor:
        return CheckResult(res.name, "pass", res.duration_s, msg, res.device, ev, res.fix)
    causes = []
    threads, cpus = ev.get("torch_threads"), ev.get("cpus")
    if isinstance(threads, int) and isinstance(cpus, int) and threads < cpus:
        causes.append(f"torch uses {threads} thread(s) of {cpus} CPUs")
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if ev.get(var):
            causes.append(f"{var}={ev[var]}")
    if ev.get("debug_build"):
        causes.append("a debug build of torch")
    if res.name == "matmul-speed" and ev.get("mkl") is False:
        causes.append("no MKL/BLAS in this build")
    why = "; ".join(causes) or "something slows torch's kernels (a patched torch, a throttled CPU)"
    fix = (
        "unset OMP_NUM_THREADS/MKL_NUM_THREADS or set them to the CPU count "
        "(torch.set_num_threads); install a release build of torch"
        if causes
        else "reinstall torch (pip install --force-reinstall --no-cache-dir torch)"
    )
    return CheckResult(
        res.name,
        "fail",
        res.duration_s,
        f"{msg}: under {floor:g}x; likely cause: {why}",
        res.device,
        ev,
        fix,
    )
