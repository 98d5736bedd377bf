"""`setup-env detect`: describe this machine, or a captured one (``--root DIR``).

Exit codes: 0 the machine was examined (findings are in the notes); 3 it could not be examined at
all (``--root`` is not a captured machine); 2 usage errors (argparse).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.facts import Facts, Gpu
    from setup_env.output.render import Style

TOOLKIT_SENTENCE = (
    "A CUDA toolkit does not decide which PyTorch wheel to install: the wheels carry their own "
    "CUDA runtime, and only the NVIDIA driver must be new enough. The toolkit matters for "
    "compiling CUDA extensions."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog

    epilog(
        parser,
        "0 the machine was examined (findings are in the notes); 2 bad options;\n"
        "3 it could not be examined (--root is not a captured machine).",
        "  setup-env detect --json > facts.json\n"
        "  setup-env detect --root tests/fixtures/hosts/ubuntu2404-cpu-only   # from a checkout",
    )
    parser.add_argument(
        "--root",
        metavar="DIR",
        help="replay a machine captured by `setup-env capture DIR` instead of this one",
    )
    parser.add_argument(
        "--cloud-metadata",
        dest="cloud_metadata",
        action="store_true",
        default=None,
        help="ask the cloud metadata service even without a hint that this is a cloud machine",
    )
    parser.add_argument(
        "--no-cloud-metadata",
        dest="cloud_metadata",
        action="store_false",
        help="never ask the cloud metadata service",
    )


def run(args: argparse.Namespace) -> int:
    from setup_env.commands._source import SourceError, open_host
    from setup_env.output import render
    from setup_env.probe.detect import detect

    try:
        host = open_host(args.root)
    except SourceError as exc:
        return render.fail("detect", "unexaminable", str(exc), ExitCode.UNEXAMINABLE, args.json)
    facts = detect(host, cloud_metadata=args.cloud_metadata)
    if args.json:
        print(render.dumps(render.envelope("facts", facts)))
    else:
        style = render.Style(render.use_color(sys.stdout, args.color))
        print(summary(facts, style, verbose=args.verbose, label=host.label))
    return int(ExitCode.OK)


# --- the readable summary (pure: facts in, text out) -----------------------------------------


def summary(facts: Facts, style: Style, verbose: int = 0, label: str = "live") -> str:
    from setup_env.output.render import human_bytes, table

    lines: list[str] = []

    def head(title: str) -> None:
        if lines:
            lines.append("")
        lines.append(style(title, "bold"))

    def row(name: str, text: str, sources: dict[str, str] | None = None) -> None:
        lines.append(f"  {name:<10}{text}")
        if verbose and sources:
            for line in _source_lines(sources):
                lines.append(style(f"  {'':<10}{line}", "dim"))

    head("Machine" + ("" if label == "live" else f" ({label})"))
    o = facts.os
    parts = [o.distro_name or o.family]
    if o.family == "darwin" and o.macos_version:
        parts = [f"macOS {o.macos_version}"]
    if o.family == "windows" and o.windows_build:
        parts = [f"Windows {o.windows_build}"]
    if o.kernel:
        parts.append(f"kernel {o.kernel}")
    if o.glibc:
        parts.append(f"glibc {o.glibc}")
    elif o.libc:
        parts.append(o.libc)
    if o.wsl:
        parts.append(f"WSL{o.wsl}")
    if o.container:
        parts.append(f"{o.container} container")
    if o.virtualization:
        parts.append(f"VM: {o.virtualization}")
    row("OS", ", ".join(parts), dict(o.sources))

    p = facts.python
    py = f"{p.version or '?'} ({p.implementation}, {p.machine or '?'}"
    py += ", free-threaded" if p.free_threaded else ""
    py += ", 32-bit" if not p.is_64bit else ""
    py += ", under Rosetta 2)" if p.rosetta else ")"
    if p.executable:
        py += f"  {p.executable}"
    row("Python", py, dict(p.sources))
    if verbose and p.tags:
        lines.append(style(f"  {'':<10}wheel tags: {p.tags[0]} … {p.tags[-1]}", "dim"))
    ce = facts.conda_env
    if ce is not None:
        text = f"{ce.manager} environment {ce.name or ''}".rstrip() + f" ({ce.prefix or '?'}"
        text += ", activated" if ce.active else ", not activated"
        if ce.interpreter_inside is False:
            text += ", not this Python's"
        text += ")"
        conda_pkgs = [*ce.torch_packages, *ce.cuda_packages]
        if conda_pkgs:
            shown = ", ".join(f"{c.name} {c.version}" for c in conda_pkgs[:4])
            more = len(conda_pkgs) - 4
            text += f"; from conda: {shown}" + (f" (+{more})" if more > 0 else "")
        row("Env", text, dict(ce.sources))

    c = facts.cpu
    cpu = c.model or "unknown CPU"
    if c.physical_cores or c.logical_cores:
        n = c.physical_cores
        cores = f"{n or '?'} core" + ("" if n == 1 else "s")
        if c.logical_cores and c.logical_cores != c.physical_cores:
            cores += f", {c.logical_cores} threads"
        cpu += f", {cores}"
    if c.isa_level:
        cpu += f", {c.isa_level}"
    row("CPU", cpu)
    mem = f"{human_bytes(c.ram_bytes)} RAM" if c.ram_bytes else "RAM unknown"
    if c.disk_free_bytes is not None:
        mem += f", {human_bytes(c.disk_free_bytes)} free at {c.disk_path}"
    row("Memory", mem, dict(c.sources))

    head("GPUs")
    nv = facts.nvidia
    j = facts.jetson
    if j is not None:
        # A Jetson: the GPU driver is part of L4T (setup_env.probe.jetson).
        text = (
            f"Jetson {j.model or j.module or '?'}: L4T {j.l4t or '?'}, JetPack {j.jetpack or '?'}"
        )
        text += f", CUDA {j.cuda or '?'} (the GPU driver comes with L4T)"
        lines.append(f"  {text}")
        if verbose and j.sources:
            lines.append(style("  from " + _sources(j.sources), "dim"))
    if nv is not None and not (j is not None and nv.driver_version is None):
        driver = f"NVIDIA driver {nv.driver_version or '?'}"
        if nv.cuda_driver_version:
            driver += f"    CUDA (driver supports up to) {nv.cuda_driver_version}"
        if nv.kernel_module:
            driver += f"    {nv.kernel_module} kernel module"
        lines.append(f"  {driver}")
    if nv is not None:
        if nv.error:
            lines.append("  " + style.severity("error", f"driver unusable: {nv.error}"))
        if verbose and nv.sources:
            lines.append(style("  from " + _sources(nv.sources), "dim"))
    if facts.rocm is not None:
        r = facts.rocm
        text = f"ROCm {r.version or 'not installed'}"
        if r.driver_version:
            text += f"    amdgpu driver {r.driver_version}"
        lines.append(f"  {text}")
        if verbose and r.sources:
            lines.append(style("  from " + _sources(r.sources), "dim"))
    if facts.xpu is not None and facts.xpu.kernel_driver:
        lines.append(f"  Intel GPU kernel driver {facts.xpu.kernel_driver}")
    gpus = facts.gpus
    if gpus:
        rows = [_gpu_row(g) for g in gpus]
        # Drop the columns no GPU fills (MIG and persistence mean nothing to AMD or Intel).
        keep = [i for i in range(len(_GPU_HEADERS)) if i < 5 or any(r[i] != "" for r in rows)]
        headers = [_GPU_HEADERS[i] for i in keep]
        lines.append(_indent(table(headers, [[r[i] for i in keep] for r in rows])))
    if facts.apple is not None:
        a = facts.apple
        text = a.chip or "Apple Silicon"
        if a.gpu_cores:
            text += f", {a.gpu_cores} GPU cores"
        if a.mps_eligible and p.rosetta:
            text += ", MPS-capable hardware (not usable from this x86_64 Python)"
        else:
            text += ", MPS eligible" if a.mps_eligible else ", MPS not available"
        lines.append(f"  {text}")
        if verbose and a.sources:
            lines.append(style("  from " + _sources(a.sources), "dim"))
    if not gpus and facts.apple is None:
        none = "No GPU found"
        if nv is None:
            none += " (no NVIDIA driver"
            none += ", no AMD or Intel GPU)" if facts.rocm is None and facts.xpu is None else ")"
        lines.append(f"  {none}")

    head("CUDA toolkits")
    if facts.toolkits:
        for tk in facts.toolkits:
            text = f"{tk.full_version or tk.version}"
            text += f" at {tk.path}" if tk.path else ""
            if tk.nvcc:
                text += f"  (nvcc: {tk.nvcc})"
            if tk.cudnn_version:
                text += f"  cuDNN {tk.cudnn_version}"
            lines.append(f"  {text}")
            if verbose:
                how = ", ".join(tk.found_by)
                lines.append(style(f"    version from {tk.source}; found via {how}", "dim"))
        lines.extend(_wrap(TOOLKIT_SENTENCE, style))
    else:
        lines.append("  none (not needed to install PyTorch: wheels carry their own CUDA runtime)")

    head("Installed PyTorch")
    if facts.packages:
        for pkg in facts.packages:
            text = f"{pkg.name} {pkg.version}"
            extra = [str(x) for x in (pkg.variant, pkg.installer) if x]
            if extra:
                text += f" ({', '.join(extra)})"
            if pkg.shadowed:
                text += "  " + style.severity("warning", "shadowed")
            lines.append(f"  {text}")
            if verbose:
                lines.append(style(f"    {pkg.location}; variant from {pkg.variant_source}", "dim"))
    else:
        lines.append("  no torch, torchvision or torchaudio on this Python's sys.path")

    if facts.environment and verbose:
        head("Environment")
        for name, value in facts.environment.items():
            lines.append(f"  {name}={value}")

    if facts.notes:
        head("Notes")
        for note in facts.notes:
            tag = style.severity(note.severity, f"{note.severity:<7}")
            lines.append(f"  {tag} {note.message}")
            if verbose and note.source:
                lines.append(style(f"          ({note.code}; {note.source})", "dim"))
    return "\n".join(lines)


_GPU_HEADERS = ("GPU", "Name", "Arch", "Memory", "Bus-Id", "MIG", "Persistence")


def _gpu_row(g: Gpu) -> tuple[object, ...]:
    from setup_env.output.render import human_bytes as hb

    arch = f"sm {g.compute_capability}" if g.compute_capability else (g.gfx_arch or "")
    mig = "" if g.mig_mode is None else ("on" if g.mig_mode else "off")
    persist = "" if g.persistence_mode is None else ("on" if g.persistence_mode else "off")
    memory = hb(g.memory_bytes) if g.memory_bytes else ""
    return (g.index, g.name, arch, memory, g.pci_bus_id or "", mig, persist)


def _sources(sources: Mapping[str, str]) -> str:
    return "; ".join(_source_lines(sources))


def _source_lines(sources: Mapping[str, str]) -> list[str]:
    """{field: source} -> one "source: field, field" line per source, in first-seen order."""
    grouped: dict[str, list[str]] = {}
    for name, where in sources.items():
        grouped.setdefault(where, []).append(name)
    return [f"{where}: {', '.join(names)}" for where, names in grouped.items()]


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _wrap(text: str, style: Style) -> list[str]:
    import textwrap

    return [style("  " + line, "dim") for line in textwrap.wrap(text, 96)]
