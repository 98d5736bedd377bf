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

_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$")  # a memory quantity
# An extended resource name: an optional DNS-subdomain prefix, then a name ("rdma/hca",
# "vpc.amazonaws.com/efa", "nvidia.com/gpu").
_RESOURCE = re.compile(
    r"^([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
RUN_AS = 10000  # the pods' user and group: not root ("restricted"), above the UIDs hosts hand out


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
    time: str = "00:30:00"  # activeDeadlineSeconds: the Job ends (Failed) past it
    keep_hours: int = 24  # ttlSecondsAfterFinished: the Job and its pods' logs kept this long
    cpus_per_node: Optional[int] = None  # None: 2 per GPU, at least 4
    memory: str = "64Gi"  # the pod's memory request and limit (the /dev/shm volume counts in it)
    shm: str = "16Gi"  # /dev/shm (NCCL's shared-memory transport; the default is 64 MB)
    gpu_resource: str = "nvidia.com/gpu"  # amd.com/gpu for AMD's device plugin
    extra_resources: tuple[tuple[str, int], ...] = ()  # RDMA/EFA: ("vpc.amazonaws.com/efa", 32)
    as_root: bool = False  # for an image that must run as root (not "restricted" then)
    output_name: Optional[str] = None  # the file the manifests are written to, for the recipe


def _k8s_checked(o: K8sOptions) -> None:
    _check_common(o.nodes, o.gpus_per_node)
    if not _K8S_NAME.match(o.name):
        raise LauncherError(f"--name {o.name!r}: lowercase letters, digits and '-' (DNS label)")
    if o.namespace is not None and not _K8S_NAME.match(o.namespace):
        raise LauncherError(f"--namespace {o.namespace!r}: not a namespace name")
    if o.results_pvc is not None and not _K8S_NAME.match(o.results_pvc):
        raise LauncherError(f"--results-pvc {o.results_pvc!r}: not a claim name")
    if not _IMAGE.match(o.image):
        raise LauncherError(f"--image {o.image!r}: not an image reference")
    if not _TIME.match(o.time) or time_seconds(o.time) <= 0:
        raise LauncherError(f"--time {o.time!r}: expected [D-]HH[:MM[:SS]], more than 0")
    if not 1 <= o.keep_hours <= 24 * 90:
        raise LauncherError("--keep-hours must be 1-2160")
    if o.cpus_per_node is not None and not 1 <= o.cpus_per_node <= 4096:
        raise LauncherError("--cpus-per-node must be 1-4096")
    for flag, value in (("--memory", o.memory), ("--shm-size", o.shm)):
        if not _QUANTITY.match(value):
            raise LauncherError(f"{flag} {value!r}: a quantity like 64Gi or 512Mi")
    for resource, count in ((o.gpu_resource, 1), *o.extra_resources):
        if not _RESOURCE.match(resource) or "/" not in resource:
            raise LauncherError(f"{resource!r}: not an extended resource name (vendor.com/name)")
        if not 1 <= count <= 1024:
            raise LauncherError(f"{resource}: the count must be 1-1024")


def _kubectl_ns(o: K8sOptions) -> str:
    return f" -n {o.namespace}" if o.namespace else ""


def k8s_header(o: K8sOptions) -> str:
    """The YAML's comment header: what it is, and the recipe that runs it, collects every
    pod's log under ``nodes/`` and reports (bash, as written: ``tests/test_fleet_k8s.py`` runs
    it against a stand-in kubectl)."""
    ns = _kubectl_ns(o)
    file = shlex.quote(o.output_name) if o.output_name else "THIS_FILE"
    ready = '{.status.conditions[?(@.status=="True")].type}'
    if o.as_root:
        security = ['# The pods run as root (--as-root): not the "restricted" Pod Security level.']
    else:
        security = [
            f"# The pods run as user {RUN_AS}, no privilege escalation, no capabilities, seccomp",
            '# RuntimeDefault, a read-only root: the "restricted" Pod Security level'
            + (" but for" if o.extra_resources else "."),
        ]
        if o.extra_resources:
            security.append('# IPC_LOCK (RDMA pins memory): a namespace at "baseline" or above.')
    wait = (
        f"#   until kubectl get job/{o.name}{ns} -o jsonpath='{ready}'"
        " | grep -qE 'Complete|Failed'; do sleep 10; done"
    )
    collect = (
        f"#   for p in $(kubectl get pods{ns} -l job-name={o.name} -o name); do"
        f' kubectl logs{ns} "$p" > "nodes/${{p#pod/}}.json"; done'
    )
    return "\n".join(
        [
            f"# Written by `setup-env fleet k8s --nodes {o.nodes}`: one pod per GPU node (an",
            "# Indexed Job): each checks its node and joins the all-reduce; its log is its",
            "# documents, named by the node it ran on. Needs Kubernetes >= 1.29",
            "# (backoffLimitPerIndex: a pod that fails fails alone, the others finish and keep",
            "# their logs).",
            *security,
            f"# The Job stops after {o.time} (activeDeadlineSeconds) and is deleted with its pods",
            f"# {o.keep_hours} h after it ends (ttlSecondsAfterFinished): collect before then.",
            "# Run, wait, collect every pod's log into nodes/, report (bash):",
            f"#   kubectl apply{ns} -f {file}",
            wait,
            "#   mkdir -p nodes",
            collect,
            f"#   setup-env fleet report --nodes {o.nodes} nodes/",
            f"# To run it again, delete it first: kubectl delete{ns} -f {file}",
            "",
        ]
    )


def k8s_manifests(o: K8sOptions) -> list[dict[str, Any]]:
    """A headless Service (stable pod names for the rendezvous) and an Indexed Job of N pods,
    one per GPU node (required anti-affinity on the hostname), each asking for the node's GPUs."""
    _k8s_checked(o)
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
        f'printf {shlex.quote(record_format)} "$node" '
        '"$(state "$check_rc")" "$check_rc" "$(state "$allreduce_rc")" "$allreduce_rc"'
    )
    script = "\n".join(
        [
            "set -u",
            "state() { if [ \"$1\" -eq 0 ]; then echo 'done'; else echo failed; fi; }",
            # the node (SETUP_ENV_NODE_NAME, from spec.nodeName), cut to a safe file name
            "node=$(printf %s \"${SETUP_ENV_NODE_NAME:-$(hostname)}\" | tr -cd 'A-Za-z0-9._-')",
            f"{exe} check --json --all-devices >/tmp/check.json 2>/tmp/check.err",
            "check_rc=$?",
            f"{exe} verify --json --only distributed --nnodes {o.nodes} "
            f"--rdzv-endpoint {endpoint} --rdzv-id {o.name} "
            ">/tmp/allreduce.json 2>/tmp/allreduce.err",
            "allreduce_rc=$?",
            f"{{ cat /tmp/check.json /tmp/allreduce.json; {record}; }} >/tmp/node.json",
            *(['cp /tmp/node.json "/results/$node.json"'] if o.results_pvc else []),
            "cat /tmp/node.json",
            # the pod fails when the check could not run at all (rc >= 2) or the all-reduce failed
            '[ "$check_rc" -le 1 ] && [ "$allreduce_rc" -eq 0 ]',
        ]
    )
    cpus = o.cpus_per_node or max(4, 2 * o.gpus_per_node)
    # Requests equal to limits (the Guaranteed class: nothing evicts the pod mid-check).
    # Quantities as strings ("8"): every client's models accept them, API servers accept both.
    resources: dict[str, str] = {"cpu": str(cpus), "memory": o.memory}
    if o.gpus_per_node:
        resources[o.gpu_resource] = str(o.gpus_per_node)
    for name, count in o.extra_resources:
        resources[name] = str(count)
    security: dict[str, Any] = {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "readOnlyRootFilesystem": True,  # /tmp and /dev/shm are volumes
    }
    if o.extra_resources:
        # RDMA registers (pins) memory: the verbs library needs to lock it.
        security["capabilities"]["add"] = ["IPC_LOCK"]
    pod_security: dict[str, Any] = {"seccompProfile": {"type": "RuntimeDefault"}}
    if not o.as_root:
        security["runAsNonRoot"] = True
        pod_security.update(
            {"runAsNonRoot": True, "runAsUser": RUN_AS, "runAsGroup": RUN_AS, "fsGroup": RUN_AS}
        )
    mounts = [
        {"name": "tmp", "mountPath": "/tmp"},  # noqa: S108 (a volume of the pod's own)
        {"name": "dshm", "mountPath": "/dev/shm"},  # noqa: S108 (NCCL's shared memory)
    ]
    volumes: list[dict[str, Any]] = [
        {"name": "tmp", "emptyDir": {"sizeLimit": "4Gi"}},
        {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": o.shm}},
    ]
    if o.results_pvc:
        mounts.append({"name": "results", "mountPath": "/results"})
        volumes.append({"name": "results", "persistentVolumeClaim": {"claimName": o.results_pvc}})
    container: dict[str, Any] = {
        "name": "setup-env",
        "image": o.image,
        "imagePullPolicy": "Always",
        "command": ["/bin/sh", "-c", script],
        "env": [
            {
                "name": "SETUP_ENV_NODE_NAME",
                "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}},
            },
            {"name": "HOME", "value": "/tmp"},  # noqa: S108 (caches on the writable volume)
        ],
        "ports": [{"containerPort": RDZV_PORT, "name": "rendezvous"}],
        "resources": {"requests": dict(resources), "limits": dict(resources)},
        "securityContext": security,
        "volumeMounts": mounts,
    }
    pod_spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "subdomain": o.name,
        "automountServiceAccountToken": False,  # the check needs no API access
        "securityContext": pod_security,
        "containers": [container],
        "volumes": volumes,
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
        "tolerations": [{"key": o.gpu_resource, "operator": "Exists", "effect": "NoSchedule"}],
    }
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": meta,
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,  # pod 0's name resolves before it is "ready"
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
            # A failed pod is not retried and fails its index alone: the other pods run to the
            # end, their logs kept; the Job is Failed once every pod has ended.
            "backoffLimitPerIndex": 0,
            "maxFailedIndexes": o.nodes,
            "activeDeadlineSeconds": time_seconds(o.time),
            "ttlSecondsAfterFinished": o.keep_hours * 3600,
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
