#!/usr/bin/env python3
"""kmc against TLC, one core each, on complete state spaces.

For each configuration kmc explores every reachable state (no depth bound) and
the script prints distinct, generated, depth (steps), wall time, distinct and
generated states per second, peak RSS and bytes per distinct state (peak RSS /
distinct). With --tlc-jar and --reference-spec it also runs TLC (1 worker,
-deadlock, the reference .cfg with these constants and without its VIEW) at
the same time: TLC pinned to core 0, kmc to core 1 (taskset), both started
together; it prints TLC's figures and TLC wall / kmc wall, and exits 1 if the
counts differ (the comparison is then void). The load average is printed
before and after.

    .venv/bin/python bench/tlc_side_by_side.py --kmc-only                   # A and B, kmc alone
    .venv/bin/python bench/tlc_side_by_side.py --configs Q1,Q2,Q3 --tlc-jar JAR \
        --reference-spec DIR --tlc-run-script ../shared/tools/tlc/run.sh   # the KRaft quorum
    .venv/bin/python bench/tlc_side_by_side.py --configs A \\
        --tlc-jar ~/tlc/tla2tools.jar --reference-spec KAFKA_TLAPLUS_GIT_DIR  # ~50 s
    .venv/bin/python bench/tlc_side_by_side.py --tlc-jar JAR --reference-spec DIR \\
        --tlc-run-script ../shared/tools/tlc/run.sh --repeat 3 --json out.json

--reference-spec is the git directory of a Vanlightly/kafka-tlaplus snapshot
(as the search tool's fetch gives it) or a checked-out copy of that
repository. Neither TLC nor the specification is part of this project: both
are arguments, and the specification is extracted into a temporary folder.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROG = "tlc_side_by_side.py"

# Configurations of the kraft model; constants are named as in the reference
# .cfg. `tlc` holds TLC's figures for the complete state space (1 worker, no
# VIEW): distinct, generated, and depth in steps (TLC's "depth of the complete
# state graph search" minus 1); kmc's counts must equal them.
CONFIGS: dict[str, dict] = {
    # 3 brokers, one ISR shrink by a leader; no faults (283,873 distinct, 42
    # steps). TLC's figures: the row of tests/conformance/data/kraft-tlc-totals.json.
    "A": {"variant": "kip966", "row": "kip966-b3s1", "constants": None, "tlc": None},
    # 2 brokers, one clean (log-keeping) shutdown and one ISR shrink: a longer,
    # narrower graph than A (356,872 distinct, 40 steps).
    "B": {"variant": "kip966", "row": "kip966-b2n1s1", "constants": None, "tlc": None},
    # The KRaft controller quorum (kraft_quorum, reference kraft/kip_996), rows of
    # tests/conformance/data/quorum-tlc.json: two voters, one disruptive
    # election trigger, elections up to epoch 2 (q-h2-disrupt); three servers
    # growing from two voters to three (q-h3-add); two voters and a disk loss
    # (q-h2-crash).
    "Q1": {"model": "kraft_quorum", "variant": "kip996",
           "constants": {"Hosts": ["h1", "h2"], "Value": ["v1"], "InitClusterSize": 2,
                         "MinClusterSize": 2, "MaxClusterSize": 2, "MaxSpawnedServers": 2,
                         "MaxEpoch": 2, "TestLiveness": False, "MaxRestarts": 0, "MaxPermCrashes": 0,
                         "MaxAddReconfigs": 0, "MaxRemoveReconfigs": 0, "MaxConnectivityChanges": 0,
                         "MaxDisruptiveElectionTriggers": 1, "MaxValuesPerEpoch": 1},
           "tlc": {"distinct": 372_332, "generated": 907_745, "depth": 48}},
    "Q2": {"model": "kraft_quorum", "variant": "kip996",
           "constants": {"Hosts": ["h1", "h2", "h3"], "Value": ["v1"], "InitClusterSize": 2,
                         "MinClusterSize": 2, "MaxClusterSize": 3, "MaxSpawnedServers": 3,
                         "MaxEpoch": 2, "TestLiveness": False, "MaxRestarts": 0, "MaxPermCrashes": 0,
                         "MaxAddReconfigs": 1, "MaxRemoveReconfigs": 0, "MaxConnectivityChanges": 0,
                         "MaxDisruptiveElectionTriggers": 0, "MaxValuesPerEpoch": 1},
           "tlc": {"distinct": 56_786, "generated": 133_593, "depth": 39}},
    "Q3": {"model": "kraft_quorum", "variant": "kip996", "row": "q-h2-crash",
           "constants": None, "tlc": None},
    # A few hundred states, for the script's own test (reference kip966-b2s1).
    "tiny": {"variant": "kip966",
             "constants": {"BrokerCount": 2, "InitReplicationFactor": 2, "Values": ["A"], "MinISR": 1,
                           "InitIsrSize": 2, "NoDataLossShutdownLimit": 0, "DataLossShutdownLimit": 0,
                           "FenceBrokerLimit": 0, "LeaderShrinkIsrLimit": 1, "ReassignmentLimit": 0},
             "tlc": {"distinct": 367, "generated": 718, "depth": 17}},
}
# (model, variant) -> the reference's folder
FOLDER = {("kraft", "kip966"): "kafka_data_replication/kraft/kip-966",
          ("kraft", "v3_5"): "kafka_data_replication/kraft/v3.5",
          ("kraft_quorum", "kip996"): "kraft/kip_996"}
# a configuration may name a row of the conformance data instead
ROW_FIGURES = {"kraft_quorum": ROOT / "tests" / "conformance" / "data" / "quorum-tlc.json",
               "kraft": ROOT / "tests" / "conformance" / "data" / "kraft-tlc-totals.json"}


def model_of(cfg: dict) -> str:
    return cfg.get("model", "kraft")


def folder_of(cfg: dict) -> str:
    return FOLDER[(model_of(cfg), cfg["variant"])]


def resolve_row(cfg: dict) -> dict:
    """A configuration that names a conformance row takes its constants and TLC's figures."""
    if cfg.get("row") is None:
        return cfg
    rows = {r["name"]: r for r in json.loads(ROW_FIGURES[model_of(cfg)].read_text())}
    row = rows[cfg["row"]]
    return {**cfg, "constants": row["constants"],
            "tlc": {"distinct": row["distinct"], "generated": row["generated"],
                    "depth": row["levels"] - 1}}


