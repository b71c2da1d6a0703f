"""The `auto` engine: the local engine while the state space is small, every
core of the machine once a level is big enough to pay.

A run is the search core's (checker.search.core.Search) with this module's
Expander, `AutoExpander`: it expands levels as the local engine does until
a level boundary whose frontier holds at least `threshold` states (when the
machine has more than one core and one sat idle during the level before);
from there on the pool expands every level.

The pool (`SharedPool`): workers forked once, at the hand-over, that live
to the end of the run, and one seen set in memory they all share
(checker/search/_claims.h: ClaimTable, open addressing with atomic inserts).
Every per-state step runs in the workers; the coordinator (the run's
process) works per unit of states and per level only. A level goes in three
steps:

1. expand: the level is cut into units (_units: from 2,048 states down
   to 64 at the end of each worker's share; a unit never crosses one of
   the local engine's chunks, nor a change of the worker holding its
   states), handed out to whichever worker is free, its own first, then
   one nobody holds, then the last of another's that has records. A
   worker takes its unit's states as it kept them or rebuilds them from
   the previous level's records, expands them with
   checker.search.expand.expand_chunk -- the local engine's expansion and
   checks -- against the shared table: each
   successor carries a key, (its parent's index in the level, its ordinal
   among the parent's successors), which orders the successors as the local
   engine meets them; an insert keeps a fingerprint's smallest key. A
   successor is new to the worker (encoded, checked, kept) when the table
   holds no smaller key for it: an earlier level's state has key 0. The
   worker keeps what it claimed, packed by column, and reports the unit's
   generated counts and its first stop (a violation when the search stops at
   one, a deadlock, an evaluation error) with its key.
2. filter: once every unit is expanded, each worker keeps the successors
   whose key is still their fingerprint's smallest (one C call per unit,
   which also marks them an earlier level's for the next one), up to the
   first stop in key order, and reports per unit how many, their actions'
   counts, the first violation of each property, the witnesses and the
   actions it had not reported before.
3. write: the coordinator sums the units in order (the local engine's
   absorb: counters, action ids in order of first use, violations, then
   deadlocks, a local chunk at a time), gives each unit its place in the next
   level, and the workers write their states' level log entries at those
   places (pwrite) and the next level's records (checker/search/frontier.py's
   format) to their own files: of the states a worker holds as objects,
   only its last units' (a quarter of them, TAIL_SHARE, and all beyond
   three quarters of a fair share), which another worker may take, unless
   the level is saved (a checkpoint) or read again at the depth bound
   (packing them was most of what the pool cost beyond the local engine).

Why the answers are the local engine's: the local engine keeps, for each
new state, its first discovery in BFS order (parents in level order, each
parent's successors in the model's order); a key is that order, and the
table ends each level holding every new state's smallest key, whatever
order the workers got there in. So the kept states, their parents and
actions (the level logs: counterexamples), the next level's order, the
distinct counts per level and per action equal the local engine's. A
property checked on a successor depends only on the state (the variables a
step did not change kept their checked values), so the first violation in
key order is the local engine's; generated counts are summed over the units
before it, and its own unit's up to it, as expand_chunk stops there; an
evaluation error drops its local chunk, as the local engine raises before
absorbing it. A worker that claimed a state another worker finds earlier
only did work twice; nothing it reports for that state counts.

The table is sized per level (and doubled between units when it is 70%
full, no worker running); the run's levels and checkpoints are the local
engine's files (each worker's records are a level's frontier file, which the
local engine reads in its own chunks), so either engine resumes the other's.
^C and SIGTERM stop the coordinator, which stops the workers; a worker that
dies is one `kmc: error:` line (exit 3), never a hang; a coordinator killed
outright ends its workers (their pipes close).

The graph-recording search of liveness checks (its own absorb), 128-bit
fingerprints and the pure-Python hot path take `PoolExpander`, the pool of
earlier releases: forked workers per level, each with its own copy of the
seen set, their results absorbed by the coordinator in chunk order.
"""
from __future__ import annotations

import os
import pickle
import selectors
import signal
import time
from collections import Counter
from itertools import chain, repeat
from typing import Iterable

from checker.search.core import CHUNK_STATES, CheckOptions, Search
from checker.search.engine import LocalExpander
from checker.search.expand import ChunkResult, expand_chunk
from checker.search.result import DEADLOCK, CheckResult
from checker.search.errors import EXIT_EVALUATION, EngineEvaluationError, KmcError
from checker.search.proc import HAVE_PROC, cpu_idle, pss, rss
from model.base import Model, Property

# Frontier size from which the remaining levels go parallel: the workers are
# forked once and a level costs the coordinator a few messages per unit and
# per level, so a level of a few hundred states already pays (bench/scaling.py),
# and the narrow levels before it are per-state work in the coordinator;
# below it the whole check takes a fraction of a second (and stays one process).
THRESHOLD = 250
# ... 1,000 where the pool is PoolExpander (the liveness graph, 128-bit
# fingerprints, the pure-Python hot path), whose workers are forked per level
PER_LEVEL_THRESHOLD = 1_000
# ... and when at least this much of a core sat idle during the level before
IDLE_CORES = 0.5
# The pool's workers measure their memory at a level's end, and say their
# resident set with each unit (--max-memory's upper bound); within a level the
# coordinator reads the tree's /proc (its cost grows with the workers) only
# once this long has passed since the last measurement
MID_LEVEL_MEMORY_S = 10.0
# ... and checks a stop, the limits and progress at most this often (seconds)
CHECK_EVERY_S = 0.02


class ParallelError(KmcError):
    """A worker process of the parallel search died or failed (exit 3)."""

    exit_code = EXIT_EVALUATION


def _worker_died(p, level: int) -> ParallelError:
    """The error for worker process `p`, found dead while expanding `level`."""
    p.join(5)
    code = p.exitcode
    how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    return ParallelError(f"worker process {p.pid} of the parallel search died ({how}) while "
                         f"expanding level {level}")


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _entries(frontier) -> Iterable[tuple]:
    """A frontier's (state, parts, fp) entries in order (a list, or a
    checker.search.frontier.Frontier)."""
    if hasattr(frontier, "chunks"):
        for chunk in frontier.chunks():
            yield from chunk
    else:
        yield from frontier


class IdleMeter:
    """How many cores sat idle since the last call, from /proc/stat (Linux):
    while the local engine runs, one core is its own, so a second core idle
    during its last level is one the workers would get. None: unknown (no
    /proc/stat, or too short an interval to tell)."""

    MIN_JIFFIES = 20   # across all cores (~0.1 s on two): below this, no verdict

    def __init__(self, n_cores: int):
        self.cores = n_cores
        self.last = cpu_idle()

    def idle_cores(self) -> float | None:
        now, last = cpu_idle(), self.last
        self.last = now
        if now is None or last is None or now[1] - last[1] < self.MIN_JIFFIES:
            return None
        return self.cores * (now[0] - last[0]) / (now[1] - last[1])


