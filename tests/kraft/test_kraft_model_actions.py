"""Unit tests of the kraft model's actions on small hand-made states.

Each test drives the model from its initial state with named actions (or
edits a state by hand) and checks the effect the reference TLA+ action has,
including how many successors TLC would count for it.
"""
from __future__ import annotations

import pytest

from model.base import Action, EvaluationError
from model.kraft.messages import (
    CONTROLLER, AlterPartitionRequest, EpochOffset, FetchRequest)
from model.kraft.model import KraftModel
from model.kraft.state import (
    NO_LEADER, BrokerStatus, ErrorCode, MsgType, PartitionChangeRecord, PartitionData,
    PartitionFetchState, PartitionRecord, RecordType, RegStatus, Role, except_at)

B2 = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=1, InitIsrSize=2,
          NoDataLossShutdownLimit=0, DataLossShutdownLimit=0, FenceBrokerLimit=0,
          LeaderShrinkIsrLimit=0, ReassignmentLimit=0)


def kip966(**overrides):
    return KraftModel("kip966", {**B2, **overrides})


def v3_5(**overrides):
    c = {**B2, **overrides}
    c["UncleanShutdownLimit"] = c.pop("DataLossShutdownLimit")
    c["CleanShutdownLimit"] = c.pop("NoDataLossShutdownLimit")
    return KraftModel("v3_5", c)


def succ(model, state, name, b=None):
    """All successors of `state` by one action (one per witness)."""
    return model.successors_of(state, Action(name, () if b is None else (b,)))


def step(model, state, name, b=None):
    """The one successor of an action that must have exactly one."""
    out = succ(model, state, name, b)
    assert len(out) == 1, f"{name}({b}): {len(out)} successors"
    return out[0]


def run(model, *steps):
    """Apply (name, broker) steps from the initial state; (name, broker, i)
    takes the i-th of several successors (e.g. which value is written)."""
    s = model.init_states()[0]
    for name, b, *pick in steps:
        s = succ(model, s, name, b)[pick[0]] if pick else step(model, s, name, b)
    return s


def msgs_of(state, t):
    return [m for m in state.messages if m.type == t]


# ---- fetch -----------------------------------------------------------------------

def test_fetch_round_trip_replicates_a_record_and_commits_it():
    m = kip966()
    s = run(m, ("WriteRecordToLeader", 1))
    assert s.partition_data[0] == PartitionData((PartitionRecord(1, 1, "A"),), 1, 2)
    assert s.aux_flo[0] == 1  # the leader's first unacked offset

    s1 = step(m, s, "SendFetchRequest", 2)
    (req,) = msgs_of(s1, MsgType.FetchRequest)
    assert (req.source, req.dest, req.partition.fetch_offset, req.partition.last_fetched_epoch) == (2, 1, 1, 0)
    assert s1.broker_fetchers[1][0].pending_response
    # a successor shares every variable it does not change (the engine relies on it)
    changed = {f for f in s._fields if getattr(s1, f) is not getattr(s, f)}
    assert changed == {"broker_fetchers", "messages"}

    s2 = step(m, s1, "ReceiveFetchRequest", 1)
    assert s2.partition_replica_state[0][1].leo == 1  # the follower's fetch offset
    assert s2.partition_data[0].hwm == 1              # follower not caught up yet
    (resp,) = msgs_of(s2, MsgType.FetchResponse)
    assert resp.partition.records == (PartitionRecord(1, 1, "A"),)
    assert req in s2.messages_discard and req not in s2.messages

    s3 = step(m, s2, "ReceiveFetchResponse", 2)
    assert s3.partition_data[1].leo == 2 and s3.partition_data[1].log == s.partition_data[0].log
    assert s3.broker_fetchers[1][0].partition == PartitionFetchState(2, 1, False)

    s4 = step(m, step(m, s3, "SendFetchRequest", 2), "ReceiveFetchRequest", 1)
    assert s4.partition_replica_state[0][1].leo == 2
    assert s4.partition_data[0].hwm == 2             # now on every maximal-ISR member
    assert s4.inv_pos_acked == {"A"} and s4.inv_true_hwm == 2
    assert s4.inv_consumed == (PartitionRecord(1, 1, "A"),)


def test_converged_follower_does_not_fetch():
    m = kip966()
    s = run(m, ("SendFetchRequest", 2), ("ReceiveFetchRequest", 1), ("ReceiveFetchResponse", 2))
    assert succ(m, s, "SendFetchRequest", 2) == []   # Converged(1, 2)
    assert succ(m, s, "SendFetchRequest", 1) == []   # the leader has no fetcher


