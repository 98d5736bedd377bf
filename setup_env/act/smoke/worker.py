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


class CheckFailed(Exception):
    """A check's verdict: fail, with evidence and maybe a fix."""

    def __init__(
        self, message: str, evidence: Optional[Dict[str, Any]] = None, fix: Optional[str] = None
    ) -> None:
        super().__init__(message)
        self.evidence = evidence or {}
        self.fix = fix


class CheckSkipped(Exception):
    def __init__(self, message: str, evidence: Optional[Dict[str, Any]] = None) -> None:
        super().__init__(message)
        self.evidence = evidence or {}


# --- numerics -----------------------------------------------------------------------------------

# Unit roundoff of each compute dtype (2^-p, p = significand bits incl. the implicit one).
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "tf32": 2.0**-11,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}


def tolerance(dtype_label: str, k: int) -> float:
    """Allowed error, as a fraction of the componentwise bound sum_k |a_ik||b_kj|.

    Rounding error of a length-k dot product grows like u*sqrt(k) for random data (u*k worst
    case); 4*u*sqrt(k) plus one output rounding leaves room for blocked/split-k kernels while a
    wrong kernel (errors of order 1) still fails by orders of magnitude.
    """
    u = UNIT_ROUNDOFF[dtype_label]
    return 4.0 * u * math.sqrt(max(k, 1)) + u


def within_tolerance(
    torch: Any, result: Any, reference: Any, bound: Any, tol: float
) -> Tuple[bool, float, int]:
    """(ok, worst error as a fraction of the tolerance, count of non-finite values).

    ``reference`` and ``bound`` are float64 CPU tensors (the exact product and the product of
    absolute values). NaN or Inf anywhere in the result never passes.
    """
    res = result.detach().to("cpu", torch.float64)
    if res.shape != reference.shape:
        return False, float("inf"), 0
    nonfinite = int((~torch.isfinite(res)).sum().item())
    err = (res - reference).abs()
    allowed = bound.abs() * tol + 1e-300
    worst = float((err / allowed).max().item()) if err.numel() else 0.0
    ok = nonfinite == 0 and worst <= 1.0  # NaN <= 1.0 is False as well
    return ok, worst, nonfinite


# --- devices ------------------------------------------------------------------------------------


def _sync(torch: Any, dev: str) -> None:
    kind = dev.split(":")[0]
    if kind == "cuda":
        torch.cuda.synchronize(dev)
    elif kind == "xpu":
        torch.xpu.synchronize(dev)
    elif kind == "mps":
        torch.mps.synchronize()


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


# --- checks -------------------------------------------------------------------------------------


def _dtypes(torch: Any, dev: str) -> List[Tuple[str, Any, bool]]:
    """(label, dtype, tf32 on) to try on this device, fp32 first."""
    kind = dev.split(":")[0]
    out: List[Tuple[str, Any, bool]] = [("float32", torch.float32, False)]
    if kind == "cuda" and not torch.version.hip:
        major = torch.cuda.get_device_capability(dev)[0]
        if major >= 8:
            out.append(("tf32", torch.float32, True))
    out.append(("float16", torch.float16, False))
    bf16 = True
    if kind == "cuda":
        bf16 = (
            bool(torch.cuda.is_bf16_supported(including_emulation=False))
            if ("including_emulation" in torch.cuda.is_bf16_supported.__code__.co_varnames)
            else bool(torch.cuda.is_bf16_supported())
        )
    if bf16:
        out.append(("bfloat16", torch.bfloat16, False))
    return out


def _unsupported(exc: BaseException) -> bool:
    text = str(exc)
    return (
        isinstance(exc, (NotImplementedError, TypeError))
        or "not implemented for" in text
        or ("not supported" in text.lower())
    )


class _Tf32:
    """Turn TF32 on (or off) for matmul and cuDNN inside a block, restoring it after."""

    def __init__(self, torch: Any, on: bool) -> None:
        self.torch, self.on = torch, on

    def __enter__(self) -> None:
        b = self.torch.backends
        self.saved = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
        b.cuda.matmul.allow_tf32 = self.on
        b.cudnn.allow_tf32 = self.on

    def __exit__(self, *exc: Any) -> None:
        b = self.torch.backends
        b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = self.saved


