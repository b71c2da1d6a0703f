"""Temporal properties: the forms TLC checks with its tableau for the reference
specification's liveness section, over state predicates.

    LeadsTo(P, Q)                      P ~> Q        ([](P => <>Q))
    AlwaysEventually(P)                []<>P
    EventuallyAlways(P)                <>[]P
    AlwaysEventually(LeadsTo(P, Q))    []<>(P ~> Q)  (= <>[](P ~> Q): from some point on,
                                                      every P is followed by a Q)

A TemporalProperty has one Instance per value of the quantifier the
reference writes outside the temporal operator (`\\A b \\in Brokers : P(b) ~>
Q(b)` is one instance per broker; a property without one has a single
instance): the property holds when every instance does, and a counterexample
names the instance it breaks. A quantifier inside the temporal operator
(`[]<>(\\A b : ...)`) stays inside the predicate.

Every form's negation is a lasso: a path from an initial state to an `enter`
state, then a fair cycle reachable from it through `stay` states only, which
visits a `visit` state (when there is one) - `negation()` gives the three
(None: TRUE). The checker (checker/search/liveness) finds such cycles on the
explored state graph.

A model's temporal properties and the fairness its reference specification
assumes are named by its ModelDef, as its state properties are;
checker/ looks them up there only (checker.search.registry).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Predicate = Callable[[Any], bool]
TEMPORAL = "temporal"


@dataclass(frozen=True)
class LeadsTo:
    """P ~> Q: whenever P holds, Q holds then or later."""

    p: Predicate
    q: Predicate


@dataclass(frozen=True)
class AlwaysEventually:
    """[]<>body: body holds infinitely often (body a predicate or a LeadsTo)."""

    body: Any


@dataclass(frozen=True)
class EventuallyAlways:
    """<>[]body: from some point on, body holds for ever (a predicate or a LeadsTo)."""

    body: Any


@dataclass(frozen=True)
class Negation:
    """A behaviour violates the formula iff it reaches an `enter` state and from
    there stays in `stay` states for ever, visiting `visit` states infinitely
    often (None: TRUE). `atoms` are the predicates these are made of, evaluated
    once per state; stay/enter/visit are given over the atoms' values."""

    atoms: tuple[Predicate, ...]
    stay: Callable[[tuple], bool] | None
    enter: Callable[[tuple], bool] | None
    visit: Callable[[tuple], bool] | None


def negation(formula) -> Negation:
    """The lasso a behaviour violating `formula` has (see Negation)."""
    if isinstance(formula, LeadsTo):
        # <>(P /\ []~Q)
        return Negation((formula.p, formula.q), stay=lambda v: not v[1],
                        enter=lambda v: v[0] and not v[1], visit=None)
    if isinstance(formula, (AlwaysEventually, EventuallyAlways)):
        body = formula.body
        if isinstance(body, LeadsTo):
            # []<>(P ~> Q) = <>[](P ~> Q); its negation []<>(P /\ []~Q) = <>[]~Q /\ []<>P
            return Negation((body.p, body.q), stay=lambda v: not v[1], enter=lambda v: not v[1],
                            visit=lambda v: v[0])
        if not callable(body):
            raise TypeError(f"unsupported temporal body {body!r}")
        if isinstance(formula, AlwaysEventually):
            # <>[]~P
            return Negation((body,), stay=lambda v: not v[0], enter=lambda v: not v[0], visit=None)
        # []<>~P
        return Negation((body,), stay=None, enter=None, visit=lambda v: not v[0])
    raise TypeError(f"unsupported temporal formula {formula!r}")


def form_text(formula) -> str:
    """The formula's shape, TLA+ style: 'P ~> Q', '[]<>(P ~> Q)', '<>[]P'."""
    if isinstance(formula, LeadsTo):
        return "P ~> Q"
    inner = "(P ~> Q)" if isinstance(getattr(formula, "body", None), LeadsTo) else "P"
    return ("[]<>" if isinstance(formula, AlwaysEventually) else "<>[]") + inner


@dataclass(frozen=True)
class Instance:
    """One instance of a property: `param` is the quantified value (a broker,
    a value; None without a quantifier), `label` how it is printed ("b=2").
    `unless_init`: behaviours starting in a state that satisfies it satisfy
    the instance (the reference's `A \\/ (P ~> Q)`, A a state predicate)."""

    param: Any
    label: str
    formula: Any
    unless_init: Predicate | None = None


@dataclass(frozen=True)
class TemporalProperty:
    """A named temporal property (kind "temporal"), its instances and the
    variables its predicates read (None: any). `never(param, state)`: what
    never happens in a counterexample of the instance, in the model's terms
    (the headline of a lasso: "broker 2 stays FENCED for ever"), `state`
    being the first state of the lasso's cycle (or None)."""

    name: str
    instances: tuple[Instance, ...]
    doc: str = ""
    reads: tuple[str, ...] | None = None
    quantifier: str = ""            # e.g. "\\A b \\in Brokers" (for listings)
    never: Callable[[Any, Any], str] | None = None  # never(param, cycle state or None)
    kind: str = field(default=TEMPORAL)

    @property
    def form(self) -> str:
        shape = form_text(self.instances[0].formula) if self.instances else "?"
        return f"{self.quantifier} : {shape}" if self.quantifier else shape

    def headline(self, param: Any, state: Any = None) -> str:
        """What never happens; `state`: the first state of the lasso's cycle
        (a `never` of two arguments may say more from it)."""
        if self.never is not None:
            return self.never(param, state)
        return f"{self.name} never holds" + (f" for {param}" if param is not None else "")


def per(values, name: str, make: Callable[[Any], Any], label: str = "",
        unless_init: Callable[[Any], Predicate | None] | None = None) -> tuple[Instance, ...]:
    """One Instance per value: `make(value)` gives its formula."""
    return tuple(Instance(v, f"{label or name}={v}", make(v),
                          unless_init(v) if unless_init else None) for v in values)


def single(formula, unless_init: Predicate | None = None) -> tuple[Instance, ...]:
    return (Instance(None, "", formula, unless_init),)
