"""Jetson (issue 12 item 1): detection from real captures, the JetPack-matched route, never a
driver install, JetPack 7 / Thor on PyTorch's SBSA CUDA 13 wheels, the --jetpack what-if."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

from setup_env.decide.model import Plan, PlanError, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.knowledge import gpus
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import Variant
from setup_env.probe import jetson
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

HERE = Path(__file__).parent / "fixtures"
HOSTS = HERE / "hosts"
M = mx.load_matrix(mx.BUNDLED_PATH)


def _text(plan: Plan) -> str:
    return json.dumps(asdict(plan), default=str).lower()


def _never_a_driver(plan: Plan) -> None:
    assert not [f for f in plan.fixes if f.kind == "upgrade-driver"], plan.fixes
    text = _text(plan)
    assert "install the nvidia driver" not in text and "ubuntu-drivers" not in text
    assert any("never install an nvidia driver on a jetson" in w.lower() for w in plan.warnings)


# --- parsing real text ---------------------------------------------------------------------


def test_release_lines_of_real_captures() -> None:
    orin = (HOSTS / "jetson-orin-nx-jp62/files/etc/nv_tegra_release").read_text()
    thor = (HOSTS / "jetson-agx-thor-jp7/files/etc/nv_tegra_release").read_text()
    assert jetson.parse_release(orin) == "36.4.3"
    assert jetson.parse_release(thor) == "38.2.0"
    assert jetson.parse_release("garbage") is None


def test_compatible_and_soc() -> None:
    raw = (HOSTS / "jetson-agx-thor-jp7/files/proc/device-tree/compatible").read_text()
    compat = jetson.parse_compatible(raw)
    assert compat[-1] == "nvidia,tegra264" and jetson.soc_of(compat, None) == "tegra264"
    assert jetson.soc_of([], "NVIDIA Jetson Orin Nano Developer Kit") == "tegra234"
    assert jetson.soc_of([], "NVIDIA Jetson Nano Developer Kit") == "tegra210"


def test_cuda_version_json_and_dpkg() -> None:
    text = (HERE / "jetson/version-jp60.json").read_text()
    assert jetson.parse_cuda_version_json(text) == "12.2"
    assert jetson.parse_cuda_version_json("{not json") is None
    status = (HERE / "jetson/dpkg-l4t-core.txt").read_text()
    assert jetson.parse_dpkg_l4t_core(status) == "39.2.1-20260806224157"
    assert jetson.parse_dpkg_l4t_core("Package: nvidia-l4t-bootloader\nVersion: 1\n") is None


def test_replayed_jetsons() -> None:
    orin = detect(ReplayHost(HOSTS / "jetson-orin-nx-jp62"))
    assert orin.jetson is not None
    assert (orin.jetson.l4t, orin.jetson.jetpack, orin.jetson.cuda) == ("36.4.3", "6.2", "12.6")
    assert orin.jetson.compute_capability == "8.7"
    assert orin.nvidia is not None and orin.nvidia.driver_version is None
    thor = detect(ReplayHost(HOSTS / "jetson-agx-thor-jp7"))
    assert thor.jetson is not None and thor.jetson.jetpack == "7.0"
    assert thor.jetson.compute_capability == "11.0" and thor.jetson.soc == "tegra264"


def test_a_desktop_host_has_no_jetson_key() -> None:
    facts = detect(ReplayHost(HOSTS / "fedora-rtx5090-rtx4090-580"))
    assert facts.jetson is None and "jetson" not in facts.to_dict()


# --- planning --------------------------------------------------------------------------------


def test_jetpack_6_orin_gets_nvidias_wheel_never_a_driver() -> None:
    p = make_plan(detect(ReplayHost(HOSTS / "jetson-orin-nx-jp62")), None, M)
    assert p.status == "ok" and p.source == "jetson"
    assert p.index_url == "https://pypi.jetson-ai-lab.io/jp6/cu126"
    assert p.torch_version == gpus.load().jetpack("6.2").torch  # type: ignore[union-attr]
    assert "download.pytorch.org" not in p.command
    _never_a_driver(p)


def test_issue_12_orin_what_if_is_no_longer_the_pypi_wheel() -> None:
    facts = spec_facts(os="linux", arch="aarch64", python="3.10", gpus=["Jetson AGX Orin"])
    p = make_plan(facts, None, M)
    assert p.source == "jetson" and "jetson-ai-lab" in p.command
    assert any("assumed JetPack" in w for w in p.warnings)
    _never_a_driver(p)


def test_thor_on_jetpack_7_runs_the_sbsa_cuda_13_wheel() -> None:
    p = make_plan(detect(ReplayHost(HOSTS / "jetson-agx-thor-jp7")), None, M)
    assert p.status == "ok" and p.variant is not None and p.variant.is_cuda
    assert p.variant.version[0] == 13  # a CUDA 13 wheel
    b = M.build(p.variant, p.torch_version or "", "linux_aarch64")
    assert b is not None and (11, 0) in b.sass
    _never_a_driver(p)


@pytest.mark.parametrize(
    ("gpu", "jp", "status", "in_command"),
    [
        ("Jetson AGX Orin", "6.2", "ok", "jp6/cu126"),
        ("Jetson Orin NX", "6.0", "ok", "jp6/cu122"),
        ("Jetson Orin Nano", "6.1", "ok", "jp6/cu126"),
        ("Jetson AGX Xavier", "5.1.2", "ok", "redist/jp/v512"),
        ("Jetson Nano", "4.6.1", "ok", "redist/jp/v461"),
        ("Jetson TX2", "4.6", "ok", "redist/jp/v46"),
        ("Jetson AGX Thor", "7.0", "ok", "pip install torch"),
        ("Jetson AGX Orin", "7.0", "none", ""),
        ("Jetson Nano", "6.2", "none", ""),
    ],
)
def test_jetpack_what_if(gpu: str, jp: str, status: str, in_command: str) -> None:
    facts = spec_facts(os="linux", python="3.10", gpus=[gpu], jetpack=jp)
    assert facts.python.machine == "aarch64" and facts.jetson is not None
    p = make_plan(facts, PlanOptions(), M)
    assert p.status == status, p.reasons
    assert in_command in p.command
    if status == "none":
        assert p.fixes and p.fixes[0].kind == "upgrade-jetpack"
    _never_a_driver(p)


def test_older_jetpack_is_offered_an_upgrade_not_a_driver() -> None:
    p = make_plan(
        spec_facts(os="linux", python="3.10", gpus=["Jetson AGX Orin"], jetpack="6.0"), None, M
    )
    assert p.fixes[0].kind == "upgrade-jetpack" and "JetPack 6.2" in p.fixes[0].summary
    _never_a_driver(p)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"gpus": ["RTX 4090"], "jetpack": "6.2"}, "needs --gpu naming a Jetson"),
        ({"gpus": ["Jetson AGX Orin"], "jetpack": "9.9"}, "not in the JetPack table"),
        ({"gpus": ["Jetson AGX Orin"], "jetpack": "6.2; rm -rf /"}, "expected a version"),
        ({"gpus": ["Jetson AGX Orin"], "os": "windows"}, "a Jetson runs Linux"),
    ],
)
def test_bad_jetpack_specs(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(PlanError, match=match):
        spec_facts(**{"os": "linux", **kwargs})  # type: ignore[arg-type]


def test_cli_jetpack_what_if() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "setup_env", "plan", "--os", "linux", "--gpu", "Jetson AGX Orin",
         "--jetpack", "6.2", "--json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert "jetson-ai-lab" in json.dumps(doc)
    bad = subprocess.run(
        [sys.executable, "-m", "setup_env", "plan", "--os", "linux", "--gpu", "RTX 4090",
         "--jetpack", "6.2"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# --- issue 17: commands pip accepts and that cannot fall back to PyPI's CPU torch ---------------


def _jetpack_plan(gpu: str, jp: str, python: str) -> Plan:
    return make_plan(spec_facts(os="linux", python=python, gpus=[gpu], jetpack=jp), None, M)


def test_issue_17_jetpack_512_installs_nvidias_wheel_by_its_url() -> None:
    """`plan --gpu "Jetson AGX Orin" --jetpack 5.1.2 --python 3.8` printed
    `pip install --pre --find-links .../v512/pytorch 'torch==2.1.0*'`: not PEP 440, and the valid
    `==2.1.0.*` would take PyPI's CPU-only aarch64 torch 2.1.0 over NVIDIA's 2.1.0a0 build."""
    p = _jetpack_plan("Jetson AGX Orin", "5.1.2", "3.8")
    url = (
        "https://developer.download.nvidia.com/compute/redist/jp/v512/pytorch/"
        "torch-2.1.0a0+41361538.nv23.06-cp38-cp38-linux_aarch64.whl"
    )
    assert p.argv == ("pip", "install", url) and p.command == f"pip install {url}"
    assert p.torch_version == "2.1.0a0+41361538.nv23.06"
    assert p.requirements == (f"torch @ {url}",)
    assert "*" not in p.command
    _never_a_driver(p)


@pytest.mark.parametrize("row", gpus.load().jetpacks, ids=lambda j: f"jp{j.jetpack}")
def test_every_jetpack_command_is_pep_508_and_never_reaches_pypi(row: gpus.JetPack) -> None:
    from packaging.requirements import Requirement

    cc = row.modules[0]
    model = next(
        m for m in gpus.load().models if m.segment == "embedded" and m.compute_capability == cc
    )
    p = _jetpack_plan(model.name, row.jetpack, row.python)
    assert p.status == "ok", p.reasons
    for req in p.requirements:
        Requirement(req)  # raises on `torch==2.1.0*`
    if row.sbsa:
        return  # PyTorch's own wheels, proven with the desktop plans (tests/test_install_proof.py)
    argv = list(p.argv)
    by_url = any(a.startswith("https://") and a.endswith(".whl") for a in argv)
    no_index = "--no-index" in argv
    own_index = "--index-url" in argv and "jetson-ai-lab" in argv[argv.index("--index-url") + 1]
    assert [by_url, no_index, own_index].count(True) == 1, p.command
    assert "--extra-index-url" not in argv
    if row.torch_confidence in ("I", "?"):
        assert any(f"JetPack {row.jetpack}" in w and row.torch in w for w in p.warnings)


@pytest.mark.parametrize(
    ("l4t", "jetpack"),
    [("35.5.0", "5.1.3"), ("35.6.0", "5.1.4"), ("35.6.2", "5.1.6"), ("35.2.1", "5.1"),
     ("39.1.0", "7.2")],
)  # fmt: skip
def test_detected_l4t_of_the_added_rows_is_planned_without_assuming(l4t: str, jetpack: str) -> None:
    """Data review 2026-12b row 10 / issue 17 data row 5: L4T 35.5-35.6 (JetPack 5.1.3-5.1.6) and
    39.1 (JetPack 7.2) were missing: planned as 'assumed 5.1.2' or not at all."""
    from dataclasses import replace

    from setup_env.facts import JetsonInfo

    py = "3.12" if l4t.startswith("39") else "3.8"
    facts = spec_facts(os="linux", arch="aarch64", python=py)
    facts = replace(
        facts,
        jetson=JetsonInfo(module="Orin", l4t=l4t, compute_capability="8.7", sources={"l4t": "x"}),
    )
    p = make_plan(facts, None, M)
    assert p.status == "ok" and p.details["jetpack"] == jetpack, (p.reasons, p.details)
    assert not any("assumed" in w for w in p.warnings)
    _never_a_driver(p)


def test_jetpack_514_plans_with_the_inferred_wheel() -> None:
    p = _jetpack_plan("Jetson AGX Xavier", "5.1.4", "3.8")
    assert p.status == "ok" and "v512/pytorch/torch-2.1.0a0+41361538.nv23.06" in p.command
    assert any("inferred" in w for w in p.warnings)
    assert p.details["torch_confidence"] == "I"


def test_an_unconfirmed_jetpack_is_never_assumed_nor_advised() -> None:
    """JetPack 7.2 (Orin SBSA) rests on one secondary source: planned when named or detected,
    never the guess for an Orin of unknown JetPack, never an upgrade."""
    row = gpus.load().jetpack("7.2")
    assert row is not None and not row.assumable and row.supports("8.7")
    guess = make_plan(spec_facts(os="linux", python="3.10", gpus=["Jetson AGX Orin"]), None, M)
    assert "jetson-ai-lab" in guess.command and "JetPack 7.2" not in _text(guess)
    named = _jetpack_plan("Jetson AGX Orin", "7.2", "3.12")
    assert named.status == "ok" and named.details["jetpack"] == "7.2"
    assert named.variant is not None and named.variant.is_cuda


def test_jetpack_46_uses_the_folder_only_and_says_the_wheel_is_unconfirmed() -> None:
    p = _jetpack_plan("Jetson Nano", "4.6", "3.6")
    row = gpus.load().jetpack("4.6")
    assert row is not None
    assert p.argv[:5] == ("pip", "install", "--no-index", "--find-links", row.index + "/")
    assert p.requirements == ("torch==1.10.0.*",) and "--pre" in p.argv
    assert any("not confirmed" in w for w in p.warnings)
    assert any("--no-index" in w and "dependencies" in w for w in p.warnings)


# --- doctor / diagnose ---------------------------------------------------------------------


def _with_torch(facts: object, version: str, variant: str) -> object:
    from dataclasses import replace

    from setup_env.facts import InstalledPackage

    pkg = InstalledPackage(name="torch", version=version, variant=Variant.parse(variant))
    return replace(facts, packages=(pkg,))  # type: ignore[type-var]


def test_doctor_on_a_jetson() -> None:
    from setup_env.decide.doctor import examine

    orin = detect(ReplayHost(HOSTS / "jetson-orin-nx-jp62"))
    desktop = examine(_with_torch(orin, "2.8.0", "cu128"), None, M)  # type: ignore[arg-type]
    f = next(f for f in desktop if f.code == "jetson-desktop-wheel")
    assert f.severity == "error" and "jetson-ai-lab" in (f.fix or "")
    nv = examine(_with_torch(orin, "2.8.0a0+5228986c39.nv25.05", "cu126"), None, M)  # type: ignore[arg-type]
    assert "jetson-nvidia-build" in {f.code for f in nv}
    assert "jetson-desktop-wheel" not in {f.code for f in nv}
    thor = detect(ReplayHost(HOSTS / "jetson-agx-thor-jp7"))
    sbsa = examine(_with_torch(thor, "2.10.0+cu130", "cu130"), None, M)  # type: ignore[arg-type]
    assert "jetson-desktop-wheel" not in {f.code for f in sbsa}


def test_a_report_without_a_gpu_line_is_known_by_its_tegra_kernel() -> None:
    """No GPU name, no L4T release: a Jetson (its -tegra kernel), but NVIDIA's wheel is per
    JetPack and JetPack 5.0-5.1.2 all ship CUDA 11.4, so no command is guessed; never a driver."""
    from setup_env.probe.report import parse

    text = (HERE / "collect_env/jetson-agx-orin-nv23.02.txt").read_text(encoding="utf-8")
    facts = parse(text).facts
    assert facts.os.kernel == "5.10.120-tegra"
    p = make_plan(facts, None, M)
    assert p.status == "none" and p.details.get("route") == "jetson" and not p.command
    assert p.fixes[0].kind == "describe-jetpack"
    _never_a_driver(p)


def test_detect_shows_the_jetpack() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "setup_env", "detect", "--root", str(HOSTS / "jetson-orin-nx-jp62")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    assert "L4T 36.4.3, JetPack 6.2, CUDA 12.6" in res.stdout
    assert "NVIDIA driver ?" not in res.stdout


@pytest.mark.parametrize(
    ("argv", "python"),
    [
        (["--gpu", "Jetson AGX Orin"], "3.10"),
        (["--gpu", "Jetson AGX Orin", "--jetpack", "5.1.2"], "3.8"),
        (["--gpu", "Jetson AGX Thor"], "3.12"),
    ],
)
def test_jetson_what_if_without_os_is_the_jetpacks_machine(argv: list[str], python: str) -> None:
    """Without --os a --gpu describes this machine; a Jetson is aarch64 Linux with JetPack's
    Python whatever machine runs the command."""
    res = subprocess.run(
        [sys.executable, "-m", "setup_env", "plan", *argv, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    text = json.dumps(doc)
    assert '"aarch64"' in text and f"Python {python}" in text
    assert "install the nvidia driver" not in text.lower()
