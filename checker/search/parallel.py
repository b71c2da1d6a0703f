"""The `auto` engine: the local engine while the state space is small, every
core of the machine once a level is big enough to pay.

A run is the search core's (checker.search.core.Search: one process,
nothing started on the side) with this module's Expander, `AutoExpander`:
it expands levels as the local engine does until a level -- a level
boundary, where nothing is half done -- whose frontier holds at least
`threshold` states (when the machine has more than one core and the level
is not the depth bound); from there on, `PoolExpander` expands each level
in the same process that ran the local levels:

- the parent forks one worker per core; the workers inherit everything (the
  model, the seen set, the frontier) without a copy; worker w expands the
  frontier's chunks w, w + n, w + 2n, ... with checker.search.expand.expand_chunk
  (the local engine's own expansion and property checks) against its copy
  of the seen set, to which it adds what it finds, and sends each chunk's
  result down a pipe: the new successors' parts (no state objects),
  fingerprints, parents and actions, the violations, witnesses, deadlocks and
  per-action counts;
- the parent takes the chunks' results in chunk order -- the local engine's
  BFS order -- keeps the successors that are new to the real seen set at
  that point, and records them with Search.absorb, the core's own
  bookkeeping (counts, level logs, violations, witnesses, stopping);
- the next level's workers rebuild the states of their chunks from the
  parts (checker.search.codec.StateDecoder), as the local engine does for a
  frontier it spilled to disk.

Why identical answers: a worker's seen set, at any point, holds the level's
start and part of what the levels' earlier chunks found, so what it calls
new is a superset of what is new in BFS order, in the same order; the parent
drops the rest. A property violated, or witnessed, at a state a worker
wrongly thinks new was violated (witnessed) at that state's earlier
discovery in the same level, where the parent stops (records it) first; so
stopping at the first violation in the middle of a chunk, the generated
counts up to it, deadlocks and evaluation errors come out as the local
engine's. Counterexamples come from the parent's level logs as usual.

Nothing else is written to disk than what the local engine writes: when
the run keeps its finished levels (by default from a level of 50,000
states, or --checkpoint), each parallel level is saved as the local engine
saves one, so either engine resumes it. ^C stops the workers; a worker
that dies is one `kmc: error:` line (exit 3), never a hang.
"""
from __future__ import annotations

import os
import pickle
import signal
from collections import Counter
from itertools import chain, repeat
from typing import Iterable

from checker.search.core import CHUNK_STATES, CheckOptions, Search
from checker.search.engine import LocalExpander
from checker.search.expand import ChunkResult, expand_chunk
from checker.search.result import CheckResult
from checker.search.errors import EXIT_EVALUATION, EngineEvaluationError, KmcError
from checker.search.proc import cpu_idle, pss
from model.base import Model, Property

# Frontier size from which the remaining levels go parallel: a level costs
# the parallel part a fork per worker and per chunk a pipe hand-over, and the
# parent's bookkeeping; a few thousand states already pay (bench/auto_vs_local.py),
# and below this the whole check takes a few seconds at most.
THRESHOLD = 10_000
# ... and when at least this much of a core sat idle during the level before
IDLE_CORES = 0.5


class ParallelError(KmcError):
    """A worker process of the parallel search died or failed (exit 3)."""

    exit_code = EXIT_EVALUATION


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

    def __init__(self, threshold: int = THRESHOLD, workers: int | None = None):
        self.threshold = threshold
        self.meter = IdleMeter(cores()) if workers is None else None
        self.workers = workers if workers is not None else cores()
        self.local = LocalExpander()
        self.pool = PoolExpander(self.workers)
        self.handover_level: int | None = None
        self.busy_levels: list = []    # levels not handed over because no core was idle

    def expand(self, search: Search, level: int, frontier, log, keep: bool):
        if self.handover_level is None and self._hand_over(search, level, frontier):
            self.handover_level = level
        expander = self.pool if self.handover_level is not None else self.local
        return expander.expand(search, level, frontier, log, keep)

    def _hand_over(self, search: Search, level: int, frontier) -> bool:
        idle = self.meter.idle_cores() if self.meter is not None else None   # during the last level
        if self.workers <= 1 or len(frontier) < self.threshold or search.stopped:
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
                "threshold": self.threshold, "handover_level": hand,
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
            p = self.procs[w]
            p.join(5)
            code = p.exitcode
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            raise ParallelError(f"worker process {p.pid} of the parallel search died ({how}) while "
                                f"expanding level {self.level}") from None
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
    `threshold` states (default THRESHOLD, or $KMC_AUTO_THRESHOLD) when
    there is more than one worker (default one per core, or
    $KMC_AUTO_WORKERS). The result's `engine` says where each level ran:
    {"name": "auto", "workers", "threshold", "handover_level", "levels":
    ["local" | "pool"], "busy_levels"}."""
    return Search(model, properties, options, auto_expander(threshold, workers)).run()


def auto_expander(threshold: int | None = None, workers: int | None = None) -> AutoExpander:
    """The auto engine's levels (check_auto's defaults: $KMC_AUTO_THRESHOLD,
    $KMC_AUTO_WORKERS), for a Search of any kind (the liveness search's too)."""
    if threshold is None:
        threshold = _env_int(THRESHOLD_ENV) or THRESHOLD
    if workers is None:
        workers = _env_int(WORKERS_ENV)
    return AutoExpander(threshold, workers)
