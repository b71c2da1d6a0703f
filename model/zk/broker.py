"""Broker lifecycle: the three ways a broker stops (power loss, process crash,
controlled shutdown), restart, ZooKeeper session expiry and re-registration
(each registration a new broker epoch with BrokerEpochs kip380 / kraft)
(detailed design V2 brokerStartup / startReplica; 0.8 replication design "Follower failure",
"Leader failure").

What survives a stop (0.8 replication design: "Each log is periodically synced to disks.
Data before the flushed offset is guaranteed to be persisted"; "From time to
time, each replica checkpoints its HW to its disk"), with the names and bounds
of the kraft storage variants:
- PowerLoss(b) (an OS crash or power loss): the page cache is gone, the log
  falls back to its flushed prefix; the HW comes back from its checkpoint.
  A broker whose process crashed still has a page cache to lose: PowerLoss of
  a stopped broker with an unflushed tail drops it then.
- ProcessCrash(b): the process dies, the OS stays up: the page cache (the whole
  log, flushed or not) survives, and the OS may still write it back
  (FlushLog of a stopped broker); the in-memory HW is lost.
- ControlledShutdown(b): flush, checkpoint the HW, stop; nothing is lost. With
  Election = controller the controller first moves leadership and shrinks
  the ISR: ControlledShutdownSteps several (Kafka, KafkaServer
  controlledShutdown): ControlledShutdown(b) sends the request and b keeps
  serving, HandleControlledShutdown(b) is the controller's answer
  (controller.py), RetryControlledShutdown(b) asks again while b still leads,
  FinishControlledShutdown(b) flushes, checkpoints and stops (Kafka retries
  controlled.shutdown.max.retries times, then stops anyway); a crash may come
  in between. ControlledShutdownSteps one: all of it in one step.
Every stop ends the broker's session at once (no session timeout).
"""
from __future__ import annotations

from model.zk import controller, ghost
from model.zk.replica import NO_ROLE, follow
from model.zk.state import NO_LEADER, Role, put, with_changes
from model.zk.zookeeper import end_session


def _stop(k, s, b, ch: dict, lost: frozenset, clean: bool = False) -> dict:
    """The effect every stop shares, added to `ch`: the process is down, its
    session's ephemeral entries go (the leader entry too, unless the
    controller owns it), its role, in-memory HW, leader view and anything in
    flight to it are gone (a controller's request waits, RequestsSurviveStop);
    the ghost notes the values it lost (none in a
    clean stop, after which it stays up for the durability promise)."""
    running = put(s.running, b, False)
    ch["running"] = running
    clean_down = s.clean_down | {b} if clean else s.clean_down
    if clean:
        ch["clean_down"] = clean_down
    if b in s.zk_live:
        ch["zk_live"], zk = end_session(k, s.zk_live, s.zk_partition, b)
        if zk is not s.zk_partition:
            ch["zk_partition"] = zk
    if s.role[b] != NO_ROLE:
        ch["role"] = put(s.role, b, NO_ROLE)
    if s.hw[b]:
        ch["hw"] = put(s.hw, b, 0)
    if s.leader_view[b] is not None:
        ch["leader_view"] = put(s.leader_view, b, None)
    if s.fetch_response[b] is not None:
        ch["fetch_response"] = put(s.fetch_response, b, None)
    if s.ctl_request[b] and not k.requests_survive_stop:
        ch["ctl_request"] = put(s.ctl_request, b, ())
    if s.shutting_down[b]:  # a controlled shutdown cut short, or finished
        ch["shutting_down"] = put(s.shutting_down, b, 0)
    ch["acked"] = ghost.crash(s.acked, b, lost, ghost.up_of(running, clean_down))
    return ch


