"""`setup-env diagnose FILE|-`: read a pasted ``python -m torch.utils.collect_env`` report, say
what is wrong and which install command fixes it.

Exit codes: 0 no error-level finding; 1 at least one; 2 the input can't be read or is not a
collect_env report.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Optional

from setup_env.exitcodes import ExitCode

if TYPE_CHECKING:
    from collections.abc import Sequence

    from setup_env.decide.assume import Assumed
    from setup_env.decide.causes import Keep, Route
    from setup_env.decide.model import Finding, Plan
    from setup_env.output.render import Style
    from setup_env.probe.report import Report

# A collect_env report is a few KiB and a whole issue thread still small; the cap keeps a 4 MB
# paste (issue 18: read in under 2 s, whatever its shape) with room for it as UTF-16, which
# PowerShell's ">" writes (two bytes a character).
MAX_BYTES = 8 * 1024 * 1024


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from setup_env.commands._help import epilog

    epilog(
        parser,
        "0 no error-level finding; 1 at least one; 2 bad options, or the input can't be read\n"
        "or is not a collect_env report.",
        "  setup-env diagnose report.txt\n  pbpaste | setup-env diagnose -",
    )
    parser.add_argument(
        "file",
        metavar="FILE",
        help="the report (markdown fences, <details>, quoting and prompts are fine); - for stdin",
    )


def _read(path: str) -> str:
    """The report's text from ``path`` or standard input (``-``), through ``bounded``: a
    regular file or the input's stream, at most MAX_BYTES. ValueError (one line) otherwise."""
    from setup_env import bounded
    from setup_env.probe.report import decode

    try:
        data = bounded.read_stdin(MAX_BYTES) if path == "-" else bounded.read_file(path, MAX_BYTES)
    except bounded.ReadFailed as exc:
        if exc.kind == "too-large":
            raise ValueError(
                f"input is larger than {MAX_BYTES // 2**20} MiB; paste only the report"
            ) from None
        if exc.kind == "missing" and exc.detail == "no such file":
            raise ValueError("No such file or directory") from None  # the words open() used
        raise ValueError(exc.detail or exc.kind) from None
    # UTF-16 (with or without a BOM) and UTF-8 with a BOM are text; NULs left after decoding
    # are not.
    text = decode(data)
    if "\x00" in text[:4096]:
        raise ValueError("input is binary, not a text report")
    return text


# What a plan needs from a report: without these the planner would guess (a report cut before its
# GPU lines is not a machine without a GPU).
_PLAN_NEEDS = ("os", "python", "gpus")
_MISSING_WORDS = {
    "torch": "the PyTorch version",
    "os": "the OS",
    "python": "the Python version",
    "gpus": "the GPU list",
    "driver": "the NVIDIA driver version",
}


def _jetson_plan(plan: Plan) -> bool:
    """A plan from the Jetson planner (setup_env/decide/jetsonplan.py)."""
    return plan.source == "jetson" or plan.details.get("route") == "jetson"


def missing_text(report: Report) -> str:
    return ", ".join(_MISSING_WORDS.get(m, m) for m in report.missing)


def report_findings(report: Report, findings: tuple[Finding, ...]) -> list[Finding]:
    """What only the report shows (torch's own verdict on CUDA), beyond the doctor's findings."""
    from setup_env.decide.model import Finding

    out: list[Finding] = []
    facts = report.facts
    torch = facts.package("torch")
    gpus = facts.nvidia.gpus if facts.nvidia else ()
    if (
        report.cuda_available is False
        and torch is not None
        and (torch.cuda or (torch.variant is not None and torch.variant.is_cuda))
        and gpus
    ):
        explained = [f.code for f in findings if f.severity == "error"]
        out.append(
            Finding(
                "torch-cuda-unavailable",
                "error",
                f"torch {torch.version} is a CUDA build, yet it reported CUDA as unavailable",
                evidence=(
                    "Is CUDA available: False",
                    f"GPU: {', '.join(g.name for g in gpus)}",
                ),
                fix=(
                    "see " + ", ".join(explained)
                    if explained
                    else "check the driver (`nvidia-smi`), CUDA_VISIBLE_DEVICES, and that the "
                    "process can open /dev/nvidia*"
                ),
            )
        )
    if (
        report.xpu_available is False
        and torch is not None
        and torch.variant is not None
        and str(torch.variant) == "xpu"
    ):
        explained = [f.code for f in findings if f.severity == "error"]
        windows = facts.os.family == "windows"
        out.append(
            Finding(
                "torch-xpu-unavailable",
                "error",
                f"torch {torch.version} is an XPU build, yet it reported XPU as unavailable",
                evidence=(
                    f"torch {torch.version} ({torch.source or 'the report'})",
                    "Is XPU available: False [collect_env:Is XPU available]",
                ),
                fix=(
                    "see " + ", ".join(explained)
                    if explained
                    else (
                        "install Intel's Arc & Iris Xe graphics driver (intel.com), then reopen "
                        "the terminal"
                        if windows
                        else "install Intel's GPU compute runtime (intel-opencl-icd, libze1 / "
                        "level-zero: dgpu-docs.intel.com) and let the user open the GPU "
                        "(`sudo usermod -aG render $USER`, then log in again)"
                    )
                ),
            )
        )
    if report.truncated:
        out.append(
            Finding(
                "report-truncated",
                "info",
                "the report is partial: it stops before its library list ends",
                evidence=("what follows the cut (libraries, conda packages) is unknown",),
            )
        )
    return out


