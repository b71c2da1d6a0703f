"""KIP-101's two scenarios, replayed step by step as the page
tells them, in both variants.

The page's brokers A and B are our brokers by role: in scenario 1 the leader
B is broker 0 (the preferred replica, leader in epoch 0) and the follower A is
broker 1; in scenario 2 the broker with more data (A) is broker 0.
The shortest counterexamples kmc finds are checked in test_zk_specs.py; here
the narratives themselves: hw_truncation breaks the property at the step the
page says, leader_epoch does not.
"""
from __future__ import annotations

from model.base import Action
from model.zk.model import ZkModel
from model.zk.state import Role

from checker.search.registry import properties_for


def props(m):
    return {p.name: p.predicate for p in properties_for(m)}


def replay(m, steps):
    """States after each step; every step must be enabled with one successor."""
    s = m.init_states()[0]
    states = [s]
    for name, *params in steps:
        out = m.successors_of(s, Action(name, tuple(params)))
        assert len(out) == 1, f"{name}{tuple(params)}: {len(out)} successors"
        s = out[0]
        states.append(s)
    return states


def fetch(leader, follower):
    return [("HandleFetch", leader, follower), ("ReceiveFetchResponse", follower)]


# Scenario 1, "High watermark truncation followed by immediate leader election".
# m1 committed and known to both; m2 committed by the leader's second round
# but the follower restarts before the response carrying the new HW arrives.
SCENARIO_1_COMMON = (
    [("Produce", 0, "m1")] + fetch(0, 1) + fetch(0, 1)            # m1 committed, both HW 1
    + [("Produce", 0, "m2")] + fetch(0, 1)                        # "A fetches message m2"
    + [("HandleFetch", 0, 1)]                                     # B commits m2 (HW 2), acks it
    + [("FlushLog", 1), ("CheckpointHw", 1), ("PowerLoss", 1), ("Restart", 1)]  # "A restarts"
)


def test_scenario_1_hw_truncation_loses_the_acknowledged_record():
    m = ZkModel("hw_truncation", dict(Values=["m1", "m2"], PowerLossLimit=2))
    steps = SCENARIO_1_COMMON + [
        ("HandleFetch", 0, 1),                  # "issues a fetch request to the leader (B)"
        ("FlushLog", 0), ("PowerLoss", 0),          # "(B) then fails"
        ("ElectLeader", 1),                     # "and A becomes the new leader"
        ("Restart", 0),                         # B comes back, truncates to its HW,
        ("HandleFetch", 1, 0), ("ReceiveFetchResponse", 0),  # then to A's LEO
    ]
    states = replay(m, steps)
    p = props(m)
    at_restart = states[len(SCENARIO_1_COMMON)]
    assert [r.value for r in at_restart.log[1]] == ["m1"]  # "It truncates its log to the HW"
    assert [a.value for a in at_restart.acked] == ["m1", "m2"]
    elected = states[len(SCENARIO_1_COMMON) + 4]
    assert elected.zk_partition.leader == 1
    assert not p["LeaderCompleteness"](elected)     # the new leader lacks m2
    assert p["NoAckedRecordLost"](elected)          # B's disk still has it ...
    end = states[-1]
    assert not p["NoAckedRecordLost"](end)          # ... until B truncates: "lost permanently"
    assert [r.value for r in end.log[0]] == [r.value for r in end.log[1]] == ["m1"]


def test_scenario_1_leader_epoch_keeps_the_record():
    m = ZkModel("leader_epoch", dict(Values=["m1", "m2"], PowerLossLimit=2))
    steps = SCENARIO_1_COMMON + [
        ("TruncateToLeaderEpochEnd", 1),        # "returns offset 2 ... does not truncate"
        ("FlushLog", 0), ("PowerLoss", 0), ("ElectLeader", 1),
        ("Restart", 0), ("TruncateToLeaderEpochEnd", 0),
    ]
    states = replay(m, steps)
    p = props(m)
    assert len(states[len(SCENARIO_1_COMMON) + 1].log[1]) == 2
    for s in states:
        assert p["LeaderCompleteness"](s) and p["NoAckedRecordLost"](s)
    assert [r.value for r in states[-1].log[1]] == ["m1", "m2"]
    # and if B fails before A even asks, A has truncated nothing either
    states = replay(m, SCENARIO_1_COMMON + [("PowerLoss", 0), ("ElectLeader", 1)])
    assert all(p["LeaderCompleteness"](s) for s in states)


