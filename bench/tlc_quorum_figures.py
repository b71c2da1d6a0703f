#!/usr/bin/env python3
"""TLC's reference figures for the kraft_quorum model (kip996 variant).

The kraft_quorum model must explore exactly the state space that TLC explores
on Vanlightly/kafka-tlaplus, folder kraft/kip_996. For each configuration of
CONFIGS this script runs TLC once and writes one JSON row: name, variant,
constants (kmc spelling, all 15), depth (null = complete search, else the step
bound N), outcome ("ok" or {"violation": NAME, "steps": S}), distinct,
generated, levels, max_steps, per_level_distinct, per_action_generated,
successors_beyond_bound, tlc_wall_s, load_avg_1m (the machine's 1-minute load
average before and after the run: wall times are only comparable on a quiet
machine), tlc_version (TLC's first line; a jar built without a Build-TimeStamp
in its manifest prints its launch time there, so tlc_jar_sha256 identifies
the jar), command and spec (commit and folder). Rows are written to tests/conformance/data/quorum-tlc.json
(pretty-printed, indent 1, sorted by name, written atomically); with --merge
the rows of the given configurations replace (or join) those already in the
file.

    python3 bench/tlc_quorum_figures.py --tlc-jar ~/tlc/tla2tools.jar \\
        --reference-spec /work/.mirror/Vanlightly+kafka-tlaplus/repo            # every row
    python3 bench/tlc_quorum_figures.py ... --configs q-h1-e4 q-h2-restart --merge
    python3 bench/tlc_quorum_figures.py ... --probe '{"Hosts": ["h1","h2"], ...}' \\
        --depth 8 --timeout 120                                                # size probe, no file
    python3 bench/tlc_quorum_figures.py ... --verify-levels q-h3-v2-vpe1       # per-level check

--reference-spec is the git directory of a Vanlightly/kafka-tlaplus snapshot
(bare, as the search tool's fetch gives it; HEAD is used) or a folder holding
the kip_996 files. Neither TLC nor the specification is part of this project.

How TLC is run (one run per row): the folder's kraft_kip_996.cfg is copied to
MC.cfg with the row's constants substituted (model-value sets as {h1, h2}; the
.cfg declares h1..h5 and v1..v3 as model values, a row may use fewer), VIEW (if
any) commented out, SPECIFICATION LivenessSpec and the six INVARIANTs kept (no
PROPERTY, so the fairness does not change the reachable states), and the
invariant KmcLevel added. MC.tla extends kraft_kip_996 and TLC and defines

    DepthBound == TLCGet("level") <= N + 1     \\* CONSTRAINT, only for a depth bound N
    KmcLevel   == PrintT(<<"KMCLEVEL", TLCGet("level")>>)

(as the project's shared/tools/tlc/run.sh does for --depth N). The command is
`taskset -c 0 java -XX:+UseParallelGC -Xmx8g -cp JAR tlc2.TLC -workers 1
-deadlock -coverage 100000 -metadir states -config MC.cfg MC.tla`, run in a
temporary folder (-coverage 100000: the statistics are printed once, at the
end). With one worker TLC explores breadth-first, so a state's TLC level is its
shortest distance in steps plus one (initial states: level 1).

Figures: distinct, generated from TLC's final "N states generated, M distinct
states found" line; levels from "The depth of the complete state graph search
is D" (D levels, max_steps = D - 1); per_action_generated from the final
coverage statistics (`-coverage`): for each action of Next the line
`<Action line L, col C to line L2, col C2 of module kraft_kip_996>: d:g` gives
distinct:generated, and the row keeps g for each of the 22 actions of Next
(zeros included; an action that TLC splits into several sub-actions with the
same name is summed; Init's line is left out). With a depth bound N, TLC
still computes the successors of states at depth N (they fail the constraint),
and "generated" and the per-action counts include them: the figures are what
TLC prints.

per_level_distinct[k] = number of distinct states whose shortest distance from
an initial state is k steps. TLC does not print these; KmcLevel prints one line
`<<"KMCLEVEL", L>>` per evaluation, and TLC evaluates the invariants exactly
once per new distinct state (initial states included) with TLCGet("level") =
the level of that state, so per_level_distinct[L - 1] = number of lines with L.
The script checks that the sum equals TLC's distinct total and that the list
has `levels` entries. One exception (TLC's Worker.addElement): a successor that
fails the state constraint is not stored, but the invariants are still
evaluated on it, each time it is generated. So with a depth bound N there are
also KMCLEVEL lines for level N + 2, one per successor generated from a state
at depth N; they are not distinct states and are left out of
per_level_distinct (their number is kept as successors_beyond_bound). It also
means that TLC, with a depth bound N, would report an invariant violated by a
state at N + 1 steps. The per-action figures are checked too: Init's generated count plus the
sum over the actions equals TLC's generated total.

--verify-levels NAME checks the per-level method: it runs TLC with the depth
bound k for k = 0, 1, ..., K (K = the row's max_steps, or its depth bound) and
requires distinct(k) = per_level_distinct[0] + ... + per_level_distinct[k] for
every k (a depth-k BFS finds exactly the states at distance <= k), and the
KMCLEVEL counts of the depth-k run to be the first k + 1 entries of the row's.
Run on q-h3-v2-vpe1 (complete, 24 levels, k = 0..23), q-h3-v2-vpe2
(complete, 37 levels, k = 0..36) and q-h3-live-d16 (bounded, k = 0..16): all
equal. The figures do not depend on KmcLevel: q-h2-disrupt gives 372,332
distinct, 907,745 generated, 49 levels, as run.sh (without KmcLevel and
-coverage) does.

If TLC reports an invariant violation, the row's outcome is
{"violation": NAME, "steps": trace length - 1} and the counts are null.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "tests" / "conformance" / "data" / "quorum-tlc.json"
FOLDER = "kraft/kip_996"
MAIN = "kraft_kip_996"
VARIANT = "kip996"

CONSTANT_ORDER = ["MaxEpoch", "MaxRestarts", "MaxPermCrashes", "MaxValuesPerEpoch",
                  "MaxAddReconfigs", "MaxRemoveReconfigs", "MaxConnectivityChanges",
                  "MaxDisruptiveElectionTriggers", "MaxSpawnedServers", "InitClusterSize",
                  "MinClusterSize", "MaxClusterSize", "Value", "Hosts", "TestLiveness"]

# The actions of Next, in the order of the reference's Next.
ACTIONS = ["StartNewServer", "ChangeNetworkConnectivity", "RestartWithState", "CrashLoseState",
           "AcceptAddVoterRequest", "AcceptRemoveVoterRequest", "VoterFetchTimeout",
           "VoterElectionTimeout", "ResignedElectionTimeout", "ConcludePreVote", "BecomeLeader",
           "HandleClientRequest", "CheckQuorumResign", "HandleVoteRequest", "HandleVoteResponse",
           "AcceptBeginQuorumRequest", "SendFetchRequest", "HandleFetchResponse",
           "ResendBeginQuorumEpochRequest", "RejectFetchRequest", "DivergingFetchRequest",
           "AcceptFetchRequest"]


def hosts(n: int) -> list[str]:
    return [f"h{i}" for i in range(1, n + 1)]


def consts(servers: int, **over) -> dict:
    """The 15 constants: `servers` hosts and servers, no fault, one value, MaxEpoch 2."""
    c = {"MaxEpoch": 2, "MaxRestarts": 0, "MaxPermCrashes": 0, "MaxValuesPerEpoch": 1,
         "MaxAddReconfigs": 0, "MaxRemoveReconfigs": 0, "MaxConnectivityChanges": 0,
         "MaxDisruptiveElectionTriggers": 0, "MaxSpawnedServers": servers,
         "InitClusterSize": servers, "MinClusterSize": servers, "MaxClusterSize": servers,
         "Value": ["v1"], "Hosts": hosts(servers), "TestLiveness": False}
    for k, v in over.items():
        if k not in c:
            raise SystemExit(f"unknown constant {k}")
        c[k] = v
    return {k: c[k] for k in CONSTANT_ORDER}


# name -> (constants, depth bound or None). Sizes were probed with --probe first.
CONFIGS: dict[str, tuple[dict, int | None]] = {}


def _cfg(name: str, depth: int | None, servers: int, **over) -> None:
    CONFIGS[name] = (consts(servers, **over), depth)


# One server: elections against itself (restarts, disruptive timeouts), MaxEpoch 4, 3 values.
_cfg("q-h1-e4", None, 1, MaxEpoch=4, MaxRestarts=2, MaxDisruptiveElectionTriggers=2,
     Value=["v1", "v2", "v3"], MaxValuesPerEpoch=2)
# One server growing to two (StartNewServer on host h1 or h2 + AddVoter), to 12 steps.
_cfg("q-h1-add-d12", 12, 1, MaxEpoch=3, MaxRestarts=1, MaxDisruptiveElectionTriggers=1,
     Value=["v1", "v2"], MaxValuesPerEpoch=2, MaxAddReconfigs=1, MaxSpawnedServers=2,
     MaxClusterSize=2, Hosts=hosts(2))
# Two servers, one restart from stable storage (no client values).
_cfg("q-h2-restart", None, 2, MaxRestarts=1, MaxValuesPerEpoch=0)
# Two servers, one permanent crash (all state lost), one disruptive election timeout.
_cfg("q-h2-crash", None, 2, MaxPermCrashes=1, MaxDisruptiveElectionTriggers=1, MaxValuesPerEpoch=0)
# Two servers, two network connectivity changes (partition and heal).
_cfg("q-h2-net", None, 2, MaxConnectivityChanges=2, MaxValuesPerEpoch=0)
# Two servers, one disruptive election timeout, one value (372,332 states).
_cfg("q-h2-disrupt", None, 2, MaxDisruptiveElectionTriggers=1)
# Two servers, RemoveVoter down to one, then a crash that loses state: Durability is violated.
_cfg("q-h2-remove-crash", None, 2, MaxRemoveReconfigs=1, MinClusterSize=1, MaxPermCrashes=1,
     MaxEpoch=3)
# AddVoter: two servers, a third is started (host h1, h2 or h3) and added.
_cfg("q-h3-add", None, 2, MaxAddReconfigs=1, MaxSpawnedServers=3, MaxClusterSize=3, Hosts=hosts(3))
# RemoveVoter: three servers down to two, to 26 steps.
_cfg("q-h3-remove-d26", 26, 3, MaxRemoveReconfigs=1, MinClusterSize=2)
# Two values, two per epoch; two values, one per epoch, MaxEpoch 3.
_cfg("q-h3-v2-vpe2", None, 3, Value=["v1", "v2"], MaxValuesPerEpoch=2)
_cfg("q-h3-v2-vpe1", None, 3, Value=["v1", "v2"], MaxValuesPerEpoch=1)
# MaxEpoch 3: two servers, two values (one per epoch), a disruptive timeout, to 15 steps.
_cfg("q-h2-v2-e3-d15", 15, 2, Value=["v1", "v2"], MaxValuesPerEpoch=1, MaxEpoch=3,
     MaxDisruptiveElectionTriggers=1)
# Liveness mode (infinite space), three servers, a partition and a crash, to 16 steps.
_cfg("q-h3-live-d16", 16, 3, TestLiveness=True, MaxConnectivityChanges=1, MaxPermCrashes=1)
# Three servers, MaxEpoch 2, one disruptive election timeout, to 11 steps.
_cfg("q-h3-e2-d11", 11, 3, MaxDisruptiveElectionTriggers=1)
# Three servers, a permanent crash, to 21 steps; a connectivity change, to 17 steps.
_cfg("q-h3-crash-d21", 21, 3, MaxPermCrashes=1)
_cfg("q-h3-net-d17", 17, 3, MaxConnectivityChanges=1)
# The folder's own kraft_kip_996.cfg (5 hosts, 3 values, every fault, TestLiveness TRUE), to 1
# step: ~2,300 successors per state (connectivity: subsets of the 10 pairs of 5 servers), so
# depth 2 would generate ~36 million states.
_cfg("q-ref-cfg-d1", 1, 3, MaxEpoch=3, MaxRestarts=1, MaxPermCrashes=1, MaxAddReconfigs=2,
     MaxRemoveReconfigs=2, MaxConnectivityChanges=2, MaxDisruptiveElectionTriggers=2,
     MaxSpawnedServers=5, MaxClusterSize=5, Value=["v1", "v2", "v3"], Hosts=hosts(5),
     TestLiveness=True)


class Fail(Exception):
    """Bad input or a failed run: one line, exit 2."""


def tla_value(v) -> str:
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, list):
        return "{" + ", ".join(v) + "}"
    raise Fail(f"cannot write {v!r} in TLA+")


def extract_spec(ref: Path, dest: Path) -> str:
    """Copies the kip_996 folder into dest; returns a description of its origin."""
    if (ref / f"{MAIN}.tla").exists():
        for f in ref.iterdir():
            if f.is_file():
                shutil.copy(f, dest / f.name)
        return str(ref)
    head = subprocess.run(["git", "--git-dir", str(ref), "rev-parse", "HEAD"], capture_output=True,
                          text=True)
    if head.returncode != 0:
        raise Fail(f"{ref} is neither a git directory nor a folder with {MAIN}.tla")
    tar = subprocess.run(["git", "--git-dir", str(ref), "archive", "HEAD", FOLDER],
                         capture_output=True)
    if tar.returncode != 0:
        raise Fail(f"no folder {FOLDER} in {ref}")
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as t:
        for m in t.getmembers():
            if m.isfile():
                (dest / Path(m.name).name).write_bytes(t.extractfile(m).read())
    return f"Vanlightly/kafka-tlaplus@{head.stdout.strip()}:{FOLDER}"


def write_model(spec: Path, constants: dict, depth: int | None) -> None:
    cfg = (spec / f"{MAIN}.cfg").read_text()
    for k in CONSTANT_ORDER:
        pat = re.compile(rf"^(\s*){k} = .*$", re.M)
        if not pat.search(cfg):
            raise Fail(f"constant {k} not in {MAIN}.cfg")
        cfg = pat.sub(lambda m: f"{m.group(1)}{k} = {tla_value(constants[k])}", cfg, count=1)
    cfg = re.sub(r"^VIEW ", r"\\* VIEW ", cfg, flags=re.M)
    if not re.search(r"^SPECIFICATION LivenessSpec\s*$", cfg, re.M) or "PROPERTY" in cfg:
        raise Fail(f"{MAIN}.cfg changed: expected SPECIFICATION LivenessSpec and no PROPERTY")
    cfg = cfg.rstrip("\n") + "\nKmcLevel\n"  # the .cfg ends with its INVARIANT list
    if not re.search(r"^INVARIANT\s*\n(\w+\s*\n)+KmcLevel\n\Z", cfg, re.M):
        raise Fail(f"{MAIN}.cfg changed: expected it to end with its INVARIANT list")
    if depth is not None:
        cfg += "CONSTRAINT DepthBound\n"
    (spec / "MC.cfg").write_text(cfg)
    bound = (depth if depth is not None else 100000) + 1
    (spec / "MC.tla").write_text(
        f"---- MODULE MC ----\nEXTENDS {MAIN}, TLC\n"
        f"DepthBound == TLCGet(\"level\") <= {bound}\n"
        f"KmcLevel == PrintT(<<\"KMCLEVEL\", TLCGet(\"level\")>>)\n====\n")


LEVEL_RE = re.compile(r'^<<"KMCLEVEL", (\d+)>>$')
COVER_RE = re.compile(r"^<(\w+) line \d+, col \d+ to line \d+, col \d+ of module (\w+)(?: \(\d+ \d+ \d+ \d+\))?>: "
                      r"(\d+):(\d+)$")


def run_tlc(jar: Path, ref: Path, constants: dict, depth: int | None, cpu: str | None,
            timeout: float | None, logdir: Path | None, label: str) -> dict:
    work = Path(tempfile.mkdtemp(prefix="kmc-tlcq-"))
    try:
        spec = work / "spec"
        spec.mkdir()
        origin = extract_spec(ref, spec)
        write_model(spec, constants, depth)
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
        killed = False
        assert p.stdout is not None
        for line in p.stdout:
            m = LEVEL_RE.match(line.rstrip("\n"))
            if m:
                lv = int(m.group(1))
                levels[lv] = levels.get(lv, 0) + 1
            else:
                log_lines.append(line)
            if timeout is not None and time.monotonic() - t0 > timeout:
                p.kill()
                killed = True
                break
        rc = p.wait()
        wall = time.monotonic() - t0
        log = "".join(log_lines)
        if logdir is not None:
            logdir.mkdir(parents=True, exist_ok=True)
            (logdir / f"{label}.log").write_text(log)
            shutil.copy(spec / "MC.cfg", logdir / f"{label}.MC.cfg")
            shutil.copy(spec / "MC.tla", logdir / f"{label}.MC.tla")
        if killed:
            return {"timeout": True, "wall": wall, "levels_so_far": dict(sorted(levels.items())),
                    "distinct_so_far": sum(levels.values())}
        res = parse(log, levels, rc, wall, cmd, origin, depth)
        res["load_avg_1m"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
        res["tlc_jar_sha256"] = hashlib.sha256(jar.read_bytes()).hexdigest()
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


def parse(log: str, levels: dict[int, int], rc: int, wall: float, cmd: list[str], origin: str,
          depth: int | None) -> dict:
    ver = re.search(r"^TLC2 Version .*$", log, re.M)
    out: dict = {"tlc_version": ver.group(0).strip() if ver else None,
                 "command": " ".join(cmd), "spec": origin, "tlc_wall_s": round(wall, 1)}
    viol = re.search(r"^Error: Invariant (\w+) is violated", log, re.M)
    if viol:
        states = re.findall(r"^State (\d+):", log, re.M)
        out["outcome"] = {"violation": viol.group(1), "steps": max(map(int, states)) - 1}
        out.update(distinct=None, generated=None, levels=None, max_steps=None,
                   per_level_distinct=None, per_action_generated=None, successors_beyond_bound=None)
        return out
    if "Error:" in log or "No error has been found" not in log:
        tail = "\n".join(log.strip().splitlines()[-15:])
        raise Fail(f"TLC failed (exit {rc}):\n{tail}")
    m = re.findall(r"^(\d+) states generated, (\d+) distinct states found, 0 states left on queue", log, re.M)
    d = re.search(r"^The depth of the complete state graph search is (\d+)", log, re.M)
    if not m or not d:
        raise Fail("TLC's summary lines are missing")
    generated, distinct = int(m[-1][0]), int(m[-1][1])
    nlev = int(d.group(1))
    # the last coverage block (TLC prints it at the end)
    blocks = log.split("The coverage statistics")
    if len(blocks) < 2:
        raise Fail("no coverage statistics in TLC's output")
    per_action = {a: 0 for a in ACTIONS}
    init_generated = 0
    seen = set()
    for line in blocks[-1].splitlines():
        c = COVER_RE.match(line.strip())
        if not c or c.group(2) != MAIN:
            continue
        name = c.group(1)
        if name == "Init":
            init_generated += int(c.group(4))
            continue
        if name not in per_action:
            raise Fail(f"unexpected action {name} in the coverage statistics")
        per_action[name] += int(c.group(4))
        seen.add(name)
    missing = [a for a in ACTIONS if a not in seen]
    if missing:
        raise Fail(f"actions missing from the coverage statistics: {missing}")
    if init_generated + sum(per_action.values()) != generated:
        raise Fail(f"coverage: Init {init_generated} + actions {sum(per_action.values())} != "
                   f"generated {generated}")
    # With a depth bound N, TLC also evaluates the invariants on every successor of a state at
    # depth N (level N + 2: outside the constraint, never stored, evaluated each time generated).
    top = nlev if depth is None else depth + 1
    beyond = {lv: n for lv, n in levels.items() if lv > top}
    if set(beyond) - ({depth + 2} if depth is not None else set()):
        raise Fail(f"KMCLEVEL lines beyond level {depth + 2}: {beyond}")
    within = {lv: n for lv, n in levels.items() if lv <= top}
    per_level = [within.get(lv, 0) for lv in range(1, max(within) + 1)] if within else []
    if sum(per_level) != distinct or len(per_level) != nlev or set(within) != set(range(1, nlev + 1)):
        raise Fail(f"KMCLEVEL lines ({sum(per_level)} over {len(per_level)} levels) disagree with "
                   f"TLC ({distinct} distinct, {nlev} levels)")
    out.update(outcome="ok", distinct=distinct, generated=generated, levels=nlev, max_steps=nlev - 1,
               per_level_distinct=per_level, per_action_generated=per_action,
               successors_beyond_bound=None if depth is None else beyond.get(depth + 2, 0))
    return out


def make_row(name: str, constants: dict, depth: int | None, res: dict) -> dict:
    row = {"name": name, "variant": VARIANT, "constants": constants, "depth": depth}
    for k in ("outcome", "distinct", "generated", "levels", "max_steps", "per_level_distinct",
              "per_action_generated", "successors_beyond_bound", "tlc_wall_s", "load_avg_1m", "tlc_version",
              "tlc_jar_sha256", "command", "spec"):
        row[k] = res[k]
    return row


def write_rows(path: Path, rows: list[dict]) -> None:
    rows = sorted(rows, key=lambda r: r["name"])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def summary(name: str, depth, res: dict) -> str:
    if res.get("timeout"):
        return (f"{name}: TIMEOUT after {res['wall']:.0f} s, {res['distinct_so_far']} distinct so far, "
                f"levels {res['levels_so_far']}")
    return (f"{name}: depth={depth} outcome={res['outcome']} distinct={res['distinct']} "
            f"generated={res['generated']} levels={res['levels']} wall={res['tlc_wall_s']} s")


def tlc_arguments(ap: argparse.ArgumentParser, default_out: Path) -> None:
    """The options every TLC figures script has: the jar, the reference, the
    configurations, where the rows go, the core TLC is pinned to."""
    ap.add_argument("--tlc-jar", type=Path, default=Path.home() / "tlc" / "tla2tools.jar")
    ap.add_argument("--reference-spec", type=Path,
                    default=Path("/work/.mirror/Vanlightly+kafka-tlaplus/repo"))
    ap.add_argument("--configs", nargs="*", help="names of CONFIGS (default: all)")
    ap.add_argument("--out", type=Path, default=default_out)
    ap.add_argument("--merge", action="store_true", help="keep the other rows already in --out")
    ap.add_argument("--cpu", default="0", help="taskset core list ('' for none)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tlc_arguments(ap, DEFAULT_OUT)
    ap.add_argument("--timeout", type=float, help="kill TLC after this many seconds (no row)")
    ap.add_argument("--logdir", type=Path, help="keep TLC's logs (without KMCLEVEL lines) here")
    ap.add_argument("--probe", help="JSON object of constants overriding the 2-server defaults "
                    "(with 'servers': N); prints the figures, writes no file")
    ap.add_argument("--depth", type=int, help="depth bound for --probe")
    ap.add_argument("--verify-levels", metavar="NAME",
                    help="check per-level counts against depth-bounded runs k = 0..K")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    cpu = a.cpu or None
    try:
        if a.list:
            for n, (c, d) in CONFIGS.items():
                print(n, d, json.dumps(c))
            return 0
        if not a.tlc_jar.exists():
            raise Fail(f"no TLC jar at {a.tlc_jar}")
        if a.probe:
            over = json.loads(a.probe)
            c = consts(over.pop("servers", 2), **over)
            res = run_tlc(a.tlc_jar, a.reference_spec, c, a.depth, cpu, a.timeout, a.logdir, "probe")
            print(summary("probe", a.depth, res))
            if not res.get("timeout") and res["per_level_distinct"]:
                print("per level:", res["per_level_distinct"])
                print("per action:", res["per_action_generated"])
            return 0
        if a.verify_levels:
            c, depth = CONFIGS[a.verify_levels]
            full = run_tlc(a.tlc_jar, a.reference_spec, c, depth, cpu, a.timeout, a.logdir, a.verify_levels)
            if full.get("timeout") or full["outcome"] != "ok":
                raise Fail(f"{a.verify_levels}: {summary(a.verify_levels, depth, full)}")
            pl = full["per_level_distinct"]
            print(summary(a.verify_levels, depth, full))
            bad = 0
            for k in range(len(pl)):
                r = run_tlc(a.tlc_jar, a.reference_spec, c, k, cpu, a.timeout, None, f"k{k}")
                expect = sum(pl[:k + 1])
                ok = r["distinct"] == expect and r["per_level_distinct"] == pl[:k + 1]
                bad += not ok
                print(f"  depth {k}: TLC distinct {r['distinct']}, sum of per-level[0..{k}] {expect}"
                      f" {'ok' if ok else 'DIFFERENT'}")
            print("per-level method verified" if not bad else f"{bad} depths differ")
            return 1 if bad else 0
        names = a.configs or list(CONFIGS)
        for n in names:
            if n not in CONFIGS:
                raise Fail(f"unknown configuration {n}")
        rows: dict[str, dict] = {}
        if a.merge and a.out.exists():
            rows = {r["name"]: r for r in json.loads(a.out.read_text())}
        for n in names:
            c, depth = CONFIGS[n]
            res = run_tlc(a.tlc_jar, a.reference_spec, c, depth, cpu, a.timeout, a.logdir, n)
            print(summary(n, depth, res), flush=True)
            if res.get("timeout"):
                continue
            rows[n] = make_row(n, c, depth, res)
            write_rows(a.out, list(rows.values()))
        return 0
    except Fail as e:
        print(f"{Path(sys.argv[0]).name}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
