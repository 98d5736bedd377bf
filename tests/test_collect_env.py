"""The collect_env parser on real reports (tests/fixtures/collect_env/, each with a .source file
naming where it was copied from). Expected values are what a person reads in each report."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from setup_env.facts import Facts
from setup_env.knowledge.variant import Variant
from setup_env.probe.report import CollectEnvError, parse, read_messages

FIXTURES = Path(__file__).parent / "fixtures" / "collect_env"
REPORTS = sorted(FIXTURES.glob("*.txt"))


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


# name -> what the report says (None: the report doesn't say).
EXPECTED: dict[str, dict[str, Any]] = {
    "debian12-cpu-torch2.13.txt": dict(
        family="linux", distro="debian", glibc="2.36", python="3.11.7", machine="x86_64",
        torch="2.13.0+cpu", variant="cpu", cuda=None, driver=None, gpus=[], toolkit="13.0",
        cuda_available=False, truncated=False, cpu="AMD EPYC",
    ),
    "linux-h100-cu130-driver570.txt": dict(
        family="linux", distro="ubuntu", glibc="2.35", python="3.10.12", machine="x86_64",
        torch="2.9.0", variant="cu130", cuda="13.0", driver="570.172.08",
        gpus=["NVIDIA H100 80GB HBM3"], toolkit="13.0", cuda_available=True, truncated=False,
        cpu="Intel(R) Xeon(R) Platinum 8462Y+", cudnn="9.13.0",
        companions={"torchvision": "0.24.0", "torchaudio": "2.9.0"},
    ),
    "linux-4x-h100-mig-details.txt": dict(
        family="linux", distro="rocky", glibc="2.28", python="3.11.5", machine="x86_64",
        torch="2.4.0+cu121", variant="cu121", cuda="12.1", driver=None,
        gpus=["NVIDIA H100"] * 4, mig=[2], toolkit=None, cuda_available=True, truncated=True,
    ),
    "linux-8x-titanxp-torch1.3-old.txt": dict(
        family="linux", distro="ubuntu", python="3.6", torch="1.3.1", variant="cu101",
        cuda="10.1.243", driver="410.48", gpus=["TITAN Xp"] * 8, toolkit="10.0",
        cuda_available=False, truncated=True,
    ),
    "windows11-gtx1050ti-cu117.txt": dict(
        family="windows", windows_build="10.0.22621", python="3.9.16", machine="AMD64",
        torch="2.0.1+cu117", variant="cu117", cuda="11.7", driver="535.98",
        gpus=["NVIDIA GeForce GTX 1050 Ti"], toolkit="11.7", cudnn="8", cuda_available=True,
        truncated=True, cpu="Intel(R) Core(TM) i7-10700 CPU @ 2.90GHz",
        companions={"torchvision": "0.15.2", "torchaudio": "2.0.2+cu117"},
    ),
    "windows10-cpu-build-rtx-truncated.txt": dict(
        family="windows", windows_build="10.0.19042", python="3.9.5", machine="AMD64",
        torch="1.10.0", variant="cpu", cuda=None, gpus=["NVIDIA GeForce RTX"], toolkit="11.5",
        cuda_available=False, truncated=True,
    ),
    "windows-rocm-gfx1201.txt": dict(
        family="windows", windows_build="10.0.26200", python="3.12.12", machine="AMD64",
        torch="2.9.1+rocmsdk20260116", hip="7.2.26024-f6f897bd3d", gpus=[],
        amd=[("AMD Radeon AI PRO R9700", "gfx1201")], rocm="7.2", cuda_available=True,
        truncated=False,
    ),
    "wsl-rocm-rx6800xt.txt": dict(
        family="linux", distro="ubuntu", wsl=2, glibc="2.35", python="3.10.12",
        torch="2.1.2+rocm6.1.3", variant="rocm6.1.3", hip="6.1.40093-bd86f1708", gpus=[],
        # gfx1030: the report names no gfx id; the resolve step fills it from the AMD catalogue.
        amd=[("AMD Radeon RX 6800 XT", "gfx1030")], rocm="6.1", cuda_available=True,
        truncated=True,
    ),
    "macos13-m2max-torch2.10dev.txt": dict(
        family="darwin", macos="13.7.4", python="3.11.9", machine="arm64",
        torch="2.10.0.dev20251008", cuda=None, gpus=[], cpu="Apple M2 Max",
        cuda_available=False, truncated=False, rosetta=None,
        companions={"torchvision": "0.25.0.dev20251008", "torchaudio": "2.8.0.dev20251008"},
    ),
    "macos12-m1-torch1.13dev.txt": dict(
        family="darwin", macos="12.2.1", python="3.9.12", machine="arm64",
        torch="1.13.0.dev20220525", gpus=[], cuda_available=False, truncated=False,
    ),
    "macos14-x86_64-email-reply.txt": dict(
        family="darwin", macos="14.5", python="3.10.13", machine="x86_64", torch="2.2.2",
        gpus=[], cpu="Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz", cuda_available=False,
        truncated=False, rosetta=None,
    ),
    "macos11-x86_64-torch1.8dev-old.txt": dict(
        family="darwin", macos="11.0", python="3.8", machine="x86_64",
        # Cut inside a conda line ("numpy 1.18.5 p"), which still looks like a whole line.
        torch="1.8.0.dev20201117", gpus=[], cuda_available=False, truncated=False,
    ),
}  # fmt: skip


def test_every_report_has_an_expectation_and_a_source() -> None:
    assert len(REPORTS) >= 9
    # The reports added for issue 10 carry their expectations in EXPECTED.json
    # (tests/test_real_reports.py).
    more = json.loads((FIXTURES / "EXPECTED.json").read_text(encoding="utf-8"))
    assert {p.name for p in REPORTS} == set(EXPECTED) | {k for k in more if not k.startswith("_")}
    for report in REPORTS:
        source = report.with_name(report.name + ".source").read_text(encoding="utf-8")
        assert source.startswith("SOURCE: ")
        assert "https://github.com/" in source or "this development machine" in source


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_report(name: str) -> None:
    want = EXPECTED[name]
    report = parse(_read(name))
    facts = report.facts
    assert facts.os.family == want["family"]
    for key, got in (
        ("distro", facts.os.distro_id),
        ("glibc", facts.os.glibc),
        ("macos", facts.os.macos_version),
        ("windows_build", facts.os.windows_build),
        ("wsl", facts.os.wsl),
        ("machine", facts.python.machine),
        ("cpu", facts.cpu.model),
        ("rosetta", facts.python.rosetta),
    ):
        if key in want:
            assert got == want[key], key
    assert facts.python.version == want["python"]
    torch = facts.package("torch")
    assert torch is not None and torch.version == want["torch"]
    if "variant" in want:  # the table names the variant by its label
        assert torch.variant == (Variant.parse(want["variant"]) if want["variant"] else None)
    for key, got in (("cuda", torch.cuda), ("hip", torch.hip)):
        if key in want:
            assert got == want[key], key
    nv = facts.nvidia
    assert [g.name for g in (nv.gpus if nv else ())] == want["gpus"]
    assert all(g.vendor == "nvidia" for g in (nv.gpus if nv else ()))
    if "driver" in want:
        assert (nv.driver_version if nv else None) == want["driver"]
    if "mig" in want:
        assert nv is not None
        assert [g.index for g in nv.gpus if g.mig_mode] == want["mig"]
    if "amd" in want:
        assert facts.rocm is not None
        assert [(g.name, g.gfx_arch) for g in facts.rocm.gpus] == want["amd"]
        assert facts.rocm.version == want["rocm"]
    else:
        assert facts.rocm is None
    if "toolkit" in want:
        assert (facts.toolkits[0].version if facts.toolkits else None) == want["toolkit"]
    if "cudnn" in want:
        assert facts.toolkits[0].cudnn_version == want["cudnn"]
    for comp, version in want.get("companions", {}).items():
        pkg = facts.package(comp)
        assert pkg is not None and pkg.version == version
    assert report.cuda_available is want["cuda_available"]
    assert report.truncated is want["truncated"]
    # The facts are a valid facts document.
    assert Facts.from_json(facts.to_json()) == facts


def test_gpu_catalogue_fills_compute_capability() -> None:
    facts = parse(_read("linux-h100-cu130-driver570.txt")).facts
    assert facts.nvidia is not None
    assert facts.nvidia.gpus[0].compute_capability == "9.0"
    facts = parse(_read("windows11-gtx1050ti-cu117.txt")).facts
    assert facts.nvidia is not None
    assert facts.nvidia.gpus[0].compute_capability == "6.1"


def test_quoted_crlf_reply_reads_the_same() -> None:
    text = _read("linux-h100-cu130-driver570.txt")
    quoted = "\r\n".join("> " + line for line in text.splitlines())
    assert parse(quoted).facts == parse(text).facts


def test_terminal_escapes_are_dropped() -> None:
    text = _read("windows11-gtx1050ti-cu117.txt").replace(
        "NVIDIA GeForce GTX 1050 Ti", "NVIDIA GeForce GTX 1050 Ti\x1b[2J\x1b]0;owned\x07"
    )
    facts = parse(text).facts
    assert facts.nvidia is not None
    name = facts.nvidia.gpus[0].name
    assert "\x1b" not in name and "\x07" not in name
    assert name.startswith("NVIDIA GeForce GTX 1050 Ti")


def test_rosetta_is_inferred_from_an_x86_python_on_apple_silicon() -> None:
    # The M2 Max report, as the same Mac would print it from an x86_64 (Rosetta) interpreter.
    text = _read("macos13-m2max-torch2.10dev.txt")
    text = text.replace("OS: macOS 13.7.4 (arm64)", "OS: macOS 13.7.4 (x86_64)")
    text = text.replace("macOS-13.7.4-arm64-arm-64bit", "macOS-13.7.4-x86_64-i386-64bit")
    facts = parse(text).facts
    assert facts.python.machine == "x86_64"
    assert facts.python.rosetta is True


@pytest.mark.parametrize(
    "text",
    [
        "",
        "hello world\nthis is not a report\n",
        'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: boom\n',
        "\x00\x01\x02binary",
    ],
)
def test_garbage_is_rejected_with_a_clear_error(text: str) -> None:
    with pytest.raises(
        CollectEnvError, match=re.escape("not a `python -m torch.utils.collect_env` report")
    ):
        parse(text)


def test_first_of_two_pasted_reports_wins() -> None:
    a = _read("windows11-gtx1050ti-cu117.txt")
    b = _read("linux-h100-cu130-driver570.txt")
    facts = parse(a + "\n\n" + b).facts
    torch = facts.package("torch")
    assert torch is not None and torch.version == "2.0.1+cu117"


def test_a_gpu_above_the_builds_maximum_is_not_too_old() -> None:
    # DGX Spark (GB10, compute capability 12.1) on a build whose range ends at 12.0: torch's
    # warning, its lines indented by four spaces as torch prints them (pytorch/pytorch#172629).
    text = (FIXTURES / "warning-only-dgx-spark-gb10-cc12.1.txt").read_text(encoding="utf-8")
    (msg,) = read_messages(" ".join(text.splitlines()))
    assert (msg.kind, msg.gpu, msg.cc, msg.min_cc, msg.max_cc) == (
        "gpu-too-new",
        "NVIDIA GB10",
        "12.1",
        "8.0",
        "12.0",
    )
    # The same message for a GPU below the range stays "too old".
    older = text.replace("12.1.", "3.5.")
    (msg,) = read_messages(" ".join(older.splitlines()))
    assert (msg.kind, msg.cc, msg.min_cc) == ("gpu-too-old", "3.5", "8.0")


def test_a_fragment_of_two_report_lines_is_read_not_refused() -> None:
    # Only "Nvidia driver version:" and the cuDNN files survived the paste (NVIDIA/apex#1735).
    report = parse((FIXTURES / "mid-report-driver535-cudnn-lines-only.txt").read_text("utf-8"))
    assert report.facts.nvidia is not None
    assert report.facts.nvidia.driver_version == "535.113.01"
    assert {"torch", "os", "python", "gpus"} <= set(report.missing)


def test_pip_and_conda_lines_for_one_torch_keep_the_conda_builds_variant() -> None:
    # "[pip3] torch==1.10.2" beside "[conda] pytorch 1.10.2 py3.7_cuda10.2_cudnn7.6.5_0"
    # (pytorch/pytorch#72957): one install, a CUDA 10.2 build.
    text = (FIXTURES / "tail-only-conda-torch1.10.2-cu102-libraries.txt").read_text("utf-8")
    torch = parse(text).facts.package("torch")
    assert torch is not None
    assert (torch.version, str(torch.variant)) == ("1.10.2", "cu102")
