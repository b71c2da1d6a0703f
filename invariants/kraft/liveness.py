"""Liveness of the `kraft` model: the reference's LIVENESS section
(Vanlightly/kafka-tlaplus @ 823615e, kraft/{kip-966,v3.5}/*_properties.tla),
same names and meaning, plus kmc's availability property.

The reference checks them under `LivenessSpec == Init /\\ [][Next]_vars /\\
Liveness`, where Liveness is weak fairness of eleven actions, each per broker
(`\\A b \\in Brokers : WF_vars(BrokerStart(b)) /\\ ...`): REFERENCE_FAIRNESS,
the default fairness of a spec that lists temporal properties (the storage
variants add their progress steps: STORAGE_FAIRNESS). The faults (shutdowns,
fencing, ISR shrinks, reassignment, writes) have no fairness.

Two readings follow TLC's parse of the reference's text, not its comment:
- AlterPartitionEpochEventuallyReachedOrZero is `[]<>(\\A b : P ~> Q)`: from
  some point on every pending request is answered (a finite number may stay
  unanswered); a counterexample keeps a broker's request pending for ever
  while it is pending infinitely often. The quantifier moves out (finitely
  many brokers), so it is checked per broker.
- EventuallyReassignmentCompletes is the bulleted `\\/ adding # {} \\/ (removing
  # {} ~> adding = {} /\\ removing = {})`: the first disjunct is a state
  predicate of the initial state (false in every reference Init), the leads-to
  starts from `removing # {}` only.
"""
from __future__ import annotations

from model.kraft.state import NO_LEADER, BrokerStatus, RegStatus, Role

from invariants.kraft.common import KIP966, context_of
from invariants.temporal import (AlwaysEventually, LeadsTo, TemporalProperty, per, single)

STARTING, RUNNING = BrokerStatus.STARTING, BrokerStatus.RUNNING
FENCED, UNFENCED = RegStatus.FENCED, RegStatus.UNFENCED

# The reference's Liveness, in its order: WF of each action, per broker.
REFERENCE_FAIRNESS = (
    "WF:BrokerStart", "WF:ReceiveBrokerRegResponse", "WF:ReceiveMetadataUpdate",
    "WF:SendAlterPartitionRequest", "WF:ReceiveAlterPartitionResponse", "WF:SendFetchRequest",
    "WF:ReceiveFetchRequest", "WF:ReceiveFetchResponse", "WF:ReceiveBrokerRegRequest",
    "WF:ReceiveAlterPartitionRequest", "WF:UnfenceBroker",
)

# The storage variants (kmc's own, model/kraft/storage.py, recovery.py) add the
# steps that make progress there by the same criterion: the OS flushes dirty
# pages, Kafka's HWM checkpoint timer fires (CheckpointHwm), the flush-log task
# a segment roll scheduled runs (FlushRolledSegments), and an unclean
# recovery asks, is answered and completes.
# A dead incarnation cannot renew its session, so Kafka's session timeout
# (broker.session.timeout.ms) always fences it in the end; without this entry a
# fair behaviour could keep a crashed broker registered - and leader - for ever.
# The reference fences in the shutdown step itself and has no such action.
SESSION_TIMEOUT_FAIRNESS = ("WF:SessionTimeout",)
STORAGE_FAIRNESS = SESSION_TIMEOUT_FAIRNESS + (
    "WF:BackgroundFlush", "WF:CheckpointHwm", "WF:FlushRolledSegments",
    "WF:ReceiveGetReplicaLogInfoRequest", "WF:ReceiveGetReplicaLogInfoResponse",
    "WF:StartUncleanRecovery", "WF:CompleteUncleanRecovery", "WF:ElectLastKnownLeader",
    "WF:ElectUncleanLeader",
) + (
    # a controlled shutdown in steps: the controller answers every heartbeat in
    # the end, and a broker told to shut down (or out of time) does (BrokerServer.shutdown);
    # beginning one is an operator's choice (a fault: no fairness)
    "WF:EnterControlledShutdown", "WF:GrantShutdown", "WF:CompleteControlledShutdown",
)

