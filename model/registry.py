"""The models kmc knows, by name. checker/ looks models up here only."""
from __future__ import annotations

from model.base import ModelDef

MODELS: dict[str, ModelDef] = {}


def register(defn: ModelDef) -> ModelDef:
    MODELS[defn.name] = defn
    return defn


def _load_all() -> None:
    # Importing a model package registers it. A model added later adds one line.
    import model.examples  # noqa: F401  (toy models: twophase, diehard)
    import model.kraft  # noqa: F401
    import model.zk  # noqa: F401


_load_all()
