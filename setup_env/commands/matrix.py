"""`setup-env matrix show | refresh | arches`: the wheel matrix, its refresh, fat binaries.

* ``show``: the matrix in use (a valid refreshed copy in ``user_matrix_path()`` if there is one,
  else the bundled ``setup_env/data/wheels.json``): releases, platforms, variants, companions,
  arch lists and driver minimums; ``--torch``/``--variant`` filter, ``--json`` for the document.
* ``refresh``: reads PyPI (PEP 691) and PyTorch's index (PEP 503, one page per variant), merges
  what it read into the current copy (the valid refreshed copy in use, else the bundled data),
  validates and writes it atomically (``setup_env.refresh`` does all of it; this module is the
  CLI). Exit codes, chosen for CI:

  ==========================  =====================================================================
  refresh                     0 written; 0 also when no index could be reached at all (the current
                              data kept, one-line warning: the tool keeps working offline); 3 the
                              indexes answered nothing usable (HTTP errors, error pages, empty
                              listings, 404 from every variant page: nothing written); 1 the live
                              data did not validate (nothing written)
  refresh --check             0 no drift; 1 drift (listed); 3 no index could be reached, or some
                              pages failed and no drift was seen in the rest (the check is
                              incomplete, so it can't say "no drift")
  ==========================  =====================================================================

* ``arches WHEEL_OR_SO...``: the SASS and PTX architectures in the CUDA fat binaries of a library
  or of every library in a wheel (streamed from the zip); exit 2 on an unreadable file.

Progress (one line per index page) goes to stderr; stdout carries the result only.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import Any

from setup_env.exitcodes import ExitCode
from setup_env.refresh import release_key
from setup_env.variant import Variant, is_index_label


def _flags(p: argparse.ArgumentParser) -> None:
    """Let `matrix show --json` work as well as `matrix --json show` (SUPPRESS: no override)."""
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="JSON output")
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="more detail")
    p.add_argument("--no-color", dest="color", action="store_false", default=argparse.SUPPRESS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="matrix_command", metavar="ACTION")
    show = sub.add_parser("show", help="print the wheel matrix in use")
    _flags(show)
    show.add_argument("--torch", metavar="VERSION", help="only this release (2.14 or 2.14.1)")
    show.add_argument("--variant", metavar="NAME", help="only this variant (cu126, rocm6.4, cpu)")
    show.add_argument("--file", metavar="PATH", help="show this matrix file instead")

    refresh = sub.add_parser("refresh", help="rebuild releases/variants/tags from the live indexes")
    _flags(refresh)
    refresh.add_argument("--pypi-url", metavar="URL", help="PyPI simple API base URL")
    refresh.add_argument("--index-url", metavar="URL", help="PyTorch wheel index base URL")
    refresh.add_argument(
        "--variants", metavar="LIST", help="comma-separated variants to read (default: known+next)"
    )
    refresh.add_argument(
        "--timeout", type=float, default=None, metavar="SECONDS", help="per request (default 20)"
    )
    refresh.add_argument("--check", action="store_true", help="report drift, write nothing")
    refresh.add_argument("--output", metavar="FILE", help="write here instead of the user copy")

    arches = sub.add_parser("arches", help="GPU architectures in a wheel's CUDA fat binaries")
    _flags(arches)
    arches.add_argument("paths", nargs="+", metavar="WHEEL_OR_SO")


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "matrix_command", None)
    if action == "arches":
        return _arches(args)
    try:
        if action == "refresh":
            return _refresh(args)
        if action in (None, "show"):
            return _show(args)
    except _Unavailable as exc:
        from setup_env import render

        return render.fail("matrix", "unexaminable", str(exc), ExitCode.UNEXAMINABLE, _json(args))
    print(f"setup-env matrix: unknown action {action!r}", file=sys.stderr)
    return int(ExitCode.USAGE)


def _json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


# --- arches --------------------------------------------------------------------------------------


def arches_payload(files: list[Any], errors: list[str]) -> dict[str, Any]:
    from setup_env import fatbin

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


def _arches(args: argparse.Namespace) -> int:
    from setup_env import fatbin, render

    files: list[fatbin.FileArches] = []
    errors: list[str] = []
    for path in args.paths:
        try:
            files += fatbin.read_path(path)
        except fatbin.FatbinError as exc:
            errors.append(str(exc))
    payload = arches_payload(files, errors)
    style = render.Style(render.use_color(sys.stdout, args.color))

    def text() -> None:
        if files:
            _print_arches(payload, style, args)

    _render(args, "arches", payload, text)
    for err in errors:
        render.log(f"setup-env matrix arches: {err}")
    return int(ExitCode.USAGE) if errors else int(ExitCode.OK)


def _print_arches(payload: dict[str, Any], style: Any, args: argparse.Namespace) -> None:
    from setup_env import render

    rows = []
    for f in payload["files"]:
        if not f["fatbins"] and not getattr(args, "verbose", 0) and len(payload["files"]) > 8:
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
        print(render.table(("file", "size", "fatbins", "SASS", "PTX"), rows))
    s = payload["summary"]
    print()
    if not s["fatbins"]:
        print(
            f"No CUDA fat binaries in {s['files']} file(s): no GPU code "
            "(a CPU-only build, or not a CUDA library)."
        )
        return
    print(
        style("Summary", "bold")
        + f": {s['fatbins']} fat binaries in {s['files_with_fatbins']} of {s['files']} file(s)"
    )
    print(f"  SASS in every fat binary: {' '.join(s['sass_in_every_fatbin']) or '(none)'}")
    if s["sass_stray"]:
        stray = ", ".join(
            f"{a} ({n} of {s['fatbins_with_sass']})" for a, n in s["sass_stray"].items()
        )
        print(f"  SASS in some only:        {stray}")
    if s["ptx"]:
        print(f"  PTX (JIT for newer GPUs): {' '.join(s['ptx'])}")
    else:
        print("  PTX: none (GPUs newer than the newest SASS arch are not served)")


# --- show ----------------------------------------------------------------------------------------


class _Unavailable(Exception):
    pass


_SHORT = {
    "linux_x86_64": "linux",
    "linux_aarch64": "linux-aarch64",
    "windows_x86_64": "windows",
    "macos_arm64": "macos-arm64",
    "macos_x86_64": "macos-x86_64",
}
_TINY = {
    "linux_x86_64": "linux",
    "linux_aarch64": "aarch64",
    "windows_x86_64": "win",
    "macos_arm64": "mac",
    "macos_x86_64": "mac-x86",
}
_TORCH_ARG = re.compile(r"\d{1,3}(?:\.\d{1,3}){0,2}")


def _select(m: Any, torch: str | None, variant: str | None) -> list[Any]:
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


def _variant_rows(m: Any, rel: Any, variant: Variant) -> list[dict[str, Any]]:
    """One row per group of platforms sharing a build; the data behind show's tables and JSON."""
    plats = rel.index.get(variant, {})
    groups: dict[Any, list[str]] = {}
    for plat in sorted(plats, key=lambda p: list(_SHORT).index(p) if p in _SHORT else 9):
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
    rows = [r for v in variants for r in _variant_rows(m, rel, v)]
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
            for plat in _SHORT
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
    releases = _select(m, torch, variant)
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


