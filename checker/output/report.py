"""The run report: results/<spec>/<run-id>/report.html, written for every run.

One static, self-contained page (inline CSS and SVG, no script): the outcome,
the per-level frontier growth as a chart (the new distinct states of each BFS
level, i.e. the frontier the next level expands, with the running total),
action coverage (generated and distinct successors per action; an action that
was never enabled is flagged, as is one that never produced a new state), the
`sometimes` witnesses, and links to the counterexamples.
"""
from __future__ import annotations

import html
import json
from typing import Any

from checker.output.render import steps
from checker.output.traces import file_names, reproduce_simulation


def _esc(s: Any) -> str:
    return html.escape(str(s))


def _n(x: Any) -> str:
    return f"{x:,}" if isinstance(x, int) else _esc(x)


CSS = """
*{box-sizing:border-box}
body{margin:0;padding:16px 22px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1f2328;max-width:1200px}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:22px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
.badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:700;color:#fff}
.pass{background:#1a7f37}.violation{background:#c62828}
.figures{display:grid;grid-template-columns:repeat(auto-fill,minmax(170px,1fr));gap:8px;margin:10px 0}
.fig{border:1px solid #d0d7de;border-radius:6px;padding:6px 10px}.fig b{display:block;font-size:17px}
.fig span{color:#57606a;font-size:12px}
table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tr.never td{background:#fdecea}tr.nonew td{background:#fff8c5}tr.off td{color:#6a737d;background:#f6f8fa}
.flag{font-weight:700;color:#c62828}.flag.warn{color:#9a6700}
.bar{display:inline-block;height:9px;background:#0969da;vertical-align:middle}
svg text{font:11px system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;fill:#57606a}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.muted{color:#57606a}
"""


def growth_chart(per_level: list[int], width: int = 1000, height: int = 260,
                 last_partial: bool = False, unit: str = "level",
                 axis: str = "BFS level (steps from an initial state)") -> str:
    """Inline SVG: a bar per BFS level (new distinct states), a line for the
    running total (its own axis, on the right). last_partial: the search
    stopped inside the last level (at a violation): its bar is paler."""
    if not per_level:
        return "<p class='muted'>No level was explored.</p>"
    left, right, top, bottom = 64, 70, 14, 34
    w, h = width - left - right, height - top - bottom
    n = len(per_level)
    peak = max(per_level) or 1
    total = []
    acc = 0
    for x in per_level:
        acc += x
        total.append(acc)
    tpeak = total[-1] or 1
    bw = w / n
    parts = [f'<svg id="growth" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="new distinct states per level">']
    for k in range(5):  # grid and left axis
        y = top + h - h * k / 4
        parts.append(f'<line x1="{left}" x2="{left + w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#eaeef2"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{peak * k / 4:,.0f}</text>')
        parts.append(f'<text x="{left + w + 6}" y="{y + 4:.1f}" fill="#bc4c00">{tpeak * k / 4:,.0f}</text>')
    step = max(1, round(n / 20))
    for i, x in enumerate(per_level):
        bh = h * x / peak
        xx = left + i * bw
        partial = last_partial and i == n - 1
        parts.append(f'<rect class="level" x="{xx + bw * 0.1:.1f}" y="{top + h - bh:.1f}" '
                     f'width="{max(bw * 0.8, 1):.1f}" height="{bh:.1f}" '
                     f'fill="{"#9ecbff" if partial else "#0969da"}">'
                     f'<title>{unit} {i}: {x:,} new distinct states (total {total[i]:,})'
                     f'{" - partial: the search stopped in this level" if partial else ""}</title></rect>')
        if i % step == 0 or i == n - 1:
            parts.append(f'<text x="{xx + bw / 2:.1f}" y="{top + h + 14}" text-anchor="middle">{i}</text>')
    pts = " ".join(f"{left + (i + 0.5) * bw:.1f},{top + h - h * t / tpeak:.1f}" for i, t in enumerate(total))
    parts.append(f'<polyline points="{pts}" fill="none" stroke="#bc4c00" stroke-width="2"/>')
    parts.append(f'<text x="{left + w / 2}" y="{height - 4}" text-anchor="middle">{axis}</text>')
    parts.append(f'<text x="12" y="{top + h / 2}" transform="rotate(-90 12 {top + h / 2})" '
                 f'text-anchor="middle">new distinct states</text>')
    parts.append(f'<text x="{width - 8}" y="{top + h / 2}" transform="rotate(90 {width - 8} {top + h / 2})" '
                 f'text-anchor="middle" fill="#bc4c00">running total</text>')
    parts.append("</svg>")
    return "".join(parts)


