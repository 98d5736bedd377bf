"""The Python that torch would be installed into: version, ABI, architecture, wheel tags, Rosetta.

Sources: the host's interpreter record (``platform``, ``sysconfig``, ``packaging.tags`` as the
interpreter itself computed them). A captured folder written by hand may lack ``tags``: they
are then derived from the version, architecture and C library by ``knowledge.tags`` (the rules of
``packaging.tags``, pure), marked ``derived`` in the sources.
Rosetta 2: ``sysctl.proc_translated`` (1 inside Rosetta), or an x86_64 Python on hardware whose
``hw.optional.arm64`` is 1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from setup_env.facts import Note, PythonInfo
from setup_env.knowledge.tags import derive_tags
from setup_env.probe.host import Host


def detect(
    host: Host,
    sysctl: Mapping[str, str] | None = None,
    libc: tuple[str | None, str | None] = (None, None),
    macos_version: str | None = None,
) -> tuple[PythonInfo, list[Note]]:
    """``sysctl``: the Darwin sysctl values (apple.darwin_sysctl) when on a Mac; ``libc`` and
    ``macos_version``: what the OS probe found, used only to derive missing wheel tags."""
    interp: Mapping[str, Any] = host.interpreter()
    notes: list[Note] = []
    sources: dict[str, str] = {}
    if not interp:
        notes.append(
            Note("interpreter-unknown", "the Python interpreter was not recorded", "interpreter")
        )
        return PythonInfo(), notes
    version = str(interp.get("version") or "")
    implementation = str(interp.get("implementation") or "cpython")
    free_threaded = bool(interp.get("free_threaded", False))
    machine = str(interp.get("machine") or "")
    is_64bit = bool(interp.get("is_64bit", True))
    for key in ("version", "implementation", "free_threaded", "machine", "is_64bit"):
        if key in interp:
            sources[key] = "interpreter"
    executable = interp.get("executable")

    raw_tags = interp.get("tags")
    tags: tuple[str, ...] = ()
    if isinstance(raw_tags, Sequence) and not isinstance(raw_tags, str):
        tags = tuple(str(t) for t in raw_tags)
        sources["tags"] = "packaging.tags.sys_tags"
    else:
        system = str(interp.get("system") or "")
        tags = tuple(
            derive_tags(
                version,
                implementation,
                free_threaded,
                system,
                machine,
                libc[0],
                libc[1],
                macos_version,
            )
        )
        if tags:
            sources["tags"] = "derived"

    rosetta = None
    if str(interp.get("system") or "").lower() == "darwin" and sysctl is not None:
        translated = sysctl.get("sysctl.proc_translated")
        if translated in ("0", "1"):
            rosetta = translated == "1"
            sources["rosetta"] = "sysctl sysctl.proc_translated"
        elif machine == "x86_64" and sysctl.get("hw.optional.arm64") == "1":
            rosetta = True
            sources["rosetta"] = "x86_64 Python on hw.optional.arm64=1"
        else:
            rosetta = False
            sources["rosetta"] = "sysctl (no sysctl.proc_translated: not Apple Silicon)"
        if rosetta:
            notes.append(
                Note(
                    "python-under-rosetta",
                    "this Python is x86_64 running under Rosetta 2 on an Apple Silicon Mac: "
                    "it cannot use the Apple GPU (MPS), and current torch releases publish no "
                    "x86_64 macOS wheels; use an arm64 Python",
                    "sysctl.proc_translated",
                )
            )
    if not is_64bit:
        notes.append(
            Note(
                "python-32bit",
                "this Python is a 32-bit build: PyTorch publishes 64-bit wheels only",
                "interpreter",
            )
        )
    return (
        PythonInfo(
            version=version,
            implementation=implementation,
            free_threaded=free_threaded,
            machine=machine,
            is_64bit=is_64bit,
            executable=executable if isinstance(executable, str) else None,
            tags=tags,
            rosetta=rosetta,
            sources=sources,
        ),
        notes,
    )
