"""Launchers on the engines clusters already run: an sbatch script for SLURM, manifests for
Kubernetes. Both do the same three things on N nodes: ``setup-env check --json`` on every node,
the multi-node all-reduce through ``torchrun`` (``setup-env verify`` with the rendezvous flags it
already has), and ``setup-env fleet report`` over the documents.

Every step's result lands where ``fleet report`` reads it: each node's check and all-reduce
documents, and a record of the job (``setup-env/fleet-job``: the node count and names, each
step's state), so a failed all-reduce or a node that never reported makes the report not OK.
The SLURM script writes its record before the first step and after each, and traps the signal
SLURM sends before the time limit (``--signal=B:USR1@...``) and the TERM of a stop: the running
step is stopped, marked, and the report written. A Kubernetes pod prints its check, its
all-reduce and its record to its log, one document after another.

Pure: options in, text out. Every value that lands in the script is validated here and quoted
with :func:`shlex.quote`; nothing from outside is pasted into a shell line unquoted.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Optional

from setup_env._record import Record, record

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")  # a SLURM partition / account name
_K8S_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$")  # DNS-1123 label, short
_TIME = re.compile(r"^(\d{1,3}-)?\d{1,2}(:\d{2}){0,2}$")  # SLURM: [D-]HH[:MM[:SS]]
_IMAGE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$")
RDZV_PORT = 29500  # torchrun's default master port


class LauncherError(ValueError):
    """An option that can't go into a script or manifest (a usage error)."""


@record
class SlurmOptions(Record):
    """What a Slurm batch script for a fleet check is written with."""

    nodes: int
    partition: Optional[str] = None
    gpus_per_node: Optional[int] = None
    time: str = "00:30:00"
    setup_env: str = "setup-env"  # the command on the nodes (a path to a venv's setup-env)
    out_dir: str = "setup-env-fleet-$SLURM_JOB_ID"  # "$SLURM_JOB_ID" expands in the script
    verify_args: tuple[str, ...] = ()  # extra argv for the per-node check (e.g. --no-verify)
    job_name: str = "setup-env-fleet"


def _check_common(nodes: int, gpus: Optional[int]) -> None:
    if not 1 <= nodes <= 100_000:
        raise LauncherError("--nodes must be 1-100000")
    if gpus is not None and not 0 <= gpus <= 64:
        raise LauncherError("--gpus-per-node must be 0-64")


def _command_argv(text: str) -> list[str]:
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise LauncherError(f"--setup-env {text!r}: {exc}") from None
    if not argv:
        raise LauncherError("--setup-env: empty command")
    return argv


def _out_dir(text: str) -> str:
    """The output folder, quoted for the script, with $SLURM_JOB_ID left to expand."""
    if not re.fullmatch(r"[A-Za-z0-9._/$_{}-]{1,200}", text) or ".." in text.split("/"):
        raise LauncherError(f"--out-dir {text!r}: letters, digits, . _ - / and $SLURM_JOB_ID only")
    parts = re.split(r"(\$\{?SLURM_JOB_ID\}?)", text)
    if any("$" in p for p in parts[::2]):
        raise LauncherError("--out-dir: $SLURM_JOB_ID is the only variable allowed")
    return "".join(f'"{p}"' if p.startswith("$") else shlex.quote(p) for p in parts if p)


def time_seconds(text: str) -> int:
    """SLURM's ``--time`` in seconds: M, M:S, H:M:S, D-H, D-H:M or D-H:M:S (0: no limit)."""
    days, _, rest = text.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days:
        h, m, sec = [*parts, 0, 0][:3]
        return int(days) * 86400 + h * 3600 + m * 60 + sec
    if len(parts) == 1:
        return parts[0] * 60
    if len(parts) == 2:
        return parts[0] * 60 + parts[1]
    return parts[0] * 3600 + parts[1] * 60 + parts[2]


