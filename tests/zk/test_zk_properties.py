"""The zk properties: their predicates on hand-made states, the ghost
bookkeeping behind "protected", and model-level results beyond the KIP-101
specs (the znode version check against a zombie leader, the unclean leader
election trade-off)."""
from __future__ import annotations

import pytest

from checker.search import registry
from checker.search.engine import CheckOptions, check
from checker.search.registry import properties_for
from model.base import ALWAYS, SOMETIMES, Property
from model.zk import ghost
from model.zk.model import ZkModel
from model.zk.state import NO_EPOCH, NO_LEADER, Acked, Record, ReplicaRole, Role
from zk_steps import run

E = frozenset()


def preds(m):
    return {p.name: p.predicate for p in properties_for(m)}


def base(variant="hw_truncation", **c):
    m = ZkModel(variant, {"Values": ["A", "B"], "PowerLossLimit": 2, **c})
    return m, m.init_states()[0]


def rec(*values, epoch=-1):
    return tuple(Record(epoch, v) for v in values)


# ---- the properties on hand-made states --------------------------------------------

def test_property_names_kinds_and_one_line_docs():
    m, _ = base(SessionExpiryLimit=1)
    props = properties_for(m)
    assert [p.name for p in props if p.kind == ALWAYS] == [
        "LeaderCompleteness", "NoAckedRecordLost", "LogMatching", "ValidState", "ValueAtOneOffset"]
    assert [p.name for p in props if p.kind == SOMETIMES] == [
        "RecordCommitted", "LeaderElected", "RecordTruncated", "IsrShrunk",
        "AckedRecordSurvivedCrash", "SessionExpired", "AckedRecordLostToPowerLoss",
        "ElectionRaced", "CaughtUpFollowerDropped", "ZombieLeader"]
    assert all(p.doc and "\n" not in p.doc for p in props)
    m, _ = base(PowerLossLimit=0)
    assert "AckedRecordSurvivedCrash" not in {p.name for p in properties_for(m)}
    # each fault's witness comes with the fault
    m, _ = base(PowerLossLimit=0, ProcessCrashLimit=1, ControlledShutdownLimit=1,
                UncleanLeaderElection=True, PromptElection=True, Election="controller",
                ControllerFailoverLimit=1)
    assert [p.name for p in properties_for(m) if p.kind == SOMETIMES][4:] == [
        "AckedRecordSurvivedCrash", "PageCacheSurvivedCrash", "ControlledShutdownHappened",
        "BrokerBounced", "RequestOutlivedStop", "LeaderAndIsrQueued", "CaughtUpFollowerDropped",
        "CrashDuringControlledShutdown", "ControllerFailedOver", "UncleanLeaderLacksAckedRecord",
        "TruncatedBelowHw"]  # PowerLossLimit = 0: only then does TruncatedBelowHw apply
    # the producer's acks=1 and the consumer bring their own, after the others
    m, _ = base(PowerLossLimit=0, SessionExpiryLimit=1, Acks="1", Consumer=True)
    props = properties_for(m)
    assert [p.name for p in props if p.kind == ALWAYS][5:] == [
        "NoAcksOneRecordLost", "ConsumedRecordKept", "MonotonicReads"]
    assert [p.name for p in props if p.kind == SOMETIMES][-6:] == [
        "ZombieLeader", "TruncatedBelowHw", "RecordConsumed", "ConsumedAcrossLeaderChange",
        "ConsumedFromStaleLeader", "ConsumerOutOfRange"]


def test_leader_completeness_checks_protected_records_only():
    m, s = base()
    p = preds(m)["LeaderCompleteness"]
    s = s._replace(log=(rec("A"), rec("A", "B")),
                   acked=(Acked("A", frozenset({0})), Acked("B", frozenset({1}))))
    assert not p(s)  # the leader (0) lacks protected B
    assert p(s._replace(acked=(Acked("A", frozenset({0})), Acked("B", E))))  # B unprotected
    assert p(s._replace(zk_partition=s.zk_partition._replace(leader=NO_LEADER)))


def test_no_acked_record_lost_counts_disks_of_crashed_brokers():
    m, s = base()
    p = preds(m)["NoAckedRecordLost"]
    s = s._replace(log=((), rec("A")), acked=(Acked("A", frozenset({0})),))
    assert p(s)
    assert p(s._replace(running=(True, False)))  # on 1's disk: not lost yet
    assert not p(s._replace(log=((), ())))
    assert p(s._replace(log=((), ()), acked=(Acked("A", E),)))


