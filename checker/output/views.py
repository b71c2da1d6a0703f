"""Trace views: the registry that finds how a model shows its counterexamples.

The presentation itself is the model's (docs/ARCHITECTURE.md, "How a model
declares its presentation"): a model package's `view.py` (model/kraft/view.py,
model/zk/view.py) subclasses model.view.TraceView and the model's ModelDef
names it (view=, found by checker.search.registry.view_class), or the built
model has a `trace_view()` method. A model with neither (the toys)
gets the generic TraceView: every variable a column, a plain text diff, no
sequence diagram. The renderers here (checker/output/render.py, trace_html.py,
itf.py, traces.py) read only the view; this package holds no model knowledge.
"""
from __future__ import annotations

import sys
from typing import Any

from checker.search import registry
from checker.search.encoding import encode
from model.view import Arrow, Explanation, TraceView  # noqa: F401  (re-exported)


def view_class(model: Any) -> type:
    """The view class of a built model: its ModelDef's view (the one lookup,
    checker.search.registry.view_class, which the model contract checks)."""
    return registry.view_class(model)


def _property_docs(model: Any) -> dict[str, str]:
    try:
        return {p.name: p.doc for p in registry.properties_for(model)}
    except Exception as e:  # noqa: BLE001 - a view never fails a run for want of a doc
        print(f"kmc: warning: the trace pages show no property docs: {type(e).__name__}: "
              f"{' '.join(str(e).split())[:200]}", file=sys.stderr)
        return {}


def view_for(model: Any) -> TraceView:
    """The trace view of a built model (the generic one if it has none)."""
    hook = getattr(model, "trace_view", None)
    # (sets listed in the engine's canonical order, as the JSON and ITF do)
    view = hook() if callable(hook) else view_class(model)(model, order_key=encode)
    view.property_docs = _property_docs(model)
    return view


__all__ = ["Arrow", "Explanation", "TraceView", "view_class", "view_for"]
