#!/usr/bin/env python3
"""Benchmark of the local engine on the kip966 reference configuration.

Runs `kmc check specs/kraft-kip966-reference.toml --depth D` in a fresh
process (so peak memory is this run's alone) and prints distinct, generated,
wall time, generated states per second and peak memory beside TLC's figures
for the same bound where TLC was measured (1 worker, the rows of
tests/conformance/data/kraft-tlc-totals.json: depth 9, 10, 11, 13; their
wall times were taken under the load the row gives).

    .venv/bin/python bench/local_kraft.py            # depth 11 (several minutes)
    .venv/bin/python bench/local_kraft.py --depth 9  # a quicker look

Note on "generated": TLC with CONSTRAINT TLCGet("level") <= D+1 still computes
the successors of the states at the bound and discards them; kmc does not
expand the last level, so its generated count is lower for the same distinct
states. Compare the rates (generated per second of work done), not the totals.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPEC = os.path.join(ROOT, "specs", "kraft-kip966-reference.toml")

TOTALS = os.path.join(ROOT, "tests", "conformance", "data", "kraft-tlc-totals.json")


def tlc_rows() -> dict:
    """TLC's rows of the reference configuration without the VIEW, by depth bound."""
    with open(TOTALS) as f:
        return {r["depth"]: r for r in json.load(f)
                if r["name"].startswith("kip966-reference-d") and not r["view"]}


def kmc() -> str:
    local = os.path.join(ROOT, ".venv", "bin", "kmc")
    return local if os.path.exists(local) else "kmc"


def run(depth: int) -> dict:
    cmd = [kmc(), "check", SPEC, "--depth", str(depth), "--json", "--quiet",
           "--out", os.path.join(ROOT, "results", "bench")]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    if out.returncode not in (0, 1):
        sys.exit(f"kmc failed ({out.returncode}): {out.stderr.strip()}")
    summary = json.loads(out.stdout)
    summary["process_wall_s"] = wall
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=11)
    args = ap.parse_args()
    s = run(args.depth)
    rate = s["generated_per_s"]
    print(f"kip966 reference configuration, depth {args.depth}")
    print(f"{'':12}{'distinct':>12}{'generated':>12}{'wall s':>10}{'gen/s':>10}{'peak MiB':>10}")
    print(f"{'kmc local':12}{s['distinct']:>12,}{s['generated']:>12,}{s['wall_time_s']:>10.1f}"
          f"{rate:>10,.0f}{s['peak_memory_kb'] / 1024:>10.0f}")
    tlc = tlc_rows().get(args.depth)
    if tlc:
        tlc_rate = tlc["generated"] / tlc["tlc_wall_s"]
        print(f"{'TLC 1 worker':12}{tlc['distinct']:>12,}{tlc['generated']:>12,}{tlc['tlc_wall_s']:>10.1f}"
              f"{tlc_rate:>10,.0f}{'':>10}  ({tlc['date']}, load {tlc['load_avg_1m']})")
        print(f"distinct equal to TLC: {s['distinct'] == tlc['distinct']}; "
              f"kmc rate / TLC rate: {rate / tlc_rate:.2f} (TLC's under the load given)")


if __name__ == "__main__":
    main()