class AutoExpander:
    """The auto engine's levels: the local engine's (LocalExpander) until the
    first level boundary where the frontier holds at least `threshold`
    states and, workers not given, a second core sat idle during the level
    before (a shared machine whose other cores are busy gains nothing from
    more processes: the hand-over waits for a later level); from there on
    PoolExpander's."""

    def __init__(self, threshold: int | None = None, workers: int | None = None):
        self.threshold = threshold   # (None: THRESHOLD, or PER_LEVEL_THRESHOLD for PoolExpander)
        self.meter = IdleMeter(cores()) if workers is None else None
        self.workers = workers if workers is not None else cores()
        self.local = LocalExpander()
        self.pool = None   # SharedPool (or PoolExpander where it does not fit), from the hand-over
        self.handover_level: int | None = None
        self.busy_levels: list = []    # levels not handed over because no core was idle

    def expand(self, search: Search, level: int, frontier, log, keep: bool):
        if self.handover_level is None and self._hand_over(search, level, frontier):
            self.handover_level = level
            self.pool = SharedPool(self.workers) if shared_pool_fits(search) else PoolExpander(self.workers)
        expander = self.pool if self.handover_level is not None else self.local
        return expander.expand(search, level, frontier, log, keep)

    def close(self) -> None:
        """The run is over (however it ended): the pool's workers stop."""
        close = getattr(self.pool, "close", None)
        if close is not None:
            close()

    def _threshold(self, search: Search) -> int:
        if self.threshold is not None:
            return self.threshold
        return THRESHOLD if shared_pool_fits(search) else PER_LEVEL_THRESHOLD

    def _hand_over(self, search: Search, level: int, frontier) -> bool:
        idle = self.meter.idle_cores() if self.meter is not None else None   # during the last level
        if self.workers <= 1 or len(frontier) < self._threshold(search) or search.stopped:
            return False
        if idle is not None and idle < IDLE_CORES:
            self.busy_levels.append(level)
            return False
        return True

    def where(self, search: Search) -> dict:
        """Where each level ran (level 0: its initial states): "local" or
        "pool" (the parallel workers); summary.json's "auto"."""
        hand = self.handover_level
        levels = len(search.per_level_distinct)
        return {"name": "auto", "workers": self.workers if hand is not None else 1,
                "threshold": self._threshold(search), "handover_level": hand,
                "levels": ["local" if hand is None or lv <= hand else "pool" for lv in range(levels)],
                # levels past the threshold left local: the other cores were busy
                "busy_levels": list(self.busy_levels)}


class PoolExpander:
    """A level expanded by forked workers, one per core (the module's
    docstring); the next level kept packed by chunk (_PackedLevel), which
    the next level's workers rebuild."""

    def __init__(self, workers: int):
        self.workers = workers

    def expand(self, search: Search, level: int, frontier, log, keep: bool):
        bits = search.options.fingerprint_bits
        if isinstance(frontier, _PackedLevel):
            entries = frontier
        elif getattr(frontier, "path", None) is not None:   # packed on disk: stays packed
            entries = _PackedLevel.of_frontier(frontier, bits)
        else:
            entries = list(_entries(frontier))
        nxt = _PackedLevel(bits) if keep else search.new_frontier(keep=False)
        self._level(search, level, log, entries, nxt)
        return nxt

    def _level(self, search: Search, level: int, log, entries, nxt) -> None:
        """Expand `entries` (level `level`) into level + 1: chunk c by worker
        c % n, absorbed here in chunk order (BFS order) keeping only the
        states new to the seen set at that point."""
        chunks = (entries.chunks() if isinstance(entries, _PackedLevel) else
                  [entries[i:i + CHUNK_STATES] for i in range(0, len(entries), CHUNK_STATES)])
        n = max(1, min(self.workers, len(chunks)))
        keep = isinstance(nxt, _PackedLevel)
        workers = _Workers(search, chunks, n, keep, level)
        seen = search.seen
        done = 0
        try:
            for c, chunk in enumerate(chunks):
                res = workers.result(c)
                # the worker's "new" is relative to its own view of the seen
                # set (the level's start plus what it found itself): a
                # superset of what is new here, in the same order
                fresh = []
                index = {}
                for i, e in enumerate(res.new):
                    fp = e[2]
                    if fp not in seen:
                        seen.add(fp)
                        index[i] = len(fresh)
                        fresh.append(e)
                res.new = fresh
                res.violations = [(name, index[i]) for name, i in res.violations if i in index]
                res.witnesses = [(name, index[i]) for name, i in res.witnesses if i in index]
                search.absorb(level + 1, log, res, chunk, nxt)
                if search.stopped:
                    break
                done += len(chunk)
                # (the workers' memory too: they are the run's processes)
                search.between_chunks(level, len(entries) - done + len(nxt))
            # the level's end: the parent and what the workers held at their ends
            search.memory.measure(exclude=[p.pid for p in workers.procs], extra=sum(workers.held.values()))
            search.measured_end = level
            search.limits.memory_now(level, len(seen))
        finally:
            workers.close()

    def where(self, search: Search) -> dict:
        return {"name": "pool"}


class _PackedChunk:
    """CHUNK_STATES entries of a parallel level, packed by column
    (checker.search.codec.pack_states): ~100 bytes a state instead of the ~1.3 KB
    of its list of parts. A worker rebuilds the states of its own chunks."""

    __slots__ = ("states", "fps", "n", "bits")

    def __init__(self, entries: list, bits: int, packed: tuple | None = None):
        from checker.search.codec import pack_fps, pack_states
        if packed is not None:  # (states, fingerprints) as a frontier file's record holds them
            self.states, self.fps = packed
            self.n, self.bits = len(self.fps) // (bits // 8), bits
            return
        self.states = pack_states([e[1] for e in entries])
        self.fps = pack_fps([e[2] for e in entries], bits)
        self.n, self.bits = len(entries), bits

    def __len__(self) -> int:
        return self.n

    def entries(self, decoder=None) -> list:
        """(state, parts, fp) with a decoder (checker.search.codec.StateDecoder),
        else (None, parts, fp)."""
        from checker.search.codec import unpack_fps, unpack_states
        fps = unpack_fps(self.fps, self.bits)
        if decoder is None:
            return [(None, p, fp) for p, fp in zip(unpack_states(self.states), fps)]
        return [(s, p, fp) for (s, p), fp in zip(decoder.decode_batch(self.states), fps)]

    def __getitem__(self, i):  # the parent reads a deadlocked entry's fingerprint
        return self.entries()[i]


