"""What the kraft properties need to know of a built model: variant and constants.

The reference's invariants read the constants BrokerCount, MinISR and Values
(Cardinality(Values) bounds LogMatchingProperty). They are read once, when the
properties are built, and bound into the predicates' closures.
"""
from __future__ import annotations

from dataclasses import dataclass

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
    variant: str
    broker_count: int
    min_isr: int
    values: frozenset  # the producer values, as our states hold them (str)

    @property
    def brokers(self) -> range:
        return range(1, self.broker_count + 1)

    @property
    def value_count(self) -> int:  # Cardinality(Values)
        return len(self.values)


def context_of(model) -> KraftContext:
    variant = model.variant
    if variant not in (KIP966, V3_5):
        raise ValueError(f"kraft properties: unknown variant {variant!r}")
    values = _constant(model, "Values")
    return KraftContext(
        variant=variant,
        broker_count=int(_constant(model, "BrokerCount")),
        min_isr=int(_constant(model, "MinISR")),
        values=frozenset(str(v) for v in values),
    )
