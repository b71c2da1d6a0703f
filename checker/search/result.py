"""The one result type of every engine (local, auto, spark, simulation,
liveness): CheckResult, its violations with their shortest counterexamples,
and the figures summary.json and the console report read."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEADLOCK = "Deadlock"          # the name a deadlock is reported under (TLC's wording)


@dataclass
class Violation:
    """A violated property (or DEADLOCK) and its shortest counterexample.

    trace[0] is (None, initial state); trace[i] is (action, state after it).
    """

    property: str
    depth: int
    trace: list = field(default_factory=list)


EVALUATION_ERROR = "EvaluationError"   # the name its trace files carry


@dataclass
class EvaluationFailure:
    """The model raised an evaluation error (TLC would stop there): the
    action and the model's words, a hint when a known quirk is the cause,
    and the trace to the state whose successors raised (its last state)."""

    action: str | None
    message: str
    hint: str | None
    trace: list = field(default_factory=list)
    state: str | None = None       # the state, shortly, when no action is named

    @classmethod
    def of(cls, e, model) -> "EvaluationFailure":
        """An EngineEvaluationError as a result's: the action, the model's
        words without the state, and the known quirk that causes it (the
        model's known_quirk)."""
        action = e.action if e.action is not None else getattr(e, "label", None)
        action = None if action is None else str(action)
        detail = " ".join(str(e.detail).split())
        if action and detail.startswith(f"{action}: "):
            detail = detail[len(action) + 2:]
        explain = getattr(model, "known_quirk", None)
        hint = explain(f"{action}: {detail}" if action else detail) if explain else None
        state = None
        if action is None and e.state is not None:
            state = repr(e.state)
            state = state if len(state) <= 60 else state[:57] + "..."
        return cls(action, detail, hint, list(e.trace or ()), state)

    @property
    def depth(self) -> int:
        return max(len(self.trace) - 1, 0)

    @property
    def header(self) -> str:
        where = f"in {self.action} " if self.action else ""
        n = self.depth
        return (f"Evaluation error {where}from the state after {n} step{'s' if n != 1 else ''} "
                f"(the last below): {self.message}" + (f" ({self.hint})" if self.hint else ""))

    def line(self, limit: int = 200) -> str:
        """One console line of at most about `limit` characters."""
        where = (f" in {self.action}" if self.action else
                 f" in the successors of {self.state}" if self.state else "")
        tail = f"; {self.hint}" if self.hint else ""
        room = max(limit - len(where) - len(tail) - len("evaluation error: "), 40)
        msg = " ".join(self.message.split())
        msg = msg if len(msg) <= room else msg[:room - 3] + "..."
        return f"evaluation error{where}: {msg}{tail}"

    property: str = EVALUATION_ERROR   # (last: the name shadows the builtin in this body)


@dataclass
class CheckResult:
    outcome: str                                   # 'pass' | 'violation' | 'error'
    distinct: int
    generated: int
    per_level_distinct: list[int]
    per_action_generated: dict[str, int]
    per_action_distinct: dict[str, int]
    depth: int                                     # most steps of any state found
    violations: list[Violation]
    sometimes: dict[str, int | None]               # name -> depth first witnessed
    properties: list[str] = field(default_factory=list)   # the always properties checked
    states_left: int = 0                           # frontier not expanded (bound or stop)
    exhausted: bool = False                        # every reachable state was explored
    max_depth: int | None = None
    check_deadlock: bool = False
    fingerprint_bits: int = 64
    projection: list[str] | None = None            # the fingerprint projection (None: every variable)
    wall_time: float = 0.0
    # the run's memory at its peak: every process of the run (checker/search/proc.py)
    peak_memory_kb: int = 0
    collision_probability: float = 0.0
    liveness: dict | None = None                   # temporal properties (checker/search/liveness/run.py)
    memory: dict | None = None                     # how peak_memory_kb was taken (TreeMemory.summary)
    # which engine ran it and how: {"name": "local"}, the auto engine's
    # levels ({"name": "auto", "levels": ["local", ..., "pool"], ...}), Spark's
    engine: dict | None = None
    error: EvaluationFailure | None = None         # outcome 'error': the model raised

    @property
    def bytes_per_state(self) -> int:
        """The peak memory of the run's processes (all of them: the auto
        engine's workers, Spark's JVMs and Python workers; shared pages
        counted once) per distinct state."""
        return self.peak_memory_kb * 1024 // self.distinct if self.distinct else 0

    @property
    def violated(self) -> list[str]:
        return [v.property for v in self.violations]

    @property
    def generated_per_second(self) -> float:
        return self.generated / self.wall_time if self.wall_time > 0 else 0.0

    @property
    def distinct_per_second(self) -> float:
        return self.distinct / self.wall_time if self.wall_time > 0 else 0.0

    def statistics(self) -> dict[str, Any]:
        """Every figure as plain JSON values (summary.json, --json)."""
        return {
            "outcome": self.outcome,
            "distinct": self.distinct,
            "generated": self.generated,
            "per_level_distinct": list(self.per_level_distinct),
            "depth": self.depth,
            "states_left": self.states_left,
            "exhausted": self.exhausted,
            "per_action_generated": dict(self.per_action_generated),
            "per_action_distinct": dict(self.per_action_distinct),
            "wall_time_s": round(self.wall_time, 3),
            "generated_per_s": round(self.generated_per_second, 1),
            "distinct_per_s": round(self.distinct_per_second, 1),
            "peak_memory_kb": self.peak_memory_kb,
            "bytes_per_state": self.bytes_per_state,
            "memory": dict(self.memory) if self.memory is not None else None,
            "fingerprint_bits": self.fingerprint_bits,
            "collision_probability": self.collision_probability,
        }


def collision_probability(distinct: int, generated: int, bits: int = 64) -> float:
    """TLC's optimistic estimate that two distinct states shared a fingerprint:
    distinct * (generated - distinct) / 2^bits, as in tlaplus/tlaplus
    tlc2/tool/AbstractChecker.calculateOptimisticProbability (TLC prints it as
    "calculated (optimistic)")."""
    return distinct * ((generated - distinct) / float(2 ** bits))


def assemble(model, options, projection, *, violations: list, distinct: int, generated: int,
             per_level_distinct: list, per_action_generated: dict, per_action_distinct: dict,
             sometimes: dict, properties: list, states_left: int, exhausted: bool, wall_time: float,
             memory, engine: dict | None = None, depth: int | None = None,
             collision_generated: int | None = None) -> CheckResult:
    """The CheckResult of a finished search, whatever the engine: the
    violations ordered by depth, the actions in the model's order (then any
    other that was generated), the run's memory at its peak (memory: a
    checker.search.proc.TreeMemory, measured once more at the end)."""
    names = list(model.action_names)
    extra = [n for n in per_action_generated if n not in names]
    bits = options.fingerprint_bits
    return CheckResult(
        outcome="violation" if violations else "pass",
        distinct=distinct,
        generated=generated,
        per_level_distinct=list(per_level_distinct),
        per_action_generated={n: per_action_generated.get(n, 0) for n in names + extra},
        per_action_distinct={n: per_action_distinct.get(n, 0) for n in names + extra},
        depth=len(per_level_distinct) - 1 if depth is None else depth,
        violations=sorted(violations, key=lambda v: v.depth),
        sometimes=dict(sometimes),
        properties=list(properties),
        states_left=states_left,
        exhausted=exhausted,
        max_depth=options.max_depth,
        check_deadlock=options.check_deadlock,
        fingerprint_bits=bits,
        projection=list(projection) if projection is not None else None,
        wall_time=wall_time,
        peak_memory_kb=memory.final_peak() // 1024,
        collision_probability=collision_probability(
            distinct, generated if collision_generated is None else collision_generated, bits),
        memory=memory.summary(),
        engine=dict(engine) if engine is not None else None,
    )
