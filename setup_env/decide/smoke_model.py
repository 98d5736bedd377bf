"""The verify contract: options in, a report of per-check results out, and the check registry.

Stdlib only: the parent process (which never imports torch) and the worker child (which may run
under another interpreter, Python 3.9+) both import this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal, Optional

from setup_env._record import Record, field, record

if TYPE_CHECKING:
    from setup_env.facts import Facts

Status = Literal["pass", "fail", "skip", "warn"]
STATUSES: tuple[Status, ...] = ("pass", "warn", "fail", "skip")

# Where a check runs: "worker" inside the torch-importing child, "parent" decided from the
# worker's build report and the machine facts, "torchrun" as its own torchrun launch.
Where = Literal["worker", "parent", "torchrun"]
Scope = Literal["global", "device"]


@record
class CheckSpec(Record):
    """One verification check: its name, deadline and where it runs."""

    name: str
    title: str
    timeout_s: float  # base deadline; VerifyOptions.timeout_scale multiplies it
    scope: Scope
    where: Where
    flag: Optional[str] = None  # runs only when this option is set ("compile", "distributed")


# The order is the order checks run and are shown in. Timeouts are generous: a cold first CUDA
# context on an 8-GPU machine takes tens of seconds; a hung driver takes forever.
CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("import", "torch imports", 180.0, "global", "worker"),
    CheckSpec("build", "versions and build agree with the facts", 0.0, "global", "parent"),
    CheckSpec("deps", "torch's own dependencies installed and importable", 0.0, "global", "parent"),
    CheckSpec("device", "the best device is usable", 0.0, "global", "parent"),
    CheckSpec(
        "arch", "wheel architectures cover the GPUs; driver fits the wheel", 0.0, "global", "parent"
    ),
    CheckSpec("roundtrip", "CPU -> device -> compute -> CPU -> NumPy", 90.0, "device", "worker"),
    CheckSpec("matmul", "matrix products vs a NumPy float64 reference", 60.0, "device", "worker"),
    CheckSpec("linear", "F.linear with bias vs a float64 reference", 60.0, "device", "worker"),
    CheckSpec("conv", "convolution vs a float64 im2col reference", 60.0, "device", "worker"),
    CheckSpec(
        "softmax", "softmax and log-softmax vs a float64 reference", 30.0, "device", "worker"
    ),
    CheckSpec("layer-norm", "layer norm vs a float64 reference", 30.0, "device", "worker"),
    CheckSpec(
        "attention",
        "scaled_dot_product_attention vs attention written out",
        60.0,
        "device",
        "worker",
    ),
    CheckSpec("reduction", "sum and mean vs a float64 reference", 30.0, "device", "worker"),
    CheckSpec("optimizer", "AdamW steps vs a float64 reference step", 60.0, "device", "worker"),
    CheckSpec("autograd", "gradient vs its analytic value", 30.0, "device", "worker"),
    CheckSpec("train", "a tiny training run whose loss falls", 30.0, "device", "worker"),
    CheckSpec("autocast", "mixed precision (autocast)", 30.0, "device", "worker"),
    CheckSpec("compile", "torch.compile", 600.0, "device", "worker", flag="compile"),
    CheckSpec("memory-bandwidth", "device memory bandwidth", 60.0, "device", "worker"),
    CheckSpec("matmul-speed", "achieved matmul TFLOP/s", 60.0, "device", "worker"),
    CheckSpec("h2d-bandwidth", "host-to-device bandwidth", 60.0, "device", "worker"),
    CheckSpec(
        "distributed",
        "all-reduce through torch.distributed (torchrun)",
        300.0,
        "global",
        "torchrun",
        flag="distributed",
    ),
)

# Test-only checks (never listed by the CLI): prove that a hung check is killed at its deadline
# and that a crashing worker is reported. Selected with VerifyOptions.test_checks or the
# SETUP_ENV_VERIFY_TEST_CHECKS environment variable; they run right after "roundtrip".
TEST_CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("_hang", "test: a check that never returns", 2.0, "device", "worker"),
    CheckSpec("_crash", "test: a check that kills its process", 30.0, "device", "worker"),
)

CHECK_NAMES: tuple[str, ...] = tuple(c.name for c in CHECKS)
_BY_NAME = {c.name: c for c in CHECKS + TEST_CHECKS}


def spec(name: str) -> CheckSpec:
    return _BY_NAME[name]


@record
class VerifyOptions(Record):
    """What verify is asked to run: devices, optional checks, interpreter, deadlines."""

    device: Optional[str] = None  # None or "auto": the best; "cpu", "cuda", "cuda:1", "mps", "xpu"
    all_devices: bool = False  # every visible GPU (device checks repeat per device)
    compile: bool = False  # also run torch.compile
    distributed: bool = False  # also run the all-reduce check through torchrun
    python: Optional[str] = None  # the interpreter whose torch to verify; None: this one
    timeout_scale: float = 1.0  # multiplies every check's deadline
    only: tuple[str, ...] = ()  # run only these checks (names from CHECK_NAMES)
    skip: tuple[str, ...] = ()  # leave these out
    nproc_per_node: Optional[int] = None  # distributed: processes on this node (default: GPUs or 2)
    torchrun_args: tuple[str, ...] = ()  # validated rendezvous options passed to torchrun
    facts: Optional[Facts] = None  # None: detect this machine when the facts probe is available
    detect_facts: bool = True  # False: decide without machine facts
    test_checks: tuple[str, ...] = ()  # "hang", "crash": test-only checks (see TEST_CHECKS)


@record
class CheckResult(Record):
    """How one verification check ended."""

    name: str
    status: Status
    duration_s: float = 0.0
    message: str = ""
    device: Optional[str] = None  # "cuda:0", "cpu"; None for machine-wide checks
    evidence: Mapping[str, Any] = field(default_factory=dict)  # measured figures, versions
    fix: Optional[str] = None  # the exact thing to do when it did not pass

    @property
    def id(self) -> str:
        return f"{self.name}[{self.device}]" if self.device else self.name


@record
class VerifyReport(Record):
    """Every check's result for one interpreter's torch, and whether all passed."""

    ok: bool  # no check failed (warnings allowed) and torch could be examined
    checks: tuple[CheckResult, ...]
    python: str = ""  # the interpreter that was verified
    torch_version: Optional[str] = None
    torch_missing: bool = False  # torch is not installed in that interpreter at all
    device: Optional[str] = None  # the device chosen (first of devices)
    devices: tuple[str, ...] = ()
    duration_s: float = 0.0
    workers: int = 0  # worker processes started (more than 1: one was killed or crashed)
    error: Optional[str] = None  # verification could not run at all (no interpreter, ...)
    counts: Mapping[str, int] = field(default_factory=dict)  # status -> number of checks

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(c for c in self.checks if c.status == "fail")


def count_statuses(checks: tuple[CheckResult, ...]) -> dict[str, int]:
    counts: dict[str, int] = {s: 0 for s in STATUSES}
    for c in checks:
        counts[c.status] += 1
    return counts


def result(
    name: str,
    status: Status,
    message: str,
    evidence: Mapping[str, Any] | None = None,
    fix: str | None = None,
    device: str | None = None,
) -> CheckResult:
    return CheckResult(
        name=name,
        status=status,
        message=message,
        device=device,
        evidence=dict(evidence or {}),
        fix=fix,
    )
