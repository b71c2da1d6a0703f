"""A counterexample's files, rendered in one pass.

Per violated property P a run folder holds:
- trace-P.txt       readable text: each step's action, then only what changed;
- trace-P.json      kmc's JSON (every state in full, plus its canonical bytes);
- trace-P.itf.json  the Informal Trace Format of Apalache (itf.py);
- trace-P.html      a self-contained page (trace_html.py).
render(view, v, summary) sends the violation and the model's trace view
(built once per run: views.view_for) to each writer once; a temporal
property's lasso goes to lasso.py's forms of the same four. results.write_run
writes what it returns; `kmc trace` renders one form again from a run folder
read back by runs.py.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from checker.output import itf
from checker.output.lasso import is_lasso, lasso_html, lasso_itf, lasso_json, lasso_text
from checker.output.render import steps as n_steps, trace_json, trace_text
from checker.output.trace_html import trace_page
from model.view import TraceView

KINDS = ("text", "json", "itf", "html")


def file_names(prop: str) -> dict[str, str]:
    return {"text": f"trace-{prop}.txt", "json": f"trace-{prop}.json",
            "itf": f"trace-{prop}.itf.json", "html": f"trace-{prop}.html"}


def reproduce_simulation(summary: dict) -> str | None:
    """The command that walks a simulation's violating walk again: the same
    seed, the walks up to the violating one, the same walk depth."""
    config, sim = summary.get("config") or {}, summary.get("simulate") or {}
    if not config.get("spec") or "seed" not in sim:
        return None
    first = sim.get("first_violation")
    walks = first["walk"] + 1 if first else sim.get("walks")
    sets = " ".join(f"--set {k}={json.dumps(v)}" for k, v in (config.get("overrides") or {}).items())
    return (f"kmc simulate {config['spec']} --seed {sim['seed']} --walks {walks} "
            f"--depth {sim.get('depth_bound')}" + (" --swarm" if sim.get("swarm") else " --no-swarm")
            + (f" {sets}" if sets else ""))


def page_meta(summary: dict | None) -> dict:
    """What the HTML header shows of a run (from its summary object)."""
    if not summary:
        return {}
    config = summary.get("config", {})
    spec = config.get("spec")
    overrides = config.get("overrides") or {}
    command = None
    if spec:
        sets = " ".join(f"--set {k}={json.dumps(v)}" for k, v in overrides.items())
        command = f"kmc check {spec}" + (f" {sets}" if sets else "")
        if summary.get("simulate") is not None:   # random walks: BFS would not retrace them
            command = reproduce_simulation(summary)
    return {"spec": spec, "spec_name": config.get("name"),
            "model": f"{config.get('model')}/{config.get('variant')}" if config.get("model") else None,
            "constants": config.get("constants"), "run_id": summary.get("run_id"), "command": command}


def itf_meta(summary: dict | None, prop: str, trace: list) -> dict:
    config = (summary or {}).get("config", {})
    meta: dict[str, Any] = {
        "source": config.get("spec") or "",
        "description": f"kmc counterexample: {prop} violated after {n_steps(len(trace) - 1)}",
        "generator": "kmc",
        "property": prop,
    }
    for key in ("model", "variant", "constants"):
        if key in config:
            meta[key] = config[key]
    if summary and summary.get("run_id"):
        meta["run_id"] = summary["run_id"]
    return meta


def text_form(view: TraceView | None, v, summary: dict | None) -> str:
    if is_lasso(v):
        return lasso_text(v, view) + "\n"
    header = getattr(v, "header", "")   # an evaluation error's (result.EvaluationFailure)
    return (view.text(v.property, v.trace, header) if view is not None
            else trace_text(v.property, v.trace, header))


def json_form(view: TraceView | None, v, summary: dict | None) -> str:
    obj = lasso_json(v) if is_lasso(v) else trace_json(v.property, v.trace)
    return json.dumps(obj, indent=1) + "\n"


def itf_object(view: TraceView, v, summary: dict | None) -> dict:
    meta = {**itf_meta(summary, v.property, v.trace), **view.itf_meta()}
    if is_lasso(v):
        return lasso_itf(v, variables(view, v.trace), view.itf_variable, meta)
    return itf.trace_itf(v.trace, variables(view, v.trace), view.itf_variable, meta)


def variables(view: TraceView, trace: list) -> tuple[str, ...]:
    return tuple(getattr(trace[0][1], "_fields", None) or getattr(view.model, "variables", ()))


def itf_form(view: TraceView, v, summary: dict | None) -> str:
    return json.dumps(itf_object(view, v, summary), indent=1) + "\n"


def html_form(view: TraceView, v, summary: dict | None) -> str:
    if is_lasso(v):
        return lasso_html(v, view, page_meta(summary))
    return trace_page(view, v.property, v.trace, page_meta(summary))


WRITERS: dict[str, Callable[[Any, Any, dict | None], str]] = {
    "text": text_form, "json": json_form, "itf": itf_form, "html": html_form}


def render(view: TraceView | None, v, summary: dict | None,
           kinds: tuple[str, ...] = KINDS) -> tuple[dict[str, str], list[str]]:
    """({kind: file content}, rendering errors) of violation v. The ITF and
    the page need the model's view (None: the model could not be rebuilt);
    a view that fails to render one of them does not cost the others."""
    files: dict[str, str] = {}
    errors: list[str] = []
    for kind in kinds:
        if view is None and kind in ("itf", "html"):
            errors.append(f"{v.property}: the model could not be rebuilt; no {kind.upper()}")
            continue
        if kind in ("text", "json"):  # the ground truth: a failure here is kmc's bug, shown
            files[kind] = WRITERS[kind](view, v, summary)
            continue
        try:
            files[kind] = WRITERS[kind](view, v, summary)
        except Exception as e:  # a rendering bug must not cost the run's results
            errors.append(f"{v.property}: {type(e).__name__}: {e}")
    return files, errors
