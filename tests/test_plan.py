"""The planner, driven by the tables (drivers around every minimum, every GPU generation) and by
named real situations with the answer a PyTorch expert would give."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from packaging.version import Version

from setup_env.decide.model import Plan, PlanError, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts, Gpu, NvidiaInfo
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, MPS, XPU, Variant

V = Variant.parse

FIXTURES = Path(__file__).resolve().parent / "fixtures"
M = mx.load_matrix(FIXTURES / "matrix" / "wheels-subset.json")  # frozen: see its SOURCE


def plan(opts: PlanOptions | None = None, **spec: object) -> Plan:
    return make_plan(spec_facts(**spec), opts, M)  # type: ignore[arg-type]


def said(p: Plan, code: str) -> str:
    """The reasons and warnings of the plan that carry ``code``, as one text."""
    pairs = [*zip(p.reason_codes, p.reasons), *zip(p.warning_codes, p.warnings)]
    assert code in {c for c, _t in pairs}, (code, pairs)
    return " | ".join(t for c, t in pairs if c == code)


def fix_kinds(p: Plan) -> list[str]:
    return [f.kind for f in p.fixes]


# --- an oracle independent of the planner's code ----------------------------


def sass_runs(cc: tuple[int, int], build: mx.Build) -> bool:
    return any(a == cc[0] and b <= cc[1] for a, b in build.sass)


def driver_ok(build: mx.Build, driver: Version, os_family: str = "linux") -> str | None:
    row = M.cuda_version(build.cuda)
    assert row is not None
    full = row.toolkit_minimum(build.toolkit).for_os(os_family)[0]
    floor = row.mvc.for_os(os_family)[0]
    if driver >= full:
        return "full"
    if driver >= floor:
        return "mvc"
    return None


def fits(rel: mx.Release, cc: tuple[int, int], driver: Version, plat: str = "linux_x86_64") -> bool:
    variants = set(rel.index_variants(plat))
    pv = rel.pypi_variant.get(plat)
    if pv is not None:
        variants.add(pv.variant)
    for v in variants:
        b = M.build(v, rel.version, plat)
        if b is not None and sass_runs(cc, b) and driver_ok(b, driver):
            return True
    return False


# GPU generations the wheels have served (compute capabilities from the tables themselves).
CCS = sorted({cc for b in M.builds.values() for cc in b.sass})
DRIVERS = sorted({fl.linux for row in M.cuda.values() for fl in (*row.updates.values(), row.mvc)})


def just_below(v: Version) -> Version:
    parts = list(v.release)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] > 0:
            parts[i] -= 1
            break
    return Version(".".join(map(str, parts)))


def _facts(cc: tuple[int, int], driver: str | None) -> Facts:
    f = spec_facts(os="linux", python="3.12", glibc="2.35")
    gpu = Gpu(index=0, name=f"sm_{cc[0]}{cc[1]}", compute_capability=f"{cc[0]}.{cc[1]}")
    return replace(f, nvidia=NvidiaInfo(driver_version=driver, gpus=(gpu,)))


@pytest.mark.parametrize("cc", CCS, ids=lambda c: f"sm_{c[0]}{c[1]}")
@pytest.mark.parametrize(
    "driver",
    [max(DRIVERS), *DRIVERS, *(just_below(d) for d in DRIVERS)],
    ids=str,
)
def test_driver_table_sweep(cc: tuple[int, int], driver: Version) -> None:
    """For every GPU generation and every driver around every minimum: the plan's wheel runs the
    GPU, the driver supports it, and no newer release would have."""
    p = make_plan(_facts(cc, str(driver)), None, M)
    assert "--extra-index-url" not in p.command
    newer_fit = [r for r in M.releases if fits(r, cc, driver)]
    if p.status != "ok":
        assert p.status == "fallback" and p.variant == CPU
        assert not newer_fit, f"{newer_fit[-1].version} would fit"
        return
    rel = M.release(p.torch_version or "")
    assert rel is not None
    assert p.variant is not None
    b = M.build(p.variant, rel.version, "linux_x86_64")
    assert b is not None and sass_runs(cc, b)
    assert driver_ok(b, driver) == p.driver_compat
    assert newer_fit and newer_fit[-1].version == rel.version
    if p.driver_compat == "mvc":
        assert "driver-mvc" in p.warning_codes


@pytest.mark.parametrize("cc", CCS, ids=lambda c: f"sm_{c[0]}{c[1]}")
def test_no_driver(cc: tuple[int, int]) -> None:
    p = make_plan(_facts(cc, None), None, M)
    if p.status == "ok":
        assert p.driver_compat == "no-driver"
        assert p.fixes[0].kind == "upgrade-driver"
        if cc < (5, 0):
            # Kepler's last driver is R470 (issue 12): never the wheel's own 520 driver, but the
            # minor-version-compatibility floor within the GPU's driver window.
            assert "R470" in p.fixes[0].summary and p.min_driver not in p.fixes[0].summary
        else:
            assert p.min_driver in p.fixes[0].summary
        assert p.variant is not None
        b = M.build(p.variant, p.torch_version or "", "linux_x86_64")
        assert b is not None and sass_runs(cc, b)
    else:
        assert p.variant == CPU and "build-from-source" in fix_kinds(p)


def test_newest_driver_newest_gpus_get_plain_pypi() -> None:
    newest = M.newest
    pv = newest.pypi_variant["linux_x86_64"].variant
    b = M.build(pv, newest.version, "linux_x86_64")
    assert b is not None
    for cc in b.sass:
        p = make_plan(_facts(cc, str(max(DRIVERS))), None, M)
        assert (p.torch_version, p.variant, p.index_url) == (str(newest.version), pv, None)
        assert p.argv == ("pip", "install", f"torch=={newest.version}")


# --- named situations ----------------------------


def test_t4_driver_470() -> None:
    p = plan(os="linux", python="3.11", gpus=["Tesla T4"], driver="470.57.02")
    # R470 speaks CUDA 11.4: the newest wheel it runs is cu118 through minor-version compatibility
    assert (p.status, p.torch_version, p.variant, p.driver_compat) == (
        "ok",
        "2.7.1",
        V("cu118"),
        "mvc",
    )
    assert p.index_url == "https://download.pytorch.org/whl/cu118"
    assert p.fixes[0].kind == "upgrade-driver" and "torch 2.15.0" in p.fixes[0].summary


def test_k80() -> None:
    p = plan(os="linux", python="3.11", gpus=["Tesla K80"], driver="470.57.02")
    assert (p.torch_version, p.variant) == ("2.7.1", V("cu118"))  # the last build with sm_37
    assert "sm_37" in p.details["arches"]
    # Kepler's last driver is R470: never advise a driver it can't have
    assert not any("595" in f.summary for f in p.fixes)
    assert "arches-inferred" in p.warning_codes


@pytest.mark.parametrize("gpu", ["Tesla P100-PCIE-16GB", "Tesla V100-SXM2-16GB", "P100", "V100"])
def test_pascal_volta_only_cu126(gpu: str) -> None:
    p = plan(os="linux", python="3.12", gpus=[gpu], driver="580.95.05")
    assert (p.status, p.torch_version, p.variant, p.driver_compat) == (
        "ok",
        "2.14.1",
        V("cu126"),
        "full",
    )
    assert "2.15.0" in said(p, "arch-dropped-in-newest")
    # cu126 is gone in 2.15: asking for it says so and names the last release that has it
    q = plan(PlanOptions(torch="2.15", variant="cu126"), os="linux", python="3.12", gpus=[gpu])
    assert q.status == "none"
    assert any(f.kind == "pin-torch" and "2.14.1" in f.summary for f in q.fixes)


def test_rtx_4090() -> None:
    p = plan(os="linux", python="3.12", gpus=["RTX 4090"], driver="595.71.05")
    assert (p.torch_version, p.variant, p.driver_compat, p.command) == (
        "2.15.0", V("cu132"), "full", "pip install torch==2.15.0",
    )  # fmt: skip
    assert "sm_86" in p.details["arches"]  # 8.9 runs the 8.6 SASS


def test_rtx_5090_driver_570() -> None:
    p = plan(os="linux", python="3.12", gpus=["RTX 5090"], driver="570.86.10")
    assert p.status == "ok"
    assert Version(p.torch_version or "0") >= Version("2.7")
    assert p.variant is not None and V("cu128") <= p.variant < V("cu130")
    assert "sm_120" in p.details["arches"]
    assert p.fixes[0].kind == "upgrade-driver"


def test_b200() -> None:
    p = plan(os="linux", python="3.12", gpus=["B200"], driver="595.71.05")
    assert (p.torch_version, p.variant, p.index_url) == ("2.15.0", V("cu132"), None)


def test_h100_driver_535_minor_version_compatibility() -> None:
    p = plan(os="linux", python="3.12", gpus=["H100"], driver="535.104.05")
    assert (p.torch_version, p.variant, p.driver_compat) == ("2.14.1", V("cu126"), "mvc")
    assert p.min_driver == "560.35.05" and p.details["mvc_floor"] == "525.60.13"
    assert "driver-mvc" in p.warning_codes


def test_gh200_aarch64() -> None:
    p = plan(os="linux", arch="aarch64", python="3.12", gpus=["GH200"], driver="595.71.05")
    assert (p.platform, p.torch_version, p.variant, p.index_url) == (
        "linux_aarch64", "2.15.0", V("cu132"), None,
    )  # fmt: skip


def test_t4g_on_graviton_has_no_cuda_wheel() -> None:
    p = plan(os="linux", arch="aarch64", python="3.12", gpus=["sm_75"], driver="595.71.05")
    assert p.status == "fallback" and p.variant == CPU  # aarch64 CUDA wheels start at sm_80


def test_windows_rtx_3060() -> None:
    p = plan(os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49")
    assert (p.torch_version, p.variant) == ("2.15.0", V("cu130"))
    assert p.index_url == "https://download.pytorch.org/whl/cu130"
    assert "pypi-default-differs" in p.reason_codes


def test_macos_13_m1_and_14_m3() -> None:
    p = plan(os="macos", python="3.12", gpus=["M1"], macos="13.6")
    assert (p.torch_version, p.index_url) == ("2.11.0", None)
    assert "upgrade-os" in fix_kinds(p)
    q = plan(os="macos", python="3.12", gpus=["M3"], macos="14.4")
    assert (q.torch_version, q.variant, q.command) == ("2.15.0", MPS, "pip install torch==2.15.0")


def test_intel_mac() -> None:
    p = plan(os="macos", arch="x86_64", python="3.12", macos="13.6")
    assert (p.status, p.torch_version, p.variant) == ("ok", "2.2.2", CPU)
    assert plan(os="macos", arch="x86_64", python="3.13", macos="14.0").status == "none"


def test_rosetta_python_on_arm64_mac() -> None:
    f = spec_facts(os="macos", arch="x86_64", python="3.11", macos="14.5")
    f = replace(f, cpu=replace(f.cpu, architecture="arm64"), python=replace(f.python, rosetta=True))
    p = make_plan(f, None, M)
    assert p.torch_version == "2.2.2"
    assert "rosetta" in p.warning_codes
    assert p.fixes[0].kind == "native-python"


@pytest.mark.parametrize(("py", "want"), [("3.9", "2.8.0"), ("3.10", "2.14.1"), ("3.11", "2.15.0")])
def test_python_versions(py: str, want: str) -> None:
    p = plan(os="linux", python=py, gpus=["RTX 4090"], driver="595.71.05")
    assert p.torch_version == want
    if want != "2.15.0":
        assert "change-python" in fix_kinds(p)
        assert ">=3.11" in said(p, "newer-release-not-installable")


def test_free_threaded() -> None:
    p = plan(os="linux", python="3.14t", gpus=["RTX 4090"], driver="595.71.05")
    assert p.torch_version == "2.15.0"
    q = plan(os="linux", python="3.13t")
    assert q.torch_version == "2.12.0"  # 2.12.1 dropped cp313t


def test_centos7_glibc_2_17() -> None:
    p = plan(os="linux", python="3.10", glibc="2.17", gpus=["Tesla T4"], driver="535.104.05")
    assert p.torch_version == "2.5.1"
    blocked = said(p, "newer-release-not-installable")
    assert "2.6.0" in blocked and "manylinux1" in blocked
    assert "newer-os" in fix_kinds(p)


def test_gtx_1080_beside_rtx_5090() -> None:
    p = plan(os="linux", python="3.12", gpus=["GTX 1080", "RTX 5090"], driver="595.71.05")
    assert (p.status, p.variant) == ("fallback", CPU)
    kinds = fix_kinds(p)
    assert kinds[-1] == "cpu" and "build-from-source" in kinds and "one-gpu-type" in kinds
    assert any('TORCH_CUDA_ARCH_LIST="6.1;12.0"' in f.summary for f in p.fixes)


def test_rocm_mi300x() -> None:
    p = plan(os="linux", python="3.12", gpus=["MI300X"])
    r = M.release(p.torch_version or "")
    assert r is not None and p.variant is not None and p.variant.is_rocm
    assert r.index[p.variant]["linux_x86_64"].verified
    assert p.index_url == f"https://download.pytorch.org/whl/{p.variant}"
    w = plan(os="windows", python="3.12", gpus=["MI300X"])
    assert w.status == "fallback"


def test_xpu() -> None:
    # Issue 17 item 7.7: inferred (I) index rows may be planned on, and the plan says so; the
    # 2.14.x xpu rows are I (test-infra release/2.14 builds XPU for Linux and Windows), so the
    # plan is 2.14.1, not 2.13.0 (the one V row) two releases behind. 2.15's xpu row is '?'.
    p = plan(os="linux", python="3.12", gpus=["Arc A770"])
    assert p.variant == XPU and p.torch_version == "2.14.1"
    assert "row-inferred" in p.warning_codes


def test_this_machine_replayed() -> None:
    from setup_env.probe.detect import detect
    from setup_env.probe.host import ReplayHost

    facts = detect(ReplayHost(FIXTURES / "hosts" / "debian12-nogpu-cuda13toolkit"))
    p = make_plan(facts, None, M)
    assert (p.status, p.torch_version, p.variant) == ("ok", "2.15.0", CPU)
    assert p.index_url == "https://download.pytorch.org/whl/cpu"


def test_mig_and_wsl() -> None:
    f = spec_facts(os="linux", python="3.12", gpus=["H100"], driver="596.49", wsl=True)
    assert f.nvidia is not None
    gpu = replace(f.nvidia.gpus[0], mig_mode=True)
    f = replace(f, nvidia=replace(f.nvidia, gpus=(gpu,)))
    p = make_plan(f, None, M)
    assert p.status == "ok" and "mig-enabled" in p.warning_codes
    assert "wsl2" in p.reason_codes
    q = plan(os="linux", python="3.12", gpus=["H100"], driver="560.94", wsl=True)
    assert any("Windows" in f.summary for f in q.fixes if f.kind == "upgrade-driver")


# --- options ----------------------------


def test_companions_and_lag() -> None:
    opts = PlanOptions(with_packages=("torchvision", "torchaudio"))
    p = plan(opts, os="linux", python="3.12", gpus=["H100"], driver="595.71.05")
    assert p.requirements == ("torch==2.15.0",)
    assert "torchvision" in said(p, "companion-unknown")
    assert any(f.kind == "pin-torch" and "2.14.1" in f.summary for f in p.fixes)
    q = plan(replace(opts, torch="2.13"), os="linux", python="3.12")
    assert q.requirements == ("torch==2.13.0", "torchvision==0.28.0", "torchaudio==2.11.0")


def test_unverified_variant_is_never_recommended() -> None:
    p = plan(PlanOptions(torch="2.15.0", variant="cu130"), os="linux", python="3.12")
    assert p.status == "none" and not p.command
    assert "unverified-variant" in p.warning_codes


@pytest.mark.parametrize("installer", ["pip", "uv", "uv-project", "poetry", "requirements"])
def test_installers(installer: str) -> None:
    opts = PlanOptions(installer=installer, with_packages=("torchvision",), torch="2.14.1")  # type: ignore[arg-type]
    p = plan(opts, os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49")
    url = "https://download.pytorch.org/whl/cu130"  # 2.14's stable CUDA, before cu132
    assert p.index_url == url
    text = p.command + (p.config or "")
    assert "extra-index-url" not in text and "extra-index" not in text
    if installer in ("pip", "uv"):
        assert p.argv[-2:] == ("--index-url", url)
        assert "torchvision==0.29.*" in p.argv
    else:
        assert p.config is not None and url in p.config and "torch" in p.config
    if installer == "uv-project":
        assert "explicit = true" in (p.config or "")
    if installer == "poetry":
        assert 'priority = "explicit"' in (p.config or "")


def test_mirror_and_nightly() -> None:
    opts = PlanOptions(index_url="https://mirror.corp.example/pytorch/whl/")
    p = plan(opts, os="linux", python="3.12")
    assert p.index_url == "https://mirror.corp.example/pytorch/whl/cpu" and p.source == "mirror"
    for bad in (
        "https://user:pw@mirror/whl",
        "https://mirror/whl?x=1",
        "ftp://m/whl",
        "https://m/w hl",
    ):
        with pytest.raises(PlanError):
            plan(PlanOptions(index_url=bad), os="linux", python="3.12")
    n = plan(PlanOptions(channel="nightly"), os="linux", python="3.12", gpus=["RTX 5090"])
    assert n.argv[:3] == ("pip", "install", "--pre")
    assert n.index_url is not None and n.index_url.startswith(
        "https://download.pytorch.org/whl/nightly/cu"
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        {"os": "solaris"},
        {"os": "linux", "python": "3"},
        {"os": "linux", "gpus": ["Foo 9000"]},
        {"os": "linux", "driver": "abc"},
        {"os": "macos", "glibc": "2.17"},
    ],
)
def test_bad_spec(kwargs: dict) -> None:
    with pytest.raises(PlanError):
        spec_facts(**kwargs)


def test_bad_options() -> None:
    for opts in (
        PlanOptions(variant="cu999"),
        PlanOptions(torch="latest"),
        PlanOptions(with_packages=("torchtext",)),
    ):
        with pytest.raises(PlanError):
            plan(opts, os="linux", python="3.12")
    assert plan(PlanOptions(torch="9.9"), os="linux", python="3.12").status == "none"
