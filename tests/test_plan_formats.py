"""What the chosen build's command says beside it (setup_env/decide/plan/formats.py), issue 22:
a mirror the plan does not use, a companion with no wheel for this interpreter, a plan resting on
an inferred row, and conda-forge's route only where conda-forge builds CUDA PyTorch."""

from __future__ import annotations

import dataclasses

from setup_env.decide.model import Plan, PlanOptions
from setup_env.decide.plan import make_plan, spec_facts
from setup_env.facts import Facts
from setup_env.knowledge import matrix as mx

MIRROR = "https://mirror.example/whl"


def _bundled() -> mx.Matrix:
    return mx.load_matrix(mx.BUNDLED_PATH)


def said(plan: Plan, code: str) -> list[str]:
    return [text for c, text in zip(plan.warning_codes, plan.warnings) if c == code]


def test_a_mirror_named_for_a_plan_from_pypi_is_said_to_be_unused() -> None:
    """An RTX 4090 on a new driver gets PyPI's own CUDA wheel: the mirror of PyTorch's index is
    not in the command, and the plan says so."""
    facts = spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["RTX 4090"], driver="580.95")
    plan = make_plan(facts, PlanOptions(index_url=MIRROR), _bundled())
    assert plan.source == "pypi" and plan.command == "pip install torch==2.15.0"
    assert said(plan, "mirror-unused") == [
        "--index-url names a mirror of PyTorch's index, but this plan installs from PyPI"
    ]
    # from the index, the mirror takes the index's place: nothing to say
    cpu_facts = spec_facts(os="linux", python="3.12", glibc="2.35")
    cpu = make_plan(cpu_facts, PlanOptions(index_url=MIRROR), _bundled())
    assert cpu.source == "mirror" and cpu.command.endswith(f"--index-url {MIRROR}/cpu")
    assert not said(cpu, "mirror-unused")
    # a mirror written with its trailing slash gets the same folder, one slash
    slash = make_plan(cpu_facts, PlanOptions(index_url=MIRROR + "/"), _bundled())
    assert slash.index_url == f"{MIRROR}/cpu" and slash.command == cpu.command


def test_a_companion_without_a_wheel_for_this_interpreter_is_warned() -> None:
    """torch 2.5.1 has Python 3.13 wheels, torchvision 0.20.1 (its companion) none on PyPI."""
    facts = spec_facts(os="linux", python="3.13", glibc="2.35")
    opts = PlanOptions(with_packages=("torchvision",), torch="2.5")
    plan = make_plan(facts, opts, _bundled())
    assert plan.command == (
        "pip install torch==2.5.1 torchvision==0.20.1 --index-url https://download.pytorch.org/whl/cpu"
    )
    assert said(plan, "companion-no-wheel") == [
        "torchvision 0.20.1: no wheel on PyPI for Python 3.13 on linux_x86_64; "
        "pip may try to build it from source"
    ]
    # Python 3.12 has one: nothing to say
    ok = make_plan(spec_facts(os="linux", python="3.12", glibc="2.35"), opts, _bundled())
    assert ok.command.startswith("pip install torch==2.5.1 torchvision==0.20.1")
    assert not said(ok, "companion-no-wheel")


def test_a_companion_wheel_for_any_python_or_unknown_files_is_no_warning() -> None:
    """The same 3.13 machine, the data changed: a py3-none torchvision wheel for the platform
    serves every interpreter; a version whose files the data lacks is not doubted."""
    m = _bundled()
    files = dict(m.torchvision_files)
    files["0.20.1"] = {"manylinux_2_28_x86_64": ("py3-none",)}
    py3 = dataclasses.replace(m, torchvision_files=files)
    facts = spec_facts(os="linux", python="3.13", glibc="2.35")
    opts = PlanOptions(with_packages=("torchvision",), torch="2.5")
    assert not said(make_plan(facts, opts, py3), "companion-no-wheel")
    del files["0.20.1"]
    unknown = dataclasses.replace(m, torchvision_files=files)
    assert not said(make_plan(facts, opts, unknown), "companion-no-wheel")
    # and wheels for other platforms only (the data has none for this one): not doubted either
    files["0.20.1"] = {"win_amd64": ("cp312-cp312",)}
    elsewhere = dataclasses.replace(m, torchvision_files=files)
    assert not said(make_plan(facts, opts, elsewhere), "companion-no-wheel")


def test_a_companion_whose_wheels_the_data_does_not_list_is_not_doubted() -> None:
    """torch 2.9.1 with torchvision ==0.24.* (no exact version known, so no file list to read)
    and torchaudio 2.9.1 (the data lists torchvision's wheels only): both are installed, neither
    is said to lack a wheel."""
    facts = spec_facts(os="linux", python="3.12", glibc="2.35")
    opts = PlanOptions(with_packages=("torchvision", "torchaudio"), torch="2.9")
    plan = make_plan(facts, opts, _bundled())
    assert plan.command == (
        "pip install torch==2.9.1 'torchvision==0.24.*' torchaudio==2.9.1 "
        "--index-url https://download.pytorch.org/whl/cpu"
    )
    assert not said(plan, "companion-no-wheel")


