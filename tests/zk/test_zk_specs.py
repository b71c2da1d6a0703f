"""The zk specs' expected results, and the counterexamples behind them.

KIP-101's two scenarios in both variants, the leader race without the
scheduling assumption (PromptElection false) and with it, the three kinds of
stop, unclean election, the zombie leader, and the controller (Election =
controller) with and without broker epochs. Each violation is checked with
its shortest counterexample's actions, so a change of the model that
changes the story fails here, not only in `kmc regress`; each passing spec
with its distinct count and its witnesses.
"""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from checker.front.spec import load_spec
from checker.search import registry
from checker.search.engine import CheckOptions, check

SPECS = Path(__file__).resolve().parents[2] / "specs"
ZK_SPECS = sorted(p.stem for p in SPECS.glob("zk-*.toml"))

RACE = ["Produce(0, A)", "HandleFetch(0, 1)", "ReceiveFetchResponse(1)", "HandleFetch(0, 1)",
        "PowerLoss(0)", "Restart(0)", "ElectLeader(0)"]


def run_spec(name, **overrides):
    """The spec's run; with overrides, its constants changed (its invariants
    and the witnesses of the model so built)."""
    spec = load_spec(SPECS / f"{name}.toml")
    if overrides:
        model, props = registry.build("zk", spec.variant, {**spec.constants, **overrides})
        wanted = set(spec.invariants or ())
        props = [p for p in props if not wanted or p.name in wanted or p.kind == "sometimes"]
    else:
        model, props = spec.build()
    return spec, check(model, props, CheckOptions(max_depth=spec.depth))


def actions(violation):
    return [str(a) for a, _ in violation.trace[1:]]


def only_violation(r):
    (v,) = r.violations
    return v


# ---- the leader race and the scheduling assumption ----------------------------------------

def test_without_the_assumption_leader_epochs_lose_a_record_to_the_leader_race():
    """The issue's 7 steps: the leader that power-lost the acknowledged record
    restarts and registers first; the follower that has it runs throughout."""
    spec, r = run_spec("zk-leader_epoch-data-loss")
    assert spec.constants["PromptElection"] is False
    v = only_violation(r)
    assert (v.property, v.depth) == ("LeaderCompleteness", 7) == (spec.expect["violated"],
                                                                  spec.expect["depth"])
    assert actions(v) == RACE
    last = v.trace[-1][1]
    assert last.zk_partition.leader == 0 and last.log[0] == ()
    assert last.running[1] and [r.value for r in last.log[1]] == ["A"]
    assert last.faults.power_losses == 1


def test_the_race_replayed_step_by_step_in_both_variants():
    from model.base import Action
    for variant in ("hw_truncation", "leader_epoch"):
        model, props = registry.build("zk", variant, dict(Values=["A"]))
        lc = next(p.predicate for p in props if p.name == "LeaderCompleteness")
        raced = next(p.predicate for p in props if p.name == "ElectionRaced")
        s = model.init_states()[0]
        seen_race = False
        for text in RACE:
            name, _, params = text.partition("(")
            params = tuple(int(x) if x.strip().isdigit() else x.strip()
                           for x in params.rstrip(")").split(",") if x.strip())
            (s,) = model.successors_of(s, Action(name, params))
            seen_race |= raced(s)
            if name != "ElectLeader":
                assert lc(s)
        assert seen_race and not lc(s)


def test_prompt_elections_restore_the_old_counts_and_results():
    """PromptElection = true is the old model: its counts (22,403; 90,541 within
    12 steps) and its counterexamples (KIP-101 scenario 1 in 8 steps, the
    stale follower LEO in 11, the KIP-279 divergence in 15)."""
    spec, r = run_spec("zk-leader_epoch-data-loss-prompt")
    assert spec.constants["PromptElection"] is True
    assert r.outcome == "pass" and r.exhausted and r.distinct == spec.expect["distinct"] == 22403
    assert all(r.sometimes[w] is not None for w in spec.expect["sometimes"])
    _, r = run_spec("zk-leader_epoch-divergence", PromptElection=True)
    assert r.outcome == "pass" and r.distinct == 90541
    _, r = run_spec("zk-hw_truncation-divergence", PromptElection=True)
    assert (only_violation(r).property, only_violation(r).depth) == ("LogMatching", 9)
    _, r = run_spec("zk-leader_epoch-divergence-deep", PromptElection=True)
    v = only_violation(r)
    assert (v.property, v.depth) == ("LogMatching", 15)
    assert actions(v)[-5:] == ["HandleFetch(0, 1)", "PowerLoss(0)", "ElectLeader(1)", "Restart(0)",
                               "TruncateToLeaderEpochEnd(0)"]


def test_the_same_configurations_without_the_assumption():
    # the race comes first wherever a power loss can make a leader lose a record
    _, r = run_spec("zk-hw_truncation-data-loss", PromptElection=False)
    assert actions(only_violation(r)) == RACE
    _, r = run_spec("zk-leader_epoch-3-brokers-data-loss", PromptElection=False)
    v = only_violation(r)
    assert v.depth == 8 and actions(v)[-3:] == ["PowerLoss(0)", "Restart(0)", "ElectLeader(0)"]


