"""Rendering helpers shared by the commands: the versioned JSON envelope, colour, tables.

Only the CLI layer (``setup_env.cli`` and ``setup_env.commands``) calls these to print.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar, TextIO

from setup_env import __version__
from setup_env.facts import to_jsonable

# Bump a kind's version when a field is removed or changes meaning; adding fields is compatible.
SCHEMA_VERSIONS = {
    "facts": 1,
    "plan": 1,
    "matrix": 1,
    "verify": 1,
    "doctor": 1,
    "diagnose": 1,
    "check": 1,
    "install": 1,
    "error": 1,
    "fleet": 1,
    "launcher": 1,
    "capture": 1,
}


def envelope(kind: str, payload: Any) -> dict[str, Any]:
    """The one JSON shape every ``--json`` output has."""
    return {
        "schema": f"setup-env/{kind}",
        "schema_version": SCHEMA_VERSIONS[kind],
        "tool": {"name": "setup-env", "version": __version__},
        kind: to_jsonable(payload),
    }


def fail(command: str, code: str, message: str, exit_code: int, as_json: bool) -> int:
    """One failure, reported the same way by every command: with --json an error envelope on
    stdout ({"code", "message"}), always one line on stderr; returns the exit code."""
    from setup_env.bounded import one_line

    if as_json:  # JSON escapes control characters itself: the message goes in as it is
        print(dumps(envelope("error", {"code": code, "message": message[:1000]})))
    who = f"setup-env {command}" if command else "setup-env"
    # It may echo input: on a terminal one line, control characters shown escaped.
    print(f"{who}: {one_line(message, 1000)}", file=sys.stderr)
    return exit_code


def dumps(doc: Any) -> str:
    return json.dumps(to_jsonable(doc), indent=2, sort_keys=False)


def use_color(stream: TextIO, flag: bool | None = None) -> bool:
    """--color/--no-color > NO_COLOR / FORCE_COLOR > is it a terminal."""
    if flag is not None:
        return flag
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return bool(getattr(stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"


class Style:
    _CODES: ClassVar[dict[str, str]] = {
        "bold": "1",
        "dim": "2",
        "red": "31",
        "green": "32",
        "yellow": "33",
        "cyan": "36",
    }

    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        codes = ";".join(self._CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def severity(self, severity: str, text: str | None = None) -> str:
        word = text if text is not None else severity
        style = {"error": "red", "warning": "yellow", "info": "cyan", "ok": "green"}.get(severity)
        return self(word, style, "bold") if style else word


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A plain aligned text table (like nvidia-smi's --query output, minus the box art)."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit in ("B", "KiB") else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"


def log(message: str, stream: TextIO | None = None) -> None:
    """Logs and progress go to stderr, never mixed into --json on stdout."""
    print(message, file=stream or sys.stderr, flush=True)


class LiveLine:
    """One status line on a terminal, rewritten in place ("\\r" + erase line), gone when done:
    the live progress of verify. On anything but a terminal every update is its own line, as a
    log would want (CI logs, pipes, files)."""

    def __init__(self, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        if live is None:
            isatty = bool(getattr(self.stream, "isatty", lambda: False)())
            live = isatty and os.environ.get("TERM") != "dumb"
        self.live = live
        self._shown = False

    def show(self, text: str) -> None:
        if self.live:
            # Never wrap: a wrapped line can't be erased with one "\r".
            width = _terminal_width(self.stream)
            self.stream.write("\r\x1b[K" + _clip(text, width - 1))
            self._shown = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self) -> None:
        if self.live and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False


def _terminal_width(stream: TextIO) -> int:
    """The terminal's columns; a terminal that reports 0 (a fresh pseudo-terminal, a serial
    console) has an unknown width, not none: $COLUMNS, else 80."""
    import shutil

    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, AttributeError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    fallback = shutil.get_terminal_size().columns
    return fallback if fallback > 0 else 80


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _clip(text: str, width: int) -> str:
    """``text`` cut to ``width`` visible characters (ANSI colour codes don't count)."""
    if len(_ANSI.sub("", text)) <= width:
        return text
    plain = _ANSI.sub("", text)
    return plain[: max(width - 1, 0)] + "…"
