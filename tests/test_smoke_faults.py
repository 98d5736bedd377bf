"""Fault injection: verify must catch a torch that is broken in the ways real installs break.

Each fault is injected into the verify worker as issue 21 did it: a ``sitecustomize`` first on the
worker's PYTHONPATH that patches one torch function right after ``import torch`` (or hides a
package torch needs). verify must exit 1 and name the check that fails; the clean install passes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

pytestmark = [pytest.mark.torch, pytest.mark.slow]

# Runs at interpreter start: `patch(torch)` runs once torch has been imported, `hide` names
# packages whose import fails as if they were not installed.
SITECUSTOMIZE = """
import sys, importlib.abc, importlib.machinery

HIDE = {hide!r}


class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDE:
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        return None


def patch(torch):
{patch}


class _AfterTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            patch(module)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _Hide())
sys.meta_path.insert(0, _AfterTorch())
"""

MATMUL = """
    import functools
    real = torch.matmul

    @functools.wraps(real)
    def matmul(a, b, **kw):
        out = real(a, b, **kw)
{body}
        return out

    torch.matmul = matmul
    torch.Tensor.matmul = matmul
    torch.Tensor.__matmul__ = matmul
"""


def _matmul(body: str) -> str:
    return MATMUL.format(body=textwrap.indent(textwrap.dedent(body).strip(), " " * 8))


def _wrap_f(name: str, body: str) -> str:
    return f"""
    import functools
    F = torch.nn.functional
    real = F.{name}

    @functools.wraps(real)
    def wrapped(*args, **kw):
        out = real(*args, **kw)
{textwrap.indent(textwrap.dedent(body).strip(), " " * 8)}
        return out

    F.{name} = wrapped
"""


# fault -> (patch body, packages to hide, the check that must fail)
FAULTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "matmul 1% off": (_matmul("out = out * 1.01"), (), "matmul"),
    "conv2d 1% off": (_wrap_f("conv2d", "out = out * 1.01"), (), "conv"),
    "linear 1% off": (_wrap_f("linear", "out = out * 1.01"), (), "linear"),
    "matmul zeros when a dim >= 128": (
        _matmul("if max(list(a.shape) + list(b.shape)) >= 128:\n    out = out * 0"),
        (),
        "matmul",
    ),
    "matmul NaN in fp16/bf16 when large": (
        _matmul(
            "if a.dtype in (torch.float16, torch.bfloat16) and max(a.shape) >= 1024:\n"
            "    out = out * float('nan')"
        ),
        (),
        "matmul",
    ),
    "matmul wrong on non-contiguous operands": (
        _matmul("if not (a.is_contiguous() and b.is_contiguous()):\n    out = out * 1.01"),
        (),
        "matmul",
    ),
    "softmax x0.5": (_wrap_f("softmax", "out = out * 0.5"), (), "softmax"),
    "sdpa zeros": (_wrap_f("scaled_dot_product_attention", "out = out * 0"), (), "attention"),
    "matmul 100x slower": (
        """
    import functools, time
    real = torch.matmul

    @functools.wraps(real)
    def matmul(a, b, **kw):
        t0 = time.perf_counter()
        out = real(a, b, **kw)
        time.sleep(99 * (time.perf_counter() - t0))
        return out

    torch.matmul = matmul
    torch.Tensor.matmul = matmul
    torch.Tensor.__matmul__ = matmul
""",
        (),
        "matmul-speed",
    ),
    "copies 30x slower": (
        """
    import functools, time
    real = torch.Tensor.copy_

    @functools.wraps(real)
    def copy_(self, src, *args, **kw):
        t0 = time.perf_counter()
        out = real(self, src, *args, **kw)
        time.sleep(30 * (time.perf_counter() - t0))
        return out

    torch.Tensor.copy_ = copy_
""",
        (),
        "memory-bandwidth",
    ),
    # What a deleted torch/_C*.so gives: torch's own message blames a source checkout.
    "torch/_C missing": (
        "    raise ImportError('Failed to load PyTorch C extensions:\\n    It appears that "
        "PyTorch has loaded the `torch/_C` folder of the PyTorch repository')",
        (),
        "import",
    ),
    "sympy missing": ("", ("sympy",), "deps"),
    # A torch built against NumPy 1.x under NumPy 2 (torch < 2.3; pytorch/pytorch#107302): at
    # import torch warns (the text of xai4space/meteors#20), then its NumPy bridge is off.
    "numpy ABI mismatch": (
        """
    import warnings
    warnings.warn(
        "Failed to initialize NumPy: _ARRAY_API not found (Triggered internally at "
        "../torch/csrc/utils/tensor_numpy.cpp:84.)",
        UserWarning,
    )

    def unavailable(*args, **kw):
        raise RuntimeError("Numpy is not available")

    torch.Tensor.numpy = unavailable
    torch.from_numpy = unavailable
