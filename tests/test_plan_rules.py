"""The planner's rules one at a time (issue 22): the ranking between candidates of one release,
each route alone, and the findings that depend on one fact of the machine. Each test states a
behaviour on a described machine (``spec_facts``) against the bundled matrix; the numbers come
from that matrix (torch 2.14.1: cu126 needs driver 560.35.05, cu130 580.95.05, cu132
595.58.03; CUDA 13's minor-version compatibility starts at R580)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from packaging.version import Version

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant

M = mx.load_matrix(mx.BUNDLED_PATH)
V = Variant.parse


def plan(facts: Facts, **options: str) -> Plan:
    return make_plan(facts, PlanOptions(**options), M)


def nvidia(driver: str | None, *gpus: str, **spec: Any) -> Facts:
    spec.setdefault("python", "3.12")
    return spec_facts(os="linux", gpus=gpus or ("RTX 4090",), driver=driver, **spec)


# --- ranking: among the builds of one release, full driver support beats minor-version
# compatibility; between equals, the first in preference order (PyPI's default) stays.


def test_a_fully_supported_build_beats_an_mvc_one_of_the_same_release() -> None:
    # 595.58.02: cu132 would run through minor-version compatibility, cu130 runs fully
    p = plan(nvidia("595.58.02"), torch="2.14.1")
    assert (p.variant, p.driver_compat, p.source) == (V("cu130"), "full", "pypi")
    # one below cu130's own floor: cu130 is mvc now, and the fully supported cu126 wins
    p = plan(nvidia("580.95.04"), torch="2.14.1")
    assert (p.variant, p.driver_compat, p.source) == (V("cu126"), "full", "index")


def test_between_two_fully_supported_builds_the_preferred_one_stays() -> None:
    # exactly cu132's floor: cu130 (PyPI's default, first in order) and cu132 both run fully
    p = plan(nvidia("595.58.03"), torch="2.14.1")
    assert (p.variant, p.driver_compat) == (V("cu130"), "full")


def test_only_mvc_builds_left_an_mvc_build_is_chosen_with_its_warning() -> None:
    p = plan(nvidia("560.35.04"), torch="2.14.1")  # one below cu126's floor
    assert (p.variant, p.driver_compat) == (V("cu126"), "mvc")
    assert "driver-mvc" in p.warning_codes
    assert any(f.kind == "upgrade-driver" and ">= 560.35.05" in f.summary for f in p.fixes)
    p = plan(nvidia("560.35.05"), torch="2.14.1")  # exactly on it
    assert (p.variant, p.driver_compat) == (V("cu126"), "full")
    assert "driver-mvc" not in p.warning_codes and "driver-full" in p.reason_codes


# --- findings that hang on one fact


def test_mixed_gpus_needs_two_compute_capabilities_not_three() -> None:
    assert "mixed-gpus" in plan(nvidia("580.95.05", "RTX 4090", "RTX 3090")).reason_codes
    assert "mixed-gpus" not in plan(nvidia("580.95.05", "RTX 4090", "RTX 4090")).reason_codes


@pytest.mark.parametrize("other", ["MI300X", "Arc A770"])
def test_mixed_vendors_needs_two_vendors_not_three(other: str) -> None:
    p = plan(nvidia("580.95.05", "RTX 4090", other))
    assert "mixed-vendors" in p.warning_codes and p.variant is not None and p.variant.is_cuda
    assert "mixed-vendors" not in plan(nvidia("580.95.05", "RTX 4090")).warning_codes


def test_wsl2_is_named_and_wsl1_is_not_wsl2() -> None:
    wsl2 = nvidia("580.95.05", wsl=True)
    assert "wsl2" in plan(wsl2).reason_codes
    wsl1 = dataclasses.replace(wsl2, os=dataclasses.replace(wsl2.os, wsl=1))
    assert "wsl2" not in plan(wsl1).reason_codes
    native = dataclasses.replace(wsl2, os=dataclasses.replace(wsl2.os, wsl=None))
    assert "wsl2" not in plan(native).reason_codes


def test_an_x86_64_python_on_an_arm64_mac_is_rosetta_said_once() -> None:
    intel = spec_facts(os="macos", arch="x86_64")
    assert "rosetta" not in plan(intel).warning_codes  # a real Intel Mac
    under = dataclasses.replace(intel, cpu=dataclasses.replace(intel.cpu, architecture="arm64"))
    p = plan(under)
    assert p.warning_codes.count("rosetta") == 1
    assert [f.kind for f in p.fixes] == ["native-python"]
    assert p.torch_version == "2.2.2" and p.variant == V("cpu")


# --- routes


def test_the_glibc_trap_refuses_a_wheel_whose_tag_hides_its_glibc() -> None:
    """torch 2.6.0's manylinux1 tag on a glibc 2.28 build: one glibc below, nothing installs."""
    p = plan(nvidia("580.95.05", glibc="2.27"), torch="2.6.0")
    assert p.status == "none" and "nothing-installable" in p.reason_codes
    p = plan(nvidia("580.95.05", glibc="2.28"), torch="2.6.0")
    assert (p.status, p.torch_version, p.variant) == ("ok", "2.6.0", V("cu124"))


def test_an_old_glibc_gets_the_newest_release_it_can_run() -> None:
    p = plan(nvidia("580.95.05", glibc="2.27"))
    assert p.torch_version == "2.5.1" and "newer-release-not-installable" in p.reason_codes
    assert [f.kind for f in p.fixes] == ["newer-os"]
    assert plan(nvidia("580.95.05", glibc="2.28")).torch_version == M.newest.version.public


