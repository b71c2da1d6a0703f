"""--max-memory with the spark engine: the run's memory (every process of
it: the driver, its JVM, the Python workers; checker/search/proc.py) is
checked between levels and the run stops in one line (exit 2); the finished
levels stay resumable, and the resumed run gives the uninterrupted result."""
from __future__ import annotations

import pytest

import os

from checker.search import proc
from checker.search.engine import CheckOptions, MemoryLimitError, format_size
from checker.search.spark import check_spark, levels
from spark_helpers import KRAFT_QUICK, LOCAL_MASTER, SMALL_LEVEL, assert_same, local_result

KRAFT = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}


def test_driver_memory_limit_stops_between_levels_and_resumes(spark, tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(MemoryLimitError) as stopped:
        check_spark(KRAFT, CheckOptions(max_depth=8, max_memory=1 << 20), master=LOCAL_MASTER,
                    run_dir=run_dir, small_level=SMALL_LEVEL)
    text = stopped.value.one_line()
    assert stopped.value.exit_code == 2
    assert text.startswith("memory limit 1 MiB reached at level 1 after ")
    assert f"--resume {run_dir}" in text
    assert levels.committed_levels(run_dir) == [0, 1]
    assert not any(p.name.startswith(".") for p in (run_dir / "levels").iterdir())
    options = CheckOptions(max_depth=8)
    resumed = check_spark(KRAFT, options, master=LOCAL_MASTER, resume=run_dir, small_level=SMALL_LEVEL)
    assert_same(local_result(KRAFT, options), resumed)
    assert resumed.bytes_per_state == resumed.peak_memory_kb * 1024 // resumed.distinct > 0


def test_the_jvm_and_the_python_workers_count(spark, tmp_path):
    """A limit above what the driver's Python process holds, below what it
    and Spark's processes hold together, stops the run (the driver alone was
    the figure before); a finished run's peak is theirs too."""
    own = proc.pss(os.getpid())
    limit = own + (64 << 20)
    with pytest.raises(MemoryLimitError) as stopped:
        check_spark(KRAFT, CheckOptions(max_depth=8, max_memory=limit), master=LOCAL_MASTER,
                    run_dir=tmp_path / "stopped", small_level=SMALL_LEVEL)
    text = stopped.value.one_line()
    assert text.startswith(f"memory limit {format_size(limit)} reached at level 1 after ")
    assert "processes hold" in text
    done = check_spark(KRAFT, CheckOptions(max_depth=6), master=LOCAL_MASTER, run_dir=tmp_path / "run",
                       small_level=SMALL_LEVEL)
    assert done.memory["processes"] >= 3   # the driver, its JVM, a Python worker (at least)
    assert done.peak_memory_kb * 1024 > own + (64 << 20)
