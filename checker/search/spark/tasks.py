"""The work the Spark engine runs on the executors (Python workers).

Every function here is a pure function of its configuration and the records
it is given, so Spark may re-run a task (a failure, a lost executor) and get
the same output: nothing is counted outside the data it returns.

One BFS level (ARCHITECTURE.md, "Engines"):

1. `expand_partition`: rebuild the states of one range of the level's BFS
   keys (slices of its files: levels.task_inputs; a range of BFS order holds
   most duplicate successors of its states itself, where a fingerprint
   partition ships them to the merge), check the properties on each (once
   per state: the first time it is rebuilt on an executor), expand them in
   BFS order with checker.search.expand.expand_chunk (the local engine's
   successor generation, encoding and fingerprints), drop the successors
   the task already produced or holds in its frontier (within-task dedup
   before the shuffle), and route each kept successor to the partition of
   its fingerprint. Task statistics
   (generated, per-action generated, deadlocks, violations, witnesses,
   errors) travel as records too.
2. `merge_partition`: per fingerprint keep the witness with the smallest BFS
   key, drop the fingerprints the partition has seen (its sorted runs on
   disk, checker/search/spark/seen.py: the cost grows with the level's candidates,
   not with everything seen), sort the new states by key, and write the
   level's rows (new states with their parent pointers), the partition's
   new seen run and index, and its statistics in a small file beside them.
"""
from __future__ import annotations

import gc
import json
import traceback
from collections import Counter
from dataclasses import dataclass
from itertools import count, repeat
from operator import itemgetter
from typing import Any, Iterable, Iterator

from checker.search import codec
from checker.search.spark import levels, seen as seenruns

# Level-file rows: (kind, part, seq, n, fps, keys, parents, actions, states, changed, picks)
STATES = "states"
BATCH = 2048  # states per level-file row and per shuffled record batch


@dataclass(frozen=True)
class TaskConfig:
    """What an executor needs to rebuild the model and do a level's work."""

    model: str
    variant: str
    constants_json: str            # json.dumps(resolved constants, sort_keys=True)
    properties: tuple              # selected property names (always and sometimes)
    projection: tuple | None       # the fingerprint projection's variables (None: every variable)
    bits: int = 64
    check_deadlock: bool = False
    stop_on_violation: bool = True
    partitions: int = 4
    inject_failure: tuple | None = None   # tests: (stage, level, partition) fails on attempt 0

    @property
    def constants(self) -> dict:
        return json.loads(self.constants_json)

    @classmethod
    def of_run(cls, run: dict, partitions: int) -> "TaskConfig":
        """The config of a run folder's run.json (bench/: a level's tasks again)."""
        return cls(model=run["model"], variant=run["variant"],
                   constants_json=json.dumps(run["constants"], sort_keys=True),
                   properties=tuple(run["properties"]),
                   projection=tuple(p) if (p := run.get("projection", run.get("view"))) is not None else None,
                   bits=run["fingerprint_bits"], check_deadlock=run["check_deadlock"],
                   partitions=partitions)


# ---- per-process model cache (Python workers are reused across tasks) ---------

class Worker:
    """The model, properties, expansion context and decoder of one config."""

    def __init__(self, cfg: TaskConfig):
        from checker.search.checks import Checks
        from checker.search.engine import ExpandContext
        from checker.search.registry import build, select_properties
        from model.base import SOMETIMES

        self.model, props = build(cfg.model, cfg.variant, cfg.constants)
        props = select_properties(props, list(cfg.properties))
        # a state is checked only against the properties (or their parts)
        # whose variables its witness step changed (the parent was checked),
        # as the local engine does
        self.checks = Checks(self.model, props)
        self.sometimes = self.checks.pending(p for p in props if p.kind == SOMETIMES)
        # expansion without properties (they are checked once per rebuilt
        # state, or as generated at the depth bound)
        self.ctx = ExpandContext.create(self.model, [], cfg.bits, cfg.projection, cfg.check_deadlock,
                                        stop_on_violation=False)
        self.decoder = codec.StateDecoder(self.model)
        _grow_encoder_cache()
        self.action_bytes: dict = {}
        self.action_names: dict = {}

    def encode_action(self, action) -> bytes:
        b = self.action_bytes.get(action)
        if b is None:
            from checker.search.encoding import encode
            if len(self.action_bytes) > 100_000:
                self.action_bytes.clear()
            b = self.action_bytes[action] = encode(tuple(action))
        return b

    def action_name(self, abytes: bytes) -> str:
        n = self.action_names.get(abytes)
        if n is None:
            from checker.search.encoding import decode
            if len(self.action_names) > 100_000:
                self.action_names.clear()
            n = self.action_names[abytes] = decode(abytes)[0]
        return n


