"""A node of the fleet, read from the ``setup-env check --json`` document it wrote.

Only the fields the report needs are read, straight from the parsed JSON (no dataclass rebuild of
the whole facts: a thousand documents load in a fraction of a second). A document that is not a
``setup-env/check`` envelope, or that can't be read, is a :class:`BadDocument` the report lists.
"""

from __future__ import annotations

import json
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


def _int(value: Any) -> Optional[int]:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and value else None


def _obj(parent: dict[str, Any], key: str) -> dict[str, Any]:
    value = parent.get(key)
    return value if isinstance(value, dict) else {}


def node_from_document(doc: Any, path: str) -> Node:
    """A :class:`Node` from a parsed ``check --json`` document; ValueError when it is not one."""
    if not isinstance(doc, dict) or doc.get("schema") != "setup-env/check":
        raise ValueError("not a `setup-env check --json` document")
    body = doc.get("check")
    if not isinstance(body, dict):
        raise ValueError("the document has no check body")
    facts = _obj(body, "facts")
    verdict = _obj(body, "verdict")
    node = _obj(body, "node")
    cloud = _obj(facts, "cloud")
    nvidia = _obj(facts, "nvidia")
    rocm = _obj(facts, "rocm")
    gpus = []
    for g in [*(nvidia.get("gpus") or ()), *(rocm.get("gpus") or ())]:
        if not isinstance(g, dict):
            continue
        throttle = g.get("throttle_reasons") or ()
        gpus.append(
            GpuHealth(
                index=_int(g.get("index")) or 0,
                name=_str(g.get("name")) or "?",
                ecc_uncorrected=_int(g.get("ecc_errors_uncorrected")),
                pcie_gen=_int(g.get("pcie_gen_current")),
                pcie_gen_max=_int(g.get("pcie_gen_max")),
                pcie_width=_int(g.get("pcie_width_current")),
                pcie_width_max=_int(g.get("pcie_width_max")),
                throttle=tuple(str(t) for t in throttle if isinstance(t, str)),
                bus_id=_str(g.get("pci_bus_id")),
            )
        )
    torch: dict[str, Any] = {}
    for p in facts.get("packages") or ():
        if isinstance(p, dict) and p.get("name") == "torch" and not p.get("shadowed"):
            torch = p
            break
    speed: dict[str, float] = {}
    distributed = None
    verify = _obj(body, "verify")
    for c in verify.get("checks") or ():
        if not isinstance(c, dict):
            continue
        if c.get("name") == "matmul-speed" and c.get("status") in ("pass", "warn"):
            tflops = (c.get("evidence") or {}).get("tflops")
            if isinstance(tflops, (int, float)) and tflops > 0:
                speed[str(c.get("device") or "?")] = float(tflops)
        elif c.get("name") == "distributed":
            distributed = _str(c.get("status"))
    name = _str(node.get("hostname")) or os.path.splitext(os.path.basename(path))[0]
    return Node(
        name=name,
        path=path,
        state=_str(verdict.get("state")) or "unexaminable",
        verdict=_str(verdict.get("line")) or "",
        provider=_str(cloud.get("provider")),
        instance_type=_str(cloud.get("instance_type")),
        expected_gpus=_int(cloud.get("expected_gpus")),
        expected_gpu_model=_str(cloud.get("expected_gpu_model")),
        gpus=tuple(gpus),
        driver=_str(nvidia.get("driver_version")) or _str(rocm.get("driver_version")),
        cuda_driver=_str(nvidia.get("cuda_driver_version")),
        torch=_str(torch.get("version")),
        variant=_str(torch.get("variant")),
        torch_cuda=_str(torch.get("cuda")) or _str(torch.get("hip")),
        speed=speed,
        distributed=distributed,
    )


def document_paths(paths: Iterable[str]) -> tuple[list[str], list[BadDocument]]:
    """Files given, and every ``*.json`` under each folder given (sorted)."""
    files: list[str] = []
    bad: list[BadDocument] = []
    for p in paths:
        if os.path.isdir(p):
            for root, _dirs, names in sorted(os.walk(p)):
                files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".json")]
        elif os.path.isfile(p):
            files.append(p)
        else:
            bad.append(BadDocument(p, "no such file or folder"))
    return files, bad


def load(paths: Sequence[str]) -> tuple[list[Node], list[BadDocument]]:
    """Every node document under ``paths``; the unreadable ones as :class:`BadDocument`."""
    files, bad = document_paths(paths)
    nodes: list[Node] = []
    for path in files:
        try:
            with open(path, "rb") as f:
                # Size first: read(MAX) would allocate MAX bytes for every small file.
                if os.fstat(f.fileno()).st_size > MAX_DOCUMENT:
                    raise ValueError("too large for a check document")
                data = f.read(MAX_DOCUMENT + 1)
            if len(data) > MAX_DOCUMENT:  # grew while read (a file still being written)
                raise ValueError("too large for a check document")
            nodes.append(node_from_document(json.loads(data.decode("utf-8")), path))
        except (OSError, UnicodeDecodeError) as exc:
            bad.append(BadDocument(path, f"cannot read: {getattr(exc, 'strerror', None) or exc}"))
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            bad.append(BadDocument(path, str(exc).splitlines()[0][:200]))
        except RecursionError:
            bad.append(BadDocument(path, "nested too deeply to be a check document"))
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
