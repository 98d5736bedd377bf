"""`setup-env fleet report | slurm | k8s`: many nodes at once.

* ``report FILES|DIR``: the nodes' ``setup-env check --json`` documents -> one report (a row per
  node, its pools, drift and speed judged within each pool, unhealthy GPUs, the nodes to look at
  first), with the job's all-reduce results and the launcher's record (node count, steps) when
  among them;
  ``--nodes N``: the fleet has N nodes; ``--json``, ``--format markdown|html``. Exit 1 when a
  node fails, is missing, the all-reduce or a step did not pass, or the fleet drifts; 2 when no
  document could be read.
* ``slurm --nodes N [--partition P]``: an sbatch script (check per node through srun, the
  multi-node all-reduce through torchrun, then the report), on stdout or ``-o FILE``. The nodes
  run the setup-env running now (absolute path), ``--setup-env CMD`` or a ``--module``'s; GPUs
  per node default to this machine's (or ``--instance-type``'s); the job reads its size from
  the allocation.
* ``k8s --nodes N --image IMAGE``: Kubernetes manifests (a headless Service and an Indexed Job,
  one pod per GPU node) as YAML, the recipe to run and collect them in its header.

The report, its renderers and the launchers live in ``setup_env.fleet``; this module parses and
writes.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.probe.host import Host


def _flags(p: argparse.ArgumentParser) -> None:
    """`fleet report --json` as well as `fleet --json report` (SUPPRESS: no override)."""
    p.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS,
        help="print a versioned JSON document (the script or manifests inside it)",
    )
    p.add_argument(
        "--no-color",
        dest="color",
        action="store_false",
        default=argparse.SUPPRESS,
        help="no ANSI colour",
    )


REPORT_CODES = (
    "0 every node passed, none missing, no drift; 1 a node failed or is missing, the\n"
    "all-reduce or a step did not pass, or the fleet drifts; 2 bad options, no document could be\n"
    "read, or the output path can't be written."
)
LAUNCHER_CODES = "0 written; 2 bad options, or the output path can't be written."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog

    epilog(
        parser,
        f"as for each action (`setup-env fleet ACTION --help`);\nreport: {REPORT_CODES}",
        "  setup-env fleet report --nodes 4 results/\n"
        "  setup-env fleet slurm --nodes 4 --partition gpu -o check.sbatch\n"
        "  setup-env fleet k8s --nodes 4 --image registry/setup-env:1 -o fleet.yaml",
    )
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    rep = sub.add_parser(
        "report",
        help="one report from many nodes' `check --json` documents",
        description="one report from many nodes' `check --json` documents",
    )
    epilog(
        rep, REPORT_CODES, "  setup-env fleet report --nodes 4 --format html -o fleet.html results/"
    )
    rep.add_argument(
        "paths",
        nargs="+",
        metavar="FILE_OR_DIR",
        help="the nodes' documents, or folders holding them (a launcher's results folder)",
    )
    rep.add_argument(
        "--format",
        choices=("text", "markdown", "html"),
        default="text",
        help="text (default), a Markdown page or a self-contained HTML page",
    )
    rep.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    rep.add_argument(
        "--nodes",
        type=int,
        metavar="N",
        help="the fleet has N nodes: fewer documents is a failure (a launcher's record says so "
        "itself)",
    )
    _flags(rep)

    slurm = sub.add_parser(
        "slurm",
        help="write an sbatch script that checks N nodes",
        description="write an sbatch script that checks N nodes",
    )
    epilog(
        slurm,
        LAUNCHER_CODES,
        "  setup-env fleet slurm --nodes 4 --partition gpu -o check.sbatch\n"
        "  sbatch check.sbatch                    # or: sbatch -N 16 --gres=gpu:8 check.sbatch",
    )
    slurm.add_argument("--nodes", type=int, required=True, metavar="N", help="nodes to check")
    slurm.add_argument("--partition", metavar="P", help="the SLURM partition (default: the site's)")
    slurm.add_argument(
        "--gpus-per-node",
        type=int,
        metavar="G",
        help="GPUs to ask for on each node (default: as many as this machine, or the "
        "--instance-type, has; 0: none; `sbatch --gres=gpu:G` overrides it)",
    )
    slurm.add_argument(
        "--instance-type",
        metavar="TYPE",
        help="the nodes' cloud instance type (e.g. p5.48xlarge): its GPU count is the default",
    )
    slurm.add_argument(
        "--cpus-per-node",
        type=int,
        metavar="C",
        help="CPUs to ask for on each node (default 2 per GPU, at least 2)",
    )
    slurm.add_argument(
        "--exclusive",
        action="store_true",
        help="ask for whole nodes (every CPU and all memory: speed figures without neighbours)",
    )
    slurm.add_argument(
        "--time",
        default="00:30:00",
        metavar="HH:MM:SS",
        help="the job's time limit (default 30 min)",
    )
    slurm.add_argument(
        "--setup-env",
        metavar="CMD",
        help="setup-env on the nodes (default: the one running now, by its absolute path, "
        "e.g. /shared/venv/bin/setup-env; `setup-env` with --module)",
    )
    slurm.add_argument(
        "--module",
        metavar="NAME",
        help="an environment module that provides setup-env (`module load NAME` in the job)",
    )
    slurm.add_argument(
        "--out-dir",
        default="setup-env-fleet-$SLURM_JOB_ID",
        metavar="DIR",
        help="the results folder, on a filesystem every node shares (default "
        "setup-env-fleet-$SLURM_JOB_ID beside the submission; ~/ and $USER, $HOME, $SCRATCH, "
        "$WORK, $SLURM_SUBMIT_DIR, $SLURM_JOB_ID expand in the job)",
    )
    slurm.add_argument(
        "--no-verify",
        action="store_true",
        help="the per-node check skips verify (no speed figures then)",
    )
    slurm.add_argument("-o", "--output", metavar="FILE", help="write the script to FILE")
    _flags(slurm)

    k8s = sub.add_parser(
        "k8s",
        help="Kubernetes manifests (Indexed Job) that check N GPU nodes",
        description="Kubernetes manifests (Indexed Job) that check N GPU nodes",
    )
    epilog(
        k8s,
        LAUNCHER_CODES,
        "  setup-env fleet k8s --nodes 4 --image registry/setup-env:1 > fleet.yaml",
    )
    k8s.add_argument("--nodes", type=int, required=True, metavar="N", help="GPU nodes to check")
    k8s.add_argument("--image", required=True, metavar="IMAGE", help="an image with setup-env")
    k8s.add_argument(
        "--gpus-per-node",
        type=int,
        default=8,
        metavar="G",
        help="GPUs each pod asks for (default 8)",
    )
    k8s.add_argument(
        "--name",
        default="setup-env-fleet",
        help="the Job's and Service's name (default setup-env-fleet)",
    )
    k8s.add_argument("--namespace", help="the namespace (default: kubectl's current one)")
    k8s.add_argument("--results-pvc", metavar="CLAIM", help="also write documents to this PVC")
    k8s.add_argument(
        "--setup-env",
        default="setup-env",
        metavar="CMD",
        help="setup-env in the image (default: setup-env on PATH)",
    )
    k8s.add_argument(
        "--time",
        default="00:30:00",
        metavar="HH:MM:SS",
        help="the Job's deadline (activeDeadlineSeconds; default 30 min)",
    )
    k8s.add_argument(
        "--keep-hours",
        type=int,
        default=24,
        metavar="H",
        help="delete the finished Job and its pods' logs after H hours (default 24)",
    )
    k8s.add_argument(
        "--cpus-per-node",
        type=int,
        metavar="C",
        help="CPUs each pod asks for (default 2 per GPU, at least 4)",
    )
    k8s.add_argument(
        "--memory",
        default="64Gi",
        metavar="QTY",
        help="memory each pod asks for, /dev/shm included (default 64Gi)",
    )
    k8s.add_argument(
        "--shm-size",
        default="16Gi",
        metavar="QTY",
        help="the /dev/shm memory volume (NCCL; the container default is 64 MB; default 16Gi)",
    )
    k8s.add_argument(
        "--gpu-resource",
        default="nvidia.com/gpu",
        metavar="NAME",
        help="the device plugin's GPU resource (default nvidia.com/gpu; amd.com/gpu for AMD)",
    )
    k8s.add_argument(
        "--rdma",
        action="append",
        default=[],
        metavar="NAME[=COUNT]",
        help="an RDMA/EFA device resource each pod asks for, e.g. vpc.amazonaws.com/efa=32 or "
        "rdma/rdma_shared_device_a (repeatable; adds IPC_LOCK)",
    )
    k8s.add_argument(
        "--as-root",
        action="store_true",
        help="run the pods as the image's user, root included (not the restricted level then)",
    )
    k8s.add_argument("-o", "--output", metavar="FILE", help="write the manifests to FILE")
    _flags(k8s)


def _write(text: str, path: str | None, as_json: bool) -> int:
    from setup_env import bounded
    from setup_env.output import render

    if not path:
        sys.stdout.write(text)
        return int(ExitCode.OK)
    try:
        bounded.write_file(path, text)
    except OSError as exc:
        return render.fail(
            "fleet", "bad-input", f"cannot write {path}: {exc.strerror}", ExitCode.USAGE, as_json
        )
    return int(ExitCode.OK)


def _report(args: argparse.Namespace) -> int:
    from setup_env import __version__
    from setup_env.decide import fleet as report
    from setup_env.output import render
    from setup_env.output import render_fleet as fleet_render
    from setup_env.probe import fleet_nodes as model

    if args.nodes is not None and not 1 <= args.nodes <= 100_000:
        message = "--nodes must be 1-100000"
        return render.fail("fleet", "bad-input", message, ExitCode.USAGE, args.json)
    docs = model.load_all(args.paths)
    nodes, bad = docs.nodes, docs.bad
    if not nodes and not docs.jobs:
        # A launcher's record without any node document is a report (every node missing);
        # nothing at all is a usage error.
        why = bad[0].reason if bad else "no documents"
        where = bad[0].path if bad else " ".join(args.paths)
        return render.fail(
            "fleet",
            "bad-input",
            f"no node documents read ({where}: {why})",
            ExitCode.USAGE,
            args.json,
        )
    rep = report.build(nodes, bad, docs.allreduce, docs.jobs, args.nodes)
    if args.json:
        # The payload is plain JSON data already: no second to_jsonable walk over 1,000 nodes.
        import json

        doc = {
            "schema": "setup-env/fleet",
            "schema_version": render.SCHEMA_VERSIONS["fleet"],
            "tool": {"name": "setup-env", "version": __version__},
            "fleet": fleet_render.payload(rep),
        }
        text = json.dumps(doc, indent=2) + "\n"
    elif args.format == "markdown":
        text = fleet_render.markdown(rep)
    elif args.format == "html":
        text = fleet_render.html_page(rep)
    else:
        color = render.use_color(sys.stdout, args.color) and not args.output
        text = fleet_render.text(rep, render.Style(color)) + "\n"
    code = _write(text, args.output, args.json)
    return code if code else rep.exit_code


def _node_setup_env(given: str | None, module: str | None) -> str:
    """setup-env as the nodes run it: as given; ``setup-env`` (on the PATH the module sets);
    else the one running now, by absolute path (its venv's script, else its interpreter with
    ``-m setup_env``): a site's venv on a shared filesystem is found with no PATH at all."""
    import os
    import shlex

    if given is not None:
        return given
    if module is not None:
        return "setup-env"
    python = os.path.abspath(sys.executable)
    script = os.path.join(os.path.dirname(python), "setup-env")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        return shlex.quote(script)
    return f"{shlex.quote(python)} -m setup_env"


