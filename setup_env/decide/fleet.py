"""The fleet report: pure functions from nodes to findings, nothing read, nothing printed.

* **pools**: nodes of one kind, judged against each other and never against other kinds: the
  nodes of one cloud instance type (the instance type names the hardware, so a node of it that
  shows fewer or other GPUs is a fault found in its pool, not a pool of its own), else the nodes
  with the same GPU vendor and model ("no GPU" for CPU nodes). An AMD node's driver is never
  compared with an NVIDIA node's, nor a login node's CPU speed with a GPU node's.
* **drift**: within a pool, a field whose value differs between its nodes (driver, the driver's
  CUDA, torch, its variant and CUDA, GPU count; GPU model within an instance type). The most
  common value is taken as the pool's; the nodes with another are the odd ones.
* **per-node problems**: the node's own verdict is not READY; it has fewer or other GPUs than its
  instance type should have (the cloud catalogue's count and model, as ``check`` recorded them).
* **unhealthy GPUs**: uncorrected ECC errors, a throttle reason other than idle, a PCIe link
  running below its maximum width or generation, matmul speed well under the median of the same
  GPU model in the same pool (below ``SLOW_BELOW`` of it).
* **the job's steps** (when the launcher's record or all-reduce results are among the inputs):
  a node the job ran on that sent no check document is missing; a node whose all-reduce failed,
  did not run or left no result fails the all-reduce; a step that did not end ``done`` (failed,
  stopped at the time limit, never started) is a problem of the whole job.
* **look first**: every node with a finding, worst first, by ``SEVERITY``: broken or failing
  (BROKEN, unexaminable, missing, the all-reduce failed), then hardware faults (uncorrected ECC
  errors, a degraded PCIe link, throttling, missing or other GPUs), then not ready (ACTION
  NEEDED, e.g. torch not installed: the verdict prints the command that fixes it, where a
  hardware fault needs a person at the machine and corrupts results meanwhile), then speed
  outliers within the pool, then drift, then warnings. Nodes are compared on their worst
  findings first, then on how many of each.

The verdict is the worst of them all. Exit code: 1 when a node fails or is missing, is
unhealthy, the all-reduce or any step did not pass, or a pool drifts; 0 otherwise.

Linear in the nodes (dicts, no scans of the fleet per node): 10,000 nodes, each drifting, are
judged in well under a second (``benchmarks/bench_fleet_report.py``).
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


# What "look first" ranks by, worst first: (name, weight in a node's score, what it covers).
SEVERITY: tuple[tuple[str, int, str], ...] = (
    ("broken", 1000, "BROKEN or unexaminable, no document, the all-reduce failed"),
    ("ecc", 300, "uncorrected ECC errors"),
    ("pcie", 200, "a PCIe link narrower than its maximum"),
    ("throttle", 150, "a GPU throttled"),
    ("gpus", 100, "missing GPUs (fewer than its instance type or pool has) or other GPUs"),
    ("not-ready", 50, "ACTION NEEDED (torch not installed, a driver to fix)"),
    ("slow", 20, "slower than its pool"),
    ("drift", 5, "another driver, torch or GPU count than its pool"),
    ("warning", 1, "a warning (a PCIe link at a lower generation: normal at idle)"),
)
_TIER = {name: k for k, (name, _w, _s) in enumerate(SEVERITY)}
_KIND_TIER = {
    "missing": "broken",
    "allreduce": "broken",
    "distributed": "broken",
    "ecc": "ecc",
    "throttle": "throttle",
    "gpu-count": "gpus",
    "gpu-model": "gpus",
    "slow": "slow",
}
_VENDORS = {"nvidia": "NVIDIA", "amd": "AMD"}


@record
class Pool(Record):
    """Nodes of one kind: one instance type (cloud), else one GPU vendor and model."""

    key: str
    label: str  # "p5.48xlarge (NVIDIA H100 80GB HBM3)", "AMD Instinct MI300X", "no GPU"
    vendor: str  # "NVIDIA", "AMD", "NVIDIA + AMD", "none"
    nodes: tuple[str, ...]


@record
class Drift(Record):
    """One field on which the nodes of a pool disagree, and which nodes are odd."""

    field: str  # "driver", "gpu_count"…
    label: str  # "driver", "GPU count"
    majority: str  # the most common value in the pool
    values: dict[str, list[str]]  # value -> node names
    odd: tuple[str, ...]  # the nodes whose value is not the majority's
    pool: str = ""  # the pool's label


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
    """One device's measured speed beside its pool's median for its model."""

    node: str
    device: str  # "cuda:0", "cpu"
    model: str  # the GPU model the median is taken over ("cpu" for the CPU)
    tflops: float
    median: float  # of the pool's devices of this model
    ratio: float  # tflops / median
    pool: str = ""  # the pool's label


@record
class Finding(Record):
    """A node to look at: its worst finding's severity and every reason, worst first."""

    node: str
    pool: str
    severity: str  # a name in SEVERITY: the worst of the node's findings
    score: int  # the weights of its findings added (for a glance; the order is by severity)
    reasons: tuple[str, ...]


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
    look_first: tuple[Finding, ...] = ()  # every node with a finding, worst first
    medians: dict[str, float] = field(default_factory=dict)  # "pool / model" -> median TFLOP/s
    pools: tuple[Pool, ...] = ()  # largest first
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
    nodes: Sequence[Node],
    name: str,
    label: str,
    get: Callable[[Node], Optional[str]],
    pool: str = "",
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
    return Drift(name, label, majority, dict(ranked), odd, pool)


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


