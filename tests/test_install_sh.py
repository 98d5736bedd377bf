"""`install.sh`, run for real with /bin/sh in temporary folders.

Each run gets a PATH made of symlinks to only the tools the script uses plus the Pythons the case
needs: real interpreters (the old ones are real old CPythons from pyenv), a real Python
installation without ensurepip (what Debian ships without python3-venv), a real 1 MiB
filesystem (tmpfs in a user+mount namespace) for the disk check, a closed loopback port for the
network check. HOME and the XDG folders point into tmp; the checkout is copied to tmp first so
that pip's in-tree build never writes into the working tree.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import require_tools

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "install.sh"
PYENV = Path("/root/.pyenv/versions")
TOOLS = ("df", "sed", "grep", "ls", "cat")  # every external program install.sh runs
GOOD_PYTHON = os.path.realpath(sys.executable)
SH = "/bin/sh"


def _old_python(version: str) -> str:
    matches = sorted(PYENV.glob(f"{version}.*/bin/python{version}"))
    if not matches:
        pytest.fail(f"a real Python {version} is needed for this test (pyenv, under {PYENV})")
    return str(matches[0])


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout: install.sh beside pyproject.toml and the package."""
    return copy_checkout(tmp_path_factory.mktemp("checkout") / "setup-env")


