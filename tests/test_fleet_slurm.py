"""`setup-env fleet slurm`: the sbatch script it writes runs for real on a one-node SLURM cluster
that this test starts (Debian's slurm-wlm and munge; `.ci/run` installs them).

The cluster lives in a temporary folder: its own munge key and socket, slurm.conf with free
ports, state, spool and logs, so it touches nothing of the machine's own configuration; the test
stops the daemons it started by their process ids. Needs root (slurmd runs jobs as their user).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from setup_env.cli import main

DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "sinfo", "scontrol")


def _need_slurm() -> None:
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    in_ci = os.environ.get("CI", "").lower() == "true"
    if missing:
        if in_ci:
            pytest.fail(f"CI must install slurm-wlm and munge (.ci/run): missing {missing}")
        pytest.skip(f"SLURM is not installed here ({', '.join(missing)}); CI installs it")
    if os.geteuid() != 0:
        if in_ci:
            pytest.fail("the SLURM test runs the cluster's daemons as root; CI runs as root")
        pytest.skip("the one-node SLURM cluster needs root")


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


@pytest.mark.slow
@pytest.mark.torch
def test_sbatch_script_runs_on_a_real_one_node_cluster(
    cluster: dict[str, str], tmp_path: Path
) -> None:
    pytest.importorskip("torch")
    exe = Path(sys.executable).with_name("setup-env")
    assert exe.exists(), exe
    script = tmp_path / "fleet.sbatch"
    out_dir = f"{tmp_path}/out-$SLURM_JOB_ID"
    argv = ["--nodes", "1", "--partition", "test", "--setup-env", str(exe), "--out-dir", out_dir]
    assert main(["fleet", "slurm", *argv, "-o", str(script)]) == 0
    env = {**os.environ, "SLURM_CONF": cluster["conf"]}
    proc = subprocess.run(
        ["sbatch", "--wait", "--parsable", str(script)],
        capture_output=True, text=True, timeout=540, env=env, cwd=tmp_path,
    )  # fmt: skip
    job = proc.stdout.strip().split(";")[0]
    log = next(tmp_path.glob("setup-env-fleet-*.out"), None)
    log_text = log.read_text() if log else "(no job log)"
    assert proc.returncode == 0, f"{proc.stderr}\n{log_text}"
    out = tmp_path / f"out-{job}"
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


def test_script_is_shellcheck_clean(tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("CI must install shellcheck (.ci/run installs the Debian package)")
        pytest.skip("shellcheck is not installed here (CI installs it)")
    script = tmp_path / "fleet.sbatch"
    argv = ["fleet", "slurm", "--nodes", "4", "--partition", "gpu", "--gpus-per-node", "8"]
    assert main([*argv, "--setup-env", "'/opt/my env/bin/setup-env'", "-o", str(script)]) == 0
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
        assert "#SBATCH --nodes=3" in text and "--nnodes 3" in text
