"""Recovery properties of the storage variants (kip966_storage, v3_5_storage).

KIP-966 description 5.1.2, the Unclean Exclusion property: "A replica that has
restarted after an unclean shutdown must be excluded from leadership, the
ISR and ELR until it has provably caught-up to the leader." Section 5.3.2:
the controller cannot tell a data-loss-free unclean recovery from a lossy
one, "therefore the controller must report all unclean recoveries as
potential data loss events" - and (5.1.2, 5.3.2) data can be lost only when
MinISR or more replicas lost data, or under proactive recovery.

Both read ghost state the storage model keeps for them (model/kraft/
storage.py): ghost_unclean[b] (UNCLEAN from the registration that follows an
unclean stop until the controller's leader accepted a fetch of b at or above
its HWM, or unclean recovery elected b) and ghost_reported (the unclean
recoveries reported, and the committed values the elected replica lacked).
"""
from __future__ import annotations

from model.kraft.state import NO_LEADER, BrokerStatus, Ghost, RegStatus, Role

from invariants.kraft.common import KIP966, KraftContext, memo_true_by_identity

UNCLEAN = Ghost.UNCLEAN
RUNNING = BrokerStatus.RUNNING
OFFLINE_DIRTY = BrokerStatus.OFFLINE_DIRTY
OFFLINE_CLEAN = BrokerStatus.OFFLINE_CLEAN
UNFENCED = RegStatus.UNFENCED
FOLLOWER = Role.Follower


def unclean_exclusion(ctx: KraftContext):
    """UncleanExclusion: no UNCLEAN broker is the controller's leader or a
    member of its ISR or (kip966) ELR."""
    with_elr = ctx.variant == KIP966

    def UncleanExclusion(s) -> bool:
        ghost = s.ghost_unclean
        if UNCLEAN not in ghost:
            return True
        md = s.con_partition_metadata
        for i, g in enumerate(ghost):
            if g == UNCLEAN:
                b = i + 1
                if md.leader == b or b in md.isr or (with_elr and b in md.elr):
                    return False
        return True

    return memo_true_by_identity(UncleanExclusion, "ghost_unclean", "con_partition_metadata")


def lost_values(s) -> frozenset:
    """Committed values (consumed below the True HWM, or positively acked)
    that the controller's leader lacks, when it is RUNNING (a loss clients
    can see: a partition without a leader serves nothing yet)."""
    acked = s.inv_pos_acked
    consumed = s.inv_consumed
    if not acked and not consumed:
        return frozenset()
    leader = s.con_partition_metadata.leader
    if leader == NO_LEADER or s.broker_state[leader - 1].status != RUNNING:
        return frozenset()
    committed = acked | frozenset(r.value for r in consumed) if consumed else acked
    held = {r.value for r in s.partition_data[leader - 1].log}
    return frozenset(v for v in committed if v not in held)


def data_loss_is_reported(ctx: KraftContext):
    """DataLossIsReported: every committed value the controller's RUNNING
    leader lacks was reported lost by an unclean recovery (section 5.3.2:
    every unclean recovery is a potential data-loss event). A value gone
    from every log while no leader runs is NoCommittedRecordLostGlobally's
    business: the loss becomes visible (and reported) at the next election."""

    def DataLossIsReported(s) -> bool:
        if not s.inv_pos_acked and not s.inv_consumed:
            return True
        lost = lost_values(s)
        return not lost or lost <= s.ghost_reported.lost

    return DataLossIsReported


def valid_storage_state(ctx: KraftContext):
    """ValidStorageState (spec-bug catcher): 1 <= flushed offset <= LEO,
    1 <= HWM checkpoint, ghost values of their type, a recovery's answers
    come from the brokers it asked."""
    ghosts = frozenset(Ghost)

    def ValidStorageState(s) -> bool:
        for d, f, c, g in zip(s.partition_data, s.partition_flushed,
                              s.partition_hwm_checkpoint, s.ghost_unclean):
            if not (type(f) is int and 1 <= f <= d.leo) or not (type(c) is int and c >= 1):
                return False
            if g not in ghosts:
                return False
        rec = s.con_recovery
        if rec is not None:
            for a in rec.answers:
                if a.broker not in rec.asked:
                    return False
        return True

    return ValidStorageState


