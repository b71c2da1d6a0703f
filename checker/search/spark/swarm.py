"""Simulation on Spark: the walks of `kmc simulate --engine spark` spread
across executors (ARCHITECTURE.md "Simulation").

A task is one batch of walks (checker.search.simulate.run_batch: a pure function
of the configuration and the batch number; each walk seeded from the run's
seed and its number, each batch with its own action weights under
--swarm). The driver sends waves of batches (a few per core), absorbs the
results in batch order (checker.search.simulate.Totals: distinct states against
one fingerprint set in the driver, the first violation by walk number) and
stops at the first wave that holds a violation: the batches after the
violating one are dropped, so the figures and the violation are the local
engine's for the same seed and --walks. The violating walk is walked again
and shrunk in the driver.

Start-up as `kmc check --engine spark`: the master and Java are checked
first (one line, exit 2), the session comes from checker/search/spark/session.py
(a master that accepts TCP but takes no application fails within its 15 s),
then a preflight task per core builds the model (within the executor time
limit). While Spark starts, the driver walks the first batches itself (the
same task function, so the same walks); a run the driver finishes alone
waits for Spark all the same, and a Spark that then fails to start raises
with the driver's result attached (e.result), which the CLI writes and shows
before the error line.
"""
from __future__ import annotations

import os
import sys
import time
from functools import partial
from pathlib import Path
from typing import Callable

from checker.search.simulate import Limits, SimConfig, Totals, run_batch, simulate_local, walker
from checker.search.spark import session as sparksession
from checker.search.spark.errors import ExecutorSetupError, SparkJobError, SparkUnavailableError

WAVE_PER_CORE = 3        # batches per core in one Spark job
GIL_SWITCH_S = 0.0002    # while the driver walks and a thread starts Spark (as checker/search/spark/engine.py)


# ---- on the executors ------------------------------------------------------------------

def batch_task(cfg: SimConfig, deadline: float | None, item: tuple) -> dict:
    """One batch on an executor: run_batch, or {"crash": one line}."""
    from checker.search.spark import tasks
    batch, walks = item
    tasks._gc_off()  # as the BFS tasks: states are acyclic; collections paced by _collect()
    try:
        return run_batch(cfg, batch, walks, deadline)
    except Exception as e:  # noqa: BLE001 - reported to the driver as one line
        return {"crash": _error_line(e)}
    finally:
        tasks._collect()


def preflight(cfg: SimConfig, _index: int, _it) -> list:
    """Can this executor import kmc and build the model? (one record per task)"""
    try:
        w = walker(cfg)
        return [{"ok": True, "pid": os.getpid(), "python": sys.version.split()[0],
                 "variables": len(w.model.variables)}]
    except Exception as e:  # noqa: BLE001
        return [{"ok": False, "error": _error_line(e)}]


def _error_line(e: BaseException) -> str:
    from checker.search.errors import KmcError
    from model.base import ModelConfigError
    if isinstance(e, (KmcError, ModelConfigError)):
        return " ".join(str(e).split())
    from checker.search.spark.tasks import _crash
    return _crash(e)


# ---- the driver -------------------------------------------------------------------------

class SwarmRun:
    """One `kmc simulate --engine spark` run."""

    def __init__(self, cfg: SimConfig, limits: Limits, *, master: str | None = None,
                 log_dir: Path | None = None, progress: Callable[[dict], None] | None = None,
                 progress_interval: float = 5.0,
                 executor_timeout: float = sparksession.EXECUTOR_TIMEOUT_S,
                 driver_walks: bool = True):
        self.cfg = cfg
        self.limits = limits
        self.master = master
        self.log_dir = log_dir
        self.progress = progress
        self.progress_interval = progress_interval
        self.executor_timeout = executor_timeout
        self.driver_walks = driver_walks   # False: every batch on the executors (tests)
        self.spark = None
        self.startup_s = None
        self.waves = 0

    def _launch(self) -> None:
        t = time.perf_counter()
        spark = sparksession.get_session(self.master, self.log_dir)
        sparksession.ship_code(spark)
        self._preflight(spark)
        self.startup_s = time.perf_counter() - t
        self.spark = spark

    def _preflight(self, spark) -> None:
        from checker.search.spark.driver import run_preflight
        run_preflight(spark, partial(preflight, self.cfg), self.executor_timeout, self.cfg.model,
                      self.cfg.variant, shuffle=False)

    def _job(self, fn):
        try:
            return fn()
        except KeyboardInterrupt:
            try:
                self.spark.sparkContext.cancelAllJobs()
            finally:
                raise
        except Exception as e:  # noqa: BLE001 - Py4JJavaError and friends
            from checker.search import stop
            if stop.pending is not None:   # a ^C to the process group broke the JVM's answer
                raise stop.pending() from None
            from checker.search.spark.driver import _one_line, _python_error_line
            log = sparksession.log_path()
            raise SparkJobError(f"Spark job failed while walking: {_one_line(_python_error_line(str(e)))}"
                                + (f" (Spark's log: {log})" if log else "")) from None

    def run(self) -> Totals:
        """The walks' totals; on ^C or SIGTERM (noted as the spark check does,
        driver._StopWatch) the exception carries the totals so far (e.totals)."""
        from checker.search.spark.driver import _StopWatch
        self.totals = None
        try:
            with _StopWatch():
                return self._run()
        except KeyboardInterrupt as e:
            e.totals = self.totals
            raise

    def _run(self) -> Totals:
        cfg, limits = self.cfg, self.limits
        # bad input fails at once, before anything starts
        sparksession.check_master(self.master or sparksession.DEFAULT_MASTER)
        sparksession.check_java()
        t_start = time.perf_counter()
        totals = self.totals = Totals(cfg, walker(cfg).action_names)
        b = 0
        if sparksession.is_running(self.master) or not self.driver_walks:
            self._launch()
            from checker.search import stop   # (pyspark's own ^C handler, set in the main thread)
            stop.install()
        else:
            starter = sparksession.Starter(self._launch)
            switch = sys.getswitchinterval()
            sys.setswitchinterval(GIL_SWITCH_S)
            try:
                # the driver walks while Spark starts: the same batches, in order
                totals, b = simulate_local(cfg, limits, self.progress, self.progress_interval,
                                           totals, where="driver", stop=starter.done)
                finished = totals.violation is not None or limits.next_batch(cfg, b) == 0
                try:
                    starter.join()
                except (SparkUnavailableError, ExecutorSetupError) as e:
                    if finished:  # the driver's result is written and shown, then the error
                        e.result = totals
                    raise
                self.startup_s = starter.finished - t_start if starter.finished else None
            finally:
                sys.setswitchinterval(switch)
            if finished:
                return totals
        sc = self.spark.sparkContext
        per_wave = WAVE_PER_CORE * max(1, sc.defaultParallelism)
        last = time.time()
        while totals.violation is None:
            wave = []
            while len(wave) < per_wave:
                n = limits.next_batch(cfg, b + len(wave))
                if n == 0:
                    break
                wave.append((b + len(wave), n))
            if not wave:
                break
            task = partial(batch_task, cfg, limits.deadline)
            results = self._job(lambda: sc.parallelize(wave, len(wave)).map(task).collect())
            self.waves += 1
            for r in results:
                if "crash" in r:
                    raise SparkJobError(f"a walk task failed on an executor: {r['crash']}")
                totals.absorb(r, "spark")
                if totals.violation is not None:
                    break  # the batches after the violating one are dropped (the local engine never ran them)
            b += len(wave)
            if self.progress is not None and time.time() - last >= self.progress_interval:
                last = time.time()
                self.progress(totals.progress())
        return totals