def gpus_here(host: Host | None = None) -> int:
    """NVIDIA and AMD GPUs on this machine's PCI bus (sysfs; 0 where there is none)."""
    from setup_env.probe import pci
    from setup_env.probe.host import LiveHost

    vendors = (pci.VENDOR_NVIDIA, pci.VENDOR_AMD)
    devices = pci.display_devices(host if host is not None else LiveHost({}))
    return sum(1 for d in devices if d.vendor in vendors)


def _slurm_gpus(args: argparse.Namespace) -> int | None:
    """GPUs per node: the flag; else the named instance type's; else this machine's."""
    if args.gpus_per_node is not None:
        return int(args.gpus_per_node)
    if args.instance_type:
        from setup_env.act.launchers import LauncherError
        from setup_env.knowledge import cloud_catalog

        found = cloud_catalog.load().find(args.instance_type)
        if not found:
            raise LauncherError(f"--instance-type {args.instance_type!r}: not in the catalogue")
        return found[0].gpu_count
    return gpus_here() or None


def _resource(text: str) -> tuple[str, int]:
    """``--rdma NAME[=COUNT]``: the resource and how many (1 when not said)."""
    from setup_env.act.launchers import LauncherError

    name, sep, count = text.partition("=")
    if not sep:
        return name, 1
    if not count.isdigit():
        raise LauncherError(f"--rdma {text!r}: expected NAME or NAME=COUNT")
    return name, int(count)