def test_rocm_takes_the_newest_confirmed_variant_of_the_release() -> None:
    amd = spec_facts(os="linux", python="3.12", gpus=["MI300X"])
    p = plan(amd, torch="2.9")
    rel = next(r for r in M.releases if str(r.version) == "2.9.1")
    rocms = sorted(v for v in rel.index if v.is_rocm)
    assert len(rocms) >= 2 and p.variant == rocms[-1]
    assert p.index_url is not None and p.index_url.endswith(f"/{rocms[-1]}")


def test_the_newer_releases_that_do_not_install_are_grouped_by_why_three_groups_at_most() -> None:
    """Python 3.8 on glibc 2.27: 2.7.0-2.15.0 need a newer glibc (a span), 2.6.0 too but through
    its trap (a reason of its own, one release: no span), 2.5.x has no 3.8 wheel."""
    reasons = plan(nvidia("580.95.05", glibc="2.27", python="3.8")).reasons
    newer = [r for r in reasons if r.startswith("torch 2.") and ": " in r and "build" not in r]
    assert [r.split(":")[0] for r in newer] == [
        "torch 2.7.0–2.15.0",
        "torch 2.6.0",
        "torch 2.5.0–2.5.1",
    ]
    assert newer[0] == "torch 2.7.0–2.15.0: needs glibc >= 2.28 (this system has 2.27)"
    assert newer[2] == "torch 2.5.0–2.5.1: has no wheel for Python 3.8"
    assert "the newest torch this interpreter can install is 2.4.1" in reasons
    # on a newer glibc four groups stand between Python 3.8 and 2.4.1: the newest three are named
    p = plan(nvidia("580.95.05", python="3.8"))
    assert p.reason_codes.count("newer-release-not-installable") == 3
    assert "newest-installable" in p.reason_codes
    assert [r.split(":")[0] for r in p.reasons if "needs Python" in r] == [
        "torch 2.15.0",
        "torch 2.9.0–2.14.1",
        "torch 2.6.0–2.8.0",
    ]
    assert not any(r.startswith("torch 2.5.0") for r in p.reasons)


def test_an_old_python_plans_the_newest_release_that_has_its_wheels() -> None:
    p = plan(nvidia("580.95.05", python="3.9"))
    assert (p.torch_version, p.variant) == ("2.8.0", V("cu128"))
    assert [f.kind for f in p.fixes] == ["change-python"]


def _pypi_wheel_needs(glibc: str, release: str = "2.14.1") -> mx.Matrix:
    """The bundled matrix, with a release's PyPI x86_64 wheel needing more glibc than its
    manylinux_2_28 tag says (2.6.0's manylinux1 trap, on a recent release): the index's
    wheels keep the release's 2.28 floor."""
    trap = mx.Trap(
        platform_tag="manylinux_2_28_x86_64",
        min_glibc=Version(glibc),
        note="built on a newer glibc than its tag says",
        confidence="I",
        source="a described trap",
    )
    releases = tuple(
        dataclasses.replace(r, traps=(trap,)) if str(r.version) == release else r
        for r in M.releases
    )
    return dataclasses.replace(M, releases=releases)


def test_a_release_one_route_installs_stays_offered_by_that_route() -> None:
    """PyPI's wheel needs glibc 2.34: on glibc 2.31 PyPI's CUDA wheel (cu130, PyPI's default)
    is not offered, yet the release is, from PyPI's own index; from 2.34 on PyPI serves it."""
    trapped = _pypi_wheel_needs("2.34")
    p = make_plan(nvidia("580.95.05", glibc="2.31"), PlanOptions(torch="2.14.1"), trapped)
    assert (p.status, p.torch_version, p.source) == ("ok", "2.14.1", "index")
    assert p.variant == V("cu130") and p.index_url is not None and p.index_url.endswith("/cu130")
    p = make_plan(nvidia("580.95.05", glibc="2.34"), PlanOptions(torch="2.14.1"), trapped)
    assert (p.status, p.torch_version, p.source, p.variant) == ("ok", "2.14.1", "pypi", V("cu130"))


def test_a_pin_that_does_not_install_names_the_newest_release_that_does() -> None:
    """torch 2.6.0 on glibc 2.27: nothing of 2.6.0 installs; 2.5.1 does, and the reason is the
    pinned release's own (no claim about the rest of the matrix)."""
    p = plan(nvidia("580.95.05", glibc="2.27"), torch="2.6.0")
    assert (p.status, p.reason_codes) == ("none", ("nothing-installable",))
    assert p.reasons[0].startswith("torch 2.6.0 needs glibc >= 2.28 (this system has 2.27)")
    assert "no torch release in the matrix installs here" not in p.reasons[0]
    assert (p.fixes[0].kind, p.fixes[0].summary) == (
        "pin-torch",
        "torch 2.5.1 is the newest release that installs for Python 3.12 on linux_x86_64: "
        "--torch 2.5.1",
    )


def test_the_release_a_failed_pin_points_to_may_install_by_one_route() -> None:
    """Python 3.14 has no torch 2.5.1 wheel; torch 2.15.0 installs from the index only (its PyPI
    wheel needs glibc 2.34, this system has 2.31): 2.15.0 is still the one named."""
    trapped = _pypi_wheel_needs("2.34", release="2.15.0")
    facts = nvidia("580.95.05", glibc="2.31", python="3.14")
    p = make_plan(facts, PlanOptions(torch="2.5.1"), trapped)
    assert p.reasons == ("torch 2.5.1 has no wheel for Python 3.14",)
    assert [f.kind for f in p.fixes] == ["pin-torch", "change-python"]
    assert p.fixes[0].summary.endswith(": --torch 2.15.0")
    # on glibc 2.27 no release installs for Python 3.14: no pin is offered
    p = make_plan(nvidia("580.95.05", glibc="2.27", python="3.14"), PlanOptions(torch="2.5.1"), M)
    assert [f.kind for f in p.fixes] == ["change-python"]


