"""The bytes of a pasted report as text (setup_env/probe/report/normalise.py), issue 22: UTF-8
with or without a byte-order mark, UTF-16 with one or without (PowerShell's ``>``), and bytes that
do not decode kept as U+FFFD, never an error. Each case is a real report, encoded as it arrives."""

from __future__ import annotations

from pathlib import Path

import pytest

from setup_env.probe.report import parse
from setup_env.probe.report.normalise import decode

REPORTS = Path(__file__).parent / "fixtures" / "collect_env"
BAD = "\ufffd"


def _report(name: str = "linux-centos9-7x-rtx4090-chinese-lscpu.txt") -> str:
    return (REPORTS / name).read_text(encoding="utf-8")


def _chinese_with_max_mhz() -> str:
    """The Chinese-locale report (vllm#13980), which the capture cuts in lscpu's BIOS lines, with
    the line zh_CN lscpu prints a little further on added: its 最 is U+6700, a character whose
    UTF-16 low byte is 0."""
    return _report() + "\nCPU 最大 MHz：                        3700.0000\n"


@pytest.mark.parametrize("bom", [b"\xef\xbb\xbf", b""], ids=["bom", "no-bom"])
def test_utf8_with_or_without_its_mark_and_a_bad_byte_kept_as_fffd(bom: bytes) -> None:
    text = _report()
    data = bom + text.encode("utf-8")
    assert decode(data) == text
    cut = bom + text.encode("utf-8") + b"\xff tail"  # a byte UTF-8 has no use for
    assert decode(cut) == text + BAD + " tail"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_with_its_mark_and_an_odd_last_byte_kept_as_fffd(codec: str) -> None:
    text = _report()
    bom = "\ufeff".encode(codec)
    assert decode(bom + text.encode(codec)) == text
    assert decode(bom + text.encode(codec) + b"\x41") == text + BAD


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_mark_is_told_by_its_nuls(codec: str) -> None:
    text = _chinese_with_max_mhz()
    assert decode(text.encode(codec)) == text
    assert decode(text.encode(codec) + b"\x41") == text + BAD
    # and parses as the same report
    assert parse(decode(text.encode(codec))) == parse(text)


def test_a_character_with_a_zero_low_byte_does_not_hide_utf16() -> None:
    """最 (U+6700) puts a NUL on the other side of each pair than ASCII does: a few of those,
    beside the ASCII text's many, still read as UTF-16."""
    text = _chinese_with_max_mhz()
    assert "最" in text and "\u6700" == "最"
    data = ("最" * 10 + text).encode("utf-16-le")
    assert decode(data) == "最" * 10 + text


def test_two_characters_are_enough_to_tell_utf16_and_one_and_a_half_are_not() -> None:
    assert decode("ab".encode("utf-16-le")) == "ab"
    assert decode("ab".encode("utf-16-be")) == "ab"
    assert decode(b"a\x00b") == "a\x00b"  # three bytes: taken as UTF-8 (NUL and all)


def test_more_than_40_percent_nuls_on_one_side_is_utf16_and_exactly_40_is_not() -> None:
    """Five pairs: three of them ASCII (a NUL each) is UTF-16; two of them is not."""
    three = "a中bc字"  # 61 00 | 2d 4e | 62 00 | 63 00 | 57 5b
    assert decode(three.encode("utf-16-le")) == three
    assert decode(three.encode("utf-16-be")) == three
    two = "a中b文字"  # 61 00 | 2d 4e | 62 00 | 87 65 | 57 5b
    data = two.encode("utf-16-le")
    assert decode(data) == data.decode("utf-8", errors="replace") != two
    data = two.encode("utf-16-be")
    assert decode(data) == data.decode("utf-8", errors="replace") != two


def test_nuls_on_both_sides_in_like_numbers_are_not_utf16() -> None:
    """A NUL-padded binary header (four zero bytes a pair) is not text of either order."""
    data = b"\x00\x00" * 8 + b"text"
    assert decode(data) == data.decode("utf-8")


def test_only_the_first_4096_bytes_are_looked_at() -> None:
    """820 NULs on the odd side of the first 2048 pairs, 204 on the even side: just UTF-16 LE
    (820 > 40% of 2048, 4 x 204 < 820). One more even NUL at byte 4096 is past the look."""
    pairs = [b"\x00\x00"] * 204 + [b"a\x00"] * 616 + [b"ab"] * 1228
    head = b"".join(pairs)
    assert len(head) == 4096
    data = head + b"\x00a"
    assert decode(data) == data.decode("utf-16-le", errors="replace")


def test_nuls_on_the_other_side_must_number_under_a_quarter_of_the_first() -> None:
    """Ten pairs, eight with a NUL on one side: two on the other side too (exactly a quarter) is
    not UTF-16, one is; on the big-endian side nine against two is."""
    le = b"\x00\x00" * 2 + b"a\x00" * 6 + b"ab" * 2  # odd side 8, even side 2
    assert decode(le) == le.decode("utf-8", errors="replace")
    be = b"\x00\x00" * 2 + b"\x00a" * 6 + b"ab" * 2  # even side 8, odd side 2
    assert decode(be) == be.decode("utf-8", errors="replace")
    le1 = b"\x00\x00" + b"a\x00" * 7 + b"ab" * 2  # odd side 8, even side 1
    assert decode(le1) == le1.decode("utf-16-le", errors="replace")
    be9 = b"\x00\x00" * 2 + b"\x00a" * 7 + b"ab"  # even side 9, odd side 2
    assert decode(be9) == be9.decode("utf-16-be", errors="replace")
