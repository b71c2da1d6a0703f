"""The engine's pacing of Python's cyclic garbage collector (checker/search/engine.py level_gc)."""
from __future__ import annotations

import gc
from typing import NamedTuple

from checker.search import engine
from checker.search.engine import CheckOptions, check
from model.base import Action


class Counter(NamedTuple):
    n: int


class Cycle:
    """A self-referencing object: only the cyclic collector frees it."""

    alive = 0

    def __init__(self):
        self.me = self
        Cycle.alive += 1

    def __del__(self):
        Cycle.alive -= 1


class Line:
    """States 0..N-1 in a line; each successors() call may leave a cycle behind."""

    name = "line"
    variant = "default"
    variables = ("n",)
    action_names = ("Step",)

    def __init__(self, n: int, cycles: bool):
        self.n, self.cycles = n, cycles

    def init_states(self):
        return [Counter(0)]

    def successors(self, s):
        if self.cycles:
            Cycle()
        return [(Action("Step"), Counter(s.n + k)) for k in (1, 2) if s.n + k < self.n]

    def from_plain(self, values):
        return Counter(*values)


def run(model, monkeypatch):
    monkeypatch.setattr(engine, "CHUNK_STATES", 50)  # many chunks
    return check(model, [], CheckOptions())


def test_the_collector_is_restored_and_nothing_stays_frozen(monkeypatch):
    assert gc.isenabled()
    before = gc.get_freeze_count()
    r = run(Line(3000, cycles=False), monkeypatch)
    assert r.distinct == 3000
    assert gc.isenabled() and gc.get_freeze_count() == before


def test_a_disabled_collector_stays_disabled(monkeypatch):
    gc.disable()
    try:
        run(Line(500, cycles=False), monkeypatch)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_cyclic_garbage_made_during_the_search_is_collected(monkeypatch):
    gc.collect()
    Cycle.alive = 0
    r = run(Line(3000, cycles=True), monkeypatch)
    assert r.distinct == 3000
    # the first chunk's collection finds the cycles, and from then on every
    # chunk is collected: at most the last chunk's cycles may be left
    assert Cycle.alive <= engine.CHUNK_STATES