# ---- KIP-101's scenarios --------------------------------------------------------------------

def test_hw_truncation_data_loss_is_kip101_scenario_1():
    spec, r = run_spec("zk-hw_truncation-data-loss")
    assert spec.constants["PromptElection"] is True
    v = only_violation(r)
    assert (v.property, v.depth) == ("NoAckedRecordLost", 8) == (spec.expect["violated"],
                                                                 spec.expect["depth"])
    assert actions(v) == ["Produce(0, A)", "HandleFetch(0, 1)", "ReceiveFetchResponse(1)",
                          "HandleFetch(0, 1)", "FlushLog(1)", "PowerLoss(1)", "Restart(1)",
                          "PowerLoss(0)"]
    last = v.trace[-1][1]
    assert last.log == ((), ()) and last.acked[0].keepers == {1}  # 1 kept it, truncated it


def test_hw_truncation_leader_completeness_breaks_when_the_follower_is_elected():
    model, props = registry.build("zk", "hw_truncation", dict(Values=["A"], PowerLossLimit=2,
                                                              PromptElection=True))
    props = [p for p in props if p.name == "LeaderCompleteness"]
    v = only_violation(check(model, props))
    assert v.depth == 9
    assert actions(v)[-3:] == ["Restart(1)", "PowerLoss(0)", "ElectLeader(1)"]


@pytest.mark.parametrize("name, stop", [("zk-hw_truncation-process-crash", "ProcessCrash"),
                                        ("zk-hw_truncation-controlled-shutdown",
                                         "ControlledShutdown")])
def test_kip101_scenario_1_needs_no_lost_data(name, stop):
    """The follower's restart truncates to its HW whatever kind of stop it
    was: with process crashes or clean shutdowns only, nothing unflushed is
    ever lost and hw_truncation still loses the record."""
    spec, r = run_spec(name)
    assert spec.constants["PowerLossLimit"] == 0
    v = only_violation(r)
    assert (v.property, v.depth) == ("LeaderCompleteness", 8) == (spec.expect["violated"],
                                                                  spec.expect["depth"])
    assert actions(v) == ["Produce(0, A)", "HandleFetch(0, 1)", "ReceiveFetchResponse(1)",
                          "HandleFetch(0, 1)", f"{stop}(1)", "Restart(1)", f"{stop}(0)",
                          "ElectLeader(1)"]
    last = v.trace[-1][1]
    assert [r.value for r in last.log[0]] == ["A"] and last.log[1] == ()  # 0's disk has it
    # the same 8 steps with prompt elections
    _, r = run_spec(name, PromptElection=True)
    assert actions(only_violation(r)) == actions(v)


def test_hw_truncation_divergence_found_within_the_bound():
    spec, r = run_spec("zk-hw_truncation-divergence")
    v = only_violation(r)
    assert (v.property, v.depth) == ("LogMatching", 9) == (spec.expect["violated"],
                                                           spec.expect["depth"])
    assert actions(v) == ["Produce(0, A)", "ShrinkIsr(0, 1)", "HandleFetch(0, 1)", "PowerLoss(0)",
                          "Restart(0)", "ElectLeader(0)", "Produce(0, B)",
                          "ReceiveFetchResponse(1)", "BecomeFollower(1)"]
    last = v.trace[-1][1]
    assert [r.value for r in last.log[0]] == ["B"] and [r.value for r in last.log[1]] == ["A"]


def test_leader_epoch_divergence_passes_within_the_same_bound():
    spec, r = run_spec("zk-leader_epoch-divergence")
    hw_spec = load_spec(SPECS / "zk-hw_truncation-divergence.toml")
    assert (spec.depth, spec.constants) == (hw_spec.depth, hw_spec.constants)
    assert r.outcome == "pass" and r.depth == 12 and r.states_left > 0
    assert r.distinct == spec.expect["distinct"] == 166476


def test_leader_epoch_divergence_beyond_the_bound_is_kip279():
    spec, r = run_spec("zk-leader_epoch-divergence-deep")
    v = only_violation(r)
    assert (v.property, v.depth) == ("LogMatching", 13) == (spec.expect["violated"],
                                                            spec.expect["depth"])
    assert actions(v) == ["Produce(0, A)", "FlushLog(0)", "PowerLoss(0)", "Restart(0)",
                          "ElectLeader(1)", "Produce(1, B)", "FlushLog(1)", "PowerLoss(1)",
                          "ElectLeader(0)", "Restart(1)", "TruncateToLeaderEpochEnd(1)",
                          "HandleFetch(0, 1)", "ReceiveFetchResponse(1)"]
    last = v.trace[-1][1]
    assert [(r.epoch, r.value) for r in last.log[0]] == [(0, "A")]
    assert [(r.epoch, r.value) for r in last.log[1]] == [(1, "B")]


