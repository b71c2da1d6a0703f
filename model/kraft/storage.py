"""The storage variants `kip966_storage` and `v3_5_storage`: asynchronous
storage and recovery, beyond the reference (KIP-966 description 5).

The reference simplifies storage: a lossy shutdown loses the whole log,
nothing is ever flushed, and the controller fences a broker in the same step
as its shutdown. Here, per replica:
- a flushed offset (the recovery point: the first offset not yet on disk),
  moved by the flush policy (FlushPolicy: every_write, every_n, segment_roll,
  async) and by the OS (BackgroundFlush), which writes dirty pages back
  whatever log.flush.* says (BackgroundFlushAlways = false: under async only);
- the HWM checkpoint file (replication-offset-checkpoint), written by
  CheckpointHwm(b) while the broker runs, on Kafka's own timer
  (replica.high.watermark.checkpoint.interval.ms; HwmCheckpoint = flush: at
  the log's flushes instead, the policy's and the OS's), and at a controlled
  shutdown; read back at restart and clamped to the log (both steps are
  weakly fair under the storage fairness: the kernel's writeback and
  Kafka's timer always fire in the end);
- the broker epoch file: broker_state[b].broker_epoch of an offline broker
  (0: absent), as the reference keeps it;
- the leader-epoch checkpoint: the epochs carried by the surviving records
  (LastOffsetForEpoch reads them), so it survives exactly as the log does.

Three kinds of stop replace the reference's two shutdowns:
- a controlled shutdown, by default in Kafka's steps (ControlledShutdownSteps):
  BeginControlledShutdown(b): the broker asks (BrokerLifecycleManager.
  beginControlledShutdown: PENDING_CONTROLLED_SHUTDOWN, its heartbeats carry
  wantShutDown); EnterControlledShutdown(b): a heartbeat of a leader: the
  controller takes b out of the ISR and moves its leadership
  (ReplicationControlManager.handleBrokerInControlledShutdown, state
  CONTROLLED_SHUTDOWN, b no longer active: not electable, not eligible for the
  ISR); GrantShutdown(b): a heartbeat once b leads nothing and every active
  broker's metadata reached b's controlled shutdown offset (BrokerHeartbeat-
  Manager.calculateNextBrokerState: SHUTDOWN_NOW): the controller fences b
  (handleBrokerFenced) and answers shouldShutDown; CompleteControlledShutdown(b):
  the broker stops (BrokerServer.shutdown: fetchers stopped, logs flushed, HWM
  checkpointed, the clean shutdown file with the broker epoch written). Until
  it stops, b runs (fetches as a follower) and may crash. With
  ControlledShutdownSteps = false, ControlledShutdown(b) is one step: flush,
  checkpoint the HWM, write the broker epoch file, and the controller fences
  the broker and moves leadership in the same step;
- ProcessCrash(b): the page cache survives (no data lost), no epoch file
  (the restart is unclean), the HWM comes back from its checkpoint;
- PowerLoss(b) (OS crash / power loss): the page cache is lost, the log falls
  back to its flushed prefix, the HWM to min(checkpoint, LEO) - also of a
  broker whose process crashed before the OS flushed its page cache;
  PowerOutage(b1, b2, ...) (CorrelatedPowerLoss): several at once.
A stopping broker's fetch requests in flight still reach its leader
(FetchRequestsSurviveStop, true here as in Kafka; the reference drops them).

After a crash the controller notices only when the broker's session times
out: SessionTimeout(b) fences a broker whose registered incarnation is dead;
it costs nothing of FenceBrokerLimit (which bounds FenceBroker(b), fencing a
live broker that missed heartbeats) and is weakly fair under the storage
fairness, as Kafka's session timeout always fires in the end. A new
incarnation can register only once the old one is fenced
(ReceiveBrokerRegRequest's guard), so fencing always comes first.

Ghost state (not protocol) for the Unclean Exclusion property (section
5.1.2): ghost_unclean[b] (Ghost) and ghost_reported (the unclean recoveries
the controller reported as potential data-loss events, with the committed
values the elected replica lacked). See invariants/kraft/recovery.py.
"""
from __future__ import annotations

from itertools import combinations

from model.base import Action
from model.kraft import controller, faults, fetch, network, recovery
from model.kraft.config import resolve
from model.kraft.controller import FENCED, UNFENCED, handle_broker_fenced
from model.kraft.messages import CONTROLLER, AlterPartitionResponse
from model.kraft.replica import fetchers_without_partition
from model.kraft.model import _MSG_TYPES, EMPTY, KraftModel
from model.kraft.state import (
    STORAGE_VARIABLES, VARIABLES, BrokerState, BrokerStatus, ErrorCode, Ghost, KraftStorageState,
    LogInfo, MsgType, NO_LEADER, PartitionData, RecoveryMsgType, RecoveryReport, StorageCtrs, UncleanRecovery, except_at,
    with_changes)

