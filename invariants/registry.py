"""Which properties belong to which model. checker/ looks properties up here only."""
from __future__ import annotations

from typing import Callable

from model.base import Property

# model name -> function(model) -> the model's properties, invariants first
_PROPERTIES: dict[str, Callable[[object], list[Property]]] = {}


def register(model_name: str):
    def deco(fn: Callable[[object], list[Property]]):
        _PROPERTIES[model_name] = fn
        return fn
    return deco


def properties_for(model) -> list[Property]:
    """All properties of `model` (its variant and constants may select some)."""
    return list(_PROPERTIES[model.name](model))


def _load_all() -> None:
    import invariants.examples  # noqa: F401  (toy models)
    import invariants.kraft  # noqa: F401
    import invariants.zk  # noqa: F401


_load_all()
