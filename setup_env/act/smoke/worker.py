"""The verify worker: ``python -m setup_env.act.smoke.worker --spec JSON``.

Runs in a child process, possibly under another interpreter (``verify --python``), so it uses
only the standard library and torch (Python 3.9+). It imports torch once, then runs the checks it
is given, reporting each event as one JSON line on its original stdout::

    {"event": "hello", "python": "...", "pid": 123}
    {"event": "import_failed", "type": "ImportError", "message": "...", "traceback": "..."}
    {"event": "imported", "import_s": 1.2, "torch_version": "2.13.0+cpu"}
    {"event": "info", ...build report: versions, arch list, devices...}
    {"event": "plan", "items": [["roundtrip", "cpu"], ...]}
    {"event": "start", "check": "matmul", "device": "cpu"}
    {"event": "result", "check": "matmul", "device": "cpu", "status": "pass", ...}
    {"event": "done"}

Anything else written to fd 1 (by torch, a C library, a warning) is sent to stderr instead, so the
protocol stays clean. The parent enforces each check's deadline and kills this process past it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
import warnings
from typing import Any, Callable, Dict, List, Optional, Tuple

# The numeric checks and the exceptions every check raises (a sibling module of the worker).
from setup_env.act.smoke.worker_numerics import (
    UNIT_ROUNDOFF,
    CheckFailed,
    CheckSkipped,
    Ref,
    _sample_rows,
    _sync,
    _wrong_result_fix,
    accumulation,
    check_attention,
    check_conv,
    check_layer_norm,
    check_linear,
    check_matmul,
    check_optimizer,
    check_reduction,
    check_softmax,
    tolerance,
    within_tolerance,
)

_OUT: Any = None  # the protocol stream (the original stdout)


def emit(event: str, **fields: Any) -> None:
    fields["event"] = event
    line = json.dumps(fields, default=str)
    _OUT.write(line + "\n")
    _OUT.flush()


def _take_stdout() -> None:
    """Keep the real stdout for the protocol; point fd 1 (and sys.stdout) at stderr."""
    global _OUT
    sys.stdout.flush()
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    _OUT = os.fdopen(proto_fd, "w", buffering=1, encoding="utf-8")
    sys.stdout = sys.stderr


def _accelerators(torch: Any) -> Tuple[List[str], str]:
    """Visible accelerator devices (best kind first) and why none, if none."""
    why: List[str] = []
    for kind in ("cuda", "xpu", "mps"):
        mod = getattr(torch, kind, None)
        if mod is None:
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                available = bool(mod.is_available())
            except Exception as exc:  # a broken driver raises here on some builds
                available = False
                why.append(f"{kind}: {exc}")
        for w in caught:
            why.append(str(w.message).strip())
        if available:
            if kind == "mps":
                return ["mps"], ""
            n = int(mod.device_count())
            return [f"{kind}:{i}" for i in range(n)], ""
    return [], " ".join(why)


def _installed_versions(prefixes: Tuple[str, ...]) -> Dict[str, str]:
    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover
        return {}
    out = {}
    for dist in metadata.distributions():
        name = str(dist.metadata["Name"] or "").lower()
        if name.startswith(prefixes):
            out[name] = dist.version
    return out


def _top_level(dist: Any) -> List[str]:
    """The import names a distribution provides (top_level.txt, else its files)."""
    text = None
    try:
        text = dist.read_text("top_level.txt")
    except Exception:
        text = None
    if text:
        return [ln.strip() for ln in text.splitlines() if ln.strip() and "/" not in ln][:4]
    names: List[str] = []
    for f in dist.files or []:
        parts = str(f).split("/")
        top = parts[0]
        if top.endswith((".dist-info", ".egg-info", ".data")) or top in ("..", "__pycache__"):
            continue
        if len(parts) == 1:
            if not top.endswith(".py"):
                continue
            top = top[:-3]
        if top.isidentifier() and top not in names:
            names.append(top)
    return names[:4]


def torch_requirements() -> Dict[str, Any]:
    """torch's own Requires-Dist, what is installed for each and whether it imports: plain data
    for the parent to judge (markers and version specifiers are decided there)."""
    import importlib.util
    import platform
    import re

    try:
        from importlib import metadata
    except ImportError:  # pragma: no cover
        return {"error": "importlib.metadata is not available"}
    try:
        requires = list(metadata.requires("torch") or [])
    except Exception as exc:
        return {"error": f"no installed metadata for torch: {exc}"}
    env = {
        "implementation_name": sys.implementation.name,
        "implementation_version": platform.python_version(),
        "os_name": os.name,
        "platform_machine": platform.machine(),
        "platform_release": platform.release(),
        "platform_system": platform.system(),
        "platform_version": platform.version(),
        "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]),
        "sys_platform": sys.platform,
    }
    found: Dict[str, Any] = {}
    for req in requires:
        if re.search(r"extra\s*==", req):
            continue  # an optional extra: not needed by a plain install
        name = re.split(r"[\s;<>=!~\[(]", req.strip(), maxsplit=1)[0]
        if not name or name in found:
            continue
        try:
            dist = metadata.distribution(name)
        except Exception:
            found[name] = {"installed": None}
            continue
        errors: Dict[str, str] = {}
        for mod in _top_level(dist):
            if mod in sys.modules:
                continue
            try:
                # Where the module is, without running it (sympy alone takes ~0.4 s to import).
                if importlib.util.find_spec(mod) is None:
                    errors[mod] = "not found on sys.path"
            except Exception as exc:
                errors[mod] = f"{type(exc).__name__}: {exc}"[:300]
        found[name] = {"installed": dist.version, "import_errors": errors}
    return {"requires": requires, "found": found, "environment": env}


def _driver_cuda() -> Optional[str]:
    """The newest CUDA the loaded NVIDIA driver supports, from cuDriverGetVersion (libcuda)."""
    import ctypes

    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        v = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 and v.value > 0:
            return f"{v.value // 1000}.{v.value % 1000 // 10}"
    return None


def _cpu_name() -> str:
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name") and ":" in line:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def build_info(torch: Any, request: str, all_devices: bool) -> Dict[str, Any]:
    """What this torch is and which devices it sees: plain data for the parent to judge."""
    info: Dict[str, Any] = {
        "torch_version": str(torch.__version__),
        "torch_file": os.path.dirname(getattr(torch, "__file__", "") or ""),
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "xpu": getattr(torch.version, "xpu", None),
        "debug": bool(getattr(torch.version, "debug", False)),
        "mps_built": bool(getattr(torch.backends, "mps", None) and torch.backends.mps.is_built()),
    }
    try:
        import numpy

        info["numpy"] = numpy.__version__
    except Exception as exc:
        info["numpy_error"] = f"{type(exc).__name__}: {exc}"
    if info["cuda"] or info["hip"]:
        try:
            info["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception as exc:
            info["arch_list_error"] = str(exc)
    if info["cuda"]:
        info["driver_cuda"] = _driver_cuda()
        try:
            v = torch.backends.cudnn.version()
            if v:
                info["cudnn"] = (
                    f"{v // 10000}.{v % 10000 // 100}.{v % 100}"
                    if v >= 90000
                    else (f"{v // 1000}.{v % 1000 // 100}.{v % 100}")
                )
        except Exception as exc:  # "cuDNN version incompatibility: ..."
            info["cudnn_error"] = str(exc).strip().splitlines()[0]
        try:
            nv = torch.cuda.nccl.version()
            info["nccl"] = ".".join(str(x) for x in nv) if isinstance(nv, tuple) else str(nv)
        except Exception as exc:  # a build without NCCL (Windows)
            info["nccl_error"] = str(exc)[:200]
        info["cudnn_wheels"] = _installed_versions(("nvidia-cudnn-cu",))
        info["nccl_wheels"] = _installed_versions(("nvidia-nccl-cu",))
    info["requirements"] = torch_requirements()
    accel, why = _accelerators(torch)
    if why:
        info["accelerator_unavailable"] = why
    info["accelerator_count"] = len(accel)
    devices: List[str] = []
    req = (request or "auto").strip()
    if req in ("", "auto"):
        devices = (accel if all_devices else accel[:1]) or ["cpu"]
    else:
        kind = req.split(":")[0]
        if kind == "cpu":
            devices = ["cpu"]
        elif not any(d.split(":")[0] == kind for d in accel):
            build = {
                "cuda": info["cuda"] or info["hip"],
                "xpu": info["xpu"],
                "mps": info["mps_built"],
            }.get(kind)
            if kind in ("cuda", "xpu", "mps") and not build:
                reason = f"torch {info['torch_version']} is not built with {kind.upper()} support"
            else:
                reason = why or f"torch sees no {kind} device"
            info["device_error"] = f"--device {req}: {reason}"
        elif ":" in req or kind == "mps":
            if req in accel or (kind == "mps" and "mps" in accel):
                devices = [req]
            else:
                info["device_error"] = f"--device {req}: visible are {', '.join(accel)}"
        else:
            devices = [d for d in accel if d.split(":")[0] == kind]
            devices = devices if all_devices else devices[:1]
    info["devices"] = devices
    names: Dict[str, str] = {}
    gpus: List[Dict[str, Any]] = []
    cuda_accel = [d for d in accel if d.startswith("cuda")]
    for d in cuda_accel:
        try:
            p = torch.cuda.get_device_properties(d)
            g: Dict[str, Any] = {"device": d, "name": p.name, "memory_bytes": int(p.total_memory)}
            if info["hip"]:
                g["gfx"] = getattr(p, "gcnArchName", "")
            else:
                g["capability"] = f"{p.major}.{p.minor}"
            gpus.append(g)
            names[d] = p.name
        except Exception as exc:
            info.setdefault("device_errors", {})[d] = str(exc)
    for d in accel:
        if d.startswith("xpu"):
            try:
                names[d] = torch.xpu.get_device_name(d)
            except Exception as exc:
                info.setdefault("device_errors", {})[d] = str(exc)[:200]
    if "mps" in accel:
        names["mps"] = "Apple GPU (MPS)"
    if "cpu" in devices:
        names["cpu"] = _cpu_name()
    info["gpus"] = gpus
    info["device_names"] = names
    return info


def check_roundtrip(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    host = torch.arange(1024, dtype=torch.float32).reshape(32, 32)
    on_dev = host.to(dev)
    if on_dev.device.type != torch.device(dev).type:
        raise CheckFailed(f"tensor landed on {on_dev.device}, not {dev}")
    back = (on_dev * 2 + 1).to("cpu")
    expected = [2.0 * i + 1.0 for i in range(1024)]
    try:
        import numpy
    except Exception as exc:
        # Still prove the device round trip, then fail the NumPy half: Tensor.numpy() is what
        # every data pipeline, plot and metric uses.
        got = [float(x) for x in back.reshape(-1).tolist()]
        if got != expected:
            raise CheckFailed(f"values changed on the way through {dev}") from None
        missing = isinstance(exc, ModuleNotFoundError) and (exc.name or "") == "numpy"
        raise CheckFailed(
            f"1024 values CPU -> {dev} -> CPU intact, but NumPy "
            + ("is not installed" if missing else f"does not import ({type(exc).__name__}: {exc})")
            + ": Tensor.numpy() and torch.from_numpy() cannot work",
            {"numpy_error": f"{type(exc).__name__}: {exc}"[:500]},
            "pip install numpy"
            if missing
            else "reinstall NumPy: pip install --force-reinstall numpy (not torch)",
        ) from None
    try:
        arr = back.numpy()
    except Exception as exc:
        raise CheckFailed(
            f"Tensor.numpy() failed: {exc}",
            {"numpy": getattr(numpy, "__version__", "?")},
            "reinstall NumPy: pip install --force-reinstall numpy (a NumPy this torch was built "
            "for; not torch)",
        ) from exc
    flat = [float(x) for x in arr.reshape(-1).tolist()]
    bad = sum(1 for x, y in zip(flat, expected) if x != y)
    if bad or len(flat) != len(expected):
        raise CheckFailed(f"{bad} of 1024 values changed on the way through {dev}")
    # And back: a NumPy array into torch and onto the device.
    again = torch.from_numpy(arr.copy()).to(dev).sum().item()
    if again != sum(expected):
        raise CheckFailed(f"NumPy -> torch -> {dev} sum {again} != {sum(expected)}")
    return f"1024 values CPU -> {dev} -> CPU -> NumPy intact", {"numpy": type(arr).__module__}


def check_autograd(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    gen = torch.Generator().manual_seed(7)
    x0 = torch.randn(256, generator=gen)
    w0 = torch.randn(256, generator=gen)
    x = x0.to(dev).requires_grad_(True)
    w = w0.to(dev)
    y = (x**3 * w).sum() + (x * w).sin().sum()
    y.backward()
    grad = x.grad.to("cpu", torch.float64)
    xd, wd = x0.double(), w0.double()
    expected = 3 * xd**2 * wd + (xd * wd).cos() * wd
    # Each term is a few float32 roundings of its own size (the product x*w rounded moves cos
    # by up to |x*w| u, times |w|): 8 roundings of 3x^2|w| + |w|(1 + |xw|).
    bound = 3 * xd**2 * wd.abs() + wd.abs() * (1 + (xd * wd).abs())
    ok, worst, nonfinite = within_tolerance(torch, grad, expected, bound, tolerance("float32", 8))
    if not ok:
        raise CheckFailed(
            f"gradient off the analytic value: {worst:.3g}x the tolerance, {nonfinite} non-finite",
            {"error_vs_tolerance": worst},
        )
    return (
        f"d/dx matches the analytic gradient ({worst:.2f} of tol)",
        {"error_vs_tolerance": round(worst, 4)},
    )


def check_train(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(512, 16, generator=gen)
    true_w = torch.randn(16, 1, generator=gen)
    y = x @ true_w + 0.01 * torch.randn(512, 1, generator=gen)
    x, y = x.to(dev), y.to(dev)
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1)
    ).to(dev)
    # Plain SGD with momentum written out: torch.optim's first step imports torch._dynamo
    # (about a second), which would dominate verify's run time and prove nothing more.
    params = list(model.parameters())
    velocity = [torch.zeros_like(p) for p in params]
    losses = []
    for _ in range(60):
        for p in params:
            p.grad = None
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p, v in zip(params, velocity):
                v.mul_(0.9).add_(p.grad)
                p.sub_(0.05 * v)
        losses.append(float(loss.item()))
    first, last = losses[0], losses[-1]
    ev = {"loss_first": round(first, 5), "loss_last": round(last, 5), "steps": len(losses)}
    if not all(math.isfinite(v) for v in losses):
        raise CheckFailed("the loss became NaN/Inf", ev)
    if not last < 0.5 * first:
        raise CheckFailed(f"the loss did not fall: {first:.4g} -> {last:.4g}", ev)
    return f"loss fell {first:.3g} -> {last:.3g} in {len(losses)} SGD steps", ev


def check_autocast(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    kind = dev.split(":")[0]
    amp = getattr(torch, "amp", None)
    available = getattr(amp, "is_autocast_available", None)
    if available is not None and not available(kind):
        raise CheckSkipped(f"autocast is not available on {kind}")
    try:
        dtype = torch.get_autocast_dtype(kind)
    except Exception:
        dtype = torch.bfloat16 if kind == "cpu" else torch.float16
    label = str(dtype).replace("torch.", "")
    gen = torch.Generator().manual_seed(11)
    k = 64
    a0, b0 = torch.randn(64, k, generator=gen), torch.randn(k, 48, generator=gen)
    a = a0.to(dev).requires_grad_(True)
    b = b0.to(dev)
    with torch.autocast(device_type=kind, dtype=dtype):
        out = a @ b
    if out.dtype != dtype:
        raise CheckFailed(f"autocast matmul returned {out.dtype}, expected {dtype}")
    out.float().sum().backward()
    a64, b64 = a0.double(), b0.double()
    # Autocast rounds the float32 inputs to the low dtype: that rounding (2u per product,
    # relative to the bound) on top of the product's own model.
    rel, coef = tolerance(label, k, accumulation(torch, dev, label))
    tol = (rel, coef + 2 * UNIT_ROUNDOFF[label])
    ok, worst, nonfinite = within_tolerance(torch, out, a64 @ b64, a64.abs() @ b64.abs(), tol)
    grad_ok = a.grad is not None and bool(torch.isfinite(a.grad).all().item())
    ev = {"dtype": label, "error_vs_tolerance": round(worst, 4), "grad_finite": grad_ok}
    if not ok:
        raise CheckFailed(
            f"autocast {label} matmul off by {worst:.3g}x the tolerance ({nonfinite} non-finite)",
            ev,
        )
    if not grad_ok:
        raise CheckFailed("the backward pass under autocast gave non-finite gradients", ev)
    return f"{label} autocast forward and backward ok ({worst:.2f} of tol)", ev


def check_compile(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    def f(x: Any, w: Any) -> Any:
        return torch.nn.functional.gelu(x @ w).sin() + x.cos().sum(dim=1, keepdim=True)

    # One tiny kernel: inductor's pool of compile workers (each importing torch) costs more to
    # start than it saves here; 27 s -> 16 s cold on a 2-core machine. The user's setting wins.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    gen = torch.Generator().manual_seed(5)
    x = torch.randn(32, 32, generator=gen).to(dev)
    w = torch.randn(32, 32, generator=gen).to(dev)
    t0 = time.perf_counter()
    compiled = torch.compile(f)
    out = compiled(x, w)
    _sync(torch, dev)
    compile_s = time.perf_counter() - t0
    xd, wd = x.double().to("cpu"), w.double().to("cpu")
    ref = f(xd, wd)
    # The k=32 product's error through gelu (slope <= 1.13) and sin (<= 1), plus the sum of 32
    # cosines and each op's own rounding: 36 float32 roundings of these magnitudes.
    bound = 1.13 * (xd.abs() @ wd.abs()) + xd.cos().abs().sum(dim=1, keepdim=True) + ref.abs()
    tol = tolerance("float32", 36)
    ok, worst, nonfinite = within_tolerance(torch, out, ref, bound, tol)
    ev = {"compile_s": round(compile_s, 2), "error_vs_tolerance": round(worst, 4)}
    if not ok:
        raise CheckFailed(
            f"compiled result differs from eager ({worst:.3g}x tol, {nonfinite} non-finite)", ev
        )
    return f"compiled and matched eager ({compile_s:.1f}s to compile)", ev


def _timed(
    torch: Any, dev: str, fn: Callable[[], Any], budget_s: float, min_iters: int = 3
) -> Tuple[int, float]:
    """Run fn until the budget is spent (at least min_iters); (iterations, seconds)."""
    fn()
    _sync(torch, dev)
    n = 0
    t0 = time.perf_counter()
    while True:
        fn()
        n += 1
        if n >= min_iters:
            _sync(torch, dev)
            if time.perf_counter() - t0 >= budget_s:
                break
    return n, time.perf_counter() - t0


def check_matmul_speed(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    kind = dev.split(":")[0]
    dtype, label = torch.float32, "float32"
    if kind != "cpu":
        try:
            bf16 = torch.cuda.is_bf16_supported() if kind == "cuda" else True
        except Exception:
            bf16 = False
        if bf16:
            dtype, label = torch.bfloat16, "bfloat16"
    # Grow the matrix until one product takes >= 2 ms (time-bounded on slow devices and CPUs).
    sizes = (256,) if kind == "cpu" else (1024, 2048, 4096, 8192)
    budget = 0.04 if kind == "cpu" else 0.25
    n = sizes[0]
    for n in sizes:
        a = torch.randn(n, n, device=dev, dtype=dtype)
        b = torch.randn(n, n, device=dev, dtype=dtype)
        _sync(torch, dev)
        t0 = time.perf_counter()
        a @ b
        _sync(torch, dev)
        if time.perf_counter() - t0 > 0.004:
            break
    iters, secs = _timed(torch, dev, lambda: a @ b, budget)
    tflops = 2.0 * n**3 * iters / secs / 1e12
    ev: Dict[str, Any] = {"tflops": round(tflops, 3), "dtype": label, "n": n, "iterations": iters}
    # The timed product must also be right: a sample of its rows and columns against the
    # float64 reference (a kernel that is fast because it skips the work is caught here).
    out = a @ b
    _sync(torch, dev)
    R = Ref(torch)
    gen = torch.Generator().manual_seed(21)
    rows = _sample_rows(torch, n, 14)(gen)
    cols = _sample_rows(torch, n, 14)(gen)
    a_s = R.arr(a.to("cpu").index_select(0, rows))
    b_s = R.arr(b.to("cpu").index_select(1, cols))
    got = out.to("cpu").index_select(0, rows).index_select(1, cols)
    rel, coef = tolerance(label, n, accumulation(torch, dev, label))
    exact = R.matmul(a_s, b_s)
    allowed = R.abs(exact) * rel + R.matmul(R.abs(a_s), R.abs(b_s)) * coef
    ok, worst, nonfinite = R.compare(got, exact, allowed)
    ev["error_vs_tolerance"] = round(worst, 4)
    if not ok:
        raise CheckFailed(
            f"the timed {n}x{n} {label} product is wrong: "
            + (f"{nonfinite} non-finite values" if nonfinite else f"error {worst:.3g}x tol"),
            ev,
            _wrong_result_fix(torch, ("torch.matmul", "torch.Tensor.__matmul__")),
        )
    if kind == "cpu":
        ev.update(_cpu_context(torch))
        try:
            import numpy

            an = numpy.array(a.to("cpu").float().numpy(), dtype="float32")
            bn = numpy.array(b.to("cpu").float().numpy(), dtype="float32")
        except Exception as exc:
            ev["yardstick_error"] = f"{type(exc).__name__}: {exc}"[:200]
        else:
            # Blocks of 4 rows: OpenBLAS runs a product of at most 64^3 multiply-adds on one
            # thread, so the yardstick is one thread too, like torch here.
            blocks = [an[i : i + 4] for i in range(0, n, 4)]

            def numpy_product() -> None:
                for blk in blocks:
                    numpy.matmul(blk, bn)

            t_best, n_best = _versus(torch, lambda: a @ b, numpy_product)
            ev["best_tflops"] = round(2.0 * n**3 / t_best / 1e12, 4)
            ev["yardstick_tflops"] = round(2.0 * n**3 / n_best / 1e12, 4)
            ev["yardstick"] = "NumPy's BLAS, same product, same run"
    return f"{tflops:.3g} TFLOP/s ({label}, {n}x{n})", ev


def _cpu_context(torch: Any) -> Dict[str, Any]:
    """What decides CPU speed: torch's threads, the CPU count, the thread variables, the build."""
    ev: Dict[str, Any] = {"torch_threads": int(torch.get_num_threads()), "cpus": os.cpu_count()}
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var):
            ev[var] = os.environ[var]
    ev["debug_build"] = bool(getattr(torch.version, "debug", False))
    mkl = getattr(torch.backends, "mkl", None)
    ev["mkl"] = bool(mkl is not None and mkl.is_available())
    return ev


