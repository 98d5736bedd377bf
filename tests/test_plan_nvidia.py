"""The NVIDIA branch (issue 22): how a chosen build's driver fit is said when the driver is known
only by the CUDA version it reports, and the driver a machine without one is told to install.
Described machines (``spec_facts``) against the bundled matrix."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Optional

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

M = mx.load_matrix(mx.BUNDLED_PATH)
V = Variant.parse


def plan(facts: Facts, **options: Any) -> Plan:
    return make_plan(facts, PlanOptions(**options), M)


def rtx4090(cuda_driver: Optional[str]) -> Facts:
    """An RTX 4090 whose driver version is unknown, known (if at all) by the CUDA version it
    reports (nvidia-smi's "CUDA Version", or cuDriverGetVersion, where no version was read)."""
    f = spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["RTX 4090"], driver="580.95.05")
    assert f.nvidia is not None
    nv = dataclasses.replace(f.nvidia, driver_version=None, cuda_driver_version=cuda_driver)
    return dataclasses.replace(f, nvidia=nv)


def test_a_driver_known_by_its_cuda_version_is_said_by_it_when_it_runs_the_build_fully() -> None:
    """CUDA 13.2 reported: torch 2.15.0's cu132 runs fully, and the reason names the driver by
    the CUDA it reports (no driver version to name)."""
    p = plan(rtx4090("13.2"))
    assert (p.torch_version, p.variant, p.driver_compat) == ("2.15.0", V("cu132"), "full")
    assert (
        "driver-full",
        "the NVIDIA driver for CUDA 13.2 supports CUDA 13.2 (needs >= 595.71.05)",
    ) in zip(p.reason_codes, p.reasons)
    assert "None" not in " ".join(p.reasons)


def test_a_driver_known_by_its_cuda_version_is_said_by_it_when_it_runs_the_build_by_mvc() -> None:
    """CUDA 13.0 reported: cu132 runs through minor-version compatibility; the warning names the
    driver by the CUDA it reports, never as "driver None", and the upgrade is offered."""
    p = plan(rtx4090("13.0"))
    assert (p.variant, p.driver_compat) == (V("cu132"), "mvc")
    assert p.warnings[p.warning_codes.index("driver-mvc")].startswith(
        "driver for CUDA 13.0 is older than CUDA 13.2.2's own driver (595.71.05); the wheel runs "
        "through CUDA minor-version compatibility (>= 580)"
    )
    assert [f.kind for f in p.fixes] == ["upgrade-driver"]


def test_without_a_driver_the_wheel_is_planned_with_the_driver_to_install() -> None:
    """No driver at all: cu132 is planned, with the driver to install first and the lower
    minor-version-compatibility floor that also serves."""
    p = plan(rtx4090(None))
    assert (p.variant, p.driver_compat) == (V("cu132"), "no-driver")
    assert list(zip(p.warning_codes, p.warnings)) == [
        ("driver-absent", "no NVIDIA driver was found: install one >= 595.71.05 before using this "
         "wheel (>= 580 also works, through CUDA minor-version compatibility)"),
    ]  # fmt: skip
    assert [f.kind for f in p.fixes] == ["upgrade-driver"]
    assert p.fixes[0].summary.startswith("Install the NVIDIA driver to >= 595.71.05")


def _cu130_ptx_only_past_sm90() -> mx.Matrix:
    """The bundled matrix, with one change: torch 2.14.1's cu130 build for Linux x86_64 compiled
    as CUDA 11-era builds were, SASS up to sm_90 and sm_90 PTX beside it (TORCH_CUDA_ARCH_LIST
    "...;9.0+PTX"): an RTX 5090 (sm_120) then runs it by PTX JIT only."""
    doc = json.loads(mx.BUNDLED_PATH.read_text(encoding="utf-8"))
    (row,) = [
        b
        for b in doc["builds"]
        if b["variant"] == "cu130"
        and "2.14.1" in b["releases"]
        and "linux_x86_64" in b["platforms"]
    ]
    row["sass"] = [a for a in row["sass"] if float(a) <= 9.0]
    row["ptx"] = ["9.0"]
    return mx.parse(doc)


def test_without_a_driver_a_gpu_on_ptx_is_told_the_full_driver_floor_only() -> None:
    """No driver, an RTX 5090 running torch 2.14.1's cu130 by PTX JIT: the driver to install is
    CUDA 13.0's own; minor-version compatibility runs no PTX, so no lower floor is offered."""
    f = spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["RTX 5090"], driver=None)
    p = make_plan(f, PlanOptions(torch="2.14.1"), _cu130_ptx_only_past_sm90())
    assert (p.variant, p.driver_compat) == (V("cu130"), "no-driver")
    assert "arch-ptx" in p.warning_codes
    assert p.warnings[p.warning_codes.index("driver-absent")] == (
        "no NVIDIA driver was found: install one >= 580.95.05 before using this wheel"
    )
    assert [f.kind for f in p.fixes] == ["upgrade-driver"]
    assert p.fixes[0].summary.startswith("Install the NVIDIA driver to >= 580.95.05 ")
