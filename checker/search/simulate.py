"""Simulation: random walks from the initial states (`kmc simulate`,
ARCHITECTURE.md "Simulation").

Breadth-first search proves small configurations safe; the interesting
failures of bigger ones sit 20-40 steps deep, past what BFS can exhaust. A
walk starts at an initial state and takes at most `depth` steps, each
chosen among the enabled successors, uniformly or by per-action weights;
every state on it is checked against the spec's invariants (the `sometimes`
witnesses are counted as coverage), and the first violated one ends it.

Reproducible by construction: walk w draws from its own generator, seeded
from (run seed, w), so it is the same walk whichever process runs it and
whatever ran before. Walks are grouped in batches of `batch_walks` (walk w in
batch w // batch_walks): the unit of work of both engines (the local loop
here, a Spark task in checker/search/spark/swarm.py) and, with swarm verification,
the unit that gets its own action weights (also drawn from the run seed).
`run_batch` is a pure function of the configuration and the batch number;
`Totals.absorb` merges batch results in batch order (distinct states
against one fingerprint set, the first violation by walk number), so with
--walks N both engines give the same figures and the same first violation.

The violating walk is walked again in the driver to get its states
(`walk_trace`), then shrunk (checker/search/shrink.py).
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import time
from array import array
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

from checker.search import native, stop
from checker.search.encoding import VariableEncoders
from checker.search.checks import Checks
from checker.search.engine import DEADLOCK, ExpandContext, _python_successor, _summary
from checker.search.errors import EngineEvaluationError, SpecError
from checker.search.limits import MemoryLimitError, format_size
from checker.search.proc import rss
from model.base import SOMETIMES, EvaluationError

DEFAULT_DEPTH = 100
DEFAULT_WALKS = 1000
BATCH_WALKS = 64          # walks per batch (a Spark task; swarm weights per batch)
NO_ACTION = 0xFFFF        # the action index of an initial state
# swarm verification: per batch, each action is kept with probability 1/2
# (else demoted to 1/16 of its weight, never off: a walk never stalls on a
# draw), and scaled by a factor drawn log-uniformly in [1/4, 4]
SWARM_KEEP = 0.5
SWARM_DEMOTE = 1 / 16
SWARM_SPREAD = 2.0
# weights are relative: a bound that keeps any sum of them (swarm factors too) finite
MAX_WEIGHT = 1e12
_EVERY = 4095             # a walk reads --time and --max-memory every 4,096 steps


@dataclass(frozen=True)
class SimConfig:
    """What a walker needs (picklable: shipped to Spark executors)."""

    model: str
    variant: str
    constants_json: str            # json.dumps(resolved constants, sort_keys=True)
    properties: tuple              # the selected property names (always and sometimes)
    projection: tuple | None = None   # the fingerprint projection's variables (None: all)
    bits: int = 64
    depth: int = DEFAULT_DEPTH
    check_deadlock: bool = False
    seed: int = 0
    weights: tuple = ()            # ((action name, weight), ...); () and not swarm: uniform
    swarm: bool = False
    batch_walks: int = BATCH_WALKS
    temporal: tuple = ()           # temporal property names (checker/search/liveness/walks.py)
    fairness: tuple = ()           # ((kind "WF" | "SF", action name), ...) for them

    @property
    def constants(self) -> dict:
        return json.loads(self.constants_json)


def derive(seed: int, *parts) -> int:
    """A 64-bit seed from the run's seed and a path (the same in every
    process and Python version: blake2b of its text)."""
    text = ":".join(str(p) for p in (seed, *parts)).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big")


def walk_rng(cfg: SimConfig, walk: int) -> random.Random:
    return random.Random(derive(cfg.seed, "walk", walk))


def batch_weights(cfg: SimConfig, action_names, batch: int) -> dict | None:
    """Action name -> weight for the walks of `batch`; None: uniform among
    the enabled successors."""
    if not cfg.weights and not cfg.swarm:
        return None
    weights = {name: 1.0 for name in action_names}
    weights.update(dict(cfg.weights))
    if cfg.swarm:
        rng = random.Random(derive(cfg.seed, "swarm", batch))
        for name in action_names:
            keep = rng.random() < SWARM_KEEP
            factor = SWARM_SPREAD ** rng.uniform(-SWARM_SPREAD, SWARM_SPREAD)
            weights[name] *= factor if keep else factor * SWARM_DEMOTE
    return weights


class _NeverSeen:
    """A set that holds nothing: the compiled successor() then always
    returns the successor's parts and fingerprint."""

    __slots__ = ()

    def __contains__(self, _item) -> bool:
        return False

    def add(self, _item) -> None:
        pass