class _PackedLevel:
    """The next level of a parallel search, in the order found, packed a
    chunk at a time (chunk boundaries as the local engine's: every
    CHUNK_STATES entries from the level's start)."""

    keep = True   # (a level the next one is expanded from: checker.search.frontier.Frontier's)

    def __init__(self, bits: int):
        self.bits = bits
        self.packed: list = []   # full chunks, packed
        self.tail: list = []     # the entries of the chunk being filled
        self.n = 0

    def close(self) -> None:
        """(Nothing on disk: a parallel level is in memory.)"""

    def state_chunks(self, decoder):
        """The chunks as (state, parts, fp) entries, the states rebuilt by
        `decoder` (the depth bound's deadlocks)."""
        decode = decoder.decode
        for chunk in self.chunks():
            if isinstance(chunk, _PackedChunk):
                yield chunk.entries(decoder)
            else:
                yield [decode(parts) + (fp,) if state is None else (state, parts, fp)
                       for state, parts, fp in chunk]

    def extend(self, items) -> None:
        tail = self.tail
        for e in items:
            tail.append(e)
            if len(tail) == CHUNK_STATES:
                self.packed.append(_PackedChunk(tail, self.bits))
                tail = self.tail = []
            self.n += 1

    @classmethod
    def of_frontier(cls, frontier, bits: int) -> "_PackedLevel":
        """A packed (spilled or resumed) frontier as it is on disk: its
        records become the chunks, no state rebuilt in the parent (a big
        level as objects would cost ~1.3 KB a state)."""
        level = cls(bits)
        level.packed = [_PackedChunk([], bits, rec) for rec in frontier.packed_records()]
        level.tail = list(frontier.entries)
        level.n = sum(c.n for c in level.packed) + len(level.tail)
        return level

    def __len__(self) -> int:
        return self.n

    def chunks(self) -> list:
        return self.packed + ([self.tail] if self.tail else [])

    def __iter__(self):
        for chunk in self.chunks():
            yield from (chunk.entries() if isinstance(chunk, _PackedChunk) else chunk)

    def seal_into(self, dest) -> int:
        """The level written as the local engine's frontier file (one record
        per chunk, checker/search/frontier.py), fsynced, for a resume
        (checker/search/checkpoint.py); the level itself stays in memory.
        Returns the number of records."""
        from pathlib import Path
        from checker.search.codec import pack_fps, pack_states
        from checker.search.frontier import write_record
        dest = Path(dest)
        tmp = dest.with_name(f".{dest.name}.tmp")
        with open(tmp, "wb") as out:
            for chunk in self.packed:
                write_record(out.write, chunk.states, chunk.fps)
            if self.tail:
                write_record(out.write, pack_states([e[1] for e in self.tail]),
                             pack_fps([e[2] for e in self.tail], self.bits))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
        return len(self.packed) + bool(self.tail)


STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def fork_workers(ctx, n: int, name: str, target, args_for, procs: list, conns: list) -> None:
    """Fork n daemon processes target(*args_for(w, send, recv)), each with a
    pipe to this process: procs and conns get them as they start (so a
    caller's close() reaches those started before a failure)."""
    # ^C and SIGTERM wait while forking: one arriving then would run its
    # handler inside an at-fork hook (logging's), where Python prints and
    # drops the exception, and the run would go on; unmasked, a pending one
    # is raised here
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        for w in range(n):
            recv, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=target, args=args_for(w, send, recv), name=f"{name}-{w}", daemon=True)
            p.start()
            send.close()
            procs.append(p)
            conns.append(recv)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


class _Workers:
    """The forked workers of one level: worker w expands chunks w, w + n, ...
    in order and sends each chunk's result as soon as it has it (the pipe
    holds the worker back when the parent is behind)."""

    def __init__(self, search: Search, chunks: list, n: int, keep: bool, level: int):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self.n, self.level = n, level
        self.procs: list = []
        self.conns: list = []
        self.held: dict = {}   # worker -> its memory after its last chunk (proc.pss)
        try:
            fork_workers(ctx, n, "kmc-worker", _level_worker,
                         lambda w, send, recv: (search, chunks, w, n, keep, send, recv),
                         self.procs, self.conns)
        except BaseException:
            self.close()
            raise

    def result(self, c: int) -> ChunkResult:
        w = c % self.n
        try:
            msg = pickle.loads(self.conns[w].recv_bytes())
        except (EOFError, OSError):
            raise _worker_died(self.procs[w], self.level) from None
        kind = msg[0]
        if kind == "ok":
            _, new, violations, witnesses, deadlocks, names, stopped, held, record = msg
            if held is not None:
                self.held[w] = held
            return ChunkResult(new, violations, witnesses, deadlocks,
                               list(chain.from_iterable(repeat(k, v) for k, v in names.items())), stopped,
                               record=record)
        if kind == "evaluation":  # (the parent fp: the trace to it is rebuilt here)
            err = EngineEvaluationError(msg[1], level=self.level)
            err.parent_fp, err.detail, err.label = msg[2], msg[3], msg[4]
            raise err
        raise ParallelError(f"the model failed in a worker process at level {self.level}: {msg[1]}")

    def close(self) -> None:
        """Stop the workers now (a stopped level leaves them running)."""
        for c in self.conns:
            c.close()
        for p in self.procs:
            if p.is_alive():
                p.kill()
        for p in self.procs:
            p.join(5)
        self.procs, self.conns = [], []


def expand_one(ctx, chunk, seen) -> ChunkResult:
    """A worker's expansion of one chunk (tests wrap it to make a worker fail)."""
    return expand_chunk(ctx, chunk, seen)


