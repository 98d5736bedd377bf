"""`setup-env fleet report | slurm | k8s`: many nodes at once.

* ``report FILES|DIR``: the nodes' ``setup-env check --json`` documents -> one report (a row per
  node, drift, unhealthy GPUs, speed against the fleet median, the nodes to look at first), with
  the job's all-reduce results and the launcher's record (node count, steps) when among them;
  ``--nodes N``: the fleet has N nodes; ``--json``, ``--format markdown|html``. Exit 1 when a
  node fails, is missing, the all-reduce or a step did not pass, or the fleet drifts; 2 when no
  document could be read.
* ``slurm --nodes N [--partition P]``: an sbatch script (check per node through srun, the
  multi-node all-reduce through torchrun, then the report), on stdout or ``-o FILE``.
* ``k8s --nodes N --image IMAGE``: Kubernetes manifests (a headless Service and an Indexed Job,
  one pod per GPU node) as YAML.

The report, its renderers and the launchers live in ``setup_env.fleet``; this module parses and
writes.
"""

from __future__ import annotations

import argparse
import sys

from setup_env.exitcodes import ExitCode


def _flags(p: argparse.ArgumentParser) -> None:
    """`fleet report --json` as well as `fleet --json report` (SUPPRESS: no override)."""
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="JSON output")
    p.add_argument("--no-color", dest="color", action="store_false", default=argparse.SUPPRESS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    rep = sub.add_parser("report", help="one report from many nodes' `check --json` documents")
    rep.add_argument("paths", nargs="+", metavar="FILE_OR_DIR")
    rep.add_argument("--format", choices=("text", "markdown", "html"), default="text")
    rep.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE")
    rep.add_argument(
        "--nodes",
        type=int,
        metavar="N",
        help="the fleet has N nodes: fewer documents is a failure (a launcher's record says so "
        "itself)",
    )
    _flags(rep)

    slurm = sub.add_parser("slurm", help="write an sbatch script that checks N nodes")
    slurm.add_argument("--nodes", type=int, required=True, metavar="N")
    slurm.add_argument("--partition", metavar="P")
    slurm.add_argument("--gpus-per-node", type=int, metavar="G")
    slurm.add_argument("--time", default="00:30:00", metavar="HH:MM:SS")
    slurm.add_argument(
        "--setup-env",
        default="setup-env",
        metavar="CMD",
        help="setup-env on the nodes (default: setup-env on PATH; e.g. /opt/venv/bin/setup-env)",
    )
    slurm.add_argument(
        "--out-dir", default="setup-env-fleet-$SLURM_JOB_ID", metavar="DIR", help="results"
    )
    slurm.add_argument(
        "--no-verify",
        action="store_true",
        help="the per-node check skips verify (no speed figures then)",
    )
    slurm.add_argument("-o", "--output", metavar="FILE", help="write the script to FILE")
    _flags(slurm)

    k8s = sub.add_parser("k8s", help="Kubernetes manifests (Indexed Job) that check N GPU nodes")
    k8s.add_argument("--nodes", type=int, required=True, metavar="N")
    k8s.add_argument("--image", required=True, metavar="IMAGE", help="an image with setup-env")
    k8s.add_argument("--gpus-per-node", type=int, default=8, metavar="G")
    k8s.add_argument("--name", default="setup-env-fleet")
    k8s.add_argument("--namespace")
    k8s.add_argument("--results-pvc", metavar="CLAIM", help="also write documents to this PVC")
    k8s.add_argument("--setup-env", default="setup-env", metavar="CMD")
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
    try:
        if args.action == "slurm":
            text = launchers.slurm_script(
                launchers.SlurmOptions(
                    nodes=args.nodes,
                    partition=args.partition,
                    gpus_per_node=args.gpus_per_node,
                    time=args.time,
                    setup_env=args.setup_env,
                    out_dir=args.out_dir,
                    verify_args=("--no-verify",) if args.no_verify else (),
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
            )
            header = (
                f"# Written by `setup-env fleet k8s --nodes {args.nodes}`. Apply, wait, collect:\n"
                f"#   kubectl apply -f THIS_FILE\n"
                f"#   kubectl wait --for=condition=complete --timeout=30m job/{args.name}\n"
                f"#   for p in $(kubectl get pods -l job-name={args.name} -o name); do\n"
                f'#     kubectl logs "$p" > "nodes/${{p#pod/}}.json"; done\n'
                f"#   setup-env fleet report --nodes {args.nodes} nodes/\n"
                "# Each pod's log holds its check, its all-reduce and its record of both; a pod\n"
                "# that left no log is a missing node in the report.\n"
            )
            text = launchers.to_yaml(launchers.k8s_manifests(options), header)
    except launchers.LauncherError as exc:
        return render.fail("fleet", "bad-input", str(exc), ExitCode.USAGE, args.json)
    return _write(text, args.output, args.json)
