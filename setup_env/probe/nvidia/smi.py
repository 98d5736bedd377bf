"""Running nvidia-smi: where it lives, its timeout, and the chain of its outputs
(``--query-gpu``, asked again without a field an old driver rejects, then ``-q``, then the plain
table)."""

from __future__ import annotations

import re
from typing import Any, Optional

from setup_env.probe.host import CommandResult, Host
from setup_env.probe.nvidia.gather import _CUDA, _Acc, _gpu, _ver
from setup_env.probe.nvidia.smi_text import (
    QUERY_FIELDS,
    _flag,
    _hex,
    _int,
    _mib,
    failure,
    invalid_field,
    library_version,
    parse_query_csv,
    parse_smi_banner,
    parse_smi_q,
    throttle_names,
)

SMI_TIMEOUT = 10.0

SMI_CANDIDATES: tuple[str, ...] = (
    "/usr/lib/wsl/lib/nvidia-smi",
    "C:\\Windows\\System32\\nvidia-smi.exe",
    "C:\\Program Files\\NVIDIA Corporation\\NVSMI\\nvidia-smi.exe",
)


def _find_smi(host: Host) -> Optional[str]:
    override = host.env("SETUP_ENV_NVIDIA_SMI")
    if override:
        return override
    for name in ("nvidia-smi", "nvidia-smi.exe"):
        found = host.which(name)
        if found:
            return found
    for path in SMI_CANDIDATES:
        if host.exists(path):
            return path
    return None


def _timeout(host: Host, acc: _Acc) -> float:
    raw = host.env("SETUP_ENV_NVIDIA_SMI_TIMEOUT")
    if raw is None:
        return SMI_TIMEOUT
    try:
        value = float(raw)
        if 0 < value <= 600:
            return value
    except ValueError:
        pass
    acc.note(
        "bad-override",
        f"SETUP_ENV_NVIDIA_SMI_TIMEOUT={raw[:40]!r} is not a number of seconds (0-600); "
        f"using {SMI_TIMEOUT:g}",
        "env:SETUP_ENV_NVIDIA_SMI_TIMEOUT",
    )
    return SMI_TIMEOUT


def _smi_checked(res: CommandResult, acc: _Acc, label: str) -> Optional[str]:
    """The output of a finished nvidia-smi, or None after recording why it is unusable."""
    text = f"{res.stdout}\n{res.stderr}"
    bad = failure(text)
    if bad is not None:
        acc.fail(bad[0], bad[1], label, bad[2])
        acc.set("library_version", library_version(text), label)
        return None
    if res.error is not None or res.returncode != 0:
        return None
    if not res.stdout.strip():
        acc.note("nvidia-smi-empty", f"`{label}` printed nothing", label)
        return None
    return res.stdout