def copy_checkout(dest: Path) -> Path:
    dest.mkdir()
    for name in ("install.sh", "pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(
        ROOT / "setup_env",
        dest / "setup_env",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    return dest


def toolbin(where: Path, pythons: dict[str, str]) -> Path:
    """A PATH folder with only the script's tools and the given Pythons (name -> target)."""
    bin_dir = where / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, f"{tool} is needed"
        (bin_dir / tool).symlink_to(found)
    for name, target in pythons.items():
        (bin_dir / name).symlink_to(target)
    return bin_dir


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_sh(
    script: Path,
    args: list[str],
    path: Path,
    tmp: Path,
    env: dict[str, str] | None = None,
    prefix: list[str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    home = tmp / "home"
    home.mkdir(exist_ok=True)
    full = {
        "PATH": str(path),
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "LC_ALL": "C",
    }
    # The machine's own way to reach an index (proxies, CA bundle, pip settings) still applies.
    for name, value in os.environ.items():
        if name.startswith("PIP_") or name.lower() in ("http_proxy", "https_proxy", "no_proxy"):
            full[name] = value
    full.update(env or {})
    return subprocess.run(
        [*(prefix or []), SH, str(script), *args],
        env=full,
        cwd=tmp,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("install.sh: error: ")
    return lines[0]


def test_help_documents_every_exit_code(tmp_path: Path) -> None:
    proc = run_sh(SCRIPT, ["--help"], toolbin(tmp_path, {}), tmp_path)
    assert proc.returncode == 0
    for code in ("0", "2", "10", "11", "12", "13", "14", "15", "16", "17", "18"):
        assert any(ln.strip().startswith(code + " ") for ln in proc.stdout.splitlines()), code


def test_unknown_option_is_a_usage_error(tmp_path: Path) -> None:
    proc = run_sh(SCRIPT, ["--frobnicate"], toolbin(tmp_path, {}), tmp_path)
    assert proc.returncode == 2
    assert "--frobnicate" in one_error_line(proc)


def test_install_torch_without_terminal_needs_yes(tmp_path: Path) -> None:
    proc = run_sh(SCRIPT, ["--install-torch"], toolbin(tmp_path, {}), tmp_path)
    assert proc.returncode == 2
    assert "--yes" in one_error_line(proc)


def test_dry_run_prints_every_step_and_does_nothing(checkout: Path, tmp_path: Path) -> None:
    path = toolbin(tmp_path, {"python3": GOOD_PYTHON})
    venv = tmp_path / "env"
    proc = run_sh(
        checkout / "install.sh",
        ["--dry-run", "--install-torch", "--venv", str(venv), "--variant", "cpu"],
        path,
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"found Python {sys.version_info[0]}.{sys.version_info[1]}." in out
    steps = [ln for ln in out.splitlines() if ln.startswith("+ ")]
    assert steps == [
        f"+ {path}/python3 -m venv {venv}",
        f"+ {venv}/bin/python -m pip install --disable-pip-version-check {checkout}",
        f"+ {venv}/bin/setup-env plan --variant cpu",
        f"+ {venv}/bin/setup-env install --no-verify --variant cpu",
        f"+ {venv}/bin/setup-env verify",
    ]
    assert "would check the network" in out
    assert not venv.exists()


def test_no_suitable_python(tmp_path: Path) -> None:
    # python3 is a real 3.8, python a real 3.7: both too old; python3.12 is a program that
    # exists but is no Python at all (/bin/false).
    old38, old37 = _old_python("3.8"), _old_python("3.7")
    path = toolbin(tmp_path, {"python3": old38, "python": old37, "python3.12": "/bin/false"})
    proc = run_sh(SCRIPT, ["--venv", str(tmp_path / "v")], path, tmp_path)
    assert proc.returncode == 10, proc.stderr
    line = one_error_line(proc)
    assert "no Python 3.9 or newer" in line and "--python PATH" in line
    assert f"rejected {path}/python3: Python 3.8." in proc.stdout
    assert "too old" in proc.stdout
    assert f"rejected {path}/python3.12: it does not run" in proc.stdout
    assert f"rejected {path}/python: Python 3.7." in proc.stdout
    assert not (tmp_path / "v").exists()


def test_explicit_python_too_old(tmp_path: Path) -> None:
    path = toolbin(tmp_path, {})
    proc = run_sh(SCRIPT, ["--python", _old_python("3.8")], path, tmp_path)
    assert proc.returncode == 10
    assert "3.9 or newer is needed" in one_error_line(proc)


def _python_without_ensurepip(where: Path) -> Path:
    """A real CPython installation missing ensurepip, as Debian ships python3 without
    python3-venv: the interpreter binary copied, its standard library linked entry by entry
    except ensurepip (and site-packages)."""
    base = Path(_old_python("3.10")).resolve().parent.parent
    prefix = where / "py"
    (prefix / "bin").mkdir(parents=True)
    lib = prefix / "lib" / "python3.10"
    lib.mkdir(parents=True)
    shutil.copy2(base / "bin" / "python3.10", prefix / "bin" / "python3.10")
    for entry in (base / "lib" / "python3.10").iterdir():
        if entry.name not in ("ensurepip", "site-packages"):
            (lib / entry.name).symlink_to(entry)
    exe = prefix / "bin" / "python3.10"
    probe = subprocess.run([str(exe), "-c", "import venv"], capture_output=True, timeout=30)
    assert probe.returncode == 0, probe.stderr
    return exe


def test_no_venv_module(tmp_path: Path) -> None:
    exe = _python_without_ensurepip(tmp_path)
    # The honest check: this Python really cannot make a venv.
    made = subprocess.run(
        [str(exe), "-m", "venv", str(tmp_path / "try")], capture_output=True, timeout=60
    )
    assert made.returncode != 0
    path = toolbin(tmp_path, {"python3": str(exe)})
    proc = run_sh(SCRIPT, ["--venv", str(tmp_path / "v")], path, tmp_path)
    assert proc.returncode == 11, proc.stderr
    line = one_error_line(proc)
    assert "no venv module" in line and "python3-venv" in line
    assert "ensurepip missing" in proc.stdout
    assert not (tmp_path / "v").exists()


def test_no_network_to_the_index(tmp_path: Path) -> None:
    path = toolbin(tmp_path, {"python3": GOOD_PYTHON})
    index = f"http://127.0.0.1:{closed_port()}/simple"
    proc = run_sh(
        SCRIPT, ["--venv", str(tmp_path / "v")], path, tmp_path, env={"PIP_INDEX_URL": index}
    )
    assert proc.returncode == 13, proc.stderr
    line = one_error_line(proc)
    assert index in line and "refused" in line.lower() and "--find-links" in line
    assert not (tmp_path / "v").exists()  # nothing was created


def test_existing_folder_that_is_not_a_venv(tmp_path: Path) -> None:
    path = toolbin(tmp_path, {"python3": GOOD_PYTHON})
    target = tmp_path / "data"
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    proc = run_sh(SCRIPT, ["--venv", str(target)], path, tmp_path)
    assert proc.returncode == 14
    assert "not a virtual environment" in one_error_line(proc)
    assert sorted(p.name for p in target.iterdir()) == ["notes.txt"]


def _namespace_prefix(mount_point: Path) -> list[str]:
    """Run the script in a user+mount namespace with a 1 MiB tmpfs on mount_point."""
    unshare, mount = require_tools("unshare", "mount", why="util-linux: a real small filesystem")
    probe = subprocess.run(
        [unshare, "--user", "--map-root-user", "--mount", mount, "-t", "tmpfs", "-o", "size=1m",
         "tmpfs", str(mount_point)],
        capture_output=True, timeout=30,
    )  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"user namespaces are not available here: {probe.stderr.decode().strip()}")
    script = f'{mount} -t tmpfs -o size=1m tmpfs "$0" && exec "$@"'
    return [unshare, "--user", "--map-root-user", "--mount", SH, "-c", script, str(mount_point)]


def test_not_enough_disk_space(tmp_path: Path) -> None:
    small = tmp_path / "small"
    small.mkdir()
    prefix = _namespace_prefix(small)
    path = toolbin(tmp_path, {"python3": GOOD_PYTHON})
    proc = run_sh(SCRIPT, ["--venv", str(small / "v")], path, tmp_path, prefix=prefix)
    assert proc.returncode == 12, proc.stderr
    line = one_error_line(proc)
    assert "not enough disk space" in line and "MiB free" in line and "--venv" in line


@pytest.mark.slow
def test_real_install_then_second_run_changes_nothing(checkout: Path, tmp_path: Path) -> None:
    path = toolbin(tmp_path, {"python3": GOOD_PYTHON})
    venv = tmp_path / ".venv"
    first = run_sh(checkout / "install.sh", [], path, tmp_path)  # default --venv .venv
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
    assert f"+ {venv}/bin/setup-env plan" in first.stdout
    version = subprocess.run(
        [str(venv / "bin" / "setup-env"), "--version"], capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0 and version.stdout.startswith("setup-env ")
    # The venv's setup-env is this checkout's copy, not the working tree's editable install.
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import setup_env; print(setup_env.__file__)"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )  # fmt: skip
    assert where.stdout.strip().startswith(str(venv))

    def snapshot() -> dict[str, tuple[int, int]]:
        return {
            str(p.relative_to(venv)): (p.lstat().st_mtime_ns, p.lstat().st_size)
            for p in venv.rglob("*")
        }

    before = snapshot()
    second = run_sh(checkout / "install.sh", [], path, tmp_path)
    assert second.returncode == 0, second.stderr
    assert "already set up: setup-env" in second.stdout
    assert "keeping the virtual environment" in second.stdout
    # No step ran an installer or made a venv (the plan printed at the end may show a command).
    steps = [line for line in second.stdout.splitlines() if line.startswith("+ ")]
    assert not any("pip install" in s or "-m venv" in s for s in steps), steps
    assert snapshot() == before


def venv_files(venv: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(venv)): (p.lstat().st_mtime_ns, p.lstat().st_size)
        for p in venv.rglob("*")
    }


@pytest.mark.slow
def test_a_run_after_the_code_changed_installs_it_again(tmp_path: Path) -> None:
    """Issue 17: the version is 0.1.0 from one commit to the next, and a second run after a
    `git pull` said "already set up" and kept the old code. Install; edit a source file, as a
    pull would; run again: the new code runs. Run once more: nothing changes, and fast. A file
    added to the package (a pull bringing a module) is a change too."""
    src = copy_checkout(tmp_path / "setup-env")
    path = toolbin(tmp_path, {"python3": GOOD_PYTHON})
    venv = tmp_path / "env"
    args = ["--venv", str(venv)]
    first = run_sh(src / "install.sh", args, path, tmp_path)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]

    def marker() -> str:
        """What the venv's setup_env says (never a PYTHONPATH's copy: the venv's own)."""
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        ran = subprocess.run(
            [str(venv / "bin" / "python"), "-c",
             "import setup_env; print(getattr(setup_env, 'EDITED_AFTER_INSTALL', 'old code'))"],
            capture_output=True, text=True, timeout=60, cwd=tmp_path, env=env,
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        return ran.stdout.strip()

    assert marker() == "old code"
    init = src / "setup_env" / "__init__.py"
    init.write_text(init.read_text() + '\nEDITED_AFTER_INSTALL = "new code"\n')
    second = run_sh(src / "install.sh", args, path, tmp_path)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert "already set up" not in second.stdout
    assert (
        f"the code in {src} is not what setup-env 0.1.0 in {venv} was installed from: "
        "installing it again"
    ) in second.stdout
    assert f"+ {venv}/bin/python -m pip install --disable-pip-version-check {src}" in second.stdout
    assert marker() == "new code"

    before = venv_files(venv)
    start = time.monotonic()
    third = run_sh(src / "install.sh", args, path, tmp_path)
    took = time.monotonic() - start
    assert third.returncode == 0, third.stderr
    assert f"already set up: setup-env 0.1.0 in {venv}, installed from {src} as it is now" in (
        third.stdout
    )
    steps = [line for line in third.stdout.splitlines() if line.startswith("+ ")]
    assert steps == [f"+ {venv}/bin/setup-env plan"]
    assert venv_files(venv) == before
    assert took < 15, took  # the plan and two Python starts (~1 s here); an install takes ~10 s

    (src / "setup_env" / "added_by_a_pull.py").write_text("X = 1\n")
    fourth = run_sh(src / "install.sh", [*args, "--dry-run"], path, tmp_path)
    assert fourth.returncode == 0, fourth.stderr
    assert "installing it again" in fourth.stdout and "pip install" in fourth.stdout
    assert venv_files(venv) == before  # a dry run


def test_shellcheck_clean() -> None:
    (shellcheck,) = require_tools("shellcheck", why="the Debian package shellcheck")
    proc = subprocess.run(
        [shellcheck, "--shell=sh", "--severity=style", str(SCRIPT)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout


def test_script_is_posix_sh() -> None:
    text = SCRIPT.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert "\nset -eu\n" in text
    assert os.access(SCRIPT, os.X_OK)