def _level_worker(search: Search, chunks: list, w: int, n: int, keep: bool, conn, recv) -> None:
    """In a forked child: expand chunks w, w + n, ... against the inherited
    seen set (growing with what this worker finds); states of the entries
    that hold only their parts are rebuilt first. Sends per chunk ("ok",
    new as (None, parts or None, fp, parent fp, action), violations,
    witnesses, deadlocks, per-action generated counts, stopped, and after
    its last chunk the memory it holds, else None, then the search's
    worker_extras for the chunk: a value appended to each new entry, one
    for the whole chunk)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles ^C and stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (not the parent's handler: a worker just goes)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)   # (blocked by the parent's fork)
    recv.close()   # the parent's end: with it gone, a write here fails rather than blocking forever
    code = 0
    sender = _Sender(conn)
    try:
        ctx, seen = search.ctx, search.seen
        decoder = None
        for c in range(w, len(chunks), n):
            chunk = chunks[c]
            if isinstance(chunk, _PackedChunk) or (chunk and chunk[0][0] is None):
                if decoder is None:
                    from checker.search.codec import StateDecoder
                    decoder = StateDecoder(search.model)
                if isinstance(chunk, _PackedChunk):
                    chunk = chunk.entries(decoder)
                else:
                    decode = decoder.decode
                    chunk = [decode(parts) + (fp,) for _, parts, fp in chunk]
            try:
                res = expand_one(ctx, chunk, seen)
                rows, record = search.worker_extras(res, chunk)
            except EngineEvaluationError as e:
                sender.send(("evaluation", str(e), e.parent_fp, e.detail,
                             None if e.action is None else str(e.action)))
                return
            new = [(None, e[1] if keep else None, e[2], e[3], e[4]) for e in res.new]
            if rows is not None:
                new = [e + (row,) for e, row in zip(new, rows)]
            # a worker's memory is at its most after its last chunk, and it exits
            # then, before the parent's level ends: so it says what it holds
            last = c + n >= len(chunks) or res.stopped
            sender.send(("ok", new, res.violations, res.witnesses, res.deadlocks,
                         Counter(res.action_names), res.stopped, pss(os.getpid()) if last else None,
                         record))
            if res.stopped or sender.gone:
                return  # the parent stops at or before this chunk's end (or is gone)
    except BaseException as e:  # noqa: BLE001 - a bug of the model: one line in the parent
        code = 1
        try:
            sender.send(("crash", f"{type(e).__name__}: {' '.join(str(e).split())}"))
        except (OSError, ValueError):
            pass
    finally:
        try:
            sender.close()
        finally:
            os._exit(code)   # no atexit handlers of the parent in a forked child


class _Sender:
    """A worker's results, pickled in its main thread and written to the
    pipe by a thread (which holds no GIL while it writes): the worker goes on
    with its next chunk while the parent still absorbs an earlier chunk of
    the other worker."""

    def __init__(self, conn):
        import queue
        import threading
        self.conn = conn
        self.gone = False
        self.queue: "queue.SimpleQueue" = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            data = self.queue.get()
            if data is None:
                return
            try:
                self.conn.send_bytes(data)
            except (OSError, ValueError):
                self.gone = True
                return   # the parent is gone or stopped this level

    def send(self, msg) -> None:
        self.queue.put(pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL))

    def close(self) -> None:
        self.queue.put(None)
        self.thread.join()
        self.conn.close()


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
        from checker.search.errors import SpecError
        raise SpecError(f"{name} must be a number >= 1, not {text!r}")
    return n


def check_auto(model: Model, properties: Iterable[Property], options: CheckOptions,
               threshold: int | None = None, workers: int | None = None) -> CheckResult:
    """Check as the local engine does, going parallel from a frontier of
    `threshold` states (default THRESHOLD or PER_LEVEL_THRESHOLD, or
    $KMC_AUTO_THRESHOLD) when there is more than one worker (default one
    per core, or $KMC_AUTO_WORKERS). The result's `engine` says where each level ran:
    {"name": "auto", "workers", "threshold", "handover_level", "levels":
    ["local" | "pool"], "busy_levels"}."""
    return Search(model, properties, options, auto_expander(threshold, workers)).run()


def auto_expander(threshold: int | None = None, workers: int | None = None) -> AutoExpander:
    """The auto engine's levels (check_auto's defaults: $KMC_AUTO_THRESHOLD,
    $KMC_AUTO_WORKERS), for a Search of any kind (the liveness search's too)."""
    if threshold is None:
        threshold = _env_int(THRESHOLD_ENV)
    if workers is None:
        workers = _env_int(WORKERS_ENV)
    return AutoExpander(threshold, workers)


# ---- the pool of workers that live for the whole run ----------------------------------

# A level's states are cut into units that never cross one of the local
# engine's chunks (CHUNK_STATES), guided per holder (the worker that holds
# the states as objects, or nobody): a unit holds the holder's states not
# yet cut over GUIDE * w, between MIN_UNIT and CHUNK_STATES, where w is how
# many workers' shares of the level the holder's states make (one at least;
# a level nobody holds: every worker). A wide level's first units cost one
# hand-over per 2,048 states; each holder's last ones shrink to MIN_UNIT, so
# a worker that has run out takes small units and the workers end a level
# together (the last unit is what the others wait for); a narrow level
# gives every worker several.
MIN_UNIT = 64
GUIDE = 2
# the shared seen set grows (doubles) when it is this full (between units)
GROW_AT = 0.7


def shared_pool_fits(search: Search) -> bool:
    """The shared-memory pool runs the plain search with 64-bit fingerprints
    where the compiled hot path is built; the graph-recording search
    (liveness: absorb and worker_extras of its own) and 128-bit fingerprints
    take PoolExpander."""
    from checker.search import native
    return (native.ENABLED and search.options.fingerprint_bits == 64
            and type(search).absorb is Search.absorb and type(search).worker_extras is Search.worker_extras)


def _memory_slots() -> int:
    """Slots of the shared table's reserve: a table as big as the machine's memory."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 1 << 36
    slots = 1 << 20
    while slots * 16 < total:
        slots *= 2
    return slots


class _SharedSeen:
    """The coordinator's `seen` once the pool runs: the count of distinct
    states and a look-up in the shared table (the workers insert)."""

    def __init__(self, table, n: int):
        self.table = table
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __contains__(self, fp) -> bool:
        return self.table.has_old(fp)


class _SharedLevel:
    """A level as the pool's workers wrote it: fragments (file, offset,
    length, states) of frontier records, in BFS order; count-only when not
    kept (the depth bound's)."""

    def __init__(self, fragments: list, n: int, keep: bool = True, holders: dict | None = None):
        self.fragments = fragments
        self.n = n
        self.keep = keep
        # (path, offset) -> the worker that holds the fragment's states as objects
        self.holders = holders or {}

    def __len__(self) -> int:
        return self.n

    def __bool__(self) -> bool:
        return self.n > 0

    def close(self) -> None:
        for path in {f[0] for f in self.fragments}:
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        self.fragments = []

    def _whole(self) -> None:
        if any(f[1] < 0 for f in self.fragments):   # (SharedPool.expand packs all when read)
            raise RuntimeError("a level whose states are held by the workers without records")

    def records(self):
        """(packed states, packed fingerprints) per fragment, in order."""
        from checker.search.frontier import _HEAD
        self._whole()
        for path, offset, length, _ in self.fragments:
            with open(path, "rb") as f:
                f.seek(offset)
                data = f.read(length)
            ns, nf = _HEAD.unpack_from(data)
            yield data[_HEAD.size:_HEAD.size + ns], data[_HEAD.size + ns:_HEAD.size + ns + nf]

    def state_chunks(self, decoder):
        from checker.search.codec import unpack_fps
        for states, fps in self.records():
            yield [(s, p, fp) for (s, p), fp in zip(decoder.decode_batch(states), unpack_fps(fps, 64))]

    def seal_into(self, dest) -> int:
        """The level as one frontier file (its fragments' records in order),
        fsynced; the local engine reads it in its own chunks."""
        from pathlib import Path
        self._whole()
        dest = Path(dest)
        tmp = dest.with_name(f".{dest.name}.tmp")
        with open(tmp, "wb") as out:
            for path, offset, length, _ in self.fragments:
                with open(path, "rb") as f:
                    done = 0
                    while done < length:
                        done += os.copy_file_range(f.fileno(), out.fileno(), length - done, offset + done)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, dest)
        return len(self.fragments)


