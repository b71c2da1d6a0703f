"""Toy models with known figures: TwoPhase (288 / 8,832 states, as stateright's
2PC example asserts) and DieHard (6-step solution)."""
from __future__ import annotations

import networkx as nx
import pytest

from checker.search.encoding import decode, encode_state, parts_to_bytes
from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from model.base import ModelConfigError
from model.examples.twophase import RMState


@pytest.mark.parametrize("constants, distinct", [
    ({}, 288),
    ({"RMCount": 3}, 288),
    ({"RM": ["alice", "bob", "carol"]}, 288),
    ({"RMCount": 5}, 8832),
])
def test_twophase_distinct_states(constants, distinct):
    model, props = build("twophase", None, constants)
    r = check(model, props, CheckOptions())
    assert r.outcome == "pass" and r.violations == []
    assert r.distinct == distinct
    assert r.properties == ["TPTypeOK", "TCConsistent"]
    assert r.sometimes["AllCommitted"] is not None


def test_twophase_seeded_bug_is_found():
    # A TM that commits without waiting for every Prepared breaks TCConsistent.
    model, props = build("twophase", None, {})
    original = model.successors

    def hasty_successors(s):
        yield from original(s)
        if s.tmState == 0 and s.tmPrepared and s.tmPrepared != model.all_rms:
            from model.base import Action
            from model.examples.twophase import COMMIT, TMState
            yield Action("TMCommit"), s._replace(tmState=TMState.committed, msgs=s.msgs | {COMMIT})

    model.successors = hasty_successors
    r = check(model, props, CheckOptions())
    assert r.violated == ["TCConsistent"]
    last = r.violations[0].trace[-1][1]
    assert RMState.aborted in last.rmState and RMState.committed in last.rmState


def test_twophase_rejects_bad_constants():
    with pytest.raises(ModelConfigError):
        build("twophase", None, {"RM": ["a", "a"]})
    with pytest.raises(ModelConfigError):
        build("twophase", None, {"RM": []})


def test_twophase_from_plain_rebuilds_the_state():
    model, _ = build("twophase", None, {})
    r = check(model, [], CheckOptions(max_depth=4))
    state = next(iter(model.init_states()))
    for _, s in model.successors(state):
        for _, s2 in model.successors(s):
            back = model.from_plain(decode(parts_to_bytes(encode_state(s2))))
            assert back == s2 and type(back) is type(s2)
            assert all(type(x) is RMState for x in back.rmState)
    assert r.distinct > 0


def diehard_graph(model) -> nx.DiGraph:
    g = nx.DiGraph()
    todo = list(model.init_states())
    g.add_nodes_from(todo)
    while todo:
        s = todo.pop()
        for _, t in model.successors(s):
            if t not in g:
                todo.append(t)
            g.add_edge(s, t)
    return g


def test_diehard_shortest_solution_has_six_steps():
    model, props = build("diehard", None, {})
    r = check(model, props, CheckOptions())
    assert r.outcome == "violation" and r.violated == ["NotSolved"]
    v = r.violations[0]
    assert v.depth == 6 and len(v.trace) == 7
    assert v.trace[-1][1].big == 4
    # every step is a real transition, labelled as the model labels it
    for (_, prev), (action, state) in zip(v.trace, v.trace[1:]):
        assert (action, state) in list(model.successors(prev))
    # and no shorter path exists in the explicit graph
    g = diehard_graph(model)
    init = next(iter(model.init_states()))
    dist = nx.single_source_shortest_path_length(g, init)
    assert min(d for s, d in dist.items() if s.big == 4) == 6
    assert len(g) == 16


def test_diehard_complete_search_with_continue():
    model, props = build("diehard", None, {})
    r = check(model, props, CheckOptions(stop_on_violation=False))
    assert r.distinct == 16 and r.exhausted
    assert r.violated == ["NotSolved"] and r.violations[0].depth == 6
    assert r.sometimes == {"BothFull": 2}


def test_diehard_unsolvable_goal_passes():
    model, props = build("diehard", None, {"BigCapacity": 6, "SmallCapacity": 4, "Goal": 3})
    r = check(model, props, CheckOptions())
    assert r.outcome == "pass"
