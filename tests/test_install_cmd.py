"""`setup-env install` and `setup_env.act.installer`.

Nothing here touches the real environment: installs go into temporary venvs, HOME and the XDG
folders point into tmp, the only network traffic is to 127.0.0.1. The end-to-end install uses the
real torch wheel in /opt/wheels (the offline route: --no-index --find-links).
"""

from __future__ import annotations

import fnmatch
import http.server
import json
import shlex
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from setup_env.act import installer as inst
from setup_env.act.installer import InstallError
from setup_env.cli import main
from setup_env.decide.model import Plan
from setup_env.knowledge.variant import CPU, Variant
from setup_env.probe.detect import detect
from setup_env.probe.host import LiveHost

FIXTURES = Path(__file__).parent / "fixtures" / "install"
TORCH_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
CPU_INDEX = "https://download.pytorch.org/whl/cpu"


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        monkeypatch.setenv(name, str(home / name.lower()))
    monkeypatch.setenv("SETUP_ENV_CLOUD_METADATA", "0")  # never ask a metadata service


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def plan(argv: tuple[str, ...], **kw: object) -> Plan:
    fields: dict[str, object] = {
        "status": "ok",
        "torch_version": "2.13.0",
        "variant": CPU,
        "index_url": CPU_INDEX,
        "requirements": ("torch==2.13.0",),
        "argv": argv,
    }
    fields.update(kw)
    return Plan(**fields)  # type: ignore[arg-type]


# --- validation: hostile values never reach an argv ---


@pytest.mark.parametrize(
    "url",
    [
        "https://mirror.example/simple; rm -rf ~",
        "https://mirror.example/$(touch pwned)",
        "https://mirror.example/`id`",
        "file:///etc/passwd",
        "ftp://mirror.example/simple",
        "https://",
        "https://mirror.example/simple\n--extra-index-url https://evil.example",
        "https://mirror.example:99999/simple",
        "--extra-index-url=https://evil.example",
    ],
)
def test_hostile_index_urls_are_rejected(url: str) -> None:
    with pytest.raises(InstallError):
        inst.check_url(url)


@pytest.mark.parametrize(
    "url",
    [
        CPU_INDEX,
        "http://127.0.0.1:8080/whl/cu130",
        "https://user:token@artifactory.corp.example/api/pypi/pytorch/simple",
        "http://[::1]:3141/root/pytorch/+simple",
    ],
)
def test_real_index_urls_are_accepted(url: str) -> None:
    assert inst.check_url(url) == url


def test_plan_argv_is_revalidated() -> None:
    good = plan(("pip", "install", "torch==2.13.0", "--index-url", CPU_INDEX))
    args = inst.install_args(good)
    assert args.requirements == ("torch==2.13.0",)
    assert args.options == ("--index-url", CPU_INDEX)
    # The forms a planner may write: python -m pip, uv pip, --opt=value, -U.
    uv = plan(("uv", "pip", "install", "torch==2.13.0", f"--index-url={CPU_INDEX}", "-U"))
    assert inst.install_args(uv).options == ("--index-url", CPU_INDEX, "--upgrade")
    for bad in (
        ("pip", "install", "torch==2.13.0; sys_platform=='linux'"),
        ("pip", "install", "torch==2.13.0", "--extra-index-url", "https://evil.example/simple"),
        ("pip", "install", "torch @ https://evil.example/torch.whl"),
        ("pip", "install", "torch==2.13.0", "--index-url", "https://x.example/$(id)"),
        ("pip", "install", "torch==2.13.0", "--trusted-host", "evil.example"),
        ("pip", "install", "--pre"),
    ):
        with pytest.raises(InstallError):
            inst.install_args(plan(bad))


def test_jetson_forms_are_passed_on() -> None:
    """NVIDIA's Jetson wheels (issue 17): by URL, or from the folder with --no-index."""
    url = (
        "https://developer.download.nvidia.com/compute/redist/jp/v512/pytorch/"
        "torch-2.1.0a0+41361538.nv23.06-cp38-cp38-linux_aarch64.whl"
    )
    assert inst.install_args(plan(("pip", "install", url))).requirements == (url,)
    folder = "https://developer.download.nvidia.com/compute/redist/jp/v46/pytorch"
    args = inst.install_args(
        plan(
            ("pip", "install", "--no-index", "--find-links", folder, "--pre", "torch==1.10.0.*"),
            index_url=None,
        )
    )
    assert args.requirements == ("torch==1.10.0.*",)
    assert args.options == ("--no-index", "--find-links", folder, "--pre")
    for bad in (
        "https://evil.example/evil-1.0-py3-none-any.whl",
        "http://developer.download.nvidia.com/x/torch-2.1.0-cp38-cp38-linux_aarch64.whl",
        "https://x.example/torch-2.1.0-cp38-cp38-linux_aarch64.whl?$(id)",
        "https://x.example/torch-2.1.0-cp38-cp38-linux_aarch64.tar.gz",
    ):
        with pytest.raises(InstallError):
            inst.install_args(plan(("pip", "install", bad)))
    with pytest.raises(InstallError):
        inst.install_args(plan(("pip", "install", "--find-links", "/tmp/x", "torch==1.0")))