def _level_from_frontier(search: Search, frontier) -> _SharedLevel:
    """The level the pool starts from (the local engine's frontier, in
    memory or packed on disk, or a resumed one) as fragments."""
    from checker.search.codec import pack_fps, pack_states
    from checker.search.frontier import _HEAD, write_record
    fragments, n = [], 0
    path = getattr(frontier, "path", None)
    if path is not None:
        for _ in frontier.packed_records():   # (closes a file still being written)
            break
        with open(path, "rb") as f:
            offset = 0
            for _ in range(frontier.records):
                ns, nf = _HEAD.unpack(f.read(_HEAD.size))
                count = nf // 8
                fragments.append((str(path), offset, _HEAD.size + ns + nf, count))
                f.seek(ns + nf, os.SEEK_CUR)
                offset += _HEAD.size + ns + nf
                n += count
        entries = list(frontier.entries)
    else:
        entries = list(_entries(frontier))
    if entries:
        out_path = str(search.spill.file("pool-start"))
        with open(out_path, "wb") as out:
            for start in range(0, len(entries), CHUNK_STATES):
                part = entries[start:start + CHUNK_STATES]
                offset = out.tell()
                write_record(out.write, pack_states([e[1] for e in part]), pack_fps([e[2] for e in part], 64))
                fragments.append((out_path, offset, out.tell() - offset, len(part)))
                n += len(part)
    level = _SharedLevel(fragments, n)
    if path is not None:   # the local frontier's file stays the local frontier's
        level.close = lambda: None
    return level


