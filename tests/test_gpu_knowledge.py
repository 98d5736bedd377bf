"""Issue 9 item 4 and issue 12 items 2-4: one GPU knowledge base, one resolve step, driver
windows, the ROCm gfx check and every NVIDIA GPU by name (the expert's answers of issue 12)."""

from __future__ import annotations

import re

import pytest

from setup_env.decide.doctor import examine
from setup_env.decide.model import PlanError
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.decide.rocmplan import gfx_runs_on, installed_gap, wheel_fit
from setup_env.facts import Facts, Gpu, InstalledPackage, NvidiaInfo, RocmInfo
from setup_env.knowledge import gpus
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, Variant
from setup_env.probe.resolve import resolve_facts, resolve_gpu

M = mx.load_matrix(mx.BUNDLED_PATH)
V = Variant.parse
CAT = gpus.load()


def _plan(*names: str, driver: str | None = None, arch: str = "x86_64", torch: str | None = None):
    from setup_env.decide.model import PlanOptions

    facts = spec_facts(os="linux", arch=arch, python="3.12", gpus=names, driver=driver)
    return make_plan(facts, PlanOptions(torch=torch), M)


# --- the data: every row has a source ----------------------------------------------------


def test_every_table_row_cites_a_source() -> None:
    for m in CAT.models:
        assert m.sources and all(s.startswith(("https://", "tests/")) for s in m.sources), m.key
    for a in CAT.amd:
        assert a.sources and re.fullmatch(r"gfx[0-9a-f]{3,4}", a.gfx), a.key
    for cc, w in CAT.windows.items():
        assert w.sources and cc in CAT.architectures, cc
    for r in CAT.rocm_wheels:
        assert r.sources and r.gfx
    for j in CAT.jetpacks:
        assert j.sources and j.modules


# --- one resolve step ----------------------------------------------------------------------


def test_resolve_fills_from_the_catalogue_and_says_so() -> None:
    r = resolve_gpu(Gpu(index=0, name="NVIDIA GeForce RTX 5060", source="nvidia-smi -q"))
    assert (r.compute_capability, r.sources["compute_capability"]) == ("12.0", "catalogue")
    assert r.window is not None and r.window.first_branch == 570 and r.code is None
    reported = resolve_gpu(Gpu(index=0, name="Tesla T4", compute_capability="7.5", source="nvml"))
    assert reported.sources["compute_capability"] == "nvml"
    amd = resolve_gpu(Gpu(index=0, name="AMD Radeon RX 7900 XTX", vendor="amd", source="spec"))
    assert (amd.gfx, amd.sources["gfx"]) == ("gfx1100", "catalogue")


def test_unknown_names_carry_a_code_and_the_closest_names() -> None:
    r = resolve_gpu(Gpu(index=0, name="NVIDIA GeForce RTX 5O60", source="x"))
    assert r.code == "gpu-unknown" and r.compute_capability is None
    assert "NVIDIA GeForce RTX 5060" in r.suggestions
    with pytest.raises(PlanError, match=r"gpu-unknown.*closest known: .*Quadro RTX 6000"):
        spec_facts(os="linux", gpus=["Quadro RTX 600"])


def test_resolve_facts_fills_every_gpu_once() -> None:
    facts = Facts(
        nvidia=NvidiaInfo(gpus=(Gpu(index=0, name="NVIDIA GB10", source="nvidia-smi"),)),
        rocm=RocmInfo(gpus=(Gpu(index=0, name="AMD Instinct MI300X", vendor="amd"),)),
    )
    out = resolve_facts(facts)
    assert out.nvidia is not None and out.nvidia.gpus[0].compute_capability == "12.1"
    assert out.rocm is not None and out.rocm.gpus[0].gfx_arch == "gfx942"
    assert resolve_facts(out) is out  # idempotent: nothing left to fill


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("NVIDIA GB10", "12.1"),
        ("NVIDIA GB300", "10.3"),
        ("NVIDIA Thor", "11.0"),
        ("NVIDIA GeForce RTX 5050", "12.0"),
        ("NVIDIA RTX PRO 2000 Blackwell", "12.0"),
        ("NVIDIA GeForce GTX 1650", "7.5"),
        ("NVIDIA T400 4GB", "7.5"),
        ("NVIDIA A16", "8.6"),
        ("NVIDIA GeForce RTX 4050 Laptop GPU", "8.9"),
        ("NVIDIA TITAN V", "7.0"),
        ("Quadro P4000", "6.1"),
    ],
)
def test_issue_12_names_are_known(name: str, cc: str) -> None:
    facts = spec_facts(os="linux", gpus=[name])
    assert facts.nvidia is not None and facts.nvidia.gpus[0].compute_capability == cc


