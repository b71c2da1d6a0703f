"""The replica of the partition on a broker: becoming follower (and the
truncation each variant does then), the leader's commit (HW) and ISR
maintenance, and OffsetsForLeaderEpoch (KIP-101).

Sources (docs/sources.md): the 0.8 replication design, "Synchronous
replication" and "Failure scenarios"; the detailed design V2,
becomeFollower, becomeLeader, the commit thread, the follower's HW rule;
KIP-101 for the leader-epoch truncation.
"""
from __future__ import annotations

from model.zk import ghost
from model.zk.state import NO_LEADER, ReplicaRole, Role, put, with_changes

LEADER, FOLLOWER, TRUNCATING, NONE = Role.LEADER, Role.FOLLOWER, Role.TRUNCATING, Role.NONE
NO_ROLE = ReplicaRole(NONE, NO_LEADER, -1)


def truncate(s, b: int, to: int, ch: dict) -> None:
    """Truncate b's log to `to` records (HW and flushed offset follow it down);
    records dropped set the `truncated` witness. The checkpointed HW stays
    (it is rewritten at the next checkpoint): a log shorter than it shows a
    truncation below the HW (witnesses.truncated_below_hw). Reads what this
    step already changed from `ch`."""
    logs = ch.get("log", s.log)
    log = logs[b]
    if to >= len(log):
        return
    ch["log"] = put(logs, b, log[:to])
    hw = ch.get("hw", s.hw)
    if hw[b] > to:
        ch["hw"] = put(hw, b, to)
    flushed = ch.get("flushed", s.flushed)
    if flushed[b] > to:
        ch["flushed"] = put(flushed, b, to)
    if not s.truncated:
        ch["truncated"] = True


def follow(k, s, b: int, leader: int, epoch: int, ch: dict) -> None:
    """b becomes a follower of `leader` in `epoch` (V2 becomeFollower).

    hw_truncation: "truncate the log to r.hw", then fetch from the LEO (detailed design V2;
    0.8 replication design: a failed follower that comes back "first truncates its log to the
    last checkpointed HW").
    leader_epoch: no truncation yet; the follower first asks the leader for the
    end offset of its latest epoch (TRUNCATING), unless its log is empty.
    Reads hw / log from `ch` when the step already changed them (Restart)."""
    stopped_leading = ch.get("leader_view", s.leader_view)[b] is not None
    if k.variant_flags.leader_epoch:
        log = ch.get("log", s.log)[b]
        role = ReplicaRole(TRUNCATING if log else FOLLOWER, leader, epoch)
    else:
        role = ReplicaRole(FOLLOWER, leader, epoch)
        truncate(s, b, ch.get("hw", s.hw)[b], ch)
    ch["role"] = put(ch.get("role", s.role), b, role)
    if stopped_leading:
        ch["leader_view"] = put(ch.get("leader_view", s.leader_view), b, None)
    responses = ch.get("fetch_response", s.fetch_response)
    if responses[b] is not None:
        ch["fetch_response"] = put(responses, b, None)


def end_offset_for_epoch(leader_log: tuple, leader_epoch: int, requested: int) -> int:
    """OffsetsForLeaderEpoch at the leader (KIP-101): the offset where the
    requested epoch ends in the leader's log: the leader's LEO when it is the
    leader's current epoch, else the first offset of a later epoch ("the first
    offset in (Follower Leader Epoch + 1)"), or the LEO when the log holds none
    (the current epoch starts at the LEO, as the leader registers it on
    election). KIP-101 as written: no check that the leader knows the epoch
    (that came with KIP-279)."""
    if requested == leader_epoch:
        return len(leader_log)
    for o, r in enumerate(leader_log):
        if r.epoch > requested:
            return o
    return len(leader_log)


def write_isr(k, s, leader: int, view, new_isr: frozenset):
    """The leader writes the ISR to ZooKeeper: a conditional update on the
    znode version it last saw (0.8 ReplicationUtils.updateLeaderAndIsr). Returns
    (znode', view') or None when the version check fails (the leader skips the
    update, as Kafka logs "Cached zkVersion ... not equal to that in zookeeper").
    Without ConditionalIsrUpdate the write always lands (the V2 design's
    separate ISR path, written blindly)."""
    zk = s.zk_partition
    if k.conditional_isr_update and view.zk_version != zk.version:
        return None
    version = zk.version + 1
    return (zk._replace(isr=new_isr, version=version),
            view._replace(isr=new_isr, zk_version=version))


