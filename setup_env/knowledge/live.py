"""What the indexes say, in one schema-independent shape, and how it differs from the data.

``live_view`` turns an index snapshot (``knowledge.index``) into releases, variants, platforms
and files; ``doc_view`` does the same for a matrix document, so ``drift`` can compare the two
line by line. The tag helpers here (``python_versions``, ``platform_min_from_tags``) are the rules
``refresh`` and ``scripts/build_matrix.py`` share for what a release's wheel tags state. Pure:
nothing here reads an index or writes a file (``refresh`` does both).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from setup_env.knowledge import tags

# --- the live view: what the indexes say, in one schema-independent shape ------------------------
#
# view = {release: {"requires_python": str | None, "uploaded": str | None,
#                   "pypi": {platform_tag: [interpreter tags]},     # "cp311", "cp314t", "cp37m"
#                   "pypi_files": {platform_tag: [python-abi tags]},  # "cp314-cp314t" (live only)
#                   "variants": {variant: {platform family: [interpreter tags]}}}}
# plus companions = {project: [releases]} and companion_files = {project: {release: {platform_tag:
# [python-abi]}}}. Drift works on views; only `doc_view` and `merge_view` below know the layout of
# the matrix document (setup_env/knowledge/matrix.py's docstring).


def release_key(v: str) -> tuple[int, ...]:
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

    # Every file each answer lists, yanked ones too, per release and platform tag: what an
    # answer is held against before it may remove anything (merge's completeness rules).
    listed: dict[str, dict[str, dict[str, set[str]]]] = {}
    for project, lst in snap.pypi.items():
        for w in lst.wheels:
            row = listed.setdefault(project, {}).setdefault(w.release, {})
            for plat, pairs in _python_abi(w.filename).items():
                row.setdefault(plat, set()).update(pairs)
    variant_listed: dict[str, dict[str, set[str]]] = {}
    for variant, listing in snap.variants.items():
        for w in listing.wheels:
            if w.variant == variant or (w.variant is None and variant == "cpu"):
                fams = {tags.platform_of_tag(p) for p in w.platforms}
                variant_listed.setdefault(variant, {}).setdefault(w.release, set()).update(
                    f for f in fams if f is not None
                )
    torch = snap.pypi.get("torch")
    if torch is not None:
        for w in torch.wheels:
            if w.yanked:
                continue
            e = entry(w.release)
            for plat in w.platforms:
                e["pypi"].setdefault(plat, set()).update(w.interpreters)
            for plat, pairs in _python_abi(w.filename).items():
                e["pypi_files"].setdefault(plat, set()).update(pairs)
            if w.requires_python:
                e["requires_python"] = w.requires_python
            if w.upload_time and (e["uploaded"] is None or w.upload_time < e["uploaded"]):
                e["uploaded"] = w.upload_time
    counted: set[str] = set()
    for variant, listing in snap.variants.items():
        for w in listing.wheels:
            # A page may list other builds (unlabelled aarch64 CPU wheels on old CUDA pages):
            # count a wheel for this variant only when its label says so (cpu: or no label).
            if w.yanked or not (w.variant == variant or (w.variant is None and variant == "cpu")):
                continue
            e = entry(w.release)
            counted.add(variant)
            for plat in w.platforms:
                fam = tags.platform_of_tag(plat)  # variants are listed per platform family
                if fam is not None:
                    fam_tags = e["variants"].setdefault(variant, {}).setdefault(fam, set())
                    fam_tags.update(w.interpreters)
    for e in releases.values():
        e["pypi"] = {p: sorted(t, key=_tag_key) for p, t in sorted(e["pypi"].items())}
        e["pypi_files"] = {p: sorted(t, key=_pair_key) for p, t in sorted(e["pypi_files"].items())}
        e["variants"] = {
            v: {p: sorted(t, key=_tag_key) for p, t in sorted(plats.items())}
            for v, plats in sorted(e["variants"].items())
        }
    companions = {
        project: sorted({w.release for w in lst.wheels if not w.yanked}, key=release_key)
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
        "releases": dict(sorted(releases.items(), key=lambda kv: release_key(kv[0]))),
        "companions": companions,
        "companion_files": {
            project: {
                rel: {p: sorted(t, key=_pair_key) for p, t in sorted(files.items())}
                for rel, files in sorted(rows.items(), key=lambda kv: release_key(kv[0]))
            }
            for project, rows in companion_files.items()
        },
        # A 404 says "no such variant" only when the same index served other variants' pages:
        # an index answering 404 to everything is the wrong URL, not the end of every build.
        "absent_variants": sorted(snap.absent_variants) if counted else [],
        "read": {
            "pypi": sorted(p for p, lst in snap.pypi.items() if _usable(lst.wheels)),
            "variants": sorted(counted),
        },
        "unusable": _unusable(snap, counted),
        "listed": {
            project: {
                rel: {p: sorted(t, key=_pair_key) for p, t in sorted(files.items())}
                for rel, files in sorted(rows.items(), key=lambda kv: release_key(kv[0]))
            }
            for project, rows in sorted(listed.items())
        },
        "variant_listed": {
            variant: {
                rel: sorted(fams)
                for rel, fams in sorted(rows.items(), key=lambda kv: release_key(kv[0]))
            }
            for variant, rows in sorted(variant_listed.items())
            if variant in counted
        },
    }


def _usable(wheels: Iterable[Any]) -> bool:
    return any(not w.yanked for w in wheels)


def _unusable(snap: Any, counted: set[str]) -> list[str]:
    """Pages that answered but said nothing to build on: an empty listing, an error page served
    as 200, a variant page without one wheel of that variant, 404 from every variant page. They
    count as failed pages: the rows they would have replaced are kept."""
    out = [
        f"{lst.url}: answered, but lists no {project} wheels"
        for project, lst in sorted(snap.pypi.items())
        if not _usable(lst.wheels)
    ]
    out += [
        f"{lst.url}: answered, but lists no torch+{variant} wheels"
        for variant, lst in sorted(snap.variants.items())
        if variant not in counted
    ]
    if snap.absent_variants and not counted:
        out.append(
            f"every variant page answered 404 ({', '.join(sorted(snap.absent_variants))}): "
            "not the PyTorch index layout"
        )
    return out


def _python_abi(filename: str) -> dict[str, set[str]]:
    """platform tag -> {"cp314-cp314t", ...} of a wheel filename that index.py already validated;
    pairs the matrix schema would refuse (pp, abi3 on an unknown interpreter) are dropped."""
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename
    from packaging.version import InvalidVersion

    from setup_env.knowledge.matrix import PLATFORM_TAG_RE, PYABI_RE

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
    oldest = min((release_key(v) for v in b_rel), default=(0,))
    read_pypi = "torch" in live.get("read", {}).get("pypi", [])
    read_variants = set(live.get("read", {}).get("variants", []))
    for rel in sorted(set(b_rel) | set(l_rel), key=release_key):
        if release_key(rel) < oldest:
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


# --- adapters to the matrix document (knowledge.matrix owns its layout) ---------------------------


def _interpreter_of_pair(pair: str) -> str:
    """ "cp314-cp314t" -> "cp314t", "cp37-cp37m" -> "cp37m", "py3-none" -> "py3" (as index.py)."""
    from setup_env.knowledge import index

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


def python_versions(files: Mapping[str, Iterable[str]]) -> list[str]:
    """cp311-cp311 -> 3.11; cp314-cp314t -> 3.14t (free-threaded after the others)."""
    seen: set[tuple[int, int, bool]] = set()
    for pairs in files.values():
        for pair in pairs:
            py, _, abi = pair.partition("-")
            m = re.fullmatch(r"cp(\d)(\d{1,2})", py)
            if m:
                seen.add((int(m.group(1)), int(m.group(2)), abi.endswith("t")))
    return [f"{a}.{b}{'t' if t else ''}" for a, b, t in sorted(seen, key=lambda x: (x[2], x))]


def platform_min_from_tags(
    files: Iterable[str], platforms: Iterable[str], source: str
) -> dict[str, Any]:
    """glibc / macOS floors that the wheels' own platform tags state (the lowest tag of each
    platform): manylinux_2_28_x86_64 -> linux_x86_64 glibc 2.28 (confidence I: a tag can
    understate the real floor, torch 2.6.0's manylinux1), macosx_14_0_arm64 -> macOS 14.0."""
    out: dict[str, Any] = {}
    for plat in platforms:
        floors = [
            f
            for f in (tags.floor_of_tag(t) for t in files if tags.platform_of_tag(t) == plat)
            if f is not None
        ]
        glibc = [v for kind, v in floors if kind == "glibc"]
        macos = [v for kind, v in floors if kind == "macos"]
        if plat.startswith("linux") and glibc:
            low = min(glibc)
            out[plat] = {
                "glibc": f"{low[0]}.{low[1]}",
                "confidence": "I",
                "source": f"{source} (manylinux tags)",
            }
        elif plat == "macos_arm64" and macos:
            low = min(macos)
            out[plat] = {
                "macos": f"{low[0]}.{low[1]}",
                "confidence": "V",
                "source": f"{source} (platform tags)",
            }
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
