"""Broker lifecycle: crash, restart, ZooKeeper session expiry and
re-registration (seed 001 V2 brokerStartup / startReplica; seed 003 "Follower
failure", "Leader failure").

A crash keeps only what is on disk: the flushed prefix of the log and the last
checkpointed HW (seed 003: "Each log is periodically synced to disks. Data
before the flushed offset is guaranteed to be persisted"; "From time to time,
each replica checkpoints its HW to its disk"). Its session ends with it.
"""
from __future__ import annotations

from model.zk import ghost
from model.zk.replica import NO_ROLE, follow
from model.zk.state import NO_LEADER, Role, put, with_changes
from model.zk.zookeeper import end_session


def crash(k, s, b, out):
    """Crash(b): the process dies; the unflushed log tail and the in-memory HW
    are lost, the session's ephemeral entries go (the leader entry too), a
    fetch response in flight to b is lost. Bounded by CrashLimit."""
    if not s.running[b] or s.crashes >= k.crash_limit:
        return
    log = s.log[b]
    flushed = s.flushed[b]
    running = put(s.running, b, False)
    ch = {"running": running, "crashes": s.crashes + 1}
    if flushed < len(log):
        ch["log"] = put(s.log, b, log[:flushed])
        lost = frozenset(r.value for r in log[flushed:])
    else:
        lost = frozenset()
    if b in s.zk_live:
        ch["zk_live"], zk = end_session(s.zk_live, s.zk_partition, b)
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
    ch["acked"] = ghost.crash(s.acked, b, lost, running)
    out.append((k.acts["Crash"][b], with_changes(s, ch)))


def restart(k, s, b, out):
    """Restart(b): local recovery of the log (its disk image) with
    r.hw = min(last checkpointed HW, r.leo) (V2 startReplica), registration in
    ZooKeeper, then becomeFollower of the registered leader (hw_truncation:
    truncating to that HW) or, with no leader registered, waiting for an
    election (ElectLeader)."""
    if s.running[b]:
        return
    log = s.log[b]
    ch = {"running": put(s.running, b, True), "zk_live": s.zk_live | {b}}
    hw = min(s.ckpt_hw[b], len(log))
    if hw:
        ch["hw"] = put(s.hw, b, hw)
    zk = s.zk_partition
    if zk.leader != NO_LEADER:
        follow(k, s, b, zk.leader, zk.leader_epoch, ch)
    out.append((k.acts["Restart"][b], with_changes(s, ch)))


def expire_session(k, s, b, out):
    """ExpireSession(b): b's ZooKeeper session expires (a long GC pause, a
    network partition from ZooKeeper) while the process keeps running: its
    ephemeral entries go, and a leader carries on as a zombie until it
    re-registers (seed 003, open issue 2: "multiple leaders for the same
    partition at the same time"). Bounded by SessionExpiryLimit."""
    if not s.running[b] or b not in s.zk_live or s.expiries >= k.session_expiry_limit:
        return
    live, zk = end_session(s.zk_live, s.zk_partition, b)
    ch = {"zk_live": live, "expiries": s.expiries + 1}
    if zk is not s.zk_partition:
        ch["zk_partition"] = zk
    out.append((k.acts["ExpireSession"][b], with_changes(s, ch)))


def reregister(k, s, b, out):
    """Reregister(b): b opens a new session, registers again and restarts its
    replica from ZooKeeper (V2 brokerStartup -> startReplica): a leader whose
    entry is gone stops leading; b follows the registered leader (unless it
    already does) or waits for an election. The log is already open: no
    recovery."""
    if not s.running[b] or b in s.zk_live:
        return
    ch = {"zk_live": s.zk_live | {b}}
    zk = s.zk_partition
    role = s.role[b]
    if zk.leader == NO_LEADER:
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