OFFLINE_CLEAN = BrokerStatus.OFFLINE_CLEAN
OFFLINE_DIRTY = BrokerStatus.OFFLINE_DIRTY
RUNNING = BrokerStatus.RUNNING
TRUSTED, STOPPED_UNCLEAN, UNCLEAN = Ghost.TRUSTED, Ghost.STOPPED_UNCLEAN, Ghost.UNCLEAN
_KINDS = _MSG_TYPES + tuple(RecoveryMsgType)


# ---- flushing ------------------------------------------------------------------

def policy_flush(k, flushed: int, leo: int) -> int:
    """The flushed offset after an append that made the LEO `leo`."""
    policy = k.flush_policy
    if policy == "every_write":  # before the follower's next fetch can move the HWM
        return leo
    if policy == "every_n":      # log.flush.interval.messages = N
        return leo if leo - flushed >= k.flush_every_n else flushed
    if policy == "segment_roll":  # appending record kS+1 rolls a segment: 1..kS flushed
        if k.roll_flush_scheduled:  # later, by the flush-log task (FlushRolledSegments)
            return flushed
        rolled = rolled_offset(k, leo)
        return rolled if rolled > flushed else flushed
    return flushed               # async: only the OS (BackgroundFlush)


def rolled_offset(k, leo: int) -> int:
    """FlushPolicy segment_roll: the base offset of the active segment of a
    log whose LEO is `leo` (segments of SegmentSize records from offset 1):
    the records below it are in rolled segments."""
    records = leo - 1
    return ((records - 1) // k.segment_size) * k.segment_size + 1 if records else 1


def follow_logs(k, s, t):
    """t, with the flushed offsets (and HWM checkpoints) following the logs
    that changed from s to t: an append may flush (the policy), a truncation
    takes the flushed offset down with it."""
    d0s, d1s = s.partition_data, t.partition_data
    flushed = ckpt = None
    for i in range(k.n):
        d0, d1 = d0s[i], d1s[i]
        if d0 is d1 or d0.log is d1.log:
            continue
        l0, l1 = d0.log, d1.log
        f = t.partition_flushed[i]
        n0, n1 = len(l0), len(l1)
        if n1 > n0 and l1[:n0] == l0:
            nf = policy_flush(k, f, n1 + 1)
            if nf != f:
                flushed = list(flushed or t.partition_flushed)
                flushed[i] = nf
                if k.checkpoint_at_flush:
                    ckpt = list(ckpt or t.partition_hwm_checkpoint)
                    ckpt[i] = d1.hwm
        else:
            common = 0
            for a, b in zip(l0, l1):
                if a != b:
                    break
                common += 1
            if common + 1 < f:
                flushed = list(flushed or t.partition_flushed)
                flushed[i] = common + 1
    if flushed is None:
        return t
    ch = {"partition_flushed": tuple(flushed)}
    if ckpt is not None:
        ch["partition_hwm_checkpoint"] = tuple(ckpt)
    return with_changes(t, ch)


def _stopping_fetchers(fn):
    """ReceiveMetadataUpdate(b), and (ShutdownStopsFetching) a broker in
    controlled shutdown that the update leaves a follower without a leader or
    outside the ISR stops fetching the partition
    (ReplicaManager.applyLocalFollowersDelta: isInControlledShutdown, set by
    beginControlledShutdown; the fetcher is removed, the replica stays)."""
    def action(k, s, b, mt, out):
        start = len(out)
        fn(k, s, b, mt, out)
        i = b - 1
        if not s.broker_want_shutdown[i]:
            return
        md0 = s.partition_metadata[i]
        for j in range(start, len(out)):
            act, t = out[j]
            md = t.partition_metadata[i]
            if md is md0 or md.leader == b or b not in md.replicas:
                continue  # no partition change, or not a local follower
            if md.leader != NO_LEADER and b in md.isr:
                continue
            row = t.broker_fetchers[i]
            new_row = fetchers_without_partition(row)
            if new_row is not row:
                out[j] = (act, with_changes(t, {"broker_fetchers": except_at(t.broker_fetchers, b,
                                                                              new_row)}))
    action.__name__ = fn.__name__
    action.__doc__ = fn.__doc__
    return action


def _following_logs(fn):
    def action(k, s, b, mt, out):
        start = len(out)
        fn(k, s, b, mt, out)
        for j in range(start, len(out)):
            act, t = out[j]
            if t.partition_data is not s.partition_data:
                out[j] = (act, follow_logs(k, s, t))
    action.__name__ = fn.__name__
    action.__doc__ = fn.__doc__
    return action


def background_flush(k, s, b, mt, out):
    """BackgroundFlush(b): the OS writes dirty pages back (under every flush
    policy; BackgroundFlushAlways = false: async only); the flushed offset
    moves to any offset in (flushed, LEO]. It runs whether the Kafka process
    does or not (a crashed process leaves its page cache to the OS). With
    HwmCheckpoint = flush, a running broker checkpoints its HWM with it."""
    i = b - 1
    d = s.partition_data[i]
    f = s.partition_flushed[i]
    if f >= d.leo:
        return
    act = k.acts["BackgroundFlush"][b]
    ch = {}
    if (k.checkpoint_at_flush and s.broker_state[i].status == RUNNING
            and s.partition_hwm_checkpoint[i] != d.hwm):
        ch["partition_hwm_checkpoint"] = except_at(s.partition_hwm_checkpoint, b, d.hwm)
    for offset in range(f + 1, d.leo + 1):
        ch["partition_flushed"] = except_at(s.partition_flushed, b, offset)
        out.append((act, with_changes(s, ch)))


def checkpoint_hwm(k, s, b, mt, out):
    """CheckpointHwm(b) (HwmCheckpoint = timer): a running broker writes its
    HWM to its checkpoint file, on its own schedule (Kafka's
    ReplicaManager.checkpointHighWatermarks, every
    replica.high.watermark.checkpoint.interval.ms), not at log flushes."""
    i = b - 1
    if s.broker_state[i].status != RUNNING:
        return
    hwm = s.partition_data[i].hwm
    if s.partition_hwm_checkpoint[i] == hwm:
        return
    out.append((k.acts["CheckpointHwm"][b], with_changes(s, {
        "partition_hwm_checkpoint": except_at(s.partition_hwm_checkpoint, b, hwm)})))


def flush_rolled_segments(k, s, b, mt, out):
    """FlushRolledSegments(b) (FlushPolicy segment_roll, SegmentRollFlush
    scheduled): the flush-log task that UnifiedLog.roll scheduled runs
    (flushUptoOffsetExclusive(the new segment's base offset)): the rolled
    segments are on disk. A task of the running process: a crash before it
    runs loses it. It flushes the segments rolled by the time it runs (a
    truncation since the roll takes the segment, and the flush, with it)."""
    i = b - 1
    if s.broker_state[i].status != RUNNING:
        return
    d = s.partition_data[i]
    rolled = rolled_offset(k, d.leo)
    if rolled <= s.partition_flushed[i]:
        return
    ch = {"partition_flushed": except_at(s.partition_flushed, b, rolled)}
    if k.checkpoint_at_flush and s.partition_hwm_checkpoint[i] != d.hwm:
        ch["partition_hwm_checkpoint"] = except_at(s.partition_hwm_checkpoint, b, d.hwm)
    out.append((k.acts["FlushRolledSegments"][b], with_changes(s, ch)))


# ---- stops -------------------------------------------------------------------------

def _stop(k, s, b, new_bs, data, flushed, ckpt, ghost, ctr_field, fence):
    """The effect shared by the three stops; returns the list of successors
    (several only when the controller elects among candidates: fence).
    ctr_field None: the stop counts against no limit (its begin did)."""
    ch = faults.stop_changes(k, s, b, new_bs, ctr_field or "incarn_ctr")
    if ctr_field is None:
        ch["aux_ctrs"] = s.aux_ctrs
    ch.update({
        "broker_want_shutdown": except_at(s.broker_want_shutdown, b, False),  # in memory only
        "partition_leso": except_at(s.partition_leso, b, None),  # in memory only
        "partition_data": except_at(s.partition_data, b, data),
        "partition_flushed": except_at(s.partition_flushed, b, flushed),
        "partition_hwm_checkpoint": except_at(s.partition_hwm_checkpoint, b, ckpt),
        "ghost_unclean": except_at(s.ghost_unclean, b, ghost),
    })
    return faults.fail_and_fence(k, s, b, ch, fence)


def controlled_shutdown(k, s, b, mt, out):
    """ControlledShutdown(b): flush everything, checkpoint the HWM, write the
    broker epoch file; the controller fences the broker and moves leadership
    (KIP-966 description 5.1.1: the full shutdown sequence)."""
    if s.aux_ctrs.controlled_shutdown_ctr >= k.controlled_limit:
        return
    i = b - 1
    bs = s.broker_state[i]
    if bs.status <= OFFLINE_DIRTY:
        return
    d = s.partition_data[i]
    fence = s.con_broker_reg[i].status == UNFENCED
    act = k.acts["ControlledShutdown"][b]
    for t in _stop(k, s, b, BrokerState(OFFLINE_CLEAN, bs.broker_epoch, 0, False), d, d.leo, d.hwm,
                   s.ghost_unclean[i], "controlled_shutdown_ctr", fence):
        out.append((act, t))


def uncontrolled_shutdown(k, s, b, mt, out):
    """UncontrolledShutdown(b) (ControlledShutdownEnable = false: BrokerServer.shutdown
    skips the controlled shutdown): the broker stops at once without asking
    the controller: flush everything, checkpoint the HWM, write the broker
    epoch file. Its registration stays unfenced, its leadership and ISR place
    with it, until the controller's session timeout (SessionTimeout)."""
    if s.aux_ctrs.controlled_shutdown_ctr >= k.controlled_limit:
        return
    i = b - 1
    bs = s.broker_state[i]
    if bs.status <= OFFLINE_DIRTY:
        return
    d = s.partition_data[i]
    (t,) = _stop(k, s, b, BrokerState(OFFLINE_CLEAN, bs.broker_epoch, 0, False), d, d.leo, d.hwm,
                 s.ghost_unclean[i], "controlled_shutdown_ctr", False)
    out.append((k.acts["UncontrolledShutdown"][b], t))


def begin_controlled_shutdown(k, s, b, mt, out):
    """BeginControlledShutdown(b): the broker starts its controlled shutdown
    (BrokerLifecycleManager.beginControlledShutdown: PENDING_CONTROLLED_SHUTDOWN);
    from now on its heartbeats carry wantShutDown. It keeps running."""
    if s.aux_ctrs.controlled_shutdown_ctr >= k.controlled_limit:
        return
    i = b - 1
    if s.broker_state[i].status <= OFFLINE_DIRTY or s.broker_want_shutdown[i]:
        return
    ctrs = s.aux_ctrs
    out.append((k.acts["BeginControlledShutdown"][b], with_changes(s, {
        "broker_want_shutdown": except_at(s.broker_want_shutdown, b, True),
        "aux_ctrs": ctrs._replace(controlled_shutdown_ctr=ctrs.controlled_shutdown_ctr + 1)})))


def _heartbeat_answered(s, b) -> bool:
    """b wants to shut down and its live incarnation is registered unfenced:
    the controller answers its heartbeat (else it is told to shut down now)."""
    i = b - 1
    return (s.broker_want_shutdown[i] and s.con_broker_reg[i].status == UNFENCED
            and _registered_incarnation_lives(s, b))


def enter_controlled_shutdown(k, s, b, mt, out):
    """EnterControlledShutdown(b): a wantShutDown heartbeat of a broker that
    still leads: the controller takes it out of the ISR (kip966: into the ELR
    below MinISR) and elects another leader, as for fencing
    (handleBrokerInControlledShutdown: generateLeaderAndIsrUpdates with b to
    remove); b stays registered and unfenced but is no longer active (never
    elected, not eligible for the ISR) until it is fenced; its controlled
    shutdown offset is the metadata log's end."""
    if not _heartbeat_answered(s, b) or s.con_controlled_shutdown[b - 1] is not None:
        return
    if s.con_partition_metadata.leader != b:  # no leaderships: GrantShutdown at once
        return
    options, _ = handle_broker_fenced(k, s, b)  # its partition change, but b stays unfenced
    act = k.acts["EnterControlledShutdown"][b]
    for cpm, log in options:
        out.append((act, with_changes(s, dict(
            con_partition_metadata=cpm, con_metadata_log=log,
            con_controlled_shutdown=except_at(s.con_controlled_shutdown, b, len(log))))))


def grant_shutdown(k, s, b, mt, out):
    """GrantShutdown(b): a wantShutDown heartbeat of a broker that leads
    nothing, either not yet in controlled shutdown or in it with every active
    broker's metadata at its controlled shutdown offset (calculateNextBrokerState:
    SHUTDOWN_NOW): the controller fences it (handleBrokerFenced) and answers
    shouldShutDown."""
    if not _heartbeat_answered(s, b) or s.con_partition_metadata.leader == b:
        return
    offset = s.con_controlled_shutdown[b - 1]
    if offset is not None:
        logs = s.broker_metadata_log
        active = s.con_unfenced - k.in_controlled_shutdown(s)
        if any(len(logs[a - 1]) < offset for a in active):  # lowestActiveOffset
            return
    _fence(k, s, b, k.acts["GrantShutdown"][b], s.aux_ctrs, out)


def complete_controlled_shutdown(k, s, b, mt, out):
    """CompleteControlledShutdown(b): told to shut down (its registration is
    fenced) or, ControlledShutdownTimeout, out of time waiting for that
    (BrokerServer.shutdown: "Timed out waiting for the controller to approve
    controlled shutdown"), the broker stops: flush everything, checkpoint the
    HWM, write the broker epoch file (BrokerServer.shutdown;
    LogManager.shutdown). Stopped without the grant, it stays registered
    unfenced (and leads what it led) until its session times out."""
    i = b - 1
    bs = s.broker_state[i]
    if not s.broker_want_shutdown[i] or bs.status <= OFFLINE_DIRTY:
        return
    if not k.shutdown_timeout and _heartbeat_answered(s, b):
        return
    d = s.partition_data[i]
    act = k.acts["CompleteControlledShutdown"][b]
    for t in _stop(k, s, b, BrokerState(OFFLINE_CLEAN, bs.broker_epoch, 0, False), d, d.leo, d.hwm,
                   s.ghost_unclean[i], None, False):
        out.append((act, t))


def _unclean_ghost(g):
    # a broker not caught up since an unclean restart stays so; else it is now suspect
    return g if g == UNCLEAN else STOPPED_UNCLEAN


def process_crash(k, s, b, mt, out):
    """ProcessCrash(b): the Kafka process dies, the OS stays up: the page cache
    (and so the whole log) survives, but no broker epoch file is written and
    the HWM comes back from its checkpoint."""
    if s.aux_ctrs.process_crash_ctr >= k.crash_limit:
        return
    i = b - 1
    if s.broker_state[i].status <= OFFLINE_DIRTY:
        return
    d = s.partition_data[i]
    ckpt = s.partition_hwm_checkpoint[i]
    data = d if d.hwm == min(ckpt, d.leo) else PartitionData(d.log, min(ckpt, d.leo), d.leo)
    (t,) = _stop(k, s, b, BrokerState(OFFLINE_DIRTY, 0, 0, False), data, s.partition_flushed[i],
                 ckpt, _unclean_ghost(s.ghost_unclean[i]), "process_crash_ctr", False)
    out.append((k.acts["ProcessCrash"][b], t))


def _power_loss(k, s, b):
    i = b - 1
    d = s.partition_data[i]
    f = s.partition_flushed[i]
    ckpt = s.partition_hwm_checkpoint[i]
    if f == d.leo and d.hwm == min(ckpt, f):
        data = d
    else:  # the log falls back to its flushed prefix
        data = PartitionData(d.log[:f - 1], min(ckpt, f), f)
    (t,) = _stop(k, s, b, BrokerState(OFFLINE_DIRTY, 0, 0, False), data, f, ckpt,
                 _unclean_ghost(s.ghost_unclean[i]), "power_loss_ctr", False)
    return t


def power_loss(k, s, b, mt, out):
    """PowerLoss(b): an OS crash or power loss: the page cache is gone, the log
    falls back to its flushed prefix (anything from empty to complete), the
    HWM to its checkpoint clamped to the log; no broker epoch file. A broker
    whose process crashed (OFFLINE_DIRTY) still has a page cache to lose."""
    if s.aux_ctrs.power_loss_ctr >= k.power_limit:
        return
    i = b - 1
    status = s.broker_state[i].status
    if status < OFFLINE_DIRTY:
        return
    if status == OFFLINE_DIRTY and s.partition_flushed[i] >= s.partition_data[i].leo:
        return  # stopped with nothing unflushed (a crashed process's page cache may still be dirty)
    out.append((k.acts["PowerLoss"][b], _power_loss(k, s, b)))


def power_outage(k, s, mt, out):
    """PowerOutage(b1, b2, ...) (CorrelatedPowerLoss): one outage takes down
    two or more running brokers at once (a single one is PowerLoss(b)); each
    counts against PowerLossLimit."""
    left = k.power_limit - s.aux_ctrs.power_loss_ctr
    if left < 2:
        return
    up = [b for b in k.brokers if s.broker_state[b - 1].status > OFFLINE_DIRTY]
    for r in range(2, min(left, len(up)) + 1):
        for group in combinations(up, r):
            t = s
            for b in group:
                t = _power_loss(k, t, b)
            out.append((Action("PowerOutage", group), t))


# ---- the controller (storage variants) ---------------------------------------------

def _fence(k, s, b, act, ctrs, out):
    """HandleBrokerFenced(b) and b's registration FENCED (a fenced broker
    leaves controlled shutdown): one successor per election option."""
    reg = s.con_broker_reg[b - 1]
    options, new_unfenced = handle_broker_fenced(k, s, b)
    new_reg = except_at(s.con_broker_reg, b, reg._replace(status=FENCED))
    cs = except_at(s.con_controlled_shutdown, b, None)
    for cpm, log in options:
        out.append((act, with_changes(s, dict(con_unfenced=new_unfenced, con_broker_reg=new_reg,
                                              con_partition_metadata=cpm, con_metadata_log=log,
                                              aux_ctrs=ctrs, con_controlled_shutdown=cs))))


def _registered_incarnation_lives(s, b) -> bool:
    return s.broker_state[b - 1].incarnation_id == s.con_broker_reg[b - 1].incarnation_id


def fence_broker(k, s, b, mt, out):
    """FenceBroker(b): the controller fences a live, unfenced broker (a missed
    heartbeat: a fault), bounded by FenceBrokerLimit."""
    ctrs = s.aux_ctrs
    if (s.con_broker_reg[b - 1].status != UNFENCED or not _registered_incarnation_lives(s, b)
            or ctrs.fence_broker_ctr >= k.fence_broker_limit):
        return
    _fence(k, s, b, k.acts["FenceBroker"][b],
           ctrs._replace(fence_broker_ctr=ctrs.fence_broker_ctr + 1), out)


def session_timeout(k, s, b, mt, out):
    """SessionTimeout(b): the registered incarnation of b is dead (its process
    crashed or its machine lost power) and its session times out: the
    controller fences it (Kafka's maybeFenceOneStaleBroker after
    broker.session.timeout.ms). Free of any limit, and weakly fair: no
    heartbeat can renew the session of a dead incarnation, so Kafka always
    fences it in the end (invariants/kraft/liveness.py SESSION_TIMEOUT_FAIRNESS)."""
    if s.con_broker_reg[b - 1].status != UNFENCED or _registered_incarnation_lives(s, b):
        return
    _fence(k, s, b, k.acts["SessionTimeout"][b], s.aux_ctrs, out)


def receive_broker_reg_request(k, s, b, mt, out):
    """ReceiveBrokerRegRequest(b), plus the ghost: registering the live
    incarnation of a broker that stopped uncleanly makes it UNCLEAN (suspect
    until it catches up with the leader). A registration ends a controlled
    shutdown the controller still had for b."""
    start = len(out)
    controller.receive_broker_reg_request(k, s, b, mt, out)
    i = b - 1
    if s.con_controlled_shutdown[i] is not None:
        cs = except_at(s.con_controlled_shutdown, b, None)
        for j in range(start, len(out)):
            act, t = out[j]
            out[j] = (act, with_changes(t, {"con_controlled_shutdown": cs}))
    if s.ghost_unclean[i] != STOPPED_UNCLEAN:
        return
    ghost = except_at(s.ghost_unclean, b, UNCLEAN)
    for j in range(start, len(out)):
        act, t = out[j]
        if t.con_broker_reg[i].incarnation_id == t.broker_state[i].incarnation_id:
            out[j] = (act, with_changes(t, {"ghost_unclean": ghost}))


def _caught_up(bs, epoch):
    """The ghost of a broker whose incarnation of broker epoch `epoch` provably
    caught up: TRUSTED if it still runs it, or stopped it cleanly since (a
    restart that read the epoch file back keeps the epoch); else that
    incarnation stopped uncleanly: STOPPED_UNCLEAN, UNCLEAN at the next
    registration."""
    if bs.status == OFFLINE_CLEAN or (bs.broker_epoch == epoch and bs.status > OFFLINE_DIRTY):
        return TRUSTED
    return STOPPED_UNCLEAN


def unfence_broker(k, s, b, mt, out):
    """UnfenceBroker(b), but never a broker that wants to shut down (a fenced
    broker's wantShutDown heartbeat is answered SHUTDOWN_NOW)."""
    if not s.broker_want_shutdown[b - 1]:
        controller.unfence_broker(k, s, b, mt, out)


def receive_alter_partition_request(k, s, b, mt, out):
    """ReceiveAlterPartitionRequest(b); a proposed ISR with a broker in
    controlled shutdown is rejected with IneligibleReplica
    (ReplicationControlManager.ineligibleReplicasForIsr: "shutting down").
    LeaderRecoveryState: an accepted request of the leader, which marked
    itself RECOVERED as it became leader (Partition.makeLeader), clears
    RECOVERING (KIP-704); the controller's rejection of a RECOVERING request
    with more than the leader in the ISR never fires for such a leader."""
    if not s.con_leader_recovering:
        _receive_alter_partition_request(k, s, b, mt, out)
        return
    start = len(out)
    _receive_alter_partition_request(k, s, b, mt, out)
    for j in range(start, len(out)):
        act, t = out[j]
        if t.con_partition_metadata is not s.con_partition_metadata:  # accepted: a new partition epoch
            out[j] = (act, with_changes(t, {"con_leader_recovering": False}))


def _receive_alter_partition_request(k, s, b, mt, out):
    shutting = k.in_controlled_shutdown(s)
    if not shutting:
        controller.receive_alter_partition_request(k, s, b, mt, out)
        return
    bucket = mt[MsgType.AlterPartitionRequest]
    keep = [m for m in bucket if m.source != b or not (m.isr & shutting)]
    if len(keep) < len(bucket):
        act = k.acts["ReceiveAlterPartitionRequest"][b]
        for m in bucket:
            if m.source == b and m.isr & shutting:
                resp = AlterPartitionResponse(MsgType.AlterPartitionResponse, ErrorCode.IneligibleReplica,
                                              None, None, None, None, None, m, b, CONTROLLER)
                msgs, disc = network.reply(s.messages, s.messages_discard, m, resp)
                out.append((act, with_changes(s, dict(messages=msgs, messages_discard=disc))))
        mt = mt[:MsgType.AlterPartitionRequest] + (keep,) + mt[MsgType.AlterPartitionRequest + 1:]
    controller.receive_alter_partition_request(k, s, b, mt, out)


def receive_fetch_request(k, s, b, mt, out):
    """ReceiveFetchRequest(b), plus the ghost: an UNCLEAN follower has provably
    caught up when the controller's current leader accepts a fetch of its
    registered incarnation at an offset at or above the leader's HWM and
    leader epoch start offset - what the leader needs to add it to the ISR.
    A fetch that outlived its sender (FetchRequestsSurviveStop) proves it of
    an incarnation that has since stopped uncleanly: STOPPED_UNCLEAN, suspect
    again at its next registration."""
    start = len(out)
    fetch.receive_fetch_request(k, s, b, mt, out)
    if UNCLEAN not in s.ghost_unclean:
        return
    i = b - 1
    row0 = s.partition_replica_state[i]
    for j in range(start, len(out)):
        act, t = out[j]
        row1 = t.partition_replica_state[i]
        if row1 is row0:
            continue
        cmd = t.con_partition_metadata
        if cmd.leader != b or t.partition_metadata[i].leader_epoch != cmd.leader_epoch:
            continue
        d = t.partition_data[i]
        leso = t.partition_leso[i]
        for f in range(k.n):
            p = row1[f]
            if (p is not row0[f] and t.ghost_unclean[f] == UNCLEAN
                    and p.broker_epoch == t.con_broker_reg[f].broker_epoch
                    and p.leo >= d.hwm and (leso is None or p.leo >= leso)):
                ghost = _caught_up(t.broker_state[f], p.broker_epoch)
                out[j] = (act, with_changes(t, {"ghost_unclean": except_at(t.ghost_unclean, f + 1,
                                                                           ghost)}))


# ---- the model ------------------------------------------------------------------------

class StorageModel(KraftModel):
    """kip966_storage / v3_5_storage: the reference's Next with the storage
    refinement (see the module docstring)."""

    variables = STORAGE_VARIABLES
    projections = {"reference": tuple(v for v in STORAGE_VARIABLES
                                if v != "messages_discard" and not v.startswith("aux_"))}

    def __init__(self, variant: str, constants: dict):
        flags, cfg = resolve(variant, constants)
        if not flags.storage:
            raise ValueError(f"StorageModel: {variant} is not a storage variant")
        self._setup(variant, flags, cfg)
        self.flush_policy = cfg["FlushPolicy"]
        self.flush_every_n = cfg["FlushEveryN"]
        self.segment_size = cfg["SegmentSize"]
        self.controlled_limit = cfg["ControlledShutdownLimit"]
        self.shutdown_enable = cfg["ControlledShutdownEnable"]
        self.shutdown_steps = self.shutdown_enable and cfg["ControlledShutdownSteps"]
        self.shutdown_timeout = cfg["ControlledShutdownTimeout"]
        self.leader_recovery = cfg["LeaderRecoveryState"]
        self.roll_flush_scheduled = (self.flush_policy == "segment_roll"
                                     and cfg["SegmentRollFlush"] == "scheduled")
        self.crash_limit = cfg["ProcessCrashLimit"]
        self.power_limit = cfg["PowerLossLimit"]
        self.correlated = cfg["CorrelatedPowerLoss"]
        self.strategy = cfg.get("UncleanRecoveryStrategy")  # None: v3_5_storage (none)

        R, T, RT, OD = RUNNING, MsgType, RecoveryMsgType, OFFLINE_DIRTY
        actions = self._common_actions()
        follow = {"ReceiveMetadataUpdate", "ReceiveFetchResponse", "WriteRecordToLeader"}
        actions = [(name, _following_logs(fn) if name in follow else fn, gate)
                   for name, fn, gate in actions]
        actions = [(name, receive_fetch_request if name == "ReceiveFetchRequest" else fn, gate)
                   for name, fn, gate in actions]
        if self.shutdown_steps and cfg["ShutdownStopsFetching"]:
            actions = [(name, _stopping_fetchers(fn) if name == "ReceiveMetadataUpdate" else fn,
                        gate) for name, fn, gate in actions]
        if not self.shutdown_enable:
            actions.append(("UncontrolledShutdown", uncontrolled_shutdown,
                            lambda st, reg, kinds, bud: st > OD and bud[1]))
        elif self.shutdown_steps:
            actions += [
                ("BeginControlledShutdown", begin_controlled_shutdown,
                 lambda st, reg, kinds, bud: st > OD and bud[1]),
                ("CompleteControlledShutdown", complete_controlled_shutdown,
                 lambda st, reg, kinds, bud: st > OD),
            ]
        else:
            actions.append(("ControlledShutdown", controlled_shutdown,
                            lambda st, reg, kinds, bud: st > OD and bud[1]))
        actions += [
            ("ProcessCrash", process_crash, lambda st, reg, kinds, bud: st > OD and bud[2]),
            ("PowerLoss", power_loss, lambda st, reg, kinds, bud: st >= OD and bud[3]),
        ]
        self.checkpoint_at_flush = cfg["HwmCheckpoint"] == "flush"
        if self.flush_policy == "async" or cfg["BackgroundFlushAlways"]:
            actions.append(("BackgroundFlush", background_flush, lambda st, reg, kinds, bud: True))
        if not self.checkpoint_at_flush:
            actions.append(("CheckpointHwm", checkpoint_hwm, lambda st, reg, kinds, bud: st == R))
        if self.roll_flush_scheduled:
            actions.append(("FlushRolledSegments", flush_rolled_segments,
                            lambda st, reg, kinds, bud: st == R))
        actions += [
            ("ReceiveBrokerRegRequest", receive_broker_reg_request,
             lambda st, reg, kinds, bud: T.RegisterBrokerRequest in kinds),
            ("ReceiveAlterPartitionRequest", receive_alter_partition_request,
             lambda st, reg, kinds, bud: T.AlterPartitionRequest in kinds),
        ]
        if self.shutdown_steps:  # the controller's answers to a wantShutDown heartbeat
            actions += [
                ("EnterControlledShutdown", enter_controlled_shutdown, lambda st, reg, kinds, bud: st > OD),
                ("GrantShutdown", grant_shutdown, lambda st, reg, kinds, bud: st > OD),
            ]
        actions += [
            ("FenceBroker", fence_broker, lambda st, reg, kinds, bud: bud[0] and st > OD),
            ("SessionTimeout", session_timeout, lambda st, reg, kinds, bud: st != R),
            ("UnfenceBroker", unfence_broker, lambda st, reg, kinds, bud: st == R),
        ]
        globals_ = []
        if self.correlated:
            globals_.append(("PowerOutage", power_outage))
        if self.strategy in ("balanced", "proactive"):
            actions += [
                ("ReceiveGetReplicaLogInfoRequest", recovery.receive_get_replica_log_info_request,
                 lambda st, reg, kinds, bud: st == R and RT.GetReplicaLogInfoRequest in kinds),
                ("ReceiveGetReplicaLogInfoResponse", recovery.receive_get_replica_log_info_response,
                 lambda st, reg, kinds, bud: RT.GetReplicaLogInfoResponse in kinds),
            ]
            globals_ += [("StartUncleanRecovery", recovery.start_unclean_recovery),
                         ("CompleteUncleanRecovery", recovery.complete_unclean_recovery)]
        if self.strategy == "last_known_leader":
            globals_.append(("ElectLastKnownLeader", recovery.elect_last_known_leader))
        if self.unclean_election:
            globals_.append(("ElectUncleanLeader", recovery.elect_unclean_leader))
        self._install(actions, tuple(globals_) + self._min_isr_actions())
        self.initial_ghost = (TRUSTED,) * self.n
        self._no_controlled_shutdown = (None,) * self.n

    def __repr__(self) -> str:
        return f"StorageModel({self.variant!r}, {self.constants!r})"

    def _ctrs_class(self) -> type:
        return StorageCtrs

    def in_controlled_shutdown(self, s) -> frozenset:
        cs = s.con_controlled_shutdown
        if cs is self._no_controlled_shutdown or all(o is None for o in cs):
            return EMPTY
        return frozenset(b for b, o in zip(self.brokers, cs) if o is not None)

    def init_states(self) -> list:
        """The reference's Init, every log empty and flushed, no recovery."""
        ref = self.reference_init_state()
        n = self.n
        items = list(ref)
        items[VARIABLES.index("aux_ctrs")] = self.with_min_isr_counter(StorageCtrs(n + 1, 0, 0, 0, 0, 0, 0))
        return self.with_initial_consumer([KraftStorageState(
            *items, partition_flushed=(1,) * n, partition_hwm_checkpoint=(1,) * n,
            con_recovery=None, ghost_unclean=self.initial_ghost,
            ghost_reported=RecoveryReport(0, EMPTY), broker_want_shutdown=(False,) * n,
            con_controlled_shutdown=self._no_controlled_shutdown, con_leader_recovering=False)])

    _msg_kinds = _KINDS

    def _budgets(self, ctrs) -> tuple:
        return (ctrs.fence_broker_ctr < self.fence_broker_limit,
                ctrs.controlled_shutdown_ctr < self.controlled_limit,
                ctrs.process_crash_ctr < self.crash_limit,
                ctrs.power_loss_ctr < self.power_limit)

    def plain_converters(self) -> tuple:
        """KraftModel's, then the storage variables' (in state order), then the consumer's."""
        return (self.reference_converters() + (tuple, tuple, _recovery, _ghosts, _report, _bools, tuple,
                                                bool) + self.consumer_converters())


def _recovery(rec):
    if rec is None:
        return None
    return UncleanRecovery(rec[0], frozenset(rec[1]), frozenset(LogInfo(*a) for a in rec[2]))


def _ghosts(ghost):
    return tuple(Ghost(g) for g in ghost)


def _bools(v):
    return tuple(bool(x) for x in v)


def _report(reported):
    return RecoveryReport(reported[0], frozenset(reported[1]))
