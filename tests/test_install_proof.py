"""Every install command setup-env prints for the planner's test machines, proven by the real
clients (issue 17 item 1): pip (``install --dry-run --report``) and uv (``pip install
--dry-run``) resolve it against a loopback copy of the indexes it names, for the planned machine,
and must pick exactly the wheel the plan names. How, and the one rewrite made to a command:
tests/installproof.py."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

import installproof as ip
import pytest

from setup_env.decide import cloudplan
from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts, PythonInfo
from setup_env.knowledge import gpus
from setup_env.knowledge import matrix as mx
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

M = mx.load_matrix(mx.BUNDLED_PATH)
HOSTS = Path(__file__).parent / "fixtures" / "hosts"
INSTALLERS = ("pip", "uv", "uv-project", "poetry", "requirements", "conda", "pixi")

Case = tuple[str, Callable[[], Facts], tuple[PlanOptions, ...]]


def spec(**kw: Any) -> Callable[[], Facts]:
    return lambda: spec_facts(**kw)


def cloud(*argv: str, python: str = "3.12.7") -> Callable[[], Facts]:
    def make() -> Facts:
        parser = argparse.ArgumentParser()
        cloudplan.add_plan_arguments(parser)
        parser.add_argument("--gpu", action="append")  # plan's own flag (GCP N1's attached GPUs)
        local = Facts(python=PythonInfo(version=python, machine="x86_64"))
        return cloudplan.apply(parser.parse_args(list(argv)), local)[0]

    return make


def replay(name: str) -> Callable[[], Facts]:
    return lambda: detect(ReplayHost(HOSTS / name))


PIP = (PlanOptions(),)
EVERY = tuple(PlanOptions(installer=i) for i in INSTALLERS)  # type: ignore[arg-type]
WITH = tuple(
    PlanOptions(installer=i, torch="2.13", with_packages=("torchvision", "torchaudio"))  # type: ignore[arg-type]
    for i in INSTALLERS
)
NIGHTLY = tuple(
    PlanOptions(channel="nightly", installer=i)  # type: ignore[arg-type]
    for i in ("pip", "uv", "conda", "pixi")
)  # type: ignore[arg-type]


def _driver_sweep() -> list[Case]:
    """Each GPU generation on every driver floor the data knows: the CUDA variant moves."""
    floors = sorted(
        {fl.linux for row in M.cuda.values() for fl in (*row.updates.values(), row.mvc)}
    )
    out: list[Case] = []
    for gpu in ("RTX 4090", "RTX 5090", "Tesla P100-PCIE-16GB", "Tesla T4"):
        for floor in floors:
            driver = (
                ".".join(str(p) for p in floor.release) if len(floor.release) > 1 else f"{floor}.0"
            )
            out.append(
                (f"{gpu}@{driver}", spec(os="linux", python="3.12", gpus=[gpu], driver=driver), PIP)
            )
    return out


def _pins() -> list[Case]:
    """`--torch X --variant Y` for a spread of releases: the oldest and newest CUDA of each, and
    its newest ROCm (Python 3.10, which 1.13 through 2.14 all take)."""
    out: list[Case] = []
    for rel in M.releases[:: max(1, len(M.releases) // 8)]:
        variants = sorted(rel.index_variants("linux_x86_64"))
        cuda = [v for v in variants if v.is_cuda]
        rocm = [v for v in variants if v.is_rocm]
        for v in {*cuda[:1], *cuda[-1:], *rocm[-1:]}:
            opts = (PlanOptions(torch=str(rel.version), variant=v.label),)
            out.append((f"pin-{rel.version}-{v}", spec(os="linux", python="3.10"), opts))
    return out


FAMILIES: dict[str, list[Case]] = {
    "pins": _pins(),
    "nvidia": [
        (
            "rtx4090-595",
            spec(os="linux", python="3.12", gpus=["RTX 4090"], driver="595.71.05"),
            EVERY,
        ),
        (
            "rtx5090-570",
            spec(os="linux", python="3.12", gpus=["RTX 5090"], driver="570.86.10"),
            EVERY,
        ),
        ("h100-535-mvc", spec(os="linux", python="3.12", gpus=["H100"], driver="535.104.05"), PIP),
        ("t4-470", spec(os="linux", python="3.11", gpus=["Tesla T4"], driver="470.57.02"), PIP),
        ("k80-470", spec(os="linux", python="3.11", gpus=["Tesla K80"], driver="470.57.02"), PIP),
        ("v100-580", spec(os="linux", python="3.12", gpus=["V100"], driver="580.95.05"), PIP),
        ("b200", spec(os="linux", python="3.12", gpus=["B200"], driver="595.71.05"), PIP),
        ("rtx4090-no-driver", spec(os="linux", python="3.12", gpus=["RTX 4090"]), PIP),
        (
            "gtx1080+rtx5090",
            spec(os="linux", python="3.12", gpus=["GTX 1080", "RTX 5090"], driver="595.71.05"),
            PIP,
        ),
        (
            "h100-wsl2",
            spec(os="linux", python="3.12", gpus=["H100"], driver="596.49", wsl=True),
            PIP,
        ),
        (
            "gh200-aarch64",
            spec(os="linux", arch="aarch64", python="3.12", gpus=["GH200"], driver="595.71.05"),
            PIP,
        ),
        (
            "t4g-graviton",
            spec(os="linux", arch="aarch64", python="3.12", gpus=["sm_75"], driver="595.71.05"),
            PIP,
        ),
        (
            "rtx4090-py39",
            spec(os="linux", python="3.9", gpus=["RTX 4090"], driver="595.71.05"),
            PIP,
        ),
        (
            "rtx4090-py310",
            spec(os="linux", python="3.10", gpus=["RTX 4090"], driver="595.71.05"),
            PIP,
        ),
        (
            "rtx4090-3.14t",
            spec(os="linux", python="3.14t", gpus=["RTX 4090"], driver="595.71.05"),
            PIP,
        ),
        (
            "t4-glibc2.17",
            spec(os="linux", python="3.10", glibc="2.17", gpus=["Tesla T4"], driver="535.104.05"),
            PIP,
        ),
        (
            "a100-glibc2.27",
            spec(os="linux", python="3.10", glibc="2.27", gpus=["A100"], driver="550.54.15"),
            PIP,
        ),
        (
            "cu130-pin",
            spec(os="linux", python="3.12", gpus=["H100"], driver="595.71.05"),
            (PlanOptions(torch="2.14.1", variant="cu130"),),
        ),
        (
            "rtx5090-companions",
            spec(os="linux", python="3.12", gpus=["RTX 5090"], driver="580.95.05"),
            WITH,
        ),
        *_driver_sweep(),
    ],
    "windows-apple-cpu": [
        (
            "win-rtx3060",
            spec(os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49"),
            EVERY,
        ),
        (
            "win-rtx4090-560",
            spec(os="windows", python="3.11", gpus=["RTX 4090"], driver="560.94"),
            PIP,
        ),
        ("win-cpu", spec(os="windows", python="3.12"), EVERY),
        ("win-3.14t", spec(os="windows", python="3.14t"), PIP),
        (
            "win-companions",
            spec(os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49"),
            WITH,
        ),
        ("mac-m1-13.6", spec(os="macos", python="3.12", gpus=["M1"], macos="13.6"), PIP),
        ("mac-m3-14.4", spec(os="macos", python="3.12", gpus=["M3"], macos="14.4"), EVERY),
        ("mac-intel-13.6", spec(os="macos", arch="x86_64", python="3.12", macos="13.6"), PIP),
        ("mac-m2-py39", spec(os="macos", python="3.9", gpus=["M2"], macos="14.0"), PIP),
        ("cpu-3.9", spec(os="linux", python="3.9"), PIP),
        ("cpu-3.10", spec(os="linux", python="3.10"), PIP),
        ("cpu-3.12", spec(os="linux", python="3.12"), EVERY),
        ("cpu-3.13", spec(os="linux", python="3.13"), PIP),
        ("cpu-3.14", spec(os="linux", python="3.14"), PIP),
        ("cpu-3.13t", spec(os="linux", python="3.13t"), PIP),
        ("cpu-aarch64", spec(os="linux", arch="aarch64", python="3.12"), PIP),
        ("cpu-glibc2.17", spec(os="linux", python="3.8", glibc="2.17"), PIP),
        (
            "cpu-pin-2.13",
            spec(os="linux", python="3.12"),
            (PlanOptions(torch="2.13", variant="cpu"),),
        ),
        ("nightly-rtx5090", spec(os="linux", python="3.12", gpus=["RTX 5090"]), NIGHTLY),
        ("nightly-cpu", spec(os="linux", python="3.12"), NIGHTLY),
        ("nightly-mac", spec(os="macos", python="3.12", gpus=["M3"], macos="14.4"), NIGHTLY[:1]),
        (
            "nightly-win",
            spec(os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49"),
            NIGHTLY[:1],
        ),
    ],
    "amd-intel": [
        ("mi300x", spec(os="linux", python="3.12", gpus=["MI300X"]), EVERY),
        ("rx7900xtx", spec(os="linux", python="3.12", gpus=["RX 7900 XTX"]), PIP),
        ("mi250x", spec(os="linux", python="3.11", gpus=["MI250X"]), PIP),
        ("rx6800-py310", spec(os="linux", python="3.10", gpus=["RX 6800"]), PIP),
        ("mi300x-windows", spec(os="windows", python="3.12", gpus=["MI300X"]), PIP),
        ("nightly-mi300x", spec(os="linux", python="3.12", gpus=["MI300X"]), NIGHTLY[:1]),
        ("arc-a770", spec(os="linux", python="3.12", gpus=["Arc A770"]), EVERY),
        ("arc-b580", spec(os="linux", python="3.11", gpus=["Arc B580"]), PIP),
        ("arc-a770-windows", spec(os="windows", python="3.12", gpus=["Arc A770"]), PIP),
    ],
    "jetson-cloud-hosts": [
        *(
            (
                f"jetpack-{row.jetpack}",
                spec(os="linux", python=row.python, gpus=[_module], jetpack=row.jetpack),
                PIP,
            )
            for row in gpus.load().jetpacks
            for _module in [
                next(
                    m.name
                    for m in gpus.load().models
                    if m.segment == "embedded" and m.compute_capability == row.modules[-1]
                )
            ]
        ),
        ("orin-unknown-jetpack", spec(os="linux", python="3.10", gpus=["Jetson AGX Orin"]), PIP),
        ("aws-g5.xlarge", cloud("--cloud", "aws", "--instance-type", "g5.xlarge"), PIP),
        ("aws-p5.48xlarge", cloud("--cloud", "aws", "--instance-type", "p5.48xlarge"), PIP),
        (
            "aws-g4dn.xlarge",
            cloud("--cloud", "aws", "--instance-type", "g4dn.xlarge", python="3.10.14"),
            PIP,
        ),
        ("aws-p3.2xlarge", cloud("--cloud", "aws", "--instance-type", "p3.2xlarge"), PIP),
        ("aws-g5g.xlarge", cloud("--cloud", "aws", "--instance-type", "g5g.xlarge"), PIP),
        ("gcp-a2-highgpu-1g", cloud("--cloud", "gcp", "--instance-type", "a2-highgpu-1g"), PIP),
        (
            "gcp-n1-t4",
            cloud("--cloud", "gcp", "--instance-type", "n1-standard-8", "--gpu", "Tesla T4"),
            PIP,
        ),
        (
            "azure-nc-a100",
            cloud("--cloud", "azure", "--instance-type", "Standard_NC24ads_A100_v4"),
            PIP,
        ),
        *((f"host-{h.name}", replay(h.name), PIP) for h in sorted(HOSTS.iterdir()) if h.is_dir()),
    ],
}


def plans_of(cases: list[Case]) -> Iterator[tuple[str, Plan, Facts]]:
    for label, make, options in cases:
        facts = make()
        for opts in options:
            plan = make_plan(facts, opts, M)
            if plan.status != "none" and plan.command:
                yield label, plan, facts


@pytest.fixture(scope="module")
def server() -> Iterator[ip.LoopbackIndex]:
    with ip.LoopbackIndex(ip.IndexCopy.from_data(M)) as srv:
        yield srv


@pytest.mark.slow  # ~200 client runs (~45 s of CPU): the main CI leg runs it, the 3.9 leg not
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_printed_command_resolves_to_the_planned_wheel(
    family: str, server: ip.LoopbackIndex
) -> None:
    cases = list(plans_of(FAMILIES[family]))
    assert cases
    proofs = ip.prove([(plan, facts) for _, plan, facts in cases], server)
    assert proofs and all(p.ok for p in proofs), ip.describe(proofs)


def test_the_proof_covers_every_installer_format_and_variant_family() -> None:
    """Done-when of issue 17: >= 60 distinct printed commands, every installer format, every
    variant family (CUDA, CPU, MPS, ROCm, XPU, nightly, the Jetson routes)."""
    commands: set[str] = set()
    formats: dict[str, set[str]] = {}
    families: set[str] = set()
    for cases in FAMILIES.values():
        for _label, plan, _facts in plans_of(cases):
            shown = plan.command + (f"\n{plan.config}" if plan.config else "")
            commands.add(shown)
            formats.setdefault(ip.installer_format(plan), set()).add(shown)
            families.add(family_of(plan))
    assert len(commands) >= 60, len(commands)
    assert set(formats) == set(INSTALLERS), formats.keys()
    assert {"cuda", "cpu", "mps", "rocm", "xpu", "nightly"} <= families, families
    assert {"jetson-url", "jetson-folder", "jetson-ai-lab", "jetson-sbsa"} <= families, families


def family_of(plan: Plan) -> str:
    if plan.source == "nightly":
        return "nightly"
    if plan.source == "jetson":
        if "jetson-ai-lab" in plan.command:
            return "jetson-ai-lab"
        return "jetson-url" if "--no-index" not in plan.argv else "jetson-folder"
    if plan.details.get("route") == "jetson":
        return "jetson-sbsa"
    return plan.variant.kind if plan.variant is not None else "?"


# --- the checker fails on a broken command ---------------------------------------------------


def _jetpack_512() -> tuple[Plan, Facts]:
    facts = spec_facts(os="linux", python="3.8", gpus=["Jetson AGX Orin"], jetpack="5.1.2")
    return make_plan(facts, None, M), facts


def _broken(plan: Plan, *argv: str) -> Plan:
    import shlex

    return replace(plan, argv=argv, command=" ".join(shlex.quote(a) for a in argv))


def test_the_planted_pre_issue_17_jetson_command_fails_the_proof(server: ip.LoopbackIndex) -> None:
    plan, facts = _jetpack_512()
    row = gpus.load().jetpack("5.1.2")
    assert row is not None and row.index is not None
    good = ip.prove([(plan, facts)], server)
    assert good and all(p.ok for p in good), ip.describe(good)
    # What setup-env printed before: not PEP 440; both clients refuse it.
    old = _broken(plan, "pip", "install", "--pre", "--find-links", row.index, "torch==2.1.0*")
    proofs = ip.prove([(old, facts)], server)
    assert proofs and not any(p.ok for p in proofs), proofs
    # The naive fix is valid PEP 440 but takes PyPI's CPU-only aarch64 torch 2.1.0.
    naive = _broken(plan, "pip", "install", "--pre", "--find-links", row.index, "torch==2.1.0.*")
    proofs = ip.prove([(naive, facts)], server)
    assert proofs and not any(p.ok for p in proofs), proofs
    assert any("torch-2.1.0-cp38-cp38-manylinux" in p.message for p in proofs), ip.describe(proofs)


def test_a_wrong_index_or_a_foreign_host_fails_the_proof(server: ip.LoopbackIndex) -> None:
    facts = spec_facts(os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49")
    plan = make_plan(facts, PlanOptions(torch="2.14.1"), M)
    assert plan.index_url == "https://download.pytorch.org/whl/cu130"
    wrong = _broken(
        plan,
        "pip",
        "install",
        "torch==2.14.1",
        "--index-url",
        "https://download.pytorch.org/whl/cu126",
    )
    proofs = ip.prove([(wrong, facts)], server)
    assert proofs and not any(p.ok for p in proofs)
    assert all("2.14.1+cu126" in p.message for p in proofs), ip.describe(proofs)
    foreign = _broken(
        plan, "pip", "install", "torch==2.14.1", "--index-url", "https://evil.example/whl/cu130"
    )
    proofs = ip.prove([(foreign, facts)], server)
    assert proofs and all(not p.ok and "no copy of" in p.message for p in proofs), proofs
    assert not any("evil.example" in r for r in server.requests)


def test_a_conda_or_pixi_file_without_its_index_fails_the_proof(server: ip.LoopbackIndex) -> None:
    """The environment.yml and pixi.toml forms are proven through their files: drop the index
    from the file and Windows gets PyPI's CPU-only torch, which the proof refuses."""
    facts = spec_facts(os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49")
    for installer, line in (
        ("conda", "      - --index-url https://download.pytorch.org/whl/cu130\n"),
        ("pixi", ', index = "https://download.pytorch.org/whl/cu130"'),
    ):
        plan = make_plan(facts, PlanOptions(torch="2.14.1", installer=installer), M)  # type: ignore[arg-type]
        assert plan.config is not None and line in plan.config, plan.config
        good = ip.prove([(plan, facts)], server)
        assert good and all(p.ok for p in good), ip.describe(good)
        bare = replace(plan, config=plan.config.replace(line, ""))
        proofs = ip.prove([(bare, facts)], server)
        assert proofs and not any(p.ok for p in proofs), ip.describe(proofs)
        assert all("torch-2.14.1-cp312-cp312-win_amd64" in p.message for p in proofs), ip.describe(
            proofs
        )


# --- the copy is faithful --------------------------------------------------------------------


def test_the_pypi_copy_holds_the_real_file_names() -> None:
    """The stand-ins' names for torch >= 2.12 are exactly those of PyPI's captured answer."""
    import json

    from packaging.version import Version

    real = {
        f["filename"]
        for f in json.loads((ip.INDEX_FIXTURES / "pypi-torch.json").read_text())["files"]
        if f["filename"].endswith(".whl")
    }
    copy = ip.IndexCopy.from_data(M)
    ours = {f.filename for f in copy.pypi["torch"] if Version(f.version) >= Version("2.12")}
    assert real and ours == real
    captured = ip._captured_index_files()
    assert captured
    names = {f.filename for page in copy.whl.values() for fs in page.values() for f in fs}
    assert set(captured.values()) <= names


def test_the_poetry_snippets_read_the_same_without_tomllib() -> None:
    """Python 3.9/3.10 read the printed poetry snippet with the harness's own reader."""
    tomllib = pytest.importorskip("tomllib")
    configs = {
        plan.config
        for cases in FAMILIES.values()
        for _label, plan, _facts in plans_of(cases)
        if ip.installer_format(plan) == "poetry" and plan.config
    }
    assert configs
    for config in configs:
        full = tomllib.loads(config)["tool"]["poetry"]
        mini = ip._mini_toml(config)["tool"]["poetry"]
        assert {
            k: v["version"] if isinstance(v, dict) else v for k, v in full["dependencies"].items()
        } == {
            k: v["version"] if isinstance(v, dict) else v for k, v in mini["dependencies"].items()
        }
        assert [(s["name"], s["url"]) for s in full.get("source", [])] == [
            (s["name"], s["url"]) for s in mini.get("source", [])
        ]
