"""NVIDIA probe: parsers on real captured text (tests/fixtures/nvidia, sources in SOURCES.md)
and the fallback chain driven through a replayed host."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from setup_env.probe import nvidia
from setup_env.probe.host import ReplayHost

FIX = Path(__file__).parent / "fixtures" / "nvidia"
MIB = 1024 * 1024


def text(name: str) -> str:
    return (FIX / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "driver", "cuda", "gpus"),
    [
        ("h100-banner-590.48.01.txt", "590.48.01", "13.1", [("NVIDIA H100 80GB HBM3", 81559)]),
        (
            "rtx5090-rtx4090-banner-580.82.09.txt",
            "580.82.09",
            "13.0",
            [("NVIDIA GeForce RTX 5090", 32607), ("NVIDIA GeForce RTX 4090", 24564)],
        ),
        ("k80-banner-410.104.txt", "410.104", "10.0", [("Tesla K80", 11441)]),
        ("b200-banner-kmd-610.43.02.txt", "610.43.02", "13.3", [("NVIDIA B200", 183359)] * 2),
        ("rtx5070-cuda-na-575.64.03.txt", "575.64.03", None, [("NVIDIA GeForce RTX 5070", 12227)]),
        (
            "wsl2-rtx4070-banner-555.99.txt",
            "555.99",
            "12.5",
            [("NVIDIA GeForce RTX 4070 ...", 12282)],
        ),
    ],
)
def test_banner(name: str, driver: str, cuda: str | None, gpus: list[tuple[str, int]]) -> None:
    b = nvidia.parse_smi_banner(text(name))
    assert b["driver_version"] == driver
    assert b["cuda_version"] == cuda
    assert [(g["name"], g["memory_total"] // MIB) for g in b["gpus"]] == gpus
    assert [g["index"] for g in b["gpus"]] == list(range(len(gpus)))


def test_banner_details() -> None:
    h100 = nvidia.parse_smi_banner(text("h100-banner-590.48.01.txt"))["gpus"][0]
    assert h100["persistence_mode"] is True
    assert h100["mig_mode"] is False
    assert h100["ecc_uncorrected"] == 0
    assert h100["pci_bus_id"] == "00000000:00:09.0"
    win = nvidia.parse_smi_banner(text("windows-geforce-wddm-526.47.txt"))["gpus"][0]
    assert win["driver_model"] == "WDDM" and win["persistence_mode"] is None
    assert win["name_truncated"] is True
    na = nvidia.parse_smi_banner(text("rtx5070-cuda-na-575.64.03.txt"))
    assert na["cuda_na"] is True
    # WSL: nvidia-smi is the Linux build (545.46) but the driver is the Windows one.
    err = nvidia.parse_smi_banner(text("wsl2-rtx3060-cuda-err-546.80.txt"))
    assert (err["smi_version"], err["driver_version"], err["cuda_version"]) == (
        "545.46",
        "546.80",
        "ERR!",
    )


def test_smi_q_h100() -> None:
    q = nvidia.parse_smi_q(text("h100-q-590.48.01.txt"))
    assert (q["driver_version"], q["cuda_version"], q["attached"]) == ("590.48.01", "13.1", 1)
    (g,) = q["gpus"]
    assert g["name"] == "NVIDIA H100 80GB HBM3"
    assert g["pci_bus_id"] == "00000000:00:09.0"
    assert g["memory_total"] == 81559 * MIB
    assert (g["persistence_mode"], g["mig_mode"], g["ecc_uncorrected"]) == (True, False, 0)
    assert (g["pcie_gen_current"], g["pcie_gen_max"]) == (5, 5)
    assert (g["pcie_width_current"], g["pcie_width_max"]) == (16, 16)
    assert g["throttle_reasons"] == ("gpu_idle",)


def test_smi_q_truncated_is_partial_not_a_crash() -> None:
    full = text("h100-q-590.48.01.txt")
    cut = full[: full.index("    PCI\n")]
    q = nvidia.parse_smi_q(cut)
    assert q["gpus"][0]["name"] == "NVIDIA H100 80GB HBM3"
    assert "pcie_gen_max" not in q["gpus"][0]


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("mismatch-580.178.txt", "driver-library-mismatch"),
        ("couldnt-communicate-k80-510.txt", "driver-not-loaded"),
        ("wsl-couldnt-communicate.txt", "driver-not-loaded"),
        ("h100-banner-590.48.01.txt", None),
    ],
)
def test_failure(name: str, code: str | None) -> None:
    found = nvidia.failure(text(name))
    assert (found[0] if found else None) == code


def test_library_version_and_invalid_field() -> None:
    assert nvidia.library_version(text("mismatch-580.178.txt")) == "580.178"
    assert nvidia.invalid_field(text("invalid-field-cuda_version.txt")) == "cuda_version"
    assert nvidia.invalid_field(text("h100-banner-590.48.01.txt")) is None


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("proc-version-proprietary-580.173.02.txt", ("580.173.02", "proprietary")),
        ("proc-version-open-555.42.02.txt", ("555.42.02", "open")),
    ],
)
def test_proc_version(name: str, expected: tuple[str, str]) -> None:
    assert nvidia.parse_proc_version(text(name)) == expected


def test_proc_and_sys_garbage() -> None:
    assert nvidia.parse_proc_version("") == (None, None)
    assert nvidia.parse_sys_version("580.173.02\n") == "580.173.02"
    assert nvidia.parse_sys_version("garbage") is None


def test_query_csv_with_header_strips_units() -> None:
    # The header form of the real H100 capture's CSV (nvidia_gpu_exporter, same machine).
    csv_text = (
        "index, name, memory.total [MiB], persistence_mode, clocks_throttle_reasons.active\n"
        "0, NVIDIA H100 80GB HBM3, 81559 MiB, Enabled, 0x0000000000000001\n"
    )
    rows, problems = nvidia.parse_query_csv(csv_text)
    assert problems == []
    assert rows[0]["memory.total"] == "81559"
    assert nvidia.throttle_names(int(rows[0]["clocks_throttle_reasons.active"] or "0", 16)) == (
        "gpu_idle",
    )


def test_query_csv_truncated_row_is_a_problem() -> None:
    rows, problems = nvidia.parse_query_csv("0, NVIDIA H100", ["index", "name", "memory.total"])
    assert rows == [] and problems


def test_cuda_from_nvml() -> None:
    assert nvidia.cuda_from_nvml(12040) == "12.4"
    assert nvidia.cuda_from_nvml(13010) == "13.1"
    assert nvidia.cuda_from_nvml("12040") is None
    assert nvidia.cuda_from_nvml(True) is None


# --- the whole probe through a replayed host ----------------------------------------------


def make_host(
    tmp_path: Path, doc: dict[str, Any], files: dict[str, str] | None = None
) -> ReplayHost:
    for path, body in (files or {}).items():
        target = tmp_path / "files" / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    (tmp_path / "host.json").write_text(json.dumps(doc), encoding="utf-8")
    return ReplayHost(tmp_path)


QUERY = [
    "nvidia-smi",
    "--query-gpu=" + ",".join(nvidia.QUERY_FIELDS),
    "--format=csv,noheader,nounits",
]


def test_nothing_nvidia_is_none(tmp_path: Path) -> None:
    assert nvidia.detect(make_host(tmp_path, {})) == (None, [])


def test_old_driver_rejects_compute_cap_and_is_asked_again(tmp_path: Path) -> None:
    fields = [f for f in nvidia.QUERY_FIELDS if f != "compute_cap"]
    retry = ["nvidia-smi", "--query-gpu=" + ",".join(fields), "--format=csv,noheader,nounits"]
    # This exercises the retry chain, not the parser (tested on real text above): the rejection
    # is the real message with the field name changed, the row is assembled from the K80 values
    # of the real captures (name, bus id, 11441 MiB) with a driver that still served Kepler.
    row = (
        "0, Tesla K80, 00000000:00:04.0, GPU-x, 470.82.01, 11441, Enabled, [N/A], 0, "
        "3, 3, 16, 16, 0x0000000000000001"
    )
    doc = {
        "which": {"nvidia-smi": "nvidia-smi"},
        "commands": [
            {
                "argv": QUERY,
                "returncode": 2,
                "stdout": text("invalid-field-cuda_version.txt").replace(
                    "cuda_version", "compute_cap"
                ),
            },
            {"argv": retry, "returncode": 0, "stdout": row + "\n"},
        ],
    }
    info, notes = nvidia.detect(make_host(tmp_path, doc))
    assert info is not None and info.driver_version == "470.82.01"
    (g,) = info.gpus
    assert (g.name, g.compute_capability, g.memory_bytes) == ("Tesla K80", None, 11441 * MIB)
    assert (
        g.pci_bus_id == "0000:00:04.0"
        and g.mig_mode is None
        and g.throttle_reasons == ("gpu_idle",)
    )
    assert g.source == "nvidia-smi --query-gpu"
    assert "compute-capability-unreported" in {n.code for n in notes}


def test_hung_nvidia_smi_is_asked_once(tmp_path: Path) -> None:
    doc = {
        "which": {"nvidia-smi": "nvidia-smi"},
        "commands": [{"argv": QUERY, "returncode": None, "error": "timeout"}],
    }
    info, notes = nvidia.detect(make_host(tmp_path, doc))
    assert info is not None and info.gpus == ()
    assert [n.code for n in notes] == ["nvidia-smi-timeout"]


def test_garbled_query_output_falls_back_to_q(tmp_path: Path) -> None:
    doc = {
        "which": {"nvidia-smi": "nvidia-smi"},
        "commands": [
            {"argv": QUERY, "returncode": 0, "stdout": "0, NVIDIA H100 80GB HB"},
            {"argv": ["nvidia-smi", "-q"], "returncode": 0, "stdout": text("h100-q-590.48.01.txt")},
        ],
    }
    info, notes = nvidia.detect(make_host(tmp_path, doc))
    assert info is not None and info.gpus[0].name == "NVIDIA H100 80GB HBM3"
    assert info.cuda_driver_version == "13.1"
    assert "nvidia-smi-garbled" in {n.code for n in notes}


def test_empty_and_unreadable_proc(tmp_path: Path) -> None:
    info, notes = nvidia.detect(make_host(tmp_path, {}, {"/proc/driver/nvidia/version": ""}))
    assert info is not None and info.driver_version is None
    assert [n.code for n in notes] == ["nvidia-proc-garbled"]
    other = tmp_path / "other"
    other.mkdir()
    info, notes = nvidia.detect(make_host(other, {"unreadable": ["/proc/driver/nvidia/version"]}))
    assert info is not None and [n.code for n in notes] == ["nvidia-proc-unreadable"]


def test_sys_module_version_when_no_proc(tmp_path: Path) -> None:
    info, _ = nvidia.detect(make_host(tmp_path, {}, {"/sys/module/nvidia/version": "550.54.15\n"}))
    assert info is not None and info.driver_version == "550.54.15"
    assert info.sources["driver_version"] == "/sys/module/nvidia/version"


def test_env_overrides_and_bad_override(tmp_path: Path) -> None:
    doc = {
        "env": {
            "SETUP_ENV_CUDA_DRIVER_VERSION": "12.8",
            "SETUP_ENV_NVIDIA_DRIVER_VERSION": "x; rm",
        },
    }
    info, notes = nvidia.detect(
        make_host(
            tmp_path, doc, {"/proc/driver/nvidia/version": text("proc-version-open-555.42.02.txt")}
        )
    )
    assert info is not None
    assert (info.driver_version, info.cuda_driver_version) == ("555.42.02", "12.8")
    assert info.sources["cuda_driver_version"] == "env:SETUP_ENV_CUDA_DRIVER_VERSION"
    assert info.kernel_module == "open"
    assert [n.code for n in notes] == ["bad-override"]


def test_nvml_snapshot(tmp_path: Path) -> None:
    # The snapshot format of nvml_live.snapshot(); values are those of the real H100 capture.
    snap = {
        "driver_version": "590.48.01",
        "cuda_driver_version": 13010,
        "gpus": [
            {
                "index": 0,
                "name": "NVIDIA H100 80GB HBM3",
                "compute_capability": [9, 0],
                "memory_total": 81559 * MIB,
                "pci_bus_id": "00000000:00:09.0",
                "mig_mode": 0,
                "persistence_mode": 1,
                "ecc_uncorrected_volatile": 0,
                "pcie_gen_current": 5,
                "pcie_gen_max": 5,
                "pcie_width_current": 16,
                "pcie_width_max": 16,
                "clocks_event_reasons": 1,
            }
        ],
    }
    info, notes = nvidia.detect(make_host(tmp_path, {"nvml": snap}))
    assert info is not None and notes == []
    assert (info.driver_version, info.cuda_driver_version) == ("590.48.01", "13.1")
    (g,) = info.gpus
    assert (g.compute_capability, g.mig_mode, g.persistence_mode, g.source) == (
        "9.0",
        False,
        True,
        "nvml",
    )


def test_nvml_mismatch_is_a_finding(tmp_path: Path) -> None:
    snap = {
        "error": "RM has detected an NVML/RM version mismatch.",
        "code": "driver-library-mismatch",
    }
    info, notes = nvidia.detect(make_host(tmp_path, {"nvml": snap}))
    assert info is not None and info.error is not None and "mismatch" in info.error
    assert [n.severity for n in notes] == ["error"]


def test_unknown_gpu_name_is_a_note(tmp_path: Path) -> None:
    banner = text("h100-banner-590.48.01.txt").replace(
        "NVIDIA H100 80GB HBM3", "NVIDIA Zorblax 9000  "
    )
    doc = {
        "which": {"nvidia-smi": "nvidia-smi"},
        "commands": [{"argv": ["nvidia-smi"], "stdout": banner}],
    }
    info, notes = nvidia.detect(make_host(tmp_path, doc))
    assert info is not None and info.gpus[0].name == "NVIDIA Zorblax 9000"
    assert "gpu-unknown" in {n.code for n in notes}


@pytest.mark.gpu
def test_live_nvml_snapshot_on_a_gpu_machine() -> None:
    from setup_env.probe import nvml_live

    snap = nvml_live.snapshot()
    if snap.get("code") in ("library-not-found", "driver-not-loaded", "not-installed"):
        pytest.skip("no NVIDIA GPU here")
    assert snap["gpus"] and all("name" in g for g in snap["gpus"])
