"""Simulation on every core (`kmc simulate`, the default engine `auto`): the
batches of walks spread over one forked process per core.

Worker w of n runs batches w, w + n, w + 2n, ... (checker.search.simulate.run_batch,
the pure function of the configuration and the batch number that the
local engine and a Spark task run) and sends each result down its pipe;
the parent takes them in batch order and absorbs them
(checker.search.simulate.Totals), stopping at the first batch that holds a
violation. So with --walks N the figures and the first violation (a
lasso too) are the local engine's and the Spark swarm's for the same
seed: which process walks a walk changes nothing in it. A worker stops
after a violating batch or at the run's limits; the pipe holds a worker
back when the parent is behind. ^C stops the workers; a worker that dies
is one `kmc: error:` line (exit 3).
"""
from __future__ import annotations

import os
import pickle
import signal
import time
from typing import Callable

from checker.search.parallel import STOP_SIGNALS, ParallelError, cores, fork_workers
from checker.search.simulate import Limits, SimConfig, Totals, run_batch, walker


def simulate_pool(cfg: SimConfig, limits: Limits, workers: int | None = None,
                  progress: Callable[[dict], None] | None = None,
                  progress_interval: float = 5.0) -> Totals:
    """The run on `workers` processes (None: one per core); one core or
    one worker: this process alone (checker.search.simulate.simulate_local)."""
    n = workers or cores()
    totals = Totals(cfg, walker(cfg).action_names)   # built before the fork: every worker has it
    if n <= 1:
        from checker.search.simulate import simulate_local
        try:
            return simulate_local(cfg, limits, progress, progress_interval, totals)[0]
        except KeyboardInterrupt as e:   # the walks so far, for the line that sums them up
            e.totals = totals
            raise
    pool = _Pool(cfg, limits, n)
    last = time.time()
    try:
        b = 0
        while totals.violation is None:
            r = pool.result(b)
            if r is None:
                break
            totals.absorb(r)
            b += 1
            if progress is not None and time.time() - last >= progress_interval:
                last = time.time()
                progress(totals.progress())
    except KeyboardInterrupt as e:   # the batches absorbed so far, for the line that sums them up
        e.totals = totals
        raise
    finally:
        pool.close()
    return totals


class _Pool:
    def __init__(self, cfg: SimConfig, limits: Limits, n: int):
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        self.n = n
        self.procs: list = []
        self.conns: list = []
        try:
            fork_workers(ctx, n, "kmc-walker", _worker,
                         lambda w, send, recv: (cfg, limits, w, n, send, recv),
                         self.procs, self.conns)
        except BaseException:
            self.close()
            raise

    def result(self, b: int) -> dict | None:
        """Batch b's result (None: the run's limits end it before b)."""
        w = b % self.n
        try:
            kind, payload = pickle.loads(self.conns[w].recv_bytes())
        except (EOFError, OSError):
            p = self.procs[w]
            p.join(5)
            code = p.exitcode
            how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            raise ParallelError(f"walker process {p.pid} died ({how}) before batch {b}") from None
        if kind == "crash":
            raise ParallelError(f"the model failed in a walker process: {payload}")
        return payload if kind == "ok" else None

    def close(self) -> None:
        for c in self.conns:
            c.close()
        for p in self.procs:
            if p.is_alive():
                p.kill()
        for p in self.procs:
            p.join(5)
        self.procs, self.conns = [], []


def _worker(cfg: SimConfig, limits: Limits, w: int, n: int, conn, recv) -> None:
    """In a forked child: batches w, w + n, ... until the limits or a
    violation (an evaluation error goes to the parent in its batch's
    result, as the local engine's)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the parent handles ^C and stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    recv.close()
    code = 0
    import gc
    from checker.search.pacing import GcPacer
    gc.disable()
    pacer = GcPacer()
    try:
        b = w
        while True:
            k = limits.next_batch(cfg, b)
            if k == 0:
                conn.send_bytes(pickle.dumps(("end", None)))
                return
            r = run_batch(cfg, b, k, limits.deadline, limits.max_memory)
            conn.send_bytes(pickle.dumps(("ok", r), protocol=pickle.HIGHEST_PROTOCOL))
            if r["violation"] is not None or r["error"] is not None:
                return
            pacer.collect()
            b += n
    except (OSError, ValueError):
        return   # the parent is gone or stopped the run
    except BaseException as e:  # noqa: BLE001 - a bug of the model: one line in the parent
        code = 1
        try:
            conn.send_bytes(pickle.dumps(("crash", f"{type(e).__name__}: {' '.join(str(e).split())}")))
        except (OSError, ValueError):
            pass
    finally:
        try:
            conn.close()
        finally:
            os._exit(code)
