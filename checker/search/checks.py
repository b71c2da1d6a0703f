"""Which predicates a new state is checked against, by what its step changed.

A successor shares its parent's objects for the variables its step did not
change, and its parent was checked; so a property needs checking only when a
variable it reads (Property.reads) changed, and an invariant given as a
conjunction of parts (Property.parts) only in the parts whose variables
changed. Every engine (local, auto, spark, simulate) checks through this.
"""
from __future__ import annotations

from typing import Callable, Iterable

from model.base import ALWAYS

EVERY_VARIABLE = -1  # a changed-variables mask with every bit set (unknown: check all)


def _mask(index: dict, reads) -> int:
    """The bit mask of the variables `reads` (bit i: variable i; every bit
    for None, reads unknown)."""
    if reads is None or any(v not in index for v in reads):
        return EVERY_VARIABLE
    return sum(1 << index[v] for v in set(reads))


class Checks:
    """The selected properties of one search: `masks` (per property name, the
    variables it reads) and `always`, (name, predicate, mask) per invariant, or
    per part of one with parts (its name repeated, in a row). A witness is
    always checked whole: a conjunction is witnessed only by one state
    satisfying all its parts. `always_for(changed)` is the (name, predicate)
    pairs of `always` to run on a successor whose step changed the variables
    of `changed`; a name may come several times (one per failing part):
    report it once."""

    def __init__(self, model, props: Iterable):
        index = {name: i for i, name in enumerate(model.variables)}
        props = list(props)
        self.masks = {p.name: _mask(index, p.reads) for p in props}
        self.always: list[tuple[str, Callable, int]] = []
        for p in props:
            if p.kind != ALWAYS:
                continue
            if p.parts:
                self.always += [(p.name, pred, _mask(index, reads)) for reads, pred in p.parts]
            else:
                self.always.append((p.name, p.predicate, self.masks[p.name]))
        # few distinct masks recur (each action changes a fixed few variables)
        self._by_mask: dict[int, tuple] = {}

    def always_for(self, changed: int) -> tuple:
        plan = self._by_mask.get(changed)
        if plan is None:
            if len(self._by_mask) >= _PLANS:
                self._by_mask.clear()
            plan = self._by_mask[changed] = tuple(
                (name, pred) for name, pred, mask in self.always if changed & mask)
        return plan

    def pending(self, sometimes: Iterable) -> list[tuple[str, Callable, int]]:
        """(name, predicate, mask) of the witnesses still to find."""
        return [(p.name, p.predicate, self.masks[p.name]) for p in sometimes]

    # Checking a new state, the same in every engine (the local and auto
    # engines' expand_chunk and initial states, the spark executors' tasks,
    # the random walks):

    def violated(self, state, changed: int = EVERY_VARIABLE) -> list[str] | tuple:
        """The invariants a new state breaks, of those a step that changed
        `changed` may break (its parent, which held them, shares the other
        variables); each name once, in the properties' order."""
        # (the hot path of every engine: one call a new state, no list
        # unless something is violated)
        plan = self._by_mask.get(changed)
        if plan is None:
            plan = self.always_for(changed)
        out: list | tuple = ()
        for name, pred in plan:
            if not pred(state):
                if not out:
                    out = [name]
                elif out[-1] != name:
                    out.append(name)
        return out

    @staticmethod
    def witnessed(state, changed: int, pending: list, take: bool = True) -> list[str] | tuple:
        """The witnesses of `pending` (pending()'s, still to find) that a new
        state reaches; taken out of `pending` unless take=False."""
        found: list | tuple = ()
        for x in pending:
            if changed & x[2] and x[1](state):
                if found:
                    found.append(x)
                else:
                    found = [x]
        if not found:
            return ()
        if take:
            for x in found:
                pending.remove(x)
        return [x[0] for x in found]


_PLANS = 1 << 12  # distinct change masks remembered (2**variables at most)
