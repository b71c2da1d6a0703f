"""Models and all that belongs to them, looked up by name for the engine and
the CLI: the one lookup of a model's ModelDef (model/registry.py) and of what
it names (properties, temporal properties, fairness, trace view, facts,
mutants).

build(model_name, variant, constants) validates the constants against the
ModelDef (names, types, choices, bounds, mutants of the variant; defaults
fill the rest) and returns (model, properties). Every model is held to the
model contract here (checker/search/contract.py): its ModelDef when it is
first listed, the built model and its properties when it is built.
"""
from __future__ import annotations

import contextvars
import resource
from contextlib import contextmanager
from typing import Any

from checker.search.contract import named
from checker.search.errors import SpecError
from checker.search.proc import machine_memory, own_status
from model.base import ALWAYS, Constant, Model, ModelConfigError, ModelDef, Mutant, Property


_checked: dict[str, ModelDef] = {}   # model name -> the ModelDef checked (register may replace it)


def models() -> dict[str, ModelDef]:
    """Every registered model by name, each ModelDef checked against the
    contract the first time it is seen (ModelContractError, exit 2)."""
    from model.registry import MODELS
    from checker.search.contract import check_definition
    for name, defn in MODELS.items():
        if _checked.get(name) is not defn:
            check_definition(defn)
            if defn.name != name:
                from checker.search.contract import ModelContractError
                raise ModelContractError(f"model {name!r} is registered under another name than "
                                         f"its ModelDef's, {defn.name!r}")
            _checked[name] = defn
    return dict(sorted(MODELS.items()))


def model_def(name: str) -> ModelDef:
    defs = models()
    if name not in defs:
        known = ", ".join(defs) or "none"
        import difflib
        close = [n for n in defs if str(name).lower() == n.lower()] or difflib.get_close_matches(
            str(name).lower(), list(defs), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise SpecError(f"unknown model {name!r} ({hint}known models: {known})")
    return defs[name]


def definition_of(model: Any) -> ModelDef | None:
    """The ModelDef of a built model (by its name; None for a model no
    ModelDef registers, as a test's own)."""
    from model.registry import MODELS
    return MODELS.get(getattr(model, "name", None))


def properties_for(model: Any) -> list[Property]:
    """Every state property of a built model (its variant and constants may
    select some), invariants first."""
    defn = definition_of(model)
    function = named(defn, "properties") if defn is not None else None
    return list(function(model)) if function is not None else []


def temporal_properties_for(model: Any) -> list:
    """Every temporal property of a built model ([] for a model without any)."""
    defn = definition_of(model)
    function = named(defn, "temporal") if defn is not None else None
    return list(function(model)) if function is not None else []


def reference_fairness_for(model: Any) -> list[str] | None:
    """The fairness the model's reference specification assumes, as spec
    entries (None: the model has none)."""
    defn = definition_of(model)
    function = named(defn, "fairness") if defn is not None else None
    return list(function(model)) if function is not None else None


def view_class(model: Any) -> type:
    """The trace view class of a built model: its ModelDef's view, else the
    generic model.view.TraceView."""
    from model.view import TraceView
    defn = definition_of(model)
    view = named(defn, "view") if defn is not None else None
    return view if view is not None else TraceView


def facts_function(model: Any):
    """The model's facts(model, state) -> dict for scenarios (its ModelDef's
    facts), else the state's variables by name."""
    defn = definition_of(model)
    facts = named(defn, "facts") if defn is not None else None
    return facts if facts is not None else variable_facts


def variable_facts(model: Any, state) -> dict:
    """The default facts: the state's variables by name."""
    return {name: getattr(state, name) for name in model.variables}


def mutants_of(defn: ModelDef, variant: str | None = None) -> dict[str, Mutant]:
    """The model's seeded bugs by name ({} for none); with a variant, only
    those whose guard that variant's code has."""
    found = {name: Mutant(*entry) for name, entry in (named(defn, "mutants") or {}).items()}
    if variant is None:
        return found
    return {name: m for name, m in found.items() if m.variants is None or variant in m.variants}


def variant_constants(defn: ModelDef, variant: str | None) -> tuple[str, tuple[Constant, ...]]:
    """The variant's name (the first variant when None) and its constants."""
    if variant is None:
        variant = next(iter(defn.variants))
    if variant not in defn.variants:
        raise SpecError(f"unknown variant {variant!r} of model {defn.name!r} "
                        f"(known variants: {', '.join(defn.variants)})")
    return variant, defn.variants[variant]


def type_name(t) -> str:
    if isinstance(t, tuple):
        container, item = t
        return f"{container.__name__} of {item.__name__}"
    return t.__name__


def _is_instance(value: Any, t) -> bool:
    """TOML-typed check: bool is not an int, a list is a list of the item type."""
    if isinstance(t, tuple):
        container, item = t
        return (isinstance(value, (list, tuple)) and
                all(_is_instance(v, item) for v in value))
    if t is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if t is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, t)


