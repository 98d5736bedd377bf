"""The fleet report: pure functions from nodes to findings, nothing read, nothing printed.

* **drift**: a field whose value differs between nodes (driver, the driver's CUDA, torch, its
  variant and CUDA; GPU count and model between nodes of one instance type). The most common
  value is taken as the fleet's; the nodes with another are the odd ones.
* **per-node problems**: the node's own verdict is not READY; it has fewer or other GPUs than its
  instance type should have (the cloud catalogue's count and model, as ``check`` recorded them).
* **unhealthy GPUs**: uncorrected ECC errors, a throttle reason other than idle, a PCIe link
  running below its maximum width or generation, matmul speed well under the fleet median of
  the same GPU model (below ``SLOW_BELOW`` of it).
* **the job's steps** (when the launcher's record or all-reduce results are among the inputs):
  a node the job ran on that sent no check document is missing; a node whose all-reduce failed,
  did not run or left no result fails the all-reduce; a step that did not end ``done`` (failed,
  stopped at the time limit, never started) is a problem of the whole job.
* **look first**: nodes ranked by how much is wrong with them (a missing node and a failed
  verdict first).

The verdict is the worst of them all. Exit code: 1 when a node fails or is missing, is
unhealthy, the all-reduce or any step did not pass, or the fleet drifts; 0 otherwise.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from typing import Callable, Optional

from setup_env._record import Record, field, record
from setup_env.probe.fleet_nodes import AllReduce, BadDocument, JobRecord, Node

# A GPU is slow when its matmul TFLOP/s is below this fraction of the median of the fleet's GPUs
# of the same model (a throttled or misconfigured GPU runs at a half or less; run-to-run noise of
# verify's 1-second measurement stays within ~10%).
SLOW_BELOW = 0.8
# Throttle reasons that are not a problem (nvidia-smi: "Idle" when nothing runs).
BENIGN_THROTTLE = frozenset({"gpu_idle", "idle", "applications_clocks_setting"})

DRIFT_FIELDS: tuple[tuple[str, str, Callable[[Node], Optional[str]]], ...] = (
    ("driver", "driver", lambda n: n.driver),
    ("cuda_driver", "driver CUDA", lambda n: n.cuda_driver),
    ("torch", "torch", lambda n: n.torch),
    ("variant", "variant", lambda n: n.variant),
    ("torch_cuda", "torch CUDA", lambda n: n.torch_cuda),
)


@record
class Drift(Record):
    """One field on which the fleet's nodes disagree, and which nodes are odd."""

    field: str  # "driver", "gpu_count"…
    label: str  # "driver", "GPU count (p5.48xlarge)"
    majority: str  # the most common value
    values: dict[str, list[str]]  # value -> node names
    odd: tuple[str, ...]  # the nodes whose value is not the majority's


@record
class Issue(Record):
    """One problem found on one node of the fleet."""

    node: str
    # "verdict", "gpu-count", "gpu-model", "ecc", "throttle", "pcie", "slow", "distributed",
    # "missing" (no check document from a node the job ran on), "allreduce"
    kind: str
    severity: str  # "error" | "warning"
    message: str
    gpu: Optional[int] = None


@record
class SpeedPoint(Record):
    """One device's measured speed beside the fleet's median for its model."""

    node: str
    device: str  # "cuda:0", "cpu"
    model: str  # the GPU model the median is taken over ("cpu" for the CPU)
    tflops: float
    median: float  # of the fleet's devices of this model
    ratio: float  # tflops / median


@record
class StepStatus(Record):
    """A step of the fleet job as its launcher recorded it."""

    name: str  # "check", "allreduce"
    label: str  # "check", "all-reduce"
    state: str  # pending | running | done | failed | timed-out | stopped
    rc: Optional[int]
    node: Optional[str]  # one pod's own step; None: the whole job's
    message: str  # "done", "failed (exit 1)", "stopped at the job's time limit"…

    @property
    def ok(self) -> bool:
        return self.state == "done"


@record
class AllReduceRow(Record):
    """One node's result of the all-reduce check."""

    node: str
    status: str  # pass | warn | fail | skip | missing
    message: str