def test_windows_takes_the_cuda_index_since_pypi_serves_cpu() -> None:
    p = plan(spec_facts(os="windows", python="3.12", gpus=["RTX 4090"], driver="580.95.05"))
    assert p.source == "index" and p.variant is not None and p.variant.is_cuda
    assert "pypi-default-differs" in p.reason_codes


# --- what a plan is asked for


@pytest.mark.parametrize(
    ("pin", "version", "series"),
    [("2.13", "2.13", True), ("2.13.0", "2.13.0", False), (" ==2.9.1 ", "2.9.1", False)],
)
def test_a_torch_pin(pin: str, version: str, series: bool) -> None:
    from packaging.version import Version

    from setup_env.decide.plan.context import parse_torch_pin

    assert parse_torch_pin(pin) == (Version(version), series)


def test_a_pin_the_matrix_does_not_know_names_the_releases_it_does() -> None:
    """A well-formed pin past the matrix (2.99) plans nothing; the reason names the newest
    release and the four most recent, the fix pins the newest."""
    p = plan(spec_facts(os="linux", python="3.12"), torch="2.99")
    assert (p.status, p.reason_codes) == ("none", ("torch-not-in-matrix",))
    recent = ", ".join(str(r.version) for r in M.releases[-4:])
    assert p.reasons == (
        f"torch 2.99 is not in the wheel matrix (newest: {M.newest.version}; recent: {recent})",
    )
    assert [(f.kind, f.summary) for f in p.fixes] == [
        ("pin-torch", f"pin a release the matrix knows, e.g. --torch {M.newest.version}")
    ]


@pytest.mark.parametrize("pin", ["2", "2.13.0.1", "latest", "2.13.x", ">=2.13", "2.1234"])
def test_a_torch_pin_that_is_no_release(pin: str) -> None:
    from setup_env.decide.model import PlanError
    from setup_env.decide.plan.context import parse_torch_pin

    with pytest.raises(PlanError, match=r"expected a release like 2\.13 or 2\.13\.0"):
        parse_torch_pin(pin)


@pytest.mark.parametrize(
    ("url", "clean"),
    [
        ("https://mirror.example/whl/", "https://mirror.example/whl"),
        ("http://10.0.0.1:8080/pytorch/whl", "http://10.0.0.1:8080/pytorch/whl"),
        (" https://m.example ", "https://m.example"),
    ],
)
def test_a_mirror_url(url: str, clean: str) -> None:
    from setup_env.decide.plan.context import check_index_url

    assert check_index_url(url) == clean


@pytest.mark.parametrize(
    "url",
    [
        "https://user:pw@mirror.example/whl",
        "ftp://mirror.example/whl",
        "https://mirror.example/whl?x=1",
        "https://mirror.example/a b",
        "https://mirror.example/whl/../etc",
        "https://mirror.example/%2e%2e/etc",
        "https://mirror.example/$(id)",
    ],
)
def test_a_mirror_url_refused(url: str) -> None:
    from setup_env.decide.model import PlanError
    from setup_env.decide.plan.context import check_index_url

    with pytest.raises(PlanError, match="--index-url"):
        check_index_url(url)


def test_a_described_machine() -> None:
    f = spec_facts(os="Linux", arch="arm64", python="3.13t", glibc="2.28", driver="580.95.05")
    assert (f.os.family, f.python.machine, f.python.version, f.python.free_threaded) == (
        "linux",
        "aarch64",  # Linux calls arm64 aarch64
        "3.13",
        True,
    )
    assert f.os.glibc == "2.28" and f.nvidia is not None and f.nvidia.driver_version == "580.95.05"
    assert all("cp313t" in t for t in f.python.tags)
    mac = spec_facts(os="darwin", arch="aarch64")
    assert (mac.os.family, mac.python.machine, mac.python.version) == ("darwin", "arm64", "3.12")
    assert mac.nvidia is None and mac.os.glibc is None
    win = spec_facts(os="win", gpus=["MI300X", "Arc A770"])
    assert win.os.family == "windows" and win.python.machine == "x86_64"
    assert win.rocm is not None and win.rocm.gpus[0].gfx_arch == "gfx942"
    assert win.xpu is not None and len(win.xpu.gpus) == 1


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"os": "plan9"}, "--os 'plan9'"),
        ({"os": "linux", "arch": "riscv64"}, "--arch 'riscv64'"),
        ({"os": "linux", "python": "3"}, "--python '3'"),
        ({"os": "linux", "glibc": "2.x"}, "--glibc '2.x'"),
        ({"os": "windows", "glibc": "2.35"}, "--glibc applies to --os linux only"),
        ({"os": "linux", "macos": "14"}, "--macos applies to --os macos only"),
        ({"os": "macos", "macos": "fourteen"}, "--macos 'fourteen'"),
        ({"os": "linux", "driver": "57"}, "--driver '57'"),
        ({"os": "macos", "gpus": ["RTX 4090"]}, "NVIDIA GPUs are not supported on macOS"),
        ({"os": "macos", "gpus": ["MI300X"]}, "AMD/Intel GPUs are planned on linux or windows"),
        ({"os": "linux", "gpus": ["Voodoo 3"]}, "not a GPU the catalogue knows"),
        ({"os": "linux", "gpus": ["x" * 101]}, "empty or too long"),
        ({"os": "windows", "gpus": ["Jetson AGX Orin"]}, "a Jetson runs Linux"),
        ({"os": "linux", "jetpack": "6.2"}, "--jetpack needs --gpu naming a Jetson module"),
    ],
)
def test_a_described_machine_refused(spec: dict[str, Any], message: str) -> None:
    from setup_env.decide.model import PlanError

    with pytest.raises(PlanError) as err:
        spec_facts(**spec)
    assert message in str(err.value)


