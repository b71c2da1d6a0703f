"""The zk model's clients: the producer's Acks and the consumer (Consumer =
true) - their steps, their properties on hand-made states, and that neither
changes what the brokers can do."""
from __future__ import annotations

import pytest

from checker.search import registry
from checker.search.engine import CheckOptions, check
from checker.search.registry import properties_for
from model.base import ModelConfigError
from model.zk.model import ZkModel
from model.zk.state import Record
from zk_steps import names, run, step


def preds(m):
    return {p.name: p.predicate for p in properties_for(m)}


def consumer_model(variant="leader_epoch", **c):
    return ZkModel(variant, {"Values": ["A", "B"], "PowerLossLimit": 0, "ProcessCrashLimit": 1,
                             "Consumer": True, **c})


def test_acks_is_all_or_1():
    with pytest.raises(ModelConfigError, match="Acks"):
        ZkModel("leader_epoch", {"Acks": "0"})


@pytest.mark.parametrize("variant,distinct", [("hw_truncation", 52727), ("leader_epoch", 60595)])
def test_acks_changes_no_broker_step(variant, distinct):
    """acks=1 and acks=all reach the same states (the brokers do the same);
    only acks=1 checks NoAcksOneRecordLost, and breaks it."""
    consts = dict(Values=["A"], PowerLossLimit=0, ProcessCrashLimit=2)
    counts = {}
    for acks in ("all", "1"):
        model, props = registry.build("zk", variant, dict(consts, Acks=acks))
        assert ("NoAcksOneRecordLost" in {p.name for p in props}) == (acks == "1")
        if acks == "1":
            r = check(model, props, CheckOptions())
            assert r.outcome == "violation" and r.violated == ["NoAcksOneRecordLost"]
        kept = [p for p in props if p.name != "NoAcksOneRecordLost"
                and p.name not in ("LeaderCompleteness", "NoAckedRecordLost")]
        r = check(model, kept, CheckOptions())
        assert r.outcome == "pass" and r.exhausted
        counts[acks] = r.distinct
    assert counts == {"all": distinct, "1": distinct}


def test_acks_one_record_lost_by_a_leader_change_without_disk_loss():
    m = ZkModel("leader_epoch", {"Values": ["A"], "PowerLossLimit": 0, "ProcessCrashLimit": 2,
                                 "Acks": "1"})
    p = preds(m)["NoAcksOneRecordLost"]
    s = run(m, ("Produce", 0, "A"), ("ProcessCrash", 0), ("ElectLeader", 1), ("Restart", 0))
    assert p(s) and not s.acked  # written (acknowledged at the append), not committed
    s = step(m, s, "TruncateToLeaderEpochEnd", 0)
    assert not p(s) and s.log == ((), ())


def test_consumer_reads_up_to_the_hw_only():
    m = consumer_model()
    s = run(m, ("Produce", 0, "A"))
    assert "ConsumerFetch(0)" not in names(m, s)  # HW 0: nothing to read
    s = run(m, ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1), ("HandleFetch", 0, 1), state=s)
    assert s.hw[0] == 1
    s = step(m, s, "ConsumerFetch", 0)
    assert s.consumer.position == 1 and s.consumer.read == {(0, "A")}
    assert s.consumer.epochs == {0} and not s.consumer.stale
    assert "ConsumerFetch(1)" not in names(m, s)  # a follower does not serve the consumer
    assert all(p(s) for p in preds(m).values() if p.__name__ in ("ConsumedRecordKept", "MonotonicReads"))


