"""Durable levels: a run interrupted after a level (the stop hook, or a
killed process) goes on with resume to exactly the uninterrupted result; a
task that fails is retried by Spark without losing or double-counting states."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from checker.search.engine import CheckOptions
from checker.search.spark import RunInterrupted, check_spark, levels, seen
from checker.search.spark.errors import ResumeError
from spark_helpers import (KRAFT_QUICK, LOCAL_MASTER, ROOT, SMALL_LEVEL, assert_same,
                           kmc_spark_command, local_result, run_cli)

KRAFT_D12 = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}


def test_resume_after_a_stop_gives_the_same_result(spark, tmp_path):
    options = CheckOptions(max_depth=12)
    run_dir = tmp_path / "run"
    with pytest.raises(RunInterrupted) as stopped:
        check_spark(KRAFT_D12, options, master=LOCAL_MASTER, run_dir=run_dir, stop_after_level=6,
                    small_level=SMALL_LEVEL)
    assert stopped.value.exit_code == 130 and stopped.value.level == 6
    assert levels.committed_levels(run_dir) == list(range(7))
    stats = levels.read_stats(run_dir, 6)
    assert stats["level"] == 6 and not stats["done"]
    assert not any(p.name.startswith(".") for p in (run_dir / "levels").iterdir())
    runs_before = _seen_runs(run_dir)
    # go on with other partition counts: the seen fingerprints are re-split
    resumed = check_spark(KRAFT_D12, options, master=LOCAL_MASTER, resume=run_dir, partitions=3,
                          small_level=SMALL_LEVEL)
    assert_same(local_result(KRAFT_D12, options), resumed)
    assert levels.committed_levels(run_dir) == list(range(13))
    # the seen runs of the committed levels were not rewritten
    runs_after = _seen_runs(run_dir)
    assert runs_before and all(runs_after[p] == data for p, data in runs_before.items())
    # after each level, a partition's seen set is its runs: every state seen so far
    for lv in range(13):
        here = levels.level_dir(run_dir, lv)
        idx = [seen.read_index(here, q) for q in range(len(levels.part_files(here)))]
        assert sum(i["count"] for i in idx) == sum(resumed.per_level_distinct[:lv + 1])
        assert all(sum(r[2] for r in i["runs"]) == i["count"] and len(i["runs"]) <= seen.MAX_RUNS for i in idx)
        assert lv <= 6 or {i["partitions"] for i in idx} == {3}


def _seen_runs(run_dir) -> dict:
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in (run_dir / "levels").glob("level-*/seen/*.run")}


def test_a_small_disk_stops_the_run_between_levels_and_it_resumes(spark, tmp_path, monkeypatch):
    """--min-free-disk: the driver stops after a committed level whose
    growth, repeated, would leave the disk less than the reserve (the disk
    simulated: 160 KiB holding only the levels, about 9 of them)."""
    import shutil
    from checker.search.engine import DiskLimitError
    real = shutil.disk_usage

    def usage(path):
        used = sum(f.stat().st_size for f in (run_dir / "levels").rglob("*") if f.is_file())
        return type(real(path))(real(path).total, used, max(0, (160 << 10) - used))
    run_dir = tmp_path / "run"
    with monkeypatch.context() as m:
        m.setattr(shutil, "disk_usage", usage)
        with pytest.raises(DiskLimitError) as stopped:
            check_spark(KRAFT_D12, CheckOptions(max_depth=12, min_free_disk=16 << 10),
                        master=LOCAL_MASTER, run_dir=run_dir, small_level=SMALL_LEVEL)
    message = stopped.value.one_line()
    assert stopped.value.exit_code == 2 and "would take about" in message
    assert f"go on with: kmc check --resume {run_dir}" in message
    done = levels.committed_levels(run_dir)
    assert done[-1] == 9
    options = CheckOptions(max_depth=12)
    assert_same(local_result(KRAFT_D12, options),
                check_spark(KRAFT_D12, options, master=LOCAL_MASTER, resume=run_dir,
                            small_level=SMALL_LEVEL))


def test_a_run_folder_of_the_old_format_is_refused(spark, tmp_path):
    """Format 3 wrote level rows without picks (every state of a row new);
    its run folders are refused on resume, in one line."""
    run_dir = tmp_path / "run"
    with pytest.raises(RunInterrupted):
        check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, run_dir=run_dir,
                    stop_after_level=2)
    config = json.loads((run_dir / "run.json").read_text())
    assert config["format"] == 4
    (run_dir / "run.json").write_text(json.dumps({**config, "format": 3}))
    with pytest.raises(ResumeError, match="the run folder.s format: 3 in the run, 4 here"):
        check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, resume=run_dir)


def test_resume_checks_the_run_is_the_same_check(spark, tmp_path):
    run_dir = tmp_path / "run"
    with pytest.raises(RunInterrupted):
        check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, run_dir=run_dir,
                    stop_after_level=2)
    with pytest.raises(ResumeError, match="--depth none in the run, 3 here"):
        check_spark({"model": "diehard"}, CheckOptions(max_depth=3), master=LOCAL_MASTER, resume=run_dir)
    with pytest.raises(ResumeError, match="not a spark run folder"):
        check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, resume=tmp_path)
    # a finished run, and one stopped before its level 0 was written, have nothing to go on from
    for name, make in (("summary.json", lambda d: (d / "summary.json").write_text("{}")),
                       ("levels", lambda d: shutil.rmtree(d / "levels"))):
        copy = tmp_path / f"without-{name}"
        shutil.copytree(run_dir, copy)
        make(copy)
        words = "nothing to resume" if name == "summary.json" else "no finished level to resume from"
        with pytest.raises(ResumeError, match=words):
            check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, resume=copy)


def test_a_damaged_level_is_refused_in_one_line(spark, tmp_path):
    """Each committed level's stats.json records its files' sizes and xxh3
    digests; a truncated or altered frontier, seen run or index, or an
    unreadable stats.json or run.json, stops the resume with one line naming
    it (before Spark is asked for anything), never a traceback or a search
    resumed from wrong data."""
    run_dir = tmp_path / "run"
    with pytest.raises(RunInterrupted):
        check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, run_dir=run_dir,
                    stop_after_level=3)
    pristine = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    level = levels.level_dir(run_dir, 3)
    assert set(levels.read_stats(run_dir, 3)["files"]) >= {"rows/part-00000.msgpack", "seen/part-00000.run",
                                                           "seen/part-00000.json"}
    cases = [
        (level / "rows" / "part-00000.msgpack", lambda b: b[:len(b) // 2], "level 3 is damaged: rows/part-00000.msgpack"),
        (level / "seen" / "part-00000.run", lambda b: b[:-1] + bytes([b[-1] ^ 1]), "seen/part-00000.run (altered)"),
        (levels.level_dir(run_dir, 1) / "seen" / "part-00000.json", lambda b: b"[1]", "level 1 is damaged"),
        (level / "stats.json", lambda b: b"[1]", "level 3: its stats.json is not a JSON object"),
        (run_dir / "run.json", lambda b: b[:10], "cannot read run.json"),
    ]
    for path, damage, words in cases:
        path.write_bytes(damage(pristine[path]))
        with pytest.raises(ResumeError, match=words.replace("(", r"\(").replace(")", r"\)")):
            check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, resume=run_dir)
        path.write_bytes(pristine[path])
    done = check_spark({"model": "diehard"}, CheckOptions(), master=LOCAL_MASTER, resume=run_dir)
    assert done.outcome == "violation"


def test_killed_process_resumes_from_its_last_level(tmp_path):
    """kill -9 the CLI after level 5 is on disk; --resume finishes the run."""
    out = tmp_path / "results"
    spec = ROOT / "specs" / "kraft-kip966-quick.toml"
    args = [str(spec), "--depth", "12", "--out", str(out), "--master", "local[2]"]
    proc = subprocess.Popen(kmc_spark_command() + args, cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    run_dir = None
    try:
        deadline = time.monotonic() + 240
        for line in proc.stderr:
            if "level 5:" in line:
                break
            assert time.monotonic() < deadline, "no level 5 in time"
        run_dir = next((out / "kraft-kip966-quick").iterdir())
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done = levels.committed_levels(run_dir)
    assert 5 <= done[-1] < 12 and not (run_dir / "summary.json").exists()
    resumed = run_cli(args + ["--resume", str(run_dir), "--json", "-q"])
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout.strip().splitlines()[-1])
    local = local_result(KRAFT_D12, CheckOptions(max_depth=12))
    assert summary["per_level_distinct"] == local.per_level_distinct
    assert summary["generated"] == local.generated and summary["distinct"] == local.distinct
    assert summary["per_action_generated"] == local.per_action_generated
    assert json.loads((run_dir / "summary.json").read_text())["run_id"] == run_dir.name


@pytest.mark.parametrize("stage, level", [("expand", 5), ("merge", 7)])
def test_a_failed_task_is_retried_without_losing_or_double_counting(spark, tmp_path, stage, level):
    marker = tmp_path / "failed"
    options = CheckOptions(max_depth=8)
    result = check_spark(KRAFT_D12, options, master=LOCAL_MASTER, run_dir=tmp_path / "run",
                         inject_failure=(stage, level, 0, str(marker)), small_level=SMALL_LEVEL)
    assert marker.read_text() == f"{stage} {level} 0\n"  # it did fail once
    assert_same(local_result(KRAFT_D12, options), result)


def test_resume_at_the_depth_bound(spark, tmp_path):
    """The bound level is written without its states (they were checked as
    they were generated, and those checks are in its statistics): a run
    stopped there resumes to the same result."""
    options = CheckOptions(max_depth=6)
    run_dir = tmp_path / "run"
    with pytest.raises(RunInterrupted):
        check_spark(KRAFT_D12, options, master=LOCAL_MASTER, run_dir=run_dir, stop_after_level=6,
                    small_level=SMALL_LEVEL)
    stats = levels.read_stats(run_dir, 6)
    assert stats["bound_checks"][0] == 6 and not stats["done"]
    rows = [r for f in levels.part_files(levels.level_dir(run_dir, 6)) for r in levels.read_part(f)]
    assert rows and all(r["states"] is None for r in rows if r["kind"] == "states")
    resumed = check_spark(KRAFT_D12, options, master=LOCAL_MASTER, resume=run_dir, small_level=SMALL_LEVEL)
    assert_same(local_result(KRAFT_D12, options), resumed)


def test_the_shuffle_dups_bench_accounts_for_every_shipped_successor(spark, tmp_path):
    """bench/spark_shuffle_dups.py (quoted in docs/performance.md): re-running a
    level's expand tasks, shipped = duplicates between tasks + seen + new,
    and new is the run's own next level."""
    import re
    run_dir = tmp_path / "run"
    result = check_spark(KRAFT_D12, CheckOptions(max_depth=10), master=LOCAL_MASTER, run_dir=run_dir,
                         small_level=SMALL_LEVEL, partitions=3)
    level = 7
    assert len(levels.part_files(levels.level_dir(run_dir, level))) == 3
    out = subprocess.run([sys.executable, str(ROOT / "bench" / "spark_shuffle_dups.py"), str(run_dir),
                          "--level", str(level)], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    n = [int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", out.stdout.split("):", 1)[1])]
    shipped, dups, _, _, seen, new, run_level = n[0], n[1], n[2], n[3], n[4], n[5], n[-1]
    assert new == run_level == result.per_level_distinct[level + 1]
    assert shipped == dups + seen + new and dups > 0
