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
    gpus_per_node: Optional[int] = None  # None or 0: none asked for (sbatch --gres adds them)
    time: str = "00:30:00"
    # setup-env on the nodes, a command line: the absolute path of a venv's setup-env (the
    # command writes the one running it), or "setup-env" on the PATH a module gives.
    setup_env: str = "setup-env"
    module: Optional[str] = None  # an environment module that provides setup-env
    out_dir: str = "setup-env-fleet-$SLURM_JOB_ID"  # variables expand in the job (OUT_VARIABLES)
    verify_args: tuple[str, ...] = ()  # extra argv for the per-node check (e.g. --no-verify)
    job_name: str = "setup-env-fleet"
    cpus_per_node: Optional[int] = None  # None: 2 per GPU, at least 2 (unless exclusive)
    exclusive: bool = False  # whole nodes: every CPU and all memory


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


# The variables --out-dir may name, expanded in the job (the batch script, on the first node).
# An unset one stops the job at once with its name (${VAR:?}); $USER falls back to `id -un`
# (SBATCH_EXPORT=NONE can leave it unset).
OUT_VARIABLES = ("SLURM_JOB_ID", "SLURM_SUBMIT_DIR", "USER", "HOME", "SCRATCH", "WORK")
_OUT_VAR = re.compile(r"(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?)")


def _out_dir(text: str) -> str:
    """The output folder as a shell word for the script: ``~`` (alone or ``~/...``) and the
    variables of :data:`OUT_VARIABLES` expand in the job, everything else is quoted."""
    tilde = text == "~" or text.startswith("~/")
    rest = text[1:] if tilde else text
    if not re.fullmatch(r"[A-Za-z0-9._/$_{}+,=@-]{0,200}", rest) or ".." in text.split("/"):
        raise LauncherError(
            f"--out-dir {text!r}: letters, digits, . _ - / + , = @, a leading ~/ and the "
            f"variables ${', $'.join(OUT_VARIABLES)} only"
        )
    words = ["~"] if tilde else []
    for i, part in enumerate(_OUT_VAR.split(rest)):
        if not part:
            continue
        if i % 2:
            name = part.strip("${}")
            if name not in OUT_VARIABLES or part not in (f"${name}", f"${{{name}}}"):
                raise LauncherError(
                    f"--out-dir {text!r}: {part} is not one of ${', $'.join(OUT_VARIABLES)}"
                )
            if name == "USER":
                words.append('"${USER:-$(id -un)}"')
            else:
                words.append(f'"${{{name}:?is not set in the job (--out-dir names it)}}"')
        elif "$" in part or "{" in part or "}" in part:
            raise LauncherError(f"--out-dir {text!r}: a variable is written $NAME or ${{NAME}}")
        else:
            words.append(shlex.quote(part))
    if not words:
        raise LauncherError("--out-dir: empty")
    return "".join(words)


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

# Run by srun on every node before setup-env: a node that lacks it (a venv or module not on a
# filesystem it sees) writes an error document that names the node and what is missing, which
# `fleet report` lists as that node's unreadable document, and exits 3 (could not examine).
_NODE_HAS_SETUP_ENV = "\n".join(
    [
        'if command -v "$1" >/dev/null 2>&1; then exec "$@"; fi',
        "node=${SLURMD_NODENAME:-$(hostname)}  # the name srun gives %N",
        "node=${node//[^A-Za-z0-9._-]/}",
        "exe=${1//[^A-Za-z0-9._\\/+-]/}",
        'echo "setup-env fleet: $exe is not on $node" >&2',
        'printf \'{"schema": "setup-env/error", "schema_version": 1, "error": '
        '{"code": "setup-env-missing", "message": "%s: %s is not there (install setup-env '
        'where every node sees it, or name a module with --module)"}}\\n\' "$node" "$exe"',
        "exit 3",
    ]
)

_MODULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,99}$")

