"""Refreshing the wheel matrix from the live indexes: read, compare, merge, validate, write.

The one home of what ``setup-env matrix refresh`` and ``scripts/build_matrix.py`` share: the
platform floors and Python list a release's wheel tags state, and the one writer of a matrix
document (:func:`write_matrix`: validated by ``matrix.validate``, then written atomically). The
command keeps the CLI (arguments, exit codes) and prints the :class:`RefreshResult` this returns.

What a refresh must never do (issue 11, row 7: it did all three): rebuild on the bundled data
instead of the user's current copy (verified rows of an earlier refresh came back as the bundled,
partly unverified ones), write when every answer was empty, an error page or an HTTP 500 (exit 0,
"220 changes"), or let a page that answered nothing drop the rows it would have replaced. Nor
(issue 17, each with exit 0 before): take a page that lists 1 of its wheels, a stale PyPI listing
or an HTML page served for PyPI's JSON as the truth, and remove what they lack. So:

* the base is :func:`current_copy`: the user's refreshed copy when it is valid and the one in use
  (not older than the bundled data), else the bundled document;
* a page counts as read only when it lists wheels (``live_view``'s ``unusable``); an answer of the
  wrong kind is refused by ``index`` (HTML where PEP 691 JSON was asked, another project's page,
  a page cut short);
* an answer adds rows or confirms them; a row leaves only when a complete answer for it no longer
  lists it (the rules above :func:`judge_variant`), and every row removed is named;
* ``timeout`` is one deadline for the whole refresh;
* exit 0 only when every page asked answered and none was incomplete; 4 (``PARTIAL``) when the
  copy was written from what answered and the rest kept; nothing usable read (or no index reached)
  -> nothing written, exit 3;
* the merged document is validated before the one atomic write.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from setup_env._record import Record, record
from setup_env.exitcodes import ExitCode
from setup_env.knowledge.live import (
    _companion_guess,
    _pair_key,
    _requires_python,
    doc_view,
    drift,
    live_view,
    platform_min_from_tags,
    python_versions,
    release_key,
)
from setup_env.knowledge.variant import CPU, Variant

# --- what an answer may change -------------------------------------------------------------------
#
# An answer adds rows or confirms them. It removes a row only when it is complete: a page that
# misses most of what it had (a mirror's partial copy, a page cut short, a stale cache) is no
# evidence that the rest is gone. What "complete" means, per source:
#
# * a variant page (PyTorch's index) is complete for the data's rows of that variant when it
#   (a) lists at least as many of those rows as it lacks, and (b) lacks at most one release of
#   the rows marked verified on each platform, and still lists another verified release there.
#   A 404 for a variant the data holds rows of is not complete either. An incomplete page
#   removes nothing: the rows it lacks are kept (and named), the answer is listed as incomplete.
# * PyPI keeps every file it ever served (a yanked one is still listed, marked), so its answers
#   never remove a file: a release's files are the union of the data's and the listing's. A
#   listing that lacks a file the data has, or a release the data has that is newer than the
#   oldest one the listing holds (a mirror may hold only the recent ones), is stale or cut short:
#   listed as incomplete. The same holds for torchvision's files.
#
# ``refresh`` exits 0 only when no answer was incomplete and every page asked answered.


def judge_variant(rows: Mapping[tuple[str, str], bool], listed: set[tuple[str, str]]) -> str | None:
    """None when a page that lists ``listed`` ((release, platform) pairs) is complete against the
    data's rows of its variant (``rows``: (release, platform) -> verified); else why it is not."""
    missing = [k for k in rows if k not in listed]
    if not missing:
        return None
    have = len(rows) - len(missing)
    if have < len(missing):
        verified = sum(rows.values())
        return (
            f"lists {have} of the {len(rows)} rows the data holds ({verified} verified), "
            f"lacks {len(missing)}"
        )
    for plat in sorted({p for _, p in rows}):
        verified_here = {r for (r, p), v in rows.items() if v and p == plat}
        gone = sorted({r for (r, p) in missing if p == plat and rows[(r, p)]}, key=release_key)
        if len(gone) > 1:
            return f"lacks {len(gone)} verified releases on {plat} ({', '.join(gone)})"
        if gone and len(verified_here) == len(gone):
            return f"lists none of the verified releases on {plat} ({gone[0]})"
    return None


