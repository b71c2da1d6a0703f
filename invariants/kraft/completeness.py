"""Completeness: every committed record is where an election can find it.

The v3.5 description (section 2.3): Leader Completeness (the leader hosts the complete
committed log, up to the True HWM) and Leader Candidate Completeness (every
replica of the controller's election quorum does). The KIP-966 description (section 5.3.2):
MinISR Recovery Quorum. The predicates render the reference's
*_properties.tla definitions of the same names; the True HWM, the acked values
and the consumed records are the spec's own bookkeeping (inv_* variables).

Each factory takes the KraftContext and returns a predicate over one state; a
predicate returns as soon as the answer is known, and allocates nothing on the
common path where nothing has been committed yet.
"""
from __future__ import annotations

from model.kraft.state import NO_LEADER, BrokerStatus, Role, broker_min_isr, controller_min_isr

from invariants.kraft.common import KIP966, KraftContext

RUNNING = BrokerStatus.RUNNING
LEADER = Role.Leader


def leader_completeness(ctx: KraftContext):
    """LeaderCompletenessProperty (identical in both variants)."""

    def LeaderCompletenessProperty(s) -> bool:
        true_hwm = s.inv_true_hwm
        if true_hwm <= 1:  # IF inv_true_hwm > 1 ... ELSE TRUE
            return True
        leader = s.con_partition_metadata.leader
        # no leader, or a leader that is not RUNNING: nothing to verify
        if leader == NO_LEADER or s.broker_state[leader - 1].status != RUNNING:
            return True
        data = s.partition_data[leader - 1]
        if data.leo < true_hwm:
            return False
        # every positively acked value is somewhere in the leader's log
        log = data.log
        for v in s.inv_pos_acked:
            for r in log:
                if r.value == v:
                    break
            else:
                return False
        return True

    return LeaderCompletenessProperty


def leader_candidate_completeness(ctx: KraftContext):
    """LeaderCandidateCompletenessProperty: kip966 checks ISR and ELR, v3_5 the ISR."""
    with_elr = ctx.variant == KIP966

    def LeaderCandidateCompletenessProperty(s) -> bool:
        true_hwm = s.inv_true_hwm
        if true_hwm <= 1:
            return True
        md = s.con_partition_metadata
        data = s.partition_data
        state = s.broker_state
        # no RUNNING member of the ISR (or ELR) misses committed records
        for b in md.isr:
            if data[b - 1].leo < true_hwm and state[b - 1].status == RUNNING:
                return False
        if with_elr:
            for b in md.elr:
                if data[b - 1].leo < true_hwm and state[b - 1].status == RUNNING:
                    return False
        return True

    return LeaderCandidateCompletenessProperty


def replication_quorum_superset(ctx: KraftContext):
    """ReplicationQuorumSupersetProperty: the non-stale leader's maximal ISR
    covers the controller's ISR (kip966: and ELR, when the leader ISR >= MinISR)."""
    n = ctx.broker_count
    min_isr = ctx.min_isr
    dynamic = bool(ctx.min_isr_changes)  # the leader's own value (MinIsrChanges)
    kip966 = ctx.variant == KIP966

    def ReplicationQuorumSupersetProperty(s) -> bool:
        status = s.partition_status
        cmd = None
        for i in range(n):
            if status[i] != LEADER:
                continue
            if cmd is None:
                cmd = s.con_partition_metadata
            md = s.partition_metadata[i]
            if md.leader_epoch != cmd.leader_epoch:  # IsNonStaleLeader(b)
                continue
            # no pending AlterPartition response (PendingAlterPartitionResponse(b)):
            # maximal ISR = ISR
            if not s.partition_pending_ap[i].epoch > md.partition_epoch:
                if md.maximal_isr != md.isr:
                    return False
            if kip966:
                if len(md.isr) >= (broker_min_isr(ctx, s, i + 1) if dynamic else min_isr):
                    maximal = md.maximal_isr
                    if not cmd.isr <= maximal or not cmd.elr <= maximal:
                        return False
            elif not cmd.isr <= md.maximal_isr:
                return False
        return True

    return ReplicationQuorumSupersetProperty


def min_isr_recovery_quorum(ctx: KraftContext):
    """MinIsrRecoveryQuorum (kip966): with ISR and ELR empty, the LastKnownELR
    (the unclean recovery quorum) has exactly MinISR members."""
    min_isr = ctx.min_isr
    dynamic = bool(ctx.min_isr_changes)  # the controller's current value (MinIsrChanges)

    def MinIsrRecoveryQuorum(s) -> bool:
        md = s.con_partition_metadata
        if md.isr or md.elr:
            return True
        return len(md.last_known_elr) == (controller_min_isr(ctx, s) if dynamic else min_isr)

    return MinIsrRecoveryQuorum


def recovery_quorum_at_least_min_isr(ctx: KraftContext):
    """RecoveryQuorumAtLeastMinIsr (kip966, kmc's own): with ISR and ELR empty,
    the LastKnownELR has at least MinISR members. What the protocol keeps
    (ISR + ELR >= MinISR once the ISR is below MinISR; an ELR member leaves
    only for the ISR or, restarting unclean, for the LastKnownELR), where
    MinIsrRecoveryQuorum's "exactly" does not hold: neither the reference's
    UpdateElr nor Kafka's PartitionChangeBuilder trims the ELR to MinISR
    (docs/findings.md)."""
    min_isr = ctx.min_isr
    dynamic = bool(ctx.min_isr_changes)

    def RecoveryQuorumAtLeastMinIsr(s) -> bool:
        md = s.con_partition_metadata
        if md.isr or md.elr:
            return True
        return len(md.last_known_elr) >= (controller_min_isr(ctx, s) if dynamic else min_isr)

    return RecoveryQuorumAtLeastMinIsr


def no_committed_record_lost_globally(ctx: KraftContext):
    """NoCommittedRecordLostGlobally: every positively acked value is in some
    broker's log (catches loss where no viable leader is left to check)."""

    def NoCommittedRecordLostGlobally(s) -> bool:
        acked = s.inv_pos_acked
        if not acked:
            return True
        return acked <= {r.value for d in s.partition_data for r in d.log}

    return NoCommittedRecordLostGlobally
