"""TraceView: the generic way to show a counterexample, for any model; a model's
own view (checker/views/<model>.py) overrides what it can show better.

A trace is [(None, s0), (a1, s1), ...] as the engine returns it.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import Any, Sequence

from checker import itf
from checker.encoding import encode
from checker.render import render_value, steps


@dataclass
class Arrow:
    """One message of the sequence diagram: sent at step `sent` (0: already in
    flight initially) from lane `src` to lane `dst`, consumed at step `end`
    (None: still in flight at the end of the trace)."""

    src: int
    dst: int
    sent: int
    end: int | None
    fate: str          # "received" | "dropped" | "in flight"
    short: str         # a label for the diagram
    full: str          # every field, for a tooltip and the text
    kind: str = ""     # a CSS class (e.g. the message type)


@dataclass
class Explanation:
    """What broke, in one or two sentences, and which table columns show it."""

    text: str
    columns: set[int] = field(default_factory=set)   # indices into columns()
    # the step where the promise broke, when it is not the last one (for
    # example the election of a leader that lacks a committed record,
    # before that leader runs), and what it did, in a few words
    broke_at: int | None = None
    broke_how: str = ""


class TraceView:
    """Generic view: every variable is a table column, the text shows each
    changed variable's new value, there is no sequence diagram."""

    name = "generic"

    def __init__(self, model: Any):
        self.model = model
        self.variables: tuple[str, ...] = tuple(getattr(model, "variables", ()) or ())

    # ---- helpers ---------------------------------------------------------------

    def names(self, state) -> Sequence[str]:
        return getattr(state, "_fields", None) or self.variables or [f"v{i}" for i in range(len(state))]

    def property_doc(self, prop: str) -> str:
        """A property's one-line doc, if the model's properties give one."""
        try:
            from invariants.registry import properties_for
            for p in properties_for(self.model):
                if p.name == prop:
                    return p.doc
        except Exception:  # a view never fails a run for want of a doc
            pass
        return ""

    # ---- text --------------------------------------------------------------------

    def step_title(self, action) -> str:
        return str(action)

    def describe(self, action, prev, state) -> str:
        """A short sentence saying what the step does ('' for none)."""
        return ""

    def initial_lines(self, state, full: bool = True) -> list[str]:
        """State 0. full=False: what a person reads first (a view whose full
        dump is long shortens it; the trace files keep it whole)."""
        return [f"{n} = {render_value(v)}" for n, v in zip(self.names(state), state)]

    def step_lines(self, prev, state, action) -> list[str]:
        """What the step changed, one line per changed variable."""
        return [f"{n} = {render_value(b)}" for n, a, b in zip(self.names(state), prev, state) if a != b]

    def header(self, prop: str, trace: list) -> str:
        from checker.render import steps
        n = steps(len(trace) - 1)
        if prop == "Deadlock":
            return f"Deadlock reached after {n}."
        return f"Invariant {prop} is violated after {n}."

    def text(self, prop: str, trace: list, header: str = "", full_initial: bool = True,
             also: Sequence[str] = ()) -> str:
        """The readable counterexample: the initial state (in full, or as
        initial_lines(full=False) says), then each step's action and only
        what it changed, then what broke. also: other properties the same
        trace violates (named in the header, each with its explanation)."""
        props = [prop, *also]
        if also and not header:
            names = ", ".join(props[:-1]) + " and " + props[-1]
            header = f"Invariants {names} are violated after {steps(len(trace) - 1)} (the same trace)."
        lines = [header or self.header(prop, trace)]
        for p in props:
            why = self.explain(p, trace)
            if why is not None and why.text:
                lines.append(f"{p}: {why.text}" if also else why.text)
        lines.append("")
        prev = None
        for i, (action, state) in enumerate(trace):
            if prev is None:
                lines.append("State 0: <initial state>")
                body = self.initial_lines(state, full_initial)
            else:
                title = f"Step {i}: {self.step_title(action)}"
                what = self.describe(action, prev, state)
                lines.append(f"{title} - {what}" if what else title)
                body = self.step_lines(prev, state, action) or ["(no variable changed)"]
            lines.extend("  " + line for line in body)
            lines.append("")
            prev = state
        return "\n".join(lines)

    # ---- ITF ---------------------------------------------------------------------

    def itf_variable(self, name: str, value: Any) -> Any:
        return itf.to_itf(value)

    def itf_meta(self) -> dict:
        return {}

    # ---- sequence diagram ----------------------------------------------------------

    def lanes(self) -> list[str]:
        """The diagram's lanes, left to right ([]: no diagram)."""
        return []

    def in_flight(self, state) -> frozenset | None:
        """The messages in flight in `state` (None: the model has no network)."""
        return None

    def message_lanes(self, m) -> tuple[int, int]:
        return (0, 0)

    def message_label(self, m) -> tuple[str, str]:
        text = render_value(m)
        return (text[:24], text)

    def message_kind(self, m) -> str:
        return ""

    def actor_lane(self, action) -> int | None:
        """The lane that takes the step (a dot on the diagram); None: none."""
        return None

    def fate(self, action, m) -> str:
        """How a message left the network in a step: received or dropped."""
        actor = self.actor_lane(action)
        return "received" if actor is not None and self.message_lanes(m)[1] == actor else "dropped"

    def arrows(self, trace: list) -> list[Arrow]:
        """Every message of the trace, from the per-step diff of in_flight."""
        if not self.lanes():
            return []
        arrows: list[Arrow] = []
        open_: dict[Any, Arrow] = {}

        def start(m, step: int) -> None:
            src, dst = self.message_lanes(m)
            short, full = self.message_label(m)
            a = Arrow(src, dst, step, None, "in flight", short, full, self.message_kind(m))
            arrows.append(a)
            open_[m] = a

        prev = self.in_flight(trace[0][1]) or frozenset()
        for m in sorted(prev, key=encode):
            start(m, 0)
        for i, (action, state) in enumerate(trace[1:], 1):
            cur = self.in_flight(state) or frozenset()
            if cur is prev:
                continue
            for m in sorted(prev - cur, key=encode):
                a = open_.pop(m, None)
                if a is not None:
                    a.end = i
                    a.fate = self.fate(action, m)
            for m in sorted(cur - prev, key=encode):
                start(m, i)
            prev = cur
        return arrows

    # ---- the per-step table ----------------------------------------------------------

    def columns(self) -> list[str]:
        return list(self.variables)

    def cells(self, prev, state) -> list[tuple[str, bool]]:
        """One (HTML, changed) per column for `state` (prev: None at step 0)."""
        return [(html.escape(render_value(v)), prev is not None and prev[i] != v)
                for i, v in enumerate(state)]

    def explain(self, prop: str, trace: list) -> Explanation | None:
        doc = self.property_doc(prop)
        if prop == "Deadlock":
            return Explanation("The last state has no successor.")
        return Explanation(f"{prop}: {doc}" if doc else "") if doc else None
