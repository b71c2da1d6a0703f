"""`sometimes` witnesses: what the invariants are about does happen."""
from __future__ import annotations

from model.zk.state import NO_LEADER, Role

LEADER = Role.LEADER


def record_committed(model):
    """RecordCommitted: a record is acknowledged (committed, acks=all)."""

    def RecordCommitted(s) -> bool:
        return bool(s.acked)

    return RecordCommitted


def leader_elected(model):
    """LeaderElected: a leader is elected after the initial one (epoch > 0)."""

    def LeaderElected(s) -> bool:
        return s.zk_partition.leader_epoch > 0

    return LeaderElected


def record_truncated(model):
    """RecordTruncated: a replica truncated a record away (to its HW, to the
    leader's epoch end offset, or on OffsetOutOfRange)."""

    def RecordTruncated(s) -> bool:
        return s.truncated

    return RecordTruncated


def isr_shrunk(model):
    """IsrShrunk: the ISR lost an assigned replica."""
    replicas = frozenset(model.replicas)

    def IsrShrunk(s) -> bool:
        return s.zk_partition.isr != replicas

    return IsrShrunk


def acked_record_survived_crash(model):
    """AckedRecordSurvivedCrash: a protected acknowledged record survived a
    crash (power loss or process crash) of one of its keepers."""

    def AckedRecordSurvivedCrash(s) -> bool:
        f = s.faults
        if not (f.power_losses or f.process_crashes):
            return False
        running = s.running
        for a in s.acked:
            for m in a.keepers:
                if not running[m]:
                    return True
        return False

    return AckedRecordSurvivedCrash


def session_expired(model):
    """SessionExpired: a running broker has no ZooKeeper session (a zombie)."""

    def SessionExpired(s) -> bool:
        return s.faults.expiries > 0

    return SessionExpired


def acked_record_lost_to_power_loss(model):
    """AckedRecordLostToPowerLoss: an ISR member lacks a protected
    acknowledged record while no replica ever truncated one: it held the
    record (or reported holding it) and lost it unflushed in a power loss.
    (A state predicate, so that no ghost flag splits the state space.)"""
    replicas = tuple(model.replicas)

    def AckedRecordLostToPowerLoss(s) -> bool:
        if s.truncated or not s.faults.power_losses:
            return False
        isr = s.zk_partition.isr
        for a in s.acked:
            if a.keepers:
                for b in replicas:
                    if b in isr and all(r.value != a.value for r in s.log[b]):
                        return True
        return False

    return AckedRecordLostToPowerLoss


def page_cache_survived_crash(model):
    """PageCacheSurvivedCrash: a stopped broker still holds records beyond its
    flushed offset (only a process crash leaves them: in the page cache)."""
    replicas = tuple(model.replicas)

    def PageCacheSurvivedCrash(s) -> bool:
        for b in replicas:
            if not s.running[b] and s.flushed[b] < len(s.log[b]):
                return True
        return False

    return PageCacheSurvivedCrash


def controlled_shutdown_happened(model):
    """ControlledShutdownHappened: a broker shut down cleanly."""

    def ControlledShutdownHappened(s) -> bool:
        return s.faults.shutdowns > 0

    return ControlledShutdownHappened


def election_raced(model):
    """ElectionRaced: while an election was due another step went first
    (ghost flag, cleared by the next election)."""

    def ElectionRaced(s) -> bool:
        return s.faults.raced

    return ElectionRaced


def broker_bounced(model):
    """BrokerBounced: a broker registered again while the controller still
    counts its old registration (without broker epochs it never notices)."""

    def BrokerBounced(s) -> bool:
        return bool(s.ctl_stale)

    return BrokerBounced


def request_outlived_stop(model):
    """RequestOutlivedStop: a controller's LeaderAndIsr waits for a broker
    that stopped (RequestsSurviveStop)."""
    replicas = tuple(model.replicas)

    def RequestOutlivedStop(s) -> bool:
        for b in replicas:
            if not s.running[b] and s.ctl_request[b]:
                return True
        return False

    return RequestOutlivedStop


