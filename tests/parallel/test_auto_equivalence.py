"""The auto engine gives the local engine's answers exactly -- distinct states
per level, generated (in total and per action), distinct per action, the
first violation of each property and the very same shortest counterexample
-- whatever level it hands over at (a tiny threshold: level 0, or a level in
the middle), also when the search stops in the middle of a level, with
--continue (violations found before and after the hand-over), a projection,
128-bit fingerprints, a depth bound, deadlocks and evaluation errors."""
from __future__ import annotations

import pytest

from checker.front.spec import load_spec
from checker.search.engine import CheckOptions, check
from checker.search.errors import EngineEvaluationError
from checker.search.parallel import check_auto
from checker.search.registry import build, select_properties
from spark_helpers import KRAFT_QUICK, KRAFT_V35_LOSSY, ROOT, assert_same

@pytest.fixture(autouse=True, params=[16, 2048], ids=["chunks16", "chunks2048"])
def chunk_size(request, monkeypatch):
    """Small chunks: the levels of these specs are split between the
    workers (each dedups against its own view of the seen set)."""
    from checker.search import parallel
    monkeypatch.setattr(parallel, "CHUNK_STATES", request.param)
    return request.param


RANDGRAPH = {"Nodes": 300, "Degree": 3, "Initial": 1, "Targets": [250, 251, 252]}


def _built(config):
    model, props = build(config["model"], config.get("variant"), config.get("constants") or {})
    return model, select_properties(props, config.get("invariants"))


def run_both(config, options, threshold, workers=2):
    local = check(*_built(config), options)
    auto = check_auto(*_built(config), options, threshold=threshold,
                            workers=workers)
    info = auto.engine   # where each level ran
    assert_same(local, auto)
    return local, auto, info


def handed_over(info, level=None):
    assert info["handover_level"] is not None, "the run never went parallel"
    L = info["handover_level"]
    assert info["levels"][:L + 1] == ["local"] * (L + 1)
    assert set(info["levels"][L + 1:]) <= {"pool"}
    if level is not None:
        assert L == level
    return L


@pytest.mark.parametrize("threshold", [1, 3])
@pytest.mark.parametrize("stop", [True, False])
def test_diehard(threshold, stop):
    local, auto, info = run_both({"model": "diehard", "constants": {}},
                                 CheckOptions(stop_on_violation=stop), threshold)
    handed_over(info)
    assert auto.violated == ["NotSolved"] and len(auto.violations[0].trace) == 7


def test_twophase_projection_and_128_bit_fingerprints():
    config = {"model": "twophase", "constants": {"RMCount": 4}}
    local, auto, info = run_both(config, CheckOptions(projection="no_msgs", fingerprint_bits=128, max_depth=9), 20)
    assert handed_over(info) > 0 and auto.fingerprint_bits == 128


@pytest.mark.parametrize("seed, initial, deadlock, stop", [
    (1, 1, True, True),     # a deadlock stops the search in the middle of a level
    (1, 1, True, False),    # deadlocks, then NotTarget
    (9, 3, True, False),    # three initial states
    (8, 1, True, False),    # exhausted, deadlocks found
])
@pytest.mark.parametrize("threshold", [1, 10])
def test_randgraph_deadlocks_and_violations(seed, initial, deadlock, stop, threshold):
    config = {"model": "randgraph", "invariants": ["NotTarget", "ReachesLast"],
              "constants": {**RANDGRAPH, "Seed": seed, "Initial": initial}}
    local, auto, info = run_both(config, CheckOptions(check_deadlock=deadlock, stop_on_violation=stop),
                                 threshold)
    if threshold == 1:
        handed_over(info, 0)


def test_deadlock_at_the_depth_bound():
    config = {"model": "randgraph", "invariants": ["NotTarget"],
              "constants": {**RANDGRAPH, "Seed": 1, "Initial": 1}}
    local, auto, info = run_both(config, CheckOptions(check_deadlock=True, max_depth=3,
                                                      stop_on_violation=False), 1)
    assert auto.states_left == local.states_left > 0
    handed_over(info, 0)


