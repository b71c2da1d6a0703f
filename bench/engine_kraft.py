#!/usr/bin/env python3
"""In-process benchmark of the local engine's hot loop on the kip966 reference
configuration: generated states per second with and without the properties,
peak memory, and a digest of every fingerprint found (to check that an
encoding change leaves the fingerprints exactly as they were).

    .venv/bin/python bench/engine_kraft.py --depth 9            # with properties
    .venv/bin/python bench/engine_kraft.py --depth 9 --no-props
    .venv/bin/python bench/engine_kraft.py --depth 7 --digest   # fingerprint digest
    .venv/bin/python bench/engine_kraft.py --depth 9 --profile  # cProfile top 30

Run each configuration in its own process (peak memory is per process) and
repeat on a loaded machine: report the median. generated_per_cpu_s (CPU time
of this process) is steadier than generated_per_s when other processes run.
"""
from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import sys
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from checker.search import registry  # noqa: E402
from checker.search.engine import CheckOptions, local_search  # noqa: E402
from checker.search.proc import TreeMemory  # noqa: E402

SPEC = os.path.join(ROOT, "specs", "kraft-kip966-reference.toml")


def build(spec: str = SPEC):
    with open(spec, "rb") as f:
        s = tomllib.load(f)
    return registry.build(s["model"], s.get("variant"), s.get("constants", {}))


def fingerprint_digest(search) -> str:
    fps = sorted(fp for log in search.levels for fp in log.fingerprints())
    h = hashlib.sha256()
    for fp in fps:
        h.update(fp.to_bytes(8, "little"))
    return h.hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--depth", type=int, default=9)
    ap.add_argument("--spec", default=SPEC)
    ap.add_argument("--no-props", action="store_true")
    ap.add_argument("--digest", action="store_true", help="print a digest of all fingerprints")
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args()
    model, props = build(args.spec)
    if args.no_props:
        props = []
    cpu0 = time.process_time()
    # --digest reads every level's log after the run: kept in memory (not spilled)
    search = local_search(model, props, CheckOptions(max_depth=args.depth,
                                               **({"spill_states": None} if args.digest else {})))
    if args.profile:
        prof = cProfile.Profile()
        res = prof.runcall(search.run)
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
    else:
        res = search.run()
    cpu = time.process_time() - cpu0
    out = {"depth": args.depth, "props": not args.no_props, "distinct": res.distinct,
           "generated": res.generated, "wall_s": round(res.wall_time, 2),
           "generated_per_s": round(res.generated_per_second), "cpu_s": round(cpu, 2),
           "generated_per_cpu_s": round(res.generated / cpu),
           "peak_mib": round(TreeMemory().final_peak() / (1 << 20)), "outcome": res.outcome}
    if args.digest:
        out["digest"] = fingerprint_digest(search)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