def file_gaps(
    data: Mapping[str, Mapping[str, Iterable[str]]],
    listed: Mapping[str, Mapping[str, Iterable[str]]],
    project: str,
) -> list[str]:
    """What a PyPI listing (``listed``: release -> platform tag -> python-abi pairs, yanked files
    included) lacks of the data's files (``data``, the same shape), one line per release; releases
    older than the oldest listed one are not asked of it (a mirror may hold the recent ones)."""
    from setup_env.knowledge.matrix import RELEASE_RE

    known = [v for v in listed if RELEASE_RE.fullmatch(v)]
    if not known:
        return []
    oldest = min(release_key(v) for v in known)
    out: list[str] = []
    for rel, files in sorted(data.items(), key=lambda kv: release_key(kv[0])):
        if not RELEASE_RE.fullmatch(rel) or release_key(rel) < oldest:
            continue
        have = {(p, pair) for p, pairs in files.items() for pair in pairs}
        if not have:
            continue
        if rel not in listed:
            out.append(f"{project} {rel}: not listed ({len(have)} file(s) in the data)")
            continue
        got = {(p, pair) for p, pairs in listed[rel].items() for pair in pairs}
        lacks = sorted(have - got)
        if lacks:
            shown = ", ".join(f"{pair} {p}" for p, pair in lacks[:3])
            more = f" and {len(lacks) - 3} more" if len(lacks) > 3 else ""
            out.append(
                f"{project} {rel}: lacks {len(lacks)} of its {len(have)} files ({shown}{more})"
            )
    return out


def _union_files(
    old: Mapping[str, Iterable[str]] | None, new: Mapping[str, Iterable[str]]
) -> dict[str, list[str]]:
    merged: dict[str, set[str]] = {p: set(v) for p, v in (old or {}).items()}
    for p, pairs in new.items():
        merged.setdefault(p, set()).update(pairs)
    return {p: sorted(v, key=_pair_key) for p, v in sorted(merged.items())}


@dataclass
class Merged:
    """A merged document and what the merge did beyond adding and confirming."""

    doc: dict[str, Any]
    removed: list[str] = field(default_factory=list)  # rows a complete answer no longer lists
    kept: list[str] = field(default_factory=list)  # what an incomplete answer lacks: kept
    incomplete: list[str] = field(default_factory=list)  # answers that removed nothing, and why


def merge_view(
    doc: dict[str, Any],
    live: dict[str, Any],
    retrieved: str,
    sources: list[str],
) -> dict[str, Any]:
    """The document :func:`merge` makes (what it removed and kept aside)."""
    return merge(doc, live, retrieved, sources).doc


