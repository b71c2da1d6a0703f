"""The contract between models and the engine (ARCHITECTURE.md, "The model interface").

A model is any object with the attributes and methods of `Model`; it is a
typing.Protocol so model/ never imports checker/. Its ModelDef names
everything else of it (properties in invariants/, which imports only the
types of model/; trace view, facts, mutants): checker.search.registry looks
them up there, and nowhere else.

State rules, relied on by the engine's encoder and fingerprints:
- a state is a NamedTuple whose fields are the model's variables, in a fixed
  order (`Model.variables`);
- every value inside is built from None, bool, int (IntEnum included), str,
  tuples / NamedTuples, and frozensets (for TLA+ sets: the encoder orders their
  elements canonically);
- a successor reuses the very objects of the variables it does not change
  (`state._replace(...)` does), so the engine can skip re-encoding them.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, NamedTuple, Protocol, runtime_checkable

State = tuple  # a NamedTuple of the model's variables


class Action(NamedTuple):
    """One step's label: the reference TLA+ action name plus its parameters.

    Traces are replayed by (name, params), never by enumeration index.
    """

    name: str
    params: tuple = ()

    def __str__(self) -> str:
        return f"{self.name}({', '.join(map(str, self.params))})" if self.params else self.name


ALWAYS = "always"        # an invariant: must hold in every reachable state
SOMETIMES = "sometimes"  # a reachability witness: must hold in at least one state


@dataclass(frozen=True)
class Property:
    """A named predicate over one state, an invariant or a `sometimes` witness."""

    name: str
    kind: str
    predicate: Callable[[Any], bool]
    doc: str = ""
    # The state variables the predicate reads (None: it may read any). The
    # engine then checks a successor only when one of them changed: the
    # parent, checked before, shares the objects of the others. A model's
    # tests must show the list complete (e.g. by recording reads).
    reads: tuple[str, ...] | None = None
    # An invariant that is a conjunction may also give its conjuncts, as
    # (reads, predicate) parts whose conjunction is `predicate`: the engine
    # then runs on a successor only the parts whose variables changed (the
    # parent satisfied the others on the same objects). `predicate` still
    # serves states without a checked parent (the initial ones).
    parts: tuple[tuple[tuple[str, ...], Callable[[Any], bool]], ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in (ALWAYS, SOMETIMES):
            raise ValueError(f"property {self.name}: kind must be {ALWAYS!r} or {SOMETIMES!r}")
        if self.parts is not None and self.kind != ALWAYS:
            raise ValueError(f"property {self.name}: only an invariant ({ALWAYS!r}) has parts")


@runtime_checkable
class Model(Protocol):
    name: str                  # registry name, e.g. "kraft"
    variant: str               # e.g. "kip966"
    variables: tuple[str, ...] # state field names, in state order
    action_names: tuple[str, ...]  # every action of Next, for coverage (never-enabled ones too)

    def init_states(self) -> Iterable[State]: ...

    def successors(self, state: State) -> Iterable[tuple[Action, State]]:
        """Every (action, next state), one per witness of each action's
        nondeterminism, in a deterministic order."""
        ...

    def from_plain(self, values: tuple) -> State:
        """Rebuild a state from its decoded canonical form (tuples for
        NamedTuples, frozensets kept), e.g. after it crossed a process."""
        ...

    # Optional: switched_off() -> {action name: why}, the actions the
    # constants switch off on purpose (a fault limit of 0), so that a run's
    # report tells them from actions the model never reached.
    # Optional: inert_constants() -> {constant: why}, the constants that have
    # no effect under the others (a spec that sets one is told so);
    # unbounded() -> why the state space is infinite, or None (a check
    # without a depth bound is told so); progress_bounds() -> {constant:
    # what it stops}, the bounds that disable actions fairness would force
    # (a temporal property checked under one is warned of, and a lasso
    # that stops at one names it), with without_bounds() -> the model with
    # them lifted.
    # Optional: plain_converters() -> per variable, the function from_plain
    # applies to its plain value, so that a decoder rebuilds only the
    # variables whose encodings it has not met (checker.search.codec).
    # Optional: projections = {name: (variables...)}, the fingerprint
    # projections a spec may name (`projection = "name"`, TLC's VIEW; the
    # attribute's old name `views` is still read).
    # Optional: trace_view() -> a model.view.TraceView, when the view its
    # ModelDef names is not the way.
    # checker/search/contract.py checks all of this when the model is built
    # (docs/ARCHITECTURE.md, "How to add a model").


class ModelError(Exception):
    """Base of the errors a model raises."""


class ModelConfigError(ModelError):
    """A constant or a combination of constants the model rejects (bad input, exit 2)."""


class EvaluationError(ModelError):
    """The reference would stop with an evaluation error here (exit 3).

    Carries the action and the state so the message can name both.
    """

    def __init__(self, message: str, action: Action | None = None, state: Any = None):
        super().__init__(message)
        self.action = action
        self.state = state


@dataclass(frozen=True)
class Constant:
    """A model constant as a spec may set it: its TOML type, default and
    meaning, and optionally the values it may take, which the registry checks
    for every model (checker.search.registry.resolve_constants): `choices`
    (a str, or each element of a list of strings, is one of them), `minimum`
    and `maximum` (an int within them, both included)."""

    name: str
    type: type | tuple  # int, bool, str, or (list, str) for a list of strings
    default: Any
    doc: str = ""
    choices: tuple | None = None
    minimum: int | None = None
    maximum: int | None = None


class Mutant(NamedTuple):
    """A seeded bug (a model's mutants.py, MUTANTS: name -> Mutant, switched
    on by the constant Mutants): the reference's guard site it switches off,
    what it does, and the variants whose code has that guard (None: every
    one). A plain (site, doc) pair stands for a Mutant of every variant."""

    site: str
    doc: str
    variants: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ModelDef:
    """The one place that defines a model: variants, constants, how to build
    it, and what it is checked against and shown with.

    build(variant, constants) returns a Model or raises ModelConfigError.
    budget(constants, defaults), when given, says a spec's constants in a
    few words for the result tables (sizes, fault limits; None: kmc lists
    the constants that differ from their defaults).

    The rest is named as "module:attribute" (imported when first needed:
    model/ never imports invariants/ or checker/), or given as the object:
    - properties: function(model) -> [Property], invariants first (required);
    - temporal: function(model) -> [TemporalProperty];
    - fairness: function(model) -> the fairness its reference assumes, as
      spec entries ("WF:BrokerStart", ...);
    - view: its model.view.TraceView subclass (None: the generic view);
    - facts: function(model, state) -> {fact: value}, what a scenario
      matches and asserts (None: the state's variables by name);
    - mutants: {name: Mutant or (site, doc)}, its seeded bugs (the constant
      Mutants switches them on).
    checker.search.registry looks each up here, the contract checks them.
    """

    name: str
    doc: str
    variants: dict[str, tuple[Constant, ...]]  # variant -> its constants
    build: Callable[[str, dict], Model]
    budget: Callable[[dict, dict], str] | None = None
    properties: Any = None
    temporal: Any = None
    fairness: Any = None
    view: Any = None
    facts: Any = None
    mutants: Any = None
