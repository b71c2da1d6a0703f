"""`kmc check` with the default engine (auto: checker/search/parallel.py) against
`--engine local`, side by side, on the kip966 reference configuration: to
depth 10 (314,578 states) and to depth 11 (677,377 states, what `make run`
checks) by default; docs/performance.md quotes `--depths 11 12`.

Each run is a fresh `kmc check ... --json -q` process (as `make run` runs
it); the script checks that every count is identical (exit 1 otherwise) and
prints per depth the wall time of each (the process's, from start to exit),
the CPU time of each process tree (user + sys, the workers included), the
ratio local / auto, the level the auto engine handed over at, and the load
average before and after (the machine is shared: a load above ~0.5 makes the
figures unreliable).

    .venv/bin/python bench/auto_vs_local.py                      # depths 10 and 11
    .venv/bin/python bench/auto_vs_local.py --depths 9 --threshold 5000
    .venv/bin/python bench/auto_vs_local.py --order auto-first --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KMC = [sys.executable, "-m", "checker.front.cli"]
SAME = ("outcome", "distinct", "generated", "per_level_distinct", "per_action_generated",
        "per_action_distinct", "violated", "states_left")


def load() -> float:
    return os.getloadavg()[0]


def run(spec: str, depth: int, engine: str, out: str, env: dict) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(KMC + ["check", spec, "--depth", str(depth), "--engine", engine, "--json", "-q",
                              "--out", out], capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit(f"kmc check --engine {engine} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    summary = json.loads(p.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "summary": summary}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/kraft-kip966-reference.toml")
    ap.add_argument("--depths", type=int, nargs="+", default=[10, 11])
    ap.add_argument("--order", choices=["local-first", "auto-first"], default="local-first")
    ap.add_argument("--threshold", type=int, default=None, help="KMC_AUTO_THRESHOLD for the auto runs")
    ap.add_argument("--json", dest="json_out", default=None, help="write the figures here")
    args = ap.parse_args()

    env = dict(os.environ)
    if args.threshold is not None:
        env["KMC_AUTO_THRESHOLD"] = str(args.threshold)
    engines = ["local", "auto"] if args.order == "local-first" else ["auto", "local"]
    rows = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="kmc-bench-") as out:
        for depth in args.depths:
            row = {"depth": depth, "load_before": round(load(), 2)}
            for engine in engines:
                row[engine] = run(args.spec, depth, engine, out, env)
            row["load_after"] = round(load(), 2)
            a, b = row["local"]["summary"], row["auto"]["summary"]
            diff = [f for f in SAME if a.get(f) != b.get(f)]
            if diff:
                ok = False
                print(f"depth {depth}: the engines differ in {', '.join(diff)}", file=sys.stderr)
            auto = b.get("auto") or {}
            row.update(states=a["distinct"], ratio=round(row["local"]["wall_s"] / row["auto"]["wall_s"], 2),
                       handover_level=auto.get("handover_level"), workers=auto.get("workers"),
                       busy_levels=auto.get("busy_levels"),
                       identical=not diff)
            rows.append(row)
            print(f"depth {depth}: {a['distinct']:,} states; local {row['local']['wall_s']:.1f} s "
                  f"(CPU {row['local']['cpu_s']:.1f} s), auto {row['auto']['wall_s']:.1f} s "
                  f"(CPU {row['auto']['cpu_s']:.1f} s, {auto.get('workers')} workers from level "
                  f"{auto.get('handover_level')}, left local as the cores were busy: "
                  f"{auto.get('busy_levels') or 'none'}): local/auto {row['ratio']:.2f}x; "
                  f"counts {'identical' if not diff else 'DIFFER'}; load {row['load_before']} -> "
                  f"{row['load_after']}", flush=True)
    if args.json_out:
        for r in rows:
            for engine in ("local", "auto"):
                r[engine].pop("summary")
        Path(args.json_out).write_text(json.dumps({"spec": args.spec, "order": args.order,
                                                   "threshold": args.threshold, "runs": rows}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