def test_leader_epoch_with_three_brokers_loses_a_record_to_a_stale_follower_leo():
    spec, r = run_spec("zk-leader_epoch-3-brokers-data-loss")
    v = only_violation(r)
    assert (v.property, v.depth) == ("LeaderCompleteness", 11)
    assert actions(v) == ["Produce(0, A)", "HandleFetch(0, 1)", "ReceiveFetchResponse(1)",
                          "HandleFetch(0, 1)", "PowerLoss(1)", "Restart(1)", "HandleFetch(0, 2)",
                          "ReceiveFetchResponse(2)", "HandleFetch(0, 2)", "PowerLoss(0)",
                          "ElectLeader(1)"]


# ---- the controller -------------------------------------------------------------------------------

def test_the_controller_closes_the_race():
    spec, r = run_spec("zk-leader_epoch-controller")
    assert r.outcome == "pass" and r.exhausted and r.distinct == spec.expect["distinct"]
    assert all(r.sometimes[w] is not None for w in spec.expect["sometimes"])
    # the same constants with registration are the 7-step race
    race = load_spec(SPECS / "zk-leader_epoch-data-loss.toml")
    def same(c):
        return {k: v for k, v in c.items()
                if k not in ("Election", "BrokerEpochs", "ControllerFailoverLimit")}
    assert same(spec.constants) == same(race.constants)


@pytest.mark.parametrize("name", ["zk-leader_epoch-controller-failover",
                                  "zk-leader_epoch-controller-kip380-failover"])
def test_a_controller_failover_after_an_unseen_bounce_loses_the_record(name):
    spec, r = run_spec(name)
    v = only_violation(r)
    assert (v.property, v.depth) == ("LeaderCompleteness", 8) == (spec.expect["violated"],
                                                                  spec.expect["depth"])
    assert actions(v) == RACE[:-1] + ["ControllerFailover", "ReceiveLeaderAndIsr(0)"]
    last = v.trace[-1][1]
    assert last.zk_partition.leader_epoch == 0 and last.log[0] == ()


def test_kraft_registration_closes_the_gap_with_a_failover():
    spec, r = run_spec("zk-leader_epoch-controller-kraft-epochs")
    assert spec.constants["ControllerFailoverLimit"] == 1
    assert r.outcome == "pass" and r.exhausted and r.distinct == spec.expect["distinct"]
    assert r.sometimes["ControllerFailedOver"] is not None


def test_the_08_controller_and_the_stale_follower_leo():
    spec, r = run_spec("zk-leader_epoch-controller-3-brokers")
    v = only_violation(r)
    assert (v.property, v.depth) == ("LeaderCompleteness", 12)
    # the leader's unseen bounce: it takes the request queued for its earlier self
    assert actions(v)[4:6] == ["PowerLoss(1)", "OnBrokerFailure(1)"]
    assert actions(v)[-3:] == ["PowerLoss(0)", "Restart(0)", "ReceiveLeaderAndIsr(0)"]
    assert any(s.ctl_stale for _, s in v.trace)  # the bounce the controller never saw
    # a stop that loses the request: the follower's unseen bounce, also 12 steps
    spec, r = run_spec("zk-leader_epoch-controller-3-brokers", RequestsSurviveStop=False)
    v = only_violation(r)
    assert (v.property, v.depth) == ("LeaderCompleteness", 12)
    assert actions(v)[4:6] == ["PowerLoss(1)", "Restart(1)"]
    assert actions(v)[-2:] == ["OnBrokerFailure(0)", "ReceiveLeaderAndIsr(1)"]


# ---- every spec -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ZK_SPECS)
def test_every_zk_spec_states_its_expectation_and_its_scheduling(name):
    spec = load_spec(SPECS / f"{name}.toml")
    assert spec.model == "zk" and spec.expect.get("outcome") in ("pass", "violation")
    text = (SPECS / f"{name}.toml").read_text()
    assert text.startswith("#")  # the story is told in the spec
    constants = tomllib.loads(text)["constants"]
    # which scheduling and which election, stated in the constants and the comment
    assert isinstance(constants.get("PromptElection"), bool) and "Election" in constants
    comment = " ".join(" ".join(line.lstrip("#").split()) for line in text.splitlines()
                       if line.startswith("#"))
    if constants["PromptElection"]:
        assert "PROMPT" in comment
    else:
        assert "PROMPT" not in comment and "racing with every other step" in comment
    if spec.expect["outcome"] == "pass":
        assert spec.expect.get("sometimes"), "a passing spec names its witnesses"


QUICK_PASSES = [n for n in ZK_SPECS
                if tomllib.loads((SPECS / f"{n}.toml").read_text())["expect"].get("quick")
                and tomllib.loads((SPECS / f"{n}.toml").read_text())["expect"]["outcome"] == "pass"]


@pytest.mark.parametrize("name", QUICK_PASSES)
def test_quick_passing_specs_reach_their_witnesses(name):
    spec, r = run_spec(name)
    assert r.outcome == "pass" and r.distinct == spec.expect["distinct"]
    missing = [w for w in spec.expect["sometimes"] if r.sometimes.get(w) is None]
    assert not missing
