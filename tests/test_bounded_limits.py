"""The one door's limits and text rules, each at exactly the limit and one past it (issue 22)."""

from __future__ import annotations

import pytest

from setup_env import bounded


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("plain", "plain"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x1b[2J", "\\x1b[2J"),
        ("\x85", "\\x85"),
        ("line\u2028sep", "line\\u2028sep"),
        ("tag\U000e0001", "tag\\U000e0001"),  # \u0e0001 would read back as U+E000 and "1"
    ],
)
def test_one_line_escapes_what_is_not_printable(text: str, shown: str) -> None:
    assert bounded.one_line(text) == shown


def test_one_line_cuts_at_exactly_the_limit() -> None:
    assert bounded.one_line("x" * 10, 10) == "x" * 10
    assert bounded.one_line("x" * 11, 10) == "x" * 10 + "…"
    # an escape counts with its full length and is never cut in half
    assert bounded.one_line("x" * 8 + "\n", 10) == "x" * 8 + "\\n"
    assert bounded.one_line("x" * 9 + "\n", 10) == "x" * 9 + "…"
