"""The spark engine on local[2] against the local engine, side by side in one
run, on the same Kafka configuration (default: the KIP-966 reference
configuration bounded at 11 steps, 677,377 distinct states as TLC counts).

Each engine runs in a fresh Python process of its own (a child of this
script), so that neither inherits the other's heap, caches or JVM; with
--reps N, N pairs, the order swapped from pair to pair, and the median of
their speedups. Reports both wall times, the speedup, and for the spark
engine: startup, per-level wall time, the executors' CPU time per level,
and the per-level overhead (wall time of a level minus its compute spread
over the cores; and the wall time of the small levels once Spark is warm).
Every run's results must be identical (every count); the script says so
and exits 1 otherwise.

    .venv/bin/python bench/spark_vs_local.py                      # depth 11
    .venv/bin/python bench/spark_vs_local.py --depth 13           # 2,844,338 states, ~6 min
    .venv/bin/python bench/spark_vs_local.py --depth 14 --reps 3  # 5,587,201 states, three pairs (~40 min)
    .venv/bin/python bench/spark_vs_local.py --depth 15 --reps 3  # 10,719,860 states, three pairs (~63 min)
    .venv/bin/python bench/spark_vs_local.py --depth 8 --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.front.spec import load_spec  # noqa: E402
from checker.search.engine import CheckOptions, check  # noqa: E402
from spark_levels import level_table, print_table, print_where, where_time_goes  # noqa: E402  (bench/spark_levels.py)

FIELDS = ("outcome", "distinct", "generated", "per_level_distinct", "per_action_generated",
          "per_action_distinct", "depth", "sometimes", "states_left", "violated")


def measure(args) -> dict:
    """One engine's run in this process (the child's side): its figures and
    its result, as JSON."""
    spec = load_spec(args.spec, depth=args.depth)
    model, props = spec.build()
    options = CheckOptions(max_depth=spec.depth, check_deadlock=spec.check_deadlock,
                           fingerprint_bits=spec.fingerprint_bits, projection=spec.projection)
    work = Path(tempfile.mkdtemp(prefix="kmc-bench-spark-"))
    out: dict = {"engine": args.child, "loadavg_before": os.getloadavg()}
    try:
        t, c = time.perf_counter(), time.process_time()
        if args.child == "local":
            r = check(model, props, options)
        else:
            from checker.search.spark.engine import SparkSearch
            search = SparkSearch(spec, CheckOptions(**{**options.__dict__, "progress": None}),
                                 master=args.master, partitions=args.partitions, run_dir=work / "run")
            r = search.run()
        out["wall_s"] = time.perf_counter() - t
        out["cpu_s"] = time.process_time() - c
        if args.child == "spark":
            out["jvm_cpu_s"] = jvm_cpu_s()
            out["startup_s"] = search.startup_s
            out["levels"] = level_times(work / "run", r.depth)
            out["expand_cpu_phases_s"] = phases(work / "run")
            out["level_table"] = level_table(work / "run")
            out["where_time_goes"] = where_time_goes(work / "run", out["level_table"], args.cores)
            out["warm_small_levels"] = warm_small(args, spec, options, work / "warm")
        out["result"] = {f: getattr(r, f) for f in FIELDS}
        out["loadavg_after"] = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


def phases(run_dir) -> dict:
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


def warm_small(args, spec, options, run_dir) -> list[dict]:
    """The same spec to depth 6 on the warm session, every level on the
    executors (none in the driver): the fixed cost of a level's job."""
    from checker.search.spark.engine import SparkSearch
    depth = min(6, args.depth)
    search = SparkSearch(spec, CheckOptions(**{**options.__dict__, "max_depth": depth, "progress": None}),
                         master=args.master, partitions=args.partitions, run_dir=run_dir, driver_frontier=0)
    search.run()
    return level_times(run_dir, depth)


def level_times(run_dir: Path, depth: int) -> list[dict]:
    """Each level's job as the run recorded it (stats.json of its last level)."""
    stats = json.loads((run_dir / "levels" / f"level-{depth:05d}" / "stats.json").read_text())
    return [dict(zip(("level", "wall_s", "expanded", "expand_cpu_s", "merge_cpu_s", "where"), lt))
            for lt in stats["level_times"]]