def run(args: argparse.Namespace) -> int:
    from setup_env.act import launchers
    from setup_env.output import render

    if args.output:
        # Asked before any document is read or any script written: nothing is worked on for a
        # path that can't be written.
        from setup_env import bounded

        try:
            bounded.check_writable(args.output)
        except bounded.WriteFailed as exc:
            message = f"cannot write {args.output}: {exc.detail}"
            return render.fail("fleet", "bad-input", message, ExitCode.USAGE, args.json)
    if args.action == "report":
        return _report(args)
    manifests: list[dict[str, object]] | None = None
    try:
        if args.action == "slurm":
            text = launchers.slurm_script(
                launchers.SlurmOptions(
                    nodes=args.nodes,
                    partition=args.partition,
                    gpus_per_node=_slurm_gpus(args),
                    time=args.time,
                    setup_env=_node_setup_env(args.setup_env, args.module),
                    module=args.module,
                    out_dir=args.out_dir,
                    verify_args=("--no-verify",) if args.no_verify else (),
                    cpus_per_node=args.cpus_per_node,
                    exclusive=args.exclusive,
                )
            )
        else:
            options = launchers.K8sOptions(
                nodes=args.nodes,
                image=args.image,
                gpus_per_node=args.gpus_per_node,
                name=args.name,
                namespace=args.namespace,
                results_pvc=args.results_pvc,
                setup_env=args.setup_env,
                time=args.time,
                keep_hours=args.keep_hours,
                cpus_per_node=args.cpus_per_node,
                memory=args.memory,
                shm=args.shm_size,
                gpu_resource=args.gpu_resource,
                extra_resources=tuple(_resource(r) for r in args.rdma),
                as_root=args.as_root,
                output_name=args.output,
            )
            header = launchers.k8s_header(options)
            manifests = launchers.k8s_manifests(options)
            text = launchers.to_yaml(manifests, header)
    except launchers.LauncherError as exc:
        return render.fail("fleet", "bad-input", str(exc), ExitCode.USAGE, args.json)
    if not args.json:
        return _write(text, args.output, args.json)
    # --json: the envelope, the script (or the manifests, as text and as objects) inside it; with
    # -o FILE the script itself is written there and the envelope still printed.
    if args.output:
        code = _write(text, args.output, args.json)
        if code:
            return code
    payload: dict[str, object] = {
        "kind": args.action,
        "nodes": args.nodes,
        "format": "sbatch" if args.action == "slurm" else "kubernetes-yaml",
        "text": text,
        "written_to": args.output or None,
    }
    if manifests is not None:
        payload["manifests"] = manifests
    print(render.dumps(render.envelope("launcher", payload)))
    return int(ExitCode.OK)
