"""The command line: progress per level on stderr, Spark's own noise in the
run folder's spark.log and not on the terminal, results in the run folder."""
from __future__ import annotations

import json

from spark_helpers import ROOT, run_cli


def test_progress_lines_and_no_spark_noise(tmp_path):
    proc = run_cli([str(ROOT / "specs" / "toy-diehard.toml"), "--out", str(tmp_path), "--master", "local[2]",
                    "--json"])
    assert proc.returncode == 1, proc.stderr  # NotSolved is violated: the puzzle's solution
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    # every stderr line is kmc's own or the human report (--json puts it on stderr)
    progress = [ln for ln in lines if ln.startswith("kmc: spark: level ")]
    assert [ln.split(":")[2].split()[1] for ln in progress] == [str(i) for i in range(7)]
    assert all("frontier" in ln and "distinct" in ln and "level " in ln for ln in progress)
    # what the run waits for is said: the JVM starting beside the driver's
    # levels, and, when the driver finished alone, why it waits for the JVM
    assert lines.index("kmc: spark: starting Spark's JVM (local[2]) in the background; the driver runs "
                       "the first small levels meanwhile") < lines.index(progress[0])
    waiting = [ln for ln in lines if ln.startswith("kmc: spark: the search finished in the driver; waiting")]
    in_driver = all(ln.endswith("(in the driver while Spark starts)") for ln in progress)
    assert len(waiting) == (1 if in_driver else 0)
    for noise in ("WARN", "INFO", "log4j", "SparkContext", "Stage ", "NativeCodeLoader", "WARNING"):
        assert noise not in proc.stderr, noise
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    run_dir = tmp_path / "toy-diehard" / summary["run_id"]
    assert summary["per_level_distinct"] == [1, 2, 3, 2, 2, 2, 2]
    assert summary["config"]["engine"] == "spark" and summary["violated"] == ["NotSolved"]
    assert (run_dir / "summary.json").is_file() and (run_dir / "trace-NotSolved.txt").is_file()
    assert (run_dir / "spark.log").stat().st_size > 0
    assert (run_dir / "levels" / "level-00006" / "stats.json").is_file()