def test_argv_without_install_is_built_from_requirements() -> None:
    # uv-project / poetry plans carry a configuration, not an argv
    p = plan((), requirements=("torch==2.13.0", "torchvision==0.28.0"))
    args = inst.install_args(p)
    assert args.requirements == ("torch==2.13.0", "torchvision==0.28.0")
    assert args.index_url == CPU_INDEX


def test_build_argv_pip_uv_offline_reinstall() -> None:
    args = inst.install_args(plan(("pip", "install", "torch==2.13.0", "--index-url", CPU_INDEX)))
    py = "/srv/venv/bin/python"
    pip = inst.Target(py, "pip")
    assert inst.build_argv(args, pip) == [
        py, "-m", "pip", "install", "torch==2.13.0", "--index-url", CPU_INDEX
    ]  # fmt: skip
    uv = inst.Target(py, "uv", "/usr/local/bin/uv")
    assert inst.build_argv(args, uv, reinstall=True) == [
        "/usr/local/bin/uv", "pip", "install", "--python", py, "torch==2.13.0",
        "--index-url", CPU_INDEX, "--reinstall",
    ]  # fmt: skip
    # Offline: the index is never named, only the wheel folders.
    offline = inst.build_argv(args, pip, ["/media/wheels", "/media/more"], reinstall=True)
    assert offline == [
        py, "-m", "pip", "install", "torch==2.13.0", "--no-index",
        "--find-links", "/media/wheels", "--find-links", "/media/more", "--force-reinstall",
    ]  # fmt: skip


def test_cli_rejects_hostile_options_before_running_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "pwned"
    for extra in (
        ["--index-url", f"https://x.example/simple; touch {marker}"],
        ["--torch", f"2.13.0; touch {marker}"],
        ["--variant", "cpu && touch " + str(marker)],
        ["--with", f"torchvision,$(touch {marker})"],
    ):
        code = main(["install", "--dry-run", "--yes", *extra])
        err = capsys.readouterr().err
        assert code == 2, extra
        assert len(err.strip().splitlines()) == 1, err
        assert "setup-env install" in err
    assert not marker.exists()


def test_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["install", "--venv", str(tmp_path / "nope"), "--dry-run"]) == 2
    assert "no virtual environment" in capsys.readouterr().err
    assert main(["install", "--find-links", str(tmp_path / "nope"), "--dry-run"]) == 2
    assert "--find-links: no folder" in capsys.readouterr().err
    assert main(["install", "--python", sys.executable, "--venv", str(tmp_path)]) == 2
    capsys.readouterr()


# --- running the installer: argv, never a shell ---


def test_run_installer_passes_argv_without_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hostile = f"$(touch {marker}); `touch {marker}` | touch {marker} && echo x"
    chunks: list[bytes] = []
    result = inst.run_installer(
        [sys.executable, "-c", "import sys; print(sys.argv[1]); print('done', file=sys.stderr)",
         hostile],
        chunks.append,
        timeout=30,
    )  # fmt: skip
    assert result.returncode == 0
    streamed = b"".join(chunks).decode()
    assert hostile in streamed and "done" in streamed  # stdout and stderr, as they came
    assert result.output_tail == streamed
    assert not marker.exists()


def test_run_installer_deadline_kills_the_process_group(tmp_path: Path) -> None:
    code = (
        "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
        "'import time; time.sleep(60)']); print('started', flush=True); time.sleep(60)"
    )
    t0 = time.monotonic()
    result = inst.run_installer([sys.executable, "-c", code], None, timeout=2)
    assert result.timed_out and result.returncode is None
    assert "started" in result.output_tail
    assert time.monotonic() - t0 < 20


def test_run_installer_reports_a_missing_program() -> None:
    result = inst.run_installer(["/nonexistent/pip-of-nobody", "install", "torch"], None, 5)
    assert result.returncode is None and result.error


# --- the installer's own words ---