def signal_lead(seconds: int) -> int:
    """How long before the time limit SLURM warns the script (USR1): enough to stop the step
    that runs and write the report (seconds), never more than a quarter of the job."""
    return min(90, max(15, seconds // 4))


# The script's record of the job, read by `fleet report` beside the documents: the node count
# and names, and how far each step got. Written before the first step (a job that never gets
# further still says so), after each step and when SLURM says the time is up. Names and ids are
# cut to characters that need no JSON escaping.
_RECORD = (
    "{"
    '"schema": "setup-env/fleet-job", "schema_version": 1, "launcher": "slurm", '
    '"job_id": "%s", "expected_nodes": %d, "nodes": [%s], "ended": "%s", "steps": ['
    '{"name": "check", "state": "%s", "rc": %s}, '
    '{"name": "allreduce", "state": "%s", "rc": %s}]'
    "}\\n"
)


def slurm_script(o: SlurmOptions) -> str:
    _check_common(o.nodes, o.gpus_per_node)
    if o.partition is not None and not _NAME.match(o.partition):
        raise LauncherError(f"--partition {o.partition!r}: not a partition name")
    if not _TIME.match(o.time):
        raise LauncherError(f"--time {o.time!r}: expected [D-]HH[:MM[:SS]]")
    if not _NAME.match(o.job_name):
        raise LauncherError(f"--job-name {o.job_name!r}: letters, digits, . _ - only")
    exe = " ".join(shlex.quote(a) for a in _command_argv(o.setup_env))
    out = _out_dir(o.out_dir)
    extra = "".join(" " + shlex.quote(a) for a in o.verify_args)
    n = o.nodes
    limit = time_seconds(o.time)
    lines = [
        "#!/bin/bash",
        f"# Written by `setup-env fleet slurm --nodes {n}`: check every node, all-reduce across",
        "# them, then one report over every step. Submit with: sbatch THIS_FILE",
        f"#SBATCH --job-name={o.job_name}",
        f"#SBATCH --nodes={n}",
        "#SBATCH --ntasks-per-node=1",
        f"#SBATCH --time={o.time}",
        f"#SBATCH --output={o.job_name}-%j.out",
    ]
    if limit:
        # B: the signal goes to this script alone, which stops the running step and reports.
        lines.append(f"#SBATCH --signal=B:USR1@{signal_lead(limit)}")
    if o.partition:
        lines.append(f"#SBATCH --partition={o.partition}")
    if o.gpus_per_node:
        lines.append(f"#SBATCH --gpus-per-node={o.gpus_per_node}")
    lines += [
        "set -uo pipefail",
        f"SETUP_ENV=({exe})",
        f"OUT={out}",
        f"NODES={n}",
        'RECORD="$OUT/fleet-job.json"',
        'mkdir -p "$OUT/nodes" "$OUT/allreduce"',
        'NODE_NAMES=$(scontrol show hostnames "$SLURM_JOB_NODELIST")',
        "check_state=pending check_rc=null allreduce_state=pending allreduce_rc=null",
        "ended=running step='' step_pid=''",
        "",
        "record() {  # for `fleet report`: the node count and names, how far each step got",
        '  local names="" name',
        "  for name in $NODE_NAMES; do",
        '    names="$names${names:+, }\\"${name//[^A-Za-z0-9._-]/}\\""',
        "  done",
        f"  printf '{_RECORD}' \\",
        '    "${SLURM_JOB_ID//[^0-9_]/}" "$NODES" "$names" "$ended" \\',
        '    "$check_state" "$check_rc" "$allreduce_state" "$allreduce_rc" \\',
        '    >"$RECORD.tmp" && mv -f "$RECORD.tmp" "$RECORD"',
        "}",
        "",
        "report() {  # one report over every step's result: a page, JSON, and the text here",
        '  local inputs=("$RECORD" "$OUT/nodes" "$OUT/allreduce")',
        '  "${SETUP_ENV[@]}" fleet report --format html -o "$OUT/report.html" "${inputs[@]}"',
        '  "${SETUP_ENV[@]}" fleet report --json -o "$OUT/report.json" "${inputs[@]}"',
        '  "${SETUP_ENV[@]}" fleet report "${inputs[@]}"',
        "}",
        "",
        "run_step() {  # NAME COMMAND...: in the background, so that a signal's trap runs at once",
        "  step=$1",
        "  shift",
        '  printf -v "${step}_state" running',
        "  record",
        '  "$@" &',
        "  step_pid=$!",
        '  wait "$step_pid"',
        "  local rc=$?",
        '  printf -v "${step}_rc" %d "$rc"',
        "  local state=failed",
        "  if [ \"$rc\" -eq 0 ]; then state='done'; fi",
        '  printf -v "${step}_state" %s "$state"',
        "  step='' step_pid=''",
        "  record",
        '  return "$rc"',
        "}",
        "",
        "# SLURM's warning before the time limit (USR1, see --signal above) or a stop (TERM): the",
        "# running step is stopped and marked, and the report says which steps did not finish.",
        "# shellcheck disable=SC2317  # run by the traps below",
        "on_stop() {  # ENDED STATE",
        "  trap '' USR1 TERM",
        "  ended=$1",
        '  if [ -n "$step" ]; then',
        '    printf -v "${step}_state" %s "$2"',
        '    if [ -n "$step_pid" ]; then kill -TERM "$step_pid" 2>/dev/null; fi',
        "  fi",
        "  record",
        "  report",
        '  echo "setup-env fleet: stopped ($ended) before every step finished; results in $OUT"',
        "  exit 1",
        "}",
        "trap 'on_stop time-limit timed-out' USR1",
        "trap 'on_stop stopped stopped' TERM",
        "record",
        "report >/dev/null  # a report from the start: a job killed outright leaves one too",
        "",
        "# 1. setup-env check on every node: one JSON document per node, named by srun (%N).",
        f'run_step check srun --nodes={n} --ntasks-per-node=1 --output="$OUT/nodes/%N.json" '
        f'--error="$OUT/nodes/%N.err" "${{SETUP_ENV[@]}}" check --json --all-devices{extra}',
        "",
        "# 2. the multi-node all-reduce through torchrun (c10d rendezvous on the first node).",
        "MASTER=${NODE_NAMES%%$'\\n'*}",
        f"run_step allreduce srun --nodes={n} --ntasks-per-node=1 "
        f'--output="$OUT/allreduce/%N.json" --error="$OUT/allreduce/%N.err" '
        f'"${{SETUP_ENV[@]}}" verify --json --only distributed --nnodes {n} '
        f'--rdzv-endpoint "$MASTER:{RDZV_PORT}" --rdzv-id "setup-env-$SLURM_JOB_ID"',
        "",
        "# 3. one report over every step: the nodes' checks, the all-reduce, the record.",
        "ended=finished",
        "record",
        "report",
        "report_rc=$?",
        'echo "setup-env fleet: check rc=$check_rc, all-reduce rc=$allreduce_rc, '
        'report rc=$report_rc; results in $OUT"',
        'if [ "$report_rc" -ne 0 ] || [ "$allreduce_rc" != 0 ]; then exit 1; fi',
        "exit 0",
    ]
    return "\n".join(lines) + "\n"


# --- Kubernetes ------------------------------------------------------------------------------


@record
class K8sOptions(Record):
    """What a Kubernetes indexed Job for a fleet check is written with."""

    nodes: int
    image: str
    gpus_per_node: int = 8
    name: str = "setup-env-fleet"
    namespace: Optional[str] = None
    results_pvc: Optional[str] = None  # a PersistentVolumeClaim (ReadWriteMany) for the documents
    setup_env: str = "setup-env"


def k8s_manifests(o: K8sOptions) -> list[dict[str, Any]]:
    """A headless Service (stable pod names for the rendezvous) and an Indexed Job of N pods,
    one per GPU node (required anti-affinity on the hostname), each asking for the node's GPUs."""
    _check_common(o.nodes, o.gpus_per_node)
    if not _K8S_NAME.match(o.name):
        raise LauncherError(f"--name {o.name!r}: lowercase letters, digits and '-' (DNS label)")
    if o.namespace is not None and not _K8S_NAME.match(o.namespace):
        raise LauncherError(f"--namespace {o.namespace!r}: not a namespace name")
    if o.results_pvc is not None and not _K8S_NAME.match(o.results_pvc):
        raise LauncherError(f"--results-pvc {o.results_pvc!r}: not a claim name")
    if not _IMAGE.match(o.image):
        raise LauncherError(f"--image {o.image!r}: not an image reference")
    exe = " ".join(shlex.quote(a) for a in _command_argv(o.setup_env))
    meta: dict[str, Any] = {"name": o.name, "labels": {"app.kubernetes.io/name": o.name}}
    if o.namespace:
        meta["namespace"] = o.namespace
    endpoint = f"{o.name}-0.{o.name}:{RDZV_PORT}"
    # The pod's log is its documents, one after another: the check, the all-reduce (verify's
    # document), and its record of both steps with the fleet's node count (collect: kubectl
    # logs, which mixes stdout and stderr, so everything else goes to files); with a results
    # volume they are also written there. `fleet report` reads all three from the one file.
    record_format = (
        '{"schema": "setup-env/fleet-job", "schema_version": 1, "launcher": "k8s", '
        f'"node": "%s", "expected_nodes": {o.nodes}, "ended": "finished", "steps": ['
        '{"name": "check", "state": "%s", "rc": %d}, '
        '{"name": "allreduce", "state": "%s", "rc": %d}]}\\n'
    )
    record = (
        f"printf {shlex.quote(record_format)} \"$(hostname | tr -cd 'A-Za-z0-9._-')\" "
        '"$(state "$check_rc")" "$check_rc" "$(state "$allreduce_rc")" "$allreduce_rc"'
    )
    script = "\n".join(
        [
            "set -u",
            "state() { if [ \"$1\" -eq 0 ]; then echo 'done'; else echo failed; fi; }",
            f"{exe} check --json --all-devices >/tmp/check.json 2>/tmp/check.err",
            "check_rc=$?",
            f"{exe} verify --json --only distributed --nnodes {o.nodes} "
            f"--rdzv-endpoint {endpoint} --rdzv-id {o.name} "
            ">/tmp/allreduce.json 2>/tmp/allreduce.err",
            "allreduce_rc=$?",
            f"{{ cat /tmp/check.json /tmp/allreduce.json; {record}; }} >/tmp/node.json",
            *(['cp /tmp/node.json "/results/$(hostname).json"'] if o.results_pvc else []),
            "cat /tmp/node.json",
            # the pod fails when the check could not run at all (rc >= 2) or the all-reduce failed
            '[ "$check_rc" -le 1 ] && [ "$allreduce_rc" -eq 0 ]',
        ]
    )
    container: dict[str, Any] = {
        "name": "setup-env",
        "image": o.image,
        "command": ["/bin/sh", "-c", script],
        "ports": [{"containerPort": RDZV_PORT, "name": "rendezvous"}],
        "resources": {"limits": {"nvidia.com/gpu": o.gpus_per_node}},
    }
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "subdomain": o.name,
        "containers": [container],
        "affinity": {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": o.name}},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        },
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
    if o.results_pvc:
        container["volumeMounts"] = [{"name": "results", "mountPath": "/results"}]
        pod_spec["volumes"] = [
            {"name": "results", "persistentVolumeClaim": {"claimName": o.results_pvc}}
        ]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "clusterIP": "None",
            "selector": {"app.kubernetes.io/name": o.name},
            "ports": [{"name": "rendezvous", "port": RDZV_PORT}],
        },
    }
    job = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "completionMode": "Indexed",
            "completions": o.nodes,
            "parallelism": o.nodes,
            "backoffLimit": 0,
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": o.name}},
                "spec": pod_spec,
            },
        },
    }
    return [service, job]


