"""`plan --installer conda|pixi` (issue 20 item 9): the printed environment.yml and pixi.toml
parse (PyYAML, tomllib/tomli, py-rattler for the conda match specs) and name the same wheel as
the pip command for the same machine: the same pins and the same index URL. That the pins and
index then resolve to the planned wheel is proven by the real clients in
tests/test_install_proof.py."""

from __future__ import annotations

import fnmatch
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import installproof as ip
import pytest
import rattler
import yaml

from setup_env.cli import main
from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.knowledge import matrix as mx

M = mx.load_matrix(mx.BUNDLED_PATH)
FIXTURES = Path(__file__).resolve().parent / "fixtures"

MACHINES: dict[str, dict[str, Any]] = {
    "win-rtx3060-index": dict(os="windows", python="3.12", gpus=["RTX 3060"], driver="596.49"),
    "linux-rtx4090-pypi": dict(os="linux", python="3.12", gpus=["RTX 4090"], driver="595.71.05"),
    "linux-cpu-index": dict(os="linux", python="3.11"),
    "mac-m3": dict(os="macos", python="3.13", gpus=["M3"], macos="14.4"),
    "linux-aarch64": dict(os="linux", arch="aarch64", python="3.12"),
    "linux-mi300x": dict(os="linux", python="3.12", gpus=["MI300X"]),
    "linux-3.14t": dict(os="linux", python="3.14t"),
}
OPTIONS = {
    "latest": PlanOptions(),
    "pinned-with": PlanOptions(torch="2.14.1", with_packages=("torchvision", "torchaudio")),
    "nightly": PlanOptions(channel="nightly"),
}
PIXI_PLATFORM = {
    "linux_x86_64": "linux-64",
    "linux_aarch64": "linux-aarch64",
    "windows_x86_64": "win-64",
    "macos_arm64": "osx-arm64",
}


def plans(machine: str, opts: PlanOptions) -> tuple[Plan, Plan, Plan]:
    facts = spec_facts(**MACHINES[machine])
    return tuple(  # type: ignore[return-value]
        make_plan(facts, replace(opts, installer=i), M)  # type: ignore[arg-type]
        for i in ("pip", "conda", "pixi")
    )


def pip_parts(plan: Plan) -> tuple[list[str], Optional[str], bool]:
    """(requirements, --index-url, --pre) of the pip command."""
    argv = list(plan.argv)
    assert argv[:2] == ["pip", "install"], argv
    index = argv[argv.index("--index-url") + 1] if "--index-url" in argv else None
    args = argv[2:]
    reqs = [
        a
        for i, a in enumerate(args)
        if not a.startswith("-") and args[i - 1 : i] != ["--index-url"]
    ]
    return reqs, index, "--pre" in argv


def conda_parts(config: str) -> tuple[list[rattler.MatchSpec], list[str], Optional[str], bool]:
    doc = yaml.safe_load(config)
    assert doc["channels"] == ["conda-forge"]  # PyTorch's own channel stopped at 2.5
    specs = [rattler.MatchSpec(d) for d in doc["dependencies"] if isinstance(d, str)]
    (pip_list,) = [d["pip"] for d in doc["dependencies"] if isinstance(d, dict)]
    index = None
    pre = False
    reqs: list[str] = []
    for line in pip_list:
        if line.startswith("--index-url "):
            index = line.split(None, 1)[1]
        elif line == "--pre":
            pre = True
        else:
            assert not line.startswith("-"), line
            reqs.append(line)
    return specs, reqs, index, pre


CASES = [
    (m, o)
    for m in MACHINES
    for o in OPTIONS
    if not (o == "pinned-with" and m in ("linux-3.14t",))  # 2.14 has no 3.14t companions
]


@pytest.mark.parametrize(("machine", "opt"), CASES)
def test_conda_and_pixi_name_the_pip_commands_wheel(machine: str, opt: str) -> None:
    pip, conda, pixi = plans(machine, OPTIONS[opt])
    assert pip.status != "none" and pip.argv, (machine, opt, pip.warnings)
    reqs, index, pre = pip_parts(pip)
    py = MACHINES[machine]["python"]
    threaded = py.endswith("t")
    py = py.rstrip("t")

    # the same plan: only the form changes
    for other in (conda, pixi):
        assert (other.torch_version, other.variant, other.index_url, other.requirements) == (
            pip.torch_version,
            pip.variant,
            pip.index_url,
            pip.requirements,
        )

    # environment.yml: conda match specs for Python and pip, the pip list = the pip command
    assert conda.argv == ("conda", "env", "create", "--file", "environment.yml")
    assert conda.config is not None
    specs, c_reqs, c_index, c_pre = conda_parts(conda.config)
    by_name = {s.name.normalized: s for s in specs}
    python = by_name["python-freethreading" if threaded else "python"]
    assert rattler.VersionSpec(python.version).matches(rattler.Version(f"{py}.1"))
    assert not rattler.VersionSpec(python.version).matches(rattler.Version("3.10.1"))
    assert "pip" in by_name
    assert (c_reqs, c_index, c_pre) == (reqs, index, pre)
    assert ip.conda_pip(conda.config).splitlines() == [
        *([f"--index-url {index}"] if index else []),
        *(["--pre"] if pre else []),
        *reqs,
    ]

    # pixi.toml: python from conda-forge, torch in [pypi-dependencies] with the index
    assert pixi.argv == ("pixi", "install") and pixi.config is not None
    doc = ip.load_toml(pixi.config)
    ws = doc["workspace"]
    assert ws["channels"] == ["conda-forge"]
    assert ws["platforms"] == [PIXI_PLATFORM[pip.platform or ""]]
    rattler.Subdir(ws["platforms"][0])  # a platform (conda subdir) pixi knows
    ((dep_name, dep_version),) = doc["dependencies"].items()
    assert dep_name == ("python-freethreading" if threaded else "python")
    pyspec = rattler.MatchSpec(f"{dep_name} {dep_version}")
    assert rattler.VersionSpec(pyspec.version).matches(rattler.Version(f"{py}.1"))
    x_reqs, x_index, x_pre = ip.pixi_requirements(pixi.config)
    assert (x_reqs, x_index, x_pre) == (reqs, index, pre)
    for value in doc["pypi-dependencies"].values():
        # one index per package where the pip command names one, none where it takes PyPI
        assert (isinstance(value, dict) and value.get("index")) == (index or False)