def test_log_matching_compares_below_the_smaller_hw_in_the_current_epoch_only():
    m, s = base()
    p = preds(m)["LogMatching"]
    s = s._replace(log=(rec("A", "B"), rec("A", "C")), hw=(2, 1))
    assert p(s)  # they differ at offset 1 only, 1's HW is 1
    assert not p(s._replace(hw=(2, 2)))
    # a follower of an older epoch has yet to reconcile: not compared
    old = s._replace(hw=(2, 2), role=(ReplicaRole(Role.LEADER, 0, 1), ReplicaRole(Role.FOLLOWER, 0, 0)),
                     zk_partition=s.zk_partition._replace(leader_epoch=1))
    assert p(old)
    assert p(s._replace(hw=(2, 2), role=(s.role[0], ReplicaRole(Role.TRUNCATING, 0, 0))))


def test_validity_invariants():
    m, s = base()
    pr = preds(m)
    assert pr["ValidState"](s) and pr["ValueAtOneOffset"](s)
    assert not pr["ValidState"](s._replace(hw=(1, 0)))  # HW beyond the LEO
    assert not pr["ValidState"](s._replace(running=(True, False)))  # down, still a follower
    assert not pr["ValueAtOneOffset"](s._replace(log=(rec("A", "B"), rec("B"))))
    assert not pr["ValueAtOneOffset"](s._replace(log=(rec("A", "A"), ())))


# ---- ghost bookkeeping ---------------------------------------------------------------

def test_ghost_crash_unprotects_when_no_keeper_runs():
    acked = (Acked("A", frozenset({0, 1})),)
    # 1 crashes but kept A on disk; 0 still runs
    assert ghost.crash(acked, 1, E, (True, False)) is acked
    # 1 crashes losing A; 0 runs
    assert ghost.crash(acked, 1, frozenset({"A"}), (True, False)) == (Acked("A", frozenset({0})),)
    # the last running keeper crashes: outside the promise for good
    assert ghost.crash(acked, 0, E, (False, False)) == (Acked("A", E),)


def test_ghost_a_value_committed_again_reenters_the_promise_once():
    """A leader that kept a lower HW (ElectionHw kept) passes a record again:
    outside the promise, it enters it anew; still protected, it keeps its
    keepers; never twice in the ghost."""
    logs = ((Record(NO_EPOCH, "A"),), (Record(NO_EPOCH, "A"),))
    out = (Acked("A", E),)
    assert ghost.acknowledge(out, ["A"], frozenset({0, 1}), logs) == (Acked("A", frozenset({0, 1})),)
    kept = (Acked("A", frozenset({1})),)
    assert ghost.acknowledge(kept, ["A"], frozenset({0, 1}), logs) == kept


def test_ghost_a_clean_stop_keeps_the_promise():
    acked = (Acked("A", frozenset({0, 1})),)
    # both keepers stop, 1 cleanly: A stays protected (1 is up for the promise)
    up = ghost.up_of((False, False), frozenset({1}))
    assert up == (False, True)
    assert ghost.crash(acked, 0, E, up) is acked
    assert ghost.up_of((True, False), E) == (True, False)