def _origin_text(m: Any) -> str:
    words: dict[str, str] = {
        "bundled": "bundled with setup-env",
        "user": "refreshed copy",
        "env": "from $SETUP_ENV_MATRIX",
        "explicit": "--file",
    }
    return words.get(str(m.origin), str(m.origin))


def _show(args: argparse.Namespace) -> int:
    from setup_env import matrix, render

    try:
        m = matrix.load_matrix(getattr(args, "file", None))
    except matrix.MatrixError as exc:
        return render.fail("matrix show", "bad-input", str(exc), ExitCode.USAGE, _json(args))
    torch, variant = getattr(args, "torch", None), getattr(args, "variant", None)
    try:
        payload = show_payload(m, torch, variant)
    except ValueError as exc:
        return render.fail("matrix show", "bad-input", str(exc), ExitCode.USAGE, _json(args))
    for n in m.notes:
        render.log(f"note: {n}")
    _render(args, "show", payload, lambda: _print_show(m, torch, variant, args))
    return int(ExitCode.OK)


def _print_show(m: Any, torch: str | None, variant: str | None, args: argparse.Namespace) -> None:
    from setup_env import render

    style = render.Style(render.use_color(sys.stdout, args.color))
    verbose = getattr(args, "verbose", 0) or 0
    print(
        style("Wheel matrix", "bold") + f": {m.path} ({_origin_text(m)}, retrieved {m.retrieved})"
    )
    if verbose:
        print(f"source: {m.source}")
    releases = _select(m, torch, variant)
    if torch is not None:
        for rel in releases:
            print()
            _print_release(m, rel, variant, style, verbose)
        _print_legend(style)
        return
    if variant is not None:
        print()
        rows = [
            (str(rel.version) if i == 0 else "", *_row_cells(m, row))
            for rel in releases
            for i, row in enumerate(_variant_rows(m, rel, Variant.parse(variant)))
        ]
        print(render.table(("torch", "platforms", "CUDA", "SASS", "PTX", *_DRIVER_HEAD), rows))
        _print_legend(style)
        return
    print()
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
    print(render.table(heads, rows))
    if verbose:
        print()
        print(style("Minimum NVIDIA driver per CUDA version", "bold"))
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
        print(render.table(("CUDA", "Linux floor", "Linux full", "Windows floor", "Windows full"),
                           drows))  # fmt: skip
        if m.nightly:
            print()
            print(style("Nightly (unverified, changes daily)", "bold"))
            for plat, vs in m.nightly.items():
                print(f"  {_SHORT.get(plat, plat)}: {' '.join(str(v) for v in vs)}")
    print()
    print(
        style(
            "? = listed by a secondary source only, never recommended. Per release (arches, "
            f"drivers): --torch {m.newest.series}; per variant: --variant cu126"
            + ("" if verbose else "; driver table and nightly: -v"),
            "dim",
        )
    )