_workers: dict[tuple, Worker] = {}

# The encoder's identity cache (checker.search.encoding) is cleared whole when it is
# full. A task expands a level of rebuilt states whose shared sub-objects
# are each encoded once (see codec.StateDecoder); with the local engine's
# bound the cache is cleared several times per big task and they are
# encoded again. A worker process holds one search: a bigger bound (only
# ever a speed-up; the bytes never depend on it).
WORKER_ENCODER_CACHE = 1 << 19


def _grow_encoder_cache() -> None:
    from checker.search import encoding
    encoding._CACHE_LIMIT = max(encoding._CACHE_LIMIT, WORKER_ENCODER_CACHE)


def worker(cfg: TaskConfig) -> Worker:
    """The Worker of cfg's model in this Python process (kept across tasks and
    levels: its decoder cache is what makes rebuilding states cheap)."""
    key = (cfg.model, cfg.variant, cfg.constants_json, cfg.properties, cfg.projection, cfg.bits,
           cfg.check_deadlock)
    w = _workers.get(key)
    if w is None:
        if len(_workers) > 8:
            _workers.clear()
        w = _workers[key] = Worker(cfg)
    return w


def _gc_off() -> None:
    """Python's cyclic collector stays off in a worker process (as
    checker.search.engine.level_gc keeps it off during a search): states are
    acyclic, yet automatic collections re-scan every cached state and part
    again and again; `_collect()` after each chunk of work paces it instead."""
    gc.disable()


_pacer = None


def _collect() -> None:
    """checker.search.engine.GcPacer for this worker process (kept across tasks):
    a young collection of everything a task made costs ~20 us per state,
    so the survivors are frozen instead, unless cyclic garbage shows up."""
    global _pacer
    if _pacer is None:
        from checker.search.engine import GcPacer
        _pacer = GcPacer()
    _pacer.collect()


def _maybe_fail(cfg: TaskConfig, stage: str, level: int, index: int) -> None:
    """Fault injection for the retry tests: inject_failure = (stage, level,
    task index, marker file); the first attempt of that task notes itself in
    the marker file and fails."""
    if cfg.inject_failure is None or tuple(cfg.inject_failure[:3]) != (stage, level, index):
        return
    from pyspark import TaskContext
    tc = TaskContext.get()
    if tc is not None and tc.attemptNumber() == 0:
        with open(cfg.inject_failure[3], "a") as f:
            f.write(f"{stage} {level} {index}\n")
        raise RuntimeError(f"kmc: injected failure in {stage} task {index} of level {level}")


def _crash(e: BaseException) -> str:
    last = traceback.extract_tb(e.__traceback__)[-1:] if e.__traceback__ else []
    where = f" ({last[0].filename.rsplit('/', 1)[-1]}:{last[0].lineno})" if last else ""
    return f"{type(e).__name__}: {e}{where}"


def on_files(fn, index: int, inputs: Iterable):
    """fn(index, rows) over the rows of level files. A task's input is a list
    of slices: (path,) for a whole file, or (path, start byte, end byte, lowest
    key or None, key bound or None): levels.range_slices."""
    from checker.search.spark.levels import read_part
    return fn(index, (row for task in inputs for s in task for row in read_part(*s)))


def record_payload(item: tuple):
    """(partition, (tag, payload)) -> payload."""
    return item[1][1]


def route(q: int) -> int:
    """The shuffle's partition function: records are keyed by their partition."""
    return q


# ---- preflight -----------------------------------------------------------------

