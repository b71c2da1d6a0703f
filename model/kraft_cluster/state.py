"""State of the `kraft_cluster` model: kraft's 23 variables, in kraft's
order and with kraft's meaning for the brokers, then the controller
quorum and the active controller's bookkeeping.

kraft's controller variables (con_unfenced, con_broker_reg,
con_partition_metadata, con_metadata_log, aux_broker_epoch) are the active
controller's in-memory state: its metadata log replayed, committed or not
(QuorumController applies a record when it appends it and answers once it
commits). The brokers never read them: they fetch the committed metadata
log (`ctl_committed`).

A metadata batch (the records of one controller decision, appended
atomically, as QuorumController does) is the value of an AppendCommand
entry of the quorum's log: a tuple of the records below and kraft's
PartitionChangeRecord.
"""
from __future__ import annotations

from typing import NamedTuple

from model.kraft.state import VARIABLES as KRAFT_VARIABLES


class BrokerRegistrationRecord(NamedTuple):  # Kafka's RegisterBrokerRecord
    broker: int
    broker_epoch: int
    incarnation_id: int


class BrokerRegistrationChangeRecord(NamedTuple):  # Kafka's BrokerRegistrationChangeRecord
    broker: int
    broker_epoch: int
    fenced: bool


class Pending(NamedTuple):  # an answer waiting for its offset to commit
    offset: int        # the quorum log offset that must commit first
    request: object    # the request it answers (re-sent by the broker if the answer is lost)
    response: object


class ClusterGhost(NamedTuple):  # what happened, for the witnesses (not protocol)
    lost_uncommitted: bool   # a metadata batch was truncated from a controller's log
    retried: frozenset       # requests whose answer a failover lost (the broker re-sent them)
    retry_answered: bool     # a new active controller decided on a re-sent AlterPartition


class ClusterState(NamedTuple):
    """kraft's 23 variables (same order), then the controllers'."""

    con_unfenced: frozenset
    con_broker_reg: tuple
    con_partition_metadata: object
    con_metadata_log: tuple
    broker_state: tuple
    broker_fetchers: tuple
    broker_metadata_log: tuple
    partition_status: tuple
    partition_metadata: tuple
    partition_data: tuple
    partition_leso: tuple
    partition_replica_state: tuple
    partition_pending_ap: tuple
    messages: frozenset
    messages_discard: frozenset
    inv_sent: frozenset
    inv_pos_acked: frozenset
    inv_neg_acked: frozenset
    inv_true_hwm: int
    inv_consumed: tuple
    aux_broker_epoch: int
    aux_ctrs: tuple
    aux_flo: tuple
    # the controllers
    quorum: object           # kraft_quorum's QuorumState over Controllers (servers 1..n)
    ctl_active: object       # the active controller (a quorum server id), or None
    ctl_pending: tuple       # of Pending: the active controller's answers not yet committed
    ctl_committed: tuple     # the committed quorum log (entries); brokers fetch its records
    ctl_failovers: int       # leaders elected after the first (MaxControllerFailovers)
    ghost: ClusterGhost


VARIABLES: tuple[str, ...] = ClusterState._fields
assert VARIABLES[:len(KRAFT_VARIABLES)] == KRAFT_VARIABLES
CONTROLLER_VARIABLES = VARIABLES[len(KRAFT_VARIABLES):]
NO_GHOST = ClusterGhost(False, frozenset(), False)

_INDEX = {name: i for i, name in enumerate(VARIABLES)}
_new_tuple = tuple.__new__


def changed(state, ch: dict):
    """state._replace(**ch), faster; unchanged variables keep their objects."""
    items = list(state)
    for name, value in ch.items():
        items[_INDEX[name]] = value
    return _new_tuple(ClusterState, items)
