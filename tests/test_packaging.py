"""The package as published: an Apache-2.0 LICENSE, PEP 639 metadata (an SPDX expression, no
deprecated license table), project URLs, classifiers and an author; the sdist leaves the tests out
(they need the repository's fixtures, scripts and install.sh), the wheel and sdist carry the rest.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the 3.9 run
    tomllib = pytest.importorskip("tomli")


def _project() -> dict:  # type: ignore[type-arg]
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def test_license_file_is_the_full_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text("utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "APPENDIX: How to apply the Apache License to your work." in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_pyproject_metadata_is_pep_639_with_urls_classifiers_and_author() -> None:
    doc = _project()
    project = doc["project"]
    assert project["license"] == "Apache-2.0"  # an SPDX expression, not the deprecated table
    assert project["license-files"] == ["LICENSE"]
    assert project["authors"] and project["authors"][0]["name"]
    assert {"Homepage", "Source", "Issues"} <= set(project["urls"])
    classifiers = project["classifiers"]
    assert "Programming Language :: Python :: 3.9" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # PEP 639 forbids both
    requires = " ".join(doc["build-system"]["requires"])
    assert "setuptools>=77" in requires  # the first setuptools with PEP 639


def _built(tmp_path: Path) -> tuple[Path, Path]:
    """sdist and wheel, built by setuptools' PEP 517 backend from a copy of the checkout."""
    import setuptools

    major = int(setuptools.__version__.split(".")[0])
    if major < 77:
        pytest.skip(f"setuptools {setuptools.__version__} here; the build needs >= 77")
    src = tmp_path / "src"
    ignore = shutil.ignore_patterns(".git", ".venv*", "__pycache__", "build", "dist", "*.egg-info")
    shutil.copytree(ROOT, src, ignore=ignore)
    out = tmp_path / "dist"
    out.mkdir()
    code = (
        "import setuptools.build_meta as b, sys, pathlib\n"
        "out, names = sys.argv[1:3]  # the backend rewrites sys.argv\n"
        "s = b.build_sdist(out)\n"
        "w = b.build_wheel(out)\n"
        "pathlib.Path(names).write_text(s + ' ' + w)\n"
    )
    names = tmp_path / "names.txt"
    proc = subprocess.run(
        [sys.executable, "-c", code, str(out), str(names)],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "deprecat" not in proc.stderr.lower(), proc.stderr[-3000:]
    sdist, wheel = names.read_text().split()
    return out / sdist, out / wheel


@pytest.mark.slow
def test_the_built_sdist_and_wheel_show_license_urls_and_classifiers(tmp_path: Path) -> None:
    sdist, wheel = _built(tmp_path)
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        top = names[0].split("/")[0]
        member = tar.extractfile(f"{top}/PKG-INFO")
        assert member is not None
        sdist_meta = Parser().parsestr(member.read().decode("utf-8"))
    with zipfile.ZipFile(wheel) as zf:
        wheel_names = zf.namelist()
        meta_name = next(n for n in wheel_names if n.endswith(".dist-info/METADATA"))
        wheel_meta = Parser().parsestr(zf.read(meta_name).decode("utf-8"))
    for meta in (sdist_meta, wheel_meta):
        assert meta["License-Expression"] == "Apache-2.0"
        assert meta["License-File"] == "LICENSE"
        urls = meta.get_all("Project-URL") or []
        assert any(u.startswith("Source, ") for u in urls)
        assert "Programming Language :: Python :: 3 :: Only" in (meta.get_all("Classifier") or [])
        assert meta["Author-email"]
    assert f"{top}/LICENSE" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in wheel_names)
    # The sdist leaves the tests out (they need fixtures, scripts and install.sh from the
    # repository), so nothing in it fails for want of a fixture.
    assert not [n for n in names if n.startswith(f"{top}/tests/")]
    assert f"{top}/setup_env/data/wheels.json" in names
    assert "setup_env/data/wheels.json" in wheel_names
