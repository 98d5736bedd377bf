"""The planner: a pure function (facts, matrix, options) -> Plan. Skeleton: the planner issue
fills in ``make_plan``; the types below are the contract other modules code against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from setup_env.facts import Facts

Installer = Literal["pip", "uv", "uv-project", "poetry", "requirements"]
Channel = Literal["stable", "nightly"]


@dataclass(frozen=True)
class PlanOptions:
    torch: str | None = None  # pin, e.g. "2.13.0" or "2.13"
    variant: str | None = None  # "cpu", "cu130", "rocm7.2", "xpu"
    with_packages: tuple[str, ...] = ()  # ("torchvision", "torchaudio")
    channel: Channel = "stable"
    installer: Installer = "pip"
    index_url: str | None = None  # internal mirror replacing https://download.pytorch.org/whl


@dataclass(frozen=True)
class Fix:
    """One way out, ranked: 1 is what an expert would try first."""

    rank: int
    kind: str  # "upgrade-driver" | "pin-torch" | "change-python" | "build-from-source" | "cpu" ...
    summary: str
    command: str | None = None


@dataclass(frozen=True)
class Plan:
    status: Literal["ok", "fallback", "none"]  # fallback: only a CPU build or an older torch fits
    torch_version: str | None = None
    variant: str | None = None  # "cu130", "cpu", "rocm7.2", "xpu", "mps" ...
    index_url: str | None = None  # None: plain PyPI
    requirements: tuple[str, ...] = ()  # ("torch==2.15.0", "torchvision==0.30.0")
    argv: tuple[str, ...] = ()  # the install command as argv, for `setup-env install`
    command: str = ""  # the same, quoted for a shell, for people
    config: str | None = None  # uv-project / poetry: the pyproject snippet
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    min_driver: str | None = None  # what the chosen wheel needs from the NVIDIA driver
    details: dict[str, str] = field(default_factory=dict)


def make_plan(facts: Facts, options: PlanOptions | None = None, matrix: object = None) -> Plan:
    raise NotImplementedError("the planner is not built yet")
