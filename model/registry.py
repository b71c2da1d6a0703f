"""The models kmc knows, by name: one explicit list. checker/ looks models up
here only; a model package defines its ModelDef as MODEL and imports
nothing of this module, so the import graph stays a tree."""
from __future__ import annotations

from model import kraft, kraft_cluster, kraft_quorum, zk
from model.base import ModelDef
from model.examples import diehard, randgraph, twophase, wide

# A model added later adds its package to this tuple.
MODELS: dict[str, ModelDef] = {d.name: d for d in (
    twophase.MODEL, diehard.MODEL, randgraph.MODEL, kraft.MODEL, zk.MODEL,
    kraft_quorum.MODEL, kraft_cluster.MODEL, wide.MODEL)}


def register(defn: ModelDef) -> ModelDef:
    """Add a model at run time (tests use it for throw-away models)."""
    MODELS[defn.name] = defn
    return defn