@pytest.mark.parametrize(
    ("fixture", "kind", "needle"),
    [
        ("pip-23.2.1-connection-refused.txt", "index-unreachable", "Connection refused"),
        ("pip-23.2.1-dns-failure.txt", "index-unreachable", "Name or service not known"),
        ("pip-23.2.1-no-index-missing-wheel.txt", "no-matching-wheel", "torch==2.13.0"),
        ("pip-23.2.1-no-space.txt", "no-space", "No space left on device"),
        ("uv-dns-failure.txt", "index-unreachable", "pypi.org/simple/mcp-server-sqlite"),
    ],
)
def test_classify_real_installer_output(fixture: str, kind: str, needle: str) -> None:
    failure = inst.classify_failure((FIXTURES / fixture).read_text(encoding="utf-8"))
    assert failure.kind == kind
    assert needle in failure.detail


def test_classify_other_failure_keeps_the_error_line() -> None:
    text = (FIXTURES / "pip-23.2.1-no-index-missing-wheel.txt").read_text()
    # A failure that is neither network nor a missing wheel keeps pip's own last ERROR line.
    failure = inst.classify_failure(text.replace("No matching distribution found", "Oops").replace(
        "Could not find a version that satisfies the requirement", "Broke on"))  # fmt: skip
    assert failure.kind == "other"
    assert failure.detail.startswith("ERROR: Oops")


# --- the index probe ---


