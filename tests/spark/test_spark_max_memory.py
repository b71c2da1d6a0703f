"""--max-memory with the spark engine: the driver checks its resident memory
between levels and stops in one line (exit 2); the finished levels stay
resumable, and the resumed run gives the uninterrupted result."""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, MemoryLimitError
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