def stale_request_in_flight(model):
    """StaleRequestInFlight: a running broker has a LeaderAndIsr for an
    earlier registration of it in flight (it will reject it, KIP-380)."""
    replicas = tuple(model.replicas)

    def StaleRequestInFlight(s) -> bool:
        for b in replicas:
            if s.running[b] and any(r.broker_epoch < s.broker_epoch[b] for r in s.ctl_request[b]):
                return True
        return False

    return StaleRequestInFlight


def leader_and_isr_queued(model):
    """LeaderAndIsrQueued: two LeaderAndIsr requests wait in one broker's
    queue (LeaderAndIsrQueue fifo)."""
    replicas = tuple(model.replicas)

    def LeaderAndIsrQueued(s) -> bool:
        for b in replicas:
            if len(s.ctl_request[b]) > 1:
                return True
        return False

    return LeaderAndIsrQueued


def caught_up_follower_dropped(model):
    """CaughtUpFollowerDropped: a leader dropped from the ISR a follower whose
    last fetch had reached its LEO (it stalled: FollowerStallLimit)."""

    def CaughtUpFollowerDropped(s) -> bool:
        return s.faults.stalls > 0

    return CaughtUpFollowerDropped


def crash_during_controlled_shutdown(model):
    """CrashDuringControlledShutdown: a broker stopped by a crash (not its
    own clean stop) in the middle of its controlled shutdown: after the
    controller took its leadership and ISR place, before it stopped cleanly."""
    replicas = tuple(model.replicas)

    def CrashDuringControlledShutdown(s) -> bool:
        for b in replicas:
            if b in s.ctl_shutting_down and not s.running[b] and b not in s.clean_down:
                return True
        return False

    return CrashDuringControlledShutdown


def controller_failed_over(model):
    """ControllerFailedOver: a new controller took over."""

    def ControllerFailedOver(s) -> bool:
        return s.faults.failovers > 0

    return ControllerFailedOver


def unclean_leader_lacks_acked_record(model):
    """UncleanLeaderLacksAckedRecord: the leader, elected from outside the
    ISR, leads without an acknowledged record (Kafka's design docs: "its log becomes the
    source of truth even though it is not guaranteed to have every committed
    message")."""

    def UncleanLeaderLacksAckedRecord(s) -> bool:
        if not s.faults.unclean_leader or not s.acked:
            return False
        zk = s.zk_partition
        leader = zk.leader
        if leader == NO_LEADER or s.role[leader] != (LEADER, leader, zk.leader_epoch):
            return False
        have = {r.value for r in s.log[leader]}
        return any(a.value not in have for a in s.acked)

    return UncleanLeaderLacksAckedRecord


def zombie_leader(model):
    """ZombieLeader: a running broker acts as leader while the znode names
    another leader, or the same in a later epoch (two leaders at once: the 0.8
    replication design, "Open Issues" item 2)."""
    replicas = tuple(model.replicas)

    def ZombieLeader(s) -> bool:
        zk = s.zk_partition
        if zk.leader == NO_LEADER:
            return False
        for b in replicas:
            r = s.role[b]
            if (r.role == LEADER and s.running[b]
                    and (zk.leader != b or zk.leader_epoch != r.leader_epoch)):
                return True
        return False

    return ZombieLeader


def truncated_below_hw(model):
    """TruncatedBelowHw (PowerLossLimit = 0): a replica's log ends below its
    checkpointed HW - it truncated records below its HW while catching up
    with a leader, the 0.8 replication design's caveat for asynchronous
    replication: "the follower may have to truncate the data before its HW".
    Without power losses only a truncation shortens a log, and the in-memory
    HW is at least the checkpointed one when it happens (restart: min(HW
    checkpoint, LEO)), so the predicate is exact for what it shows: a
    truncation below a checkpointed HW, seen until the next checkpoint. (A
    state predicate, so that no ghost flag splits the state space.)"""
    replicas = tuple(model.replicas)

    def TruncatedBelowHw(s) -> bool:
        ckpt, logs = s.ckpt_hw, s.log
        for b in replicas:
            if ckpt[b] > len(logs[b]):
                return True
        return False

    return TruncatedBelowHw
