"""Pure verify decisions added by issue 21: torch's own requirements (what pip check reads, plus
whether each imports) and CPU speed beside a NumPy yardstick measured in the same run."""

from __future__ import annotations

from typing import Any

from setup_env.decide.smoke_model import CheckResult
from setup_env.decide.smoke_speed import CPU_SPEED_FAIL_BELOW, decide_deps, judge_cpu_speed

# torch 2.13.0+cpu's Requires-Dist, as importlib.metadata gives it.
REQUIRES = [
    "filelock",
    "typing-extensions>=4.10.0",
    "sympy>=1.13.3",
    "networkx>=2.5.1",
    "jinja2",
    "fsspec>=0.8.5",
    'nvidia-cublas-cu12==12.8.4.1; platform_system == "Linux"',
    'optree>=0.13.0; extra == "optree"',
]
LINUX = {"platform_system": "Linux", "sys_platform": "linux", "python_version": "3.11"}
MAC = {"platform_system": "Darwin", "sys_platform": "darwin", "python_version": "3.11"}


def _info(found: dict[str, Any], env: dict[str, str] = MAC) -> dict[str, Any]:
    base = {
        name: {"installed": "99.0", "import_errors": {}}
        for name in ("filelock", "typing-extensions", "sympy", "networkx", "jinja2", "fsspec")
    }
    base.update(found)
    return {"requirements": {"requires": REQUIRES, "found": base, "environment": env}}


def test_all_present_passes_and_markers_decide_what_applies() -> None:
    res = decide_deps(_info({}))
    assert res.status == "pass", res
    assert "nvidia-cublas-cu12" not in res.message  # a Linux-only requirement on a Mac
    assert "optree" not in res.message  # an extra


def test_missing_requirement_fails_naming_it_with_the_install_line() -> None:
    res = decide_deps(_info({"sympy": {"installed": None}}))
    assert res.status == "fail"
    assert "sympy is not installed (torch requires sympy>=1.13.3)" in res.message
    assert res.fix is not None and '"sympy>=1.13.3"' in res.fix and "torch itself" in res.fix


def test_too_old_version_fails() -> None:
    res = decide_deps(_info({"networkx": {"installed": "2.4", "import_errors": {}}}))
    assert res.status == "fail" and "networkx 2.4 does not satisfy networkx>=2.5.1" in res.message


def test_installed_but_not_importable_fails() -> None:
    err = {"sympy": "ModuleNotFoundError: No module named 'sympy'"}
    res = decide_deps(_info({"sympy": {"installed": "1.14.0", "import_errors": err}}))
    assert res.status == "fail" and "`import sympy` fails" in res.message
    assert res.fix is not None and "--force-reinstall" in res.fix


def test_linux_only_requirement_applies_on_linux() -> None:
    res = decide_deps(_info({"nvidia-cublas-cu12": {"installed": None}}, LINUX))
    assert res.status == "fail" and "nvidia-cublas-cu12 is not installed" in res.message


def test_no_report_or_no_metadata_is_a_skip() -> None:
    assert decide_deps({}).status == "skip"
    assert decide_deps({"requirements": {"error": "no metadata"}}).status == "skip"


def _speed(best: float, yard: float, **extra: Any) -> CheckResult:
    ev = {"tflops": best, "best_tflops": best, "yardstick_tflops": yard, **extra}
    return CheckResult("matmul-speed", "pass", 0.1, "x TFLOP/s", "cpu", ev)


def test_cpu_speed_near_the_yardstick_passes_with_the_ratio() -> None:
    res = judge_cpu_speed(_speed(0.1, 0.09))
    assert res.status == "pass" and res.evidence["ratio_to_yardstick"] == 1.111
    assert "NumPy" in res.message


def test_cpu_speed_far_below_the_yardstick_fails_naming_a_cause() -> None:
    floor = CPU_SPEED_FAIL_BELOW["matmul-speed"]
    res = judge_cpu_speed(_speed(0.001, 0.1, torch_threads=1, cpus=8, OMP_NUM_THREADS="1"))
    assert res.status == "fail" and res.evidence["ratio_to_yardstick"] < floor
    assert "torch uses 1 thread(s) of 8 CPUs" in res.message and "OMP_NUM_THREADS=1" in res.message
    res = judge_cpu_speed(_speed(0.001, 0.1, debug_build=True))
    assert res.status == "fail" and "debug build" in res.message


def test_cpu_speed_without_a_yardstick_is_left_alone() -> None:
    res = CheckResult("matmul-speed", "pass", 0.1, "x", "cpu", {"tflops": 0.1})
    assert judge_cpu_speed(res) == res
    bw = CheckResult("memory-bandwidth", "pass", 0.1, "x", "cpu", {"gbps": 1.0, "best_gbps": 1.0})
    assert judge_cpu_speed(bw) == bw


C_EXT = (
    "ImportError: Failed to load PyTorch C extensions:\n"
    "    It appears that PyTorch has loaded the `torch/_C` folder\n"
    "    of the PyTorch repository rather than the C extensions which\n"
    "    are expected in the `torch._C` namespace."
)


def test_c_extensions_message_blames_a_source_tree_only_when_there_is_one() -> None:
    from setup_env.decide.smoke import classify_error

    tree = classify_error(C_EXT, source_checkout=True)
    assert tree is not None and tree.code == "source-tree"
    broken = classify_error(C_EXT, source_checkout=False)
    assert broken is not None and broken.code == "broken-install"
    assert "source checkout" not in broken.fix and "--force-reinstall" in broken.fix
