"""How liveness shows in a run's outputs: summary.json's `liveness` section and
violation entries, the lasso's forms of a counterexample's four files (text and JSON, ITF
with its `loop` index, HTML with the cycle's rows marked: traces.render
picks them), the console report's lines."""
from __future__ import annotations

from checker.output.itf import trace_itf
from checker.output.render import trace_json, trace_text
from checker.output.trace_html import trace_page
from checker.search.liveness.lasso import LassoViolation, full_headline, header
from invariants.temporal import AlwaysEventually, EventuallyAlways, LeadsTo
from model.view import TraceView


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


def lasso_json(v: LassoViolation) -> dict:
    """kmc's trace JSON plus the lasso's shape (loop, prefix, cycle)."""
    obj = trace_json(v.property, v.trace)
    obj.update(v.to_json())
    obj["headline"] = full_headline(v)
    return obj


def lasso_of_run(summary: dict, prop: str, trace: list) -> LassoViolation | None:
    """A run's lasso for `prop` rebuilt from its summary entry (None: the
    property's counterexample is not a lasso)."""
    entry = next((e for e in summary.get("violations", []) if e.get("property") == prop), None)
    if entry is None or entry.get("kind") != "liveness":
        return None
    return LassoViolation(prop, len(trace) - 1, trace, loop=int(entry.get("loop", len(trace) - 1)),
                          instance=entry.get("instance", ""), full=entry.get("headline", ""))


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


def lasso_text(v: LassoViolation, view: TraceView | None = None) -> str:
    """The readable lasso: the model's trace view, the cycle marked."""
    body = (view.text(v.property, v.trace, header(v)) if view is not None
            else trace_text(v.property, v.trace, header=header(v)))
    body = body.replace(f"(where {v.property} fails)", "(the last state of the lasso)")
    lines = body.split("\n")
    out = []
    marker_step = v.loop + 1
    for line in lines:
        if not v.stuttering and (line.startswith(f"Step {marker_step}:") or line == f"Step {marker_step}"):
            out.append(f"--- cycle: the steps below repeat for ever, from state {v.loop} ---")
        out.append(line)
    # the end of the steps (before any summary the view appends)
    end = (f"Stuttering: the behaviour stays in state {v.loop} for ever."
           if v.stuttering else f"Back to state {v.loop}: the cycle repeats for ever.")
    last_step = f"Step {len(v.trace) - 1}:" if len(v.trace) > 1 else "State 0:"
    idx = max((i for i, line in enumerate(out) if line.startswith(last_step)), default=len(out) - 1)
    j = idx + 1
    while j < len(out) and out[j].startswith("  "):  # the step's lines
        j += 1
    out.insert(j, end)
    return "\n".join(out)


def lasso_itf(v: LassoViolation, variables, itf_variable, meta: dict) -> dict:
    """The ITF object: the cycle's return step is left out and `loop` names
    the state it returns to (ADR-015)."""
    trace = v.trace if v.stuttering else v.trace[:-1]
    obj = trace_itf(trace, variables, itf_variable, meta)
    obj["loop"] = v.loop
    obj["#meta"]["description"] = (f"kmc lasso: {v.property}"
                                   + (f" ({v.instance})" if v.instance else "")
                                   + f" violated; {v.structure()}")
    obj["#meta"]["headline"] = full_headline(v)
    return obj


def _goal(prop: str, instance: str, model):
    """(P, Q) of the property's instance: the state predicate that asks (P of
    P ~> Q; None for []<>P) and the one a counterexample never reaches again
    (Q of P ~> Q, P of []<>P); None for other forms."""
    try:
        from checker.search.registry import temporal_properties_for
        found = next(p for p in temporal_properties_for(model) if p.name == prop)
        formula = next(i for i in found.instances if i.label == instance).formula
    except (StopIteration, KeyError, AttributeError):
        return None
    body = formula.body if isinstance(formula, (AlwaysEventually, EventuallyAlways)) else formula
    if isinstance(body, LeadsTo):
        return body.p, body.q
    return (None, body) if isinstance(formula, AlwaysEventually) else None


def lost_at(v: LassoViolation, model) -> int | None:
    """The step from which the lasso never again reaches the property's goal:
    for P ~> Q the first state, after the last Q, where P holds (a value
    written at step 56 is lost there, not at the initial state); for []<>P
    the state after the last P. None when the form has no such step."""
    goal = _goal(v.property, v.instance, model)
    if goal is None:
        return None
    asks, reached = goal
    i = len(v.trace)
    while i > 0 and not reached(v.trace[i - 1][1]):
        i -= 1
    if asks is not None:
        while i < len(v.trace) and not asks(v.trace[i][1]):
            i += 1
    return i if i < len(v.trace) else None


def lasso_html(v: LassoViolation, view: TraceView, page_meta: dict) -> str:
    return trace_page(view, v.property, v.trace, page_meta,
                      lasso={"loop": v.loop, "headline": full_headline(v), "instance": v.instance,
                             "structure": v.structure(), "lost_at": lost_at(v, view.model)})