def coverage_table(generated: dict[str, int], distinct: dict[str, int], exhausted: bool,
                   switched_off: dict[str, str] | None = None) -> str:
    """Per action: generated, new states, a bar; actions the constants switch
    off on purpose (a limit of 0) apart from those never enabled."""
    off = switched_off or {}
    peak = max(generated.values(), default=0) or 1
    rows = ['<table id="coverage"><thead><tr><th>action</th><th class="num">generated</th>'
            '<th class="num">distinct (new)</th><th></th><th>note</th></tr></thead><tbody>']
    for name, gen in generated.items():
        dis = distinct.get(name, 0)
        if gen == 0 and name in off:
            cls, note = "off", f'<span class="muted">switched off: {_esc(off[name])}</span>'
        elif gen == 0:
            cls, note = "never", '<span class="flag">never enabled</span>'
        elif dis == 0:
            cls, note = "nonew", '<span class="flag warn">enabled, never a new state</span>'
        else:
            cls, note = "", ""
        bar = f'<span class="bar" style="width:{max(1, round(160 * gen / peak))}px"></span>' if gen else ""
        rows.append(f'<tr class="{cls}" data-action="{_esc(name)}"><td><code>{_esc(name)}</code></td>'
                    f'<td class="num">{gen:,}</td><td class="num">{dis:,}</td><td>{bar}</td><td>{note}</td></tr>')
    rows.append("</tbody></table>")
    never = [n for n, g in generated.items() if g == 0 and n not in off]
    quiet = [n for n, g in generated.items() if g == 0 and n in off]
    if quiet:
        rows.append(f"<p class='muted'>{len(quiet)} action(s) switched off by the constants, on "
                    f"purpose: {_esc(', '.join(f'{n} ({off[n]})' for n in quiet))}.</p>")
    if never:
        scope = "in the whole state space" if exhausted else "within this bound"
        rows.append(f"<p><span class='flag'>{len(never)} action(s) never enabled {scope}:</span> "
                    f"{_esc(', '.join(never))}. No limit constant switches them off: the model "
                    f"does not reach them here; check that this is intended.</p>")
    return "".join(rows)


def simulation_verdict(summary: dict) -> tuple[str, list, str]:
    """A simulation's verdict, figures and how it ran (kmc simulate: random
    walks, not a search of every state): the run's seed, the walks, the shrinking."""
    sim = summary["simulate"]
    violations = summary.get("violations", [])
    shrink = sim.get("shrink")
    first = sim.get("first_violation")
    if violations:
        v = violations[0]
        verdict = (f'<span class="badge violation">VIOLATION</span> {_esc(v["property"])} after '
                   f'{steps(v["depth"])}'
                   + (f" (shrunk from {shrink['original_steps']})" if shrink else ""))
    else:
        verdict = (f'<span class="badge pass">PASS</span> no property violated in '
                   f'{sim.get("walks", 0):,} random walks of at most {steps(sim.get("depth_bound"))} '
                   f'(not every state: a simulation)')
    figs = [("walks", _n(sim.get("walks"))), ("steps", _n(sim.get("steps"))),
            ("distinct states", _n(summary.get("distinct"))), ("seed", _esc(sim.get("seed"))),
            ("steps per walk at most", _n(sim.get("depth_bound"))),
            ("time walking", f"{sim.get('walk_s', 0):,.2f} s"),
            ("walks / s", f"{sim.get('walks_per_s', 0):,.1f}"),
            ("peak memory", f"{summary.get('peak_memory_kb', 0) / 1024:,.0f} MiB")]
    how = [f"Random walks (kmc simulate), seed {sim.get('seed')}: {sim.get('walks', 0):,} walks, "
           f"{sim.get('steps', 0):,} steps" + (", swarm (each batch its own action weights)"
                                                if sim.get("swarm") else "") + "."]
    if first:
        how.append(f"First violation: {first['property']} on walk {first['walk']:,} after "
                   f"{steps(first['walk_steps'])}, {first['time_to_violation_s']:.2f} s into the walks.")
    if shrink:
        how.append(f"Shrunk from {steps(shrink['original_steps'])} to {steps(shrink['steps'])} "
                   f"({shrink['replays']:,} candidates replayed, {shrink['seconds']:.2f} s; "
                   + ("1-minimal" if shrink.get("one_minimal") else "stopped by --shrink-time: not "
                      "certified 1-minimal") + ").")
    command = reproduce_simulation(summary)
    if command:
        how.append(f"Reproduce: {command}")
    return verdict, figs, "".join(f"<p>{_esc(x)}</p>" for x in how)


