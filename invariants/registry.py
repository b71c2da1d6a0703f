"""Which properties belong to which model: one explicit table each for state
properties and temporal properties. checker/ looks properties up here only;
the property packages import nothing of this module, so the import graph
stays a tree."""
from __future__ import annotations

from typing import Any, Callable

from invariants import examples, temporal_examples
from invariants import kraft, kraft_quorum, zk
from invariants.kraft import liveness as kraft_liveness
from invariants.kraft_quorum import liveness as quorum_liveness
from invariants.zk import liveness as zk_liveness
from invariants.temporal import TemporalProperty
from model.base import Property

# model name -> function(model) -> the model's properties, invariants first
PROPERTIES: dict[str, Callable[[Any], list[Property]]] = {
    "twophase": examples.twophase_properties,
    "diehard": examples.diehard_properties,
    "randgraph": examples.randgraph_properties,
    "wide": examples.wide_properties,
    "kraft": kraft.kraft_properties,
    "zk": zk.zk_properties,
    "kraft_quorum": kraft_quorum.quorum_properties,
}

# model name -> (function(model) -> its temporal properties,
#                function(model) -> the fairness its reference assumes, as spec
#                entries ("WF:BrokerStart", ...), or None: no reference fairness)
TEMPORAL: dict[str, tuple[Callable[[Any], list[TemporalProperty]], Callable[[Any], list[str]] | None]] = {
    "twophase": (temporal_examples.twophase_temporal, None),
    "diehard": (temporal_examples.diehard_temporal, None),
    "kraft": (kraft_liveness.kraft_temporal, kraft_liveness.reference_fairness),
    "kraft_quorum": (quorum_liveness.quorum_temporal, quorum_liveness.reference_fairness),
    "zk": (zk_liveness.zk_temporal, zk_liveness.zk_fairness),
}


def register(model_name: str, properties: Callable[[Any], list[Property]]) -> None:
    """Add a model's properties at run time (tests use it for throw-away models)."""
    PROPERTIES[model_name] = properties


def properties_for(model) -> list[Property]:
    """All properties of `model` (its variant and constants may select some)."""
    return list(PROPERTIES[model.name](model))


def temporal_properties_for(model) -> list[TemporalProperty]:
    """Every temporal property of `model` ([] for a model without any)."""
    entry = TEMPORAL.get(model.name)
    return list(entry[0](model)) if entry is not None else []


def reference_fairness_for(model) -> list[str] | None:
    """The fairness the model's reference specification assumes (None: the
    model has none)."""
    entry = TEMPORAL.get(model.name)
    if entry is None or entry[1] is None:
        return None
    return list(entry[1](model))
