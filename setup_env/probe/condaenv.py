"""The conda or pixi environment: is this Python a conda/pixi environment's own, did the shell
activate one, and which CUDA libraries and PyTorch builds did conda put in it.

Order (first found): the interpreter's ``prefix`` holding ``conda-meta/`` (conda, mamba, micromamba
and pixi all write one record per installed package there); else the environment the shell
activated (``CONDA_PREFIX``). pixi is told apart by its own variables (``PIXI_ENVIRONMENT_NAME``,
``PIXI_PROJECT_ROOT``, set by ``pixi shell`` / ``pixi run``) or by the ``.pixi/envs/`` folder its
environments live in. The name: ``CONDA_DEFAULT_ENV`` / ``PIXI_ENVIRONMENT_NAME``.

Records are read only for the names that matter (CUDA libraries, ``cuda-version``,
``cudatoolkit``, PyTorch's packages), chosen by file name (``<name>-<version>-<build>.json``)
before anything is read: a record lists every file of its package and can be megabytes. A record
looks like this (pixi, conda-forge; tests/fixtures/conda-meta)::

    {"build": "h4f385c5_3", "name": "cuda-version", "version": "12.9",
     "channel": "https://conda.anaconda.org/conda-forge/", "files": [], ...}
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from setup_env.bounded import InputError, parse_json
from setup_env.facts import CondaEnvInfo, CondaPackage, Note
from setup_env.probe.host import Host

# conda package names of CUDA's libraries as conda-forge and NVIDIA's channel split them
# (cuda-cudart, cuda-nvrtc, libcublas, libcudnn, libnccl ...), the cuda-version pin, the old
# bundled cudatoolkit, and cuDNN/NCCL under their older names.
_CUDA_NAME = re.compile(
    r"^(cuda-[a-z0-9-]+|libcu[a-z0-9-]+|libnv[a-z0-9-]+|libnccl|nccl|cudnn|cudatoolkit|"
    r"cutensor|libcutensor)$"
)
_TORCH_NAME = re.compile(r"^(pytorch|pytorch-gpu|pytorch-cpu|pytorch-cuda|libtorch|torchvision)$")
_SUBDIRS = re.compile(r"^(noarch|(linux|osx|win|emscripten|wasi|zos)-[a-z0-9_]+)$")
MAX_RECORD = 512 << 10  # a CUDA library's record is a few KiB to ~100 KiB
MAX_RECORDS = 400


def split_record_name(filename: str) -> Optional[tuple[str, str, str]]:
    """(name, version, build) of ``conda-meta/<name>-<version>-<build>.json``; None otherwise
    (``history``, anything else)."""
    if not filename.endswith(".json"):
        return None
    parts = filename[: -len(".json")].rsplit("-", 2)
    if len(parts) != 3 or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def channel_name(url: str) -> str:
    """A record's channel as people write it: ``https://conda.anaconda.org/conda-forge/linux-64``
    -> ``conda-forge``; ``https://repo.anaconda.com/pkgs/main/linux-64`` -> ``pkgs/main``; a bare
    name stays as it is."""
    parts = [p for p in url.strip().rstrip("/").split("/") if p]
    if "://" in url:
        parts = parts[2:]  # scheme and host
    if parts and _SUBDIRS.match(parts[-1]):
        parts = parts[:-1]
    if len(parts) >= 2 and parts[-2] == "pkgs":
        return "/".join(parts[-2:])
    return parts[-1] if parts else ""


def parse_record(text: str, fallback: tuple[str, str, str]) -> CondaPackage:
    """One conda-meta record; what the file name says where the JSON is unreadable."""
    name, version, build = fallback
    channel = ""
    try:
        doc = parse_json(text, "a conda-meta record", max_bytes=MAX_RECORD)
    except InputError:
        doc = None
    if isinstance(doc, dict):
        name = str(doc.get("name") or name)
        version = str(doc.get("version") or version)
        build = str(doc.get("build") or build)
        raw = doc.get("channel") or doc.get("url") or ""
        if isinstance(raw, str):
            if raw.endswith((".conda", ".tar.bz2")):  # a package URL: its folder is the channel
                raw = raw.rsplit("/", 1)[0]
            channel = channel_name(raw)
    return CondaPackage(name=name, version=version, build=build, channel=channel)


def _join(prefix: str, *names: str) -> str:
    sep = "\\" if "\\" in prefix and "/" not in prefix else "/"
    return sep.join([prefix.rstrip("/\\"), *names])


def _same(host: Host, a: str, b: str) -> bool:
    return a == b or host.realpath(a) == host.realpath(b)


def detect(host: Host) -> tuple[Optional[CondaEnvInfo], list[Note]]:
    notes: list[Note] = []
    sources: dict[str, str] = {}
    interp = host.interpreter()
    own = interp.get("prefix") if isinstance(interp.get("prefix"), str) else None
    active_prefix = host.env("CONDA_PREFIX") or None
    pixi_name = host.env("PIXI_ENVIRONMENT_NAME") or None
    pixi_root = host.env("PIXI_PROJECT_ROOT") or None

    prefix: Optional[str] = None
    listing: Optional[tuple[str, ...]] = None
    inside: Optional[bool] = None
    if own:
        listing = host.listdir(_join(own, "conda-meta"))
        if listing is not None:
            prefix, inside = own, True
            sources["prefix"] = "interpreter prefix (conda-meta/)"
    if prefix is None and active_prefix:
        prefix = active_prefix
        inside = False if own else None
        sources["prefix"] = "env:CONDA_PREFIX"
        listing = host.listdir(_join(active_prefix, "conda-meta"))
    if prefix is None:
        return None, notes

    active = bool(active_prefix and _same(host, active_prefix, prefix))
    if active:
        sources["active"] = "env:CONDA_PREFIX"
    pixi = bool(pixi_name or pixi_root) or "/.pixi/envs/" in prefix.replace("\\", "/")
    manager: Literal["conda", "pixi"] = "pixi" if pixi else "conda"
    sources["manager"] = (
        "env:PIXI_ENVIRONMENT_NAME/PIXI_PROJECT_ROOT" if (pixi_name or pixi_root) else "prefix"
    )
    name = pixi_name if pixi else None
    if name is None and active:
        name = host.env("CONDA_DEFAULT_ENV") or None
        if name:
            sources["name"] = "env:CONDA_DEFAULT_ENV"
    elif name:
        sources["name"] = "env:PIXI_ENVIRONMENT_NAME"
    if inside is False:
        notes.append(
            Note(
                "conda-env-not-this-python",
                f"the shell activated the conda environment {active_prefix}, but this Python "
                f"({interp.get('executable') or own}) is not its own: packages go where this "
                "Python installs them",
                "env:CONDA_PREFIX",
                "info",
            )
        )

    cuda: list[CondaPackage] = []
    torch: list[CondaPackage] = []
    if listing is None:
        notes.append(
            Note(
                "conda-meta-unreadable",
                f"{_join(prefix, 'conda-meta')} could not be listed: the environment's conda "
                "packages are unknown",
                "conda-meta",
                "info",
            )
        )
    else:
        sources["packages"] = _join(prefix, "conda-meta")
        wanted = []
        for filename in sorted(listing):
            parts = split_record_name(filename)
            if parts is None:
                continue
            if _CUDA_NAME.match(parts[0]) or _TORCH_NAME.match(parts[0]):
                wanted.append((filename, parts))
        for filename, parts in wanted[:MAX_RECORDS]:
            read = host.read(_join(prefix, "conda-meta", filename), MAX_RECORD)
            pkg = parse_record(read.text or "", parts)
            (torch if _TORCH_NAME.match(pkg.name) else cuda).append(pkg)
    info = CondaEnvInfo(
        manager=manager,
        prefix=prefix,
        name=name,
        active=active,
        interpreter_inside=inside,
        project=pixi_root if pixi else None,
        cuda_packages=tuple(cuda),
        torch_packages=tuple(torch),
        sources=sources,
    )
    return info, notes
