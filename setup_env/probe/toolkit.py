"""CUDA toolkits installed on the machine (nvcc and friends), and cuDNN beside them.

A toolkit does NOT decide which torch wheel fits: wheels carry their own CUDA runtime. It matters
for building extensions (``CUDA_HOME``) and for explaining mismatches, so it is reported.

Where toolkits are looked for, in order: ``nvcc`` on PATH, ``CUDA_HOME``, ``CUDA_PATH``,
``/usr/local/cuda``, ``/usr/local/cuda-*``, ``/opt/cuda``, and on Windows
``C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v*``; de-duplicated by real path.
Version of a folder, first that answers: ``version.json`` (CUDA 11.1+), ``version.txt`` (older),
``dist-info/nvidia_cuda_nvcc-X.Y.Z.dist-info`` (a toolkit assembled from NVIDIA's wheels), then
``bin/nvcc --version``. cuDNN: ``cudnn_version.h`` (cuDNN 8+) or ``cudnn.h`` in the toolkit's
``include`` or the system include folders.
"""

from __future__ import annotations

import re

from setup_env._record import MutableRecord, field, mutable_record, replace
from setup_env.facts import CudaToolkit, Note
from setup_env.probe.host import Host

WINDOWS_ROOT = "C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA"
_NVCC_DIST = re.compile(r"^nvidia_cuda_nvcc(?:_cu\d+)?-(\d+\.\d+(?:\.\d+)*)\.dist-info$")
_SYSTEM_INCLUDES = (
    "/usr/include",
    "/usr/include/x86_64-linux-gnu",
    "/usr/include/aarch64-linux-gnu",
)


def parse_version_json(text: str) -> str | None:
    """``version.json`` -> the ``cuda.version`` field (``"12.4.1"``)."""
    from setup_env.bounded import InputError, parse_json

    try:
        doc = parse_json(text, "version.json")
    except InputError:
        return None
    if not isinstance(doc, dict):
        return None

    def field(key: str) -> str | None:
        part = doc.get(key)
        value = part.get("version") if isinstance(part, dict) else None
        ok = isinstance(value, str) and re.fullmatch(r"\d+\.\d+(\.\d+)*", value)
        return value if ok else None

    version = field("cuda")
    # Runfile installs stamp a date as the patch level ("11.8.20220929"): the compiler's
    # version ("11.8.89") names the release the way nvcc --version does.
    if version and re.fullmatch(r"\d+\.\d+\.\d{8}", version):
        nvcc = field("cuda_nvcc")
        if nvcc and major_minor(nvcc) == major_minor(version):
            return nvcc
        return major_minor(version)
    return version


def parse_version_txt(text: str) -> str | None:
    """``version.txt``: ``CUDA Version 10.2.89`` -> ``10.2.89``."""
    m = re.search(r"CUDA Version\s+(\d+\.\d+(?:\.\d+)*)", text)
    return m.group(1) if m else None


def parse_nvcc_version(text: str) -> str | None:
    """``nvcc --version``: ``Cuda compilation tools, release 13.0, V13.0.88`` -> ``13.0.88``."""
    m = re.search(r"release (\d+\.\d+), V(\d+\.\d+(?:\.\d+)*)", text)
    if m:
        return m.group(2)
    m = re.search(r"release (\d+\.\d+)", text)
    return m.group(1) if m else None


def parse_cudnn_header(text: str) -> str | None:
    """``#define CUDNN_MAJOR 9`` / ``CUDNN_MINOR`` / ``CUDNN_PATCHLEVEL`` -> ``9.1.0``."""
    parts = []
    for name in ("CUDNN_MAJOR", "CUDNN_MINOR", "CUDNN_PATCHLEVEL"):
        m = re.search(rf"#define\s+{name}\s+(\d+)", text)
        if not m:
            break
        parts.append(m.group(1))
    return ".".join(parts) if len(parts) >= 2 else None


def major_minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


@mutable_record
class _Found(MutableRecord):
    """A CUDA toolkit folder and how it was found."""

    path: str
    found_by: list[str] = field(default_factory=list)


def _join(root: str, *parts: str) -> str:
    sep = "\\" if "\\" in root and "/" not in root else "/"
    return sep.join([root.rstrip("/\\"), *parts])


def _folder_version(host: Host, root: str) -> tuple[str | None, str]:
    text = host.read_text(_join(root, "version.json"))
    if text is not None:
        version = parse_version_json(text)
        if version:
            return version, _join(root, "version.json")
    text = host.read_text(_join(root, "version.txt"))
    if text is not None:
        version = parse_version_txt(text)
        if version:
            return version, _join(root, "version.txt")
    dist = _join(root, "dist-info")
    for name in host.listdir(dist) or ():
        m = _NVCC_DIST.match(name)
        if m:
            version = m.group(1)
            meta = host.read_text(_join(dist, name, "METADATA"))
            if meta:
                vm = re.search(r"^Version:\s*(\S+)", meta, re.MULTILINE)
                if vm and re.fullmatch(r"\d+(\.\d+)+", vm.group(1)):
                    version = vm.group(1)
            return version, _join(dist, name)
    return None, ""


def _cudnn(host: Host, root: str | None) -> str | None:
    dirs = ([_join(root, "include")] if root else []) + list(_SYSTEM_INCLUDES)
    for folder in dirs:
        for header in ("cudnn_version.h", "cudnn.h"):
            text = host.read_text(_join(folder, header))
            if text:
                version = parse_cudnn_header(text)
                if version:
                    return version
    return None


