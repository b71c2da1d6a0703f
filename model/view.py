"""How a model declares its presentation: TraceView, the generic way to show a
counterexample of any model, and the value helpers a model's own view uses.

A model package shows its traces better by a module `view.py` next to its
code (model/kraft/view.py, model/zk/view.py) whose TraceView subclass its
ModelDef names (`view="model.kraft.view:TRACE_VIEW"`; or by a
`trace_view()` method on the built model). It says which variables are per broker, what a record, a role or a
message looks like, a sentence per action, the sequence diagram's lanes and
arrows, and what was lost when a durability property breaks. The engine's
renderers (checker/: text, HTML, ITF) are generic and read only this.

This module imports nothing of checker/ (model/ never does): the canonical
order of set elements is the engine's, passed to each view as it is made
(TraceView(model, order_key): checker.output.views.view_for passes
checker.search.encoding.encode) and to the value helpers as `key`; a
property's doc comes through `property_docs`, which the engine fills from
invariants/.

A trace is [(None, s0), (a1, s1), ...] as the engine returns it.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable, Sequence


# ---- value helpers (TLA+ scalars, sets in canonical order, ITF) -------------------

def plain_key(v: Any):
    """An order of set elements without the engine's (a view made without an
    order_key): by type name, then repr."""
    return (type(v).__name__, repr(v))


def set_order(s, key: Callable[[Any], Any] = plain_key) -> list:
    """A set's elements in the order `key` gives (a view's order_key)."""
    return sorted(s, key=key)


def steps(n: int) -> str:
    """'1 step', '6 steps'."""
    return f"{n} step" if n == 1 else f"{n} steps"


def render_scalar(v: Any) -> str | None:
    """Nil, TRUE, FALSE or a model value's name, as TLA+ writes them; None
    for any other value."""
    if v is None:
        return "Nil"
    if v is True:
        return "TRUE"
    if v is False:
        return "FALSE"
    if isinstance(v, IntEnum):
        return v.name
    return None


def promise_broke_at(trace: list, title: Callable[[Any], str], elected: Callable[[Any], bool],
                     has: Callable[[Any, Any], bool], values: Sequence, who: str, epoch: int,
                     word: str) -> tuple[int | None, str]:
    """Where a leader lacking `values` came about, for a headline: the step
    that made `who` leader in its final epoch (elected(state)) if it lacked
    one of them then; else the last step that took one of them from its log
    (has(state, value)). (None, "") when neither."""
    for i, (action, s) in enumerate(trace):
        if i and elected(s):
            short = [v for v in values if not has(s, v)]
            if short:
                return i, (f"step {i}, {title(action)}, made {who} leader (leader epoch {epoch}) "
                           f"without the {word} {', '.join(short)}")
            break
    for i in range(len(trace) - 1, 0, -1):
        gone = [v for v in values if has(trace[i - 1][1], v) and not has(trace[i][1], v)]
        if gone:
            return i, f"step {i}, {title(trace[i][0])}, took {', '.join(gone)} from {who}'s log"
    return None, ""


def is_record(v: Any) -> bool:
    return isinstance(v, tuple) and hasattr(v, "_fields")


def render_value(v: Any, key: Callable[[Any], Any] = plain_key) -> str:
    """A value as TLA+ writes it: Name(field=value, ...), <<a, b>>, {a, b}
    (a set's elements in the order `key` gives)."""
    text = render_scalar(v)
    if text is not None:
        return text
    if isinstance(v, str):
        return '"' + v.replace('"', '\\"') + '"'
    if is_record(v):
        return f"{type(v).__name__}(" + ", ".join(
            f"{f}={render_value(x, key)}" for f, x in zip(v._fields, v)) + ")"
    if isinstance(v, tuple):
        return "<<" + ", ".join(render_value(x, key) for x in v) + ">>"
    if isinstance(v, (frozenset, set)):
        return "{" + ", ".join(render_value(x, key) for x in set_order(v, key)) + "}"
    return str(v)


class itf:
    """The Informal Trace Format's value shapes (Apalache ADR-015), for a
    view's itf_variable (checker/output/itf.py writes the trace around them)."""

    NIL = "Nil"

    @staticmethod
    def bigint(n: int) -> dict:
        return {"#bigint": str(int(n))}

    @staticmethod
    def to_itf(v: Any, record: Callable[[Any], Any] | None = None,
               key: Callable[[Any], Any] = plain_key) -> Any:
        """A value's ITF expression with the generic shapes (tuples are
        sequences); `record(v)` converts the records met inside; a set's
        elements in the order `key` gives."""
        if v is None:
            return itf.NIL
        if v is True or v is False:
            return v
        if isinstance(v, IntEnum):
            return v.name
        if isinstance(v, int):
            return itf.bigint(v)
        if isinstance(v, str):
            return v
        if is_record(v):
            if record is not None:
                return record(v)
            return {f: itf.to_itf(x, key=key) for f, x in zip(v._fields, v)}
        if isinstance(v, tuple):
            return [itf.to_itf(x, record, key) for x in v]
        if isinstance(v, (frozenset, set)):
            return {"#set": [itf.to_itf(x, record, key) for x in set_order(v, key)]}
        if isinstance(v, float):
            return v
        return {"#unserializable": repr(v)}

    @staticmethod
    def fn_over(values, keys, convert: Callable[[Any], Any] | None = None,
                key: Callable[[Any], Any] = plain_key) -> dict:
        """A function [k \\in keys |-> values[i]] as an ITF map."""
        convert = convert or (lambda v: itf.to_itf(v, key=key))
        return {"#map": [[itf.to_itf(k, key=key), convert(v)] for k, v in zip(keys, values)]}


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


# The page's classes for a replica's log of records, its role and status
# (model/kraft/view.py, model/zk/view.py cells use them: `page_css = LOG_CSS`).
LOG_CSS = """
.role{font-weight:700;padding:0 4px;border-radius:3px;background:#eaeef2}
.r-Leader{background:#ddf4ff;color:#0550ae}.r-Follower{background:#eaeef2}
.st-OFFLINE_DIRTY,.st-OFFLINE_CLEAN{color:var(--bad);font-weight:700}.st-STARTING{color:var(--warn);font-weight:700}
.fenced{color:var(--warn);font-weight:700}
.log{display:inline-flex;gap:2px;flex-wrap:wrap;margin:2px 0}
.log.empty{color:var(--muted);font-style:italic}
.rec{display:inline-flex;align-items:baseline;gap:2px;border:1px solid #8c959f;border-radius:3px;padding:0 3px;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:11px;color:var(--muted)}
.rec b{color:#1f2328}.rec i{font-style:normal;font-size:10px}
.rec.acked{border-color:var(--good);border-width:2px}.rec.acked b{color:var(--good)}
.acked-set{color:var(--good);font-weight:700}
"""
ACKED_LEGEND = "bold green record: acknowledged to the producer"


class TraceView:
    """Generic view: every variable is a table column, the text shows each
    changed variable's new value, there is no sequence diagram."""

    name = "generic"
    # the HTML page's CSS for the classes this view's cells use (the page
    # defines --bad, --good, --warn, --muted), and its legend's own entries
    page_css: str = ""
    legend: tuple[str, ...] = ()
    # the short names the cells use, each with what it stands for (the page's key)
    abbreviations: tuple[tuple[str, str], ...] = ()

    # property name -> its one-line doc (the engine fills it from invariants/)
    property_docs: dict[str, str] = {}
    # a message kind (message_kind, Arrow.kind) -> its colour on the diagram
    kind_colors: dict[str, str] = {}

    def __init__(self, model: Any, order_key: Callable[[Any], Any] | None = None):
        self.model = model
        self.variables: tuple[str, ...] = tuple(getattr(model, "variables", ()) or ())
        # the order of a set's elements: the engine's canonical one, as its JSON
        # and ITF list them (checker.output.views.view_for passes it)
        self.order_key = order_key or plain_key

    def render(self, v: Any) -> str:
        """A value as TLA+ writes it, sets in this view's order."""
        return render_value(v, self.order_key)

    def to_itf(self, v: Any, record: Callable[[Any], Any] | None = None) -> Any:
        """itf.to_itf, sets in this view's order."""
        return itf.to_itf(v, record, self.order_key)

    def fn_over(self, values, keys, convert: Callable[[Any], Any] | None = None) -> dict:
        """itf.fn_over, sets in this view's order."""
        return itf.fn_over(values, keys, convert or self.to_itf, self.order_key)

    # ---- helpers ---------------------------------------------------------------

    def names(self, state) -> Sequence[str]:
        return getattr(state, "_fields", None) or self.variables or [f"v{i}" for i in range(len(state))]

    def property_doc(self, prop: str) -> str:
        """A property's one-line doc, if the model's properties give one."""
        return self.property_docs.get(prop, "")

    # ---- text --------------------------------------------------------------------

    def step_title(self, action) -> str:
        return str(action)

    def describe(self, action, prev, state) -> str:
        """A short sentence saying what the step does ('' for none)."""
        return ""

    def initial_lines(self, state, full: bool = True) -> list[str]:
        """State 0. full=False: what a person reads first (a view whose full
        dump is long shortens it; the trace files keep it whole)."""
        return [f"{n} = {self.render(v)}" for n, v in zip(self.names(state), state)]

    def step_lines(self, prev, state, action) -> list[str]:
        """What the step changed, one line per changed variable."""
        return [f"{n} = {self.render(b)}" for n, a, b in zip(self.names(state), prev, state) if a != b]

    def header(self, prop: str, trace: list) -> str:
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
        return self.to_itf(value)

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
        text = self.render(m)
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
        for m in sorted(prev, key=self.order_key):
            start(m, 0)
        for i, (action, state) in enumerate(trace[1:], 1):
            cur = self.in_flight(state) or frozenset()
            if cur is prev:
                continue
            for m in sorted(prev - cur, key=self.order_key):
                a = open_.pop(m, None)
                if a is not None:
                    a.end = i
                    a.fate = self.fate(action, m)
            for m in sorted(cur - prev, key=self.order_key):
                start(m, i)
            prev = cur
        return arrows

    # ---- the per-step table ----------------------------------------------------------

    def columns(self) -> list[str]:
        return list(self.variables)

    @staticmethod
    def _item(label: str, text: str, changed: bool, cls: str = "") -> str:
        """One labelled item of a table cell (text is HTML already), marked
        when the step changed it."""
        c = " chg" if changed else ""
        c += f" {cls}" if cls else ""
        lab = f'<span class="k">{html.escape(label)}</span> ' if label else ""
        return f'<span class="it{c}">{lab}{text}</span>'

    def cells(self, prev, state) -> list[tuple[str, bool]]:
        """One (HTML, changed) per column for `state` (prev: None at step 0)."""
        return [(html.escape(self.render(v)), prev is not None and prev[i] != v)
                for i, v in enumerate(state)]

    def notes(self, trace: list) -> list[str]:
        """Sentences the page adds under its header for what the trace shows
        that reads as a contradiction (e.g. a committed record that the
        producer was told failed); [] for none."""
        return []

    def explain(self, prop: str, trace: list) -> Explanation | None:
        doc = self.property_doc(prop)
        if prop == "Deadlock":
            return Explanation("The last state has no successor.")
        return Explanation(f"{prop}: {doc}" if doc else "") if doc else None