def power_loss(k, s, b, out):
    """PowerLoss(b): an OS crash or power loss: the unflushed log tail and the
    in-memory HW are lost, the session ends, a fetch response in flight to b
    is lost. Also of a broker already stopped by a process crash whose page
    cache still holds an unflushed tail. Bounded by PowerLossLimit."""
    f = s.faults
    if f.power_losses >= k.power_loss_limit:
        return
    log = s.log[b]
    flushed = s.flushed[b]
    running = s.running[b]
    if not running and flushed >= len(log):
        return  # stopped, and nothing left in the page cache to lose
    lost = frozenset(r.value for r in log[flushed:])
    ch = {}
    if lost:
        ch["log"] = put(s.log, b, log[:flushed])
    ch["faults"] = f._replace(power_losses=f.power_losses + 1)
    if running:
        _stop(k, s, b, ch, lost)
    elif lost:
        ch["acked"] = ghost.crash(s.acked, b, lost, ghost.up_of(s.running, s.clean_down))
    out.append((k.acts["PowerLoss"][b], with_changes(s, ch)))


def process_crash(k, s, b, out):
    """ProcessCrash(b): the Kafka process dies, the OS stays up: the log stays
    whole in the page cache (unflushed records too), the in-memory HW is lost,
    the session ends. Bounded by ProcessCrashLimit."""
    f = s.faults
    if not s.running[b] or f.process_crashes >= k.process_crash_limit:
        return
    ch = {"faults": f._replace(process_crashes=f.process_crashes + 1)}
    _stop(k, s, b, ch, frozenset())
    out.append((k.acts["ProcessCrash"][b], with_changes(s, ch)))


def controlled_shutdown(k, s, b, out):
    """ControlledShutdown(b): a clean stop: the log is flushed, the HW
    checkpointed, then the broker stops and its session ends. Election =
    controller: the controller first moves b's leadership to another live ISR
    member and removes b from the ISR (v3.5 description 2.8: a broker that
    "has shutdown" is handled as a fenced one), one successor per choice of
    leader. Bounded by ControlledShutdownLimit. ControlledShutdownSteps
    several (Election = controller): only the first step, b sends its
    ControlledShutdownRequest and keeps running."""
    f = s.faults
    if not s.running[b] or f.shutdowns >= k.controlled_shutdown_limit:
        return
    ch = {"faults": f._replace(shutdowns=f.shutdowns + 1)}
    if k.shutdown_in_steps:
        if s.shutting_down[b] or b not in s.zk_live:
            return
        ch["shutting_down"] = put(s.shutting_down, b, 1)
        out.append((k.acts["ControlledShutdown"][b], with_changes(s, ch)))
        return
    _clean_stop(k, s, b, ch)
    act = k.acts["ControlledShutdown"][b]
    if k.controller and b in s.ctl_live:
        for t in controller.handle_stop(k, with_changes(s, ch), b):
            out.append((act, t))
    else:
        out.append((act, with_changes(s, ch)))


def retry_controlled_shutdown(k, s, b, out):
    """RetryControlledShutdown(b): the controller's answer named a partition b
    still leads (nobody could take it): b asks again (KafkaServer
    controlledShutdown retries)."""
    if s.shutting_down[b] != 2 or s.zk_partition.leader != b or not s.running[b]:
        return
    out.append((k.acts["RetryControlledShutdown"][b],
                with_changes(s, {"shutting_down": put(s.shutting_down, b, 1)})))


def finish_controlled_shutdown(k, s, b, out):
    """FinishControlledShutdown(b): answered (or out of retries), b shuts down:
    the log is flushed, the HW checkpointed, the process stops and the
    session ends; the controller handles the loss later (OnBrokerFailure)."""
    if s.shutting_down[b] != 2 or not s.running[b]:
        return
    ch: dict = {}
    _clean_stop(k, s, b, ch)
    out.append((k.acts["FinishControlledShutdown"][b], with_changes(s, ch)))


def _clean_stop(k, s, b, ch: dict) -> None:
    """Flush, checkpoint the HW, stop (added to `ch`)."""
    leo = len(s.log[b])
    if s.flushed[b] != leo:
        ch["flushed"] = put(s.flushed, b, leo)
    if s.ckpt_hw[b] != s.hw[b]:
        ch["ckpt_hw"] = put(s.ckpt_hw, b, s.hw[b])
    _stop(k, s, b, ch, frozenset(), clean=True)