def preflight(cfg: TaskConfig, _index: int, _it: Iterable) -> Iterator[dict]:
    """Can this executor import kmc and build the model? (one record per task)"""
    import os
    import sys
    try:
        w = worker(cfg)
        import checker
        from checker.search import native
        import socket
        yield {"ok": True, "pid": os.getpid(), "host": socket.gethostname(), "python": sys.version.split()[0],
               "checker": getattr(checker, "__file__", "?"), "native": native.status(),
               "variables": len(w.model.variables)}
    except Exception as e:  # noqa: BLE001 - reported to the driver as one line
        yield {"ok": False, "error": _crash(e) if not _is_kmc_error(e) else " ".join(str(e).split())}


def _is_kmc_error(e: BaseException) -> bool:
    from checker.search.errors import KmcError
    from model.base import ModelConfigError
    return isinstance(e, (KmcError, ModelConfigError))


# ---- stage 1: expand -------------------------------------------------------------

def _read_frontier(cfg: TaskConfig, rows: Iterable, decoder: codec.StateDecoder,
                   actions_out: list | None = None) -> list:
    """The frontier entries (key, fp, state, canonical parts, row, index in
    row, changed) of level-file rows in BFS order, the states rebuilt by
    `decoder`, changed the mask of the variables the witness step changed
    (every bit: unknown, level 0); actions_out gets each states row's packed
    actions (for error messages)."""
    from checker.search.engine import EVERY_VARIABLE
    entries = []
    for row in rows:
        kind = row["kind"]
        if kind == STATES:
            picks = codec.unpack_picks(row.get("picks"))
            fps = codec.picked(codec.unpack_fps(row["fps"], cfg.bits), picks)
            r = -1
            if actions_out is not None:
                r = len(actions_out)
                actions_out.append(row["actions"])
            if row["states"] is None:
                raise ValueError("this level was written without its states (the depth bound)")
            packed = row.get("changed")
            changed = codec.picked(codec.unpack(packed), picks) if packed is not None else repeat(EVERY_VARIABLE)
            mine = zip(codec.picked(codec.unpack(row["keys"]), picks), fps,
                       decoder.decode_batch(row["states"], picks), picks or count(), changed)
            lo, hi = row.get("range", (None, None))
            if lo is not None or hi is not None:  # a task's key range: the row's edges are another's
                mine = (x for x in mine if (lo is None or x[0] >= lo) and (hi is None or x[0] < hi))
            entries.extend((key, fp, state, canon, r, i, c) for (key, fp, (state, canon), i, c) in mine)
    entries.sort(key=itemgetter(0))  # BFS order: keys are distinct
    return entries


@dataclass(frozen=True)
class LevelJob:
    """What a task does with the states of level `level`: check them (the
    properties, once per state, as it is the first time it is rebuilt on
    an executor), expand them, or only look for deadlocks (the depth bound)."""

    level: int
    check: bool = True
    expand: bool = True
    bound_deadlocks: bool = False
    pending: tuple = ()           # sometimes properties not witnessed before this level
    # the next level is the depth bound (never expanded, so never rebuilt):
    # check its states as they are generated, as the local engine does
    check_next: bool = False
    # the successors' parts travel and are written (False at the bound when
    # its states are checked as generated: nobody rebuilds them, and the
    # parts were most of the shuffled and written bytes of the largest level)
    keep_parts: bool = True


class _NextChecks:
    """The properties on the new successors (new to the task; a state seen in
    an earlier level was checked there) of a level whose next level is the
    depth bound, so is never expanded nor rebuilt: on the successors as
    generated, as the local engine checks them (measured in the git history of bench/README.md, "batches written as shipped":
    faster than first remaking them of the decoder's cached values). An
    EvaluationError is not raised here but noted in `failed`; the driver then
    checks the level the other way (rebuilding its states), which reports it
    in BFS order."""

    def __init__(self, w: "Worker", pending: tuple):
        self.failed = False
        self.checks = w.checks
        self.sometimes = [x for x in w.sometimes if x[0] in pending]
        self.violations: dict = {}
        self.witnesses: dict = {}

    def check(self, new: list, keys: list, changes: list) -> None:
        from model.base import EvaluationError
        violations, witnesses, sometimes = self.violations, self.witnesses, self.sometimes
        violated, witnessed = self.checks.violated, self.checks.witnessed
        for (state, _, sfp, _, _), key, changed in zip(new, keys, changes):
            try:
                # (the smallest key of each: the task's states come in key order per parent)
                for name in violated(state, changed):
                    if name not in violations or key < violations[name][0]:
                        violations[name] = [key, codec.fp_to_str(sfp)]
                if sometimes:
                    for name in witnessed(state, changed, sometimes, take=False):
                        if name not in witnesses or key < witnesses[name][0]:
                            witnesses[name] = [key, codec.fp_to_str(sfp)]
            except EvaluationError:
                self.failed = True
                return