def test_a_jetson_described_with_its_jetpack() -> None:
    f = spec_facts(os="linux", gpus=["Jetson AGX Orin"], jetpack="6.2")
    assert f.jetson is not None and f.jetson.jetpack == "6.2" and f.python.machine == "aarch64"
    assert f.jetson.compute_capability == "8.7"
    from setup_env.decide.model import PlanError

    with pytest.raises(PlanError, match="not in the JetPack table"):
        spec_facts(os="linux", gpus=["Jetson AGX Orin"], jetpack="1.0")


# --- each installer's whole output: the command and the document it writes

WIN = {"os": "windows", "python": "3.12", "gpus": ["RTX 3060"], "driver": "596.49"}
CU130 = "https://download.pytorch.org/whl/cu130"
NIGHTLY = "https://download.pytorch.org/whl/nightly/cu132"
STABLE = ("torch==2.14.1", "torchvision==0.29.*")

INSTALLERS = [
    ("pip", "stable", ("pip", "install", *STABLE, "--index-url", CU130), None),
    ("uv", "stable", ("uv", "pip", "install", *STABLE, "--index-url", CU130), None),
    ("pip", "nightly", ("pip", "install", "--pre", "torch", "torchvision", "--index-url", NIGHTLY),
     None),
    ("requirements", "stable", ("pip", "install", "-r", "requirements.txt"),
     f"--index-url {CU130}\ntorch==2.14.1\ntorchvision==0.29.*\n"),
    ("requirements", "nightly", ("pip", "install", "-r", "requirements.txt"),
     f"--index-url {NIGHTLY}\n--pre\ntorch\ntorchvision\n"),
    ("uv-project", "stable", ("uv", "sync"),
     '[project]\ndependencies = ["torch==2.14.1", "torchvision==0.29.*"]\n\n'
     f'[[tool.uv.index]]\nname = "pytorch-cu130"\nurl = "{CU130}"\nexplicit = true\n\n'
     '[tool.uv.sources]\ntorch = [{ index = "pytorch-cu130" }]\n'
     'torchvision = [{ index = "pytorch-cu130" }]\n'),
    ("uv-project", "nightly", ("uv", "sync"),
     '[project]\ndependencies = ["torch", "torchvision"]\n\n'
     f'[[tool.uv.index]]\nname = "pytorch-cu132"\nurl = "{NIGHTLY}"\nexplicit = true\n\n'
     '[tool.uv.sources]\ntorch = [{ index = "pytorch-cu132" }]\n'
     'torchvision = [{ index = "pytorch-cu132" }]\n\n[tool.uv]\nprerelease = "allow"\n'),
    ("poetry", "stable", ("poetry", "install"),
     '[tool.poetry.dependencies]\n'
     'torch = { version = "2.14.1", source = "pytorch-cu130" }\n'
     'torchvision = { version = "0.29.*", source = "pytorch-cu130" }\n\n'
     f'[[tool.poetry.source]]\nname = "pytorch-cu130"\nurl = "{CU130}"\npriority = "explicit"\n'),
    ("poetry", "nightly", ("poetry", "install"),
     '[tool.poetry.dependencies]\n'
     'torch = { version = "*", source = "pytorch-cu132", allow-prereleases = true }\n'
     'torchvision = { version = "*", source = "pytorch-cu132", allow-prereleases = true }\n\n'
     f'[[tool.poetry.source]]\nname = "pytorch-cu132"\nurl = "{NIGHTLY}"\npriority = "explicit"\n'),
]  # fmt: skip


@pytest.mark.parametrize(("installer", "channel", "argv", "config"), INSTALLERS)
def test_each_installer_whole(
    installer: str, channel: str, argv: tuple[str, ...], config: str | None
) -> None:
    torch = "2.14.1" if channel == "stable" else None
    opts = {"installer": installer, "channel": channel, "with_packages": ("torchvision",)}
    p = make_plan(spec_facts(**WIN), PlanOptions(torch=torch, **opts), M)  # type: ignore[arg-type]
    assert (p.argv, p.config) == (argv, config)
    assert p.command == " ".join(a if "*" not in a else f"'{a}'" for a in argv)


@pytest.mark.parametrize(
    ("installer", "argv", "config"),
    [
        ("uv-project", ("uv", "add", "torch==2.14.1", "torchvision==0.29.*"),
         '[project]\ndependencies = ["torch==2.14.1", "torchvision==0.29.*"]\n'),
        ("poetry", ("poetry", "add", "torch==2.14.1", "torchvision==0.29.*"),
         '[tool.poetry.dependencies]\ntorch = "2.14.1"\ntorchvision = "0.29.*"\n'),
        ("requirements", ("pip", "install", "-r", "requirements.txt"),
         "torch==2.14.1\ntorchvision==0.29.*\n"),
    ],
)  # fmt: skip
def test_each_installer_from_pypi_alone(installer: str, argv: tuple[str, ...], config: str) -> None:
    opts = PlanOptions(installer=installer, with_packages=("torchvision",), torch="2.14.1")  # type: ignore[arg-type]
    p = make_plan(nvidia("580.95.05"), opts, M)
    assert (p.index_url, p.argv, p.config) == (None, argv, config)