# --- driver windows --------------------------------------------------------------------------


def test_driver_windows_match_nvidias_matrix() -> None:
    assert {cc: CAT.windows[cc].last_branch for cc in ("3.7", "5.2", "6.1", "7.0")} == {
        "3.7": 470,
        "5.2": 580,
        "6.1": 580,
        "7.0": 580,
    }
    assert CAT.windows["12.0"].first_branch == 570 and CAT.windows["12.0"].last_branch is None
    assert gpus.driver_window_for_arch("Pascal") is not None
    assert CAT.windows["7.5"].kernel_modules == "either"
    assert CAT.windows["10.0"].kernel_modules == "open"


LAST = [(cc, w.last_branch) for cc, w in CAT.windows.items() if w.last_branch]
DRIVERS = [None, "390.157", "450.80.02", "470.82.01", "535.104.05", "560.35.03", "580.95.05"]
# Only machines that can exist: a driver past a GPU's last branch does not load for it.
MACHINES = [
    (cc, last, driver)
    for cc, last in LAST
    for driver in DRIVERS
    if driver is None or int(driver.split(".")[0]) <= last
]


@pytest.mark.parametrize(("cc", "last", "driver"), MACHINES)
def test_no_fix_asks_for_a_driver_the_gpu_cannot_run(
    cc: str, last: int, driver: str | None
) -> None:
    p = _plan(f"sm_{cc.replace('.', '')}", driver=driver)
    asked = [int(n) for f in p.fixes for n in re.findall(r">= (\d+)", f.summary)]
    assert [n for n in asked if n > last] == [], [f.summary for f in p.fixes]
    assert not any("or newer" in f.summary for f in p.fixes if f.kind == "upgrade-driver")
    # and the plan is usable as it stands, or says what to do
    assert p.status == "ok" or p.fixes, (p.status, p.reasons)


def test_a_release_past_the_gpus_last_branch_is_named_not_offered() -> None:
    """Kepler sm_37 (R470 is its last branch): the newer releases want a newer driver, which
    cannot run it; the plan says so, and the driver it offers stays within R470."""
    p = _plan("sm_37", driver="470.82.01")
    assert "driver-branch-ended" in p.reason_codes
    assert any("up to R470 only" in r for r in p.reasons), p.reasons
    p = _plan("sm_37", driver=None)
    ups = [f.summary for f in p.fixes if f.kind == "upgrade-driver"]
    assert ups and all(">= 450.80.02" in u and "R470" in u for u in ups), ups
    # a GPU whose window is still open: nothing ended
    assert "driver-branch-ended" not in _plan("sm_120", driver="580.95.05").reason_codes


def test_a_driver_too_old_for_a_new_gpu_is_a_reason_with_a_fix() -> None:
    p = _plan("NVIDIA GeForce RTX 5060", driver="560.35.03")
    assert any("older than R570" in r for r in p.reasons)
    assert p.fixes[0].kind == "upgrade-driver" and ">= 570" in p.fixes[0].summary


def test_cuda_13_builds_for_gb10_and_rtx_5060() -> None:
    for name, arch in (("NVIDIA GB10", "aarch64"), ("RTX 5060", "x86_64")):
        p = _plan(name, arch=arch)
        assert p.status == "ok" and p.variant is not None, name
        assert V("cu130") <= p.variant < V("cu140"), (name, p.variant)


# --- ROCm gfx --------------------------------------------------------------------------------


def test_gfx_targets_match_exactly() -> None:
    assert gfx_runs_on("gfx1100", ["gfx1100"]) and not gfx_runs_on("gfx1101", ["gfx1100"])
    assert wheel_fit("2.6.0", V("rocm6.2.4"), ["gfx1201"]).fits is False
    assert wheel_fit("2.7.0", V("rocm6.3"), ["gfx1201"]).fits is True
    assert wheel_fit("2.10.0", V("rocm7.0"), ["gfx1151"]).fits is True
    assert wheel_fit("2.9.0", V("rocm6.4"), ["gfx1151"]).fits is False
    assert wheel_fit("1.13.0", V("rocm5.2"), ["gfx90a"]).fits is None  # no data: not refused