CHUNK = 256  # parents per expand_chunk call


def _nothing(state, changed: int) -> tuple:
    return ()


class Abandoned(BaseException):
    """Raised by a `tick` to give up a task run in the driver (not an Exception:
    expand_partition reports those as the model's crash)."""


def expand_partition(cfg: TaskConfig, job: LevelJob, index: int, rows: Iterable,
                     tick=None) -> Iterator[tuple]:
    """Check and expand the frontier rows of one task (a range of the level's
    BFS keys, or one file of it); yields (partition, record):
    ("S", successors), ("T", statistics).
    tick(n), if given, is called after each chunk of n parents (the driver's
    runs: it may raise Abandoned)."""
    import time
    from checker.search.engine import expand_chunk
    from model.base import EvaluationError

    _maybe_fail(cfg, "expand", job.level, index)
    started, since = time.thread_time(), time.time()
    P = cfg.partitions
    stats: dict[str, Any] = {"task": index, "parents": 0, "generated": 0, "by_action": {},
                             "deadlock": None, "error": None, "check_error": None,
                             "violations": {}, "witnesses": {}, "next": None}
    names: Counter = Counter()
    buckets: list[list] = [[] for _ in range(P)]
    nxt = None
    clock = _PhaseClock(stats, time.thread_time)
    _gc_off()
    try:
        w = worker(cfg)
        ctx, encode_action = w.ctx, w.encode_action
        actions: list = []
        entries = _read_frontier(cfg, rows, w.decoder, actions)
        clock.lap("read")
        stats["parents"] = len(entries)
        task_seen = {e[1] for e in entries}  # the frontier is seen already
        child_key = codec.child_key
        always = bool(job.check and w.checks.always)
        violated = w.checks.violated if always else _nothing
        witnessed = w.checks.witnessed
        sometimes = [x for x in w.sometimes if x[0] in job.pending] if job.check else []
        violations, witnesses = stats["violations"], stats["witnesses"]
        stop_on_violation = cfg.stop_on_violation
        # Checks settle the previous level's stream, which comes first in BFS
        # order: they go on over the whole task even after this level's
        # expansion met an error or (stopping at the first violation) a deadlock.
        expanding, bounding = job.expand, job.bound_deadlocks
        nxt = _NextChecks(w, job.pending) if job.check_next and expanding else None
        for start in range(0, len(entries), CHUNK):
            part = entries[start:start + CHUNK]
            chunk = []
            halt = False
            for key, fp, state, canon, r, i, changed in part:
                chunk.append((state, canon, fp))
                if not (always or sometimes):
                    continue
                try:
                    bad = violated(state, changed)
                    for name in bad:
                        if name not in violations:
                            violations[name] = [key, codec.fp_to_str(fp)]
                    if sometimes:
                        for name in witnessed(state, changed, sometimes):
                            witnesses[name] = [key, codec.fp_to_str(fp)]
                except EvaluationError as e:
                    action = _action_text(codec.unpack(actions[r])[i])
                    stats["check_error"] = [key, f"evaluation error in action {action}: "
                                                 f"{' '.join(str(e).split())}; state: {_summary(state)}", "check"]
                    halt = True
                    break
                if bad and stop_on_violation:
                    halt = True  # the search stops at or before this state
                    break
            clock.lap("check")
            if halt:
                break
            if bounding and _bound_deadlocks(cfg, w, part, chunk, stats):
                bounding = False
            if expanding:
                # parents in BFS order, so a successor new to the task is new to it
                # from its first (smallest-key) witness in the task; a parent
                # whose successors raise keeps those before (its error is
                # settled in BFS order with the violations)
                errors: list = []
                res = expand_chunk(ctx, chunk, task_seen, errors)
                clock.lap("expand")
                names.update(res.action_names)
                # the new successors come parent by parent: rank = place among its parent's
                ci, rank, prev = -1, 0, None
                pfps = [e[2] for e in chunk]
                keys = [] if nxt is not None else None
                for (_, sparts, sfp, pfp, action), changed in zip(res.new, res.changed):
                    if pfp != prev:
                        prev, rank = pfp, 0
                        ci = pfps.index(pfp, ci + 1)
                    bucket = buckets[sfp % P]
                    skey = child_key(part[ci][0], rank)
                    bucket.append((sfp, skey, pfp, encode_action(action), sparts, changed))
                    if keys is not None:
                        keys.append(skey)
                    rank += 1
                    if len(bucket) >= BATCH:
                        packed = pack_records(bucket, cfg.bits, job.keep_parts)
                        yield (sfp % P, ("S", _shipped(stats, len(bucket), packed)))
                        buckets[sfp % P] = []
                clock.lap("route")
                if nxt is not None and not nxt.failed:
                    nxt.check(res.new, keys, res.changed)
                    clock.lap("next")
                if errors:
                    # after the successors its parent generated before it (BFS order)
                    ei, message = errors[0]
                    made = sum(1 for e in res.new if e[3] == chunk[ei][2])
                    stats["error"] = [child_key(part[ei][0], made), message, "evaluation"]
                    expanding = False
                if res.deadlocks and stats["deadlock"] is None:
                    dkey, dfp = part[res.deadlocks[0]][:2]
                    stats["deadlock"] = [dkey, codec.fp_to_str(dfp)]
                    if stop_on_violation:
                        expanding = False  # nothing after it in this stream can come first
            _collect()
            clock.lap("gc")
            if tick is not None:
                tick(len(part))
            if not (expanding or bounding or always or sometimes):
                break
    except Exception as e:  # noqa: BLE001 - a model bug: reported, not retried
        stats["error"] = [b"", _crash(e), "crash"]
    finally:
        _collect()
    for q, bucket in enumerate(buckets):
        if bucket:
            yield (q, ("S", _shipped(stats, len(bucket), pack_records(bucket, cfg.bits, job.keep_parts))))
    if nxt is not None:
        stats["next"] = {"violations": nxt.violations, "witnesses": nxt.witnesses, "failed": nxt.failed}
    stats["generated"] = sum(names.values())
    stats["by_action"] = dict(names)
    stats["cpu_s"] = time.thread_time() - started
    stats["span"] = _span(since)
    yield (index % P, ("T", stats))


