"""What a fleet job left behind, read: the nodes' ``setup-env check --json`` documents, their
all-reduce results (``setup-env verify --json --only distributed``) and the launcher's record of
the job (``setup-env/fleet-job``: how many nodes, which, how far each step got).

Only the fields the report needs are read, straight from the parsed JSON (no dataclass rebuild of
the whole facts: a thousand documents load in a fraction of a second). Each file is read through
``bounded`` (a regular file, capped: a FIFO named ``*.json`` is refused, not waited on). A file
may hold several documents one after another (a Kubernetes pod's log: its check, its all-reduce,
its record). A document that can't be read, is none of those, or holds a field of the wrong type
(``"gpus": "x"``, ``"facts": []``) is a :class:`BadDocument` the report lists; a fleet report
(``setup-env/fleet``, the job's own output beside its inputs) is passed over.

Every string kept from a document (and every file name) is made printable here, once, with the
helper facts use on load (:func:`setup_env.facts.printable`: escape codes, BEL, CR, bidi
overrides shown escaped, ``\\x1b``, ``\\u202e``), and cut to a length a report can show: the
renderers never see a control character, so no node can print a line of its own (a fake
"FLEET OK"). A string holding a lone surrogate (JSON's ``"\\ud800"``: no UTF-8 exists for it, so
no renderer could write it) makes its document one named :class:`BadDocument`.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from setup_env._record import Record, record, replace
from setup_env.facts import printable

MAX_DOCUMENT = 20_000_000  # a check document is ~10-50 KiB
# The longest string kept from a document (a verdict line is ~300 characters; a hostname at most
# 253): a 1 MB "hostname" would otherwise be a 1 MB cell in every row, line and page.
MAX_STRING = 500
_SURROGATE = re.compile("[\ud800-\udfff]")


def shown(text: str, limit: int = MAX_STRING) -> str:
    """``text`` from outside (a document's string, a file's name) as one printable line of at
    most about ``limit`` characters: control characters, bidi overrides and lone surrogates
    shown escaped (``\\x1b``, ``\\u202e``, ``\\udcff``: an undecodable byte in a file name)."""
    if len(text) > limit:
        text = text[:limit] + "…"
    return printable(text)


@record
class GpuHealth(Record):
    """One GPU's health in a node's document: ECC errors, PCIe link, throttling."""

    index: int
    name: str
    vendor: str = "nvidia"  # "nvidia" | "amd": which section of the facts the GPU is in
    ecc_uncorrected: Optional[int] = None
    pcie_gen: Optional[int] = None
    pcie_gen_max: Optional[int] = None
    pcie_width: Optional[int] = None
    pcie_width_max: Optional[int] = None
    throttle: tuple[str, ...] = ()
    bus_id: Optional[str] = None


@record
class Node(Record):
    """One node's check document, read: its verdict, GPUs, driver, torch and speed."""

    name: str  # the hostname (or the file name when the document has none)
    path: str
    state: str  # the verdict: ready | action-needed | broken | unexaminable
    verdict: str  # its line
    provider: Optional[str] = None
    instance_type: Optional[str] = None
    expected_gpus: Optional[int] = None
    expected_gpu_model: Optional[str] = None
    gpus: tuple[GpuHealth, ...] = ()
    driver: Optional[str] = None
    cuda_driver: Optional[str] = None
    torch: Optional[str] = None
    variant: Optional[str] = None
    torch_cuda: Optional[str] = None
    # matmul TFLOP/s measured by verify, per device ("cuda:0", "cpu")
    speed: Mapping[str, float] = field(default_factory=dict)
    distributed: Optional[str] = None  # the all-reduce check's status, when it ran

    @property
    def gpu_model(self) -> Optional[str]:
        names = sorted({g.name for g in self.gpus})
        return " + ".join(names) if names else None

    @property
    def node_speed(self) -> Optional[float]:
        """The slowest device's TFLOP/s: a multi-GPU job runs at its slowest GPU's pace."""
        return min(self.speed.values()) if self.speed else None

    @property
    def key(self) -> str:
        """The name the launcher gave the node's file (srun's ``%N``, the pod): what the job
        record's node names and the all-reduce results are matched by."""
        return _key(self.path)


@record
class BadDocument(Record):
    """A document that could not be read as a node's, and why."""

    path: str
    reason: str


@record
class AllReduce(Record):
    """One node's result of the multi-node all-reduce (its ``verify`` document)."""

    key: str  # the file's name without .json: the node it ran on
    path: str
    status: str  # the distributed check's status: pass | warn | fail | skip; "fail" when absent
    message: str


