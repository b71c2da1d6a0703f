"""The search core (docs/ARCHITECTURE.md, "The search core and its engines").

Every engine is the same level-synchronous BFS: the initial states
(checker.search.expand.initial_states), then level after level until the
frontier is empty, a violation stops the search or the depth bound is
reached (`run_levels`, the one level loop), then one CheckResult
(checker.search.result.assemble). What an engine brings is a `LevelEngine`:
how a level's frontier is expanded and where the seen set lives.

- `Search` (here): the seen set and the level logs in this process, a
  frontier in memory or spilled to disk; how a level is expanded is its
  `Expander`: the local engine expands chunk after chunk itself
  (checker/search/engine.py), the auto engine hands levels to forked
  workers once they are big enough (checker/search/parallel.py);
- `SparkSearch` (checker/search/spark/engine.py): the seen set and every
  level on disk, by fingerprint partition; a level is a Spark job.

A fourth engine implements LevelEngine (or, keeping its seen set in this
process, an Expander) and gets the loop, the checks, the limits and the
result as they are.
"""
from __future__ import annotations

import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol, Sequence

from checker.search import stop
from checker.search.checkpoint import Checkpoint, RunStopped
from checker.search.codec import StateDecoder
from checker.search.errors import SpecError
from checker.search.expand import (ChunkResult, ExpandContext, _summary, initial_states, replay,
                                   resolve_projection)
from checker.search.fpset import new_seen_set
from checker.search.frontier import Frontier, SpillDir
from checker.search.levellog import NO_ACTION, LevelLog
from checker.search.limits import Limits
from checker.search.pacing import level_gc
from checker.search.proc import TreeMemory
from checker.search.result import DEADLOCK, CheckResult, Violation, assemble
from model.base import Action, EvaluationError, Model, Property
from checker.search.errors import EngineEvaluationError, KmcError

CHUNK_STATES = 2048            # frontier states per expand_chunk call (progress, early stop)
# A frontier (or a level's parent pointers) of more states than this is packed
# and spilled to disk (checker/search/frontier.py); smaller ones stay Python objects,
# which is faster (a packed level costs ~10% more CPU: its states are rebuilt).
# As objects, a level costs ~1.3 KB a state (kip966 reference): the levels
# kept so cost at most ~2 x 65 MB (the one expanded and the one generated),
# a fixed cost that is under 100 bytes a state on runs above 1.3M states;
# levels of complete spaces of a few 100k states (widest 20-25k) stay objects.
SPILL_STATES = 50_000
# The caches of the decoder that rebuilds packed states (values per variable,
# hash-consed sub-values), smaller than the spark workers' (checker.search.codec):
# a bounded cost, not one that grows with the run (at depth 12 of the kip966
# reference they hold ~9,000 values in all).
DECODER_LIMIT = 1 << 14
DECODER_SHARED_LIMIT = 1 << 16


@dataclass
class CheckOptions:
    """How to check. max_depth: at most this many steps from an initial state
    (None: no bound). projection: the fingerprint projection, a name of the
    model's projections or variable names (None: all variables make up the
    fingerprint). progress: called with a dict of counters at most every
    progress_interval seconds (never on a run shorter than that)."""

    max_depth: int | None = None
    check_deadlock: bool = False
    stop_on_violation: bool = True
    fingerprint_bits: int = 64
    projection: str | Sequence[str] | None = None
    progress: Callable[[dict], None] | None = None
    progress_interval: float = 10.0
    # stop (MemoryLimitError) when the run's processes hold more than this
    # many bytes (None: no limit; checker/search/proc.py says how they are
    # counted); checked between chunks
    max_memory: int | None = None
    # stop (DiskLimitError) before the filesystem the run writes its levels
    # and spilled frontiers to has less than this many bytes free (None: no
    # limit); checked only while the run has files there
    min_free_disk: int | None = None
    # frontiers above this many states are packed and spilled (None: never),
    # into a temporary folder under spill_dir (None: the system's)
    spill_states: int | None = SPILL_STATES
    spill_dir: str | None = None
    # keep every finished level in this folder (checker/search/checkpoint.py),
    # and resume from the newest one there; checkpoint_identity: what a
    # resume must match (the spec's model, variant, constants)
    checkpoint_dir: str | None = None
    checkpoint_identity: dict = field(default_factory=dict)
    # the command line that started the run (kmc check's options): kept
    # with its levels, so that `kmc check --resume RUN_DIR` needs nothing else
    run_options: dict | None = None
    # save nothing before the first finished level of at least this many
    # states (the levels before it are written then): a default run keeps
    # its levels only once losing them would cost more than a rerun
    checkpoint_from: int = 0
    resume: bool = False
    stop_after_level: int | None = None  # after checkpointing it, stop (RunStopped; tests)