def merge(
    doc: dict[str, Any],
    live: dict[str, Any],
    retrieved: str,
    sources: list[str],
) -> Merged:
    """A copy of ``doc`` (the current copy: see :func:`current_copy`) with what the indexes that
    were read say. Pages that failed or answered nothing usable are not "read": their rows stay.

    * PyPI read: each listed release's ``pypi_files`` gain the listing's files (none is removed:
      the comment above), ``python``, ``requires_python``, ``uploaded`` and the macOS floor of
      its tags follow; a release newer than the data gets a new row (no ``pypi_variant``: PyPI
      filenames don't say which build plain pip serves; no arch data).
    * A variant page read: the rows it lists become verified, sourced to the page; the rows it
      lacks leave only when the page is complete (:func:`judge_variant`), each one named in
      ``removed``; else they stay, named in ``kept``. A 404 removes nothing the data holds.
    * torchvision read: ``companion_files.torchvision`` gains the files of the releases listed
      (others kept); a companion no source names yet gets the ``==0.X.*`` pattern when PyPI has
      such a torchvision.

    ``sources`` is ``[pypi_url, index_url]``. Everything else (arch lists, driver table, traps,
    sourced companions) is kept. The caller validates the result with ``matrix.validate``.
    """
    import copy

    from packaging.version import Version

    from setup_env.knowledge.matrix import PLATFORMS, RELEASE_RE

    new = copy.deepcopy(doc)
    out = Merged(new)
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
    listed_files: dict[str, Any] = live.get("listed") or {}

    if read_pypi:
        data_files = {
            v: r.get("pypi_files") or {} for v, r in releases.items() if isinstance(r, dict)
        }
        gaps = file_gaps(data_files, listed_files.get("torch") or {}, "torch")
        if gaps:
            out.incomplete.append(
                f"{pypi_url.rstrip('/')}/torch/: a stale or partial listing (it lacks files the "
                f"data has, which PyPI never removes); nothing removed: {'; '.join(gaps[:3])}"
                + (f"; and {len(gaps) - 3} more" if len(gaps) > 3 else "")
            )
            out.kept += [f"{g} (kept)" for g in gaps]

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
            r["pypi_files"] = _union_files(r.get("pypi_files"), files)
            r["python"] = python_versions(r["pypi_files"])
            req = _requires_python(lv.get("requires_python"))
            if req:
                r["requires_python"] = req
            if isinstance(lv.get("uploaded"), str) and re.match(
                r"\d{4}-\d{2}-\d{2}", lv["uploaded"]
            ):
                r["uploaded"] = lv["uploaded"][:10]
            floors = platform_min_from_tags(r["pypi_files"], PLATFORMS, pypi_src)
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

    variant_listed: dict[str, Any] = live.get("variant_listed") or {}
    for variant in sorted(read_variants | absent, key=variant_key):
        page = f"{index_url.rstrip('/')}/{variant}/torch/"
        rows = {
            (version, str(plat)): bool(row.get("verified"))
            for version, r in releases.items()
            if isinstance(r, dict)
            for plat, row in ((r.get("index") or {}).get(variant) or {}).items()
            if isinstance(row, dict)
        }
        listed = {
            (rel, fam) for rel, fams in (variant_listed.get(variant) or {}).items() for fam in fams
        }
        if variant in read_variants:
            why = judge_variant(rows, listed)
        else:
            why = f"answered 404, but the data holds {len(rows)} row(s) of it" if rows else None
        if why is not None:
            out.incomplete.append(f"{page}: an incomplete answer: {why}; nothing removed")
        kept: dict[str, list[str]] = {}
        src = f"{page} ({when})"
        for version, r in releases.items():
            lv = live["releases"].get(version) or {}
            index_rows = r.setdefault("index", {})
            current = dict(index_rows.get(variant) or {})
            plats = [p for p in (lv.get("variants") or {}).get(variant, {}) if p in PLATFORMS]
            for p in plats:
                current[p] = {"verified": True, "confidence": "V", "source": src}
            gone = sorted(p for p in current if (version, p) not in listed and p not in plats)
            if gone and why is None:  # a complete page (a 404 with rows never is one)
                marked = {True: [p for p in gone if rows.get((version, p))]}
                marked[False] = [p for p in gone if p not in marked[True]]
                named = "; ".join(
                    f"{', '.join(ps)} ({'verified' if v else 'unverified'})"
                    for v, ps in marked.items()
                    if ps
                )
                out.removed.append(
                    f"torch {version}+{variant} on {named}: {page} no longer lists it"
                )
                for p in gone:
                    current.pop(p)
            elif gone:
                kept.setdefault(version, []).extend(gone)
            if current:
                index_rows[variant] = dict(sorted(current.items()))
            else:
                index_rows.pop(variant, None)
            r["index"] = dict(sorted(index_rows.items(), key=lambda kv: variant_key(kv[0])))
        if kept:
            n = sum(len(v) for v in kept.values())
            what = ", ".join(
                f"{v} ({' '.join(ps)})"
                for v, ps in sorted(kept.items(), key=lambda kv: release_key(kv[0]))
            )
            out.kept.append(f"torch+{variant}: {n} row(s) {page} does not list (kept): {what}")

    files_by_release = (live.get("companion_files") or {}).get("torchvision")
    if "torchvision" in live["read"]["pypi"] and files_by_release:
        old = (doc.get("companion_files") or {}).get("torchvision") or {}
        old_files = {v: f for v, f in old.items() if isinstance(f, dict)}
        gaps = file_gaps(old_files, listed_files.get("torchvision") or {}, "torchvision")
        if gaps:
            out.incomplete.append(
                f"{pypi_url.rstrip('/')}/torchvision/: a stale or partial listing; nothing "
                f"removed: {'; '.join(gaps[:3])}"
                + (f"; and {len(gaps) - 3} more" if len(gaps) > 3 else "")
            )
            out.kept += [f"{g} (kept)" for g in gaps]
        merged = dict(old)  # releases a mirror doesn't list keep their rows
        merged.update(
            (rel, _union_files(old_files.get(rel), files))
            for rel, files in files_by_release.items()
            if RELEASE_RE.fullmatch(rel) and Version(rel) >= Version("0.14")
        )
        new["companion_files"] = {
            "torchvision": dict(sorted(merged.items(), key=lambda kv: release_key(kv[0]))),
            "source": f"{pypi_url.rstrip('/')}/torchvision/ ({when}); "
            f"on top of: {(doc.get('companion_files') or {}).get('source', 'the bundled data')}",
        }

    new["releases"] = dict(sorted(releases.items(), key=lambda kv: release_key(kv[0])))
    new["retrieved"] = retrieved
    new["generated_by"] = "setup-env matrix refresh"
    prior = doc.get("source")
    new["source"] = f"live indexes {pypi_url}, {index_url} ({when})" + (
        f"; on top of: {prior}" if prior else ""
    )
    return out


