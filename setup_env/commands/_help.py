"""What every command's ``--help`` ends with: its exit codes (and examples, where given)."""

from __future__ import annotations

import argparse

# Every command can end this way as well; said once here, after each command's own codes.
COMMON = "3 also: setup-env itself failed (internal error, please report it); 130 interrupted."


def epilog(parser: argparse.ArgumentParser, codes: str, examples: str = "") -> None:
    """End ``parser``'s help with ``examples`` (lines kept as written) and ``codes``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    head = f"examples:\n{examples.rstrip()}\n\n" if examples else ""
    parser.epilog = f"{head}exit codes: {codes.strip()}\n{COMMON}\n"