class _Index(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # a PEP 503 index that has no torch
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_probe_index_closed_port_and_live_server() -> None:
    why = inst.probe_index(f"http://127.0.0.1:{closed_port()}/simple", timeout=3)
    assert why is not None and "refused" in why.lower()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        # Any HTTP answer means the network path works (a 404 is the planner's business).
        assert inst.probe_index(f"http://127.0.0.1:{server.server_address[1]}/simple") is None
    finally:
        server.shutdown()
        server.server_close()


def test_effective_index_precedence() -> None:
    args = inst.install_args(plan(("pip", "install", "torch==2.13.0")))
    assert inst.effective_index(args, "pip", {}) == (CPU_INDEX, True)  # the plan's index_url
    bare = inst.install_args(plan(("pip", "install", "torch==2.13.0"), index_url=None))
    assert inst.effective_index(bare, "pip", {}) == (inst.DEFAULT_PYPI, False)
    env = {"PIP_INDEX_URL": "http://mirror.local/simple", "UV_DEFAULT_INDEX": "http://uv.local"}
    assert inst.effective_index(bare, "pip", env) == ("http://mirror.local/simple", True)
    assert inst.effective_index(bare, "uv", env) == ("http://uv.local", True)


# --- installed vs planned, on this machine's real facts ---


@pytest.fixture(scope="module")
def facts():  # type: ignore[no-untyped-def]
    return detect(LiveHost())


@pytest.mark.torch
def test_installed_vs_planned_on_real_facts(facts) -> None:  # type: ignore[no-untyped-def]
    torch = facts.package("torch")
    if torch is None:
        pytest.fail("this test needs torch installed in the test interpreter (CI installs 2.13.0)")
    public = torch.version.split("+")[0]
    same = plan(("pip", "install", f"torch=={public}"), torch_version=public,
                variant=torch.variant, requirements=(f"torch=={public}",))  # fmt: skip
    args = inst.install_args(same)
    assert inst.requirements_met(args, same, facts)
    assert not inst.same_version_other_variant(same, facts)
    # Same release, another variant: pip would call torch==X "already satisfied"; we must not.
    other = plan(("pip", "install", f"torch=={public}"), torch_version=public,
                 variant=Variant.parse("cu130"), requirements=(f"torch=={public}",))  # fmt: skip
    assert not inst.requirements_met(inst.install_args(other), other, facts)
    assert inst.same_version_other_variant(other, facts)
    newer = plan(("pip", "install", "torch==99.0.0"), torch_version="99.0.0",
                 requirements=("torch==99.0.0",))  # fmt: skip
    assert not inst.requirements_met(inst.install_args(newer), newer, facts)


def test_offline_advice_names_the_real_wheel(facts) -> None:  # type: ignore[no-untyped-def]
    p = plan(("pip", "install", "torch==2.13.0", "--index-url", CPU_INDEX))
    args = inst.install_args(p)
    advice = inst.offline_advice(p, facts, args, ["setup-env", "install", "--find-links", "w"])
    if facts.python.tags and facts.python.tags[0].startswith("cp311-cp311-manylinux"):
        # The pattern matches the real wheel that was brought to this machine by hand.
        assert fnmatch.fnmatch(TORCH_WHEEL.name, advice.patterns[0]), advice.patterns
    assert advice.patterns[0].startswith("torch-2.13.0+cpu-")
    if facts.python.machine in ("x86_64", "aarch64"):
        assert advice.patterns[0].endswith(f"-manylinux*_{facts.python.machine}.whl")
        for other in ("torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_aarch64.whl",
                      "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"):  # fmt: skip
            if facts.python.machine not in other:
                assert not fnmatch.fnmatch(other, advice.patterns[0])
    download = list(advice.download)
    assert download[:4] == ["python3", "-m", "pip", "download"]
    assert "torch==2.13.0" in download
    assert download[download.index("--index-url") + 1] == CPU_INDEX
    plats = [download[i + 1] for i, a in enumerate(download) if a == "--platform"]
    accepted = {t.split("-", 2)[2] for t in facts.python.tags}
    assert plats and set(plats) <= accepted
    assert advice.then == "setup-env install --find-links w"


def test_space_needed_grows_with_the_build() -> None:
    v = Variant.parse
    assert inst.space_needed(CPU) < inst.space_needed(v("cu130")) < inst.space_needed(v("rocm7.2"))
    assert inst.space_needed(v("cu132")) == inst.space_needed(v("cu126"))


def test_interpreter_record_of_another_python() -> None:
    other = Path("/root/.pyenv/versions/3.9.18/bin/python3.9")
    if not other.exists():
        pytest.fail("the Python 3.9 this test uses is missing")
    record = inst.interpreter_record(str(other))
    assert record["version"].startswith("3.9.")
    assert record["tags"][0].startswith("cp39-cp39-")
    # Its own import path, without the folders lent to it to describe itself.
    here = str(Path(inst.__file__).parent.parent)
    assert here not in record["sys_path"]
    assert all("3.9" in p for p in record["sys_path"] if "pyenv" in p)
    facts = detect(inst.TargetHost(record))
    assert facts.python.version == record["version"]


def test_choose_installer() -> None:
    none = lambda name: None  # noqa: E731
    uv = lambda name: "/opt/uv/bin/uv" if name == "uv" else None  # noqa: E731
    assert inst.choose_installer("py", None, none, lambda p: True).installer == "pip"
    assert inst.choose_installer("py", None, uv, lambda p: False).installer == "uv"
    with pytest.raises(InstallError, match="ensurepip"):
        inst.choose_installer("py", None, none, lambda p: False)
    with pytest.raises(InstallError, match="uv is not on PATH"):
        inst.choose_installer("py", "uv", none, lambda p: True)


# --- the command, end to end ---


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with pip and nothing else (shared by the quick end-to-end tests)."""
    root = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=120)
    return root


def _json(out: str) -> dict[str, object]:
    doc = json.loads(out)
    assert doc["schema"] == "setup-env/install"
    return doc["install"]  # type: ignore[no-any-return]


def test_dry_run_prints_the_argv_and_changes_nothing(
    venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(p.name for p in (venv / "lib").rglob("*"))
    code = main(["install", "--venv", str(venv), "--variant", "cpu", "--dry-run",
                 "--skip-index-check", "--json"])  # fmt: skip
    captured = capsys.readouterr()
    doc = _json(captured.out)
    assert code == 0, captured.err
    assert doc["action"] == "dry-run"
    argv = doc["argv"]
    assert isinstance(argv, list)
    assert argv[:4] == [str(venv / "bin" / "python"), "-m", "pip", "install"] or argv[:4] == [
        str(venv / "bin" / "python3"), "-m", "pip", "install"]  # fmt: skip
    planned = doc["plan"]
    assert isinstance(planned, dict)
    for req in planned["requirements"]:
        assert req in argv
    assert doc["command"] == shlex.join(argv)
    assert doc["installed_before"] is None
    assert sorted(p.name for p in (venv / "lib").rglob("*")) == before
    # The human form says the same.
    assert main(["install", "--venv", str(venv), "--variant", "cpu", "--dry-run",
                 "--skip-index-check"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"would run: {shlex.join(argv)}" in out
    assert "dry run: nothing was installed" in out


def test_unreachable_index_says_so_and_offers_the_offline_route(
    venv: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror = f"http://127.0.0.1:{closed_port()}/whl"
    t0 = time.monotonic()
    code = main(["install", "--venv", str(venv), "--variant", "cpu", "--index-url", mirror,
                 "--yes", "--json"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 3, captured.err
    assert time.monotonic() - t0 < 30  # probed with a short timeout, pip never started
    # Under --json the narrative goes to stderr too; the error is one line of its own.
    err_lines = [ln for ln in captured.err.splitlines() if ln.startswith("setup-env install:")]
    assert len(err_lines) == 1 and "cannot be reached" in err_lines[0]
    assert "127.0.0.1" in err_lines[0]
    doc = _json(captured.out)
    assert doc["action"] == "index-unreachable"
    offline = doc["offline"]
    assert isinstance(offline, dict)
    assert offline["then"].endswith("--find-links torch-wheels")
    assert "--venv" in offline["then"] and "--variant cpu" in offline["then"]
    assert any(p.startswith("torch-") and p.endswith(".whl") for p in offline["patterns"])
    assert "download" in offline["download"]
    # Human output: the one error line, then the route.
    code = main(["install", "--venv", str(venv), "--variant", "cpu", "--index-url", mirror,
                 "--yes"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 3
    assert len(captured.err.strip().splitlines()) == 1, captured.err
    assert "offline route" in captured.out and "pip download" in captured.out
    assert "--find-links torch-wheels" in captured.out


def test_no_terminal_and_no_yes_refuses(venv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pytest's stdin is not a terminal: without --yes there is nobody to ask.
    code = main(["install", "--venv", str(venv), "--variant", "cpu", "--skip-index-check"])
    err = capsys.readouterr().err
    assert code == 2
    assert "--yes" in err and len(err.strip().splitlines()) == 1


@pytest.mark.torch
def test_refuses_to_replace_a_working_torch(capsys: pytest.CaptureFixture[str]) -> None:
    # The test interpreter has a working torch (CI installs 2.13.0+cpu). Ask for a different
    # build and the command must refuse, say what it would change, and install nothing.
    installed = detect(LiveHost()).package("torch")
    if installed is None:
        pytest.fail("this test needs torch installed in the test interpreter")
    code = main(["install", "--variant", "cpu", "--yes", "--json", "--skip-index-check"])
    captured = capsys.readouterr()
    doc = _json(captured.out)
    planned = doc["plan"]
    assert isinstance(planned, dict)
    assert planned["torch_version"] != installed.version.split("+")[0], "plan equals installed"
    assert code == 1, captured.err
    assert doc["action"] == "refused"
    assert doc["change"] == (
        f"installed torch {installed.version} -> planned torch "
        f"{planned['torch_version']}+{planned['variant']}"
    )
    assert "--force" in captured.err
    assert detect(LiveHost()).package("torch") == installed


def _wheelhouse(tmp: Path) -> Path:
    """torch from /opt/wheels plus its dependencies, fetched the way the offline advice says: by
    `pip download` with this machine's own pip configuration."""
    if not TORCH_WHEEL.exists():
        pytest.fail(f"{TORCH_WHEEL} is missing: this test installs that real wheel")
    house = tmp / "wheels"
    house.mkdir()
    (house / TORCH_WHEEL.name).symlink_to(TORCH_WHEEL)
    with zipfile.ZipFile(TORCH_WHEEL) as zf:
        meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        lines = zf.read(meta).decode().splitlines()
    deps = [ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("Requires-Dist:")]
    deps = [d for d in deps if "extra ==" not in d] + ["numpy"]  # numpy: verify's round trip
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--dest", str(house),
         *deps],
        check=True, timeout=600, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return house