def _beyond_int64(value: Any) -> bool:
    """An integer (or one in a list) the canonical encoding (msgpack) cannot hold."""
    if isinstance(value, (list, tuple)):
        return any(_beyond_int64(v) for v in value)
    return isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63


def resolve_constants(defn: ModelDef, variant: str, constants: dict | None) -> dict[str, Any]:
    """The variant's defaults overridden by `constants`, every name and type checked."""
    _, decl = variant_constants(defn, variant)
    by_name = {c.name: c for c in decl}
    resolved = {c.name: c.default for c in decl}
    if constants is not None and not isinstance(constants, dict):
        raise SpecError(f"constants must be a table of NAME = VALUE, not {type(constants).__name__}")
    for name, value in (constants or {}).items():
        if name not in by_name:
            raise SpecError(f"unknown constant {name!r} for model {defn.name!r} variant "
                            f"{variant!r} (known: {', '.join(by_name) or 'none'})")
        c = by_name[name]
        if not _is_instance(value, c.type):
            raise SpecError(f"constant {name} must be {type_name(c.type)}, "
                            f"not {type(value).__name__} {value!r}")
        if _beyond_int64(value):
            raise SpecError(f"constant {name} = {value!r} is out of range: integers in a state are "
                            f"64-bit ({-2**63} to {2**63 - 1})")
        if isinstance(c.type, tuple) and isinstance(value, list):
            value = list(value)
        _check_allowed(c, value)
        resolved[name] = value
    if "Mutants" in by_name and resolved.get("Mutants"):
        _check_mutants(defn, variant, resolved["Mutants"])
    return resolved


def _check_allowed(c: Constant, value: Any) -> None:
    """The constant's declared choices and bounds (model.base.Constant)."""
    if c.choices is not None:
        bad = [v for v in (value if isinstance(value, list) else [value]) if v not in c.choices]
        if bad:
            raise SpecError(f"constant {c.name} must be {'' if not isinstance(value, list) else 'a list of '}"
                            f"one of {', '.join(map(repr, c.choices))}, got {bad[0]!r}")
    if c.minimum is not None and isinstance(value, int) and value < c.minimum:
        raise SpecError(f"constant {c.name} must be at least {c.minimum}, got {value}")
    if c.maximum is not None and isinstance(value, int) and value > c.maximum:
        raise SpecError(f"constant {c.name} must be at most {c.maximum}, got {value}")


def _check_mutants(defn: ModelDef, variant: str, names: list) -> None:
    """Each mutant named is one of the model's, and one the variant's code has."""
    every = mutants_of(defn)
    unknown = [n for n in names if n not in every]
    if unknown:
        raise SpecError(f"unknown mutant(s) {', '.join(map(repr, unknown))} of model {defn.name!r} "
                        f"(known: {', '.join(every) or 'none'})")
    for n in names:
        applies = every[n].variants
        if applies is not None and variant not in applies:
            raise SpecError(f"mutant {n!r} does not apply to variant {variant!r} of model "
                            f"{defn.name!r}: its guard is in the code of {', '.join(applies)} only")


