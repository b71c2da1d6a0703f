"""The local BFS engine (checker/search/engine.py) against explicit graphs (networkx)."""
from __future__ import annotations

from collections import Counter

import networkx as nx
import pytest

from checker.search.encoding import encode_state, state_fingerprint
from checker.search.engine import (DEADLOCK, CheckOptions, ExpandContext, LevelLog, check,
                            collision_probability, expand_chunk)
from checker.search.errors import EngineEvaluationError, SpecError
from checker.search.registry import build


def randgraph(**constants):
    return build("randgraph", None, constants)


def explicit_graph(model) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(model.nodes))
    for n, targets in model.edges.items():
        g.add_edges_from((n, m) for m in targets)
    return g


def bfs_levels(model) -> dict[int, int]:
    """node -> shortest distance from any initial node (networkx)."""
    g = explicit_graph(model)
    g.add_node("root")
    g.add_edges_from(("root", i) for i in range(model.initial))
    return {n: d - 1 for n, d in nx.single_source_shortest_path_length(g, "root").items() if n != "root"}


def assert_real_transitions(model, trace):
    assert trace[0][0] is None
    assert trace[0][1] in list(model.init_states())
    for (_, prev), (action, state) in zip(trace, trace[1:]):
        assert (action, state) in list(model.successors(prev))


SEEDS = [1, 2, 3, 7, 11, 19, 23, 42]


@pytest.mark.parametrize("seed", SEEDS)
def test_levels_distinct_and_generated_match_networkx(seed):
    model, props = randgraph(Nodes=60, Degree=3, Seed=seed, Initial=2)
    r = check(model, props, CheckOptions(stop_on_violation=False))
    levels = bfs_levels(model)
    expected = Counter(levels.values())
    assert r.per_level_distinct == [expected[d] for d in range(max(expected) + 1)]
    assert r.distinct == len(levels)
    g = explicit_graph(model)
    assert r.generated == model.initial + sum(g.out_degree(n) for n in levels)
    assert r.per_action_generated == {"Move": r.generated - model.initial}
    assert r.per_action_distinct == {"Move": r.distinct - model.initial}
    assert r.depth == max(expected)
    assert r.exhausted and r.states_left == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_counterexample_is_a_shortest_path(seed):
    model, _ = randgraph(Nodes=80, Degree=3, Seed=seed, Targets=[70, 75, 79])
    levels = bfs_levels(model)
    props = [p for p in build("randgraph", None, {"Nodes": 80, "Degree": 3, "Seed": seed,
                                                   "Targets": [70, 75, 79]})[1] if p.name == "NotTarget"]
    r = check(model, props, CheckOptions())
    reachable_targets = [levels[t] for t in (70, 75, 79) if t in levels]
    if not reachable_targets:
        assert r.outcome == "pass"
        return
    assert r.outcome == "violation"
    (v,) = r.violations
    assert v.property == "NotTarget" and v.depth == min(reachable_targets)
    assert len(v.trace) == v.depth + 1 and v.trace[-1][1].node in (70, 75, 79)
    assert_real_transitions(model, v.trace)


def test_some_seed_has_a_reachable_target():
    # keeps the previous test from passing vacuously
    hits = 0
    for seed in SEEDS:
        model, _ = randgraph(Nodes=80, Degree=3, Seed=seed, Targets=[70, 75, 79])
        hits += any(t in bfs_levels(model) for t in (70, 75, 79))
    assert hits >= 4


def test_continue_reports_every_violated_property_with_its_shortest_trace():
    model, props = randgraph(Nodes=80, Degree=3, Seed=5, Targets=[60])
    levels = bfs_levels(model)
    r = check(model, props, CheckOptions(stop_on_violation=False))
    assert set(r.violated) == {"NotTarget", "NotOdd"}
    by_name = {v.property: v for v in r.violations}
    assert by_name["NotTarget"].depth == levels[60]
    assert by_name["NotOdd"].depth == min(d for n, d in levels.items() if n % 2 and n >= 2)
    for v in r.violations:
        assert_real_transitions(model, v.trace)
    assert r.exhausted
    first = check(model, props, CheckOptions())
    assert first.violated == ["NotOdd"] and first.violations[0].depth == by_name["NotOdd"].depth


