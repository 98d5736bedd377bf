"""Stable process exit codes, one enum for every command."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    CHECK_FAILED = 1  # a check failed, an error-level finding, drift found, nothing fits
    USAGE = 2  # bad command line or bad input file
    UNEXAMINABLE = 3  # the environment (or an index) could not be examined; an internal error
    PARTIAL = 4  # matrix refresh wrote what answered, but a page asked did not answer, was
    # refused or answered incompletely: the rows those pages would have changed are kept (listed)
    INTERRUPTED = 130