def detect(host: Host) -> tuple[list[CudaToolkit], list[Note]]:
    notes: list[Note] = []
    candidates: dict[str, _Found] = {}  # real path -> how it was found

    def add(path: str, how: str) -> None:
        real = host.realpath(path)
        candidates.setdefault(real, _Found(real)).found_by.append(how)

    nvcc = host.which("nvcc")
    nvcc_root = None
    if nvcc:
        real_nvcc = host.realpath(nvcc)
        m = re.match(r"^(.*)[/\\]bin[/\\]nvcc(?:\.exe)?$", real_nvcc, re.IGNORECASE)
        if m and _folder_version(host, m.group(1))[0]:
            nvcc_root = host.realpath(m.group(1))
            add(m.group(1), "nvcc on PATH")
    for var in ("CUDA_HOME", "CUDA_PATH"):
        value = host.env(var)
        if not value:
            continue
        if host.exists(value):
            add(value, f"env:{var}")
        else:
            notes.append(
                Note(
                    "cuda-home-missing",
                    f"{var}={value} names a folder that does not exist",
                    f"env:{var}",
                )
            )
    system = str(host.interpreter().get("system") or "").lower()
    if system == "windows":
        for name in host.listdir(WINDOWS_ROOT) or ():
            if re.fullmatch(r"v\d+\.\d+", name):
                add(f"{WINDOWS_ROOT}\\{name}", WINDOWS_ROOT)
    else:
        if host.exists("/usr/local/cuda"):
            add("/usr/local/cuda", "/usr/local/cuda")
        for name in host.listdir("/usr/local") or ():
            if re.fullmatch(r"cuda-\d+(\.\d+)*", name):
                add(f"/usr/local/{name}", "/usr/local/cuda-*")
        if host.exists("/opt/cuda"):
            add("/opt/cuda", "/opt/cuda")

    toolkits: list[CudaToolkit] = []
    for real, found in candidates.items():
        version, source = _folder_version(host, real)
        nvcc_path = _join(real, "bin", "nvcc")
        has_nvcc = host.exists(nvcc_path) or host.exists(nvcc_path + ".exe")
        if version is None and has_nvcc:
            result = host.run((nvcc_path, "--version"), timeout=5.0)
            version = parse_nvcc_version(result.stdout) if result.ok else None
            source = f"{nvcc_path} --version"
        if version is None:
            notes.append(
                Note(
                    "cuda-toolkit-unversioned",
                    f"{real} looks like a CUDA toolkit but its version could not be read",
                    real,
                    "info",
                )
            )
            continue
        on_path = nvcc if (nvcc and real == nvcc_root) else None
        toolkits.append(
            CudaToolkit(
                version=major_minor(version),
                full_version=version if version.count(".") >= 2 else None,
                path=real,
                nvcc=on_path or (nvcc_path if has_nvcc else None),
                cudnn_version=_cudnn(host, real),
                source=source,
                found_by=tuple(found.found_by),
            )
        )

    if nvcc and nvcc_root is None:
        # A small wrapper script that execs one known toolkit's nvcc names it: no need to run.
        target = _wrapped_nvcc(host, nvcc, toolkits)
        if target is not None:
            i = toolkits.index(target)
            toolkits[i] = _with(target, nvcc=nvcc, found_by=("nvcc on PATH", *target.found_by))
            toolkits.insert(0, toolkits.pop(i))
            return toolkits, notes
        # nvcc on PATH is a stray binary or an opaque wrapper: ask it, then match by version.
        result = host.run((nvcc, "--version"), timeout=5.0)
        version = parse_nvcc_version(result.stdout) if result.ok else None
        if version is None:
            notes.append(Note("nvcc-failed", result.describe(), "nvcc"))
        else:
            for i, tk in enumerate(toolkits):
                if tk.full_version == version or (
                    tk.full_version is None and tk.version == major_minor(version)
                ):
                    toolkits[i] = _with(tk, nvcc=nvcc, found_by=("nvcc on PATH", *tk.found_by))
                    toolkits.insert(0, toolkits.pop(i))
                    break
            else:
                toolkits.insert(
                    0,
                    CudaToolkit(
                        version=major_minor(version),
                        full_version=version if version.count(".") >= 2 else None,
                        nvcc=nvcc,
                        cudnn_version=_cudnn(host, None),
                        source="nvcc --version",
                        found_by=("nvcc on PATH",),
                    ),
                )
    return toolkits, notes


def _wrapped_nvcc(host: Host, nvcc: str, toolkits: list[CudaToolkit]) -> CudaToolkit | None:
    """The toolkit whose ``bin/nvcc`` a ``#!`` wrapper script on PATH execs, if exactly one.

    This machine's ``/usr/local/bin/nvcc`` is ``#!/bin/sh`` + ``exec /usr/local/cuda-13.0/bin/nvcc
    "$@"``.
    """
    read = host.read(nvcc, max_bytes=4096)
    if read.text is None or not read.text.startswith("#!"):
        return None
    named = [
        tk
        for tk in toolkits
        if tk.path and re.search(re.escape(_join(tk.path, "bin", "nvcc")) + r"\b", read.text)
    ]
    return named[0] if len(named) == 1 else None


def _with(tk: CudaToolkit, **changes: object) -> CudaToolkit:
    return replace(tk, **changes)
