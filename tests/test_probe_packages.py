# ruff: noqa: E501  (real captured text keeps its long lines)
"""Installed torch/torchvision/torchaudio read from metadata, never imported."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_probe_host import make_replay

from setup_env.knowledge.variant import CPU, Variant
from setup_env.probe import packages

HOSTS = Path(__file__).parent / "fixtures" / "hosts"
SITE = (
    HOSTS / "debian12-nogpu-cuda13toolkit/files/root/.pyenv/versions/3.11.7/lib/python3.11/"
    "site-packages"
)
# This machine's torch 2.13.0+cpu, as installed by pip.
METADATA_CPU = (SITE / "torch-2.13.0+cpu.dist-info/METADATA").read_text(encoding="utf-8")
VERSION_PY_CPU = (SITE / "torch/version.py").read_text(encoding="utf-8")


def test_parse_this_machines_torch() -> None:
    meta = packages.parse_metadata(METADATA_CPU)
    assert (meta.name, meta.version) == ("torch", "2.13.0+cpu")
    assert "filelock" in meta.requires
    fields = packages.parse_version_py(VERSION_PY_CPU)
    assert fields == {
        "__version__": "2.13.0+cpu",
        "cuda": None,
        "hip": None,
        "rocm": None,
        "xpu": None,
    }


@pytest.mark.parametrize(
    ("version", "version_py", "requires", "expected"),
    [
        ("2.13.0+cpu", None, [], ("cpu", "local version label")),
        ("2.6.0+rocm6.2.4", None, [], ("rocm6.2.4", "local version label")),
        ("2.7.1+xpu", None, [], ("xpu", "local version label")),
        # PyPI 2.14.1 Linux wheel: no label; version.py cuda = '13.0' (VERIFIED.md section 2)
        ("2.14.1", {"cuda": "13.0", "hip": None}, [], ("cu130", "torch/version.py cuda")),
        # Requires-Dist alone (metadata read before version.py exists, VERIFIED.md section 2)
        (
            "2.14.1",
            None,
            ['cuda-toolkit[cublas,cudart]==13.0.3; platform_system == "Linux"'],
            ("cu130", "Requires-Dist cuda-toolkit[cublas,cudart]==13.0.3"),
        ),
        (
            "2.9.1",
            None,
            [
                'nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and platform_machine == "x86_64"'
            ],
            ("cu128", "Requires-Dist nvidia-cuda-runtime-cu12==12.8.90"),
        ),
        (
            "2.5.1",
            {"cuda": None, "hip": "6.2.41133-dd7f95766"},
            [],
            ("rocm6.2", "torch/version.py hip"),
        ),
        # macOS wheel: no label, no accelerator fields
        (
            "2.13.0",
            {"cuda": None, "hip": None, "xpu": None},
            [],
            ("cpu", "torch/version.py (no cuda, hip or xpu)"),
        ),
        ("2.13.0", None, [], (None, "")),
    ],
)
def test_infer_variant(
    version: str,
    version_py: dict[str, str | None] | None,
    requires: list[str],
    expected: tuple[str | None, str],
) -> None:
    label, how = expected
    want = Variant.parse(label) if label else None
    assert packages.infer_variant(version, version_py, requires) == (want, how)


def _meta(name: str, version: str, *requires: str) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\nLong description: Name: not-this\n"


def test_shadowed_installs_and_broken_ones(tmp_path: Path) -> None:
    user = "/home/user/.local/lib/python3.11/site-packages"
    system = "/usr/lib/python3/dist-packages"
    host = make_replay(
        tmp_path,
        {"interpreter": {"sys_path": [user, system, "/nonexistent", "x.zip"]}},
        {
            f"{user}/torch-2.13.0+cpu.dist-info/METADATA": _meta("torch", "2.13.0+cpu"),
            f"{user}/torch-2.13.0+cpu.dist-info/INSTALLER": "pip\n",
            f"{user}/torch/version.py": "__version__ = '2.13.0+cpu'\ncuda = None\n",
            f"{system}/torch-2.14.1.dist-info/METADATA": _meta(
                "torch", "2.14.1", 'cuda-toolkit[cublas]==13.0.3; platform_system == "Linux"'
            ),
            f"{system}/torch-2.14.1.dist-info/INSTALLER": "uv\n",
            f"{system}/torchvision-0.29.1.dist-info/METADATA": "Name: torchvision\n",
            f"{system}/torchaudio-2.14.1.dist-info/METADATA": _meta("torchaudio", "2.14.1"),
        },
    )
    found, notes = packages.detect(host)
    rows = [(p.name, p.version, p.variant, p.installer, p.shadowed, p.location) for p in found]
    assert rows == [
        ("torch", "2.13.0+cpu", CPU, "pip", False, user),
        ("torch", "2.14.1", Variant.parse("cu130"), "uv", True, system),
        ("torchvision", "0.29.1", None, None, False, system),
        ("torchaudio", "2.14.1", None, None, False, system),
    ]
    assert [n.code for n in notes] == [
        "torch-files-missing",
        "package-shadowed",
        "package-metadata-garbled",
    ]


def test_unreadable_metadata_is_a_note(tmp_path: Path) -> None:
    site = "/venv/lib/python3.12/site-packages"
    host = make_replay(
        tmp_path,
        {
            "interpreter": {"sys_path": [site]},
            "unreadable": [f"{site}/torch-2.13.0.dist-info/METADATA"],
        },
        {f"{site}/torch-2.13.0.dist-info/RECORD": ""},
    )
    found, notes = packages.detect(host)
    assert found == [] and [n.code for n in notes] == ["package-metadata-unreadable"]
