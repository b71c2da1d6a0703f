"""Simulation with and without temporal properties, on one core, on every core
and on the Spark swarm (local[2]), side by side in one run; then how long
simulation takes to find each seeded liveness bug.

Walks per second: `kmc simulate` on the author's liveness configuration of the
KRaft quorum (specs/quorum/simulate-liveness-reference.toml: the constants
of kraft/kip_996/model_liveness.cfg, TestLiveness TRUE, its four temporal
properties under the reference's Fairness), the same seed and --walks for
every run, liveness off (the spec without its `properties`) and on. Each run
is a fresh `kmc simulate` process; `--engine local` is pinned to one core
(taskset -c 0), `auto` and `spark` get every core. The runs of one setting
must agree (walks, steps, distinct states, verdict): the script says so and
exits 1 otherwise. Spark's walks per second count its start-up (the driver
walks while Spark starts); the start-up is shown apart.

Time to find: each spec of LIVENESS_FINDS (the seeded liveness bugs, and the
reference's own liveness violations of specs/quorum and specs/liveness) on
the local engine (one core) and on auto: the seconds from the first walk to
the violating one (summary.json's time_to_violation_s), and the walk number
(the spec's seed, 0 if it names none).

    .venv/bin/python bench/simulate_liveness.py                  # 256 walks (4 batches)
    .venv/bin/python bench/simulate_liveness.py --walks 50 --no-spark
    .venv/bin/python bench/simulate_liveness.py --json out.json
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KMC = [sys.executable, "-m", "checker.front.cli"]
SPEC = ROOT / "specs" / "quorum" / "simulate-liveness-reference.toml"
# the seeded liveness bug, then the reference's own liveness violations on small configurations
LIVENESS_FINDS = [ROOT / "specs" / "simulate" / "kip966-never-unfence-liveness.toml",
                  ROOT / "specs" / "quorum" / "simulate-mutant-hwm_needs_all_voters.toml",
                  ROOT / "specs" / "quorum" / "liveness-crash-no-leader.toml",
                  ROOT / "specs" / "quorum" / "liveness-epoch-limit-stuck-prospective.toml",
                  ROOT / "specs" / "quorum" / "liveness-remove-self-leads-forever.toml",
                  ROOT / "specs" / "liveness" / "kip966-elr-unclean-unavailable.toml"]


def without_properties(spec: Path, folder: Path) -> Path:
    """The spec with its temporal properties (and fairness) left out."""
    text = spec.read_text(encoding="utf-8")
    text = re.sub(r"(?ms)^properties = \[.*?\]\n", "", text)
    text = re.sub(r"(?m)^fairness = .*\n", "", text)
    out = folder / spec.name
    out.write_text(text, encoding="utf-8")
    return out


def run(spec: Path, engine: str, walks: int | None, seed: int, out: Path) -> dict:
    cmd = KMC + ["simulate", str(spec), "--engine", engine, "--seed", str(seed), "--json", "-q",
                 "--out", str(out)]
    if walks is not None:
        cmd += ["--walks", str(walks)]
    if engine == "spark":
        cmd += ["--master", "local[2]"]
    if engine == "local":
        cmd = ["taskset", "-c", "0"] + cmd
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    obj = json.loads(r.stdout.strip().splitlines()[-1])
    sim = obj["simulate"]
    return {"engine": engine, "walks": obj["walks"], "steps": obj["steps"], "distinct": obj["distinct"],
            "outcome": obj["outcome"], "violated": obj.get("violated"), "walk_s": sim["walk_s"],
            "walks_per_s": sim["walks_per_s"], "spark_startup_s": sim.get("spark_startup_s"),
            "first_violation": sim.get("first_violation"), "process_s": round(wall, 2)}


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, Python {platform.python_version()}"


def commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return r.stdout.strip() or "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--walks", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-spark", action="store_true")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    engines = ["local", "auto"] + ([] if args.no_spark else ["spark"])
    load_before = os.getloadavg()
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    rows, agree = [], True
    with tempfile.TemporaryDirectory(prefix="kmc-bench-simlive-") as tmp:
        folder = Path(tmp)
        plain = without_properties(SPEC, folder)
        for setting, spec in (("off", plain), ("on", SPEC)):
            runs = [run(spec, e, args.walks, args.seed, folder / "out") for e in engines]
            keys = {(r["walks"], r["steps"], r["distinct"], r["outcome"], str(r["violated"])) for r in runs}
            agree &= len(keys) == 1
            for r in runs:
                rows.append({"liveness": setting, **r})
        found = []
        for spec in LIVENESS_FINDS:
            for e in ("local", "auto"):
                r = run(spec, e, None, _spec_seed(spec), folder / "out")
                fv = r["first_violation"] or {}
                found.append({"spec": str(spec.relative_to(ROOT)), "engine": e, "violated": r["violated"],
                              "walk": fv.get("walk"), "time_to_violation_s": fv.get("time_to_violation_s"),
                              "process_s": r["process_s"]})
    load_after = os.getloadavg()
    report = {"date": started, "machine": machine(), "commit": commit(),
              "command": "bench/simulate_liveness.py " + " ".join(sys.argv[1:]),
              "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in load_after],
              "spec": str(SPEC.relative_to(ROOT)), "walks": args.walks, "seed": args.seed,
              "runs": rows, "engines_agree": agree, "found": found}
    print_report(report)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    if not agree:
        print("DIFFERENT results across engines for one seed", file=sys.stderr)
        return 1
    return 0


def _spec_seed(spec: Path) -> int:
    import tomllib
    with open(spec, "rb") as f:
        return int(tomllib.load(f).get("simulate", {}).get("seed", 0))


def print_report(rep: dict) -> None:
    print(f"{rep['date']}; {rep['machine']}; commit {rep['commit']}; `{rep['command']}`")
    print(f"load average (1, 5, 15 min) before {rep['load_before']}, after {rep['load_after']}")
    print(f"{rep['spec']}: {rep['walks']} walks of <= 100 steps, seed {rep['seed']}; "
          f"engines agree: {rep['engines_agree']}")
    print()
    print("| liveness | engine | cores | walks | steps | distinct | walk s | walks/s | Spark start-up s |")
    print("|---|---|---|---|---|---|---|---|---|")
    cores = {"local": "1 (taskset)", "auto": str(os.cpu_count()), "spark": "local[2]"}
    for r in rep["runs"]:
        print(f"| {r['liveness']} | {r['engine']} | {cores[r['engine']]} | {r['walks']:,} | {r['steps']:,} | "
              f"{r['distinct']:,} | {r['walk_s']:.1f} | {r['walks_per_s']:.1f} | "
              f"{r['spark_startup_s'] if r['spark_startup_s'] is not None else '-'} |")
    print()
    print("| liveness violation (spec) | engine | violated | walk | seconds to find |")
    print("|---|---|---|---|---|")
    for f in rep["found"]:
        print(f"| {f['spec']} | {f['engine']} | {', '.join(f['violated'] or []) or 'not found'} | "
              f"{f['walk']} | {f['time_to_violation_s']} |")


if __name__ == "__main__":
    sys.exit(main())
