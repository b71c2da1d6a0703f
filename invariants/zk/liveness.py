"""Liveness of the `zk` model: availability and progress, in the shape of
the kraft model's (invariants/kraft/liveness.py), under ZK_FAIRNESS.

ZK_FAIRNESS is weak fairness of every protocol step: fetches, ISR changes by
the leader, the elections, the controller's reactions and requests, OffsetsForLeaderEpoch, the
flush and the HW checkpoint, restart and re-registration (every stopped broker
comes back), the controller's answer to a controlled shutdown and the stop
that follows it (a controlled shutdown once begun ends). The faults (power loss, process crash, controlled shutdown,
session expiry, controller failover) and the producer have none, as in the
kraft reference: a property that holds says "once the faults stop"; one that
fails has a behaviour in which every protocol step that stays enabled is
taken and the partition still never gets there - stuck, not slow.
"""
from __future__ import annotations

from model.zk.state import NO_LEADER, Role

from invariants.temporal import LeadsTo, TemporalProperty, per, single

LEADER = Role.LEADER

ZK_FAIRNESS = (
    "WF:ElectLeader", "WF:UncleanElectLeader", "WF:OnBrokerFailure", "WF:HandleFetch",
    "WF:ReceiveFetchResponse", "WF:ShrinkIsr", "WF:BecomeFollower", "WF:ReceiveLeaderAndIsr",
    "WF:OnBrokerStartup", "WF:TruncateToLeaderEpochEnd", "WF:FlushLog", "WF:CheckpointHw",
    "WF:Restart", "WF:Reregister", "WF:HandleControlledShutdown", "WF:FinishControlledShutdown",
)


def zk_fairness(model) -> list[str]:
    """ZK_FAIRNESS, less the actions the model's constants leave out."""
    names = set(model.action_names)
    return [f for f in ZK_FAIRNESS if f.split(":", 1)[1] in names]


def has_leader(s) -> bool:
    """The znode names a running broker that leads in the znode's epoch."""
    zk = s.zk_partition
    b = zk.leader
    return b != NO_LEADER and s.running[b] and s.role[b] == (LEADER, b, zk.leader_epoch)


def leaderless(s) -> bool:
    return not has_leader(s)


def acked(v):
    def Acked(s) -> bool:
        return any(a.value == v for a in s.acked)
    return Acked


def replicated_or_unpromised(v, replicas):
    """Every assigned replica's log holds v, or v is outside the durability
    promise (model/zk/ghost.py: no keeper stayed up)."""
    def ReplicatedOrUnpromised(s) -> bool:
        for a in s.acked:
            if a.value == v and not a.keepers:
                return True
        return all(any(r.value == v for r in s.log[b]) for b in replicas)
    return ReplicatedOrUnpromised


def _never_leader(_, s) -> str:
    if s is None:
        return "the partition stays without a leader for ever"
    zk = s.zk_partition
    named = "no leader" if zk.leader == NO_LEADER else f"leader broker-{zk.leader}"
    return (f"the partition stays without a leader for ever: the znode names {named} in leader "
            f"epoch {zk.leader_epoch}, ISR {{{', '.join(f'broker-{b}' for b in sorted(zk.isr))}}}"
            + (", which does not lead" if zk.leader != NO_LEADER else ""))


def _never_replicated(v, s) -> str:
    return f"acknowledged value {v} never reaches the log of every replica"


def zk_temporal(model) -> list[TemporalProperty]:
    replicas = tuple(model.replicas)
    values = tuple(sorted(model.values))
    return [
        TemporalProperty(
            "EventuallyHasLeader", single(LeadsTo(leaderless, has_leader)),
            "a partition without a running leader (the znode names none, or one that is down or "
            "not yet leading) eventually has one: under ZK_FAIRNESS every stopped broker comes "
            "back, so this says the partition is not stuck",
            ("zk_partition", "running", "role"), "", _never_leader),
        TemporalProperty(
            "EventuallyAcknowledgedValueFullyReplicated",
            per(values, "v", lambda v: LeadsTo(acked(v), replicated_or_unpromised(v, replicas))),
            "an acknowledged value eventually is in the log of every assigned replica (or has "
            "left the durability promise)",
            ("acked", "log"), "\\A v \\in Values", _never_replicated),
    ]