# --- references that never use the op under test -------------------------------------------------


class Ref:
    """Float64 reference arithmetic on the host that does not go through torch's kernels.

    NumPy float64 when NumPy works (``numpy.matmul`` is NumPy's own BLAS, never torch's); without
    NumPy, a float64 multiply-sum in torch (broadcast multiply, then sum), which never reaches the
    matmul/conv/softmax/attention kernels a fault would sit in.
    """

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.np: Any = None
        try:
            import numpy

            torch.zeros(1).numpy()  # an ABI-broken NumPy imports but cannot share memory
            self.np = numpy
        except Exception:
            self.np = None
        self.kind = "numpy float64" if self.np is not None else "torch float64 multiply-sum"

    def arr(self, t: Any) -> Any:
        """A float64 host copy of a tensor (a plain cast: no kernel under test)."""
        host = t.detach().to("cpu").to(self.torch.float64).contiguous()
        if self.np is not None:
            return self.np.array(host.numpy(), dtype=self.np.float64, copy=True)
        return host

    def matmul(self, a: Any, b: Any) -> Any:
        if self.np is not None:
            return self.np.matmul(a, b)
        # (..., m, k, 1) * (..., 1, k, n) summed over k, a few rows at a time.
        rows = max(1, (1 << 22) // max(1, a.shape[-1] * b.shape[-1]))
        parts = []
        for i in range(0, a.shape[-2], rows):
            part = a[..., i : i + rows, :].unsqueeze(-1) * b.unsqueeze(-3)
            parts.append(part.sum(-2))
        return self.torch.cat(parts, dim=-2)

    def abs(self, x: Any) -> Any:
        return abs(x)

    def exp(self, x: Any) -> Any:
        return self.np.exp(x) if self.np is not None else x.exp()

    def log(self, x: Any) -> Any:
        return self.np.log(x) if self.np is not None else x.log()

    def sqrt(self, x: Any) -> Any:
        return self.np.sqrt(x) if self.np is not None else x.sqrt()

    def amax(self, x: Any, axis: int) -> Any:
        if self.np is not None:
            return x.max(axis=axis, keepdims=True)
        return x.max(dim=axis, keepdim=True).values

    def sum(self, x: Any, axis: int) -> Any:
        if self.np is not None:
            return x.sum(axis=axis, keepdims=True)
        return x.sum(dim=axis, keepdim=True)

    def mean(self, x: Any, axis: int) -> Any:
        return self.sum(x, axis) / x.shape[axis]

    def swap(self, x: Any) -> Any:
        """Swap the last two axes."""
        if self.np is not None:
            return self.np.swapaxes(x, -1, -2)
        return x.transpose(-1, -2)

    def where(self, cond: Any, x: Any, y: float) -> Any:
        if self.np is not None:
            return self.np.where(cond, x, y)
        return self.torch.where(cond, x, self.torch.full_like(x, y))

    def tril(self, n: int, m: int) -> Any:
        if self.np is not None:
            return self.np.tril(self.np.ones((n, m), dtype=bool))
        return self.torch.ones(n, m, dtype=self.torch.bool).tril()

    def pad(self, x: Any, p: int) -> Any:
        """Zero-pad the last two axes of (N, C, H, W) by p."""
        if p == 0:
            return x
        n, c, h, w = x.shape
        if self.np is not None:
            out = self.np.zeros((n, c, h + 2 * p, w + 2 * p))
        else:
            out = self.torch.zeros(n, c, h + 2 * p, w + 2 * p, dtype=self.torch.float64)
        out[:, :, p : p + h, p : p + w] = x
        return out

    def conv2d(self, x: Any, w: Any, bias: Any, stride: int, padding: int) -> Any:
        """Convolution as im2col then one product: (N, C*kh*kw, L) columns times the weights."""
        xp = self.pad(x, padding)
        n, c, hp, wp = xp.shape
        o, _, kh, kw = w.shape
        oh, ow = (hp - kh) // stride + 1, (wp - kw) // stride + 1
        cols = []
        for ci in range(c):
            for i in range(kh):
                for j in range(kw):
                    patch = xp[:, ci, i : i + stride * oh : stride, j : j + stride * ow : stride]
                    cols.append(patch.reshape(n, 1, oh * ow))
        if self.np is not None:
            col = self.np.concatenate(cols, axis=1)
        else:
            col = self.torch.cat(cols, dim=1)
        out = self.matmul(w.reshape(o, c * kh * kw), col).reshape(n, o, oh, ow)
        if bias is not None:
            out = out + bias.reshape(1, o, 1, 1)
        return out

    def compare(self, result: Any, ref: Any, allowed: Any) -> Tuple[bool, float, int]:
        """(ok, worst error as a fraction of what is allowed, non-finite count)."""
        res = self.arr(result)
        if tuple(res.shape) != tuple(ref.shape):
            return False, float("inf"), 0
        if self.np is not None:
            np = self.np
            nonfinite = int((~np.isfinite(res)).sum())
            with np.errstate(invalid="ignore", over="ignore"):
                ratio = np.abs(res - ref) / (np.abs(allowed) + 1e-300)
            worst = float(np.nan_to_num(ratio, nan=np.inf).max()) if ratio.size else 0.0
        else:
            nonfinite = int((~self.torch.isfinite(res)).sum().item())
            ratio = (res - ref).abs() / (allowed.abs() + 1e-300)
            worst = float(ratio.nan_to_num(nan=float("inf")).max().item()) if ratio.numel() else 0.0
        return nonfinite == 0 and worst <= 1.0, worst, nonfinite


class Case:
    """One numeric case: tensors made on the host, the op on the device, the reference on host.

    ``make(gen)`` gives float32 host tensors; each is rounded to the dtype under test first, so
    the reference sees exactly the values the device does. ``ref(R, *arrays)`` returns (expected,
    scale): the error allowed is ``tol * scale`` elementwise, ``tol`` from the dtype's unit
    roundoff and the reduction length ``k`` (see :func:`tolerance`). ``rows`` (a count) compares
    only a sample of the result's leading rows: the big products are checked on a slice.
    """

    def __init__(
        self,
        name: str,
        make: Callable[[Any], Tuple[Any, ...]],
        op: Callable[..., Any],
        ref: Callable[..., Tuple[Any, Any]],
        k: int,
        slack: float = 1.0,
        dtypes: Optional[Tuple[str, ...]] = None,
        rows: Optional[Callable[[Any], Any]] = None,
    ) -> None:
        self.name, self.make, self.op, self.ref = name, make, op, ref
        self.k, self.slack, self.dtypes, self.rows = k, slack, dtypes, rows


def _wrong_result_fix(torch: Any, ops: Tuple[str, ...]) -> str:
    """The fix for a wrong result: name a Python-level replacement of the op when there is one
    (a sitecustomize, a monkeypatching import), else reinstall."""
    root = os.path.dirname(os.path.abspath(getattr(torch, "__file__", "") or "."))
    for dotted in ops:
        obj: Any = torch
        for part in dotted.split(".")[1:]:
            obj = getattr(obj, part, None)
        code = getattr(obj, "__code__", None)
        where = os.path.abspath(getattr(code, "co_filename", "") or "")
        if code is not None and not where.startswith(root + os.sep):
            return f"{dotted} is replaced by a function from {where}: remove that patch"
    return (
        "torch computes wrong results here: pip install --force-reinstall --no-cache-dir torch "
        "(same version and index); if it stays wrong, report it with "
        "`python -m torch.utils.collect_env`"
    )


def _run_cases(
    torch: Any, dev: str, cases: List[Case], ops: Tuple[str, ...] = ()
) -> Dict[str, Any]:
    """Each case in each dtype the device supports, against the reference; raises CheckFailed
    naming every case and dtype that is off."""
    R = Ref(torch)
    is_cuda = dev.startswith("cuda") and not torch.version.hip
    results: Dict[str, Any] = {}
    failures: List[str] = []
    unsupported: Dict[str, str] = {}
    for label, dtype, tf32 in _dtypes(torch, dev):
        worst_all = 0.0
        for case in cases:
            if case.dtypes is not None and label not in case.dtypes:
                continue
            gen = torch.Generator().manual_seed(1234)
            host = [t.to(dtype) for t in case.make(gen)]
            try:
                if is_cuda:
                    with _Tf32(torch, tf32):
                        out = case.op(*[t.to(dev) for t in host])
                        _sync(torch, dev)
                else:
                    out = case.op(*[t.to(dev) for t in host])
                    _sync(torch, dev)
            except Exception as exc:
                if label != "float32" and _unsupported(exc):
                    unsupported[label] = str(exc).splitlines()[0][:200]
                    break
                raise CheckFailed(
                    f"{case.name} ({label}): {type(exc).__name__}: {str(exc)[:300]}"
                ) from exc
            sel = None
            if case.rows is not None:
                sel = case.rows(gen)
                out = out.detach().to("cpu").index_select(-2, sel)
                host = [host[0].index_select(-2, sel), *host[1:]]
            expected, scale = case.ref(R, *[R.arr(t) for t in host])
            tol = tolerance(label, case.k) * case.slack
            if out.dtype != dtype:
                failures.append(f"{case.name} ({label}): result dtype {out.dtype}")
                continue
            ok, worst, nonfinite = R.compare(out, expected, scale * tol)
            worst_all = max(worst_all, worst)
            if not ok:
                failures.append(
                    f"{case.name} ({label}): {nonfinite} non-finite values"
                    if nonfinite
                    else f"{case.name} ({label}): error {worst:.3g}x the tolerance"
                )
        if label in unsupported:
            results[label] = {"supported": False, "error": unsupported[label]}
        else:
            results[label] = {"ok": True, "error_vs_tolerance": round(worst_all, 4)}
    for f in failures:
        lab = f.split("(")[-1].split(")")[0]
        if lab in results:
            results[lab]["ok"] = False
    evidence = {"dtypes": results, "cases": [c.name for c in cases], "reference": R.kind}
    if failures:
        raise CheckFailed("; ".join(failures[:6]), evidence, _wrong_result_fix(torch, ops))
    return evidence


def _summary(results: Dict[str, Any]) -> str:
    ok = [k for k, v in results.items() if v.get("ok")]
    unsupported = [k for k, v in results.items() if v.get("supported") is False]
    msg = ", ".join(f"{k} ok ({results[k]['error_vs_tolerance']:.2f} of tol)" for k in ok)
    if unsupported:
        msg += "; unsupported here: " + ", ".join(unsupported)
    return msg


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


def _large_shapes(dev: str) -> Dict[str, Tuple[int, int, int]]:
    """(m, k, n) of the big product per dtype: >= 1024 rows everywhere; on a CPU the inner sizes
    shrink for the dtypes its kernels are slow in (float16 is emulated on most CPUs)."""
    if dev.split(":")[0] != "cpu":
        return {lab: (1024, 1024, 1024) for lab in ("float32", "tf32", "float16", "bfloat16")}
    return {"float32": (1024, 1024, 1024), "bfloat16": (1024, 512, 256), "float16": (1024, 96, 64)}


def _sample_rows(torch: Any, m: int, count: int = 12) -> Callable[[Any], Any]:
    """A sample of row indices: the first and last rows and some at random."""

    def rows(gen: Any) -> Any:
        picked = torch.randint(0, m, (count,), generator=gen)
        return torch.cat([torch.tensor([0, m - 1]), picked]).unique()

    return rows


def _mm_ref(R: Any, a: Any, b: Any) -> Tuple[Any, Any]:
    return R.matmul(a, b), R.matmul(R.abs(a), R.abs(b))


def _mm_case(
    torch: Any, name: str, m: int, k: int, n: int, op: Callable[[Any, Any], Any], **kw: Any
) -> Case:
    def make(gen: Any) -> Tuple[Any, ...]:
        return torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen)

    return Case(name, make, op, _mm_ref, k, **kw)