def check_options(options: CheckOptions) -> None:
    """SpecError for options no engine can run."""
    if options.fingerprint_bits not in (64, 128):
        raise SpecError(f"fingerprint bits must be 64 or 128, not {options.fingerprint_bits}")
    if options.max_depth is not None and options.max_depth < 0:
        raise SpecError(f"depth must be >= 0, not {options.max_depth}")


# ---- the level loop -----------------------------------------------------------------

class LevelEngine(Protocol):
    """What `run_levels` asks of an engine. Level L is complete when every
    state of it is known, checked and kept (in memory or on disk)."""

    options: CheckOptions
    stopped: bool   # a violation stopped the search (stop_on_violation), or nothing is left

    def start(self) -> int:
        """The initial states found, checked and kept as level 0 (or a
        resumed run's newest complete level); that level."""

    def frontier_size(self, level: int) -> int:
        """The states of complete level `level`."""

    def expand(self, level: int) -> None:
        """Level `level` into level + 1: every successor generated, the new
        ones (not in the seen set) checked and recorded; sets `stopped` when
        the search stops inside it."""

    def level_done(self, level: int) -> None:
        """Level `level` is complete: keep it (a checkpoint, a commit), then
        the limits between levels (raises to stop)."""

    def at_bound(self, level: int) -> None:
        """`level` is the depth bound: never expanded, its deadlocks still looked for."""

    def finish(self, level: int) -> CheckResult:
        """The search is over at `level`: its one CheckResult."""


def run_levels(engine: LevelEngine) -> CheckResult:
    """The level loop of every engine."""
    level = engine.start()
    max_depth = engine.options.max_depth
    while not engine.stopped and engine.frontier_size(level):
        if max_depth is not None and level >= max_depth:
            engine.at_bound(level)
            break
        engine.expand(level)
        if engine.stopped:
            break
        level += 1
        engine.level_done(level)
    return engine.finish(level)


# ---- the engines whose seen set is in this process ------------------------------------

class Expander(Protocol):
    """How a level's frontier is expanded by an engine that keeps its seen
    set and level logs in this process (Search)."""

    def expand(self, search: "Search", level: int, frontier, log: LevelLog, keep: bool):
        """Expand `frontier` (level `level`), each chunk's results recorded
        in BFS order with search.absorb(level + 1, log, ...); returns the
        next level's frontier (keep=False: only counted, the depth bound's)."""