def to_yaml(docs: list[dict[str, Any]], header: str = "") -> str:
    """YAML documents from plain dicts/lists/strings/numbers. Scalars are written as JSON (a
    subset of YAML), multi-line strings as literal blocks, so no YAML library is needed."""

    def scalar(v: Any) -> str:
        return json.dumps(v)

    def emit(v: Any, indent: int) -> list[str]:
        pad = " " * indent
        out: list[str] = []
        if isinstance(v, dict):
            for k, item in v.items():
                key = json.dumps(k) if not re.fullmatch(r"[A-Za-z0-9_./-]+", k) else k
                if isinstance(item, (dict, list)) and item:
                    out.append(f"{pad}{key}:")
                    out += emit(item, indent + 2)
                elif isinstance(item, str) and "\n" in item:
                    out.append(f"{pad}{key}: |-")
                    out += [f"{pad}  {line}" if line else "" for line in item.split("\n")]
                else:
                    out.append(f"{pad}{key}: {scalar(item)}")
        elif isinstance(v, list):
            for item in v:
                if isinstance(item, (dict, list)) and item:
                    sub = emit(item, indent + 2)
                    out.append(f"{pad}- {sub[0].lstrip()}")
                    out += sub[1:]
                elif isinstance(item, str) and "\n" in item:
                    out.append(f"{pad}- |-")
                    out += [f"{pad}  {line}" if line else "" for line in item.split("\n")]
                else:
                    out.append(f"{pad}- {scalar(item)}")
        return out

    text = "".join("---\n" + "\n".join(emit(d, 0)) + "\n" for d in docs)
    return (header + text) if header else text