# ---- witnesses ------------------------------------------------------------------

def unclean_restart(ctx: KraftContext):
    """UncleanRestart: a broker registered again after an unclean stop and has
    not caught up yet (the Unclean Exclusion property has something to check)."""

    def UncleanRestart(s) -> bool:
        return UNCLEAN in s.ghost_unclean

    return UncleanRestart


def crashed_in_controlled_shutdown(ctx: KraftContext):
    """CrashedInControlledShutdown: the controller still has a broker in
    controlled shutdown (its leadership moved, out of the ISR) that stopped
    uncleanly: it crashed before it completed the shutdown."""

    def CrashedInControlledShutdown(s) -> bool:
        for bs, offset in zip(s.broker_state, s.con_controlled_shutdown):
            if offset is not None and bs.status == OFFLINE_DIRTY:
                return True
        return False

    return CrashedInControlledShutdown


def unflushed_records(ctx: KraftContext):
    """UnflushedRecords: a running replica holds records not yet flushed (a
    power loss would lose them)."""

    def UnflushedRecords(s) -> bool:
        for bs, d, f in zip(s.broker_state, s.partition_data, s.partition_flushed):
            if f < d.leo and bs.status == RUNNING:
                return True
        return False

    return UnflushedRecords


def unclean_recovery_reported(ctx: KraftContext):
    """UncleanRecoveryReported: an unclean recovery elected a leader (and was
    reported as a potential data-loss event)."""

    def UncleanRecoveryReported(s) -> bool:
        return s.ghost_reported.count > 0

    return UncleanRecoveryReported


def acked_record_unflushed(ctx: KraftContext):
    """AckedRecordUnflushed: a positively acknowledged record sits above the
    flushed offset of a RUNNING replica (in its page cache only, there): a
    power loss of that broker now drops acknowledged data (KIP-966 description
    5: the price of asynchronous flushing). Never reached under every_write."""

    def AckedRecordUnflushed(s) -> bool:
        acked = s.inv_pos_acked
        if not acked:
            return False
        for bs, d, f in zip(s.broker_state, s.partition_data, s.partition_flushed):
            if f < d.leo and bs.status == RUNNING:
                for r in d.log[f - 1:]:
                    if r.value in acked:
                        return True
        return False

    return AckedRecordUnflushed


def unclean_recovery_lost_data(ctx: KraftContext):
    """UncleanRecoveryLostData: an unclean recovery elected a replica that
    lacked committed records, and reported them (section 5.3.2: balanced
    with MinISR lossy shutdowns, or proactive electing whoever answered)."""

    def UncleanRecoveryLostData(s) -> bool:
        return bool(s.ghost_reported.lost)

    return UncleanRecoveryLostData



def hwm_checkpointed(ctx: KraftContext):
    """HwmCheckpointed: a broker that never stopped (still its first
    incarnation) has written an HWM above 1 to its checkpoint file: with
    HwmCheckpoint = timer only CheckpointHwm(b) writes it there (a controlled
    shutdown stops the broker); with flush, a log flush."""

    def HwmCheckpointed(s) -> bool:
        for b, (bs, ckpt) in enumerate(zip(s.broker_state, s.partition_hwm_checkpoint), 1):
            if ckpt > 1 and bs.incarnation_id == b:
                return True
        return False

    return HwmCheckpointed


