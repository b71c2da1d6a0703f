"""The zk specs' expected results, and the counterexamples behind them.

The four runs of the issue (KIP-101's two scenarios, each in both variants,
same constants and bounds) plus the two findings leader epochs do not fix.
Each violation is checked with its shortest counterexample's actions, so a
change of the model that changes the story fails here, not only in
`kmc regress`.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from checker import registry
from checker.engine import CheckOptions, check
from checker.spec import load_spec

SPECS = Path(__file__).resolve().parents[2] / "specs"


def run_spec(name):
    spec = load_spec(SPECS / f"{name}.toml")
    model, props = spec.build()
    return spec, check(model, props, CheckOptions(max_depth=spec.depth))


def actions(violation):
    return [str(a) for a, _ in violation.trace[1:]]


def test_hw_truncation_data_loss_is_kip101_scenario_1():
    spec, r = run_spec("zk-hw_truncation-data-loss")
    assert r.outcome == "violation" == spec.expect["outcome"]
    (v,) = r.violations
    assert (v.property, v.depth) == ("NoAckedRecordLost", 8) == (spec.expect["violated"],
                                                                 spec.expect["depth"])
    assert actions(v) == ["Produce(0, A)", "HandleFetch(0, 1)", "ReceiveFetchResponse(1)",
                          "HandleFetch(0, 1)", "FlushLog(1)", "Crash(1)", "Restart(1)",
                          "Crash(0)"]
    last = v.trace[-1][1]
    assert last.log == ((), ()) and last.acked[0].keepers == {1}  # 1 kept it, truncated it


def test_hw_truncation_leader_completeness_breaks_when_the_follower_is_elected():
    model, props = registry.build("zk", "hw_truncation", dict(Values=["A"], CrashLimit=2))
    props = [p for p in props if p.name == "LeaderCompleteness"]
    (v,) = check(model, props).violations
    assert v.depth == 9
    assert actions(v)[-3:] == ["Restart(1)", "Crash(0)", "ElectLeader(1)"]


def test_leader_epoch_data_loss_passes_exhaustively():
    spec, r = run_spec("zk-leader_epoch-data-loss")
    assert r.outcome == "pass" and r.exhausted
    assert r.distinct == spec.expect["distinct"] == 7690
    # not vacuous: commits, elections, truncations and survived crashes happen
    assert all(d is not None for d in r.sometimes.values()), r.sometimes


def test_hw_truncation_divergence_found_within_the_bound():
    spec, r = run_spec("zk-hw_truncation-divergence")
    (v,) = r.violations
    assert (v.property, v.depth) == ("LogMatching", 9) == (spec.expect["violated"],
                                                           spec.expect["depth"])
    assert actions(v) == ["Produce(0, A)", "ShrinkIsr(0, 1)", "HandleFetch(0, 1)", "Crash(0)",
                          "Restart(0)", "ElectLeader(0)", "Produce(0, B)",
                          "ReceiveFetchResponse(1)", "BecomeFollower(1)"]
    last = v.trace[-1][1]
    assert [r.value for r in last.log[0]] == ["B"] and [r.value for r in last.log[1]] == ["A"]


def test_leader_epoch_divergence_passes_within_the_same_bound():
    spec, r = run_spec("zk-leader_epoch-divergence")
    hw_spec = load_spec(SPECS / "zk-hw_truncation-divergence.toml")
    assert (spec.depth, spec.constants) == (hw_spec.depth, hw_spec.constants)
    assert r.outcome == "pass" and r.depth == 12 and r.states_left > 0
    assert r.distinct == spec.expect["distinct"]


def test_leader_epoch_divergence_beyond_the_bound_is_kip279():
    spec, r = run_spec("zk-leader_epoch-divergence-deep")
    (v,) = r.violations
    assert (v.property, v.depth) == ("LogMatching", 15)
    assert actions(v)[-5:] == ["HandleFetch(0, 1)", "Crash(0)", "ElectLeader(1)", "Restart(0)",
                               "TruncateToLeaderEpochEnd(0)"]
    last = v.trace[-1][1]
    assert [(r.epoch, r.value) for r in last.log[0]] == [(1, "B")]
    assert [(r.epoch, r.value) for r in last.log[1]] == [(0, "A")]


def test_leader_epoch_with_three_brokers_loses_a_record_to_a_stale_follower_leo():
    spec, r = run_spec("zk-leader_epoch-3-brokers-data-loss")
    (v,) = r.violations
    assert (v.property, v.depth) == ("LeaderCompleteness", 11)
    assert actions(v) == ["Produce(0, A)", "HandleFetch(0, 1)", "ReceiveFetchResponse(1)",
                          "HandleFetch(0, 1)", "Crash(1)", "Restart(1)", "HandleFetch(0, 2)",
                          "ReceiveFetchResponse(2)", "HandleFetch(0, 2)", "Crash(0)",
                          "ElectLeader(1)"]


@pytest.mark.parametrize("name", sorted(p.stem for p in SPECS.glob("zk-*.toml")))
def test_every_zk_spec_states_its_expectation(name):
    spec = load_spec(SPECS / f"{name}.toml")
    assert spec.model == "zk" and spec.expect.get("outcome") in ("pass", "violation")
    text = (SPECS / f"{name}.toml").read_text()
    assert text.startswith("#")  # the story is told in the spec