def test_follower_with_a_diverging_log_truncates():
    """Leader 1 in epoch 2 holds B@1 (epoch 2); follower 2 holds A@1 (epoch 1).
    The leader answers with diverging epoch (1, end offset 1) and the follower
    truncates its whole log."""
    m = kip966(Values=["A", "B"])
    s = m.init_states()[0]
    md1 = s.partition_metadata[0]._replace(leader_epoch=2)
    md2 = s.partition_metadata[1]._replace(leader_epoch=2)
    s = s._replace(
        partition_metadata=(md1, md2),
        partition_data=(PartitionData((PartitionRecord(2, 1, "B"),), 1, 2),
                        PartitionData((PartitionRecord(1, 1, "A"),), 1, 2)),
        broker_fetchers=except_at(s.broker_fetchers, 2, (
            s.broker_fetchers[1][0]._replace(partition=PartitionFetchState(2, 1, False)),
            s.broker_fetchers[1][1])))
    s = step(m, s, "SendFetchRequest", 2)
    s = step(m, s, "ReceiveFetchRequest", 1)
    (resp,) = msgs_of(s, MsgType.FetchResponse)
    assert resp.partition.error is None and resp.partition.diverging_epoch == EpochOffset(1, 1)
    s = step(m, s, "ReceiveFetchResponse", 2)
    assert s.partition_data[1] == PartitionData((), 1, 1)
    assert s.broker_fetchers[1][0].partition == PartitionFetchState(1, 0, False)


def test_fetch_in_a_stale_leader_epoch_gets_fenced_leader_epoch():
    m = kip966()
    s = m.init_states()[0]
    stale = FetchRequest(MsgType.FetchRequest, 2, req_partition(leader_epoch=0), 1, 2)
    s = step(m, s._replace(messages=frozenset({stale})), "ReceiveFetchRequest", 1)
    (resp,) = msgs_of(s, MsgType.FetchResponse)
    assert resp.partition.error == ErrorCode.FencedLeaderEpoch


def req_partition(leader_epoch=1, fetch_offset=1, last_fetched_epoch=0):
    from model.kraft.messages import FetchRequestPartition
    return FetchRequestPartition(leader_epoch, fetch_offset, last_fetched_epoch)


# ---- AlterPartition -----------------------------------------------------------------

REF = dict(BrokerCount=3, InitReplicationFactor=3, MinISR=2, InitIsrSize=2)  # the .cfg's shape


def alter_partition(s, isr, partition_epoch=None, epochs=None):
    """Leader 1's AlterPartitionRequest proposing `isr` (epochs: the broker
    epochs sent for added members; current members send 0)."""
    md = s.con_partition_metadata
    epochs = {1: 1, **(epochs or {})}
    return AlterPartitionRequest(
        MsgType.AlterPartitionRequest, frozenset(isr),
        tuple((b, epochs.get(b, 0)) for b in sorted(isr)),
        1, md.leader_epoch, md.partition_epoch if partition_epoch is None else partition_epoch,
        1, 1, CONTROLLER)


def receive_ap(m, s, request):
    out = succ(m, s._replace(messages=frozenset({request})), "ReceiveAlterPartitionRequest", 1)
    assert len(out) == 1
    t = out[0]
    (resp,) = msgs_of(t, MsgType.AlterPartitionResponse)
    assert resp.request == request and request in t.messages_discard
    return t, resp


def test_alter_partition_with_a_stale_partition_epoch_is_rejected():
    m = kip966(**REF)
    s = m.init_states()[0]
    t, resp = receive_ap(m, s, alter_partition(s, {1}, partition_epoch=1))  # controller is at 2
    assert resp.error == ErrorCode.FencedLeaderEpoch
    assert t.con_partition_metadata is s.con_partition_metadata
    assert t.con_metadata_log is s.con_metadata_log


def test_alter_partition_adding_a_fenced_broker_is_ineligible():
    m = kip966(**REF)
    s = m.init_states()[0]  # broker 3 starts fenced
    t, resp = receive_ap(m, s, alter_partition(s, {1, 2, 3}, epochs={1: 1, 3: 3}))
    assert resp.error == ErrorCode.IneligibleReplica
    assert t.con_partition_metadata is s.con_partition_metadata