def build(model_name: str, variant: str | None, constants: dict | None = None) -> tuple[Model, list[Property]]:
    """(model, properties) for a model name, variant and constants.

    Unknown model / variant / constant and a wrongly typed value raise
    SpecError; a combination the model rejects raises its ModelConfigError
    (both are bad input, exit 2).
    """
    defn = model_def(model_name)
    variant, _ = variant_constants(defn, variant)
    resolved = resolve_constants(defn, variant, constants)
    room = _build_room()
    try:
        with _address_space(room):
            model = defn.build(variant, resolved)  # may raise ModelConfigError
    except (MemoryError, OverflowError) as e:  # e.g. a broker count of 10**7
        within = f" within {room >> 20:,} MiB of memory" if room is not None else ""
        raise SpecError(f"model {defn.name!r}: its constants are too large to build it{within} "
                        f"({type(e).__name__}{': ' + str(e) if str(e) else ''})") from None
    from checker.search.contract import check_identity, check_model
    check_identity(defn, variant, model)
    properties = list(named(defn, "properties")(model))
    check_model(defn, variant, model, properties)
    from checker.search.reads import audited
    return model, audited(model, properties)


# Building a model can take memory that grows fast with its constants (the
# kraft model's tables: ~13 GB for 10**7 brokers), and unlike a search level
# it cannot stop itself: so the address space is capped while it builds, at
# the room the memory limit leaves (build_limit: the CLI's --max-memory) and
# never past the machine's available memory. Past it, a MemoryError: one line.
_LIMIT = contextvars.ContextVar("build_limit", default="available")
MIN_ROOM = 256 << 20   # a small spec always builds, whatever the limit
AVAILABLE_SHARE = 0.85   # of the machine's available memory, at most (the rest: other programs)


@contextmanager
def build_limit(limit: int | None):
    """Models built inside take at most `limit` bytes of resident memory in
    all (None: no limit at all, as --max-memory none)."""
    token = _LIMIT.set(limit)
    try:
        yield
    finally:
        _LIMIT.reset(token)


def _build_room() -> int | None:
    """Bytes a model's build may add (None: no cap)."""
    limit = _LIMIT.get()
    if limit is None:
        return None
    room = machine_memory("MemAvailable")
    room = None if room is None else int(room * AVAILABLE_SHARE)
    if limit != "available":
        left = limit - (own_status("VmRSS") or 0)
        room = left if room is None else min(room, left)
    return None if room is None else max(room, MIN_ROOM)


@contextmanager
def _address_space(room: int | None):
    """RLIMIT_AS at the address space now plus `room`, for the block; left
    alone when there is no room to give, no /proc, or a lower limit set."""
    vm = own_status("VmSize")
    if room is None or vm is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = vm + room
    if (soft != resource.RLIM_INFINITY and soft <= cap) or (hard != resource.RLIM_INFINITY and cap > hard):
        yield
        return
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def select_properties(properties: list[Property], names: list[str] | None) -> list[Property]:
    """The properties named (in the given order), or all when `names` is None."""
    if names is None:
        return list(properties)
    by_name = {p.name: p for p in properties}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise SpecError(f"unknown propert{'ies' if len(unknown) > 1 else 'y'} "
                        f"{', '.join(map(repr, unknown))} (known: {', '.join(by_name) or 'none'})")
    return [by_name[n] for n in dict.fromkeys(names)]


__all__ = ["build", "models", "model_def", "resolve_constants", "select_properties",
           "type_name", "definition_of", "named", "properties_for", "temporal_properties_for",
           "reference_fairness_for", "view_class", "facts_function", "mutants_of",
           "ModelConfigError", "ALWAYS"]
