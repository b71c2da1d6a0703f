"""A toy of 65 variables, one more than a 64-bit mask holds: flags v00..v64
set one after another (v[i] once v[i-1] is set), 66 states in a line. The
engines check a new state only against the properties that read a variable
its step changed (checker/search/checks.py); this model makes sure that the
variables past the 64th count too: LastUnset, which reads v64 alone, is
violated at depth 65 by the compiled hot path as by the pure-Python one."""
from __future__ import annotations

from typing import NamedTuple

from model.base import Action, ModelDef

WIDTH = 65
Flags = NamedTuple("Flags", [(f"v{i:02d}", int) for i in range(WIDTH)])
Flags.__module__ = __name__   # (pickled by name, as every state class)
_SET = tuple(Action("Set", (i,)) for i in range(WIDTH))


class Wide:
    name = "wide"
    variables = Flags._fields
    action_names = ("Set",)

    def __init__(self, variant: str):
        self.variant = variant

    def init_states(self):
        yield Flags(*(0,) * WIDTH)

    def successors(self, s: Flags):
        for i in range(WIDTH):
            if s[i] == 0:   # the first unset flag is the only one that may be set
                yield _SET[i], Flags(*s[:i], 1, *s[i + 1:])
                return

    def from_plain(self, values: tuple) -> Flags:
        return Flags(*values)


MODEL = ModelDef(
    name="wide",
    doc=f"{WIDTH} flags set in turn (toy model; LastUnset, reading the last one, is violated)",
    variants={"standard": ()},
    build=lambda variant, constants: Wide(variant),
    properties="invariants.examples:wide_properties",
)
