"""Each kraft invariant holds on the initial state and fails on a hand-built
state that breaks it (and, where the reference has an escape clause, holds on
a near miss that uses it). Both variants; the initial state is the model's.

Configuration: 3 brokers, RF 3, MinISR 2, initial ISR {1, 2} (broker 3 starts
fenced and stale), Values {A, B}.
"""
from __future__ import annotations

import pytest

from checker.search.registry import build
from invariants.kraft import INVARIANT_NAMES, WITNESS_NAMES
from model.base import ALWAYS, SOMETIMES
from model.kraft.state import (
    NO_LEADER,
    BrokerFetcher,
    BrokerStatus,
    Kip966Ctrs,
    PartitionData,
    PartitionFetchState,
    PartitionRecord,
    PeerReplicaState,
    RegStatus,
    Role,
    V35Ctrs,
    except_at,
)

COMMON = dict(BrokerCount=3, InitReplicationFactor=3, Values=["A", "B"], MinISR=2,
              InitIsrSize=2, FenceBrokerLimit=1, LeaderShrinkIsrLimit=0, ReassignmentLimit=0)
CONSTANTS = {
    "kip966": dict(COMMON, NoDataLossShutdownLimit=0, DataLossShutdownLimit=1),
    "v3_5": dict(COMMON, CleanShutdownLimit=0, UncleanShutdownLimit=1,
                 AvoidLastReplicaStanding=True),
}

A1 = PartitionRecord(epoch=1, offset=1, value="A")
B1 = PartitionRecord(epoch=1, offset=1, value="B")


class Setup:
    def __init__(self, variant):
        self.variant = variant
        self.model, props = build("kraft", variant, CONSTANTS[variant])
        self.props = {p.name: p for p in props}
        self.order = [p.name for p in props]
        self.init = next(iter(self.model.init_states()))

    def holds(self, name, state) -> bool:
        return self.props[name].predicate(state)


@pytest.fixture(scope="module", params=["kip966", "v3_5"])
def k(request):
    return Setup(request.param)


# ---- small state editors ---------------------------------------------------

def con_md(s, **kw):
    return s._replace(con_partition_metadata=s.con_partition_metadata._replace(**kw))


def replica_md(s, b, **kw):
    return s._replace(partition_metadata=except_at(
        s.partition_metadata, b, s.partition_metadata[b - 1]._replace(**kw)))


def log_of(s, b, log, hwm=None):
    """Broker b's log set to `log` (LEO follows), HWM given or unchanged."""
    old = s.partition_data[b - 1]
    d = PartitionData(log=tuple(log), hwm=old.hwm if hwm is None else hwm, leo=len(log) + 1)
    return s._replace(partition_data=except_at(s.partition_data, b, d))


def status_of(s, b, status):
    return s._replace(broker_state=except_at(
        s.broker_state, b, s.broker_state[b - 1]._replace(status=status)))


def fetcher(s, b, b1, on: bool):
    p = PartitionFetchState(fetch_offset=1, last_fetched_epoch=0, delayed=False) if on else None
    row = except_at(s.broker_fetchers[b - 1], b1, BrokerFetcher(partition=p, pending_response=False))
    return s._replace(broker_fetchers=except_at(s.broker_fetchers, b, row))


def reg_status(s, b, status):
    return s._replace(con_broker_reg=except_at(
        s.con_broker_reg, b, s.con_broker_reg[b - 1]._replace(status=status)))


def fence(s, b):
    return reg_status(s, b, RegStatus.FENCED)._replace(con_unfenced=s.con_unfenced - {b})


# ---- the initial state -----------------------------------------------------

def test_the_configuration_is_as_the_cases_assume(k):
    s = k.init
    md = s.con_partition_metadata
    assert (md.replicas, md.isr, md.leader, md.leader_epoch) == ({1, 2, 3}, {1, 2}, 1, 1)
    assert s.partition_status == (Role.Leader, Role.Follower, Role.Follower)
    assert s.con_unfenced == {1, 2}
    assert all(d.log == () and d.hwm == 1 and d.leo == 1 for d in s.partition_data)


