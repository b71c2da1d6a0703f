"""Per-level cost of a spark run, from its run folder: does a level cost what
its own states cost, or does it grow with everything seen before it?

    .venv/bin/python bench/spark_levels.py results/kraft-kip966-reference/<run-id>
    .venv/bin/python bench/spark_levels.py <run folder> --json levels.json

For each level L+1 written by job L (stats.json's level_times, the
partitions' statistics and the level's files): where the job ran, the
states expanded, the new states, the total seen after the level, the wall
time, seconds per 1,000 new states and per 1,000 expanded states, the
merge tasks' CPU and the part of it spent on the seen set (lookups and the
new run), the successor records shuffled and their bytes, and the bytes
written: the level's rows and its seen runs, per new state.

Then, for the levels run on the executors with a shuffle (tasks of kmc
note when they ran), where the level's wall time went,
in seconds of wall time (core-seconds over the cores): the tasks' CPU, their waiting (wall minus CPU inside a task: the
shuffle's I/O through the JVM, another process on the core), cores idle in
the expand stage (its last tasks ending one after another), between the
stages, in the merge stage, and outside the job (the driver: submitting it,
committing the level). They add up to the level's wall time.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checker.search.spark import levels  # noqa: E402


def _bytes(level_path: Path) -> dict:
    out = {"rows": 0, "seen": 0, "other": 0}
    for p in level_path.rglob("*"):
        if p.is_file():
            kind = "rows" if p.parent.name == "rows" else "seen" if p.parent.name == "seen" else "other"
            out[kind] += p.stat().st_size
    return out


def level_table(run_dir) -> list[dict]:
    """One dict per level a job wrote (level 0 is the driver's)."""
    run_dir = Path(run_dir)
    done = levels.committed_levels(run_dir)
    if not done:
        raise SystemExit(f"{run_dir}: no committed level")
    stats = levels.read_stats(run_dir, done[-1])
    per_level = stats["per_level_distinct"]
    rows = []
    for lt in stats["level_times"]:
        level, wall, expanded, exp_cpu, merge_cpu, where = lt[:6]
        here = levels.level_dir(run_dir, level)
        parts = levels.read_partition_stats(here)
        expand = [e for p in parts for e in p.get("expand", [])]
        new = per_level[level] if level < len(per_level) else 0
        b = _bytes(here)
        rows.append({
            "level": level, "where": where, "expanded": expanded, "new": new,
            "seen_total": sum(per_level[:level + 1]), "wall_s": wall,
            "s_per_1k_new": 1000 * wall / new if new else None,
            "s_per_1k_expanded": 1000 * wall / expanded if expanded else None,
            "expand_cpu_s": exp_cpu, "merge_cpu_s": merge_cpu,
            "seen_cpu_s": sum(p.get("seen_cpu_s", 0.0) for p in parts),
            "shuffled": sum(e.get("shuffled", 0) for e in expand),
            "shuffled_bytes": sum(e.get("shuffled_bytes", 0) for e in expand),
            "rows_bytes": b["rows"], "seen_bytes": b["seen"],
            "seen_runs": sum(len(json.loads(p.read_text())["runs"]) for p in (here / "seen").glob("*.json")),
        })
    return rows


def where_time_goes(run_dir, rows: list[dict], cores: int) -> list[dict]:
    """Per spark level with task spans: its wall time split as the docstring says."""
    out = []
    for r in rows:
        if r["where"] != "spark":
            continue
        parts = levels.read_partition_stats(levels.level_dir(Path(run_dir), r["level"]))
        expand = [e for p in parts for e in p.get("expand", [])]
        if not expand or not all("span" in t for t in parts + expand) or any(p.get("combined") for p in parts):
            continue
        e0, e1 = min(t["span"][0] for t in expand), max(t["span"][1] for t in expand)
        m0, m1 = min(t["span"][0] for t in parts), max(t["span"][1] for t in parts)
        busy_e = sum(t["span"][1] - t["span"][0] for t in expand)
        busy_m = sum(t["span"][1] - t["span"][0] for t in parts)
        cpu = sum(t["cpu_s"] for t in expand + parts)
        out.append({
            "level": r["level"], "wall_s": r["wall_s"], "cpu_s": cpu / cores,
            "wait_s": (busy_e + busy_m - cpu) / cores,
            "expand_idle_s": (cores * (e1 - e0) - busy_e) / cores,
            "between_s": max(0.0, m0 - e1),
            "merge_idle_s": (cores * (m1 - m0) - busy_m) / cores,
            "outside_s": r["wall_s"] - (m1 - e0),
            "expand_tasks": len(expand),
        })
    return out


def print_where(rows: list[dict], cores: int) -> None:
    print(f"\nwhere a spark level's wall time goes (s of wall, core-seconds over {cores} cores):")
    print(f"{'level':>5} {'wall s':>7} {'cpu':>7} {'wait':>6} {'expand idle':>11} {'between':>7} "
          f"{'merge idle':>10} {'outside':>7} {'tasks':>5}")
    for r in rows:
        print(f"{r['level']:>5} {r['wall_s']:>7.2f} {r['cpu_s']:>7.2f} {r['wait_s']:>6.2f} "
              f"{r['expand_idle_s']:>11.2f} {r['between_s']:>7.2f} {r['merge_idle_s']:>10.2f} "
              f"{r['outside_s']:>7.2f} {r['expand_tasks']:>5}")


def print_table(rows: list[dict]) -> None:
    def f(x, spec):
        return "-" if x is None else format(x, spec)
    print(f"{'level':>5} {'where':>6} {'expanded':>9} {'new':>9} {'seen':>10} {'wall s':>7} "
          f"{'s/1k new':>8} {'s/1k exp':>8} {'merge cpu':>9} {'seen cpu':>8} {'shuffled':>9} "
          f"{'B/shuf':>6} {'rows B/new':>10} {'seen B/new':>10} {'runs':>4}")
    for r in rows:
        new = r["new"] or None
        print(f"{r['level']:>5} {r['where']:>6} {r['expanded']:>9,} {r['new']:>9,} {r['seen_total']:>10,} "
              f"{r['wall_s']:>7.2f} {f(r['s_per_1k_new'], '8.3f')} {f(r['s_per_1k_expanded'], '8.3f')} "
              f"{r['merge_cpu_s']:>9.2f} {r['seen_cpu_s']:>8.2f} {r['shuffled']:>9,} "
              f"{f(r['shuffled_bytes'] / r['shuffled'] if r['shuffled'] else None, '6.1f')} "
              f"{f(r['rows_bytes'] / new if new else None, '10.1f')} "
              f"{f(r['seen_bytes'] / new if new else None, '10.1f')} {r['seen_runs']:>4}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir")
    ap.add_argument("--json", default=None, help="write the table here as JSON")
    ap.add_argument("--cores", type=int, default=2, help="cores the master has")
    args = ap.parse_args()
    rows = level_table(args.run_dir)
    print_table(rows)
    where = where_time_goes(args.run_dir, rows, args.cores)
    if where:
        print_where(where, args.cores)
    if args.json:
        Path(args.json).write_text(json.dumps({"levels": rows, "where": where}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
