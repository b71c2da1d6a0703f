"""The `local` engine (docs/ARCHITECTURE.md, "Engines"): the search core
(checker/search/core.py: the level loop, the initial states, the checks,
the limits, the result) with this process expanding every level itself,
chunk after chunk (`LocalExpander`). `check()` is its entry point.

The names most callers use are importable from here too: the options, the
result, the per-chunk work, the limits' errors.
"""
from __future__ import annotations

from typing import Iterable

from checker.search.checks import EVERY_VARIABLE  # noqa: F401
from checker.search.core import CHUNK_STATES, SPILL_STATES, CheckOptions, Search  # noqa: F401
from checker.search.expand import (ChunkResult, ExpandContext, _python_successor, _summary,  # noqa: F401
                                   expand_chunk, replay, resolve_projection)
from checker.search.levellog import NO_ACTION, LevelLog  # noqa: F401
from checker.search.limits import (DiskLimitError, MemoryLimitError, check_disk, check_memory,  # noqa: F401
                                   format_size)
from checker.search.pacing import GcPacer, level_gc  # noqa: F401
from checker.search.result import DEADLOCK, CheckResult, Violation, collision_probability  # noqa: F401
from model.base import Model, Property


class LocalExpander:
    """A level expanded in this process, chunk after chunk of its frontier:
    each chunk's successors generated, tested against the seen set and
    checked (expand_chunk), then recorded in BFS order (Search.absorb)."""

    def expand(self, search: Search, level: int, frontier, log: LevelLog, keep: bool):
        nxt = search.new_frontier(keep)
        done = 0
        for chunk in frontier.chunks():
            res = expand_chunk(search.ctx, chunk, search.seen)
            search.absorb(level + 1, log, res, chunk, nxt)
            search.collect()
            if search.stopped:
                break
            done += len(chunk)
            search.between_chunks(level, len(frontier) - done + len(nxt))
        return nxt

    def where(self, search: Search) -> dict:
        return {"name": "local"}


def local_search(model: Model, properties: Iterable[Property], options: CheckOptions) -> Search:
    """A run of the local engine, not started (its run() does)."""
    return Search(model, properties, options, LocalExpander())


def check(model: Model, properties: Iterable[Property], options: CheckOptions | None = None) -> CheckResult:
    """Check `properties` on every state of `model` reachable within the bound.

    Raises EngineEvaluationError (exit 3) when the model raises EvaluationError,
    SpecError (exit 2) for a bad option (projection, depth, fingerprint bits)."""
    return local_search(model, properties, options or CheckOptions()).run()