REFERENCE_NAMES = ("EventuallyRuns", "EventuallyUnfenced", "AlterPartitionEpochEventuallyReachedOrZero",
                   "EventuallyMetadataConverges", "EventuallyWriteIsAcceptedOrRejected",
                   "EventuallyAcknowledgedValueFullyReplicated", "EventuallyReassignmentCompletes")


def reference_fairness(model) -> list[str]:
    """REFERENCE_FAIRNESS (and STORAGE_FAIRNESS), less the actions the model's
    variant does not have."""
    names = set(model.action_names)
    return [f for f in REFERENCE_FAIRNESS + STORAGE_FAIRNESS if f.split(":", 1)[1] in names]


# ---- the predicates (b is a broker id 1..n; tuples are indexed b - 1) -------------

def starting(b):
    def Starting(s) -> bool:
        return s.broker_state[b - 1].status == STARTING
    return Starting


def running_and_unfenced(b):
    def RunningAndUnfenced(s) -> bool:
        return (s.broker_state[b - 1].status == RUNNING
                and s.con_broker_reg[b - 1].status == UNFENCED)
    return RunningAndUnfenced


def fenced(b):
    def Fenced(s) -> bool:
        return s.con_broker_reg[b - 1].status == FENCED
    return Fenced


def unfenced(b):
    def Unfenced(s) -> bool:
        return s.con_broker_reg[b - 1].status == UNFENCED
    return Unfenced


def ap_pending(b):
    def ApPending(s) -> bool:
        return s.partition_pending_ap[b - 1].epoch > 0
    return ApPending


def ap_reached_or_zero(b):
    def ApReachedOrZero(s) -> bool:
        epoch = s.partition_pending_ap[b - 1].epoch
        return epoch == 0 or epoch == s.partition_metadata[b - 1].partition_epoch
    return ApReachedOrZero


def _needs_action(s, b, md_offset) -> bool:
    """PartitionNeedsAction(b, md_offset) of the reference's functions."""
    i = b - 1
    if s.partition_status[i] == Role.Leader:
        return True
    md = s.partition_metadata[i]
    record = s.con_metadata_log[md_offset - 1]
    if b in md.replicas:
        return record.leader_epoch > md.leader_epoch
    return b in record.replicas


def metadata_converged(brokers):
    def MetadataConverged(s) -> bool:
        con = s.con_partition_metadata
        for b in brokers:
            i = b - 1
            md = s.partition_metadata[i]
            if (md.isr == con.isr and md.leader == con.leader and md.leader_epoch == con.leader_epoch
                    and md.partition_epoch == con.partition_epoch):
                continue
            status = s.partition_status[i]
            if status == Role.Follower:
                unreplicated = range(len(s.broker_metadata_log[i]) + 1, len(s.con_metadata_log) + 1)
                if not any(_needs_action(s, b, off) for off in unreplicated):
                    continue
            elif status is None and b not in con.replicas:
                continue
            return False
        return True
    return MetadataConverged


def sent(v):
    def Sent(s) -> bool:
        return v in s.inv_sent
    return Sent


def acked_either_way(v):
    def AckedEitherWay(s) -> bool:
        return v in s.inv_pos_acked or v in s.inv_neg_acked
    return AckedEitherWay


def pos_acked(v):
    def PosAcked(s) -> bool:
        return v in s.inv_pos_acked
    return PosAcked


def fully_replicated(v):
    def FullyReplicated(s) -> bool:
        data = s.partition_data
        return all(any(r.value == v for r in data[b - 1].log)
                   for b in s.con_partition_metadata.replicas)
    return FullyReplicated


def adding_nonempty(s) -> bool:
    return bool(s.con_partition_metadata.adding)


def removing_nonempty(s) -> bool:
    return bool(s.con_partition_metadata.removing)


def reassignment_done(s) -> bool:
    md = s.con_partition_metadata
    return not md.adding and not md.removing


def leaderless(s) -> bool:
    return s.con_partition_metadata.leader == NO_LEADER


def has_leader(s) -> bool:
    return s.con_partition_metadata.leader != NO_LEADER


