"""Post-install verification: prove the installed torch works on this machine's devices.

The parent side (this package minus ``worker`` and ``dist_worker``) never imports torch; one
worker child imports it once and runs the checks (see ``runner``). Contract::

    run_verify(options: VerifyOptions, progress=None) -> VerifyReport
"""

from __future__ import annotations

from setup_env.act.smoke.runner import run_verify, selected_checks
from setup_env.decide.smoke_model import (
    CHECK_NAMES,
    CHECKS,
    CheckResult,
    CheckSpec,
    Status,
    VerifyOptions,
    VerifyReport,
)

__all__ = [
    "CHECKS",
    "CHECK_NAMES",
    "CheckResult",
    "CheckSpec",
    "Status",
    "VerifyOptions",
    "VerifyReport",
    "run_verify",
    "selected_checks",
]