@record
class Step(Record):
    """One step of a node's fleet job and how far it got."""

    name: str  # "check", "allreduce"
    state: str  # pending | running | done | failed | timed-out | stopped
    rc: Optional[int] = None


@record
class JobRecord(Record):
    """The launcher's record of a fleet job: written before the first step and after each, and
    when the job is told to stop (SLURM's signal before its time limit)."""

    path: str
    launcher: str  # "slurm" | "k8s"
    expected_nodes: Optional[int]
    nodes: tuple[str, ...] = ()  # the nodes' names, when the launcher knows them
    node: Optional[str] = None  # a record of one node's own steps (a pod), else the whole job's
    job_id: Optional[str] = None
    ended: Optional[str] = None  # running | finished | time-limit | stopped
    steps: tuple[Step, ...] = ()


@dataclass
class Documents:
    """Everything read from a fleet's output folder: nodes, bad documents, jobs."""

    nodes: list[Node] = field(default_factory=list)
    bad: list[BadDocument] = field(default_factory=list)
    allreduce: list[AllReduce] = field(default_factory=list)
    jobs: list[JobRecord] = field(default_factory=list)


def _key(path: str) -> str:
    base = os.path.basename(path)
    return base[: -len(".json")] if base.endswith(".json") else base


class WrongType(ValueError):
    """A field of a check document holds the wrong kind of value."""


_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "true/false"}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return "a number"
    return _KINDS.get(type(value), type(value).__name__)


def _wrong(where: str, value: Any, expected: str) -> WrongType:
    return WrongType(f"a field of the wrong type: {where} is {_kind(value)}, not {expected}")


