#!/usr/bin/env python3
"""How kmc's default engine scales with the cores: 1, 2, 4, ... N workers
(N: the cores this process may run on) on three workloads, each run pinned
to as many cores as it has workers, and TLC with as many workers when given
its jar and the reference specification.

Workloads: b3s1 (kip966, 3 brokers, one ISR shrink: 283,873 states, complete;
bench/tlc_side_by_side.py's A), q-h2-disrupt (the KRaft quorum, two voters,
one disruptive election: 372,332 states, complete; its Q1) and reference-d13
(specs/kraft-kip966-reference.toml to depth 13). One worker is the local
engine on one core (kmc's one-core figure); N workers the auto engine
(`--workers N`) on cores 0..N-1. Per run: wall time (the whole `kmc check`
process, start to exit), speedup over one core, parallel efficiency
(speedup / workers), CPU of the whole process tree, the coordinating
process's share of it, and bytes a state of the whole tree (kmc's own
figure, summary.json's bytes_per_state). Every run's counts (distinct,
generated, per level, per action) must equal the local engine's (exit 1
otherwise). Then, for 2 workers, the ratios the design is held to: wall
local / auto >= 1.8, coordinator <= 3% of the run's CPU, auto's CPU <= 1.15x
local's, <= 200 bytes a state at depth 13. The load average and the cores
really free (busy loops on every core against one alone) are printed before
and after: where fewer cores are free than the runs use, wall times are the
machine's, not the engine's. With --repeat N, N rounds each run every worker
count once, in turn; a count's wall is its median run's, its speedup the
median over the rounds of the one-worker wall over its own in that round.

It runs from the source tree on a bare python3 (3.11 or newer) with click,
msgpack, xxhash and networkx and a C compiler: the compiled hot path
(checker/search/_native.c) is built in place first when missing or older
than its sources; no pip, no network, no Spark.

    python3 bench/scaling.py                                  # every workload, 1..N workers
    python3 bench/scaling.py --workloads b3s1 --workers 1,2   # the 2-core ratios of one
    python3 bench/scaling.py --tlc-jar tla2tools.jar --reference-spec KAFKA_TLAPLUS_GIT_DIR
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
import tlc_side_by_side as tsb  # noqa: E402  (stdlib only: its constants and TLC's side)

PROG = "scaling.py"
WORKLOADS = {
    "b3s1": {"config": "A"},
    "q-h2-disrupt": {"config": "Q1"},
    "reference-d13": {"spec": "specs/kraft-kip966-reference.toml", "depth": 13},
    "tiny": {"config": "tiny"},   # (the script's own test)
}
DEFAULT = ("b3s1", "q-h2-disrupt", "reference-d13")
SAME = ("distinct", "generated", "per_level_distinct", "per_action_generated", "per_action_distinct")
TARGETS = {"speedup": 1.8, "coordinator_share": 0.03, "cpu_ratio": 1.15, "bytes_per_state": 200}

# in the kmc process: the CLI, then its own CPU and its children's (the workers) on stderr
DRIVER = """
import atexit, json, resource, sys
def _report():
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    print("SCALING-CPU " + json.dumps({"self": s.ru_utime + s.ru_stime, "children": c.ru_utime + c.ru_stime}),
          file=sys.stderr, flush=True)
