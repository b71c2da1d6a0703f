"""Shrinking (checker/search/shrink.py): the shrunk trace is a valid execution,
still violates the property (first at its last state), and is 1-minimal:
brute force over every single step and every contiguous run of steps,
replayed by action label (sim_helpers.replay_by_label, written apart from
the shrinker). Its length is compared with BFS's shortest counterexample
where BFS reaches that depth."""
from __future__ import annotations

import pytest

from checker.front.spec import load_spec
from checker.search.engine import CheckOptions, check
from checker.search.shrink import cut_cycles, shrink
from checker.search.simulate import walk_trace, walker
from sim_helpers import (DIEHARD, KIP966_LOSS, SPECS, V35_LRS, assert_valid, config, replay_by_label,
                         run)


def _violation(path, seed=1, walks=20000):
    _, cfg = config(path, seed=seed)
    t = run(cfg, walks=walks)
    assert t.violation is not None, f"{path}: no violation in {walks} walks (seed {seed})"
    w = walker(cfg)
    pred = next(p for n, p, _ in w.always if n == t.violation["property"])
    return w.model, walk_trace(cfg, t.violation["walk"]), (lambda s: not pred(s))


def assert_one_minimal(model, trace, violates):
    """No single step and no contiguous run of steps can be dropped with the
    rest a valid execution (by action label) in which some state violates."""
    n = len(trace) - 1
    actions = [a for a, _ in trace[1:]]
    states = [s for _, s in trace[1:]]
    for k in range(1, n + 1):
        for i in range(0, n - k + 1):
            keep = [j for j in range(n) if not i <= j < i + k]
            got = replay_by_label(model, trace[0][1], [actions[j] for j in keep], [states[j] for j in keep])
            if got is not None:
                assert not any(violates(s) for _, s in got), \
                    f"steps {i + 1}..{i + k} can be dropped: {[str(a) for a, _ in got[1:]]}"


@pytest.mark.parametrize("path", [KIP966_LOSS, V35_LRS])
def test_shrunk_trace_is_valid_violating_and_one_minimal(path):
    model, trace, violates = _violation(path)
    r = shrink(model, trace, violates)
    assert r.minimal and r.steps == len(r.trace) - 1 < len(trace) - 1
    assert r.trace[0] == trace[0]                     # from the walk's initial state
    assert_valid(model, r.trace)                      # every step a step of the model
    assert violates(r.trace[-1][1])                   # still violates ...
    assert not any(violates(s) for _, s in r.trace[:-1])   # ... first at its last state
    assert_one_minimal(model, r.trace, violates)


def test_the_walk_itself_replays_by_label():
    """The replay rule takes the recorded successor where an action has
    several (a broker answering one of several requests): the walk replays
    to itself, state for state."""
    model, trace, _ = _violation(KIP966_LOSS)
    got = replay_by_label(model, trace[0][1], [a for a, _ in trace[1:]], [s for _, s in trace[1:]])
    assert got == trace


# BFS reaches these counterexamples (their [expect] depth is BFS's shortest)
BFS_SPECS = ["toy-diehard.toml", "kraft-v3_5-last-replica-standing.toml",
             "storage/v3_5-async-last-replica-standing.toml", "storage/kip966-minisr-lossy-any-strategy.toml"]


@pytest.mark.parametrize("name", BFS_SPECS)
def test_shrunk_length_against_bfs_shortest(name):
    """1-minimal is not minimum: a shrunk walk is never shorter than BFS's
    shortest counterexample, often as short (here in most seeds), sometimes
    longer (a different route to the violation)."""
    spec = load_spec(SPECS / name)
    model, props = spec.build()
    bfs = check(model, props, CheckOptions(max_depth=spec.depth, fingerprint_bits=spec.fingerprint_bits,
                                           projection=spec.projection))
    shortest = bfs.violations[0].depth
    assert shortest == spec.expect["depth"]
    lengths = {}
    for seed in range(1, 6):
        m, trace, violates = _violation(SPECS / name, seed=seed)
        r = shrink(m, trace, violates)
        assert r.minimal
        lengths[seed] = (len(trace) - 1, r.steps)
    table = f"{name}: BFS {shortest} steps; seed -> (walk, shrunk) {lengths}"
    assert all(shortest <= s <= w for w, s in lengths.values()), table
    assert sum(s == shortest for _, s in lengths.values()) >= 3, table


def test_the_three_broker_loss_shrinks_to_the_two_broker_shortest():
    """BFS cannot exhaust the 3-broker, 2-value configuration here; the
    shrunk walk is as long as BFS's shortest in the 2-broker, 1-value form
    (specs/storage/kip966-minisr-lossy-balanced.toml: 22 steps) and leaves
    broker 3 and the second value out."""
    model, trace, violates = _violation(KIP966_LOSS)
    r = shrink(model, trace, violates)
    assert r.steps == load_spec(SPECS / "storage" / "kip966-minisr-lossy-balanced.toml").expect["depth"] == 22
    assert all("3" not in map(str, a.params) for a, _ in r.trace[1:])


def test_cycles_are_cut_first():
    a = [(None, "s0"), ("x", "s1"), ("y", "s2"), ("z", "s1"), ("w", "s3"), ("v", "s0"), ("u", "s4")]
    assert cut_cycles(a) == [(None, "s0"), ("u", "s4")]
    assert cut_cycles(a[:5]) == [(None, "s0"), ("x", "s1"), ("w", "s3")]


def test_a_time_limit_stops_shrinking_uncertified():
    model, trace, violates = _violation(DIEHARD, seed=2)
    r = shrink(model, trace, violates, time_limit=0)
    assert not r.minimal and violates(r.trace[-1][1]) and r.replays == 0
    assert_valid(model, r.trace)