def test_every_invariant_holds_initially(k):
    for name in INVARIANT_NAMES:
        if name in k.props:
            assert k.holds(name, k.init), name


def test_no_witness_holds_initially(k):
    for name in WITNESS_NAMES:
        if name in k.props:
            assert not k.holds(name, k.init), name


def test_properties_and_their_order(k):
    kip = k.variant == "kip966"
    cfg = ["LeaderCompletenessProperty", "LeaderCandidateCompletenessProperty",
           "ReplicationQuorumSupersetProperty", "LogMatchingProperty",
           "MetadataLogMatchingProperty", "ConsistentReadProperty"]
    cfg += ["MinIsrRecoveryQuorum"] if kip else []
    cfg += ["NoCommittedRecordLostGlobally"]
    cfg += ["RecoveryQuorumAtLeastMinIsr"] if kip else []
    validity = ["TypeOK", "ValidBrokerState", "ValidReplicaState", "ValidFetcherState",
                "ValidControllerState"] + (["ValidControllerIsrAndElr"] if kip else [])
    sometimes = ["RecordCommitted", "LeaderChanged", "UncleanShutdownHappened"] + (
        ["ElrNonEmpty"] if kip else []) + ["CandidateLostCommittedRecord", "ReassignmentPending",
                                           "ReassignmentCompleted", "ReassignedAndUncleanShutdown",
                                           "RecordConsumed", "NackedRecordConsumed"]
    assert k.order == cfg + validity + sometimes
    assert all(k.props[n].kind == ALWAYS for n in cfg + validity)
    assert all(k.props[n].kind == SOMETIMES for n in sometimes)
    assert all(k.props[n].doc for n in k.order)


# ---- completeness ----------------------------------------------------------

def test_leader_completeness(k):
    name = "LeaderCompletenessProperty"
    s = k.init._replace(inv_true_hwm=2)      # committed offset 1, leader 1 has nothing
    assert not k.holds(name, s)
    s = log_of(s, 1, [A1], hwm=2)
    assert k.holds(name, s)
    assert not k.holds(name, s._replace(inv_pos_acked=frozenset({"B"})))  # acked B not in its log
    assert k.holds(name, s._replace(inv_pos_acked=frozenset({"A"})))
    # no leader, or a leader that is not RUNNING: cannot be verified, TRUE
    empty = k.init._replace(inv_true_hwm=2)
    assert k.holds(name, con_md(empty, leader=NO_LEADER))
    assert k.holds(name, status_of(empty, 1, BrokerStatus.STARTING))
    # nothing committed: TRUE whatever the logs
    assert k.holds(name, k.init._replace(inv_pos_acked=frozenset({"B"})))


def test_leader_candidate_completeness(k):
    name = "LeaderCandidateCompletenessProperty"
    s = log_of(k.init, 1, [A1], hwm=2)._replace(inv_true_hwm=2)  # ISR {1, 2}: 2 misses A
    assert not k.holds(name, s)
    assert k.holds(name, status_of(s, 2, BrokerStatus.OFFLINE_DIRTY))  # only RUNNING ones count
    assert k.holds(name, con_md(s, isr=frozenset({1})))
    if k.variant == "kip966":  # the ELR is an election quorum too
        assert not k.holds(name, con_md(s, isr=frozenset({1}), elr=frozenset({2})))


def test_replication_quorum_superset(k):
    name = "ReplicationQuorumSupersetProperty"
    # no pending AlterPartition: maximal ISR must equal the ISR
    s = replica_md(k.init, 1, maximal_isr=frozenset({1, 2, 3}))
    assert not k.holds(name, s)
    pending = s._replace(partition_pending_ap=except_at(
        s.partition_pending_ap, 1, s.partition_pending_ap[0]._replace(epoch=99)))
    assert k.holds(name, pending)
    # the controller ISR outgrows the leader's maximal ISR
    s = con_md(k.init, isr=frozenset({1, 2, 3}))
    assert not k.holds(name, s)
    # a stale leader is not checked
    assert k.holds(name, replica_md(s, 1, leader_epoch=0))
    # leader ISR below MinISR: kip966 does not require the superset, v3_5 does
    small = replica_md(k.init, 1, isr=frozenset({1}), maximal_isr=frozenset({1}))
    assert k.holds(name, small) == (k.variant == "kip966")
    if k.variant == "kip966":
        assert not k.holds(name, con_md(k.init, isr=frozenset({1}), elr=frozenset({3})))


