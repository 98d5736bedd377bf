"""What reading a report gives: a :class:`Report` (or :class:`CollectEnvError` when the text is
not one), and the sources of the facts read from it."""

from __future__ import annotations

from typing import Optional

from setup_env._record import Record, field, record
from setup_env.facts import Facts
from setup_env.probe.report.messages import TorchMessage

SOURCE = "collect_env"
WARNING_SOURCE = "collect_env:warning"  # facts read from the messages pasted with the report


class CollectEnvError(ValueError):
    """The text is not a collect_env report (nothing in it could be recognised)."""


@record
class Evidence(Record):
    """One fact diagnose used and where it came from: a field ("collect_env:Is CUDA available"),
    a torch message ("collect_env:warning"), a path, or an inference from other facts."""

    fact: str  # "gpus", "driver", "os", "python", "torch"...
    value: str
    source: str  # "collect_env:OS", "inferred: ...", "collect_env:warning"


@record
class Assumption(Record):
    """A fact the report does not settle, set to its most likely value; ``alternative`` names the
    other value whose answer diagnose also works out (``decide.assume``)."""

    fact: str  # "driver" | "gpus" | "os" | "python"
    value: str  # what was assumed, in words
    why: str  # why this value is the most likely one
    alternative: str  # the value that would change the answer, in words ("older than 580")
    # How the alternative is planned: "driver-floor:<version>" (a driver at that version),
    # "os:windows", "python:3.9", "gpus:none", "gpus:nvidia".
    alt: str = ""


@record
class Report(Record):
    """What a collect_env paste says: the facts, plus what only torch itself could tell."""

    facts: Facts
    fields: dict[str, str] = field(default_factory=dict)  # the raw "Key: value" lines
    cuda_available: Optional[bool] = None  # torch.cuda.is_available() at report time
    xpu_available: Optional[bool] = None
    debug_build: Optional[bool] = None
    truncated: bool = False  # the paste stops before the library list
    layout: str = "pytorch"  # "pytorch" | "vllm" (sectioned, padded keys) | "messages" (no keys)
    missing: tuple[str, ...] = ()  # facts a diagnosis needs that the paste lacks: "gpus", "os"...
    warnings: tuple[TorchMessage, ...] = ()  # torch's own messages pasted with the report
    libraries: dict[str, str] = field(default_factory=dict)  # pip name -> version
    # The facts diagnose plans from: ``facts`` plus what the report implies and what was assumed
    # (``infer``); None: the same as ``facts``.
    planning: Optional[Facts] = None
    evidence: tuple[Evidence, ...] = ()  # each fact diagnose plans from, with its source
    assumptions: tuple[Assumption, ...] = ()  # facts the report does not settle
