"""What the kraft properties need to know of a built model: variant and constants.

The reference's invariants read the constants BrokerCount, MinISR and Values
(Cardinality(Values) bounds LogMatchingProperty). They are read once, when the
properties are built, and bound into the predicates' closures.
"""
from __future__ import annotations

from dataclasses import dataclass

from model.kraft.state import KraftStorageState

KIP966 = "kip966"
V3_5 = "v3_5"


def _constant(model, name: str):
    """A constant of the built model: model.constants[name] (the resolved spec
    constants), else an attribute of that name."""
    constants = getattr(model, "constants", None)
    if isinstance(constants, dict) and name in constants:
        return constants[name]
    if constants is not None and hasattr(constants, name):
        return getattr(constants, name)
    if hasattr(model, name):
        return getattr(model, name)
    raise AttributeError(f"model {getattr(model, 'name', model)!r} exposes no constant {name}")


@dataclass(frozen=True)
class KraftContext:
    variant: str       # the protocol: kip966 or v3_5 (a storage variant's base)
    broker_count: int
    min_isr: int
    values: frozenset  # the producer values, as our states hold them (str)
    storage: bool = False        # kip966_storage / v3_5_storage (KraftStorageState)
    strategy: str | None = None  # UncleanRecoveryStrategy (kip966_storage)
    # MinIsrChanges: () keeps MinISR constant; else min.insync.replicas is state,
    # read with model.kraft.state's controller_min_isr / broker_min_isr(ctx, ...)
    min_isr_changes: tuple = ()

    @property
    def brokers(self) -> range:
        return range(1, self.broker_count + 1)

    @property
    def value_count(self) -> int:  # Cardinality(Values)
        return len(self.values)


STORAGE_SUFFIX = "_storage"


def context_of(model) -> KraftContext:
    variant = model.variant
    storage = variant.endswith(STORAGE_SUFFIX)
    if storage:
        variant = variant[:-len(STORAGE_SUFFIX)]
    if variant not in (KIP966, V3_5):
        raise ValueError(f"kraft properties: unknown variant {model.variant!r}")
    values = _constant(model, "Values")
    constants = getattr(model, "constants", None) or {}
    return KraftContext(
        variant=variant,
        broker_count=int(_constant(model, "BrokerCount")),
        min_isr=int(_constant(model, "MinISR")),
        values=frozenset(str(v) for v in values),
        storage=storage,
        strategy=constants.get("UncleanRecoveryStrategy") if storage else None,
        min_isr_changes=tuple(constants.get("MinIsrChanges", ())),
    )


MEMO_LIMIT = 1 << 14


class Memo(dict):
    """A predicate's identity memo (id -> object). It pickles empty: ids mean
    nothing in another process, and a shipped predicate should stay small."""

    __slots__ = ()

    def __reduce__(self):
        return (Memo, ())


def memo_true_by_identity(predicate, *variables: str):
    """`predicate`, remembering the states it held on by the identity of the
    variables it reads. A successor shares the objects of the variables it
    does not change, so a new state often has exactly the objects an already
    checked state had. Only TRUE results are remembered (a violation stops the
    search anyway); the memo holds the objects, so an id cannot be reused
    while it is remembered. `variables` must be every variable `predicate`
    reads: the memo is sound only then."""
    index = tuple(KraftStorageState._fields.index(v) for v in variables)  # a superset of KraftState's
    memo = Memo()
    if len(index) == 1:
        (i,) = index

        def memoized(s) -> bool:
            x = s[i]
            if memo.get(id(x)) is x:
                return True
            if not predicate(s):
                return False
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[id(x)] = x
            return True
    elif len(index) == 2:
        i, j = index

        def memoized(s) -> bool:
            a = s[i]
            b = s[j]
            hit = memo.get((id(a), id(b)))
            if hit is not None and hit[0] is a and hit[1] is b:
                return True
            if not predicate(s):
                return False
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[(id(a), id(b))] = (a, b)
            return True
    else:
        def memoized(s) -> bool:
            objs = tuple(s[k] for k in index)
            key = tuple(map(id, objs))
            hit = memo.get(key)
            if hit is not None and all(x is y for x, y in zip(hit, objs)):
                return True
            if not predicate(s):
                return False
            if len(memo) >= MEMO_LIMIT:
                memo.clear()
            memo[key] = objs
            return True

    memoized.__name__ = predicate.__name__
    memoized.__qualname__ = predicate.__qualname__
    memoized.__doc__ = predicate.__doc__
    memoized.unmemoized = predicate
    return memoized