@record
class FleetReport(Record):
    """Everything a fleet report says: nodes, drift, issues, speed and what to look at first."""

    nodes: tuple[Node, ...]
    bad: tuple[BadDocument, ...] = ()
    drift: tuple[Drift, ...] = ()
    issues: tuple[Issue, ...] = ()
    speed: tuple[SpeedPoint, ...] = ()
    look_first: tuple[tuple[str, int, tuple[str, ...]], ...] = ()  # (node, score, reasons)
    medians: dict[str, float] = field(default_factory=dict)  # GPU model -> median TFLOP/s
    expected_nodes: Optional[int] = None  # how many nodes the job ran on, when known
    missing: tuple[str, ...] = ()  # the nodes (by name, when known) that sent no check document
    missing_count: int = 0  # how many sent none (also those whose names are not known)
    steps: tuple[StepStatus, ...] = ()
    allreduce: tuple[AllReduceRow, ...] = ()  # one row per node when an all-reduce was run
    problems: tuple[str, ...] = ()  # what is wrong with the job as a whole (steps, the end)

    @property
    def failing(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.state != "ready")

    @property
    def allreduce_failed(self) -> tuple[AllReduceRow, ...]:
        return tuple(r for r in self.allreduce if r.status not in ("pass", "warn"))

    @property
    def unfinished(self) -> tuple[StepStatus, ...]:
        return tuple(s for s in self.steps if not s.ok)

    @property
    def ok(self) -> bool:
        errors = any(i.severity == "error" for i in self.issues)
        job = self.missing_count or self.allreduce_failed or self.problems or self.unfinished
        return not (self.failing or self.drift or errors or self.bad or job)

    @property
    def exit_code(self) -> int:
        return 0 if self.ok else 1


