"""Capture this machine into a replay folder for ``--root DIR`` (``setup-env capture DIR``).

Detection runs once against a recording host: exactly the files, commands and values the probes
touched are written (``host.json``, ``files/<abs path>``, ``commands/NN-<name>.txt``), nothing
else, so a folder stays small (no site-packages copies: only the METADATA, INSTALLER and
version.py files the package probe reads). The command then replays the folder and compares its
facts with the live ones; a difference means a probe touched the machine outside the seam.

Redacted before anything is written: GPU/system UUIDs, serial numbers, cloud instance ids, this
machine's host name, and the user name in home-folder paths (/home/NAME, /Users/NAME,
C:\\Users\\NAME become .../user). Review the folder before sharing it anyway.
"""

from __future__ import annotations

import contextlib
import datetime
import getpass
import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from setup_env import bounded
from setup_env.probe.detect import detect, relevant_environment
from setup_env.probe.host import LiveHost, RecordingHost, ReplayHost

ZERO_UUID = "00000000-0000-0000-0000-000000000000"
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b")
_AGENT_UUID = re.compile(r"\b(GPU|CPU)-[0-9a-fA-F]{12,16}\b")  # rocminfo "Uuid: GPU-124d13cc..."
_SERIAL = re.compile(r"(?im)^(\s*(?:Serial Number|Board Serial|serial)\s*[:=]\s*)(\S.*)$")
_INSTANCE = re.compile(r"\bi-[0-9a-f]{8}(?:[0-9a-f]{9})?\b")
_SECRET_KEYS = {"uuid", "serial", "serial_number", "board_serial", "instance_id", "vm_id"}