_NEVER = _NeverSeen()


def _add_new(seen, fp) -> bool:
    """Add fp to seen; True if it was not there."""
    if type(seen) is set:
        if fp in seen:
            return False
        seen.add(fp)
        return True
    return seen.add_new(fp)


class Walker:
    """The model, properties and encoders of one configuration, in one
    process (kept across batches)."""

    def __init__(self, cfg: SimConfig):
        from checker.search.registry import build, select_properties
        self.cfg = cfg
        self.model, props = build(cfg.model, cfg.variant, cfg.constants)
        props = select_properties(props, list(cfg.properties))
        self.checks = Checks(self.model, props)
        self.always = self.checks.always
        self.sometimes = self.checks.pending(p for p in props if p.kind == SOMETIMES)
        self.ctx = ExpandContext.create(self.model, [], cfg.bits, cfg.projection)
        self.ctx.encoders = VariableEncoders(len(self.model.variables))
        self.inits = [self.ctx.entry(s) for s in self.model.init_states()]
        self.action_names = tuple(self.model.action_names)
        self.live = None
        self.lasso = None          # the last walk's lasso (plain data), when it closed one
        self.cycles = None         # the last walk's WalkCycles (liveness only)
        self.deadline = None       # time.time() at which a walk ends where it is (--time)
        self.max_memory = None     # bytes this process may hold before a walk ends (--max-memory)
        self.cut = None            # why the last walk ended early: "time", "memory" (None: it did not)
        if cfg.temporal:
            from checker.search.liveness.walks import WalkLiveness
            from checker.search.registry import temporal_properties_for
            temporal = {p.name: p for p in temporal_properties_for(self.model)}
            self.live = WalkLiveness(self.model, [temporal[n] for n in cfg.temporal], list(cfg.fairness))

    def encode(self, parent, pparts, succ):
        """(parts, fingerprint, changed-variables mask) of a successor."""
        ctx = self.ctx
        if native.ENABLED:
            try:
                return native._native.successor(parent, pparts, succ, ctx.select_indices,
                                                ctx.fingerprint, _NEVER)
            except TypeError:  # a value the compiled encoder refuses
                pass
        return _python_successor(ctx.encoders, parent, pparts, succ, ctx.select, ctx.fingerprint, _NEVER)

    def walk(self, rng: random.Random, weights: dict | None, out: "_BatchOut | None" = None,
             record: list | None = None) -> tuple[str | None, int]:
        """One walk; (the property it violated or None, its steps). Counts
        go to `out`; `record` (a list) gets [(None, init), (action, state), ...]."""
        successors = self.model.successors
        depth = self.cfg.depth
        check_deadlock = self.cfg.check_deadlock
        inits = self.inits
        state, parts, fp = inits[rng.randrange(len(inits))] if len(inits) > 1 else inits[0]
        if record is not None:
            record.append((None, state))
        if out is not None:
            out.visit(fp, 0, None)
        pending = list(self.sometimes)
        violated = self.checks.violated
        self.lasso = None
        self.cut = None
        cycles = self.cycles = self.live.walk() if self.live is not None else None
        try:
            bad = violated(state)
            if bad:
                return bad[0], 0
            pending = self._witness(pending, state, -1, 0, out)
            if cycles is not None:
                cycles.arrive(state, fp)
        except EvaluationError as e:
            raise _WalkError(e, None, state) from None
        d = 0
        action = None
        while d < depth:
            try:
                succs = successors(state)
                if type(succs) is not list:
                    succs = list(succs)
                if cycles is not None and cycles.expanded(succs):
                    return self._lassoed(cycles, d)
            except EvaluationError as e:
                raise _WalkError(e, None, state) from None
            n = len(succs)
            if out is not None:
                out.generated_names.extend([a[0] for a, _ in succs])
            if d & _EVERY == _EVERY:   # a long walk: the limits are read inside it too
                if out is not None:
                    out.fold()
                if self._over_limit():
                    return None, d
            if n == 0:
                if check_deadlock:
                    return DEADLOCK, d
                if out is not None:
                    out.deadlocks += 1
                return None, d
            if weights is None:
                i = rng.randrange(n)
            else:
                ws = [weights.get(a[0], 1.0) for a, _ in succs]
                total = sum(ws)
                if total <= 0:  # every enabled action weighs 0: the walk ends
                    if out is not None:
                        out.stuck += 1
                    return None, d
                x = rng.random() * total
                i = 0
                acc = ws[0]
                while acc <= x and i < n - 1:
                    i += 1
                    acc += ws[i]
                while not ws[i]:   # rounding ran past the last weighed action: that one
                    i -= 1
            action, succ = succs[i]
            parts, fp, changed = self.encode(state, parts, succ)
            d += 1
            state = succ
            if record is not None:
                record.append((action, state))
            if out is not None:
                out.visit(fp, d, action[0])
            try:
                bad = violated(state, changed)
                if bad:
                    return bad[0], d
                if pending:
                    pending = self._witness(pending, state, changed, d, out)
                if cycles is not None:
                    cycles.arrive(state, fp)
                    if cycles.closed(fp):
                        return self._lassoed(cycles, d)
            except EvaluationError as e:
                raise _WalkError(e, action, state) from None
        return None, d

    def _over_limit(self) -> bool:
        """--time passed or this process over --max-memory: the walk ends here (self.cut says why)."""
        if self.deadline is not None and time.time() >= self.deadline:
            self.cut = "time"
        elif self.max_memory is not None and (rss(os.getpid()) or 0) > self.max_memory:
            self.cut = "memory"
        return self.cut is not None

    def _lassoed(self, cycles, d: int) -> tuple[str, int]:
        self.lasso = cycles.lasso()
        return self.lasso["property"], d

    def _witness(self, pending: list, state, changed: int, d: int, out) -> list:
        hit = self.checks.witnessed(state, changed, pending, take=False)
        if not hit:
            return pending
        if out is not None:
            for name in hit:
                out.witness(name, d)
        return [x for x in pending if x[0] not in hit]