def active_segment_flushed(segment_size: int):
    """ActiveSegmentFlushed (FlushPolicy segment_roll): a broker that never
    stopped has flushed a record of its active segment, which the policy
    flushes only when the segment rolls: the OS wrote it back
    (BackgroundFlush). A follower's truncation below its flushed offset leaves
    the same state; a spec whose BackgroundFlushAlways = false never reaching
    it shows that its counterpart reaches it by the OS's flush."""

    def ActiveSegmentFlushed(s) -> bool:
        for b, (bs, d, f) in enumerate(zip(s.broker_state, s.partition_data, s.partition_flushed), 1):
            records = d.leo - 1
            if records and bs.incarnation_id == b:
                rolled = ((records - 1) // segment_size) * segment_size + 1
                if f > rolled:
                    return True
        return False

    return ActiveSegmentFlushed


def rolled_segment_unflushed(segment_size: int):
    """RolledSegmentUnflushed (FlushPolicy segment_roll, SegmentRollFlush
    scheduled): a running broker holds a rolled segment not yet flushed: the
    flush-log task UnifiedLog.roll scheduled has not run (a power loss now
    drops records the roll would have made durable)."""

    def RolledSegmentUnflushed(s) -> bool:
        for bs, d, f in zip(s.broker_state, s.partition_data, s.partition_flushed):
            records = d.leo - 1
            if records and bs.status == RUNNING:
                rolled = ((records - 1) // segment_size) * segment_size + 1
                if f < rolled:
                    return True
        return False

    return RolledSegmentUnflushed


def shutdown_without_grant(ctx: KraftContext):
    """ShutdownWithoutGrant: a broker stopped cleanly while the controller still
    has it registered unfenced: its controlled shutdown timed out ungranted
    (ControlledShutdownTimeout) or it never asked (ControlledShutdownEnable =
    false). A granted or one-step controlled shutdown fences it first."""

    def ShutdownWithoutGrant(s) -> bool:
        for bs, reg in zip(s.broker_state, s.con_broker_reg):
            if bs.status == OFFLINE_CLEAN and reg.status == UNFENCED:
                return True
        return False

    return ShutdownWithoutGrant


def stopped_fetching_in_shutdown(ctx: KraftContext):
    """StoppedFetchingInShutdown (ShutdownStopsFetching): a running broker in
    controlled shutdown follows the partition outside its ISR and fetches it
    from nobody (ReplicaManager.applyLocalFollowersDelta removed its fetcher)."""

    def StoppedFetchingInShutdown(s) -> bool:
        for i, want in enumerate(s.broker_want_shutdown):
            if (want and s.broker_state[i].status == RUNNING and s.partition_status[i] == FOLLOWER
                    and i + 1 not in s.partition_metadata[i].isr
                    and all(f.partition is None for f in s.broker_fetchers[i])):
                return True
        return False

    return StoppedFetchingInShutdown


def recovering_isr_alone(ctx: KraftContext):
    """RecoveringIsrAlone (LeaderRecoveryState, KIP-704): while the controller
    has the partition RECOVERING after an unclean election, its ISR holds at
    most one replica: "the controller will not allow the ISR to be expanded
    while the partition is recovering"."""

    def RecoveringIsrAlone(s) -> bool:
        recovering, md = s.con_leader_recovering, s.con_partition_metadata
        return not recovering or len(md.isr) <= 1

    return RecoveringIsrAlone


def leader_recovering(ctx: KraftContext):
    """LeaderRecovering: the controller has the partition RECOVERING (an
    unclean election, KIP-704)."""

    def LeaderRecovering(s) -> bool:
        return s.con_leader_recovering

    return LeaderRecovering


def isr_expanded_after_recovery(ctx: KraftContext):
    """IsrExpandedAfterRecovery: after an unclean election (one is reported)
    the partition is RECOVERED again and its ISR has grown past one replica:
    the leader's AlterPartition cleared RECOVERING."""

    def IsrExpandedAfterRecovery(s) -> bool:
        recovering, md, reported = s.con_leader_recovering, s.con_partition_metadata, s.ghost_reported
        return reported.count > 0 and not recovering and len(md.isr) > 1

    return IsrExpandedAfterRecovery
