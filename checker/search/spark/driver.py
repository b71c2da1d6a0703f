"""The driver's side of Spark's jobs: the preflight every executor runs,
a failed job's gist in one line, the findings of a level's tasks gathered
(the first violation, witness and deadlock of each, by BFS key), and the
look-ups run in the driver while Spark starts."""
from __future__ import annotations

import os
import threading
import time

from checker.search import stop
from checker.search.spark import session as sparksession, tasks
from checker.search.spark.errors import ExecutorSetupError, SparkUnavailableError


def _one_line(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit] + "..."


def _python_error_line(message: str) -> str:
    """The gist of a Spark job failure: the Python exception raised on an
    executor, else the innermost Java cause."""
    import re
    lines = [ln.strip() for ln in str(message).splitlines() if ln.strip()]
    pat = re.compile(r"^([A-Za-z_][\w.]*(Error|Exception|Interrupt)): (.+)$")
    python = [ln for ln in lines if pat.match(ln) and not ln.startswith(("py4j", "org.", "java.", "scala."))]
    if python:
        return python[-1]
    causes = [ln[len("Caused by: "):] for ln in lines if ln.startswith("Caused by: ")]
    if causes:
        return causes[-1]
    return lines[0] if lines else "unknown error"


def gather_next(job: tasks.LevelJob, level: int, expand: list[dict]):
    """The checks of level `level` (the depth bound) made while it was
    generated: (level, first violation per property, first witness per
    property), or None when they are not all there (the driver then
    checks the level by rebuilding its states)."""
    nexts = [e.get("next") for e in expand]
    if not job.check_next or not nexts or any(n is None or n["failed"] for n in nexts):
        return None
    violations: dict = {}
    witnesses: dict = {}
    for n in nexts:
        for found, into in ((n["violations"], violations), (n["witnesses"], witnesses)):
            for name, (key, fp) in found.items():
                if name not in into or key < into[name][0]:
                    into[name] = [key, fp]
    return level, violations, witnesses

def gather(expand: list[dict]) -> dict:
    """The tasks' findings: per property the first violation and witness
    (key, fp) of the level checked; the first deadlock of the level
    expanded; errors, each (position, message, kind): those met checking
    level L belong to stream L-1, those met expanding it to stream L."""
    violations: dict[str, list] = {}
    witnesses: dict[str, list] = {}
    for e in expand:
        for name, (key, fp) in e["violations"].items():
            if name not in violations or key < violations[name][0]:
                violations[name] = [key, fp]
        for name, (key, fp) in e["witnesses"].items():
            if name not in witnesses or key < witnesses[name][0]:
                witnesses[name] = [key, fp]
    deadlocks = [e["deadlock"] for e in expand if e["deadlock"]]
    return {"violations": violations, "witnesses": witnesses,
            "deadlock": min(deadlocks, key=lambda d: d[0]) if deadlocks else None,
            "check_errors": [tuple(e["check_error"]) for e in expand if e.get("check_error")],
            "stream_errors": [tuple(e["error"]) for e in expand if e["error"]]}


def run_preflight(spark, task, timeout: float, model: str, variant: str, shuffle: bool) -> list[dict]:
    """Every executor slot runs `task` (tasks.preflight: build the model)
    once, within `timeout`; through a shuffle when asked, so that the JVM's
    shuffle path is warm too. Its answers, or one-line errors."""
    sc = spark.sparkContext
    n = max(1, sc.defaultParallelism)
    group = f"kmc-preflight-{os.getpid()}-{time.monotonic_ns()}"

    def run():
        sc.setJobGroup(group, "kmc preflight", interruptOnCancel=True)
        try:
            rdd = sc.parallelize(range(n), n).mapPartitionsWithIndex(task)
            if shuffle:
                rdd = rdd.map(lambda answer: (0, answer)).partitionBy(1).values()
            return rdd.collect()
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)

    try:
        answers = sparksession._in_thread(run, timeout)
    except TimeoutError:
        sc.cancelJobGroup(group)
        raise SparkUnavailableError(
            f"no Spark executor ran kmc's preflight task within {timeout:.0f} s "
            f"on {sc.master} (are workers registered, with free cores and memory?)") from None
    except Exception as e:  # noqa: BLE001 - Py4JJavaError: the Python worker failed
        raise ExecutorSetupError(f"the Spark executors cannot run kmc: "
                                 f"{_python_error_line(str(e))}") from None
    bad = [a for a in answers if not a.get("ok")]
    if bad:
        raise ExecutorSetupError(f"the Spark executors cannot build model {model!r} "
                                 f"(variant {variant!r}): {bad[0]['error']}")
    return answers


class _StopWatch:
    """^C and SIGTERM noted while a run is on (checker/search/stop.py): a
    gateway call one breaks may fail as a Py4JError ("Answer from Java side
    is empty") before the interrupt surfaces, and that is still the
    interrupt; one whose exception was dropped stops the run between levels."""

    def __enter__(self):
        self._previous = stop.install() if threading.current_thread() is threading.main_thread() else {}
        return self

    def __exit__(self, *exc):
        import signal
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        return False


class _InDriver:
    """Task outputs computed in the driver, with the two RDD methods the
    look-ups use (SparkSearch._read while Spark is starting)."""

    def __init__(self, items: list):
        self.items = items

    def map(self, f) -> "_InDriver":
        return _InDriver([f(x) for x in self.items])

    def collect(self) -> list:
        return list(self.items)
