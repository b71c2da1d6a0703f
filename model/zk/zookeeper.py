"""ZooKeeper as an atomic registry, and leader election through it.

The registry holds (detailed design V2, "Paths stored in Zookeeper"):
- /brokers/ids/[id]: an ephemeral entry per broker with a live session (zk_live);
- the assigned replicas (a constant of the model: placement.py);
- the partition's leader, leader epoch and ISR in one versioned znode, as 0.8
  stores them (zk_partition). The leader entry is ephemeral in V2: it goes
  when the leader's session ends; we clear it in that write (version + 1).

Every action reads and writes the registry atomically (one ZooKeeper
operation per step). The election is the design's "each surviving replica in
ISR registers itself in Zookeeper; the replica that registers first becomes
the new leader" (0.8 replication design): any live ISR member may win, chosen
nondeterministically; a replica that restarts into a leaderless partition
takes part (V2 startReplica calls leaderElection when no leader exists).
With Election = controller the leader entry is not ephemeral and only the
controller writes it (controller.py).
"""
from __future__ import annotations

from model.zk import ghost
from model.zk.replica import leader_hw
from model.zk.state import NO_LEADER, LeaderView, ReplicaRole, Role, put, with_changes


def end_session(k, zk_live: frozenset, zk, b: int):
    """b's session ends: its ephemeral entries go (its broker id; the leader
    entry if it is the leader, unless the controller owns it). Returns
    (zk_live', znode')."""
    live = zk_live - {b}
    if zk.leader == b and not k.controller:
        zk = zk._replace(leader=NO_LEADER, version=zk.version + 1)
    return live, zk


def elect_leader(k, s, b, out):
    """ElectLeader(b): no leader is registered, b is a live ISR member and
    registers first (V2 leaderElection: "r in AR && r in ISR"). It writes itself
    as leader with a new epoch; the ISR keeps its live members (the 0.8
    controller's rule, and the V2 leader's "write the current ISR" after the
    dead ones failed to catch up). b's HW: ElectionHw (replica.leader_hw):
    Kafka's makeLeader keeps b's HW and raises it to the LEO only when b is
    alone in the ISR; the 0.8 replication design takes the LEO ("The new
    leader chooses its LEO as the new HW"; V2 becomeLeader: r.hw = r.leo).

    UncleanElectLeader(b): with UncleanLeaderElection, when no ISR member is
    alive, a live replica outside the ISR may be elected (Kafka's design docs, "Choose the
    first replica (not necessarily in the ISR) that comes back to life"); the
    ISR becomes {b}."""
    if not s.running[b] or b not in s.zk_live:
        return
    zk = s.zk_partition
    if zk.leader != NO_LEADER:
        return
    if b in zk.isr:
        isr = zk.isr & s.zk_live
        act = k.acts["ElectLeader"][b]
    elif k.unclean_leader_election and not (zk.isr & s.zk_live):
        isr = frozenset((b,))
        act = k.acts["UncleanElectLeader"][b]
    else:
        return
    epoch = zk.leader_epoch + 1
    version = zk.version + 1
    view = LeaderView(isr, version, k.no_follower_leos)
    ch = {
        "zk_partition": zk._replace(leader=b, leader_epoch=epoch, isr=isr, version=version),
        "role": put(s.role, b, ReplicaRole(Role.LEADER, b, epoch)),
        "leader_view": put(s.leader_view, b, view),
        "acked": ghost.isr_changed(s.acked, isr, s.running, s.clean_down,
                                   act.name == "UncleanElectLeader"),
    }
    leader_hw(k, s, b, view, ch)
    if s.fetch_response[b] is not None:
        ch["fetch_response"] = put(s.fetch_response, b, None)
    unclean = act.name == "UncleanElectLeader"
    f = s.faults
    if f.raced or f.unclean_leader != unclean:
        ch["faults"] = f._replace(raced=False, unclean_leader=unclean)
    out.append((act, with_changes(s, ch)))