# --- --variant: the route that takes the build asked for


def test_variant_mps_is_apple_silicon_only() -> None:
    p = plan(nvidia("580.95.05"), variant="mps")
    assert (p.status, p.reason_codes) == ("none", ("mps-apple-only",))
    assert p.reasons == ("--variant mps: MPS is Apple Silicon only",)
    mac = plan(spec_facts(os="macos", arch="arm64", python="3.12"), variant="mps")
    assert (mac.status, mac.variant, mac.source) == ("ok", V("mps"), "pypi")


def test_variant_cpu_on_a_gpu_machine_is_asked_not_a_fallback() -> None:
    p = plan(nvidia("580.95.05"), variant="cpu")
    assert (p.status, p.variant, p.source, p.driver_compat) == ("ok", V("cpu"), "index", None)
    assert p.reason_codes[0] == "variant-as-asked"
    assert p.torch_version == M.newest.version.public


def test_variant_from_pypi_when_it_is_pypis_default() -> None:
    p = plan(nvidia("580.95.05"), variant="cu130", torch="2.14.1")
    assert (p.variant, p.source, p.index_url, p.driver_compat) == (V("cu130"), "pypi", None, "full")
    assert p.reasons[0] == "torch 2.14.1 cu130, as asked (--variant cu130)"


def test_variant_from_the_index_in_the_newest_release_that_has_it() -> None:
    p = plan(nvidia("580.95.05"), variant="cu126")
    assert (p.torch_version, p.variant, p.source) == ("2.14.1", V("cu126"), "index")
    assert p.reason_codes == ("variant-as-asked", "newest-release-blocked")
    assert p.reasons[1] == f"torch {M.newest.version} has no confirmed cu126 build for linux_x86_64"


def test_variant_on_a_driver_too_old_for_it_says_so_and_offers_the_driver() -> None:
    p = plan(nvidia("520.61.05"), variant="cu126", torch="2.14.1")
    assert (p.status, p.variant, p.driver_compat) == ("ok", V("cu126"), None)
    assert (p.cuda, p.min_driver, p.details["mvc_floor"]) == ("12.6", "560.35.05", "525.60.13")
    assert "driver-too-old" in p.warning_codes
    assert (
        "cu126 (CUDA 12.6) needs driver >= 560.35.05 (>= 525.60.13 with minor-version "
        "compatibility); the installed driver is older"
    ) in p.warnings
    assert [f.kind for f in p.fixes] == ["upgrade-driver"] and ">= 560.35.05" in p.fixes[0].summary
    assert "for torch 2.14.1 (cu126)" in p.fixes[0].summary
    mvc = plan(nvidia("550.54.14"), variant="cu126", torch="2.14.1")
    assert mvc.driver_compat == "mvc" and not mvc.fixes


def test_variant_without_kernels_for_the_gpu_warns() -> None:
    p = plan(nvidia("580.95.05", "RTX 5090"), variant="cu118")
    assert (p.status, p.variant) == ("ok", V("cu118"))
    assert "arch-missing" in p.warning_codes
    assert "arch-missing" not in plan(nvidia("580.95.05"), variant="cu118").warning_codes


def test_variant_with_no_confirmed_build_names_the_release_that_has_one() -> None:
    p = plan(nvidia("580.95.05"), variant="cu130", torch="2.15.0")
    assert (p.status, p.reason_codes) == ("none", ("no-variant-build",))
    assert p.reasons == (
        "no confirmed cu130 build of torch for linux_x86_64 and Python 3.12 in torch 2.15.0",
    )
    assert "unverified-variant" in p.warning_codes
    assert [f.kind for f in p.fixes] == ["pin-torch"]
    assert p.fixes[0].summary.endswith("--torch 2.14.1 --variant cu130")


def _ptx_only_cu126() -> mx.Matrix:
    """The bundled matrix has no PTX build today, so one is made: torch 2.14.1's cu126 for
    linux_x86_64 with its SASS up to sm_90 and PTX for compute_90, the only CUDA build left."""
    key = (V("cu126"), "2.14.1", "linux_x86_64")
    build = M.builds[key]
    builds = dict(M.builds)
    builds[key] = dataclasses.replace(
        build, sass=tuple(cc for cc in build.sass if cc < (12, 0)), ptx=((9, 0),)
    )
    for other in ("cu130", "cu132"):
        builds.pop((V(other), "2.14.1", "linux_x86_64"), None)
    return dataclasses.replace(M, builds=builds)


def test_a_variant_asked_for_a_gpu_it_serves_through_ptx_says_so_and_needs_the_full_driver() -> (
    None
):
    ptx_matrix = _ptx_only_cu126()

    def asked(gpu: str, driver: str) -> Plan:
        options = PlanOptions(torch="2.14.1", variant="cu126")
        return make_plan(nvidia(driver, gpu), options, ptx_matrix)

    p = asked("RTX 5090", "580.95.05")
    assert (p.status, p.variant, p.driver_compat) == ("ok", V("cu126"), "full")
    assert [w for w in p.warnings if "PTX" in w] == [
        "RTX 5090 run(s) cu126 of torch 2.14.1 through PTX JIT compilation only (slow first start)"
    ]
    assert "arch-ptx" not in asked("RTX 4090", "580.95.05").warning_codes  # SASS for sm_89
    # 550.54.14: MVC serves the SASS GPU, not the one that JIT-compiles PTX
    assert asked("RTX 4090", "550.54.14").driver_compat == "mvc"
    p = asked("RTX 5090", "550.54.14")
    assert (p.status, p.variant, p.driver_compat) == ("ok", V("cu126"), None)
    assert [f.kind for f in p.fixes] == ["upgrade-driver"] and ">= 560.35.05" in p.fixes[0].summary


