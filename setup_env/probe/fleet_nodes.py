"""A node of the fleet, read from the ``setup-env check --json`` document it wrote.

Only the fields the report needs are read, straight from the parsed JSON (no dataclass rebuild of
the whole facts: a thousand documents load in a fraction of a second). Each file is read through
``bounded`` (a regular file, capped: a FIFO named ``*.json`` is refused, not waited on). A document
that can't be read, is not a ``setup-env/check`` envelope, or holds a field of the wrong type
(``"gpus": "x"``, ``"facts": []``) is a :class:`BadDocument` the report lists.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

MAX_DOCUMENT = 20_000_000  # a check document is ~10-50 KiB


@dataclass(frozen=True)
class GpuHealth:
    index: int
    name: str
    ecc_uncorrected: Optional[int] = None
    pcie_gen: Optional[int] = None
    pcie_gen_max: Optional[int] = None
    pcie_width: Optional[int] = None
    pcie_width_max: Optional[int] = None
    throttle: tuple[str, ...] = ()
    bus_id: Optional[str] = None


@dataclass(frozen=True)
class Node:
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


@dataclass(frozen=True)
class BadDocument:
    path: str
    reason: str


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


def _str(parent: dict[str, Any], key: str, where: str) -> Optional[str]:
    """``parent[key]`` as a string; None when missing, null or empty."""
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _wrong(f"{where}.{key}", value, "a string")
    return value or None


def _strings(parent: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = parent.get(key)
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _wrong(f"{where}.{key}", value, "a list")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise _wrong(f"{where}.{key}[{i}]", item, "a string")
    return tuple(value)


def _gpu(g: dict[str, Any], where: str) -> GpuHealth:
    return GpuHealth(
        index=_int(g, "index", where) or 0,
        name=_str(g, "name", where) or "?",
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
        _gpu(g, f"check.facts.{vendor}.gpus[{i}]")
        for vendor, part in (("nvidia", nvidia), ("rocm", rocm))
        for i, g in enumerate(_objects(part, "gpus", f"check.facts.{vendor}"))
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
    name = _str(node, "hostname", "check.node") or os.path.splitext(os.path.basename(path))[0]
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
            bad.append(BadDocument(p, "no such file or folder"))
    return files, bad


def read_document(path: str) -> Node:
    """The node of the document at ``path``; ValueError (one line) when it is none."""
    from setup_env import bounded

    try:
        data = bounded.read_file(path, MAX_DOCUMENT)
    except bounded.ReadFailed as exc:
        if exc.kind == "too-large":
            raise ValueError("too large for a check document") from None
        raise ValueError(f"cannot read: {exc.detail or exc.kind}") from None
    try:
        # NaN and Infinity as Python's json writes them: a verify result may hold one.
        doc = bounded.parse_json(data, "the document", allow_nan=True)
    except bounded.InputError as exc:
        raise ValueError(str(exc)) from None
    return node_from_document(doc, path)


def load(paths: Sequence[str]) -> tuple[list[Node], list[BadDocument]]:
    """Every node document under ``paths``; the unreadable ones as :class:`BadDocument`."""
    files, bad = document_paths(paths)
    nodes: list[Node] = []
    for path in files:
        try:
            nodes.append(read_document(path))
        except ValueError as exc:
            bad.append(BadDocument(path, str(exc).splitlines()[0][:200]))
    return _unique(nodes), bad


def _unique(nodes: list[Node]) -> list[Node]:
    """Two documents from one host (a rerun, two jobs): each keeps its row, named by its file."""
    from collections import Counter
    from dataclasses import replace

    seen = Counter(n.name for n in nodes)
    return [
        replace(n, name=f"{n.name} ({os.path.basename(n.path)})") if seen[n.name] > 1 else n
        for n in nodes
    ]