def _span(since: float) -> list:
    """[wall-clock start, end] of a task (bench/spark_levels.py: where a
    level's wall time goes)."""
    import time
    return [since, time.time()]


def _shipped(stats: dict, n: int, packed: tuple) -> tuple:
    """Count a successor batch (n records) and its bytes handed to the shuffle (bench/)."""
    stats["shuffled"] = stats.get("shuffled", 0) + n
    stats["shuffled_bytes"] = stats.get("shuffled_bytes", 0) + sum(len(x) for x in packed if x is not None)
    return packed


class _PhaseClock:
    """Thread CPU seconds of a task by phase, in its statistics (bench/)."""

    def __init__(self, stats: dict, clock):
        self.phases = stats.setdefault("cpu_phases", {})
        self.clock = clock
        self.t = clock()

    def lap(self, phase: str) -> None:
        t = self.clock()
        self.phases[phase] = self.phases.get(phase, 0.0) + t - self.t
        self.t = t


def _bound_deadlocks(cfg: TaskConfig, w: Worker, part: list, chunk: list, stats: dict) -> bool:
    """At the depth bound the last level is not expanded, but a state without
    any successor is still a deadlock (checker.search.core.Search.at_bound).
    True: nothing after this can matter (an error, or a deadlock when the
    search stops at the first violation)."""
    from model.base import EvaluationError
    for (key, fp, *_), (state, _, _) in zip(part, chunk):
        try:
            has_successor = next(iter(w.model.successors(state)), None) is not None
        except EvaluationError as e:
            stats["error"] = [key, f"evaluation error: {e}; state: {_summary(state)}", "evaluation"]
            return True
        if not has_successor and stats["deadlock"] is None:
            stats["deadlock"] = [key, codec.fp_to_str(fp)]
            if cfg.stop_on_violation:
                return True
    return False


