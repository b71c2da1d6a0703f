"""Shrinking a counterexample to a 1-minimal one (`kmc simulate`,
ARCHITECTURE.md "Simulation").

A trace is [(None, s0), (a1, s1), ..., (an, sn)] whose last state is the
first to violate a property. A candidate drops steps and is replayed by
action (name and parameters) from s0: each kept action must be enabled,
i.e. be among the successors of the state reached so far with an equal
Action; the candidate is kept, cut at its first violating state, when some
state violates the property. Where several successors share the action
(a broker answering one of several requests), replay takes the one that
agrees with the state the step reached in the trace being shrunk on the most
variables (the first of equals): the trace itself replays to itself.

The result is 1-minimal: no single step, and no contiguous run of steps, can
be dropped with the rest still a valid execution that violates the property;
the search ends only after a pass over every run (every start, every length)
found none. It starts with states revisited (a cycle of the walk: dropped
at once, the states after it are the same), then drops halves, quarters,
... (aligned, as delta debugging does), then every run, longest first; each
success starts the passes again on the shorter trace. Replay starts at the
dropped run: the prefix before it is kept as it is.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterator

from checker.search.errors import EngineEvaluationError
from model.base import EvaluationError


@dataclass
class ShrinkResult:
    trace: list                 # the shrunk trace [(None, s0), (a1, s1), ...]
    original_steps: int
    steps: int
    replays: int                # candidates replayed
    replay_steps: int           # successor computations
    seconds: float
    minimal: bool               # certified 1-minimal (False: stopped by the time limit)
    cycles_cut: int             # steps dropped as revisits before the search

    def statistics(self) -> dict:
        return {"original_steps": self.original_steps, "steps": self.steps, "replays": self.replays,
                "replay_steps": self.replay_steps, "seconds": round(self.seconds, 3),
                "one_minimal": self.minimal, "cycle_steps_cut": self.cycles_cut}


def pick(successors, action, recorded):
    """The successor of `action` replay takes (None: not enabled): the one
    equal to `recorded` on the most variables, the first of equals."""
    best = None
    best_score = -1
    for a, s in successors:
        if a != action:
            continue
        if recorded is None:
            return s
        score = sum(1 for x, y in zip(s, recorded) if x is y or x == y)
        if score > best_score:
            best, best_score = s, score
            if score == len(s):
                break
    return best


def replay(model, start, actions, recorded, violates) -> tuple[list | None, int]:
    """Replay `actions` from state `start` (recorded[i]: the state action i
    reached in the trace being shrunk, or None); ([(a, s), ...] cut at the
    first state that violates, or None: an action not enabled, or no state
    violates; successor computations made)."""
    out = []
    state = start
    for k, action in enumerate(actions):
        nxt = pick(model.successors(state), action, recorded[k] if recorded is not None else None)
        if nxt is None:
            return None, k + 1
        out.append((action, nxt))
        state = nxt
        if violates(state):
            return out, k + 1
    return None, len(actions)


def cut_cycles(trace: list) -> list:
    """The trace without revisits: where s_i == s_j (i < j), steps i+1..j go
    (the same state, so the same steps follow)."""
    out: list = []
    at: dict = {}
    for step in trace:
        state = step[1]
        i = at.get(state)
        if i is not None:
            for _, s in out[i + 1:]:
                at.pop(s, None)
            del out[i + 1:]
            continue
        at[state] = len(out)
        out.append(step)
    return out


def _cut(trace: list, accept) -> list:
    """cut_cycles(trace), unless accept refuses the cut trace."""
    cut = cut_cycles(trace)
    return cut if accept is None or len(cut) == len(trace) or accept(cut) else trace


def _runs(n: int) -> Iterator[tuple[int, int]]:
    """(start, length) of the runs of steps to drop from n steps: aligned
    halves, quarters, ... then every run, longest first."""
    tried = set()
    k = n // 2
    while k >= 1:
        for i in range(0, n - k + 1, k):
            tried.add((i, k))
            yield i, k
        k //= 2
    for k in range(n - 1, 0, -1):
        for i in range(0, n - k + 1):
            if (i, k) not in tried:
                yield i, k


def shrink(model, trace: list, violates: Callable, time_limit: float | None = None,
           accept: Callable[[list], bool] | None = None) -> ShrinkResult:
    """Shrink `trace` (its last state violates, no state before it does) to a
    1-minimal trace; `violates(state)` -> bool. time_limit (seconds): stop
    early with the shortest trace so far (not certified 1-minimal).
    accept(candidate) -> bool: a test of the whole candidate besides its
    last state (a lasso's prefix: checker/search/liveness/walks.py); None: any."""
    t0 = time.perf_counter()
    original = len(trace) - 1
    trace = _cut(list(trace), accept)
    cycles = original - (len(trace) - 1)
    replays = replay_steps = 0
    minimal = False
    try:
        while True:
            n = len(trace) - 1
            accepted = None
            for i, k in _runs(n):
                if time_limit is not None and time.perf_counter() - t0 > time_limit:
                    return ShrinkResult(trace, original, len(trace) - 1, replays, replay_steps,
                                        time.perf_counter() - t0, False, cycles)
                # drop steps i+1 .. i+k (trace indices): replay from s_i
                rest = trace[i + k + 1:]
                replays += 1
                if not rest:  # a prefix: no state of it violates
                    continue
                got, cost = replay(model, trace[i][1], [a for a, _ in rest], [s for _, s in rest], violates)
                replay_steps += cost
                if got is not None and (accept is None or accept(trace[:i + 1] + got)):
                    accepted = trace[:i + 1] + got
                    break
            if accepted is None:
                minimal = True
                break
            trace = _cut(accepted, accept)
    except EvaluationError as e:
        raise EngineEvaluationError(f"evaluation error while shrinking: {e}") from None
    return ShrinkResult(trace, original, len(trace) - 1, replays, replay_steps,
                        time.perf_counter() - t0, minimal, cycles)