def variant_key(v: str) -> tuple[bool, Variant, str]:
    """Labels in :class:`Variant` order (unreadable ones last)."""
    parsed = Variant.find(v)
    return (parsed is None, parsed or CPU, v)


# --- the current copy and the one writer ------------------------------------------------------


class RefreshError(Exception):
    """The refresh cannot start: the data it would merge into is unreadable."""


@record
class Base(Record):
    """The matrix document a refresh starts from, and where it came from."""

    doc: dict[str, Any]
    path: str
    origin: str  # "user" (a refreshed copy) or "bundled"
    notes: tuple[str, ...] = ()


def _read_doc(path: Path) -> dict[str, Any]:
    """A matrix document that ``matrix.parse`` accepts, read as ``load_matrix`` reads one (the
    bounded reader); MatrixError (a ValueError) otherwise."""
    from setup_env.knowledge import matrix

    doc = matrix.read_document(path)
    matrix.parse(doc, path=str(path))
    return dict(doc)


def current_copy(user_path: Path | None = None) -> Base:
    """What a refresh merges into: the user's refreshed copy when it is valid and the one
    ``matrix.load_matrix`` uses (not older than the bundled data), else the bundled document."""
    from setup_env.knowledge import matrix

    try:
        bundled = _read_doc(matrix.BUNDLED_PATH)
    except ValueError as exc:
        raise RefreshError(f"cannot read the bundled matrix: {exc}") from exc
    user = user_path or matrix.user_matrix_path()
    if not user.is_file():
        return Base(bundled, str(matrix.BUNDLED_PATH), "bundled")
    try:
        doc = _read_doc(user)
    except ValueError as exc:
        note = f"the refreshed copy is not usable ({exc}); merging into the bundled data"
        return Base(bundled, str(matrix.BUNDLED_PATH), "bundled", (note,))
    if str(doc.get("retrieved", "")) < str(bundled.get("retrieved", "")):
        note = (
            f"the refreshed copy at {user} ({doc.get('retrieved')}) is older than the bundled "
            f"data ({bundled.get('retrieved')}); merging into the bundled data"
        )
        return Base(bundled, str(matrix.BUNDLED_PATH), "bundled", (note,))
    return Base(doc, str(user), "user")