class _WalkError(Exception):
    def __init__(self, error: EvaluationError, action, state):
        failed_action = error.action if error.action is not None else action
        failed_state = error.state if error.state is not None else state
        where = f"in action {failed_action}" if failed_action is not None else "while enumerating successors"
        super().__init__(" ".join(f"evaluation error {where}: {error}; state: {_summary(failed_state)}".split()))


_walkers: dict[SimConfig, Walker] = {}


def walker(cfg: SimConfig) -> Walker:
    """The Walker of cfg in this process (a Spark worker keeps it across tasks)."""
    key = cfg
    w = _walkers.get(key)
    if w is None:
        if len(_walkers) > 8:
            _walkers.clear()
        w = _walkers[key] = Walker(cfg)
    return w


class _BatchOut:
    """What a batch's walks counted (turned into plain data by result())."""

    def __init__(self, bits: int):
        self.seen = set() if bits != 64 or not native.ENABLED else native._native.FingerprintSet()
        self.bits = bits
        self.fps: list | array = array("Q") if bits == 64 else []
        self.depths = array("H")
        self.actions = array("H")
        self.action_ids: dict[str | None, int] = {None: NO_ACTION}
        self.action_list: list[str] = []
        self.generated_names: list[str] = []
        self.generated: Counter = Counter()   # generated_names folded in (a long walk's memory)
        self.taken: Counter = Counter()
        self.lengths: Counter = Counter()
        self.witnesses: dict[str, list] = {}
        self.deadlocks = 0
        self.stuck = 0

    def visit(self, fp: int, d: int, action: str | None) -> None:
        if action is not None:
            self.taken[action] += 1
        if _add_new(self.seen, fp):
            aid = self.action_ids.get(action)
            if aid is None:
                aid = self.action_ids[action] = len(self.action_list)
                self.action_list.append(action)
            self.fps.append(fp)
            self.depths.append(min(d, 0xFFFE))
            self.actions.append(aid)

    def fold(self) -> None:
        self.generated.update(self.generated_names)
        self.generated_names.clear()

    def witness(self, name: str, d: int) -> None:
        w = self.witnesses.setdefault(name, [d, 0])
        w[0] = min(w[0], d)
        w[1] += 1