def test_min_isr_recovery_quorum(k):
    if k.variant != "kip966":
        assert "MinIsrRecoveryQuorum" not in k.props
        return
    name = "MinIsrRecoveryQuorum"
    s = con_md(k.init, isr=frozenset(), elr=frozenset(), last_known_elr=frozenset({1}))
    assert not k.holds(name, s)
    assert k.holds(name, con_md(s, last_known_elr=frozenset({1, 2})))
    assert k.holds(name, con_md(s, elr=frozenset({3})))


def test_no_committed_record_lost_globally(k):
    name = "NoCommittedRecordLostGlobally"
    s = k.init._replace(inv_pos_acked=frozenset({"A"}))
    assert not k.holds(name, s)
    assert k.holds(name, log_of(s, 3, [A1]))
    assert not k.holds(name, log_of(s, 3, [B1]))


# ---- log matching ----------------------------------------------------------

def test_log_matching(k):
    name = "LogMatchingProperty"
    s = log_of(log_of(k.init, 1, [A1], hwm=2), 2, [B1], hwm=2)
    assert not k.holds(name, s)
    assert k.holds(name, log_of(s, 2, [B1], hwm=1))  # B1 is not stable on broker 2
    assert k.holds(name, log_of(s, 2, [A1], hwm=2))


def test_metadata_log_matching(k):
    name = "MetadataLogMatchingProperty"
    con = k.init.con_metadata_log
    bad = (con[0]._replace(leader_epoch=5),)
    s = k.init._replace(broker_metadata_log=except_at(k.init.broker_metadata_log, 2, bad))
    assert not k.holds(name, s)
    longer = con + (con[0]._replace(leader_epoch=2),)  # ahead of the controller: prefix compared
    assert k.holds(name, k.init._replace(
        broker_metadata_log=except_at(k.init.broker_metadata_log, 2, longer)))


def test_consistent_read(k):
    name = "ConsistentReadProperty"
    s = k.init._replace(inv_consumed=(A1,))
    assert not k.holds(name, s)                     # the leader's log lacks offset 1
    assert k.holds(name, log_of(s, 1, [A1]))
    assert not k.holds(name, log_of(s, 1, [B1]))    # a different record at offset 1
    assert k.holds(name, replica_md(log_of(s, 1, [B1]), 1, leader_epoch=0))  # stale leader


# ---- validity --------------------------------------------------------------

def test_type_ok(k):
    name = "TypeOK"
    s = k.init
    other_ctrs = (V35Ctrs if k.variant == "kip966" else Kip966Ctrs)(*s.aux_ctrs)
    bad = [
        s._replace(con_unfenced=frozenset({4})),
        s._replace(con_broker_reg=s.con_broker_reg[:2]),
        s._replace(partition_status=(Role.Leader, "Follower", None)),
        s._replace(aux_ctrs=other_ctrs),
        s._replace(inv_sent=frozenset({"C"})),
        s._replace(partition_replica_state=except_at(s.partition_replica_state, 1, (
            PeerReplicaState(leo=-1, broker_epoch=0),) + s.partition_replica_state[0][1:])),
        con_md(s, leader=7),
        status_of(s, 1, "RUNNING"),
    ]
    for i, state in enumerate(bad):
        assert not k.holds(name, state), i
    # the per-variable identity memo must not remember a bad value as good
    assert k.holds(name, s)
    assert not k.holds(name, bad[0])
    assert k.holds(name, s._replace(inv_sent=frozenset({"A", "B"})))
    assert k.holds(name, con_md(s, leader=NO_LEADER))
    # v3_5 controller metadata has no ELR fields: ours must stay empty
    assert k.holds(name, con_md(s, elr=frozenset({3}))) == (k.variant == "kip966")