# Scenario 2, "Replica divergence on restart after multiple hard failures":
# A (broker 0) has m1, m2 on disk and HW 2 checkpointed; B (broker 1) flushed
# only m1. Both crash; B comes back first and leads; it takes m3 at offset 1.
SCENARIO_2_COMMON = (
    [("Produce", 0, "m1")] + fetch(0, 1) + fetch(0, 1) + [("FlushLog", 1)]
    + [("Produce", 0, "m2")] + fetch(0, 1) + [("HandleFetch", 0, 1)]
    + [("CheckpointHw", 0), ("FlushLog", 0)]
    + [("PowerLoss", 1), ("PowerLoss", 0)]                               # the power outage
    + [("Restart", 1), ("ElectLeader", 1), ("Produce", 1, "m3")]  # "broker B becomes leader"
    + [("Restart", 0)]                                           # "when broker A starts"
)


def test_scenario_2_hw_truncation_diverges_for_good():
    m = ZkModel("hw_truncation", dict(Values=["m1", "m2", "m3"], PowerLossLimit=2))
    states = replay(m, SCENARIO_2_COMMON + fetch(1, 0) + fetch(1, 0))
    p = props(m)
    restarted = states[len(SCENARIO_2_COMMON)]
    # A truncated to its checkpointed HW 2 and kept m2 where B has m3
    assert [r.value for r in restarted.log[0]] == ["m1", "m2"]
    assert [r.value for r in restarted.log[1]] == ["m1", "m3"]
    assert not p["LogMatching"](restarted)
    assert all(p["LogMatching"](s) for s in states[:len(SCENARIO_2_COMMON)])
    end = states[-1]
    # A fetches from offset 2, is back in the ISR, and the logs never reconcile
    assert end.zk_partition.isr == {0, 1} and end.hw == (2, 2)
    assert end.log[0] != end.log[1] and not p["LogMatching"](end)


def test_scenario_2_leader_epoch_truncates_the_orphan():
    m = ZkModel("leader_epoch", dict(Values=["m1", "m2", "m3"], PowerLossLimit=2))
    states = replay(m, SCENARIO_2_COMMON + [("TruncateToLeaderEpochEnd", 0)] + fetch(1, 0))
    p = props(m)
    assert states[len(SCENARIO_2_COMMON)].role[0].role == Role.TRUNCATING
    truncated = states[len(SCENARIO_2_COMMON) + 1]
    # "This returns the first offset of LE1, which is offset 1 ... truncates it"
    assert [r.value for r in truncated.log[0]] == ["m1"]
    end = states[-1]
    assert end.log[0] == end.log[1] and [r.epoch for r in end.log[0]] == [0, 1]
    assert all(p["LogMatching"](s) for s in states)


def test_scenario_2_in_twelve_steps_with_two_values():
    """The scenario's shortest form in this model: one value committed on both,
    only the leader flushes it, both crash, the follower comes back first and
    writes another value at the same offset; 12 steps, the depth bound of the
    divergence specs."""
    steps = ([("Produce", 0, "A")] + fetch(0, 1) + [("HandleFetch", 0, 1)]
             + [("CheckpointHw", 0), ("FlushLog", 0), ("PowerLoss", 1), ("PowerLoss", 0),
                ("Restart", 1), ("ElectLeader", 1), ("Produce", 1, "B"), ("Restart", 0)])
    assert len(steps) == 12
    hw = ZkModel("hw_truncation", dict(Values=["A", "B"], PowerLossLimit=2))
    assert not props(hw)["LogMatching"](replay(hw, steps)[-1])
    le = ZkModel("leader_epoch", dict(Values=["A", "B"], PowerLossLimit=2))
    states = replay(le, steps + [("TruncateToLeaderEpochEnd", 0)])
    assert all(props(le)["LogMatching"](s) for s in states)
    assert states[-1].log[0] == ()