# ---- stage 2: merge ------------------------------------------------------------------

def write_stats(stats_dir: str, index: int, stats: dict) -> None:
    """A partition's statistics, next to the level's rows (atomically: a
    retried task replaces them whole). The run folder is shared by the
    driver and the executors."""
    import os
    os.makedirs(stats_dir, exist_ok=True)
    path = os.path.join(stats_dir, f"part-{index:05d}.msgpack")
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(codec.pack(stats))
    os.replace(tmp, path)


def expand_merge_partition(cfg: TaskConfig, job: LevelJob, out_dir: str,
                           index: int, rows: Iterable) -> Iterator[dict]:
    """Both stages in one task, without a shuffle: for a level whose frontier
    and seen fingerprints are one partition, written to one partition."""
    yield from merge_partition(cfg, job.level + 1, out_dir, index,
                               expand_partition(cfg, job, index, rows), combined=True)


def merge_partition(cfg: TaskConfig, level: int, out_dir: str, index: int,
                    items: Iterable, combined: bool = False) -> Iterator[dict]:
    """Dedup and write partition `index` of level `level` (the level being
    produced, in the temp folder out_dir): per fingerprint the witness with
    the smallest key, minus the seen fingerprints, in BFS order. Yields the
    partition's statistics (also written beside the rows). The seen
    fingerprints are those of the committed level `level - 1`, beside
    out_dir (levels.previous_level)."""
    import time
    _maybe_fail(cfg, "merge", level, index)
    started = time.thread_time(), time.time()
    _gc_off()
    try:
        yield from _merge(cfg, level, out_dir, index, items, started, combined)
    finally:
        _collect()


def _merge(cfg: TaskConfig, level: int, out_dir: str, index: int, items: Iterable, started: tuple,
           combined: bool) -> Iterator[dict]:
    import time
    started, since = started
    bits = cfg.bits
    best: dict[int, tuple] = {}  # fp -> (smallest key, its batch << 16 | index in batch)
    expand_stats: list[dict] = []
    batches: list = []  # (payload, fps, keys)
    for _, (kind, payload) in items:
        if kind == "S":
            get = best.get
            b = len(batches) << 16
            fps, keys = codec.unpack_fps(payload[0], bits), codec.unpack(payload[1])
            batches.append((payload, fps, keys))
            for i, (fp, key) in enumerate(zip(fps, keys)):
                cur = get(fp)
                if cur is None or key < cur[0]:
                    best[fp] = (key, b | i)
        else:
            expand_stats.append(payload)
    t_seen = time.thread_time()
    seen = seenruns.SeenSet(levels.previous_level(out_dir, level), index, cfg.partitions, bits)
    fresh = seen.drop_seen(set(best))
    t_seen = time.thread_time() - t_seen
    stats: dict[str, Any] = {"part": index, "new": 0, "by_action": {}, "error": None,
                             "expand": expand_stats}
    offsets: list = []
    # per row: (states, first key, last key); the new fingerprints; their actions
    rows: list = []
    new_fps: list = []
    actions: Counter = Counter()
    firsts = [b[2][0] for b in batches]   # (a lambda over `batches` would outlive its del below)
    order = sorted(range(len(batches)), key=firsts.__getitem__)
    if all(batches[a][2][-1] < batches[b][2][0] for a, b in zip(order, order[1:])):
        # the batches hold disjoint key ranges (the tasks' ranges of BFS
        # order; a batch is in key order, as its task expands its parents in
        # BFS order): the level's rows are the batches as shipped, each with
        # the indices of the states it wins
        levels.write_part(out_dir, index, _picked_rows(index, batches, order, best, fresh, rows, new_fps,
                                                       actions), offsets)
    else:  # tasks of interleaved keys (whole files): the winners sorted and packed again
        won = sorted(((key, pos >> 16, pos & 0xFFFF, fp) for fp, (key, pos) in best.items() if fp in fresh),
                     key=itemgetter(0))
        best.clear()
        new = unpack_records([b[0] for b in batches], won, bits)
        del won
        rows = [(min(BATCH, len(new) - i), new[i][1], new[min(i + BATCH, len(new)) - 1][1])
                for i in range(0, len(new), BATCH)]
        new_fps = [r[0] for r in new]
        actions.update(r[3] for r in new)
        levels.write_part(out_dir, index, level_rows(cfg, index, new), offsets)
        del new
    del batches
    best.clear()
    fresh.clear()
    stats["new"] = len(new_fps)
    try:
        w = worker(cfg)
        by_action: Counter = Counter()
        for abytes, n in actions.items():
            by_action[w.action_name(abytes)] += n
        stats["by_action"] = dict(by_action)
    except Exception as e:  # noqa: BLE001
        stats["error"] = [b"", _crash(e), "crash"]
    # the rows' index: how the next job splits the level into key ranges
    stats["rows"] = [[index, s, e, n, first, last] for (s, e), (n, first, last) in zip(offsets, rows)]
    t_run = time.thread_time()
    # the level's new fingerprints: a new sorted run (merged with the newest
    # older ones when as big), its index; older runs stay as they are
    new_fps.sort()
    seen.write_next(out_dir, level, new_fps)
    stats["seen_cpu_s"] = round(t_seen + time.thread_time() - t_run, 4)
    stats["seen_total"] = seen.count + len(new_fps)
    expand_stats.sort(key=itemgetter("task"))  # shuffle order varies between attempts
    stats["cpu_s"] = time.thread_time() - started
    stats["span"] = _span(since)
    if combined:
        stats["combined"] = True  # the expansion ran inside this task, in this thread
        stats["cpu_s"] -= sum(e.get("cpu_s", 0.0) for e in expand_stats)
    write_stats(levels.stats_dir(out_dir), index, stats)
    yield stats