def run_batch(cfg: SimConfig, batch: int, walks: int, deadline: float | None = None,
              max_memory: int | None = None) -> dict:
    """Walks batch * cfg.batch_walks ... + walks - 1 (fewer when the wall
    clock passes `deadline`, time.time(), checked between walks and every
    4,096 steps of a walk, which then ends there; the first violating walk
    ends the batch, and so does this process holding more than `max_memory`
    bytes, its `memory` then set). Plain data (it crosses processes)."""
    w = walker(cfg)
    w.deadline, w.max_memory = deadline, max_memory
    memory = None
    weights = batch_weights(cfg, w.action_names, batch)
    out = _BatchOut(cfg.bits)
    first = batch * cfg.batch_walks
    done = steps = closed = cut = 0
    violation = error = None
    started = time.time()
    for k in range(first, first + walks):
        stop.raise_pending()   # a ^C or SIGTERM whose exception was dropped
        if deadline is not None and done and time.time() >= deadline:
            break
        try:
            violated, n = w.walk(walk_rng(cfg, k), weights, out)
        except _WalkError as e:
            error = {"walk": k, "message": str(e)}
            break
        done += 1
        steps += n
        out.lengths[n] += 1
        if w.cut is None and max_memory is not None and (rss(os.getpid()) or 0) > max_memory:
            w.cut = "memory"
        if w.cut == "memory":
            memory = {"walk": k, "steps": n, "held": rss(os.getpid()) or 0, "limit": max_memory}
            break
        if w.cut == "time":
            cut += 1
            break
        if w.cycles is not None and w.cycles.closings:
            closed += 1
        if violated is not None:
            violation = {"walk": k, "property": violated, "depth": n, "at": time.time()}
            if w.lasso is not None:
                violation.update(kind="lasso", instance=w.lasso["instance"], loop=w.lasso["loop"])
            break
    fps = out.fps
    out.fold()
    return {
        "batch": batch, "first_walk": first, "walks": done, "steps": steps,
        "generated": sum(out.generated.values()),
        "per_action_generated": dict(out.generated), "memory": memory, "cut": cut,
        "per_action_taken": dict(out.taken),
        "lengths": dict(out.lengths),
        "fps": fps.tobytes() if isinstance(fps, array) else fps,
        "depths": out.depths.tobytes(), "actions": out.actions.tobytes(),
        "action_list": out.action_list,
        "witnesses": out.witnesses, "deadlocks": out.deadlocks, "stuck": out.stuck,
        "closed": closed, "violation": violation, "error": error,
        "seconds": time.time() - started,
    }