def _drift(
    nodes: Sequence[Node], name: str, label: str, get: Callable[[Node], Optional[str]]
) -> Optional[Drift]:
    values: dict[str, list[str]] = defaultdict(list)
    for n in nodes:
        v = get(n)
        values["(none)" if v is None else v].append(n.name)
    if len(values) < 2:
        return None
    # Most nodes first; ties broken by the value, so the report is the same on every run.
    ranked = sorted(values.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    majority = ranked[0][0]
    odd = tuple(name for v, names in ranked[1:] for name in names)
    return Drift(name, label, majority, dict(ranked), odd)


def _gpu_model_of(node: Node, index: int) -> str:
    for g in node.gpus:
        if g.index == index:
            return g.name
    return node.gpu_model or "?"


def _device_model(node: Node, device: str) -> str:
    if device.startswith(("cuda:", "xpu:")):
        try:
            return _gpu_model_of(node, int(device.split(":", 1)[1]))
        except ValueError:
            return node.gpu_model or device
    if device in ("cuda", "xpu"):
        return _gpu_model_of(node, 0)
    return device  # "cpu", "mps"


STEP_LABELS = {"check": "check", "allreduce": "all-reduce"}
_STATE_SAYS = {
    "done": "done",
    "pending": "did not start",
    "running": "did not finish (still running when the job's record was last written)",
    "timed-out": "stopped at the job's time limit",
    "stopped": "stopped before it finished (the job was cancelled)",
}
_ENDED_SAYS = {
    "running": "the job had not finished when this report was made",
    "time-limit": "the job reached its time limit",
    "stopped": "the job was stopped before it finished",
}


def _step_message(state: str, rc: Optional[int]) -> str:
    if state == "failed":
        return f"failed (exit {rc})" if rc is not None else "failed"
    return _STATE_SAYS.get(state, state)


def _names_match(node: Node, name: str) -> bool:
    """Whether ``node`` is the node the launcher called ``name`` (srun's %N, a pod name): by its
    file's name, its hostname, or its hostname's first label (a host that calls itself by its
    FQDN)."""
    return name in (node.key, node.name, node.name.split(".", 1)[0])


def _job(
    nodes: Sequence[Node],
    allreduce: Sequence[AllReduce],
    jobs: Sequence[JobRecord],
    expected_nodes: Optional[int],
) -> tuple[
    Optional[int], list[str], int, list[StepStatus], list[AllReduceRow], list[str], list[Issue]
]:
    """What the launcher's records and the all-reduce results say about the job: the expected
    node count, the missing nodes (named, and how many), the steps, one all-reduce row per node,
    the job's own problems, and the node issues that follow."""
    names: list[str] = []
    for j in jobs:
        names += [n for n in j.nodes if n not in names]
    counts = [c for c in (expected_nodes, *(j.expected_nodes for j in jobs)) if c is not None]
    expected = max([*counts, len(names)]) if counts or names else None
    missing = [name for name in names if not any(_names_match(n, name) for n in nodes)]
    missing_count = max(len(missing), (expected or 0) - len(nodes))
    issues = [
        Issue(name, "missing", "error", "no check document: the node did not report")
        for name in missing
    ]
    problems: list[str] = []
    if missing_count > len(missing):
        problems.append(
            f"{missing_count} of {expected} nodes sent no check document"
            if not missing
            else f"{missing_count - len(missing)} more node(s) of {expected} sent no check document"
        )

    steps: list[StepStatus] = []
    for j in jobs:
        for st in j.steps:
            label = STEP_LABELS.get(st.name, st.name)
            message = _step_message(st.state, st.rc)
            steps.append(StepStatus(st.name, label, st.state, st.rc, j.node, message))
            if st.state != "done":
                where = f" on {j.node}" if j.node else ""
                problems.append(f"{label}{where}: {message}")
        if j.ended in _ENDED_SAYS:
            said = _ENDED_SAYS[j.ended] + (f" (on {j.node})" if j.node else "")
            if said not in problems:
                problems.append(said)

    rows: list[AllReduceRow] = []
    ran = bool(allreduce) or any(st.name == "allreduce" for j in jobs for st in j.steps)
    if ran:
        by_key = {a.key: a for a in allreduce}
        for name in [n.name for n in nodes] + missing:
            node = next((n for n in nodes if n.name == name), None)
            found = next(
                (
                    a
                    for key, a in by_key.items()
                    if (node is not None and _names_match(node, key)) or key == name
                ),
                None,
            )
            if found is None:
                row = AllReduceRow(name, "missing", "no all-reduce result from this node")
            else:
                row = AllReduceRow(name, found.status, found.message)
            rows.append(row)
            if row.status not in ("pass", "warn") and node is not None:
                why = row.message if row.status != "skip" else f"skipped: {row.message}"
                issues.append(Issue(name, "allreduce", "error", f"all-reduce: {why}"))
    return expected, missing, missing_count, steps, rows, problems, issues


def build(
    nodes: Sequence[Node],
    bad: Sequence[BadDocument] = (),
    allreduce: Sequence[AllReduce] = (),
    jobs: Sequence[JobRecord] = (),
    expected_nodes: Optional[int] = None,
) -> FleetReport:
    """The report over the nodes' check documents and, where given, the all-reduce results,
    the launcher's records of the job and the node count it ran on (``expected_nodes``)."""
    nodes = sorted(nodes, key=lambda n: n.name)
    drift: list[Drift] = []
    for name, label, get in DRIFT_FIELDS:
        d = _drift(nodes, name, label, get)
        if d is not None:
            drift.append(d)
    by_type: dict[str, list[Node]] = defaultdict(list)
    for n in nodes:
        by_type[n.instance_type or ""].append(n)
    for itype, group in sorted(by_type.items()):
        suffix = f" ({itype})" if itype else ""
        for d in (
            _drift(group, "gpu_count", "GPU count" + suffix, lambda n: str(len(n.gpus))),
            _drift(group, "gpu_model", "GPU model" + suffix, lambda n: n.gpu_model),
        ):
            if d is not None:
                drift.append(d)

    issues: list[Issue] = []
    for n in nodes:
        if n.state != "ready":
            issues.append(Issue(n.name, "verdict", "error", n.verdict or n.state))
        if n.expected_gpus is not None and len(n.gpus) != n.expected_gpus:
            issues.append(
                Issue(
                    n.name,
                    "gpu-count",
                    "error",
                    f"{len(n.gpus)} GPU(s) visible; {n.instance_type} should have "
                    f"{n.expected_gpus}",
                )
            )
        if n.expected_gpu_model and n.gpus:
            other = sorted({g.name for g in n.gpus if n.expected_gpu_model not in g.name})
            if other:
                issues.append(
                    Issue(
                        n.name,
                        "gpu-model",
                        "error",
                        f"{', '.join(other)}; {n.instance_type} should have {n.expected_gpu_model}",
                    )
                )
        if n.distributed == "fail":
            issues.append(Issue(n.name, "distributed", "error", "the all-reduce check failed"))
        for g in n.gpus:
            if g.ecc_uncorrected:
                issues.append(
                    Issue(
                        n.name,
                        "ecc",
                        "error",
                        f"GPU {g.index}: {g.ecc_uncorrected} uncorrected ECC error(s)",
                        g.index,
                    )
                )
            bad_throttle = [t for t in g.throttle if t.lower() not in BENIGN_THROTTLE]
            if bad_throttle:
                issues.append(
                    Issue(
                        n.name,
                        "throttle",
                        "warning",
                        f"GPU {g.index}: throttled ({', '.join(bad_throttle)})",
                        g.index,
                    )
                )
            if g.pcie_width and g.pcie_width_max and g.pcie_width < g.pcie_width_max:
                issues.append(
                    Issue(
                        n.name,
                        "pcie",
                        "error",
                        f"GPU {g.index}: PCIe link x{g.pcie_width} of x{g.pcie_width_max}",
                        g.index,
                    )
                )
            elif g.pcie_gen and g.pcie_gen_max and g.pcie_gen < g.pcie_gen_max:
                # An idle GPU drops its link generation to save power: a warning, not a failure.
                issues.append(
                    Issue(
                        n.name,
                        "pcie",
                        "warning",
                        f"GPU {g.index}: PCIe gen {g.pcie_gen} of {g.pcie_gen_max} "
                        "(normal at idle; a problem under load)",
                        g.index,
                    )
                )

    # Speed against the median of the same model across the fleet.
    samples: dict[str, list[float]] = defaultdict(list)
    located: list[tuple[Node, str, str, float]] = []
    for n in nodes:
        for device, tflops in sorted(n.speed.items()):
            model = _device_model(n, device)
            samples[model].append(tflops)
            located.append((n, device, model, tflops))
    medians = {m: statistics.median(v) for m, v in samples.items()}
    speed: list[SpeedPoint] = []
    for n, device, model, tflops in located:
        med = medians[model]
        ratio = tflops / med if med > 0 else 1.0
        speed.append(SpeedPoint(n.name, device, model, tflops, med, ratio))
        if len(samples[model]) >= 3 and ratio < SLOW_BELOW:
            gpu = None
            if ":" in device:
                tail = device.split(":", 1)[1]
                gpu = int(tail) if tail.isdigit() else None
            issues.append(
                Issue(
                    n.name,
                    "slow",
                    "error",
                    f"{device} ({model}): {tflops:g} TFLOP/s, {ratio:.0%} of the fleet median "
                    f"{med:g}",
                    gpu,
                )
            )

    expected, missing, missing_count, steps, rows, problems, job_issues = _job(
        nodes, allreduce, jobs, expected_nodes
    )
    issues += job_issues

    # Look first: missing nodes and failed verdicts, then errors, then drift, then warnings.
    score: Counter[str] = Counter()
    reasons: dict[str, list[str]] = defaultdict(list)
    for i in issues:
        worst = i.kind in ("verdict", "missing")
        score[i.node] += 100 if worst else (10 if i.severity == "error" else 2)
        reasons[i.node].append(i.message if i.kind != "verdict" else f"verdict: {i.message}")
    for d in drift:
        for name in d.odd:
            score[name] += 5
            value = next(v for v, names in d.values.items() if name in names)
            reasons[name].append(f"{d.label} {value} (fleet: {d.majority})")
    first = sorted(score.items(), key=lambda kv: (-kv[1], kv[0]))
    return FleetReport(
        nodes=tuple(nodes),
        bad=tuple(bad),
        drift=tuple(drift),
        issues=tuple(issues),
        speed=tuple(speed),
        look_first=tuple((name, s, tuple(reasons[name])) for name, s in first),
        medians=medians,
        expected_nodes=expected,
        missing=tuple(missing),
        missing_count=missing_count,
        steps=tuple(steps),
        allreduce=tuple(rows),
        problems=tuple(problems),
    )