def run_report(summary: dict) -> str:
    """The report page of one run, from its summary object (summary.json)."""
    config = summary.get("config", {})
    outcome = summary.get("outcome", "?")
    name = config.get("name") or "run"
    violations = summary.get("violations", [])
    simulation = summary.get("simulate") is not None
    if simulation:
        verdict, sim_figs, sim_how = simulation_verdict(summary)
    elif outcome == "violation" and violations:
        first = violations[0]
        verdict = (f'<span class="badge violation">VIOLATION</span> {_esc(first["property"])} '
                   f'after {steps(first["depth"])}')
        if len(violations) > 1:
            verdict += f" (and {len(violations) - 1} more)"
    else:
        if summary.get("exhausted"):
            bound = "every reachable state explored"
        elif config.get("depth") is not None:
            bound = f"within {steps(config['depth'])}"
        else:
            bound = "search stopped"
        verdict = f'<span class="badge pass">PASS</span> no property violated ({_esc(bound)})'
    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
           f"<title>kmc report: {_esc(name)} - {_esc(outcome)}</title><style>{CSS}</style></head><body>",
           f"<h1>{_esc(name)}: {verdict}</h1>",
           f"<p class='muted'>model <code>{_esc(config.get('model'))}/{_esc(config.get('variant'))}</code>, "
           f"spec <code>{_esc(config.get('spec'))}</code>, run <code>{_esc(summary.get('run_id'))}</code>, "
           f"engine {_esc(config.get('engine', 'local'))}, kmc {_esc(summary.get('kmc_version'))}</p>"]
    expect = summary.get("expect") or {}
    figs = [("distinct states", _n(summary.get("distinct"))), ("generated", _n(summary.get("generated"))),
            ("depth reached", _n(summary.get("depth_reached"))),
            ("states left on queue", _n(summary.get("states_left"))),
            ("time", f"{summary.get('wall_time_s', 0):,.2f} s"),
            ("generated / s", f"{summary.get('generated_per_s', 0):,.0f}"),
            ("peak memory" + (f" ({n} processes)" if (n := (summary.get("memory") or {}).get("processes", 1)) > 1
                              else ""), f"{summary.get('peak_memory_kb', 0) / 1024:,.0f} MiB"),
            ("fingerprint collision (optimistic)", f"{summary.get('collision_probability', 0):.2g}")]
    if simulation:
        figs = sim_figs
    out.append('<div class="figures">' + "".join(f'<div class="fig"><b>{v}</b><span>{_esc(k)}</span></div>'
                                                 for k, v in figs) + "</div>")
    if simulation:
        out.append(sim_how)
    if expect:
        met = summary.get("expect_met")
        if met is True:
            badge = '<span class="badge pass">MATCHES</span> '
        elif met is False:
            badge = ('<span class="badge violation">DOES NOT MATCH</span> '
                     + _esc("; ".join(summary.get("expect_problems", []))) + ". ")
        else:
            badge = _esc(summary.get("expect_note", "")) + " " if summary.get("expect_note") else ""
        out.append(f"<p id='expect'>{badge}Expected (the spec's [expect]): "
                   f"<code>{_esc(json.dumps(expect))}</code></p>")

    if violations:
        out.append("<h2>Counterexamples</h2><ul>")
        for v in violations:
            names = file_names(v["property"])
            out.append(f'<li><b>{_esc(v["property"])}</b> after {steps(v["depth"])}: '
                       f'<a href="{_esc(names["html"])}">page</a>, <a href="{_esc(names["text"])}">text</a>, '
                       f'<a href="{_esc(names["itf"])}">ITF</a>, <a href="{_esc(names["json"])}">JSON</a>'
                       f'<br><span class="muted">{_esc(" -> ".join(v.get("actions", [])))}</span></li>')
        out.append("</ul>")

    if simulation:   # no levels: the new states at each depth of the walks
        per_depth = list(summary["simulate"].get("per_depth_distinct", []))
        while len(per_depth) > 1 and per_depth[-1] == 0:
            per_depth.pop()
        out.append("<h2>New distinct states per depth of the walks</h2>")
        out.append(growth_chart(per_depth, unit="depth", axis="steps into a walk"))
    per_level = [] if simulation else summary.get("per_level_distinct", [])
    if not simulation:
        out.append("<h2>Frontier growth</h2>")
    partial = outcome == "violation" and config.get("stop_on_violation", True) is not False
    if not simulation:
        out.append(growth_chart(per_level, last_partial=partial))
    if per_level:
        out.append(f"<p class='muted'>New distinct states per level: {_esc(per_level)}"
                   + (" (the last level is partial: the search stopped at the violation)" if partial else "")
                   + "</p>")

    out.append("<h2>Action coverage</h2>")
    out.append(coverage_table(summary.get("per_action_generated", {}), summary.get("per_action_distinct", {}),
                              bool(summary.get("exhausted")), summary.get("switched_off")))

    sometimes = summary.get("sometimes", {})
    if sometimes:
        out.append("<h2>Sometimes (reachability witnesses)</h2><ul>")
        for pname, w in sometimes.items():
            if w.get("witnessed"):
                out.append(f"<li><code>{_esc(pname)}</code>: witnessed after {steps(w.get('depth'))}</li>")
            else:
                out.append(f"<li><code>{_esc(pname)}</code>: <span class='flag'>never witnessed</span></li>")
        out.append("</ul>")
    checked = summary.get("properties_checked", [])
    if checked:
        out.append(f"<h2>Invariants checked</h2><p>{_esc(', '.join(checked))}</p>")
    constants = config.get("constants") or {}
    if constants:
        out.append("<h2>Configuration</h2><table><tbody>" + "".join(
            f"<tr><td><code>{_esc(k)}</code></td><td><code>{_esc(json.dumps(v))}</code></td></tr>"
            for k, v in constants.items())
            + (f"<tr><td>steps per walk at most</td><td>{_esc(summary['simulate'].get('depth_bound'))}</td></tr>"
               if simulation else f"<tr><td>depth bound</td><td>{_esc(config.get('depth'))}</td></tr>")
            + "</tbody></table>")
    out.append("</body></html>")
    return "\n".join(out)
