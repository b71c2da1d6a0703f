"""The `auto` engine: the local engine while the state space is small, every
core of the machine once a level is big enough to pay.

A run starts as checker.engine.Search (one process, nothing started on the
side). At the start of a level -- a level boundary, where nothing is half
done -- whose frontier holds at least `threshold` states (and when the
machine has more than one core and the level is not the depth bound), the
search is handed over: the frontier (its states' canonical parts, in BFS
order) and the seen fingerprints are written as that level's files in the
spark engine's format (checker/spark/levels.py), split into one fingerprint
partition per core; then the remaining levels run on a pool of forked worker
processes with the spark engine's task functions (checker/spark/tasks.py:
expand a partition's level file, route the successors by fingerprint
partition, merge per partition keeping the smallest BFS key per
fingerprint), and the spark engine's driver logic (checker.spark.engine:
settling each level's stream, stopping in the middle of a level at the first
violation with the local engine's counts, the depth bound, counterexamples
from parent pointers) -- without a JVM: the shuffle goes through files in a
temporary folder, one worker per partition, each keeping its own
partition's records in memory between the two stages of a level.

Why identical answers: the handed-over level's BFS key of a state is its
index in the local frontier, i.e. the local engine's discovery order, and
from there the spark engine's tasks reproduce the local engine's (its
tests/spark/test_equivalence.py). The levels before the handover were
checked by the local engine (so job L, the first on the pool, only expands);
their parent pointers stay in the local engine's level logs, where the
counterexamples' first steps are looked up.

The level files live in a temporary folder removed at the end, whatever
the end (^C included); a worker that dies is one `kmc: error:` line (exit 3).
"""
from __future__ import annotations

import dataclasses
import json
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
from functools import partial
from itertools import chain
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from checker.encoding import encode
from checker.engine import DEADLOCK, NO_ACTION, CheckOptions, CheckResult, Search
from checker.errors import EXIT_EVALUATION, KmcError
from model.base import Model, Property

# Frontier size from which the remaining levels go parallel. Measured on the
# kip966 reference configuration (bench/auto_vs_local.py, 2 cores): a level
# of N states costs the local engine ~0.36 ms per state; on the pool ~half
# that plus a fixed ~0.1-0.2 s per level (fork, files, the first level's
# cold caches), so levels of a few thousand states already pay; below
# THRESHOLD the whole check usually takes a second or two and stays local.
THRESHOLD = 10_000


class ParallelError(KmcError):
    """A worker process of the parallel search died or failed (exit 3)."""

    exit_code = EXIT_EVALUATION


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# ---- the worker pool ------------------------------------------------------------------

class Pool:
    """n forked worker processes, each running the calls sent to it (by
    index: a partition's expand and merge run in the same worker). A worker
    ignores ^C (the parent stops them); a worker that dies, or a call that
    raises, is a ParallelError in the parent, never a hang."""

    def __init__(self, n: int):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self.procs: list = []
        self.conns: list = []
        try:
            for i in range(n):
                parent, child = ctx.Pipe()
                p = ctx.Process(target=_worker_main, args=(child, i), name=f"kmc-worker-{i}",
                                daemon=True)
                p.start()
                child.close()
                self.procs.append(p)
                self.conns.append(parent)
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self.procs)

    def run(self, calls: Sequence[tuple], what: str) -> list:
        """calls: (worker index, fn, args); fn(*args) in that worker. The
        results in the calls' order. Calls to one worker run one after the
        other, in order."""
        from multiprocessing.connection import wait
        queues: list[list] = [[] for _ in self.procs]
        for k, (w, fn, args) in enumerate(calls):
            queues[w % len(self.procs)].append((k, fn, args))
        results: list = [None] * len(calls)
        busy: dict = {}   # worker -> call index
        for w, q in enumerate(queues):
            if q:
                k, fn, args = q.pop(0)
                self.conns[w].send((fn, args))
                busy[w] = k
        while busy:
            ready = wait([self.conns[w] for w in busy] + [self.procs[w].sentinel for w in busy])
            for w in list(busy):
                conn = self.conns[w]
                if conn in ready or conn.poll():
                    try:
                        status, value = conn.recv()
                    except (EOFError, OSError):
                        self._died(w, what)
                    if status != "ok":
                        raise ParallelError(f"a worker of the parallel search failed while {what}: {value}")
                    results[busy.pop(w)] = value
                    if queues[w]:
                        k, fn, args = queues[w].pop(0)
                        conn.send((fn, args))
                        busy[w] = k
                elif self.procs[w].sentinel in ready:
                    self._died(w, what)
        return results

    def _died(self, w: int, what: str):
        p = self.procs[w]
        p.join(1)
        code = p.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        raise ParallelError(f"worker process {p.pid} of the parallel search died ({how}) while {what}")

    def close(self) -> None:
        """Stop every worker now (they hold nothing that must be kept)."""
        for c in self.conns:
            c.close()
        for p in self.procs:
            if p.is_alive():
                p.kill()
        for p in self.procs:
            p.join(5)
        self.procs, self.conns = [], []