def _host_name() -> str:
    """This machine's name, without the socket module (the one door keeps network modules
    out): the kernel's node name, or Windows' COMPUTERNAME."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    return os.environ.get("COMPUTERNAME", "")


def make_redactor() -> Callable[[str], str]:
    """One function applied to every string written: paths, file texts, command outputs."""
    names = set()
    for candidate in (os.environ.get("USER"), os.environ.get("USERNAME")):
        if candidate:
            names.add(candidate)
    with contextlib.suppress(KeyError, OSError):
        names.add(getpass.getuser())
    home = os.path.expanduser("~")
    host = _host_name().split(".")[0]
    patterns: list[tuple[re.Pattern[str], str]] = []
    for name in sorted(names, key=len, reverse=True):
        if name and name not in ("root", "user"):
            esc = re.escape(name)
            patterns.append((re.compile(rf"(/home/|/Users/|\\Users\\){esc}\b"), r"\1user"))
    if home not in ("/", "/root") and os.path.basename(home) not in ("", "root", "user"):
        patterns.append((re.compile(re.escape(home)), os.path.join(os.path.dirname(home), "user")))
    if len(host) >= 3 and host not in ("localhost",):
        patterns.append((re.compile(rf"\b{re.escape(host)}\b"), "redacted-host"))

    def redact(text: str) -> str:
        text = _UUID.sub(ZERO_UUID, text)
        text = _AGENT_UUID.sub(lambda m: f"{m.group(1)}-XX", text)
        text = _SERIAL.sub(r"\1REDACTED", text)
        text = _INSTANCE.sub("i-00000000000000000", text)
        for pattern, repl in patterns:
            text = pattern.sub(repl, text)
        return text

    return redact


def redact_tree(value: Any, redact: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if str(key).lower() in _SECRET_KEYS and isinstance(item, str) and item:
                out[redact(str(key))] = "REDACTED"
            else:
                out[redact(str(key))] = redact_tree(item, redact)
        return out
    if isinstance(value, (list, tuple)):
        return [redact_tree(v, redact) for v in value]
    return value


def local_name(path: str) -> str:
    """The path under files/ (as ReplayHost reads it): ':' -> '%3A', 'C:' -> 'C'."""
    path = path.replace("\\", "/")
    if len(path) >= 2 and path[1] == ":" and path[0].isalpha():
        path = path[0] + path[2:]
    return path.lstrip("/").replace(":", "%3A")


def metadata_headers(text: str) -> str:
    """Core metadata without its long description (the headers are all a probe reads)."""
    head, _, _ = text.partition("\n\n")
    return head.rstrip("\n") + "\n"


def _used(prefix: str, touched: set[str]) -> bool:
    return any(p == prefix or p.startswith(prefix + "/") for p in touched)


def build_document(rec: RecordingHost) -> tuple[dict[str, Any], dict[str, str], list[str]]:
    """(host.json document, {path: text} files, [stdout texts]) — before redaction."""
    touched = set(rec.files) | rec.existing | rec.unreadable | set(rec.listings) | set(rec.links)
    env: dict[str, str] = {k: v for k, v in rec.env_seen.items() if v is not None}
    if rec.environ_read:
        env.update(relevant_environment(rec.inner.environ()))
    dirs: dict[str, list[str]] = {}
    for folder, names in rec.listings.items():
        kept = [n for n in names if _used(f"{folder.rstrip('/')}/{n}", touched)]
        if kept:
            dirs[folder] = kept
    exists = sorted(p for p in rec.existing if p not in rec.files and p not in rec.listings)
    commands = []
    outputs = []
    for i, result in enumerate(rec.commands):
        item: dict[str, Any] = {"argv": list(result.argv), "returncode": result.returncode}
        if result.stdout:
            stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", os.path.basename(result.argv[0]))[:40]
            item["stdout_file"] = f"commands/{i:02d}-{stem}.txt"
            outputs.append(result.stdout)
        if result.stderr:
            item["stderr"] = result.stderr[-4000:]
        if result.error:
            item["error"] = result.error
            item["detail"] = result.detail
        commands.append(item)
    doc: dict[str, Any] = {
        "captured": datetime.date.today().isoformat(),
        "label": "captured by setup-env capture",
        "interpreter": dict(rec.interp or {}),
        "env": env,
        "which": rec.which_seen,
        "links": rec.links,
        "exists": exists,
        "dirs": dirs,
        "disk_free": {k: v for k, v in rec.disk.items() if v is not None},
        "unreadable": sorted(rec.unreadable),
        "commands": commands,
    }
    if rec.nvml_snapshot is not None:
        doc["nvml"] = dict(rec.nvml_snapshot)
    return doc, dict(rec.files), outputs


def capture(out_dir: Path, environ: dict[str, str] | None = None) -> dict[str, Any]:
    """Capture the live machine into out_dir; return the live facts (redacted) as a dict.
    Every file is written through the one door (``bounded.write_file``: atomic, never through a
    FIFO); WriteFailed when the folder cannot be written."""
    rec = RecordingHost(LiveHost(environ))
    live = detect(rec)
    redact = make_redactor()
    doc, files, outputs = build_document(rec)
    doc = redact_tree(doc, redact)
    out_dir.mkdir(parents=True, exist_ok=True)

    def put(target: Path, text: str) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        bounded.write_file(target, text)

    for path, text in files.items():
        if path.endswith(("/METADATA", "/PKG-INFO")):
            text = metadata_headers(text)
        put(out_dir / "files" / local_name(redact(path)), redact(text))
    stdout_items = [c for c in doc["commands"] if "stdout_file" in c]
    for item, text in zip(stdout_items, outputs):
        put(out_dir / item["stdout_file"], redact(text))
    put(out_dir / "host.json", json.dumps(doc, indent=2) + "\n")
    sources = out_dir / "SOURCES.md"
    if not sources.exists():
        put(
            sources,
            f"# {out_dir.name}\n\nEvery file here was captured from a live machine by "
            f"`setup-env capture` on {doc['captured']} (redacted: UUIDs, serials, "
            "instance ids, host name, user names in paths). Nothing was written by hand.\n",
        )
    result: dict[str, Any] = redact_tree(live.to_dict(), redact)
    return result


def replay(folder: Path) -> dict[str, Any]:
    """The facts a replay of ``folder`` gives (``setup-env detect --root FOLDER``), as a dict."""
    facts: dict[str, Any] = detect(ReplayHost(folder)).to_dict()
    return facts


def write_expected(folder: Path) -> dict[str, Any]:
    """(Re)write ``folder/expected.json`` from a replay (a test fixture's reviewed answer)."""
    facts = replay(folder)
    bounded.write_file(folder / "expected.json", json.dumps(facts, indent=2) + "\n")
    return facts


def differences(live: dict[str, Any], replayed: dict[str, Any]) -> list[str]:
    """The top-level facts sections in which a replay differs from the live machine: a probe
    that touched the machine outside the Host seam."""
    return [k for k in sorted({*live, *replayed}) if live.get(k) != replayed.get(k)]
