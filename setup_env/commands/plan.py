"""`setup-env plan`: the exact PyTorch install command for this machine, or for one you describe.

Facts come from (first match): ``--facts FILE`` (the JSON of ``setup-env detect --json``,
envelope or bare), a spec (``--os`` with ``--arch --python --gpu --driver --glibc --macos``), a
cloud instance (``--cloud/--instance-type``, see ``setup_env.decide.cloudplan``), ``--root DIR`` (a
captured machine), else this machine. Spec flags without ``--os`` (``--gpu``, ``--driver``...)
describe this machine, or the one ``--root`` replays, with those GPUs: its OS, CPU and Python are
read through the Host seam (the probes), never from the ``platform`` of the machine running this.

Exit codes: 0 a plan was found (also a CPU fallback), 1 nothing fits, 2 bad usage or a bad input
file, 3 ``--root`` is not a captured machine.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from setup_env.decide.cloudplan import CloudAdvice
    from setup_env.decide.model import Plan
    from setup_env.facts import Facts
    from setup_env.probe.host import Host

INSTALLERS = (
    "pip",
    "uv",
    "uv-project",
    "poetry",
    "requirements",
)  # = setup_env.decide.model.INSTALLERS
SPEC_FLAGS = ("arch", "gpu", "driver", "glibc", "macos", "wsl", "jetpack")


EXAMPLES = """\
  setup-env plan --os linux --gpu "RTX 5090" --driver 570.86.10 --python 3.12
  setup-env plan --root tests/fixtures/hosts/ubuntu2404-cpu-only   # a captured machine (checkout)
  # --root DIR: capture a machine first, on that machine, from a checkout of setup-env:
  python scripts/capture_host.py /tmp/box    # writes host.json, files/, commands/ (redacted)
  setup-env plan --root /tmp/box --gpu "RTX 4090"
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog

    epilog(
        parser,
        "0 a plan was found (also a CPU fallback); 1 nothing fits; 2 bad options or a bad\n"
        "input file; 3 --root is not a captured machine.",
        EXAMPLES,
    )
    what = parser.add_argument_group("what to install")
    what.add_argument("--torch", metavar="VERSION", help="pin a release: 2.13 or 2.13.0")
    what.add_argument("--variant", metavar="NAME", help="cpu, cu130, rocm7.2, xpu, mps ...")
    what.add_argument(
        "--with",
        dest="with_packages",
        metavar="PKGS",
        default="",
        help="companions pinned to the matching version: torchvision,torchaudio",
    )
    what.add_argument(
        "--channel",
        choices=("stable", "nightly"),
        default="stable",
        help="stable releases (default) or nightly builds",
    )
    what.add_argument(
        "--installer",
        choices=INSTALLERS,
        default="pip",
        help="the command's form: pip (default), uv, a uv project, poetry or a requirements file",
    )
    what.add_argument(
        "--index-url",
        metavar="URL",
        help="an internal mirror of https://download.pytorch.org/whl (its /<variant> pages)",
    )
    what.add_argument("--matrix", metavar="FILE", help="use this wheel matrix file")
    src = parser.add_argument_group("which machine (default: this one)")
    src.add_argument("--facts", metavar="FILE", help="facts from `setup-env detect --json`")
    src.add_argument(
        "--root",
        metavar="DIR",
        help="a machine captured by scripts/capture_host.py (see the example below)",
    )
    add_machine_arguments(parser)


def add_machine_arguments(parser: argparse.ArgumentParser) -> None:
    """The machine description (a spec, or a cloud instance): `plan` and `check` share it."""
    from setup_env.decide import cloudplan

    spec = parser.add_argument_group("what-if: describe a machine")
    spec.add_argument(
        "--os", choices=("linux", "windows", "macos"), help="the machine's operating system"
    )
    spec.add_argument("--arch", choices=("x86_64", "aarch64", "arm64"), help="its CPU architecture")
    spec.add_argument("--python", metavar="X.Y[t]", help="3.12, or 3.14t for free-threaded")
    spec.add_argument(
        "--gpu",
        action="append",
        default=[],
        metavar="NAME_OR_SM",
        help='a GPU ("RTX 5090", sm_120, MI300X, gfx942, M3); repeat for each',
    )
    spec.add_argument("--driver", metavar="VERSION", help="NVIDIA driver, e.g. 570.86.10")
    spec.add_argument("--glibc", metavar="X.Y", help="glibc of a Linux system, e.g. 2.17")
    spec.add_argument("--macos", metavar="X.Y", help="macOS version, e.g. 13.6")
    spec.add_argument("--wsl", action="store_true", help="Linux under WSL2 (--driver is Windows')")
    spec.add_argument(
        "--jetpack",
        metavar="X.Y",
        help='JetPack of a Jetson named by --gpu, e.g. 6.2 ("Jetson AGX Orin")',
    )
    cloudplan.add_plan_arguments(parser)