def live_leader(s) -> bool:
    """The controller's leader is a broker that runs and that it has unfenced
    (EventuallyHasLeader also counts a leader that crashed and is not yet fenced)."""
    leader = s.con_partition_metadata.leader
    return (leader != NO_LEADER and s.broker_state[leader - 1].status == RUNNING
            and s.con_broker_reg[leader - 1].status == UNFENCED)


def no_live_leader(s) -> bool:
    return not live_leader(s)


# ---- headlines: what never happens, with what the cycle's first state shows ---------

def _set(xs) -> str:
    return "{" + ", ".join(str(x) for x in sorted(xs)) + "}"


def _status(s, b) -> str:
    return (f"{s.broker_state[b - 1].status.name} on broker {b}, "
            f"{s.con_broker_reg[b - 1].status.name} at the controller")


def _partition(s) -> str:
    md = s.con_partition_metadata
    leader = "no leader" if md.leader == NO_LEADER else f"leader {md.leader}"
    elr = f", ELR {_set(md.elr)}" if md.elr or md.last_known_elr else ""
    return f"{leader}, ISR {_set(md.isr)}{elr}"


def _never_runs(b, s) -> str:
    return (f"broker {b} starts but is never both RUNNING and UNFENCED"
            + (f" ({_status(s, b)})" if s is not None else ""))


def _never_unfenced(b, s) -> str:
    return (f"broker {b} stays FENCED for ever"
            + (f" (it is {s.broker_state[b - 1].status.name})" if s is not None else ""))


def _never_ap(b, s) -> str:
    epoch = f" for partition epoch {s.partition_pending_ap[b - 1].epoch}" if s is not None else ""
    return (f"broker {b}'s AlterPartition request{epoch} stays pending for ever: that partition "
            f"epoch is never reached and the request is never rejected")


def _never_converges(brokers):
    def never(_, s) -> str:
        if s is None:
            return "the brokers' partition metadata never again converges with the controller's"
        off = [b for b in brokers if not metadata_converged((b,))(s)]
        who = (f"broker{'s' if len(off) > 1 else ''} {', '.join(map(str, off))}" if off
               else "some broker")
        return (f"{who} never again agree{'s' if len(off) == 1 else ''} with the controller's "
                f"partition metadata ({_partition(s)})")
    return never


def _never_acked(v, s) -> str:
    return (f"the write of value {v} is never acknowledged, positively or negatively"
            + (f" ({_partition(s)})" if s is not None else ""))


def _never_replicated(v, s) -> str:
    if s is None:
        return f"acknowledged value {v} never reaches the log of every replica"
    missing = [b for b in sorted(s.con_partition_metadata.replicas)
               if not any(r.value == v for r in s.partition_data[b - 1].log)]
    return (f"acknowledged value {v} never reaches the log of every replica (missing on "
            f"broker{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))})")


def _never_reassigned(_, s) -> str:
    if s is None:
        return "a reassignment never completes"
    md = s.con_partition_metadata
    return (f"a reassignment never completes (adding {_set(md.adding)}, removing "
            f"{_set(md.removing)})")


def _never_leader(elr_variant: bool):
    return lambda _, s: _never_leader_in(elr_variant, s)


def _never_leader_in(elr_variant: bool, s) -> str:
    if s is None:
        return "the partition stays without a leader for ever"
    md = s.con_partition_metadata
    elr = f" and ELR {_set(md.elr)}" if elr_variant else ""
    back = [b for b in sorted(md.replicas) if s.broker_state[b - 1].status == RUNNING
            and s.con_broker_reg[b - 1].status == UNFENCED]
    return (f"the partition stays without a leader for ever, though replica"
            f"{'s' if len(back) != 1 else ''} {', '.join(map(str, back)) or 'none'} "
            f"{'are' if len(back) != 1 else 'is'} back (RUNNING, UNFENCED): no eligible leader in ISR "
            f"{_set(md.isr)}{elr}")


