"""Counterexamples in the Informal Trace Format (ITF), the JSON trace format of
the Apalache model checker (ADR-015, https://apalache-mc.org/docs/adr/015adr-trace.html),
so that tools that read Apalache / Quint traces read kmc's too.

A trace is {"#meta": {...}, "vars": [...], "states": [...]}; each state is
{"#meta": {"index": i, ...}, "<var>": <expr>, ...} with every variable. The
expressions, as ADR-015 writes them:
- booleans and strings as JSON's; integers as {"#bigint": "<digits>"} (what
  Apalache and Quint write; ADR-015 allows it for every integer);
- a set as {"#set": [...]}, elements in kmc's canonical order;
- a record (a NamedTuple) as a JSON object of its fields;
- a TLA+ sequence (a tuple) as a JSON list; a tuple proper as {"#tup": [...]};
- a function as {"#map": [[key, value], ...]};
- a model value (an IntEnum member) as its name, Nil (None) as "Nil".
Which tuples are functions (e.g. over Brokers) and which records have fields
that are absent rather than Nil is model knowledge: the model's trace view
(model/<name>/view.py) says so through itf_variable; the defaults here know none.
"""
from __future__ import annotations

from typing import Any, Callable

from checker.search.encoding import encode
from model.view import itf as _shapes

FORMAT_DESCRIPTION = "https://apalache-mc.org/docs/adr/015adr-trace.html"
NIL = "Nil"


# The value shapes are the model views' own (model/view.py: a view's
# itf_variable builds on them), with sets in the engine's canonical order.
bigint = _shapes.bigint


def to_itf(v: Any, record: Callable[[Any], Any] | None = None) -> Any:
    return _shapes.to_itf(v, record, encode)


def fn_over(values, keys, convert: Callable[[Any], Any] | None = None) -> dict:
    return _shapes.fn_over(values, keys, convert or to_itf, encode)


def trace_itf(trace: list, variables, variable: Callable[[str, Any], Any], meta: dict,
              action_label: Callable[[Any], str] = str) -> dict:
    """The ITF object of a trace [(None, s0), (a1, s1), ...]. `variable(name,
    value)` gives each variable's ITF expression (a view's itf_variable)."""
    states = []
    for i, (action, state) in enumerate(trace):
        smeta: dict[str, Any] = {"index": i}
        if action is not None:
            smeta["action"] = action_label(action)
        obj: dict[str, Any] = {"#meta": smeta}
        for name, value in zip(variables, state):
            obj[name] = variable(name, value)
        states.append(obj)
    return {"#meta": {"format": "ITF", "format-description": FORMAT_DESCRIPTION, **meta},
            "vars": list(variables), "states": states}


def validate(obj: Any) -> list[str]:
    """Problems of an ITF trace object against ADR-015's shape ([] if none):
    a check for tests and for `kmc trace itf --check`."""
    problems: list[str] = []
    if not isinstance(obj, dict):
        return ["a trace must be a JSON object"]
    vars_ = obj.get("vars")
    if not isinstance(vars_, list) or not all(isinstance(v, str) for v in vars_):
        problems.append('"vars" must be a list of strings')
        vars_ = []
    states = obj.get("states")
    if not isinstance(states, list):
        return problems + ['"states" must be a list']
    for key in obj:
        if key not in ("#meta", "params", "vars", "states", "loop"):
            problems.append(f"unknown trace field {key!r}")

    def expr(e: Any, where: str) -> None:
        if isinstance(e, bool) or isinstance(e, str):
            return
        if isinstance(e, int):
            if abs(e) > 2 ** 53 - 1:
                problems.append(f"{where}: integer out of JSON's safe range")
            return
        if isinstance(e, list):
            for i, x in enumerate(e):
                expr(x, f"{where}[{i}]")
            return
        if isinstance(e, dict):
            special = [k for k in e if k.startswith("#")]
            if special:
                if len(e) != 1:
                    problems.append(f"{where}: {special[0]} must be the only key")
                    return
                k, body = next(iter(e.items()))
                if k == "#bigint":
                    if not (isinstance(body, str) and body.lstrip("-").isdigit()):
                        problems.append(f"{where}: bad #bigint {body!r}")
                elif k in ("#set", "#tup"):
                    if not isinstance(body, list):
                        problems.append(f"{where}: {k} must hold a list")
                    else:
                        for i, x in enumerate(body):
                            expr(x, f"{where}.{k}[{i}]")
                elif k == "#map":
                    if not isinstance(body, list) or not all(isinstance(p, list) and len(p) == 2
                                                             for p in body):
                        problems.append(f"{where}: #map must hold [key, value] pairs")
                    else:
                        for i, (a, b) in enumerate(body):
                            expr(a, f"{where}.#map[{i}].key")
                            expr(b, f"{where}.#map[{i}].value")
                elif k != "#unserializable":
                    problems.append(f"{where}: unknown special key {k}")
                return
            for f, x in e.items():
                expr(x, f"{where}.{f}")
            return
        problems.append(f"{where}: {type(e).__name__} is not an ITF expression")

    for i, s in enumerate(states):
        if not isinstance(s, dict):
            problems.append(f"states[{i}] must be an object")
            continue
        meta = s.get("#meta")
        if not isinstance(meta, dict) or meta.get("index") != i:
            problems.append(f'states[{i}]: "#meta" must hold "index": {i}')
        missing = [v for v in vars_ if v not in s]
        extra = [k for k in s if k != "#meta" and k not in vars_]
        if missing:
            problems.append(f"states[{i}] lacks {', '.join(missing)}")
        if extra:
            problems.append(f"states[{i}] has undeclared {', '.join(extra)}")
        for v in vars_:
            if v in s:
                expr(s[v], f"states[{i}].{v}")
    return problems
