"""`setup-env fleet slurm`: the sbatch script it writes runs for real on a one-node SLURM cluster
that this test starts (Debian's slurm-wlm and munge; `.ci/run` installs them): a job that passes,
one whose all-reduce loses a rank, one stopped at a one-minute time limit (each counted in the
report the job leaves). What one node can't show (a node that never reports, three nodes, a
TERM or a SIGKILL at a chosen moment) runs the same script under real bash with srun and
scontrol replaced (below); the Kubernetes pod's script runs under sh the same way.

The cluster lives in a temporary folder: its own munge key and socket, slurm.conf with free
ports, state, spool and logs, so it touches nothing of the machine's own configuration; the test
stops the daemons it started by their process ids. Needs root (slurmd runs jobs as their user).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import require_in_ci, require_tools

from setup_env.cli import main

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo", "scontrol")


def _need_slurm() -> None:
    require_tools(*DAEMONS, why="the Debian packages slurm-wlm and munge")
    require_in_ci(os.geteuid() == 0, "the one-node SLURM cluster runs its daemons as root")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _pid(path: Path, timeout: float = 15) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return int(path.read_text().strip())
        except (OSError, ValueError):
            time.sleep(0.1)
    raise AssertionError(f"no pid file {path}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    _need_slurm()
    root = tmp_path_factory.mktemp("slurm")
    root.chmod(0o755)
    host = socket.gethostname().split(".")[0]
    munge = root / "munge"
    munge.mkdir(mode=0o700)
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    for d in ("state", "spool", "log"):
        (root / d).mkdir()
    sock = munge / "munge.sock"
    conf = root / "slurm.conf"
    conf.write_text(
        "\n".join(
            [
                "ClusterName=setupenvtest",
                f"SlurmctldHost={host}",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                "AuthType=auth/munge",
                f"AuthInfo=socket={sock}",
                "CredType=cred/munge",
                "SlurmUser=root",
                "SlurmdUser=root",
                f"StateSaveLocation={root / 'state'}",
                f"SlurmdSpoolDir={root / 'spool'}",
                f"SlurmctldPidFile={root / 'slurmctld.pid'}",
                f"SlurmdPidFile={root / 'slurmd.pid'}",
                f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
                f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
                # one node, no cgroups (22.05 has no CgroupPlugin=disabled; without a
                # cgroup.conf slurmd starts): see the SOURCE of this recipe in the module doc
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SelectType=select/cons_tres",
                "SwitchType=switch/none",
                "AccountingStorageType=accounting_storage/none",
                "JobAcctGatherType=jobacct_gather/none",
                "ReturnToService=2",
                "MpiDefault=none",
                f"NodeName={host} CPUs={os.cpu_count() or 1} State=UNKNOWN",
                f"PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP",
                "",
            ]
        )
    )
    env = {**os.environ, "SLURM_CONF": str(conf)}
    pids: list[int] = []
    try:
        subprocess.run(
            ["munged", "--force", f"--key-file={key}", f"--socket={sock}",
             f"--pid-file={munge / 'munged.pid'}", f"--log-file={munge / 'munged.log'}",
             f"--seed-file={munge / 'seed'}"],
            check=True, timeout=30,
        )  # fmt: skip
        pids.append(_pid(munge / "munged.pid"))
        subprocess.run(["slurmctld", "-f", str(conf)], check=True, timeout=30, env=env)
        pids.append(_pid(root / "slurmctld.pid"))
        subprocess.run(["slurmd", "-f", str(conf)], check=True, timeout=30, env=env)
        pids.append(_pid(root / "slurmd.pid"))
        deadline = time.monotonic() + 60
        state = ""
        while time.monotonic() < deadline:
            state = subprocess.run(
                ["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, timeout=30, env=env
            ).stdout.strip()
            if state == "idle":
                break
            time.sleep(0.5)
        logs = (root / "log" / "slurmd.log").read_text(errors="replace")[-2000:]
        assert state == "idle", f"the node did not come up ({state!r}):\n{logs}"
        yield {"conf": str(conf), "root": str(root), "host": host}
    finally:
        for pid in reversed(pids):  # only the daemons this test started, by their ids
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)


def submit(
    cluster: dict[str, str], tmp_path: Path, exe: str, *flags: str, timeout: float = 540
) -> tuple[int, Path, str]:
    """Write the script with ``fleet slurm`` (``exe`` the setup-env on the node), submit it and
    wait for the job: its exit code, its output folder and its log."""
    script = tmp_path / "fleet.sbatch"
    out_dir = f"{tmp_path}/out-$SLURM_JOB_ID"
    argv = ["--nodes", "1", "--partition", "test", "--setup-env", exe, "--out-dir", out_dir]
    assert main(["fleet", "slurm", *argv, *flags, "-o", str(script)]) == 0
    env = {**os.environ, "SLURM_CONF": cluster["conf"]}
    proc = subprocess.run(
        ["sbatch", "--wait", "--parsable", str(script)],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path,
    )  # fmt: skip
    job = proc.stdout.strip().split(";")[0]
    log = next(tmp_path.glob("setup-env-fleet-*.out"), None)
    log_text = log.read_text() if log else "(no job log)"
    return proc.returncode, tmp_path / f"out-{job}", f"{proc.stderr}\n{log_text}"


@pytest.mark.slow
@pytest.mark.torch
def test_plain_sbatch_as_the_readme_says_with_the_node_count_overridden(
    cluster: dict[str, str], tmp_path: Path
) -> None:
    """The README's form: `fleet slurm` with no --setup-env, submitted with plain sbatch; a
    site that exports nothing to jobs (SBATCH_EXPORT=NONE, a PATH without the venv) and a
    node count given at submission (-N 1 over the script's 2). The report reads the results
    folder as the job's last line names it."""
    pytest.importorskip("torch")
    script = tmp_path / "fleet.sbatch"
    argv = ["fleet", "slurm", "--nodes", "2", "--partition", "test", "--no-verify"]
    argv += ["--out-dir", f"{tmp_path}/out-$SLURM_JOB_ID", "-o", str(script)]
    assert main(argv) == 0
    text = script.read_text()
    assert f"SETUP_ENV=({setup_env_exe()})\n" in text and "#SBATCH --nodes=2\n" in text
    env = {
        "SLURM_CONF": cluster["conf"],
        "SBATCH_EXPORT": "NONE",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(
        ["sbatch", "-N", "1", "--wait", "--parsable", str(script)],
        capture_output=True, text=True, timeout=540, env=env, cwd=tmp_path,
    )  # fmt: skip
    job = proc.stdout.strip().split(";")[0]
    log = tmp_path / f"setup-env-fleet-{job}.out"
    log_text = log.read_text() if log.exists() else f"(no job log) {proc.stderr}"
    assert proc.returncode == 0, log_text
    out = tmp_path / f"out-{job}"
    assert f"results in {out} (again: setup-env fleet report {out})" in log_text
    record = json.loads((out / "fleet-job.json").read_text())
    assert record["expected_nodes"] == 1 and record["nodes"] == [cluster["host"]]
    code = main(["fleet", "report", "--json", "-o", str(tmp_path / "again.json"), str(out)])
    rep = json.loads((tmp_path / "again.json").read_text())["fleet"]
    assert code == 0 and rep["ok"] is True and rep["unreadable"] == [], rep
    assert [n["name"] for n in rep["nodes"]] == [cluster["host"]]
    assert [r["status"] for r in rep["allreduce"]] == ["pass"]


def test_a_real_job_without_setup_env_on_its_node_says_so(
    cluster: dict[str, str], tmp_path: Path
) -> None:
    """--setup-env naming a venv the node does not have: the job stops at once, exit 3, and
    its log says what is missing where."""
    missing = tmp_path / "no-such-venv" / "bin" / "setup-env"
    script = tmp_path / "fleet.sbatch"
    argv = ["fleet", "slurm", "--nodes", "1", "--partition", "test", "--setup-env", str(missing)]
    assert main([*argv, "--out-dir", f"{tmp_path}/out-$SLURM_JOB_ID", "-o", str(script)]) == 0
    env = {**os.environ, "SLURM_CONF": cluster["conf"]}
    proc = subprocess.run(
        ["sbatch", "--wait", "--parsable", str(script)],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    job = proc.stdout.strip().split(";")[0]
    log_text = (tmp_path / f"setup-env-fleet-{job}.out").read_text()
    assert proc.returncode == 3, log_text
    assert f"setup-env fleet: {missing} is not on {cluster['host']}" in log_text


def setup_env_exe() -> Path:
    exe = Path(sys.executable).with_name("setup-env")
    assert exe.exists(), exe
    return exe


@pytest.mark.slow
@pytest.mark.torch
def test_sbatch_script_runs_on_a_real_one_node_cluster(
    cluster: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("torch")
    code, out, log_text = submit(cluster, tmp_path, str(setup_env_exe()))
    assert code == 0, log_text
    job = out.name.split("-", 1)[1]
    host = cluster["host"]
    # 1. the node's own check document, written through srun.
    doc = json.loads((out / "nodes" / f"{host}.json").read_text())
    assert doc["schema"] == "setup-env/check"
    assert doc["check"]["node"]["hostname"] == host
    assert doc["check"]["node"]["slurm_job_id"] == job
    assert doc["check"]["verdict"]["state"] == "ready"
    # 2. the all-reduce through torchrun, rendezvous on the first node.
    allreduce = json.loads((out / "allreduce" / f"{host}.json").read_text())["verify"]
    dist = [c for c in allreduce["checks"] if c["name"] == "distributed"]
    assert [c["status"] for c in dist] == ["pass"], dist
    assert dist[0]["evidence"]["torchrun_exit"] == 0
    # 3. the report over the nodes, as JSON and as a page.
    rep = json.loads((out / "report.json").read_text())["fleet"]
    assert rep["ok"] is True and [n["name"] for n in rep["nodes"]] == [host]
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert "FLEET OK: 1 node" in log_text
    # 4. every step counted: the record of the job, the all-reduce in the report.
    record = json.loads((out / "fleet-job.json").read_text())
    assert record["expected_nodes"] == 1 and record["nodes"] == [host]
    assert record["job_id"] == job and record["ended"] == "finished"
    assert [(s["name"], s["state"], s["rc"]) for s in record["steps"]] == [
        ("check", "done", 0),
        ("allreduce", "done", 0),
    ]
    assert rep["allreduce"] == [{"node": host, "status": "pass", "message": dist[0]["message"]}]
    assert rep["missing_count"] == 0 and rep["problems"] == []


def wrapper(tmp_path: Path, verify: str) -> str:
    """A setup-env for the nodes that runs the real one, but ``verify`` as ``verify`` says
    (bash): how a test breaks the all-reduce step and nothing else."""
    exe = setup_env_exe()
    path = tmp_path / "setup-env-on-the-node"
    path.write_text(f'#!/bin/bash\nif [ "$1" = verify ]; then\n{verify}\nfi\nexec {exe} "$@"\n')
    path.chmod(0o755)
    return str(path)


@pytest.mark.slow
@pytest.mark.torch
def test_a_real_job_whose_allreduce_loses_a_rank_reports_not_ok(
    cluster: dict[str, str], tmp_path: Path
) -> None:
    """The real all-reduce (torchrun, gloo, 2 ranks on the node) with rank 1 dead as it starts
    (a sitecustomize on the ranks' path exits it): the job exits 1, and its report says so in
    every format the job writes."""
    pytest.importorskip("torch")
    dead = tmp_path / "dead-rank"
    dead.mkdir()
    (dead / "sitecustomize.py").write_text(
        'import os\nif os.environ.get("RANK") == "1":\n    os._exit(7)\n'
    )
    verify = f'export PYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{dead}"'
    code, out, log_text = submit(cluster, tmp_path, wrapper(tmp_path, verify), "--no-verify")
    assert code == 1, log_text
    host = cluster["host"]
    rep = json.loads((out / "report.json").read_text())["fleet"]
    assert rep["ok"] is False
    assert [(r["node"], r["status"]) for r in rep["allreduce"]] == [(host, "fail")]
    assert rep["allreduce"][0]["message"].startswith("torchrun (gloo, 2 per node) failed")
    assert "all-reduce: failed (exit 1)" in rep["problems"]
    page = (out / "report.html").read_text()
    assert '<p class="bad"><b>FLEET NEEDS ATTENTION' in page and "FLEET OK" not in page
    assert "FLEET NEEDS ATTENTION" in log_text and "FLEET OK" not in log_text
    # Read again from the folder the job's last line names: still not OK.
    assert f"results in {out} " in log_text
    assert main(["fleet", "report", "--json", "-o", str(tmp_path / "again.json"), str(out)]) == 1
    again = json.loads((tmp_path / "again.json").read_text())["fleet"]
    assert again["ok"] is False and again["allreduce"] == rep["allreduce"]


@pytest.mark.slow
@pytest.mark.torch
def test_a_real_job_stopped_at_its_time_limit_leaves_a_report(
    cluster: dict[str, str], tmp_path: Path
) -> None:
    """A one-minute job whose all-reduce hangs: SLURM's USR1 (--signal) reaches the script
    before the limit; it stops the step and writes the report, which names the step that did
    not finish."""
    pytest.importorskip("torch")
    exe = wrapper(tmp_path, "exec sleep 600  # an all-reduce that never returns")
    start = time.monotonic()
    code, out, log_text = submit(cluster, tmp_path, exe, "--no-verify", "--time", "1")
    took = time.monotonic() - start
    assert code == 1, log_text
    assert took < 60 + 30, f"{took:.0f}s: the script should end before SLURM kills it"
    record = json.loads((out / "fleet-job.json").read_text())
    assert record["ended"] == "time-limit", record
    states = {s["name"]: s["state"] for s in record["steps"]}
    assert "timed-out" in states.values(), states
    rep = json.loads((out / "report.json").read_text())["fleet"]
    assert rep["ok"] is False and "the job reached its time limit" in rep["problems"]
    assert any("stopped at the job's time limit" in p for p in rep["problems"])
    assert "FLEET NEEDS ATTENTION" in (out / "report.html").read_text()
    assert "setup-env fleet: stopped (time-limit)" in log_text


@pytest.mark.parametrize(
    "flags",
    [
        ("--gpus-per-node", "8", "--setup-env", "'/opt/my env/bin/setup-env'"),
        (
            "--module",
            "tools/setup-env/1.2",
            "--exclusive",
            "--out-dir",
            "~/fleet/$USER-$SLURM_JOB_ID",
        ),
        (
            "--gpus-per-node",
            "0",
            "--cpus-per-node",
            "12",
            "--out-dir",
            "${SCRATCH}/f",
            "--time",
            "0",
        ),
    ],
)
def test_script_is_shellcheck_clean(tmp_path: Path, flags: tuple[str, ...]) -> None:
    (shellcheck,) = require_tools("shellcheck", why="the Debian package shellcheck")
    script = tmp_path / "fleet.sbatch"
    argv = ["fleet", "slurm", "--nodes", "4", "--partition", "gpu", *flags]
    assert main([*argv, "-o", str(script)]) == 0
    proc = subprocess.run(
        [shellcheck, "--shell=bash", "--severity=style", str(script)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--partition", "gpu;rm -rf /"),
        ("--time", "1h"),
        ("--out-dir", "out/$(reboot)"),
        ("--out-dir", "../../etc"),
        ("--out-dir", "$PATH/x"),
        ("--out-dir", "~root/x"),
        ("--out-dir", "${SLURM_JOB_ID/x"),
        ("--out-dir", "${USER}x}"),
        ("--module", "a b"),
        ("--cpus-per-node", "0"),
        ("--instance-type", "no-such.type"),
        ("--setup-env", "'unclosed"),
    ],
)
def test_bad_script_options_are_usage_errors(
    flag: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fleet", "slurm", "--nodes", "2", flag, value]) == 2
    assert capsys.readouterr().out == ""


def test_values_land_in_the_script_quoted(capsys: pytest.CaptureFixture[str]) -> None:
    # --setup-env is a command line (split like a shell would, then each word quoted).
    for command, expected in (
        ("'/opt/my env/bin/setup-env'", "SETUP_ENV=('/opt/my env/bin/setup-env')"),
        ("python3 -m setup_env", "SETUP_ENV=(python3 -m setup_env)"),
        ("setup-env;reboot", "SETUP_ENV=('setup-env;reboot')"),
    ):
        assert main(["fleet", "slurm", "--nodes", "3", "--setup-env", command]) == 0
        text = capsys.readouterr().out
        assert expected + "\n" in text
        assert "#SBATCH --nodes=3" in text and "NODES=${SLURM_JOB_NUM_NODES:-3}" in text
        assert '--nnodes "$NODES"' in text


# --- the script's logic on three nodes, under a stand-in srun ----------------------------------
#
# The one-node cluster above can't lose a node. Here the script fleet slurm writes runs under
# real bash with `srun` and `scontrol` replaced by small scripts on PATH: srun runs the command
# once per node of $STUB_NODES (in parallel, its output to the file its --output names, %N the
# node), skips the nodes in $STUB_DEAD (no output, exit 1: what srun does when a node fails),
# and passes a TERM on to the commands it runs. The setup-env it runs prints each node's check
# and all-reduce documents from $STUB_DOCS, sleeps for an all-reduce that hangs, and runs the
# real `fleet report`.

STUB_SRUN = r"""#!/bin/bash
out="" err="" opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --output=*) out=${1#--output=} ;;
    --error=*) err=${1#--error=} ;;
    --*) opts+=("$1") ;;
    *) break ;;
  esac
  shift
done
args="${opts[*]} $*"
echo "${args//$'\n'/ }" >>"$STUB_ARGS"
rc=0
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; exit 143' TERM
for node in $STUB_NODES; do
  case " ${STUB_DEAD:-} " in *" $node "*) rc=1; continue ;; esac
  argv=("$@")
  case " ${STUB_MISSING:-} " in  # setup-env is not on this node: its path leads nowhere there
    *" $node "*) argv=("${argv[@]/#$STUB_EXE/$STUB_EXE.not-on-$node}") ;;
  esac
  SLURMD_NODENAME=$node STUB_NODE=$node "${argv[@]}" >"${out//%N/$node}" 2>"${err//%N/$node}" &
  pids+=($!)
done
for pid in "${pids[@]}"; do
  wait "$pid"
  r=$?
  if [ "$r" -gt "$rc" ]; then rc=$r; fi
done
exit "$rc"
"""

STUB_SCONTROL = """#!/bin/bash
[ "$1 $2" = "show hostnames" ] && printf '%s\\n' $STUB_NODES
"""

STUB_SETUP_ENV = """#!/bin/bash
case "$1" in
  check) exec cat "$STUB_DOCS/check-$STUB_NODE.json" ;;
  verify)
    if [ -n "${STUB_HANG:-}" ]; then exec sleep 60; fi
    cat "$STUB_DOCS/verify-$STUB_NODE.json"
    exit "$(cat "$STUB_DOCS/verify-$STUB_NODE.rc")" ;;
  fleet) exec "$STUB_PYTHON" -m setup_env "$@" ;;
esac
exit 2
"""

NODES = ("gpu-a", "gpu-b", "gpu-c")


@pytest.fixture(scope="module")
def ready_check() -> dict[str, Any]:
    """A real check document (the captured H100 host replayed), verdict edited to ready: only
    the job's steps may make the fleet not OK."""
    root = Path(__file__).parent / "fixtures" / "hosts" / "ubuntu-h100-590"
    proc = subprocess.run(
        [sys.executable, "-m", "setup_env", "check", "--json", "--root", str(root)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    doc: dict[str, Any] = json.loads(proc.stdout)
    doc["check"]["verdict"]["state"] = "ready"  # the edit
    return doc


def allreduce_result(status: str) -> dict[str, Any]:
    """The fields of verify's document the report reads (the real one: test_fleet_job.py)."""
    message = "2 ranks (gloo): all-reduce exact" if status == "pass" else "rank 1 died"
    checks = [{"name": "distributed", "status": status, "message": message}]
    return {"schema": "setup-env/verify", "schema_version": 1, "verify": {"checks": checks}}


class StubRun:
    def __init__(
        self,
        tmp_path: Path,
        ready: dict[str, Any],
        *flags: str,
        out_dir: str | None = None,
        out: Path | None = None,
        **env: str,
    ) -> None:
        require_tools("bash", why="the sbatch script's shell")
        self.tmp = tmp_path
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for name, text in (("srun", STUB_SRUN), ("scontrol", STUB_SCONTROL)):
            (bin_dir / name).write_text(text)
            (bin_dir / name).chmod(0o755)
        exe = tmp_path / "setup-env"
        exe.write_text(STUB_SETUP_ENV)
        exe.chmod(0o755)
        docs = tmp_path / "docs"
        docs.mkdir()
        for node in NODES:
            doc = copy.deepcopy(ready)
            doc["check"]["node"] = {"hostname": node}
            (docs / f"check-{node}.json").write_text(json.dumps(doc))
            status = "fail" if node in env.get("STUB_FAIL", "").split() else "pass"
            (docs / f"verify-{node}.json").write_text(json.dumps(allreduce_result(status)))
            (docs / f"verify-{node}.rc").write_text("0" if status == "pass" else "1")
        self.script = tmp_path / "fleet.sbatch"
        argv = ["fleet", "slurm", "--nodes", "3"]
        if "--module" not in flags:
            argv += ["--setup-env", str(exe)]
        argv += ["--out-dir", out_dir or f"{tmp_path}/out-$SLURM_JOB_ID", "-o", str(self.script)]
        assert main([*argv, *flags]) == 0
        root = str(Path(__file__).resolve().parent.parent)
        self.env = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "PYTHONPATH": root,
            "SLURM_JOB_ID": "77",
            "SLURM_JOB_NODELIST": "gpu-[a-c]",
            "STUB_NODES": " ".join(NODES),
            "STUB_DOCS": str(docs),
            "STUB_PYTHON": sys.executable,
            "STUB_EXE": str(exe),
            "STUB_ARGS": str(tmp_path / "srun-args"),
            **env,
        }
        self.out = out or tmp_path / "out-77"

    def start(self) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["bash", str(self.script)], env=self.env, cwd=self.tmp, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip

    def run(self) -> tuple[int, str]:
        proc = self.start()
        try:
            log, _ = proc.communicate(timeout=120)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        return proc.returncode, log

    def record(self) -> dict[str, Any]:
        try:
            doc: dict[str, Any] = json.loads((self.out / "fleet-job.json").read_text())
        except (OSError, ValueError):
            return {}
        return doc

    def report(self, fmt: str) -> tuple[int, str]:
        flags = ["--json"] if fmt == "json" else ["--format", fmt]
        # The results folder as the job's last line names it.
        proc = subprocess.run(
            [sys.executable, "-m", "setup_env", "fleet", "report", *flags, str(self.out)],
            capture_output=True, text=True, timeout=60, env=self.env, check=False,
        )  # fmt: skip
        return proc.returncode, proc.stdout


def every_format_not_ok(run: StubRun) -> dict[str, Any]:
    """What the job wrote says not OK (its page and JSON), and so does every format read back."""
    page = (run.out / "report.html").read_text()
    assert "FLEET NEEDS ATTENTION" in page and "FLEET OK" not in page
    written = json.loads((run.out / "report.json").read_text())["fleet"]
    assert written["ok"] is False
    for fmt in ("text", "json", "markdown", "html"):
        code, out = run.report(fmt)
        assert code == 1 and "FLEET NEEDS ATTENTION" in out and "FLEET OK" not in out, fmt
    body: dict[str, Any] = written
    return body


def test_stub_fleet_that_passes_every_step_is_ok(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    run = StubRun(tmp_path, ready_check)
    code, log = run.run()
    assert code == 0, log
    assert "FLEET OK: 3 nodes" in log and "all-reduce passed" in log
    rep = json.loads((run.out / "report.json").read_text())["fleet"]
    assert rep["ok"] is True and [r["status"] for r in rep["allreduce"]] == ["pass"] * 3
    assert run.record()["nodes"] == list(NODES) and run.record()["ended"] == "finished"


def test_stub_fleet_with_one_failed_allreduce_is_not_ok(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    run = StubRun(tmp_path, ready_check, STUB_FAIL="gpu-b")
    code, log = run.run()
    assert code == 1, log
    rep = every_format_not_ok(run)
    assert [(r["node"], r["status"]) for r in rep["allreduce"]] == [
        ("gpu-a", "pass"),
        ("gpu-b", "fail"),
        ("gpu-c", "pass"),
    ]
    steps = [(s["name"], s["state"], s["rc"]) for s in run.record()["steps"]]
    assert steps == [("check", "done", 0), ("allreduce", "failed", 1)]


def test_stub_fleet_with_a_missing_node_is_not_ok(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    run = StubRun(tmp_path, ready_check, STUB_DEAD="gpu-c")
    code, log = run.run()
    assert code == 1, log
    rep = every_format_not_ok(run)
    assert rep["missing_nodes"] == ["gpu-c"] and rep["expected_nodes"] == 3
    assert [n["name"] for n in rep["nodes"]] == ["gpu-a", "gpu-b"]
    assert "no check document from gpu-c" in log


def test_stub_node_count_gpus_and_cpus_come_from_the_allocation(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    """Written for 3 nodes, submitted as `sbatch -N 2 --gres=gpu:8` on nodes with 16 and 32
    CPUs: two nodes are expected, and each step asks for 8 GPUs and the 16 CPUs both have."""
    run = StubRun(
        tmp_path, ready_check, "--gpus-per-node", "0",
        STUB_NODES="gpu-a gpu-b", SLURM_JOB_NUM_NODES="2", SLURM_GPUS_ON_NODE="8",
        SLURM_JOB_CPUS_PER_NODE="32,16",
    )  # fmt: skip
    script = run.script.read_text()
    assert "#SBATCH --nodes=3" in script and "#SBATCH --gpus-per-node" not in script
    code, log = run.run()
    assert code == 0, log
    record = run.record()
    assert record["expected_nodes"] == 2 and record["nodes"] == ["gpu-a", "gpu-b"]
    steps = [ln for ln in (tmp_path / "srun-args").read_text().splitlines()]
    assert len(steps) == 2, steps
    for line in steps:
        assert line.startswith(
            "--nodes=2 --ntasks=2 --ntasks-per-node=1 --cpus-per-task=16 --mem=0 --export=ALL "
            "--gres=gpu:8 "
        ), line
    assert " verify --json --only distributed --nnodes 2 " in steps[1]
    rep = json.loads((run.out / "report.json").read_text())["fleet"]
    assert rep["ok"] is True and rep["expected_nodes"] == 2


def test_stub_cpus_per_task_of_the_job_wins(tmp_path: Path, ready_check: dict[str, Any]) -> None:
    run = StubRun(tmp_path, ready_check, SLURM_CPUS_PER_TASK="6", SLURM_JOB_CPUS_PER_NODE="12(x3)")
    assert "#SBATCH --cpus-per-task=2\n" in run.script.read_text()  # no GPU: 2 CPUs
    code, log = run.run()
    assert code == 0, log
    for line in (tmp_path / "srun-args").read_text().splitlines():
        assert " --cpus-per-task=6 " in line and "--gres" not in line, line


def test_stub_node_without_setup_env_is_named_in_the_report(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    run = StubRun(tmp_path, ready_check, STUB_MISSING="gpu-b")
    code, log = run.run()
    assert code == 1, log
    assert "setup-env.not-on-gpu-b is not on gpu-b" in (run.out / "nodes" / "gpu-b.err").read_text()
    rep = every_format_not_ok(run)
    assert rep["missing_nodes"] == ["gpu-b"]
    # Both steps' documents from gpu-b say why, by name.
    bad = {b["path"][len(str(run.out)) + 1 :]: b["reason"] for b in rep["unreadable"]}
    assert sorted(bad) == ["allreduce/gpu-b.json", "nodes/gpu-b.json"]
    for reason in bad.values():
        assert reason.startswith("an error, not a result: gpu-b: ") and "is not there" in reason
    assert "2 of 3 nodes left a check document" in log


def test_stub_setup_env_missing_where_the_job_starts_stops_it_at_once(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    run = StubRun(tmp_path, ready_check)
    missing = tmp_path / "no-venv" / "bin" / "setup-env"
    text = run.script.read_text().replace(
        f"SETUP_ENV=({run.env['STUB_EXE']})", f"SETUP_ENV=({missing})"
    )
    run.script.write_text(text)
    code, log = run.run()
    assert code == 3, log
    assert f"setup-env fleet: {missing} is not on " in log
    assert not run.out.exists()


MODULE_FUNCTION = (
    '() { [ "$1 $2" = "load site/setup-env" ] && export PATH="$STUB_MODULE_BIN:$PATH"; }'
)


@pytest.mark.parametrize("module", ["site/setup-env", "site/other"])
def test_stub_setup_env_from_an_environment_module(
    tmp_path: Path, ready_check: dict[str, Any], module: str
) -> None:
    """`module` as Lmod and Environment Modules hand it to a batch shell: an exported bash
    function (BASH_FUNC_module%%). The script loads the module named at generation and runs
    the setup-env it puts on PATH; a module that does not load stops the job (exit 3)."""
    mod_bin = tmp_path / "modbin"
    mod_bin.mkdir()
    run = StubRun(tmp_path, ready_check, "--module", module)
    (mod_bin / "setup-env").symlink_to(run.env["STUB_EXE"])
    run.env.update({"BASH_FUNC_module%%": MODULE_FUNCTION, "STUB_MODULE_BIN": str(mod_bin)})
    assert "SETUP_ENV=(setup-env)\n" in run.script.read_text()
    code, log = run.run()
    if module == "site/other":
        assert code == 3 and "`module load site/other` failed on" in log, log
        return
    assert code == 0, log
    assert "FLEET OK: 3 nodes" in log


def test_stub_out_dir_with_home_and_user(tmp_path: Path, ready_check: dict[str, Any]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    run = StubRun(
        tmp_path, ready_check, out_dir="~/fleet/$USER-${SLURM_JOB_ID}",
        out=home / "fleet" / "alice-77", HOME=str(home), USER="alice",
    )  # fmt: skip
    code, log = run.run()
    assert code == 0, log
    assert f"results in {home}/fleet/alice-77 " in log
    assert json.loads((run.out / "report.json").read_text())["fleet"]["ok"] is True


@pytest.mark.parametrize(("sig", "ended", "state"), [
    (signal.SIGUSR1, "time-limit", "timed-out"),  # SLURM's warning (--signal=B:USR1@...)
    (signal.SIGTERM, "stopped", "stopped"),  # the kill itself, or scancel
])  # fmt: skip
def test_stub_job_told_to_stop_reports_the_step_that_did_not_finish(
    tmp_path: Path, ready_check: dict[str, Any], sig: int, ended: str, state: str
) -> None:
    run = StubRun(tmp_path, ready_check, STUB_HANG="1")
    proc = run.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            steps = {s["name"]: s["state"] for s in run.record().get("steps", [])}
            if steps.get("allreduce") == "running":
                break
            time.sleep(0.1)
        else:
            raise AssertionError(f"the all-reduce never started: {run.record()}")
        started = time.monotonic()
        proc.send_signal(sig)
        log, _ = proc.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 1, log
    assert took < 30, f"{took:.0f}s to report after the signal"
    record = run.record()
    assert record["ended"] == ended
    assert [(s["name"], s["state"]) for s in record["steps"]] == [
        ("check", "done"),
        ("allreduce", state),
    ]
    rep = every_format_not_ok(run)
    assert rep["problems"][0].startswith("all-reduce: stopped")
    assert f"setup-env fleet: stopped ({ended})" in log


def test_stub_job_killed_outright_still_leaves_a_report_that_is_not_ok(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    # SIGKILL: no trap runs. The report written when the job started says it never finished.
    run = StubRun(tmp_path, ready_check, STUB_HANG="1")
    proc = run.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (run.out / "report.json").exists():
            time.sleep(0.1)
        while time.monotonic() < deadline:
            steps = {s["name"]: s["state"] for s in run.record().get("steps", [])}
            if steps.get("allreduce") == "running":
                break
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    written = json.loads((run.out / "report.json").read_text())["fleet"]
    assert written["ok"] is False
    assert "the job had not finished when this report was made" in written["problems"]
    # Read again now, the record says how far it got: the all-reduce never finished.
    code, out = run.report("json")
    rep = json.loads(out)["fleet"]
    assert code == 1 and "all-reduce: did not finish" in " ".join(rep["problems"])


# --- the Kubernetes pod's script -----------------------------------------------------------------


def pod_script(*argv: str) -> str:
    from setup_env.act import launchers

    options = launchers.K8sOptions(nodes=3, image="img:1", **dict(zip(argv[::2], argv[1::2])))
    _service, job = launchers.k8s_manifests(options)
    script: str = job["spec"]["template"]["spec"]["containers"][0]["command"][2]
    return script


def test_pod_script_is_shellcheck_clean(tmp_path: Path) -> None:
    (shellcheck,) = require_tools("shellcheck", why="the Debian package shellcheck")
    script = tmp_path / "pod.sh"
    script.write_text(pod_script("results_pvc", "r"))
    proc = subprocess.run(
        [shellcheck, "--shell=sh", "--severity=style", str(script)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout


def test_pod_log_with_a_failed_allreduce_reports_not_ok(
    tmp_path: Path, ready_check: dict[str, Any]
) -> None:
    """The pod's script under sh (its /tmp/ files moved into this test's folder, its setup-env a
    stand-in that prints a ready check and a failed all-reduce): its log, read as `kubectl logs`
    would hand it over, is a report that is not OK, with the pod's record of both steps."""
    require_tools("sh", why="the pod script's shell")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "check-pod.json").write_text(json.dumps(ready_check))
    (docs / "verify-pod.json").write_text(json.dumps(allreduce_result("fail")))
    (docs / "verify-pod.rc").write_text("1")
    exe = tmp_path / "setup-env"
    exe.write_text(STUB_SETUP_ENV)
    exe.chmod(0o755)
    work = tmp_path / "pod"
    work.mkdir()
    script = re.sub(
        r"/tmp/(?=(check|allreduce|node)\.)", f"{work}/", pod_script("setup_env", str(exe))
    )
    env = {**os.environ, "STUB_NODE": "pod", "STUB_DOCS": str(docs)}
    proc = subprocess.run(
        ["sh", "-c", script], capture_output=True, text=True, timeout=60, env=env, check=False
    )
    assert proc.returncode == 1  # the pod fails: its all-reduce failed
    log = tmp_path / "fleet-0-x7k2p.json"
    log.write_text(proc.stdout)
    out = subprocess.run(
        [sys.executable, "-m", "setup_env", "fleet", "report", "--json", str(log)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.returncode == 1, out.stderr
    rep = json.loads(out.stdout)["fleet"]
    assert rep["ok"] is False and rep["unreadable"] == []
    assert rep["allreduce"][0]["status"] == "fail"
    assert rep["expected_nodes"] == 3 and rep["missing_count"] == 2
    assert [(s["name"], s["state"], s["rc"]) for s in rep["steps"]] == [
        ("check", "done", 0),
        ("allreduce", "failed", 1),
    ]


@pytest.mark.parametrize(
    ("time_limit", "seconds", "signal_line"),
    [
        ("00:30:00", 1800, "#SBATCH --signal=B:USR1@90"),
        ("5", 300, "#SBATCH --signal=B:USR1@75"),  # SLURM: a bare number is minutes
        ("1", 60, "#SBATCH --signal=B:USR1@15"),
        ("2:30", 150, "#SBATCH --signal=B:USR1@37"),  # M:S
        ("1-12", 129600, "#SBATCH --signal=B:USR1@90"),  # D-H
        ("0", 0, None),  # no limit: no warning to ask for
    ],
)
def test_the_time_limit_warning_leaves_time_to_report(
    time_limit: str, seconds: int, signal_line: str | None, capsys: pytest.CaptureFixture[str]
) -> None:
    from setup_env.act.launchers import time_seconds

    assert time_seconds(time_limit) == seconds
    assert main(["fleet", "slurm", "--nodes", "2", "--time", time_limit]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("#SBATCH --sig")]
    assert lines == ([signal_line] if signal_line else [])


# --- GPUs asked for by default ---------------------------------------------------------------

# An HGX-style host's display devices as sysfs lists them: two NVIDIA 3D controllers (class
# 0x0302), the BMC's ASPEED VGA (0x1a03), and a host bridge that is no display device.
PCI_FILES = {
    "/sys/bus/pci/devices/0000:18:00.0/class": "0x030200\n",
    "/sys/bus/pci/devices/0000:18:00.0/vendor": "0x10de\n",
    "/sys/bus/pci/devices/0000:18:00.0/device": "0x2330\n",
    "/sys/bus/pci/devices/0000:2a:00.0/class": "0x030200\n",
    "/sys/bus/pci/devices/0000:2a:00.0/vendor": "0x10de\n",
    "/sys/bus/pci/devices/0000:2a:00.0/device": "0x2330\n",
    "/sys/bus/pci/devices/0000:03:00.0/class": "0x030000\n",
    "/sys/bus/pci/devices/0000:03:00.0/vendor": "0x1a03\n",
    "/sys/bus/pci/devices/0000:00:00.0/class": "0x060000\n",
    "/sys/bus/pci/devices/0000:00:00.0/vendor": "0x8086\n",
}


def sbatch_lines(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["fleet", "slurm", "--nodes", "2", *argv]) == 0
    return [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("#SBATCH --")]


def test_gpus_asked_for_by_default_from_this_machine_or_the_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_probe_host import make_replay

    from setup_env.commands import fleet

    host = make_replay(tmp_path / "h", {"interpreter": {"system": "Linux"}}, PCI_FILES)
    assert fleet.gpus_here(host) == 2
    assert fleet.gpus_here(make_replay(tmp_path / "e", {"interpreter": {"system": "Linux"}})) == 0
    monkeypatch.setattr(fleet, "gpus_here", lambda host=None: 2)  # this machine: the host above
    lines = sbatch_lines(capsys)
    assert "#SBATCH --gpus-per-node=2" in lines and "#SBATCH --cpus-per-task=4" in lines
    # A named target wins over this machine; the flag over both; 0 asks for none.
    lines = sbatch_lines(capsys, "--instance-type", "p5.48xlarge")
    assert "#SBATCH --gpus-per-node=8" in lines and "#SBATCH --cpus-per-task=16" in lines
    lines = sbatch_lines(capsys, "--instance-type", "p5.48xlarge", "--gpus-per-node", "4")
    assert "#SBATCH --gpus-per-node=4" in lines
    lines = sbatch_lines(capsys, "--gpus-per-node", "0")
    assert not [ln for ln in lines if "gpu" in ln] and "#SBATCH --cpus-per-task=2" in lines
    monkeypatch.setattr(fleet, "gpus_here", lambda host=None: 0)
    assert not [ln for ln in sbatch_lines(capsys) if "gpu" in ln]
    # Whole nodes: no CPU count, all memory.
    lines = sbatch_lines(capsys, "--exclusive", "--gpus-per-node", "8")
    assert "#SBATCH --exclusive" in lines and "#SBATCH --mem=0" in lines
    assert not [ln for ln in lines if "cpus-per-task" in ln]
    assert "#SBATCH --cpus-per-task=32" in sbatch_lines(capsys, "--cpus-per-node", "32")
