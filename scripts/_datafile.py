"""The tail every data generator shares: write the generated JSON, or with --check say whether
the committed file differs from what the sources give (exit 1), as CI runs it."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def write_or_check(out: Path, text: str, script: str, check: bool) -> int:
    if check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            print(f"{out} differs from what the sources give: run {script}", file=sys.stderr)
            return 1
        print(f"{out} is up to date")
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)  # never a half-written data file
    print(f"wrote {out} ({len(text)} bytes)")
    return 0