def _versus(
    torch: Any, torch_fn: Callable[[], Any], numpy_fn: Callable[[], Any], each_s: float = 0.02
) -> Tuple[float, float]:
    """Fastest seconds per call of torch and of the NumPy yardstick, measured in alternating
    rounds so a busy machine slows both alike; up to 4 rounds, fewer once torch is clearly at
    least half as fast (a slow torch is measured in every round before it is called slow).

    torch runs on one thread here: on a machine busier than its cores, an OpenMP team waiting at
    its barriers is slower by 50x for reasons that are the machine's, not torch's (NumPy's BLAS
    runs a product this small on one thread). Threads are reported, and judged, separately."""
    threads = int(torch.get_num_threads())
    t_best = n_best = float("inf")
    try:
        torch.set_num_threads(1)
        for _ in range(4):
            t_best = min(t_best, _best_of(torch_fn, each_s))
            n_best = min(n_best, _best_of(numpy_fn, each_s))
            if t_best <= 2.0 * n_best:
                break
    finally:
        torch.set_num_threads(threads)
    return max(t_best, 1e-9), max(n_best, 1e-9)


def _best_of(fn: Callable[[], Any], budget_s: float) -> float:
    """The fastest of repeated calls within the budget (at least 3): robust to a busy machine."""
    fn()
    best = float("inf")
    t_end = time.perf_counter() + budget_s
    n = 0
    while n < 3 or time.perf_counter() < t_end:
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
        n += 1
    return best


