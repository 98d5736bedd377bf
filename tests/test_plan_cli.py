"""`setup-env plan` in-process: whole JSON documents, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from setup_env.cli import main
from setup_env.decide.model import PlanOptions
from setup_env.decide.plan import facts_summary, make_plan, spec_facts
from setup_env.facts import to_jsonable
from setup_env.knowledge import matrix as mx
from setup_env.knowledge.variant import CPU, Variant
from setup_env.output import render

V = Variant.parse

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["plan", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def expected(facts_kwargs: dict, opts: PlanOptions, machine: str) -> dict:
    facts = spec_facts(**facts_kwargs)
    m = mx.load_matrix()
    p = make_plan(facts, opts, m)
    payload = {
        **to_jsonable(p),
        "machine": machine,
        "facts": facts_summary(facts),
        "matrix": m.summary(),
    }
    return json.loads(render.dumps(render.envelope("plan", payload)))


@pytest.fixture(autouse=True)
def _bundled(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(mx.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def test_spec_whole_document(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "--json", "--os", "linux", "--python", "3.12", "--gpu", "H100",
        "--driver", "535.104.05", "--with", "torchvision",
    )  # fmt: skip
    doc = json.loads(out)
    want = expected(
        {"os": "linux", "python": "3.12", "gpus": ["H100"], "driver": "535.104.05"},
        PlanOptions(with_packages=("torchvision",)),
        "the described machine",
    )
    assert code == 0
    assert doc == want
    assert doc["schema"] == "setup-env/plan"
    assert doc["plan"]["command"] == (
        "pip install torch==2.14.1 'torchvision==0.29.*' "
        "--index-url https://download.pytorch.org/whl/cu126"
    )
    assert doc["plan"]["driver_compat"] == "mvc"
    assert doc["plan"]["facts"]["gpus"][0]["compute_capability"] == "9.0"


def test_repeatable_gpu_and_fallback(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "--json", "--os", "linux", "--python", "3.12", "--gpu", "GTX 1080",
        "--gpu", "sm_120", "--driver", "595.71.05",
    )  # fmt: skip
    doc = json.loads(out)
    assert code == 0 and doc["plan"]["status"] == "fallback" and V(doc["plan"]["variant"]) == CPU
    assert [g["compute_capability"] for g in doc["plan"]["facts"]["gpus"]] == ["6.1", "12.0"]


def test_nothing_fits_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--os", "macos", "--arch", "x86_64", "--python", "3.13")
    assert code == 1
    assert out.startswith("No PyTorch wheel fits")


def test_text_command_first(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--os", "windows", "--python", "3.12", "--gpu", "RTX 3060",
                       "--driver", "596.49", "--no-color")  # fmt: skip
    lines = out.splitlines()
    assert code == 0
    assert lines[0].startswith("Install torch 2.15.0 (cu130, CUDA 13.0)")
    assert (
        lines[1]
        == "  $ pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cu130"
    )
    assert "Why" in lines


def test_facts_file_envelope_and_bare(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    facts = spec_facts(os="linux", python="3.11", gpus=["RTX 4090"], driver="595.71.05")
    bare = tmp_path / "bare.json"
    bare.write_text(facts.to_json())
    env = tmp_path / "env.json"
    env.write_text(json.dumps(render.envelope("facts", facts)))
    docs = []
    for path in (bare, env):
        code, out, _ = run(capsys, "--json", "--facts", str(path))
        assert code == 0
        docs.append(json.loads(out))
    assert docs[0]["plan"]["torch_version"] == "2.15.0"
    assert docs[0]["plan"]["command"] == "pip install torch==2.15.0"
    assert {k: v for k, v in docs[0]["plan"].items() if k != "machine"} == {
        k: v for k, v in docs[1]["plan"].items() if k != "machine"
    }


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (("--os", "linux", "--gpu", "Foo 9000"), "not a GPU the catalogue knows"),
        (("--os", "linux", "--driver", "5x0"), "--driver"),
        # (--root with --gpu is a what-if on the captured machine now: tests/test_plan_root.py)
        (("--root", "tests/fixtures/hosts/ubuntu-h100-590", "--os", "linux"), "--root can't"),
        (("--os", "linux", "--index-url", "https://u:p@mirror/whl"), "credentials"),
        (("--os", "linux", "--variant", "cu999"), "unknown variant"),
        (("--os", "linux", "--torch", "latest"), "--torch"),
        (("--os", "linux", "--with", "torchtext"), "torchtext"),
    ],
)
def test_bad_usage_exits_2(capsys: pytest.CaptureFixture[str], argv: tuple, needle: str) -> None:
    code, _out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_bad_facts_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "f.json"
    bad.write_text('{"schema_version": 99}')
    code, out, err = run(capsys, "--json", "--facts", str(bad))
    assert code == 2 and "not a facts document" in err
    assert json.loads(out)["schema"] == "setup-env/error"
    code, _out, err = run(capsys, "--facts", str(tmp_path / "missing.json"))
    assert code == 2 and "cannot read" in err


def test_bad_matrix_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "w.json"
    bad.write_text("[]")
    code, _out, err = run(capsys, "--matrix", str(bad), "--os", "linux")
    assert code == 2 and "invalid wheel matrix" in err


def test_root_replay(capsys: pytest.CaptureFixture[str]) -> None:
    root = FIXTURES / "hosts" / "debian12-nogpu-cuda13toolkit"
    code, out, _ = run(capsys, "--json", "--root", str(root))
    doc = json.loads(out)
    assert code == 0
    assert doc["plan"]["command"] == (
        "pip install torch==2.15.0 --index-url https://download.pytorch.org/whl/cpu"
    )
    code, _out, _err = run(capsys, "--root", str(FIXTURES / "nope"))
    assert code == 3


def test_cloud_hook(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "--json", "--cloud", "aws", "--instance-type", "g5.xlarge", "--python", "3.12"
    )
    doc = json.loads(out)
    assert code == 0
    assert doc["plan"]["machine"] == "aws g5.xlarge"
    assert doc["plan"]["cloud"]["provider"] == "aws"
    assert V(doc["plan"]["variant"]).is_cuda
    code, out, _ = run(capsys, "--no-color", "--cloud", "aws", "--instance-type", "g5.xlarge")
    assert "\nCloud\n" in out
    code, _out, err = run(capsys, "--cloud", "aws", "--instance-type", "nope.large")
    assert code == 2 and "nope.large" in err


def test_installer_config_printed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--os", "linux", "--python", "3.12", "--installer", "poetry",
                       "--no-color")  # fmt: skip
    assert code == 0
    assert "[[tool.poetry.source]]" in out and 'priority = "explicit"' in out
    assert "$ poetry install" in out


def test_spec_without_os_describes_this_machine_with_the_named_gpu(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import platform

    code, out, _err = run(capsys, "--gpu", "RTX 5090", "--driver", "570.86.10", "--json")
    assert code == 0
    doc = json.loads(out)["plan"]
    py = ".".join(platform.python_version_tuple()[:2])
    assert doc["machine"] == f"the described machine (linux, {platform.machine()}, Python {py})"
    # RTX 5090 (sm_120) on driver 570: a CUDA 12.8+ build of torch >= 2.7 (issue 3's answer).
    from packaging.version import Version

    assert V("cu128") <= V(doc["variant"]) <= V("cu129")
    assert Version(doc["torch_version"]) >= Version("2.7")


def test_python_alone_replans_the_detected_machine_for_another_python(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The captured RTX 5090 + 4090 machine keeps its GPUs and driver; only Python changes.
    root = "tests/fixtures/hosts/fedora-rtx5090-rtx4090-580"
    code, out, _err = run(capsys, "--root", root, "--python", "3.10", "--json")
    assert code in (0, 1)
    doc = json.loads(out)["plan"]
    assert doc["machine"] == f"captured machine {root} with Python 3.10"
    # torch 2.15 needs Python 3.11: the newest for 3.10 is 2.14.x.
    assert doc["torch_version"].startswith("2.14.")
    code, _out, err = run(capsys, "--python", "3.x")
    assert code == 2 and "expected a version like 3.12" in err


# NVIDIA writes its driver versions with zero-padded parts (520.61.05, 450.80.02); a parsed
# Version prints them unpadded (520.61.5). Every driver string of the matrix, padded as NVIDIA
# prints it, must never appear unpadded in what plan prints, for machines that reach each path
# that names a driver (an old driver, a GPU whose driver branches ended, a new GPU).
@pytest.mark.parametrize(
    "argv",
    [
        ["--os", "linux", "--gpu", "Tesla K80", "--driver", "470.42.01", "--python", "3.12"],
        ["--os", "linux", "--gpu", "RTX 4090", "--driver", "450.51.06", "--python", "3.12"],
        ["--os", "linux", "--gpu", "GTX 1080", "--driver", "384.81", "--python", "3.12"],
        ["--os", "windows", "--gpu", "RTX 3060", "--driver", "456.71", "--python", "3.12"],
        ["--os", "linux", "--gpu", "RTX 5090", "--driver", "560.35.03", "--python", "3.12"],
    ],
    ids=["kepler-470", "ada-450", "pascal-384", "windows-456", "blackwell-560"],
)
def test_driver_versions_keep_nvidias_zero_padding(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    import re

    padded = set()
    for row in mx.load_matrix().cuda.values():
        for floor in (*row.updates.values(), row.mvc):
            for text in (floor.linux_text, floor.windows_text):
                if text and re.search(r"\.0\d", text):
                    padded.add(text)
    assert padded, "the matrix names no zero-padded driver: the test would prove nothing"
    _code, text, _err = run(capsys, *argv)
    _code, doc, _err = run(capsys, *argv, "--json")
    for spelled in padded:
        unpadded = re.sub(r"\.0(\d)", r".\1", spelled)
        for out in (text, doc):
            assert not re.search(re.escape(unpadded) + r"(?![\d])", out), (spelled, out)