""",
        (),
        "roundtrip",
    ),
    "numpy missing": ("", ("numpy",), "roundtrip"),
}


def _run(tmp_path: Path, patch: str, hide: tuple[str, ...], *argv: str) -> tuple[int, Any]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        SITECUSTOMIZE.format(hide=set(hide), patch=patch or "    pass")
    )
    path = [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=os.pathsep.join(path))
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", *argv, "--device", "cpu", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    return proc.returncode, json.loads(proc.stdout)


def _verify(tmp_path: Path, patch: str, hide: tuple[str, ...]) -> tuple[int, dict[str, dict]]:
    rc, doc = _run(tmp_path, patch, hide, "verify")
    return rc, {c["name"]: c for c in doc["verify"]["checks"]}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_fails_verify_naming_the_check(tmp_path: Path, fault: str) -> None:
    patch, hide, check = FAULTS[fault]
    rc, checks = _verify(tmp_path, patch, hide)
    failed = sorted(n for n, c in checks.items() if c["status"] == "fail")
    assert rc == 1, (fault, failed)
    assert check in failed, (fault, failed, checks[check])
    if fault == "torch/_C missing":  # not a source checkout here: a broken install
        assert "broken or partial install" in checks["import"]["message"], checks["import"]
        assert "--force-reinstall" in checks["import"]["fix"]
    if fault == "numpy ABI mismatch":  # NumPy is reinstalled, at the NumPy torch was built for
        rt, imp = checks["roundtrip"], checks["import"]
        assert "NumPy ABI mismatch" in rt["message"] and "not installed" not in rt["message"], rt
        assert rt["fix"].startswith('pip install --force-reinstall "numpy<2"'), rt
        assert "not torch" in rt["fix"]
        assert imp["status"] == "warn" and "numpy<2" in imp["fix"], imp


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_makes_check_not_ready_naming_the_check(tmp_path: Path, fault: str) -> None:
    patch, hide, check = FAULTS[fault]
    rc, doc = _run(tmp_path, patch, hide, "check")
    verdict = doc["check"]["verdict"]
    assert rc == 1 and verdict["state"] != "ready", (fault, verdict)
    assert f"{check}[cpu]" in verdict["line"] or check in verdict["line"], (fault, verdict)


def test_clean_install_passes_with_the_same_harness(tmp_path: Path) -> None:
    rc, checks = _verify(tmp_path, "", ())
    failed = {n: c["message"] for n, c in checks.items() if c["status"] == "fail"}
    assert rc == 0 and not failed, failed


def test_illegal_instruction_in_a_check_is_judged_against_this_cpus_flags(tmp_path: Path) -> None:
    # torch's kernel dies of SIGILL mid-check: the cause depends on what this CPU has.
    patch = """
    import functools, os, signal
    real = torch.matmul

    @functools.wraps(real)
    def matmul(a, b, **kw):
        os.kill(os.getpid(), signal.SIGILL)

    torch.matmul = matmul
    torch.Tensor.__matmul__ = matmul
"""
    rc, checks = _verify(tmp_path, patch, ())
    assert rc == 1 and checks["matmul"]["status"] == "fail", checks["matmul"]
    msg = checks["matmul"]["message"]
    assert "killed by SIGILL" in msg, msg
    flags = set()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            break
    if {"sse4_2", "avx"} <= flags:
        assert "illegal instruction inside torch although the CPU has SSE4.2/AVX" in msg, msg
        assert "lacks" not in msg
    else:
        assert "the CPU lacks" in msg, msg


# The verify process itself may start no thread (RLIMIT_NPROC reached; root ignores `ulimit
# -u`, so the refusal is injected): Thread.start fails in setup-env's process, not the worker.
NO_THREADS = """
import sys, threading

_start = threading.Thread.start


def start(self, *a, **kw):
    if sys.argv and sys.argv[0].endswith("__main__.py"):
        raise RuntimeError("can't start new thread")
    return _start(self, *a, **kw)


threading.Thread.start = start
"""


@pytest.mark.parametrize("command", ["verify", "check"])
def test_no_threads_left_is_a_finding_about_the_machine(tmp_path: Path, command: str) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(NO_THREADS)
    path = [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=os.pathsep.join(path))
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", command, "--device", "cpu", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "internal-error" not in proc.stdout
    text = json.dumps(doc)
    assert "refuses new threads or processes" in text and "ulimit -u" in text, text[-3000:]


def test_wrong_all_reduce_on_one_rank_names_the_rank_and_the_values(tmp_path: Path) -> None:
    # Rank 1's all-reduce adds 1 to what the others agree on: verify names rank 1 and what it saw.
    patch = """
    import functools, os
    import torch.distributed as dist
    real = dist.all_reduce

    @functools.wraps(real)
    def all_reduce(t, *a, **kw):
        out = real(t, *a, **kw)
        if os.environ.get("RANK") == "1":
            t.add_(1)
        return out

    dist.all_reduce = all_reduce
"""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE.format(hide=set(), patch=patch))
    path = [str(site)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=os.pathsep.join(path))
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "verify", "--only", "distributed", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    checks = {c["name"]: c for c in json.loads(proc.stdout)["verify"]["checks"]}
    dist = checks["distributed"]
    assert proc.returncode == 1 and dist["status"] == "fail", dist
    msg = dist["message"]
    assert "wrong values on 1 of 2 local ranks: rank 1: 65536 of 65536 elements wrong" in msg, msg
    assert "[0] = 1 (expected 0)" in msg, msg
    assert "To enable traceback" not in msg
