"""torch, torchvision and torchaudio installed for the host interpreter, read WITHOUT importing.

For each entry of the interpreter's ``sys.path`` (in order) this reads ``<name>-<ver>.dist-info/``
(``METADATA``, ``INSTALLER``) or ``<name>.egg-info/PKG-INFO``, and ``torch/version.py`` (the
``cuda``, ``hip``, ``xpu`` fields written at build time), never executing any of it. The same
package found in two entries: the first wins, the later ones are ``shadowed``.

Variant (``cpu``, ``cu130``, ``rocm6.2``, ``xpu``), first that answers: the local version label
(``2.13.0+cpu``), ``torch/version.py`` (``cuda = '12.8'`` -> ``cu128``, ``hip`` -> ``rocmX.Y``,
``xpu``), then Requires-Dist (``cuda-toolkit[...]==13.0.3`` -> ``cu130`` from torch 2.11 on;
``nvidia-cuda-runtime-cu12==12.8.90`` -> ``cu128`` before), else ``cpu`` when version.py says no
accelerator at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from setup_env._record import MutableRecord, field, mutable_record, replace
from setup_env.facts import InstalledPackage, Note
from setup_env.knowledge.variant import CPU, XPU, Variant
from setup_env.probe.host import Host

NAMES = ("torch", "torchvision", "torchaudio")
_META_DIR = re.compile(r"^([A-Za-z0-9_.]+?)-([^-]+?)\.dist-info$")
_EGG_DIR = re.compile(r"^([A-Za-z0-9_.]+?)(?:-[^-]+?)?\.egg-info$")


@mutable_record
class Metadata(MutableRecord):
    """One installed distribution: name, version and what it requires."""

    name: str | None = None
    version: str | None = None
    requires: list[str] = field(default_factory=list)


def parse_metadata(text: str) -> Metadata:
    """Core metadata (``METADATA``/``PKG-INFO``) headers; the body after the blank line is ignored.

    Example::

        Name: torch
        Version: 2.13.0+cpu
        Requires-Dist: filelock
    """
    out = Metadata()
    for line in text.splitlines():
        if not line.strip():
            break
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key, value = key.strip().lower(), value.strip()
        if key == "name" and out.name is None:
            out.name = value
        elif key == "version" and out.version is None:
            out.version = value
        elif key == "requires-dist":
            out.requires.append(value)
    return out


def parse_version_py(text: str) -> dict[str, str | None]:
    """``torch/version.py`` -> {"__version__", "cuda", "hip", "xpu"} (literal values only).

    Example::

        __version__ = '2.13.0+cpu'
        cuda: Optional[str] = None
        hip: Optional[str] = None
    """
    out: dict[str, str | None] = {}
    pattern = re.compile(
        r"^(__version__|cuda|hip|xpu|rocm)\s*(?::[^=]*)?=\s*(?:(['\"])(.*?)\2|(None))\s*$"
    )
    for line in text.splitlines():
        m = pattern.match(line.strip())
        if m:
            out[m.group(1)] = None if m.group(4) else m.group(3)
    return out


def variant_from_requires(requires: Sequence[str]) -> tuple[Variant | None, str]:
    """The CUDA variant a Linux wheel's Requires-Dist names, with the requirement that said so."""
    for req in requires:
        spec = req.split(";")[0].strip()
        m = re.match(r"^cuda-toolkit(?:\[[^\]]*\])?\s*==\s*(\d+\.\d+)", spec) or re.match(
            r"^nvidia-cuda-runtime(?:-cu\d+)?\s*==\s*(\d+\.\d+)", spec
        )
        v = Variant.cuda_of(m.group(1)) if m else None
        if v is not None:
            return v, spec
    return None, ""


