#!/usr/bin/env python3
"""How far kmc's default engine and TLC each get in a fixed time on a state
space neither can exhaust: the KRaft quorum's reference configuration
(kraft/kip_996/kraft_kip_996.cfg, every constant at its default;
specs/quorum/reference.toml without its depth bound).

Each tool runs alone on the whole machine, one after the other: kmc with its
default engine (auto: every core), then TLC with as many workers as cores
(the reference .cfg's constants, its VIEW off). After --seconds each gets
SIGTERM; the script prints the last progress each reported: distinct states
found, states generated, and the deepest BFS level reached (steps from the
initial state; a level still being explored counts). The load average is
printed before and after each run.

    .venv/bin/python bench/time_budget_race.py --seconds 1800 \\
        --tlc-jar ~/tlc/tla2tools.jar --reference-spec KAFKA_TLAPLUS_GIT_DIR \\
        --tlc-run-script ../shared/tools/tlc/run.sh

TLC and the specification are arguments, not part of this project.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "quorum" / "reference.toml"
KMC_PROGRESS = re.compile(r"level (\d+): ([\d,]+) generated .*?, ([\d,]+) distinct")
TLC_PROGRESS = re.compile(r"Progress\((\d+)\) at .*?: ([\d,]+) states generated.*?, ([\d,]+) distinct states found")


def num(s: str) -> int:
    return int(s.replace(",", ""))


def timed(cmd: list[str], seconds: float, log: Path, cwd: Path = ROOT) -> float:
    """Run cmd for at most `seconds`, then SIGTERM its process group; its
    output (stdout and stderr) goes to `log`. Returns the wall time."""
    start = time.perf_counter()
    with open(log, "w") as out:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            p.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    return time.perf_counter() - start


def last(pattern: re.Pattern, text: str):
    found = pattern.findall(text)
    return found[-1] if found else None


def load() -> str:
    a = os.getloadavg()
    return f"{a[0]:.2f} {a[1]:.2f} {a[2]:.2f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="time_budget_race.py")
    ap.add_argument("--seconds", type=float, default=1800)
    ap.add_argument("--tlc-jar")
    ap.add_argument("--reference-spec", help="git directory (or checkout) of Vanlightly/kafka-tlaplus")
    ap.add_argument("--tlc-run-script", help="shared/tools/tlc/run.sh")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="TLC workers (default: cores)")
    ap.add_argument("--kmc-only", action="store_true")
    args = ap.parse_args(argv)
    if not args.kmc_only and not (args.tlc_jar and args.reference_spec and args.tlc_run_script):
        print("time_budget_race.py: error: give --tlc-jar, --reference-spec and --tlc-run-script, "
              "or --kmc-only", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="kmc-race-"))
    kmc = ROOT / ".venv" / "bin" / "kmc"
    print(f"{os.cpu_count()} cpus; {args.seconds:.0f} s each; load before kmc: {load()}", flush=True)
    wall = timed([str(kmc), "check", str(SPEC), "--depth", "none", "--out", str(work / "results")],
                 args.seconds, work / "kmc.log")
    got = last(KMC_PROGRESS, (work / "kmc.log").read_text(errors="replace"))
    print(f"kmc (engine auto): {wall:.0f} s; " + (
        f"expanding level {got[0]} (a state {num(got[0]) + 1} steps deep found), "
        f"{num(got[2]):,} distinct, {num(got[1]):,} generated" if got else "no progress line")
        + f"; load after: {load()}", flush=True)
    shutil.rmtree(work / "results", ignore_errors=True)   # kmc's levels on disk: only its log is read
    if args.kmc_only:
        print(f"logs in {work}")
        return 0
    out = work / "tlc"
    consts = ""  # the .cfg's own constants: the reference configuration
    wall = timed([args.tlc_run_script, args.tlc_jar, args.reference_spec, "kraft/kip_996", consts,
                  "--workers", str(args.workers), "--out", str(out)], args.seconds, work / "tlc.out")
    text = (out / "tlc.log").read_text(errors="replace") if (out / "tlc.log").exists() else ""
    shutil.rmtree(out / "states", ignore_errors=True)   # TLC's fingerprints and queue on disk
    got = last(TLC_PROGRESS, text)
    print(f"TLC ({args.workers} workers): {wall:.0f} s; " + (
        f"level {got[0]} (a state {num(got[0]) - 1} steps deep found), "
        f"{num(got[2]):,} distinct, {num(got[1]):,} generated" if got else "no progress line")
        + f"; load after: {load()}", flush=True)
    print(f"logs in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
