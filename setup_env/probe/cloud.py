"""Cloud provider and instance type (skeleton; the cloud issue fills it in).

Contract: ``detect(host, metadata=None) -> (CloudInfo | None, [Note, ...])``. ``metadata``:
None = ask the metadata service only when DMI names a provider and the host is live;
True = ask even without a DMI hint; False = never.
"""

from __future__ import annotations

from setup_env.facts import CloudInfo, Note
from setup_env.probe.host import Host


def detect(host: Host, metadata: bool | None = None) -> tuple[CloudInfo | None, list[Note]]:
    return None, []
