"""One rank of the distributed check: ``torchrun ... -m setup_env.act.smoke.dist_worker --out DIR``.

Each rank joins the process group (NCCL on GPUs, gloo on CPUs, XCCL on Intel GPUs), checks that an
all-reduce returns the exact sum, then times all-reduces of one size and reports the bus bandwidth
the way nccl-tests defines it (busbw = algbw * 2(n-1)/n). Each local rank writes
``DIR/rank<N>.json``; the parent reads them. Standard library and torch only (Python 3.9+).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from datetime import timedelta
from typing import Any, Dict, List, Optional


def run(backend: str, size_mb: float, budget_s: float) -> Dict[str, Any]:
    import torch
    import torch.distributed as dist

    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        torch.cuda.set_device(local)
        dev = f"cuda:{local}"
    elif backend == "xccl":
        torch.xpu.set_device(local)
        dev = f"xpu:{local}"
    else:
        dev = "cpu"
    kwargs: Dict[str, Any] = {"backend": backend, "timeout": timedelta(seconds=120)}
    if backend == "nccl":
        kwargs["device_id"] = torch.device(dev)
    dist.init_process_group(**kwargs)
    out: Dict[str, Any] = {
        "rank": rank,
        "world_size": world,
        "local_rank": local,
        "backend": backend,
        "device": dev,
    }
    try:
        # Correctness: rank r contributes r+1 everywhere, plus values that differ per element.
        n_check = 1 << 16
        idx = torch.arange(n_check, dtype=torch.float32, device=dev)
        t = (idx % 97) * (rank + 1)
        dist.all_reduce(t)
        expected = (idx % 97) * (world * (world + 1) / 2)
        mismatch = t != expected
        bad = int(mismatch.sum().item())
        out["correct"] = bad == 0
        out["wrong_values"] = bad
        out["checked"] = n_check
        if bad:  # which elements, what this rank saw, what the sum should be
            at = mismatch.nonzero().flatten()[:5].tolist()
            out["wrong_sample"] = [[i, float(t[i].item()), float(expected[i].item())] for i in at]
        # Bandwidth: a fixed number of iterations so every rank runs the same collectives.
        numel = max(1, int(size_mb * (1 << 20) / 4))
        buf = torch.ones(numel, dtype=torch.float32, device=dev)
        for _ in range(2):
            dist.all_reduce(buf)
        if dev != "cpu":
            getattr(torch, dev.split(":")[0]).synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        if dev != "cpu":
            getattr(torch, dev.split(":")[0]).synchronize()
        one = max(time.perf_counter() - t0, 1e-6)
        iters = torch.tensor([max(3, min(200, int(budget_s / one)))], device=dev)
        dist.broadcast(iters, src=0)  # everybody agrees on rank 0's count
        n_iter = int(iters.item())
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(n_iter):
            dist.all_reduce(buf)
        if dev != "cpu":
            getattr(torch, dev.split(":")[0]).synchronize()
        secs = time.perf_counter() - t0
        nbytes = numel * 4
        algbw = nbytes * n_iter / secs / 1e9
        out.update(
            bytes=nbytes,
            iterations=n_iter,
            seconds=round(secs, 4),
            algbw_gbps=round(algbw, 3),
            busbw_gbps=round(algbw * 2 * (world - 1) / world, 3),
        )
    finally:
        dist.destroy_process_group()
    return out


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m setup_env.act.smoke.dist_worker")
    p.add_argument("--out", required=True)
    p.add_argument("--backend", required=True, choices=["nccl", "gloo", "xccl"])
    p.add_argument("--size-mb", type=float, default=8.0)
    p.add_argument("--budget-s", type=float, default=0.5)
    args = p.parse_args(argv)
    rank = os.environ.get("RANK", "?")
    path = os.path.join(args.out, f"rank{rank}.json")
    try:
        result = run(args.backend, args.size_mb, args.budget_s)
    except BaseException as exc:
        result = {
            "rank": rank,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc()[-4000:],
        }
    with open(path + ".tmp", "w", encoding="utf-8") as fh:
        json.dump(result, fh)
    os.replace(path + ".tmp", path)
    return 0 if "error" not in result and result.get("correct") else 1


if __name__ == "__main__":
    sys.exit(main())