def commit(k, s, leader: int, view, log: tuple, ch: dict) -> None:
    """The leader's commit: HW = the smallest LEO of the ISR members (a record
    is committed once every ISR member has it, 0.8 replication design;
    Partition.maybeIncrementLeaderHW); never lowered. The records it passes
    are committed (ghost.acknowledge: the durability promise, with either
    Acks), records of an earlier leader too when the election kept the HW
    (ElectionHw kept): Kafka promises committed records, whoever wrote them
    (detailed design V2: the commit thread acks the commitQ)."""
    new_hw = len(log)
    fl = view.follower_leo
    for f in view.isr:
        if f != leader and fl[f] < new_hw:
            new_hw = fl[f]
    hw = ch.get("hw", s.hw)
    old_hw = hw[leader]
    if new_hw <= old_hw:
        return
    ch["hw"] = put(hw, leader, new_hw)
    zk = ch.get("zk_partition", s.zk_partition)
    logs = ch.get("log", s.log)
    ch["acked"] = ghost.acknowledge(ch.get("acked", s.acked),
                                    [r.value for r in log[old_hw:new_hw]],
                                    view.isr & zk.isr, logs)


def leader_hw(k, s, b, view, ch: dict) -> None:
    """The HW of b, just made leader with `view` (the ISR it leads, its
    followers' LEOs unknown), added to `ch` after the step's znode, view and
    ghost changes. ElectionHw kept (Kafka's Partition.makeLeader): b keeps
    its own HW and raises it as maybeIncrementLeaderHW does, which reaches
    the LEO at once only when b is alone in the ISR (commit: each other
    member's LEO counts as 0 until it fetches). ElectionHw leo (the 0.8
    replication design): the LEO, with no commit (nothing is acknowledged)."""
    logs = ch.get("log", s.log)
    if k.election_hw_leo:
        hw = ch.get("hw", s.hw)
        if hw[b] != len(logs[b]):
            ch["hw"] = put(hw, b, len(logs[b]))
        return
    commit(k, s, b, view, logs[b], ch)


def become_follower(k, s, b, out):
    """BecomeFollower(b): the leader-change listener fires (detailed design V2
    onLeaderChange): b, registered and a replica, follows the znode's leader."""
    if not s.running[b] or b not in s.zk_live:
        return
    zk = s.zk_partition
    leader = zk.leader
    if leader == NO_LEADER or leader == b:
        return
    role = s.role[b]
    if role.role != NONE and role.leader == leader and role.leader_epoch == zk.leader_epoch:
        return
    ch: dict = {}
    follow(k, s, b, leader, zk.leader_epoch, ch)
    out.append((k.acts["BecomeFollower"][b], _apply(s, ch)))


def truncate_to_leader_epoch_end(k, s, b, out):
    """TruncateToLeaderEpochEnd(b) (leader_epoch): b sends OffsetsForLeaderEpoch
    for the latest epoch in its log, the leader answers with that epoch's end
    offset in its log, and b truncates what lies beyond it ("truncate only
    messages that do not exist in the leader's log", KIP-101), then fetches.
    One step: the follower does nothing else while it waits."""
    role = s.role[b]
    if role.role != TRUNCATING or not s.running[b]:
        return
    leader = role.leader
    lrole = s.role[leader]
    if not s.running[leader] or lrole.role != LEADER:
        return
    log = s.log[b]
    end = end_offset_for_epoch(s.log[leader], lrole.leader_epoch, log[-1].epoch)
    ch: dict = {"role": put(s.role, b, role._replace(role=FOLLOWER))}
    truncate(s, b, min(end, len(log)), ch)
    out.append((k.acts["TruncateToLeaderEpochEnd"][b], _apply(s, ch)))


def shrink_isr(k, s, leader, out):
    """ShrinkIsr(leader, f): the leader drops a follower that has not caught up
    to its LEO within replica.lag.time.max.ms from the ISR (0.8 replication
    design "Follower failure"; detailed design V2 KeepInSyncTime; Kafka
    Partition.maybeShrinkIsr / getOutOfSyncReplicas), then commits what the
    remaining ISR holds. Untimed, that time may always pass: a follower whose
    last fetch was below the leader's LEO may be dropped at any time; so may
    one whose last fetch reached the LEO, if it then stalls (stops fetching
    or fetches too slowly: out of sync when now - lastCaughtUpTimeMs exceeds
    the lag time, 0.9 to 2.0; 0.8's stuck-follower timer), at most
    FollowerStallLimit times (0: never, as Kafka 2.1 on, KAFKA-7152:
    Replica.isCaughtUp holds for a follower at the leader's LEO)."""
    if not s.running[leader] or s.role[leader].role != LEADER:
        return
    view = s.leader_view[leader]
    log = s.log[leader]
    leo = len(log)
    stall = s.faults.stalls < k.follower_stall_limit
    for f in sorted(view.isr):
        caught_up = view.follower_leo[f] >= leo
        if f == leader or (caught_up and not stall):
            continue
        written = write_isr(k, s, leader, view, view.isr - {f})
        if written is None:
            continue
        zk, new_view = written
        ch = {"zk_partition": zk, "leader_view": put(s.leader_view, leader, new_view),
              "acked": ghost.isr_changed(s.acked, zk.isr, s.running, s.clean_down)}
        commit(k, s, leader, new_view, log, ch)
        if caught_up:
            ch["faults"] = s.faults._replace(stalls=s.faults.stalls + 1)
        out.append((k.acts["ShrinkIsr"][(leader, f)], _apply(s, ch)))


_apply = with_changes