def test_type_ok_parts(k):
    """TypeOK by parts (what the engines run on a successor: the parts of the
    variables its step changed): one part per typed variable, reading only it,
    whose conjunction is TypeOK; each ill-typed state fails the part of the
    variable it changed, and only that one."""
    prop = k.props["TypeOK"]
    parts = {reads: pred for reads, pred in prop.parts}
    assert all(len(reads) == 1 for reads in parts)
    assert {v for (v,) in parts} == set(prop.reads)
    s = k.init
    bad = {
        "con_unfenced": s._replace(con_unfenced=frozenset({4})),
        "con_broker_reg": s._replace(con_broker_reg=s.con_broker_reg[:2]),
        "partition_status": s._replace(partition_status=(Role.Leader, "Follower", None)),
        "inv_neg_acked": s._replace(inv_neg_acked=frozenset({"C"})),
        "con_partition_metadata": con_md(s, leader=7),
        "broker_state": status_of(s, 1, "RUNNING"),
    }
    for variable, state in bad.items():
        failed = {v for (v,), pred in parts.items() if not pred(state)}
        assert failed == {variable}
        assert not prop.predicate(state)
    assert all(pred(s) for pred in parts.values()) and prop.predicate(s)


def test_valid_broker_state(k):
    s = k.init._replace(broker_state=except_at(
        k.init.broker_state, 2, k.init.broker_state[1]._replace(registered=False)))
    assert not k.holds("ValidBrokerState", s)
    assert k.holds("ValidBrokerState", status_of(s, 2, BrokerStatus.STARTING))


def test_valid_replica_state(k):
    name = "ValidReplicaState"
    assert not k.holds(name, replica_md(k.init, 1, leader=2))        # leader 1 thinks 2 leads
    assert k.holds(name, replica_md(k.init, 2, leader=3))            # a follower may
    wrong_leo = k.init._replace(partition_data=except_at(
        k.init.partition_data, 2, PartitionData(log=(), hwm=1, leo=2)))
    assert not k.holds(name, wrong_leo)
    assert not k.holds(name, log_of(k.init, 2, [A1._replace(offset=2)]))
    assert k.holds(name, log_of(k.init, 2, [A1, B1._replace(offset=2)]))


def test_valid_fetcher_state(k):
    name = "ValidFetcherState"
    assert not k.holds(name, fetcher(k.init, 1, 2, True))   # a leader fetching
    assert not k.holds(name, fetcher(k.init, 2, 1, False))  # a follower not fetching
    assert not k.holds(name, fetcher(k.init, 2, 3, True))   # two fetchers
    assert not k.holds(name, fetcher(k.init, 2, 2, True))   # b2 may be b itself
    # a broker that is no replica (status Nil) may fetch from one peer or none
    nil3 = k.init._replace(partition_status=except_at(k.init.partition_status, 3, None))
    assert k.holds(name, fetcher(nil3, 3, 1, False))


def test_valid_controller_state(k):
    name = "ValidControllerState"
    kip = k.variant == "kip966"
    assert not k.holds(name, k.init._replace(con_unfenced=frozenset({1})))   # 2 UNFENCED
    assert not k.holds(name, reg_status(k.init, 3, RegStatus.UNFENCED))     # 3 not in the set
    assert not k.holds(name, k.init._replace(con_unfenced=frozenset({1, 2, 3})))
    fenced2 = fence(k.init, 2)  # fenced, still in the ISR {1, 2}
    assert not k.holds(name, fenced2)
    # a fenced sole ISR member: kip966 forbids it, v3_5 allows it (Last Replica Standing)
    assert k.holds(name, con_md(fenced2, isr=frozenset({2}), leader=NO_LEADER)) == (not kip)
    # v3_5: the ISR is never empty
    assert k.holds(name, con_md(k.init, isr=frozenset(), leader=NO_LEADER)) == kip


