"""The producer writing to the partition leader (reference: WriteRecordToLeader)."""
from __future__ import annotations

from model.kraft.replica import (
    LEADER, RUNNING, can_advance_hwm, commit_offset, update_hwm_invariant_vars)
from model.kraft.state import (
    INT_MAX, PartitionData, PartitionRecord, broker_min_isr, except_at, with_changes)


def write_record_to_leader(k, s, b, mt, out):
    """WriteRecordToLeader(b): \\E v \\in Values not yet sent: a leader whose
    maximal ISR has MinISR members appends v in its leader epoch (Acks = 1:
    any leader, and v is acknowledged in the same step).

    Quirks kept while ReferenceQuirks (the default): the HWM / ack / consumed
    bookkeeping reads the pre-write log, inv_sent and floor leader offset (so
    v itself is never acked in this step), and GetCommitOffset sees the
    pre-write LEO (quirks 5 and 6). ReferenceQuirks = false fixes both.
    """
    i = b - 1
    if s.broker_state[i].status != RUNNING or s.partition_status[i] != LEADER:
        return
    md = s.partition_metadata[i]
    # Kafka checks min.insync.replicas for acks=all only (Partition.appendRecordsToLeader)
    if k.acks_all and len(md.maximal_isr) < broker_min_isr(k, s, b):
        return
    sent = s.inv_sent
    unsent = [v for v in k.values if v not in sent]
    if not unsent:
        return
    if not k.acks_all:
        _write_acks_one(k, s, b, unsent, out)
        return
    if not k.reference_quirks:
        _write_as_kafka(k, s, b, md, unsent, out)
        return
    _write_with_quirks(k, s, b, unsent, out)


def _write_with_quirks(k, s, b, unsent, out):
    """The append with the reference's ack bookkeeping (quirks 5 and 6)."""
    i = b - 1
    md = s.partition_metadata[i]
    sent = s.inv_sent
    act = k.acts["WriteRecordToLeader"][b]
    d = s.partition_data[i]
    new_leo = d.leo + 1
    old_hwm = d.hwm
    new_hwm = commit_offset(s, b, md.maximal_isr, new_leo, s.partition_replica_state[i]) + 1
    if not can_advance_hwm(k, s, b, md.isr, old_hwm, new_hwm):
        new_hwm = old_hwm
    ch_hwm = {}
    if new_hwm > old_hwm:
        update_hwm_invariant_vars(k, s, b, old_hwm, new_hwm, True, ch_hwm)
    new_flo = except_at(s.aux_flo, b, d.leo) if s.aux_flo[i] == INT_MAX else s.aux_flo
    for v in unsent:
        data = PartitionData(d.log + (PartitionRecord(md.leader_epoch, d.leo, v),),
                             new_hwm if new_hwm > old_hwm else old_hwm, new_leo)
        out.append((act, with_changes(s, dict(partition_data=except_at(s.partition_data, b, data),
                                    inv_sent=sent.union((v,)), aux_flo=new_flo, **ch_hwm))))


def _write_acks_one(k, s, b, unsent, out):
    """Acks = 1: the write as with acks=all, then the leader acknowledges v at
    once (before any follower has it), so v is positively acked and never
    negatively; the HWM still only moves as the ISR replicates."""
    start = len(out)
    if k.reference_quirks:
        _write_with_quirks(k, s, b, unsent, out)
    else:
        _write_as_kafka(k, s, b, s.partition_metadata[b - 1], unsent, out)
    for j in range(start, len(out)):
        act, t = out[j]
        v = next(iter(t.inv_sent - s.inv_sent))
        out[j] = (act, with_changes(t, dict(inv_pos_acked=t.inv_pos_acked | {v})))


def _write_as_kafka(k, s, b, md, unsent, out):
    """WriteRecordToLeader without quirks 5 and 6 (ReferenceQuirks = false):
    Kafka appends first (Partition.appendRecordsToLeader), then tries to move
    the HWM over the new log end (maybeIncrementLeaderHW), so every read of
    the bookkeeping - GetCommitOffset's LEO, the acks, the consumed records -
    sees the log with v in it: with a sole-member ISR and MinISR = 1 the
    record is committed and acknowledged in its own write."""
    i = b - 1
    act = k.acts["WriteRecordToLeader"][b]
    d = s.partition_data[i]
    new_leo = d.leo + 1
    old_hwm = d.hwm
    new_flo = except_at(s.aux_flo, b, d.leo) if s.aux_flo[i] == INT_MAX else s.aux_flo
    for v in unsent:
        data = PartitionData(d.log + (PartitionRecord(md.leader_epoch, d.leo, v),), old_hwm, new_leo)
        t = with_changes(s, dict(partition_data=except_at(s.partition_data, b, data),
                                 inv_sent=s.inv_sent.union((v,)), aux_flo=new_flo))
        new_hwm = commit_offset(t, b, md.maximal_isr, new_leo, s.partition_replica_state[i]) + 1
        if can_advance_hwm(k, s, b, md.isr, old_hwm, new_hwm):
            ch = {"partition_data": except_at(t.partition_data, b, data._replace(hwm=new_hwm))}
            update_hwm_invariant_vars(k, t, b, old_hwm, new_hwm, True, ch)
            t = with_changes(t, ch)
        out.append((act, t))
