"""The fleet report as text, a JSON payload, Markdown, or one self-contained HTML page (inline
CSS and SVG, no script, nothing fetched: it opens from a CI artefact as it is)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from setup_env.decide.fleet import FleetReport, StepStatus
    from setup_env.output.render import Style
    from setup_env.probe.fleet_nodes import Node

HEADERS = ("node", "instance", "GPUs", "driver", "torch", "variant", "verdict", "TFLOP/s")


def _gpus(n: Node) -> str:
    if not n.gpus:
        return "0"
    return f"{len(n.gpus)}x {n.gpu_model}"


def _speed(n: Node) -> str:
    s = n.node_speed
    return f"{s:g}" if s is not None else ""


def rows(report: FleetReport) -> list[tuple[str, ...]]:
    return [
        (
            n.name,
            n.instance_type or "",
            _gpus(n),
            n.driver or "",
            n.torch or "",
            n.variant or "",
            n.state,
            _speed(n),
        )
        for n in report.nodes
    ]


def summary_line(report: FleetReport) -> str:
    n = len(report.nodes)
    failing = len(report.failing)
    errors = sum(1 for i in report.issues if i.severity == "error" and i.kind != "verdict")
    parts = [f"{n} node{'s' if n != 1 else ''}", f"{failing} failing"]
    parts.append(f"{len(report.drift)} drifting field{'s' if len(report.drift) != 1 else ''}")
    parts.append(f"{errors} GPU/node problem{'s' if errors != 1 else ''}")
    if report.bad:
        parts.append(f"{len(report.bad)} unreadable document(s)")
    if report.missing_count:
        parts.append(f"{report.missing_count} of {report.expected_nodes} missing")
    if report.allreduce:
        failed = len(report.allreduce_failed)
        parts.append(f"all-reduce failed on {failed}" if failed else "all-reduce passed")
    if report.unfinished:
        k = len(report.unfinished)
        parts.append(f"{k} step{'s' if k != 1 else ''} not done")
    word = "FLEET OK" if report.ok else "FLEET NEEDS ATTENTION"
    return f"{word}: " + ", ".join(parts)


def step_line(step: StepStatus) -> str:
    """A step the launcher recorded: "all-reduce: failed (exit 1)", "check on pod-3: done"."""
    return f"{step.label}{f' on {step.node}' if step.node else ''}: {step.message}"


def job_lines(report: FleetReport) -> list[str]:
    """What else is wrong with the job as a whole: missing nodes, how it ended."""
    shown = {step_line(s) for s in report.steps}
    out = [p for p in report.problems if p not in shown]
    if report.missing:
        out.insert(0, "no check document from " + ", ".join(report.missing))
    return out


def _has_job(report: FleetReport) -> bool:
    return bool(report.steps or report.allreduce or job_lines(report))


def payload(report: FleetReport) -> dict[str, Any]:
    return {
        "ok": report.ok,
        "summary": summary_line(report),
        "nodes": [
            {
                "name": n.name,
                "path": n.path,
                "state": n.state,
                "verdict": n.verdict,
                "provider": n.provider,
                "instance_type": n.instance_type,
                "gpus": [g.name for g in n.gpus],
                "driver": n.driver,
                "cuda_driver": n.cuda_driver,
                "torch": n.torch,
                "variant": n.variant,
                "torch_cuda": n.torch_cuda,
                "speed_tflops": dict(n.speed),
            }
            for n in report.nodes
        ],
        "drift": [
            {
                "field": d.field,
                "label": d.label,
                "majority": d.majority,
                "values": d.values,
                "odd_nodes": list(d.odd),
            }
            for d in report.drift
        ],
        "issues": [
            {
                "node": i.node,
                "kind": i.kind,
                "severity": i.severity,
                "message": i.message,
                "gpu": i.gpu,
            }
            for i in report.issues
        ],
        "speed": [
            {
                "node": s.node,
                "device": s.device,
                "model": s.model,
                "tflops": s.tflops,
                "median": s.median,
                "ratio": round(s.ratio, 4),
            }
            for s in report.speed
        ],
        "look_first": [
            {"node": name, "score": score, "reasons": list(why)}
            for name, score, why in report.look_first
        ],
        "unreadable": [{"path": b.path, "reason": b.reason} for b in report.bad],
        "expected_nodes": report.expected_nodes,
        "missing_nodes": list(report.missing),
        "missing_count": report.missing_count,
        "steps": [
            {"name": s.name, "state": s.state, "rc": s.rc, "node": s.node, "message": s.message}
            for s in report.steps
        ],
        "allreduce": [
            {"node": r.node, "status": r.status, "message": r.message} for r in report.allreduce
        ],
        "problems": list(report.problems),
    }


def text(report: FleetReport, style: Style, limit: int = 50) -> str:
    from setup_env.output.render import table

    count = f"{len(report.nodes)}"
    if report.expected_nodes is not None and report.expected_nodes != len(report.nodes):
        count += f" of {report.expected_nodes}"
    out = [style(f"setup-env fleet report: {count} nodes", "bold"), ""]
    all_rows = rows(report)
    out.append(table(HEADERS, all_rows[:limit]))
    if len(all_rows) > limit:
        out.append(style(f"(+{len(all_rows) - limit} more nodes: --json or --format html)", "dim"))
    if report.drift:
        out += ["", style("Drift", "bold")]
        for d in report.drift:
            others = ", ".join(
                f"{v} on {len(names)} ({', '.join(names[:5])}{', …' if len(names) > 5 else ''})"
                for v, names in d.values.items()
                if v != d.majority
            )
            out.append(f"  {d.label}: {d.majority} on {len(d.values[d.majority])}; {others}")
    problems = [i for i in report.issues if i.kind != "verdict"]
    if problems:
        out += ["", style("Unhealthy", "bold")]
        for i in problems[:limit]:
            out.append(
                f"  {style.severity(i.severity, i.severity.upper()[:4])} {i.node}: {i.message}"
            )
    if report.bad:
        out += ["", style("Unreadable documents", "bold")]
        out += [f"  {b.path}: {b.reason}" for b in report.bad]
    if _has_job(report):
        out += ["", style("Job", "bold")]
        out += [
            f"  {style.severity('ok', 'ok  ') if s.ok else style.severity('error', 'FAIL')} "
            + step_line(s)
            for s in report.steps
        ]
        failed = report.allreduce_failed
        if failed:
            out += [f"  {style.severity('error', 'FAIL')} all-reduce on {r.node}: {r.message}"
                    for r in failed[:limit]]  # fmt: skip
        elif report.allreduce:
            out.append(f"  all-reduce passed on {len(report.allreduce)} node(s)")
        out += [f"  {style.severity('error', 'FAIL')} {line}" for line in job_lines(report)]
    if report.look_first:
        out += ["", style("Look first", "bold")]
        for name, _score, why in report.look_first[:10]:
            out.append(f"  {name}: {'; '.join(why[:3])}")
    out += ["", style(summary_line(report), "green" if report.ok else "red", "bold")]
    return "\n".join(out)


def markdown(report: FleetReport) -> str:
    from setup_env.output.render_check import md

    icon = "✅" if report.ok else "❌"
    out = ["## setup-env fleet report", "", f"{icon} **{md(summary_line(report))}**", ""]
    if report.look_first:
        out += ["### Look first", ""]
        for name, _score, why in report.look_first[:10]:
            out.append(f"- **{md(name)}**: {md('; '.join(why[:3]))}")
        out.append("")
    if report.drift:
        out += ["### Drift", "", "| field | fleet | odd nodes |", "|---|---|---|"]
        for d in report.drift:
            odd = ", ".join(
                f"{v}: {', '.join(names)}" for v, names in d.values.items() if v != d.majority
            )
            out.append(f"| {md(d.label)} | {md(d.majority)} | {md(odd)} |")
        out.append("")
    if _has_job(report):
        out += ["### Job", ""]
        out += [f"- {'✅' if s.ok else '❌'} {md(step_line(s))}" for s in report.steps]
        out += [f"- ❌ all-reduce on **{md(r.node)}**: {md(r.message)}"
                for r in report.allreduce_failed]  # fmt: skip
        if report.allreduce and not report.allreduce_failed:
            out.append(f"- all-reduce passed on {len(report.allreduce)} node(s)")
        out += [f"- ❌ {md(line)}" for line in job_lines(report)]
        out.append("")
    out += ["### Nodes", "", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    out += ["| " + " | ".join(md(c) for c in r) + " |" for r in rows(report)]
    out.append("")
    problems = [i for i in report.issues if i.kind != "verdict"]
    if problems:
        out += ["### Unhealthy", ""]
        out += [f"- {i.severity}: **{md(i.node)}** {md(i.message)}" for i in problems]
        out.append("")
    return "\n".join(out)


# --- HTML with an inline SVG picture ----------------------------------------------------------


def svg(report: FleetReport, width: int = 900) -> str:
    """Each node's devices as dots at their TFLOP/s relative to the fleet median of their model
    (1.0 = the median); a node row per line, the median as a vertical line, slow dots in red."""
    from setup_env.decide.fleet import SLOW_BELOW

    points = report.speed
    if not points:
        return '<p class="none">No speed measured (run check with verify on the nodes).</p>'
    by_node: dict[str, list[Any]] = {}
    for p in points:
        by_node.setdefault(p.node, []).append(p)
    names = list(by_node)
    row_h, left, right, top = 16, 180, 60, 28
    height = top + row_h * len(names) + 30
    hi = max(1.5, max(p.ratio for p in points) * 1.05)
    plot_w = width - left - right

    def x(ratio: float) -> float:
        return left + plot_w * min(ratio, hi) / hi

    e = html.escape
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="matmul speed of each node and GPU against the fleet median">',
        "<style>text{font:11px sans-serif}.m{stroke:#444;stroke-dasharray:4 3}"
        ".t{stroke:#c00;stroke-dasharray:2 3}</style>",
        f'<text x="{left}" y="14">TFLOP/s relative to the fleet median of the same GPU model '
        f"(dashed: median; red: below {SLOW_BELOW:.0%})</text>",
        f'<line class="m" x1="{x(1.0):.1f}" y1="{top - 6}" x2="{x(1.0):.1f}" y2="{height - 24}"/>',
        f'<line class="t" x1="{x(SLOW_BELOW):.1f}" y1="{top - 6}" x2="{x(SLOW_BELOW):.1f}" '
        f'y2="{height - 24}"/>',
    ]
    for k, name in enumerate(names):
        y = top + row_h * k + row_h / 2
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{e(name)}</text>')
        for p in by_node[name]:
            color = "#c00" if p.ratio < SLOW_BELOW else "#2a7"
            tip = (
                f"{name} {p.device} ({p.model}): {p.tflops:g} TFLOP/s, "
                f"{p.ratio:.0%} of {p.median:g}"
            )
            parts.append(
                f'<circle cx="{x(p.ratio):.1f}" cy="{y:.1f}" r="4" fill="{color}">'
                f"<title>{e(tip)}</title></circle>"
            )
    for tick in (0.0, 0.5, 1.0, 1.5):
        if tick <= hi:
            parts.append(
                f'<text x="{x(tick):.1f}" y="{height - 8}" text-anchor="middle">{tick:.1f}×</text>'
            )
    parts.append("</svg>")
    return "\n".join(parts)


def html_page(report: FleetReport) -> str:
    e = html.escape
    status = "ok" if report.ok else "bad"
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>setup-env fleet report</title>",
        "<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
        ".ok{color:#2a7}.bad{color:#c00}tr.fail td{background:#fee}</style>",
        "</head><body>",
        "<h1>setup-env fleet report</h1>",
        f'<p class="{status}"><b>{e(summary_line(report))}</b></p>',
        "<h2>Speed against the fleet median</h2>",
        svg(report),
    ]
    if _has_job(report):
        body.append("<h2>Job</h2><ul>")
        body += [
            f'<li class="{"ok" if s.ok else "bad"}">{e(step_line(s))}</li>' for s in report.steps
        ]
        body += [
            f'<li class="bad">all-reduce on <b>{e(r.node)}</b>: {e(r.message)}</li>'
            for r in report.allreduce_failed
        ]
        if report.allreduce and not report.allreduce_failed:
            body.append(f'<li class="ok">all-reduce passed on {len(report.allreduce)} node(s)</li>')
        body += [f'<li class="bad">{e(line)}</li>' for line in job_lines(report)]
        body.append("</ul>")
    if report.look_first:
        body.append("<h2>Look first</h2><ol>")
        for name, _score, why in report.look_first[:20]:
            body.append(f"<li><b>{e(name)}</b>: {e('; '.join(why))}</li>")
        body.append("</ol>")
    if report.drift:
        body.append("<h2>Drift</h2><table><tr><th>field</th><th>fleet</th><th>odd</th></tr>")
        for d in report.drift:
            odd = "; ".join(
                f"{v}: {', '.join(names)}" for v, names in d.values.items() if v != d.majority
            )
            body.append(f"<tr><td>{e(d.label)}</td><td>{e(d.majority)}</td><td>{e(odd)}</td></tr>")
        body.append("</table>")
    body.append("<h2>Nodes</h2><table><tr>")
    body += [f"<th>{e(h)}</th>" for h in HEADERS]
    body.append("</tr>")
    for n, r in zip(report.nodes, rows(report)):
        cls = "" if n.state == "ready" else ' class="fail"'
        body.append(f"<tr{cls}>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>")
    body.append("</table>")
    problems = [i for i in report.issues if i.kind != "verdict"]
    if problems:
        body.append("<h2>Unhealthy</h2><ul>")
        body += [f"<li>{e(i.severity)}: <b>{e(i.node)}</b> {e(i.message)}</li>" for i in problems]
        body.append("</ul>")
    body.append("</body></html>")
    return "\n".join(body) + "\n"