@pytest.mark.parametrize("error_node", [74, 51, 269])
def test_evaluation_errors_as_the_local_engine(error_node):
    config = {"model": "randgraph", "invariants": ["NotTarget"],
              "constants": {**RANDGRAPH, "Seed": 1, "ErrorNode": error_node}}
    try:
        local = check(*_built(config), CheckOptions())
    except EngineEvaluationError as e:
        with pytest.raises(EngineEvaluationError) as auto_error:
            check_auto(*_built(config), CheckOptions(), threshold=1, workers=2)
        assert str(auto_error.value) == str(e) and auto_error.value.exit_code == 3
        return
    auto = check_auto(*_built(config), CheckOptions(), threshold=1, workers=2)
    info = auto.engine   # where each level ran
    assert_same(local, auto)
    handed_over(info, 0)


def test_kafka_violation_stops_in_the_middle_of_a_level():
    config = {"model": "kraft", "variant": "v3_5", "constants": KRAFT_V35_LOSSY}
    local, auto, info = run_both(config, CheckOptions(), 5)
    handed_over(info)
    assert auto.violated == ["NoCommittedRecordLostGlobally"]
    assert [str(a) for a, _ in auto.violations[0].trace[1:]] == [
        "WriteRecordToLeader(1)", "FenceBroker(2)", "ReceiveMetadataUpdate(1)", "UncleanShutdown(1)"]


def test_kafka_violations_before_and_after_the_handover():
    """--continue: NoCommittedRecordLostGlobally (4 steps) is found by the
    local engine, the others (7, 8 steps) on the pool."""
    config = {"model": "kraft", "variant": "v3_5", "constants": KRAFT_V35_LOSSY}
    local, auto, info = run_both(config, CheckOptions(stop_on_violation=False, max_depth=8), 300)
    L = handed_over(info)
    assert 4 <= L < 7
    assert [(v.property, v.depth) for v in auto.violations] == [
        ("NoCommittedRecordLostGlobally", 4), ("LeaderCompletenessProperty", 7),
        ("LeaderCandidateCompletenessProperty", 7), ("ConsistentReadProperty", 8)]


@pytest.mark.parametrize("threshold", [1, 500])
def test_kafka_complete_state_space(threshold):
    """kraft kip966, 2 brokers (TLC: 14,304 distinct states, 39 levels)."""
    config = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
    local, auto, info = run_both(config, CheckOptions(), threshold)
    assert auto.distinct == 14304 and auto.exhausted and len(auto.per_level_distinct) == 39
    handed_over(info)


def test_kafka_sometimes_and_the_bound():
    config = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
    for depth in (3, 5, 6):
        local, auto, info = run_both(config, CheckOptions(max_depth=depth), 10)
        handed_over(info)
    assert any(v is not None for v in auto.sometimes.values())


@pytest.mark.parametrize("spec_name, threshold", [
    ("kraft-kip966-quick", 200),
    ("kraft-v3_5-last-replica-standing", 1000),   # LeaderCompletenessProperty after 7 steps
])
def test_specs(spec_name, threshold):
    spec = load_spec(ROOT / "specs" / f"{spec_name}.toml")
    options = CheckOptions(max_depth=spec.depth, check_deadlock=spec.check_deadlock,
                           fingerprint_bits=spec.fingerprint_bits, projection=spec.projection)
    local = check(*spec.build(), options)
    auto = check_auto(*spec.build(), options, threshold=threshold, workers=2)
    info = auto.engine   # where each level ran
    assert_same(local, auto)
    handed_over(info)
    if spec.expect.get("outcome") == "violation":
        assert auto.violations[0].property == spec.expect["violated"]
        assert auto.violations[0].depth == spec.expect["depth"] == 7
        assert [str(a) for a, _ in auto.violations[0].trace] == [str(a) for a, _ in local.violations[0].trace]
    else:
        assert auto.distinct == spec.expect["distinct"]


def test_three_workers():
    config = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
    local, auto, info = run_both(config, CheckOptions(max_depth=12), 20, workers=3)
    handed_over(info)
    assert info["workers"] == 3


def test_one_core_stays_local():
    """One worker (a one-core machine): the local engine, whatever the sizes."""
    config = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
    local, auto, info = run_both(config, CheckOptions(max_depth=8), 1, workers=1)
    assert info["handover_level"] is None and set(info["levels"]) == {"local"}