def test_torchvisions_wheel_list_judges_torchvision_alone() -> None:
    """The data changed so that torchvision's file list has a "2.9.1" entry (torchaudio 2.9.1's
    version number) without a wheel for Python 3.12: torchaudio 2.9.1 is still not doubted, as
    the list is torchvision's; torchvision at that version would be."""
    m = _bundled()
    files = dict(m.torchvision_files)
    files["2.9.1"] = {"manylinux_2_28_x86_64": ("cp310-cp310",)}
    changed = dataclasses.replace(m, torchvision_files=files)
    facts = spec_facts(os="linux", python="3.12", glibc="2.35")
    opts = PlanOptions(with_packages=("torchaudio",), torch="2.9")
    plan = make_plan(facts, opts, changed)
    assert plan.requirements == ("torch==2.9.1", "torchaudio==2.9.1")
    assert not said(plan, "companion-no-wheel")
    # (the same entry under torchvision's own version is read: the list is what it judges by)
    files["0.24.0"] = files.pop("2.9.1")
    tv = make_plan(facts, PlanOptions(with_packages=("torchvision",), torch="2.9.0"), changed)
    assert tv.requirements == ("torch==2.9.0", "torchvision==0.24.0")
    assert said(tv, "companion-no-wheel")


def test_a_plan_without_a_cuda_build_names_no_cuda_or_driver_floor() -> None:
    """A CPU plan (`plan --json`): no CUDA and no minimum driver (null, not an empty string),
    and, like every plan, the newest release the data knows (2.15.0) beside the pinned one."""
    facts = spec_facts(os="linux", python="3.12", glibc="2.35")
    plan = make_plan(facts, PlanOptions(torch="2.5"), _bundled())
    assert (plan.torch_version, str(plan.variant)) == ("2.5.1", "cpu")
    assert plan.cuda is None and plan.min_driver is None
    assert plan.newest_torch == "2.15.0"
    # a CUDA plan names both
    cuda = make_plan(_rtx4090(), None, _bundled())
    assert (cuda.cuda, cuda.min_driver, cuda.newest_torch) == ("13.2", "595.71.05", "2.15.0")


def test_facts_with_wheel_tags_but_no_python_version_leave_the_environments_python_open() -> None:
    """A capture whose interpreter record has its wheel tags but no version (the Debian 12
    capture, its "3.11.7" dropped): the plan matches wheels by the tags, and the environment.yml
    and pixi.toml ask for a Python without a version rather than inventing one; with the version
    they pin it."""
    from pathlib import Path

    from setup_env.probe.detect import detect
    from setup_env.probe.host import ReplayHost

    host = Path(__file__).parent / "fixtures" / "hosts" / "debian12-nogpu-cuda13toolkit"
    known = detect(ReplayHost(host))
    assert known.python.version == "3.11.7" and known.python.tags
    facts = dataclasses.replace(known, python=dataclasses.replace(known.python, version=""))
    conda = make_plan(facts, PlanOptions(installer="conda"), _bundled())
    assert conda.torch_version == "2.15.0" and conda.config is not None
    assert "  - pip\n" in conda.config
    assert conda.config.split("\n")[4] == "  - python"
    pinned = make_plan(known, PlanOptions(installer="conda"), _bundled()).config or ""
    assert pinned.split("\n")[4] == "  - python=3.11"
    pixi = make_plan(facts, PlanOptions(installer="pixi"), _bundled())
    assert pixi.torch_version == "2.15.0" and pixi.config is not None
    assert '\n[dependencies]\npython = "*"\n' in pixi.config
    pinned = make_plan(known, PlanOptions(installer="pixi"), _bundled()).config or ""
    assert '\n[dependencies]\npython = "3.11.*"\n' in pinned


def test_a_plain_pip_plan_on_an_inferred_pypi_row_says_so() -> None:
    """Which build PyPI's aarch64 torch 2.9.1 is (CPU) is inferred in the data (its row is I)."""
    facts = spec_facts(os="linux", arch="aarch64", python="3.12", glibc="2.35")
    plan = make_plan(facts, PlanOptions(torch="2.9"), _bundled())
    assert plan.command == "pip install torch==2.9.1"
    assert said(plan, "row-inferred") == [
        "that plain `pip install torch==2.9.1` gives the cpu build on linux_aarch64 is inferred, "
        "not read from PyPI's wheel (wheel_matrix.md §1 (CUDA on aarch64 only via the index))"
    ]
    # a GH200's plain `pip install` of 2.15.0 (PyPI's aarch64 CUDA wheel) is read: nothing to say
    gh200 = spec_facts(os="linux", arch="aarch64", python="3.12", gpus=["GH200"], driver="580.95")
    read = make_plan(gh200, None, _bundled())
    assert read.command == "pip install torch==2.15.0" and not said(read, "row-inferred")