class Fail(Exception):
    """Bad input: one line, exit 2."""


class Void(Exception):
    """The runs cannot be compared (a count differs, a run failed): exit 1."""


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not the usage text
        raise Fail(message)


# ---------------------------------------------------------------- kmc side

def kmc_command() -> list[str]:
    local = ROOT / ".venv" / "bin" / "kmc"
    if local.exists():
        return [str(local)]
    found = shutil.which("kmc")
    if found:
        return [found]
    return [sys.executable, "-m", "checker.front.cli"]


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise Fail(f"constant value {v!r} has no TOML form here")


def write_kmc_spec(name: str, cfg: dict, folder: Path) -> Path:
    lines = [f'model = "{model_of(cfg)}"', f'variant = "{cfg["variant"]}"', "check_deadlock = false", "",
             "[constants]"]
    lines += [f"{k} = {toml_value(v)}" for k, v in cfg["constants"].items()]
    path = folder / f"bench-{name}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def kmc_result(proc: dict) -> dict:
    out = proc["stdout"]
    if proc["exit"] not in (0, 1):
        last = (proc["stderr"].strip().splitlines() or ["(no message)"])[-1]
        raise Void(f"kmc exited {proc['exit']}: {last}")
    try:
        s = json.loads(out)
    except json.JSONDecodeError:
        last = (proc["stderr"].strip().splitlines() or ["(no message)"])[-1]
        raise Void(f"kmc printed no JSON summary (exit {proc['exit']}): {last}") from None
    if s["outcome"] != "pass" or not s.get("exhausted") or s.get("states_left"):
        raise Void(f"kmc did not explore the complete state space without a violation "
                   f"(outcome {s['outcome']}, violated {s.get('violated')}, states left {s.get('states_left')})")
    return {"distinct": s["distinct"], "generated": s["generated"], "depth": s["depth_reached"],
            "search_wall_s": s["wall_time_s"], "reported_peak_kb": s["peak_memory_kb"]}


# ---------------------------------------------------------------- TLC side

