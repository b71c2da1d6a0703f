"""The rules every model's constants share: defaults filled in, unknown names
refused, each value of its declared type, lists of names without repeats,
seeded-bug names known. A model's config.py adds the rules of its own
protocol; each failure is a ModelConfigError (exit 2) that names the
constant."""
from __future__ import annotations

from typing import Callable, NamedTuple

from model.base import Constant, ModelConfigError


def resolve_constants(where: str, declared: tuple[Constant, ...], given: dict,
                      choices: dict[str, tuple[str, ...]] | None = None,
                      nonempty: tuple[str, ...] = ()) -> dict:
    """Every constant of `declared`, from `given` or its default, type-checked:
    int a natural number, bool true/false, str one of its choices (the
    Constant's; `choices[name]` for one that declares none; any string
    without either), a list of strings non-empty strings without repeats
    (and not empty for the names in `nonempty`). The registry checks each
    constant's declared choices and bounds for every model before its build
    (checker.search.registry.resolve_constants)."""
    known = {c.name: c for c in declared}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise ModelConfigError(f"{where}: unknown constant(s) {', '.join(unknown)} "
                               f"(known: {', '.join(known)})")
    cfg = {c.name: given.get(c.name, c.default) for c in declared}
    for c in declared:
        val = cfg[c.name]
        if c.type is int:
            if isinstance(val, bool) or not isinstance(val, int) or val < 0:
                raise ModelConfigError(f"{where}: {c.name} must be a natural number, got {val!r}")
        elif c.type is bool:
            if not isinstance(val, bool):
                raise ModelConfigError(f"{where}: {c.name} must be true or false, got {val!r}")
        elif c.type is str:
            allowed = c.choices if c.choices is not None else (choices or {}).get(c.name)
            if not isinstance(val, str) or (allowed is not None and val not in allowed):
                raise ModelConfigError(f"{where}: {c.name} must be one of "
                                       f"{', '.join(allowed or ('a string',))}, got {val!r}")
        else:
            empty = c.name in nonempty and not val
            if (not isinstance(val, (list, tuple)) or empty
                    or not all(isinstance(x, str) and x for x in val)):
                what = "a non-empty list" if c.name in nonempty else "a list"
                raise ModelConfigError(f"{where}: {c.name} must be {what} of non-empty strings, "
                                       f"got {val!r}")
            if len(set(val)) != len(val):
                dup = sorted({x for x in val if list(val).count(x) > 1})
                raise ModelConfigError(f"{where}: {c.name} names {', '.join(dup)} more than once "
                                       f"(it is a set)")
            cfg[c.name] = list(val)
    return cfg


def mutant_flags(model: str, mutants: dict, flags: Callable[..., NamedTuple], names) -> NamedTuple:
    """`flags` (a NamedTuple of booleans, one per seeded bug of `mutants`) with
    the named ones set; an unknown name is bad input."""
    unknown = [n for n in names if n not in mutants]
    if unknown:
        raise ModelConfigError(f"{model}: unknown mutant(s) {', '.join(map(repr, unknown))} "
                               f"(known: {', '.join(mutants)})")
    return flags(**{n: True for n in names})
