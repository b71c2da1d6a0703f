"""The model contract (docs/ARCHITECTURE.md, "How to add a model"), checked
when kmc first meets a model, not discovered deep into a run.

Two checks, each raising ModelContractError (one `kmc: error:` line, exit 2)
naming the model and what to add:

- `check_definition(defn)`: the ModelDef of model/registry.py (name, doc,
  variants and their constants' defaults, choices and bounds, build, budget,
  the names of its properties, temporal properties, fairness, view, facts
  and mutants), when the registry first lists it
  (checker.search.registry.models);
- `check_model(defn, variant, model, properties)`: the model as built
  (registry.build, every engine's one way to a model): its name and
  variant, variables, action names, init_states / successors / from_plain
  (or their absence: a missing from_plain used to fail only past 50,000
  states, in the auto engine's workers, on Spark or in `kmc trace`), the
  optional hooks, its fingerprint projections, its trace view, its
  properties (names, reads, parts) and temporal properties, and one
  initial state rebuilt from its canonical bytes (from_plain), as the
  engines rebuild every state they spill, ship or read back.

tests/core/test_model_contract.py runs the deeper half over every
registered model: the declared reads against the reads observed, every
state of a small space round-tripped through the engines' encodings, and
every engine's counts on it.
"""
from __future__ import annotations

import importlib
import importlib.util
import re
from typing import Any

from checker.search.errors import SpecError
from model.base import ALWAYS, SOMETIMES, Constant, EvaluationError, ModelDef, Property

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
DEADLOCK = "Deadlock"   # (checker.search.engine.DEADLOCK: a property may not take the name)


class ModelContractError(SpecError):
    """A model that does not keep the contract (exit 2: it cannot be run as given)."""


def _fail(model: str, what: str) -> None:
    raise ModelContractError(f"model {model!r} breaks the model contract: {what} "
                             f"(docs/ARCHITECTURE.md, \"How to add a model\")")


def _names(value) -> bool:
    return isinstance(value, (tuple, list)) and all(isinstance(v, str) and v for v in value)


def named(defn: ModelDef, field: str) -> Any:
    """What the ModelDef names in `field`: "module:attribute" imported, an
    object as it is, None when it names nothing. A name that does not
    import is one line (ModelContractError, exit 2)."""
    ref = getattr(defn, field)
    if not isinstance(ref, str):
        return ref
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ModelContractError(f"model {defn.name!r}: its ModelDef's {field} {ref!r} does not "
                                 f"import ({type(e).__name__}: {e})") from None
    if not attr or not hasattr(module, attr):
        raise ModelContractError(f"model {defn.name!r}: its ModelDef's {field} {ref!r} names no "
                                 f"attribute of {module_name} (\"module:attribute\")")
    return getattr(module, attr)


# ---- the ModelDef --------------------------------------------------------------------

def _of_type(value: Any, t) -> bool:
    if isinstance(t, tuple):
        container, item = t
        return isinstance(value, (list, tuple)) and all(_of_type(v, item) for v in value)
    if t is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if t is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, t)


def check_definition(defn) -> None:
    """A ModelDef as model/registry.py lists it."""
    name = getattr(defn, "name", None)
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        _fail(str(name), "its ModelDef's name must be a word of letters, digits, '_' and '-' "
                         "(specs name it, the registries key on it)")
    if not isinstance(getattr(defn, "doc", None), str) or not defn.doc.strip():
        _fail(name, "its ModelDef needs a doc (one line for `kmc list`)")
    variants = getattr(defn, "variants", None)
    if not isinstance(variants, dict) or not variants:
        _fail(name, "its ModelDef's variants must be a dict of variant name -> its Constants, "
                    "with at least one variant")
    for variant, constants in variants.items():
        if not isinstance(variant, str) or not variant:
            _fail(name, f"variant {variant!r}: a variant's name must be a string")
        if not isinstance(constants, tuple) or not all(isinstance(c, Constant) for c in constants):
            _fail(name, f"variant {variant!r}: its constants must be a tuple of model.base.Constant")
        seen = set()
        for c in constants:
            if c.name in seen:
                _fail(name, f"variant {variant!r} declares constant {c.name} twice")
            seen.add(c.name)
            if not _of_type(c.default, c.type):
                _fail(name, f"variant {variant!r}: constant {c.name}'s default {c.default!r} "
                            f"is not of its declared type")
            _check_allowed_default(name, variant, c)
    if not callable(getattr(defn, "build", None)):
        _fail(name, "its ModelDef's build(variant, constants) must be a function")
    budget = getattr(defn, "budget", None)
    if budget is not None and not callable(budget):
        _fail(name, "its ModelDef's budget must be a function (or None)")
    _check_named(defn)