def _worker_main(conn, index: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles ^C and stops the workers
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            break
        fn, args = msg
        try:
            reply = ("ok", fn(*args))
        except BaseException as e:  # noqa: BLE001 - reported to the parent as one line
            reply = ("error", f"{type(e).__name__}: {' '.join(str(e).split())}")
        try:
            conn.send(reply)
        except (OSError, ValueError):
            break
    os._exit(0)  # no atexit handlers of the parent (its temp folders are its own)


# ---- the calls a worker runs -------------------------------------------------------------

# records of this worker's own partition between the expand and the merge of a level
_HELD: dict = {}


def _shuffle_path(shuffle_dir: str, level: int, src: int, dst: int) -> str:
    return os.path.join(shuffle_dir, f"{level:05d}-{src:03d}-{dst:03d}.pickle")


def expand_call(cfg, job, index: int, path: str, shuffle_dir: str) -> int:
    """Stage 1 of a level for partition `index`: tasks.expand_partition on
    its level file; the records of other partitions go to shuffle files,
    this partition's stay in memory for merge_call."""
    from checker.spark import tasks
    P = cfg.partitions
    outs: dict = {}
    own: list = []
    _HELD.clear()
    try:
        for q, record in tasks.on_files(partial(tasks.expand_partition, cfg, job), index, [path]):
            q %= P
            if q == index:
                own.append((q, record))
                continue
            f = outs.get(q)
            if f is None:
                f = outs[q] = open(_shuffle_path(shuffle_dir, job.level, index, q), "wb", buffering=1 << 20)
            pickle.dump((q, record), f, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        for f in outs.values():
            f.close()
    _HELD[(job.level, index)] = own
    return len(own)


def _read_shuffle(path: str):
    try:
        f = open(path, "rb")
    except FileNotFoundError:  # that task sent nothing here
        return
    with f:
        load = pickle.load
        while True:
            try:
                yield load(f)
            except EOFError:
                break
    os.unlink(path)


def merge_call(cfg, level: int, out_dir: str, index: int, shuffle_dir: str) -> list:
    """Stage 2: tasks.merge_partition of partition `index` of the produced
    level over its own records and the other partitions' shuffle files."""
    from checker.spark import tasks
    own = _HELD.pop((level - 1, index), [])
    others = [_read_shuffle(_shuffle_path(shuffle_dir, level - 1, src, index))
              for src in range(cfg.partitions) if src != index]
    return list(tasks.merge_partition(cfg, level, out_dir, index, chain(own, *others)))


def collect_call(fn, index: int, path: str, mapper=None) -> list:
    """fn(index, rows) over one level file, collected (as a Spark collect)."""
    from checker.spark import tasks
    out = tasks.on_files(fn, index, [path])
    return [mapper(x) for x in out] if mapper is not None else list(out)


class _Stage:
    """What SparkSearch's driver logic does with an RDD of a level's files:
    .map(f).collect() or .collect(), each file a call on the pool."""

    def __init__(self, pool: Pool, files: list, fn, mapper=None):
        self.pool, self.files, self.fn, self.mapper = pool, files, fn, mapper

    def map(self, mapper) -> "_Stage":
        assert self.mapper is None
        return _Stage(self.pool, self.files, self.fn, mapper)

    def collect(self) -> list:
        parts = self.pool.run([(i, collect_call, (self.fn, i, path, self.mapper))
                               for i, path in enumerate(self.files)], "reading a level")
        return [x for p in parts for x in p]


# ---- the driver -------------------------------------------------------------------------

def _spark_engine():
    from checker.spark import engine
    return engine


def pool_search_class():
    """PoolSearch, defined on first use (importing the spark engine's driver
    costs a small check nothing)."""
    global _PoolSearch
    if _PoolSearch is None:
        _PoolSearch = _define_pool_search(_spark_engine().SparkSearch)
    return _PoolSearch


_PoolSearch = None


def _define_pool_search(SparkSearch):
    from checker.spark import levels, tasks

    class PoolSearch(SparkSearch):
        """SparkSearch's driver over a Pool instead of Spark, from a level
        handed over by the local engine (see the module's docstring)."""

        def __init__(self, spec, options: CheckOptions, run_dir: Path, pool: Pool, handover: int,
                     local_pointers: Callable[[int, set], dict], start: float):
            super().__init__(spec, options, run_dir=run_dir, partitions=len(pool), driver_frontier=0)
            self.start = start
            self.pool = pool
            self.handover = handover
            self.local_pointers = local_pointers
            self.shuffle_dir = str(Path(run_dir) / "shuffle")
            os.makedirs(self.shuffle_dir, exist_ok=True)
            self.max_partitions = self._spark_partitions = len(pool)

        def task_config(self) -> "tasks.TaskConfig":
            o = self.options
            return tasks.TaskConfig(
                model=self.spec.model, variant=self.spec.variant,
                constants_json=json.dumps(self.spec.constants, sort_keys=True),
                properties=tuple(p.name for p in self.properties),
                view=tuple(self.view) if self.view is not None else None,
                bits=o.fingerprint_bits, check_deadlock=o.check_deadlock,
                stop_on_violation=o.stop_on_violation, partitions=len(self.pool))

        # -- what Spark did --

        def _read(self, level_path: Path, fn):
            files = levels.part_files(level_path)
            if not files:
                raise ParallelError(f"no level files in {level_path}")
            return _Stage(self.pool, files, fn)

        def _job(self, what: str, fn):
            return fn()

        def _partitions_for(self, frontier: int, previous: int = 0) -> int:
            return len(self.pool)

        def _expand_job(self, totals, job, tmp: Path) -> list[dict]:
            L = job.level
            cfg = self.cfg
            here = levels.level_dir(self.run_dir, L)
            files = levels.part_files(here)
            if len(files) != cfg.partitions:
                raise ParallelError(f"level {L}: {len(files)} files for {cfg.partitions} partitions")
            shutil.rmtree(tmp, ignore_errors=True)
            self.in_driver = False
            self.pool.run([(i, expand_call, (cfg, job, i, path, self.shuffle_dir))
                           for i, path in enumerate(files)], f"expanding level {L}")
            parts = self.pool.run([(q, merge_call, (cfg, L + 1, str(tmp), q, self.shuffle_dir))
                                   for q in range(cfg.partitions)], f"merging level {L + 1}")
            parts = sorted((s for p in parts for s in p), key=itemgetter("part"))
            return self._check_parts(L, cfg, tmp, parts)

        def _job_for(self, totals, expand: bool):
            # the levels up to the handover were checked by the local engine
            job = super()._job_for(totals, expand)
            return dataclasses.replace(job, check=job.level > self.handover)

        def _raise(self, error: tuple, level: int):
            if error[2] == "crash":  # not Spark's wording: a bug of the model, met in a worker
                raise ParallelError(f"the model failed in a worker process near level {level}: {error[1]}")
            return super()._raise(error, level)

        def _pointers(self, level: int, wanted: set) -> dict:
            if level <= self.handover:
                return self.local_pointers(level, wanted)
            return super()._pointers(level, wanted)

        # -- the levels after the handover --

        def run_from(self, totals) -> CheckResult:
            self.cfg = self.task_config()
            max_depth = self.options.max_depth
            while not totals.done:
                L = totals.level
                bound = max_depth is not None and L >= max_depth
                if bound or (L > 0 and totals.per_level_distinct[L] == 0):
                    totals = self._finish(totals, bound)
                    break
                t0 = time.perf_counter()
                frontier = totals.per_level_distinct[L]
                totals, commit = self._level(totals)
                seconds = time.perf_counter() - t0
                if not commit:
                    break
                totals.level_times.append([L + 1, round(seconds, 3), frontier,
                                           round(self._last_cpu[0], 3), round(self._last_cpu[1], 3), "pool"])
                levels.commit_level(self.run_dir, L + 1, totals.to_json())
                self._report(totals, seconds, expanded=frontier, where="pool")
            self.level_times = totals.level_times
            return self._result(totals)

    return PoolSearch


# ---- the handover -------------------------------------------------------------------

class _HandedOver(BaseException):
    """Carries the parallel part's result out of the local engine's loop."""

    def __init__(self, result: CheckResult):
        super().__init__()
        self.result = result


class _Levels(list):
    """Search.levels, which the local engine appends a level's log to when it
    starts expanding a level (after its depth-bound check): the level
    boundary where AutoSearch may hand over."""

    def __init__(self, hook):
        super().__init__()
        self.hook = hook

    def append(self, log) -> None:
        if len(self):  # level 0's log comes from the initial states, before any frontier
            self.hook(len(self) - 1)
        super().append(log)


def _entries(frontier) -> Iterable[tuple]:
    """A frontier's (state, parts, fp) entries in order (a list, or a
    checker.frontier.Frontier)."""
    if hasattr(frontier, "chunks"):
        for chunk in frontier.chunks():
            yield from chunk
    else:
        yield from frontier


class AutoSearch(Search):
    """The local engine, which hands the rest of the search over to a pool
    of processes at the first level boundary where the frontier holds at
    least `threshold` states (see the module's docstring)."""

    def __init__(self, model: Model, properties: Iterable[Property], options: CheckOptions, spec,
                 threshold: int = THRESHOLD, workers: int | None = None):
        super().__init__(model, properties, options)
        self.spec = spec
        self.threshold = threshold
        self.workers = workers if workers is not None else cores()
        self.frontier = None          # the frontier being built (or the initial one)
        self.where: list = []         # [level, "local" | "pool"] per level (level 0: its initial states)
        self.handover_level: int | None = None
        self.level_times: list = []
        if self.workers > 1:
            self.levels = _Levels(self._boundary)

    def run(self) -> CheckResult:
        try:
            result = super().run()
        except _HandedOver as h:
            return h.result
        self.where = [[lv, "local"] for lv in range(len(result.per_level_distinct))]
        return result

    # the frontier the next level expands: the initial states', then each level's
    def _initial(self):
        self.frontier = super()._initial()
        return self.frontier

    def _absorb(self, level, log, res, chunk, next_frontier) -> None:
        super()._absorb(level, log, res, chunk, next_frontier)
        self.frontier = next_frontier

    def _boundary(self, level: int) -> None:
        """The local engine is about to expand `level` (not the depth bound)."""
        frontier = self.frontier
        if frontier is None or len(frontier) < self.threshold or self.stopped:
            return
        if len(self.per_level_distinct) != level + 1 or len(frontier) != self.per_level_distinct[level]:
            return  # not the shape this hand-over expects: go on locally
        raise _HandedOver(self._go_parallel(level, frontier))

    def _go_parallel(self, L: int, frontier) -> CheckResult:
        engine = _spark_engine()
        PoolSearch = pool_search_class()
        from checker.spark import levels
        P = self.workers
        self.spec = engine.SpecConfig.of(self.spec)
        root = Path(tempfile.mkdtemp(prefix="kmc-auto-", dir=getattr(self.options, "spill_dir", None)))
        pool = None
        try:
            cfg = _task_config(self, P)
            _write_level(root, L, cfg, _entries(frontier), self.seen)
            totals = self._totals(L, P, engine)
            levels.commit_level(root, L, totals.to_json())
            # the forked workers need none of the local engine's search state
            if isinstance(frontier, list):
                frontier.clear()
            elif hasattr(frontier, "close"):
                frontier.close()
            self.frontier = None
            self.seen = set()
            from checker.spark import tasks
            tasks.worker(cfg)   # the model built once, here: the forked workers inherit it
            pool = Pool(P)
            search = PoolSearch(self.spec, self.options, root, pool, L, self._local_pointers, self.start)
            result = search.run_from(totals)
            pool.close()
            # the workers' peak too (they are waited for: RUSAGE_CHILDREN has them)
            result.peak_memory_kb = max(result.peak_memory_kb, _children_peak_kb())
            self.handover_level = L
            self.level_times = search.level_times
            n = len(result.per_level_distinct)
            self.where = [[lv, "local" if lv <= L else "pool"] for lv in range(n)]
            return result
        finally:
            if pool is not None:
                pool.close()
            shutil.rmtree(root, ignore_errors=True)

    def _totals(self, L: int, P: int, engine):
        from checker.spark import codec
        violations = []
        for seq, (name, (lv, fp)) in enumerate(self.first_violation.items()):
            # the local engine's order: by level, then as found (a property
            # at level lv in stream lv-1, a deadlock at lv in stream lv)
            stream = lv if name == DEADLOCK else lv - 1
            violations.append([name, lv, codec.fp_to_str(fp), [stream, f"{seq:08x}", 0]])
        return engine._Totals(
            level=L, partitions=P, per_level_distinct=list(self.per_level_distinct),
            generated=self.generated, per_action_generated=dict(self.per_action_generated),
            per_action_distinct=dict(self.per_action_distinct), sometimes=dict(self.sometimes),
            violations=violations,
            level_times=[[lv, None, None, None, None, "local"] for lv in range(1, L + 1)])

    def _local_pointers(self, level: int, wanted: set) -> dict:
        """{fp: (parent fp, action bytes)} from the local engine's level logs."""
        log = self.levels[level]
        action_of = getattr(log, "action", None) or (lambda i: log.actions[i])
        out = {}
        for fp in wanted:
            i = log.find(fp)
            aid = action_of(i)
            out[fp] = (log.parent(i), None if aid == NO_ACTION else encode(tuple(self.actions[aid])))
        return out


def _children_peak_kb() -> int:
    import resource
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return rss // 1024 if sys.platform == "darwin" else rss


THRESHOLD_ENV = "KMC_AUTO_THRESHOLD"   # tests and tuning: another threshold
WORKERS_ENV = "KMC_AUTO_WORKERS"       # tests and tuning: another number of workers


def _env_int(name: str) -> int | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        from checker.errors import SpecError
        raise SpecError(f"{name} must be a number >= 1, not {text!r}")
    return n


def check_auto(model: Model, properties: Iterable[Property], options: CheckOptions, spec,
               threshold: int | None = None, workers: int | None = None) -> tuple[CheckResult, dict]:
    """Check as the local engine does, going parallel from a frontier of
    `threshold` states (default THRESHOLD, or $KMC_AUTO_THRESHOLD) when
    there is more than one worker (default one per core, or
    $KMC_AUTO_WORKERS). Returns the result and where each level ran:
    {"workers", "threshold", "handover_level", "levels": ["local" | "pool"]}."""
    if threshold is None:
        threshold = _env_int(THRESHOLD_ENV) or THRESHOLD
    if workers is None:
        workers = _env_int(WORKERS_ENV)
    search = AutoSearch(model, properties, options, spec, threshold, workers)
    result = search.run()
    info = {"workers": search.workers if search.handover_level is not None else 1,
            "threshold": threshold, "handover_level": search.handover_level,
            "levels": [w for _, w in search.where]}
    return result, info


def _task_config(search: Search, P: int):
    from checker.spark import tasks
    spec = search.spec
    o = search.options
    return tasks.TaskConfig(
        model=spec.model, variant=spec.variant,
        constants_json=json.dumps(spec.constants, sort_keys=True),
        properties=tuple(p.name for p in search.properties),
        view=tuple(search.view) if search.view is not None else None,
        bits=o.fingerprint_bits, check_deadlock=o.check_deadlock,
        stop_on_violation=o.stop_on_violation, partitions=P)


def _write_level(root: Path, L: int, cfg, entries: Iterable[tuple], seen) -> None:
    """Level L's files (into its temp folder) from the local engine's
    frontier: per fingerprint partition its states in BFS order (the key of
    a state is its index in the frontier: the local engine's discovery
    order), and the partition's seen fingerprints as one sorted run
    (checker/spark/seen.py). The level's parent pointers stay in the local
    engine's log (AutoSearch._local_pointers)."""
    from checker.spark import codec, levels, tasks
    from checker.spark import seen as seenruns
    P, bits = cfg.partitions, cfg.bits
    parts: list[list] = [[] for _ in range(P)]
    key = codec.key_component
    for i, (_, state_parts, fp) in enumerate(entries):
        parts[fp % P].append((fp, key(i), 0, None, list(state_parts)))
    seen_by_part: list[list] = [[] for _ in range(P)]
    for fp in seen:
        seen_by_part[fp % P].append(fp)
    tmp = levels.tmp_level_dir(root, L)
    for q in range(P):
        levels.write_part(tmp, q, tasks.level_rows(cfg, q, parts[q]))
        seenruns.write_seen(tmp, L, q, P, bits, sorted(seen_by_part[q]))