def test_a_variant_asked_takes_the_route_that_installs_it() -> None:
    """--variant cu130 (PyPI's default) where PyPI's wheel needs glibc 2.34: from the index on
    glibc 2.31, from PyPI on 2.34."""
    trapped = _pypi_wheel_needs("2.34")
    options = PlanOptions(torch="2.14.1", variant="cu130")
    p = make_plan(nvidia("580.95.05", glibc="2.31"), options, trapped)
    assert (p.status, p.variant, p.source) == ("ok", V("cu130"), "index")
    p = make_plan(nvidia("580.95.05", glibc="2.34"), options, trapped)
    assert (p.status, p.variant, p.source) == ("ok", V("cu130"), "pypi")


def test_a_gpu_served_only_by_ptx_needs_the_full_driver() -> None:
    """PTX is JIT-compiled by the driver, which minor-version compatibility does not cover: a
    GPU that runs a build only through PTX needs the build's own driver, not the MVC floor
    (torch 2.14.1's cu126 made PTX-only for sm_120)."""
    ptx_matrix = _ptx_only_cu126()

    def ptx_plan(gpu: str, driver: str | None) -> Plan:
        return make_plan(nvidia(driver, gpu), PlanOptions(torch="2.14.1"), ptx_matrix)

    # 550.54.14: above CUDA 12's MVC floor, below cu126's own 560.35.05
    assert ptx_plan("RTX 4090", "550.54.14").driver_compat == "mvc"  # SASS: MVC serves it
    p = ptx_plan("RTX 5090", "550.54.14")  # sm_120 through compute_90 PTX: it does not
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    p = ptx_plan("RTX 5090", "580.95.05")
    assert (p.status, p.variant, p.driver_compat) == ("ok", V("cu126"), "full")
    assert "arch-ptx" in p.warning_codes
    none = ptx_plan("RTX 5090", None)
    assert none.driver_compat == "no-driver"
    assert not any("minor-version compatibility" in w for w in none.warnings)
    assert "minor-version compatibility" in " ".join(ptx_plan("RTX 4090", None).warnings)


# --- the nightly channel: the machine's accelerator on PyTorch's nightly index

NIGHTLY_BASE = "https://download.pytorch.org/whl/nightly/"


@pytest.mark.parametrize(
    ("spec", "options", "variant"),
    [
        (
            {"os": "linux", "gpus": ["RTX 4090"], "driver": "580.95.05"},
            {},
            "cu132",
        ),  # stable's CUDA
        ({"os": "linux", "gpus": ["MI300X"]}, {}, "rocm7.14"),  # the newest ROCm
        ({"os": "linux", "gpus": ["Arc A770"]}, {}, "xpu"),
        ({"os": "windows", "gpus": ["Arc A770"]}, {}, "xpu"),
        ({"os": "linux"}, {}, "cpu"),
        ({"os": "macos"}, {}, "cpu"),
        ({"os": "linux"}, {"variant": "cu130"}, "cu130"),  # as asked
    ],
)
def test_nightly_takes_the_machines_build(
    spec: dict[str, Any], options: dict[str, str], variant: str
) -> None:
    p = plan(spec_facts(python="3.12", **spec), channel="nightly", **options)
    assert (p.status, p.variant, p.source, p.torch_version) == ("ok", V(variant), "nightly", None)
    assert p.index_url == NIGHTLY_BASE + variant
    assert p.reasons[0] == f"nightly {variant} build from PyTorch's nightly index"
    assert "nightly-unverified" in p.warning_codes
    assert p.argv[:3] == ("pip", "install", "--pre") and p.requirements == ("torch",)


def test_nightly_on_a_mirror() -> None:
    p = plan(
        spec_facts(os="linux", python="3.12"), channel="nightly", index_url="https://m.example/whl/"
    )
    assert p.index_url == "https://m.example/whl/nightly/cpu"


@pytest.mark.parametrize(
    ("spec", "options", "code", "reason"),
    [
        ({"os": "linux", "gpus": ["sm_37"], "driver": "470.82.01"}, {}, "nightly-no-gpu-build",
         "no nightly CUDA build is known to carry kernels for these GPUs "
         f"(data of {M.newest.version})"),
        ({"os": "linux"}, {"variant": "cu118"}, "nightly-no-variant",
         "the nightly channel has no cu118 build for linux_x86_64 in the data"),
        ({"os": "windows", "gpus": ["MI300X"]}, {}, "nightly-no-variant",
         "the nightly channel has no ROCm build for windows_x86_64"),
    ],
)  # fmt: skip
def test_nightly_without_a_build(
    spec: dict[str, Any], options: dict[str, str], code: str, reason: str
) -> None:
    p = plan(spec_facts(python="3.12", **spec), channel="nightly", **options)
    assert (p.status, p.reason_codes, p.reasons) == ("none", (code,), (reason,))
    assert not p.command


# --- AMD and Intel: the accelerator route alone