def tla_value(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return v  # a model value
    if isinstance(v, list):
        return "{" + ", ".join(tla_value(x) for x in v) + "}"
    raise Fail(f"constant value {v!r} has no TLA+ form here")


def extract_spec(reference: Path, sub: str, dest: Path) -> None:
    """The variant's folder of the reference into dest (from a git dir or a checkout)."""
    depth = len(Path(sub).parts)
    if (reference / sub).is_dir():
        shutil.copytree(reference / sub, dest, dirs_exist_ok=True)
        return
    arch = subprocess.run(["git", f"--git-dir={reference}", "archive", "HEAD", sub], capture_output=True)
    if arch.returncode != 0:
        raise Fail(f"--reference-spec {reference}: neither a checkout with {sub} nor a git directory "
                   f"holding it ({arch.stderr.decode(errors='replace').strip().splitlines()[-1:]})")
    with tarfile.open(fileobj=io.BytesIO(arch.stdout)) as tar:
        for m in tar.getmembers():
            parts = Path(m.name).parts
            if len(parts) <= depth or not (m.isfile() or m.isdir()):
                continue
            m.name = str(Path(*parts[depth:]))
            tar.extract(m, dest, filter="data")


def write_tlc_config(cfg: dict, spec_dir: Path) -> str:
    """MC.cfg: the reference's own .cfg with the constants set and the VIEW off; returns the main module."""
    cfgs = sorted(c for c in spec_dir.glob("*.cfg") if "liveness" not in c.name)
    mains = [c.with_suffix(".tla") for c in cfgs if c.with_suffix(".tla").exists()]
    if not mains or not cfgs:
        raise Fail(f"no .tla beside its .cfg in the reference's {folder_of(cfg)} folder")
    text = cfgs[0].read_text()
    for name, value in cfg["constants"].items():
        text, n = re.subn(rf"^(\s*){name} = .*$", lambda m: f"{m.group(1)}{name} = {tla_value(value)}",
                          text, flags=re.M)
        if n != 1:
            raise Fail(f"constant {name} is not set once in the reference's {cfgs[0].name}")
    # Without the VIEW every variable is part of a state: exact counts.
    text = re.sub(r"^VIEW ", r"\\* VIEW ", text, flags=re.M)
    (spec_dir / "MC.cfg").write_text(text + "\n")
    return mains[0].name


def tlc_command(args, cfg: dict, work: Path) -> tuple[list[str], Path, Path, Path]:
    """The TLC command, its working folder, the file for its stdout and TLC's log."""
    folder = folder_of(cfg)
    if folder.startswith("kafka_data_replication/kraft/"):
        folder = folder.rsplit("/", 1)[1]  # run.sh's name for the replication variants
    log = work / "tlc.log"
    if args.tlc_run_script:
        consts = ";".join(f"{k}={tla_value(v)}" for k, v in cfg["constants"].items())
        cmd = [args.tlc_run_script, args.tlc_jar, args.reference_spec, folder, consts, "--out", str(work)]
        if args.tlc_cpu != "none":
            cmd += ["--cpu", args.tlc_cpu]
        return cmd, work, work / "run.out", log  # run.sh writes work/tlc.log itself
    spec_dir = work / "spec"
    spec_dir.mkdir()
    extract_spec(Path(args.reference_spec), folder_of(cfg), spec_dir)
    main = write_tlc_config(cfg, spec_dir)
    cmd = pin(args.tlc_cpu) + ["java", "-XX:+UseParallelGC", f"-Xmx{args.tlc_heap}", "-cp", args.tlc_jar,
                                "tlc2.TLC", "-workers", "1", "-deadlock", "-metadir", str(work / "states"),
                                "-config", "MC.cfg", main]
    return cmd, spec_dir, log, log


def tlc_result(log: Path) -> dict:
    text = log.read_text(errors="replace") if log.exists() else ""
    counts = re.findall(r"([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states left", text)
    depth = re.search(r"depth of the complete state graph search is (\d+)", text)
    if "No error has been found" not in text or not counts or not depth:
        tail = [l for l in text.strip().splitlines() if l.strip()][-3:]
        raise Void(f"TLC did not finish the complete state space without an error (log {log}: {' | '.join(tail)})")
    gen, dist, left = (int(x.replace(",", "")) for x in counts[-1])
    if left:
        raise Void(f"TLC left {left} states on its queue")
    return {"distinct": dist, "generated": gen, "depth": int(depth.group(1)) - 1}  # levels -> steps


# ---------------------------------------------------------------- running

def pin(cpu: str) -> list[str]:
    return [] if cpu == "none" else ["taskset", "-c", cpu]


def run_together(jobs: dict[str, tuple[list[str], Path, Path | None]]) -> dict[str, dict]:
    """Start every job at once (cmd, cwd, file for its stdout or None to keep it);
    wall time, exit code, stdout, stderr and peak RSS (wait4) of each."""
    procs = {}
    try:
        for name, (cmd, cwd, out_path) in jobs.items():
            out = open(out_path, "w+") if out_path else tempfile.TemporaryFile("w+")
            err = tempfile.TemporaryFile("w+")
            procs[name] = (subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=err, text=True),
                           time.perf_counter(), out, err)
        done: dict[str, dict] = {}
        while len(done) < len(procs):
            pid, status, usage = os.wait4(-1, 0)  # our children only: the two jobs
            end = time.perf_counter()
            for name, (p, start, out, err) in procs.items():
                if p.pid == pid:
                    p.returncode = os.waitstatus_to_exitcode(status)
                    out.seek(0)
                    err.seek(0)
                    done[name] = {"exit": p.returncode, "wall_s": end - start,
                                  "cpu_s": usage.ru_utime + usage.ru_stime,
                                  "peak_rss_kb": usage.ru_maxrss,  # KiB; a script's covers its children
                                  "stdout": out.read(), "stderr": err.read()}
        return done
    except BaseException:
        for p, *_ in procs.values():
            if p.returncode is None:
                p.kill()
                p.wait()
        raise
    finally:
        for _, _, out, err in procs.values():
            out.close()
            err.close()