@pytest.mark.parametrize("idle, parallel", [(0.1, False), (1.0, True), (None, True)])
def test_busy_cores_keep_it_local(monkeypatch, idle, parallel):
    """Workers not given: one per core, once a second core was idle during
    the level before the hand-over (else the levels stay local, and the
    hand-over is tried again at the next level)."""
    from checker.search import parallel as par
    monkeypatch.setattr(par, "cores", lambda: 2)
    monkeypatch.setattr(par.IdleMeter, "idle_cores", lambda self: idle)
    config = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
    local = check(*_built(config), CheckOptions(max_depth=10))
    auto = check_auto(*_built(config), CheckOptions(max_depth=10), threshold=20)
    info = auto.engine   # where each level ran
    assert_same(local, auto)
    if parallel:
        assert handed_over(info) == 3 and info["workers"] == 2 and info["busy_levels"] == []
    else:
        assert info["handover_level"] is None and info["busy_levels"] == list(range(3, 10))


def test_idle_meter_reads_proc_stat():
    from checker.search.parallel import IdleMeter
    meter = IdleMeter(2)
    if meter.last is None:
        pytest.skip("no /proc/stat")
    import time
    end = time.monotonic() + 0.3
    while time.monotonic() < end:   # one core busy (this one)
        pass
    idle = meter.idle_cores()
    assert idle is None or 0.0 <= idle <= 2.0


def _quorum(row: str) -> dict:
    import json
    rows = {r["name"]: r for r in json.loads((ROOT / "tests" / "conformance" / "data" / "quorum-tlc.json").read_text())}
    return {"model": "kraft_quorum", "variant": rows[row]["variant"], "constants": rows[row]["constants"]}, rows[row]


@pytest.mark.parametrize("row", ["q-h3-v2-vpe1", "q-h3-v2-vpe2"])
def test_narrow_spaces(row):
    """Levels of a few to a few hundred states (the quorum's 1,284 and 14,740
    state spaces, TLC's counts): every level on the pool, cut into units of
    at most 64 states so that both workers get some."""
    config, tlc = _quorum(row)
    local, auto, info = run_both(config, CheckOptions(), 1)
    assert handed_over(info) == 0 and auto.distinct == tlc["distinct"]
    assert len(auto.per_level_distinct) == tlc["levels"]


def _level(sizes: list, holders: list):
    """A _SharedLevel of fragments of these sizes, each held by its holder (None: nobody)."""
    from checker.search import parallel
    frags = [("p", i, 1, n) for i, n in enumerate(sizes)]
    return parallel._SharedLevel(frags, sum(sizes), True,
                                 {f[:2]: h for f, h in zip(frags, holders) if h is not None})


