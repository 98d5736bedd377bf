"""NVIDIA driver and GPUs: ``detect(host) -> (NvidiaInfo | None, [Note, ...])``.

Sources, in order (each fact records where it came from: ``NvidiaInfo.sources``, ``Gpu.source``):

1. Environment overrides (read through the host, so a replayed capture honours its own):
   ``SETUP_ENV_NVIDIA_DRIVER_VERSION`` (e.g. ``570.86.10``) and ``SETUP_ENV_CUDA_DRIVER_VERSION``
   (e.g. ``12.8``) replace the detected values (source ``env:<NAME>``);
   ``SETUP_ENV_NVIDIA_SMI`` names the nvidia-smi to run; ``SETUP_ENV_NVIDIA_SMI_TIMEOUT`` its
   timeout in seconds (default 10); ``SETUP_ENV_NO_NVML=1`` skips NVML.
2. NVML (``host.nvml()``: nvidia-ml-py on a live machine, host.json's ``"nvml"`` in a replay).
3. When NVML gave no GPUs: ONE ``nvidia-smi --query-gpu=... --format=csv,noheader,nounits``
   (with a timeout). A driver that rejects a field (``Field "compute_cap" is not a valid field to
   query.``, drivers before 510) is asked again without it. If the query itself does not run,
   ``nvidia-smi -q`` and then the plain ``nvidia-smi`` table are tried (both carry the CUDA
   version, which ``--query-gpu`` cannot report). A hung nvidia-smi is not asked again.
   Where nvidia-smi lives: ``PATH`` (``nvidia-smi``, ``nvidia-smi.exe``), WSL2's
   ``/usr/lib/wsl/lib/nvidia-smi``, Windows' ``C:\\Windows\\System32\\nvidia-smi.exe`` and
   ``C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe``.
4. ``/proc/driver/nvidia/version`` (driver version; open vs proprietary kernel module), then
   ``/sys/module/nvidia/version`` (driver version only).

A driver that is present but unusable (``Failed to initialize NVML: Driver/library version
mismatch``, ``NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver``,
``No devices were found``) is a finding: ``NvidiaInfo.error`` plus a Note, never an exception.
Garbled or truncated output, names missing from the GPU catalogue, empty or unreadable files and
a hung command become Notes. Where no source gives the compute capability (drivers before 510,
the plain table, ``-q``), it stays ``None`` and a Note says why; the planner resolves it from the
catalogue by name (``setup_env.knowledge.gpus.lookup``).

``None`` is returned (with no notes) only when nothing NVIDIA is seen at all.

Modules: ``smi_text`` (nvidia-smi's outputs parsed), ``nvml`` (the NVML snapshot), ``smi``
(running nvidia-smi and its fallbacks), ``files`` (/proc and /sys), ``gather`` (the facts
gathered, with their sources), ``assemble`` (:func:`detect`).
"""

from __future__ import annotations

from setup_env.probe.nvidia.assemble import detect
from setup_env.probe.nvidia.files import parse_proc_version, parse_sys_version
from setup_env.probe.nvidia.nvml import cuda_from_nvml
from setup_env.probe.nvidia.smi import SMI_CANDIDATES, SMI_TIMEOUT
from setup_env.probe.nvidia.smi_text import (
    MIB,
    QUERY_FIELDS,
    THROTTLE_BITS,
    failure,
    invalid_field,
    library_version,
    parse_query_csv,
    parse_smi_banner,
    parse_smi_q,
    throttle_names,
)

__all__ = [
    "MIB",
    "QUERY_FIELDS",
    "SMI_CANDIDATES",
    "SMI_TIMEOUT",
    "THROTTLE_BITS",
    "cuda_from_nvml",
    "detect",
    "failure",
    "invalid_field",
    "library_version",
    "parse_proc_version",
    "parse_query_csv",
    "parse_smi_banner",
    "parse_smi_q",
    "parse_sys_version",
    "throttle_names",
]