def _units(level: _SharedLevel, workers: int) -> list:
    """The level cut into units in order: each holds states of one holder
    (the worker that holds them as objects, or nobody), guided by what that
    holder has left (GUIDE's rule, over the workers its states would keep
    busy), and never crosses a local chunk: (first state's index, states,
    [(fragment, lo, hi)])."""
    frags = level.fragments
    holder = level.holders.get
    left: dict = {}          # holder -> its states not yet cut
    for f in frags:
        h = holder(f[:2])
        left[h] = left.get(h, 0) + f[3]
    # how many workers' shares of the level each holder's states make, one at least: a
    # holder's units shrink as the level's do while the workers go through their own
    weight = {h: max(1.0, workers * k / max(level.n, 1)) for h, k in left.items()}
    units = []
    fi, fstart = 0, 0        # fragment index, the level index of its first state
    start = 0
    while start < level.n:
        pieces, pos, end = [], start, level.n
        while pos < end:
            while fstart + frags[fi][3] <= pos:
                fstart += frags[fi][3]
                fi += 1
            if not pieces:   # the unit's holder, and its size by what that holder has left
                h = holder(frags[fi][:2])
                size = min(CHUNK_STATES, max(MIN_UNIT, int(left[h] / (GUIDE * weight[h]))))
                end = min(level.n, start + size, (start // CHUNK_STATES + 1) * CHUNK_STATES)
            elif holder(frags[fi][:2]) != h:
                break
            hi = min(end, fstart + frags[fi][3])
            pieces.append((frags[fi], pos - fstart, hi - fstart))
            pos = hi
        units.append((start, pos - start, pieces))
        left[h] -= pos - start
        start = pos
    return units


class SharedPool:
    """Levels expanded by workers that live from the hand-over to the end of
    the run, around one seen set in shared memory (the module's docstring,
    "The pool"). The coordinator (this process) hands out units of a
    level, then, per level, sums what the workers report per unit."""

    def __init__(self, workers: int):
        self.workers = workers
        self.table = None
        self.procs: list = []
        self.conns: list = []
        self.resident: dict = {}    # worker -> its resident set, as it said with its last unit
        self.memory = None          # the run's TreeMemory, its measurements delegated to the workers
        self.selector = None
        self.growth = 2.0  # the last level's states per state of the level before (a guess at first)

    # -- the workers --

    def _start(self, search: Search, first: int) -> None:
        from checker.search.native import _native
        used = len(search.seen)
        cap = 1 << 16
        while cap * GROW_AT < used + self.growth * first:
            cap *= 2
        reserve = max(_memory_slots(), cap)
        self.table = _native.ClaimTable(reserve, cap)
        seen = search.seen
        if isinstance(seen, _native.FingerprintSet):
            self.table.fill(seen)
        else:
            from checker.search.codec import pack_fps
            self.table.add_old(pack_fps(list(seen), 64))
        search.seen = _SharedSeen(self.table, used)
        self.memory = search.memory
        self.memory.delegate(self._upper, MID_LEVEL_MEMORY_S)
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
        try:
            for w in range(self.workers):
                mine, theirs = ctx.Pipe()
                others = [c for c in self.conns] + [mine]
                p = ctx.Process(target=_pool_worker, args=(search, self.table, w, theirs, others),
                                name=f"kmc-worker-{w}", daemon=True)
                p.start()
                theirs.close()
                self.procs.append(p)
                self.conns.append(mine)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        # (one selector for the run: a worker answers only when asked, or ends)
        self.selector = selectors.DefaultSelector()
        for w, c in enumerate(self.conns):
            self.selector.register(c, selectors.EVENT_READ, w)

    def _upper(self) -> int:
        """The resident sets of this process and its workers (theirs as of their last unit)."""
        return (rss(os.getpid()) or 0) + sum(self.resident.values())

    def close(self) -> None:
        """Stop the workers (the end of the run, however it ends)."""
        if self.memory is not None:
            self.memory.delegate(None)
            self.memory = None
        for c in self.conns:
            try:
                c.send(("stop",))
            except (OSError, ValueError):
                pass
            c.close()
        for p in self.procs:
            p.join(2)
            if p.is_alive():
                p.kill()
                p.join(5)
        self.procs, self.conns = [], []
        if self.selector is not None:
            self.selector.close()
            self.selector = None

    def _recv(self, w: int, level: int):
        try:
            msg = self.conns[w].recv()
        except (EOFError, OSError):
            raise _worker_died(self.procs[w], level) from None
        if msg[0] == "crash":
            raise ParallelError(f"the model failed in a worker process at level {level}: {msg[1]}")
        return msg

    def _all(self, level: int, msgs: list) -> list:
        for c, m in zip(self.conns, msgs):
            c.send(m)
        return [self._recv(w, level) for w in range(len(self.conns))]

    def _grow(self, level: int, need: float, at_least: int) -> None:
        """The table rehashed, when it is smaller than `at_least` slots or
        than `need` entries take (GROW_AT), into the smallest power of two
        that is neither, a part by each worker at once (none is inserting)."""
        cap = self.table.load()[1]
        want = max(cap, at_least)
        while want * GROW_AT < need:
            want *= 2
        if want > cap:
            n = len(self.conns)
            self._all(level, [("rehash", want, w, n) for w in range(n)])
            self.table.switch(want)

    # -- a level --

    def expand(self, search: Search, level: int, frontier, log, keep: bool):
        if not isinstance(frontier, _SharedLevel):
            frontier = _level_from_frontier(search, frontier)
        n_in = len(frontier)
        if not self.procs:
            self._start(search, n_in)
        self._grow(level, self.table.load()[0] + self.growth * n_in, 0)   # room for the level, as far as one can tell
        units = _units(frontier, self.workers)
        pending_names = tuple(p.name for p in search.ctx.sometimes)
        # a level the local engine keeps in memory stays objects in the workers that found its states
        spill = search.options.spill_states
        small = spill is None or self.growth * n_in <= spill
        # (else each worker's packed successors wait in a file of its own, as a spilled frontier)
        parked = None if small else [str(search.spill.file(f"pool-{level + 1}-claimed-w{w}"))
                                     for w in range(self.workers)]
        from collections import deque
        # per worker, the units whose states it holds (as objects), in order; the others' apart
        queues: dict = {w: deque() for w in range(self.workers)}
        shared: deque = deque()
        for u, (_, _, pieces) in enumerate(units):
            holder = frontier.holders.get(pieces[0][0][:2])
            (queues[holder] if holder is not None else shared).append(u)
        busy: dict = {w: [] for w in range(self.workers)}
        names: dict = {}                        # unit -> Counter of the generated actions' names
        deadlocks: dict = {}                    # unit -> (key, fp) of its first deadlock
        stop = None                             # (key, kind, detail): the first stop found
        grow = False
        done = 0
        checked = 0.0
        # (a unit whose states all have records: any worker can rebuild them)
        stealable = [all(piece[0][1] >= 0 for piece in pieces) for _, _, pieces in units]

        def take(w: int):
            """The next unit for worker w: its own, else one nobody holds, else
            the last of the longest other queue that ends in a unit with
            records (its states then rebuilt)."""
            for q in (queues[w], shared):
                if q:
                    return q.popleft()
            other = max((q for q in queues.values() if q and stealable[q[-1]]), key=len, default=None)
            return other.pop() if other is not None else None

        while any(queues.values()) or shared or any(busy.values()):
            if grow and not any(busy.values()):
                used, cap = self.table.load()
                self._grow(level, used, 2 * cap)
                grow = False
            while not grow:
                u = None
                for w in sorted(busy, key=lambda k: len(busy[k])):   # the least busy first
                    if len(busy[w]) < 2:
                        u = take(w)
                        if u is not None:
                            break
                if u is None:
                    break
                start, count, pieces = units[u]
                if stop is not None and (start << 24) + 1 > stop[0]:
                    continue     # past the stop: never needed
                self.conns[w].send(("expand", level, u, start, pieces, pending_names,
                                    None if small else parked[w]))
                busy[w].append(u)
            if not any(busy.values()):
                continue
            for key, _ in self.selector.select():
                w = key.data
                msg = self._recv(w, level)
                u = msg[1]
                busy[w].remove(u)
                if msg[0] == "full":      # the table filled during the unit: grow, do it again
                    queues[w].appendleft(u)
                    grow = True
                    continue
                if msg[0] == "error":
                    event = (msg[2], "error", msg[3])
                else:
                    _, _, names[u], event, first_deadlock, self.resident[w] = msg
                    if first_deadlock is not None:
                        deadlocks[u] = first_deadlock
                    done += units[u][1]
                if event is not None and (stop is None or event[0] < stop[0]):
                    stop = event
            used, cap = self.table.load()
            if used > cap * GROW_AT:
                grow = True
            now = time.monotonic()
            if now >= checked:   # (a ^C, the limits, progress: every few ms is soon enough)
                checked = now + CHECK_EVERY_S
                search.between_chunks(level, n_in - done)
        # where the level ends (the local engine's point): keys up to `limit`
        limit = (1 << 64) - 1
        if stop is not None:
            key, kind = stop[0], stop[1]
            if kind == "violation":
                limit = key
            elif kind == "deadlock":
                limit = key - 1
            else:   # an evaluation error: the local engine's chunk it is in is not absorbed
                p = (key - 1) >> 24
                limit = ((p // CHUNK_STATES_LOCAL) * CHUNK_STATES_LOCAL) << 24
        reports = self._all(level, [("filter", limit)] * self.workers)
        owned = {}
        for r in reports:
            for row in r[1]:
                owned[row[0]] = row
        self._account(search, level, units, limit, stop, names, deadlocks, owned)
        # the next level: offsets of each unit's states, the log and the frontier written
        offsets, total = {}, 0
        for u in sorted(owned):
            offsets[u] = total
            total += owned[u][1]
        # (the workers make the log's files: each opens every one)
        files = {name: str(search.spill.file(f"log-{name}")) for name in ("fps", "parents", "actions")}
        outs = [str(search.spill.file(f"pool-{level + 1}-w{w}")) if keep else None for w in range(self.workers)]
        ids = search.action_ids
        # the level's end measured (core.Search.expand_level's rule) by the workers, each its own
        # figure and the first the coordinator's too, while this process waits
        measure = HAVE_PROC and (total >= search.widest or search.memory.is_due())
        also = [((os.getpid(),) if w == 0 else ()) if measure else None for w in range(self.workers)]
        # a worker writes no record for the states it holds as objects (their packing is most
        # of what the pool costs beyond the local engine) but for its last units, the ones
        # another worker may take at the next level (take: only units with records); all when
        # the level will be saved (a checkpoint) or read again at the depth bound
        if not keep or search.keeps(total) or search.options.check_deadlock:
            pack_from = [0] * self.workers
        else:
            pack_from = [_tail(sorted((offsets[row[0]], row[1]) for row in r[1] if row[0] in offsets),
                               total / self.workers) for r in reports]
        written = self._all(level, [("write", offsets, {a: ids[a] for row in r[1] for a in row[3] if a in ids},
                                     files, outs[w], pack_from[w], also[w]) for w, r in enumerate(reports)])
        if measure:
            sizes = {pid: size for r in written for pid, size in r[2].items() if size is not None}
            search.memory.measure(exclude=list(sizes), extra=sum(sizes.values()), extra_processes=len(sizes))
            search.measured_end = level
        for path in parked or ():
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
        fragments = sorted((f + (w,) for w, r in enumerate(written) for f in r[1]), key=lambda f: f[0])
        log.files = files
        log.spilled = total
        search.seen.n += total
        if n_in:
            self.growth = total / n_in
        if stop is not None and stop[1] == "error":
            detail = stop[2]
            err = EngineEvaluationError(detail[0], action=detail[3], level=level)
            err.parent_fp, err.detail, err.successor = detail[1], detail[2], detail[4]
            raise err
        search.limits.memory_now(level, len(search.seen))
        return _SharedLevel([f[1:5] for f in fragments], total, keep,
                            {(f[1], f[2]): f[6] for f in fragments if f[5]})

    def _account(self, search: Search, level: int, units: list, limit: int, stop, names: dict,
                 deadlocks: dict, owned: dict) -> None:
        """The level's counters as the local engine's absorb leaves them, a
        local chunk at a time: its violations in BFS order, then its
        deadlocks."""
        error_chunk = None
        if stop is not None and stop[1] == "error":
            error_chunk = ((stop[0] - 1) >> 24) // CHUNK_STATES_LOCAL
        nxt = level + 1
        group = None
        violations: list = []
        dead: list = []

        def flush():
            for _, name, fp in violations:   # (units in order, each in BFS order)
                search._violation(name, nxt, fp)
            for _, fp in dead:
                search._violation(DEADLOCK, level, fp)
            violations.clear()
            dead.clear()

        last = stop[0] if stop is not None else 1 << 64
        for u, (start, count, _) in enumerate(units):
            if (start << 24) + 1 > last or u not in names:
                break
            chunk = start // CHUNK_STATES_LOCAL
            if error_chunk is not None and chunk >= error_chunk:
                break
            if chunk != group:
                flush()
                group = chunk
            c = names[u]
            search.generated += sum(c.values())
            search.per_action_generated.update(c)
            row = owned.get(u)
            if row is not None:
                _, n, distinct, new_actions, vio, wit = row
                for a in new_actions:
                    search._action_id(a)
                search.per_action_distinct.update(distinct)
                search.per_level_distinct[nxt] += n
                violations.extend(vio)
                for name in wit:
                    if search.sometimes.get(name, 0) is None:
                        search.sometimes[name] = nxt
            if u in deadlocks and deadlocks[u][0] <= last:
                dead.append(deadlocks[u])
        flush()
        search.ctx.sometimes = [p for p in search.ctx.sometimes if search.sometimes[p.name] is None]

    def where(self, search: Search) -> dict:
        return {"name": "pool"}


CHUNK_STATES_LOCAL = CHUNK_STATES   # the local engine's chunk (units never cross one)
# A worker writes the records of the states it holds as objects for its last
# units holding this share of them (at least 2 * MIN_UNIT states), and all it
# holds beyond (1 - TAIL_SHARE) of a fair share (the level over the workers):
# what the others may take from it at the next level, so that no worker is
# left alone with more than its share
TAIL_SHARE = 0.25


def _tail(units: list, fair: float) -> int:
    """The level index from which a worker writes the records of the states
    it holds, its (level index, states) units given in order; `fair`: the
    level's states over the workers."""
    held = sum(n for _, n in units)
    want = max(TAIL_SHARE * held, held - (1 - TAIL_SHARE) * fair, 2 * MIN_UNIT)
    got = 0
    for at, n in reversed(units):
        got += n
        if got >= want:
            return at
    return 0


def _pool_worker(search: Search, table, w: int, conn, others: list) -> None:
    """A worker of SharedPool, from the hand-over to the end of the run:
    answers the coordinator's "expand" (a unit), "filter" (the level's
    claims settled) and "write" (the level's log and frontier) in turn."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the coordinator handles ^C and stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    for c in others:   # the coordinator's ends: with them gone here, its death ends this worker
        c.close()
    code = 0
    try:
        _PoolWorker(search, table).serve(conn)
    except (EOFError, OSError):
        code = 0    # the coordinator is gone
    except BaseException as e:  # noqa: BLE001 - a bug of the model: one line in the coordinator
        code = 1
        try:
            conn.send(("crash", f"{type(e).__name__}: {' '.join(str(e).split())}"))
        except (OSError, ValueError):
            pass
    finally:
        os._exit(code)


class _Unit:
    """A unit's successors claimed by this worker: packed until the level's
    claims are settled."""

    __slots__ = ("states", "fps", "pfps", "keys", "picks", "actions", "violations", "witnesses")


class _PoolWorker:
    def __init__(self, search: Search, table):
        from checker.search.native import _native
        self.search = search
        self.ctx = search.ctx
        self.table = table
        self.claims = _native.Claims(table)
        self.full = _native.ClaimTableFull
        # (the default caches, not the local engine's smaller ones: a worker
        # rebuilds every state it expands, and a miss costs a rebuilt value)
        from checker.search.codec import StateDecoder
        self.decoder = StateDecoder(search.model)
        self.units: dict = {}
        self.held: dict = {}          # (path, offset) of a record -> its entries, as objects
        self.reported: set = set()    # actions this worker told the coordinator about
        self.fds: dict = {}

    def serve(self, conn) -> None:
        while True:
            msg = conn.recv()
            kind = msg[0]
            if kind == "expand":
                conn.send(self.expand(*msg[1:]))
            elif kind == "filter":
                conn.send(("filtered", self.filter(msg[1])))
            elif kind == "write":
                conn.send(("written", *self.write(*msg[1:])))
            elif kind == "rehash":
                self.table.rehash(*msg[1:])
                conn.send(("rehashed",))
            else:
                return

    def _read(self, path: str, offset: int, length: int) -> bytes:
        fd = self.fds.get(path)
        if fd is None:
            fd = self.fds[path] = os.open(path, os.O_RDONLY)
        return os.pread(fd, length, offset)

    def _entries(self, pieces) -> list:
        from array import array
        from checker.search.codec import unpack_fps
        from checker.search.frontier import _HEAD
        out = []
        for (path, offset, length, count), lo, hi in pieces:
            held = self.held.get((path, offset))
            if held is not None:
                out += held[lo:hi]
                continue
            data = self._read(path, offset, length)
            ns, nf = _HEAD.unpack_from(data)
            states = data[_HEAD.size:_HEAD.size + ns]
            fps = list(unpack_fps(data[_HEAD.size + ns:_HEAD.size + ns + nf], 64))
            picks = None if (lo, hi) == (0, count) else array("I", range(lo, hi))
            out += [(s, p, fp) for (s, p), fp in zip(self.decoder.decode_batch(states, picks), fps[lo:hi])]
        return out

    def expand(self, level: int, u: int, start: int, pieces, pending: tuple, parked: str | None):
        from array import array
        from checker.search.codec import pack_states
        ctx, claims = self.ctx, self.claims
        if len(ctx.sometimes) != len(pending):
            ctx.sometimes = [p for p in ctx.sometimes if p.name in pending]
        chunk = self._entries(pieces)
        claims.at(start)
        claims.take_keys()
        try:
            res = expand_one(ctx, chunk, claims)
        except self.full:
            claims.take_keys()
            return ("full", u)
        except EngineEvaluationError as e:
            key = claims.position()
            claims.take_keys()
            action, successor = e.action, e.successor
            try:
                pickle.dumps((action, successor))
            except Exception:   # noqa: BLE001 - (only what can be sent)
                action = successor = None
            return ("error", u, key, (str(e), e.parent_fp, e.detail, action, successor))
        keys = claims.take_keys()
        new = res.new
        unit = _Unit()
        # (a small level's states stay objects: kept by the worker that keeps them, no rebuilding;
        # a big one's are packed and parked in a file until the level's claims are settled)
        if parked is None:
            unit.states = new
        else:
            data = pack_states([e[1] for e in new])
            with open(parked, "ab") as f:
                unit.states = (parked, f.tell(), len(data))
                f.write(data)
        unit.fps = array("Q", [e[2] for e in new])
        unit.pfps = array("Q", [e[3] for e in new])
        unit.keys = keys
        unit.actions = [e[4] for e in new]
        unit.violations = res.violations
        unit.witnesses = res.witnesses
        self.units[u] = unit
        event = None
        karr = array("Q")
        karr.frombytes(keys)
        first_deadlock = None
        if res.deadlocks:
            ci = res.deadlocks[0]
            first_deadlock = (((start + ci) << 24) + 1, chunk[ci][2])
        if res.stopped:
            if res.violations:
                event = (karr[res.violations[0][1]], "violation", None)
            else:
                event = (first_deadlock[0], "deadlock", None)
        return ("expanded", u, dict(Counter(res.action_names)), event, first_deadlock, rss(os.getpid()) or 0)

    def filter(self, limit: int) -> list:
        """Per unit: (unit, states it holds the first discovery of, their
        actions' names counted, actions not reported before, [(key, name, fp)]
        first violation per name, witnesses)."""
        from array import array
        rows = []
        table = self.table
        for u in sorted(self.units):
            unit = self.units[u]
            picks = array("I")
            picks.frombytes(table.owned(unit.keys, unit.fps.tobytes(), limit))
            unit.picks = picks
            acts = unit.actions
            mine = [acts[i] for i in picks]
            new_actions = []
            for a in dict.fromkeys(mine):
                if a not in self.reported:
                    self.reported.add(a)
                    new_actions.append(a)
            vio, wit = [], []
            if unit.violations or unit.witnesses:
                kept = set(picks)
                keys = array("Q")
                keys.frombytes(unit.keys)
                seen_names: set = set()
                for name, i in unit.violations:
                    if i in kept and name not in seen_names:
                        seen_names.add(name)
                        vio.append((keys[i], name, unit.fps[i]))
                wit = sorted({name for name, i in unit.witnesses if i in kept})
            rows.append((u, len(picks), dict(Counter(a[0] for a in mine)), new_actions, vio, wit))
        return rows

    def write(self, offsets: dict, ids: dict, files: dict, out_path: str | None, pack_from: int, also) -> tuple:
        """The kept states' log entries at their places in the level's log
        files, and (a level to expand next) their frontier records, those
        it holds as objects only from level index `pack_from` on; returns
        (level index, path, offset, length, states, held) per fragment, and
        the memory (proc.pss) of this process and the processes `also`, as
        both levels' states are still held (the most the level takes), when
        `also` is not None."""
        from array import array
        from checker.search.codec import pack_fps, pack_states, unpack_states
        from checker.search.frontier import write_record
        known = self.ids = getattr(self, "ids", {})
        known.update(ids)
        fds = {name: os.open(path, os.O_WRONLY | os.O_CREAT, 0o666) for name, path in files.items()}
        out = open(out_path, "ab") if out_path is not None else None
        fragments = []
        held: dict = {}
        unpacked = 0   # (a fragment without a record: a negative offset, its own)
        try:
            for u in sorted(self.units):
                unit = self.units[u]
                picks = unit.picks
                if not picks or u not in offsets:
                    continue
                at = offsets[u]
                fps = array("Q", map(unit.fps.__getitem__, picks))
                os.pwrite(fds["fps"], fps.tobytes(), at * 8)
                os.pwrite(fds["parents"], array("Q", map(unit.pfps.__getitem__, picks)).tobytes(), at * 8)
                acts = unit.actions
                os.pwrite(fds["actions"], array("I", [known[acts[i]] for i in picks]).tobytes(), at * 4)
                if out is not None:
                    kept = None
                    if type(unit.states) is list:   # objects
                        kept = [unit.states[i][:3] for i in picks]
                        if at < pack_from:   # held without a record: only this worker expands them
                            unpacked -= 1
                            fragments.append((at, out_path, unpacked, 0, len(picks), True))
                            held[(out_path, unpacked)] = kept
                            continue
                        states = pack_states([e[1] for e in kept])
                    else:
                        path, offset, length = unit.states
                        states = self._read(path, offset, length)
                        if len(picks) != len(acts):
                            states = pack_states(unpack_states(states, picks))
                    offset = out.tell()
                    write_record(out.write, states, pack_fps(fps, 64))
                    fragments.append((at, out_path, offset, out.tell() - offset, len(picks), kept is not None))
                    if kept is not None:
                        held[(out_path, offset)] = kept
        finally:
            for fd in fds.values():
                os.close(fd)
            if out is not None:
                out.close()
        sizes = {} if also is None else {pid: pss(pid) for pid in (os.getpid(), *also)}
        self.units = {}
        self.held = held
        for fd in self.fds.values():   # (the level read is done: its files may go)
            os.close(fd)
        self.fds = {}
        return fragments, sizes
