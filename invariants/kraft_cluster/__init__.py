"""Properties of the `kraft_cluster` model: kraft's (over the partition data
plane, the active controller's state standing for kraft's controller), the
controller quorum's (kraft_quorum's, named Quorum...), then what only the
composition states, and the witnesses that the composition's hazards
happen (a failover losing an uncommitted batch, a broker acting on
lagging metadata, an AlterPartition re-sent to a new active controller)."""
from __future__ import annotations

from model.base import ALWAYS, SOMETIMES, Property
from model.kraft.state import BrokerStatus, MsgType, PartitionChangeRecord, Role
from model.kraft_cluster.metadata import is_prefix, partition_log, records_of, replay
from model.kraft_cluster.state import BrokerRegistrationRecord

from invariants.kraft import kraft_properties
from invariants.kraft_quorum import quorum_properties

_CONTROLLER = ("con_unfenced", "con_broker_reg", "con_partition_metadata", "con_metadata_log")


def _on_quorum(p: Property) -> Property:
    pred = p.predicate
    return Property("Quorum" + p.name, p.kind, lambda st: pred(st.quorum),
                    f"controller quorum: {p.doc}", ("quorum",))


# ---- what only the composition states ----------------------------------------------

def metadata_is_committed(st) -> bool:
    """Every broker's metadata log is a prefix of the committed log's partition records."""
    pcrs = partition_log(st.ctl_committed)
    return all(is_prefix(bml, pcrs) for bml in st.broker_metadata_log)


def partition_epoch_never_back(st) -> bool:
    """Each broker's metadata log has strictly increasing partition epochs, and
    its partition state is blank (after a registration, or not a replica) or
    not older than the last record it holds (a leader also takes a newer
    epoch from an AlterPartition answer)."""
    for bml, md in zip(st.broker_metadata_log, st.partition_metadata):
        last = 0
        for r in bml:
            if r.partition_epoch <= last:
                return False
            last = r.partition_epoch
        if md.partition_epoch and md.partition_epoch < last:
            return False
    return True


_regs_memo: dict[int, tuple] = {}


def _committed_facts(committed):
    """(registrations, partition changes) of a committed log, remembered."""
    hit = _regs_memo.get(id(committed))
    if hit is not None and hit[0] is committed:
        return hit[1]
    records = records_of(committed)
    facts = ([r for r in records if type(r) is BrokerRegistrationRecord],
             {(r.partition_epoch, r.isr, r.leader) for r in records if type(r) is PartitionChangeRecord})
    if len(_regs_memo) >= 1 << 12:
        _regs_memo.clear()
    _regs_memo[id(committed)] = (committed, facts)
    return facts


def broker_epochs_increase(st) -> bool:
    """The ABA claim: each registration in the committed log carries a broker
    epoch above every earlier one, so an epoch names one incarnation, across
    failovers."""
    regs, _ = _committed_facts(st.ctl_committed)
    if st.ctl_active is not None and regs and st.aux_broker_epoch < max(r.broker_epoch for r in regs):
        return False  # the active controller's next epoch would be one handed out before
    return all(a.broker_epoch < b.broker_epoch for a, b in zip(regs, regs[1:]))


def controller_state_from_log(st) -> bool:
    """The active controller's state is its metadata log replayed."""
    a = st.ctl_active
    if a is None:
        return True
    r = replay(len(st.con_broker_reg), st.quorum.log[a - 1])
    return all(r[f] == getattr(st, f) for f in _CONTROLLER)


def answers_committed(st) -> bool:
    """Every answer a broker got (or may get) is committed: an accepted
    AlterPartition's ISR and leader at its partition epoch, a registration's
    broker epoch and incarnation."""
    regs, pcrs = _committed_facts(st.ctl_committed)
    for msgs in (st.messages, st.messages_discard):
        for m in msgs:
            t = m.type
            if t == MsgType.AlterPartitionResponse:
                if m.error is None and (m.partition_epoch, m.isr, m.leader) not in pcrs:
                    return False
            elif t == MsgType.RegisterBrokerResponse:
                if BrokerRegistrationRecord(m.dest, m.broker_epoch, m.incarnation_id) not in regs:
                    return False
    return True