atexit.register(_report)
sys.path.insert(0, @ROOT@)
sys.argv = ["kmc"] + @ARGS@
from checker.front.cli import main
main()
"""


class Fail(Exception):
    pass


def build_native() -> str:
    """The compiled hot path built in place (checker/search/_native<suffix>)
    unless it is there and newer than its sources; returns what runs."""
    src = [ROOT / "checker" / "search" / "_native.c", ROOT / "checker" / "search" / "_claims.h"]
    out = ROOT / "checker" / "search" / f"_native{sysconfig.get_config_var('EXT_SUFFIX')}"
    if os.environ.get("KMC_NATIVE", "1") == "0":
        return "pure Python (KMC_NATIVE=0)"
    if not out.exists() or out.stat().st_mtime < max(p.stat().st_mtime for p in src):
        cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise Fail("no C compiler (cc, gcc or $CC) to build checker/search/_native.c")
        cmd = [cc, "-O2", "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(src[0]), "-o", str(out)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise Fail(f"building the compiled hot path failed: {p.stderr.strip()[-500:]}")
    return f"compiled ({out.name})"


def compile_sources(prefix: Path) -> None:
    """Every run reads its modules' bytecode from `prefix` (a checkout's
    source tree, PYTHONDONTWRITEBYTECODE or not, would otherwise compile
    them in every run, as neither engine does once installed)."""
    import compileall
    import contextlib
    import io
    sys.pycache_prefix = str(prefix)
    with contextlib.redirect_stdout(io.StringIO()):
        for folder in ("checker", "model", "invariants"):
            compileall.compile_dir(ROOT / folder, quiet=2)
    sys.pycache_prefix = None


def cpu_sets(n_max: int | None) -> tuple[list[int], list[int]]:
    """The cores to pin to, and the worker counts: 1, 2, 4, ... and the cores."""
    cores = sorted(os.sched_getaffinity(0))
    n = len(cores) if n_max is None else min(n_max, len(cores))
    counts, k = [], 1
    while k < n:
        counts.append(k)
        k *= 2
    counts.append(n)
    return cores, counts


def spec_of(name: str, folder: Path) -> tuple[Path, list[str]]:
    w = WORKLOADS[name]
    if "spec" in w:
        return ROOT / w["spec"], ["--depth", str(w["depth"])]
    cfg = tsb.resolve_row(tsb.CONFIGS[w["config"]])
    return tsb.write_kmc_spec(name, cfg, folder), []


def run_kmc(name: str, workers: int, cores: list[int], folder: Path) -> dict:
    spec, extra = spec_of(name, folder)
    args = ["check", str(spec), *extra, "--json", "-q", "--out", str(folder / "runs")]
    args += ["--engine", "local"] if workers == 1 else ["--workers", str(workers)]
    pinned = cores[:workers]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(folder),
           "PYTHONPYCACHEPREFIX": str(folder / "pycache")}   # (compile_sources: bytecode as an installed kmc has it)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-c", DRIVER.replace("@ROOT@", repr(str(ROOT))).replace("@ARGS@", repr(args))], capture_output=True,
                       text=True, cwd=ROOT, env=env, preexec_fn=lambda: os.sched_setaffinity(0, pinned))
    wall = time.perf_counter() - t
    try:
        summary = json.loads(p.stdout) if p.returncode in (0, 1) else None
    except ValueError:   # (exit 1 without a summary: Python's own error, a missing module)
        summary = None
    if summary is None:
        said = [line for line in p.stderr.strip().splitlines() if not line.startswith("SCALING-CPU ")]
        raise Fail(f"kmc check ({name}, {workers} workers) exited {p.returncode}: {(said or ['?'])[-1]}")
    cpu = next(json.loads(line.split(" ", 1)[1]) for line in p.stderr.splitlines()
               if line.startswith("SCALING-CPU "))
    total = cpu["self"] + cpu["children"]
    auto = summary.get("auto") or {}
    return {"workers": workers, "wall_s": wall, "cpu_s": total,
            "coordinator_share": cpu["self"] / total if workers > 1 and total else None,
            "bytes_per_state": summary.get("bytes_per_state"), "handover_level": auto.get("handover_level"),
            "counts": {k: summary.get(k) for k in SAME}}


def run_tlc(args, name: str, workers: int, cores: list[int], folder: Path) -> dict | None:
    w = WORKLOADS[name]
    if "config" not in w:
        return None   # (a depth bound: TLC's BFS has none)
    cfg = tsb.resolve_row(tsb.CONFIGS[w["config"]])
    work = folder / f"tlc-{name}-{workers}"
    spec_dir = work / "spec"
    spec_dir.mkdir(parents=True)
    tsb.extract_spec(Path(args.reference_spec), tsb.folder_of(cfg), spec_dir)
    main = tsb.write_tlc_config(cfg, spec_dir)
    log = work / "tlc.log"
    cmd = ["java", "-XX:+UseParallelGC", f"-Xmx{args.tlc_heap}", "-cp", args.tlc_jar, "tlc2.TLC",
           "-workers", str(workers), "-deadlock", "-metadir", str(work / "states"), "-config", "MC.cfg", main]
    pinned = cores[:workers]
    t = time.perf_counter()
    with open(log, "w") as out:
        subprocess.run(cmd, cwd=spec_dir, stdout=out, stderr=subprocess.STDOUT,
                       preexec_fn=lambda: os.sched_setaffinity(0, pinned))
    wall = time.perf_counter() - t
    try:
        r = tsb.tlc_result(log)
    except tsb.Void as e:
        raise Fail(str(e)) from None
    if (r["distinct"], r["generated"]) != (cfg["tlc"]["distinct"], cfg["tlc"]["generated"]):
        raise Fail(f"TLC's counts on {name} differ from the recorded ones: {r}")
    return {"workers": workers, "wall_s": wall, "distinct": r["distinct"]}


def _burn(n: int = 5_000_000) -> None:
    x = 0
    for i in range(n):
        x += i


def free_cores(cores: list[int], n: int) -> float:
    """How many of n cores this machine gives now: n processes of a busy
    loop, each pinned to a core, against one alone (n: every core free; 1:
    the others are taken by other work, and no engine can scale here now)."""
    t = time.perf_counter()
    _burn()
    one = time.perf_counter() - t
    pids = []
    t = time.perf_counter()
    for k in range(n):
        pid = os.fork()
        if pid == 0:
            os.sched_setaffinity(0, [cores[k]])
            _burn()
            os._exit(0)
        pids.append(pid)
    for pid in pids:
        os.waitpid(pid, 0)
    return n * one / (time.perf_counter() - t)


def rounds(fn, counts: list, repeat: int) -> dict:
    """fn(n) for every worker count in each of `repeat` rounds, the counts
    in turn within a round (a machine slowing down or speeding up during the
    runs weighs on every count alike, not on the counts run last): per
    count, the run of median wall time, with its speedup the median over the
    rounds of the one-worker run's wall over this count's in that round."""
    runs: dict = {n: [] for n in counts}
    for _ in range(repeat):
        for n in counts:
            runs[n].append(fn(n))
    one = runs[counts[0]]
    out = {}
    for n in counts:
        row = dict(sorted(runs[n], key=lambda r: r["wall_s"])[len(runs[n]) // 2])
        row["speedup"] = statistics.median_high(a["wall_s"] / b["wall_s"] for a, b in zip(one, runs[n]))
        out[n] = row
    return out


def fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--workloads", default=",".join(DEFAULT), help=f"comma-separated, of {', '.join(WORKLOADS)}")
    ap.add_argument("--workers", default=None, help="comma-separated worker counts (default 1, 2, 4, ... the cores)")
    ap.add_argument("--max-workers", type=int, default=None, help="at most this many (default: the cores)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds, each running every worker count once; the median kept (default 1)")
    ap.add_argument("--tlc-jar", default=None, help="tla2tools.jar: TLC with as many workers too")
    ap.add_argument("--reference-spec", default=None, help="a Vanlightly/kafka-tlaplus git dir or checkout")
    ap.add_argument("--tlc-heap", default="8g")
    ap.add_argument("--json", dest="json_out", default=None, help="write every figure here")
    args = ap.parse_args(argv)
    try:
        names = [n for n in args.workloads.split(",") if n]
        bad = [n for n in names if n not in WORKLOADS]
        if bad:
            raise Fail(f"unknown workload(s) {', '.join(bad)} (known: {', '.join(WORKLOADS)})")
        if bool(args.tlc_jar) != bool(args.reference_spec):
            raise Fail("--tlc-jar and --reference-spec go together")
        cores, counts = cpu_sets(args.max_workers)
        if args.workers:
            counts = sorted({int(x) for x in args.workers.split(",")} | {1})
            if counts[-1] > len(cores):
                raise Fail(f"{counts[-1]} workers, but this process may run on {len(cores)} cores")
        native = build_native()
    except (Fail, ValueError) as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    load_before = os.getloadavg()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit {rev.stdout.strip() or '?'}; "
          f"{len(cores)} cores ({os.cpu_count()} cpus); hot path {native}; Python {sys.version.split()[0]}")
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}; "
          f"free cores now (busy loops on {counts[-1]} cores against one): "
          f"{free_cores(cores, counts[-1]):.2f} of {counts[-1]}")
    head = (f"{'workload':<14} {'tool':<4} {'workers':>7} {'wall s':>8} {'speedup':>8} {'effic.':>7} "
            f"{'CPU s':>8} {'coord.':>7} {'B/state':>8}  distinct")
    print(head)
    rows, ok = [], True
    with tempfile.TemporaryDirectory(prefix="kmc-scaling-") as tmp:
        folder = Path(tmp)
        compile_sources(folder / "pycache")
        try:
            for name in names:
                measured = rounds(lambda n: run_kmc(name, n, cores, folder), counts, args.repeat)
                base = measured[counts[0]]
                for n in counts:
                    r = measured[n]
                    same = r["counts"] == base["counts"]
                    ok &= same
                    r.update(workload=name, tool="kmc", same_counts=same)
                    r["efficiency"] = r["speedup"] / n
                    rows.append(r)
                    print(f"{name:<14} {'kmc':<4} {n:>7} {r['wall_s']:>8.1f} {r['speedup']:>7.2f}x "
                          f"{r['efficiency']:>6.0%} {r['cpu_s']:>8.1f} {fmt(r['coordinator_share'], '>7.1%')} "
                          f"{fmt(r['bytes_per_state'], '>8.0f')}  {r['counts']['distinct']:,}"
                          + ("" if same else "  COUNTS DIFFER from the local engine's"), flush=True)
                    if args.tlc_jar:
                        t = run_tlc(args, name, n, cores, folder)
                        if t is not None:
                            t.update(workload=name, tool="TLC", kmc_speedup_over_tlc=t["wall_s"] / r["wall_s"])
                            rows.append(t)
                            print(f"{name:<14} {'TLC':<4} {n:>7} {t['wall_s']:>8.1f}   "
                                  f"(TLC wall / kmc wall {t['kmc_speedup_over_tlc']:.2f})", flush=True)
        except Fail as e:
            print(f"{PROG}: error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print(f"{PROG}: interrupted", file=sys.stderr)
            return 130
    # the 2-worker ratios against the local engine on one core
    print("2 workers against the local engine (targets: wall >= 1.8x, coordinator <= 3% of the CPU, "
          "CPU <= 1.15x, <= 200 bytes a state at depth 13):")
    for name in names:
        one = next((r for r in rows if r["workload"] == name and r["tool"] == "kmc" and r["workers"] == 1), None)
        two = next((r for r in rows if r["workload"] == name and r["tool"] == "kmc" and r["workers"] == 2), None)
        if one is None or two is None:
            continue
        cpu_ratio = two["cpu_s"] / one["cpu_s"]
        checks = [("wall local/auto", two["speedup"], f"{two['speedup']:.2f}x", two["speedup"] >= TARGETS["speedup"]),
                  ("coordinator", two["coordinator_share"], f"{two['coordinator_share']:.1%}",
                   two["coordinator_share"] <= TARGETS["coordinator_share"]),
                  ("CPU auto/local", cpu_ratio, f"{cpu_ratio:.2f}x", cpu_ratio <= TARGETS["cpu_ratio"])]
        if WORKLOADS[name].get("depth") == 13 and two["bytes_per_state"] is not None:
            checks.append(("bytes/state", two["bytes_per_state"], f"{two['bytes_per_state']:.0f}",
                           two["bytes_per_state"] <= TARGETS["bytes_per_state"]))
        print(f"  {name}: " + "; ".join(f"{label} {text} ({'met' if good else 'MISSED'})"
                                          for label, _, text, good in checks))
    load_after = os.getloadavg()
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}; "
          f"free cores now: {free_cores(cores, counts[-1]):.2f} of {counts[-1]}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"cores": len(cores), "load_before": load_before,
                                                   "load_after": load_after, "runs": rows}, indent=1))
    if not ok:
        print(f"{PROG}: the counts differ between engines", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