def dump(doc: Mapping[str, Any]) -> str:
    """A matrix document as it is written (the bundled file is byte-identical to this)."""
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def write_matrix(target: str | Path, doc: Mapping[str, Any]) -> None:
    """The one writer of a matrix document: ``matrix.validate`` first (MatrixError listing the
    problems, nothing written), then an atomic replace through ``bounded.write_file`` (a reader
    never sees half a file), synced, mode 0644 (readable by every user of the cache)."""
    import os

    from setup_env import bounded
    from setup_env.knowledge import matrix

    problems = matrix.validate(doc)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise matrix.MatrixError(f"{problems[0]}{more}")
    text = dump(doc)
    os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
    bounded.write_file(target, text, mode=0o644, fsync=True)


# --- one refresh ---------------------------------------------------------------------------------


@dataclass
class RefreshResult:
    """What one refresh did; the command renders it as text or as the JSON envelope."""

    code: int
    message: str
    check: bool
    reached: bool = False
    pages_read: int = 0
    failed: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    drift: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    pages_failed: int = 0
    base: str | None = None
    written: str | None = None
    in_use: str | None = None
    notes: list[str] = field(default_factory=list)

    def payload(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "reached": self.reached,
            "pages_read": self.pages_read,
            "failed": self.failed,
            "rejected": len(self.rejected),
            "drift": self.drift,
            "incomplete": self.incomplete,
            "removed": self.removed,
            "kept": self.kept,
            "base": self.base,
            "written": self.written,
            "in_use": self.in_use,
            "message": self.message,
        }


def default_variants(view: dict[str, Any]) -> list[str]:
    """Variants the data knows, plus the next two CUDA minors after the newest (new releases)."""
    known = {v for e in view["releases"].values() for v in e["variants"]}
    known.add("cpu")
    cuda = sorted(
        v.version[0] * 10 + v.version[1]
        for v in map(Variant.find, known)
        if v is not None and v.is_cuda
    )  # cu129 -> 129: the next two labels are cu130, cu131
    if cuda:
        known.update(f"cu{cuda[-1] + i}" for i in (1, 2))
    return sorted(known, key=variant_key)


