"""What the merge drops, from a spark run folder: of the successors a level's
expand tasks ship through the shuffle, how many are duplicates between tasks
of that level, how many were seen in an earlier level (or are in the level
itself), and how many are new. Only the second kind could be filtered before
the shuffle by an executor holding the whole seen set.

    .venv/bin/python bench/spark_shuffle_dups.py results/kraft-kip966-reference/<run-id> --level 10

Re-runs the level's expand tasks in this process on the run's level files
(the executors' own task code, tasks.expand_partition, on the ranges of BFS
keys the engine gives its tasks), so it needs a level that has a next one
(not the depth bound).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.search import codec  # noqa: E402
from checker.search.spark import levels, tasks  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--level", type=int, required=True, help="the level whose expansion is measured")
    args = ap.parse_args()
    run_dir = Path(args.run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    done = levels.committed_levels(run_dir)
    if args.level + 1 not in done:
        raise SystemExit(f"{run_dir}: level {args.level + 1} is not committed")
    bits = run["fingerprint_bits"]
    here = levels.level_dir(run_dir, args.level)
    cfg = tasks.TaskConfig.of_run(run, len(levels.part_files(levels.level_dir(run_dir, args.level + 1))))
    job = tasks.LevelJob(level=args.level, check=False, expand=True)
    seen: set = set()
    for lv in range(args.level + 1):
        for path in levels.part_files(levels.level_dir(run_dir, lv)):
            for row in levels.read_part(path):
                seen.update(codec.unpack_fps(row["fps"], bits))
    shipped: list = []
    inputs = levels.expand_inputs(here, cfg.partitions)
    for i, inp in enumerate(inputs):
        out = tasks.on_files(lambda idx, rows: tasks.expand_partition(cfg, job, idx, rows), i, [inp])
        shipped.extend(fp for _, (kind, payload) in out if kind == "S"
                       for fp in codec.unpack_fps(payload[0], bits))
    unique = set(shipped)
    new = unique - seen
    print(f"level {args.level} ({len(inputs)} expand tasks): shipped {len(shipped):,}; "
          f"duplicates between tasks {len(shipped) - len(unique):,}; "
          f"seen in levels 0-{args.level} {len(unique & seen):,}; new {len(new):,} "
          f"(the run's level {args.level + 1}: {levels.read_stats(run_dir, done[-1])['per_level_distinct'][args.level + 1]:,})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
