"""One renderer for ``setup-env check``'s :class:`~setup_env.decide.verdict.CheckReport`: text for a
terminal, the JSON envelope, Markdown (a CI page: ``--format markdown``, ``$GITHUB_STEP_SUMMARY``)
and JUnit XML (``--junit FILE``: every stage and every check a testcase).

Pure string building; the command writes the strings where they go.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from setup_env.decide.model import Finding, Plan
    from setup_env.decide.verdict import CheckReport
    from setup_env.facts import Facts
    from setup_env.output.render import Style

_LABEL = {"error": "ERROR", "warning": "WARN ", "info": "INFO "}
_COLOR = {"ready": "green", "action-needed": "yellow", "broken": "red"}
_WORD = {"ready": "READY", "action-needed": "ACTION NEEDED", "broken": "BROKEN"}


def render_findings(
    findings: Sequence[Finding], style: Style, verbose: int = 0, shown_below: Optional[str] = None
) -> str:
    """Findings, most severe first, each with its evidence and the fix (command under it);
    ``shown_below``: a command printed after the findings anyway (check's verdict), not repeated."""
    lines: list[str] = []
    for f in findings:
        label = style.severity(f.severity, _LABEL[f.severity])
        lines.append(f"{label} {f.title}  {style('[' + f.code + ']', 'dim')}")
        for ev in f.evidence if (verbose or f.severity != "info") else f.evidence[:1]:
            lines.append(f"       {style('·', 'dim')} {ev}")
        if f.fix:
            lines.append(f"       fix: {f.fix}")
        if f.command and f.command == shown_below:
            lines.append(f"         {style('(the command at the end)', 'dim')}")
        elif f.command:
            lines.append(f"         {style('$ ' + f.command, 'bold')}")
    return "\n".join(lines)


def machine_lines(
    facts: Facts, plan: Optional[Plan], target: bool = False
) -> list[tuple[str, str]]:
    """(label, value) rows describing the machine judged: OS, GPUs, driver, torch, plan. For a
    ``target`` machine (described, not this one) the CPU named is the target's, not the runner's."""
    rows: list[tuple[str, str]] = []
    os_text = facts.os.distro_name or facts.os.family
    if facts.os.macos_version:
        os_text = f"macOS {facts.os.macos_version}"
    py = facts.python
    arch = (facts.cpu.architecture if target else None) or py.machine or "?"
    rows.append(("machine", f"{os_text}, Python {py.version or 'unknown'} ({arch})"))
    gpus = facts.gpus
    if gpus:
        rows.append(("GPU", ", ".join(f"{g.index}: {g.name}" for g in gpus)))
    elif facts.apple is not None and facts.apple.chip:
        rows.append(("GPU", f"{facts.apple.chip} (MPS)"))
    elif facts.nvidia is not None and facts.nvidia.error_code == "gpu-unexaminable":
        rows.append(("GPU", "NVIDIA, could not be examined (nvidia-smi does not answer)"))
    else:
        rows.append(("GPU", "none"))
    if facts.nvidia is not None and facts.nvidia.driver_version:
        # As NVIDIA writes it (520.61.05): a string from the facts, never a parsed Version.
        rows.append(("driver", f"NVIDIA {facts.nvidia.driver_version}"))
    torch = facts.package("torch")
    rows.append(("torch", torch.version if torch else "not installed"))
    if plan is not None:
        what = f"torch {plan.torch_version} ({plan.variant})" if plan.torch_version else "nothing"
        rows.append(("plan", f"{what} [{plan.status}]"))
    return rows


def text(report: CheckReport, style: Style, verbose: int = 0) -> str:
    from setup_env.decide.summary import headline

    label = report.label
    head = style("setup-env check", "bold")
    if report.target is not None:
        head += f" for {report.target}"
    elif label != "live":
        head += f" ({label})"
    out = [head]
    rows = machine_lines(report.facts, report.plan, report.target is not None)
    out += [f"  {k:<9} {v}" for k, v in rows]
    arches = report.arches
    if arches is not None:
        if arches.arches:
            read = " ".join(arches.arches)
        elif arches.error:
            read = f"unknown ({arches.error})"
        else:
            read = "none: no CUDA kernels in torch/lib"
        out.append(f"  {'arches':<9} {read}")
    verify = report.verify
    if verify is not None:
        c = verify.counts
        out.append(
            f"  verify    {c.get('pass', 0)} passed, {c.get('warn', 0)} warnings, "
            f"{c.get('fail', 0)} failed on {verify.device or '?'} "
            f"({verify.duration_s:.1f}s)"
        )
    advice = report.advice
    if advice is not None and advice.lines:
        out.append(f"  cloud     {advice.provider} {advice.instance_type or ''}".rstrip())
        out += [f"            {line}" for line in advice.lines]
    for r in report.expectations:
        mark = style.severity("ok", "ok") if r.ok else style.severity("error", "FAIL")
        out.append(f"  expect    {mark} {r.expect.text} (has {r.actual or 'none'})")
    out.append("")
    out.append(f"{style('doctor', 'bold')}: {headline(report.findings)}")
    if report.findings:
        out.append(
            render_findings(report.findings, style, verbose, shown_below=report.verdict.command)
        )
    if verify is not None and verify.failed:
        out.append(style("failed checks:", "bold"))
        for check in verify.failed:
            out.append(
                f"  {check.id}: {check.message}" + (f"\n    fix: {check.fix}" if check.fix else "")
            )
    if report.plan_error and verbose:
        out.append(style(f"(no install plan: {report.plan_error})", "dim"))
    out.append("")
    verdict = report.verdict
    color = _COLOR.get(verdict.state, "red")
    # The command goes on its own line, so the verdict line does not repeat it.
    out.append(style(verdict.headline, color, "bold"))
    if verdict.command:
        out.append(f"  $ {verdict.command}")
    return "\n".join(out)


def json_doc(report: CheckReport) -> str:
    from setup_env.output import render

    return render.dumps(render.envelope("check", report.payload()))


# --- Markdown -----------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>|#])")


def md(value: object) -> str:
    """Text safe inside a Markdown table cell or line: no markup, no HTML, no line breaks."""
    return _MD_SPECIAL.sub(r"\\\1", str(value)).replace("\n", " ").replace("\r", " ")


def _code(value: str) -> str:
    ticks = "``" if "`" in value else "`"
    return f"{ticks}{value.replace(chr(10), ' ')}{ticks}"


def markdown(report: CheckReport) -> str:
    """A CI page: the verdict, the machine, the plan, the findings and the verify table."""
    from setup_env.decide.smoke_model import STATUSES

    verdict = report.verdict
    icon = {"ready": "✅", "action-needed": "⚠️", "broken": "❌"}.get(verdict.state, "❌")
    title = "setup-env check" + (f" for {report.target}" if report.target else "")
    out = [f"## {md(title)}", "", f"{icon} **{md(verdict.headline)}**", ""]
    if verdict.command:
        out += ["```sh", verdict.command, "```", ""]
    out += ["| | |", "|---|---|"]
    for k, v in machine_lines(report.facts, report.plan, report.target is not None):
        out.append(f"| {md(k)} | {md(v)} |")
    if report.arches is not None and report.arches.arches:
        out.append(f"| arches | {md(' '.join(report.arches.arches))} |")
    out.append("")
    if report.expectations:
        out += ["### Expectations", "", "| expect | result | has |", "|---|---|---|"]
        for r in report.expectations:
            ok = "pass" if r.ok else "**FAIL**"
            out.append(f"| {_code(r.expect.text)} | {ok} | {md(r.actual or 'none')} |")
        out.append("")
    out += ["### Findings", ""]
    if not report.findings:
        out.append("No problems found.")
    for f in report.findings:
        out.append(f"- **{f.severity}** {md(f.title)} ({_code(f.code)})")
        for ev in f.evidence:
            out.append(f"  - {md(ev)}")
        if f.fix:
            out.append(f"  - fix: {md(f.fix)}")
        if f.command:
            out.append(f"  - run: {_code(f.command)}")
    out.append("")
    verify = report.verify
    out += ["### Verify", ""]
    if verify is None:
        out.append(md(report.verify_skipped or "not run"))
    else:
        c = verify.counts
        tally = ", ".join(f"{c.get(s, 0)} {s}" for s in STATUSES)
        out += [
            f"torch {md(verify.torch_version or '?')} on {md(verify.device or '?')}: {tally} "
            f"in {verify.duration_s:.1f}s",
            "",
            "| check | device | status | time | result |",
            "|---|---|---|---|---|",
        ]
        for ch in verify.checks:
            status = f"**{ch.status}**" if ch.status == "fail" else ch.status
            msg = ch.message.splitlines()[0] if ch.message else ""
            out.append(
                f"| {md(ch.name)} | {md(ch.device or '')} | {status} | "
                f"{ch.duration_s:.2f}s | {md(msg[:120])} |"
            )
    out.append("")
    return "\n".join(out)


# --- JUnit ------------------------------------------------------------------------------------

_BAD_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _x(value: object) -> str:
    return _BAD_XML.sub("", str(value))


def junit(report: CheckReport, hostname: str = "") -> str:
    """Every stage (detect, plan, doctor, verify, verdict), every finding, every expectation and
    every verify check a ``<testcase>``; error findings and failed checks are ``<failure>``s,
    skipped checks ``<skipped>``, warnings pass with the warning in ``<system-out>``.

    One problem is one failed testcase: the stages that sum up others (doctor: its findings;
    verify: its checks; the verdict: everything) report their summary in ``<system-out>`` and
    fail only for what no other testcase shows (verify could not run; a verdict short of ready
    with nothing else failed)."""
    import xml.etree.ElementTree as ET

    cases: list[Any] = []

    def case(
        classname: str,
        name: str,
        failure: Optional[str] = None,
        skipped: Optional[str] = None,
        out: Optional[str] = None,
        seconds: float = 0.0,
    ) -> None:
        el = ET.Element(
            "testcase", {"classname": _x(classname), "name": _x(name), "time": f"{seconds:.3f}"}
        )
        if failure is not None:
            ET.SubElement(el, "failure", {"message": _x(failure.splitlines()[0][:500])}).text = _x(
                failure
            )
        elif skipped is not None:
            ET.SubElement(el, "skipped", {"message": _x(skipped)})
        if out:
            ET.SubElement(el, "system-out").text = _x(out)
        cases.append(el)

    facts = report.facts
    torch = facts.package("torch")
    has = torch.version if torch else "none"
    case("setup-env.check.stage", "detect", out=f"{report.label}; torch {has}")
    if report.plan is None:
        case("setup-env.check.stage", "plan", failure=report.plan_error or "no plan")
    elif report.plan.status == "none":
        case("setup-env.check.stage", "plan", failure="no PyTorch build fits this machine")
    else:
        case(
            "setup-env.check.stage",
            "plan",
            out=f"torch {report.plan.torch_version} ({report.plan.variant}): {report.plan.command}",
        )
    errors = [f for f in report.findings if f.severity == "error"]
    case(
        "setup-env.check.stage",
        "doctor",
        out=f"{len(report.findings)} finding(s), {len(errors)} error(s)"
        + "".join(f"\n{f.severity}: {f.code}" for f in report.findings),
    )
    for f in report.findings:
        detail = "\n".join([f.title, *f.evidence, *([f"fix: {f.fix}"] if f.fix else [])])
        if f.command:
            detail += f"\n$ {f.command}"
        if f.severity == "error":
            case("setup-env.check.doctor", f.code, failure=detail)
        else:
            case("setup-env.check.doctor", f.code, out=f"{f.severity}: {detail}")
    for r in report.expectations:
        case(
            "setup-env.check.expect",
            r.expect.text,
            failure=None if r.ok else f"expected {r.expect.text}, has {r.actual or 'none'}",
            out=f"has {r.actual or 'none'}",
        )
    verify = report.verify
    if verify is None:
        case("setup-env.check.stage", "verify", skipped=report.verify_skipped or "not run")
    else:
        case(
            "setup-env.check.stage",
            "verify",
            failure=verify.error or None,  # the checks' own failures are their testcases
            out=f"{len(verify.checks)} check(s), {len(verify.failed)} failed",
            seconds=verify.duration_s,
        )
        for c in verify.checks:
            fail = None
            if c.status == "fail":
                fail = c.message + (f"\nfix: {c.fix}" if c.fix else "")
            case(
                "setup-env.check.verify",
                c.id,
                failure=fail,
                skipped=(c.message or "skipped") if c.status == "skip" else None,
                out=f"warning: {c.message}" if c.status == "warn" else None,
                seconds=c.duration_s,
            )
    v = report.verdict
    failures = sum(1 for c in cases if c.find("failure") is not None)
    alone = v.state != "ready" and failures == 0  # not ready, and no testcase said why
    case("setup-env.check.stage", "verdict", failure=v.line if alone else None, out=v.line)
    failures += alone
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    attrs = {
        "name": "setup-env check",
        "tests": str(len(cases)),
        "failures": str(failures),
        "errors": "0",
        "skipped": str(skipped),
        "time": f"{verify.duration_s if verify else 0.0:.3f}",
    }
    # The strict schema (Jenkins' junit-10.xsd) allows "skipped" on <testsuite> only.
    root = ET.Element("testsuites", {k: v for k, v in attrs.items() if k != "skipped"})
    suite = ET.SubElement(root, "testsuite", {**attrs, "hostname": _x(hostname)})
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("machine", report.label),
        ("target", report.target or ""),
        ("torch", torch.version if torch else ""),
        ("verdict", v.state),
    ):
        ET.SubElement(props, "property", {"name": name, "value": _x(value)})
    suite.extend(cases)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
