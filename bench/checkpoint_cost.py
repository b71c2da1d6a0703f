"""What `--checkpoint` costs the local engine: the same check with and without
it, side by side, each process pinned to its own core (taskset), started
together; every count must be identical (exit 1 otherwise).

    .venv/bin/python bench/checkpoint_cost.py                 # kip966 reference, depth 12
    .venv/bin/python bench/checkpoint_cost.py --depth 11 --spec specs/toy-twophase.toml
    .venv/bin/python bench/checkpoint_cost.py --engine auto --depth 11   # the default engine and checkpoint, in turns

Prints each side's search time (wall_time_s), whole command, peak memory,
the size of the levels folder at its largest (sampled) and the ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KMC = [sys.executable, "-m", "checker.front.cli"]
SAME = ("distinct", "generated", "per_level_distinct", "per_action_generated", "outcome")


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=str(ROOT / "specs" / "kraft-kip966-reference.toml"))
    ap.add_argument("--depth", default="12")
    ap.add_argument("--engine", choices=["local", "auto"], default="local",
                    help="auto: both cores each, so the runs go one after the other (--no-checkpoint, "
                         "the default, --checkpoint; --repeat rounds, rotating which goes first)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds with --engine auto")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="kmc-bench-ck-"))
    if args.engine == "auto":
        return sequential(args, out)
    base = KMC + ["check", args.spec, "--depth", args.depth, "--engine", "local", "--json", "-q"]
    procs = {
        "plain": subprocess.Popen(["taskset", "-c", "0"] + base + ["--out", str(out / "plain")],
                                  cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True),
        "checkpoint": subprocess.Popen(["taskset", "-c", "1"] + base + ["--checkpoint", "--out",
                                                                        str(out / "ck")],
                                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True),
    }
    biggest = [0]

    def sample():
        while procs["checkpoint"].poll() is None:
            biggest[0] = max(biggest[0], folder_bytes(out / "ck"))
            time.sleep(0.5)
    load_before = os.getloadavg()[0]
    t = threading.Thread(target=sample)
    t.start()
    res = {k: json.loads(p.communicate()[0].strip().splitlines()[-1]) for k, p in procs.items()}
    t.join()
    load_after = os.getloadavg()[0]
    same = all(res["plain"][k] == res["checkpoint"][k] for k in SAME)
    for k, o in res.items():
        print(f"{k:<11} search {o['wall_time_s']:.1f} s, command {o['total_time_s']:.1f} s, "
              f"{o['distinct']:,} states, peak {o['peak_memory_kb'] / 1024:,.0f} MiB "
              f"({o['bytes_per_state']} bytes/state)")
    print(f"levels folder at its largest (sampled): {biggest[0] / 2**20:,.1f} MiB "
          f"({biggest[0] / res['checkpoint']['distinct']:.0f} bytes/state)")
    print(f"checkpoint / plain (search): {res['checkpoint']['wall_time_s'] / res['plain']['wall_time_s']:.3f}")
    print(f"identical results: {same}   load average before/after: {load_before:.2f} / {load_after:.2f}")
    return 0 if same else 1


def sequential(args, out: Path) -> int:
    """The auto engine (every core) with --no-checkpoint ("plain"), by
    default (levels kept from the first of 50,000 states) and with
    --checkpoint (from level 0), in turns, rotating which goes first."""
    base = KMC + ["check", args.spec, "--depth", args.depth, "--engine", "auto", "--json", "-q"]
    variants = {"plain": ["--no-checkpoint"], "default": [], "checkpoint": ["--checkpoint"]}
    load_before = os.getloadavg()[0]
    runs: dict = {k: [] for k in variants}
    names = list(variants)
    for i in range(args.repeat):
        for k in names[i % 3:] + names[:i % 3]:
            p = subprocess.run(base + variants[k] + ["--out", str(out / f"{k}-{i}")], cwd=ROOT,
                               capture_output=True, text=True)
            o = json.loads(p.stdout.strip().splitlines()[-1])
            runs[k].append(o)
            print(f"{k:<11} search {o['wall_time_s']:.1f} s, {o['distinct']:,} states, "
                  f"levels in the pool: {o['auto']['levels'].count('pool')}, "
                  f"peak {o['peak_memory_kb'] / 1024:,.0f} MiB", flush=True)
    same = all(o[k] == runs["plain"][0][k] for v in runs.values() for o in v for k in SAME)
    med = {k: statistics.median(o["wall_time_s"] for o in v) for k, v in runs.items()}
    print(f"against plain (search, medians of {args.repeat}): default {med['default'] / med['plain']:.3f}, "
          f"checkpoint {med['checkpoint'] / med['plain']:.3f}")
    print(f"identical results: {same}   load average before/after: {load_before:.2f} / "
          f"{os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