def _never_live_leader(elr_variant: bool):
    def never(_, s) -> str:
        if s is None:
            return "the partition never again has a running, unfenced leader"
        leader = s.con_partition_metadata.leader
        if leader == NO_LEADER:
            return _never_leader_in(elr_variant, s).replace("without a leader", "without a running leader", 1)
        return (f"the partition never again has a running, unfenced leader: its leader {leader} is "
                f"{_status(s, leader)}")
    return never


def kraft_temporal(model) -> list[TemporalProperty]:
    ctx = context_of(model)
    brokers = tuple(ctx.brokers)
    values = tuple(sorted(ctx.values))
    B = "\\A b \\in Brokers"
    V = "\\A v \\in Values"
    return [
        TemporalProperty(
            "EventuallyRuns", per(brokers, "b", lambda b: LeadsTo(starting(b), running_and_unfenced(b))),
            "a STARTING broker eventually is RUNNING and UNFENCED",
            ("broker_state", "con_broker_reg"), B,
            _never_runs),
        TemporalProperty(
            "EventuallyUnfenced", per(brokers, "b", lambda b: LeadsTo(fenced(b), unfenced(b))),
            "a broker the controller has FENCED is eventually UNFENCED",
            ("con_broker_reg",), B, _never_unfenced),
        TemporalProperty(
            "AlterPartitionEpochEventuallyReachedOrZero",
            per(brokers, "b", lambda b: AlwaysEventually(LeadsTo(ap_pending(b), ap_reached_or_zero(b)))),
            "from some point on, a replica's pending AlterPartition request is answered: its "
            "partition epoch is reached or the request is rejected (pending epoch 0)",
            ("partition_metadata", "partition_pending_ap"), B,
            _never_ap),
        TemporalProperty(
            "EventuallyMetadataConverges", single(AlwaysEventually(metadata_converged(brokers))),
            "infinitely often every broker's partition metadata equals the controller's (or it is "
            "a follower with no relevant record to replicate, or no longer a replica)",
            ("broker_metadata_log", "con_metadata_log", "con_partition_metadata",
             "partition_metadata", "partition_status"), "",
            _never_converges(brokers)),
        TemporalProperty(
            "EventuallyWriteIsAcceptedOrRejected",
            per(values, "v", lambda v: LeadsTo(sent(v), acked_either_way(v))),
            "a produced value is eventually acknowledged, positively or negatively",
            ("inv_neg_acked", "inv_pos_acked", "inv_sent"), V,
            _never_acked),
        TemporalProperty(
            "EventuallyAcknowledgedValueFullyReplicated",
            per(values, "v", lambda v: LeadsTo(pos_acked(v), fully_replicated(v))),
            "a positively acknowledged value eventually is in the log of every replica",
            ("con_partition_metadata", "inv_pos_acked", "partition_data"), V,
            _never_replicated),
        TemporalProperty(
            "EventuallyReassignmentCompletes",
            single(LeadsTo(removing_nonempty, reassignment_done), unless_init=adding_nonempty),
            "a reassignment that removes replicas eventually completes (adding and removing "
            "empty); as TLC parses the reference: adding # {} initially \\/ (removing # {} ~> done)",
            ("con_partition_metadata",), "",
            _never_reassigned),
        # kmc's own (v3.5 description 2.8 and KIP-966 description 5.3): availability
        TemporalProperty(
            "EventuallyHasLeader", single(LeadsTo(leaderless, has_leader)),
            "a leaderless partition eventually gets a leader again - under the reference "
            "fairness every stopped broker comes back (BrokerStart ... UnfenceBroker are fair), "
            "so this says: once its eligible replicas are back, the partition is available",
            ("con_partition_metadata",), "",
            _never_leader(ctx.variant == KIP966)),
        TemporalProperty(
            "EventuallyHasRunningLeader", single(LeadsTo(no_live_leader, live_leader)),
            "a partition whose leader is missing, stopped or fenced eventually has a leader that "
            "is RUNNING and UNFENCED again (EventuallyHasLeader counts a crashed leader the "
            "controller has not fenced yet)",
            ("broker_state", "con_broker_reg", "con_partition_metadata"), "",
            _never_live_leader(ctx.variant == KIP966)),
    ]
