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
import sys
from typing import Any

from setup_env.exitcodes import ExitCode


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
        print(f"setup-env matrix: {exc}", file=sys.stderr)
        return int(ExitCode.UNEXAMINABLE)
    print(f"setup-env matrix: unknown action {action!r}", file=sys.stderr)
    return int(ExitCode.USAGE)


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
#                   "pypi": {platform_tag: [interpreter tags]},
#                   "variants": {variant: {platform_tag: [interpreter tags]}}}}
# plus companions = {project: [releases]}. Drift and merging work on views; only the two adapter
# functions below (`doc_view`, `merge_view`) know the layout of the matrix document.


def _vkey(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in v.split("."))


def live_view(snap: Any) -> dict[str, Any]:
    """The validated snapshot as a view (torch releases; companions' release lists)."""
    releases: dict[str, dict[str, Any]] = {}

    def entry(rel: str) -> dict[str, Any]:
        return releases.setdefault(
            rel, {"requires_python": None, "uploaded": None, "pypi": {}, "variants": {}}
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
        e["variants"] = {
            v: {p: sorted(t, key=_tag_key) for p, t in sorted(plats.items())}
            for v, plats in sorted(e["variants"].items())
        }
    companions = {
        project: sorted({w.release for w in lst.wheels if not w.yanked}, key=_vkey)
        for project, lst in snap.pypi.items()
        if project != "torch"
    }
    return {
        "releases": dict(sorted(releases.items(), key=lambda kv: _vkey(kv[0]))),
        "companions": companions,
        "absent_variants": sorted(snap.absent_variants),
        "read": {
            "pypi": sorted(snap.pypi),
            "variants": sorted(snap.variants),
        },
    }


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

_PLATFORM_WORDS = {
    "linux_x86_64": ("linux", "x86_64"),
    "linux_aarch64": ("linux", "aarch64"),
    "windows_x86_64": ("win", "amd64"),
    "macos_arm64": ("mac", "arm64"),
    "macos_x86_64": ("mac", "x86_64"),
}


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


def _releases(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    rel = doc.get("releases")
    if isinstance(rel, dict):
        return [(str(k), v) for k, v in rel.items() if isinstance(v, dict)]
    if isinstance(rel, list):
        out = []
        for r in rel:
            if isinstance(r, dict):
                v = r.get("version") or r.get("torch")
                if isinstance(v, str):
                    out.append((v, r))
        return out
    return []


def _first(d: dict[str, Any], *keys: str) -> Any:
    for k in keys:
        if k in d:
            return d[k]
    return None


def doc_view(doc: dict[str, Any]) -> dict[str, Any]:
    """The release/variant/tag part of a matrix document, as a view."""
    releases: dict[str, Any] = {}
    for version, r in _releases(doc):
        pypi = _first(r, "pypi_files", "pypi", "files", "wheels") or {}
        variants = _first(r, "index_variants", "variants") or {}
        vv: dict[str, dict[str, list[str]]] = {}
        if isinstance(variants, dict):
            for plat, names in variants.items():
                if isinstance(names, list):
                    for n in names:
                        if isinstance(n, str):
                            vv.setdefault(n, {})[str(plat)] = []
        releases[version] = {
            "requires_python": _first(r, "requires_python", "python_requires"),
            "pypi": {str(k): list(v) for k, v in pypi.items() if isinstance(v, list)}
            if isinstance(pypi, dict)
            else {},
            "variants": vv,
        }
    return {"releases": releases}


def merge_view(
    doc: dict[str, Any], live: dict[str, Any], retrieved: str, sources: list[str]
) -> dict[str, Any]:
    """A copy of ``doc`` with the release/variant/tag facts the indexes gave replaced."""
    import copy

    new = copy.deepcopy(doc)
    rel_list = new.get("releases")
    by_version = dict(_releases(new))
    read_pypi = "torch" in live["read"]["pypi"]
    for version, lv in live["releases"].items():
        r = by_version.get(version)
        if r is None:
            if not read_pypi or not lv["pypi"]:
                continue  # only PyPI makes a release exist; a variant page alone does not
            r = {"version": version}
            if isinstance(rel_list, list):
                rel_list.append(r)
            elif isinstance(rel_list, dict):
                rel_list[version] = r
                r.pop("version")
            by_version[version] = r
        if read_pypi and lv["pypi"]:
            key = next(
                (k for k in ("pypi_files", "pypi", "files", "wheels") if k in r), "pypi_files"
            )
            r[key] = lv["pypi"]
            if lv["requires_python"]:
                key = "python_requires" if "python_requires" in r else "requires_python"
                r[key] = lv["requires_python"]
        if lv["variants"]:
            key = "variants" if "variants" in r and "index_variants" not in r else "index_variants"
            fams: dict[str, list[str]] = {}
            for variant, plats in lv["variants"].items():
                for fam in plats:
                    fams.setdefault(fam, []).append(variant)
            old = r.get(key) if isinstance(r.get(key), dict) else {}
            merged = dict(old or {})
            for fam, names in fams.items():
                keep = [n for n in (merged.get(fam) or []) if n not in live["read"]["variants"]]
                merged[fam] = sorted(set(keep) | set(names), key=_variant_key)
            r[key] = merged
    new["retrieved"] = retrieved
    prior = new.get("source")
    new["source"] = "; ".join(sources) + (f" (on top of: {prior})" if prior else "")
    return new


def _variant_key(v: str) -> tuple[int, str]:
    order = {"cpu": 0, "cu": 1, "rocm": 2, "xpu": 3}
    kind = next((k for k in ("rocm", "cu", "cpu", "xpu") if v.startswith(k)), "zz")
    return (order.get(kind, 9), v)


# --- show / refresh ------------------------------------------------------------------------------


class _Unavailable(Exception):
    pass


def _matrix_module() -> Any:
    try:
        from setup_env import matrix  # type: ignore[attr-defined]
    except ImportError as exc:
        raise _Unavailable(f"the matrix loader is not available ({exc})") from None
    return matrix


def _bundled_path() -> str:
    import os

    return os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "wheels.json")


def _read_doc(path: str) -> dict[str, Any]:
    import json

    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object")
    return dict(doc)


def _doc_in_use(args: argparse.Namespace) -> tuple[str, dict[str, Any], list[str]]:
    """(path, document, notes): --file, else a valid refreshed copy, else the bundled file."""
    import os

    m = _matrix_module()
    notes: list[str] = []
    if getattr(args, "file", None):
        return args.file, _read_doc(args.file), notes
    user = str(m.user_matrix_path())
    if os.path.exists(user):
        try:
            doc = _read_doc(user)
            problems = m.validate(doc)
        except (OSError, ValueError) as exc:
            problems = [str(exc)]
        if not problems:
            return user, doc, notes
        notes.append(f"ignored the refreshed copy {user}: {problems[0]}")
    path = _bundled_path()
    return path, _read_doc(path), notes


def _show(args: argparse.Namespace) -> int:
    from setup_env import render

    try:
        path, doc, notes = _doc_in_use(args)
    except (OSError, ValueError) as exc:
        render.log(f"setup-env matrix show: cannot read the matrix: {exc}")
        return int(ExitCode.USAGE)
    releases = _releases(doc)
    if getattr(args, "torch", None):
        want = args.torch
        releases = [(v, r) for v, r in releases if v == want or v.startswith(want + ".")]
        if not releases:
            render.log(f"setup-env matrix show: no release {want} in {path}")
            return int(ExitCode.USAGE)
    variant = getattr(args, "variant", None)
    if variant:
        releases = [
            (v, r)
            for v, r in releases
            if variant in doc_view({"releases": [dict(r, version=v)]})["releases"][v]["variants"]
        ]
    for n in notes:
        render.log(n)
    if getattr(args, "json", False):
        payload = {"file": path, "retrieved": doc.get("retrieved"), "document": doc}
        if getattr(args, "torch", None) or variant:
            payload["releases"] = [dict(r, version=v) for v, r in releases]
        print(render.dumps(render.envelope("matrix", payload)))
        return int(ExitCode.OK)
    style = render.Style(render.use_color(sys.stdout, args.color))
    print(style(f"Wheel matrix: {path}", "bold"))
    print(f"retrieved {doc.get('retrieved', '?')}; source: {doc.get('source', '?')}")
    rows = []
    for v, r in sorted(releases, key=lambda kv: _vkey(kv[0]), reverse=True):
        view = doc_view({"releases": [dict(r, version=v)]})["releases"][v]
        fams = sorted({platform_of(p) for p in view["pypi"]})
        rows.append(
            (
                v,
                view["requires_python"] or "",
                " ".join(fams),
                " ".join(sorted(view["variants"], key=_variant_key)),
            )
        )
    print(render.table(("torch", "Python", "PyPI platforms", "index variants"), rows))
    return int(ExitCode.OK)


def _refresh(args: argparse.Namespace) -> int:
    import datetime
    import json
    import os
    import tempfile

    from setup_env import index, render

    quiet = getattr(args, "json", False) and not getattr(args, "verbose", 0)
    say = (lambda _m: None) if quiet else render.log
    variants: list[str] = []
    if args.variants:
        variants = [v.strip() for v in args.variants.split(",") if v.strip()]
        bad = [v for v in variants if not index.is_variant(v)]
        if bad:
            render.log(f"setup-env matrix refresh: not a variant name: {bad[0]!r}")
            return int(ExitCode.USAGE)
    try:
        base = _read_doc(_bundled_path())
    except (OSError, ValueError) as exc:
        render.log(f"setup-env matrix refresh: cannot read the bundled matrix: {exc}")
        return int(ExitCode.USAGE)
    bundled = doc_view(base)
    if not variants:
        variants = _default_variants(bundled)
    pypi_url = args.pypi_url or os.environ.get("SETUP_ENV_PYPI_URL") or index.DEFAULT_PYPI_URL
    index_url = args.index_url or os.environ.get("SETUP_ENV_INDEX_URL") or index.DEFAULT_INDEX_URL
    for u in (pypi_url, index_url):
        if not u.startswith(("http://", "https://")):
            render.log(f"setup-env matrix refresh: not an http(s) URL: {u!r}")
            return int(ExitCode.USAGE)
    m = _matrix_module()
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
    }

    def finish(code: int, message: str) -> int:
        payload["message"] = message
        if getattr(args, "json", False):
            print(render.dumps(render.envelope("matrix", {"refresh": payload})))
        else:
            for c in changes:
                print(f"  drift: {c}")
            print(message)
        if rejected and args.verbose:
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
    retrieved = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    new = merge_view(base, live, retrieved, [pypi_url, index_url])
    problems = m.validate(new)
    if problems:
        return finish(
            int(ExitCode.CHECK_FAILED),
            f"the live data did not validate ({problems[0]}); kept the bundled data",
        )
    target = args.output or str(m.user_matrix_path())
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        prefix=".wheels-", suffix=".json", dir=os.path.dirname(os.path.abspath(target))
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(new, f, indent=1, sort_keys=False)
            f.write("\n")
        os.replace(tmp, target)
    except OSError as exc:
        os.unlink(tmp)
        return finish(int(ExitCode.USAGE), f"cannot write {target}: {exc}")
    payload["written"] = target
    return finish(
        int(ExitCode.OK), f"wrote {target} ({len(changes)} change(s) from the bundled data)"
    )


def _default_variants(bundled: dict[str, Any]) -> list[str]:
    """Variants the data knows, plus the next two CUDA minors after the newest (new releases)."""
    known = {v for e in bundled["releases"].values() for v in e["variants"]}
    known.add("cpu")
    cuda = sorted(int(v[2:]) for v in known if v.startswith("cu"))
    if cuda:
        known.update(f"cu{cuda[-1] + i}" for i in (1, 2))
    return sorted(known, key=_variant_key)
