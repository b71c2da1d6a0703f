"""What two busy cores give on this machine, whatever the engine: the same
`kmc check --engine local` run alone on one core, and two copies of it at
once, one per core (taskset). An engine that splits a search over both cores
with no overhead at all can be at most 2 / slowdown times faster than the
local engine, where slowdown is how much longer a run takes when the other
core is busy too (shared caches, memory bandwidth, the host's scheduling of
the virtual CPUs). That is the ceiling `bench/spark_vs_local.py`'s speedups
are measured against.

    .venv/bin/python bench/two_at_once.py                        # depth 11, 3 rounds
    .venv/bin/python bench/two_at_once.py --depth 10 --rounds 5 --json out.json

A round is: alone on core 0, alone on core 1, then both at once (odd rounds
start with both at once). Every run must give the same counts (exit 1
otherwise). Wall and CPU (user + sys) are each process's own.
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
KMC = [sys.executable, "-m", "checker.front.cli"]
SAME = ("outcome", "distinct", "generated", "per_level_distinct")


class Failed(Exception):
    """Bad input or a failed run: one line on stderr, exit 2."""


def run(spec: str, depth: int, cores: list[int], out: str) -> list[dict]:
    """The runs on `cores` at once, each with its wall and CPU time (os.wait4's
    rusage); their output goes to files, so no pipe fills while one is awaited."""
    started = []
    for core in cores:
        stdout, stderr = (open(Path(out) / f"core{core}.{x}", "w+") for x in ("out", "err"))
        cmd = ["taskset", "-c", str(core)] + KMC + ["check", spec, "--depth", str(depth), "--engine", "local",
                                                    "--json", "-q", "--out", out]
        started.append((core, subprocess.Popen(cmd, cwd=ROOT, stdout=stdout, stderr=stderr),
                        time.perf_counter(), stdout, stderr))
    ended = {}
    while len(ended) < len(started):  # whichever ends first (this script's only children)
        pid, status, usage = os.wait4(-1, 0)
        ended[pid] = (time.perf_counter(), status, usage)
    done, failed = [], []
    for core, proc, t0, stdout, stderr in started:  # every run awaited, failed or not
        t1, status, usage = ended[proc.pid]
        wall = t1 - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        stderr.seek(0)
        text, err = stdout.read(), stderr.read()
        stdout.close()
        stderr.close()
        if proc.returncode not in (0, 1):
            last = (err.strip().splitlines() or ["no message"])[-1]
            failed.append(f"kmc check on core {core} exited {proc.returncode}: {last}")
            continue
        done.append({"core": core, "wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                     "summary": json.loads(text)})
    if failed:
        raise Failed(failed[0])
    return done


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default="specs/kraft-kip966-reference.toml")
    ap.add_argument("--depth", type=int, default=11)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", dest="json_out", default=None, help="write the figures here")
    args = ap.parse_args()
    try:
        return measure(args)
    except Failed as e:
        print(f"two_at_once.py: error: {e}", file=sys.stderr)
        return 2


def measure(args) -> int:
    if args.rounds < 1:
        raise Failed("--rounds must be at least 1")
    if not shutil.which("taskset"):
        raise Failed("taskset is not on PATH")
    if not {0, 1} <= os.sched_getaffinity(0):
        raise Failed("this needs cores 0 and 1")
    if not (ROOT / args.spec).is_file():
        raise Failed(f"no spec file {args.spec}")

    rounds = []
    with tempfile.TemporaryDirectory(prefix="kmc-bench-") as out:
        for i in range(args.rounds):
            row: dict = {"round": i + 1, "load_before": round(os.getloadavg()[0], 2)}
            steps = ["alone", "both"] if i % 2 == 0 else ["both", "alone"]
            for step in steps:
                if step == "alone":
                    row["alone"] = run(args.spec, args.depth, [0], out) + run(args.spec, args.depth, [1], out)
                else:
                    row["both"] = run(args.spec, args.depth, [0, 1], out)
            row["load_after"] = round(os.getloadavg()[0], 2)
            rounds.append(row)
            print(f"round {i + 1} ({' then '.join(steps)}): alone "
                  + ", ".join(f"core {r['core']} {r['wall_s']:.1f} s" for r in row["alone"])
                  + "; both at once "
                  + ", ".join(f"core {r['core']} {r['wall_s']:.1f} s" for r in row["both"])
                  + f"; load {row['load_before']} / {row['load_after']}", flush=True)

    runs = [r for row in rounds for r in row["alone"] + row["both"]]
    first = runs[0]["summary"]
    differ = [f for f in SAME for r in runs if r["summary"].get(f) != first.get(f)]
    alone = statistics.mean(r["cpu_s"] for row in rounds for r in row["alone"])
    both = statistics.mean(r["cpu_s"] for row in rounds for r in row["both"])
    slowdown = both / alone
    result = {"spec": args.spec, "depth": args.depth, "distinct": first.get("distinct"),
              "rounds": rounds, "alone_cpu_s": round(alone, 2), "both_cpu_s": round(both, 2),
              "slowdown": round(slowdown, 3), "ceiling": round(2 / slowdown, 3), "identical": not differ}
    for row in rounds:
        for r in row["alone"] + row["both"]:
            r.pop("summary")
    print(f"{args.spec} --depth {args.depth}: {first.get('distinct'):,} distinct states")
    print(f"one process alone: {alone:.1f} s of CPU on average; with the other core busy too: {both:.1f} s "
          f"({(slowdown - 1) * 100:+.1f}%)")
    print(f"ceiling of any two-core split of this work against the local engine: {2 / slowdown:.2f}x")
    print(f"identical results: {not differ}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=1) + "\n")
    return 0 if not differ else 1


if __name__ == "__main__":
    sys.exit(main())
