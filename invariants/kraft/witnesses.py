"""`sometimes` witnesses: the states the invariants are about do get reached.

An invariant that holds because nothing was ever committed, no leader ever
changed or no broker ever lost its disk proves little. Each witness below is
reported with the depth where it was first seen, or as never witnessed.
These are kmc's own (the reference has no such properties).
"""
from __future__ import annotations

from model.kraft.state import BrokerStatus, Kip966Ctrs, StorageCtrs, V35Ctrs

from invariants.kraft.common import KIP966, KraftContext

OFFLINE_DIRTY = BrokerStatus.OFFLINE_DIRTY


def fetch_outlived_sender(ctx: KraftContext):
    """FetchOutlivedSender: a fetch request in flight names a broker epoch its
    sender no longer has (it stopped, maybe restarted, since it sent it)."""
    from model.kraft.state import MsgType
    fetch = MsgType.FetchRequest

    def FetchOutlivedSender(s) -> bool:
        states = s.broker_state
        return any(m[0] == fetch and states[m.source - 1].broker_epoch != m.broker_epoch
                   for m in s.messages)

    return FetchOutlivedSender


def record_committed(ctx: KraftContext):
    """RecordCommitted: the True HWM advanced past offset 1, or a value was
    positively acked (the completeness invariants' IF inv_true_hwm > 1 branch
    is exercised)."""

    def RecordCommitted(s) -> bool:
        return s.inv_true_hwm > 1 or bool(s.inv_pos_acked)

    return RecordCommitted


def leader_changed(ctx: KraftContext, initial_leader_epoch: int):
    """LeaderChanged: the controller elected again (its leader epoch is above
    the initial state's)."""

    def LeaderChanged(s) -> bool:
        return s.con_partition_metadata.leader_epoch > initial_leader_epoch

    return LeaderChanged


def unclean_shutdown_happened(ctx: KraftContext):
    """UncleanShutdownHappened: a broker is OFFLINE_DIRTY, or the unclean
    shutdown counter moved (kip966 DataLossShutdown, v3_5 UncleanShutdown;
    storage variants: ProcessCrash or PowerLoss)."""
    if ctx.storage:  # ProcessCrash / PowerLoss
        ctr_indexes = (StorageCtrs._fields.index("process_crash_ctr"),
                       StorageCtrs._fields.index("power_loss_ctr"))
    else:
        ctr_indexes = ((Kip966Ctrs._fields.index("data_loss_shutdown_ctr"),) if ctx.variant == KIP966
                       else (V35Ctrs._fields.index("unclean_shutdown_ctr"),))

    def UncleanShutdownHappened(s) -> bool:
        ctrs = s.aux_ctrs
        for i in ctr_indexes:
            if ctrs[i] > 0:
                return True
        for b in s.broker_state:
            if b.status == OFFLINE_DIRTY:
                return True
        return False

    return UncleanShutdownHappened


def elr_non_empty(ctx: KraftContext):
    """ElrNonEmpty (kip966): the controller's ELR has a member."""

    def ElrNonEmpty(s) -> bool:
        return bool(s.con_partition_metadata.elr)

    return ElrNonEmpty


def candidate_lost_committed_record(ctx: KraftContext):
    """CandidateLostCommittedRecord: a member of the controller's election
    quorum (ISR; kip966: ISR or ELR) misses a committed record (LEO below the
    True HWM). LeaderCandidateCompletenessProperty forbids that of a RUNNING
    member, so here a stopped one lost committed data (a lossy shutdown, a
    power loss) while the controller still counts it electable: the hazard of
    Last Replica Standing, which the invariants must then show handled."""
    with_elr = ctx.variant == KIP966

    def CandidateLostCommittedRecord(s) -> bool:
        true_hwm = s.inv_true_hwm
        if true_hwm <= 1:
            return False
        md = s.con_partition_metadata
        data = s.partition_data
        for b in md.isr:
            if data[b - 1].leo < true_hwm:
                return True
        if with_elr:
            for b in md.elr:
                if data[b - 1].leo < true_hwm:
                    return True
        return False

    return CandidateLostCommittedRecord


def reassignment_pending(ctx: KraftContext):
    """ReassignmentPending: the controller records a reassignment in progress
    (adding or removing non-empty): it waits for its adding replicas to join
    the ISR, the path where PerformPartitionReassignment does not complete at
    once."""

    def ReassignmentPending(s) -> bool:
        md = s.con_partition_metadata
        return bool(md.adding) or bool(md.removing)

    return ReassignmentPending


def reassignment_completed(ctx: KraftContext):
    """ReassignmentCompleted: a reassignment started (its counter moved) and
    none is in progress any more: the replica set is the target one."""

    def ReassignmentCompleted(s) -> bool:
        md = s.con_partition_metadata
        return s.aux_ctrs.reassignment_ctr > 0 and not md.adding and not md.removing

    return ReassignmentCompleted


def reassigned_and_unclean(ctx: KraftContext):
    """ReassignedAndUncleanShutdown: one execution has both a completed
    reassignment and an unclean shutdown (a broker lost its log): durability
    is checked across the two together, not on separate paths."""
    completed = reassignment_completed(ctx)
    unclean = unclean_shutdown_happened(ctx)

    def ReassignedAndUncleanShutdown(s) -> bool:
        done = completed(s)  # both evaluated: the reads are the same on every state
        return unclean(s) and done

    return ReassignedAndUncleanShutdown


def nacked_record_consumed(ctx: KraftContext):
    """NackedRecordConsumed: a value the producer got a negative acknowledgement
    for is among the records consumers could read (below the True HWM): the
    producer, told the write failed, may send it again and consumers read it
    twice (the protocol description's case 2 of acknowledgements)."""

    def NackedRecordConsumed(s) -> bool:
        nacked = s.inv_neg_acked
        if not nacked:
            return False
        return any(r.value in nacked for r in s.inv_consumed)

    return NackedRecordConsumed


def record_consumed(ctx: KraftContext):
    """RecordConsumed: the True HWM passed offset 1, so a consumer reading a
    leader up to its HWM can read a record (unlike RecordCommitted, not
    reached by an acknowledgement alone, which Acks = 1 gives at append)."""

    def RecordConsumed(s) -> bool:
        return s.inv_true_hwm > 1

    return RecordConsumed


def min_isr_changed(ctx: KraftContext):
    """MinIsrChanged (MinIsrChanges): an AlterMinIsr step set the controller's
    min.insync.replicas."""

    def MinIsrChanged(s) -> bool:
        return s.con_partition_metadata.min_isr is not None

    return MinIsrChanged


def elr_cleared_by_min_isr_change(ctx: KraftContext):
    """ElrClearedByMinIsrChange (kip966, MinIsrChanges): a metadata record
    changes min.insync.replicas to another value and clears an ELR or
    last-known ELR that the record before it held (KAFKA-16540)."""
    default = ctx.min_isr

    def ElrClearedByMinIsrChange(s) -> bool:
        log = s.con_metadata_log
        for before, record in zip(log, log[1:]):
            if (record.min_isr is not None and record.min_isr != (before.min_isr or default)
                    and (before.elr or before.last_known_elr)
                    and not record.elr and not record.last_known_elr):
                return True
        return False

    return ElrClearedByMinIsrChange
