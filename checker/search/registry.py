"""Models and their properties, looked up by name for the engine and the CLI.

build(model_name, variant, constants) validates the constants against the
ModelDef (names, types; defaults fill the rest) and returns (model, properties).
Every model is held to the model contract here (checker/search/contract.py):
its ModelDef when it is first listed, the built model and its properties
when it is built.
"""
from __future__ import annotations

import contextvars
import resource
from contextlib import contextmanager
from typing import Any

from checker.search.errors import SpecError
from checker.search.proc import machine_memory, own_status
from model.base import ALWAYS, Constant, Model, ModelConfigError, ModelDef, Property


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
        raise SpecError(f"unknown model {name!r} (known models: {known})")
    return defs[name]


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
        resolved[name] = value
    return resolved


def build(model_name: str, variant: str | None, constants: dict | None = None) -> tuple[Model, list[Property]]:
    """(model, properties) for a model name, variant and constants.

    Unknown model / variant / constant and a wrongly typed value raise
    SpecError; a combination the model rejects raises its ModelConfigError
    (both are bad input, exit 2).
    """
    from invariants.registry import properties_for

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
    properties = properties_for(model)
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
           "type_name", "ModelConfigError", "ALWAYS"]
