"""Random walks (checker/search/simulate.py): the same seed walks the same walks
whatever batches they fall in, every state is checked, counts are exact,
weights and swarm weights are drawn from the run's seed."""
from __future__ import annotations

import dataclasses

import pytest

from checker.search.engine import DEADLOCK
from checker.search.errors import SpecError
from checker.search.simulate import (SWARM_DEMOTE, Walker, batch_weights, check_weights, walk_trace, walker)
from sim_helpers import DIEHARD, KIP966_LOSS, KIP966_SAFE, config, figures, run


def test_same_seed_same_walks():
    _, cfg = config(KIP966_SAFE, seed=7)
    a, b = run(cfg, walks=150), run(cfg, walks=150)
    assert figures(a) == figures(b)
    assert [walk_trace(cfg, w) for w in (0, 63, 64, 149)] == [walk_trace(cfg, w) for w in (0, 63, 64, 149)]
    other = run(dataclasses.replace(cfg, seed=8), walks=150)
    assert figures(other) != figures(a)


def test_a_walk_does_not_depend_on_its_batch():
    """Without swarm weights a walk is a function of (seed, walk number)
    alone: any batch size gives the same figures."""
    _, cfg = config(KIP966_SAFE, seed=3, swarm=False)
    a = run(cfg, walks=100)
    b = run(dataclasses.replace(cfg, batch_walks=7), walks=100)
    assert figures(a) == figures(b)


def test_first_violation_is_the_first_by_walk_number():
    _, cfg = config(KIP966_LOSS, seed=1)
    t = run(cfg, walks=5000)
    v = t.violation
    assert v["property"] == "LeaderCompletenessProperty"
    assert t.walks == v["walk"] + 1   # the walks before it, and it
    # none of the walks before it violates anything
    _, strict = config(KIP966_LOSS, seed=1)
    before = run(strict, walks=v["walk"])
    assert before.violation is None and before.walks == v["walk"]
    trace = walk_trace(cfg, v["walk"])
    assert len(trace) - 1 == v["depth"]
    w = walker(cfg)
    pred = next(p for n, p, _ in w.always if n == v["property"])
    assert not pred(trace[-1][1]) and all(pred(s) for _, s in trace[:-1])


def test_counts_are_exact():
    """distinct = the fingerprints of every state walked; per depth, the
    states first seen there (in walk order); walks and steps add up."""
    _, cfg = config(KIP966_SAFE, seed=5, depth=30)
    t = run(cfg, walks=40)
    w = walker(cfg)
    seen, per_depth, steps, lengths = {}, [], 0, {}
    for k in range(40):
        trace = walk_trace(cfg, k)
        steps += len(trace) - 1
        lengths[len(trace) - 1] = lengths.get(len(trace) - 1, 0) + 1
        for d, (_, s) in enumerate(trace):
            fp = w.ctx.entry(s)[2]
            if fp not in seen:
                seen[fp] = d
                per_depth += [0] * (d + 1 - len(per_depth))
                per_depth[d] += 1
    assert (t.walks, t.steps, t.distinct) == (40, steps, len(seen))
    assert t.per_depth_distinct == per_depth and dict(t.lengths) == lengths
    assert max(t.lengths) <= 30
    assert sum(t.per_action_taken.values()) == t.steps
    assert sum(t.per_action_distinct.values()) == t.distinct - t.per_depth_distinct[0]


def test_every_state_is_checked_the_initial_one_too():
    _, cfg = config(DIEHARD, seed=1)
    cfg = dataclasses.replace(cfg, constants_json='{"BigCapacity": 5, "Goal": 0, "SmallCapacity": 3}')
    t = run(cfg, walks=10)
    assert t.violation["property"] == "NotSolved" and t.violation["depth"] == 0 and t.walks == 1


def test_deadlock_is_a_violation_when_asked():
    """kraft's walks mostly end where nothing is enabled any more (every
    value written, every fault spent): a deadlock when the spec asks."""
    _, cfg = config(KIP966_SAFE, seed=2, deadlock=True)
    t = run(cfg, walks=50)
    assert t.violation["property"] == DEADLOCK
    trace = walk_trace(cfg, t.violation["walk"])
    assert not list(walker(cfg).model.successors(trace[-1][1]))
    _, quiet = config(KIP966_SAFE, seed=2, deadlock=False)
    t = run(quiet, walks=50)
    assert t.violation is None and t.walks == 50 and t.deadlocks > 0
    assert t.deadlocks + t.lengths.get(100, 0) == 50


def test_weights_steer_the_walks():
    _, cfg = config(DIEHARD, seed=4, weights={"EmptyBigJug": 0, "FillSmallJug": 5.0})
    cfg = dataclasses.replace(cfg, properties=("TypeOK", "BothFull"))  # walk the whole bound
    t = run(cfg, walks=30)
    assert t.per_action_taken["EmptyBigJug"] == 0 and t.per_action_generated["EmptyBigJug"] > 0
    assert t.per_action_taken["FillSmallJug"] > 2 * t.per_action_taken["FillBigJug"]


def test_swarm_weights_come_from_the_seed():
    _, cfg = config(KIP966_SAFE, seed=11, swarm=True)
    names = walker(cfg).action_names
    w0, w1 = batch_weights(cfg, names, 0), batch_weights(cfg, names, 1)
    assert w0 == batch_weights(cfg, names, 0) and w0 != w1
    assert all(v > 0 for v in w0.values()) and set(w0) == set(names)
    assert min(w0.values()) < 1 / 4 and max(w0.values()) > 1   # demoted and promoted ones
    assert batch_weights(dataclasses.replace(cfg, swarm=False), names, 0) is None
    assert figures(run(cfg, walks=130)) == figures(run(cfg, walks=130))
    assert SWARM_DEMOTE < 1


@pytest.mark.parametrize("weights, fragment", [
    ({"Nope": 1}, "unknown action(s) 'Nope'"),
    ({"FillBigJug": -1}, "must be a number >= 0"),
    ({"FillBigJug": "2"}, "must be a number >= 0"),
    ({"FillBigJug": True}, "must be a number >= 0"),
    ({n: 0 for n in ("FillSmallJug", "FillBigJug", "EmptySmallJug", "EmptyBigJug", "SmallToBig",
                     "BigToSmall")}, "every action weighs 0"),
])
def test_bad_weights(weights, fragment):
    w = walker(config(DIEHARD)[1])
    with pytest.raises(SpecError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        check_weights(weights, w.action_names, "weights")


def test_walker_is_cached_per_config():
    _, cfg = config(DIEHARD)
    assert walker(cfg) is walker(cfg) and isinstance(walker(cfg), Walker)