class Search:
    """One run of an engine whose seen set (checker/search/fpset.py) and level
    logs live in this process: the local and the auto engine. It implements
    LevelEngine; its Expander expands the levels."""

    def __init__(self, model: Model, properties: Iterable[Property], options: CheckOptions,
                 expander: Expander):
        self.model = model
        self.properties = list(properties)
        self.options = options
        check_options(options)
        self.expander = expander
        self.projection = resolve_projection(model, options.projection)
        self.ctx = ExpandContext.create(model, self.properties, options.fingerprint_bits, self.projection,
                                        options.check_deadlock, options.stop_on_violation)
        self.seen = new_seen_set(options.fingerprint_bits)
        self.checkpoint = None
        spill_dir = options.spill_dir
        if options.checkpoint_dir is not None:
            self.checkpoint = Checkpoint(options.checkpoint_dir, self._identity(), options.run_options)
            Path(options.checkpoint_dir).mkdir(parents=True, exist_ok=True)
            spill_dir = options.checkpoint_dir  # spilled files are moved into it: one filesystem
        self.spill = SpillDir(spill_dir)
        self.decoder = None   # a StateDecoder, made when a frontier is first packed
        self.levels: list[LevelLog] = []
        self.actions: list[Action] = []           # action id -> Action
        self.action_ids: dict[Action, int] = {}
        self.generated = 0
        self.per_action_generated: Counter = Counter()
        self.per_action_distinct: Counter = Counter()
        self.per_level_distinct: list[int] = []
        self.first_violation: dict[str, tuple[int, int]] = {}   # name -> (level, fp)
        self.sometimes: dict[str, int | None] = {p.name: None for p in self.ctx.sometimes}
        self.stopped = False
        self.expanding = None      # the level being expanded (an evaluation error's trace)
        self.snap = None           # the newest finished level's counters, while none is kept
        self.frontier = None       # the newest complete level's states
        self.previous = None       # the level expanded last (closed once the next is kept)
        self.widest = 0            # the widest level so far (its end is measured)
        self.measured_end: int | None = None   # the last level whose end its expander measured
        self.start_time = time.perf_counter()
        self.last_progress = self.start_time
        self.collect: Callable[[], Any] = lambda: None   # level_gc's, while the search runs
        # every process of the run (this one and the auto engine's workers): --max-memory, the peak
        self.memory = TreeMemory(options.max_memory)
        self.limits = Limits(options, self.memory, self._memory_advice, self._disk_advice)

    # -- the run --

    def run(self) -> CheckResult:
        """Removes its spill folder at the end, whatever the end (an error, ^C)."""
        try:
            with level_gc() as collect:
                self.collect = collect
                return run_levels(self)
        except KeyboardInterrupt:
            stop.handled()
            self._keep_on_stop()
            raise
        except EngineEvaluationError as e:
            self._attach(e)
            raise
        finally:
            close = getattr(self.expander, "close", None)
            if close is not None:   # (the auto engine's workers)
                close()
            # (a frontier's file may be the newest checkpoint's: a stopped run
            # keeps it; finish() closes the frontiers of a run that ended)
            self.spill.close()
            if self.checkpoint is not None:   # the run folder's lock (checkpoint.py)
                self.checkpoint.release()

    # -- LevelEngine --

    def start(self) -> int:
        if self.options.resume:
            self.frontier, level = self._resumed()
            return level
        self.frontier = self._initial()
        if self.frontier.keep:
            self._keep(0)
        self._snapshot(0)
        return 0

    def frontier_size(self, level: int) -> int:
        return len(self.frontier)

    def expand(self, level: int) -> None:
        max_depth = self.options.max_depth
        log = self._log()
        self.levels.append(log)
        self.per_level_distinct.append(0)
        # the level at the depth bound is only counted (unless deadlocks are
        # checked there): it is never expanded
        keep = max_depth is None or level + 1 < max_depth or self.options.check_deadlock
        self.expanding = level
        nxt = self.expander.expand(self, level, self.frontier, log, keep)
        # a level's end holds both frontiers, the most it takes: measured at the
        # widest level yet, else when due (a measurement costs ~25 ms per GiB
        # of the tree's CPU, a level of a narrow space far less); unless the
        # expander measured it there (the auto engine's workers, in parallel)
        if self.measured_end == level:
            self.widest = max(self.widest, len(nxt))
        elif len(nxt) >= self.widest:
            self.widest = len(nxt)
            self.memory.measure()
        else:
            self.memory.poll()
        self.previous, self.frontier = self.frontier, nxt

    def level_done(self, level: int) -> None:
        if self.frontier.keep and self.frontier:
            self._keep(level)
        self._snapshot(level)
        if self.previous is not None:
            # (a spilled frontier's file is the newest checkpoint's until the next is kept)
            self.previous.close()
            self.previous = None

    def at_bound(self, level: int) -> None:
        """With a depth bound the last level is not expanded; a deadlock there
        still shows as a state without any successor."""
        if not self.options.check_deadlock:
            return
        self.expanding = level
        for chunk in self._state_chunks(self.frontier):
            self._deadlocks_among(level, ((state, fp) for state, _, fp in chunk))
            if self.stopped:
                return
            self.limits.between_chunks(level, len(self.seen), self._disk_folder())

    def finish(self, level: int) -> CheckResult:
        if not self.per_level_distinct[-1] and len(self.per_level_distinct) > 1:
            # the last level expanded found nothing new: it is not a level
            self.per_level_distinct.pop()
            self.levels.pop()
        frontier = self.frontier
        left = len(frontier) if (self.stopped or frontier) else 0
        exhausted = not frontier and not self.stopped
        for f in (self.previous, frontier):
            if f is not None:
                f.close()
        return self._result(exhausted=exhausted, states_left=left)

    # -- what an Expander calls --

    def absorb(self, level: int, log: LevelLog, res: ChunkResult, chunk: Sequence[tuple],
               next_frontier) -> None:
        """Record a chunk's results at `level` (the new states' level), in BFS order."""
        self.generated += len(res.action_names)
        self.per_action_generated.update(res.action_names)
        new = res.new
        aid = self._action_id
        log.add([e[2] for e in new], [e[3] for e in new], [aid(e[4]) for e in new])
        self.per_action_distinct.update(e[4][0] for e in new)
        self.per_level_distinct[level] += len(new)
        next_frontier.extend((e[0], e[1], e[2]) for e in new)
        for name, index in res.witnesses:
            if self.sometimes.get(name, 0) is None:
                self.sometimes[name] = level
        self.ctx.sometimes = [p for p in self.ctx.sometimes if self.sometimes[p.name] is None]
        for name, index in res.violations:
            self._violation(name, level, new[index][2])
        for ci in res.deadlocks:
            self._violation(DEADLOCK, level - 1, chunk[ci][2])

    def worker_extras(self, res: ChunkResult, chunk: Sequence[tuple]) -> tuple:
        """In a worker of the auto engine, after expanding `chunk`: a value to
        send with each new state (appended to its entry) or None, and one for
        the chunk (ChunkResult.record) or None. The graph-recording search's
        (checker/search/liveness/graph.py) are its atoms' values and edges."""
        return None, None

    def between_chunks(self, level: int, left: int) -> None:
        """A stop signal, --max-memory and --min-free-disk, then progress;
        `left`: the states of the level not expanded yet plus the next one's."""
        self.limits.between_chunks(level, len(self.seen), self._disk_folder())
        self._maybe_progress(level, left)

    def new_frontier(self, keep: bool = True) -> Frontier:
        threshold = self.options.spill_states
        if threshold is not None and self.decoder is None:
            self.decoder = self.new_decoder()
        return Frontier(CHUNK_STATES, threshold, self.spill, self.decoder,
                        self.options.fingerprint_bits, keep)

    def new_decoder(self) -> StateDecoder:
        decoder = StateDecoder(self.model)
        decoder.LIMIT = DECODER_LIMIT
        decoder.SHARED_LIMIT = DECODER_SHARED_LIMIT
        return decoder

    # -- bookkeeping --

    def _identity(self) -> dict:
        o = self.options
        return {**o.checkpoint_identity, "properties": [p.name for p in self.properties],
                "max_depth": o.max_depth, "check_deadlock": o.check_deadlock,
                "stop_on_violation": o.stop_on_violation, "fingerprint_bits": o.fingerprint_bits,
                "projection": list(self.projection) if self.projection is not None else None}

    def _initial(self) -> Frontier:
        log = self._log()
        self.levels.append(log)
        self.per_level_distinct.append(0)
        frontier = self.new_frontier(keep=self.options.max_depth != 0 or self.options.check_deadlock)
        new = []
        counts = {"generated": 0}
        for entry, violated, witnessed in initial_states(self.ctx, counts):
            self.seen.add(entry[2])
            new.append(entry)
            for name in violated:
                self._violation(name, 0, entry[2])
            for name in witnessed:
                self.sometimes[name] = 0
        self.generated += counts["generated"]
        log.add([e[2] for e in new], [0] * len(new), [NO_ACTION] * len(new))
        self.per_level_distinct[0] = len(new)
        self.ctx.sometimes = [p for p in self.ctx.sometimes if self.sometimes[p.name] is None]
        frontier.extend(new)
        return frontier

    def _resumed(self) -> tuple[Frontier, int]:
        """The newest finished level's frontier and number, every counter
        and the seen set as they were then (checker/search/checkpoint.py).
        The folder is this run's from here (load() locks it, or refuses a
        folder another run holds), so a spill folder in it is a dead run's."""
        bits = self.options.fingerprint_bits
        obj, c = self.checkpoint.load(LevelLog(bits)._names())
        folder = self.checkpoint.folder
        for stale in folder.glob("kmc-search-*"):  # the spill folder of a run that was killed
            shutil.rmtree(stale, ignore_errors=True)
        self.levels = [LevelLog.from_files(bits, {k: folder / v for k, v in files.items()}, n)
                       for files, n in zip(obj["logs"], c["per_level_distinct"])]
        for log in self.levels:
            for fp in log.fingerprints():
                self.seen.add(fp)
        self.generated = c["generated"]
        self.per_action_generated = Counter(c["per_action_generated"])
        self.per_action_distinct = Counter(c["per_action_distinct"])
        self.per_level_distinct = list(c["per_level_distinct"])
        self.first_violation = dict(c["first_violation"])
        self.sometimes = dict(c["sometimes"])
        self.actions = list(c["actions"])
        self.action_ids = {a: i for i, a in enumerate(self.actions)}
        self.ctx.sometimes = [p for p in self.ctx.sometimes if self.sometimes[p.name] is None]
        self.start_time = time.perf_counter() - c["elapsed_s"]
        if self.decoder is None:
            self.decoder = self.new_decoder()
        f = obj["frontier"]
        frontier = Frontier.from_file(folder / f["file"], f["records"], f["states"], CHUNK_STATES,
                                      self.decoder, bits)
        return frontier, obj["level"]

    def _keep(self, level: int) -> None:
        """Level `level` is finished and self.frontier holds it: saved with
        --checkpoint (or once big enough), then the disk's room for the next."""
        frontier = self.frontier
        if self.stopped or not self.keeps(len(frontier)):
            return
        written = self.checkpoint.save(self, level, frontier)
        if self.options.max_depth is None or level + 1 < self.options.max_depth:  # (the bound's is not saved)
            self.limits.disk_growth(self.checkpoint.folder, level, len(self.seen), written,
                                    self.per_level_distinct)
        if self.options.stop_after_level is not None and level >= self.options.stop_after_level:
            raise RunStopped(f"stopped after level {level} as asked; every finished level is in "
                             f"{self.checkpoint.folder}: resume it")

    def keeps(self, n: int) -> bool:
        """Whether a finished level of n states is saved (a checkpoint)."""
        return self.checkpoint is not None and (self.checkpoint.sealed or n >= self.options.checkpoint_from)

    def _snapshot(self, level: int) -> None:
        """While no level is kept on disk yet (below checkpoint_from states,
        all in memory): the counters of finished level `level`, so that a
        stop (^C, SIGTERM) can keep it (_keep_on_stop)."""
        if (self.checkpoint is None or self.checkpoint.sealed or type(self.frontier) is not Frontier
                or self.frontier.path is not None):   # (the pool's packed levels are not kept so)
            self.snap = None
            return
        self.snap = (level, self.frontier, self.generated, Counter(self.per_action_generated),
                     Counter(self.per_action_distinct), list(self.per_level_distinct),
                     dict(self.first_violation), dict(self.sometimes), len(self.actions))

    def _keep_on_stop(self) -> bool:
        """A run stopped before its first kept level keeps its newest finished
        one now (the counters as they were at its end), so that it can be
        resumed; False when there is none to keep, or it cannot be written."""
        snap, self.snap = self.snap, None
        if snap is None or self.checkpoint is None or self.checkpoint.sealed:
            return False
        level, frontier = snap[0], snap[1]
        if len(self.levels) <= level:
            return False
        (self.generated, self.per_action_generated, self.per_action_distinct,
         self.per_level_distinct, self.first_violation, self.sometimes) = snap[2:8]
        self.levels, self.actions = self.levels[:level + 1], self.actions[:snap[8]]
        try:
            self.checkpoint.save(self, level, frontier)
        except (OSError, KmcError):   # (a full disk, a folder in use): nothing kept, as before
            return False
        return True

    def _action_id(self, action: Action) -> int:
        aid = self.action_ids.get(action)
        if aid is None:
            aid = self.action_ids[action] = len(self.actions)
            self.actions.append(action)
        return aid

    def _violation(self, name: str, level: int, fp: int) -> None:
        if name not in self.first_violation:
            self.first_violation[name] = (level, fp)
        if self.options.stop_on_violation:
            self.stopped = True

    def _maybe_progress(self, level: int, frontier: int) -> None:
        cb = self.options.progress
        if cb is None:
            return
        now = time.perf_counter()
        if now - self.last_progress < self.options.progress_interval:
            return
        self.last_progress = now
        elapsed = now - self.start_time
        cb({"level": level, "generated": self.generated, "distinct": len(self.seen),
            "frontier": frontier, "elapsed_s": elapsed,
            "generated_per_s": self.generated / elapsed if elapsed else 0.0,
            "distinct_per_s": len(self.seen) / elapsed if elapsed else 0.0})

    def _disk_folder(self) -> Path | None:
        """Where the run has files now: its levels once one is saved, else its
        spill folder once used (None: nothing on disk, nothing to guard)."""
        if self.checkpoint is not None and self.checkpoint.sealed:
            return self.checkpoint.folder
        return self.spill.path

    def _kept(self) -> str:
        cp = self.checkpoint
        return ("a run with --checkpoint keeps its finished levels and goes on with --resume RUN_DIR"
                if cp is None else f"its finished levels are kept: go on with: kmc check --resume {cp.folder.parent}"
                if cp.sealed else f"levels are kept from the first of {self.options.checkpoint_from:,} "
                                  f"states (with --checkpoint from level 0), and none was yet")

    def _memory_advice(self) -> str:
        return f"raise it (--max-memory SIZE, or none); {self._kept()}"

    def _disk_advice(self) -> str:
        return f"free space there, or lower it (--min-free-disk SIZE, or none); {self._kept()}"

    def _log(self) -> LevelLog:
        # (a level's log past spill_states entries goes to disk a block of that many at a time)
        spill = self.spill if self.options.spill_states is not None else None
        return LevelLog(self.options.fingerprint_bits, spill, self.options.spill_states)

    def _state_chunks(self, frontier):
        """A frontier's chunks of (state, parts, fp), the states rebuilt
        where only their parts are kept."""
        chunks = getattr(frontier, "state_chunks", None)
        if chunks is not None:
            if self.decoder is None:
                self.decoder = self.new_decoder()
            return chunks(self.decoder)
        return frontier.chunks()

    def _deadlocks_among(self, level: int, states: Iterable[tuple]) -> None:
        """A deadlock for each (state, fingerprint) whose state has no successor."""
        successors = self.model.successors
        for state, fp in states:
            try:
                has_successor = next(iter(successors(state)), None) is not None
            except EvaluationError as e:
                raise EngineEvaluationError(f"evaluation error: {e}; state: {_summary(state)}",
                                            action=e.action, state=state) from e
            if not has_successor:
                self._violation(DEADLOCK, level, fp)
                if self.stopped:
                    return

    # -- counterexamples --

    def _attach(self, e: EngineEvaluationError) -> None:
        """An evaluation error made a result: the trace to the state whose
        successors (or whose check) raised, and the search's figures so far
        (e.trace, e.result; left None where they cannot be rebuilt)."""
        level = self.expanding
        if level is None:   # the initial states: the state itself is the trace
            e.trace = [(None, e.state)] if e.state is not None else None
            return
        try:
            fp = e.parent_fp if e.parent_fp is not None else self.ctx.entry(e.state)[2]
            trace = self.trace(level, fp)
            if e.successor is not None:
                trace.append((e.action, e.successor))
            e.trace = trace
            e.result = self._result(exhausted=False, states_left=len(self.frontier or ()))
        except Exception as e2:   # noqa: BLE001 - the error's own line is still reported
            print(f"kmc: warning: no trace to the evaluation error (it could not be rebuilt: "
                  f"{type(e2).__name__}: {' '.join(str(e2).split())[:200]})", file=sys.stderr)

    def trace(self, level: int, fp: int) -> list:
        """The shortest path to the state with fingerprint fp at `level`, by
        walking the parent fingerprints back to level 0 and replaying the
        recorded actions forward (matching action and fingerprint)."""
        path = []  # (fp, action id), from the state back to level 0
        for lv in range(level, -1, -1):
            log = self.levels[lv]
            i = log.find(fp)
            path.append((fp, log.action(i)))
            fp = log.parent(i)
        path.reverse()
        actions = self.actions
        return replay(self.model, self.ctx,
                      [(fp, None if aid == NO_ACTION else actions[aid]) for fp, aid in path],
                      lambda action, wanted: action == wanted)

    def _result(self, exhausted: bool, states_left: int) -> CheckResult:
        violations = [Violation(name, lv, self.trace(lv, fp))
                      for name, (lv, fp) in self.first_violation.items()]
        return assemble(self.model, self.options, self.projection, violations=violations,
                        distinct=len(self.seen), generated=self.generated,
                        per_level_distinct=self.per_level_distinct,
                        per_action_generated=self.per_action_generated,
                        per_action_distinct=self.per_action_distinct, sometimes=self.sometimes,
                        properties=[p.name for p in self.ctx.always], states_left=states_left,
                        exhausted=exhausted, wall_time=time.perf_counter() - self.start_time,
                        memory=self.memory, engine=self.expander.where(self))