# Where the environment-modules systems (Lmod, Environment Modules) keep their bash set-up,
# for a batch shell that did not get `module` (SBATCH_EXPORT=NONE, a non-login shell).
_MODULE_INITS = (
    "/etc/profile.d/lmod.sh",
    "/etc/profile.d/modules.sh",
    "/usr/share/lmod/lmod/init/bash",
    "/usr/share/Modules/init/bash",
    "/usr/share/modules/init/bash",
)


def slurm_script(o: SlurmOptions) -> str:
    _check_common(o.nodes, o.gpus_per_node)
    if o.partition is not None and not _NAME.match(o.partition):
        raise LauncherError(f"--partition {o.partition!r}: not a partition name")
    if not _TIME.match(o.time):
        raise LauncherError(f"--time {o.time!r}: expected [D-]HH[:MM[:SS]]")
    if not _NAME.match(o.job_name):
        raise LauncherError(f"--job-name {o.job_name!r}: letters, digits, . _ - only")
    if o.module is not None and not _MODULE.match(o.module):
        raise LauncherError(f"--module {o.module!r}: not a module name (letters, digits . _ / + -)")
    if o.cpus_per_node is not None and not 1 <= o.cpus_per_node <= 4096:
        raise LauncherError("--cpus-per-node must be 1-4096")
    argv = _command_argv(o.setup_env)
    exe = " ".join(shlex.quote(a) for a in argv)
    out = _out_dir(o.out_dir)
    extra = "".join(" " + shlex.quote(a) for a in o.verify_args)
    n = o.nodes
    gpus = o.gpus_per_node or 0
    limit = time_seconds(o.time)
    provided = f"module {o.module}" if o.module else argv[0]
    lines = [
        "#!/bin/bash",
        f"# Written by `setup-env fleet slurm --nodes {n}`: check every node, all-reduce across",
        "# them, then one report over every step. Submit with: sbatch THIS_FILE",
        "# The allocation decides the size: `sbatch -N 8 --gres=gpu:4 THIS_FILE` checks 8 nodes",
        "# with 4 GPUs each (the node count, GPUs and CPUs below are read from the job).",
        "# Needs a filesystem every node shares for the results folder (OUT below: home, project",
        "# or scratch space; not /tmp): each node writes its documents there and the first node",
        "# reads them all. Read them again later with `setup-env fleet report OUT`.",
        f"# setup-env on the nodes: {provided} (checked on every node at the start).",
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
    if gpus:
        lines.append(f"#SBATCH --gpus-per-node={gpus}")
    if o.exclusive:
        lines += ["#SBATCH --exclusive", "#SBATCH --mem=0"]
    if o.cpus_per_node or not o.exclusive:
        lines.append(f"#SBATCH --cpus-per-task={o.cpus_per_node or max(2, 2 * gpus)}")
    lines += [
        "set -uo pipefail",
        "# SBATCH_EXPORT=NONE leaves the job without the submitting shell's PATH.",
        'export PATH="${PATH:-/usr/local/bin:/usr/bin:/bin}"',
    ]
    if o.module:
        lines += [
            f"# setup-env from the environment module {o.module}, loaded here; every step gets",
            "# this environment (srun --export=ALL below).",
            "if ! type module >/dev/null 2>&1; then",
            f"  for init in {' '.join(_MODULE_INITS)}; do",
            "    # shellcheck disable=SC1090  # the module system's own set-up",
            '    if [ -r "$init" ]; then . "$init"; break; fi',
            "  done",
            "fi",
            f"if ! module load {shlex.quote(o.module)}; then",
            f'  echo "setup-env fleet: \\`module load {o.module}\\` failed on $(hostname)" >&2',
            "  exit 3",
            "fi",
        ]
    lines += [
        f"SETUP_ENV=({exe})",
        'if ! command -v "${SETUP_ENV[0]}" >/dev/null 2>&1; then',
        '  echo "setup-env fleet: ${SETUP_ENV[0]} is not on $(hostname): install setup-env where'
        ' every node sees it (a venv on a shared filesystem) or name a module with --module" >&2',
        "  exit 3",
        "fi",
        f"OUT={out}",
        'if ! mkdir -p "$OUT/nodes" "$OUT/allreduce"; then',
        '  echo "setup-env fleet: cannot create $OUT" >&2',
        "  exit 3",
        "fi",
        'OUT=$(cd "$OUT" && pwd)  # absolute: the folder the last line names',
        f"NODES=${{SLURM_JOB_NUM_NODES:-{n}}}  # what the job got (sbatch -N overrides)",
        "GPUS=${SLURM_GPUS_ON_NODE:-0}  # --gpus-per-node or sbatch --gres=gpu:G",
        "# CPUs each step may use: the job's per task, or the fewest any node was given.",
        "CPUS=${SLURM_CPUS_PER_TASK:-$(printf '%s\\n' \"${SLURM_JOB_CPUS_PER_NODE:-1}\" | "
        "tr ',' '\\n' | sed 's/(.*//' | sort -n | head -n 1)}",
        "# One task per node with the node's CPUs, GPUs and memory; the environment of this",
        "# script passed on (SBATCH_EXPORT=NONE would otherwise reach the steps too).",
        'STEP=(--nodes="$NODES" --ntasks="$NODES" --ntasks-per-node=1 --cpus-per-task="$CPUS"'
        " --mem=0 --export=ALL)",
        'if [ "$GPUS" -gt 0 ]; then STEP+=(--gres=gpu:"$GPUS"); fi',
        "IFS= read -r -d '' NODE_HAS_SETUP_ENV <<'EOF' || true",
        _NODE_HAS_SETUP_ENV,
        "EOF",
        'RECORD="$OUT/fleet-job.json"',
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
        "report() {  # one report over the folder: a page, JSON, and the text here",
        '  "${SETUP_ENV[@]}" fleet report --format html -o "$OUT/report.html" "$OUT"',
        '  "${SETUP_ENV[@]}" fleet report --json -o "$OUT/report.json" "$OUT"',
        '  "${SETUP_ENV[@]}" fleet report "$OUT"',
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
        'run_step check srun "${STEP[@]}" --output="$OUT/nodes/%N.json" '
        '--error="$OUT/nodes/%N.err" /bin/bash -c "$NODE_HAS_SETUP_ENV" node-check '
        f'"${{SETUP_ENV[@]}}" check --json --all-devices{extra}',
        'found=$(grep -l -s -F \'"setup-env/check"\' "$OUT"/nodes/*.json | wc -l)',
        'if [ "$found" -lt "$NODES" ]; then',
        '  echo "setup-env fleet: $found of $NODES nodes left a check document in $OUT/nodes'
        ' (no file at all from a node: is $OUT on a filesystem every node shares?)" >&2',
        "fi",
        "",
        "# 2. the multi-node all-reduce through torchrun (c10d rendezvous on the first node).",
        "MASTER=${NODE_NAMES%%$'\\n'*}",
        'run_step allreduce srun "${STEP[@]}" '
        '--output="$OUT/allreduce/%N.json" --error="$OUT/allreduce/%N.err" '
        '/bin/bash -c "$NODE_HAS_SETUP_ENV" node-check '
        '"${SETUP_ENV[@]}" verify --json --only distributed --nnodes "$NODES" '
        f'--rdzv-endpoint "$MASTER:{RDZV_PORT}" --rdzv-id "setup-env-$SLURM_JOB_ID"',
        "",
        "# 3. one report over every step: the nodes' checks, the all-reduce, the record.",
        "ended=finished",
        "record",
        "report",
        "report_rc=$?",
        'echo "setup-env fleet: check rc=$check_rc, all-reduce rc=$allreduce_rc, '
        'report rc=$report_rc; results in $OUT (again: setup-env fleet report $OUT)"',
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
