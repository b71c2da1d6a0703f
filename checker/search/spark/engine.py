"""The `spark` engine's driver: a LevelEngine of the search core
(checker/search/core.py: the same level loop, initial states, checks, limits
and result as the local engine), with each level's checks, expansion and
dedup on the executors, the seen set and every finished level on disk
(checker/search/spark/levels.py, seen.py; the run folder: runfolder.py; the
driver's side of the jobs: driver.py).

Job L, one Spark job of two stages (one stage, no shuffle, for a level of
fewer than SMALL_LEVEL states):
  read level L's files, a range of its BFS keys per task -> rebuild each
  state, check the properties on it, expand it (executors) -> shuffle by
  fingerprint partition -> merge: keep per fingerprint the witness with the
  smallest BFS key, drop the seen fingerprints (executors) -> write level
  L+1 (a msgpack file and a statistics file per partition, written by the
  merge tasks; their statistics are also the job's result).
Counts come from data (the statistics files), never from accumulators; the
driver holds the cumulative statistics only and never collects a frontier or
the seen set; level L+1 is renamed into place when complete, so a run can be
resumed after its last complete level.

Identical answers to the local engine: a new state keeps the witness with the
smallest BFS key (checker/search/codec.py), which is the local engine's first
discovery, so per-level counts, parents and counterexamples are the local
engine's. The local engine checks a state as it generates it; here the
states of level L are checked when job L rebuilds them, so stream L-1 (the
expansion of level L-1) is settled after job L: its first event in BFS order
-- a violation at level L, a deadlock at level L-1 -- is where the local
engine stops when it stops at the first violation, and the counts of level L
are then recounted up to that event. The level at the depth bound is never
expanded: its states are checked as job L-1 generates them (no job rebuilds
them, so they are neither shuffled nor written: the level's files keep what
traces and counts need), unless deadlocks are checked there or a property
raised (job L-1 then runs again with the states).

While this run starts Spark (the JVM, then the executors' preflight), the
driver runs the level jobs itself with the same task functions, in-process
(_expand_in_driver: the same expand tasks, one merge per
partition), on the core the starting JVM leaves idle; the executors take
over at the first level after they are ready (a level the driver is less
than half through is given up to them). The level files are the same either
way, so are the answers; level_times records where each level ran.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sys
import time
from collections import Counter
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable

from checker.search import registry, stop
from checker.search import codec
from checker.search.core import CheckOptions, check_options, run_levels
from checker.search.encoding import encode
from checker.search.expand import ExpandContext, initial_states, replay, resolve_projection
from checker.search.limits import DiskLimitError, Limits
from checker.search.result import DEADLOCK, CheckResult, Violation, assemble
from checker.search.errors import EngineEvaluationError, KmcError, SpecError
from checker.search.files import DISK_FULL, disk_full
from checker.search.proc import TreeMemory, ancestor_matching
from checker.search.spark import levels, seen as seenruns, session as sparksession, tasks
from checker.search.spark.driver import (_InDriver, _one_line, _python_error_line, _StopWatch, gather,
                                         gather_next, run_preflight)
from checker.search.spark.runfolder import FORMAT, SpecConfig, Totals, open_run
from checker.search.spark.errors import (ExecutorSetupError, RunInterrupted,
                                  SparkJobError, SparkUnavailableError)
from model.base import ALWAYS, SOMETIMES, ModelConfigError

STOP_AFTER_ENV = "KMC_SPARK_STOP_AFTER_LEVEL"
# a frontier below this is expanded in one task, into one partition, without
# a shuffle: a shuffle and a second stage cost about as much as a level of a
# few thousand states shares out over two cores (measured: the git history of bench/README.md)
SMALL_LEVEL = 4000
# While this run starts Spark (the JVM takes one core for ~8 s on this kind
# of machine, then the executors' preflight ~3 s), the driver runs the level
# jobs itself, in-process, with the executors' task code (tasks.py): the same
# answers, from the core the JVM leaves idle. When the executors are ready
# the driver gives its level up to them unless it has expanded half of it
# already. It takes a level of up to this many states (its successors are
# held in memory); a bigger one waits for the executors.
DRIVER_FRONTIER = 100_000
GIL_SWITCH_S = 0.0002


class SparkSearch:
    """One run (or resumed run) of the spark engine."""

    def __init__(self, spec_or_config, options: CheckOptions | None = None, *, master: str | None = None,
                 partitions: int | None = None, run_dir: Path | str | None = None,
                 resume: Path | str | None = None, out_root: Path | str = "results",
                 stop_after_level: int | None = None, progress: Callable[[dict], None] | None = None,
                 spark_conf: dict | None = None, inject_failure: tuple | None = None,
                 executor_timeout: float = sparksession.EXECUTOR_TIMEOUT_S,
                 small_level: int = SMALL_LEVEL, driver_frontier: int = DRIVER_FRONTIER):
        self.start_time = time.perf_counter()
        self.options = options or CheckOptions()
        self.spec = SpecConfig.of(spec_or_config)
        opts = self.options
        check_options(opts)
        if partitions is not None and partitions < 1:
            raise SpecError(f"--partitions must be >= 1, not {partitions}")
        try:
            self.model, props = registry.build(self.spec.model, self.spec.variant, self.spec.constants)
        except ModelConfigError as e:
            raise SpecError(f"constants rejected by model {self.spec.model!r}: {e}") from None
        self.properties = registry.select_properties(props, self.spec.invariants)
        self.always = [p for p in self.properties if p.kind == ALWAYS]
        self.sometimes_props = [p for p in self.properties if p.kind == SOMETIMES]
        self.projection = resolve_projection(self.model, opts.projection)
        self.ctx = ExpandContext.create(self.model, self.properties, opts.fingerprint_bits, self.projection,
                                        opts.check_deadlock, opts.stop_on_violation)
        self.master = master
        self.requested_partitions = partitions
        self.resume = Path(resume) if resume is not None else None
        if self.resume is not None:
            self.run_dir = self.resume
        elif run_dir is not None:
            self.run_dir = Path(run_dir)
        else:
            from checker.search.files import new_run_id
            self.run_dir = Path(out_root) / self.spec.name / new_run_id()
        if stop_after_level is None and os.environ.get(STOP_AFTER_ENV, "").strip():
            try:
                stop_after_level = int(os.environ[STOP_AFTER_ENV])
            except ValueError:
                raise SpecError(f"{STOP_AFTER_ENV} must be a level number") from None
        self.stop_after_level = stop_after_level
        self.progress = progress if progress is not None else opts.progress
        sparksession.set_notices(_notice if self.progress is not None else None)
        self.spark_conf = spark_conf
        self.inject_failure = inject_failure
        self.executor_timeout = executor_timeout
        self.small_level = small_level   # tests lower it to exercise the shuffle on small specs
        self.driver_frontier = driver_frontier   # 0: every level on the executors
        self.spark = None
        self.cfg: tasks.TaskConfig | None = None
        self.startup_s = 0.0
        self._starter = None        # the thread starting Spark while the driver runs levels
        self.max_partitions: int | None = None
        self.in_driver = False      # the current level's job runs in the driver
        self.driver_levels = 0      # level jobs the driver ran while Spark started
        self._next_checks = None   # (level, violations, witnesses): see _gather_next
        # every process of the run: this driver, its JVM, the Python workers
        # the JVM forks, a standalone cluster's executors on this machine
        # (measured by a thread: the driver waits on the JVM during a level)
        self.memory = TreeMemory(self.options.max_memory)
        kept = f"the finished levels are kept: go on with: kmc check --resume {self.run_dir}"
        self.limits = Limits(self.options, self.memory,
                             lambda: f"{kept} and a higher --max-memory (or none)",
                             lambda: f"free space there, or lower it (--min-free-disk SIZE, or none); {kept}")
        self.totals: Totals | None = None

    # ---- the configuration a resume must match ----

    def run_config(self) -> dict:
        o = self.options
        return {
            "format": FORMAT,
            "engine": "spark",
            "name": self.spec.name,
            "model": self.spec.model,
            "variant": self.spec.variant,
            "constants": self.spec.constants,
            "properties": [p.name for p in self.properties],
            "max_depth": o.max_depth,
            "check_deadlock": o.check_deadlock,
            "stop_on_violation": o.stop_on_violation,
            "fingerprint_bits": o.fingerprint_bits,
            "projection": list(self.projection) if self.projection is not None else None,
        }

    # ---- Spark ----

    def _start_spark(self) -> None:
        """Start Spark (or adopt the running session). When this run launches
        the JVM, that happens in a thread while the driver runs the first
        small levels (DRIVER_FRONTIER); _await_spark() joins it."""
        o = self.options
        self.cfg = tasks.TaskConfig(
            model=self.spec.model, variant=self.spec.variant,
            constants_json=json.dumps(self.spec.constants, sort_keys=True),
            properties=tuple(p.name for p in self.properties),
            projection=tuple(self.projection) if self.projection is not None else None,
            bits=o.fingerprint_bits, check_deadlock=o.check_deadlock,
            stop_on_violation=o.stop_on_violation, partitions=1,
            inject_failure=self.inject_failure)
        if self.driver_frontier <= 0 or sparksession.is_running(self.master):
            if not sparksession.is_running(self.master):
                self._say(f"starting Spark's JVM ({self.master or sparksession.DEFAULT_MASTER}) ...")
            self._launch()
            self.max_partitions = self._spark_partitions
            return
        # the bad-input checks first, so that they fail at once
        sparksession.check_master(self.master or sparksession.DEFAULT_MASTER)
        sparksession.check_java()
        # the partitions the driver writes: the executors' cores when known
        # now (a local master), else one partition only (_driver_may_expand)
        self.max_partitions = self.requested_partitions or sparksession.local_cores(self.master)
        self._say(f"starting Spark's JVM ({self.master or sparksession.DEFAULT_MASTER}) in the background; "
                  f"the driver runs the first small levels meanwhile")
        self._starter = sparksession.Starter(self._launch)
        # the starter thread talks to the JVM (py4j) call after call, each one
        # waiting for the GIL the driver's levels hold: hand it over sooner
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(GIL_SWITCH_S)

    def _launch(self) -> None:
        """Start the session, ship the code, run the preflight; then the
        executors are ready (in the starter thread, or the caller's)."""
        t = time.perf_counter()
        spark = sparksession.get_session(self.master, self.run_dir, self.spark_conf)
        sparksession.ship_code(spark)
        # fingerprint partitions of a level: one per core (each task of a stage
        # costs a Python hand-over and a file), one for a level below SMALL_LEVEL
        P = self.requested_partitions or max(2, spark.sparkContext.defaultParallelism)
        self._preflight(spark)
        self.startup_s = time.perf_counter() - t
        self._spark_partitions = P
        self.spark = spark

    def _await_spark(self) -> None:
        """Wait for the starter thread: its error is raised here."""
        if self._starter is None:
            return
        starter, self._starter = self._starter, None
        try:
            starter.join()
        finally:
            sys.setswitchinterval(self._switch_interval)
        self.max_partitions = self._spark_partitions
        # startup as the run saw it: from the run's start to ready executors
        self.startup_s = starter.finished - self.start_time

    def _driver_may_expand(self, frontier: int, P: int | None) -> bool:
        """The driver runs this level's job itself: Spark is still starting,
        the level is small, and its partition count is known."""
        return (self._starter is not None and not self._starter.done() and frontier <= self.driver_frontier
                and P is not None)

    def _preflight(self, spark) -> None:
        self.executor_info = run_preflight(spark, partial(tasks.preflight, self.cfg), self.executor_timeout,
                                           self.spec.model, self.spec.variant, shuffle=True)
        import socket
        here = socket.gethostname()
        for answer in self.executor_info:   # executor JVMs of a cluster on this machine: the run's too
            if answer.get("host") == here and answer.get("pid"):
                jvm = ancestor_matching(answer["pid"], "CoarseGrainedExecutorBackend")
                if jvm is not None:
                    self.memory.add_root(jvm)

    def _job(self, what: str, fn):
        """Run a Spark action (or, Spark still starting, _InDriver's collect);
        a failure after Spark's retries is one line."""
        try:
            return fn()
        except KeyboardInterrupt:
            try:
                self.spark.sparkContext.cancelAllJobs()
            except Exception:  # noqa: BLE001 - the gateway call the interrupt broke
                pass
            raise
        except (SparkUnavailableError, ExecutorSetupError, SparkJobError):
            raise
        except Exception as e:  # noqa: BLE001 - Py4JJavaError, AnalysisException, ...
            if stop.pending is not None:  # a Ctrl-C or kill broke the gateway call: that it is
                raise stop.pending() from None
            log = sparksession.log_path()
            line = _one_line(_python_error_line(str(e)))
            if any(f"[Errno {n}]" in line for n in DISK_FULL):   # a task's OSError, as text
                raise self._disk_full(f"while {what} (a task's write)") from None
            raise SparkJobError(f"Spark job failed while {what}: {line}"
                                + (f" (Spark's log: {log})" if log else "")) from None

    def _read(self, level_path: Path, fn, inputs: list | None = None):
        """fn(index, rows) on each partition file of a level, one task per
        file, or one per task input (a list of slices of the level's files:
        levels.range_slices); the tasks read the files themselves (the run
        folder is shared)."""
        files = levels.part_files(level_path)
        if not files:
            raise SparkJobError(f"no level files in {level_path}")
        if inputs is None:
            inputs = [[(path,)] for path in files]
        if self._starter is not None:
            # Spark is still starting, so every level so far ran in the
            # driver (small ones): their look-ups run here too, and a result
            # the driver finished does not wait for (or die with) the executors
            return _InDriver([x for i, inp in enumerate(inputs) for x in tasks.on_files(fn, i, [inp])])
        return (self.spark.sparkContext.parallelize(inputs, len(inputs))
                .mapPartitionsWithIndex(partial(tasks.on_files, fn)))

    def _partitions_for(self, frontier: int, previous: int = 0) -> int | None:
        """Partitions of the level expanded from `frontier` states (after a
        level of `previous`): one while it is small; all of them from the
        level before the first big one on (its size guessed from the last
        growth), as a level's files are the next expansion's tasks. None:
        all of them, not known yet (Spark is starting on a cluster)."""
        growth = frontier / previous if previous and frontier > previous else 1.0
        return 1 if frontier * growth < self.small_level else self.max_partitions

    # ---- level 0 (the driver, as the local engine) ----

    def _initial(self) -> Totals:
        ctx, bits = self.ctx, self.options.fingerprint_bits
        totals = Totals(level=0, per_level_distinct=[0],
                         sometimes={p.name: None for p in self.sometimes_props})
        entries: list = []   # (key, fp, parts)
        counts = {"generated": 0}
        order = {p.name: i for i, p in enumerate(self.always)}
        for (_, parts, fp), violated, witnessed in initial_states(ctx, counts):
            key = codec.key_component(len(entries))
            entries.append((key, fp, parts))
            for name in violated:
                if not totals.recorded(name):
                    totals.violations.append([name, 0, codec.fp_to_str(fp), [-1, key.hex(), order[name]]])
                    if self.options.stop_on_violation:
                        totals.stopped = True
            for name in witnessed:
                totals.sometimes[name] = 0
        totals.generated = counts["generated"]
        totals.per_level_distinct[0] = len(entries)
        if self._partitions_for(len(entries)) is None:
            self._await_spark()
        P = totals.partitions = self._partitions_for(len(entries))
        rows = []
        for q in range(P):
            mine = [e for e in entries if e[1] % P == q]
            for seq, start in enumerate(range(0, len(mine), tasks.BATCH)):
                b = mine[start:start + tasks.BATCH]
                rows.append((tasks.STATES, q, seq, len(b), codec.pack_fps([e[1] for e in b], bits),
                             codec.pack([e[0] for e in b]), codec.pack_fps([0] * len(b), bits),
                             codec.pack([None] * len(b)), codec.pack_states([e[2] for e in b])))
        tmp = levels.tmp_level_dir(self.run_dir, 0)
        shutil.rmtree(tmp, ignore_errors=True)
        for q in range(P):
            levels.write_part(tmp, q, [r for r in rows if r[1] == q])
            seenruns.write_seen(tmp, 0, q, P, bits, sorted(e[1] for e in entries if e[1] % P == q))
        if totals.stopped:
            totals.done = True
            totals.states_left = len(entries)
        levels.commit_level(self.run_dir, 0, totals.to_json())
        return totals

    # ---- one level ----

    # ---- one level ----
    #
    # Job L rebuilds the states of level L on the executors, checks them (the
    # properties, once per state) and expands them into level L+1. The local
    # engine checks a state when it generates it, in the stream of level L-1;
    # so after job L the driver settles stream L-1: the violations at level L,
    # the deadlocks and evaluation errors met while expanding level L-1
    # (job L-1, kept as `pending`) -- the first of them in BFS order, when the
    # search stops at the first violation, is where the local engine stopped.

    def _job_for(self, totals: Totals, expand: bool) -> tasks.LevelJob:
        L = totals.level
        o = self.options
        # the next level is the bound, checked as generated (unless its
        # deadlocks are looked for: that needs its states)
        next_is_bound = (expand and o.max_depth is not None and L + 1 >= o.max_depth
                         and not o.check_deadlock)
        return tasks.LevelJob(
            level=L, check=L > 0, expand=expand,
            bound_deadlocks=not expand and o.check_deadlock,
            pending=tuple(n for n, d in totals.sometimes.items() if d is None),
            check_next=next_is_bound, keep_parts=not next_is_bound)

    def _level(self, totals: Totals) -> tuple[Totals, bool]:
        """Job L: check level L, expand it into the temp level L+1. Returns the
        new totals and whether level L+1 is to be committed."""
        L = totals.level
        job = self._job_for(totals, expand=True)
        tmp = levels.tmp_level_dir(self.run_dir, L + 1)
        parts = self._expand_job(totals, job, tmp)
        expand = [e for p in parts for e in p["expand"]]
        self._next_checks = gather_next(job, L + 1, expand)
        if self._next_checks is None and not job.keep_parts:
            # a property raised while the bound level was generated: again with
            # its states, which the driver then rebuilds to check them
            job = dataclasses.replace(job, keep_parts=True)
            parts = self._expand_job(totals, job, tmp)
            expand = [e for p in parts for e in p["expand"]]
        self._last_cpu = (sum(e.get("cpu_s", 0.0) for e in expand), sum(p.get("cpu_s", 0.0) for p in parts))
        checks = gather(expand)
        checks["stream_errors"] += [tuple(p["error"]) for p in parts if p["error"]]
        t = self._settle(totals, checks)
        if t.done:
            shutil.rmtree(tmp, ignore_errors=True)
            return t, False
        # stream L: settled after job L+1 has checked level L+1
        gen: Counter = Counter()
        for e in expand:
            gen.update(e["by_action"])
        dist: Counter = Counter()
        for p in parts:
            dist.update(p["by_action"])
        t.pending = {"generated": dict(gen), "distinct": dict(dist), "deadlock": checks["deadlock"],
                     "errors": checks["stream_errors"]}
        t.per_level_distinct.append(sum(p["new"] for p in parts))
        t.level = L + 1
        t.partitions = self.cfg.partitions
        if self._next_checks is not None:  # kept for a resume at the bound
            lv, violations, witnesses = self._next_checks
            t.bound_checks = [lv, {n: [k.hex(), fp] for n, (k, fp) in violations.items()},
                              {n: [k.hex(), fp] for n, (k, fp) in witnesses.items()}]
        return t, True

    def _expand_job(self, totals: Totals, job: tasks.LevelJob, tmp: Path) -> list[dict]:
        """Run job L into the temp level folder (in the driver while Spark
        starts, else on Spark): its partitions' statistics."""
        L = job.level
        frontier = totals.per_level_distinct[L]
        previous = totals.per_level_distinct[L - 1] if L > 0 else 0
        here = levels.level_dir(self.run_dir, L)
        out_dir = str(tmp)
        P = self._partitions_for(frontier, previous)
        self.in_driver = self._driver_may_expand(frontier, P)
        if self.in_driver:
            cfg = self.cfg = dataclasses.replace(self.cfg, partitions=P)
            shutil.rmtree(tmp, ignore_errors=True)
            try:
                return self._check_parts(L, cfg, tmp, self._expand_in_driver(cfg, job, here, out_dir, frontier))
            except tasks.Abandoned:  # the executors are ready: they do it
                self.in_driver = False
        self._await_spark()
        cfg = self.cfg = dataclasses.replace(self.cfg, partitions=self._partitions_for(frontier, previous))
        shutil.rmtree(tmp, ignore_errors=True)
        if cfg.partitions == 1 and len(levels.part_files(here)) == 1:  # a small level: one task, no shuffle
            merged = self._read(here, partial(tasks.expand_merge_partition, cfg, job, out_dir))
        else:
            merged = (self._read(here, partial(tasks.expand_partition, cfg, job),
                                 levels.expand_inputs(here, cfg.partitions))
                      .partitionBy(cfg.partitions, tasks.route)
                      .mapPartitionsWithIndex(partial(tasks.merge_partition, cfg, L + 1, out_dir)))
        parts = sorted(self._job(f"expanding level {L}", merged.collect), key=itemgetter("part"))
        return self._check_parts(L, cfg, tmp, parts)

    @staticmethod
    def _check_parts(L: int, cfg: tasks.TaskConfig, tmp: Path, parts: list[dict]) -> list[dict]:
        if len(parts) != cfg.partitions or len(levels.part_files(tmp)) != cfg.partitions:
            raise SparkJobError(f"level {L + 1}: {len(parts)} statistics files for {cfg.partitions} partitions")
        return parts

    def _expand_in_driver(self, cfg: tasks.TaskConfig, job: tasks.LevelJob, here: Path, out_dir: str,
                          frontier: int) -> list[dict]:
        """Job L in this process, as Spark runs it: the same expand tasks
        (levels.expand_inputs), their records routed by partition, one merge task per partition.
        Raises tasks.Abandoned when the executors get ready before half of
        the level is expanded (they finish it sooner from the start)."""
        import gc
        starter = self._starter
        done = 0

        def tick(n: int) -> None:
            nonlocal done
            done += n
            if starter.done() and 2 * done < frontier:
                raise tasks.Abandoned

        enabled = gc.isenabled()  # the tasks pace the collector themselves
        try:
            records: list[list] = [[] for _ in range(cfg.partitions)]
            for i, inp in enumerate(levels.expand_inputs(here, cfg.partitions)):
                for q, record in tasks.on_files(partial(tasks.expand_partition, cfg, job, tick=tick), i, [inp]):
                    records[q % cfg.partitions].append((q, record))  # as Spark's partitionBy
            return [stats for q in range(cfg.partitions)
                    for stats in tasks.merge_partition(cfg, job.level + 1, out_dir, q, iter(records[q]))]
        finally:
            if enabled:
                gc.enable()

    def _settle(self, totals: Totals, checks: dict) -> Totals:
        """Stream L-1 (L = totals.level), now that level L is checked: raise the
        first evaluation error, stop at the first event, or record and go on."""
        o = self.options
        L = totals.level
        t = Totals.from_json(totals.to_json())
        pending = t.pending or {"generated": {}, "distinct": {}, "deadlock": None, "errors": []}
        violations, witnesses = checks["violations"], checks["witnesses"]
        deadlock = pending["deadlock"]
        crash = [e for e in checks["check_errors"] + checks["stream_errors"] + pending["errors"]
                 if e[2] == "crash"]
        if crash:
            self._raise(crash[0], L)
        # stream L-1: expanding level L-1 (job L-1) and checking level L (job L)
        errors = [tuple(e) for e in pending["errors"]] + checks["check_errors"]
        events = [v[0] for v in violations.values()] + ([deadlock[0]] if deadlock else [])
        first_event = min(events) if events else None
        if errors:
            error = min(errors, key=lambda x: x[0])
            if not o.stop_on_violation or first_event is None or error[0] <= first_event:
                self._raise(error, L)
        order = {p.name: i for i, p in enumerate(self.always)}
        if L > 0 and o.stop_on_violation and first_event is not None:
            return self._stop_at(t, first_event, violations, deadlock, witnesses)
        if L > 0:
            t.generated += sum(pending["generated"].values())
            t.add("per_action_generated", pending["generated"])
            t.add("per_action_distinct", pending["distinct"])
        for name in sorted(violations, key=order.get):
            key, fp = violations[name]
            if not t.recorded(name):
                t.violations.append([name, L, fp, [L - 1, key.hex(), order[name]]])
        if deadlock is not None and not t.recorded(DEADLOCK):
            t.violations.append([DEADLOCK, L - 1, deadlock[1], [L - 1, deadlock[0].hex(), len(order)]])
        for name, (key, _) in witnesses.items():
            if t.sometimes.get(name, 0) is None:
                t.sometimes[name] = L
        t.pending = None
        return t

    def _stop_at(self, t: Totals, cut: bytes, violations: dict, deadlock, witnesses: dict) -> Totals:
        """The local engine stops at the first violation (or deadlock) in BFS
        order: count what it had generated and found up to there (stream L-1)."""
        L = t.level
        cfg = self.cfg
        order = {p.name: i for i, p in enumerate(self.always)}
        if deadlock is not None and deadlock[0] == cut:
            cut_parent, cut_fp, inclusive = cut, None, False
            found = [[DEADLOCK, L - 1, deadlock[1], [L - 1, cut.hex(), len(order)]]]
        else:
            names = sorted((n for n, v in violations.items() if v[0] == cut), key=order.get)
            fp = violations[names[0]][1]
            cut_parent, cut_fp, inclusive = codec.parent_key(cut), codec.fp_from_str(fp), True
            found = [[n, L, fp, [L - 1, cut.hex(), order[n]]] for n in names]
        previous = self._read(levels.level_dir(self.run_dir, L - 1),
                              partial(tasks.recount_generated, cfg, cut_parent, cut_fp))
        gen_parts = self._job("recounting the last level", previous.collect)
        here = self._read(levels.level_dir(self.run_dir, L), partial(tasks.recount_distinct, cfg, cut, inclusive))
        dist_parts = self._job("recounting the last level", here.collect)
        gen: Counter = Counter()
        for c in gen_parts:
            gen.update(c)
        dist: Counter = Counter()
        for c in dist_parts:
            dist.update(c)
        t.per_level_distinct[L] = sum(dist.values())
        del t.per_level_distinct[L + 1:]
        t.generated += sum(gen.values())
        t.add("per_action_generated", gen)
        t.add("per_action_distinct", dist)
        for name, (key, _) in witnesses.items():
            if t.sometimes.get(name, 0) is None and (key < cut or (inclusive and key == cut)):
                t.sometimes[name] = L
        t.violations.extend(v for v in found if not t.recorded(v[0]))
        t.stopped = t.done = True
        t.pending = None
        t.states_left = t.per_level_distinct[L]
        return t

    def _raise(self, error: tuple, level: int):
        pos, message, kind = error
        if kind in ("evaluation", "check"):
            raise EngineEvaluationError(message, level=level)
        raise SparkJobError(f"the model failed on a Spark executor near level {level}: {message}")

    _NOTHING = {"violations": {}, "witnesses": {}, "deadlock": None, "check_errors": [], "stream_errors": []}

    def _check_only(self, totals: Totals) -> dict:
        """Job L without expansion: the depth bound (and deadlocks there)."""
        L = totals.level
        job = self._job_for(totals, expand=False)
        if not (job.check or job.bound_deadlocks) or not totals.per_level_distinct[L]:
            return dict(self._NOTHING)
        frontier = self._read(levels.level_dir(self.run_dir, L), partial(tasks.expand_partition, self.cfg, job))
        found = self._job(f"checking level {L}", frontier.map(tasks.record_payload).collect)
        return gather(found)

    def _finish(self, totals: Totals, bound: bool) -> Totals:
        """The last level: settle its stream and, at the bound, its deadlocks
        (checker.search.core.Search.at_bound, after the levels)."""
        L = totals.level
        nxt = self._next_checks
        if nxt is None and totals.bound_checks is not None:  # a resumed run
            lv, violations, witnesses = totals.bound_checks
            nxt = (lv, {n: [bytes.fromhex(k), fp] for n, (k, fp) in violations.items()},
                   {n: [bytes.fromhex(k), fp] for n, (k, fp) in witnesses.items()})
        if not totals.per_level_distinct[L]:
            checks = dict(self._NOTHING)
        elif bound and nxt is not None and nxt[0] == L and not self.options.check_deadlock:
            # checked as they were generated (job L-1): no job rebuilds them
            checks = {**self._NOTHING, "violations": nxt[1], "witnesses": nxt[2]}
        else:
            checks = self._check_only(totals)
        bound_deadlock, bound_errors = checks["deadlock"], checks["stream_errors"]
        t = self._settle(totals, {**checks, "deadlock": None, "stream_errors": []})
        if t.done:
            return t
        if bound:
            error = min(bound_errors, key=lambda x: x[0]) if bound_errors else None
            if error is not None and (not self.options.stop_on_violation or bound_deadlock is None
                                      or error[0] < bound_deadlock[0]):
                self._raise(error, L)
            if bound_deadlock is not None and not t.recorded(DEADLOCK):
                t.violations.append([DEADLOCK, L, bound_deadlock[1], [L + 1, bound_deadlock[0].hex(), 0]])
                if self.options.stop_on_violation:
                    t.stopped = True
            t.states_left = t.per_level_distinct[L]
        else:
            t.exhausted, t.states_left = True, 0
        t.done = True
        return t

    # ---- the run ----

    def run(self) -> CheckResult:
        self.memory.start()
        try:
            with _StopWatch():
                return run_levels(self)
        except KeyboardInterrupt:
            stop.handled()
            raise
        except (SparkUnavailableError, ExecutorSetupError) as e:
            raise self._failed_start(e) from None
        except OSError as e:
            if not disk_full(e):
                raise
            raise self._disk_full("") from None
        finally:
            self.memory.stop()
            if self._starter is not None:  # stopped before the executors were awaited
                sys.setswitchinterval(self._switch_interval)

    def _disk_full(self, when: str) -> DiskLimitError:
        kept = (f"the finished levels are kept: go on with --resume {self.run_dir}"
                if levels.committed_levels(self.run_dir) else "then run again")
        return DiskLimitError(f"no space left on the disk of {self.run_dir}"
                              + (f" {when}" if when else "") + f": free space there; {kept} "
                              f"(--min-free-disk stops a run before the disk is full)")

    def _check_disk(self, totals: Totals, level: int) -> None:
        """--min-free-disk, between levels: the next level's files, if it grows
        as `level` did, must leave the disk of the run folder its reserve."""
        final = levels.level_dir(self.run_dir, level)
        written = sum(f.stat().st_size for f in final.rglob("*") if f.is_file())
        self.limits.disk_growth(final, level, sum(totals.per_level_distinct), written, totals.per_level_distinct)

    def _failed_start(self, e: KmcError) -> KmcError:
        """Spark did not start. A new run's folder goes unless the driver
        finished levels beyond the initial states meanwhile: those are kept
        (resumable) and the message says so. A result the driver finished
        alone rides on the error (e.result) for the CLI to write and show."""
        if getattr(e, "result", None) is not None or self.resume is not None:
            return e
        done = levels.committed_levels(self.run_dir)
        if len(done) <= 1:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            return e
        kept = type(e)(f"{e.one_line()}; the {len(done) - 1} levels the driver finished are kept: "
                       f"go on with --resume {self.run_dir} --master <a working master>")
        return kept

    # ---- the core's LevelEngine (checker/search/core.py run_levels) ----

    @property
    def stopped(self) -> bool:
        return self.totals is not None and self.totals.done

    def start(self) -> int:
        totals = open_run(self.run_dir, self.resume is not None, self.run_config(),
                          {"partitions": self.requested_partitions, "master": self.master,
                           "options": self.options.run_options})   # (--resume RUN_DIR alone)
        self._start_spark()
        if totals is None:
            t0 = time.perf_counter()
            totals = self._initial()
            self._report(totals, time.perf_counter() - t0, expanded=0)
        self.totals = totals
        self._stop_after(totals.level)
        return totals.level

    def frontier_size(self, level: int) -> int:
        return self.totals.per_level_distinct[level]

    def expand(self, level: int) -> None:
        """Job `level` (and its settling); level + 1 committed unless the search stopped in it."""
        t0 = time.perf_counter()
        frontier = self.totals.per_level_distinct[level]
        totals, commit = self._level(self.totals)
        seconds = time.perf_counter() - t0
        self.totals = totals
        if not commit:
            return   # (totals.done: stopped at its first event in BFS order)
        # [level, seconds, states expanded, executor CPU s in expand, in merge,
        #  where the job ran: "spark" or "driver" (while Spark started)]
        where = "driver" if self.in_driver else "spark"
        self.driver_levels += self.in_driver
        totals.level_times.append([level + 1, round(seconds, 3), frontier,
                                   round(self._last_cpu[0], 3), round(self._last_cpu[1], 3), where])
        levels.commit_level(self.run_dir, level + 1, totals.to_json())
        self._report(totals, seconds, expanded=frontier, where=where)

    def level_done(self, level: int) -> None:
        # --max-memory (the run's processes at their most during the level: the
        # thread's samples) and --min-free-disk; the finished levels stay resumable
        self.limits.between_levels(level, sum(self.totals.per_level_distinct))
        self._check_disk(self.totals, level)
        self._stop_after(level)

    def at_bound(self, level: int) -> None:
        self.totals = self._finish(self.totals, bound=True)

    def finish(self, level: int) -> CheckResult:
        t = self.totals
        if not t.done:   # an empty level: the search is over
            t = self.totals = self._finish(t, bound=False)
        levels.rewrite_stats(self.run_dir, t.level, t.to_json())
        result = self._result(t)  # (Spark still starting: traces looked up in the driver)
        if self._starter is not None and not self._starter.done():
            self._say("the search finished in the driver; waiting for Spark's JVM, started with the run, "
                      "so that a Spark that does not work here is still reported (--engine local needs no JVM)")
        try:
            self._await_spark()  # a master asked for that does not work is an error all the same
        except (SparkUnavailableError, ExecutorSetupError) as e:
            e.result = result
            raise
        return result

    def _stop_after(self, level: int) -> None:
        if self.stop_after_level is not None and level >= self.stop_after_level:
            raise RunInterrupted(f"stopped after level {level} as asked; go on with --resume {self.run_dir}",
                                 run_dir=self.run_dir, level=level)

    def _say(self, line: str) -> None:
        if self.progress is not None:
            _notice(line)

    def _report(self, totals: Totals, seconds: float, expanded: int, where: str = "driver") -> None:
        if self.progress is None:
            return
        elapsed = time.perf_counter() - self.start_time
        distinct = sum(totals.per_level_distinct)
        generated = totals.generated + sum((totals.pending or {}).get("generated", {}).values())
        self.progress({"level": totals.level, "frontier": totals.per_level_distinct[totals.level],
                       "expanded": expanded, "generated": generated, "distinct": distinct,
                       "level_s": seconds, "elapsed_s": elapsed,
                       "generated_per_s": generated / elapsed if elapsed else 0.0,
                       "distinct_per_s": distinct / elapsed if elapsed else 0.0,
                       "where": where, "run_dir": str(self.run_dir)})

    # ---- counterexamples ----

    def _pointers(self, level: int, wanted: set) -> dict:
        rows = self._read(levels.level_dir(self.run_dir, level),
                          partial(tasks.find_pointers, self.cfg, frozenset(wanted)))
        found = self._job(f"looking up level {level}", rows.collect)
        return {codec.fp_from_str(fp): (codec.fp_from_str(parent), action) for fp, parent, action in found}

    def traces(self, targets: list[tuple[int, int]]) -> list[list]:
        """Shortest traces to (level, fp) targets: parent pointers looked up
        level by level in the level files, then replayed from an initial state
        (as checker.search.core.Search.trace does)."""
        paths: list[list] = [[] for _ in targets]   # (fp, action bytes) from the state back to level 0
        cursor = [fp for _, fp in targets]
        top = max((lv for lv, _ in targets), default=-1)
        for lv in range(top, -1, -1):
            active = [i for i, (tl, _) in enumerate(targets) if tl >= lv]
            if not active:
                continue
            found = self._pointers(lv, {cursor[i] for i in active})
            for i in active:
                if cursor[i] not in found:
                    raise SparkJobError(f"trace lookup failed: fingerprint {cursor[i]:x} is not in level {lv}")
                parent, action = found[cursor[i]]
                paths[i].append((cursor[i], action))
                cursor[i] = parent
        return [self._replay(list(reversed(p))) for p in paths]

    def _replay(self, path: list) -> list:
        # path: [(fp, encoded action)]; actions crossed processes as msgpack bytes
        return replay(self.model, self.ctx, path, lambda action, abytes: encode(tuple(action)) == abytes)

    def _result(self, totals: Totals) -> CheckResult:
        ordered = sorted(totals.violations, key=lambda v: (v[1], v[3][0], v[3][1], v[3][2]))
        traces = self.traces([(v[1], codec.fp_from_str(v[2])) for v in ordered])
        violations = [Violation(v[0], v[1], tr) for v, tr in zip(ordered, traces)]
        per_level = list(totals.per_level_distinct)
        if len(per_level) > 1 and not per_level[-1]:
            per_level.pop()
        return assemble(self.model, self.options, self.projection, violations=violations,
                        distinct=sum(per_level), generated=totals.generated, per_level_distinct=per_level,
                        per_action_generated=totals.per_action_generated,
                        per_action_distinct=totals.per_action_distinct, sometimes=totals.sometimes,
                        properties=[p.name for p in self.always], states_left=totals.states_left,
                        exhausted=totals.exhausted and not totals.stopped,
                        wall_time=time.perf_counter() - self.start_time, memory=self.memory,
                        engine={"name": "spark", "run_dir": str(self.run_dir),
                                "partitions": self.max_partitions, "driver_levels": self.driver_levels,
                                "executor_levels": sum(1 for t in totals.level_times if t[-1] == "spark"),
                                "startup_s": round(self.startup_s, 3)})

def _notice(line: str) -> None:
    """A progress notice on stderr, beside the level lines (checker/front/spark_cli.py)."""
    print(f"kmc: spark: {line}", file=sys.stderr, flush=True)


def check_spark(spec_or_config, options: CheckOptions | None = None, master: str | None = None,
                partitions: int | None = None, run_dir: Path | str | None = None,
                resume: Path | str | None = None, **kwargs: Any) -> CheckResult:
    """Check a spec (checker.front.spec.Spec, or a dict with model / variant /
    constants / invariants) on Spark: `master` None = the active session or
    local[*]; results and levels under run_dir (default
    results/<spec>/<run-id>), or go on with a run folder (`resume`).

    Raises SparkUnavailableError / ExecutorSetupError / ResumeError (exit 2),
    EngineEvaluationError / SparkJobError (exit 3), RunInterrupted (130)."""
    return SparkSearch(spec_or_config, options, master=master, partitions=partitions,
                       run_dir=run_dir, resume=resume, **kwargs).run()
