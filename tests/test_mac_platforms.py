"""Our macOS platform tags are packaging's, less the legacy i386/fat/intel spellings that no torch
wheel uses and that changed between packaging releases (26.2 'fat32', 26.4 'fat3')."""

from __future__ import annotations

import pytest
from packaging import tags

from setup_env.probe.interp import mac_platforms


@pytest.mark.parametrize(
    ("major", "minor", "arch"),
    [(15, 1, "arm64"), (14, 4, "arm64"), (11, 0, "arm64"), (13, 6, "x86_64"), (10, 15, "x86_64")],
)
def test_mac_platforms_match_packaging(major: int, minor: int, arch: str) -> None:
    theirs = [
        t
        for t in tags.mac_platforms((major, minor), arch)
        if t.endswith((f"_{arch}", "_universal2"))
    ]
    assert mac_platforms(major, minor, arch) == theirs