def rates(r: dict) -> dict:
    r["distinct_per_s"] = r["distinct"] / r["wall_s"]
    r["generated_per_s"] = r["generated"] / r["wall_s"]
    r["bytes_per_distinct"] = r["peak_rss_kb"] * 1024 / r["distinct"]
    return r


def run_config(args, name: str, cfg: dict, with_tlc: bool) -> dict:
    work = Path(tempfile.mkdtemp(prefix=f"kmc-bench-tlc-{name}-"))
    try:
        spec = write_kmc_spec(name, cfg, work)
        jobs = {}
        if with_tlc:
            (work / "tlc").mkdir()
            *tlc_job, tlc_log = tlc_command(args, cfg, work / "tlc")
            jobs["tlc"] = tuple(tlc_job)
        jobs["kmc"] = (pin(args.kmc_cpu) + kmc_command() + ["check", str(spec), "--json", "--quiet",
                                                            "--out", str(work / "results")], ROOT, None)
        load_before = os.getloadavg()
        procs = run_together(jobs)
        load_after = os.getloadavg()
        kmc = rates({**kmc_result(procs["kmc"]), "wall_s": procs["kmc"]["wall_s"],
                     "peak_rss_kb": procs["kmc"]["peak_rss_kb"]})
        row = {"config": name, "model": model_of(cfg), "variant": cfg["variant"],
               "constants": cfg["constants"], "kmc": kmc,
               "tlc": None, "loadavg_before": load_before, "loadavg_after": load_after}
        if with_tlc:
            if procs["tlc"]["exit"] != 0 and args.tlc_run_script is None:
                raise Void(f"TLC exited {procs['tlc']['exit']}: {procs['tlc']['stderr'].strip()[-300:]}")
            tlc = rates({**tlc_result(tlc_log), "wall_s": procs["tlc"]["wall_s"],
                         "peak_rss_kb": procs["tlc"]["peak_rss_kb"]})
            row["tlc"] = tlc
            row["tlc_wall_over_kmc_wall"] = tlc["wall_s"] / kmc["wall_s"]
        return row
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"kept {work}", file=sys.stderr)


def mismatches(row: dict, expected: dict) -> list[str]:
    """Counts that differ: kmc against TLC (this run's, else the recorded figures)."""
    kmc, tlc = row["kmc"], row["tlc"]
    against, label = (tlc, "TLC") if tlc else (expected, "TLC's recorded figures")
    return [f"{k}: kmc {kmc[k]:,} vs {label} {against[k]:,}" for k in ("distinct", "generated", "depth")
            if against.get(k) is not None and kmc[k] != against[k]]


HEAD = (f"{'config':<7}{'tool':<5}{'distinct':>10}{'generated':>11}{'depth':>6}{'wall s':>8}"
        f"{'distinct/s':>11}{'gen/s':>9}{'peak RSS MiB':>13}{'B/distinct':>11}")


def line(config: str, tool: str, r: dict) -> str:
    return (f"{config:<7}{tool:<5}{r['distinct']:>10,}{r['generated']:>11,}{r['depth']:>6}{r['wall_s']:>8.1f}"
            f"{r['distinct_per_s']:>11,.0f}{r['generated_per_s']:>9,.0f}{r['peak_rss_kb'] / 1024:>13.0f}"
            f"{r['bytes_per_distinct']:>11,.0f}")


def write_json(path: str, data: dict) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)  # atomic: never a half-written file


