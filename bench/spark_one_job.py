"""One level's job of a spark run, again, in this process (no Spark): its
expand tasks (the engine's guided split for two cores) and its merge tasks,
with each phase's CPU time, so that a change to the task code can be
weighed on the same level without the noise of a whole run.

    .venv/bin/python bench/spark_one_job.py results/<spec>/<run-id> --level 11
    .venv/bin/python bench/spark_one_job.py <run folder> --level 11 --bound --reps 2

Level L must have been expanded by the run (below its depth bound). `--bound` runs it as the job before the depth bound does (level
L+1 checked as generated, written without its states). The first rep
starts with this process's caches empty, as a Python worker new to the
level; later reps find its states cached. The level L+1 written goes to a
temp folder beside the run's levels, removed at the end.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.search.spark import levels, tasks  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--level", type=int, required=True)
    ap.add_argument("--bound", action="store_true", help="level L+1 is the depth bound")
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--reps", type=int, default=1)
    args = ap.parse_args()
    run_dir = Path(args.run_dir)
    try:
        run = json.loads((run_dir / "run.json").read_text())
    except (OSError, ValueError) as e:
        return _error(f"{run_dir} is not a spark run folder: {e}")
    done = levels.committed_levels(run_dir)
    if args.level not in done or args.level + 1 not in done:
        return _error(f"level {args.level} of {run_dir} was not expanded (its levels: "
                      f"{', '.join(map(str, done)) or 'none'})")
    cfg = tasks.TaskConfig.of_run(run, args.partitions)
    job = tasks.LevelJob(level=args.level, check=args.level > 0, expand=True,
                         check_next=args.bound, keep_parts=not args.bound)
    here = levels.level_dir(run_dir, args.level)
    out_dir = levels.levels_dir(run_dir) / f".level-{args.level + 1:05d}.bench"
    # (the engine module is not imported: its imports would make every
    # collection in the tasks longer)
    inputs = levels.expand_inputs(here, args.partitions)
    try:
        for rep in range(args.reps):
            shutil.rmtree(out_dir, ignore_errors=True)
            t = time.process_time()
            records: list[list] = [[] for _ in range(args.partitions)]
            phases: dict = {}
            for i, inp in enumerate(inputs):
                for q, record in tasks.on_files(partial(tasks.expand_partition, cfg, job), i, [inp]):
                    records[q].append((q, record))
                    if record[0] == "T":
                        for k, v in record[1].get("cpu_phases", {}).items():
                            phases[k] = phases.get(k, 0.0) + v
            expand_s = time.process_time() - t
            t = time.process_time()
            stats = [s for q in range(args.partitions)
                     for s in tasks.merge_partition(cfg, args.level + 1, str(out_dir), q, iter(records[q]))]
            merge_s = time.process_time() - t
            print(f"rep {rep + 1}: level {args.level} ({len(inputs)} expand tasks) -> "
                  f"{sum(s['new'] for s in stats):,} new; expand tasks {expand_s:.2f} s CPU ("
                  + ", ".join(f"{k} {v:.2f}" for k, v in phases.items())
                  + f"); merge tasks {merge_s:.2f} s", flush=True)
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    return 0


def _error(message: str) -> int:
    print(f"spark_one_job: error: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