def infer_variant(
    version: str, version_py: dict[str, str | None] | None, requires: Sequence[str]
) -> tuple[Variant | None, str]:
    """(variant, how it was known)."""
    local = Variant.from_local(version)
    if local is not None:
        return local, "local version label"
    if version_py:
        cuda = Variant.cuda_of(version_py.get("cuda"))
        if cuda is not None:
            return cuda, "torch/version.py cuda"
        hip = Variant.rocm_of(version_py.get("hip"))
        if hip is not None:
            return hip, "torch/version.py hip"
        if version_py.get("xpu"):
            return XPU, "torch/version.py xpu"
    variant, req = variant_from_requires(requires)
    if variant:
        return variant, f"Requires-Dist {req}"
    if version_py and "cuda" in version_py:
        return CPU, "torch/version.py (no cuda, hip or xpu)"
    return None, ""


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def detect(host: Host) -> tuple[list[InstalledPackage], list[Note]]:
    interp = host.interpreter()
    sys_path = interp.get("sys_path")
    notes: list[Note] = []
    if not isinstance(sys_path, list):
        return [], notes
    found: list[InstalledPackage] = []
    seen: dict[str, InstalledPackage] = {}
    for entry in sys_path:
        if not isinstance(entry, str) or not entry:
            continue
        names = host.listdir(entry)
        if not names:
            continue
        in_entry: dict[str, list[str]] = {}
        for item in names:
            m = _META_DIR.match(item) or _EGG_DIR.match(item)
            if m and _canonical(m.group(1)) in NAMES:
                in_entry.setdefault(_canonical(m.group(1)), []).append(item)
        for name in NAMES:
            items = in_entry.get(name)
            if not items:
                continue
            if len(items) > 1:
                notes.append(
                    Note(
                        "package-metadata-duplicated",
                        f"{entry} holds {len(items)} metadata folders for {name} "
                        f"({', '.join(items)}): a broken upgrade; reinstall {name}",
                        entry,
                    )
                )
            pkg = _read(host, entry, name, sorted(items)[-1], notes)
            if pkg is None:
                continue
            first = seen.get(name)
            if first is not None:
                pkg = _shadow(pkg)
                notes.append(
                    Note(
                        "package-shadowed",
                        f"{name} {pkg.version} in {entry} is shadowed by {name} "
                        f"{first.version} in {first.location}, which Python imports first",
                        entry,
                    )
                )
            else:
                seen[name] = pkg
            found.append(pkg)
    return found, notes


def _shadow(pkg: InstalledPackage) -> InstalledPackage:
    return replace(pkg, shadowed=True)


def _read(
    host: Host, entry: str, name: str, item: str, notes: list[Note]
) -> InstalledPackage | None:
    folder = f"{entry.rstrip('/')}/{item}"
    meta_path = f"{folder}/PKG-INFO" if item.endswith(".egg-info") else f"{folder}/METADATA"
    read = host.read(meta_path)
    if read.text is None:
        notes.append(Note("package-metadata-unreadable", f"{meta_path}: {read.error}", meta_path))
        return None
    meta = parse_metadata(read.text)
    version = meta.version or ""
    if not version:
        notes.append(
            Note("package-metadata-garbled", f"{meta_path} has no Version header", meta_path)
        )
        m = _META_DIR.match(item)
        version = m.group(2) if m else ""
        if not version:
            return None
    installer = None
    if item.endswith(".dist-info"):
        text = host.read_text(f"{folder}/INSTALLER")
        if text and re.fullmatch(r"[A-Za-z0-9_.-]{1,40}", text.strip()):
            installer = text.strip()
    version_py: dict[str, str | None] | None = None
    vpath = f"{entry.rstrip('/')}/{name}/version.py"
    vtext = host.read_text(vpath)
    if vtext is not None:
        version_py = parse_version_py(vtext)
        file_version = version_py.get("__version__")
        if file_version and file_version != version:
            notes.append(
                Note(
                    "package-version-mismatch",
                    f"{name}: metadata says {version} but {vpath} says {file_version} "
                    "(files from two installs are mixed)",
                    vpath,
                )
            )
    elif name == "torch":
        notes.append(
            Note(
                "torch-files-missing",
                f"torch metadata is in {entry} but {vpath} is not: a broken install",
                vpath,
            )
        )
    variant, how = infer_variant(
        version, version_py if name != "torchaudio" else None, meta.requires
    )
    if name != "torch" and how.startswith("torch/version.py (no"):
        variant, how = None, ""
    hip = version_py.get("hip") if version_py else None
    xpu = version_py.get("xpu") if version_py else None
    return InstalledPackage(
        name=name,
        version=version,
        location=entry,
        variant=variant,
        cuda=version_py.get("cuda") if version_py else None,
        hip=hip if name == "torch" else None,
        xpu=(xpu is not None) if (version_py and name == "torch" and "xpu" in version_py) else None,
        installer=installer,
        source=meta_path,
        variant_source=how,
    )