def refresh(
    *,
    pypi_url: str,
    index_url: str,
    variants: list[str] | None = None,
    timeout: float | None = None,
    check: bool = False,
    output: str | None = None,
    progress: Callable[[str], None] | None = None,
    today: str | None = None,
) -> RefreshResult:
    """Read the indexes, then report drift (``check``) or merge into the current copy and write
    it (``output``, else the user's copy). ``timeout`` is one deadline for the whole refresh
    (default ``index.SNAPSHOT_TIMEOUT``). Never raises for what the indexes answer;
    :class:`RefreshError` when the data to merge into is unreadable.

    Exit codes (``code``): 0 every page asked answered, none was refused or incomplete, and the
    copy was written; 4 (``PARTIAL``) written, but some page did not answer, was refused or
    answered incompletely (``failed``, ``incomplete``: the rows they would have replaced or
    removed are kept); 3 nothing usable answered (or no index could be reached, or the copy could
    not be written): nothing written; 1 the merged data did not validate. ``check``: 0 no drift,
    1 drift, 3 some page failed or was incomplete and no drift was seen in the rest."""
    from setup_env import bounded
    from setup_env.bounded import net
    from setup_env.knowledge import index, matrix

    net.load()  # the HTTP client's import (hundreds of ms on a busy machine) is not the indexes'
    deadline = bounded.Deadline(timeout or index.SNAPSHOT_TIMEOUT)
    say = progress or (lambda _m: None)
    base = current_copy()
    notes = list(base.notes)
    what = "the bundled data" if base.origin == "bundled" else f"the refreshed copy {base.path}"
    known = doc_view(base.doc)
    chosen = variants or default_variants(known)
    say(f"reading {pypi_url} and {index_url} ({len(chosen)} variants, {deadline.seconds:g} s)")
    snap = index.fetch_snapshot(
        pypi_url=pypi_url,
        index_url=index_url,
        variants=chosen,
        deadline=deadline,
        progress=say,
    )
    live = live_view(snap)
    result = RefreshResult(
        code=int(ExitCode.OK),
        message="",
        check=check,
        reached=snap.reached_any,
        pages_read=snap.fetched,
        failed=_failures(snap.errors, deadline.seconds) + live["unusable"],
        rejected=[f"{u}: {r.filename}: {r.reason}" for u, r in snap.rejected],
        drift=drift(known, live),
        base=base.path,
        notes=notes,
    )

    result.pages_failed = len(snap.errors) + len(live["unusable"])

    def done(code: ExitCode, message: str) -> RefreshResult:
        result.code, result.message = int(code), message
        return result

    usable = bool(live["read"]["pypi"] or live["read"]["variants"] or live["absent_variants"])
    if not snap.reached_any and all(e.unreachable for e in snap.errors):
        why = result.failed[0] if result.failed else "no answer"
        return done(
            ExitCode.UNEXAMINABLE,
            f"no index could be reached ({why}); nothing written, kept {what}",
        )
    if not usable:
        why = result.failed[0] if result.failed else "no answer"
        return done(
            ExitCode.UNEXAMINABLE,
            f"no index answered anything usable ({why}; {len(result.failed)} page(s) failed "
            f"or empty); nothing written, kept {what}",
        )
    retrieved = today or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    merged = merge(base.doc, live, retrieved, [pypi_url, index_url])
    result.incomplete, result.removed, result.kept = merged.incomplete, merged.removed, merged.kept
    if check:
        if result.drift:
            return done(
                ExitCode.CHECK_FAILED,
                f"drift: {len(result.drift)} difference(s) from the live indexes",
            )
        if result.failed or result.incomplete:
            return done(
                ExitCode.UNEXAMINABLE,
                f"no drift in what was read, but {_shortfall(result)}",
            )
        return done(ExitCode.OK, f"no drift: {what} matches the live indexes")
    target = output or str(matrix.user_matrix_path())
    try:
        write_matrix(target, merged.doc)
    except matrix.MatrixError as exc:
        return done(
            ExitCode.CHECK_FAILED, f"the live data did not validate ({exc}); nothing written"
        )
    except OSError as exc:
        return done(ExitCode.UNEXAMINABLE, f"cannot write {target}: {exc.strerror or exc}")
    result.written = target
    removed = f"; {len(result.removed)} row(s) removed" if result.removed else ""
    message = f"wrote {target} ({len(result.drift)} difference(s) from {what}{removed}"
    if not output:  # the copy setup-env will read from now on: say if it will not
        in_use = matrix.load_matrix()
        result.in_use = in_use.path
        if in_use.origin != "user":
            result.notes += [*in_use.notes, f"setup-env keeps using {in_use.path}"]
    if result.failed or result.incomplete:
        return done(ExitCode.PARTIAL, f"{message}; {_shortfall(result)})")
    return done(ExitCode.OK, message + ")")


def _failures(errors: Iterable[Any], seconds: float) -> list[str]:
    """One line per page that failed; the pages the deadline left unasked (or cut off) in one."""
    out: list[str] = []
    late: list[str] = []
    for e in errors:
        if e.kind == "deadline":
            late.append("/".join(e.url.rstrip("/").split("/")[-2:]))
        else:
            out.append(f"{e.url}: {e.detail}")
    if late:
        out.append(
            f"{len(late)} page(s) without an answer before the deadline of {seconds:g} s: "
            + ", ".join(late)
        )
    return out


def _shortfall(result: RefreshResult) -> str:
    parts = []
    if result.failed:
        parts.append(f"{result.pages_failed or len(result.failed)} page(s) failed, their rows kept")
    if result.incomplete:
        parts.append(f"{len(result.incomplete)} answer(s) incomplete, the rows they lack kept")
    return "; ".join(parts)