def _describe(report: Report) -> list[str]:
    f = report.facts
    torch = f.package("torch")
    lines = []
    if torch is not None:
        build = torch.variant or ("CUDA " + torch.cuda if torch.cuda else "unknown build")
        lines.append(f"torch      {torch.version} ({build})")
    elif "torch" in report.missing:
        lines.append("torch      not in the report")
    else:
        lines.append("torch      not installed")
    used = report.planning or f
    os_text = f.os.distro_name or (f.os.family if f.os.family != "other" else "not in the report")
    if f.os.family == "other" and used.os.family != "other":
        # Not in the paste: what it implies (inferred) or what was assumed, with why.
        os_text = f"{used.os.family} ({used.os.sources.get('family', 'inferred')})"
    if f.os.macos_version:
        os_text = f"macOS {f.os.macos_version}"
    if f.os.wsl:
        os_text += f" (WSL{f.os.wsl})"
    lines.append(f"OS         {os_text}" + (f", glibc {f.os.glibc}" if f.os.glibc else ""))
    if f.python.version:
        lines.append(f"Python     {f.python.version} {f.python.machine}".rstrip())
    elif used.python.version:
        why = used.python.sources.get("version", "inferred")
        lines.append(f"Python     {used.python.version} ({why})")
    gpus = f.gpus
    if gpus:
        names: dict[str, int] = {}
        for g in gpus:
            names[g.name] = names.get(g.name, 0) + 1
        listed = ", ".join(f"{n}x {name}" if n > 1 else name for name, n in names.items())
        lines.append(f"GPU        {listed}")
    if f.nvidia and f.nvidia.driver_version:
        lines.append(f"driver     NVIDIA {f.nvidia.driver_version}")
    if f.rocm and f.rocm.version:
        lines.append(f"ROCm       HIP {f.rocm.version}")
    if f.xpu and f.xpu.driver_version:
        lines.append(f"driver     Intel {f.xpu.driver_version}")
    if report.cuda_available is not None:
        lines.append(f"CUDA usable by torch: {'yes' if report.cuda_available else 'no'}")
    if report.xpu_available is not None:
        lines.append(f"XPU usable by torch: {'yes' if report.xpu_available else 'no'}")
    return lines