def _check_allowed_default(name: str, variant: str, c: Constant) -> None:
    if c.choices is not None:
        if not isinstance(c.choices, tuple) or not c.choices:
            _fail(name, f"variant {variant!r}: constant {c.name}'s choices must be a non-empty tuple")
        values = c.default if isinstance(c.default, list) else [c.default]
        if any(v not in c.choices for v in values):
            _fail(name, f"variant {variant!r}: constant {c.name}'s default {c.default!r} is not "
                        f"one of its choices")
    for bound in ("minimum", "maximum"):
        limit = getattr(c, bound)
        if limit is not None and (c.type is not int or not _of_type(limit, int)):
            _fail(name, f"variant {variant!r}: constant {c.name}: a {bound} is an int, for an int")
    if (c.minimum is not None and c.default < c.minimum) or (c.maximum is not None and c.default > c.maximum):
        _fail(name, f"variant {variant!r}: constant {c.name}'s default {c.default!r} is out of its "
                    f"bounds")


# what a ModelDef names, and the module of the model's package that holds it
# where it has one (a package with the module must name it: left out, traces
# would silently get the generic view, a scenario the variables as facts)
_NAMED = (("properties", None), ("temporal", None), ("fairness", None),
          ("view", "view"), ("facts", "facts"), ("mutants", "mutants"))


def _check_named(defn) -> None:
    name = defn.name
    for field, _ in _NAMED:
        ref = getattr(defn, field, None)
        if isinstance(ref, str) and not re.fullmatch(r"[\w.]+:\w+", ref):
            _fail(name, f"its ModelDef's {field} {ref!r} must be \"module:attribute\" (or the object)")
    if getattr(defn, "properties", None) is None:
        _fail(name, "its ModelDef names no properties (properties=\"invariants.<name>:<function>\", "
                    "a function model -> [Property], invariants first)")
    package = _package_of(defn)
    for field, module in _NAMED:
        if module is None or getattr(defn, field, None) is not None or package is None:
            continue
        if importlib.util.find_spec(f"{package}.{module}") is not None:
            _fail(name, f"{package}.{module} exists but its ModelDef names no {field} "
                        f"({field}=\"{package}.{module}:...\")")


def _package_of(defn) -> str | None:
    """The package of the module that defines the model's build (the model's
    own package: model/<name>/), None for a module outside one of its own
    (the toys of model/examples share theirs)."""
    module_name = getattr(defn.build, "__module__", None) or ""
    package = module_name.rpartition(".")[0]
    try:
        spec = importlib.util.find_spec(module_name) if module_name else None
    except (ImportError, ValueError):   # (__main__: no spec)
        return None
    if spec is not None and spec.submodule_search_locations is not None:
        return module_name   # build is defined in the package's __init__.py
    if not package or package in ("model", "model.examples"):
        return None
    return package


# ---- the trace view ---------------------------------------------------------------------

def _check_trace_view(name: str, defn, model: Any) -> None:
    from model.view import TraceView
    hook = getattr(model, "trace_view", None)
    if hook is not None:
        if not callable(hook):
            _fail(name, "trace_view must be a method returning a model.view.TraceView")
        return
    view = named(defn, "view")
    if view is not None and not (isinstance(view, type) and issubclass(view, TraceView)):
        _fail(name, f"its ModelDef's view {defn.view!r} must be a model.view.TraceView subclass")


# ---- the built model ------------------------------------------------------------------------

def projections_of(model: Any) -> dict:
    """The model's fingerprint projections, {name: variables} (the attribute
    `projections`; `views`, its old name, is still read)."""
    found = getattr(model, "projections", None)
    if found is None:
        found = getattr(model, "views", None)
    return dict(found or {})


def check_identity(defn, variant: str, model: Any) -> None:
    """The built model answers to its ModelDef's name (what the ModelDef
    names is looked up by it) and to the variant it was built for."""
    name = defn.name
    if getattr(model, "name", None) != name:
        _fail(name, f"the built model's name is {getattr(model, 'name', None)!r}, not its "
                    f"ModelDef's {name!r} (its properties are looked up by it)")
    if getattr(model, "variant", None) != variant:
        _fail(name, f"the built model's variant is {getattr(model, 'variant', None)!r}, "
                    f"not {variant!r}, the one it was built for")


