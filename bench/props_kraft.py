#!/usr/bin/env python3
"""Time each property of the kraft model on the new states of a BFS level
(in the order the engine checks them, so identity memos behave as in a run).

    .venv/bin/python bench/props_kraft.py --level 8 --states 60000

Prints microseconds per state for each property and their sum; use it to
see which invariant to speed up, and to compare variants of one predicate.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from bench.engine_kraft import build  # noqa: E402
from checker.search import engine  # noqa: E402


def level_states(model, level: int, limit: int) -> list:
    ctx = engine.ExpandContext.create(model, [])
    seen: set = set()
    frontier = [ctx.entry(s) for s in model.init_states()]
    seen.update(e[2] for e in frontier)
    for _ in range(level):
        frontier = [(e[0], e[1], e[2]) for e in engine.expand_chunk(ctx, frontier, seen).new]
    return [e[0] for e in frontier[:limit]]


def time_predicate(pred, states, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        memo_reset(pred)
        t0 = time.process_time()
        for s in states:
            pred(s)
        best = min(best, time.process_time() - t0)
    return best


def memo_reset(pred) -> None:
    """Empty the identity memos a predicate closes over (a fresh run)."""
    for cell in getattr(pred, "__closure__", None) or ():
        try:
            v = cell.cell_contents
        except ValueError:
            continue
        if isinstance(v, dict) and type(v).__name__ == "Memo":
            v.clear()
        elif isinstance(v, tuple):
            for item in v:
                if isinstance(item, tuple):
                    for x in item:
                        if isinstance(x, dict) and type(x).__name__ == "Memo":
                            x.clear()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", type=int, default=8)
    ap.add_argument("--states", type=int, default=60000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    gc.disable()
    model, props = build()
    states = level_states(model, args.level, args.states)
    n = len(states)
    print(f"{n} states of level {args.level}")
    total = 0.0
    for p in props:
        t = time_predicate(p.predicate, states, args.repeat)
        total += t
        print(f"{p.name:40} {p.kind:10} {1e6 * t / n:7.2f} us/state")
    print(f"{'all':51} {1e6 * total / n:7.2f} us/state")


if __name__ == "__main__":
    main()
