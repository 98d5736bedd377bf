"""One renderer for ``setup-env matrix``'s results (``show``, ``arches``, ``refresh``): text for a
terminal, and the JSON envelope. Pure string building; the command prints the strings.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from setup_env.decide.matrix_report import SHORT, select, variant_rows
from setup_env.knowledge.live import release_key
from setup_env.knowledge.variant import Variant

if TYPE_CHECKING:
    from setup_env.knowledge.refresh import RefreshResult
    from setup_env.output.render import Style


def json_doc(action: str, payload: Any) -> str:
    """The versioned envelope: {"schema": "setup-env/matrix", ..., "matrix": {action: payload}}."""
    from setup_env.output import render

    return render.dumps(render.envelope("matrix", {action: payload}))


def refresh_text(result: RefreshResult) -> str:
    """Drift, then every row removed, every page that failed or answered incompletely and what
    was kept for it, then the one-line verdict."""
    return "\n".join(
        [
            *(f"  drift: {c}" for c in result.drift),
            *(f"  removed: {c}" for c in result.removed),
            *(f"  failed: {c}" for c in result.failed),
            *(f"  incomplete: {c}" for c in result.incomplete),
            *(f"  kept: {c}" for c in result.kept),
            result.message,
        ]
    )


def arches_text(payload: dict[str, Any], style: Style, verbose: int = 0) -> str:
    from setup_env.output import render

    out: list[str] = []
    rows = []
    for f in payload["files"]:
        if not f["fatbins"] and not verbose and len(payload["files"]) > 8:
            continue  # a wheel's many CPU-only libraries: counted in the summary, listed with -v
        rows.append(
            (
                f["name"],
                render.human_bytes(f["size"]) if f["size"] else "",
                f["fatbins"],
                " ".join(f["sass"]) or "-",
                " ".join(f["ptx"]) or "-",
            )
        )
    if rows:
        out.append(render.table(("file", "size", "fatbins", "SASS", "PTX"), rows))
    s = payload["summary"]
    out.append("")
    if not s["fatbins"]:
        out.append(
            f"No CUDA fat binaries in {s['files']} file(s): no GPU code "
            "(a CPU-only build, or not a CUDA library)."
        )
        return "\n".join(out)
    out.append(
        style("Summary", "bold")
        + f": {s['fatbins']} fat binaries in {s['files_with_fatbins']} of {s['files']} file(s)"
    )
    out.append(f"  SASS in every fat binary: {' '.join(s['sass_in_every_fatbin']) or '(none)'}")
    if s["sass_stray"]:
        stray = ", ".join(
            f"{a} ({n} of {s['fatbins_with_sass']})" for a, n in s["sass_stray"].items()
        )
        out.append(f"  SASS in some only:        {stray}")
    if s["ptx"]:
        out.append(f"  PTX (JIT for newer GPUs): {' '.join(s['ptx'])}")
    else:
        out.append("  PTX: none (GPUs newer than the newest SASS arch are not served)")
    return "\n".join(out)


_TINY = {
    "linux_x86_64": "linux",
    "linux_aarch64": "aarch64",
    "windows_x86_64": "win",
    "macos_arm64": "mac",
    "macos_x86_64": "mac-x86",
}


def _python_range(python: tuple[str, ...]) -> str:
    plain = [p for p in python if not p.endswith("t")]
    free = [p for p in python if p.endswith("t")]
    text = f"{plain[0]}-{plain[-1]}" if len(plain) > 1 else "".join(plain)
    return text + (f" +{' '.join(free)}" if free else "")


def _companion_text(c: Any) -> str:
    if c is None:
        return "-"
    if c.version is not None:
        return str(c.version)
    return c.spec[2:] if c.spec else "-"


def _driver_text(m: Any, build: Any, os_family: str) -> str:
    row = m.cuda_version(build.cuda)
    if row is None:
        return "?"
    floor = row.mvc.for_os(os_family)[1]
    full_row = row.toolkit_minimum(build.toolkit)
    full = full_row.for_os(os_family)[1]
    unsure = "?" if os_family == "windows" and full_row.windows_confidence == "?" else ""
    return (f">={floor}" if floor == full else f">={floor} (full {full})") + unsure


def _origin_text(m: Any) -> str:
    words: dict[str, str] = {
        "bundled": "bundled with setup-env",
        "user": "refreshed copy",
        "env": "from $SETUP_ENV_MATRIX",
        "explicit": "--file",
    }
    return words.get(str(m.origin), str(m.origin))


def show_text(
    m: Any, torch: str | None, variant: str | None, style: Style, verbose: int = 0
) -> str:
    from setup_env.output import render

    out: list[str] = []
    out.append(
        style("Wheel matrix", "bold") + f": {m.path} ({_origin_text(m)}, retrieved {m.retrieved})"
    )
    if verbose:
        out.append(f"source: {m.source}")
    releases = select(m, torch, variant)
    if torch is not None:
        for rel in releases:
            out.append("")
            out += _release_lines(m, rel, variant, style, verbose)
        out += _legend(style)
        return "\n".join(out)
    if variant is not None:
        out.append("")
        rows = [
            (str(rel.version) if i == 0 else "", *_row_cells(m, row))
            for rel in releases
            for i, row in enumerate(variant_rows(m, rel, Variant.parse(variant)))
        ]
        out.append(render.table(("torch", "platforms", "CUDA", "SASS", "PTX", *_DRIVER_HEAD), rows))
        out += _legend(style)
        return "\n".join(out)
    out.append("")
    rows = []
    for rel in releases:
        by_variant: dict[Variant, list[str]] = {}
        for plat, pvar in rel.pypi_variant.items():
            by_variant.setdefault(pvar.variant, []).append(_TINY.get(plat, plat))
        pv = " · ".join(f"{v}: {' '.join(ps)}" for v, ps in by_variant.items())
        idx = " ".join(
            str(v) + ("" if any(a.verified for a in rel.index[v].values()) else "?")
            for v in sorted(rel.index)
        )
        comp = rel.companions
        rows.append(
            (
                str(rel.version),
                rel.uploaded,
                _python_range(rel.python),
                pv or "-",
                idx or "-",
                f"{_companion_text(comp.get('torchvision'))} / "
                f"{_companion_text(comp.get('torchaudio'))}",
            )
        )
    heads = ("torch", "uploaded", "Python", "PyPI (plain pip) builds", "PyTorch index",
             "vision / audio")  # fmt: skip
    out.append(render.table(heads, rows))
    if verbose:
        out.append("")
        out.append(style("Minimum NVIDIA driver per CUDA version", "bold"))
        drows = []
        for xy, c in sorted(m.cuda.items(), key=lambda kv: release_key(kv[0])):
            newest = c.updates[max(c.updates, key=lambda u: release_key(u))]
            drows.append(
                (
                    xy,
                    c.mvc.for_os("linux")[1],
                    newest.for_os("linux")[1],
                    c.mvc.for_os("windows")[1],
                    newest.for_os("windows")[1] + ("?" if newest.windows_confidence == "?" else ""),
                )
            )
        dheads = ("CUDA", "Linux floor", "Linux full", "Windows floor", "Windows full")
        out.append(render.table(dheads, drows))
        if m.nightly:
            out.append("")
            out.append(style("Nightly (unverified, changes daily)", "bold"))
            for plat, vs in m.nightly.items():
                out.append(f"  {SHORT.get(plat, plat)}: {' '.join(str(v) for v in vs)}")
    out.append("")
    out.append(
        style(
            "? = listed by a secondary source only, never recommended. Per release (arches, "
            f"drivers): --torch {m.newest.series}; per variant: --variant cu126"
            + ("" if verbose else "; driver table and nightly: -v"),
            "dim",
        )
    )
    return "\n".join(out)


_DRIVER_HEAD = ("Linux driver", "Windows driver")


def _row_cells(m: Any, row: dict[str, Any]) -> tuple[str, ...]:
    plats = " ".join(
        SHORT.get(p, p) + ("" if a["verified"] else "?") for p, a in row["platforms"].items()
    )
    b = row.get("_build")
    if b is None:
        gpu = "-" if not Variant.parse(row["variant"]).is_cuda else "(no arch data)"
        return (plats, "-", gpu, "-", "-", "-")
    return (
        plats,
        str(b.toolkit),
        " ".join(row["sass"]) or "-",
        " ".join(row["ptx"]) or "-",
        _driver_text(m, b, "linux")
        if any(p.startswith("linux") for p in row["platforms"])
        else "-",
        _driver_text(m, b, "windows") if "windows_x86_64" in row["platforms"] else "-",
    )


def _release_lines(m: Any, rel: Any, variant: str | None, style: Style, verbose: int) -> list[str]:
    from setup_env.output import render

    out: list[str] = []
    out.append(
        style(f"torch {rel.version}", "bold")
        + f"  uploaded {rel.uploaded or '?'}; Requires-Python {rel.requires_python or '(any)'}; "
        f"Python {' '.join(rel.python)}"
    )
    pv = ", ".join(f"{SHORT.get(p, p)} {v.variant}" for p, v in rel.pypi_variant.items())
    out.append(f"  plain `pip install torch` (PyPI): {pv or '(not recorded)'}")
    floors = [f"{SHORT.get(p, p)} glibc >= {v}" for p, v in rel.min_glibc.items()]
    floors += [f"{SHORT.get(p, p)} macOS >= {v}" for p, v in rel.min_macos.items()]
    if floors:
        out.append(f"  needs: {', '.join(floors)}")
    for t in rel.traps:
        out.append(style(f"  trap: {t.platform_tag} wheels need glibc >= {t.min_glibc}", "yellow")
              + (f" ({t.note})" if t.note else ""))  # fmt: skip
    comps = []
    for name in ("torchvision", "torchaudio"):
        c = rel.companions.get(name)
        if c is None or (c.version is None and c.spec is None):
            comps.append(f"{name} not recorded")
        else:
            pin = c.spec or f"=={c.version}"
            comps.append(f"{name}{pin}" + (" (inferred)" if c.confidence == "I" else ""))
    out.append(f"  companions: {', '.join(comps)}")
    if verbose:
        for name, c in rel.companions.items():
            out.append(style(f"    {name}: [{c.confidence}] {c.source}", "dim"))
    variants = [Variant.parse(variant)] if variant else sorted(rel.index)
    rows, sources = [], []
    for v in variants:
        for row in variant_rows(m, rel, v):
            rows.append((str(v), *_row_cells(m, row)))
            if row["build_source"]:
                sources.append(f"{v} {' '.join(row['platforms'])}: {row['build_source']}")
    out.append("  " + render.table(("variant", "platforms", "CUDA", "SASS", "PTX", *_DRIVER_HEAD),
                              rows).replace("\n", "\n  "))  # fmt: skip
    if verbose:
        out.append(style(f"  release row: [{rel.confidence}] {rel.source}", "dim"))
        for s in sources:
            out.append(style(f"  arches {s}", "dim"))
    return out


def _legend(style: Style) -> list[str]:
    out: list[str] = []
    out.append("")
    out.append(
        style(
            "SASS runs on GPUs of the same major and a minor >= it; PTX is JIT-compiled for newer"
            " GPUs.\nDriver: >=floor runs through minor-version compatibility, full = the "
            "toolkit's own minimum.\n? = not verified (a platform: never recommended; a Windows "
            "driver: unconfirmed).",
            "dim",
        )
    )
    return out