def _aliases(node: Node) -> tuple[str, ...]:
    """The names ``node`` answers to when the launcher names it (srun's %N, a pod name): its
    file's name, its hostname, and its hostname's first label (a host that calls itself by its
    FQDN)."""
    return (node.key, node.name, node.name.split(".", 1)[0])


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
    # Every name a node answers to, looked up once: no scan of the fleet per name.
    known = {alias for n in nodes for alias in _aliases(n)}
    missing = [name for name in names if name not in known]
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
        for node, name in [(n, n.name) for n in nodes] + [(None, m) for m in missing]:
            aliases = _aliases(node) if node else (name,)
            found = next((by_key[a] for a in aliases if a in by_key), None)
            if found is None:
                row = AllReduceRow(name, "missing", "no all-reduce result from this node")
            else:
                row = AllReduceRow(name, found.status, found.message)
            rows.append(row)
            if row.status not in ("pass", "warn") and node is not None:
                why = row.message if row.status != "skip" else f"skipped: {row.message}"
                issues.append(Issue(name, "allreduce", "error", f"all-reduce: {why}"))
    return expected, missing, missing_count, steps, rows, problems, issues


def _vendor(node: Node) -> str:
    vendors = sorted({_VENDORS.get(g.vendor, g.vendor) for g in node.gpus})
    return " + ".join(vendors) if vendors else "none"


