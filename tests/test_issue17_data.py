"""Issue 17 item 7: the data rows that sent machines to wheels that do not run, each held against
its primary source (verbatim excerpts under tests/fixtures/reference/issue17/, with SOURCE.md) and
each machine it affects pinned. Rows 1-4, 6, 7, 8 (row 5, the JetPack rows, is another change's)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.decide.rocmplan import installed_gap, never_official, wheel_fit
from setup_env.knowledge import cloud_catalog
from setup_env.knowledge import gpus as catalogue
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, Variant

REF = Path(__file__).parent / "fixtures" / "reference" / "issue17"
M = mx.load_matrix(mx.BUNDLED_PATH)
CAT = catalogue.load()
CLOUD = cloud_catalog.load()
V = Variant.parse
DATA = Path(__file__).parents[1] / "setup_env" / "data"


def plan(opts: PlanOptions | None = None, **spec: Any) -> Plan:
    return make_plan(spec_facts(**spec), opts, M)


def said(p: Plan) -> str:
    return " | ".join([*p.reasons, *p.warnings, *(f.summary for f in p.fixes)])


def test_the_sources_are_copies_with_a_source_note() -> None:
    note = (REF / "SOURCE.md").read_text(encoding="utf-8")
    for f in REF.iterdir():
        if f.name != "SOURCE.md":
            assert f"`{f.name}`" in note, f.name
    assert note.count("SOURCE: https://") >= 5


# --- rows 1 and 2: the gfx targets of the ROCm wheels -------------------------------------------


def _build_sh_lists() -> tuple[list[str], list[str]]:
    """(the common list every ROCm build starts from, what the legacy 7.1/7.2 path prepends)."""
    text = (REF / "pytorch-manywheel-build.sh.txt").read_text(encoding="utf-8")
    common = re.search(r'PYTORCH_ROCM_ARCH="(gfx[^"$]+)"', text)
    legacy = re.search(r'PYTORCH_ROCM_ARCH="([^"$]+);\$\{PYTORCH_ROCM_ARCH\}"', text)
    assert common is not None and legacy is not None
    assert '*"7.14"*' in text  # the 7.14 path keeps the common list as it is
    return common.group(1).split(";"), legacy.group(1).split(";")


@pytest.mark.parametrize("release", ["2.14.0", "2.14.1", "2.15.0"])
def test_rocm714_wheels_carry_the_common_list_only(release: str) -> None:
    common, legacy = _build_sh_lists()
    assert legacy == ["gfx900", "gfx906"]
    assert set(CAT.rocm_gfx(release, "7.14") or ()) == set(common)
    assert set(CAT.rocm_gfx(release, "7.2") or ()) == {*legacy, *common}


@pytest.mark.parametrize("gpu", ["MI50", "MI60", "Radeon Pro VII", "MI25", "RX Vega 64"])
def test_gfx900_and_gfx906_parts_are_never_sent_to_rocm714(gpu: str) -> None:
    gfx = CAT.lookup_amd(gpu).gfx  # type: ignore[union-attr]
    assert gfx in ("gfx900", "gfx906")
    assert wheel_fit("2.15.0", V("rocm7.14"), [gfx]).fits is False
    assert wheel_fit("2.14.1", V("rocm7.14"), [gfx]).fits is False
    assert wheel_fit("2.14.1", V("rocm7.2"), [gfx]).fits is True
    for torch in (None, "2.14", "2.15"):
        p = plan(PlanOptions(torch=torch), os="linux", python="3.12", gpus=[gpu])
        assert p.variant != V("rocm7.14"), (torch, p.command)
        assert "rocm7.14" not in p.command
    newest = plan(os="linux", python="3.12", gpus=[gpu])
    assert (newest.torch_version, newest.variant) == ("2.14.1", V("rocm7.2"))


def test_an_installed_rocm714_torch_on_an_mi50_is_a_gap() -> None:
    gap = installed_gap("2.14.1+rocm7.14", V("rocm7.14"), [("AMD Instinct MI50", "gfx906")])
    assert gap is not None and gap.missing == ("gfx906",)


def test_gfx1103_is_in_the_rocm_wheels_from_torch_2_13() -> None:
    common, _legacy = _build_sh_lists()
    assert "gfx1103" in common
    assert not never_official("gfx1103")
    assert wheel_fit("2.12.1", V("rocm7.2"), ["gfx1103"]).fits is False
    for release, rocm in (("2.13.0", "rocm7.2"), ("2.14.1", "rocm7.2"), ("2.14.1", "rocm7.14")):
        assert wheel_fit(release, V(rocm), ["gfx1103"]).fits is True, (release, rocm)
    phoenix = CAT.lookup_amd("Radeon 780M")
    assert phoenix is not None and any("179653" in s for s in phoenix.sources)


@pytest.mark.parametrize("gpu", ["Radeon 780M", "Radeon 760M"])
def test_a_780m_on_torch_2_13_and_later_gets_rocm(gpu: str) -> None:
    p = plan(os="linux", python="3.12", gpus=[gpu])
    assert p.status == "ok" and p.variant is not None and p.variant.is_rocm
    assert p.torch_version == "2.14.1"
    pinned = plan(PlanOptions(torch="2.13"), os="linux", python="3.12", gpus=[gpu])
    assert pinned.status == "ok" and (pinned.torch_version, pinned.variant) == (
        "2.13.0",
        V("rocm7.2"),
    )
    old = plan(PlanOptions(torch="2.12"), os="linux", python="3.12", gpus=[gpu])
    assert old.variant == CPU and old.status == "fallback"


# --- row 3: Azure NCv6 takes Azure's GRID driver on every size -----------------------------------


def test_ncv6_gets_the_grid_driver_route_on_every_size() -> None:
    import argparse

    from setup_env.decide import cloudplan
    from setup_env.facts import Facts, PythonInfo

    excerpt = (REF / "azure-ncv6.txt").read_text(encoding="utf-8")
    assert "exposed via SRIOV. This cannot be modified" in excerpt
    assert "NVIDIA-Linux-x86_64-595.58.03-grid-azure.run -M open" in excerpt
    sizes = [i for i in CLOUD.instances if i.family == "NC_RTXPRO6000BSE_v6"]
    assert len(sizes) == 9
    parser = argparse.ArgumentParser()
    cloudplan.add_plan_arguments(parser)
    parser.add_argument("--gpu", action="append")
    for inst in sizes:
        assert inst.driver == "grid", inst.instance_type
        args = parser.parse_args(["--cloud", "azure", "--instance-type", inst.instance_type])
        facts, advice = cloudplan.apply(args, Facts(python=PythonInfo(version="3.12.7")))
        assert advice is not None and advice.driver_route == "grid"
        text = " ".join(advice.lines)
        assert "GRID" in text and "595.58.03-grid-azure" in text
        assert "ubuntu-drivers" not in text and "az vm extension" not in text
        # the plan's driver step becomes the GRID one: no data-centre driver command
        p = cloudplan.fit_plan(make_plan(facts, None, M), advice)
        for fx in p.fixes:
            if fx.kind == "upgrade-driver":
                assert fx.command is None and "GRID" in fx.summary
    row = json.loads((DATA / "cloud_instances.json").read_text(encoding="utf-8"))
    fam = next(f for f in row["families"] if f["family"] == "NC_RTXPRO6000BSE_v6")
    assert {"S50", "S51"} <= set(fam["sources"]) and fam["driver"] == "grid"


# --- row 4: the RTX PRO 6000 Blackwell Server Edition's own first driver --------------------------


def test_rtx_pro_6000_server_edition_needs_575_57_08() -> None:
    note = (REF / "nvidia-gpu-operator-platform-support.txt").read_text(encoding="utf-8")
    first = re.search(r"Driver versions ([0-9.]+) or later is required", note)
    assert first is not None
    se = CAT.lookup("NVIDIA RTX PRO 6000 Blackwell Server Edition")
    assert se is not None and se.first_driver == first.group(1) == "575.57.08"
    assert CAT.windows["12.0"].first_branch == 570  # the compute capability's window stays
    assert CAT.model_window(se).first_driver == "575.57.08"  # type: ignore[union-attr]
    we = CAT.lookup("NVIDIA RTX PRO 6000 Blackwell Workstation Edition")
    assert we is not None and we.first_driver is None  # no vendor statement for it


@pytest.mark.parametrize("driver", ["570.86.10", "570.195.03", "575.51.03"])
def test_rtx_pro_6000_se_on_an_older_driver_gets_a_driver_fix(driver: str) -> None:
    p = plan(os="linux", python="3.12", gpus=["RTX PRO 6000 Server"], driver=driver)
    assert "driver-older-than-gpu" in p.reason_codes
    fix = next(f for f in p.fixes if f.kind == "upgrade-driver")
    assert fix.rank == 1 and ">= 575.57.08" in fix.summary
    ok = plan(os="linux", python="3.12", gpus=["RTX PRO 6000 Server"], driver="575.57.08")
    assert "driver-older-than-gpu" not in ok.reason_codes
    # per model: the Workstation Edition and an RTX 5090 keep the R570 window of cc 12.0
    for other in ("RTX PRO 6000", "RTX 5090"):
        q = plan(os="linux", python="3.12", gpus=[other], driver="570.86.10")
        assert "driver-older-than-gpu" not in q.reason_codes, other


def test_g7e_on_a_570_driver_is_told_so() -> None:
    from setup_env.facts import CloudInfo, Facts, Gpu, NvidiaInfo, OSInfo, PythonInfo

    facts = Facts(
        os=OSInfo(family="linux", glibc="2.39"),
        python=PythonInfo(version="3.12.7", machine="x86_64"),
        nvidia=NvidiaInfo(
            driver_version="570.133.20",
            gpus=(
                Gpu(
                    index=0,
                    name="NVIDIA RTX PRO 6000 Blackwell Server Edition",
                    source="nvidia-smi",
                ),
            ),
        ),
        cloud=CloudInfo(provider="aws", instance_type="g7e.2xlarge"),
    )
    p = make_plan(facts, None, M)
    assert "driver-older-than-gpu" in p.reason_codes


# --- row 6: Windows on Arm64 ---------------------------------------------------------------------


def test_windows_on_arm64_says_cpu_wheels_exist_for_some_pythons() -> None:
    excerpt = (REF / "test-infra-excerpts.txt").read_text(encoding="utf-8")
    assert 'python_versions = ["3.11", "3.12", "3.13"]' in excerpt
    note = M.platform_notes["windows_arm64"]
    assert note.python == ("3.11", "3.12", "3.13") and note.index_variant == "cpu"
    assert note.confidence == "?" and "#195033" in note.source  # which releases: unsure
    p = plan(os="windows", arch="arm64", python="3.12")
    assert p.status == "none" and not p.command  # never planned on a ? row
    text = said(p)
    assert "3.11–3.13" in text and "download.pytorch.org/whl/cpu" in text
    assert "publishes no stable Windows on Arm" not in text


# --- row 7: one rule for which rows a plan may use ------------------------------------------------


def test_verified_is_the_rule_applied_to_the_confidence() -> None:
    doc = json.loads((DATA / "wheels.json").read_text(encoding="utf-8"))
    for rel, row in doc["releases"].items():
        for variant, plats in row["index"].items():
            for plat, av in plats.items():
                assert av["verified"] == mx.plannable(av["confidence"]), (rel, variant, plat)
    assert mx.PLANNABLE == ("V", "V2", "I")
    # cpu 2.15 (inferred) and xpu 2.14.x (inferred) are one grade, so one answer
    r2150, r2141 = M.release("2.15.0"), M.release("2.14.1")
    assert r2150 is not None and r2141 is not None
    assert r2150.index[CPU]["linux_x86_64"].verified
    assert r2141.index[V("xpu")]["linux_x86_64"].verified
    assert r2141.index[V("xpu")]["linux_x86_64"].confidence == "I"


def test_an_older_copy_is_read_by_the_rule() -> None:
    doc = json.loads((DATA / "wheels.json").read_text(encoding="utf-8"))
    row = doc["releases"]["2.14.1"]["index"]["xpu"]["linux_x86_64"]
    row["verified"] = False  # what the bundled data said before this change
    parsed = mx.parse(doc)
    r = parsed.release("2.14.1")
    assert r is not None and r.index[V("xpu")]["linux_x86_64"].verified


def test_cu129_rows_name_the_test_channel_and_the_promotion() -> None:
    excerpt = (REF / "test-infra-excerpts.txt").read_text(encoding="utf-8")
    assert '"12.9-aarch64"' in excerpt and "--recursive" in excerpt
    for rel in ("2.9.0", "2.10.0", "2.11.0", "2.12.1", "2.13.0"):
        r = M.release(rel)
        assert r is not None
        av = r.index[V("cu129")]["linux_aarch64"]
        assert av.confidence == "I" and av.verified, rel
        assert "test channel" in av.source and "promote" in av.source, rel
    r = M.release("2.12.0")
    assert r is not None and not r.index[V("cu129")]["linux_x86_64"].verified
    r = M.release("2.13.0")
    assert r is not None and r.index[V("cu129")]["linux_x86_64"].confidence == "V2"


@pytest.mark.parametrize(
    "spec",
    [
        {"os": "linux", "python": "3.12", "gpus": ["Arc B580"]},
        {"os": "windows", "python": "3.12", "gpus": ["Arc B580"]},
        {"os": "linux", "python": "3.12"},
        {"os": "linux", "arch": "aarch64", "python": "3.12"},
        {
            "os": "linux",
            "arch": "aarch64",
            "python": "3.12",
            "gpus": ["GH200"],
            "driver": "575.57.08",
        },
        {"os": "linux", "python": "3.12", "gpus": ["RTX 4090"], "driver": "575.57.08"},
        {"os": "linux", "python": "3.12", "gpus": ["MI300X"]},
        {"os": "windows", "python": "3.12", "gpus": ["RTX 4090"], "driver": "596.49"},
    ],
)
def test_a_plan_rests_on_plannable_rows_and_says_when_one_is_inferred(spec: Any) -> None:
    p = plan(**spec)
    assert p.command, spec
    rel = M.release(p.torch_version or "")
    assert rel is not None and p.variant is not None and p.platform is not None
    if p.source == "pypi":
        row: Any = rel.pypi_variant.get(p.platform)
    else:
        row = rel.index[p.variant.index_variant][p.platform]
    assert row is not None and mx.plannable(row.confidence), (spec, row)
    assert ("row-inferred" in p.warning_codes) == (row.confidence == "I"), (spec, row)


def test_an_arc_b580_gets_the_newest_xpu_build() -> None:
    p = plan(os="linux", python="3.12", gpus=["Arc B580"])
    assert (p.torch_version, p.variant) == ("2.14.1", V("xpu"))
    assert "row-inferred" in p.warning_codes


# --- row 8: AWS g7 GPU counts ------------------------------------------------------------------


def test_g7_gpu_counts_are_ec2s() -> None:
    text = (REF / "karpenter-instance-types-g7.txt").read_text(encoding="utf-8")
    counts: dict[str, int] = {}
    size = ""
    for line in text.splitlines():
        m = re.match(r"^### `(g7e?\.\w+)`", line)
        if m:
            size = m.group(1)
        m = re.search(r"instance-gpu-count\|(\d+)\|", line)
        if m and size:
            counts[size] = int(m.group(1))
    assert counts["g7.8xlarge"] == 1 and counts["g7.12xlarge"] == 2
    assert len(counts) == 12
    for size, n in counts.items():
        inst = CLOUD.lookup("aws", size)
        assert inst is not None and inst.gpu_count == n, size
        assert "S49" in inst.sources, size