def test_no_conda_forge_route_where_conda_forge_builds_no_cuda_pytorch() -> None:
    """A GH200 (linux aarch64) on cu129: the environment.yml and pixi.toml carry the wheel only,
    no conda-forge comment (its CUDA builds are shown for linux-64 and win-64 only)."""
    facts = spec_facts(os="linux", arch="aarch64", python="3.12", gpus=["GH200"], driver="580.95")
    conda = make_plan(facts, PlanOptions(installer="conda", variant="cu129"), _bundled())
    assert conda.status == "ok" and conda.cuda == "12.9", conda
    assert conda.config == (
        "name: torch\n"
        "channels:\n"
        "  - conda-forge\n"
        "dependencies:\n"
        "  - python=3.12\n"
        "  - pip\n"
        "  - pip:\n"
        "      - --index-url https://download.pytorch.org/whl/cu129\n"
        "      - torch==2.13.0\n"
    )
    pixi = make_plan(facts, PlanOptions(installer="pixi", variant="cu129"), _bundled())
    assert pixi.status == "ok" and pixi.cuda == "12.9", pixi
    assert pixi.config == (
        "[workspace]\n"
        'name = "torch"\n'
        'channels = ["conda-forge"]\n'
        'platforms = ["linux-aarch64"]\n'
        "\n"
        "[dependencies]\n"
        'python = "3.12.*"\n'
        "\n"
        "[pypi-dependencies]\n"
        'torch = { version = "==2.13.0", index = "https://download.pytorch.org/whl/cu129" }\n'
    )


def _rtx4090() -> Facts:
    return spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["RTX 4090"], driver="580.95")


def test_a_cuda_plan_details_the_build_it_chose() -> None:
    """What `plan --json` carries beside the command: the MVC floor, the build's architectures and
    where they were read, the release's upload date and its Requires-Python."""
    plan = make_plan(_rtx4090(), None, _bundled())
    assert plan.command == "pip install torch==2.15.0"
    assert plan.details == {
        "mvc_floor": "580",
        "arches": "sm_75 sm_80 sm_86 sm_90 sm_100 sm_120",
        "arches_source": "VERIFIED.md §3: 2.15.0+cu132 Linux x86_64 SASS sm_75 sm_80 sm_86 sm_90 "
        "sm_100 sm_120",
        "release_uploaded": "2026-10-28",
        "requires_python": ">=3.11",
    }


def test_each_companion_without_a_release_is_said_and_its_newest_pin_offered() -> None:
    """torch 2.15.0 has no torchvision (none on PyPI yet) and no torchaudio known: each is said,
    torch is installed alone, and each gets the newest torch that has one, in the order asked."""
    opts = PlanOptions(with_packages=("torchvision", "torchaudio"))
    plan = make_plan(_rtx4090(), opts, _bundled())
    assert plan.command == "pip install torch==2.15.0"
    assert said(plan, "companion-unknown") == [
        "torchvision: no torchvision release is known for torch 2.15.0 (none on PyPI yet); "
        "installing torch without it",
        "torchaudio: no torchaudio release is known for torch 2.15.0; installing torch without it",
    ]
    pins = [f.summary for f in plan.fixes if f.kind == "pin-torch"]
    assert pins == [
        "torch 2.14.1 is the newest with a known torchvision (==0.29.*): --torch 2.14.1",
        "torch 2.13.0 is the newest with a known torchaudio (==2.11.0): --torch 2.13.0",
    ]
    assert [f.kind for f in plan.fixes][:2] == ["pin-torch", "pin-torch"]  # before the driver's


def test_a_uv_project_names_its_index_after_the_variant() -> None:
    """An MI300X's uv project: the index is named from the URL's last folder, its dots made
    dashes (a TOML key uv accepts), and torch is sourced from it alone."""
    facts = spec_facts(os="linux", python="3.12", glibc="2.35", gpus=["MI300X"])
    plan = make_plan(facts, PlanOptions(installer="uv-project"), _bundled())
    assert plan.config == (
        "[project]\n"
        'dependencies = ["torch==2.14.1"]\n'
        "\n"
        "[[tool.uv.index]]\n"
        'name = "pytorch-rocm7-14"\n'
        'url = "https://download.pytorch.org/whl/rocm7.14"\n'
        "explicit = true\n"
        "\n"
        "[tool.uv.sources]\n"
        'torch = [{ index = "pytorch-rocm7-14" }]\n'
    )


def test_a_toml_string_escapes_its_backslashes_and_quotes() -> None:
    from setup_env.decide.plan.formats import _toml

    assert _toml("torch==2.15.0") == '"torch==2.15.0"'
    assert _toml('C:\\a "b"') == '"C:\\\\a \\"b\\""'