def pools_of(nodes: Sequence[Node]) -> tuple[list[Pool], dict[str, Pool]]:
    """The fleet's pools, largest first (then by label), and each node's pool by node name."""
    groups: dict[str, list[Node]] = defaultdict(list)
    for n in nodes:
        if n.instance_type:
            key = f"instance:{n.provider or ''}:{n.instance_type}"
        else:
            key = f"gpu:{_vendor(n)}:{n.gpu_model or ''}"
        groups[key].append(n)
    pools: list[Pool] = []
    for key, members in groups.items():
        models = Counter(m.gpu_model or "no GPU" for m in members)
        model = sorted(models.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        vendors = Counter(_vendor(m) for m in members)
        vendor = sorted(vendors.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        if key.startswith("instance:"):
            label = f"{members[0].instance_type} ({model})"
        elif vendor == "none":
            label = "no GPU"
        else:
            # Model names mostly start with their vendor ("NVIDIA H100…"); where not, say it.
            label = model if model.upper().startswith(vendor) else f"{vendor} {model}"
        pools.append(Pool(key, label, vendor, tuple(m.name for m in members)))
    pools.sort(key=lambda p: (-len(p.nodes), p.label))
    by_node = {name: p for p in pools for name in p.nodes}
    return pools, by_node


def _issues(nodes: Sequence[Node]) -> list[Issue]:
    """What each node's own document says is wrong: its verdict, its GPUs against its instance
    type, the all-reduce check, each GPU's health."""
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
    return issues


def _speed(
    nodes: Sequence[Node], pool_of: dict[str, Pool]
) -> tuple[list[SpeedPoint], dict[str, float], list[Issue]]:
    """Each device's speed against the median of its model in its pool, and the slow ones."""
    samples: dict[tuple[str, str], list[float]] = defaultdict(list)
    located: list[tuple[Node, str, str, float, Pool]] = []
    for n in nodes:
        pool = pool_of[n.name]
        for device, tflops in sorted(n.speed.items()):
            model = _device_model(n, device)
            samples[(pool.key, model)].append(tflops)
            located.append((n, device, model, tflops, pool))
    medians = {k: statistics.median(v) for k, v in samples.items()}
    speed: list[SpeedPoint] = []
    issues: list[Issue] = []
    for n, device, model, tflops, pool in located:
        med = medians[(pool.key, model)]
        ratio = tflops / med if med > 0 else 1.0
        speed.append(SpeedPoint(n.name, device, model, tflops, med, ratio, pool.label))
        if len(samples[(pool.key, model)]) >= 3 and ratio < SLOW_BELOW:
            gpu = None
            if ":" in device:
                tail = device.split(":", 1)[1]
                gpu = int(tail) if tail.isdigit() else None
            issues.append(
                Issue(
                    n.name,
                    "slow",
                    "error",
                    f"{device} ({model}): {tflops:g} TFLOP/s, {ratio:.0%} of the pool median "
                    f"{med:g}",
                    gpu,
                )
            )
    labels = {p.key: p.label for p in pool_of.values()}
    named = {f"{labels[key]} / {model}": m for (key, model), m in medians.items()}
    return speed, named, issues


def _look_first(
    nodes: Sequence[Node],
    issues: Sequence[Issue],
    drift: Sequence[Drift],
    pool_of: dict[str, Pool],
) -> list[Finding]:
    """Every node with a finding, worst first (see the module's doc)."""
    state = {n.name: n.state for n in nodes}
    found: dict[str, list[tuple[int, str]]] = defaultdict(list)  # node -> (tier, reason)
    for i in issues:
        if i.kind == "verdict":
            level, reason = _verdict_tier_of(state.get(i.node, "")), f"verdict: {i.message}"
        elif i.kind == "pcie":
            level, reason = ("pcie" if i.severity == "error" else "warning"), i.message
        else:
            level, reason = _KIND_TIER.get(i.kind, "warning"), i.message
        found[i.node].append((_TIER[level], reason))
    for d in drift:
        where = f"pool: {d.majority}"
        for value, names in d.values.items():
            if value == d.majority:
                continue
            rank = _TIER["drift"]
            if d.field == "gpu_count" and int(value) < int(d.majority):
                rank = _TIER["gpus"]  # fewer GPUs than its pool: GPUs missing, not a version
            for name in names:
                found[name].append((rank, f"{d.label} {value} ({where})"))
    ranked: list[tuple[tuple[int, ...], Finding]] = []
    for name, items in found.items():
        items.sort(key=lambda t: t[0])
        counts = [0] * len(SEVERITY)
        for tier, _reason in items:
            counts[tier] += 1
        score = sum(SEVERITY[tier][1] for tier, _r in items)
        pool = pool_of[name].label if name in pool_of else ""
        finding = Finding(name, pool, SEVERITY[items[0][0]][0], score, tuple(r for _t, r in items))
        ranked.append((tuple(-c for c in counts), finding))
    ranked.sort(key=lambda kv: (kv[0], kv[1].node))
    return [f for _key, f in ranked]


def _verdict_tier_of(state: str) -> str:
    # A missing node's name is not a node's: its "verdict" never comes here (kind "missing").
    return "not-ready" if state == "action-needed" else "broken"


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
    pools, pool_of = pools_of(nodes)
    by_name = {n.name: n for n in nodes}
    drift: list[Drift] = []
    for pool in pools:
        group = [by_name[name] for name in pool.nodes]
        fields = [*DRIFT_FIELDS, ("gpu_count", "GPU count", lambda n: str(len(n.gpus)))]
        if pool.key.startswith("instance:"):
            fields.append(("gpu_model", "GPU model", lambda n: n.gpu_model))
        for name, label, get in fields:
            d = _drift(group, name, label, get, pool.label)
            if d is not None:
                drift.append(d)

    issues = _issues(nodes)
    speed, medians, slow = _speed(nodes, pool_of)
    issues += slow
    expected, missing, missing_count, steps, rows, problems, job_issues = _job(
        nodes, allreduce, jobs, expected_nodes
    )
    issues += job_issues
    return FleetReport(
        nodes=tuple(nodes),
        bad=tuple(bad),
        drift=tuple(drift),
        issues=tuple(issues),
        speed=tuple(speed),
        look_first=tuple(_look_first(nodes, issues, drift, pool_of)),
        medians=medians,
        pools=tuple(pools),
        expected_nodes=expected,
        missing=tuple(missing),
        missing_count=missing_count,
        steps=tuple(steps),
        allreduce=tuple(rows),
        problems=tuple(problems),
    )
