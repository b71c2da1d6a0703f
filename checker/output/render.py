"""Readable and JSON forms of states and traces.

Text: NamedTuples as Name(field=value, ...), tuples as <<a, b>>, frozensets
as {a, b} (elements in a fixed order), IntEnums by name, None as Nil, booleans
as TRUE / FALSE, strings in double quotes.
JSON: NamedTuples as objects, tuples and frozensets as arrays (frozensets in
canonical order), IntEnums by name, None as null; each step of a trace also
carries "encoded", the state's canonical bytes (base64), from which
`kmc trace` rebuilds the exact state (Model.from_plain) to render it again.

A model's own trace view (model/<name>/view.py, found by checker.output.views)
renders its traces more readably: pass `view=` to trace_text.
"""
from __future__ import annotations

import base64
from enum import IntEnum
from typing import Any, Sequence

from checker.search.encoding import encode, encode_state, parts_to_bytes
from model import view as _view
from model.view import is_record, set_order, steps


def render_value(v: Any) -> str:
    """TLA+-style text of a value: the model views' own (model/view.py), with
    sets in the engine's canonical order."""
    return _view.render_value(v, encode)


def to_json(v: Any) -> Any:
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, IntEnum):
        return v.name
    if isinstance(v, (int, float, str)):
        return v
    if is_record(v):
        return {f: to_json(x) for f, x in zip(v._fields, v)}
    if isinstance(v, tuple):
        return [to_json(x) for x in v]
    if isinstance(v, (frozenset, set)):
        return [to_json(x) for x in set_order(v, encode)]
    return repr(v)


def _variables(state) -> Sequence[str]:
    return getattr(state, "_fields", None) or [f"v{i}" for i in range(len(state))]


def action_json(action) -> dict | None:
    if action is None:
        return None
    return {"name": action.name, "params": [to_json(p) for p in action.params], "label": str(action)}


def trace_json(property_name: str, trace: list) -> dict:
    steps = []
    prev = None
    for i, (action, state) in enumerate(trace):
        names = _variables(state)
        changed = [n for j, n in enumerate(names) if prev is None or prev[j] != state[j]]
        steps.append({"step": i, "action": action_json(action), "changed": changed,
                      "state": {n: to_json(x) for n, x in zip(names, state)},
                      "encoded": encoded_state(state)})
        prev = state
    return {"property": property_name, "depth": len(trace) - 1, "steps": steps}


def encoded_state(state) -> str:
    """A state's canonical bytes, base64 (decode with checker.search.encoding.decode_state)."""
    return base64.b64encode(parts_to_bytes(encode_state(state))).decode("ascii")


def trace_text(property_name: str, trace: list, header: str = "", view: Any = None,
               full_initial: bool = True, also: Sequence[str] = ()) -> str:
    """Step 0 shows every variable; each later step its action and only the
    variables it changed. With `view` (the model's trace view,
    checker.output.views.view_for), the view renders it (kraft: per-broker
    changes, messages sent / received, the lost record); full_initial and
    also (other properties the same trace violates): see
    model.view.TraceView.text."""
    if view is not None:
        return view.text(property_name, trace, header, full_initial, also)
    if also and not header:
        header = (f"Invariants {', '.join([property_name, *also][:-1])} and {also[-1]} are violated "
                  f"after {steps(len(trace) - 1)} (the same trace).")
    if not header:
        n = steps(len(trace) - 1)
        header = (f"Deadlock reached after {n}." if property_name == "Deadlock"
                  else f"Invariant {property_name} is violated after {n}.")
    lines = [header, ""]
    prev = None
    for i, (action, state) in enumerate(trace):
        names = _variables(state)
        if prev is None:
            lines.append("State 0: <initial state>")
            shown = range(len(names))
        else:
            lines.append(f"Step {i}: {action}")
            shown = [j for j in range(len(names)) if prev[j] != state[j]]
            if not shown:
                lines.append("  (no variable changed)")
        for j in shown:
            lines.append(f"  {names[j]} = {render_value(state[j])}")
        lines.append("")
        prev = state
    return "\n".join(lines)
