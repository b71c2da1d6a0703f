"""The spark engine gives the local engine's answers exactly: distinct states
per level, generated (in total and per action), distinct per action, the
first violation of each property and the very same shortest counterexample,
also when the search stops at a violation or deadlock in the middle of a
level, with a projection, with 128-bit fingerprints, with a depth bound."""
from __future__ import annotations

import pytest

from checker.front.spec import load_spec
from checker.search.engine import CheckOptions
from checker.search.errors import EngineEvaluationError
from checker.search.spark import check_spark
from spark_helpers import (KRAFT_QUICK, KRAFT_V35_LOSSY, LOCAL_MASTER, ROOT, SMALL_LEVEL, assert_same,
                           local_result)

RANDGRAPH = {"Nodes": 300, "Degree": 3, "Initial": 1, "Targets": [250, 251, 252]}


def run_both(config, options, tmp_path, **kwargs):
    local = local_result(config, options)
    kwargs.setdefault("small_level", SMALL_LEVEL)
    spark = check_spark(config, options, master=LOCAL_MASTER, run_dir=tmp_path / "run", **kwargs)
    assert_same(local, spark)
    return local, spark


@pytest.mark.parametrize("spec_name", ["toy-twophase", "toy-diehard"])
def test_toy_specs(spark, tmp_path, spec_name):
    spec = load_spec(ROOT / "specs" / f"{spec_name}.toml")
    options = CheckOptions(max_depth=spec.depth, check_deadlock=spec.check_deadlock,
                           fingerprint_bits=spec.fingerprint_bits, projection=spec.projection)
    model, props = spec.build()
    from checker.search.engine import check
    local = check(model, props, options)
    result = check_spark(spec, options, master=LOCAL_MASTER, run_dir=tmp_path / "run")
    assert_same(local, result)
    if spec_name == "toy-twophase":
        assert result.distinct == 288 and result.outcome == "pass"
    else:  # stopped in the middle of level 6, as the local engine does
        assert result.violated == ["NotSolved"] and len(result.violations[0].trace) == 7
        assert result.per_level_distinct == [1, 2, 3, 2, 2, 2, 2]


def test_diehard_continue(spark, tmp_path):
    config = {"model": "diehard", "constants": {}}
    local, result = run_both(config, CheckOptions(stop_on_violation=False), tmp_path)
    assert result.exhausted and result.violated == ["NotSolved"]


def test_twophase_projection_and_128_bit_fingerprints(spark, tmp_path):
    config = {"model": "twophase", "constants": {"RMCount": 4}}
    local, result = run_both(config, CheckOptions(projection="no_msgs", fingerprint_bits=128, max_depth=9),
                             tmp_path)
    assert result.projection == ["rmState", "tmState", "tmPrepared"] and result.fingerprint_bits == 128


@pytest.mark.parametrize("seed, initial, deadlock, stop", [
    (1, 1, True, True),     # a deadlock stops the search in the middle of level 5
    (1, 1, True, False),    # deadlock at 4, then NotTarget at 12
    (9, 3, True, False),    # three initial states
    (8, 1, True, False),    # exhausted (189 states), deadlocks found
])
def test_randgraph_deadlocks_and_violations(spark, tmp_path, seed, initial, deadlock, stop):
    config = {"model": "randgraph", "invariants": ["NotTarget", "ReachesLast"],
              "constants": {**RANDGRAPH, "Seed": seed, "Initial": initial}}
    run_both(config, CheckOptions(check_deadlock=deadlock, stop_on_violation=stop), tmp_path)


def test_deadlock_at_the_depth_bound(spark, tmp_path):
    config = {"model": "randgraph", "invariants": ["NotTarget"],
              "constants": {**RANDGRAPH, "Seed": 1, "Initial": 1}}
    local, result = run_both(config, CheckOptions(check_deadlock=True, max_depth=3,
                                                  stop_on_violation=False), tmp_path)
    assert result.states_left == local.states_left > 0