def spawn(args, engine: str) -> dict:
    """One engine's run in a fresh child process."""
    with tempfile.TemporaryDirectory(prefix="kmc-bench-pair-") as tmp:
        out = Path(tmp) / "out.json"
        cmd = [sys.executable, __file__, "--spec", args.spec, "--depth", str(args.depth),
               "--master", args.master, "--cores", str(args.cores), "--child", engine, "--child-out", str(out)]
        if args.partitions is not None:
            cmd += ["--partitions", str(args.partitions)]
        subprocess.run(cmd, check=True)
        return json.loads(out.read_text())


def report_spark(local: dict, spark: dict, cores: int) -> None:
    """The spark run's levels, overheads and CPU against the local run's."""
    print(f"{'level':>5} {'where':>6} {'expanded':>9} {'wall s':>7} {'cpu s':>7} {'overhead s':>10}")
    for lv in spark["levels"]:
        cpu = lv["expand_cpu_s"] + lv["merge_cpu_s"]
        # the driver runs a level on one core (while the JVM starts on the other)
        on = 1 if lv.get("where") == "driver" else cores
        lv["overhead_s"] = max(0.0, lv["wall_s"] - cpu / on)
        print(f"{lv['level']:>5} {lv.get('where', 'spark'):>6} {lv['expanded']:>9,} {lv['wall_s']:>7.2f} "
              f"{cpu:>7.2f} {lv['overhead_s']:>10.2f}")
    on_spark = [lv for lv in spark["levels"] if lv.get("where") != "driver"]
    in_driver = [lv for lv in spark["levels"] if lv.get("where") == "driver"]
    # level 0, the run folder, the bound level's checks, the result and its traces
    spark["outside_levels_s"] = spark["wall_s"] - sum(lv["wall_s"] for lv in spark["levels"])
    spark["executor_cpu_s"] = sum(lv["expand_cpu_s"] + lv["merge_cpu_s"] for lv in on_spark)
    warm = [lv["wall_s"] for lv in spark["warm_small_levels"][1:] if lv["expanded"] < 1000]
    spark["small_level_wall_s"] = sorted(warm)[len(warm) // 2] if warm else None
    # the first level on Spark also waits for the executors (when the driver ran levels meanwhile)
    steady = on_spark[1:] if in_driver else on_spark
    spark["mean_overhead_s"] = sum(lv["overhead_s"] for lv in steady) / max(1, len(steady))
    spark["max_overhead_s"] = max((lv["overhead_s"] for lv in steady), default=0.0)
    print()
    print(f"local engine      {local['wall_s']:8.1f} s")
    print(f"spark engine      {spark['wall_s']:8.1f} s  (executors ready after {spark['startup_s']:.1f} s; "
          f"the driver ran {len(in_driver)} levels meanwhile; outside the levels {spark['outside_levels_s']:.1f} s)")
    print(f"speedup           {local['wall_s'] / spark['wall_s']:8.2f} x")
    if spark["small_level_wall_s"] is not None:
        print(f"a small level's job on warm Spark (< 1,000 states expanded, depth 6 again, no driver levels): "
              f"{spark['small_level_wall_s']:.2f} s wall (median); each: "
              + ", ".join(f"{lv['wall_s']:.2f}" for lv in spark["warm_small_levels"]))
    print(f"per-level overhead on warm Spark (wall - cpu/{cores}): {spark['mean_overhead_s']:.2f} s on average, "
          f"{spark['max_overhead_s']:.2f} s at most")
    jvm = spark["jvm_cpu_s"]
    driver_levels = sum(lv["expand_cpu_s"] + lv["merge_cpu_s"] for lv in in_driver)
    print(f"CPU: local engine {local['cpu_s']:.1f} s; spark executors (task threads) "
          f"{spark['executor_cpu_s']:.1f} s, driver Python {spark['cpu_s']:.1f} s "
          f"(its levels {driver_levels:.1f} s), JVM {'?' if jvm is None else f'{jvm:.1f}'} s")
    if jvm is not None:
        # The cores bound the speedup from below by CPU alone: whatever the
        # scheduling, the wall time is at least the run's CPU over the cores.
        total = spark["executor_cpu_s"] + spark["cpu_s"] + jvm
        spark["total_cpu_s"] = total
        spark["cpu_ceiling"] = local["wall_s"] / (total / cores)
        budget = local["wall_s"] * cores / 1.8
        print(f"CPU ceiling: the spark run's CPU ({total:.1f} s) over {cores} cores allows at most "
              f"{spark['cpu_ceiling']:.2f}x; 1.8x needs it under {budget:.1f} s, "
              f"{budget - local['cpu_s']:.1f} s more than the local engine's own CPU")
    print("spark expand tasks' CPU by phase: "
          + ", ".join(f"{k} {v:.1f} s" for k, v in spark["expand_cpu_phases_s"].items()))
    print("\nper level (bench/spark_levels.py): new states against total seen, bytes shuffled and written")
    print_table(spark["level_table"])
    if spark.get("where_time_goes"):
        print_where(spark["where_time_goes"], cores)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", default=str(ROOT / "specs" / "kraft-kip966-reference.toml"))
    ap.add_argument("--depth", type=int, default=11)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=None)
    ap.add_argument("--cores", type=int, default=2, help="cores the master has (for the overhead)")
    ap.add_argument("--order", choices=["local-first", "spark-first"], default="local-first",
                    help="the first pair's order (the next pairs alternate)")
    ap.add_argument("--reps", type=int, default=1, help="pairs of runs (default 1)")
    ap.add_argument("--json", default=None, help="write the figures here as JSON")
    ap.add_argument("--child", choices=["local", "spark"], help=argparse.SUPPRESS)
    ap.add_argument("--child-out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        Path(args.child_out).write_text(json.dumps(measure(args)) + "\n")
        return 0
    if args.reps < 1:
        ap.error("--reps must be at least 1")

    out: dict = {"spec": str(args.spec), "depth": args.depth, "master": args.master,
                 "cpus": os.cpu_count(), "pairs": []}
    for rep in range(args.reps):
        first = "local" if (args.order == "local-first") == (rep % 2 == 0) else "spark"
        runs = {}
        for engine in (first, "spark" if first == "local" else "local"):
            runs[engine] = spawn(args, engine)
            r = runs[engine]["result"]
            print(f"pair {rep + 1}, {engine}: {r['distinct']:,} distinct, {r['generated']:,} generated "
                  f"in {runs[engine]['wall_s']:.1f} s", flush=True)
        local, spark = runs["local"], runs["spark"]
        print()
        report_spark(local, spark, args.cores)
        pair = {"order": f"{first}-first", "local": local, "spark": spark,
                "identical": local.pop("result") == spark.pop("result"),
                "speedup": local["wall_s"] / spark["wall_s"],
                "distinct": r["distinct"], "generated": r["generated"]}
        out["pairs"].append(pair)
        print(f"identical results: {pair['identical']}   load average before/after: "
              f"local {local['loadavg_before'][0]:.1f} / {local['loadavg_after'][0]:.1f}, "
              f"spark {spark['loadavg_before'][0]:.1f} / {spark['loadavg_after'][0]:.1f}\n", flush=True)
    out["identical"] = all(p["identical"] for p in out["pairs"])
    out["median_speedup"] = statistics.median(p["speedup"] for p in out["pairs"])
    print(f"{'pair':>4} {'order':>11} {'local s':>8} {'spark s':>8} {'speedup':>8} {'ceiling':>8} "
          f"{'local cpu':>9} {'executors':>9} {'JVM':>6}")
    for i, p in enumerate(out["pairs"], 1):
        sp = p["spark"]
        print(f"{i:>4} {p['order']:>11} {p['local']['wall_s']:>8.1f} {sp['wall_s']:>8.1f} {p['speedup']:>7.2f}x "
              f"{sp.get('cpu_ceiling', float('nan')):>7.2f}x {p['local']['cpu_s']:>9.1f} "
              f"{sp['executor_cpu_s']:>9.1f} {sp['jvm_cpu_s'] or float('nan'):>6.1f}")
    print(f"median speedup over {args.reps} pair(s): {out['median_speedup']:.2f}x   "
          f"identical results: {out['identical']}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0 if out["identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
