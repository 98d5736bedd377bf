"""``/proc/driver/nvidia/version`` and ``/sys/module/nvidia/version``: the driver's version and
its kernel module (open or proprietary)."""

from __future__ import annotations

import re
from typing import Optional

from setup_env.probe.host import Host
from setup_env.probe.nvidia.gather import _VERSION, _Acc


def parse_proc_version(text: str) -> tuple[Optional[str], Optional[str]]:
    """``/proc/driver/nvidia/version`` -> (driver version, "open" | "proprietary").

    Example inputs (proprietary, then the open kernel module)::

        NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.173.02  Tue Jun 23 08:38:17 UTC 2026
        GCC version:  gcc version 14.2.0 (Ubuntu 14.2.0-4ubuntu2~24.04.1)

        NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  550.54.14  Release Build  (...)
    """
    for line in text.splitlines():
        if not line.startswith("NVRM version:"):
            continue
        rest = line[len("NVRM version:") :]
        module = "open" if re.search(r"\bOpen Kernel Module\b", rest) else None
        if module is None and "Kernel Module" in rest:
            module = "proprietary"
        m = re.search(r"Kernel Module(?: for \S+)?\s+(\d+\.\d+(?:\.\d+)?)\b", rest)
        return (m.group(1) if m else None), module
    return None, None


def parse_sys_version(text: str) -> Optional[str]:
    """``/sys/module/nvidia/version``: one line, the driver version (``550.54.15``)."""
    value = text.strip()
    return value if _VERSION.match(value) else None


def _from_files(host: Host, acc: _Acc) -> None:
    path = "/proc/driver/nvidia/version"
    r = host.read(path)
    if r.text is not None:
        acc.seen = True
        version, module = parse_proc_version(r.text)
        if version is None:
            what = "is empty" if not r.text.strip() else "has no NVRM version line"
            acc.note("nvidia-proc-garbled", f"{path} {what}", path)
        acc.set("driver_version", version, path)
        acc.set("kernel_module", module, path)
    elif r.error == "permission-denied":
        acc.seen = True
        acc.note("nvidia-proc-unreadable", f"{path}: permission denied", path, "info")
    if acc.values.get("driver_version") is None:
        path = "/sys/module/nvidia/version"
        r = host.read(path)
        if r.text is not None:
            acc.seen = True
            version = parse_sys_version(r.text)
            if version is None:
                acc.note("nvidia-sys-garbled", f"{path}: {r.text.strip()[:40]!r}", path)
            acc.set("driver_version", version, path)
