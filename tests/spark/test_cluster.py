"""A real standalone cluster on 127.0.0.1 (a master and two workers from the
installed pyspark): the same answers as the local engine, kmc's code shipped
by kmc itself, and a lost executor in the middle of the run does not change
a single count."""
from __future__ import annotations

import os
import signal
import threading

import pytest

from checker.search.engine import CheckOptions
from checker.search.spark import session as sparksession
from spark_cluster import executor_pids, standalone_cluster
from spark_helpers import assert_same, local_result

TWOPHASE4 = {"model": "twophase", "constants": {"RMCount": 4}}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as url:
        yield url
    sparksession.stop_session()  # the next test starts the embedded session again


def test_check_on_a_standalone_cluster_with_a_lost_executor(cluster, tmp_path):
    conf = {"spark.executor.memory": "512m", "spark.cores.max": "2", "spark.driver.host": "127.0.0.1",
            "spark.task.maxFailures": "4"}
    session = sparksession.get_session(cluster, tmp_path / "log", conf)
    app = session.sparkContext.applicationId
    killed: list[int] = []

    def kill_one_executor(info):
        # after level 3 is on disk, an executor dies in the middle of level 4's job
        if info["level"] == 3:
            def later():
                pids = executor_pids(app)
                if pids:
                    os.kill(pids[0], signal.SIGKILL)
                    killed.append(pids[0])
            threading.Timer(0.3, later).start()

    from checker.search.spark.engine import SparkSearch
    search = SparkSearch(TWOPHASE4, CheckOptions(), master=cluster, run_dir=tmp_path / "run",
                         progress=kill_one_executor, spark_conf=conf)
    result = search.run()
    # the executors run the shipped zip of kmc, not an installed copy
    assert all(".zip" in info["checker"] for info in search.executor_info)
    # with the driver's compiled hot path in it (checker/search/native.py), when the driver has one
    from checker.search import native
    assert all(info["native"] == native.status() for info in search.executor_info)
    assert result.distinct == 1568 and killed
    assert_same(local_result(TWOPHASE4, CheckOptions()), result)
