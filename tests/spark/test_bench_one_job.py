"""bench/spark_one_job.py (listed in bench/README.md): one level's job of a
spark run again, in-process, writes the level the run wrote (as many new
states), and refuses what it cannot run in one line. bench/spark_levels.py
on the same run: where a level's wall time went adds up to it."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from checker.search.engine import CheckOptions
from checker.search.spark.engine import check_spark
from spark_helpers import LOCAL_MASTER

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "spark_one_job.py"
LEVELS = ROOT / "bench" / "spark_levels.py"


def _bench(*args):
    return subprocess.run([sys.executable, str(BENCH), *map(str, args)], capture_output=True, text=True,
                          timeout=300)


def test_one_job_again_in_process(spark, tmp_path):
    run_dir = tmp_path / "run"
    r = check_spark({"model": "kraft", "variant": "kip966", "constants": {}}, CheckOptions(max_depth=7),
                    master=LOCAL_MASTER, run_dir=run_dir)
    for args, level in (((), 5), (("--bound", "--reps", "2"), 6)):
        out = _bench(run_dir, "--level", level, *args)
        assert out.returncode == 0, out.stderr
        lines = out.stdout.splitlines()
        assert len(lines) == (2 if "--reps" in args else 1)
        assert all(f"-> {r.per_level_distinct[level + 1]:,} new;" in line for line in lines)
        assert "next" in lines[0] if "--bound" in args else "next" not in lines[0]
    assert not [p for p in (run_dir / "levels").iterdir() if p.name.startswith(".")]
    # where the wall time of the levels run with a shuffle (6 and 7) went
    out = subprocess.run([sys.executable, str(LEVELS), str(run_dir), "--json", str(tmp_path / "l.json")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    where = json.loads((tmp_path / "l.json").read_text())["where"]
    assert [w["level"] for w in where] == [6, 7] and all(w["expand_tasks"] >= 2 for w in where)
    for w in where:
        parts = [w[k] for k in ("cpu_s", "wait_s", "expand_idle_s", "between_s", "merge_idle_s", "outside_s")]
        assert min(parts) > -0.01 and abs(sum(parts) - w["wall_s"]) < 0.02, w
    # level 7 is the bound (no states), level 8 was never written, and no run folder
    for args, words in (((run_dir, "--level", 7), "was not expanded"),
                        ((tmp_path, "--level", 1), "is not a spark run folder")):
        out = _bench(*args)
        assert out.returncode == 2 and out.stdout == ""
        assert out.stderr.startswith("spark_one_job: error: ") and words in out.stderr
        assert len(out.stderr.splitlines()) == 1
