"""The spark engine on local[2] against the local engine, side by side in one
run, on the same Kafka configuration (default: the KIP-966 reference
configuration bounded at 11 steps, 677,377 distinct states as TLC counts).

Reports both wall times, the speedup, and for the spark engine: startup,
per-level wall time, the executors' CPU time per level, and the per-level
overhead (wall time of a level minus its compute spread over the cores; and
the wall time of the small levels once Spark is warm). Both results must be
identical (every count); the script says so and exits 1 otherwise.

    .venv/bin/python bench/spark_vs_local.py                      # depth 11
    .venv/bin/python bench/spark_vs_local.py --depth 13           # 2,844,338 states, ~14 min
    .venv/bin/python bench/spark_vs_local.py --depth 8 --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.front.spec import load_spec  # noqa: E402
from checker.search.engine import CheckOptions, check  # noqa: E402
from spark_levels import level_table, print_table  # noqa: E402  (bench/spark_levels.py)

FIELDS = ("outcome", "distinct", "generated", "per_level_distinct", "per_action_generated",
          "per_action_distinct", "depth", "sometimes", "states_left", "violated")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=str(ROOT / "specs" / "kraft-kip966-reference.toml"))
    ap.add_argument("--depth", type=int, default=11)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--cores", type=int, default=2, help="cores the master has (for the overhead)")
    ap.add_argument("--order", choices=["local-first", "spark-first"], default="local-first")
    ap.add_argument("--json", default=None, help="write the figures here as JSON")
    args = ap.parse_args()

    spec = load_spec(args.spec, depth=args.depth)
    model, props = spec.build()
    options = CheckOptions(max_depth=spec.depth, check_deadlock=spec.check_deadlock,
                           fingerprint_bits=spec.fingerprint_bits, view=spec.view)
    work = Path(tempfile.mkdtemp(prefix="kmc-bench-spark-"))
    out: dict = {"spec": str(args.spec), "depth": args.depth, "master": args.master,
                 "cpus": os.cpu_count(), "loadavg_before": os.getloadavg()}

    def run_local():
        t, c = time.perf_counter(), time.process_time()
        r = check(model, props, options)
        out["local_s"] = time.perf_counter() - t
        out["local_cpu_s"] = time.process_time() - c
        print(f"local: {r.distinct:,} distinct, {r.generated:,} generated in {out['local_s']:.1f}s", flush=True)
        return r

    def run_spark():
        from checker.search.spark.engine import SparkSearch
        t, c = time.perf_counter(), time.process_time()
        search = SparkSearch(spec, CheckOptions(**{**options.__dict__, "progress": None}),
                             master=args.master, partitions=args.partitions, run_dir=work / "run")
        r = search.run()
        out["spark_s"] = time.perf_counter() - t
        out["spark_driver_cpu_s"] = time.process_time() - c
        out["spark_jvm_cpu_s"] = jvm_cpu_s()
        out["spark_startup_s"] = search.startup_s
        stats = json.loads((work / "run" / "levels" / f"level-{r.depth:05d}" / "stats.json").read_text())
        out["levels"] = [dict(zip(("level", "wall_s", "expanded", "expand_cpu_s", "merge_cpu_s", "where"), lt))
                         for lt in stats["level_times"]]
        out["expand_cpu_phases_s"] = phases(work / "run")
        out["level_table"] = level_table(work / "run")
        print(f"spark: {r.distinct:,} distinct, {r.generated:,} generated in {out['spark_s']:.1f}s "
              f"(executors ready after {search.startup_s:.1f}s)", flush=True)
        return r

    def phases(run_dir):
        """The expand tasks' thread CPU by phase (tasks.expand_partition), summed
        over the levels."""
        from checker.search.spark import levels
        total: dict = {}
        for lv in levels.committed_levels(run_dir):
            for part in levels.read_partition_stats(levels.level_dir(run_dir, lv)):
                for e in part.get("expand", []):
                    for k, v in e.get("cpu_phases", {}).items():
                        total[k] = round(total.get(k, 0.0) + v, 3)
        return total

    def jvm_cpu_s():
        """CPU time of the driver JVM (in local mode also the executor: task
        scheduling, shuffle, Python worker I/O); None when unknown."""
        try:
            from pyspark import SparkContext
            pid = SparkContext._gateway.proc.pid
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except Exception:  # noqa: BLE001 - not Linux, or an adopted session
            return None

    def run_warm_small():
        """The same spec to depth 6 on the warm session, every level on the
        executors (none in the driver): the fixed cost of a level's job."""
        from checker.search.spark.engine import SparkSearch
        search = SparkSearch(spec, CheckOptions(**{**options.__dict__, "max_depth": min(6, args.depth),
                                                   "progress": None}),
                             master=args.master, partitions=args.partitions, run_dir=work / "warm",
                             driver_frontier=0)
        search.run()
        stats = json.loads((work / "warm" / "levels" / f"level-{min(6, args.depth):05d}" / "stats.json").read_text())
        return [dict(zip(("level", "wall_s", "expanded", "expand_cpu_s", "merge_cpu_s", "where"), lt))
                for lt in stats["level_times"]]

    if args.order == "local-first":
        local, spark = run_local(), run_spark()
    else:
        spark, local = run_spark(), run_local()
    out["warm_small_levels"] = run_warm_small()
    out["loadavg_after"] = os.getloadavg()
    same = all(getattr(local, f) == getattr(spark, f) for f in FIELDS)
    out["identical"] = same
    out["distinct"] = local.distinct
    out["generated"] = local.generated

    out["speedup"] = out["local_s"] / out["spark_s"]
    print()
    levels_s = sum(lv["wall_s"] for lv in out["levels"])
    # level 0, the run folder, the bound level's checks, the result and its traces
    out["spark_outside_levels_s"] = out["spark_s"] - levels_s
    out["spark_executor_cpu_s"] = sum(lv["expand_cpu_s"] + lv["merge_cpu_s"] for lv in out["levels"]
                                      if lv.get("where") != "driver")
    print(f"{'level':>5} {'where':>6} {'expanded':>9} {'wall s':>7} {'cpu s':>7} {'overhead s':>10}")
    for lv in out["levels"]:
        cpu = lv["expand_cpu_s"] + lv["merge_cpu_s"]
        # the driver runs a level on one core (while the JVM starts on the other)
        cores = 1 if lv.get("where") == "driver" else args.cores
        lv["overhead_s"] = max(0.0, lv["wall_s"] - cpu / cores)
        print(f"{lv['level']:>5} {lv.get('where', 'spark'):>6} {lv['expanded']:>9,} {lv['wall_s']:>7.2f} "
              f"{cpu:>7.2f} {lv['overhead_s']:>10.2f}")
    on_spark = [lv for lv in out["levels"] if lv.get("where") != "driver"]
    in_driver = [lv for lv in out["levels"] if lv.get("where") == "driver"]
    warm_small = [lv["wall_s"] for lv in out["warm_small_levels"][1:] if lv["expanded"] < 1000]
    out["small_level_wall_s"] = sorted(warm_small)[len(warm_small) // 2] if warm_small else None
    # the first level on Spark also waits for the executors (when the driver ran levels meanwhile)
    warm = on_spark[1:] if in_driver else on_spark
    out["mean_overhead_s"] = sum(lv["overhead_s"] for lv in warm) / max(1, len(warm))
    out["max_overhead_s"] = max((lv["overhead_s"] for lv in warm), default=0.0)
    print()
    print(f"local engine      {out['local_s']:8.1f} s")
    print(f"spark engine      {out['spark_s']:8.1f} s  (executors ready after {out['spark_startup_s']:.1f} s; "
          f"the driver ran {len(in_driver)} levels meanwhile; outside the levels {out['spark_outside_levels_s']:.1f} s)")
    print(f"speedup           {out['speedup']:8.2f} x")
    if out["small_level_wall_s"] is not None:
        print(f"a small level's job on warm Spark (< 1,000 states expanded, depth 6 again, no driver levels): "
              f"{out['small_level_wall_s']:.2f} s wall (median); each: "
              + ", ".join(f"{lv['wall_s']:.2f}" for lv in out["warm_small_levels"]))
    print(f"per-level overhead on warm Spark (wall - cpu/{args.cores}): {out['mean_overhead_s']:.2f} s on average, "
          f"{out['max_overhead_s']:.2f} s at most")
    jvm = out["spark_jvm_cpu_s"]
    print(f"CPU: local engine {out['local_cpu_s']:.1f} s; spark executors (task threads) "
          f"{out['spark_executor_cpu_s']:.1f} s, driver Python {out['spark_driver_cpu_s']:.1f} s "
          f"(its levels {sum(lv['expand_cpu_s'] + lv['merge_cpu_s'] for lv in in_driver):.1f} s), "
          f"JVM {'?' if jvm is None else f'{jvm:.1f}'} s")
    if jvm is not None:
        # The cores bound the speedup from below by CPU alone: whatever the
        # scheduling, the wall time is at least the run's CPU over the cores.
        total = out["spark_executor_cpu_s"] + out["spark_driver_cpu_s"] + jvm
        out["spark_total_cpu_s"] = total
        out["cpu_ceiling"] = out["local_s"] / (total / args.cores)
        budget = out["local_s"] * args.cores / 1.8
        print(f"CPU ceiling: the spark run's CPU ({total:.1f} s) over {args.cores} cores allows at most "
              f"{out['cpu_ceiling']:.2f}x; 1.8x needs it under {budget:.1f} s, "
              f"{budget - out['local_cpu_s']:.1f} s more than the local engine's own CPU")
    print("spark expand tasks' CPU by phase: "
          + ", ".join(f"{k} {v:.1f} s" for k, v in out["expand_cpu_phases_s"].items()))
    print("\nper level (bench/spark_levels.py): new states against total seen, bytes shuffled and written")
    print_table(out["level_table"])
    print(f"identical results: {same}   load average before/after: "
          f"{out['loadavg_before'][0]:.1f} / {out['loadavg_after'][0]:.1f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    shutil.rmtree(work, ignore_errors=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