@pytest.mark.slow
def test_offline_install_of_the_real_wheel_then_verify(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    house = _wheelhouse(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    # torch does not depend on NumPy, yet verify's round trip needs it: an environment that
    # already has NumPy (as most do) is the case under test.
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-index", "--find-links",
         str(house), "numpy"],
        check=True, timeout=300, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    code = main(["install", "--venv", str(venv), "--torch", "2.13.0", "--variant", "cpu",
                 "--find-links", str(house), "--yes", "--json"])  # fmt: skip
    captured = capfd.readouterr()
    doc = _json(captured.out)
    assert code == 0, captured.err[-3000:]
    assert doc["action"] == "installed"
    argv = doc["argv"]
    assert isinstance(argv, list)
    assert "--no-index" in argv and argv[argv.index("--find-links") + 1] == str(house)
    assert "--index-url" not in argv
    assert doc["installed_after"] == "2.13.0+cpu"
    assert "Installing collected packages" in captured.err  # pip's progress, streamed to stderr
    report = doc["verify"]
    assert isinstance(report, dict)
    assert report["ok"] is True and report["torch_version"] == "2.13.0+cpu"
    assert report["python"].startswith(str(venv))
    # The second time there is nothing to install (and no --force needed).
    code = main(["install", "--venv", str(venv), "--torch", "2.13.0", "--variant", "cpu",
                 "--find-links", str(house), "--yes", "--json", "--no-verify"])  # fmt: skip
    doc = _json(capfd.readouterr().out)
    assert code == 0
    assert doc["action"] == "already-installed"