def check_memory_bandwidth(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    kind = dev.split(":")[0]
    mib = 32 if kind == "cpu" else 512
    if kind == "cuda":
        free, _total = torch.cuda.mem_get_info(dev)
        mib = max(16, min(mib, free // (4 << 20)))
    n = mib * (1 << 20) // 4
    src = torch.ones(n, device=dev, dtype=torch.float32)
    dst = torch.empty_like(src)
    iters, secs = _timed(torch, dev, lambda: dst.copy_(src), 0.03 if kind == "cpu" else 0.2)
    gbps = 2.0 * n * 4 * iters / secs / 1e9  # a copy reads and writes every byte
    ev: Dict[str, Any] = {"gbps": round(gbps, 2), "mib": mib, "iterations": iters}
    if kind == "cpu":
        ev.update(_cpu_context(torch))
        try:
            import numpy

            s_np = numpy.ones(n, dtype="float32")
            d_np = numpy.empty_like(s_np)
            t_best, n_best = _versus(
                torch, lambda: dst.copy_(src), lambda: numpy.copyto(d_np, s_np)
            )
            ev["best_gbps"] = round(2.0 * n * 4 / t_best / 1e9, 2)
            ev["yardstick_gbps"] = round(2.0 * n * 4 / n_best / 1e9, 2)
            ev["yardstick"] = "NumPy copy, same size, same run"
        except Exception as exc:
            ev["yardstick_error"] = f"{type(exc).__name__}: {exc}"[:200]
    return f"{gbps:.4g} GB/s (device copy, {mib} MiB)", ev


def check_h2d_bandwidth(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    kind = dev.split(":")[0]
    if kind == "cpu":
        raise CheckSkipped("no host-to-device copy on the CPU")
    mib = 256
    n = mib * (1 << 20) // 4
    host = torch.ones(n, dtype=torch.float32)
    pinned = False
    if kind == "cuda":
        host = host.pin_memory()
        pinned = True
    target = torch.empty(n, dtype=torch.float32, device=dev)
    iters, secs = _timed(torch, dev, lambda: target.copy_(host, non_blocking=pinned), 0.2)
    gbps = n * 4 * iters / secs / 1e9
    return (
        f"{gbps:.4g} GB/s ({'pinned' if pinned else 'pageable'}, {mib} MiB)",
        {"gbps": round(gbps, 2), "mib": mib, "pinned": pinned, "iterations": iters},
    )


def check__hang(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    while True:
        time.sleep(3600)


def check__crash(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    sys.stderr.write("test crash: exiting with status 7\n")
    sys.stderr.flush()
    os._exit(7)


CHECK_FUNCS: Dict[str, Callable[[Any, str], Tuple[str, Dict[str, Any]]]] = {
    "roundtrip": check_roundtrip,
    "matmul": check_matmul,
    "linear": check_linear,
    "conv": check_conv,
    "softmax": check_softmax,
    "layer-norm": check_layer_norm,
    "attention": check_attention,
    "reduction": check_reduction,
    "optimizer": check_optimizer,
    "autograd": check_autograd,
    "train": check_train,
    "autocast": check_autocast,
    "compile": check_compile,
    "matmul-speed": check_matmul_speed,
    "memory-bandwidth": check_memory_bandwidth,
    "h2d-bandwidth": check_h2d_bandwidth,
    "_hang": check__hang,
    "_crash": check__crash,
}


def run_check(torch: Any, name: str, dev: str) -> Dict[str, Any]:
    t0 = time.perf_counter()
    out: Dict[str, Any] = {"check": name, "device": dev}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            message, evidence = CHECK_FUNCS[name](torch, dev)
        out.update(status="pass", message=message, evidence=evidence)
    except CheckSkipped as exc:
        out.update(status="skip", message=str(exc), evidence=exc.evidence)
    except CheckFailed as exc:
        out.update(status="fail", message=str(exc), evidence=exc.evidence, fix=exc.fix)
    except Exception as exc:
        out.update(
            status="fail",
            message=f"{type(exc).__name__}: {exc}".strip()[:2000],
            evidence={"traceback": traceback.format_exc()[-4000:]},
        )
    out["duration_s"] = round(time.perf_counter() - t0, 4)
    return out


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m setup_env.act.smoke.worker")
    parser.add_argument("--spec", required=True, help="JSON: device, all_devices, checks, items")
    args = parser.parse_args(argv)
    spec = json.loads(args.spec)
    _take_stdout()
    emit("hello", python=sys.executable, version=sys.version.split()[0], pid=os.getpid())
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import torch
    except BaseException as exc:
        emit(
            "import_failed",
            type=type(exc).__name__,
            message=str(exc),
            module=getattr(exc, "name", None),
            traceback=traceback.format_exc()[-6000:],
        )
        return 0
    import_s = time.perf_counter() - t0
    # Probing the devices next initialises CUDA/XPU/MPS: a hung driver hangs here, not in import.
    emit("imported", import_s=round(import_s, 3), torch_version=str(torch.__version__))
    info = build_info(torch, spec.get("device") or "auto", bool(spec.get("all_devices")))
    info["import_s"] = round(import_s, 3)
    info["import_warnings"] = [str(w.message)[:500] for w in caught][:10]
    emit("info", **info)
    items = spec.get("items")
    if items is None:
        items = [[c, d] for d in info["devices"] for c in spec.get("checks", [])]
    emit("plan", items=items)
    for name, dev in items:
        emit("start", check=name, device=dev)
        emit("result", **run_check(torch, name, dev))
    emit("done")
    return 0


if __name__ == "__main__":
    code = main()
    # Skip the interpreter's teardown: with torch loaded, collecting thousands of modules and
    # running torch's exit hooks takes ~0.7 s here, and the worker has nothing left to clean up.
    sys.stderr.flush()
    os._exit(code)
