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