@pytest.mark.parametrize("error_node", [
    74,    # reached after 2 steps: expanding it raises
    51,    # level 11, before the violating state's parent in BFS order: the error
    269,   # level 11, after it: the violation after 12 steps comes first
])
def test_evaluation_errors_as_the_local_engine(spark, tmp_path, error_node):
    config = {"model": "randgraph", "invariants": ["NotTarget"],
              "constants": {**RANDGRAPH, "Seed": 1, "ErrorNode": error_node}}
    try:
        local = local_result(config, CheckOptions())
    except EngineEvaluationError as e:
        with pytest.raises(EngineEvaluationError) as spark_error:
            check_spark(config, CheckOptions(), master=LOCAL_MASTER, run_dir=tmp_path / "run")
        assert str(spark_error.value) == str(e) and spark_error.value.exit_code == 3
        assert error_node in (74, 51)
        return
    result = check_spark(config, CheckOptions(), master=LOCAL_MASTER, run_dir=tmp_path / "run")
    assert_same(local, result)
    assert result.violated == ["NotTarget"] and error_node == 269


def test_kafka_violation_stops_in_the_middle_of_a_level(spark, tmp_path):
    config = {"model": "kraft", "variant": "v3_5", "constants": KRAFT_V35_LOSSY}
    local, result = run_both(config, CheckOptions(), tmp_path)
    # TLC: NoCommittedRecordLostGlobally after 4 steps (v3_5-b2f1u1-lrs)
    assert result.violated == ["NoCommittedRecordLostGlobally"]
    assert len(result.violations[0].trace) == 5
    assert [str(a) for a, _ in result.violations[0].trace[1:]] == [
        "WriteRecordToLeader(1)", "FenceBroker(2)", "ReceiveMetadataUpdate(1)", "UncleanShutdown(1)"]


def test_kafka_every_violation_with_continue(spark, tmp_path):
    config = {"model": "kraft", "variant": "v3_5", "constants": KRAFT_V35_LOSSY}
    local, result = run_both(config, CheckOptions(stop_on_violation=False, max_depth=8), tmp_path)
    assert [(v.property, v.depth) for v in result.violations] == [
        ("NoCommittedRecordLostGlobally", 4), ("LeaderCompletenessProperty", 7),
        ("LeaderCandidateCompletenessProperty", 7), ("ConsistentReadProperty", 8)]


def test_kafka_complete_state_space(spark, tmp_path):
    """kraft kip966, 2 brokers (TLC: 14,304 distinct states, 39 levels)."""
    config = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
    local, result = run_both(config, CheckOptions(), tmp_path, partitions=3)
    assert result.distinct == 14304 and result.exhausted
    assert len(result.per_level_distinct) == 39
    ranged, guided = assert_range_tasks(tmp_path / "run", config, result.per_level_distinct)
    assert ranged > 10 and guided > 10   # (rows of 2,048 states: 3 tasks at most here)


def assert_range_tasks(run_dir, config, per_level, bound=None):
    """The expand tasks of each level written by merge tasks are ranges of
    BFS keys: together they hold each of its states once, in key order (as
    three even ranges, and as the engine splits it: guided, big ranges then
    small ones)."""
    from checker.search import codec
    from checker.search.registry import build
    from checker.search.spark import levels, tasks
    cfg = tasks.TaskConfig(model=config["model"], variant=config["variant"], constants_json="{}",
                           properties=(), projection=None)   # bits: 64
    decoder = codec.StateDecoder(build(config["model"], config["variant"], config["constants"])[0])
    ranged = guided = 0
    expanded = [lv for lv in levels.committed_levels(run_dir)[1:] if bound is None or lv < bound]
    for lv, split in ((lv, split) for lv in expanded for split in ("even", "guided")):
        here = levels.level_dir(run_dir, lv)
        inputs = levels.task_inputs(here, 3) if split == "even" else levels.expand_inputs(here, 3)
        assert all(len(s) == 5 for inp in inputs for s in inp)   # slices, not whole files
        got = [[(e[0], e[1]) for e in tasks.on_files(lambda i, rows: tasks._read_frontier(cfg, rows, decoder),
                                                       i, [inp])] for i, inp in enumerate(inputs)]
        level = sorted((k, fp) for f in levels.part_files(here) for r in levels.read_part(f)
                       for k, fp in zip(*(codec.picked(col, codec.unpack_picks(r["picks"]))
                                          for col in (codec.unpack(r["keys"]), codec.unpack_fps(r["fps"])))))
        assert [x for task in got for x in task] == level
        assert len(level) == (per_level[lv] if lv < len(per_level) else 0)   # the last level: empty
        split_here = sum(1 for task in got if task) > 1
        ranged += split == "even" and split_here
        guided += split == "guided" and split_here
    return ranged, guided   # levels split into more than one task, evenly and as the engine does


