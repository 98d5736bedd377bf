"""Input normalisation for pasted text: its encoding (UTF-8 with or without a BOM, UTF-16 as
PowerShell's ``>`` writes it), terminal control characters, and Markdown reply quoting."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]*)+")
# The timestamp a GitHub Actions log puts before each line ("2026-05-16T15:56:05.8600560Z ").
_LOG_STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z ")


def _clean_line(raw: str) -> str:
    """One pasted line without its end, a CI log's timestamp and Markdown reply quoting ("> ",
    "> > ", ">x"). Linear in the line's length."""
    line = raw.rstrip()  # the line end is whitespace too
    if line[:2] == "20":
        line = _LOG_STAMP.sub("", line)  # anchored: one match at most, as _QUOTE's
    return _QUOTE.sub("", line)


def decode(data: bytes) -> str:
    """Text from the bytes of a pasted report: UTF-8 (with or without a BOM), or UTF-16 with a
    BOM or without one (PowerShell's ``>`` writes UTF-16 LE). Undecodable bytes become U+FFFD."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    head = data[:4096]
    if len(head) >= 4:
        # ASCII text in UTF-16 has a NUL in every other byte; the other side has one only for a
        # character whose low byte is 0 (Chinese lscpu's 最 is U+6700), never as many.
        odd_bytes, even_bytes = head[1::2], head[0::2]
        odd, even = odd_bytes.count(0), even_bytes.count(0)
        if odd > len(odd_bytes) * 0.4 and even * 4 < odd:
            return data.decode("utf-16-le", errors="replace")
        if even > len(even_bytes) * 0.4 and odd * 4 < even:
            return data.decode("utf-16-be", errors="replace")
    return data.decode("utf-8", errors="replace")
