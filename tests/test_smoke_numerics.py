"""The worker's numerics, in-process with the real torch: NaN never passes, tolerances are tight
enough to catch a wrong kernel and loose enough for honest low-precision arithmetic."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from setup_env.act.smoke import worker  # noqa: E402

pytestmark = pytest.mark.torch


def _product(k: int = 64) -> tuple[object, object, object, object]:
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(32, k, generator=gen)
    b = torch.randn(k, 16, generator=gen)
    a64, b64 = a.double(), b.double()
    return a, b, a64 @ b64, a64.abs() @ b64.abs()


def test_exact_float32_product_passes() -> None:
    a, b, ref, bound = _product()
    ok, worst, nonfinite = worker.within_tolerance(
        torch, a @ b, ref, bound, worker.tolerance("float32", 64)
    )
    assert ok and nonfinite == 0 and worst < 1.0


def test_nan_never_passes() -> None:
    a, b, ref, bound = _product()
    out = a @ b
    out[3, 5] = float("nan")
    ok, _worst, nonfinite = worker.within_tolerance(torch, out, ref, bound, 1e9)
    assert not ok and nonfinite == 1
    # Even a result that is all NaN, with any tolerance.
    ok, _worst, nonfinite = worker.within_tolerance(
        torch, torch.full_like(out, float("nan")), ref, bound, float("inf")
    )
    assert not ok and nonfinite == out.numel()


def test_inf_never_passes() -> None:
    a, b, ref, bound = _product()
    out = a @ b
    out[0, 0] = float("inf")
    assert not worker.within_tolerance(torch, out, ref, bound, 1e9)[0]


def test_wrong_kernel_fails_and_low_precision_passes() -> None:
    a, b, ref, bound = _product()
    # A kernel that drops one term of each dot product: the kind of bug the check exists for.
    wrong = a[:, 1:] @ b[1:, :]
    assert not worker.within_tolerance(torch, wrong, ref, bound, worker.tolerance("float32", 64))[0]
    # bf16 inputs (exactly representable), bf16 product: within the bf16 tolerance...
    ab, bb = a.to(torch.bfloat16), b.to(torch.bfloat16)
    ref16 = ab.double() @ bb.double()
    bound16 = ab.double().abs() @ bb.double().abs()
    out = ab @ bb
    assert worker.within_tolerance(torch, out, ref16, bound16, worker.tolerance("bfloat16", 64))[0]
    # ...but not within float32's: the tolerance is really per dtype.
    assert not worker.within_tolerance(torch, out, ref16, bound16, worker.tolerance("float32", 64))[
        0
    ]


def test_shape_mismatch_fails() -> None:
    _a, _b, ref, bound = _product()
    assert not worker.within_tolerance(torch, torch.zeros(3, 3), ref, bound, 1.0)[0]


@pytest.mark.parametrize("name", ["roundtrip", "matmul", "conv", "autograd", "train", "autocast"])
def test_each_check_passes_on_cpu_in_process(name: str) -> None:
    res = worker.run_check(torch, name, "cpu")
    assert res["status"] == "pass", res
    assert res["device"] == "cpu" and res["duration_s"] >= 0


def test_a_check_that_raises_is_a_failure_with_its_message() -> None:
    res = worker.run_check(torch, "matmul", "cuda:7" if not torch.cuda.is_available() else "bad:0")
    assert res["status"] == "fail" and res["message"]


NUMERIC_CHECKS = ("matmul", "linear", "conv", "softmax", "layer-norm", "attention", "reduction")


@pytest.mark.parametrize("numpy_ref", [True, False])
@pytest.mark.parametrize("name", NUMERIC_CHECKS)
def test_numeric_checks_pass_with_either_reference(
    name: str, numpy_ref: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not numpy_ref:  # as without NumPy: the float64 multiply-sum in torch
        real_init = worker.Ref.__init__

        def no_numpy(self: worker.Ref, torch_: object) -> None:
            real_init(self, torch_)
            self.np = None
            self.kind = "torch float64 multiply-sum"

        monkeypatch.setattr(worker.Ref, "__init__", no_numpy)
    res = worker.run_check(torch, name, "cpu")
    assert res["status"] == "pass", res
    assert res["evidence"]["reference"] == (
        "numpy float64" if numpy_ref else "torch float64 multiply-sum"
    )


def test_a_fault_that_also_reaches_float64_is_still_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # The old reference was op(a64, b64): a matmul 1% off in every dtype cancelled out.
    real = torch.matmul

    def off(a: object, b: object) -> object:
        return real(a, b) * 1.01

    monkeypatch.setattr(torch, "matmul", off)
    monkeypatch.setattr(torch.Tensor, "__matmul__", off)
    res = worker.run_check(torch, "matmul", "cpu")
    assert res["status"] == "fail" and "float32" in res["message"], res
    assert "is replaced by a function from" in (res["fix"] or ""), res


def test_optimizer_step_matches_the_written_out_adamw() -> None:
    res = worker.run_check(torch, "optimizer", "cpu")
    assert res["status"] == "pass" and res["evidence"]["steps"] == 3, res


def test_the_error_model_is_the_dtypes_roundoff_and_the_reduction_length() -> None:
    # One rounding of the result at the dtype's unit roundoff (2^-p), plus the accumulation's
    # roundoff times min(k, 8*sqrt(k)) relative to the sum of the terms' magnitudes.
    assert worker.tolerance("bfloat16", 64) == (2.0**-8, 8 * 8 * 2.0**-24)
    assert worker.tolerance("float16", 1024) == (2.0**-11, 8 * 32 * 2.0**-24)
    assert worker.tolerance("float16", 1024, "float16") == (2.0**-11, 8 * 32 * 2.0**-11)
    assert worker.tolerance("float32", 16) == (2.0**-24, 16 * 2.0**-24)  # k < 64: k*u is less
    assert worker.tolerance("tf32", 100) == (2.0**-24, 2 * 2.0**-11 + 80 * 2.0**-24)
    # On the CPU, float16/bfloat16 accumulate in float32.
    assert worker.accumulation(torch, "cpu", "bfloat16") == "float32"
    assert worker.accumulation(torch, "cpu", "float64") == "float64"


# The checks whose error model holds a result 1% off in every dtype the CPU runs, and the
# functions the fault replaces. Attention in bfloat16 is not among them: its kernels round the
# probabilities to the dtype (u = 0.39%, times the scores' spread), more than 1% of some outputs.
ONE_PERCENT: dict[str, tuple[tuple[str, str], ...]] = {
    "matmul": (("torch", "matmul"), ("torch.Tensor", "__matmul__")),
    "linear": (("F", "linear"),),
    "conv": (("F", "conv2d"),),
    "softmax": (("F", "softmax"),),
    "log_softmax": (("F", "log_softmax"),),
    "layer-norm": (("F", "layer_norm"),),
    "reduction": (("torch.Tensor", "sum"), ("torch.Tensor", "mean")),
    "attention": (("F", "scaled_dot_product_attention"),),
}


@pytest.mark.parametrize(
    ("fault", "dtype"),
    [
        (f, d)
        for f in sorted(ONE_PERCENT)
        for d in ("float32", "float16", "bfloat16")
        if (f, d) != ("attention", "bfloat16")
    ],
)
def test_a_result_one_percent_off_in_one_dtype_fails_naming_it(
    fault: str, dtype: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    owners = {"torch": torch, "torch.Tensor": torch.Tensor, "F": torch.nn.functional}
    target = getattr(torch, dtype)
    for owner, attr in ONE_PERCENT[fault]:
        real = getattr(owners[owner], attr)

        def off(*args: object, _real: object = real, **kw: object) -> object:
            out = _real(*args, **kw)  # type: ignore[operator]
            return out * 1.01 if out.dtype == target else out

        monkeypatch.setattr(owners[owner], attr, off)
    check = "softmax" if fault == "log_softmax" else fault
    res = worker.run_check(torch, check, "cpu")
    assert res["status"] == "fail", res
    assert f"({dtype})" in res["message"], res
    # Only that dtype: the other dtypes' results are right and pass.
    others = {k: v for k, v in res["evidence"]["dtypes"].items() if k != dtype}
    assert all(v.get("ok") for v in others.values()), res["evidence"]


@pytest.mark.parametrize("name", NUMERIC_CHECKS)
def test_a_correct_result_passes_in_every_dtype(name: str) -> None:
    res = worker.run_check(torch, name, "cpu")
    assert res["status"] == "pass", res
    dtypes = res["evidence"]["dtypes"]
    assert {"float32", "float16", "bfloat16"} <= set(dtypes), dtypes
    assert all(v["ok"] and v["error_vs_tolerance"] <= 1.0 for v in dtypes.values()), dtypes


def test_adamw_steps_off_by_nine_ppm_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    # 3e-6 per step, 9e-6 after three: inside the old hand-picked 1e-5 * (|p| + lr), outside
    # the float32 model (u|p| + 36u(|p| + 3 lr), about 2.2e-6 |p|).
    import torch.optim.adamw as adamw_module

    real = adamw_module.adamw

    def off(params: list[object], *args: object, **kw: object) -> object:
        out = real(params, *args, **kw)  # type: ignore[arg-type]
        with torch.no_grad():
            for p in params:
                p.mul_(1 + 3e-6)  # type: ignore[attr-defined]
        return out

    monkeypatch.setattr(adamw_module, "adamw", off)
    res = worker.run_check(torch, "optimizer", "cpu")
    assert res["status"] == "fail" and "AdamW" in res["message"], res