@pytest.mark.slow
def test_kafka_reference_with_small_ranges(spark, tmp_path):
    """The KIP-966 reference configuration to depth 10 (314,578 states; level 9
    has 80,537, about 40 rows of 2,048, so the engine's guided split really
    has small ranges beside its two big ones): the local engine's answers,
    and the tasks of every level hold each state once, in key order."""
    from checker.search.spark import levels
    spec = load_spec(ROOT / "specs" / "kraft-kip966-reference.toml", depth=10)
    config = {"model": spec.model, "variant": spec.variant, "constants": spec.constants}
    local, result = run_both(config, CheckOptions(max_depth=10), tmp_path, partitions=2)
    assert result.distinct == 314578
    run = tmp_path / "run"
    tasks = {lv: len(levels.expand_inputs(levels.level_dir(run, lv), 2)) for lv in range(1, 10)}
    assert tasks[9] > 2 and max(tasks.values()) <= 6, tasks
    assert min(assert_range_tasks(run, config, result.per_level_distinct, bound=10)) >= 4  # of 9 levels


def test_reruns_write_the_same_levels(spark, tmp_path):
    """The parent of each state is chosen deterministically: two runs write
    the same parent pointers."""
    from checker.search.spark import levels
    config = {"model": "twophase", "constants": {"RMCount": 3}}
    runs = []
    for name in ("a", "b"):
        check_spark(config, CheckOptions(), master=LOCAL_MASTER, run_dir=tmp_path / name)
        files = levels.part_files(levels.level_dir(tmp_path / name, 6))
        runs.append(sorted(tuple(r[c] for c in ("part", "seq", "fps", "keys", "parents", "actions", "states", "picks"))
                           for f in files for r in levels.read_part(f) if r["kind"] == "states"))
    assert runs[0] == runs[1] and runs[0]


@pytest.mark.parametrize("stop", [True, False])
def test_kafka_violation_at_the_depth_bound(spark, tmp_path, stop):
    """The bound level is checked while it is generated (it is never
    expanded): the same first violation, counts and trace."""
    config = {"model": "kraft", "variant": "v3_5", "constants": KRAFT_V35_LOSSY}
    local, result = run_both(config, CheckOptions(stop_on_violation=stop, max_depth=4), tmp_path)
    assert result.violated == ["NoCommittedRecordLostGlobally"] and result.depth == 4


def test_sometimes_witnessed_at_the_depth_bound(spark, tmp_path):
    config = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}
    for depth in (3, 4, 5, 6):
        local, result = run_both(config, CheckOptions(max_depth=depth), tmp_path / str(depth))
    assert any(v is not None for v in result.sometimes.values())


@pytest.mark.parametrize("beyond", [0, 1])
def test_property_error_at_the_depth_bound(spark, tmp_path, beyond):
    """The bound level's states are not written (they are checked while
    generated); a property that raises there makes the driver run that job
    again with the states and check them, reporting the local engine's error.
    (beyond=1: the error is met checking a rebuilt level, before the bound.)"""
    from collections import deque
    from checker.search import registry
    model, _ = registry.build("randgraph", "standard", {**RANDGRAPH, "Seed": 1})
    depth = {0: 0}
    todo = deque([0])
    while todo:
        n = todo.popleft()
        for m in model.edges[n]:
            if m not in depth:
                depth[m] = depth[n] + 1
                todo.append(m)
    node = max(depth, key=lambda n: (depth[n], n))
    assert depth[node] >= 4
    config = {"model": "randgraph", "invariants": ["NotTarget"],
              "constants": {**RANDGRAPH, "Seed": 1, "Targets": [], "CheckErrorNode": node}}
    options = CheckOptions(max_depth=depth[node] + beyond)
    with pytest.raises(EngineEvaluationError) as local_error:
        local_result(config, options)
    with pytest.raises(EngineEvaluationError) as spark_error:
        check_spark(config, options, master=LOCAL_MASTER, run_dir=tmp_path / "run", small_level=SMALL_LEVEL)
    assert str(spark_error.value) == str(local_error.value)
    assert f"on node {node}" in str(spark_error.value)