def check_model(defn, variant: str, model: Any, properties: list) -> None:
    """The model `defn.build(variant, ...)` returned and its properties
    (after check_identity)."""
    name = defn.name
    variables = getattr(model, "variables", None)
    if not _names(variables) or not variables or len(set(variables)) != len(variables):
        _fail(name, "variables must be a tuple of distinct variable names, in state order")
    actions = getattr(model, "action_names", None)
    if not _names(actions) or len(set(actions)) != len(actions):
        _fail(name, "action_names must be a tuple of distinct action names (every action of "
                    "Next, for coverage)")
    for method, doc in (("init_states", "init_states() -> the initial states"),
                        ("successors", "successors(state) -> [(Action, state)]"),
                        ("from_plain", "from_plain(values) -> state: a state rebuilt from its "
                                       "canonical form (tuples for NamedTuples, ints for "
                                       "IntEnums, frozensets kept); the engines need it once a "
                                       "level passes 50,000 states, in the auto engine's "
                                       "workers, on Spark and in `kmc trace`")):
        if not callable(getattr(model, method, None)):
            _fail(name, f"it has no method {doc}")
    for optional in ("switched_off", "plain_converters", "inert_constants", "unbounded",
                     "progress_bounds", "without_bounds"):
        if getattr(model, optional, None) is not None and not callable(getattr(model, optional)):
            _fail(name, f"{optional} must be a method")
    converters = getattr(model, "plain_converters", None)
    if converters is not None:
        cs = converters()
        if len(cs) != len(variables) or not all(callable(c) for c in cs):
            _fail(name, "plain_converters() must give one function per variable")
    known = set(variables)
    for pname, kept in projections_of(model).items():
        if not isinstance(pname, str) or not _names(kept) or set(kept) - known:
            _fail(name, f"fingerprint projection {pname!r} must name variables of the model "
                        f"(unknown: {', '.join(sorted(set(kept or ()) - known)) or kept!r})")
    _check_trace_view(name, defn, model)
    _check_properties(name, known, properties)
    _check_temporal(name, defn, model, known, set(actions))
    _check_first_state(name, model, tuple(variables))


def _check_properties(name: str, known: set, properties: list) -> None:
    seen = set()
    for p in properties:
        if not isinstance(p, Property):
            _fail(name, f"its properties must be model.base.Property objects, not {type(p).__name__}")
        if p.name in seen or p.name == DEADLOCK:
            _fail(name, f"property name {p.name!r} is used twice (or is {DEADLOCK!r}, the "
                        f"name of a deadlock)")
        seen.add(p.name)
        if p.kind not in (ALWAYS, SOMETIMES):
            _fail(name, f"property {p.name}: kind must be {ALWAYS!r} or {SOMETIMES!r}")
        reads = [p.reads] if p.reads is not None else []
        reads += [r for r, _ in p.parts or ()]
        for r in reads:
            if not _names(r) or set(r) - known:
                _fail(name, f"property {p.name} declares reads of unknown variable(s) "
                            f"{', '.join(sorted(set(r) - known)) if _names(r) else repr(r)}")


def _check_temporal(name: str, defn, model: Any, known: set, actions: set) -> None:
    temporal = named(defn, "temporal")
    for t in (temporal(model) if temporal is not None else ()):
        if t.reads is not None and (not _names(t.reads) or set(t.reads) - known):
            _fail(name, f"temporal property {t.name} declares reads of unknown variable(s)")
    fairness = named(defn, "fairness")
    for entry in (fairness(model) if fairness is not None else ()):
        kind, _, action = str(entry).partition(":")
        if kind not in ("WF", "SF") or action not in actions:
            _fail(name, f"reference fairness entry {entry!r} is not WF:/SF: and one of its actions")


def _check_first_state(name: str, model: Any, variables: tuple) -> None:
    """The first initial state has the variables' shape and comes back from
    its canonical bytes as the same state (from_plain)."""
    from checker.search.encoding import decode_state, encode_state, parts_to_bytes
    try:
        state = next(iter(model.init_states()), None)
    except EvaluationError:
        return  # the engine reports it, as the reference would
    if state is None:
        return
    if not isinstance(state, tuple) or len(state) != len(variables):
        _fail(name, f"a state must be a NamedTuple of its {len(variables)} variables, not "
                    f"{type(state).__name__}")
    fields = getattr(state, "_fields", None)
    if fields is not None and tuple(fields) != variables:
        _fail(name, "the state's fields must be `variables`, in the same order")
    try:
        parts = encode_state(state)
        back = model.from_plain(decode_state(parts_to_bytes(parts)))
    except EvaluationError:
        return
    except Exception as e:  # noqa: BLE001 - the model's bug, said in one line
        _fail(name, f"an initial state does not come back from its canonical form: "
                    f"{type(e).__name__}: {' '.join(str(e).split())[:200]} (from_plain)")
    if type(back) is not type(state) or back != state or encode_state(back) != parts:
        _fail(name, f"from_plain does not rebuild an initial state as it was (a "
                    f"{type(back).__name__} for a {type(state).__name__}, or other canonical bytes)")
