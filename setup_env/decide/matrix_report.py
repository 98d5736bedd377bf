"""What ``setup-env matrix show`` and ``matrix arches`` report, as data: pure functions from the
wheel matrix (or the fat binaries read from a wheel) to the result the renderer prints
(``setup_env.output.render_matrix``) and ``--json`` carries. Nothing here prints.
"""

from __future__ import annotations

import re
from typing import Any

from setup_env.knowledge.live import release_key
from setup_env.knowledge.variant import Variant, is_index_label


def arches_payload(files: list[Any], errors: list[str]) -> dict[str, Any]:
    from setup_env.probe import fatbin

    summary = fatbin.summarize(files)
    return {
        "files": [
            {
                "name": fa.name,
                "size": fa.size,
                "method": fa.method,
                "fatbins": len(fa.fatbins),
                "sass": list(fa.sass),
                "ptx": list(fa.ptx),
            }
            for fa in files
        ],
        "summary": {
            "files": summary.files,
            "files_with_fatbins": summary.files_with_fatbins,
            "fatbins": summary.fatbins,
            "sass": list(summary.sass),
            "sass_in_every_fatbin": list(summary.sass_everywhere),
            "sass_stray": summary.sass_partial,
            "ptx": list(summary.ptx),
            "ptx_in_every_fatbin": list(summary.ptx_everywhere),
            "ptx_stray": summary.ptx_partial,
            "fatbins_with_sass": summary.fatbins_with_sass,
            "fatbins_with_ptx": summary.fatbins_with_ptx,
        },
        "errors": errors,
    }


SHORT = {  # platform -> the short name tables use
    "linux_x86_64": "linux",
    "linux_aarch64": "linux-aarch64",
    "windows_x86_64": "windows",
    "macos_arm64": "macos-arm64",
    "macos_x86_64": "macos-x86_64",
}

_TORCH_ARG = re.compile(r"\d{1,3}(?:\.\d{1,3}){0,2}")


def select(m: Any, torch: str | None, variant: str | None) -> list[Any]:
    """Releases (newest first) matching the filters; ValueError with a one-line message."""
    releases = list(reversed(m.releases))
    if torch is not None:
        if not _TORCH_ARG.fullmatch(torch):
            raise ValueError(f"--torch {torch!r}: expected a release like 2.14 or 2.14.1")
        releases = [r for r in releases if str(r.version) == torch or r.series == torch]
        if not releases:
            raise ValueError(
                f"no torch {torch} in the matrix (it knows {m.releases[0].version} to "
                f"{m.newest.version})"
            )
    if variant is not None:
        if not is_index_label(variant):
            raise ValueError(f"--variant {variant!r}: expected cpu, cuXYZ, rocmX.Y or xpu")
        asked = Variant.parse(variant)
        releases = [r for r in releases if asked in r.index]
        if not releases:
            known = " ".join(str(v) for v in sorted(m.variants))
            where = f" for torch {torch}" if torch else ""
            raise ValueError(f"no variant {variant}{where} in the matrix (known: {known})")
    return releases


def variant_rows(m: Any, rel: Any, variant: Variant) -> list[dict[str, Any]]:
    """One row per group of platforms sharing a build; the data behind show's tables and JSON."""
    plats = rel.index.get(variant, {})
    groups: dict[Any, list[str]] = {}
    for plat in sorted(plats, key=lambda p: list(SHORT).index(p) if p in SHORT else 9):
        b = m.build(variant, rel.version, plat)
        key = (b.toolkit, b.sass, b.ptx, b.source) if b is not None else None
        groups.setdefault(key, []).append(plat)
    rows = []
    for key, group in groups.items():
        b = m.build(variant, rel.version, group[0]) if key is not None else None
        row: dict[str, Any] = {
            "variant": str(variant),
            "platforms": {p: {"verified": plats[p].verified, "confidence": plats[p].confidence,
                              "source": plats[p].source} for p in group},
            "toolkit": None, "sass": [], "ptx": [], "driver_minimum": None, "build_source": None,
        }  # fmt: skip
        if b is not None:
            row.update(
                toolkit=str(b.toolkit),
                sass=[f"sm_{x}{y}" for x, y in b.sass],
                ptx=[f"compute_{x}{y}" for x, y in b.ptx],
                build_source=f"{b.confidence}: {b.source}"
                + (f"; {b.measured}" if b.measured else ""),
            )
            cuda = m.cuda_version(b.cuda)
            if cuda is not None:
                floors = {}
                for fam in ("linux", "windows"):
                    full = cuda.toolkit_minimum(b.toolkit)
                    floors[fam] = {
                        "minor_version_compat": cuda.mvc.for_os(fam)[1],
                        "full": full.for_os(fam)[1],
                    }
                    if fam == "windows":
                        floors[fam]["confidence"] = full.windows_confidence
                row["driver_minimum"] = floors
            row["_build"] = b
        rows.append(row)
    return rows


def _release_payload(m: Any, rel: Any, variant: str | None) -> dict[str, Any]:
    variants = [Variant.parse(variant)] if variant else sorted(rel.index)
    rows = [r for v in variants for r in variant_rows(m, rel, v)]
    for r in rows:
        r.pop("_build", None)
    return {
        "version": str(rel.version),
        "uploaded": rel.uploaded,
        "requires_python": str(rel.requires_python),
        "python": list(rel.python),
        "platforms": {
            plat: {
                "pypi_tags": list(rel.platform_tags(plat)),
                "pypi_variant": str(rel.pypi_variant[plat].variant)
                if plat in rel.pypi_variant
                else None,
                "min_glibc": str(rel.min_glibc[plat]) if plat in rel.min_glibc else None,
                "min_macos": str(rel.min_macos[plat]) if plat in rel.min_macos else None,
            }
            for plat in SHORT
            if rel.platform_tags(plat) or plat in rel.pypi_variant
        },
        "index": rows,
        "companions": {
            n: {
                "version": str(c.version) if c.version else None,
                "spec": c.spec,
                "confidence": c.confidence,
                "source": c.source,
            }
            for n, c in rel.companions.items()
        },
        "traps": [
            {
                "platform_tag": t.platform_tag,
                "min_glibc": str(t.min_glibc),
                "note": t.note,
                "confidence": t.confidence,
                "source": t.source,
            }
            for t in rel.traps
        ],
        "confidence": rel.confidence,
        "source": rel.source,
    }


def show_payload(m: Any, torch: str | None = None, variant: str | None = None) -> dict[str, Any]:
    releases = select(m, torch, variant)
    return {
        "file": m.path,
        "origin": m.origin,
        "retrieved": m.retrieved,
        "source": m.source,
        "generated_by": m.generated_by,
        "notes": list(m.notes),
        "filters": {"torch": torch, "variant": variant},
        "releases": [_release_payload(m, r, variant) for r in releases],
        "cuda": {
            xy: {
                "minor_version_compat": {
                    "linux": c.mvc.for_os("linux")[1],
                    "windows": c.mvc.for_os("windows")[1],
                },
                "toolkits": {
                    u: {"linux": f.for_os("linux")[1], "windows": f.for_os("windows")[1]}
                    for u, f in c.updates.items()
                },
                "confidence": c.confidence,
                "source": c.source,
            }
            for xy, c in sorted(m.cuda.items(), key=lambda kv: release_key(kv[0]))
        },
        "nightly": {p: list(v) for p, v in m.nightly.items()},
    }