def test_accepted_shrink_below_min_isr_moves_the_member_to_the_elr():
    m = kip966(**REF)
    s = m.init_states()[0]
    t, resp = receive_ap(m, s, alter_partition(s, {1}))
    md = t.con_partition_metadata
    assert resp.error is None and (resp.isr, resp.leader, resp.partition_epoch) == ({1}, 1, 3)
    assert (md.isr, md.elr, md.leader, md.leader_epoch, md.partition_epoch) == ({1}, {2}, 1, 1, 3)
    assert t.con_metadata_log[-1] == PartitionChangeRecord(
        RecordType.PartitionChangeRecord, frozenset({1}), frozenset({2}), 1, 1, 3,
        frozenset({1, 2, 3}), frozenset(), frozenset(), frozenset())
    # v3.5 has no ELR
    v = v3_5(**REF)
    s = v.init_states()[0]
    t, _ = receive_ap(v, s, alter_partition(s, {1}))
    assert t.con_partition_metadata.elr == frozenset()


def test_leader_shrink_enumerates_every_timed_out_subset():
    m = kip966(BrokerCount=3, InitReplicationFactor=3, MinISR=2, InitIsrSize=3,
               LeaderShrinkIsrLimit=1)
    s = m.init_states()[0]
    out = succ(m, s, "SendAlterPartitionRequest", 1)
    # timed-out subsets of {2, 3}: {} proposes the current ISR and is disabled
    proposed = sorted(sorted(t.partition_pending_ap[0].request.isr) for t in out)
    assert proposed == [[1], [1, 2], [1, 3]]
    for t in out:
        assert t.partition_metadata[0].maximal_isr == {1, 2, 3}  # ISR superset kept
        assert t.aux_ctrs.leader_shrink_isr_ctr == 1
        assert t.partition_pending_ap[0].epoch == s.partition_metadata[0].partition_epoch + 1
    # with the budget spent only growth is possible, and nothing can grow here
    spent = s._replace(aux_ctrs=s.aux_ctrs._replace(leader_shrink_isr_ctr=1))
    assert succ(m, spent, "SendAlterPartitionRequest", 1) == []


# ---- metadata -----------------------------------------------------------------------

def test_leader_reelected_in_a_new_epoch_is_generated_twice():
    """PartitionNeedsAction is a disjunction in action position: for a leader
    whose record bumps the leader epoch both disjuncts hold, and TLC explores
    the rest of ReceiveMetadataUpdate once per disjunct."""
    m = kip966()
    s = run(m, ("WriteRecordToLeader", 1))
    md = s.con_partition_metadata._replace(leader_epoch=2, partition_epoch=2)
    record = PartitionChangeRecord(RecordType.PartitionChangeRecord, md.isr, md.elr, 1, 2, 2,
                                   md.replicas, md.last_known_elr, md.adding, md.removing)
    s = s._replace(con_partition_metadata=md, con_metadata_log=s.con_metadata_log + (record,))
    leader = succ(m, s, "ReceiveMetadataUpdate", 1)
    assert len(leader) == 2 and leader[0] == leader[1]
    t = leader[0]
    assert t.partition_status[0] == Role.Leader and t.partition_leso[0] == 2  # LESO = LEO
    assert t.partition_metadata[0].leader_epoch == 2
    follower = succ(m, s, "ReceiveMetadataUpdate", 2)
    assert len(follower) == 1
    f = follower[0]
    assert f.partition_status[1] == Role.Follower and f.partition_leso[1] is None
    assert f.broker_fetchers[1][0].partition == PartitionFetchState(1, 0, False)


# ---- faults -------------------------------------------------------------------------

def test_data_loss_shutdown_loses_the_log_and_is_fenced_in_the_same_step():
    m = kip966(**REF, DataLossShutdownLimit=1)
    s = run(m, ("WriteRecordToLeader", 1))
    (t,) = succ(m, s, "DataLossShutdown", 1)
    assert t.broker_state[0].status == BrokerStatus.OFFLINE_DIRTY and t.broker_state[0].broker_epoch == 0
    assert t.partition_data[0] == PartitionData((), 1, 1) and t.partition_leso[0] is None
    assert t.con_broker_reg[0].status == RegStatus.FENCED and 1 not in t.con_unfenced
    md = t.con_partition_metadata
    # ISR {2} < MinISR: the lost broker goes to the ELR (not trimmed), 2 leads
    assert (md.isr, md.elr, md.leader, md.leader_epoch) == ({2}, {1}, 2, 2)
    assert t.inv_neg_acked == {"A"}  # the unacked write fails
    assert succ(m, t, "DataLossShutdown", 2) == []  # limit reached