def render_text(
    report: Report,
    findings: tuple[Finding, ...],
    plan: Optional[Plan],
    style: Style,
    verbose: int = 0,
    road: Optional[Route] = None,
    keep: Optional[Keep] = None,
    assumed: Sequence[Assumed] = (),
) -> str:
    from setup_env.decide.summary import headline
    from setup_env.output.render_check import render_findings

    out = [style("The report says:", "bold")]
    out += ["  " + line for line in _describe(report)]
    inferred = [
        e
        for e in report.evidence
        if e.source.startswith("inferred:") and e.fact not in ("os", "python")
    ]
    for e in inferred:
        out.append(
            "  "
            + f"{e.fact:<10} {e.value} "
            + style(f"({e.source.split(':', 1)[1].strip()})", "dim")
        )
    if report.missing:
        out.append("  " + style("not in the report: " + missing_text(report), "dim"))
    out.append("")
    out.append(f"{style('Diagnosis', 'bold')}: {headline(findings)}")
    if findings:
        out.append(render_findings(findings, style, verbose))
    if keep is not None:
        # The as-is answer: the working GPU build stays (a CPU build is never offered over it).
        out.append("")
        out.append(f"{style('As is', 'bold')}: {keep.summary}")
        for line in keep.evidence[: 3 if verbose else 1]:
            out.append(f"  {style(line, 'dim')}")
        if keep.planned:
            out.append(
                "  "
                + style(
                    "no newer GPU build fits this machine without a change"
                    + (
                        f"; the plan's {keep.replaced} is not offered over a working GPU build"
                        if keep.replaced
                        else ""
                    ),
                    "dim",
                )
            )
    elif plan is not None and plan.command:
        out.append("")
        label = (
            "Install command for this machine"
            if plan.status == "ok"
            else (f"Best install command ({plan.status})")
        )
        out.append(f"{style(label, 'bold')}:")
        out.append(f"  {style('$ ' + plan.command, 'bold')}")
        for reason in plan.reasons[: 3 if verbose else 1]:
            out.append(f"  {style(reason, 'dim')}")
        if "driver-absent" in plan.warning_codes:
            out.append(
                "  "
                + style(
                    "depends on the NVIDIA driver"
                    + (f" (>= {plan.min_driver})" if plan.min_driver else "")
                    + ": install or load it first (see driver-missing)",
                    "bold",
                )
            )
    if assumed:
        out.append("")
        out.append(style("Assumed", "bold") + " (the report does not say):")
        for a in assumed:
            out.append(f"  - {a.value}: {style(a.why, 'dim')}")
            out.append(f"    if {a.alternative}: " + ("the same answer" if a.same else a.changes))
    if road is not None:
        out.append("")
        out.append(style(f"The route to torch {road.torch}+{road.variant}:", "bold"))
        for i, st in enumerate(road.steps, 1):
            out.append(f"  {i}. {st.summary}")
    elif plan is not None and plan.fixes and not plan.command:
        out.append("")
        out.append(style("No PyTorch build fits as reported; ranked ways out:", "bold"))
        for fx in plan.fixes:
            out.append(
                f"  {fx.rank}. {fx.summary}" + (f"\n     $ {fx.command}" if fx.command else "")
            )
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from setup_env.decide import causes
    from setup_env.decide.doctor import examine
    from setup_env.decide.summary import counts, finding_json, plan_json, safe_plan
    from setup_env.knowledge.matrix import in_use
    from setup_env.output import render
    from setup_env.probe.report import CollectEnvError, parse

    try:
        text = _read(args.file)
        report = parse(text)
    except (OSError, ValueError, CollectEnvError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        name = "stdin" if args.file == "-" else args.file
        return render.fail("diagnose", "bad-input", f"{name}: {reason}", ExitCode.USAGE, args.json)
    facts = report.planning or report.facts
    # The planning facts fill what the paste lacks by inference or a stated assumption
    # (probe/report/infer.py); a plan is refused only where even that leaves the OS unknown.
    lacking = [m for m in report.missing if m in _PLAN_NEEDS]
    unsettled = facts.os.family == "other" or not facts.python.version
    torch_pkg = facts.package("torch")
    # An unknown torch build (a source build that names no CUDA, ROCm or XPU toolchain) whose
    # report predates collect_env's Intel GPU lines: an Intel GPU is as likely as none.
    intel_open = (
        "gpus" in report.missing
        and not facts.gpus
        and torch_pkg is not None
        and torch_pkg.variant is None
    )
    plan_error: Optional[str]
    if intel_open:
        plan, plan_error = (
            None,
            f"torch {torch_pkg.version} is a build collect_env cannot name (no CUDA, ROCm or "  # type: ignore[union-attr]
            "XPU toolchain line), and this report has no Intel GPU lines: `Is XPU available:` "
            "or `Intel GPU models detected:` would decide between the xpu and the CPU build",
        )
    elif unsettled:
        plan, plan_error = (
            None,
            "the report lacks "
            + ", ".join(_MISSING_WORDS[m] for m in lacking)
            + " and nothing in it settles them: its `OS:` line (or a site-packages path) and "
            "its `PyTorch version:` line would decide the install command",
        )
    else:
        plan, plan_error = safe_plan(facts)
    if plan is not None and causes.is_jetson(report.facts) and not _jetson_plan(plan):
        # PyPI's and download.pytorch.org's aarch64 wheels do not drive a Jetson's GPU.
        plan, plan_error = (
            None,
            "on a Jetson, torch comes from NVIDIA's JetPack builds, not from PyPI or "
            "download.pytorch.org (see jetson-desktop-wheel)",
        )
    matrix = in_use()
    findings = examine(facts, plan, matrix)
    if "torch" in report.missing:
        # No "PyTorch version" line in the paste is not "torch is not installed".
        findings = tuple(f for f in findings if f.code != "torch-not-installed")
    findings = causes.rank(
        findings
        + tuple(report_findings(report, findings))
        + tuple(causes.library_findings(facts, report.libraries))
    )
    road = causes.route(facts, plan, matrix) if not (unsettled or intel_open) else None
    keep = causes.keep_installed(
        facts,
        plan,
        findings,
        {
            "cuda": report.cuda_available,
            "rocm": report.cuda_available,  # a HIP build answers torch.cuda.is_available()
            "xpu": report.xpu_available,
        },
    )
    if keep is not None and plan is not None:
        plan_error = (
            f"not offered: {keep.summary}, and no newer GPU build fits without a change"
            + (f" (the plan's {keep.replaced})" if keep.replaced else "")
        )
        plan = None
    from setup_env.decide.assume import alternatives

    assumed = (
        alternatives(facts, report.assumptions, plan, matrix, lambda f: safe_plan(f)[0])
        if plan is not None or keep is not None
        else ()
    )
    # No sound answer: the OS the wheel is for is only assumed (nothing in the paste names it), or
    # nothing says whether there is a GPU at all. The plan for the assumed values and the other
    # answer are said, with the line that would decide; no install command is offered.
    open_os = next((a for a in assumed if a.fact == "os"), None)
    open_gpu = next((a for a in assumed if a.fact == "gpus" and a.value == "no GPU"), None)
    if plan is not None and plan.command and (open_os or open_gpu):
        from setup_env.decide.assume import answer

        line = (
            "its `OS:` line (or `Python platform:`)"
            if open_os
            else "its `GPU models and configuration:` line"
        )
        what = open_os or open_gpu
        plan_error = (
            f"the report does not settle {'the OS' if open_os else 'whether there is a GPU'}: "
            f"{line} would decide. As assumed ({what.value}): {answer(plan)}; "  # type: ignore[union-attr]
            f"if {what.alternative}: {what.changes}"  # type: ignore[union-attr]
        )
        plan, road = None, None
        unsettled = True
    code = ExitCode.CHECK_FAILED if any(f.severity == "error" for f in findings) else ExitCode.OK
    if args.json:
        payload = {
            "ok": code == ExitCode.OK,
            "report": {
                "cuda_available": report.cuda_available,
                "xpu_available": report.xpu_available,
                "debug_build": report.debug_build,
                "truncated": report.truncated,
                "layout": report.layout,
                "missing": list(report.missing),
                "messages": [{"kind": m.kind, "text": m.text} for m in report.warnings],
            },
            "facts": report.facts,
            "evidence": [
                {"fact": e.fact, "value": e.value, "source": e.source} for e in report.evidence
            ],
            "assumptions": [
                {
                    "fact": a.fact,
                    "value": a.value,
                    "why": a.why,
                    "if_wrong": a.alternative,
                    "answer_if_wrong": a.changes,
                    "changes_answer": not a.same,
                }
                for a in assumed
            ],
            "counts": counts(findings),
            "findings": [finding_json(f) for f in findings],
            "plan": plan_json(plan),
            "plan_error": plan_error,
            # What the plan needs before it works: the NVIDIA driver it waits for.
            "plan_depends_on": (
                [f"nvidia-driver>={plan.min_driver}" if plan.min_driver else "nvidia-driver"]
                if plan is not None and "driver-absent" in plan.warning_codes
                else []
            ),
            "keep": None
            if keep is None
            else {
                "torch": keep.torch,
                "variant": None if keep.variant is None else str(keep.variant),
                "device": keep.device,
                "gpus": list(keep.gpus),
                "summary": keep.summary,
                "evidence": list(keep.evidence),
                "replaced": keep.replaced,
                "planned": keep.planned,
            },
            "route": None
            if road is None
            else {
                "steps": [{"kind": st.kind, "summary": st.summary} for st in road.steps],
                "torch": road.torch,
                "variant": str(road.variant),
            },
        }
        print(render.dumps(render.envelope("diagnose", payload)))
        return int(code)
    style = render.Style(render.use_color(sys.stdout, args.color))
    print(render_text(report, findings, plan, style, args.verbose, road, keep, assumed))
    if (
        plan_error
        and (args.verbose or unsettled or intel_open)
        and not (keep is not None and keep.planned)
    ):
        print(style(f"(no install plan: {plan_error})", "dim"))
    return int(code)