def test_depth_bound_keeps_the_first_levels():
    model, props = build("twophase", None, {})
    full = check(model, props, CheckOptions())
    for k in (0, 1, 4, 9):
        r = check(model, props, CheckOptions(max_depth=k))
        assert r.per_level_distinct == full.per_level_distinct[:k + 1]
        assert r.distinct == sum(full.per_level_distinct[:k + 1])
        assert r.depth == k and not r.exhausted and r.states_left == full.per_level_distinct[k]
    r = check(model, props, CheckOptions(max_depth=50))
    assert r.distinct == full.distinct and r.exhausted


def test_deadlock_is_off_by_default_and_found_at_the_shortest_depth():
    model, props = randgraph(Nodes=40, Degree=2, Seed=3)
    g = explicit_graph(model)
    levels = bfs_levels(model)
    dead = [levels[n] for n in levels if g.out_degree(n) == 0]
    assert dead, "graph seed 3 must reach a node without out-edges"
    props = [p for p in props if p.name == "NotTarget"]
    assert check(model, props, CheckOptions()).outcome == "pass"
    r = check(model, props, CheckOptions(check_deadlock=True))
    assert r.violated == [DEADLOCK] and r.violations[0].depth == min(dead)
    assert_real_transitions(model, r.violations[0].trace)
    assert list(model.successors(r.violations[0].trace[-1][1])) == []
    # a deadlock on the last level of a bounded search is still found
    r = check(model, props, CheckOptions(check_deadlock=True, max_depth=min(dead)))
    assert r.violated == [DEADLOCK] and r.violations[0].depth == min(dead)
    if min(dead) > 0:
        r = check(model, props, CheckOptions(check_deadlock=True, max_depth=min(dead) - 1))
        assert r.outcome == "pass"


def test_evaluation_error_carries_action_and_state():
    model, props = randgraph(Nodes=60, Degree=3, Seed=1)
    levels = bfs_levels(model)
    node = max(levels, key=lambda n: (levels[n], n))
    model, props = randgraph(Nodes=60, Degree=3, Seed=1, ErrorNode=node)
    with pytest.raises(EngineEvaluationError) as e:
        check(model, props, CheckOptions(stop_on_violation=False))
    assert e.value.exit_code == 3
    assert e.value.state.node == node
    assert f"node {node}" in str(e.value)


def test_sometimes_reports_first_witness_depth_or_none():
    model, props = build("twophase", None, {})
    r = check(model, props, CheckOptions())
    assert r.sometimes == {"AllCommitted": len(r.per_level_distinct) - 1}
    r = check(model, props, CheckOptions(max_depth=3))
    assert r.sometimes == {"AllCommitted": None}
    assert r.outcome == "pass"


def test_statistics_add_up_and_name_every_action():
    model, props = build("twophase", None, {})
    r = check(model, props, CheckOptions(max_depth=1))
    assert set(r.per_action_generated) == set(model.action_names)
    assert r.per_action_generated["TMCommit"] == 0 and r.per_action_distinct["RMRcvCommitMsg"] == 0
    full = check(model, props, CheckOptions())
    assert sum(full.per_action_generated.values()) + 1 == full.generated
    assert sum(full.per_action_distinct.values()) + 1 == full.distinct
    assert full.collision_probability == collision_probability(full.distinct, full.generated, 64)
    assert full.collision_probability == pytest.approx(288 * (full.generated - 288) / 2**64)
    assert full.peak_memory_kb > 0 and full.wall_time > 0