def restart(k, s, b, out):
    """Restart(b): local recovery of the log (its disk image, or with the page
    cache after a process crash) with r.hw = min(last checkpointed HW, r.leo)
    (V2 startReplica), registration in ZooKeeper. Registration: b then becomes
    follower of the registered leader (hw_truncation: truncating to that HW)
    or, with no leader registered, takes part in the election (ElectLeader).
    Controller: b waits for the controller's LeaderAndIsr (a bounce the
    controller never saw is noted in ctl_stale); with BrokerEpochs kraft b
    registers only once the controller has handled its old incarnation's
    loss."""
    if s.running[b] or (k.broker_epochs == "kraft" and b in s.ctl_live):
        return
    log = s.log[b]
    ch = {"running": put(s.running, b, True), "zk_live": s.zk_live | {b}}
    if k.epochs:
        ch["broker_epoch"] = put(s.broker_epoch, b, s.broker_epoch[b] + 1)
    if b in s.clean_down:  # back up: outside the ISR it keeps nothing for the promise
        ch["clean_down"] = s.clean_down - {b}
        if b not in s.zk_partition.isr:
            ch["acked"] = ghost.restrict(s.acked, s.zk_partition.isr | (s.clean_down - {b}),
                                         ghost.up_of(s.running, s.clean_down))
    hw = min(s.ckpt_hw[b], len(log))
    if hw:
        ch["hw"] = put(s.hw, b, hw)
    zk = s.zk_partition
    if k.controller:
        if b in s.ctl_live:
            ch["ctl_stale"] = s.ctl_stale | {b}
    elif zk.leader != NO_LEADER:
        follow(k, s, b, zk.leader, zk.leader_epoch, ch)
    out.append((k.acts["Restart"][b], with_changes(s, ch)))


def expire_session(k, s, b, out):
    """ExpireSession(b): b's ZooKeeper session expires (a long GC pause, a
    network partition from ZooKeeper) while the process keeps running: its
    ephemeral entries go, and a leader carries on as a zombie until it
    re-registers or is told otherwise (0.8 replication design, "Open Issues"
    item 2: "multiple leaders for the same partition at the same time"). Bounded by
    SessionExpiryLimit."""
    f = s.faults
    if not s.running[b] or b not in s.zk_live or f.expiries >= k.session_expiry_limit:
        return
    live, zk = end_session(k, s.zk_live, s.zk_partition, b)
    ch = {"zk_live": live, "faults": f._replace(expiries=f.expiries + 1)}
    if zk is not s.zk_partition:
        ch["zk_partition"] = zk
    out.append((k.acts["ExpireSession"][b], with_changes(s, ch)))


def reregister(k, s, b, out):
    """Reregister(b): b opens a new session and registers again.
    Registration: it restarts its replica from ZooKeeper (V2 brokerStartup ->
    startReplica): a leader whose entry is gone stops leading; b follows the
    registered leader (unless it already does) or waits for an election. The
    log is already open: no recovery. Controller: the replica keeps its state
    until the controller tells it otherwise (BrokerEpochs kraft: b registers
    only once the controller has handled its lost session)."""
    if not s.running[b] or b in s.zk_live or (k.broker_epochs == "kraft" and b in s.ctl_live):
        return
    ch = {"zk_live": s.zk_live | {b}}
    if k.epochs:
        ch["broker_epoch"] = put(s.broker_epoch, b, s.broker_epoch[b] + 1)
    zk = s.zk_partition
    role = s.role[b]
    if k.controller:
        if b in s.ctl_live:
            ch["ctl_stale"] = s.ctl_stale | {b}
    elif zk.leader == NO_LEADER:
        if role != NO_ROLE:
            ch["role"] = put(s.role, b, NO_ROLE)
        if s.leader_view[b] is not None:
            ch["leader_view"] = put(s.leader_view, b, None)
        if s.fetch_response[b] is not None:
            ch["fetch_response"] = put(s.fetch_response, b, None)
    elif not (role.role in (Role.FOLLOWER, Role.TRUNCATING) and role.leader == zk.leader
              and role.leader_epoch == zk.leader_epoch):
        follow(k, s, b, zk.leader, zk.leader_epoch, ch)
    out.append((k.acts["Reregister"][b], with_changes(s, ch)))