def test_an_intel_gpu_gets_the_xpu_index_with_its_driver_note() -> None:
    for os_name in ("linux", "windows"):
        p = plan(spec_facts(os=os_name, python="3.12", gpus=["Arc A770"]))
        assert (p.status, p.torch_version, p.variant) == ("ok", "2.14.1", V("xpu"))
        assert p.index_url == "https://download.pytorch.org/whl/xpu"
        assert p.reasons[:2] == (
            "Intel GPU(s) Arc A770: torch 2.14.1 from PyTorch's xpu index (PyPI's wheels carry "
            "no Intel GPU support)",
            f"torch {M.newest.version}: no xpu build is confirmed in the data",
        )
        assert {"unverified-fit", "xpu-driver-needed"} <= set(p.warning_codes)
        assert f"{M.newest.version}+xpu may exist" in " ".join(p.warnings)


def test_amd_gpus_are_named_with_their_gfx_and_checked_against_the_wheel() -> None:
    p = plan(spec_facts(os="linux", python="3.12", gpus=["MI300X", "RX 7900 XTX"]))
    assert (p.status, p.variant) == ("ok", V("rocm7.14"))
    assert p.reasons[0] == (
        "AMD GPU(s) MI300X (gfx942), RX 7900 XTX (gfx1100): torch 2.14.1 from PyTorch's "
        "rocm7.14 index (PyPI's wheels carry no AMD GPU support)"
    )
    assert p.reasons[2].startswith("torch 2.14.1+rocm7.14 carries gfx942, gfx1100 (")
    assert "xpu-driver-needed" not in p.warning_codes


def test_rocm_on_windows_is_a_cpu_fallback_that_says_why() -> None:
    p = plan(spec_facts(os="windows", python="3.12", gpus=["MI300X"]))
    assert (p.status, p.variant) == ("fallback", V("cpu"))
    assert p.reason_codes == ("cpu-fallback", "rocm-linux-only")
    assert p.reasons[1] == "PyTorch publishes ROCm wheels for Linux x86_64 only, not windows_x86_64"
    assert [f.kind for f in p.fixes] == ["cpu"]


# --- when nothing installs: what does, and what to change


def fixes(p: Plan) -> list[tuple[str, str]]:
    return [(f.kind, f.summary) for f in p.fixes]


def test_a_pin_for_an_old_python_names_the_release_that_installs() -> None:
    p = plan(spec_facts(os="linux", python="3.9"), torch="2.14.1")
    assert (p.status, p.reasons) == ("none", ("torch 2.14.1 needs Python >=3.10",))
    assert fixes(p) == [
        ("pin-torch", "torch 2.8.0 is the newest release that installs for Python 3.9 on "
         "linux_x86_64: --torch 2.8.0"),
        ("change-python", "use Python 3.10–3.14 for torch 2.14.1 (e.g. `uv venv --python 3.10`)"),
    ]  # fmt: skip


def test_a_pin_for_an_old_glibc_says_move_to_a_newer_system() -> None:
    p = plan(spec_facts(os="linux", python="3.12", glibc="2.17"), torch="2.14.1")
    assert p.reasons == ("torch 2.14.1 needs glibc >= 2.28 (this system has 2.17)",)
    assert [k for k, _s in fixes(p)] == ["pin-torch", "newer-os"]
    assert fixes(p)[0][1].endswith("--torch 2.5.1")
    assert fixes(p)[1][1].startswith(
        "torch 2.14.1 needs glibc >= 2.28: move to a newer distribution"
    )


def test_a_free_threaded_python_is_named_with_its_t() -> None:
    p = plan(spec_facts(os="linux", python="3.14t"), torch="2.8.0")
    assert p.reasons == ("torch 2.8.0 has no wheel for Python 3.14t",)
    assert fixes(p) == [
        ("pin-torch", "torch 2.15.0 is the newest release that installs for Python 3.14t on "
         "linux_x86_64: --torch 2.15.0"),
        ("change-python", "use Python 3.9–3.13 (free-threaded: 3.13t) for torch 2.8.0 "
         "(e.g. `uv venv --python 3.9`)"),
    ]  # fmt: skip


def test_an_old_macos_is_told_to_upgrade() -> None:
    p = plan(spec_facts(os="macos", python="3.12", macos="13.0"))
    assert (p.torch_version, p.reason_codes[0]) == ("2.11.0", "apple-old-macos")
    assert "mps-needs-macos-14" in p.warning_codes
    assert fixes(p) == [
        ("upgrade-os", f"upgrade macOS to 14.0 or later for torch {M.newest.version}")
    ]


def test_facts_without_a_python_ask_for_one() -> None:
    f = spec_facts(os="linux", python="3.12")
    f = dataclasses.replace(f, python=dataclasses.replace(f.python, version=None, tags=()))
    p = plan(f)
    assert (p.status, p.reason_codes) == ("none", ("no-python",))
    assert [k for k, _s in fixes(p)] == ["name-python"]
    assert "setup-env plan --os linux --python 3.12" in p.fixes[0].summary
    # the command named is for this machine's OS
    w = spec_facts(os="windows", python="3.12")
    w = dataclasses.replace(w, python=dataclasses.replace(w.python, version=None, tags=()))
    assert "setup-env plan --os windows --python 3.12" in plan(w).fixes[0].summary


def test_a_python_known_by_its_version_or_by_its_tags_alone_is_enough() -> None:
    f = spec_facts(os="linux", python="3.12")
    for python in (
        dataclasses.replace(f.python, version=None),  # the wheel tags it accepts
        dataclasses.replace(f.python, tags=()),  # its version: the tags follow from it
    ):
        p = plan(dataclasses.replace(f, python=python))
        assert (p.status, p.torch_version) == ("ok", M.newest.version.public)
        assert "no-python" not in p.reason_codes