_DRIVER_HEAD = ("Linux driver", "Windows driver")


def _row_cells(m: Any, row: dict[str, Any]) -> tuple[str, ...]:
    plats = " ".join(
        _SHORT.get(p, p) + ("" if a["verified"] else "?") for p, a in row["platforms"].items()
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


def _print_release(m: Any, rel: Any, variant: str | None, style: Any, verbose: int) -> None:
    from setup_env import render

    print(
        style(f"torch {rel.version}", "bold")
        + f"  uploaded {rel.uploaded or '?'}; Requires-Python {rel.requires_python or '(any)'}; "
        f"Python {' '.join(rel.python)}"
    )
    pv = ", ".join(f"{_SHORT.get(p, p)} {v.variant}" for p, v in rel.pypi_variant.items())
    print(f"  plain `pip install torch` (PyPI): {pv or '(not recorded)'}")
    floors = [f"{_SHORT.get(p, p)} glibc >= {v}" for p, v in rel.min_glibc.items()]
    floors += [f"{_SHORT.get(p, p)} macOS >= {v}" for p, v in rel.min_macos.items()]
    if floors:
        print(f"  needs: {', '.join(floors)}")
    for t in rel.traps:
        print(style(f"  trap: {t.platform_tag} wheels need glibc >= {t.min_glibc}", "yellow")
              + (f" ({t.note})" if t.note else ""))  # fmt: skip
    comps = []
    for name in ("torchvision", "torchaudio"):
        c = rel.companions.get(name)
        if c is None or (c.version is None and c.spec is None):
            comps.append(f"{name} not recorded")
        else:
            pin = c.spec or f"=={c.version}"
            comps.append(f"{name}{pin}" + (" (inferred)" if c.confidence == "I" else ""))
    print(f"  companions: {', '.join(comps)}")
    if verbose:
        for name, c in rel.companions.items():
            print(style(f"    {name}: [{c.confidence}] {c.source}", "dim"))
    variants = [Variant.parse(variant)] if variant else sorted(rel.index)
    rows, sources = [], []
    for v in variants:
        for row in _variant_rows(m, rel, v):
            rows.append((str(v), *_row_cells(m, row)))
            if row["build_source"]:
                sources.append(f"{v} {' '.join(row['platforms'])}: {row['build_source']}")
    print("  " + render.table(("variant", "platforms", "CUDA", "SASS", "PTX", *_DRIVER_HEAD),
                              rows).replace("\n", "\n  "))  # fmt: skip
    if verbose:
        print(style(f"  release row: [{rel.confidence}] {rel.source}", "dim"))
        for s in sources:
            print(style(f"  arches {s}", "dim"))


def _print_legend(style: Any) -> None:
    print()
    print(
        style(
            "SASS runs on GPUs of the same major and a minor >= it; PTX is JIT-compiled for newer"
            " GPUs.\nDriver: >=floor runs through minor-version compatibility, full = the "
            "toolkit's own minimum.\n? = not verified (a platform: never recommended; a Windows "
            "driver: unconfirmed).",
            "dim",
        )
    )


# --- refresh -------------------------------------------------------------------------------------


_URL = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+(?:/[A-Za-z0-9._~%+/-]*)?")


def _refresh(args: argparse.Namespace) -> int:
    import os

    from setup_env import index, refresh, render

    as_json = _json(args)

    def usage(message: str) -> int:
        return render.fail("matrix refresh", "bad-input", message, ExitCode.USAGE, as_json)

    variants: list[str] = []
    if args.variants:
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        bad = [v for v in variants if not index.is_variant(v)]
        if bad:
            return usage(f"not a variant name: {bad[0]!r}")
    pypi_url = args.pypi_url or os.environ.get("SETUP_ENV_PYPI_URL") or index.DEFAULT_PYPI_URL
    index_url = args.index_url or os.environ.get("SETUP_ENV_INDEX_URL") or index.DEFAULT_INDEX_URL
    for u in (pypi_url, index_url):
        if not _URL.fullmatch(u):
            return usage(f"not a plain http(s) URL: {u!r}")
    if args.timeout is not None and not 0 < args.timeout <= 600:
        return usage("--timeout must be between 0 and 600 seconds")
    quiet = as_json and not getattr(args, "verbose", 0)
    try:
        result = refresh.refresh(
            pypi_url=pypi_url,
            index_url=index_url,
            variants=variants,
            timeout=args.timeout,
            check=bool(args.check),
            output=args.output,
            progress=None if quiet else render.log,
        )
    except refresh.RefreshError as exc:
        return render.fail(
            "matrix refresh", "unexaminable", str(exc), ExitCode.UNEXAMINABLE, as_json
        )
    _render(args, "refresh", result.payload(), lambda: _print_refresh(result))
    for n in result.notes:
        render.log(f"note: {n}")
    if getattr(args, "verbose", 0):
        for line in result.rejected[:50]:
            render.log(f"  rejected {line}")
    return result.code


def _print_refresh(result: Any) -> None:
    for c in result.drift:
        print(f"  drift: {c}")
    print(result.message)


def _render(args: argparse.Namespace, action: str, payload: Any, text: Callable[[], None]) -> None:
    """The one place a matrix action's result is printed: the versioned JSON envelope under
    --json, else its text."""
    from setup_env import render

    if _json(args):
        print(render.dumps(render.envelope("matrix", {action: payload})))
    else:
        text()
