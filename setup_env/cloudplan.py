"""Planning for a cloud instance (skeleton; the cloud issue fills it in).

Contract used by `setup-env plan` and `setup-env check`:
- ``add_plan_arguments(parser)`` adds --cloud, --instance-type, --image to `plan`;
- ``apply(args, facts) -> (facts, CloudAdvice | None)``: with --cloud/--instance-type, returns the
  facts of that instance type (what-if); without, advice for the detected cloud (facts.cloud), or None.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from setup_env.facts import Facts


@dataclass(frozen=True)
class CloudAdvice:
    provider: str
    instance_type: str | None = None
    lines: tuple[str, ...] = ()  # human sentences: the GPU, the driver route, fabric manager...


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    return None


def apply(args: argparse.Namespace, facts: Facts) -> tuple[Facts, CloudAdvice | None]:
    return facts, None
