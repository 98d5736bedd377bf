"""NVIDIA driver and GPUs (skeleton; the foundation issue fills it in).

Contract: ``detect(host) -> (NvidiaInfo | None, [Note, ...])``.
"""

from __future__ import annotations

from setup_env.facts import Note, NvidiaInfo
from setup_env.probe.host import Host


def detect(host: Host) -> tuple[NvidiaInfo | None, list[Note]]:
    return None, []
