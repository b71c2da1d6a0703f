"""Python's cyclic garbage collector paced for a search (every engine's:
the local and auto engines' levels, the spark executors' tasks)."""
from __future__ import annotations

import gc
from contextlib import contextmanager


@contextmanager
def level_gc():
    """Python's cyclic garbage collector, paced for a search: automatic
    collections are off inside, and the caller runs `collect()` after each
    chunk.

    States are acyclic (tuples, frozensets, ints), so the collector finds
    nothing in them, yet by default it re-scans every live state again and
    again as the frontier grows (a full collection each time the surviving
    objects grew by a quarter): a third of the run time at depth 9 of the
    kip966 reference configuration. Here every object is looked at once at
    most: `collect()` collects the objects allocated since its last call
    (the youngest generation) and then, as long as that found no cyclic
    garbage, freezes the survivors (gc.freeze: moved out of the collector's
    sight, still freed by reference counting) and samples only one chunk in
    SAMPLE afterwards. A chunk that made cyclic garbage turns the sampling
    off: from then on every chunk is collected."""
    enabled = gc.isenabled()
    if not enabled:
        yield lambda: 0
        return
    gc.disable()
    pacer = GcPacer()
    try:
        yield pacer.collect
    finally:
        if pacer.froze:
            gc.unfreeze()
        gc.enable()


class GcPacer:
    """The pacing of level_gc's `collect()` (also the spark workers', whose
    processes keep it across tasks): collect the youngest generation one
    call in _GC_SAMPLE and freeze the survivors of the others, until a
    collection finds cyclic garbage; from then on collect every call."""

    def __init__(self):
        # another user of gc.freeze (a pre-fork server): leave its objects
        # frozen and do not freeze (unfreeze would thaw them too)
        self.freeze = gc.get_freeze_count() == 0
        self.froze = False
        self.calls = 0

    def collect(self) -> None:
        if self.freeze and self.calls % _GC_SAMPLE:
            gc.freeze()
            self.froze = True
        elif gc.collect(0) and self.freeze:
            self.freeze = False  # cyclic garbage is being made: collect every call
        elif self.freeze:
            gc.freeze()
            self.froze = True
        self.calls += 1


_GC_SAMPLE = 8  # with no cyclic garbage so far, collect one chunk in 8 (freeze the others)