def test_fingerprint_128_gives_the_same_figures():
    model, props = build("twophase", None, {"RMCount": 4})
    a = check(model, props, CheckOptions())
    b = check(model, props, CheckOptions(fingerprint_bits=128))
    assert (a.distinct, a.generated, a.per_level_distinct) == (b.distinct, b.generated, b.per_level_distinct)
    model, props = build("diehard", None, {})
    v = check(model, props, CheckOptions(fingerprint_bits=128)).violations[0]
    assert v.depth == 6 and v.trace[-1][1].big == 4


def test_level_log_finds_128_bit_fingerprints():
    log = LevelLog(128)
    lo = 12345
    fps = [lo, lo | (1 << 64), lo | (2 << 64)]
    log.add(fps, [7 << 64, 8, 9], [0, 1, 2])
    assert [log.find(f) for f in fps] == [0, 1, 2]
    assert log.parent(0) == 7 << 64
    with pytest.raises(ValueError):
        log.find(lo | (3 << 64))


def test_projections():
    model, props = build("twophase", None, {})
    full = check(model, props, CheckOptions())
    same = check(model, props, CheckOptions(projection=list(model.variables)))
    assert same.distinct == full.distinct
    r = check(model, props, CheckOptions(projection="no_msgs"))
    assert r.projection == ["rmState", "tmState", "tmPrepared"]
    assert r.distinct < full.distinct
    with pytest.raises(SpecError):
        check(model, props, CheckOptions(projection="nope"))
    with pytest.raises(SpecError):
        check(model, props, CheckOptions(projection=["rmState", "nope"]))


def test_expand_chunk_is_a_function_of_its_inputs():
    model, props = build("twophase", None, {"RMCount": 3})
    ctx = ExpandContext.create(model, props)
    frontier = [ctx.entry(s) for s in model.init_states()]
    for _ in range(3):  # a few levels in
        frontier = [(e[0], e[1], e[2]) for e in expand_chunk(ctx, frontier, set()).new]
    a = expand_chunk(ctx, frontier, set())
    b = expand_chunk(ctx, frontier, set())
    assert [e[2:] for e in a.new] == [e[2:] for e in b.new]
    assert a.action_names == b.action_names
    # chunk by chunk with a shared seen set finds the same new states
    seen: set = set()
    halves = [expand_chunk(ctx, frontier[:5], seen), expand_chunk(ctx, frontier[5:], seen)]
    assert sorted(e[2] for h in halves for e in h.new) == sorted(e[2] for e in a.new)
    # the per-variable encodings kept beside each state are the state's
    for state, parts, fp, parent_fp, action in a.new:
        assert list(parts) == list(encode_state(state))
        assert fp == state_fingerprint(state)


def test_bad_options():
    model, props = build("diehard", None, {})
    with pytest.raises(SpecError):
        check(model, props, CheckOptions(fingerprint_bits=32))
    with pytest.raises(SpecError):
        check(model, props, CheckOptions(max_depth=-1))


def test_progress_is_quiet_on_short_runs_and_reports_when_due():
    model, props = build("twophase", None, {"RMCount": 4})
    calls = []
    check(model, props, CheckOptions(progress=calls.append))
    assert calls == []
    check(model, props, CheckOptions(progress=calls.append, progress_interval=0.0))
    assert calls and {"level", "generated", "distinct", "frontier", "generated_per_s"} <= set(calls[0])


def test_frontier_entries_survive_a_trip_through_bytes():
    # what the Spark engine does with a frontier: ship bytes, rebuild entries
    for name, constants in (("twophase", {"RMCount": 3}), ("diehard", {})):
        model, props = build(name, None, constants)
        ctx = ExpandContext.create(model, props)
        frontier = [ctx.entry(s) for s in model.init_states()]
        for _ in range(4):
            frontier = [(e[0], e[1], e[2]) for e in expand_chunk(ctx, frontier, set()).new]
            for e in frontier:
                back = ctx.entry_from_bytes(ctx.entry_bytes(e))
                assert back[0] == e[0] and type(back[0]) is type(e[0])
                assert back[1] == e[1] and back[2] == e[2]