def _from_smi(host: Host, smi: str, acc: _Acc) -> None:
    timeout = _timeout(host, acc)
    fields = list(QUERY_FIELDS)
    label = "nvidia-smi --query-gpu"
    for _ in range(4):  # at most three rejected fields
        argv = [smi, "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
        res = host.run(argv, timeout)
        if res.error == "timeout":
            acc.seen = True
            acc.note("nvidia-smi-timeout", res.describe(), label)
            return  # a hung driver hangs the next call too
        bad_field = invalid_field(f"{res.stdout}\n{res.stderr}")
        if bad_field is not None and bad_field in fields and res.returncode != 0:
            fields.remove(bad_field)
            if bad_field == "compute_cap":
                acc.note(
                    "compute-capability-unreported",
                    "this driver's nvidia-smi has no compute_cap field (drivers before 510); "
                    "the compute capability is resolved from the GPU catalogue by name",
                    label,
                    "info",
                )
            continue
        if res.error == "not-found":
            break
        acc.seen = True
        out = _smi_checked(res, acc, label)
        if out is None:
            if acc.error is not None:
                return
            acc.note("nvidia-smi-failed", res.describe(), label)
            break
        rows, problems = parse_query_csv(out, fields)
        for p in problems:
            acc.note("nvidia-smi-garbled", f"{label}: {p}", label)
        for row in rows:
            acc.set("driver_version", _ver(row.get("driver_version")), label)
            cc = row.get("compute_cap")
            acc.gpus.append(
                _gpu(
                    {
                        "index": _int(row.get("index")),
                        "name": row.get("name"),
                        "compute_capability": cc if cc and re.match(r"^\d+\.\d$", cc) else None,
                        "memory_total": _mib(row.get("memory.total")),
                        "pci_bus_id": row.get("pci.bus_id"),
                        "uuid": row.get("uuid"),
                        "persistence_mode": _flag(row.get("persistence_mode")),
                        "mig_mode": _flag(row.get("mig.mode.current")),
                        "ecc_uncorrected": _int(row.get("ecc.errors.uncorrected.volatile.total")),
                        "pcie_gen_current": _int(row.get("pcie.link.gen.current")),
                        "pcie_gen_max": _int(row.get("pcie.link.gen.max")),
                        "pcie_width_current": _int(row.get("pcie.link.width.current")),
                        "pcie_width_max": _int(row.get("pcie.link.width.max")),
                        "throttle_reasons": throttle_names(
                            _hex(row.get("clocks_throttle_reasons.active"))
                        ),
                    },
                    label,
                )
            )
        if rows:
            return
        if not problems:
            acc.note("nvidia-smi-garbled", f"{label}: no GPU rows in the output", label)
        break
    # The query did not run or gave nothing: the full report, then the plain table.
    label = "nvidia-smi -q"
    res = host.run([smi, "-q"], timeout)
    if res.error == "timeout":
        acc.seen = True
        acc.note("nvidia-smi-timeout", res.describe(), label)
        return
    if res.error != "not-found":
        acc.seen = True
        out = _smi_checked(res, acc, label)
        if acc.error is not None:
            return
        if out is not None:
            q = parse_smi_q(out)
            acc.set("driver_version", _ver(q.get("driver_version")), label)
            acc.set("cuda_driver_version", _cuda(q.get("cuda_version"), acc, label), label)
            for g in q["gpus"]:
                acc.gpus.append(_gpu(g, label))
            attached = q.get("attached")
            if isinstance(attached, int) and attached != len(q["gpus"]):
                acc.note(
                    "nvidia-smi-garbled",
                    f"{label}: {attached} GPUs attached but {len(q['gpus'])} described "
                    "(truncated output?)",
                    label,
                )
            if q["gpus"] or q.get("driver_version"):
                _cc_unreported(acc, label)
                return
            acc.note("nvidia-smi-garbled", f"{label}: no driver or GPU in the output", label)
        else:
            acc.note("nvidia-smi-failed", res.describe(), label)
    label = "nvidia-smi"
    res = host.run([smi], timeout)
    if res.error == "timeout":
        acc.seen = True
        acc.note("nvidia-smi-timeout", res.describe(), label)
        return
    if res.error == "not-found":
        return
    acc.seen = True
    out = _smi_checked(res, acc, label)
    if out is None:
        if acc.error is None:
            acc.note("nvidia-smi-failed", res.describe(), label)
        return
    b = parse_smi_banner(out)
    if b.get("driver_version") is None and not b["gpus"]:
        acc.note("nvidia-smi-garbled", f"`{label}`: no driver version or GPU table found", label)
        return
    acc.set("driver_version", _ver(b.get("driver_version")), label)
    acc.set("cuda_driver_version", _cuda(b.get("cuda_version"), acc, label), label)
    if b.get("cuda_na"):
        acc.note(
            "cuda-version-na",
            "nvidia-smi reports `CUDA Version: N/A`: the CUDA driver library (libcuda) was not "
            "found next to the driver, so CUDA programs (torch included) cannot use the GPU",
            label,
        )
    for g in b["gpus"]:
        if g.get("name_truncated"):
            acc.note(
                "gpu-name-truncated",
                f"GPU {g['index']}: nvidia-smi cut the name to {g['name']!r}; "
                "the model is not known from this source",
                label,
            )
            g = {**g, "name": None}
        acc.gpus.append(_gpu(g, label))
    _cc_unreported(acc, label)


def _cc_unreported(acc: _Acc, label: str) -> None:
    if acc.gpus and all(g.compute_capability is None for g in acc.gpus):
        acc.note(
            "compute-capability-unreported",
            f"`{label}` does not report compute capability; it is resolved from the GPU "
            "catalogue by name",
            label,
            "info",
        )


def _cuda(value: Any, acc: _Acc, label: str) -> Optional[str]:
    if value is None:
        return None
    v = str(value).strip()
    if _CUDA.match(v):
        return v
    acc.note("nvidia-smi-garbled", f"`{label}`: CUDA Version {v[:20]!r} is not X.Y", label)
    return None