def test_consumer_out_of_range_resets_to_the_hw():
    m = consumer_model()
    s = run(m, ("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1),
            ("HandleFetch", 0, 1), ("ConsumerFetch", 0))
    # a leader with a shorter log: the consumer's position 1 is beyond it
    s = s._replace(log=(s.log[0], ()), hw=(s.hw[0], 0))
    s = s._replace(role=(s.role[1], s.role[0]._replace(leader=1)),
                   leader_view=(None, s.leader_view[0]))
    t = step(m, s, "ConsumerFetch", 1)
    assert t.consumer.position is None and preds(m)["ConsumerOutOfRange"](t)
    assert not m.successors_of(t, m.acts["ConsumerFetch"][1])
    t = step(m, t, "ResetOffset", 1)
    assert t.consumer.position == 0


def test_monotonic_reads_and_consumed_record_kept_on_hand_made_states():
    m = consumer_model()
    p = preds(m)
    s = run(m, ("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1),
            ("HandleFetch", 0, 1), ("ConsumerFetch", 0))
    assert p["MonotonicReads"](s) and p["ConsumedRecordKept"](s)
    c = s.consumer
    assert not p["MonotonicReads"](s._replace(consumer=c._replace(read=c.read | {(0, "B")})))
    # the leader lost A while A is protected: broken; unprotected: not checked
    lost = s._replace(log=((Record(0, "B"),), s.log[1]))
    assert not p["ConsumedRecordKept"](lost)
    unprotected = lost._replace(acked=tuple(a._replace(keepers=frozenset()) for a in lost.acked))
    assert p["ConsumedRecordKept"](unprotected)


def _reachable(model) -> set:
    seen = set(model.init_states())
    frontier = list(seen)
    while frontier:
        frontier = [t for s in frontier for _, t in model.successors(s)
                    if t not in seen and not seen.add(t)]
    return seen


def _brokers_part(s):
    """A state without the consumer, and without the ghost `raced` (a
    consumer step going first while an election is due sets it too)."""
    return s._replace(consumer=None, faults=s.faults._replace(raced=False))


def test_consumer_is_an_observer():
    """With the consumer the brokers reach exactly the states they reach
    without it; Consumer = false is the model without a consumer (7,306
    states, specs/zk-leader_epoch-zombie-leader.toml's constants)."""
    consts = dict(Values=["A"], PowerLossLimit=0, SessionExpiryLimit=1)
    off = _reachable(ZkModel("leader_epoch", dict(consts, Consumer=False)))
    on = _reachable(ZkModel("leader_epoch", dict(consts, Consumer=True)))
    assert len(off) == 7306 and len(on) == 21118
    assert {_brokers_part(s) for s in on} == {_brokers_part(s) for s in off}


def test_consumer_off_leaves_the_state_space_alone():
    counts = []
    for consumer in (False, True):
        model, props = registry.build("zk", "leader_epoch", dict(
            Values=["A"], PowerLossLimit=0, SessionExpiryLimit=1, Consumer=consumer))
        r = check(model, props, CheckOptions())
        assert r.outcome == "pass" and r.exhausted
        counts.append(r.distinct)
        if consumer:
            assert r.sometimes["RecordConsumed"] is not None
            assert r.sometimes["ConsumedFromStaleLeader"] is not None
    assert counts == [7306, 21118]


@pytest.mark.parametrize("variant,election_hw,depth", [
    ("hw_truncation", "leo", 10), ("leader_epoch", "leo", 9),
    ("hw_truncation", "kept", 12), ("leader_epoch", "kept", None)])
@pytest.mark.parametrize("acks", ["all", "1"])
def test_truncation_below_the_hw_happens_with_either_acks(variant, election_hw, depth, acks):
    """The 0.8 design's "truncate the data before its HW": with process crashes
    only, at the same depth whatever the producer's acks. The design's
    election rule (ElectionHw leo) reaches it in both variants; Kafka's
    (kept: the new leader's HW is one the ISR had) in hw_truncation only:
    leader epochs never truncate below a checkpointed HW (whole space)."""
    model, props = registry.build("zk", variant, dict(Values=["A"], PowerLossLimit=0,
                                                      ProcessCrashLimit=2, Acks=acks,
                                                      ElectionHw=election_hw))
    kept = [p for p in props if p.name in ("ValidState", "TruncatedBelowHw")]
    r = check(model, kept, CheckOptions())
    assert r.outcome == "pass" and r.exhausted and r.sometimes["TruncatedBelowHw"] == depth


def test_truncation_below_the_hw_needs_a_crash():
    model, props = registry.build("zk", "leader_epoch", dict(Values=["A"], PowerLossLimit=0,
                                                             SessionExpiryLimit=1))
    r = check(model, props, CheckOptions())
    assert r.outcome == "pass" and r.sometimes["TruncatedBelowHw"] is None


def test_acks_one_loss_in_the_0_8_protocol_takes_4_steps():
    model, props = registry.build("zk", "hw_truncation", dict(
        Values=["A"], PowerLossLimit=0, SessionExpiryLimit=1, Acks="1"))
    r = check(model, props, CheckOptions())
    assert r.outcome == "violation" and r.violated == ["NoAcksOneRecordLost"]
    assert r.violations[0].depth == 4


@pytest.mark.parametrize("consumer", [True, False])
def test_from_plain_rebuilds_the_consumer(consumer):
    """States spilled to disk or replayed come back equal, the consumer's too."""
    from checker.search import encoding
    m = consumer_model(Consumer=consumer)
    steps = [("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1), ("HandleFetch", 0, 1)]
    s = run(m, *steps, *([("ConsumerFetch", 0)] if consumer else []))
    t = m.from_plain(encoding.decode_state(encoding.parts_to_bytes(encoding.encode_state(s))))
    assert t == s and encoding.encode_state(t) == encoding.encode_state(s)
    assert (t.consumer is not None) == consumer
