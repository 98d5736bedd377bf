"""Where a command's facts come from: a facts file (``--facts``), a captured machine
(``--root DIR``), or this machine. Shared by detect, plan, doctor and check."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from setup_env.facts import Facts
    from setup_env.probe.host import Host

MAX_FACTS_FILE = 20_000_000  # a facts document is a few KiB; anything this big is not one


class SourceError(Exception):
    """The facts file or captured machine named on the command line can't be read."""


def read_facts_file(path: str) -> Facts:
    """The facts of ``setup-env detect --json`` (envelope or bare) read from ``path``."""
    from setup_env import bounded
    from setup_env.facts import Facts, FactsError

    try:
        data = bounded.read_file(path, MAX_FACTS_FILE)
    except bounded.ReadFailed as exc:
        raise SourceError(f"cannot read {path}: {exc.detail or exc.kind}") from None
    try:
        return Facts.from_json(data)
    except FactsError as exc:
        raise SourceError(f"{path} is not a facts document: {exc}") from exc


def open_host(root: Optional[str]) -> Host:
    """A replay of the captured folder ``root``, or this machine when ``root`` is None."""
    from setup_env.probe.host import LiveHost, ReplayError, ReplayHost

    if not root:
        return LiveHost()
    from pathlib import Path

    try:
        return ReplayHost(Path(root))
    except ReplayError as exc:
        raise SourceError(str(exc)) from exc


def load_facts(root: Optional[str], facts_file: Optional[str] = None) -> tuple[Facts, str]:
    """Facts from ``--facts FILE``, a replayed ``--root DIR``, or this machine; and a label."""
    if facts_file:
        return read_facts_file(facts_file), facts_file
    from setup_env.probe.detect import detect

    host = open_host(root)
    return detect(host), host.label
