"""Liveness (`kmc check` of a spec with temporal properties) on the default
engine (auto: the workers record the state graph, checker/search/parallel.py
and checker/search/liveness/graph.py) against `--engine local`, side by side
on the biggest spec of specs/liveness and of specs/quorum/liveness-* by
default.

Each run is a fresh `kmc check SPEC --engine E --json -q` process; the script
checks that the verdicts (per property and instance), the graph's size, the
counts and the lassos (their actions) are identical (exit 1 otherwise) and
prints per spec, for each engine: the wall time of the process, the CPU time
of its process tree (user + sys, the workers included), the part of the wall
time the fair-cycle search took after the graph was recorded (one core on
either engine), the peak memory of the run's processes (summary.json's
peak_memory_kb), and the load average before and after (the machine is
shared: a load above ~0.5 makes the figures unreliable). With --safety, each
engine also checks the spec without its temporal properties: what
recording the graph and the fair-cycle search add on each engine.

    .venv/bin/python bench/liveness_auto_vs_local.py
    .venv/bin/python bench/liveness_auto_vs_local.py --specs specs/quorum/liveness-add-voter-available.toml
    .venv/bin/python bench/liveness_auto_vs_local.py --order auto-first --json out.json
    .venv/bin/python bench/liveness_auto_vs_local.py --workers 2   # two workers whatever the load
    .venv/bin/python bench/liveness_auto_vs_local.py --safety      # and each without the properties
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
SPECS = ["specs/liveness/kip966-elr-unclean-no-data-loss-unavailable.toml",   # 356,872 states
         "specs/quorum/liveness-epoch-limit-stuck-prospective.toml"]           # 60,972 states
SAME = ("outcome", "distinct", "generated", "per_level_distinct", "violated")


def load() -> float:
    return os.getloadavg()[0]


def run(spec: str, engine: str, out: str, env: dict) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(KMC + ["check", spec, "--engine", engine, "--json", "-q", "--out", out],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode not in (0, 1):
        sys.exit(f"kmc check {spec} --engine {engine} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    summary = json.loads(p.stdout)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "fair_cycles_s": summary.get("liveness", {}).get("wall_time_s"),
            "peak_mb": round(summary["peak_memory_kb"] / 1024), "summary": summary}


def without_temporal(spec: str, folder: str) -> str:
    """A copy of the spec without its `properties`, `fairness` and [expect]
    but its `sometimes` (a safety check of the same configuration, the same
    invariants and witnesses: --safety's control)."""
    lines, out, skip, expect = Path(ROOT / spec).read_text().splitlines(), [], 0, False
    for line in lines:
        if line.startswith("["):
            expect = line.strip() == "[expect]"
        if expect and not line.startswith(("[expect]", "sometimes")):
            continue
        key = line.split("=", 1)[0].strip()
        if not skip and key in ("properties", "fairness") and "=" in line:
            skip = 1
        if skip:
            skip += line.count("[") - line.count("]")
            skip = 0 if skip <= 1 else skip
            continue
        out.append(line)
    copy = Path(folder) / Path(spec).name
    copy.write_text("\n".join(out) + "\n")
    return str(copy)


def differences(a: dict, b: dict) -> list[str]:
    out = [f for f in SAME if a.get(f) != b.get(f)]
    la, lb = a["liveness"], b["liveness"]
    if la["properties"] != lb["properties"]:
        out.append("liveness verdicts or lassos")
    if la.get("graph") != lb.get("graph"):
        out.append("graph size")
    if [v.get("actions") for v in a["violations"]] != [v.get("actions") for v in b["violations"]]:
        out.append("lasso actions")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--specs", nargs="+", default=SPECS)
    ap.add_argument("--order", choices=["local-first", "auto-first"], default="local-first")
    ap.add_argument("--threshold", type=int, default=None, help="KMC_AUTO_THRESHOLD for the auto runs")
    ap.add_argument("--workers", type=int, default=None,
                    help="KMC_AUTO_WORKERS for the auto runs (given, the hand-over does not wait for "
                         "an idle core)")
    ap.add_argument("--safety", action="store_true",
                    help="also each engine on the spec without its temporal properties (the control)")
    ap.add_argument("--json", dest="json_out", default=None, help="write the figures here")
    args = ap.parse_args()

    env = dict(os.environ)
    for name, value in (("KMC_AUTO_THRESHOLD", args.threshold), ("KMC_AUTO_WORKERS", args.workers)):
        if value is not None:
            env[name] = str(value)

    engines = ["local", "auto"] if args.order == "local-first" else ["auto", "local"]
    rows = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="kmc-bench-") as out:
        for spec in args.specs:
            row = {"spec": spec, "load_before": round(load(), 2)}
            for engine in engines:
                row[engine] = run(spec, engine, out, env if engine == "auto" else dict(os.environ))
            row["load_after"] = round(load(), 2)
            a, b = row["local"]["summary"], row["auto"]["summary"]
            diff = differences(a, b)
            ok = ok and not diff
            auto = b.get("auto") or {}
            verdicts = {n: p["verdict"] for n, p in a["liveness"]["properties"].items()}
            row.update(states=a["distinct"], edges=a["liveness"]["graph"]["edges"], verdicts=verdicts,
                       ratio=round(row["local"]["wall_s"] / row["auto"]["wall_s"], 2),
                       handover_level=auto.get("handover_level"), workers=auto.get("workers"),
                       busy_levels=auto.get("busy_levels"), identical=not diff)
            rows.append(row)
            print(f"{spec}: {a['distinct']:,} states, {row['edges']:,} edges; verdicts {verdicts}")
            for engine in engines:
                r = row[engine]
                extra = ""
                if engine == "auto" and auto.get("handover_level") is None:
                    extra = (", every level local (no frontier reached the threshold"
                             + (f"; levels {auto['busy_levels']} did, the cores were busy)"
                                if auto.get("busy_levels") else ")"))
                elif engine == "auto":
                    extra = (f", {auto.get('workers')} workers from level {auto.get('handover_level')}, "
                             f"left local as the cores were busy: {auto.get('busy_levels') or 'none'}")
                print(f"  {engine:5}: wall {r['wall_s']:.1f} s (fair cycles {r['fair_cycles_s']:.1f} s), "
                      f"CPU {r['cpu_s']:.1f} s, peak {r['peak_mb']} MB{extra}")
            if args.safety:
                plain = without_temporal(spec, out)
                for engine in engines:
                    r = run(plain, engine, out, env if engine == "auto" else dict(os.environ))
                    row[f"{engine}_safety"] = {k: r[k] for k in ("wall_s", "cpu_s", "peak_mb")}
                    print(f"  {engine:5} without the temporal properties: wall {r['wall_s']:.1f} s, "
                          f"CPU {r['cpu_s']:.1f} s, peak {r['peak_mb']} MB")
                row["load_after"] = round(load(), 2)
            print(f"  local/auto {row['ratio']:.2f}x; verdicts, lassos and counts "
                  f"{'identical' if not diff else 'DIFFER: ' + ', '.join(diff)}; load {row['load_before']} "
                  f"-> {row['load_after']}", flush=True)
    if args.json_out:
        for r in rows:
            for engine in ("local", "auto"):
                r[engine].pop("summary")
        Path(args.json_out).write_text(json.dumps({"order": args.order, "threshold": args.threshold,
                                                   "workers": args.workers, "runs": rows}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