def test_controlled_shutdowns_alone_lose_a_record_under_the_promise_hw_truncation():
    """Three brokers, clean stops only (0.8, registration): broker-1 truncates
    A away on restart but the leader still counts its stale fetch, so A is
    acknowledged with broker-0 its only holder; broker-0 shuts down cleanly,
    broker-1 wins the election and broker-0 truncates to its HW on restart.
    broker-0 is up for the promise (down after a clean stop, holding A on
    disk), so the election breaks LeaderCompleteness; the old ghost had
    dropped A from the promise at broker-0's stop, and no invariant failed."""
    m = ZkModel("hw_truncation", {"BrokerCount": 3, "ReplicationFactor": 3, "PowerLossLimit": 0,
                                  "ControlledShutdownLimit": 2})
    pr = preds(m)
    s = run(m, ("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1),
            ("HandleFetch", 0, 1), ("ControlledShutdown", 1), ("Restart", 1), ("ShrinkIsr", 0, 2),
            ("ControlledShutdown", 0))
    assert s.acked == (Acked("A", frozenset({0})),) and s.clean_down == {0}
    s = run(m, ("ElectLeader", 1), state=s)
    assert s.acked == (Acked("A", frozenset({0})),)  # out of the ISR, down cleanly: still kept
    assert not pr["LeaderCompleteness"](s)
    s = run(m, ("Restart", 0), ("HandleFetch", 1, 0), ("ReceiveFetchResponse", 0), state=s)
    assert all(r.value != "A" for b in m.replicas for r in s.log[b])  # gone
    # back up outside the ISR, broker-0 keeps nothing for the promise
    assert s.acked == (Acked("A", E),)


def test_ghost_restrict_and_gain():
    acked = (Acked("A", frozenset({0, 1})), Acked("B", E))
    assert ghost.restrict(acked, frozenset({0}), (True, True)) == (
        Acked("A", frozenset({0})), Acked("B", E))
    assert ghost.restrict(acked, frozenset({1}), (True, False)) == (Acked("A", E), Acked("B", E))
    one = (Acked("A", frozenset({0})), Acked("B", E))
    assert ghost.gain(one, 1, frozenset({"A", "B"})) == (
        Acked("A", frozenset({0, 1})), Acked("B", E))  # never revives an unprotected one
    assert ghost.acknowledge((), ["A"], frozenset({0, 1}), (rec("A"), ())) == (
        Acked("A", frozenset({0})),)


# ---- model-level results ----------------------------------------------------------------

@pytest.mark.parametrize("variant", ["hw_truncation", "leader_epoch"])
def test_the_znode_version_check_stops_a_zombie_leader(variant):
    """A leader whose ZooKeeper session expired keeps running. With the
    conditional ISR update it cannot shrink the ISR to commit alone; with a
    blind write it does, and acknowledges a record the new leader never gets."""
    c = dict(Values=["A"], PowerLossLimit=0, SessionExpiryLimit=1)
    model, props = registry.build("zk", variant, c)
    r = check(model, props)
    assert r.outcome == "pass" and r.exhausted and r.sometimes["SessionExpired"] is not None
    model, props = registry.build("zk", variant, {**c, "ConditionalIsrUpdate": False})
    (v,) = check(model, props).violations
    assert v.property == "LeaderCompleteness" and v.depth == 4
    assert [str(a) for a, _ in v.trace[1:]] == [
        "Produce(0, A)", "ExpireSession(0)", "ElectLeader(1)", "ShrinkIsr(0, 1)"]


def _leader_lacks_a_record_a_down_isr_member_kept(s) -> bool:
    """(test-only) False when the registered leader lacks an acknowledged
    value that a crashed member of the ISR of its ack still has on disk."""
    leader = s.zk_partition.leader
    if leader == NO_LEADER:
        return True
    have = {r.value for r in s.log[leader]}
    for a in s.acked:
        for b in range(len(s.log)):
            if not s.running[b] and a.value not in have and any(r.value == a.value for r in s.log[b]):
                return False
    return True


@pytest.mark.parametrize("variant", ["hw_truncation", "leader_epoch"])
def test_unclean_leader_election_trades_acknowledged_records_for_availability(variant):
    """Kafka's design docs, unclean leader election: "If ... a non-in-sync replica comes back to life and we allow
    it to become leader, then its log becomes the source of truth even though
    it is not guaranteed to have every committed message." The durability
    promise no longer covers such records (no ISR member is alive), so the
    protected properties hold; a leader lacking a record the down ISR member
    still has on disk is reachable only with UncleanLeaderElection. (Prompt
    elections: with one power loss the race alone breaks LeaderCompleteness,
    test_zk_specs.py; specs/zk-leader_epoch-unclean-election.toml has the
    race with process crashes.)"""
    prop = Property("LeaderHasWhatDownIsrKept", ALWAYS, _leader_lacks_a_record_a_down_isr_member_kept)
    for unclean in (False, True):
        model, props = registry.build("zk", variant, dict(Values=["A"], PowerLossLimit=1,
                                                          UncleanLeaderElection=unclean,
                                                          PromptElection=True))
        assert check(model, props).outcome == "pass"
        r = check(model, [prop])
        if unclean:
            (v,) = r.violations
            assert [str(a) for a, _ in v.trace[1:]] == [
                "Produce(0, A)", "ShrinkIsr(0, 1)", "FlushLog(0)", "PowerLoss(0)",
                "UncleanElectLeader(1)"]
        else:
            assert r.outcome == "pass" and r.exhausted


@pytest.mark.parametrize("variant", ["hw_truncation", "leader_epoch"])
def test_no_crash_no_violation_and_every_witness_seen(variant):
    model, props = registry.build("zk", variant, dict(Values=["A"], PowerLossLimit=0,
                                                      SessionExpiryLimit=1))
    r = check(model, props, CheckOptions())
    assert r.outcome == "pass" and r.exhausted
    # no crash: no replica ever truncates below its HW (the new leader holds
    # what the HW passed); every other witness is seen
    assert r.sometimes.pop("TruncatedBelowHw") is None
    assert all(d is not None for d in r.sometimes.values()), r.sometimes
