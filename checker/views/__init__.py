"""Trace views: how a model's counterexample is shown to a person (text and
HTML) and written for tools (ITF), by model name.

The hook for a new model is one module, checker/views/<model-name>.py, that
subclasses TraceView and registers it:

    from checker.views import TraceView, register

    @register("zk")
    class ZkView(TraceView):
        lanes = ...            # override what the model can show better

view_for(model) finds it: a view registered under model.name, else the module
checker.views.<model.name> is imported (importing it registers the view),
else the generic view (every variable as a column, a plain text diff, no
sequence diagram). Views read states by field name only; they never change
what the checker explores.

What a view provides (all optional; the generic defaults work for any model):
- text: step_title(action), step_lines(prev, state, action) -> the readable
  lines of what changed;
- ITF: itf_variable(name, value) -> the ITF JSON of one variable;
- HTML: lanes() (sequence-diagram lanes, [] for none), in_flight(state) (the
  set of messages in flight, diffed per step into sends and receives),
  message_lanes(m), message_label(m) -> (short, full), actor_lane(action);
  columns() and cells(prev, state) -> the per-step table (HTML snippets);
  explain(property, trace) -> one sentence on what broke (the lost record).
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

from checker.views.base import Arrow, TraceView  # noqa: F401  (re-exported)

_VIEWS: dict[str, type] = {}


def register(model_name: str) -> Callable[[type], type]:
    """Class decorator: `cls` shows counterexamples of model `model_name`."""
    def deco(cls: type) -> type:
        _VIEWS[model_name] = cls
        return cls
    return deco


def view_class(model_name: str) -> type:
    if model_name not in _VIEWS:
        try:
            importlib.import_module(f"{__name__}.{model_name}")
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{model_name}":
                raise  # the view module exists but is broken: say so
    return _VIEWS.get(model_name, TraceView)


def view_for(model: Any) -> TraceView:
    """The trace view of a built model (the generic one if it has none)."""
    return view_class(getattr(model, "name", ""))(model)


__all__ = ["Arrow", "TraceView", "register", "view_class", "view_for"]
