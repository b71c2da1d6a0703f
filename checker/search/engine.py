"""The level-synchronous BFS engine (`local`), ARCHITECTURE.md "Engines".

One level at a time: expand every frontier state, fingerprint each successor,
keep the new ones (one set test-and-add), check the properties once per new
state, record (fingerprint, parent fingerprint, action id) per level, and go
on with the new states as the next frontier. BFS by levels makes the first
counterexample of each property a shortest one; it is rebuilt by walking the
parent fingerprints back to level 0 and replaying the recorded actions from an
initial state (as TLC does with its trace file).

`expand_chunk(ctx, chunk, seen)` is the per-level work: a function of the
model, the properties and the chunk only (pass a fresh `seen` set and it is
pure), so the Spark engine can run it on executors and dedup globally there.
"""
from __future__ import annotations

import gc
import os
import shutil
import time
from array import array
from pathlib import Path
from collections import Counter
from contextlib import contextmanager
from itertools import compress, count
from operator import is_not
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from checker.search import native, stop
from checker.search.checkpoint import Checkpoint, RunStopped
from checker.search.checks import EVERY_VARIABLE, Checks
from checker.search.contract import projections_of
from checker.search.codec import StateDecoder
from checker.search.encoding import (VariableEncoders, decode, encode_changed, encode_state,
                              fingerprint_function, parts_to_bytes, projection_indices,
                              projection_selector)
from checker.search.errors import EXIT_BAD_INPUT, EngineEvaluationError, KmcError, SpecError
from checker.search.fpset import new_seen_set
from checker.search.frontier import Frontier, SpillDir
from checker.search.proc import TreeMemory
from model.base import ALWAYS, SOMETIMES, Action, EvaluationError, Model, Property

DEADLOCK = "Deadlock"          # the name a deadlock is reported under (TLC's wording)
NO_ACTION = 0xFFFFFFFF         # action id of an initial state (no parent)
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
    fingerprint). progress: called with a dict of
    counters at most every progress_interval seconds (never on a run shorter
    than that)."""

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
    # save nothing before the first finished level of at least this many
    # states (the levels before it are written then): a default run keeps
    # its levels only once losing them would cost more than a rerun
    checkpoint_from: int = 0
    resume: bool = False
    stop_after_level: int | None = None  # after checkpointing it, stop (RunStopped; tests)


@dataclass
class Violation:
    """A violated property (or DEADLOCK) and its shortest counterexample.

    trace[0] is (None, initial state); trace[i] is (action, state after it).
    """

    property: str
    depth: int
    trace: list = field(default_factory=list)


@dataclass
class CheckResult:
    outcome: str                                   # 'pass' | 'violation'
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


class MemoryLimitError(KmcError):
    """The run's processes held more than CheckOptions.max_memory (exit 2)."""

    exit_code = EXIT_BAD_INPUT


def format_size(n: int) -> str:
    """2.0 TiB, 8.0 GiB, 500 MiB, 64 KiB."""
    if n >= 1 << 40:
        return f"{n / (1 << 40):,.1f} TiB"
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.0f} MiB"
    return f"{n / 1024:.0f} KiB"


def check_memory(memory: TreeMemory, level: int, distinct: int, advice: str | Callable[[], str],
                 peak: bool = False) -> None:
    """Raise MemoryLimitError when the run's processes hold more than the
    limit of `memory` (checker/search/proc.py: their PSS summed; with
    peak=True, when they ever did); `advice` (or what it returns) ends the message."""
    held = memory.over(peak)
    if held is not None:
        n = memory.processes if peak else memory.counted
        raise MemoryLimitError(f"memory limit {format_size(memory.limit)} reached at level {level} after "
                               f"{distinct:,} distinct states (the run's {n} "
                               f"process{'es' if n != 1 else ''} hold{'s' if n == 1 else ''} "
                               f"{format_size(held)}); "
                               f"{advice() if callable(advice) else advice}")


class DiskLimitError(KmcError):
    """The run would leave less than CheckOptions.min_free_disk free on the
    disk it writes to (exit 2)."""

    exit_code = EXIT_BAD_INPUT


