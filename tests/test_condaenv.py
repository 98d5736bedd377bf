"""The conda/pixi environment probe (issue 20 item 9) and doctor's findings on a pip torch
mixed with conda's PyTorch or CUDA libraries. The conda-meta records are real
(tests/fixtures/conda-meta/SOURCE.md); each machine is a replay folder built around them."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import pytest

from setup_env.cli import main
from setup_env.decide.doctor import examine
from setup_env.facts import Facts, InstalledPackage
from setup_env.probe import condaenv
from setup_env.probe.detect import detect
from setup_env.probe.host import ReplayHost

RECORDS = Path(__file__).resolve().parent / "fixtures" / "conda-meta" / "pixi-cuda129"
PIXI_ENV = "/home/user/proj/.pixi/envs/default"
CONDA_ENV = "/opt/conda/envs/ml"


def machine(
    tmp_path: Path,
    prefix: str,
    env: dict[str, str],
    records: Optional[list[str]] = None,
) -> Path:
    """A captured machine whose Python lives in ``prefix``; ``records``: the real conda-meta
    records copied into ``<records_prefix>/conda-meta`` (None: no conda-meta at all)."""
    root = tmp_path / "box"
    doc: dict[str, Any] = {
        "interpreter": {
            "version": "3.12.7",
            "implementation": "cpython",
            "machine": "x86_64",
            "system": "Linux",
            "prefix": prefix,
            "executable": f"{prefix}/bin/python",
        },
        "env": env,
    }
    root.mkdir()
    (root / "host.json").write_text(json.dumps(doc), encoding="utf-8")
    if records is not None:
        meta = root / "files" / prefix.lstrip("/") / "conda-meta"
        meta.mkdir(parents=True)
        (meta / "history").write_text("", encoding="utf-8")  # conda's log: not a record
        for name in records:
            shutil.copy(RECORDS / name, meta / name)
    return root


ALL = sorted(p.name for p in RECORDS.glob("*.json"))
CUDA_ONLY = ["cuda-version-12.9-h4f385c5_3.json"]
PIXI_VARS = {
    "PIXI_ENVIRONMENT_NAME": "default",
    "PIXI_PROJECT_ROOT": "/home/user/proj",
    "CONDA_PREFIX": PIXI_ENV,
    "CONDA_DEFAULT_ENV": "proj",
}


def test_a_pixi_environment_and_its_records(tmp_path: Path) -> None:
    host = ReplayHost(machine(tmp_path, PIXI_ENV, PIXI_VARS, ALL))
    info, notes = condaenv.detect(host)
    assert notes == []
    assert info is not None
    assert (info.manager, info.prefix, info.name, info.active, info.interpreter_inside) == (
        "pixi",
        PIXI_ENV,
        "default",
        True,
        True,
    )
    assert info.project == "/home/user/proj"
    assert [(p.name, p.version, p.build, p.channel) for p in info.cuda_packages] == [
        ("cuda-version", "12.9", "h4f385c5_3", "conda-forge")
    ]
    assert [(p.name, p.version, p.build, p.channel) for p in info.torch_packages] == [
        ("pytorch-gpu", "2.7.1", "cuda129_mkl_h43a4b0b_304", "conda-forge")
    ]
    # the build string is conda-forge's CUDA build (what `pytorch=*=cuda*` selects: the match
    # specs are parsed by py-rattler in tests/test_conda_pixi.py, which needs Python >= 3.10)
    assert info.torch_packages[0].build.startswith("cuda")


def test_a_conda_environment_named_by_the_shell(tmp_path: Path) -> None:
    env = {"CONDA_PREFIX": CONDA_ENV, "CONDA_DEFAULT_ENV": "ml"}
    info, _ = condaenv.detect(ReplayHost(machine(tmp_path, CONDA_ENV, env, CUDA_ONLY)))
    assert info is not None
    assert (info.manager, info.name, info.active, info.interpreter_inside) == (
        "conda",
        "ml",
        True,
        True,
    )
    assert [p.name for p in info.cuda_packages] == ["cuda-version"] and not info.torch_packages


def test_an_environment_that_is_not_activated(tmp_path: Path) -> None:
    """`/opt/conda/envs/ml/bin/python` run directly: the environment is this Python's, the
    shell activated nothing."""
    info, _ = condaenv.detect(ReplayHost(machine(tmp_path, CONDA_ENV, {}, CUDA_ONLY)))
    assert info is not None and not info.active and info.name is None
    assert info.sources["prefix"] == "interpreter prefix (conda-meta/)"


def test_an_activated_environment_that_is_not_this_python(tmp_path: Path) -> None:
    env = {"CONDA_PREFIX": CONDA_ENV, "CONDA_DEFAULT_ENV": "ml"}
    info, notes = condaenv.detect(ReplayHost(machine(tmp_path, "/usr", env)))
    assert info is not None and info.prefix == CONDA_ENV and info.interpreter_inside is False
    assert [n.code for n in notes] == ["conda-env-not-this-python", "conda-meta-unreadable"]
    assert "/usr/bin/python" in notes[0].message


def test_no_environment_is_no_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = machine(tmp_path, "/usr", {})
    assert condaenv.detect(ReplayHost(root)) == (None, [])
    assert main(["detect", "--root", str(root), "--json"]) == 0
    assert "conda_env" not in json.loads(capsys.readouterr().out)["facts"]


def test_detect_json_shows_it_and_reads_it_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = machine(tmp_path, PIXI_ENV, PIXI_VARS, ALL)
    assert main(["detect", "--root", str(root), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)["facts"]
    assert doc["conda_env"]["manager"] == "pixi"
    assert doc["conda_env"]["torch_packages"][0]["name"] == "pytorch-gpu"
    assert doc["environment"]["PIXI_ENVIRONMENT_NAME"] == "default"
    again = Facts.from_dict(doc)
    assert again.conda_env == detect(ReplayHost(root)).conda_env


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("https://conda.anaconda.org/conda-forge/", "conda-forge"),  # the fixture records'
        ("https://conda.anaconda.org/conda-forge/linux-64", "conda-forge"),
        ("https://repo.anaconda.com/pkgs/main/linux-64", "pkgs/main"),
        ("https://conda.anaconda.org/pytorch/linux-64", "pytorch"),
        ("https://prefix.dev/conda-forge", "conda-forge"),
        ("conda-forge", "conda-forge"),
        ("", ""),
    ],
)
def test_channel_names(url: str, name: str) -> None:
    assert condaenv.channel_name(url) == name


def test_record_names_and_garbled_records() -> None:
    assert condaenv.split_record_name("pytorch-gpu-2.7.1-cuda129_mkl_h43a4b0b_304.json") == (
        "pytorch-gpu",
        "2.7.1",
        "cuda129_mkl_h43a4b0b_304",
    )
    assert condaenv.split_record_name("history") is None
    assert condaenv.split_record_name("x.json") is None
    pkg = condaenv.parse_record("{not json", ("libcublas", "12.9.1.4", "h9ab20c4_0"))
    assert (pkg.name, pkg.version, pkg.build, pkg.channel) == (
        "libcublas",
        "12.9.1.4",
        "h9ab20c4_0",
        "",
    )


# --- doctor ------------------------------------------------------------------------------------


def facts_with_torch(root: Path, installer: str, version: str, cuda: Optional[str]) -> Facts:
    torch = InstalledPackage(name="torch", version=version, installer=installer, cuda=cuda)
    return replace(detect(ReplayHost(root)), packages=(torch,))


def codes(facts: Facts) -> dict[str, Any]:
    return {f.code: f for f in examine(facts, None, None)}


def test_doctor_flags_a_pip_torch_over_conda_pytorch_and_cuda(tmp_path: Path) -> None:
    root = machine(tmp_path, PIXI_ENV, PIXI_VARS, ALL)
    found = codes(facts_with_torch(root, "pip", "2.9.0+cu129", "12.9"))
    two = found["pip-torch-over-conda-pytorch"]
    assert two.severity == "error"
    assert any(
        "pytorch-gpu 2.7.1 cuda129_mkl_h43a4b0b_304 (conda-forge)" in e for e in two.evidence
    )
    mixed = found["pip-torch-conda-cuda"]
    assert mixed.severity == "warning"
    assert any("cuda-version 12.9" in e for e in mixed.evidence)
    # pixi: its own commands, the pin the environment already has
    assert mixed.command == 'pixi remove --pypi torch && pixi add pytorch-gpu "cuda-version=12.9"'


def conda_doctor_command(tmp_path: Path) -> str:
    """doctor's command for a uv torch beside conda-forge's CUDA in a conda environment."""
    env = {"CONDA_PREFIX": CONDA_ENV, "CONDA_DEFAULT_ENV": "ml"}
    root = machine(tmp_path, CONDA_ENV, env, CUDA_ONLY)
    found = codes(facts_with_torch(root, "uv", "2.9.0+cu129", "12.9"))
    assert "pip-torch-over-conda-pytorch" not in found
    command = found["pip-torch-conda-cuda"].command
    assert command is not None
    return str(command)


def test_doctor_conda_command(tmp_path: Path) -> None:
    assert conda_doctor_command(tmp_path) == (
        'pip uninstall -y torch && conda install -c conda-forge "pytorch=*=cuda*" '
        '"cuda-version=12.9"'
    )


@pytest.mark.parametrize(
    ("installer", "version", "cuda", "expected"),
    [
        ("conda", "2.7.1", "12.9", set()),  # conda's own torch: one route
        (None, "2.9.0+cu129", "12.9", set()),  # unknown installer: no guess
        ("pip", "2.9.0+cpu", None, {"pip-torch-over-conda-pytorch"}),  # CPU wheel loads no CUDA
    ],
)
def test_doctor_stays_quiet_where_there_is_one_route(
    tmp_path: Path, installer: Optional[str], version: str, cuda: Optional[str], expected: set[str]
) -> None:
    root = machine(tmp_path, PIXI_ENV, PIXI_VARS, ALL)
    torch = InstalledPackage(name="torch", version=version, installer=installer, cuda=cuda)
    facts = replace(detect(ReplayHost(root)), packages=(torch,))
    found = set(codes(facts)) & {"pip-torch-over-conda-pytorch", "pip-torch-conda-cuda"}
    assert found == expected


def test_detect_text_names_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = machine(tmp_path, PIXI_ENV, PIXI_VARS, ALL)
    assert main(["detect", "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert f"Env       pixi environment default ({PIXI_ENV}, activated)" in out
    assert "from conda: pytorch-gpu 2.7.1, cuda-version 12.9" in out
