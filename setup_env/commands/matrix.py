"""`setup-env matrix show | refresh | arches`: the wheel matrix, its refresh, fat binaries.

* ``show``: the matrix in use (a valid refreshed copy in ``user_matrix_path()`` if there is one,
  else the bundled ``setup_env/data/wheels.json``): releases, platforms, variants, companions,
  arch lists and driver minimums; ``--torch``/``--variant`` filter, ``--json`` for the document.
* ``refresh``: reads PyPI (PEP 691) and PyTorch's index (PEP 503, one page per variant), merges the
  validated release/variant/tag data into a copy of the bundled document, checks it with
  ``matrix.validate`` and writes it atomically. Exit codes, chosen for CI:

  ==========================  =====================================================================
  refresh                     0 written; 0 also when no index could be reached (bundled data kept,
                              one-line warning: the tool keeps working offline); 1 the live data
                              did not validate (nothing written)
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
from typing import Any

from setup_env.exitcodes import ExitCode
from setup_env.variant import CPU, Variant, is_index_label


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
    if getattr(args, "json", False):
        print(render.dumps(render.envelope("matrix", {"arches": payload})))
    elif files:
        _print_arches(payload, render.Style(render.use_color(sys.stdout, args.color)), args)
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


# --- the live view: what the indexes say, in one schema-independent shape ------------------------
#
# view = {release: {"requires_python": str | None, "uploaded": str | None,
#                   "pypi": {platform_tag: [interpreter tags]},     # "cp311", "cp314t", "cp37m"
#                   "pypi_files": {platform_tag: [python-abi tags]},  # "cp314-cp314t" (live only)
#                   "variants": {variant: {platform family: [interpreter tags]}}}}
# plus companions = {project: [releases]} and companion_files = {project: {release: {platform_tag:
# [python-abi]}}}. Drift works on views; only `doc_view` and `merge_view` below know the layout of
# the matrix document (setup_env/matrix.py's docstring).


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def live_view(snap: Any) -> dict[str, Any]:
    """The validated snapshot as a view (torch releases; companions' release lists)."""
    releases: dict[str, dict[str, Any]] = {}

    def entry(rel: str) -> dict[str, Any]:
        return releases.setdefault(
            rel,
            {
                "requires_python": None,
                "uploaded": None,
                "pypi": {},
                "pypi_files": {},
                "variants": {},
            },
        )

    torch = snap.pypi.get("torch")
    if torch is not None:
        for w in torch.wheels:
            if w.yanked:
                continue
            e = entry(w.release)
            for plat in w.platforms:
                tags = e["pypi"].setdefault(plat, set())
                tags.update(w.interpreters)
            for plat, pairs in _python_abi(w.filename).items():
                e["pypi_files"].setdefault(plat, set()).update(pairs)
            if w.requires_python:
                e["requires_python"] = w.requires_python
            if w.upload_time and (e["uploaded"] is None or w.upload_time < e["uploaded"]):
                e["uploaded"] = w.upload_time
    for variant, listing in snap.variants.items():
        for w in listing.wheels:
            # A page may list other builds (unlabelled aarch64 CPU wheels on old CUDA pages):
            # count a wheel for this variant only when its label says so (cpu: or no label).
            if w.yanked or not (w.variant == variant or (w.variant is None and variant == "cpu")):
                continue
            e = entry(w.release)
            for plat in w.platforms:
                fam = platform_of(plat)  # variants are listed per platform family
                e["variants"].setdefault(variant, {}).setdefault(fam, set()).update(w.interpreters)
    for e in releases.values():
        e["pypi"] = {p: sorted(t, key=_tag_key) for p, t in sorted(e["pypi"].items())}
        e["pypi_files"] = {p: sorted(t, key=_pair_key) for p, t in sorted(e["pypi_files"].items())}
        e["variants"] = {
            v: {p: sorted(t, key=_tag_key) for p, t in sorted(plats.items())}
            for v, plats in sorted(e["variants"].items())
        }
    companions = {
        project: sorted({w.release for w in lst.wheels if not w.yanked}, key=_vkey)
        for project, lst in snap.pypi.items()
        if project != "torch"
    }
    companion_files: dict[str, dict[str, dict[str, set[str]]]] = {}
    for project, lst in snap.pypi.items():
        if project == "torch":
            continue
        for w in lst.wheels:
            if w.yanked:
                continue
            row = companion_files.setdefault(project, {}).setdefault(w.release, {})
            for plat, pairs in _python_abi(w.filename).items():
                row.setdefault(plat, set()).update(pairs)
    return {
        "releases": dict(sorted(releases.items(), key=lambda kv: _vkey(kv[0]))),
        "companions": companions,
        "companion_files": {
            project: {
                rel: {p: sorted(t, key=_pair_key) for p, t in sorted(files.items())}
                for rel, files in sorted(rows.items(), key=lambda kv: _vkey(kv[0]))
            }
            for project, rows in companion_files.items()
        },
        "absent_variants": sorted(snap.absent_variants),
        "read": {
            "pypi": sorted(snap.pypi),
            "variants": sorted(snap.variants),
        },
    }


def _python_abi(filename: str) -> dict[str, set[str]]:
    """platform tag -> {"cp314-cp314t", ...} of a wheel filename that index.py already validated;
    pairs the matrix schema would refuse (pp, abi3 on an unknown interpreter) are dropped."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename
    from packaging.version import InvalidVersion

    from setup_env.matrix import PLATFORM_TAG_RE, PYABI_RE

    try:
        tags = parse_wheel_filename(filename)[3]
    except (InvalidWheelFilename, InvalidVersion):
        return {}
    out: dict[str, set[str]] = {}
    for t in tags:
        pair = f"{t.interpreter}-{t.abi}"
        if PYABI_RE.fullmatch(pair) and PLATFORM_TAG_RE.fullmatch(t.platform):
            out.setdefault(t.platform, set()).add(pair)
    return out


def _pair_key(pair: str) -> tuple[str, int, str]:
    py, _, abi = pair.partition("-")
    return (*_tag_key(py)[:2], abi)


def _tag_key(tag: str) -> tuple[str, int, str]:
    digits = "".join(c for c in tag[2:] if c.isdigit())
    return (tag[:2], int(digits or 0), tag[2 + len(digits) :])


def drift(bundled: dict[str, Any], live: dict[str, Any]) -> list[str]:
    """Differences between the bundled view and what the indexes that were read say.

    Only compares what was read: PyPI facts when PyPI's torch page was read, a variant's builds
    when that variant's page was read. Releases older than the oldest bundled one are ignored.
    """
    out: list[str] = []
    b_rel: dict[str, Any] = bundled.get("releases", {})
    l_rel: dict[str, Any] = live.get("releases", {})
    oldest = min((_vkey(v) for v in b_rel), default=(0,))
    read_pypi = "torch" in live.get("read", {}).get("pypi", [])
    read_variants = set(live.get("read", {}).get("variants", []))
    for rel in sorted(set(b_rel) | set(l_rel), key=_vkey):
        if _vkey(rel) < oldest:
            continue
        b, lv = b_rel.get(rel), l_rel.get(rel)
        if read_pypi:
            b_pypi = (b or {}).get("pypi") or {}
            l_pypi = (lv or {}).get("pypi") or {}
            if l_pypi and b is None:
                out.append(f"torch {rel}: new release on PyPI ({', '.join(sorted(l_pypi))})")
                continue
            if b_pypi and not l_pypi and lv is None:
                out.append(f"torch {rel}: in the bundled data but not on PyPI")
            for plat in sorted(set(b_pypi) | set(l_pypi)):
                bt, lt = set(b_pypi.get(plat, ())), set(l_pypi.get(plat, ()))
                if bt != lt and l_pypi:
                    added, gone = sorted(lt - bt, key=_tag_key), sorted(bt - lt, key=_tag_key)
                    detail = "; ".join(
                        x
                        for x in (
                            f"+{' '.join(added)}" if added else "",
                            f"-{' '.join(gone)}" if gone else "",
                        )
                        if x
                    )
                    out.append(f"torch {rel} PyPI {plat}: {detail}")
            brp, lrp = (b or {}).get("requires_python"), (lv or {}).get("requires_python")
            if lrp and brp and brp != lrp:
                out.append(f"torch {rel}: Requires-Python {brp} in the data, {lrp} on PyPI")
        b_var = (b or {}).get("variants") or {}
        l_var = (lv or {}).get("variants") or {}
        for variant in sorted(read_variants):
            bp, lp = set(b_var.get(variant, {})), set(l_var.get(variant, {}))
            if lp and not bp:
                where = ", ".join(sorted(lp))
                out.append(f"torch {rel}+{variant}: on the index, not in the data ({where})")
            elif bp and not lp:
                out.append(f"torch {rel}+{variant}: in the data, not on the index")
            elif bp != lp:
                out.append(
                    f"torch {rel}+{variant}: platforms differ (data {', '.join(sorted(bp))}; "
                    f"index {', '.join(sorted(lp))})"
                )
    for variant in live.get("absent_variants", []):
        if any(variant in (e.get("variants") or {}) for e in b_rel.values()):
            out.append(f"variant {variant}: the index has no page for it any more (404)")
    return out


# --- adapters to the matrix document (setup_env.matrix owns its layout) ---------------------------


def platform_of(tag: str) -> str:
    """Wheel platform tag -> platform family: manylinux_2_28_x86_64 -> linux_x86_64."""
    arch = next(
        (a for a in ("x86_64", "aarch64", "arm64", "ppc64le", "s390x", "i686", "universal2")
         if tag.endswith(a)),
        tag.rsplit("_", 1)[-1],
    )  # fmt: skip
    if tag.startswith(("manylinux", "linux", "musllinux")):
        return f"linux_{arch}"
    if tag.startswith("win"):
        return "windows_x86_64" if tag == "win_amd64" else f"windows_{tag[4:]}"
    if tag.startswith("macosx"):
        return f"macos_{arch}"
    return tag


def _interpreter_of_pair(pair: str) -> str:
    """ "cp314-cp314t" -> "cp314t", "cp37-cp37m" -> "cp37m", "py3-none" -> "py3" (as index.py)."""
    from setup_env import index

    py, _, abi = pair.partition("-")
    return index._interpreter(py, abi)


def doc_view(doc: dict[str, Any]) -> dict[str, Any]:
    """The release/variant/tag part of a matrix document, as a view (for :func:`drift`).

    Every index row counts, verified or not: a secondary source's claim that the index then
    contradicts is drift worth seeing."""
    releases: dict[str, Any] = {}
    rows = doc.get("releases")
    for version, r in rows.items() if isinstance(rows, dict) else ():
        if not isinstance(r, dict):
            continue
        files: dict[str, Any] = r["pypi_files"] if isinstance(r.get("pypi_files"), dict) else {}
        index_rows: dict[str, Any] = r["index"] if isinstance(r.get("index"), dict) else {}
        releases[str(version)] = {
            "requires_python": r.get("requires_python") or None,
            "uploaded": r.get("uploaded") or None,
            "pypi": {
                str(tag): sorted({_interpreter_of_pair(str(p)) for p in pairs}, key=_tag_key)
                for tag, pairs in sorted(files.items())
                if isinstance(pairs, list)
            },
            "variants": {
                str(v): {str(plat): [] for plat in sorted(plats)}
                for v, plats in sorted(index_rows.items())
                if isinstance(plats, dict)
            },
        }
    return {"releases": releases}


def _python_versions(files: dict[str, list[str]]) -> list[str]:
    """cp311-cp311 -> 3.11; cp314-cp314t -> 3.14t (free-threaded after the others)."""
    seen: set[tuple[int, int, bool]] = set()
    for pairs in files.values():
        for pair in pairs:
            py, _, abi = pair.partition("-")
            m = re.fullmatch(r"cp(\d)(\d{1,2})", py)
            if m:
                seen.add((int(m.group(1)), int(m.group(2)), abi.endswith("t")))
    return [f"{a}.{b}{'t' if t else ''}" for a, b, t in sorted(seen, key=lambda x: (x[2], x))]


_GLIBC_OF_LEGACY = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}


def _glibc_of_tag(tag: str) -> str | None:
    m = re.match(r"manylinux_(\d+)_(\d+)_", tag)
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    return _GLIBC_OF_LEGACY.get(tag.rsplit("_", 2)[0] if tag.count("_") >= 2 else tag.split("_")[0])


def _lowest(versions: list[str]) -> str | None:
    return min(versions, key=lambda v: tuple(int(x) for x in v.split("."))) if versions else None


def _platform_min_from_tags(
    files: dict[str, list[str]], platforms: tuple[str, ...], source: str
) -> dict[str, Any]:
    """glibc / macOS floors that the wheels' own platform tags state."""
    out: dict[str, Any] = {}
    for plat in platforms:
        tags = [t for t in files if platform_of(t) == plat]
        if plat.startswith("linux"):
            low = _lowest([g for g in map(_glibc_of_tag, tags) if g])
            if low:
                out[plat] = {
                    "glibc": low,
                    "confidence": "I",  # a tag can understate the real floor (torch 2.6.0)
                    "source": f"{source} (manylinux tags)",
                }
        elif plat == "macos_arm64":
            macs = [".".join(t.split("_")[1:3]) for t in tags if t.startswith("macosx_")]
            low = _lowest([m for m in macs if re.fullmatch(r"\d{1,2}\.\d{1,2}", m)])
            if low:
                out[plat] = {"macos": low, "confidence": "V", "source": f"{source} (platform tags)"}
    return out


_SPECIFIER_CHARS = re.compile(r"[<>=!~0-9., *]{1,64}")


def _requires_python(text: Any) -> str | None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not isinstance(text, str) or not _SPECIFIER_CHARS.fullmatch(text):
        return None
    try:
        SpecifierSet(text)
    except InvalidSpecifier:
        return None
    return text.strip()


def _companion_guess(version: str, live: dict[str, Any], when: str) -> dict[str, Any] | None:
    """torchvision for a torch 2.x release that no source pairs yet: minor = torch minor + 15
    (wheel_matrix.md section 1), when such a torchvision is on PyPI."""
    from packaging.version import Version

    v = Version(version)
    if v.major != 2 or "torchvision" not in live["read"]["pypi"]:
        return None
    minor = f"0.{v.minor + 15}"
    have = [r for r in live["companions"].get("torchvision", []) if r.startswith(minor + ".")]
    if not have:
        return {
            "version": None,
            "spec": None,
            "confidence": "V",
            "source": f"PyPI has no torchvision {minor}.x ({when})",
        }
    return {
        "version": None,
        "spec": f"=={minor}.*",
        "confidence": "I",
        "source": f"torchvision minor = torch minor + 15; {', '.join(have)} on PyPI ({when})",
    }


def merge_view(
    doc: dict[str, Any],
    live: dict[str, Any],
    retrieved: str,
    sources: list[str],
) -> dict[str, Any]:
    """A copy of ``doc`` (the bundled document) with what the indexes that were read say.

    * PyPI read: each release's ``pypi_files``, ``python``, ``requires_python``, ``uploaded``
      and the macOS floor of its tags are replaced; a release newer than the data gets a new row
      (no ``pypi_variant``: PyPI filenames don't say which build plain pip serves; no arch data).
    * A variant page read: that variant's ``index`` rows become exactly the platforms the page
      lists for each release (verified), rows the page lacks are dropped; a 404 drops the variant.
    * torchvision read: ``companion_files.torchvision`` rows of the releases listed are
      replaced (others kept: a mirror may hold a subset); a companion no source names yet gets
      the ``==0.X.*`` pattern when PyPI has such a torchvision.

    ``sources`` is ``[pypi_url, index_url]``. Everything else (arch lists, driver table, traps,
    sourced companions) is kept. The caller validates the result with ``matrix.validate``.
    """
    import copy

    from packaging.version import Version

    from setup_env.matrix import PLATFORMS, RELEASE_RE

    new = copy.deepcopy(doc)
    releases = new.get("releases")
    if not isinstance(releases, dict):
        releases = new["releases"] = {}
    pypi_url = sources[0] if sources else "PyPI"
    index_url = sources[1] if len(sources) > 1 else "the PyTorch index"
    when = f"read {retrieved}"
    pypi_src = f"{pypi_url.rstrip('/')}/torch/ ({when})"
    read_pypi = "torch" in live["read"]["pypi"]
    read_variants = set(live["read"]["variants"])
    absent = set(live.get("absent_variants", []))
    known = [Version(v) for v in releases if RELEASE_RE.fullmatch(v)]
    oldest = min(known) if known else None

    for version, lv in live["releases"].items():
        if not RELEASE_RE.fullmatch(version) or (oldest and Version(version) < oldest):
            continue
        files = lv.get("pypi_files") or {}
        r = releases.get(version)
        if r is None:
            if not read_pypi or not files:
                continue  # only PyPI makes a release exist; a variant page alone does not
            r = releases[version] = {
                "uploaded": "",
                "requires_python": "",
                "python": [],
                "pypi_files": {},
                "index": {},
                "companions": {
                    "torchaudio": {
                        "version": None,
                        "spec": None,
                        "confidence": "?",
                        "source": f"not recorded for torch {version} ({when})",
                    }
                },
                "platform_min": {},
                "traps": [],
            }
        if read_pypi and files:
            r["pypi_files"] = files
            r["python"] = _python_versions(files)
            req = _requires_python(lv.get("requires_python"))
            if req:
                r["requires_python"] = req
            if isinstance(lv.get("uploaded"), str) and re.match(
                r"\d{4}-\d{2}-\d{2}", lv["uploaded"]
            ):
                r["uploaded"] = lv["uploaded"][:10]
            floors = _platform_min_from_tags(files, PLATFORMS, pypi_src)
            pmin = r.setdefault("platform_min", {})
            for plat, row in floors.items():
                if plat not in pmin or "macos" in row:  # sourced glibc floors are kept
                    pmin[plat] = row
            r["confidence"], r["source"] = "V", pypi_src
        tv = (r.get("companions") or {}).get("torchvision")
        if tv is None or (tv.get("version") is None and tv.get("confidence") != "V2"):
            guess = _companion_guess(version, live, when)
            if guess is not None and (tv is None or tv.get("spec") is None or guess["spec"]):
                r.setdefault("companions", {})["torchvision"] = guess

    for version, r in releases.items():
        lv = live["releases"].get(version) or {}
        index_rows = r.setdefault("index", {})
        for variant in sorted(read_variants | absent):
            plats = [p for p in (lv.get("variants") or {}).get(variant, {}) if p in PLATFORMS]
            if variant in read_variants and plats:
                src = f"{index_url.rstrip('/')}/{variant}/torch/ ({when})"
                index_rows[variant] = {
                    p: {"verified": True, "confidence": "V", "source": src} for p in sorted(plats)
                }
            else:
                index_rows.pop(variant, None)
        r["index"] = dict(sorted(index_rows.items(), key=lambda kv: _variant_key(kv[0])))

    files_by_release = (live.get("companion_files") or {}).get("torchvision")
    if "torchvision" in live["read"]["pypi"] and files_by_release:
        old = (doc.get("companion_files") or {}).get("torchvision") or {}
        merged = dict(old)  # releases a mirror doesn't list keep their bundled rows
        merged.update(
            (rel, files)
            for rel, files in files_by_release.items()
            if RELEASE_RE.fullmatch(rel) and Version(rel) >= Version("0.14")
        )
        new["companion_files"] = {
            "torchvision": dict(sorted(merged.items(), key=lambda kv: _vkey(kv[0]))),
            "source": f"{pypi_url.rstrip('/')}/torchvision/ ({when}); "
            f"on top of: {(doc.get('companion_files') or {}).get('source', 'the bundled data')}",
        }

    new["releases"] = dict(sorted(releases.items(), key=lambda kv: _vkey(kv[0])))
    new["retrieved"] = retrieved
    new["generated_by"] = "setup-env matrix refresh"
    prior = doc.get("source")
    new["source"] = f"live indexes {pypi_url}, {index_url} ({when})" + (
        f"; on top of: {prior}" if prior else ""
    )
    return new


def _variant_key(v: str) -> tuple[bool, Variant, str]:
    """Labels in :class:`Variant` order (unreadable ones last)."""
    parsed = Variant.find(v)
    return (parsed is None, parsed or CPU, v)


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
            for xy, c in sorted(m.cuda.items(), key=lambda kv: _vkey(kv[0]))
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
    if getattr(args, "json", False):
        print(render.dumps(render.envelope("matrix", {"show": payload})))
        return int(ExitCode.OK)
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
        return int(ExitCode.OK)
    if variant is not None:
        print()
        rows = [
            (str(rel.version) if i == 0 else "", *_row_cells(m, row))
            for rel in releases
            for i, row in enumerate(_variant_rows(m, rel, Variant.parse(variant)))
        ]
        print(render.table(("torch", "platforms", "CUDA", "SASS", "PTX", *_DRIVER_HEAD), rows))
        _print_legend(style)
        return int(ExitCode.OK)
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
        for xy, c in sorted(m.cuda.items(), key=lambda kv: _vkey(kv[0])):
            newest = c.updates[max(c.updates, key=lambda u: _vkey(u))]
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
    return int(ExitCode.OK)


_DRIVER_HEAD = ("Linux driver", "Windows driver")


def _row_cells(m: Any, row: dict[str, Any]) -> tuple[str, ...]:
    plats = " ".join(
        _SHORT.get(p, p) + ("" if a["verified"] else "?") for p, a in row["platforms"].items()
    )
    b = row.get("_build")
    if b is None:
        gpu = "-" if not row["variant"].startswith("cu") else "(no arch data)"
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


def _atomic_write(target: str, text: str) -> None:
    import contextlib
    import os
    import tempfile

    folder = os.path.dirname(os.path.abspath(target))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".wheels-", suffix=".json", dir=folder)
    try:
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the copy from other readers
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _refresh(args: argparse.Namespace) -> int:
    import datetime
    import json
    import os

    from setup_env import index, matrix, render

    quiet = getattr(args, "json", False) and not getattr(args, "verbose", 0)
    say = (lambda _m: None) if quiet else render.log
    variants: list[str] = []
    if args.variants:
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        bad = [v for v in variants if not index.is_variant(v)]
        if bad:
            return render.fail(
                "matrix refresh",
                "bad-input",
                f"not a variant name: {bad[0]!r}",
                ExitCode.USAGE,
                _json(args),
            )
    pypi_url = args.pypi_url or os.environ.get("SETUP_ENV_PYPI_URL") or index.DEFAULT_PYPI_URL
    index_url = args.index_url or os.environ.get("SETUP_ENV_INDEX_URL") or index.DEFAULT_INDEX_URL
    for u in (pypi_url, index_url):
        if not re.fullmatch(r"https?://[A-Za-z0-9.\-\[\]:]+(?:/[A-Za-z0-9._~%+/-]*)?", u):
            return render.fail(
                "matrix refresh",
                "bad-input",
                f"not a plain http(s) URL: {u!r}",
                ExitCode.USAGE,
                _json(args),
            )
    if args.timeout is not None and not 0 < args.timeout <= 600:
        return render.fail(
            "matrix refresh",
            "bad-input",
            "--timeout must be between 0 and 600 seconds",
            ExitCode.USAGE,
            _json(args),
        )
    try:
        base = json.loads(matrix.BUNDLED_PATH.read_text(encoding="utf-8"))
        matrix.parse(base, path=str(matrix.BUNDLED_PATH))
    except (OSError, ValueError) as exc:  # MatrixError and JSONDecodeError are ValueErrors
        return render.fail(
            "matrix refresh",
            "unexaminable",
            f"cannot read the bundled matrix: {exc}",
            ExitCode.UNEXAMINABLE,
            _json(args),
        )
    bundled = doc_view(base)
    if not variants:
        variants = _default_variants(bundled)
    say(f"reading {pypi_url} and {index_url} ({len(variants)} variants)")
    snap = index.fetch_snapshot(
        pypi_url=pypi_url,
        index_url=index_url,
        variants=variants,
        timeout=args.timeout or index.DEFAULT_TIMEOUT,
        progress=say,
    )
    live = live_view(snap)
    changes = drift(bundled, live)
    failed = [f"{e.url}: {e.detail}" for e in snap.errors]
    rejected = [f"{u}: {r.filename}: {r.reason}" for u, r in snap.rejected]
    payload: dict[str, Any] = {
        "check": bool(args.check),
        "reached": snap.reached_any,
        "pages_read": snap.fetched,
        "failed": failed,
        "rejected": len(rejected),
        "drift": changes,
        "written": None,
        "in_use": None,
    }

    def finish(code: int, message: str, notes: tuple[str, ...] = ()) -> int:
        payload["message"] = message
        if getattr(args, "json", False):
            print(render.dumps(render.envelope("matrix", {"refresh": payload})))
        else:
            for c in changes:
                print(f"  drift: {c}")
            print(message)
        for n in notes:
            render.log(f"note: {n}")
        verbose = bool(getattr(args, "verbose", 0))
        if rejected and verbose:
            for line in rejected[:50]:
                render.log(f"  rejected {line}")
        return code

    if not snap.reached_any:
        why = failed[0] if failed else "no answer"
        msg = f"no index could be reached ({why}); kept the bundled data"
        return finish(int(ExitCode.UNEXAMINABLE) if args.check else int(ExitCode.OK), msg)
    if args.check:
        if changes:
            return finish(
                int(ExitCode.CHECK_FAILED),
                f"drift: {len(changes)} difference(s) from the live indexes",
            )
        if failed:
            return finish(
                int(ExitCode.UNEXAMINABLE),
                f"no drift in what was read, but {len(failed)} page(s) failed",
            )
        return finish(int(ExitCode.OK), "no drift: the bundled data matches the live indexes")
    retrieved = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    new = merge_view(base, live, retrieved, [pypi_url, index_url])
    problems = matrix.validate(new)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return finish(
            int(ExitCode.CHECK_FAILED),
            f"the live data did not validate ({problems[0]}{more}); nothing written",
        )
    target = args.output or str(matrix.user_matrix_path())
    try:
        _atomic_write(target, json.dumps(new, indent=1) + "\n")
    except OSError as exc:
        return finish(int(ExitCode.UNEXAMINABLE), f"cannot write {target}: {exc.strerror or exc}")
    payload["written"] = target
    partial = f"; {len(failed)} page(s) failed, their bundled rows kept" if failed else ""
    msg = f"wrote {target} ({len(changes)} change(s) from the bundled data{partial})"
    notes: tuple[str, ...] = ()
    if not args.output:  # the copy setup-env will read from now on: say if it will not
        in_use = matrix.load_matrix()
        payload["in_use"] = in_use.path
        if in_use.origin != "user":
            notes = (*in_use.notes, f"setup-env keeps using {in_use.path} ({_origin_text(in_use)})")
    return finish(int(ExitCode.OK), msg, notes)


def _default_variants(bundled: dict[str, Any]) -> list[str]:
    """Variants the data knows, plus the next two CUDA minors after the newest (new releases)."""
    known = {v for e in bundled["releases"].values() for v in e["variants"]}
    known.add("cpu")
    cudas = sorted(v for v in map(Variant.find, known) if v is not None and v.is_cuda)
    if cudas:
        n = cudas[-1].version[0] * 10 + cudas[-1].version[1]  # cu129 -> cu130, cu131
        known.update(str(Variant("cuda", divmod(n + i, 10))) for i in (1, 2))
    return sorted(known, key=_variant_key)