def _picked_rows(index: int, batches: list, order: list, best: dict, fresh: set, rows: list,
                 new_fps: list, actions: Counter) -> Iterator[tuple]:
    """The level rows of a partition whose batches hold disjoint key ranges:
    per batch in key order, its packed columns as shipped and the indices
    of the states it wins (`picks`: new, and their fingerprint's smallest
    key; None when all are), without unpacking its states. Fills rows,
    new_fps and actions (action bytes -> count)."""
    seq = 0
    for b in order:
        payload, fps, keys = batches[b]
        base = b << 16
        picks = [i for i, fp in enumerate(fps) if fp in fresh and best[fp][1] == base | i]
        if not picks:
            continue
        n = len(picks)
        rows.append((n, keys[picks[0]], keys[picks[-1]]))
        new_fps.extend(fps[i] for i in picks)
        acts = codec.unpack(payload[3])
        actions.update(acts[i] for i in picks)
        yield (STATES, index, seq, n) + tuple(payload) + (None if n == len(fps) else codec.pack_picks(picks),)
        seq += 1


def pack_records(records: list, bits: int, keep_parts: bool = True) -> tuple:
    """A batch of successor records (fp, key, parent fp, action bytes, parts,
    changed mask) as six bytes objects for the shuffle: pickling them is a
    copy, where pickling the records costs more than a tenth of the
    expansion; sibling successors' equal parts are stored once
    (codec.pack_states). Without keep_parts the parts and masks are left out
    (None: the states are never rebuilt)."""
    from checker.search.engine import EVERY_VARIABLE
    return (codec.pack_fps([r[0] for r in records], bits),
            codec.pack([r[1] for r in records]),
            codec.pack_fps([r[2] for r in records], bits),
            codec.pack([r[3] for r in records]),
            codec.pack_states([r[4] for r in records]) if keep_parts else None,
            codec.pack([r[5] if r[5] < _WIDE else EVERY_VARIABLE for r in records])
            if keep_parts else None)


# msgpack's ints have 64 bits: the mask of a state of more variables travels
# as EVERY_VARIABLE (the state is then checked against every property)
_WIDE = 1 << 64


def unpack_records(batches: list, picks: list, bits: int) -> list:
    """The records picks = [(key, batch, index in batch, fp)] of packed
    batches, in that order; only the batches picked from are unpacked."""
    opened: dict = {}
    out = []
    for key, b, i, fp in picks:
        batch = opened.get(b)
        if batch is None:
            payload = batches[b]
            parts = codec.unpack_states(payload[4]) if payload[4] is not None else None
            changed = codec.unpack(payload[5]) if payload[5] is not None else None
            batch = opened[b] = (codec.unpack_fps(payload[2], bits), codec.unpack(payload[3]), parts, changed)
        out.append((fp, key, batch[0][i], batch[1][i], batch[2][i] if batch[2] is not None else None,
                    batch[3][i] if batch[3] is not None else None))
    return out


