"""Simulation reports: JSON, and a self-contained HTML page with inline SVG plots.

``report_json(scenario, runs)`` is the machine-readable result (version 2): the scenario
summary, ``policies`` (the names of the policies compared, "as is" first when the scenario
replays a recorded cluster), ``replay_fidelity`` (``kvert.sim.fidelity``, imported scenarios)
and ``results``, one entry per policy in that order: its metrics (totals and per workload), its
breakdowns by cause (OOM kills with their times, restarts, evictions, pending time), its
recommendation history per container, its suggestions and its sampled series. ``write_report``
writes ``report.json`` and (unless ``json_only``) ``report.html`` into a directory. The HTML
uses no external scripts, styles, fonts or images: the plots are SVG drawn here.

For workloads with a HorizontalPodAutoscaler the report adds, per policy, the HPA's rescales,
its last status (``VerticalPodAutoscalerConflict`` among the conditions when a VPA controls
the resource it scales on) and the replicas over time, all policies on one chart.

A suggestion is made where a VPA policy scales a container's CPU limit with its requests
(``controlledValues: RequestsAndLimits``, the default) and the workload was throttled:
``controlledValues: RequestsOnly`` would leave the limit alone.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from kvert.sim.engine import SERIES, PolicyRun
from kvert.sim.fidelity import TOLERANCE, as_is_policy, replay_fidelity
from kvert.sim.metrics import (
    CLUSTER_METRICS,
    METRICS,
    OPTIONAL_METRICS,
    PERCENT_METRICS,
    policy_breakdowns,
    policy_metrics,
)
from kvert.sim.rollup import rollup
from kvert.sim.scenario import Policy, Scenario, Workload

GIB = float(2**30)
MIB = float(2**20)
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
MAX_POINTS = 600


def _scenario_summary(scn: Scenario) -> dict:
    return {
        "name": scn.name, "duration_seconds": scn.duration, "seed": scn.seed, "tick_seconds": scn.tick,
        "sample_interval_seconds": scn.sample_interval,
        "nodes": {"count": scn.node_count, "capacity": scn.pools[0].capacity,
                  "pools": [{"name": p.name, "count": p.count, "capacity": p.capacity} for p in scn.pools]},
        "workloads": [{"name": w.key, "namespace": w.namespace, "kind": w.kind, "object": w.name,
                       "replicas": w.replicas,
                       "containers": w.containers,
                       **({"hpa": w.hpa} if w.hpa is not None else {}),
                       **({"sharedUsage": list(w.shared)} if w.shared else {})} for w in scn.workloads],
        "policies": [{"name": p.name, "vpa": p.vpa, **({} if p.hpa else {"hpa": "none"})} for p in scn.policies],
    }


def _scales_cpu_limit(scn: Scenario, workload: Workload, policy: Policy, container: str) -> bool:
    """Whether ``policy``'s VPA sets ``container``'s CPU limit along with its request."""
    vpa = scn.vpa_object(workload, policy)
    if vpa is None or vpa["spec"].get("updatePolicy", {}).get("updateMode") == "Off":
        return False
    rules = (vpa["spec"].get("resourcePolicy") or {}).get("containerPolicies") or []
    rule: dict = next((r for r in rules if r.get("containerName") == container),
                next((r for r in rules if r.get("containerName") == "*"), {}))
    return (rule.get("mode", "Auto") != "Off" and "cpu" in rule.get("controlledResources", ["cpu", "memory"])
            and rule.get("controlledValues", "RequestsAndLimits") == "RequestsAndLimits")


def suggestions(scn: Scenario, run: PolicyRun) -> list[dict]:
    """Where the policy scaled a CPU limit and the workload was throttled: RequestsOnly."""
    policy = next((p for p in scn.policies if p.name == run.policy), None)
    out: list[dict] = []
    if policy is None or run.skipped:
        return out
    for w in scn.workloads:
        throttled = float(run.counters.get(w.key, {}).get("throttled_seconds", 0.0))
        if throttled <= 0:
            continue
        for c in w.template["spec"]["containers"]:
            if "cpu" in ((c.get("resources") or {}).get("limits") or {}) and _scales_cpu_limit(scn, w, policy,
                                                                                                c["name"]):
                out.append({"workload": w.key, "container": c["name"], "throttled_seconds": round(throttled, 3),
                            "text": f"{w.key}/{c['name']}: the VPA scales its CPU limit with its request and "
                                    f"it was throttled for {throttled:,.0f} s; consider controlledValues: "
                                    f"RequestsOnly"})
    return out


def report_json(scn: Scenario, runs: list[PolicyRun], *, wall_seconds: float | None = None) -> dict:
    policies = []
    for run in runs:
        entry: dict[str, Any] = {"name": run.policy, "updateMode": run.update_mode}
        if run.skipped:
            entry["skipped"] = run.skipped
        entry["metrics"] = policy_metrics(run)
        entry["breakdowns"] = policy_breakdowns(run)
        entry["series"] = {
            "interval_seconds": run.interval,
            "times": run.times.tolist(),
            "nodes_ready": run.nodes_ready.tolist(),
            "workloads": {w: {k: s[k].tolist() for k in SERIES if k in s} for w, s in run.workloads.items()},
            "units": {"cpu": "millicores", "memory": "bytes", "times": "seconds since start"},
        }
        if run.vpa_recommendations:
            entry["vpa_recommendations"] = run.vpa_recommendations
        if run.recommendation_history:
            entry["recommendation_history"] = run.recommendation_history
        if run.hpa:
            entry["hpa"] = run.hpa
        entry["suggestions"] = suggestions(scn, run)
        entry["events"] = run.events
        entry["rollup"] = rollup(scn, run)
        policies.append(entry)
    # "as is" (the recorded cluster replayed) first: the what-ifs are read against it
    first = as_is_policy(scn)
    policies.sort(key=lambda entry: entry["name"] != first)
    doc: dict[str, Any] = {"kind": "SimulationReport", "version": 2, "scenario": _scenario_summary(scn),
                           "policies": [entry["name"] for entry in policies], "results": policies}
    fidelity = replay_fidelity(scn, runs)
    if fidelity:
        doc["replay_fidelity"] = fidelity
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


class Line(NamedTuple):
    label: str
    values: np.ndarray           # one per time; NaN where unknown (a gap)
    color: str
    dashed: bool = False
    step: bool = False           # held until the next value, then a vertical jump


def _segments(xs: np.ndarray, ys: np.ndarray, step: bool) -> list[str]:
    """Polyline point lists for the runs of finite values."""
    out: list[str] = []
    current: list[str] = []
    previous = 0.0
    for a, b in zip(xs, ys):
        if not np.isfinite(b):
            if current:
                out.append(" ".join(current))
            current = []
            continue
        if step and current:
            current.append(f"{a:.1f},{previous:.1f}")
        current.append(f"{a:.1f},{b:.1f}")
        previous = b
    if current:
        out.append(" ".join(current))
    return out


def line_chart(title: str, t_hours: np.ndarray, lines: list[Line], unit: str, width: int = 640,
               height: int = 240, marks: tuple[str, list[float], str] | None = None) -> str:
    """An SVG line chart of ``lines``; ``marks`` (label, times in hours, colour) are drawn as
    vertical lines."""
    left, right, top, bottom = 60, 150, 24, 34
    pw, ph = width - left - right, height - top - bottom
    if len(t_hours) == 0:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="40">'
                f'<text x="4" y="20">{html.escape(title)}: no data</text></svg>')
    t, ys = _downsample(t_hours, [line.values for line in lines])
    finite = [y[np.isfinite(y)] for y in ys]
    ymax = _nice_max(max((float(np.max(y)) for y in finite if len(y)), default=0.0))
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
    legend = [(line.label, line.color, line.dashed) for line in lines]
    for line, values in zip(lines, ys):
        xs = left + pw * t / tmax
        yy = top + ph - ph * np.clip(values, 0, None) / ymax
        dash = ' stroke-dasharray="5,3"' if line.dashed else ""
        for pts in _segments(xs, yy, line.step):
            out.append(f'<polyline fill="none" stroke="{line.color}" stroke-width="1.5"{dash} points="{pts}"/>')
    if marks is not None and marks[1]:
        label, times, color = marks
        for when in times:
            x = left + pw * min(max(when, 0.0), tmax) / tmax
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="{color}" '
                       f'stroke-width="1" opacity="0.7"/>')
        legend.append((f"{label} ({len(times)})", color, False))
    for k, (label, color, dashed) in enumerate(legend):
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        ly = top + 10 + 16 * k
        out.append(f'<line x1="{left + pw + 10}" y1="{ly}" x2="{left + pw + 30}" y2="{ly}" stroke="{color}" '
                   f'stroke-width="2"{dash}/>')
        out.append(f'<text x="{left + pw + 34}" y="{ly + 4}" font-size="10">{html.escape(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def bar_chart(title: str, values: list[tuple[str, float]], width: int = 300, height: int = 150) -> str:
    """Horizontal bars, one per label (negative values drawn to the left of zero); the label
    column widens for long labels."""
    left, right, top = 110, 60, 22
    extra = max(0, 6 * max((len(label) for label, _ in values), default=0) + 8 - left)
    left, width = left + extra, width + extra
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


def _shown_metrics(runs: list[dict], *groups: tuple) -> list[tuple[str, str]]:
    """The metrics of ``groups`` to show: an optional one only when some run recorded it."""
    keys = [m for g in groups for m in g]
    return [(k, label) for k, label in keys
            if k not in OPTIONAL_METRICS or any(p["metrics"]["totals"].get(k) for p in runs)]


def _metrics_table(doc: dict) -> str:
    runs = [p for p in doc["results"] if not p.get("skipped")]
    head = "".join(f"<th>{html.escape(p['name'])}</th>" for p in runs)
    rows = []
    for key, label in _shown_metrics(runs, PERCENT_METRICS, METRICS, CLUSTER_METRICS):
        values = [p["metrics"]["totals"].get(key, 0) for p in runs]
        cells = "".join(f"<td>{_fmt(float(v))}</td>" for v in values)
        rows.append(f"<tr><td>{html.escape(label)}</td>{cells}</tr>")
    return f"<table><thead><tr><th>metric (all workloads)</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _workload_table(doc: dict, workload: str) -> str:
    runs = [p for p in doc["results"] if not p.get("skipped")]
    head = "".join(f"<th>{html.escape(p['name'])}</th>" for p in runs)
    rows = []
    for key, label in _shown_metrics(runs, PERCENT_METRICS, METRICS):
        cells = "".join(f"<td>{_fmt(float(p['metrics']['workloads'].get(workload, {}).get(key, 0)))}</td>"
                        for p in runs)
        rows.append(f"<tr><td>{html.escape(label)}</td>{cells}</tr>")
    return f"<table><thead><tr><th>metric</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


BREAKDOWNS = (("oom_kills_by_cause", "OOM kills by cause", "{:g}"),
              ("restarts_by_cause", "Restarts by cause", "{:g}"),
              ("evictions_by_reason", "Evictions by reason", "{:g}"),
              ("pending_by_reason", "Pending pod-seconds by reason", "{:,.0f}"))


def _breakdown_table(runs: list[dict], workload: str) -> str:
    head = "".join(f"<th>{html.escape(p['name'])}</th>" for p in runs)
    rows = []
    for key, label, fmt in BREAKDOWNS:
        cells = []
        for p in runs:
            counts = (p.get("breakdowns") or {}).get(workload, {}).get(key) or {}
            text = ", ".join(f"{html.escape(k)} {fmt.format(v)}" for k, v in counts.items()) or "none"
            cells.append(f"<td style=\"text-align:left\">{text}</td>")
        rows.append(f"<tr><td>{html.escape(label)}</td>{''.join(cells)}</tr>")
    return f"<table><thead><tr><th>by cause</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _breakdown_bars(runs: list[dict], workload: str) -> list[str]:
    charts = []
    for key, label, _ in BREAKDOWNS:
        bars = [(f"{p['name']}: {cause}", float(v)) for p in runs
                for cause, v in ((p.get("breakdowns") or {}).get(workload, {}).get(key) or {}).items()]
        if bars:
            charts.append(bar_chart(label, bars, width=380))
    return charts


def _recommended(history: dict[str, list[dict]], times: np.ndarray, running: np.ndarray, bound: str,
                 resource: str) -> np.ndarray:
    """The recommended ``bound`` for a whole pod (its containers' sum), held from each change
    to the next, times the running pods: comparable with the workload's requests. NaN before
    every container has a recommendation."""
    total = np.zeros(len(times))
    for entries in history.values():
        at = np.array([e["time"] for e in entries], dtype=float)
        values = np.array([float((e.get(bound) or {}).get(resource, np.nan)) for e in entries])
        idx = np.searchsorted(at, times, side="right") - 1
        total += np.where(idx >= 0, values[np.clip(idx, 0, None)], np.nan)
    return total * running


def _workload_charts(p: dict, name: str) -> list[str]:
    s = p["series"]["workloads"].get(name)
    if s is None:
        return []
    times = np.asarray(p["series"]["times"], dtype=float)
    t = times / 3600.0
    running = np.asarray(s["pods_running"], dtype=float)
    history = (p.get("recommendation_history") or {}).get(name) or {}
    charts = []
    for resource, unit, scale in (("cpu", "millicores", 1.0), ("memory", "MiB", MIB)):
        lines = [Line("request", np.asarray(s[f"{resource}_request"]) / scale, COLORS[0]),
                 Line("use", np.asarray(s[f"{resource}_use"]) / scale, COLORS[1])]
        demand = np.asarray(s.get(f"{resource}_demand") or [], dtype=float)
        if demand.size and demand.any():
            lines.append(Line("demand", demand / scale, COLORS[4]))
        if history:
            for bound, label, color, dashed in (("target", "VPA target", COLORS[2], False),
                                                ("lowerBound", "lower bound", COLORS[3], True),
                                                ("upperBound", "upper bound", COLORS[3], True)):
                values = _recommended(history, times, running, bound, resource) / scale
                lines.append(Line(label, values, color, dashed, step=True))
        marks = None
        if resource == "memory":
            kills = (p.get("breakdowns") or {}).get(name, {}).get("oom_kills") or []
            marks = ("OOM kill", [k["time"] / 3600.0 for k in kills], COLORS[5])
        charts.append(line_chart(f"{p['name']}: {'CPU' if resource == 'cpu' else 'memory'}", t, lines, unit,
                                 marks=marks))
    return charts


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


def _hpa_condition(status: dict, kind: str) -> dict | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), None)


def _hpa_section(doc: dict, workload: dict) -> str:
    """A workload's HPA under each policy: settings, rescales, replicas reached, last
    utilization, the VPA conflict; and the replicas of every policy on one chart."""
    from kvert.controllers.vpaconflict import CONFLICT
    name = workload["name"]
    runs = [p for p in doc["results"] if not p.get("skipped")]
    rows, lines = [], []
    for i, p in enumerate(runs):
        series = p["series"]["workloads"].get(name) or {}
        replicas = np.asarray(series.get("replicas") or [], dtype=float)
        if replicas.size:
            lines.append(Line(p["name"], replicas, COLORS[i % len(COLORS)], step=True))
        hpa = (p.get("hpa") or {}).get(name)
        reached = (f"{replicas.min():g} / {replicas.mean():.3g} / {replicas.max():g}" if replicas.size else "")
        if hpa is None:
            rows.append(f"<tr><td>{html.escape(p['name'])}</td><td>no HPA</td><td></td><td>{reached}</td>"
                        f"<td></td><td></td><td style=\"text-align:left\"></td></tr>")
            continue
        status = hpa.get("status") or {}
        utilization = ""
        for metric in status.get("currentMetrics") or []:
            source = metric.get("resource") or metric.get("containerResource") or {}
            current = source.get("current") or {}
            if "averageUtilization" in current:
                utilization = f"{source.get('name')} {current['averageUtilization']}%"
        conflict = _hpa_condition(status, CONFLICT)
        note = "none"
        if conflict is not None and conflict.get("status") == "True":
            note = (f"<b>{html.escape(CONFLICT)}</b> ({html.escape(conflict.get('reason', ''))}): "
                    f"{html.escape(conflict.get('message', ''))}")
        rows.append(f"<tr><td>{html.escape(p['name'])}</td><td>{hpa['minReplicas']}-{hpa['maxReplicas']}</td>"
                    f"<td>{len(hpa.get('rescales') or [])}</td><td>{reached}</td>"
                    f"<td>{hpa.get('pods_deleted_by_scale_down', 0)}</td><td>{html.escape(utilization)}</td>"
                    f"<td style=\"text-align:left\">{note}</td></tr>")
    spec = workload.get("hpa") or {}
    metrics = "; ".join(
        f"{m.get('type')} {(m.get('resource') or m.get('containerResource') or {}).get('name')} "
        + ", ".join(f"{k} {v}" for k, v in ((m.get('resource') or m.get('containerResource') or {})
                                            .get('target') or {}).items() if k != "type")
        for m in spec.get("metrics") or []) or "cpu averageUtilization 80 (default)"
    shared = (f" Its {' and '.join(workload['sharedUsage'])} usage is the workload's, split among its running pods."
              if workload.get("sharedUsage") else "")
    times = np.asarray((runs[0]["series"]["times"] if runs else []), dtype=float) / 3600.0
    chart = line_chart(f"{name}: replicas (Deployment spec.replicas)", times, lines, "replicas") if lines else ""
    return (f"<h3>Horizontal scaling of {html.escape(name)}</h3><p>HPA on {html.escape(metrics)}, "
            f"{spec.get('minReplicas', 1)} to {spec.get('maxReplicas')} replicas.{html.escape(shared)}</p>"
            f"<table><thead><tr><th>policy</th><th>min-max</th><th>rescales</th><th>replicas min / mean / max</th>"
            f"<th>pods removed by scale-down</th><th>last utilization</th><th>VPA conflict</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table><div class=\"grid\">{chart}</div>")


MAX_WORKLOADS_SHOWN = 30


def _fidelity_table(entries: list[dict]) -> str:
    """Recorded vs replayed (the "as is" policy), per workload."""
    held = sum(1 for e in entries if e["within"])
    rows = []
    for e in entries:
        rec, rep = e["recorded"], e["replayed"]
        mark = "" if e["within"] else ' style="color:#a00"'
        rows.append(f"<tr{mark}><td>{html.escape(e['namespace'])}/{html.escape(e['workload'])} ({e['kind']})</td>"
                    f"<td>{rec['cpu_cores_mean']:.4g}</td><td>{rep['cpu_cores_mean']:.4g}</td>"
                    f"<td>{rec['memory_bytes_mean'] / GIB:.4g}</td><td>{rep['memory_bytes_mean'] / GIB:.4g}</td>"
                    f"<td>{rec['oom_kills']}</td><td>{rep['oom_kills']}</td><td>{rec['restarts']}</td>"
                    f"<td>{rep['restarts']}</td><td>{rec['throttled_seconds']:,.0f}</td>"
                    f"<td>{rep['throttled_seconds']:,.0f}</td></tr>")
    return (f"<h2>Replay fidelity</h2><p>The cluster as it was (policy \"as is\": its own requests, limits, VPAs "
            f"and HPAs) replayed over the recorded window, next to what the cluster recorded. {held} of "
            f"{len(entries)} workloads hold (mean CPU and memory within {TOLERANCE:.0%}, OOM kills within one); "
            "the what-if columns below are as trustworthy as this table.</p>"
            "<table><thead><tr><th>workload</th><th>CPU cores, recorded</th><th>replayed</th>"
            "<th>memory GiB, recorded</th><th>replayed</th><th>OOM kills, recorded</th><th>replayed</th>"
            "<th>restarts, recorded</th><th>replayed</th><th>throttled s, recorded</th><th>replayed</th></tr>"
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def _namespace_table(runs: list[dict]) -> str:
    """Slack, OOM kills and cost per namespace and policy."""
    namespaces = sorted({ns for p in runs for ns in ((p.get("rollup") or {}).get("namespaces") or {})})
    if len(namespaces) < 2 and not any((p.get("rollup") or {}).get("cost") for p in runs):
        return ""
    head = "".join(f"<th>{html.escape(p['name'])}</th>" for p in runs)
    rows = []
    for ns in namespaces:
        cells = []
        for p in runs:
            f = ((p.get("rollup") or {}).get("namespaces") or {}).get(ns) or {}
            cost = ((p.get("rollup") or {}).get("cost") or {}).get("requests_by_namespace", {}).get(ns)
            text = (f"CPU slack {f.get('cpu_slack_core_hours', 0):,.1f} core-h, memory slack "
                    f"{f.get('memory_slack_gib_hours', 0):,.1f} GiB-h, {f.get('oom_kills', 0)} OOM kills")
            if cost is not None:
                text += f", requests cost {cost:,.2f}"
            cells.append(f"<td style=\"text-align:left\">{html.escape(text)}</td>")
        rows.append(f"<tr><td>{html.escape(ns)}</td>{''.join(cells)}</tr>")
    costs = [(p.get("rollup") or {}).get("cost") for p in runs]
    if any(costs):
        cost_cells = "".join(f"<td>{_cost_text(c)}</td>" for c in costs)
        rows.append(f"<tr><td><b>cost, all</b></td>{cost_cells}</tr>")
    return (f"<h2>By namespace</h2><table><thead><tr><th>namespace</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _cost_text(cost: dict | None) -> str:
    if not cost:
        return ""
    return f"{cost['requests']:,.2f} requested, {cost['nodes']:,.2f} for the nodes"


def _shown_workloads(doc: dict) -> list[dict]:
    """The workloads given a section of their own: all of a small scenario; of a large one,
    those with the most slack (GiB-h and core-h) or OOM kills under any policy."""
    workloads = doc["scenario"]["workloads"]
    if len(workloads) <= MAX_WORKLOADS_SHOWN:
        return workloads
    runs = [p for p in doc["results"] if not p.get("skipped")]

    def weight(w: dict) -> float:
        figures = [p["metrics"]["workloads"].get(w["name"], {}) for p in runs]
        return max((abs(f.get("cpu_slack_core_hours", 0)) + abs(f.get("memory_slack_gib_hours", 0))
                    + 100 * f.get("oom_kills", 0) for f in figures), default=0)
    return sorted(workloads, key=weight, reverse=True)[:MAX_WORKLOADS_SHOWN]


def report_html(doc: dict) -> str:
    scn = doc["scenario"]
    runs = [p for p in doc["results"] if not p.get("skipped")]
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>kvert simulation: "
             f"{html.escape(scn['name'])}</title><style>{CSS}</style></head><body>",
             f"<h1>kvert simulation: {html.escape(scn['name'])}</h1>",
             f"<p>{scn['duration_seconds'] / 3600:.3g} h of virtual time per policy, seed {scn['seed']}, "
             f"tick {scn['tick_seconds']:g}s, samples every {scn['sample_interval_seconds']:g}s; "
             f"{scn['nodes']['count']} nodes; workloads: "
             + ", ".join(f"<code>{html.escape(w['name'])}</code> ({w['replicas']} replicas)" for w in scn["workloads"])
             + ".</p>"]
    for p in doc["results"]:
        if p.get("skipped"):
            parts.append(f"<p class=\"skipped\">Policy <code>{html.escape(p['name'])}</code> skipped: "
                         f"{html.escape(p['skipped'])}</p>")
    if doc.get("replay_fidelity"):
        parts.append(_fidelity_table(doc["replay_fidelity"]))
    parts.append("<h2>Metrics side by side</h2>")
    parts.append("<p>Slack = requests − use, integrated over time (negative: pods used more than they "
                 "requested). Over-/under-provisioned are its positive and negative parts. As % of requests: "
                 "the mean over the samples with running pods of the unused part (slack) and of the use beyond "
                 "the request (under-provisioned); the total is the mean over workloads.</p>")
    parts.append(_metrics_table(doc))
    bars = []
    for key, label in _shown_metrics(runs, PERCENT_METRICS, METRICS, CLUSTER_METRICS):
        if key == "pods_created":
            continue
        bars.append(bar_chart(label, [(p["name"], float(p["metrics"]["totals"].get(key, 0))) for p in runs]))
    parts.append(f"<div class=\"grid\">{''.join(bars)}</div>")
    parts.append(_namespace_table(runs))
    advice = [(p["name"], a["text"]) for p in runs for a in p.get("suggestions") or []]
    if advice:
        parts.append("<h2>Suggestions</h2><ul>" + "".join(
            f"<li><code>{html.escape(name)}</code>: {html.escape(text)}</li>" for name, text in advice) + "</ul>")
    tables = [_events_table(p) for p in runs]
    if any(tables):
        parts.append("<h2>Evictions and OOM kills</h2>")
        parts.extend(t for t in tables if t)
    shown = _shown_workloads(doc)
    if len(shown) < len(scn["workloads"]):
        parts.append(f"<p>The {len(shown)} workloads with the most slack or OOM kills are shown below; all "
                     f"{len(scn['workloads'])} are in report.json.</p>")
    for w in shown:
        name = w["name"]
        parts.append(f"<h2>Workload {html.escape(name)}: requests vs use</h2>")
        parts.append(_workload_table(doc, name))
        if w.get("hpa") is not None:
            parts.append(_hpa_section(doc, w))
        parts.append(_breakdown_table(runs, name))
        parts.append(f"<div class=\"grid\">{''.join(_breakdown_bars(runs, name))}</div>")
        charts = [c for p in runs for c in _workload_charts(p, name)]
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
