"""A liveness run's checked configuration: which temporal properties, under
which fairness. A spec's `properties` and `fairness` are read and checked
into it by checker/front/temporal_spec.py."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

FAIRNESS_KINDS = ("WF", "SF")
REFERENCE = "reference"   # a spec's fairness = "reference": the model's own


@dataclass
class LivenessConfig:
    properties: list          # [invariants.temporal.TemporalProperty]
    fairness: list            # [(kind, action name)]
    fairness_spec: Any        # as given: "reference", a list, or []

    def fairness_entries(self) -> list[str]:
        return [f"{k}:{a}" for k, a in self.fairness]
