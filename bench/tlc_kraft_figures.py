#!/usr/bin/env python3
"""TLC's figures for kraft configurations that reassign the partition.

The kraft model must explore exactly the state space that TLC explores on
Vanlightly/kafka-tlaplus, folders kafka_data_replication/kraft/kip-966 and
kafka_data_replication/kraft/v3.5. The rows of kraft-tlc.json all have
ReassignmentLimit 0; the configurations here have ReassignmentLimit 1, so
PerformPartitionReassignment and the reassignment's completion in
ReceiveAlterPartitionRequest are measured. For each configuration of CONFIGS
the script runs TLC once and writes one JSON row to
tests/conformance/data/kraft-tlc-reassignment.json (indent 1, sorted by name,
written atomically; --merge keeps the other rows of the file):

    python3 bench/tlc_kraft_figures.py --tlc-jar ~/tlc/tla2tools.jar \\
        --reference-spec /work/.mirror/Vanlightly+kafka-tlaplus/repo            # every row
    python3 bench/tlc_kraft_figures.py ... --configs kip966-b3r2-ra1 --merge
    python3 bench/tlc_kraft_figures.py ... --probe kip966 '{"BrokerCount": 3}' --depth 9
    python3 bench/tlc_kraft_figures.py ... --verify tests/conformance/data/kraft-tlc.json

--verify measures every row of a file again (kraft-tlc.json,
kraft-tlc-violations.json or this script's own) and prints, per row,
whether TLC's figures are the same: counts, levels, per-level and
per-action counts, or the violated invariant and its counterexample.

Row fields: name, variant (kmc's: kip966 or v3_5), constants (kmc spelling,
every constant of the folder's .cfg but the model values), depth (null: the
complete state space; N: TLC with `CONSTRAINT TLCGet("level") <= N+1`),
outcome ("ok", or {"violation": INVARIANT, "steps": S, "actions": TLC's
labels of its counterexample's steps}), distinct, generated, levels,
max_steps, per_level_distinct, per_action_generated, successors_beyond_bound,
tlc_wall_s, load_avg_1m (before and after), tlc_version, tlc_jar_sha256,
command, spec (commit and folder), date (UTC, the run's end).

How TLC is run: the folder's .cfg copied to MC.cfg with the row's constants,
`VIEW view` commented out (every variable is part of a state), the .cfg's
INVARIANTs kept and `KmcLevel` added after them; MC.tla extends the folder's
module and TLC and defines `DepthBound == TLCGet("level") <= N+1` (a
CONSTRAINT, only for a depth bound) and `KmcLevel ==
PrintT(<<"KMCLEVEL", TLCGet("level")>>)`. Command: `taskset -c CPU java
-XX:+UseParallelGC -Xmx8g -cp JAR tlc2.TLC -workers 1 -deadlock -coverage
100000 -metadir states -config MC.cfg MC.tla` in a temporary folder.

The figures are read from TLC's output as bench/tlc_quorum_figures.py reads
them (its docstring gives the reasons): generated and distinct from the last
"states generated" line; levels from "The depth of the complete state graph
search"; per-action counts from the final coverage statistics (an action's
generated count, every sub-action of the same name summed; Init's own count
plus the actions' must equal generated); per_level_distinct from the KMCLEVEL
lines (TLC evaluates invariants once per new distinct state, at its level;
with a depth bound N, the successors of the states N steps deep are evaluated
too, not stored: those lines are successors_beyond_bound). A violated
invariant: TLC's first "Invariant X is violated" and its trace (one worker,
breadth first: a shortest counterexample); the counts are then null.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from bench.tlc_quorum_figures import (  # noqa: E402  (the same TLC plumbing)
    Fail, summary, tla_value, tlc_arguments, write_rows)
DEFAULT_OUT = ROOT / "tests" / "conformance" / "data" / "kraft-tlc-reassignment.json"

# kmc variant -> (folder of the reference, its main module, its constants in .cfg order)
FOLDERS = {
    "kip966": ("kafka_data_replication/kraft/kip-966", "kafka_replication_kip_966",
               ["BrokerCount", "InitReplicationFactor", "Values", "MinISR", "InitIsrSize",
                "NoDataLossShutdownLimit", "DataLossShutdownLimit", "FenceBrokerLimit",
                "LeaderShrinkIsrLimit", "ReassignmentLimit"]),
    "v3_5": ("kafka_data_replication/kraft/v3.5", "kafka_replication_v3_5",
             ["BrokerCount", "InitReplicationFactor", "Values", "MinISR", "InitIsrSize",
              "CleanShutdownLimit", "UncleanShutdownLimit", "FenceBrokerLimit",
              "LeaderShrinkIsrLimit", "ReassignmentLimit", "AvoidLastReplicaStanding"]),
}
_BROKER_ACTIONS = ["BrokerStart", "ReceiveBrokerRegRequest", "ReceiveBrokerRegResponse",
                   "UnfenceBroker", "FenceBroker", "ReceiveMetadataUpdate",
                   "SendAlterPartitionRequest", "ReceiveAlterPartitionRequest",
                   "ReceiveAlterPartitionResponse", "PerformPartitionReassignment",
                   "SendFetchRequest", "ReceiveFetchRequest", "ReceiveFetchResponse",
                   "WriteRecordToLeader"]
ACTIONS = {"kip966": _BROKER_ACTIONS + ["DataLossShutdown", "NoDataLossShutdown"],
           "v3_5": _BROKER_ACTIONS + ["UncleanShutdown", "CleanShutdown"]}
# the folder .cfg's values, but no fault and ReassignmentLimit 1
DEFAULTS = {
    "kip966": dict(BrokerCount=3, InitReplicationFactor=3, Values=["A"], MinISR=2, InitIsrSize=2,
                   NoDataLossShutdownLimit=0, DataLossShutdownLimit=0, FenceBrokerLimit=0,
                   LeaderShrinkIsrLimit=0, ReassignmentLimit=1),
    "v3_5": dict(BrokerCount=3, InitReplicationFactor=3, Values=["A"], MinISR=2, InitIsrSize=2,
                 CleanShutdownLimit=0, UncleanShutdownLimit=0, FenceBrokerLimit=0,
                 LeaderShrinkIsrLimit=0, ReassignmentLimit=1, AvoidLastReplicaStanding=True),
}

# name -> (variant, constants, depth bound or None); sizes probed with --probe first
CONFIGS: dict[str, tuple[str, dict, int | None]] = {}


def _cfg(name: str, variant: str, depth: int | None, **over) -> None:
    c = dict(DEFAULTS[variant])
    for k, v in over.items():
        if k not in c:
            raise SystemExit(f"unknown constant {k}")
        c[k] = v
    CONFIGS[name] = (variant, c, depth)


# Two brokers, both replicas, MinISR 1: a reassignment can only remove a replica (and completes
# at once, the leader re-elected when it is the one removed).
_cfg("kip966-b2-ra1", "kip966", None, BrokerCount=2, InitReplicationFactor=2, MinISR=1)
_cfg("v3_5-b2-ra1", "v3_5", None, BrokerCount=2, InitReplicationFactor=2, MinISR=1)
# Two brokers, one replica: a reassignment can add broker 2, which must join the ISR before the
# reassignment completes (ReceiveAlterPartitionRequest); with one ISR shrink besides.
_cfg("kip966-b2r1-ra1", "kip966", None, BrokerCount=2, InitReplicationFactor=1, MinISR=1,
     InitIsrSize=1)
_cfg("v3_5-b2r1-ra1", "v3_5", None, BrokerCount=2, InitReplicationFactor=1, MinISR=1, InitIsrSize=1)
_cfg("kip966-b2r1s1-ra1", "kip966", None, BrokerCount=2, InitReplicationFactor=1, MinISR=1,
     InitIsrSize=1, LeaderShrinkIsrLimit=1)
_cfg("v3_5-b2r1s1-ra1", "v3_5", None, BrokerCount=2, InitReplicationFactor=1, MinISR=1,
     InitIsrSize=1, LeaderShrinkIsrLimit=1)
# The reference's three brokers (RF 3, MinISR 2, ISR 2), to 10 steps; with one lossy shutdown,
# to 6 steps.
_cfg("kip966-b3-ra1-d10", "kip966", 10)
_cfg("kip966-b3d1-ra1-d6", "kip966", 6, DataLossShutdownLimit=1)
# Three brokers, RF 2 (broker 3 can be added), to 12 steps.
_cfg("v3_5-b3r2-ra1-d12", "v3_5", 12, InitReplicationFactor=2, MinISR=1)
# An adding replica fenced by the controller, to 14 steps; an unclean shutdown, to 11 steps.
_cfg("kip966-b2r1f1-ra1-d14", "kip966", 14, BrokerCount=2, InitReplicationFactor=1, MinISR=1,
     InitIsrSize=1, FenceBrokerLimit=1)
_cfg("v3_5-b2u1-ra1-d11", "v3_5", 11, BrokerCount=2, InitReplicationFactor=2, MinISR=1,
     UncleanShutdownLimit=1)
# A reassignment down to one replica, then that replica's lossy shutdown: a committed record
# is lost (NoCommittedRecordLostGlobally; the .cfg leaves it out when MinISR equals the lossy
# shutdowns, as here). v3.5's guard AvoidLastReplicaStanding is off in the second.
_cfg("kip966-b2d1-ra1", "kip966", None, BrokerCount=2, InitReplicationFactor=2, MinISR=1,
     DataLossShutdownLimit=1)
_cfg("v3_5-b2u1-ra1-lrs", "v3_5", None, BrokerCount=2, InitReplicationFactor=2, MinISR=1,
     UncleanShutdownLimit=1, AvoidLastReplicaStanding=False)
# Reassignment with each other fault of the reference: a shutdown that keeps the log, a fence
# on three brokers, v3.5's clean shutdown; two replicas added (RF 1 to 3); two values, MinISR 2.
_cfg("kip966-b2n1-ra1-d11", "kip966", 11, BrokerCount=2, InitReplicationFactor=2, MinISR=1,
     NoDataLossShutdownLimit=1)
_cfg("kip966-b3f1-ra1-d6", "kip966", 6, FenceBrokerLimit=1)
_cfg("v3_5-b2c1-ra1-d12", "v3_5", 12, BrokerCount=2, InitReplicationFactor=2, MinISR=1,
     CleanShutdownLimit=1)
_cfg("kip966-b3r1-ra1-d16", "kip966", 16, InitReplicationFactor=1, MinISR=1, InitIsrSize=1)
_cfg("kip966-b3r2v2-ra1-d12", "kip966", 12, InitReplicationFactor=2, Values=["A", "B"])
# Three brokers, RF 2, ISR {1}, a fence and an ISR shrink; RF 3, ISR 3 and an unclean shutdown;
# RF 1 growing to 2 with a shutdown that keeps the log.
_cfg("kip966-b3r2i1f1s1-ra1-d6", "kip966", 6, InitReplicationFactor=2, MinISR=1, InitIsrSize=1,
     FenceBrokerLimit=1, LeaderShrinkIsrLimit=1)
_cfg("v3_5-b3i3u1-ra1-d5", "v3_5", 5, InitIsrSize=3, UncleanShutdownLimit=1)
_cfg("kip966-b2r1n1-ra1-d12", "kip966", 12, BrokerCount=2, InitReplicationFactor=1, MinISR=1,
     InitIsrSize=1, NoDataLossShutdownLimit=1)
# Three brokers, RF 2, MinISR 1, the whole state space (245,031 states; a `slow` test).
_cfg("kip966-b3r2-ra1", "kip966", None, InitReplicationFactor=2, MinISR=1)
_cfg("v3_5-b3r2-ra1", "v3_5", None, InitReplicationFactor=2, MinISR=1)

def extract_spec(ref: Path, variant: str, dest: Path) -> str:
    folder = FOLDERS[variant][0]
    head = subprocess.run(["git", "--git-dir", str(ref), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode != 0:
        raise Fail(f"{ref} is not a git directory")
    tar = subprocess.run(["git", "--git-dir", str(ref), "archive", "HEAD", folder], capture_output=True)
    if tar.returncode != 0:
        raise Fail(f"no folder {folder} in {ref}")
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as t:
        for m in t.getmembers():
            if m.isfile() and m.name.count("/") == folder.count("/") + 1:
                (dest / Path(m.name).name).write_bytes(t.extractfile(m).read())
    return f"Vanlightly/kafka-tlaplus@{head.stdout.strip()}:{folder}"


def write_model(spec: Path, variant: str, constants: dict, depth: int | None) -> None:
    _, main, names = FOLDERS[variant]
    cfg = (spec / f"{main}.cfg").read_text()
    for k in names:
        pat = re.compile(rf"^(\s*){k} = .*$", re.M)
        if not pat.search(cfg):
            raise Fail(f"constant {k} not in {main}.cfg")
        cfg = pat.sub(lambda m: f"{m.group(1)}{k} = {tla_value(constants[k])}", cfg, count=1)
    cfg = re.sub(r"^VIEW ", r"\\* VIEW ", cfg, flags=re.M)
    if not re.search(r"^INVARIANT\s*$", cfg, re.M):
        raise Fail(f"{main}.cfg changed: expected an INVARIANT list")
    cfg = cfg.rstrip("\n") + "\nKmcLevel\n"  # the .cfg ends with its INVARIANT list
    if depth is not None:
        cfg += "CONSTRAINT DepthBound\n"
    (spec / "MC.cfg").write_text(cfg)
    bound = (depth if depth is not None else 100000) + 1
    (spec / "MC.tla").write_text(
        f"---- MODULE MC ----\nEXTENDS {main}, TLC\n"
        f"DepthBound == TLCGet(\"level\") <= {bound}\n"
        f"KmcLevel == PrintT(<<\"KMCLEVEL\", TLCGet(\"level\")>>)\n====\n")


LEVEL_RE = re.compile(r'^<<"KMCLEVEL", (\d+)>>$')
COVER_RE = re.compile(r"^<(\w+) line \d+, col \d+ to line \d+, col \d+ of module (\w+)"
                      r"(?: \(\d+ \d+ \d+ \d+\))?>: (\d+):(\d+)$")


def run_tlc(jar: Path, ref: Path, variant: str, constants: dict, depth: int | None, cpu: str | None,
            logdir: Path | None, label: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="kmc-tlck-") as work:
        spec = Path(work) / "spec"
        spec.mkdir()
        origin = extract_spec(ref, variant, spec)
        write_model(spec, variant, constants, depth)
        java = ["java", "-XX:+UseParallelGC", "-Xmx8g", "-cp", str(jar), "tlc2.TLC", "-workers", "1",
                "-deadlock", "-coverage", "100000", "-metadir", "states",
                "-config", "MC.cfg", "MC.tla"]
        cmd = (["taskset", "-c", cpu] if cpu else []) + java
        levels: dict[int, int] = {}
        log_lines: list[str] = []
        load0 = os.getloadavg()[0]
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, cwd=spec, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, bufsize=1 << 20)
        assert p.stdout is not None
        for line in p.stdout:
            m = LEVEL_RE.match(line.rstrip("\n"))
            if m:
                lv = int(m.group(1))
                levels[lv] = levels.get(lv, 0) + 1
            else:
                log_lines.append(line)
        rc = p.wait()
        wall = time.monotonic() - t0
        log = "".join(log_lines)
        if logdir is not None:
            logdir.mkdir(parents=True, exist_ok=True)
            (logdir / f"{label}.log").write_text(log)
            for f in ("MC.cfg", "MC.tla"):
                (logdir / f"{label}.{f}").write_text((spec / f).read_text())
        res = parse(log, variant, levels, rc, depth)
        res.update(tlc_wall_s=round(wall, 1), command=" ".join(cmd), spec=origin,
                   load_avg_1m=[round(load0, 2), round(os.getloadavg()[0], 2)],
                   tlc_jar_sha256=hashlib.sha256(jar.read_bytes()).hexdigest(),
                   date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
        return res


NULL_COUNTS = dict(distinct=None, generated=None, levels=None, max_steps=None, per_level_distinct=None,
                   per_action_generated=None, successors_beyond_bound=None)


def parse(log: str, variant: str, levels: dict[int, int], rc: int, depth: int | None) -> dict:
    ver = re.search(r"^TLC2 Version .*$", log, re.M)
    out: dict = {"tlc_version": ver.group(0).strip() if ver else None}
    viol = re.search(r"^Error: Invariant (\w+) is violated", log, re.M)
    if viol:
        steps = re.findall(r"^State (\d+): <(\w+)(\([^)]*\))? line", log, re.M)
        actions = [name + (arg or "") for n, name, arg in steps if n != "1"]
        out["outcome"] = {"violation": viol.group(1), "steps": len(actions), "actions": actions}
        out.update(NULL_COUNTS)
        return out
    if "Error:" in log or "No error has been found" not in log:
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise Fail(f"TLC failed (exit {rc}):\n{tail}")
    m = re.findall(r"^(\d+) states generated, (\d+) distinct states found, 0 states left on queue",
                   log, re.M)
    d = re.search(r"^The depth of the complete state graph search is (\d+)", log, re.M)
    if not m or not d:
        raise Fail("TLC's summary lines are missing")
    generated, distinct, nlev = int(m[-1][0]), int(m[-1][1]), int(d.group(1))
    per_action = per_action_counts(log, variant, generated)
    top = nlev if depth is None else depth + 1
    beyond = {lv: n for lv, n in levels.items() if lv > top}
    if set(beyond) - ({depth + 2} if depth is not None else set()):
        raise Fail(f"KMCLEVEL lines beyond the bound: {beyond}")
    within = {lv: n for lv, n in levels.items() if lv <= top}
    per_level = [within.get(lv, 0) for lv in range(1, nlev + 1)]
    if sum(per_level) != distinct or set(within) != set(range(1, nlev + 1)):
        raise Fail(f"KMCLEVEL lines ({sum(per_level)}) disagree with TLC ({distinct} distinct, "
                   f"{nlev} levels)")
    out.update(outcome="ok", distinct=distinct, generated=generated, levels=nlev, max_steps=nlev - 1,
               per_level_distinct=per_level, per_action_generated=per_action,
               successors_beyond_bound=None if depth is None else beyond.get(depth + 2, 0))
    return out


def per_action_counts(log: str, variant: str, generated: int) -> dict:
    main = FOLDERS[variant][1]
    blocks = log.split("The coverage statistics")
    if len(blocks) < 2:
        raise Fail("no coverage statistics in TLC's output")
    per_action = {a: 0 for a in ACTIONS[variant]}
    init = 0
    seen = set()
    for line in blocks[-1].splitlines():
        c = COVER_RE.match(line.strip())
        if not c or c.group(2) != main:
            continue
        if c.group(1) == "Init":
            init += int(c.group(4))
            continue
        if c.group(1) not in per_action:
            raise Fail(f"unexpected action {c.group(1)} in the coverage statistics")
        per_action[c.group(1)] += int(c.group(4))
        seen.add(c.group(1))
    if set(per_action) - seen:
        raise Fail(f"actions missing from the coverage statistics: {sorted(set(per_action) - seen)}")
    if init + sum(per_action.values()) != generated:
        raise Fail(f"coverage: Init {init} + actions {sum(per_action.values())} != {generated}")
    return per_action


ROW_KEYS = ("outcome", "distinct", "generated", "levels", "max_steps", "per_level_distinct",
            "per_action_generated", "successors_beyond_bound", "tlc_wall_s", "load_avg_1m", "date",
            "tlc_version", "tlc_jar_sha256", "command", "spec")


def make_row(name: str, variant: str, constants: dict, depth: int | None, res: dict) -> dict:
    row = {"name": name, "variant": variant, "constants": constants, "depth": depth}
    row.update({k: res[k] for k in ROW_KEYS})
    return row


def verify(jar: Path, ref: Path, path: Path, cpu: str | None, logdir: Path | None) -> int:
    """Run TLC again on every row of `path`; 1 if any row's figures differ."""
    differ = 0
    for r in json.loads(path.read_text()):
        res = run_tlc(jar, ref, r["variant"], r["constants"], r.get("depth"), cpu, logdir, r["name"])
        if "violated" in r:  # kraft-tlc-violations.json
            want = {"violation": r["violated"], "steps": r["steps"], "actions": r["actions"]}
            got = res["outcome"]
        else:
            keys = ("distinct", "generated", "levels", "per_level_distinct", "per_action_generated")
            want, got = {k: r[k] for k in keys}, {k: res[k] for k in keys}
        same = want == got
        differ += not same
        print(f"{r['name']}: {'same' if same else 'DIFFERENT'} ({summary(r['name'], r.get('depth'), res)};"
              f" {res['tlc_version']}; {res['date']}; load {res['load_avg_1m']})", flush=True)
        if not same:
            print(f"  file: {json.dumps(want)}\n  TLC:  {json.dumps(got)}", flush=True)
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tlc_arguments(ap, DEFAULT_OUT)
    ap.add_argument("--logdir", type=Path, help="keep TLC's logs (without KMCLEVEL lines) here")
    ap.add_argument("--probe", nargs=2, metavar=("VARIANT", "JSON"),
                    help="constants overriding DEFAULTS[VARIANT]; prints the figures, writes no file")
    ap.add_argument("--depth", type=int, help="depth bound for --probe")
    ap.add_argument("--verify", type=Path, metavar="FILE",
                    help="measure every row of FILE again and say which differ")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    cpu = a.cpu or None
    try:
        if a.list:
            for n, (v, c, d) in CONFIGS.items():
                print(n, v, d, json.dumps(c))
            return 0
        if not a.tlc_jar.exists():
            raise Fail(f"no TLC jar at {a.tlc_jar}")
        if a.verify:
            return verify(a.tlc_jar, a.reference_spec, a.verify, cpu, a.logdir)
        if a.probe:
            variant, over = a.probe[0], json.loads(a.probe[1])
            if variant not in FOLDERS:
                raise Fail(f"unknown variant {variant}")
            c = {**DEFAULTS[variant], **over}
            res = run_tlc(a.tlc_jar, a.reference_spec, variant, c, a.depth, cpu, a.logdir, "probe")
            print(summary("probe", a.depth, res))
            print(json.dumps({k: res[k] for k in ("per_level_distinct", "per_action_generated")}))
            return 0
        names = a.configs or list(CONFIGS)
        unknown = [n for n in names if n not in CONFIGS]
        if unknown:
            raise Fail(f"unknown configuration(s) {', '.join(unknown)}")
        rows: dict[str, dict] = {}
        if a.merge and a.out.exists():
            rows = {r["name"]: r for r in json.loads(a.out.read_text())}
        for n in names:
            variant, c, depth = CONFIGS[n]
            res = run_tlc(a.tlc_jar, a.reference_spec, variant, c, depth, cpu, a.logdir, n)
            print(summary(n, depth, res), flush=True)
            rows[n] = make_row(n, variant, c, depth, res)
            write_rows(a.out, list(rows.values()))
        return 0
    except Fail as e:
        print(f"{Path(sys.argv[0]).name}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
