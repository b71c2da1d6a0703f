"""Trace views: the registry that finds how a model shows its counterexamples.

The presentation itself is the model's (docs/ARCHITECTURE.md, "How a model
declares its presentation"): a model package's `view.py` (model/kraft/view.py,
model/zk/view.py) subclasses model.view.TraceView and names it TRACE_VIEW, or
the built model has a `trace_view()` method. A model with neither (the toys)
gets the generic TraceView: every variable a column, a plain text diff, no
sequence diagram. The renderers here (checker/output/render.py, trace_html.py,
itf.py, traces.py) read only the view; this package holds no model knowledge.
"""
from __future__ import annotations

import importlib
from typing import Any

from checker.search.encoding import encode
from model import view as _model_view
from model.view import Arrow, Explanation, TraceView  # noqa: F401  (re-exported)

# views list sets in the engine's canonical order (as the JSON and ITF do)
_model_view.use_order_key(encode)


def _view_module(model: Any):
    """The model package's view module (None: it has none)."""
    module = type(model).__module__ if not isinstance(model, type) else model.__module__
    package = module.rpartition(".")[0]
    if not package:
        return None
    name = f"{package}.view"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name != name:
            raise  # the view module exists but is broken: say so
        return None


def view_class(model: Any) -> type:
    """The view class of a built model (or of its class)."""
    mod = _view_module(model)
    return getattr(mod, "TRACE_VIEW", TraceView) if mod is not None else TraceView


def _property_docs(model: Any) -> dict[str, str]:
    try:
        from invariants.registry import properties_for
        return {p.name: p.doc for p in properties_for(model)}
    except Exception:  # a view never fails a run for want of a doc
        return {}


def view_for(model: Any) -> TraceView:
    """The trace view of a built model (the generic one if it has none)."""
    hook = getattr(model, "trace_view", None)
    view = hook() if callable(hook) else view_class(model)(model)
    view.property_docs = _property_docs(model)
    return view


__all__ = ["Arrow", "Explanation", "TraceView", "view_class", "view_for"]
