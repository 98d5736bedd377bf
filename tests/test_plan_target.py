"""The machine a plan is for (issue 22): the target read from the facts (which architecture, which
tags, Rosetta), a machine described on the command line (``spec_facts``: its Jetson, the limits
of a ``--gpu`` name, the names of macOS) and the facts a plan reports having used.

Plans are made on the frozen matrix subset (tests/fixtures/matrix/wheels-subset.json, see its
SOURCE): torch 2.15.0 is its newest release, 2.11.0 the newest with macOS 13 wheels for Python
3.12, 2.5.1 the newest whose Linux wheels run on glibc 2.17, 2.2.2 the last with Intel-Mac
wheels, 2.12.0 the newest with one for a free-threaded Python 3.13t. The JetPack rows and the
GPU models are the bundled catalogue's.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from setup_env.decide.model import Plan, PlanError, PlanOptions
from setup_env.decide.plan import facts_summary, make_plan, spec_facts
from setup_env.facts import (
    AppleInfo,
    CpuInfo,
    Facts,
    Gpu,
    JetsonInfo,
    NvidiaInfo,
    OSInfo,
    RocmInfo,
    XpuInfo,
)
from setup_env.knowledge import gpus
from setup_env.knowledge import matrix as mx

FIXTURES = Path(__file__).resolve().parent / "fixtures"
M = mx.load_matrix(FIXTURES / "matrix" / "wheels-subset.json")


def plan(facts: Facts, **options: Any) -> Plan:
    return make_plan(facts, PlanOptions(**options), M)


def python(facts: Facts, **fields: Any) -> Facts:
    return dataclasses.replace(facts, python=dataclasses.replace(facts.python, **fields))


def refused(**spec: Any) -> str:
    with pytest.raises(PlanError) as err:
        spec_facts(**spec)
    return str(err.value)


# --- which architecture: the interpreter's, else the CPU's


def test_an_interpreter_of_unknown_machine_is_planned_for_the_cpus_architecture() -> None:
    f = spec_facts(os="linux", arch="aarch64", python="3.12", glibc="2.35")
    p = plan(python(f, machine=None))
    assert (p.status, p.platform, p.torch_version) == ("ok", "linux_aarch64", "2.15.0")


def test_a_machine_of_no_known_architecture_is_said_to_have_no_wheels_for_this_cpu() -> None:
    f = spec_facts(os="linux", python="3.12", glibc="2.35")
    bare = dataclasses.replace(
        python(f, machine=None), cpu=dataclasses.replace(f.cpu, architecture=None)
    )
    p = plan(bare)
    assert (p.status, p.platform) == ("none", None)
    assert list(zip(p.reason_codes, p.reasons)) == [
        ("no-platform", "PyTorch publishes no wheels for linux on this CPU"),
    ]


# --- Rosetta: said by the detector, or read from an x86_64 Python on an Arm Mac


def intel_python_on_a_mac(cpu: str) -> Facts:
    f = spec_facts(os="macos", arch="x86_64", python="3.11", macos="14.5")
    return dataclasses.replace(f, cpu=dataclasses.replace(f.cpu, architecture=cpu))


@pytest.mark.parametrize(
    ("facts", "rosetta"),
    [
        # sysctl.proc_translated: under Rosetta the CPU, too, says x86_64
        (python(intel_python_on_a_mac("x86_64"), rosetta=True), True),
        # the CPU's own name for itself, either spelling
        (intel_python_on_a_mac("arm64"), True),
        (intel_python_on_a_mac("aarch64"), True),
        # a real Intel Mac
        (intel_python_on_a_mac("x86_64"), False),
    ],
    ids=["flag", "cpu-arm64", "cpu-aarch64", "intel-mac"],
)
def test_rosetta_is_the_detectors_flag_or_an_x86_64_python_on_an_arm_cpu(
    facts: Facts, rosetta: bool
) -> None:
    p = plan(facts)
    assert (p.status, p.platform, p.torch_version) == ("ok", "macos_x86_64", "2.2.2")
    assert ("rosetta" in p.warning_codes, "native-python" in [x.kind for x in p.fixes]) == (
        rosetta,
        rosetta,
    )


# --- the tags: the interpreter's own, else those its version implies on this system


def test_the_tags_an_interpreter_gave_decide_over_those_its_version_implies() -> None:
    """A Python whose tags were read on macOS 13.6 (macosx_13_0 and older), the macOS version
    itself not read: its tags, not the assumed macOS 14, say which wheels install."""
    f = spec_facts(os="macos", python="3.12", macos="13.6")
    unread = dataclasses.replace(f, os=dataclasses.replace(f.os, macos_version=None))
    p = plan(unread)
    assert (p.status, p.torch_version) == ("ok", "2.11.0")
    assert p.reasons[1] == (
        "torch 2.12.0–2.15.0: has no wheel matching this interpreter's tags (Python 3.12, "
        "macos_arm64)"
    )


def test_a_free_threaded_python_known_by_its_version_alone_takes_only_free_threaded_wheels() -> (
    None
):
    """3.13t without tags: its tags are cp313t's, so the cp313 wheels of the releases after
    2.12.0 are not its."""
    f = spec_facts(os="linux", python="3.13t", glibc="2.35")
    p = plan(python(f, tags=()))
    assert (p.status, p.torch_version) == ("ok", "2.12.0")
    assert p.reasons[1] == "torch 2.12.1–2.15.0: has no wheel for Python 3.13t"
    assert plan(python(f, tags=(), free_threaded=False)).torch_version == "2.15.0"


def test_a_python_known_by_its_version_alone_takes_the_wheels_of_the_systems_glibc() -> None:
    f = spec_facts(os="linux", python="3.12", glibc="2.17")
    p = plan(python(f, tags=()))
    assert (p.status, p.torch_version) == ("ok", "2.5.1")
    assert p.reasons[1] == "torch 2.7.0–2.15.0: needs glibc >= 2.28 (this system has 2.17)"


def test_a_python_known_by_its_version_alone_takes_the_wheels_of_the_macs_version() -> None:
    f = spec_facts(os="macos", python="3.12", macos="13.6")
    p = plan(python(f, tags=()))
    assert (p.status, p.torch_version) == ("ok", "2.11.0")
    assert p.reasons[1] == "torch 2.12.0–2.15.0: needs macOS 14.0 or newer for Python 3.12"


@pytest.mark.parametrize(
    ("glibc", "newest", "past"),
    [("2.17", "manylinux_2_17", "manylinux_2_18"), (None, "manylinux_2_35", "manylinux_2_36")],
    ids=["named", "unknown-is-2.35"],
)
def test_a_described_glibc_bounds_the_manylinux_tags_and_an_unknown_one_is_taken_as_2_35(
    glibc: str | None, newest: str, past: str
) -> None:
    tags = spec_facts(os="linux", python="3.12", glibc=glibc).python.tags
    assert f"cp312-cp312-{newest}_x86_64" in tags
    assert not any(past in t for t in tags)


# --- a described Jetson


@pytest.mark.parametrize(
    ("jetpack", "l4t", "cuda"),
    [("4.6", "32.6.1", "10.2"), (" 6.2 ", "36.4.3", "12.6"), ("7.2", "39.1.0", "13.2")],
    ids=["oldest", "spaced", "newest"],
)
def test_a_described_jetpack_takes_its_row_of_the_jetpack_table(
    jetpack: str, l4t: str, cuda: str
) -> None:
    f = spec_facts(os="linux", gpus=["Jetson AGX Orin"], jetpack=jetpack)
    assert f.jetson == JetsonInfo(
        module="Orin",
        l4t=l4t,
        jetpack=jetpack.strip(),
        cuda=cuda,
        compute_capability="8.7",
        sources={"jetpack": "spec", "l4t": "JetPack table", "cuda": "JetPack table"},
    )
    assert (f.python.machine, f.nvidia is not None) == ("aarch64", True)


def test_a_jetpack_the_table_lacks_is_refused_with_the_ones_it_has() -> None:
    known = ", ".join(j.jetpack for j in gpus.load().jetpacks)
    assert "6.2" in known.split(", ")
    message = refused(os="linux", gpus=["Jetson AGX Orin"], jetpack="6.3")
    assert message == f"--jetpack '6.3': not in the JetPack table (known: {known})"


@pytest.mark.parametrize("mac", ["macos", "darwin", "Darwin", "mac", "osx", "OSX"])
def test_a_jetson_on_any_name_of_macos_is_refused_as_nvidia_on_macos(mac: str) -> None:
    assert refused(os=mac, gpus=["Jetson AGX Orin"]) == (
        "--gpu: NVIDIA GPUs are not supported on macOS by PyTorch"
    )


@pytest.mark.parametrize("windows", ["windows", "win"])
def test_a_jetson_on_windows_is_refused_as_a_linux_machine(windows: str) -> None:
    """(named as the catalogue names the module)"""
    assert refused(os=windows, gpus=["Jetson AGX Orin"]) == (
        "--gpu 'Orin': a Jetson runs Linux (L4T): use --os linux"
    )


# A Jetson named with words after it ("Jetson AGX Orin xxxx..."): the catalogue's nearest model
LONG_JETSON = "Jetson AGX Orin " + "x" * 84


def test_a_jetson_named_in_100_characters_is_an_aarch64_machine() -> None:
    assert len(LONG_JETSON) == 100
    f = spec_facts(os="linux", gpus=[LONG_JETSON])
    assert (f.python.machine, f.cpu.architecture) == ("aarch64", "aarch64")


@pytest.mark.parametrize("os_name", ["linux", "windows"])
def test_a_gpu_name_of_101_characters_is_refused_as_too_long_even_a_jetsons(os_name: str) -> None:
    name = LONG_JETSON + "x"
    assert refused(os=os_name, gpus=[name]) == f"--gpu {name!r}: empty or too long"


# --- the facts a plan reports having used


def test_the_summary_names_the_interpreters_architecture_beside_the_cpus() -> None:
    s = facts_summary(intel_python_on_a_mac("arm64"))
    assert (s["arch"], s["cpu_arch"]) == ("x86_64", "arm64")
    f = spec_facts(os="linux", python="3.12")
    assert facts_summary(python(f, machine=None))["arch"] == "x86_64"


def test_the_summary_gives_the_first_driver_of_a_model_that_has_its_own() -> None:
    s = facts_summary(spec_facts(os="linux", gpus=["RTX PRO 6000 Server"]))
    gpu = s["gpus"][0]  # type: ignore[index]
    assert gpu["driver_window"] == {
        "first_branch": 575,
        "last_branch": None,
        "first_driver": "575.57.08",
    }


def test_the_summary_gives_the_cuda_the_driver_reports() -> None:
    f = spec_facts(os="linux", gpus=["H100"], driver="590.48.01")
    assert f.nvidia is not None
    with_cuda = dataclasses.replace(
        f, nvidia=dataclasses.replace(f.nvidia, cuda_driver_version="13.1")
    )
    s = facts_summary(with_cuda)
    assert (s["nvidia_driver"], s["cuda_driver"]) == ("590.48.01", "13.1")
    assert facts_summary(f)["cuda_driver"] is None


def test_the_summary_gives_a_compute_capability_for_nvidia_gpus_only() -> None:
    """ROCm's torch reports an MI300X as capability 9.4: a detector that kept it still has the
    summary name none (a compute capability is NVIDIA's)."""
    mi300x = Gpu(index=0, name="MI300X", vendor="amd", gfx_arch="gfx942", compute_capability="9.4")
    f = dataclasses.replace(spec_facts(os="linux"), rocm=RocmInfo(gpus=(mi300x,)))
    gpu = facts_summary(f)["gpus"][0]  # type: ignore[index]
    assert (gpu["vendor"], gpu["gfx_arch"], gpu["compute_capability"]) == ("amd", "gfx942", None)


def wheels_on_glibc_2_39(matrix: mx.Matrix) -> mx.Matrix:
    """The subset with torch 2.15.0's PyPI linux_x86_64 wheels retagged manylinux_2_39 (glibc
    floor 2.39), as a release built on a newer glibc would be (altered to reach the boundary)."""
    releases = []
    for r in matrix.releases:
        if str(r.version) == "2.15.0":
            files = {
                t.replace("manylinux_2_28_x86_64", "manylinux_2_39_x86_64"): pas
                for t, pas in r.pypi_files.items()
            }
            floors = {**r.min_glibc, "linux_x86_64": Version("2.39")}
            r = dataclasses.replace(r, pypi_files=files, min_glibc=floors)
        releases.append(r)
    return dataclasses.replace(matrix, releases=tuple(releases))


@pytest.mark.parametrize(("glibc", "torch"), [("2.39", "2.15.0"), ("2.38", "2.14.1")])
def test_a_python_known_by_its_version_alone_matches_wheels_up_to_the_systems_own_glibc(
    glibc: str, torch: str
) -> None:
    """Past the glibc a described machine is otherwise assumed to have (2.35): PyPI's
    manylinux_2_39 wheels install on glibc 2.39 and not on 2.38."""
    f = spec_facts(os="linux", python="3.12", glibc=glibc, gpus=["RTX 4090"], driver="595.71.05")
    p = make_plan(python(f, tags=()), PlanOptions(), wheels_on_glibc_2_39(M))
    assert (p.status, p.torch_version, p.source) == ("ok", torch, "pypi")


# --- the GPUs of a described machine


def test_each_described_gpu_keeps_its_place_in_the_list_under_its_vendor() -> None:
    f = spec_facts(os="linux", gpus=["RTX 4090", "MI300X", " Arc A770 "])
    assert f.nvidia is not None and f.rocm is not None and f.xpu is not None
    assert f.gpus == (
        Gpu(index=0, name="RTX 4090", vendor="nvidia", compute_capability="8.9", source="spec"),
        Gpu(index=1, name="MI300X", vendor="amd", gfx_arch="gfx942", source="spec"),
        Gpu(index=2, name="Arc A770", vendor="intel", source="spec"),
    )
    assert (f.nvidia.gpus, f.rocm.gpus, f.xpu.gpus) == ((f.gpus[0],), (f.gpus[1],), (f.gpus[2],))
    assert f.apple is None


@pytest.mark.parametrize(
    ("gpus", "apple"),
    [
        ((), None),
        (("M3",), AppleInfo(chip="Apple M3", generation=3, mps_eligible=True,
                             sources={"chip": "spec"})),
        (("M2 Max",), AppleInfo(chip="Apple M2 Max", generation=2, variant="Max",
                                 mps_eligible=True, sources={"chip": "spec"})),
    ],
    ids=["none", "m3", "m2-max"],
)  # fmt: skip
def test_a_described_mac_has_apple_facts_only_when_its_chip_is_named(
    gpus: tuple[str, ...], apple: AppleInfo | None
) -> None:
    assert spec_facts(os="macos", gpus=gpus).apple == apple


# --- the facts of a described machine whole: each says it came from the spec


def test_a_described_linux_machine_is_the_facts_of_its_spec() -> None:
    f = spec_facts(
        os="linux", python="3.12", glibc="2.35", wsl=True, driver="595.71.05",
        gpus=["RTX 4090", "MI300X", "Arc A770"],
    )  # fmt: skip
    assert f.os == OSInfo(
        family="linux", libc="glibc", glibc="2.35", wsl=2, sources={"family": "spec"}
    )
    assert f.cpu == CpuInfo(architecture="x86_64", sources={"architecture": "spec"})
    assert (f.python.version, f.python.free_threaded, f.python.machine) == ("3.12", False, "x86_64")
    assert f.python.sources == {"version": "spec", "tags": "derived from the spec"}
    assert f.python.tags[0] == "cp312-cp312-manylinux_2_35_x86_64"
    nv, amd, intel = f.gpus
    assert f.nvidia == NvidiaInfo(
        driver_version="595.71.05", gpus=(nv,), sources={"driver_version": "spec", "gpus": "spec"}
    )
    assert f.rocm == RocmInfo(gpus=(amd,), sources={"gpus": "spec"})
    assert f.xpu == XpuInfo(gpus=(intel,), sources={"gpus": "spec"})
    assert (f.apple, f.jetson) == (None, None)
    assert facts_summary(f)["wsl"] == 2


@pytest.mark.parametrize(
    ("spec", "os_info"),
    [
        ({"os": "macos", "macos": "14.5"},
         OSInfo(family="darwin", macos_version="14.5", sources={"family": "spec"})),
        ({"os": "windows"}, OSInfo(family="windows", sources={"family": "spec"})),
        ({"os": "linux"}, OSInfo(family="linux", libc="glibc", sources={"family": "spec"})),
    ],
    ids=["macos", "windows", "linux-no-glibc"],
)  # fmt: skip
def test_only_a_described_linux_has_a_libc_and_a_machine_without_gpus_has_no_gpu_facts(
    spec: dict[str, Any], os_info: OSInfo
) -> None:
    f = spec_facts(**spec)
    assert f.os == os_info
    assert (f.nvidia, f.rocm, f.xpu, f.apple) == (None, None, None, None)


@pytest.mark.parametrize("gpu", ["MI300X", "Arc A770"])
def test_an_amd_or_an_intel_gpu_alone_is_refused_on_a_described_mac(gpu: str) -> None:
    assert refused(os="macos", gpus=[gpu]) == (
        "--gpu: AMD/Intel GPUs are planned on linux or windows"
    )


GIVE = 'give a model ("RTX 5090", "MI300X") or an architecture (sm_120, gfx1100)'


@pytest.mark.parametrize(
    ("gpu", "closest"),
    [
        ("Quadro RTX 9000", "; closest known: Quadro RTX 8000, Quadro RTX 6000, Quadro RTX 5000"),
        ("x" * 100, ""),
    ],
    ids=["near-three", "near-none"],
)
def test_an_unknown_gpu_is_refused_with_the_nearest_known_names_when_there_are_any(
    gpu: str, closest: str
) -> None:
    assert refused(os="linux", gpus=[gpu]) == (
        f"--gpu {gpu!r}: not a GPU the catalogue knows (gpu-unknown){closest}; {GIVE}"
    )
