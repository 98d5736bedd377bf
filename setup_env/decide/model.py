"""What the deciders answer, as data: the types every decider returns and every renderer reads.

* :class:`Plan` (with its ranked :class:`Fix` list) and :class:`PlanOptions`, the planner's;
* :class:`Finding`, the doctor's, the root causes' and the verdict's;
* the few rules over facts that several deciders share: the wheel platform of a machine, whose
  driver numbering applies, the plan's command as a fix (``install_command``).

Pure: nothing here reads the machine or prints. Deciders and renderers import this module; it
imports only the facts and the knowledge below it.
"""

from __future__ import annotations

import re
from typing import Literal, Optional

from setup_env._record import Record, field, record
from setup_env.facts import Facts, Severity
from setup_env.knowledge.variant import Variant

Installer = Literal["pip", "uv", "uv-project", "poetry", "requirements"]


Channel = Literal["stable", "nightly"]


INSTALLERS: tuple[str, ...] = ("pip", "uv", "uv-project", "poetry", "requirements")


CHANNELS: tuple[str, ...] = ("stable", "nightly")


COMPANIONS: tuple[str, ...] = ("torchvision", "torchaudio")


class PlanError(ValueError):
    """Bad planning input (an option, a spec); the message is one line for the user."""


@record
class PlanOptions(Record):
    """What the user asked the planner for: torch pin, variant, packages, channel, installer."""

    torch: str | None = None  # pin, e.g. "2.13.0" or "2.13"
    variant: str | None = None  # as typed: "cpu", "cu130", "rocm7.2", "xpu", "mps" (check_options)
    with_packages: tuple[str, ...] = ()  # ("torchvision", "torchaudio")
    channel: Channel = "stable"
    installer: Installer = "pip"
    index_url: str | None = None  # internal mirror replacing https://download.pytorch.org/whl


@record
class Fix(Record):
    """One way out, ranked: 1 is what an expert would try first."""

    rank: int
    kind: str  # "upgrade-driver" | "pin-torch" | "change-python" | "build-from-source" | "cpu" ...
    summary: str
    command: str | None = None


@record
class Plan(Record):
    """The planner's answer: which torch build to install and the command that installs it."""

    status: Literal["ok", "fallback", "none"]  # fallback: only a CPU build or an older torch fits
    torch_version: str | None = None
    variant: Variant | None = None  # cu130, cpu, rocm7.2, xpu, mps ... (JSON: the label)
    index_url: str | None = None  # None: plain PyPI
    requirements: tuple[str, ...] = ()  # ("torch==2.15.0", "torchvision==0.30.0")
    argv: tuple[str, ...] = ()  # the install command as argv, for `setup-env install`
    command: str = ""  # the same, quoted for a shell, for people
    config: str | None = None  # uv-project / poetry: the pyproject snippet
    reasons: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    fixes: tuple[Fix, ...] = ()
    min_driver: str | None = None  # what the chosen wheel needs from the NVIDIA driver
    details: dict[str, str] = field(default_factory=dict)
    # Added by the planner issue (defaults keep the contract):
    platform: str | None = None  # "linux_x86_64" ...
    cuda: str | None = None  # CUDA of the chosen wheel, "13.0"
    driver_compat: str | None = None  # "full" | "mvc" | "no-driver" | None (not CUDA)
    newest_torch: str | None = None  # the newest release in the matrix (for the channel)
    source: str = "pypi"  # "pypi" | "index" | "mirror" | "nightly" | "jetson" | ""
    # Stable codes of the reasons and warnings, in the same order ("driver-mvc", "arch-missing"...)
    reason_codes: tuple[str, ...] = ()
    warning_codes: tuple[str, ...] = ()


# --- findings --------------------------------------------------------------------------------


@record
class Finding(Record):
    """One problem (or note) doctor found in an environment, with its fix."""

    code: str  # stable id: "cpu-build-on-gpu", "cuda-newer-than-driver", ...
    severity: Severity
    title: str
    evidence: tuple[str, ...] = ()
    fix: Optional[str] = None  # what to do, in words
    command: Optional[str] = None  # the exact command, when one does it
    details: dict[str, str] = field(default_factory=dict)


# --- rules several deciders share ------------------------------------------------------------


def wheel_platform(facts: Facts) -> str:
    """The wheel platform of these facts: linux_x86_64, windows_x86_64, macos_arm64 ... The
    interpreter's machine first (the installed wheel is the interpreter's: x86_64 under Rosetta),
    x86_64 when nothing says; an unknown OS is judged as Linux."""
    from setup_env.knowledge.tags import platform_key

    arch = facts.python.machine or facts.cpu.architecture or "x86_64"
    return platform_key(facts.os.family, arch) or platform_key("linux", arch) or "linux_x86_64"


def driver_os(facts: Facts) -> str:
    """Whose driver numbering applies (:attr:`setup_env.facts.OSInfo.driver_os`)."""
    return facts.os.driver_os


def install_command(plan: Optional[Plan], reinstall: bool) -> Optional[str]:
    """The plan's command; with ``reinstall`` the installed torch is removed first, since pip
    counts ``2.13.0+cpu`` as satisfying ``torch==2.13.0`` and would keep it."""
    command = plan.command if plan is not None else ""
    if not command or plan is None or plan.status == "none":
        return None
    if reinstall and re.match(r"^(python3? -m pip|pip3?|uv pip) install ", command):
        prefix = command.split(" install ", 1)[0]
        return f"{prefix} uninstall -y torch torchvision torchaudio && {command}"
    return command
