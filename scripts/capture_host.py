#!/usr/bin/env python3
"""Kept for old instructions and scripts/device_check.sh: the capture is ``setup-env capture``
(setup_env/act/capture.py, setup_env/commands/capture.py), installed with the package.

    python scripts/capture_host.py OUT_DIR            # = setup-env capture OUT_DIR
    python scripts/capture_host.py --expected DIR     # = setup-env capture --expected DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

try:
    import setup_env  # noqa: F401  (installed, or run from a checkout below)
except ImportError:
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from setup_env.cli import main

if __name__ == "__main__":
    raise SystemExit(main(["capture", *sys.argv[1:]]))