def test_gfx1010_plans_cpu_naming_it() -> None:
    for name in ("gfx1010", "AMD Radeon RX 5700 XT"):
        p = _plan(name)
        assert p.status == "fallback" and p.variant == CPU, name
        assert "rocm-gfx-not-in-wheel" in p.reason_codes
        assert any("gfx1010" in r for r in p.reasons)
        kinds = [f.kind for f in p.fixes]
        assert "build-from-source" in kinds
        src = next(f for f in p.fixes if f.kind == "build-from-source")
        assert "PYTORCH_ROCM_ARCH=gfx1010" in src.summary
        assert any("HSA_OVERRIDE_GFX_VERSION" in w and "not a supported" in w for w in p.warnings)


@pytest.mark.parametrize("gfx", ["gfx1100", "gfx1201", "AMD Radeon RX 9070 XT", "MI300X"])
def test_supported_gfx_plans_rocm(gfx: str) -> None:
    p = _plan(gfx)
    assert p.status == "ok" and p.variant is not None and p.variant.is_rocm, p.variant


def test_gfx1201_needs_torch_2_7() -> None:
    p = _plan("gfx1201", torch="2.6")
    assert p.variant == CPU
    pin = next(f for f in p.fixes if f.kind == "pin-torch")
    assert "torch 2.7.0 or newer carries gfx1201" in pin.summary
    assert _plan("gfx1201", torch="2.7").variant in {V("rocm6.2.4"), V("rocm6.3")}


def test_doctor_finds_a_rocm_torch_without_the_gpus_gfx() -> None:
    assert installed_gap("2.6.0+rocm6.2.4", V("rocm6.2.4"), [("RX 9070 XT", "gfx1201")]) is not None
    assert installed_gap("2.7.1+rocm6.3", V("rocm6.3"), [("RX 9070 XT", "gfx1201")]) is None
    gpu = Gpu(index=0, name="AMD Radeon RX 9070 XT", vendor="amd", gfx_arch="gfx1201")
    torch = InstalledPackage(
        name="torch", version="2.6.0+rocm6.2.4", variant=V("rocm6.2.4"), hip="6.2"
    )
    facts = spec_facts(os="linux", gpus=["AMD Radeon RX 9070 XT"])
    facts = Facts(
        os=facts.os,
        python=facts.python,
        cpu=facts.cpu,
        rocm=RocmInfo(gpus=(gpu,)),
        packages=(torch,),
    )
    plan = make_plan(facts, None, M)
    codes = {f.code for f in examine(facts, plan, M)}
    assert "rocm-gfx-not-in-wheel" in codes


def test_window_and_gfx_rules_beside_the_cuda_rules() -> None:
    from setup_env.knowledge.cuda import gfx_runs_on as rule
    from setup_env.knowledge.cuda import window_fit

    pascal = CAT.windows["6.1"]
    blackwell = CAT.windows["12.0"]
    assert window_fit(580, pascal.first_branch, pascal.last_branch) == "ok"
    assert window_fit(590, pascal.first_branch, pascal.last_branch) == (
        "driver-past-gpu-last-branch"
    )
    assert window_fit(560, blackwell.first_branch, blackwell.last_branch) == (
        "driver-too-old-for-gpu"
    )
    assert rule is gfx_runs_on  # one rule, re-exported by rocmplan


def test_doctor_reads_the_error_code_not_the_prose() -> None:
    from setup_env.decide.doctor import examine as doctor

    base = NvidiaInfo(driver_version="580.95.05", error="NVML said no (reworded by a later probe)")
    for code, want in (
        ("driver-library-mismatch", "driver-library-mismatch"),
        ("driver-not-loaded", "driver-unusable"),
    ):
        facts = Facts(nvidia=NvidiaInfo(**{**base.__dict__, "error_code": code}))
        assert want in {f.code for f in doctor(facts, None, M)}


def test_plan_json_shows_what_the_catalogue_added() -> None:
    from setup_env.decide.plan import facts_summary

    facts = Facts(
        nvidia=NvidiaInfo(gpus=(Gpu(index=0, name="Tesla P100-PCIE-16GB", source="nvidia-smi -q"),))
    )
    g = facts_summary(facts)["gpus"][0]  # type: ignore[index]
    assert g["compute_capability"] == "6.0" and g["catalogue_match"] == "exact"
    assert g["sources"]["compute_capability"] == "catalogue"
    assert g["driver_window"] == {"first_branch": None, "last_branch": 580}
