"""The jugs puzzle of Die Hard 3, after the TLA+ example DieHard.tla: measure
exactly Goal gallons with a big and a small jug. The invariant NotSolved is
violated by the puzzle's solution (6 steps for 5, 3 and 4)."""
from __future__ import annotations

from typing import NamedTuple

from model.base import Action, Constant, ModelConfigError, ModelDef


class Jugs(NamedTuple):
    big: int
    small: int


ACTIONS = ("FillSmallJug", "FillBigJug", "EmptySmallJug", "EmptyBigJug", "SmallToBig", "BigToSmall")
_A = {name: Action(name) for name in ACTIONS}


class DieHard:
    name = "diehard"
    variables = Jugs._fields
    action_names = ACTIONS

    def __init__(self, variant: str, big: int, small: int, goal: int):
        self.variant = variant
        self.big_capacity = big
        self.small_capacity = small
        self.goal = goal

    def init_states(self):
        yield Jugs(0, 0)

    def successors(self, s: Jugs):
        big, small = s
        B, S = self.big_capacity, self.small_capacity
        yield _A["FillSmallJug"], Jugs(big, S)
        yield _A["FillBigJug"], Jugs(B, small)
        yield _A["EmptySmallJug"], Jugs(big, 0)
        yield _A["EmptyBigJug"], Jugs(0, small)
        poured = min(big + small, B) - big  # SmallToBig
        yield _A["SmallToBig"], Jugs(big + poured, small - poured)
        poured = min(big + small, S) - small  # BigToSmall
        yield _A["BigToSmall"], Jugs(big - poured, small + poured)

    def from_plain(self, values: tuple) -> Jugs:
        return Jugs(*values)


def build(variant: str, c: dict) -> DieHard:
    big, small, goal = c["BigCapacity"], c["SmallCapacity"], c["Goal"]
    if not 0 < small <= big:
        raise ModelConfigError(f"need 0 < SmallCapacity <= BigCapacity, got {small} and {big}")
    return DieHard(variant, big, small, goal)


MODEL = ModelDef(
    name="diehard",
    doc="Die Hard jugs puzzle (toy model; NotSolved is violated after 6 steps)",
    variants={"standard": (
        Constant("BigCapacity", int, 5, "gallons the big jug holds"),
        Constant("SmallCapacity", int, 3, "gallons the small jug holds"),
        Constant("Goal", int, 4, "gallons to measure in the big jug"),
    )},
    build=build,
    properties="invariants.examples:diehard_properties",
    temporal="invariants.temporal_examples:diehard_temporal",
)
