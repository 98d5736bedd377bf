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