def parse_args(argv):
    ap = Parser(prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--configs", default="A,B", help=f"comma-separated, of {', '.join(CONFIGS)} (default A,B)")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each configuration (default 1)")
    ap.add_argument("--json", default=None, help="write every figure here as JSON")
    ap.add_argument("--kmc-only", action="store_true", help="run kmc alone (no TLC)")
    ap.add_argument("--tlc-jar", default=None, help="tla2tools.jar")
    ap.add_argument("--reference-spec", default=None,
                    help="git directory of a Vanlightly/kafka-tlaplus snapshot, or a checkout of it")
    ap.add_argument("--tlc-run-script", default=None,
                    help="run TLC through this run.sh (JAR DIR VARIANT CONSTANTS --cpu C --out DIR)")
    ap.add_argument("--tlc-heap", default="8g", help="TLC's -Xmx (default 8g, as run.sh)")
    ap.add_argument("--tlc-cpu", default="0", help="taskset core list for TLC, or none (default 0)")
    ap.add_argument("--kmc-cpu", default="1", help="taskset core list for kmc, or none (default 1)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folders (logs, spec)")
    args = ap.parse_args(argv)
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    unknown = [c for c in names if c not in CONFIGS]
    if not names or unknown:
        raise Fail(f"unknown configuration {', '.join(unknown) or '(none)'}; known: {', '.join(CONFIGS)}")
    args.names = names
    if args.repeat < 1:
        raise Fail("--repeat must be at least 1")
    with_tlc = not args.kmc_only
    if with_tlc and not (args.tlc_jar and args.reference_spec):
        raise Fail("TLC needs --tlc-jar and --reference-spec (or pass --kmc-only)")
    if with_tlc:
        if not Path(args.tlc_jar).is_file():
            raise Fail(f"--tlc-jar {args.tlc_jar}: no such file")
        if not Path(args.reference_spec).is_dir():
            raise Fail(f"--reference-spec {args.reference_spec}: no such directory")
        if args.tlc_run_script and not os.access(args.tlc_run_script, os.X_OK):
            raise Fail(f"--tlc-run-script {args.tlc_run_script}: not an executable file")
        if not args.tlc_run_script and not shutil.which("java"):
            raise Fail("java is not on PATH")
        args.tlc_jar = str(Path(args.tlc_jar).resolve())
        args.reference_spec = str(Path(args.reference_spec).resolve())
    cpus = [c for c in ([args.kmc_cpu] + ([args.tlc_cpu] if with_tlc else [])) if c != "none"]
    if cpus and not shutil.which("taskset"):
        raise Fail("taskset is not on PATH (or pass --kmc-cpu none --tlc-cpu none)")
    allowed = os.sched_getaffinity(0)
    for c in cpus:
        if not re.fullmatch(r"\d+", c) or int(c) not in allowed:
            raise Fail(f"core {c} is not one this process may run on ({sorted(allowed)})")
    if with_tlc and args.kmc_cpu == args.tlc_cpu and args.kmc_cpu != "none":
        raise Fail("kmc and TLC need different cores")
    return args, with_tlc


def main(argv=None) -> int:
    try:
        args, with_tlc = parse_args(argv)
    except Fail as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    print(f"load average before: {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} "
          f"({os.cpu_count()} cpus); kmc on core {args.kmc_cpu}"
          + (f", TLC (1 worker) on core {args.tlc_cpu}, started together" if with_tlc else ", alone"))
    print(HEAD)
    rows, void = [], []
    try:
        for name in args.names:
            for i in range(args.repeat):
                cfg = resolve_row(CONFIGS[name])
                row = run_config(args, name, cfg, with_tlc)
                row["run"] = i + 1
                rows.append(row)
                print(line(name, "kmc", row["kmc"]))
                if row["tlc"]:
                    print(line(name, "TLC", row["tlc"]) + f"   TLC wall / kmc wall {row['tlc_wall_over_kmc_wall']:.2f}")
                bad = mismatches(row, cfg["tlc"])
                row["counts_equal"] = not bad
                if bad:
                    void.append(f"{name} run {i + 1}: " + "; ".join(bad))
                    print(f"  COUNTS DIFFER: {'; '.join(bad)}", flush=True)
                sys.stdout.flush()
    except Fail as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    except Void as e:
        void.append(str(e))
        print(f"{PROG}: {e}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    load_after = os.getloadavg()
    if with_tlc and args.repeat > 1:
        for name in args.names:
            ratios = [r["tlc_wall_over_kmc_wall"] for r in rows if r["config"] == name and r.get("tlc")]
            if ratios:
                print(f"{name}: TLC wall / kmc wall over {len(ratios)} runs: median {statistics.median(ratios):.2f} "
                      f"(min {min(ratios):.2f}, max {max(ratios):.2f})")
    print(f"load average after: {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    if args.json:
        write_json(args.json, {"cpus": os.cpu_count(), "with_tlc": with_tlc, "loadavg_before": load_before,
                               "loadavg_after": load_after, "runs": rows, "void": void})
    if void:
        print(f"{PROG}: the comparison is void: " + " | ".join(void), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