def walk_trace(cfg: SimConfig, walk: int) -> list:
    """Walk `walk` again, recording it: [(None, init), (action, state), ...]."""
    w = walker(cfg)
    weights = batch_weights(cfg, w.action_names, walk // cfg.batch_walks)
    trace: list = []
    try:
        w.walk(walk_rng(cfg, walk), weights, None, trace)
    except _WalkError as e:
        raise EngineEvaluationError(str(e)) from None
    return trace


# ---- merging batches (either engine) ---------------------------------------------

@dataclass
class Totals:
    """The run's figures, batch results absorbed in batch order."""

    cfg: SimConfig
    action_names: tuple
    started: float = field(default_factory=time.time)
    walks: int = 0
    steps: int = 0
    generated: int = 0
    batches: int = 0
    per_action_generated: Counter = field(default_factory=Counter)
    per_action_taken: Counter = field(default_factory=Counter)
    per_action_distinct: Counter = field(default_factory=Counter)
    per_depth_distinct: list = field(default_factory=list)
    lengths: Counter = field(default_factory=Counter)     # steps per walk -> walks
    witnesses: dict = field(default_factory=dict)          # name -> [min depth, walks]
    deadlocks: int = 0
    stuck: int = 0
    closed: int = 0                                        # walks that closed a cycle (liveness)
    cut: int = 0                                           # walks --time ended before their end
    violation: dict | None = None                          # {walk, property, depth, at}
    where: Counter = field(default_factory=Counter)        # batches per place ("local", "driver", "spark")
    seen: Any = None

    def __post_init__(self):
        from checker.search.fpset import new_seen_set
        if self.seen is None:
            self.seen = new_seen_set(self.cfg.bits)

    @property
    def distinct(self) -> int:
        return len(self.seen)

    def absorb(self, r: dict, where: str = "local") -> None:
        """Merge one batch's result (raises its evaluation error)."""
        if r.get("error"):
            raise EngineEvaluationError(f"walk {r['error']['walk']}: {r['error']['message']}")
        if r.get("memory"):
            m = r["memory"]
            raise MemoryLimitError(f"memory limit {format_size(m['limit'])} reached in walk "
                                   f"{m['walk']} after {m['steps']:,} steps (its process holds "
                                   f"{format_size(m['held'])}); walk less deep (--depth), or give "
                                   f"--max-memory more room")
        self.batches += 1
        self.where[where] += 1
        self.walks += r["walks"]
        self.steps += r["steps"]
        self.generated += r["generated"]
        self.per_action_generated.update(r["per_action_generated"])
        self.per_action_taken.update(r["per_action_taken"])
        self.lengths.update({int(k): v for k, v in r["lengths"].items()})
        self.deadlocks += r["deadlocks"]
        self.stuck += r["stuck"]
        self.closed += r.get("closed", 0)
        self.cut += r.get("cut", 0)
        for name, (d, n) in r["witnesses"].items():
            w = self.witnesses.setdefault(name, [d, 0])
            w[0] = min(w[0], d)
            w[1] += n
        if isinstance(r["fps"], (bytes, bytearray)):
            fps = array("Q")
            fps.frombytes(r["fps"])
        else:
            fps = r["fps"]
        depths, actions = array("H"), array("H")
        depths.frombytes(r["depths"])
        actions.frombytes(r["actions"])
        names = r["action_list"]
        seen, per_depth, per_action = self.seen, self.per_depth_distinct, self.per_action_distinct
        for fp, d, a in zip(fps, depths, actions):
            if _add_new(seen, fp):
                while len(per_depth) <= d:
                    per_depth.append(0)
                per_depth[d] += 1
                if a != NO_ACTION:
                    per_action[names[a]] += 1
        if r["violation"] is not None and self.violation is None:
            self.violation = dict(r["violation"])

    def progress(self) -> dict:
        elapsed = time.time() - self.started
        return {"walks": self.walks, "steps": self.steps, "distinct": self.distinct,
                "depth": max(self.lengths, default=0), "elapsed_s": elapsed,
                "actions_taken": sum(1 for n in self.action_names if self.per_action_taken.get(n)),
                "actions": len(self.action_names),
                "depths_reached": len(self.per_depth_distinct),
                "steps_per_s": self.steps / elapsed if elapsed > 0 else 0.0,
                "walks_per_s": self.walks / elapsed if elapsed > 0 else 0.0,
                "where": dict(self.where)}


@dataclass
class Limits:
    """When to stop: after `walks` walks, at `deadline` (time.time()), at
    the first violation."""

    walks: int | None = None
    deadline: float | None = None
    max_memory: int | None = None   # bytes a walking process may hold (--max-memory)

    def next_batch(self, cfg: SimConfig, batch: int) -> int:
        """Walks of batch `batch` to run (0: none, the run is over)."""
        if self.deadline is not None and time.time() >= self.deadline:
            return 0
        if self.walks is None:
            return cfg.batch_walks
        return max(0, min(cfg.batch_walks, self.walks - batch * cfg.batch_walks))


def simulate_local(cfg: SimConfig, limits: Limits, progress: Callable[[dict], None] | None = None,
                   progress_interval: float = 5.0, totals: Totals | None = None,
                   first_batch: int = 0, where: str = "local",
                   stop: Callable[[], bool] | None = None) -> tuple[Totals, int]:
    """Run batches in this process from `first_batch` until the limits, the
    first violation or stop() (checked between batches); (totals, the next
    batch number)."""
    w = walker(cfg)
    totals = totals or Totals(cfg, w.action_names)
    last = time.time()
    b = first_batch
    from checker.search.engine import GcPacer
    import gc
    enabled = gc.isenabled()
    pacer = GcPacer() if enabled else None
    gc.disable()
    try:
        while totals.violation is None and not (stop is not None and stop()):
            n = limits.next_batch(cfg, b)
            if n == 0:
                break
            totals.absorb(run_batch(cfg, b, n, limits.deadline, limits.max_memory), where)
            b += 1
            if pacer is not None:
                pacer.collect()
            if progress is not None and time.time() - last >= progress_interval:
                last = time.time()
                progress(totals.progress())
    finally:
        if enabled:
            if pacer is not None and pacer.froze:
                gc.unfreeze()
            gc.enable()
    return totals, b


def check_weights(weights: dict, action_names, where: str) -> tuple:
    """Validated per-action weights as SimConfig.weights: known action names,
    numbers >= 0, not all 0. SpecError (exit 2) otherwise."""
    if not isinstance(weights, dict):
        raise SpecError(f"{where} must be a table of action names and weights, not {weights!r}")
    known = list(action_names)
    unknown = [n for n in weights if n not in known]
    if unknown:
        raise SpecError(f"{where}: unknown action(s) {', '.join(map(repr, unknown))} "
                        f"(the model's actions: {', '.join(known)})")
    for name, w in weights.items():
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not 0 <= w <= MAX_WEIGHT:
            raise SpecError(f"{where}: the weight of {name} must be a number >= 0 and at most "
                            f"{MAX_WEIGHT:g} (weights are relative), not {w!r}")
    if weights and all(weights.get(n, 1.0) == 0 for n in known):
        raise SpecError(f"{where}: every action weighs 0: no walk could take a step")
    return tuple(sorted((n, float(w)) for n, w in weights.items()))
