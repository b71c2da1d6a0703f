"""While a run starts Spark, the driver runs the first levels' jobs itself
(the executors' task code, in this process): the answers stay the local
engine's, the executors take over at the next level, and a level the driver
has started is given up to them when they get ready before half of it is
expanded.

The tests share the session of conftest.py, so nothing would be started:
`is_running` is patched to say no, and the starter thread (which then only
adopts the session and runs the preflight) is held until the test lets it
go, which fixes where each level runs."""
from __future__ import annotations

import sys
import time

import pytest

from checker.search.engine import CheckOptions
from checker.search.spark import check_spark, engine as spark_engine, session as sparksession, tasks
from checker.search.spark.errors import RunInterrupted
from spark_helpers import KRAFT_QUICK, KRAFT_V35_LOSSY, LOCAL_MASTER, SMALL_LEVEL, assert_same, local_result

V35 = {"model": "kraft", "variant": "v3_5", "constants": KRAFT_V35_LOSSY}
KIP966 = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
REFERENCE = {"model": "kraft", "variant": "kip966", "constants": {
    "BrokerCount": 3, "InitReplicationFactor": 3, "Values": ["A"], "MinISR": 2, "InitIsrSize": 2,
    "NoDataLossShutdownLimit": 0, "DataLossShutdownLimit": 1, "FenceBrokerLimit": 1,
    "LeaderShrinkIsrLimit": 0, "ReassignmentLimit": 0}}


def hold_spark(monkeypatch, release):
    """Spark gets ready once release(search) is true, or when the driver
    waits for it (a run the driver finished alone); from then on the driver
    waits for it before it places a level."""
    launch, await_spark = spark_engine.SparkSearch._launch, spark_engine.SparkSearch._await_spark
    may_expand = spark_engine.SparkSearch._driver_may_expand

    def held_launch(self):
        while not (release(self) or getattr(self, "_test_waiting", False)):
            time.sleep(0.002)
        launch(self)

    def waiting(self):
        self._test_waiting = True
        await_spark(self)

    def placed(self, frontier, P):
        if self._starter is not None and release(self):
            while not self._starter.done():
                time.sleep(0.002)
        return may_expand(self, frontier, P)

    monkeypatch.setattr(sparksession, "is_running", lambda master: False)
    monkeypatch.setattr(spark_engine.SparkSearch, "_launch", held_launch)
    monkeypatch.setattr(spark_engine.SparkSearch, "_await_spark", waiting)
    monkeypatch.setattr(spark_engine.SparkSearch, "_driver_may_expand", placed)


def where(tmp_path, result) -> list[str]:
    from checker.search.spark import levels
    stats = levels.read_stats(tmp_path / "run", max(levels.committed_levels(tmp_path / "run")))
    return [lt[5] for lt in stats["level_times"]]


def run_both(config, options, tmp_path):
    local = local_result(config, options)
    result = check_spark(config, options, master=LOCAL_MASTER, run_dir=tmp_path / "run", small_level=SMALL_LEVEL)
    assert_same(local, result)
    return result


@pytest.mark.parametrize("config, options, handover", [
    (V35, CheckOptions(), 2),                                  # stops at a violation in the middle of level 4
    (V35, CheckOptions(stop_on_violation=False, max_depth=8), 3),
    (KIP966, CheckOptions(max_depth=12), 5),                   # the bound checked as generated, on Spark
    (KIP966, CheckOptions(max_depth=12), 99),                  # every level in the driver, the bound too
    (KIP966, CheckOptions(), 99),                              # the complete state space in the driver
], ids=["violation", "continue", "bound-on-spark", "bound-in-driver", "complete-in-driver"])
def test_driver_levels_then_spark(spark, tmp_path, monkeypatch, config, options, handover):
    hold_spark(monkeypatch, lambda search: search.driver_levels >= handover)
    result = run_both(config, options, tmp_path)
    ran = where(tmp_path, result)
    n = min(handover, len(ran))
    assert ran == ["driver"] * n + ["spark"] * (len(ran) - n)


def test_a_level_the_driver_started_goes_to_spark(spark, tmp_path, monkeypatch):
    """Spark gets ready right after the driver started level 5 (2,193 states
    to expand): the driver gives it up at its first chunk, Spark does it."""
    started = {}
    expand_in_driver = spark_engine.SparkSearch._expand_in_driver

    def driver_job(self, cfg, job, here, out_dir, frontier):
        if job.level == 5:
            started["level 5"] = True
            while not self._starter.done():
                time.sleep(0.002)
        try:
            return expand_in_driver(self, cfg, job, here, out_dir, frontier)
        except tasks.Abandoned:
            started["abandoned"] = job.level
            raise

    hold_spark(monkeypatch, lambda search: "level 5" in started)
    monkeypatch.setattr(spark_engine.SparkSearch, "_expand_in_driver", driver_job)
    result = run_both(REFERENCE, CheckOptions(max_depth=7), tmp_path)
    assert started["abandoned"] == 5
    assert where(tmp_path, result) == ["driver"] * 5 + ["spark"] * 2
    assert result.distinct == 24252  # TLC: the reference configuration within 7 steps


def test_a_run_stopped_while_spark_starts(spark, tmp_path, monkeypatch):
    """Stopped after level 2 (run by the driver) before the executors were
    ready: the GIL's switch interval is the process's again, and the level
    files are there to resume from."""
    go: dict = {}
    hold_spark(monkeypatch, lambda search: "go" in go)
    before = sys.getswitchinterval()
    search = spark_engine.SparkSearch(V35, CheckOptions(), master=LOCAL_MASTER, run_dir=tmp_path / "run",
                                      small_level=SMALL_LEVEL, stop_after_level=2)
    with pytest.raises(RunInterrupted):
        search.run()
    assert sys.getswitchinterval() == before
    go["go"] = True
    search._starter.join()
    resumed = check_spark(V35, CheckOptions(), master=LOCAL_MASTER, resume=tmp_path / "run",
                          small_level=SMALL_LEVEL)
    assert_same(local_result(V35, CheckOptions()), resumed)