def check_matmul(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """Products of the shapes models use: small and odd, batched, transposed and strided
    operands, and one >= 1024 product per dtype checked on a sample of its rows."""
    cases = [
        _mm_case(torch, "96x64x80", 96, 64, 80, lambda a, b: a @ b),
        _mm_case(torch, "odd 127x61x33", 127, 61, 33, lambda a, b: torch.matmul(a, b)),
        # a @ b.T and a.T @ b: the operand arrives transposed (attention, linear backward).
        _mm_case(torch, "a @ b.T", 96, 64, 80, lambda a, b: a @ b.t().contiguous().t()),
        _mm_case(torch, "a.T @ b", 96, 64, 80, lambda a, b: a.t().contiguous().t() @ b),
        # Every other column of a wider matrix: a strided, non-contiguous operand.
        _mm_case(
            torch,
            "strided a[:, ::2]",
            48,
            40,
            24,
            lambda a, b: torch.stack([a, a], dim=-1)[:, :, 0] @ b,
        ),
    ]

    def make_batched(gen: Any) -> Tuple[Any, ...]:
        return torch.randn(4, 33, 47, generator=gen), torch.randn(4, 47, 29, generator=gen)

    cases.append(Case("batched 4x33x47x29", make_batched, torch.matmul, _mm_ref, 47))
    for label, (m, k, n) in _large_shapes(dev).items():
        cases.append(
            _mm_case(
                torch,
                f"{m}x{k}x{n}",
                m,
                k,
                n,
                lambda a, b: a @ b,
                dtypes=(label,),
                rows=_sample_rows(torch, m),
            )
        )
    ev = _run_cases(torch, dev, cases, ("torch.matmul", "torch.Tensor.__matmul__"))
    return _summary(ev["dtypes"]) + f" on {len(cases)} shapes", ev


def check_linear(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """F.linear with bias (addmm; every nn.Linear), 2-D and batched 3-D input."""
    f = torch.nn.functional

    def ref(R: Any, x: Any, w: Any, b: Any) -> Tuple[Any, Any]:
        wt = R.swap(w)
        return R.matmul(x, wt) + b, R.matmul(R.abs(x), R.abs(wt)) + R.abs(b)

    def make2(gen: Any) -> Tuple[Any, ...]:
        return (
            torch.randn(64, 96, generator=gen),
            torch.randn(80, 96, generator=gen),
            torch.randn(80, generator=gen),
        )

    def make3(gen: Any) -> Tuple[Any, ...]:
        return (
            torch.randn(3, 17, 96, generator=gen),
            torch.randn(40, 96, generator=gen),
            torch.randn(40, generator=gen),
        )

    cases = [
        Case("linear 64x96 -> 80", make2, f.linear, ref, 97),
        Case("linear 3x17x96 -> 40", make3, f.linear, ref, 97),
    ]
    ev = _run_cases(torch, dev, cases, ("torch.nn.functional.linear",))
    return _summary(ev["dtypes"]), ev


def check_conv(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """conv2d (padding 1, and stride 2 with bias) against an im2col product."""
    f = torch.nn.functional

    def make1(gen: Any) -> Tuple[Any, ...]:
        return torch.randn(2, 4, 16, 16, generator=gen), torch.randn(8, 4, 3, 3, generator=gen)

    def make2(gen: Any) -> Tuple[Any, ...]:
        return (
            torch.randn(2, 5, 15, 15, generator=gen),
            torch.randn(6, 5, 3, 3, generator=gen),
            torch.randn(6, generator=gen),
        )

    def ref1(R: Any, x: Any, w: Any) -> Tuple[Any, Any]:
        return R.conv2d(x, w, None, 1, 1), R.conv2d(R.abs(x), R.abs(w), None, 1, 1)

    def ref2(R: Any, x: Any, w: Any, b: Any) -> Tuple[Any, Any]:
        return R.conv2d(x, w, b, 2, 0), R.conv2d(R.abs(x), R.abs(w), R.abs(b), 2, 0)

    cases = [
        Case("conv 4->8 3x3 pad 1", make1, lambda x, w: f.conv2d(x, w, padding=1), ref1, 36),
        Case(
            "conv 5->6 3x3 stride 2 + bias", make2, lambda x, w, b: f.conv2d(x, w, b, 2), ref2, 46
        ),
    ]
    ev = _run_cases(torch, dev, cases, ("torch.nn.functional.conv2d",))
    return _summary(ev["dtypes"]), {**ev, "input": [2, 4, 16, 16], "weight": [8, 4, 3, 3]}


def _softmax_ref(R: Any, x: Any) -> Any:
    e = R.exp(x - R.amax(x, -1))
    return e / R.sum(e, -1)


def check_softmax(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """softmax and log-softmax over the last dimension (every attention and every loss)."""
    f = torch.nn.functional

    def make(gen: Any) -> Tuple[Any, ...]:
        return (3.0 * torch.randn(8, 333, generator=gen),)

    def ref_soft(R: Any, x: Any) -> Tuple[Any, Any]:
        p = _softmax_ref(R, x)
        return p, 8.0 * (p + R.amax(p, -1) * 1e-3)

    def ref_log(R: Any, x: Any) -> Tuple[Any, Any]:
        s = x - R.amax(x, -1)
        out = s - R.log(R.sum(R.exp(s), -1))
        return out, 8.0 * (R.abs(out) + 1.0)

    cases = [
        Case("softmax", make, lambda x: f.softmax(x, dim=-1), ref_soft, 1),
        Case("log_softmax", make, lambda x: f.log_softmax(x, dim=-1), ref_log, 1),
    ]
    ev = _run_cases(
        torch, dev, cases, ("torch.nn.functional.softmax", "torch.nn.functional.log_softmax")
    )
    return _summary(ev["dtypes"]), ev


def check_layer_norm(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """layer_norm with weight and bias over a row of odd length."""
    f = torch.nn.functional
    n = 257

    def make(gen: Any) -> Tuple[Any, ...]:
        return (
            3.0 * torch.randn(16, n, generator=gen) + 1.0,
            torch.randn(n, generator=gen),
            torch.randn(n, generator=gen),
        )

    def ref(R: Any, x: Any, w: Any, b: Any) -> Tuple[Any, Any]:
        c = x - R.mean(x, -1)
        xhat = c / R.sqrt(R.mean(c * c, -1) + 1e-5)
        return xhat * w + b, R.abs(xhat * w) + R.abs(b) + R.abs(w)

    cases = [Case("layer_norm 16x257", make, lambda x, w, b: f.layer_norm(x, (n,), w, b), ref, n)]
    ev = _run_cases(torch, dev, cases, ("torch.nn.functional.layer_norm",))
    return _summary(ev["dtypes"]), ev


def check_attention(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """scaled_dot_product_attention, causal and not, against attention written out."""
    f = torch.nn.functional
    bsz, heads, length, d = 2, 3, 37, 16

    def make(gen: Any) -> Tuple[Any, ...]:
        return tuple(torch.randn(bsz, heads, length, d, generator=gen) for _ in range(3))

    def ref(causal: bool) -> Callable[..., Tuple[Any, Any]]:
        def attn(R: Any, q: Any, k: Any, v: Any) -> Tuple[Any, Any]:
            kt = R.swap(k)
            s = R.matmul(q, kt) / math.sqrt(d)
            sb = R.matmul(R.abs(q), R.abs(kt)) / math.sqrt(d)
            if causal:
                s = R.where(R.tril(length, length), s, -math.inf)
            p = _softmax_ref(R, s)
            # Score errors (relative to |q||k|) scale the output error by up to 1 + max|s|.
            spread = 1.0 + float(sb.max())
            return R.matmul(p, v), spread * (R.matmul(p, R.abs(v)) + 1e-3)

        return attn

    def sdpa(causal: bool) -> Callable[..., Any]:
        return lambda q, k, v: f.scaled_dot_product_attention(q, k, v, is_causal=causal)

    cases = [
        Case("sdpa", make, sdpa(False), ref(False), d + length),
        Case("sdpa causal", make, sdpa(True), ref(True), d + length),
    ]
    ev = _run_cases(torch, dev, cases, ("torch.nn.functional.scaled_dot_product_attention",))
    return _summary(ev["dtypes"]), ev


def check_reduction(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """sum over a long vector and over the rows of a matrix; mean."""
    n = 1 << 16

    def make(gen: Any) -> Tuple[Any, ...]:
        return (torch.randn(n, generator=gen),)

    def ref_sum(R: Any, x: Any) -> Tuple[Any, Any]:
        return R.sum(x, 0), R.sum(R.abs(x), 0)

    def ref_cols(R: Any, x: Any) -> Tuple[Any, Any]:
        m = x.reshape(256, 256)
        return R.sum(m, 0).reshape(256), R.sum(R.abs(m), 0).reshape(256)

    def ref_mean(R: Any, x: Any) -> Tuple[Any, Any]:
        return R.sum(x, 0) / n, R.sum(R.abs(x), 0) / n

    cases = [
        Case("sum 65536", make, lambda x: x.sum().reshape(1), ref_sum, n),
        Case("sum over rows 256x256", make, lambda x: x.reshape(256, 256).sum(0), ref_cols, 256),
        Case("mean 65536", make, lambda x: x.mean().reshape(1), ref_mean, n),
    ]
    ev = _run_cases(torch, dev, cases)
    return _summary(ev["dtypes"]), ev


def check_optimizer(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """Three torch.optim.AdamW steps vs the same steps written out in float64."""
    gen = torch.Generator().manual_seed(9)
    p0 = torch.randn(257, generator=gen)
    grads = [torch.randn(257, generator=gen) for _ in range(3)]
    lr, b1, b2, eps, wd = 1e-2, 0.9, 0.999, 1e-8, 0.1
    param = torch.nn.Parameter(p0.clone().to(dev))
    # The function AdamW.step runs (torch.optim.adamw.adamw): constructing the class imports
    # torch._dynamo (1-3 s), which would dominate verify and prove nothing more.
    step_fn: Any = None
    try:
        from torch.optim.adamw import adamw as step_fn
    except ImportError:
        step_fn = None
    m_buf, v_buf = torch.zeros_like(param), torch.zeros_like(param)
    step_t = torch.tensor(0.0)
    for g in grads:
        param.grad = g.to(dev)
        try:
            if step_fn is None:
                raise TypeError("no functional adamw")
            with torch.no_grad():
                step_fn(
                    [param],
                    [param.grad],
                    [m_buf],
                    [v_buf],
                    [],
                    [step_t],
                    amsgrad=False,
                    beta1=b1,
                    beta2=b2,
                    lr=lr,
                    weight_decay=wd,
                    eps=eps,
                    maximize=False,
                )
        except TypeError:  # another torch's signature: the class itself
            opt = torch.optim.AdamW([param], lr=lr, betas=(b1, b2), eps=eps, weight_decay=wd)
            param.data.copy_(p0.to(dev))
            for g2 in grads:
                param.grad = g2.to(dev)
                opt.step()
            break
    got = [float(x) for x in param.detach().to("cpu").tolist()]
    worst = 0.0
    bad = 0
    for i, p in enumerate(float(x) for x in p0.tolist()):
        m = v = 0.0
        for t, g in enumerate((float(gr[i]) for gr in grads), start=1):
            p -= lr * wd * p
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            mhat, vhat = m / (1 - b1**t), v / (1 - b2**t)
            p -= lr * mhat / (math.sqrt(vhat) + eps)
        err = abs(got[i] - p) / (1e-5 * (abs(p) + lr))
        if not err <= 1.0:
            bad += 1
        worst = max(worst, err) if err == err else float("inf")
    ev = {"steps": len(grads), "error_vs_tolerance": round(worst, 4), "params": len(got)}
    if bad:
        raise CheckFailed(
            f"AdamW: {bad} of {len(got)} parameters off the float64 reference step "
            f"({worst:.3g}x the tolerance)",
            ev,
        )
    return f"3 AdamW steps match the float64 reference ({worst:.2f} of tol)", ev


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
    bound = 3 * xd**2 * wd.abs() + wd.abs()
    ok, worst, nonfinite = within_tolerance(torch, grad, expected, bound, 1e-5)
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
    # Autocast rounds the inputs to the low dtype: allow that rounding (2u per product) too.
    tol = tolerance(label, k) + 2 * UNIT_ROUNDOFF[label]
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
    ref = f(x.double(), w.double()).to("cpu")
    bound = ref.abs() + 32 * 32  # elementwise ops on a k=32 product: allow k*|terms|
    ok, worst, nonfinite = within_tolerance(torch, out, ref, bound.double(), 1e-5)
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
    ok, worst, nonfinite = R.compare(
        got, R.matmul(a_s, b_s), R.matmul(R.abs(a_s), R.abs(b_s)) * tolerance(label, n)
    )
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
