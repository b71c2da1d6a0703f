"""How liveness shows in a run's outputs: summary.json's `liveness` section and
violation entries, the lasso files, the text report's lines. The shared
writers (checker/results.py, checker/cli.py) call these hooks."""
from __future__ import annotations

import json
from pathlib import Path

from checker.liveness.lasso import LassoViolation, full_headline, lasso_html, lasso_itf, lasso_text


def is_lasso(v) -> bool:
    return isinstance(v, LassoViolation)


def patch_summary(out: dict, result) -> None:
    """Lasso violations described as such; the liveness section added."""
    for entry, v in zip(out.get("violations", []), result.violations):
        if is_lasso(v):
            entry.update({"kind": "liveness", "instance": v.instance, "headline": full_headline(v),
                          "loop": v.loop, "prefix_steps": v.prefix_steps,
                          "cycle_steps": v.cycle_steps, "stuttering": v.stuttering})
    if getattr(result, "liveness", None) is not None:
        out["liveness"] = result.liveness


def write_lasso(folder: Path, v: LassoViolation, model, summary_obj: dict, write_atomic,
                names: dict) -> list[str]:
    """trace-P.{txt,json,itf.json,html} of a lasso; returns rendering errors."""
    from checker.render import trace_json
    obj = trace_json(v.property, v.trace)
    obj.update(v.to_json())
    obj["headline"] = full_headline(v)
    write_atomic(folder / names["json"], json.dumps(obj, indent=1) + "\n")
    write_atomic(folder / names["text"], lasso_text(v, model) + "\n")
    if model is None:
        return [f"{v.property}: the model could not be rebuilt; no ITF / HTML"]
    try:
        write_atomic(folder / names["itf"], json.dumps(lasso_itf(v, model, summary_obj), indent=1) + "\n")
        write_atomic(folder / names["html"], lasso_html(v, model, summary_obj))
    except Exception as e:  # a rendering bug must not cost the run's results
        return [f"{v.property}: {type(e).__name__}: {e}"]
    return []


def lasso_of_run(summary: dict, prop: str, trace: list) -> LassoViolation | None:
    """A run's lasso for `prop` rebuilt from its summary entry (None: the
    property's counterexample is not a lasso)."""
    entry = next((e for e in summary.get("violations", []) if e.get("property") == prop), None)
    if entry is None or entry.get("kind") != "liveness":
        return None
    return LassoViolation(prop, len(trace) - 1, trace, loop=int(entry.get("loop", len(trace) - 1)),
                          instance=entry.get("instance", ""), full=entry.get("headline", ""))


def violation_text(v, model) -> str | None:
    """The text of a lasso (None: not a lasso)."""
    return lasso_text(v, model) if is_lasso(v) else None


def liveness_lines(result) -> list[str]:
    """The report's lines on the temporal properties."""
    section = getattr(result, "liveness", None)
    if section is None:
        return []
    lines = []
    if not section.get("checked"):
        lines.append(f"Temporal properties NOT checked: {section.get('reason', '')}")
        return lines
    g = section.get("graph", {})
    fair = section.get("fairness") or []
    given = section.get("fairness_spec")
    lines.append(f"Temporal properties, on the whole graph ({g.get('states', 0):,} states, "
                 f"{g.get('edges', 0):,} transitions) under "
                 + ((f"the {given} fairness: " if isinstance(given, str) else "fairness ")
                    + ", ".join(fair) if fair else "no fairness") + ":")
    for name, entry in section.get("properties", {}).items():
        if entry["verdict"] == "violated":
            ce = entry.get("counterexample", {})
            inst = f" ({ce.get('instance')})" if ce.get("instance") else ""
            shape = (f"stuttering after {ce.get('prefix_steps')} steps" if ce.get("stuttering")
                     else f"prefix {ce.get('prefix_steps')} steps, cycle {ce.get('cycle_steps')} steps")
            lines.append(f"  {name}{inst}: VIOLATED - {ce.get('headline', '')} [{shape}]")
        else:
            lines.append(f"  {name}: {entry['verdict']}")
    return lines