def test_valid_controller_isr_and_elr(k):
    if k.variant != "kip966":
        assert "ValidControllerIsrAndElr" not in k.props
        return
    name = "ValidControllerIsrAndElr"
    assert k.holds(name, con_md(k.init, isr=frozenset({1}), elr=frozenset({3})))
    assert not k.holds(name, con_md(k.init, isr=frozenset({1}), elr=frozenset({1})))
    assert not k.holds(name, con_md(k.init, elr=frozenset({3})))          # ISR {1, 2} >= MinISR
    assert not k.holds(name, con_md(k.init, replicas=frozenset({1, 2}), isr=frozenset({1}),
                                    elr=frozenset({3})))
    assert not k.holds(name, con_md(k.init, replicas=frozenset({1, 3})))  # ISR member 2 no replica


# ---- witnesses -------------------------------------------------------------

def test_witnesses(k):
    s = k.init
    assert k.holds("RecordCommitted", s._replace(inv_true_hwm=2))
    assert k.holds("RecordCommitted", s._replace(inv_pos_acked=frozenset({"A"})))
    assert k.holds("LeaderChanged", con_md(s, leader_epoch=2))
    assert k.holds("UncleanShutdownHappened", status_of(s, 3, BrokerStatus.OFFLINE_DIRTY))
    assert not k.holds("UncleanShutdownHappened", status_of(s, 3, BrokerStatus.OFFLINE_CLEAN))
    lossy = "data_loss_shutdown_ctr" if k.variant == "kip966" else "unclean_shutdown_ctr"
    assert k.holds("UncleanShutdownHappened", s._replace(aux_ctrs=s.aux_ctrs._replace(**{lossy: 1})))
    if k.variant == "kip966":
        assert k.holds("ElrNonEmpty", con_md(s, isr=frozenset({1}), elr=frozenset({2})))
    else:
        assert "ElrNonEmpty" not in k.props


# ---- the identity memo -----------------------------------------------------

def test_memo_remembers_only_true_and_only_the_same_objects(k):
    from invariants.kraft.common import memo_true_by_identity

    calls = []

    def Probe(s):
        calls.append(s)
        return s.inv_true_hwm == 1

    for variables in (("inv_true_hwm",), ("inv_true_hwm", "inv_sent"),
                      ("inv_true_hwm", "inv_sent", "inv_consumed")):
        calls.clear()
        p = memo_true_by_identity(Probe, *variables)
        assert p.__name__ == "Probe"
        assert p(k.init) and p(k.init) and len(calls) == 1          # TRUE remembered
        assert p(k.init._replace(aux_flo=(1, 2, 3))) and len(calls) == 1  # unread variable
        bad = k.init._replace(inv_true_hwm=2)
        assert not p(bad) and not p(bad) and len(calls) == 3         # FALSE never remembered
        equal_copy = k.init._replace(inv_sent=frozenset(k.init.inv_sent | {"A"}) - {"A"})
        assert p(equal_copy) and len(calls) == 4 - (len(variables) == 1)  # identity, not equality


def test_predicates_pickle_without_their_memos(k):
    import pickle

    from invariants.kraft.common import Memo

    assert pickle.loads(pickle.dumps(Memo({1: "x"}))) == {}
    try:
        import cloudpickle
    except ImportError:  # pyspark vendors it
        cloudpickle = pytest.importorskip("pyspark.cloudpickle")
    fresh = {name: p for name, p in Setup(k.variant).props.items()}
    sizes = {name: len(cloudpickle.dumps(p.predicate)) for name, p in fresh.items()}
    states = [k.init] + [k.init._replace(inv_true_hwm=h) for h in range(2, 50)]
    for p in fresh.values():
        for s in states:
            p.predicate(s)
    for name, p in fresh.items():
        assert len(cloudpickle.dumps(p.predicate)) == sizes[name], name
        copy = cloudpickle.loads(cloudpickle.dumps(p.predicate))
        assert copy(k.init) == p.predicate(k.init), name
    type_ok = cloudpickle.loads(cloudpickle.dumps(fresh["TypeOK"].predicate))
    assert not type_ok(k.init._replace(con_unfenced=frozenset({4})))