def test_no_data_loss_shutdown_chooses_clean_or_not():
    m = kip966(**REF, NoDataLossShutdownLimit=1)
    s = m.init_states()[0]
    out = succ(m, s, "NoDataLossShutdown", 2)
    assert [t.broker_state[1].broker_epoch for t in out] == [0, 2]  # FALSE, TRUE
    for t in out:
        assert t.broker_state[1].status == BrokerStatus.OFFLINE_CLEAN
        assert t.partition_data[1] is s.partition_data[1]       # the log survives
        assert t.con_partition_metadata.isr == {1}
    # restarting with epoch 0 is unclean for the controller (ProcessUncleanBroker)
    unclean = step(m, out[0], "BrokerStart", 2)
    (req,) = msgs_of(unclean, MsgType.RegisterBrokerRequest)
    assert req.broker_epoch == 0


def test_v3_5_avoid_last_replica_standing_guards_the_sole_isr_member():
    steps = [("WriteRecordToLeader", 1), ("FenceBroker", 2)]
    guarded = v3_5(DataLossShutdownLimit=1, FenceBrokerLimit=1)
    s = run(guarded, *steps)
    assert s.con_partition_metadata.isr == {1}
    assert succ(guarded, s, "UncleanShutdown", 1) == []
    assert len(succ(guarded, s, "UncleanShutdown", 2)) == 1
    lrs = KraftModel("v3_5", {**guarded.constants, "AvoidLastReplicaStanding": False})
    assert len(succ(lrs, run(lrs, *steps), "UncleanShutdown", 1)) == 1


def test_v3_5_fencing_never_empties_the_isr():
    m = v3_5(FenceBrokerLimit=2)
    s = run(m, ("FenceBroker", 2), ("FenceBroker", 1))
    md = s.con_partition_metadata
    assert md.isr == {1} and md.leader == NO_LEADER
    k = kip966(FenceBrokerLimit=2)
    s = run(k, ("FenceBroker", 2), ("FenceBroker", 1))
    assert k.min_isr == 1 and s.con_partition_metadata.isr == frozenset()


# ---- reassignment -------------------------------------------------------------------

def test_reassignment_with_adding_and_removing_is_generated_twice():
    m = kip966(BrokerCount=3, ReassignmentLimit=1)
    s = m.init_states()[0]
    out = succ(m, s, "PerformPartitionReassignment")
    key = lambda t: (t.con_partition_metadata.adding, t.con_partition_metadata.removing)
    counts = {}
    for t in out:
        counts[key(t)] = counts.get(key(t), 0) + 1
    assert counts[(frozenset({3}), frozenset({2}))] == 2   # adding # {} \/ removing # {}: both hold
    assert counts[(frozenset({3}), frozenset())] == 1
    # removing 2 alone completes at once (ISR {1} >= MinISR 1), same leader, new epoch
    done = [t for t in out if t.con_partition_metadata.replicas == {1}]
    assert len(done) == 1 and done[0].con_partition_metadata.leader_epoch == 2
    assert all(t.aux_ctrs.reassignment_ctr == 1 for t in out)


# ---- evaluation errors --------------------------------------------------------------

def test_commit_past_the_pre_write_log_is_an_evaluation_error():
    """MinISR 1, leader alone in the ISR, a second value: WriteRecordToLeader's
    SubSeq over the pre-write log leaves its domain, where TLC stops."""
    m = kip966(Values=["A", "B"], FenceBrokerLimit=1)
    s = run(m, ("WriteRecordToLeader", 1, 0), ("FenceBroker", 2), ("ReceiveMetadataUpdate", 1))
    assert s.inv_pos_acked == {"A"} and s.partition_data[0].hwm == 2
    with pytest.raises(EvaluationError) as err:
        m.successors(s)
    assert err.value.action == Action("WriteRecordToLeader", (1,))
    assert err.value.state is s
    assert "WriteRecordToLeader(1)" in str(err.value) and "SubSeq" in str(err.value)


# ---- canonical form -------------------------------------------------------------------

def test_from_plain_rebuilds_states_of_every_message_kind():
    encoding = pytest.importorskip("checker.search.encoding")
    m = kip966(BrokerCount=3, FenceBrokerLimit=1, DataLossShutdownLimit=1, LeaderShrinkIsrLimit=1,
               Values=["A"])
    frontier = m.init_states()
    seen = set(frontier)
    kinds = set()
    for _ in range(7):
        nxt = []
        for s in frontier:
            for _, t in m.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    for s in seen:
        kinds.update(msg.type for msg in s.messages | s.messages_discard)
        plain = encoding.decode_state(encoding.parts_to_bytes(encoding.encode_state(s)))
        back = m.from_plain(plain)
        assert back == s
        assert encoding.encode_state(back) == encoding.encode_state(s)
    assert kinds == set(MsgType)