def level_rows(cfg: TaskConfig, index: int, new: list) -> Iterator[tuple]:
    """The rows of one partition of a level: its new states, (fp, key, parent
    fp, action bytes, parts, changed mask) in BFS order, by batches. States
    whose parts were left out (the depth bound) have None there."""
    bits = cfg.bits
    for seq, start in enumerate(range(0, len(new), BATCH)):
        batch = new[start:start + BATCH]
        yield (STATES, index, seq, len(batch),
               codec.pack_fps([r[0] for r in batch], bits),
               codec.pack([r[1] for r in batch]),
               codec.pack_fps([r[2] for r in batch], bits),
               codec.pack([r[3] for r in batch]),
               codec.pack_states([r[4] for r in batch]) if batch[0][4] is not None else None,
               codec.pack([r[5] for r in batch]) if batch[0][5] is not None else None,
               None)


def _action_text(abytes) -> str:
    if abytes is None:
        return "Init"
    from checker.search.encoding import decode
    from model.base import Action
    name, params = decode(abytes)
    return str(Action(name, tuple(params)))


def _summary(state, limit: int = 300) -> str:
    text = repr(state)
    return text if len(text) <= limit else text[:limit] + "..."


# ---- after a stop: counts up to the first event ------------------------------------

def recount_generated(cfg: TaskConfig, cut_parent: bytes, cut_fp: int | None, index: int,
                      rows: Iterable) -> Iterator[dict]:
    """Successors generated before the cut, as the local engine counts them
    when it stops: every successor of the parents before cut_parent and, of
    cut_parent, those up to the first one whose fingerprint is cut_fp."""
    w = worker(cfg)
    ctx = w.ctx
    fingerprint, select = ctx.fingerprint, ctx.select
    from checker.search.encoding import encode
    names: Counter = Counter()
    for key, fp, state, canon, *_ in _read_frontier(cfg, rows, w.decoder):
        if key > cut_parent:
            break
        if key < cut_parent:
            names.update(a[0] for a, _ in w.model.successors(state))
            continue
        if cut_fp is None:
            continue  # a deadlocked parent: it has no successors
        for action, succ in w.model.successors(state):
            names[action[0]] += 1
            sparts = [p if a is b else encode(b) for p, a, b in zip(canon, state, succ)]
            if fingerprint(select(sparts)) == cut_fp:
                break
    yield dict(names)


def recount_distinct(cfg: TaskConfig, cut: bytes, inclusive: bool, index: int,
                     rows: Iterable) -> Iterator[dict]:
    """New states of the level up to the cut, per action name of their witness."""
    w = worker(cfg)
    names: Counter = Counter()
    for row in rows:
        if row["kind"] != STATES:
            continue
        picks = codec.unpack_picks(row.get("picks"))
        for key, abytes in zip(codec.picked(codec.unpack(row["keys"]), picks),
                               codec.picked(codec.unpack(row["actions"]), picks)):
            if key < cut or (inclusive and key == cut):
                names[w.action_name(abytes)] += 1
    yield dict(names)


# ---- counterexamples -------------------------------------------------------------------

def find_pointers(cfg: TaskConfig, wanted: frozenset, index: int, rows: Iterable) -> Iterator[tuple]:
    """(fp, parent fp, action bytes) of the wanted fingerprints in these rows."""
    for row in rows:
        if row["kind"] != STATES:
            continue
        fps = codec.unpack_fps(row["fps"], cfg.bits)
        picks = codec.unpack_picks(row.get("picks"))
        hits = [i for i in (picks if picks is not None else range(len(fps))) if fps[i] in wanted]
        if not hits:
            continue
        parents = codec.unpack_fps(row["parents"], cfg.bits)
        actions = codec.unpack(row["actions"])
        for i in hits:
            yield (codec.fp_to_str(fps[i]), codec.fp_to_str(parents[i]), actions[i])