@pytest.mark.parametrize("n, workers", [(100_000, 2), (18_000, 2), (3_000, 16), (1_000, 2), (5, 4), (0, 2)])
def test_units_keep_every_worker_busy(n, workers):
    """Units cover the level in order, never cross a local chunk, start at
    2,048 states on a wide level and end at MIN_UNIT (the others' wait)."""
    from checker.search import parallel
    chunk = parallel.CHUNK_STATES
    sizes = [min(chunk, n - s) for s in range(0, n, chunk)]
    units = parallel._units(_level(sizes, [None] * len(sizes)), workers)
    assert [u[0] for u in units] == [sum(u[1] for u in units[:i]) for i in range(len(units))]
    assert sum(u[1] for u in units) == n
    assert all(start // chunk == (start + size - 1) // chunk and 0 < size <= chunk for start, size, _ in units)
    assert all(sum(hi - lo for _, lo, hi in pieces) == size for _, size, pieces in units)
    if n >= 2 * parallel.GUIDE * workers * chunk:
        assert units[0][1] == chunk
    if n >= parallel.MIN_UNIT:
        assert units[-1][1] <= parallel.MIN_UNIT
    if n >= workers * parallel.MIN_UNIT:
        assert len(units) >= workers


def test_each_holders_units_end_small():
    """On a level whose states two workers hold, fragment by fragment in
    turn, every unit holds one worker's states, and each worker's units
    shrink to MIN_UNIT at the end of its share (what a worker that has run
    out takes from it, and then waits for), wherever that share ends in the
    level: its last three units hold 2 * MIN_UNIT states at most."""
    from checker.search import parallel
    sizes = [3_000, 1_500, 2_000, 700, 4_000, 300, 2_500, 2_200]
    holders = [0, 1, 0, 1, 0, 1, 0, 1]
    level = _level(sizes, holders)
    units = parallel._units(level, 2)
    assert [u[0] for u in units] == [sum(u[1] for u in units[:i]) for i in range(len(units))]
    assert sum(u[1] for u in units) == level.n
    held = {w: [u for u in units if {level.holders[p[0][:2]] for p in u[2]} == {w}] for w in (0, 1)}
    assert len(held[0]) + len(held[1]) == len(units)
    for w in (0, 1):
        assert held[w][-1][1] <= parallel.MIN_UNIT
        assert all(u[1] <= 2 * parallel.MIN_UNIT for u in held[w][-3:])
    assert max(u[1] for u in held[0]) == parallel.CHUNK_STATES   # (11,500 states: 2,048 first)
    # worker 1's share ends with the level; worker 0's before it, yet ends small too
    assert held[0][-1][0] + held[0][-1][1] == sum(sizes[:7])


def test_a_worker_writes_records_for_its_last_units_and_its_excess():
    """The states a worker holds as objects get records (what another
    worker needs to take them) from its last units holding a quarter of
    them, 2 * MIN_UNIT at least, or all of them when it holds fewer, and
    all it holds beyond three quarters of a fair share."""
    from checker.search import parallel
    units = [(0, 300), (900, 300), (1500, 200), (2000, 100), (2300, 100)]
    assert parallel._tail(units, 1000) == 1500          # 200 + 100 + 100 >= 1000 / 4
    assert parallel._tail([(0, 50), (10, 50), (70, 50)], 150) == 0           # 150 < 2 * 64: all
    assert parallel._tail([(0, 200), (200, 400), (600, 30), (630, 100)], 730) == 200   # 130 < 730 / 4
    assert parallel._tail([], 100) == 0
    # 1,000 held of a fair 500: 625 beyond three quarters of it
    assert parallel._tail(units, 500) == 900            # 100 + 100 + 200 + 300 >= 625


@pytest.mark.parametrize("grow_at", [0.7, 100.0])
def test_wide_space_and_a_growing_seen_set(monkeypatch, grow_at):
    """The kip966 reference to depth 9 (levels of up to 35,735 states): the
    shared seen set grows between units (0.7), or only when an insert finds
    it full (never grown before: the unit is expanded again on the grown
    table), with the local engine's answers either way."""
    from checker.search import parallel
    monkeypatch.setattr(parallel, "GROW_AT", grow_at)
    spec = load_spec(ROOT / "specs" / "kraft-kip966-reference.toml")
    options = CheckOptions(max_depth=9)
    local = check(*spec.build(), options)
    auto = check_auto(*spec.build(), options, threshold=2000, workers=2)
    assert_same(local, auto)
    handed_over(auto.engine)
    assert max(local.per_level_distinct) > 30_000


def test_the_same_answers_under_other_hash_seeds(tmp_path):
    """The violation, its trace and every count equal across hash seeds
    (each worker is a process of its own seed's: a set's order)."""
    import json
    import os
    import subprocess
    import sys
    outs = []
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "KMC_AUTO_THRESHOLD": "200", "KMC_AUTO_WORKERS": "2"}
        r = subprocess.run([sys.executable, "-m", "checker.front.cli", "check",
                            "specs/kraft-v3_5-last-replica-standing.toml", "--json", "-q", "--out",
                            str(tmp_path / seed)], capture_output=True, text=True, env=env, cwd=ROOT)
        assert r.returncode == 1, r.stderr
        s = json.loads(r.stdout)
        assert s["auto"]["handover_level"] is not None
        outs.append({k: s[k] for k in ("distinct", "generated", "per_level_distinct", "per_action_generated",
                                       "per_action_distinct", "violations")})
    assert outs[0] == outs[1]