def _obj(parent: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    """``parent[key]`` as an object; {} when missing or null."""
    value = parent.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _wrong(f"{where}.{key}", value, "an object")
    return value


def _objects(parent: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    """``parent[key]`` as a list of objects; [] when missing or null."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _wrong(f"{where}.{key}", value, "a list")
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise _wrong(f"{where}.{key}[{i}]", item, "an object")
    return value


def _int(parent: dict[str, Any], key: str, where: str) -> Optional[int]:
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise _wrong(f"{where}.{key}", value, "an integer")
    return value


def _text(value: str, where: str) -> str:
    """A document's string, printable (see the module's doc); ValueError on a lone surrogate."""
    if value.isprintable() and len(value) <= MAX_STRING:
        return value  # the common case: no copy
    bad = _SURROGATE.search(value)
    if bad is not None:
        raise WrongType(
            f"{where} holds a lone surrogate (\\u{ord(bad.group()):04x}): not text to show"
        )
    return shown(value)


def _str(parent: dict[str, Any], key: str, where: str) -> Optional[str]:
    """``parent[key]`` as a printable string; None when missing, null or empty."""
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _wrong(f"{where}.{key}", value, "a string")
    return _text(value, f"{where}.{key}") or None


def _strings(parent: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = parent.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _wrong(f"{where}.{key}", value, "a list")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _wrong(f"{where}.{key}[{i}]", item, "a string")
    return tuple(_text(item, f"{where}.{key}[{i}]") for item in value)


def _gpu(g: dict[str, Any], where: str, vendor: str) -> GpuHealth:
    return GpuHealth(
        index=_int(g, "index", where) or 0,
        name=_str(g, "name", where) or "?",
        vendor=vendor,
        ecc_uncorrected=_int(g, "ecc_errors_uncorrected", where),
        pcie_gen=_int(g, "pcie_gen_current", where),
        pcie_gen_max=_int(g, "pcie_gen_max", where),
        pcie_width=_int(g, "pcie_width_current", where),
        pcie_width_max=_int(g, "pcie_width_max", where),
        throttle=_strings(g, "throttle_reasons", where),
        bus_id=_str(g, "pci_bus_id", where),
    )


def node_from_document(doc: Any, path: str) -> Node:
    """A :class:`Node` from a parsed ``check --json`` document; ValueError when it is not one,
    :class:`WrongType` (a ValueError too) naming the first field of the wrong type."""
    if not isinstance(doc, dict) or doc.get("schema") != "setup-env/check":
        raise ValueError("not a `setup-env check --json` document")
    body = doc.get("check")
    if not isinstance(body, dict):
        raise ValueError("the document has no check body")
    facts = _obj(body, "facts", "check")
    verdict = _obj(body, "verdict", "check")
    node = _obj(body, "node", "check")
    cloud = _obj(facts, "cloud", "check.facts")
    nvidia = _obj(facts, "nvidia", "check.facts")
    rocm = _obj(facts, "rocm", "check.facts")
    gpus = [
        _gpu(g, f"check.facts.{section}.gpus[{i}]", vendor)
        for section, vendor, part in (("nvidia", "nvidia", nvidia), ("rocm", "amd", rocm))
        for i, g in enumerate(_objects(part, "gpus", f"check.facts.{section}"))
    ]
    torch: dict[str, Any] = {}
    torch_where = "check.facts"
    for i, p in enumerate(_objects(facts, "packages", "check.facts")):
        where = f"check.facts.packages[{i}]"
        if _str(p, "name", where) == "torch" and not p.get("shadowed"):
            torch, torch_where = p, where
            break
    speed: dict[str, float] = {}
    distributed = None
    verify = _obj(body, "verify", "check")
    for i, c in enumerate(_objects(verify, "checks", "check.verify")):
        where = f"check.verify.checks[{i}]"
        name, status = _str(c, "name", where), _str(c, "status", where)
        if name == "matmul-speed" and status in ("pass", "warn"):
            tflops = _obj(c, "evidence", where).get("tflops")
            if tflops is not None and (
                not isinstance(tflops, (int, float)) or isinstance(tflops, bool)
            ):
                raise _wrong(f"{where}.evidence.tflops", tflops, "a number")
            if tflops is not None and math.isfinite(tflops) and tflops > 0:
                speed[_str(c, "device", where) or "?"] = float(tflops)
        elif name == "distributed":
            distributed = status
    name = (
        _str(node, "node_name", "check.node")  # a pod's node (Kubernetes' spec.nodeName)
        or _str(node, "hostname", "check.node")
        or os.path.splitext(os.path.basename(path))[0]
    )
    return Node(
        name=name,
        path=path,
        state=_str(verdict, "state", "check.verdict") or "unexaminable",
        verdict=_str(verdict, "line", "check.verdict") or "",
        provider=_str(cloud, "provider", "check.facts.cloud"),
        instance_type=_str(cloud, "instance_type", "check.facts.cloud"),
        expected_gpus=_int(cloud, "expected_gpus", "check.facts.cloud"),
        expected_gpu_model=_str(cloud, "expected_gpu_model", "check.facts.cloud"),
        gpus=tuple(gpus),
        driver=_str(nvidia, "driver_version", "check.facts.nvidia")
        or _str(rocm, "driver_version", "check.facts.rocm"),
        cuda_driver=_str(nvidia, "cuda_driver_version", "check.facts.nvidia"),
        torch=_str(torch, "version", torch_where),
        variant=_str(torch, "variant", torch_where),
        torch_cuda=_str(torch, "cuda", torch_where) or _str(torch, "hip", torch_where),
        speed=speed,
        distributed=distributed,
    )


STEP_STATES = ("pending", "running", "done", "failed", "timed-out", "stopped")


def allreduce_from_document(doc: dict[str, Any], path: str) -> AllReduce:
    """An :class:`AllReduce` from a parsed ``verify --json`` document."""
    body = doc.get("verify")
    if not isinstance(body, dict):
        raise ValueError("the document has no verify body")
    status, message, first_failure = None, "", ""
    for i, c in enumerate(_objects(body, "checks", "verify")):
        where = f"verify.checks[{i}]"
        name, state = _str(c, "name", where), _str(c, "status", where)
        if name == "distributed" and status is None:
            status, message = state or "fail", _str(c, "message", where) or ""
        elif state == "fail" and not first_failure:
            first_failure = f"{name}: {_str(c, 'message', where) or 'failed'}"
    if status is None:
        error = _str(body, "error", "verify")
        why = error or first_failure or "no distributed check in the document"
        status, message = "fail", f"the all-reduce did not run ({why})"
    return AllReduce(_key(path), path, status, message[:500])


def job_from_document(doc: dict[str, Any], path: str) -> JobRecord:
    """A :class:`JobRecord` from a parsed ``setup-env/fleet-job`` document."""
    where = "the job record"
    expected = _int(doc, "expected_nodes", where)
    if expected is not None and expected < 0:
        raise ValueError("the job record: expected_nodes is negative")
    steps = []
    for i, st in enumerate(_objects(doc, "steps", where)):
        at = f"{where}.steps[{i}]"
        state = _str(st, "state", at) or "pending"
        if state not in STEP_STATES:
            raise ValueError(f"{at}.state is {state!r}, not one of {', '.join(STEP_STATES)}")
        steps.append(Step(_str(st, "name", at) or f"step {i + 1}", state, _int(st, "rc", at)))
    return JobRecord(
        path=path,
        launcher=_str(doc, "launcher", where) or "?",
        expected_nodes=expected,
        nodes=_strings(doc, "nodes", where),
        node=_str(doc, "node", where),
        job_id=_str(doc, "job_id", where),
        ended=_str(doc, "ended", where),
        steps=tuple(steps),
    )


def document_paths(paths: Iterable[str]) -> tuple[list[str], list[BadDocument]]:
    """Files given, and every ``*.json`` under each folder given (sorted). A path that is
    neither a folder nor missing is read as a document (a FIFO or a device is then refused)."""
    files: list[str] = []
    bad: list[BadDocument] = []
    for p in paths:
        if os.path.isdir(p):
            for root, _dirs, names in sorted(os.walk(p)):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".json")]
        elif os.path.exists(p):
            files.append(p)
        else:
            bad.append(BadDocument(shown(p, 1000), "no such file or folder"))
    return files, bad


Document = Union[Node, AllReduce, JobRecord, None]


def from_document(doc: Any, path: str) -> Document:
    """What one parsed document is (None: a fleet report, passed over); ValueError when it is
    none of the documents a fleet job leaves."""
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema == "setup-env/check":
        return node_from_document(doc, path)
    if schema == "setup-env/verify" and isinstance(doc, dict):
        return allreduce_from_document(doc, path)
    if schema == "setup-env/fleet-job" and isinstance(doc, dict):
        return job_from_document(doc, path)
    if schema == "setup-env/fleet":
        return None
    if schema == "setup-env/error" and isinstance(doc, dict):
        body = doc.get("error")
        said = body.get("message") if isinstance(body, dict) else None
        if isinstance(said, str) and said:
            raise ValueError(f"an error, not a result: {shown(said.splitlines()[0], 200)}")
    raise ValueError("not a `setup-env check --json` document")


def read_documents(path: str) -> tuple[list[Document], Optional[str]]:
    """The documents in the file at ``path`` and, when some of it could not be read, why (one
    line; what came before is kept). ValueError when nothing in it could be read."""
    from setup_env import bounded

    try:
        data = bounded.read_file(path, MAX_DOCUMENT)
    except bounded.ReadFailed as exc:
        if exc.kind == "too-large":
            raise ValueError("too large for a check document") from None
        raise ValueError(f"cannot read: {exc.detail or exc.kind}") from None
    try:
        # NaN and Infinity as Python's json writes them: a verify result may hold one.
        docs, error = bounded.parse_json_documents(data, "the document", allow_nan=True)
    except bounded.InputError as exc:
        raise ValueError(str(exc)) from None
    if not docs:
        raise ValueError(error or "empty: no document (the step that writes it did not finish)")
    out: list[Document] = []
    name = shown(path, 1000)  # what the report shows; the file is read by its own name
    for doc in docs:
        try:
            out.append(from_document(doc, name))
        except ValueError as exc:
            if len(docs) == 1:
                raise
            error = error or str(exc).splitlines()[0]
    return out, error


def read_document(path: str) -> Node:
    """The node of the check document at ``path``; ValueError (one line) when it is none."""
    docs, error = read_documents(path)
    if error is not None or len(docs) != 1 or not isinstance(docs[0], Node):
        raise ValueError(error or "not a `setup-env check --json` document")
    return docs[0]


def load_all(paths: Sequence[str]) -> Documents:
    """Every document under ``paths``; the unreadable ones (and unreadable rests of files) as
    :class:`BadDocument`."""
    files, bad = document_paths(paths)
    out = Documents(bad=bad)
    for path in files:
        try:
            docs, error = read_documents(path)
        except ValueError as exc:
            out.bad.append(BadDocument(shown(path, 1000), _reason(str(exc))))
            continue
        if error is not None:
            out.bad.append(BadDocument(shown(path, 1000), _reason(error)))
        for doc in docs:
            if isinstance(doc, Node):
                out.nodes.append(doc)
            elif isinstance(doc, AllReduce):
                out.allreduce.append(doc)
            elif isinstance(doc, JobRecord):
                out.jobs.append(doc)
    out.nodes = _unique(out.nodes)
    return out


def _reason(text: str) -> str:
    lines = text.splitlines()
    return shown(lines[0] if lines else text, 200)


def load(paths: Sequence[str]) -> tuple[list[Node], list[BadDocument]]:
    """Every node document under ``paths``; the unreadable ones as :class:`BadDocument`."""
    docs = load_all(paths)
    return docs.nodes, docs.bad


def _unique(nodes: list[Node]) -> list[Node]:
    """Two documents from one host (a rerun, two jobs): each keeps its row, named by its file."""
    from collections import Counter

    seen = Counter(n.name for n in nodes)
    return [
        replace(n, name=f"{n.name} ({os.path.basename(n.path)})") if seen[n.name] > 1 else n
        for n in nodes
    ]
