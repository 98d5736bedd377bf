"""The fleet report as text, a JSON payload, Markdown, or one self-contained HTML page (inline
CSS and SVG, no script, nothing fetched: it opens from a CI artefact as it is).

Every list is whole or ends "+N more" (the JSON has all of it): a report reads at a glance at any
size. The HTML shows what to look at first before any chart, and past ``NODE_ROWS_UP_TO`` nodes
a histogram per pool (its slow nodes named) instead of a row per node; its size does not grow
with the fleet past the lists' caps (10,000 nodes: well under 2 MB).

The strings in a report are printable already (``probe.fleet_nodes`` escapes what it reads);
here they are escaped for the format: HTML entities, Markdown's markup characters.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence

    from setup_env.decide.fleet import Drift, FleetReport, SpeedPoint, StepStatus
    from setup_env.output.render import Style
    from setup_env.probe.fleet_nodes import Node

HEADERS = ("node", "instance", "GPUs", "driver", "torch", "variant", "verdict", "TFLOP/s")
POOL_HEADERS = ("pool", "nodes", "to look at", "driver", "torch", "median TFLOP/s")
# Past this many nodes the HTML draws a histogram per pool, not a row of dots per node.
NODE_ROWS_UP_TO = 100
ALL = "--json lists every one"


def more(count: int, what: str) -> str:
    """ "+3 more nodes (--json lists every one)"."""
    return f"+{count} more {what} ({ALL})"


def ordered_nodes(report: FleetReport) -> list[Node]:
    """The nodes to look at first in their order, then the others by name: what a list cut
    short shows."""
    by_name = {n.name: n for n in report.nodes}
    first = [by_name[f.node] for f in report.look_first if f.node in by_name]
    seen = {n.name for n in first}
    return first + [n for n in report.nodes if n.name not in seen]


def _cut(names: Sequence[str], limit: int) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f", +{len(names) - limit} more" if len(names) > limit else "")


def drift_others(d: Drift, values: int = 5, names: int = 5) -> str:
    """The odd values of a drift and their nodes, cut: "550.54.15 on 2 (a, b); +3 more values"."""
    odd = [(v, ns) for v, ns in d.values.items() if v != d.majority]
    parts = [f"{v} on {len(ns)} ({_cut(ns, names)})" for v, ns in odd[:values]]
    if len(odd) > values:
        parts.append(f"+{len(odd) - values} more values")
    return "; ".join(parts)


def severity_counts(report: FleetReport) -> str:
    """How many nodes have each worst finding: "1 broken, 2 ecc, 40 drift"."""
    from collections import Counter

    from setup_env.decide.fleet import SEVERITY

    counts = Counter(f.severity for f in report.look_first)
    parts = [f"{counts[name]} {name}" for name, _w, _says in SEVERITY if counts[name]]
    return "worst finding per node: " + ", ".join(parts)


def _pool_rows(report: FleetReport) -> list[tuple[str, ...]]:
    from collections import Counter

    by_name = {n.name: n for n in report.nodes}
    flagged = {f.node for f in report.look_first}
    medians: dict[str, list[float]] = {}
    for p in report.speed:
        medians.setdefault(p.pool, []).append(p.median)
    out: list[tuple[str, ...]] = []
    for pool in report.pools:
        members = [by_name[m] for m in pool.nodes if m in by_name]

        def common(values: list[str]) -> str:
            if not values:
                return ""
            (top, k), *rest = Counter(values).most_common()
            return top if not rest else f"{top} ({k} of {len(values)})"

        med = sorted(set(medians.get(pool.label, [])))
        out.append(
            (
                pool.label,
                str(len(pool.nodes)),
                str(sum(1 for m in pool.nodes if m in flagged)),
                common([m.driver or "(none)" for m in members]),
                common([m.torch or "(none)" for m in members]),
                ", ".join(f"{v:g}" for v in med[:3]),
            )
        )
    return out


def _gpus(n: Node) -> str:
    if not n.gpus:
        return "0"
    return f"{len(n.gpus)}x {n.gpu_model}"


def _speed(n: Node) -> str:
    s = n.node_speed
    return f"{s:g}" if s is not None else ""


def rows(report: FleetReport, nodes: Sequence[Node] | None = None) -> list[tuple[str, ...]]:
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
        for n in (report.nodes if nodes is None else nodes)
    ]


def summary_line(report: FleetReport) -> str:
    n = len(report.nodes)
    failing = len(report.failing)
    errors = sum(1 for i in report.issues if i.severity == "error" and i.kind != "verdict")
    parts = [f"{n} node{'s' if n != 1 else ''}"]
    if len(report.pools) > 1:
        parts[0] += f" in {len(report.pools)} pools"
    parts.append(f"{failing} failing")
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


def job_cut(report: FleetReport, limit: int) -> tuple[list[StepStatus], list[str], list[str]]:
    """The steps (those not done first) and the job's other lines, each cut at ``limit``, and
    the "+N more" lines for what was cut (a Kubernetes job records two steps per pod)."""
    steps = sorted(report.steps, key=lambda st: st.ok)  # stable: the launcher's order kept
    lines = job_lines(report)
    extra = []
    if len(steps) > limit:
        extra.append(more(len(steps) - limit, "steps"))
    if len(lines) > limit:
        extra.append(more(len(lines) - limit, "job problems"))
    return steps[:limit], lines[:limit], extra


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
        "pools": [
            {"label": p.label, "vendor": p.vendor, "nodes": list(p.nodes)} for p in report.pools
        ],
        "drift": [
            {
                "field": d.field,
                "label": d.label,
                "pool": d.pool,
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
                "pool": s.pool,
            }
            for s in report.speed
        ],
        "look_first": [
            {
                "node": f.node,
                "pool": f.pool,
                "severity": f.severity,
                "score": f.score,
                "reasons": list(f.reasons),
            }
            for f in report.look_first
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
    cut = len(report.nodes) > limit
    out.append(table(HEADERS, rows(report, ordered_nodes(report)[:limit] if cut else None)))
    if cut:
        out.append(style(f"({more(len(report.nodes) - limit, 'nodes')}; first: to look at)", "dim"))
    if len(report.pools) > 1:
        out += ["", style("Pools", "bold")]
        out.append(table(POOL_HEADERS, _pool_rows(report)[:limit]))
        if len(report.pools) > limit:
            out.append(style(f"({more(len(report.pools) - limit, 'pools')})", "dim"))
    if report.drift:
        out += ["", style("Drift (within each pool)", "bold")]
        for d in report.drift[:limit]:
            pool = f" [{d.pool}]" if len(report.pools) > 1 else ""
            n = len(d.values[d.majority])
            out.append(f"  {d.label}{pool}: {d.majority} on {n}; {drift_others(d)}")
        if len(report.drift) > limit:
            out.append(f"  {more(len(report.drift) - limit, 'drifting fields')}")
    problems = [i for i in report.issues if i.kind != "verdict"]
    if problems:
        out += ["", style("Unhealthy", "bold")]
        for i in problems[:limit]:
            out.append(
                f"  {style.severity(i.severity, i.severity.upper()[:4])} {i.node}: {i.message}"
            )
        if len(problems) > limit:
            out.append(f"  {more(len(problems) - limit, 'problems')}")
    if report.bad:
        out += ["", style("Unreadable documents", "bold")]
        out += [f"  {b.path}: {b.reason}" for b in report.bad[:limit]]
        if len(report.bad) > limit:
            out.append(f"  {more(len(report.bad) - limit, 'unreadable documents')}")
    if _has_job(report):
        out += ["", style("Job", "bold")]
        steps, lines, extra = job_cut(report, limit)
        out += [
            f"  {style.severity('ok', 'ok  ') if s.ok else style.severity('error', 'FAIL')} "
            + step_line(s)
            for s in steps
        ]
        failed = report.allreduce_failed
        if failed:
            out += [f"  {style.severity('error', 'FAIL')} all-reduce on {r.node}: {r.message}"
                    for r in failed[:limit]]  # fmt: skip
            if len(failed) > limit:
                out.append(f"  {more(len(failed) - limit, 'failed all-reduces')}")
        elif report.allreduce:
            out.append(f"  all-reduce passed on {len(report.allreduce)} node(s)")
        out += [f"  {style.severity('error', 'FAIL')} {line}" for line in lines]
        out += [f"  {line}" for line in extra]
    if report.look_first:
        first = report.look_first
        out += [
            "",
            style(f"Look first ({len(first)} node{'s' if len(first) != 1 else ''})", "bold"),
        ]
        out += [f"  {f.node}: {_reasons(f.reasons)}" for f in first[:LOOK_FIRST_TEXT]]
        if len(first) > LOOK_FIRST_TEXT:
            out.append(f"  {more(len(first) - LOOK_FIRST_TEXT, 'nodes')}")
            out.append(f"  {severity_counts(report)}")
    out += ["", style(summary_line(report), "green" if report.ok else "red", "bold")]
    return "\n".join(out)


LOOK_FIRST_TEXT = 15
MD_LIMIT = 100


def _reasons(reasons: Sequence[str], limit: int = 3) -> str:
    extra = len(reasons) - limit
    return "; ".join(reasons[:limit]) + (f"; +{extra} more" if extra > 0 else "")


def markdown(report: FleetReport) -> str:
    """A CI page (a GitHub job summary holds 1 MiB): every list cut at ``MD_LIMIT`` or fewer."""
    from setup_env.output.render_check import md

    icon = "✅" if report.ok else "❌"
    out = ["## setup-env fleet report", "", f"{icon} **{md(summary_line(report))}**", ""]
    if report.look_first:
        first = report.look_first
        out += [f"### Look first ({len(first)})", ""]
        if len(first) > LOOK_FIRST_TEXT:
            out += [md(severity_counts(report)), ""]
        for f in first[:LOOK_FIRST_TEXT]:
            out.append(f"- **{md(f.node)}** ({md(f.severity)}): {md(_reasons(f.reasons))}")
        if len(first) > LOOK_FIRST_TEXT:
            out.append(f"- {md(more(len(first) - LOOK_FIRST_TEXT, 'nodes'))}")
        out.append("")
    if report.bad:
        out += [f"### Unreadable documents ({len(report.bad)})", ""]
        out += [f"- `{md(b.path)}`: {md(b.reason)}" for b in report.bad[:MD_LIMIT]]
        if len(report.bad) > MD_LIMIT:
            out.append(f"- {md(more(len(report.bad) - MD_LIMIT, 'unreadable documents'))}")
        out.append("")
    if _has_job(report):
        out += ["### Job", ""]
        steps, lines, extra = job_cut(report, MD_LIMIT)
        out += [f"- {'✅' if s.ok else '❌'} {md(step_line(s))}" for s in steps]
        failed = report.allreduce_failed
        out += [f"- ❌ all-reduce on **{md(r.node)}**: {md(r.message)}"
                for r in failed[:MD_LIMIT]]  # fmt: skip
        if len(failed) > MD_LIMIT:
            out.append(f"- ❌ {md(more(len(failed) - MD_LIMIT, 'failed all-reduces'))}")
        if report.allreduce and not report.allreduce_failed:
            out.append(f"- all-reduce passed on {len(report.allreduce)} node(s)")
        out += [f"- ❌ {md(line)}" for line in lines]
        out += [f"- {md(line)}" for line in extra]
        out.append("")
    if len(report.pools) > 1:
        out += ["### Pools", "", "| " + " | ".join(POOL_HEADERS) + " |"]
        out.append("|" + "---|" * len(POOL_HEADERS))
        out += ["| " + " | ".join(md(c) for c in r) + " |" for r in _pool_rows(report)[:MD_LIMIT]]
        if len(report.pools) > MD_LIMIT:
            out.append(f"\n{md(more(len(report.pools) - MD_LIMIT, 'pools'))}")
        out.append("")
    if report.drift:
        out += ["### Drift (within each pool)", "", "| pool | field | pool's | odd nodes |"]
        out.append("|---|---|---|---|")
        for d in report.drift[:MD_LIMIT]:
            out.append(
                f"| {md(d.pool)} | {md(d.label)} | {md(d.majority)} | {md(drift_others(d))} |"
            )
        if len(report.drift) > MD_LIMIT:
            out.append(f"\n{md(more(len(report.drift) - MD_LIMIT, 'drifting fields'))}")
        out.append("")
    cut = len(report.nodes) > MD_LIMIT
    out += ["### Nodes", "", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    shown = rows(report, ordered_nodes(report)[:MD_LIMIT] if cut else None)
    out += ["| " + " | ".join(md(c) for c in r) + " |" for r in shown]
    if cut:
        out.append(f"\n{md(more(len(report.nodes) - MD_LIMIT, 'nodes'))}; first: to look at")
    out.append("")
    problems = [i for i in report.issues if i.kind != "verdict"]
    if problems:
        out += [f"### Unhealthy ({len(problems)})", ""]
        out += [f"- {i.severity}: **{md(i.node)}** {md(i.message)}" for i in problems[:MD_LIMIT]]
        if len(problems) > MD_LIMIT:
            out.append(f"- {md(more(len(problems) - MD_LIMIT, 'problems'))}")
        out.append("")
    return "\n".join(out)


# --- HTML with an inline SVG picture ----------------------------------------------------------


def svg(report: FleetReport, width: int = 900) -> str:
    """Each node's devices as dots at their TFLOP/s relative to the median of their model in
    their pool (1.0 = the median); a node row per line, the median as a vertical line, slow dots
    in red. For up to ``NODE_ROWS_UP_TO`` nodes; past that, :func:`pool_histograms`."""
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
        f'<text x="{left}" y="14">TFLOP/s relative to the median of the same GPU model in the pool '
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


def pool_histograms(report: FleetReport, width: int = 900, pools_limit: int = 20) -> str:
    """Per pool (and GPU model), how many devices run at each speed relative to the pool's
    median: a histogram of 5% bins, bins under ``SLOW_BELOW`` red, the slow nodes named under
    it. Its size follows the pools, not the nodes."""
    from setup_env.decide.fleet import SLOW_BELOW

    groups: dict[tuple[str, str], list[SpeedPoint]] = {}
    for p in report.speed:
        groups.setdefault((p.pool, p.model), []).append(p)
    if not groups:
        return '<p class="none">No speed measured (run check with verify on the nodes).</p>'
    e = html.escape
    order = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    out: list[str] = []
    step, hi = 0.05, 1.5
    nbins = round(hi / step) + 1  # the last bin: 1.5x and above
    left, right, top, plot_h = 50, 20, 24, 80
    plot_w = width - left - right
    bar_w = plot_w / nbins
    for (pool, model), points in order[:pools_limit]:
        counts = [0] * nbins
        for p in points:
            counts[min(int(p.ratio / step), nbins - 1)] += 1
        peak = max(counts)
        height = top + plot_h + 24
        title = f"{pool}" + (f" / {model}" if model not in pool else "")
        med = points[0].median
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{e(title)}: devices by speed against the pool median">',
            f'<text x="{left}" y="14">{e(title)}: {len(points)} device(s), median {med:g} '
            "TFLOP/s</text>",
        ]
        for k, c in enumerate(counts):
            if not c:
                continue
            h = plot_h * c / peak
            x = left + bar_w * k
            color = "#c00" if (k + 1) * step <= SLOW_BELOW + 1e-9 else "#2a7"
            lo = k * step
            span = f"{lo:.2f}-{lo + step:.2f}x" if k < nbins - 1 else f">= {lo:.2f}x"
            parts.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 1:.1f}" '
                f'height="{h:.1f}" fill="{color}"><title>{c} at {span}</title></rect>'
            )
        for tick in (0.0, 0.5, SLOW_BELOW, 1.0, 1.5):
            tx = left + plot_w * tick / (hi + step)
            parts.append(
                f'<text x="{tx:.1f}" y="{height - 6}" text-anchor="middle">{tick:.1f}×</text>'
            )
        mx = left + plot_w * 1.0 / (hi + step)
        parts.append(
            f'<line x1="{mx:.1f}" y1="{top}" x2="{mx:.1f}" y2="{top + plot_h}" '
            'stroke="#444" stroke-dasharray="4 3"/>'
        )
        parts.append(f'<text x="{left - 6}" y="{top + 10}" text-anchor="end">{peak}</text>')
        parts.append("</svg>")
        out.append("\n".join(parts))
        slow = sorted((p for p in points if p.ratio < SLOW_BELOW), key=lambda p: p.ratio)
        if slow:
            named = ", ".join(f"<b>{e(p.node)}</b> {e(p.device)} {p.ratio:.0%}" for p in slow[:10])
            extra = f", {e(more(len(slow) - 10, 'slow devices'))}" if len(slow) > 10 else ""
            out.append(f'<p class="bad">slow (under {SLOW_BELOW:.0%}): {named}{extra}</p>')
    if len(order) > pools_limit:
        out.append(f"<p>{e(more(len(order) - pools_limit, 'pools'))}</p>")
    return "\n".join(out)


HTML_LIMIT = 100
LOOK_FIRST_HTML = 50  # a screenful or two before the chart


def html_page(report: FleetReport) -> str:
    e = html.escape
    status = "ok" if report.ok else "bad"
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<title>setup-env fleet report</title>",
        "<style>body{font:14px sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
        ".ok{color:#2a7}.bad{color:#c00}tr.fail td{background:#fee}"
        "table.first td{white-space:nowrap}"
        "div.why{max-width:36em;overflow:hidden;text-overflow:ellipsis}"
        ".sev-broken,.sev-ecc,.sev-pcie{background:#fcc}.sev-throttle,.sev-gpus{background:#fec}"
        "</style>",
        "</head><body>",
        "<h1>setup-env fleet report</h1>",
        f'<p class="{status}"><b>{e(summary_line(report))}</b></p>',
    ]
    if report.look_first:
        first = report.look_first
        body.append(f"<h2>Look first ({len(first)})</h2>")
        body.append(f"<p>{e(severity_counts(report))}</p>")
        body.append(
            '<table class="first"><tr><th></th><th>node</th><th>worst</th><th>pool</th>'
            "<th>why</th></tr>"
        )
        for k, f in enumerate(first[:LOOK_FIRST_HTML], 1):
            body.append(
                f'<tr><td>{k}</td><td><b>{e(f.node)}</b></td><td class="sev-{e(f.severity)}">'
                f"{e(f.severity)}</td><td>{e(f.pool)}</td>"
                f'<td><div class="why" title="{e("; ".join(f.reasons))}">'
                f"{e(_reasons(f.reasons))}</div></td></tr>"
            )
        body.append("</table>")
        if len(first) > LOOK_FIRST_HTML:
            body.append(f"<p>{e(more(len(first) - LOOK_FIRST_HTML, 'nodes'))}</p>")
    if report.bad:
        body.append(f"<h2>Unreadable documents ({len(report.bad)})</h2><ul>")
        body += [
            f"<li><code>{e(b.path)}</code>: {e(b.reason)}</li>" for b in report.bad[:HTML_LIMIT]
        ]
        body.append("</ul>")
        if len(report.bad) > HTML_LIMIT:
            body.append(f"<p>{e(more(len(report.bad) - HTML_LIMIT, 'unreadable documents'))}</p>")
    if _has_job(report):
        body.append("<h2>Job</h2><ul>")
        steps, lines, extra = job_cut(report, HTML_LIMIT)
        body += [f'<li class="{"ok" if s.ok else "bad"}">{e(step_line(s))}</li>' for s in steps]
        failed = report.allreduce_failed
        body += [
            f'<li class="bad">all-reduce on <b>{e(r.node)}</b>: {e(r.message)}</li>'
            for r in failed[:HTML_LIMIT]
        ]
        if len(failed) > HTML_LIMIT:
            body.append(f'<li class="bad">{e(more(len(failed) - HTML_LIMIT, "nodes"))}</li>')
        if report.allreduce and not report.allreduce_failed:
            body.append(f'<li class="ok">all-reduce passed on {len(report.allreduce)} node(s)</li>')
        body += [f'<li class="bad">{e(line)}</li>' for line in lines]
        body += [f"<li>{e(line)}</li>" for line in extra]
        body.append("</ul>")
    if report.drift:
        body.append(
            "<h2>Drift (within each pool)</h2><table><tr><th>pool</th><th>field</th>"
            "<th>pool's</th><th>odd</th></tr>"
        )
        for d in report.drift[:HTML_LIMIT]:
            body.append(
                f"<tr><td>{e(d.pool)}</td><td>{e(d.label)}</td><td>{e(d.majority)}</td>"
                f"<td>{e(drift_others(d, 10, 10))}</td></tr>"
            )
        body.append("</table>")
        if len(report.drift) > HTML_LIMIT:
            body.append(f"<p>{e(more(len(report.drift) - HTML_LIMIT, 'drifting fields'))}</p>")
    if len(report.pools) > 1:
        body.append("<h2>Pools</h2><table><tr>")
        body += [f"<th>{e(h)}</th>" for h in POOL_HEADERS]
        body.append("</tr>")
        for r in _pool_rows(report)[:HTML_LIMIT]:
            body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>")
        body.append("</table>")
        if len(report.pools) > HTML_LIMIT:
            body.append(f"<p>{e(more(len(report.pools) - HTML_LIMIT, 'pools'))}</p>")
    measured = len({p.node for p in report.speed})
    if measured <= NODE_ROWS_UP_TO:
        body += ["<h2>Speed against the pool median</h2>", svg(report)]
    else:
        body += ["<h2>Speed against the pool median, per pool</h2>", pool_histograms(report)]
    cut = len(report.nodes) > HTML_LIMIT
    shown = ordered_nodes(report)[:HTML_LIMIT] if cut else list(report.nodes)
    body.append(f"<h2>Nodes ({len(report.nodes)})</h2><table><tr>")
    body += [f"<th>{e(h)}</th>" for h in HEADERS]
    body.append("</tr>")
    for n, r in zip(shown, rows(report, shown)):
        cls = "" if n.state == "ready" else ' class="fail"'
        body.append(f"<tr{cls}>" + "".join(f"<td>{e(c)}</td>" for c in r) + "</tr>")
    body.append("</table>")
    if cut:
        body.append(f"<p>{e(more(len(report.nodes) - HTML_LIMIT, 'nodes'))}; first: to look at</p>")
    problems = [i for i in report.issues if i.kind != "verdict"]
    if problems:
        body.append(f"<h2>Unhealthy ({len(problems)})</h2><ul>")
        body += [
            f"<li>{e(i.severity)}: <b>{e(i.node)}</b> {e(i.message)}</li>"
            for i in problems[:HTML_LIMIT]
        ]
        body.append("</ul>")
        if len(problems) > HTML_LIMIT:
            body.append(f"<p>{e(more(len(problems) - HTML_LIMIT, 'problems'))}</p>")
    body.append("</body></html>")
    return "\n".join(body) + "\n"
