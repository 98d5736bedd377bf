"""`setup-env matrix show | refresh | arches`: the wheel matrix, its refresh, fat binaries.

* ``show``: the matrix in use (a valid refreshed copy in ``user_matrix_path()`` if there is one,
  else the bundled ``setup_env/data/wheels.json``): releases, platforms, variants, companions,
  arch lists and driver minimums; ``--torch``/``--variant`` filter, ``--json`` for the document.
* ``refresh``: reads PyPI (PEP 691) and PyTorch's index (PEP 503, one page per variant), merges
  what it read into the current copy (the valid refreshed copy in use, else the bundled data),
  validates and writes it atomically (``knowledge.refresh`` does all of it; this module is the
  CLI). Exit codes, chosen for CI:

  ==========================  =====================================================================
  refresh                     0 written, every page asked answered in full; 4 written from what
                              answered, but a page did not answer (HTTP error, deadline), was
                              refused (HTML where PEP 691 JSON was asked, another project's page,
                              a page cut short) or answered incompletely (a stale listing, a page
                              missing most of its rows): the rows those pages would have replaced
                              or removed are kept, each page listed; 3 nothing usable answered, or
                              no index could be reached (nothing written); 1 the live data did not
                              validate (nothing written)
  refresh --check             0 no drift; 1 drift (listed); 3 no index could be reached, or some
                              pages failed or were incomplete and no drift was seen in the rest
                              (the check is incomplete, so it can't say "no drift")
  ==========================  =====================================================================

  ``--timeout`` is one deadline for the whole refresh (default 180 s; one request gets at most
  20 s of it). Rows removed, rows kept, failed and incomplete pages are listed in the summary.

* ``arches WHEEL_OR_SO...``: the SASS and PTX architectures in the CUDA fat binaries of a library
  or of every library in a wheel (streamed from the zip); exit 2 on an unreadable file.

Progress (one line per index page) goes to stderr; stdout carries the result only. This module is
the CLI: ``decide.matrix_report`` builds what show and arches report, ``knowledge.refresh``
refreshes, ``setup_env.output.render_matrix`` renders every result as text or JSON.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from setup_env.exitcodes import ExitCode


def _flags(p: argparse.ArgumentParser) -> None:
    """Let `matrix show --json` work as well as `matrix --json show` (SUPPRESS: no override)."""
    p.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print a versioned JSON document",
    )
    p.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help="more detail")
    p.add_argument(
        "--no-color",
        dest="color",
        action="store_false",
        default=argparse.SUPPRESS,
        help="no ANSI colour",
    )


SHOW_CODES = "0 shown; 2 bad options, or the matrix file can't be read or is not valid."
REFRESH_CODES = (
    "0 written, every page asked answered in full; 4 written from what answered, but a\n"
    "page did not answer, was refused or answered incompletely (listed, their rows kept);\n"
    "3 nothing usable answered (nothing written); 1 the live data did not validate (nothing\n"
    "written);\n"
    "with --check: 0 no drift, 1 drift (listed), 3 the check is incomplete; 2 bad options."
)
ARCHES_CODES = "0 every file was read; 2 bad options, or a file is missing or unreadable."
ARCHES_EXAMPLES = (
    "  setup-env matrix arches torch-2.13.0-cp312-cp312-manylinux_2_28_x86_64.whl\n"
    "  setup-env matrix arches .venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so\n"
    "  setup-env matrix arches tests/fixtures/fatbin/libtiny.so     # from a checkout"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog

    epilog(
        parser,
        f"as for each action (`setup-env matrix ACTION --help`);\nshow: {SHOW_CODES}",
        "  setup-env matrix show --torch 2.13\n"
        "  setup-env matrix refresh --check\n"
        "  setup-env matrix arches tests/fixtures/fatbin/libtiny.so     # from a checkout",
    )
    sub = parser.add_subparsers(dest="matrix_command", metavar="ACTION")
    show = sub.add_parser(
        "show", help="print the wheel matrix in use", description="print the wheel matrix in use"
    )
    epilog(show, SHOW_CODES, "  setup-env matrix show --torch 2.13 --variant cu126")
    _flags(show)
    show.add_argument("--torch", metavar="VERSION", help="only this release (2.14 or 2.14.1)")
    show.add_argument("--variant", metavar="NAME", help="only this variant (cu126, rocm6.4, cpu)")
    show.add_argument("--file", metavar="PATH", help="show this matrix file instead")

    refresh = sub.add_parser(
        "refresh",
        help="rebuild releases/variants/tags from the live indexes",
        description="rebuild releases/variants/tags from the live indexes",
    )
    epilog(refresh, REFRESH_CODES, "  setup-env matrix refresh\n  setup-env matrix refresh --check")
    _flags(refresh)
    refresh.add_argument("--pypi-url", metavar="URL", help="PyPI simple API base URL")
    refresh.add_argument("--index-url", metavar="URL", help="PyTorch wheel index base URL")
    refresh.add_argument(
        "--variants", metavar="LIST", help="comma-separated variants to read (default: known+next)"
    )
    refresh.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="one deadline for the whole refresh (default 180)",
    )
    refresh.add_argument("--check", action="store_true", help="report drift, write nothing")
    refresh.add_argument("--output", metavar="FILE", help="write here instead of the user copy")

    arches = sub.add_parser(
        "arches",
        help="GPU architectures in a wheel's CUDA fat binaries",
        description="GPU architectures (SASS and PTX) in the CUDA fat binaries of a wheel or a "
        "shared library: which GPUs a build runs on",
    )
    epilog(arches, ARCHES_CODES, ARCHES_EXAMPLES)
    _flags(arches)
    arches.add_argument(
        "paths",
        nargs="+",
        metavar="WHEEL_OR_SO",
        help="a torch wheel (.whl, read as a zip) or a CUDA library (.so, .a); one or more",
    )


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "matrix_command", None)
    if action == "arches":
        return _arches(args)
    if action == "refresh":
        return _refresh(args)
    if action in (None, "show"):
        return _show(args)
    print(f"setup-env matrix: unknown action {action!r}", file=sys.stderr)
    return int(ExitCode.USAGE)


def _json(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "json", False))


def _style(args: argparse.Namespace) -> Any:
    from setup_env.output import render

    return render.Style(render.use_color(sys.stdout, args.color))


def _verbose(args: argparse.Namespace) -> int:
    return int(getattr(args, "verbose", 0) or 0)


def _arches(args: argparse.Namespace) -> int:
    from setup_env.decide.matrix_report import arches_payload
    from setup_env.output import render, render_matrix
    from setup_env.probe import fatbin

    files: list[fatbin.FileArches] = []
    errors: list[str] = []
    for path in args.paths:
        try:
            files += fatbin.read_path(path)
        except fatbin.FatbinError as exc:
            errors.append(str(exc))
    payload = arches_payload(files, errors)
    if _json(args) and errors:
        # Like every command's failure: the error envelope (exit 2), every unreadable file named.
        message = "; ".join(errors[:20]) + (
            f" (+{len(errors) - 20} more)" if len(errors) > 20 else ""
        )
        return render.fail("matrix arches", "bad-input", message, ExitCode.USAGE, True)
    if _json(args):
        print(render_matrix.json_doc("arches", payload))
    elif files:
        print(render_matrix.arches_text(payload, _style(args), _verbose(args)))
    for err in errors:
        render.log(f"setup-env matrix arches: {err}")
    return int(ExitCode.USAGE) if errors else int(ExitCode.OK)


def _show(args: argparse.Namespace) -> int:
    from setup_env.decide.matrix_report import show_payload
    from setup_env.knowledge import matrix
    from setup_env.output import render, render_matrix

    as_json = _json(args)
    try:
        m = matrix.load_matrix(getattr(args, "file", None))
    except matrix.MatrixError as exc:
        return render.fail("matrix show", "bad-input", str(exc), ExitCode.USAGE, as_json)
    torch, variant = getattr(args, "torch", None), getattr(args, "variant", None)
    try:
        payload = show_payload(m, torch, variant)
    except ValueError as exc:
        return render.fail("matrix show", "bad-input", str(exc), ExitCode.USAGE, as_json)
    for n in m.notes:
        render.log(f"note: {n}")
    if as_json:
        print(render_matrix.json_doc("show", payload))
    else:
        print(render_matrix.show_text(m, torch, variant, _style(args), _verbose(args)))
    return int(ExitCode.OK)


# --- refresh -------------------------------------------------------------------------------------


_URL = re.compile(r"https?://[A-Za-z0-9.\-\[\]:]+(?:/[A-Za-z0-9._~%+/-]*)?")


def _refresh(args: argparse.Namespace) -> int:
    import os

    from setup_env.knowledge import index, refresh
    from setup_env.output import render, render_matrix

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
    if args.output and not args.check:
        # Asked before any index is read: a path it can't write would throw the refresh away
        # (missing folders are fine: the refresh creates them).
        from setup_env import bounded

        try:
            bounded.check_writable(args.output, create_folders=True)
        except bounded.WriteFailed as exc:
            return usage(f"cannot write {args.output}: {exc.detail}")
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
    if as_json:
        print(render_matrix.json_doc("refresh", result.payload()))
    else:
        print(render_matrix.refresh_text(result))
    for n in result.notes:
        render.log(f"note: {n}")
    if getattr(args, "verbose", 0):
        for line in result.rejected[:50]:
            render.log(f"  rejected {line}")
    return result.code