def quorum_committed_prefix(st) -> bool:
    """Every controller's committed prefix is a prefix of the committed log."""
    q = st.quorum
    return all(is_prefix(log[:hwm], st.ctl_committed) for log, hwm in zip(q.log, q.hwm))


# ---- witnesses --------------------------------------------------------------------

def controller_failed_over(st) -> bool:
    a = st.ctl_active
    return a is not None and st.quorum.current_epoch[a - 1] > 1


def lost_uncommitted(st) -> bool:
    return st.ghost.lost_uncommitted


def alter_partition_retried(st) -> bool:
    return st.ghost.retry_answered


def broker_on_lagging_metadata(st) -> bool:
    """A running broker leads the partition by metadata the committed log has
    moved past (a higher leader epoch)."""
    pcrs = partition_log(st.ctl_committed)
    if not pcrs:
        return False
    epoch = pcrs[-1].leader_epoch
    return any(bs.status == BrokerStatus.RUNNING and role == Role.Leader and md.leader_epoch < epoch
               for bs, role, md in zip(st.broker_state, st.partition_status, st.partition_metadata))


def answer_waiting(st) -> bool:
    return bool(st.ctl_pending)


_INVARIANTS = (
    ("MetadataIsCommitted", metadata_is_committed, ("broker_metadata_log", "ctl_committed"),
     "the metadata every broker acts on is a prefix of the committed metadata log"),
    ("PartitionEpochNeverBack", partition_epoch_never_back,
     ("broker_metadata_log", "partition_metadata"),
     "a broker never applies an older partition epoch than one it applied: its metadata log's "
     "epochs increase and its partition state is not older than its log"),
    ("BrokerEpochsIncrease", broker_epochs_increase, ("aux_broker_epoch", "ctl_active", "ctl_committed"),
     "no broker epoch is handed out twice, across failovers: a later incarnation's epoch is "
     "above every earlier one, and the active controller's next epoch is above them all, so an "
     "earlier incarnation is never alive or eligible again (the ABA claim)"),
    ("ControllerStateFromLog", controller_state_from_log,
     _CONTROLLER + ("ctl_active", "quorum"),
     "the active controller's registrations, fencing and partition state are its metadata "
     "log replayed"),
    ("AnswersCommitted", answers_committed, ("ctl_committed", "messages", "messages_discard"),
     "every AlterPartition or registration answer names a committed decision"),
    ("QuorumCommittedPrefix", quorum_committed_prefix, ("ctl_committed", "quorum"),
     "every controller's committed prefix is a prefix of the committed metadata log"),
)
_WITNESSES = (
    ("ControllerFailedOver", controller_failed_over, ("ctl_active", "quorum"),
     "a controller elected after the first is active"),
    ("FailoverLostUncommitted", lost_uncommitted, ("ghost",),
     "a failover lost a metadata batch that never committed (truncated from a controller's log)"),
    ("AlterPartitionRetried", alter_partition_retried, ("ghost",),
     "an AlterPartition whose answer a failover lost is decided again by the new active "
     "controller"),
    ("BrokerActsOnLaggingMetadata", broker_on_lagging_metadata,
     ("broker_state", "ctl_committed", "partition_metadata", "partition_status"),
     "a running broker leads by metadata older than the committed log's leader epoch"),
    ("AnswerAwaitsCommit", answer_waiting, ("ctl_pending",),
     "the active controller holds an answer until its batch commits"),
)


_WITHOUT_FAILOVER = ("BrokerActsOnLaggingMetadata", "AnswerAwaitsCommit")


def cluster_properties(model) -> list[Property]:
    kraft = kraft_properties(model.kraft)
    quorum = [_on_quorum(p) for p in quorum_properties(model.quorum_model)
              if p.name != "ValueCommitted"]
    props = [p for p in kraft if p.kind == ALWAYS]
    props += [p for p in quorum if p.kind == ALWAYS]
    props += [Property(n, ALWAYS, f, doc, reads) for n, f, reads, doc in _INVARIANTS]
    props += [p for p in kraft if p.kind == SOMETIMES]
    props += [p for p in quorum if p.kind == SOMETIMES]
    if len(model.controllers) > 1:  # one controller commits at once and never fails over
        failover = model.max_failovers > 0
        props += [Property(n, SOMETIMES, f, doc, reads) for n, f, reads, doc in _WITNESSES
                  if failover or n in _WITHOUT_FAILOVER]
    return props