def test_the_facts_a_plan_reports_having_used() -> None:
    from setup_env.decide.plan.target import facts_summary

    f = spec_facts(
        os="linux", python="3.13t", glibc="2.28", gpus=["RTX 5090", "MI300X"], driver="575.57.08"
    )
    assert facts_summary(f) == {
        "os": "linux", "distro": None, "glibc": "2.28", "macos": None, "wsl": None,
        "arch": "x86_64", "cpu_arch": "x86_64", "python": "3.13", "free_threaded": True,
        "rosetta": None, "nvidia_driver": "575.57.08", "cuda_driver": None, "apple_chip": None,
        "gpus": [
            {"index": 0, "name": "RTX 5090", "vendor": "nvidia", "compute_capability": "12.0",
             "gfx_arch": None, "mig_mode": None, "catalogue_match": "exact",
             "driver_window": {"first_branch": 570, "last_branch": None},
             "sources": {"compute_capability": "spec", "memory_bytes": "catalogue",
                         "driver_window": "catalogue"}},
            {"index": 1, "name": "MI300X", "vendor": "amd", "compute_capability": None,
             "gfx_arch": "gfx942", "mig_mode": None, "catalogue_match": "exact",
             "driver_window": None, "sources": {"gfx": "spec", "memory_bytes": "catalogue"}},
        ],
    }  # fmt: skip
    mac = facts_summary(spec_facts(os="macos", arch="arm64", python="3.12", gpus=["M2 Max"]))
    assert (mac["os"], mac["arch"], mac["apple_chip"], mac["nvidia_driver"]) == (
        "darwin",
        "arm64",
        "Apple M2 Max",
        None,
    )


# --- no wheels for this platform at all


def test_windows_on_arm_is_said_with_what_is_known() -> None:
    p = plan(spec_facts(os="windows", arch="arm64", python="3.12"))
    assert (p.status, p.reason_codes) == ("none", ("no-platform", "platform-unsure"))
    assert p.reasons[0] == "no torch release in this data lists wheels for windows on arm64"
    assert p.reasons[1].startswith(
        "PyTorch's cpu index has native Windows on Arm64 CPU wheels for Python 3.11–3.13 "
        "(none on PyPI); which torch releases carry them is not in this data [?: "
    )
    assert fixes(p) == [(
        "change-python",
        "with a native arm64 Python 3.11–3.13, install torch from PyTorch's cpu index "
        "(https://download.pytorch.org/whl/cpu); otherwise use an x64 Python (runs under "
        "emulation, CPU only) or WSL2",
    )]  # fmt: skip
    bare = dataclasses.replace(M, platform_notes={})
    p = make_plan(spec_facts(os="windows", arch="arm64", python="3.12"), PlanOptions(), bare)
    assert p.reason_codes == ("no-platform",)
    assert fixes(p)[0][1].startswith("no Windows on Arm wheels are in this data")


def test_a_cpu_or_system_without_wheels() -> None:
    f = spec_facts(os="linux", python="3.12")
    ppc = dataclasses.replace(
        f,
        python=dataclasses.replace(f.python, machine="ppc64le", tags=()),
        cpu=dataclasses.replace(f.cpu, architecture="ppc64le"),
    )
    p = plan(ppc)
    assert (p.status, p.reasons, p.fixes) == (
        "none",
        ("PyTorch publishes no wheels for linux on ppc64le",),
        (),
    )
    bsd = dataclasses.replace(f, os=dataclasses.replace(f.os, family="freebsd"))
    assert plan(bsd).reasons == ("PyTorch publishes no wheels for freebsd on x86_64",)
    assert plan(ppc, channel="nightly").reason_codes == ("no-platform",)


SOURCE_BUILD = (
    "build PyTorch from source for your GPU: PYTORCH_ROCM_ARCH={gfx} python setup.py develop, "
    "on ROCm (https://github.com/pytorch/pytorch#amd-rocm-support)"
)
KEEP_CPU = "keep the CPU build (no GPU acceleration) until one of the fixes above is applied"


def test_a_gfx_no_official_wheel_carries() -> None:
    p = plan(spec_facts(os="linux", python="3.12", gpus=["RX 5700 XT"]))
    assert (p.status, p.variant, p.reason_codes) == (
        "fallback", V("cpu"), ("cpu-fallback", "rocm-gfx-not-in-wheel")
    )  # fmt: skip
    assert p.reasons[1] == (
        "no official ROCm wheel of torch 2.14.1 carries gfx1010 (RX 5700 XT): PyTorch builds for "
        "a fixed list of gfx targets"
    )
    assert "rocm-gfx-never-official" in p.warning_codes
    assert fixes(p) == [
        ("build-from-source", SOURCE_BUILD.format(gfx="gfx1010")),
        ("cpu", KEEP_CPU),
    ]


def test_a_gfx_a_later_release_carries_points_to_it() -> None:
    p = plan(spec_facts(os="linux", python="3.12", gpus=["RX 9070 XT"]), torch="2.6")
    assert p.reasons[1] == (
        "no official ROCm wheel of torch 2.6.0 carries gfx1201 (RX 9070 XT): PyTorch builds for "
        "a fixed list of gfx targets"
    )
    assert "rocm-gfx-never-official" not in p.warning_codes
    assert fixes(p) == [
        ("pin-torch", "torch 2.7.0 or newer carries gfx1201: plan without the --torch pin "
         "(or with --torch 2.7)"),
        ("build-from-source", SOURCE_BUILD.format(gfx="gfx1201")),
        ("cpu", KEEP_CPU),
    ]  # fmt: skip
