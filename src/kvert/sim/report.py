"""Simulation reports: JSON, and a self-contained HTML page with inline SVG plots.

``report_json(scenario, runs)`` is the machine-readable result: the scenario summary, and
per policy its metrics (totals and per workload) and its sampled series. ``write_report``
writes ``report.json`` and (unless ``json_only``) ``report.html`` into a directory. The
HTML uses no external scripts, styles, fonts or images: the plots are SVG drawn here.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import numpy as np

from kvert.sim.engine import SERIES, PolicyRun
from kvert.sim.metrics import CLUSTER_METRICS, METRICS, policy_metrics
from kvert.sim.scenario import Scenario

GIB = float(2**30)
MIB = float(2**20)
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
MAX_POINTS = 600


def _scenario_summary(scn: Scenario) -> dict:
    return {
        "name": scn.name, "duration_seconds": scn.duration, "seed": scn.seed, "tick_seconds": scn.tick,
        "sample_interval_seconds": scn.sample_interval,
        "nodes": {"count": scn.nodes.count, "capacity": scn.nodes.capacity},
        "workloads": [{"name": w.name, "namespace": w.namespace, "replicas": w.replicas,
                       "containers": w.containers} for w in scn.workloads],
        "policies": [{"name": p.name, "vpa": p.vpa} for p in scn.policies],
    }


def report_json(scn: Scenario, runs: list[PolicyRun], *, wall_seconds: float | None = None) -> dict:
    policies = []
    for run in runs:
        entry: dict[str, Any] = {"name": run.policy, "updateMode": run.update_mode}
        if run.skipped:
            entry["skipped"] = run.skipped
        entry["metrics"] = policy_metrics(run)
        entry["series"] = {
            "interval_seconds": run.interval,
            "times": run.times.tolist(),
            "nodes_ready": run.nodes_ready.tolist(),
            "workloads": {w: {k: s[k].tolist() for k in SERIES} for w, s in run.workloads.items()},
            "units": {"cpu": "millicores", "memory": "bytes", "times": "seconds since start"},
        }
        if run.vpa_recommendations:
            entry["vpa_recommendations"] = run.vpa_recommendations
        entry["events"] = run.events
        policies.append(entry)
    doc: dict[str, Any] = {"kind": "SimulationReport", "version": 1, "scenario": _scenario_summary(scn),
                           "policies": policies}
    if wall_seconds is not None:                     # not part of the deterministic result
        doc["run"] = {"wall_seconds": round(wall_seconds, 3),
                      "simulated_seconds": scn.duration * sum(1 for r in runs if not r.skipped)}
    return doc


# -- SVG ------------------------------------------------------------------------------------------------

def _downsample(t: np.ndarray, ys: list[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    if len(t) <= MAX_POINTS:
        return t, ys
    step = int(np.ceil(len(t) / MAX_POINTS))
    n = len(t) // step * step
    return (t[:n].reshape(-1, step)[:, -1], [y[:n].reshape(-1, step).mean(axis=1) for y in ys])


def _nice_max(v: float) -> float:
    if v <= 0:
        return 1.0
    exp = 10 ** np.floor(np.log10(v))
    for m in (1, 2, 2.5, 5, 10):
        if m * exp >= v:
            return float(m * exp)
    return float(10 * exp)


def _fmt(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def line_chart(title: str, t_hours: np.ndarray, lines: list[tuple[str, np.ndarray, str, bool]],
               unit: str, width: int = 640, height: int = 240) -> str:
    """An SVG line chart; ``lines`` are (label, values, colour, dashed)."""
    left, right, top, bottom = 60, 150, 24, 34
    pw, ph = width - left - right, height - top - bottom
    if len(t_hours) == 0:
        return f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="40"><text x="4" y="20">{html.escape(title)}: no data</text></svg>'
    t, ys = _downsample(t_hours, [v for _, v, _, _ in lines])
    ymax = _nice_max(max(float(np.max(y)) if len(y) else 0.0 for y in ys))
    tmax = float(t[-1]) if float(t[-1]) > 0 else 1.0
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
           f'<text x="{left}" y="15" font-size="13" font-weight="bold">{html.escape(title)}</text>']
    for i in range(5):
        v = ymax * i / 4
        y = top + ph - ph * i / 4
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 4}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{_fmt(v)}</text>')
    for i in range(5):
        v = tmax * i / 4
        x = left + pw * i / 4
        out.append(f'<text x="{x:.1f}" y="{top + ph + 14}" font-size="10" text-anchor="middle">{v:.3g}h</text>')
    out.append(f'<text x="{left - 50}" y="{top + ph / 2:.0f}" font-size="10" transform="rotate(-90 {left - 50} '
               f'{top + ph / 2:.0f})" text-anchor="middle">{html.escape(unit)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for k, ((label, _, color, dashed), y) in enumerate(zip(lines, ys)):
        xs = left + pw * t / tmax
        yy = top + ph - ph * np.clip(y, 0, None) / ymax
        pts = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(xs, yy))
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        out.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.5"{dash} points="{pts}"/>')
        ly = top + 10 + 16 * k
        out.append(f'<line x1="{left + pw + 10}" y1="{ly}" x2="{left + pw + 30}" y2="{ly}" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{left + pw + 34}" y="{ly + 4}" font-size="10">{html.escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def bar_chart(title: str, values: list[tuple[str, float]], width: int = 300, height: int = 150) -> str:
    """Horizontal bars, one per policy (negative values drawn to the left of zero)."""
    left, right, top = 110, 60, 22
    bar = max(10, (height - top - 6) // max(1, len(values)) - 4)
    height = top + (bar + 4) * len(values) + 6
    lo = min(0.0, min((v for _, v in values), default=0.0))
    hi = max(0.0, max((v for _, v in values), default=0.0))
    span = (hi - lo) or 1.0
    pw = width - left - right
    zero = left + pw * (-lo) / span
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}">',
           f'<text x="4" y="14" font-size="12" font-weight="bold">{html.escape(title)}</text>']
    for i, (label, v) in enumerate(values):
        y = top + i * (bar + 4)
        x0 = zero if v >= 0 else zero - pw * (-v) / span
        w = pw * abs(v) / span
        out.append(f'<text x="{left - 4}" y="{y + bar * 0.75:.1f}" font-size="10" text-anchor="end">'
                   f'{html.escape(label)}</text>')
        out.append(f'<rect x="{x0:.1f}" y="{y}" width="{max(w, 0.5):.1f}" height="{bar}" '
                   f'fill="{COLORS[i % len(COLORS)]}"/>')
        out.append(f'<text x="{max(x0 + w, zero) + 3:.1f}" y="{y + bar * 0.75:.1f}" font-size="10">{_fmt(v)}</text>')
    out.append(f'<line x1="{zero:.1f}" y1="{top - 2}" x2="{zero:.1f}" y2="{height - 4}" stroke="#333"/>')
    out.append("</svg>")
    return "".join(out)


# -- HTML -------------------------------------------------------------------------------------------------

CSS = """body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:24px;color:#222;max-width:1400px}
table{border-collapse:collapse;margin:8px 0 20px}th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}thead th{background:#f3f3f3}.best{font-weight:bold;color:#1a7f37}
.grid{display:flex;flex-wrap:wrap;gap:12px}.skipped{color:#a00}code{background:#f3f3f3;padding:1px 4px}
h2{margin-top:32px;border-bottom:1px solid #ddd}"""


def _metrics_table(doc: dict) -> str:
    runs = [p for p in doc["policies"] if not p.get("skipped")]
    head = "".join(f"<th>{html.escape(p['name'])}</th>" for p in runs)
    rows = []
    for key, label in METRICS + CLUSTER_METRICS:
        values = [p["metrics"]["totals"].get(key, 0) for p in runs]
        cells = "".join(f"<td>{_fmt(float(v))}</td>" for v in values)
        rows.append(f"<tr><td>{html.escape(label)}</td>{cells}</tr>")
    return f"<table><thead><tr><th>metric (all workloads)</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _workload_table(doc: dict, workload: str) -> str:
    runs = [p for p in doc["policies"] if not p.get("skipped")]
    head = "".join(f"<th>{html.escape(p['name'])}</th>" for p in runs)
    rows = []
    for key, label in METRICS:
        cells = "".join(f"<td>{_fmt(float(p['metrics']['workloads'].get(workload, {}).get(key, 0)))}</td>"
                        for p in runs)
        rows.append(f"<tr><td>{html.escape(label)}</td>{cells}</tr>")
    return f"<table><thead><tr><th>metric</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


MAX_EVENTS_SHOWN = 200


def _clock(seconds: float) -> str:
    """Seconds since the start as ``day 1 06:30:05``."""
    day, rest = divmod(int(seconds), 86400)
    return f"day {day + 1} {rest // 3600:02d}:{rest % 3600 // 60:02d}:{rest % 60:02d}"


def _events_table(policy: dict) -> str:
    events = policy.get("events") or []
    if not events:
        return ""
    rows = []
    for e in events[:MAX_EVENTS_SHOWN]:
        what = "evicted" if e["kind"] == "eviction" else f"OOM-killed ({html.escape(e.get('container', ''))})"
        detail = e.get("message") or ""
        if e["kind"] == "oom-kill":
            detail = f"{e['usage'] / MIB:.0f}Mi used of {e['limit'] / MIB:.0f}Mi"
        rows.append(f"<tr><td>{_clock(e['time'])}</td><td>{html.escape(e['workload'])}</td>"
                    f"<td>{html.escape(e['pod'])}</td><td>{what}</td><td>{html.escape(str(e.get('cause', '')))}</td>"
                    f"<td style=\"text-align:left\">{html.escape(detail)}</td></tr>")
    more = len(events) - MAX_EVENTS_SHOWN
    note = f"<p>{more} more in report.json.</p>" if more > 0 else ""
    return (f"<h3>{html.escape(policy['name'])}: evictions and OOM kills</h3><table><thead><tr><th>time</th>"
            f"<th>workload</th><th>pod</th><th>what</th><th>cause</th><th>detail</th></tr></thead><tbody>"
            f"{''.join(rows)}</tbody></table>{note}")


def report_html(doc: dict) -> str:
    scn = doc["scenario"]
    runs = [p for p in doc["policies"] if not p.get("skipped")]
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>kvert simulation: "
             f"{html.escape(scn['name'])}</title><style>{CSS}</style></head><body>",
             f"<h1>kvert simulation: {html.escape(scn['name'])}</h1>",
             f"<p>{scn['duration_seconds'] / 3600:.3g} h of virtual time per policy, seed {scn['seed']}, "
             f"tick {scn['tick_seconds']:g}s, samples every {scn['sample_interval_seconds']:g}s; "
             f"{scn['nodes']['count']} nodes; workloads: "
             + ", ".join(f"<code>{html.escape(w['name'])}</code> ({w['replicas']} replicas)" for w in scn["workloads"])
             + ".</p>"]
    for p in doc["policies"]:
        if p.get("skipped"):
            parts.append(f"<p class=\"skipped\">Policy <code>{html.escape(p['name'])}</code> skipped: "
                         f"{html.escape(p['skipped'])}</p>")
    parts.append("<h2>Metrics side by side</h2>")
    parts.append("<p>Slack = requests − use, integrated over time (negative: pods used more than they "
                 "requested). Over-/under-provisioned are its positive and negative parts.</p>")
    parts.append(_metrics_table(doc))
    bars = []
    for key, label in METRICS + CLUSTER_METRICS:
        if key == "pods_created":
            continue
        bars.append(bar_chart(label, [(p["name"], float(p["metrics"]["totals"].get(key, 0))) for p in runs]))
    parts.append(f"<div class=\"grid\">{''.join(bars)}</div>")
    tables = [_events_table(p) for p in runs]
    if any(tables):
        parts.append("<h2>Evictions and OOM kills</h2>")
        parts.extend(t for t in tables if t)
    for w in scn["workloads"]:
        name = w["name"]
        parts.append(f"<h2>Workload {html.escape(name)}: requests vs use</h2>")
        parts.append(_workload_table(doc, name))
        charts = []
        for p in runs:
            s = p["series"]["workloads"].get(name)
            if s is None:
                continue
            t = np.asarray(p["series"]["times"], dtype=float) / 3600.0
            charts.append(line_chart(
                f"{p['name']}: CPU", t,
                [("request", np.asarray(s["cpu_request"]), COLORS[0], False),
                 ("use", np.asarray(s["cpu_use"]), COLORS[1], False)], "millicores"))
            charts.append(line_chart(
                f"{p['name']}: memory", t,
                [("request", np.asarray(s["memory_request"]) / MIB, COLORS[0], False),
                 ("use", np.asarray(s["memory_use"]) / MIB, COLORS[1], False)], "MiB"))
        parts.append(f"<div class=\"grid\">{''.join(charts)}</div>")
    if doc.get("run"):
        r = doc["run"]
        parts.append(f"<p style=\"color:#777\">Simulated {r['simulated_seconds'] / 3600:.3g} h in "
                     f"{r['wall_seconds']:.3g} s of wall time.</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(doc: dict, out_dir: str | Path, *, json_only: bool = False) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.json"]
    paths[0].write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    if not json_only:
        paths.append(out / "report.html")
        paths[1].write_text(report_html(doc))
    return paths
