"""Read the text ``python -m torch.utils.collect_env`` prints (what people paste into bug reports)
into :class:`~setup_env.facts.Facts`.

Pure: text in, facts out; nothing here touches the machine. Tolerates what real pastes look like:
markdown fences and ``<details>`` around the block, ``> `` quoting, shell prompts and warnings
before it, e-mail line wrapping, truncation, and every collect_env generation since PyTorch 1.3
(``Is debug build: No``, ``Mac OSX 11.0``, the multi-line GPU block with MIG devices, Windows
``wmic``/PowerShell CPU blocks, ROCm and XPU lines). An example of the input it expects::

    PyTorch version: 2.13.0+cpu
    CUDA used to build PyTorch: Could not collect
    OS: Debian GNU/Linux 12 (bookworm) (x86_64)
    Libc version: glibc-2.36
    Python version: 3.11.7 (main, May  9 2026, 07:35:25) [GCC 12.2.0] (64-bit runtime)
    Is CUDA available: False
    CUDA runtime version: 13.0.88
    GPU models and configuration: GPU 0: NVIDIA GeForce RTX 3090
    Nvidia driver version: 550.54.15
    [pip3] torch==2.13.0+cpu

Two of collect_env's labels mislead and are read for what they are: "CUDA runtime version" is
``nvcc --version`` (a toolkit, not torch's runtime) and "cuDNN version" lists system libcudnn
files (not the cuDNN torch loads).

Modules: ``normalise`` (the bytes' encoding, control characters, quoting), ``layout`` (the line
reader: collect_env's and vLLM's layouts, :func:`parse`), ``messages`` (torch's own messages),
``fields`` (the field mapping into facts), ``build`` (the facts and the :class:`Report`),
``infer`` (what the report implies, and what it leaves open assumed and said: the facts diagnose
plans from, ``Report.planning``, each with its :class:`Evidence`), ``model`` (:class:`Report`,
:class:`CollectEnvError`).
"""

from __future__ import annotations

from setup_env.probe.report.layout import KEYS, parse
from setup_env.probe.report.messages import TorchMessage, read_messages
from setup_env.probe.report.model import SOURCE, WARNING_SOURCE, CollectEnvError, Report
from setup_env.probe.report.normalise import decode

__all__ = [
    "KEYS",
    "SOURCE",
    "WARNING_SOURCE",
    "CollectEnvError",
    "Report",
    "TorchMessage",
    "decode",
    "parse",
    "read_messages",
]
