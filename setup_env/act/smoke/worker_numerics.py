"""The verify worker's numeric checks: every op real models use, on every dtype the device
supports, against a reference that never goes through the op under test (NumPy float64, or a
float64 multiply-sum in torch where NumPy is absent), with tolerances from the dtype's precision
and the reduction length.

Part of the worker (``setup_env.act.smoke.worker``): runs in the torch child, possibly under
another interpreter, on the standard library and torch only (Python 3.9+).
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Dict, List, Optional, Tuple, Union


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


# Unit roundoff of each compute dtype: u = 2^-p, p = significand bits with the implicit one
# (IEEE 754 binary16: p = 11; bfloat16: p = 8; TF32 keeps binary16's 10 stored bits: p = 11).
UNIT_ROUNDOFF = {
    "float64": 2.0**-53,
    "float32": 2.0**-24,
    "tf32": 2.0**-11,
    "float16": 2.0**-11,
    "bfloat16": 2.0**-8,
}
# Half the smallest subnormal of each result dtype: the absolute error of a rounding in the
# subnormal range, where the relative bound u does not hold (Higham 2002, eq. 2.8: fl(x) =
# x(1 + d) + e, |e| <= this). A softmax probability of e^-18 is subnormal in float16.
UNDERFLOW = {
    "float64": 2.0**-1075,
    "float32": 2.0**-150,
    "tf32": 2.0**-150,
    "float16": 2.0**-25,
    "bfloat16": 2.0**-134,
}
# lambda of the probabilistic bound below: each element's bound fails with probability at most
# 2*k*exp(-lambda^2/2) (Higham & Mary 2019, Theorem 2.4), 3e-11 for k = 2^16 at lambda = 8.
LAMBDA = 8.0

Tol = Tuple[float, float]


def growth(k: int) -> float:
    """How many unit roundoffs a length-k sum may lose, relative to the sum of |terms|.

    The worst case is k*u (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq.
    3.5: gamma_k); rounding errors that are independent and of mean zero give lambda*sqrt(k)*u
    (Higham & Mary, "A New Approach to Probabilistic Rounding Error Analysis", SIAM J. Sci.
    Comput. 41(5), 2019, Theorem 3.1). The smaller of the two.
    """
    k = max(int(k), 1)
    return min(float(k), LAMBDA * math.sqrt(k))


def tolerance(dtype_label: str, k: int, accumulate: Optional[str] = None) -> Tol:
    """The error model of a result in ``dtype_label`` reduced over ``k`` terms: (rel, coef), so
    that ``|result - exact| <= rel * |exact| + coef * bound`` elementwise, where ``bound`` is the
    sum of the terms' magnitudes (``|a| @ |b|`` for a product).

    * ``rel = u(dtype)``: the one rounding of the result to its dtype (round to nearest is off by
      at most u relative; a hard bound, no safety factor);
    * ``coef = growth(k) * u(accumulate)``: the sum, accumulated in ``accumulate`` (float32 for
      float16/bfloat16 in CPU kernels and cuBLAS without reduced-precision reductions; the dtype
      itself where partial sums are stored in it);
    * TF32 rounds each input to 11 bits inside the kernel: ``2 * u(tf32)`` per product, summed
      over the terms (so times ``bound``), accumulated in float32.

    With float32 accumulation, bfloat16 (u = 2^-8 = 0.39%) allows 0.39% of |exact| plus a few
    float32 roundoffs of the bound, so a result 1% off fails (by about 1.5x after the result's
    own rounding); float16 (u = 2^-11 = 0.049%) by about 20x.
    """
    acc = accumulate or ("float32" if dtype_label in ("float16", "bfloat16", "tf32") else None)
    acc = acc or dtype_label
    if dtype_label == "tf32":
        return UNIT_ROUNDOFF["float32"], (
            2 * UNIT_ROUNDOFF["tf32"] + growth(k) * UNIT_ROUNDOFF[acc]
        )
    return UNIT_ROUNDOFF[dtype_label], growth(k) * UNIT_ROUNDOFF[acc]


def accumulation(torch: Any, dev: str, label: str) -> str:
    """The precision partial sums are kept in, for a float16/bfloat16 result on ``dev``.

    CPU kernels (oneDNN, the ATen fallbacks) accumulate float16/bfloat16 in float32. cuBLAS
    does too unless torch allows reduced-precision reductions (split-K partial sums stored in
    the dtype; ``torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction``, on
    by default). Other devices: not known, so the dtype itself (the looser model).
    """
    if label not in ("float16", "bfloat16"):
        return "float32" if label == "tf32" else label
    kind = dev.split(":")[0]
    if kind == "cpu":
        return "float32"
    if kind == "cuda" and not getattr(torch.version, "hip", None):
        flags = torch.backends.cuda.matmul
        name = "allow_fp16_reduced_precision_reduction"
        if label == "bfloat16":
            name = "allow_bf16_reduced_precision_reduction"
        return label if bool(getattr(flags, name, True)) else "float32"
    return label


def within_tolerance(
    torch: Any, result: Any, reference: Any, bound: Any, tol: Union[float, Tol]
) -> Tuple[bool, float, int]:
    """(ok, worst error as a fraction of what is allowed, count of non-finite values).

    ``reference`` and ``bound`` are float64 CPU tensors (the exact result and the sum of the
    terms' magnitudes); ``tol`` is :func:`tolerance`'s (rel, coef), or a bare coefficient of the
    bound. NaN or Inf anywhere in the result never passes.
    """
    rel, coef = (0.0, float(tol)) if isinstance(tol, (int, float)) else tol
    res = result.detach().to("cpu", torch.float64)
    if res.shape != reference.shape:
        return False, float("inf"), 0
    nonfinite = int((~torch.isfinite(res)).sum().item())
    err = (res - reference).abs()
    allowed = reference.abs() * rel + bound.abs() * coef + 1e-300
    worst = float((err / allowed).max().item()) if err.numel() else 0.0
    ok = nonfinite == 0 and worst <= 1.0  # NaN <= 1.0 is False as well
    return ok, worst, nonfinite


def _sync(torch: Any, dev: str) -> None:
    kind = dev.split(":")[0]
    if kind == "cuda":
        torch.cuda.synchronize(dev)
    elif kind == "xpu":
        torch.xpu.synchronize(dev)
    elif kind == "mps":
        torch.mps.synchronize()


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
    bound[, between]): the error allowed is ``u(dtype) * |expected| + growth(k) *
    u(accumulation) * bound`` elementwise (see :func:`tolerance`; plus the underflow term),
    ``bound`` being the sum of the magnitudes of what the op adds up, and ``u(dtype) *
    |between|`` where the kernel rounds one intermediate of that size to the dtype.
    ``rows`` (a count) compares only a sample of the result's leading rows: the big products are
    checked on a slice.
    """

    def __init__(
        self,
        name: str,
        make: Callable[[Any], Tuple[Any, ...]],
        op: Callable[..., Any],
        ref: Callable[..., Tuple[Any, ...]],
        k: int,
        dtypes: Optional[Tuple[str, ...]] = None,
        rows: Optional[Callable[[Any], Any]] = None,
    ) -> None:
        self.name, self.make, self.op, self.ref = name, make, op, ref
        self.k, self.dtypes, self.rows = k, dtypes, rows


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
            got: Tuple[Any, ...] = case.ref(R, *[R.arr(t) for t in host])
            expected, bound, between = got[0], got[1], got[2:]
            rel, coef = tolerance(label, case.k, accumulation(torch, dev, label))
            if out.dtype != dtype:
                failures.append(f"{case.name} ({label}): result dtype {out.dtype}")
                continue
            allowed = R.abs(expected) * rel + bound * (coef * (1 + rel)) + UNDERFLOW[label]
            if between:  # one intermediate the kernel stores in the dtype: its rounding too
                allowed = allowed + R.abs(between[0]) * UNIT_ROUNDOFF[label]
            ok, worst, nonfinite = R.compare(out, expected, allowed)
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

    n = 333

    def make(gen: Any) -> Tuple[Any, ...]:
        return (3.0 * torch.randn(8, n, generator=gen),)

    # Both are computed in the accumulation precision and rounded once. With s = x - max(x):
    # exp(s_i) is off by about u*(|s_i| + 1) relative, the sum of the (positive) exponentials
    # by growth(n)*u relative, so p_i by u*(|s_i| + 2) relative plus the sum's share.
    def ref_soft(R: Any, x: Any) -> Tuple[Any, Any]:
        s = x - R.amax(x, -1)
        p = _softmax_ref(R, x)
        return p, p * (R.abs(s) + 2.0)

    # s_i - log(sum exp(s)): |s_i| rounded, the log of a sum off by growth(n)*u relative. The
    # CPU kernel stores max(x) + log(sum) in the dtype before subtracting it from x: that too.
    def ref_log(R: Any, x: Any) -> Tuple[Any, ...]:
        s = x - R.amax(x, -1)
        lse = R.log(R.sum(R.exp(s), -1))
        return s - lse, R.abs(s) + R.abs(lse) + 1.0, R.amax(x, -1) + lse

    cases = [
        Case("softmax", make, lambda x: f.softmax(x, dim=-1), ref_soft, n),
        Case("log_softmax", make, lambda x: f.log_softmax(x, dim=-1), ref_log, n),
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

    # The mean is off by growth(n)*u*mean|x|, which xhat sees divided by the deviation; the
    # variance by growth(n)*u relative, which scales xhat by half that.
    def ref(R: Any, x: Any, w: Any, b: Any) -> Tuple[Any, Any]:
        c = x - R.mean(x, -1)
        std = R.sqrt(R.mean(c * c, -1) + 1e-5)
        xhat = c / std
        return xhat * w + b, R.abs(w) * (R.abs(xhat) + R.mean(R.abs(x), -1) / std) + R.abs(b)

    cases = [Case("layer_norm 16x257", make, lambda x, w, b: f.layer_norm(x, (n,), w, b), ref, n)]
    ev = _run_cases(torch, dev, cases, ("torch.nn.functional.layer_norm",))
    return _summary(ev["dtypes"]), ev


def check_attention(torch: Any, dev: str) -> Tuple[str, Dict[str, Any]]:
    """scaled_dot_product_attention, causal and not, against attention written out."""
    f = torch.nn.functional
    bsz, heads, length, d = 2, 3, 37, 16

    def make(gen: Any) -> Tuple[Any, ...]:
        return tuple(torch.randn(bsz, heads, length, d, generator=gen) for _ in range(3))

    def ref(causal: bool) -> Callable[..., Tuple[Any, ...]]:
        def attn(R: Any, q: Any, k: Any, v: Any) -> Tuple[Any, ...]:
            kt = R.swap(k)
            s = R.matmul(q, kt) / math.sqrt(d)
            sb = R.matmul(R.abs(q), R.abs(kt)) / math.sqrt(d)
            if causal:
                s = R.where(R.tril(length, length), s, -math.inf)
            p = _softmax_ref(R, s)
            # An error in the scores (their sum's, relative to |q||k|) moves each probability
            # by up to (1 + max|s|) times it, relative; the probabilities are then summed
            # against v: bound sum p|v| times that spread. Kernels store the scores and the
            # probabilities in the dtype (the math path; the CPU flash kernel's P @ V): one
            # rounding of an intermediate of that same size.
            spread = 1.0 + float(sb.max())
            bound = spread * R.matmul(p, R.abs(v))
            return R.matmul(p, v), bound, bound

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

    # A mean away from zero: the sum is then of the order of the sum of |x| and a result 1% off
    # stands out of the accumulation error even in bfloat16 (zero-mean data cancels to ~sqrt(n),
    # below what growth(n) rounding errors may add).
    def make(gen: Any) -> Tuple[Any, ...]:
        return (torch.randn(n, generator=gen) + 0.5,)  # sum ~32768: float16 holds it

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
    # About 12 float32 roundings a step (decay, two moments, bias corrections, sqrt, divide,
    # update), each of the parameter's size or of the step's (lr per step, Adam's update being
    # about lr in size): u|p| + k u (|p| + lr * steps), k = 12 * steps.
    rel, coef = tolerance("float32", 12 * len(grads))
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
        err = abs(got[i] - p) / (rel * abs(p) + coef * (abs(p) + lr * len(grads)))
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