def check_disk(limit: int | None, folder, level: int, distinct: int, advice: str | Callable[[], str],
               written: int = 0, per_level: Sequence[int] = ()) -> None:
    """Raise DiskLimitError when the filesystem of `folder` has less than
    `limit` bytes free (None: no limit), or would have once level + 1 is
    written, if it grows as `level` did (`written` bytes; per_level: the
    distinct states of each level); `advice` ends the message."""
    if limit is None:
        return
    d = per_level
    need = int(written * d[level] / d[level - 1]) if 0 < level < len(d) and d[level - 1] else 0
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return  # the folder is not there (yet): nothing written to guard
    if free - need >= limit:
        return
    short = (f"{format_size(free)} free, and level {level + 1} would take about {format_size(need)}" if need
             else f"only {format_size(free)} free")
    raise DiskLimitError(f"disk limit reached at level {level} after {distinct:,} distinct states: "
                         f"the disk of {folder} has {short}; kmc keeps {format_size(limit)} free "
                         f"(--min-free-disk); {advice() if callable(advice) else advice}")


def resolve_projection(model: Model, projection: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """The fingerprint projection (TLC's VIEW: the variables the fingerprint
    covers; states equal on them are one state), a name of the model's
    projections or a list of variable names -> variable names in state
    order; None when it is every variable."""
    if projection is None:
        return None
    variables = tuple(model.variables)
    if isinstance(projection, str):
        known = projections_of(model)
        if projection not in known:
            raise SpecError(f"unknown projection {projection!r} of model {model.name!r} "
                            f"(known projections: {', '.join(known) or 'none'})")
        projection = known[projection]
    unknown = [v for v in projection if v not in variables]
    if unknown:
        raise SpecError(f"unknown projection variable(s) {', '.join(map(repr, unknown))} of model "
                        f"{model.name!r} (variables: {', '.join(variables)})")
    names = tuple(v for v in variables if v in set(projection))
    return None if names == variables else names


# ---- the per-chunk work ----------------------------------------------------

@dataclass
class ExpandContext:
    """Everything expand_chunk needs besides the chunk."""

    model: Model
    always: list[Property]
    sometimes: list[Property]
    fingerprint: Callable[[bytes], int]
    select: Callable[[Sequence[bytes]], bytes]
    check_deadlock: bool = False
    stop_on_violation: bool = True
    # per variable, the encoder of its values (the C packer until a value
    # holds a set); built on first use, learnt as the search goes
    encoders: VariableEncoders | None = None
    # the projection's part indices (None: every variable), for the compiled path
    select_indices: tuple | None = None
    # the properties by the variables a step changed; built on first use
    checks: Checks | None = None

    @classmethod
    def create(cls, model: Model, properties: Iterable[Property], fingerprint_bits: int = 64,
               projection: Sequence[str] | None = None, check_deadlock: bool = False,
               stop_on_violation: bool = True) -> "ExpandContext":
        props = list(properties)
        return cls(model=model,
                   always=[p for p in props if p.kind == ALWAYS],
                   sometimes=[p for p in props if p.kind == SOMETIMES],
                   fingerprint=fingerprint_function(fingerprint_bits),
                   select=projection_selector(tuple(model.variables), projection),
                   select_indices=projection_indices(tuple(model.variables), projection),
                   check_deadlock=check_deadlock,
                   stop_on_violation=stop_on_violation)

    def property_checks(self) -> Checks:
        if self.checks is None:
            self.checks = Checks(self.model, self.always + self.sometimes)
        return self.checks

    def entry(self, state) -> tuple:
        """A frontier entry (state, per-variable encodings, fingerprint)."""
        parts = list(encode_state(state))  # a list: successors copy and patch it
        return (state, parts, self.fingerprint(self.select(parts)))

    def entry_bytes(self, entry: tuple) -> bytes:
        """A frontier entry's state as one canonical msgpack value (to ship it)."""
        return parts_to_bytes(entry[1])

    def entry_from_bytes(self, data: bytes) -> tuple:
        """The frontier entry of a state shipped as entry_bytes (in any process)."""
        return self.entry(self.model.from_plain(decode(data)))


@dataclass
class ChunkResult:
    """What expanding a chunk found.

    new: (state, parts, fp, parent_fp, action) per successor new to `seen`, in
    order. violations: (property name, index into new). witnesses: (property
    name, index into new), first per property. deadlocks: chunk indices of
    states without successors. action_names: the name of every successor
    generated (Counter them). stopped: a violation ended the chunk early
    (stop_on_violation). changed: per entry of new, the bit mask of the
    variables it changed from its parent (for checks made elsewhere: the
    spark engine's)."""

    new: list
    violations: list
    witnesses: list
    deadlocks: list
    action_names: list
    stopped: bool = False
    changed: list | None = None


def _summary(state, limit: int = 300) -> str:
    text = repr(state)
    return text if len(text) <= limit else text[:limit] + "..."


def expand_chunk(ctx: ExpandContext, chunk: Sequence[tuple], seen: set,
                 errors: list | None = None) -> ChunkResult:
    """Expand frontier entries (state, parts, fp): every successor is generated
    and fingerprinted; those new to `seen` (which is updated) are checked
    against the properties and returned. Raises EngineEvaluationError when the
    model or a property raises EvaluationError; with an `errors` list, an
    EvaluationError of the model instead ends that parent's successors (those
    before it are kept), is appended as (index in chunk, one-line message),
    and the chunk goes on (the spark tasks: it is settled in BFS order later)."""
    # The hot path: per successor one identity compare per variable, encode the
    # changed variables, join + xxh3, one set test-and-add.
    successors = ctx.model.successors
    fingerprint = ctx.fingerprint
    select = ctx.select
    encs = ctx.encoders
    if encs is None:
        encs = ctx.encoders = VariableEncoders(len(ctx.model.variables))
    # the compiled path: parts, fingerprint and the seen set's test-and-add
    # in one call (None: seen); TypeError sends a successor down the Python path
    successor = native._native.successor if native.ENABLED else None
    indices = ctx.select_indices
    # a property (or part of one) is checked on a new state only when a
    # variable it reads changed (its parent, which satisfied it, shares the
    # others' objects)
    checks = ctx.property_checks()
    always_for = checks.always_for
    pending = checks.pending(ctx.sometimes)
    check_deadlock = ctx.check_deadlock
    stop = ctx.stop_on_violation

    new: list = []
    new_append = new.append
    changes: list = []
    changed_append = changes.append
    names: list = []
    names_append = names.append
    violations: list = []
    witnesses: list = []
    deadlocks: list = []
    action = succ = last = None
    checking = False  # a property raising names the state it was checked on
    for ci, (parent, pparts, pfp) in enumerate(chunk):
        before = len(names)
        try:
            for action, succ in successors(parent):
                names_append(action[0])
                if succ is last:  # the same object again (a second witness): seen
                    continue
                last = succ
                if successor is not None:
                    try:
                        new_entry = successor(parent, pparts, succ, indices, fingerprint, seen)
                    except TypeError:  # a value the compiled encoder refuses
                        new_entry = _python_successor(encs, parent, pparts, succ, select,
                                                      fingerprint, seen)
                else:
                    new_entry = _python_successor(encs, parent, pparts, succ, select, fingerprint, seen)
                if new_entry is None:
                    continue
                parts, fp, changed = new_entry
                index = len(new)
                new_append((succ, parts, fp, pfp, action))
                changed_append(changed)
                bad = False
                checking = True
                for name, pred in always_for(changed):
                    if not pred(succ) and (name, index) not in violations[-1:]:
                        violations.append((name, index))
                        bad = True
                if pending:
                    for item in [x for x in pending if changed & x[2] and x[1](succ)]:
                        witnesses.append((item[0], index))
                        pending.remove(item)
                checking = False
                if bad and stop:
                    return ChunkResult(new, violations, witnesses, deadlocks, names, True, changes)
        except EvaluationError as e:
            failed_action = e.action if e.action is not None else (action if len(names) > before else None)
            failed_state = e.state if e.state is not None else (succ if checking else parent)
            where = f"in action {failed_action}" if failed_action is not None else "while enumerating successors"
            message = f"evaluation error {where}: {e}; state: {_summary(failed_state)}"
            if errors is None or checking:
                raise EngineEvaluationError(message, action=failed_action, state=failed_state) from e
            errors.append((ci, " ".join(message.split())))
            continue
        if check_deadlock and len(names) == before:
            deadlocks.append(ci)
            if stop:
                return ChunkResult(new, violations, witnesses, deadlocks, names, True, changes)
    return ChunkResult(new, violations, witnesses, deadlocks, names, False, changes)


def _python_successor(encs, parent, pparts, succ, select, fingerprint, seen):
    """The compiled successor's work in Python: (parts, fp, changed variables
    as a bit mask), None when seen. The parent's bytes serve every variable
    whose object is shared; the indices of the others are found in C (map +
    compress)."""
    parts = pparts.copy() if type(pparts) is list else list(pparts)
    changed = 0
    try:
        for i in compress(count(), map(is_not, parent, succ)):
            parts[i] = encs[i](succ[i])
            changed |= 1 << i
    except TypeError:  # a variable's first value holding a set
        parts = encode_changed(encs, parent, pparts, succ)
        changed = EVERY_VARIABLE
    fp = fingerprint(select(parts))
    if fp in seen:
        return None
    seen.add(fp)
    return parts, fp, changed


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


# ---- per-level parent pointers --------------------------------------------

class LevelLog:
    """One BFS level's (fingerprint, parent fingerprint, action id), as compact
    arrays of unsigned 64-bit ints (two each for 128-bit fingerprints).

    With a spill folder, every BLOCK entries go to one file per array and
    leave memory: the log is only read for a counterexample (find, parent,
    action), which reads the files back a block at a time."""

    __slots__ = ("bits", "fps", "parents", "actions", "fps_hi", "parents_hi", "spill", "files",
                 "spilled", "block")
    _MASK = (1 << 64) - 1
    BLOCK = 1 << 16

    def __init__(self, bits: int = 64, spill=None, block: int | None = None):
        self.bits = bits
        self.fps = array("Q")
        self.parents = array("Q")
        self.actions = array("I")
        if bits == 128:
            self.fps_hi = array("Q")
            self.parents_hi = array("Q")
        self.spill = spill          # a checker.search.frontier.SpillDir, or None: all in memory
        self.files: dict | None = None
        self.spilled = 0            # entries in the files (they come first)
        self.block = block or self.BLOCK

    def _names(self) -> tuple:
        return ("fps", "parents", "actions") + (("fps_hi", "parents_hi") if self.bits == 128 else ())

    def __len__(self) -> int:
        return self.spilled + len(self.fps)

    def add(self, fps: Sequence[int], parents: Sequence[int], actions: Sequence[int]) -> None:
        if self.bits == 64:
            self.fps.extend(fps)
            self.parents.extend(parents)
        else:
            m = self._MASK
            self.fps.extend(f & m for f in fps)
            self.fps_hi.extend(f >> 64 for f in fps)
            self.parents.extend(f & m for f in parents)
            self.parents_hi.extend(f >> 64 for f in parents)
        self.actions.extend(actions)
        if self.spill is not None and len(self.fps) >= self.block:
            self._flush()

    def _flush(self) -> None:
        if self.files is None:
            self.files = {name: self.spill.file(f"log-{name}") for name in self._names()}
        self.spilled += len(self.fps)
        for name in self._names():
            arr = getattr(self, name)
            with open(self.files[name], "ab") as f:
                arr.tofile(f)
            setattr(self, name, array(arr.typecode))

    def seal_into(self, folder, level: int) -> dict:
        """Every entry of the (finished) level into files folder/level-L.<array>,
        fsynced (spilled blocks are moved there, on the same filesystem);
        the log reads them from there on. Returns {array: path}."""
        dest = {name: Path(folder) / f"level-{level:05d}.{name}" for name in self._names()}
        n = len(self.fps)
        for name in self._names():
            arr = getattr(self, name)
            src = self.files[name] if self.files is not None else dest[name].with_name(
                f".{dest[name].name}.tmp")
            with open(src, "ab" if self.files is not None else "wb") as f:
                arr.tofile(f)
                f.flush()
                os.fsync(f.fileno())
            os.replace(src, dest[name])
            setattr(self, name, array(arr.typecode))
        self.spilled += n
        self.files = dest
        return dest

    @classmethod
    def from_files(cls, bits: int, files: dict, n: int) -> "LevelLog":
        """A finished level's log read from the files seal_into wrote."""
        log = cls(bits)
        log.files = dict(files)
        log.spilled = n
        return log

    def _blocks(self, name: str):
        """(offset, array) of `name`, the spilled blocks first, then memory's."""
        if self.files is not None:
            with open(self.files[name], "rb") as f:
                done = 0
                while done < self.spilled:
                    arr = array(getattr(self, name).typecode)
                    arr.fromfile(f, min(self.block, self.spilled - done))
                    yield done, arr
                    done += len(arr)
        yield self.spilled, getattr(self, name)

    def fingerprints(self):
        """Every fingerprint of the level, in order (the spilled ones read back:
        while the search runs, which removes its spill folder at the end)."""
        if self.bits == 64:
            for _, block in self._blocks("fps"):
                yield from block
            return
        for (_, lo), (_, hi) in zip(self._blocks("fps"), self._blocks("fps_hi")):
            yield from (a | (b << 64) for a, b in zip(lo, hi))

    def _at(self, name: str, i: int) -> int:
        if i >= self.spilled:
            return getattr(self, name)[i - self.spilled]
        arr = array(getattr(self, name).typecode)
        with open(self.files[name], "rb") as f:
            f.seek(i * arr.itemsize)
            arr.fromfile(f, 1)
        return arr[0]

    def find(self, fp: int) -> int:
        """Index of fingerprint fp in this level (ValueError if absent)."""
        lo = fp & self._MASK if self.bits == 128 else fp
        for offset, block in self._blocks("fps"):
            start = 0
            while True:
                try:
                    i = block.index(lo, start)
                except ValueError:
                    break
                if self.bits == 64 or self._at("fps_hi", offset + i) == fp >> 64:
                    return offset + i
                start = i + 1
        raise ValueError(f"fingerprint {fp:x} is not in this level")

    def parent(self, i: int) -> int:
        if self.bits == 64:
            return self._at("parents", i)
        return self._at("parents", i) | (self._at("parents_hi", i) << 64)

    def action(self, i: int) -> int:
        return self._at("actions", i)


def replay(model: Model, ctx: ExpandContext, path: list, matches: Callable) -> list:
    """A counterexample rebuilt from its recorded path [(fp, recorded action)],
    level 0 first: start from the initial state with path[0]'s fingerprint and
    at each step take the successor whose action `matches(action, recorded)`
    and whose fingerprint is the recorded one (as TLC replays its trace file).
    Returns [(None, init), (action, state), ...]."""
    init_fp = path[0][0]
    state = next((s for s in model.init_states() if ctx.entry(s)[2] == init_fp), None)
    if state is None:
        raise EngineEvaluationError("trace replay failed: no initial state has the recorded "
                                    "fingerprint (is the model deterministic?)")
    trace: list = [(None, state)]
    for step, (fp, recorded) in enumerate(path[1:], 1):
        nxt = next(((a, s) for a, s in model.successors(state)
                    if matches(a, recorded) and ctx.entry(s)[2] == fp), None)
        if nxt is None:
            raise EngineEvaluationError(f"trace replay failed at step {step}: no successor has the "
                                        f"recorded action and fingerprint (is the model deterministic?)",
                                        state=state)
        trace.append(nxt)
        state = nxt[1]
    return trace


# ---- the search --------------------------------------------------------------

class Search:
    """One run of the local engine; check() is the public entry point."""

    def __init__(self, model: Model, properties: Iterable[Property], options: CheckOptions):
        self.model = model
        self.properties = list(properties)
        self.options = options
        if options.fingerprint_bits not in (64, 128):
            raise SpecError(f"fingerprint bits must be 64 or 128, not {options.fingerprint_bits}")
        if options.max_depth is not None and options.max_depth < 0:
            raise SpecError(f"depth must be >= 0, not {options.max_depth}")
        self.projection = resolve_projection(model, options.projection)
        self.ctx = ExpandContext.create(model, self.properties, options.fingerprint_bits, self.projection,
                                        options.check_deadlock, options.stop_on_violation)
        self.seen = new_seen_set(options.fingerprint_bits)
        self.checkpoint = None
        spill_dir = options.spill_dir
        if options.checkpoint_dir is not None:
            self.checkpoint = Checkpoint(options.checkpoint_dir, self._identity())
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
        self.states_left = 0
        self.start = time.perf_counter()
        self.last_progress = self.start
        # every process of the run (this one and the auto engine's workers): --max-memory, the peak
        self.memory = TreeMemory(options.max_memory)

    # -- bookkeeping --

    def _identity(self) -> dict:
        o = self.options
        return {**o.checkpoint_identity, "properties": [p.name for p in self.properties],
                "max_depth": o.max_depth, "check_deadlock": o.check_deadlock,
                "stop_on_violation": o.stop_on_violation, "fingerprint_bits": o.fingerprint_bits,
                "projection": list(self.projection) if self.projection is not None else None}

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
        self.start = time.perf_counter() - c["elapsed_s"]
        if self.decoder is None:
            self.decoder = StateDecoder(self.model)
            self.decoder.LIMIT = DECODER_LIMIT
            self.decoder.SHARED_LIMIT = DECODER_SHARED_LIMIT
        f = obj["frontier"]
        frontier = Frontier.from_file(folder / f["file"], f["records"], f["states"], CHUNK_STATES,
                                      self.decoder, bits)
        return frontier, obj["level"]

    def _level_done(self, level: int, frontier: Frontier) -> None:
        """Level `level` is finished and `frontier` holds what follows it."""
        if self.checkpoint is None or self.stopped:
            return
        if not self.checkpoint.sealed and len(frontier) < self.options.checkpoint_from:
            return
        written = self.checkpoint.save(self, level, frontier)
        if self.options.max_depth is None or level + 1 < self.options.max_depth:  # (the bound's is not saved)
            check_disk(self.options.min_free_disk, self.checkpoint.folder, level, len(self.seen),
                       self._disk_advice, written, self.per_level_distinct)
        if self.options.stop_after_level is not None and level >= self.options.stop_after_level:
            raise RunStopped(f"stopped after level {level} as asked; every finished level is in "
                             f"{self.checkpoint.folder}: resume it")

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
        elapsed = now - self.start
        cb({"level": level, "generated": self.generated, "distinct": len(self.seen),
            "frontier": frontier, "elapsed_s": elapsed,
            "generated_per_s": self.generated / elapsed if elapsed else 0.0,
            "distinct_per_s": len(self.seen) / elapsed if elapsed else 0.0})

    def _check_limits(self, level: int) -> None:
        """A stop signal, --max-memory and --min-free-disk, between chunks."""
        stop.raise_pending()   # a ^C or SIGTERM whose exception was dropped
        self.memory.poll()
        check_memory(self.memory, level, len(self.seen), self._memory_advice)
        folder = self._disk_folder()
        if folder is not None:
            check_disk(self.options.min_free_disk, folder, level, len(self.seen), self._disk_advice)

    def _disk_folder(self) -> Path | None:
        """Where the run has files now: its levels once one is saved, else its
        spill folder once used (None: nothing on disk, nothing to guard)."""
        if self.checkpoint is not None and self.checkpoint.sealed:
            return self.checkpoint.folder
        return self.spill.path

    def _kept(self) -> str:
        cp = self.checkpoint
        return ("a run with --checkpoint keeps its finished levels and goes on with --resume RUN_DIR"
                if cp is None else f"its finished levels are kept: go on with --resume {cp.folder.parent}"
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

    def _frontier(self, keep: bool = True) -> Frontier:
        threshold = self.options.spill_states
        if threshold is not None and self.decoder is None:
            self.decoder = StateDecoder(self.model)
            self.decoder.LIMIT = DECODER_LIMIT
            self.decoder.SHARED_LIMIT = DECODER_SHARED_LIMIT
        return Frontier(CHUNK_STATES, threshold, self.spill, self.decoder,
                        self.options.fingerprint_bits, keep)

    def _absorb(self, level: int, log: LevelLog, res: ChunkResult, chunk: Sequence[tuple],
                next_frontier: Frontier) -> None:
        """Record a chunk's results at `level` (the new states' level)."""
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

    # -- the levels --

    def _initial(self) -> Frontier:
        model, ctx = self.model, self.ctx
        log = self._log()
        self.levels.append(log)
        self.per_level_distinct.append(0)
        max_depth = self.options.max_depth
        frontier = self._frontier(keep=max_depth != 0 or self.options.check_deadlock)
        new = []
        state = None
        try:
            for state in model.init_states():
                self.generated += 1
                entry = ctx.entry(state)
                n = len(self.seen)
                self.seen.add(entry[2])
                if len(self.seen) == n:
                    continue
                new.append(entry)
                for p in ctx.always:
                    if not p.predicate(state):
                        self._violation(p.name, 0, entry[2])
                for p in ctx.sometimes:
                    if self.sometimes[p.name] is None and p.predicate(state):
                        self.sometimes[p.name] = 0
        except EvaluationError as e:
            failed = e.state if e.state is not None else state
            raise EngineEvaluationError(f"evaluation error in the initial states: {e}; "
                                        f"state: {_summary(failed)}", state=failed) from e
        log.add([e[2] for e in new], [0] * len(new), [NO_ACTION] * len(new))
        self.per_level_distinct[0] = len(new)
        self.ctx.sometimes = [p for p in ctx.sometimes if self.sometimes[p.name] is None]
        frontier.extend(new)
        return frontier

    def _deadlocks_at_bound(self, level: int, frontier: Frontier) -> None:
        """With a depth bound the last level is not expanded; a deadlock there
        still shows as a state without any successor."""
        for chunk in frontier.chunks():
            self._deadlocks_among(level, ((state, fp) for state, _, fp in chunk))
            if self.stopped:
                return
            self._check_limits(level)

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

    def run(self) -> CheckResult:
        """Removes its spill folder at the end, whatever the end (an error, ^C)."""
        try:
            with level_gc() as collect:
                return self._run(collect)
        except KeyboardInterrupt:
            stop.handled()
            raise
        finally:
            self.spill.close()
            if self.checkpoint is not None:   # the run folder's lock (checkpoint.py)
                self.checkpoint.release()

    def _run(self, collect: Callable[[], Any]) -> CheckResult:
        max_depth = self.options.max_depth
        if self.options.resume:
            frontier, level = self._resumed()
        else:
            frontier, level = self._initial(), 0
            if frontier.keep:
                self._level_done(0, frontier)
        while frontier and not self.stopped:
            if max_depth is not None and level >= max_depth:
                if self.options.check_deadlock:
                    self._deadlocks_at_bound(level, frontier)
                break
            log = self._log()
            self.levels.append(log)
            self.per_level_distinct.append(0)
            # the level at the depth bound is only counted (unless deadlocks
            # are checked there): it is never expanded
            next_frontier = self._frontier(keep=max_depth is None or level + 1 < max_depth
                                           or self.options.check_deadlock)
            done = 0
            for chunk in frontier.chunks():
                res = expand_chunk(self.ctx, chunk, self.seen)
                self._absorb(level + 1, log, res, chunk, next_frontier)
                collect()
                if self.stopped:
                    break
                done += len(chunk)
                self._check_limits(level)
                self._maybe_progress(level, len(frontier) - done + len(next_frontier))
            self.memory.measure()   # (a level's end: both frontiers held, the most it takes)
            if next_frontier.keep and next_frontier:
                self._level_done(level + 1, next_frontier)
            frontier.close()
            frontier = next_frontier
            level += 1
        if not self.per_level_distinct[-1] and len(self.per_level_distinct) > 1:
            # the last level expanded found nothing new: it is not a level
            self.per_level_distinct.pop()
            self.levels.pop()
        self.states_left = len(frontier) if (self.stopped or frontier) else 0
        frontier.close()
        return self._result(exhausted=not frontier and not self.stopped)

    # -- counterexamples --

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

    def _result(self, exhausted: bool) -> CheckResult:
        violations = [Violation(name, lv, self.trace(lv, fp))
                      for name, (lv, fp) in self.first_violation.items()]
        violations.sort(key=lambda v: v.depth)
        names = list(self.model.action_names)
        extra = [n for n in self.per_action_generated if n not in names]
        per_gen = {n: self.per_action_generated.get(n, 0) for n in names + extra}
        per_dist = {n: self.per_action_distinct.get(n, 0) for n in names + extra}
        wall = time.perf_counter() - self.start
        distinct = len(self.seen)
        bits = self.options.fingerprint_bits
        return CheckResult(
            outcome="violation" if violations else "pass",
            distinct=distinct,
            generated=self.generated,
            per_level_distinct=list(self.per_level_distinct),
            per_action_generated=per_gen,
            per_action_distinct=per_dist,
            depth=len(self.per_level_distinct) - 1,
            violations=violations,
            sometimes=dict(self.sometimes),
            properties=[p.name for p in self.ctx.always],
            states_left=self.states_left,
            exhausted=exhausted,
            max_depth=self.options.max_depth,
            check_deadlock=self.options.check_deadlock,
            fingerprint_bits=bits,
            projection=list(self.projection) if self.projection is not None else None,
            wall_time=wall,
            peak_memory_kb=self.memory.final_peak() // 1024,
            collision_probability=collision_probability(distinct, self.generated, bits),
            memory=self.memory.summary(),
        )


def check(model: Model, properties: Iterable[Property], options: CheckOptions | None = None) -> CheckResult:
    """Check `properties` on every state of `model` reachable within the bound.

    Raises EngineEvaluationError (exit 3) when the model raises EvaluationError,
    SpecError (exit 2) for a bad option (projection, depth, fingerprint bits)."""
    return Search(model, properties, options or CheckOptions()).run()