def test_the_text_output_names_the_file_it_prints(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["plan", "--os", "linux", "--python", "3.12", "--gpu", "RTX 5090", "--driver"]
    for installer, name, command in (
        ("conda", "environment.yml", "$ conda env create --file environment.yml"),
        ("pixi", "pixi.toml", "$ pixi install"),
    ):
        code = main([*base, "570.86.10", "--installer", installer])
        out = capsys.readouterr().out
        assert code == 0 and f"  # {name}\n" in out and command in out, out
        if installer == "conda":
            assert "  - pip:" in out
            assert "      - --index-url https://download.pytorch.org/whl/cu12" in out
        else:
            assert 'index = "https://download.pytorch.org/whl/cu12' in out


def test_the_cli_refuses_an_unknown_installer(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--os", "linux", "--python", "3.12", "--installer", "mamba"]) == 2
    assert "conda" in capsys.readouterr().err


# --- conda-forge's own route, shown beside a CUDA plan ------------------------------------------

FORGE_BUILD = json.loads(
    (
        FIXTURES / "conda-meta" / "pixi-cuda129" / "pytorch-gpu-2.7.1-cuda129_mkl_h43a4b0b_304.json"
    ).read_text(encoding="utf-8")
)["build"]  # a real conda-forge CUDA build string


def forge_lines(config: str) -> list[str]:
    """The indented comment lines of the conda-forge route, comment and list marks removed."""
    return [line[4:].removeprefix("- ") for line in config.splitlines() if line.startswith("#   ")]


@pytest.mark.parametrize("machine", ["win-rtx3060-index", "linux-rtx4090-pypi"])
def test_a_cuda_plan_names_conda_forges_route_on_the_same_cuda(machine: str) -> None:
    pip, conda, pixi = plans(machine, OPTIONS["latest"])
    assert pip.cuda and conda.config and pixi.config
    # environment.yml: two conda match specs, as comments (YAML keeps them inert)
    specs = {s.name.normalized: s for s in map(rattler.MatchSpec, forge_lines(conda.config))}
    assert specs["pytorch"].build == "cuda*" and fnmatch.fnmatch(FORGE_BUILD, "cuda*")
    assert specs["cuda-version"].version == f"{pip.cuda}.*"
    active = [d for d in yaml.safe_load(conda.config)["dependencies"] if isinstance(d, str)]
    assert not any(d.startswith(("pytorch", "cuda-version")) for d in active), active
    # pixi.toml: the same two, as TOML lines, and the CUDA major for the solver
    lines = forge_lines(pixi.config)
    deps = ip.load_toml("\n".join(lines[:2]))
    assert deps["pytorch"] == {"version": "*", "build": "cuda*"}
    assert rattler.VersionSpec(deps["cuda-version"]).matches(rattler.Version(f"{pip.cuda}.0"))
    assert (
        ip.load_toml("\n".join(lines[2:]))["system-requirements"]["cuda"] == pip.cuda.split(".")[0]
    )
    assert "pytorch" not in ip.load_toml(pixi.config)["dependencies"]


@pytest.mark.parametrize(
    ("machine", "opt"),
    [
        ("linux-cpu-index", "latest"),
        ("mac-m3", "latest"),
        ("linux-mi300x", "latest"),
        ("linux-rtx4090-pypi", "nightly"),
    ],
)
def test_no_conda_forge_route_without_a_cuda_build(machine: str, opt: str) -> None:
    _pip, conda, pixi = plans(machine, OPTIONS[opt])
    for other in (conda, pixi):
        assert other.config is not None and "conda-forge's own PyTorch" not in other.config


def test_doctors_conda_forge_commands_are_match_specs(tmp_path: Path) -> None:
    """doctor's way back to one route (tests/test_condaenv.py) names conda-forge's CUDA build of
    pytorch on the environment's own cuda-version, as conda reads the specs."""
    from test_condaenv import conda_doctor_command

    command = conda_doctor_command(tmp_path)
    specs = [rattler.MatchSpec(s.strip('"')) for s in command.split() if s.startswith('"')]
    by_name = {s.name.normalized: s for s in specs}
    assert by_name["pytorch"].build == "cuda*" and fnmatch.fnmatch(FORGE_BUILD, "cuda*")
    assert rattler.VersionSpec(str(by_name["cuda-version"].version)).matches(
        rattler.Version("12.9")
    )
    assert not rattler.VersionSpec(str(by_name["cuda-version"].version)).matches(
        rattler.Version("12.8")
    )