class _BadInput(Exception):
    def __init__(self, message: str, code: ExitCode = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.code = code


def _fail(args: argparse.Namespace, exc: _BadInput) -> int:
    from setup_env.output import render

    code = "unexaminable" if exc.code == ExitCode.UNEXAMINABLE else "bad-input"
    return render.fail("plan", code, str(exc), int(exc.code), args.json)


def _facts(args: argparse.Namespace) -> tuple[Facts, str]:
    from setup_env.commands._source import SourceError, read_facts_file
    from setup_env.decide.model import PlanError
    from setup_env.decide.plan import spec_facts
    from setup_env.facts import Facts

    spec_given = [f for f in SPEC_FLAGS if getattr(args, f)]
    cloud = bool(getattr(args, "cloud", None) or getattr(args, "instance_type", None))
    facts_file = getattr(args, "facts", None)
    if facts_file:
        if args.os or spec_given or args.root:
            raise _BadInput("--facts can't be combined with --os/--gpu/... or --root")
        try:
            return read_facts_file(facts_file), f"facts file {facts_file}"
        except SourceError as exc:
            raise _BadInput(str(exc)) from exc
    described = "the described machine"
    overlay = spec_given and not args.os and not cloud
    if overlay:
        # `plan --gpu "RTX 5090" --driver 570.86.10`: this machine's (with --root, the captured
        # machine's) OS, CPU and Python, read through the Host seam, with the GPUs and driver named.
        _host_spec(args, _host(args.root))
        where = f"captured machine {args.root}" if args.root else "the described machine"
        described = f"{where} ({args.os}, {args.arch}, Python {args.python or '3.12'})"
    if args.os:
        if args.root and not overlay:
            raise _BadInput("--root can't be combined with --os (a spec)")
        try:
            facts = spec_facts(
                os=args.os,
                arch=args.arch,
                python=args.python,
                gpus=args.gpu,
                driver=args.driver,
                glibc=args.glibc,
                macos=args.macos,
                wsl=args.wsl,
                jetpack=getattr(args, "jetpack", None),
            )
        except PlanError as exc:
            raise _BadInput(str(exc)) from exc
        return facts, described
    if cloud and spec_given == ["gpu"]:
        spec_given = []  # --gpu names the GPUs attached to a cloud machine type (GCP n1-*)
    if spec_given:
        raise _BadInput(f"--{spec_given[0]} describes another machine: add --os (what-if mode)")
    if cloud:
        from setup_env.facts import PythonInfo

        version = _host(args.root).interpreter().get("version")
        python = PythonInfo(version=version if isinstance(version, str) else "")
        return Facts(python=python), "cloud instance"
    from setup_env.probe.detect import detect

    facts = detect(_host(args.root))
    label = f"captured machine {args.root}" if args.root else "this machine"
    if args.python:
        # What-if on the detected machine: its GPUs, driver and OS, another Python.
        facts = _with_python(facts, args.python)
        label += f" with Python {args.python.strip()}"
    return facts, label


def _host(root: str | None) -> Host:
    """The machine planned for: a captured folder (``--root``) or this one; every fact about
    it (its OS included) is read through this seam, never from ``platform`` here."""
    from setup_env.commands._source import SourceError, open_host

    try:
        return open_host(root)
    except SourceError as exc:
        raise _BadInput(str(exc), ExitCode.UNEXAMINABLE) from exc


def _host_spec(args: argparse.Namespace, host: Host) -> None:
    """Fill the spec flags not given (--os --arch --python --glibc --macos --wsl) from what the
    host's OS and interpreter probes read."""
    import re

    from setup_env.probe import osinfo

    os_info, _notes = osinfo.detect(host)
    interp = host.interpreter()
    jetpack = getattr(args, "jetpack", None)
    if jetpack or _names_a_jetson(getattr(args, "gpu", None) or ()):
        # `plan --gpu "Jetson AGX Orin"`: a Jetson is an aarch64 Linux machine, whatever runs
        # this; its OS and Python come from the JetPack, not from this host.
        from setup_env.knowledge.gpus import CatalogueError, load

        args.os = "linux"
        args.arch = args.arch or "aarch64"
        try:
            cat = load()
            row = cat.jetpack(str(jetpack).strip()) if jetpack else None
            if row is None and not jetpack:  # the JetPack the plan will assume: the newest
                ccs = _jetson_ccs(getattr(args, "gpu", None) or ())
                rows = [j for j in cat.jetpacks if any(j.supports(c) for c in ccs)]
                row = rows[-1] if rows else None
        except CatalogueError:
            row = None
        args.python = args.python or (row.python if row is not None else None)
        return
    version = interp.get("version")
    m = re.match(r"(3\.\d{1,2})", version) if isinstance(version, str) else None
    if m and not args.python:
        args.python = m.group(1) + ("t" if interp.get("free_threaded") is True else "")
    args.os = {"darwin": "macos", "windows": "windows"}.get(os_info.family, "linux")
    machine = interp.get("machine")
    args.arch = args.arch or (machine if isinstance(machine, str) and machine else None)
    if args.os == "linux" and not args.glibc and re.fullmatch(r"2\.\d{1,2}", os_info.glibc or ""):
        args.glibc = os_info.glibc
    macos = os_info.macos_version or ""
    if args.os == "macos" and not args.macos and re.fullmatch(r"\d{2}(?:\.\d{1,2}){0,2}", macos):
        args.macos = macos
    args.wsl = args.wsl or (os_info.wsl or 0) >= 2


def _jetson_ccs(names: object) -> list[str]:
    """The compute capabilities of the Jetson modules a ``--gpu`` names (catalogue "embedded")."""
    from setup_env.knowledge.gpus import CatalogueError, identify

    out: list[str] = []
    try:
        for name in names if isinstance(names, (list, tuple)) else ():
            found = identify(str(name))
            if found.nvidia is not None and found.nvidia.segment == "embedded":
                out.append(found.nvidia.compute_capability)
    except CatalogueError:
        return []
    return out


def _names_a_jetson(names: object) -> bool:
    return bool(_jetson_ccs(names))


class BadMachine(ValueError):
    """The machine description can't be used; ``code`` is the exit code (2 usage, 3 --root)."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def described_machine(args: argparse.Namespace) -> tuple[Facts, str, CloudAdvice | None]:
    """The machine that `plan`'s machine flags describe (for `check` on a target machine):
    facts, a label, and the cloud advice when it is an instance type. Raises BadMachine."""
    from setup_env.decide import cloudplan

    try:
        facts, label = _facts(args)
        facts, advice = cloudplan.apply(args, facts)
    except _BadInput as exc:
        raise BadMachine(str(exc), int(exc.code)) from exc
    except cloudplan.CloudPlanError as exc:
        raise BadMachine(str(exc), int(ExitCode.USAGE)) from exc
    if advice is not None and advice.instance_type:
        label = f"{advice.provider} {advice.instance_type}"
    return facts, label, advice


def _with_python(facts: Facts, python: str) -> Facts:
    import re

    from setup_env._record import replace

    m = re.fullmatch(r"3\.(\d{1,2})(t?)", python.strip())
    if not m:
        raise _BadInput(f"--python {python!r}: expected a version like 3.12 or 3.13t")
    sources = {**facts.python.sources, "version": "--python", "free_threaded": "--python"}
    sources["tags"] = "derived from --python"
    info = replace(
        facts.python,
        version=f"3.{m.group(1)}",
        free_threaded=bool(m.group(2)),
        tags=(),  # the planner derives them from the version, OS, arch and glibc
        executable=None,
        sources=sources,
    )
    return replace(facts, python=info)


def run(args: argparse.Namespace) -> int:
    from setup_env.decide import cloudplan
    from setup_env.decide.model import PlanError, PlanOptions
    from setup_env.decide.plan import facts_summary, make_plan
    from setup_env.facts import to_jsonable
    from setup_env.knowledge.matrix import MatrixError, load_matrix
    from setup_env.output import render

    try:
        matrix = load_matrix(args.matrix)
    except MatrixError as exc:
        return _fail(args, _BadInput(str(exc)))
    with_packages = tuple(p.strip() for p in args.with_packages.split(",") if p.strip())
    options = PlanOptions(
        torch=args.torch,
        variant=args.variant,
        with_packages=with_packages,
        channel=args.channel,
        installer=args.installer,
        index_url=args.index_url,
    )
    try:
        facts, label = _facts(args)
        facts, advice = cloudplan.apply(args, facts)
        plan = cloudplan.fit_plan(make_plan(facts, options, matrix), advice)
    except _BadInput as exc:
        return _fail(args, exc)
    except (PlanError, cloudplan.CloudPlanError) as exc:
        return _fail(args, _BadInput(str(exc)))
    if advice is not None and advice.instance_type:
        label = f"{advice.provider} {advice.instance_type}"
    code = ExitCode.CHECK_FAILED if plan.status == "none" else ExitCode.OK
    if args.json:
        payload: dict[str, Any] = {
            **to_jsonable(plan),
            "machine": label,
            "facts": facts_summary(facts),
            "matrix": matrix.summary(),
        }
        if advice is not None:
            payload["cloud"] = {
                **advice.to_dict(),
                "plan_lines": list(advice.plan_lines(plan)),
            }
        print(render.dumps(render.envelope("plan", payload)))
        return int(code)
    style = render.Style(render.use_color(sys.stdout, args.color))
    print(render_text(plan, label, advice, style, args.verbose))
    return int(code)


def render_text(
    plan: Plan, label: str, advice: CloudAdvice | None, style: Any, verbose: int = 0
) -> str:
    out: list[str] = []
    if plan.status == "none":
        out.append(style(f"No PyTorch wheel fits {label}.", "red", "bold"))
    else:
        what = f"torch {plan.torch_version}" if plan.torch_version else "torch (nightly)"
        extra = [str(plan.variant or "")]
        if plan.cuda:
            extra.append(f"CUDA {plan.cuda}")
        where = {
            "pypi": "from PyPI",
            "index": "from PyTorch's index",
            "mirror": "from your mirror",
            "nightly": "from PyTorch's nightly index",
            "jetson": "from NVIDIA's Jetson wheels",
        }.get(plan.source, "")
        head = f"Install {what} ({', '.join(e for e in extra if e)}) {where} for {label}:"
        if plan.status == "fallback":
            head = f"Fallback: {head}"
        out.append(style(head, "yellow" if plan.status == "fallback" else "green", "bold"))
        if plan.config:
            name = (
                "requirements.txt" if plan.argv[-1:] == ("requirements.txt",) else "pyproject.toml"
            )
            out.append(style(f"  # {name}", "dim"))
            out.extend(f"  {line}" for line in plan.config.rstrip("\n").splitlines())
            out.append("")
        out.append("  " + style(f"$ {plan.command}", "bold"))
        if plan.min_driver:
            out.append(style(f"  (needs NVIDIA driver >= {plan.min_driver})", "dim"))
    if plan.reasons:
        out += ["", style("Why", "bold")]
        out += [f"  · {r}" for r in plan.reasons]
    if plan.warnings:
        out += ["", style("Warnings", "bold")]
        out += [f"  {style('!', 'yellow', 'bold')} {w}" for w in plan.warnings]
    if plan.fixes:
        out += ["", style("Fixes", "bold")]
        for f in plan.fixes:
            out.append(f"  {f.rank}. {f.summary}")
            if f.command:
                out.append("     " + style(f"$ {f.command}", "bold"))
    if advice is not None:
        lines = [*advice.lines, *advice.plan_lines(plan)]
        if lines:
            out += ["", style("Cloud", "bold")]
            out += [f"  · {line}" for line in lines]
    if verbose and plan.details:
        out += ["", style("Details", "bold")]
        out += [f"  {k}: {v}" for k, v in plan.details.items()]
    return "\n".join(out)
