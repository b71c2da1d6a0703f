"""State of the `kraft` model: one field per variable of the reference TLA+ spec.

Vanlightly/kafka-tlaplus, kafka_data_replication/kraft/{kip-966,v3.5}, *_types.tla.
Encoding of TLA+ values:
- Nil -> None; NoLeader -> NO_LEADER (-1, never a broker id: brokers are 1..n);
- model values (statuses, roles, message types, errors) -> IntEnum members;
- a record -> a NamedTuple below; a set -> frozenset; a sequence -> tuple;
- a function over Brokers ([b \\in Brokers |-> ...]) -> tuple indexed by b - 1
  (use the helpers at the bottom; never index with b directly).
Both variants share this layout; in v3_5 the ELR fields stay empty and the
counters record is `V35Ctrs`.
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

NO_LEADER = -1
INT_MAX = 10000  # IntMax of the reference (aux_flo's "no offset written yet")


class BrokerStatus(IntEnum):  # broker side
    OFFLINE_CLEAN = 0
    OFFLINE_DIRTY = 1
    STARTING = 2
    RUNNING = 3


class RegStatus(IntEnum):  # controller side
    FENCED = 0
    UNFENCED = 1


class Role(IntEnum):  # partition_status; None = Nil (not a replica)
    Leader = 0
    Follower = 1


class MsgType(IntEnum):
    RegisterBrokerRequest = 0
    RegisterBrokerResponse = 1
    AlterPartitionRequest = 2
    AlterPartitionResponse = 3
    FetchRequest = 4
    FetchResponse = 5


class RecoveryMsgType(IntEnum):  # kip966_storage only (unclean recovery, KIP-966 description 5.3)
    GetReplicaLogInfoRequest = 6   # numbered after MsgType: a message's type is its bucket
    GetReplicaLogInfoResponse = 7


class ErrorCode(IntEnum):  # None = Nil (no error)
    IneligibleReplica = 0
    FencedLeaderEpoch = 1
    UnknownLeaderEpoch = 2
    NotLeaderOrFollower = 3


class RecordType(IntEnum):  # metadata log entry types
    PartitionChangeRecord = 0


# ---- records ---------------------------------------------------------------

class BrokerState(NamedTuple):  # BrokerSideState
    status: BrokerStatus
    broker_epoch: int
    incarnation_id: int
    registered: bool


class BrokerReg(NamedTuple):  # ControllerSideBrokerState
    status: RegStatus
    broker_epoch: int
    incarnation_id: int


class PartitionFetchState(NamedTuple):
    fetch_offset: int
    last_fetched_epoch: int
    delayed: bool


class BrokerFetcher(NamedTuple):
    partition: PartitionFetchState | None
    pending_response: bool


class PeerReplicaState(NamedTuple):
    leo: int | None
    broker_epoch: int


class ControllerPartitionMetadata(NamedTuple):
    replicas: frozenset
    isr: frozenset
    elr: frozenset            # kip966 only; empty in v3_5
    last_known_elr: frozenset # kip966 only; empty in v3_5
    leader: int               # a broker id or NO_LEADER
    leader_epoch: int
    partition_epoch: int
    adding: frozenset
    removing: frozenset
    # min.insync.replicas as set by AlterMinIsr (MinIsrChanges); None: the
    # constant MinISR, never changed (the reference has no such field)
    min_isr: int | None = None


class ReplicaPartitionMetadata(NamedTuple):
    replicas: frozenset
    isr: frozenset
    maximal_isr: frozenset
    leader: int
    leader_epoch: int
    partition_epoch: int


class PartitionRecord(NamedTuple):
    epoch: int
    offset: int
    value: str


class PartitionData(NamedTuple):
    log: tuple  # of PartitionRecord, log[i] has offset i + 1
    hwm: int
    leo: int


class PendingAlterPartition(NamedTuple):  # partition_pending_ap[b]
    epoch: int
    request: object  # the AlterPartitionRequest message in flight, or None


class PartitionChangeRecord(NamedTuple):  # an entry of the metadata logs
    type: RecordType
    isr: frozenset
    elr: frozenset
    leader: int
    leader_epoch: int
    partition_epoch: int
    replicas: frozenset
    last_known_elr: frozenset
    # ApplyPartitionChange's records carry adding/removing; Init's record has
    # no such fields (a different TLA+ value): None stands for "absent".
    adding: frozenset | None = None
    removing: frozenset | None = None
    # the controller's min.insync.replicas when it wrote the record, once an
    # AlterMinIsr changed it (Kafka's ConfigRecord, which brokers replay with
    # the partition records); None: the constant MinISR
    min_isr: int | None = None


class Kip966Ctrs(NamedTuple):  # StateSpaceLimitCtrs of kip-966
    incarn_ctr: int
    data_loss_shutdown_ctr: int
    no_data_loss_shutdown_ctr: int
    fence_broker_ctr: int
    leader_shrink_isr_ctr: int
    reassignment_ctr: int
    min_isr_change_ctr: int | None = None  # AlterMinIsr steps taken (None: MinIsrChanges = [])


class V35Ctrs(NamedTuple):  # StateSpaceLimitCtrs of v3.5
    incarn_ctr: int
    clean_shutdown_ctr: int
    unclean_shutdown_ctr: int
    fence_broker_ctr: int
    leader_shrink_isr_ctr: int
    reassignment_ctr: int
    min_isr_change_ctr: int | None = None  # AlterMinIsr steps taken (None: MinIsrChanges = [])


class StorageCtrs(NamedTuple):  # the storage variants' StateSpaceLimitCtrs
    incarn_ctr: int
    controlled_shutdown_ctr: int
    process_crash_ctr: int
    power_loss_ctr: int
    fence_broker_ctr: int
    leader_shrink_isr_ctr: int
    reassignment_ctr: int
    min_isr_change_ctr: int | None = None  # AlterMinIsr steps taken (None: MinIsrChanges = [])


class LogInfo(NamedTuple):  # one GetReplicaLogInfo answer, as the controller keeps it
    broker: int
    broker_epoch: int  # the answering incarnation (a later one makes the answer stale)
    last_epoch: int    # leader epoch of the last record (0: empty log)
    leo: int


class UncleanRecovery(NamedTuple):  # con_recovery: an unclean recovery in progress
    partition_epoch: int  # the partition epoch it started at (changed: stale)
    asked: frozenset      # brokers sent a GetReplicaLogInfo request
    answers: frozenset    # of LogInfo


class RecoveryReport(NamedTuple):  # ghost_reported: what the controller reported
    count: int            # unclean recoveries completed (potential data-loss events)
    lost: frozenset       # committed values the elected replica lacked (ghost knowledge)


class Ghost(IntEnum):  # ghost_unclean[b]: Unclean Exclusion bookkeeping (not protocol)
    TRUSTED = 0           # clean, or caught up with the leader since
    STOPPED_UNCLEAN = 1   # stopped without a controlled shutdown, not registered since
    UNCLEAN = 2           # registered again after an unclean stop, not caught up yet


class ConsumedRecord(NamedTuple):  # one record the consumer read (Consumer = true)
    offset: int
    epoch: int         # the leader epoch the record was written in
    value: str
    leader_epoch: int  # the leader epoch of the fetch that returned it
    stale: bool        # the serving leader had already been replaced at the controller


class ConsumerState(NamedTuple):  # the consumer client (Consumer = true), not a broker's
    leader_epoch: int  # its current leader epoch (KIP-320: every fetch carries it)
    position: int      # the next offset it fetches (SubscriptionState's FetchPosition.offset)
    offset_epoch: int  # FetchPosition.offsetEpoch: the epoch of the last record read (0: none)
    read: tuple        # of ConsumedRecord, in the order the application received them
    resets: int        # how often it moved its position by auto.offset.reset (truncation, out of range)


# ---- the state -------------------------------------------------------------

class KraftState(NamedTuple):
    """The 23 variables of the reference, in the order of its `vars`."""

    # controller
    con_unfenced: frozenset
    con_broker_reg: tuple            # b -> BrokerReg
    con_partition_metadata: ControllerPartitionMetadata
    con_metadata_log: tuple          # of PartitionChangeRecord
    # broker
    broker_state: tuple              # b -> BrokerState
    broker_fetchers: tuple           # b -> (b1 -> BrokerFetcher)
    broker_metadata_log: tuple       # b -> tuple of PartitionChangeRecord
    # partition, per broker
    partition_status: tuple          # b -> Role | None
    partition_metadata: tuple        # b -> ReplicaPartitionMetadata
    partition_data: tuple            # b -> PartitionData
    partition_leso: tuple            # b -> int | None
    partition_replica_state: tuple   # b -> (b1 -> PeerReplicaState)
    partition_pending_ap: tuple      # b -> PendingAlterPartition
    # network
    messages: frozenset              # in flight
    messages_discard: frozenset      # processed
    # invariant bookkeeping (not protocol)
    inv_sent: frozenset              # of values
    inv_pos_acked: frozenset
    inv_neg_acked: frozenset
    inv_true_hwm: int
    inv_consumed: tuple              # of PartitionRecord
    # state-space bookkeeping (not protocol)
    aux_broker_epoch: int
    aux_ctrs: tuple                  # Kip966Ctrs | V35Ctrs
    aux_flo: tuple                   # b -> int


VARIABLES: tuple[str, ...] = KraftState._fields


class KraftStorageState(NamedTuple):
    """The storage variants (kip966_storage, v3_5_storage): the 23 variables of
    KraftState, in the same order, then the storage and recovery ones. The
    broker epoch file is broker_state[b].broker_epoch of an offline broker
    (0: absent), as in the reference; the leader-epoch checkpoint is the
    epochs of the records of the surviving log (each record carries one)."""

    con_unfenced: frozenset
    con_broker_reg: tuple
    con_partition_metadata: ControllerPartitionMetadata
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
    aux_ctrs: tuple                  # StorageCtrs
    aux_flo: tuple
    # storage (KIP-966 description 5)
    partition_flushed: tuple         # b -> first offset not yet flushed (the recovery point)
    partition_hwm_checkpoint: tuple  # b -> the HWM last written to the checkpoint file
    # the controller's unclean recovery (section 5.3)
    con_recovery: UncleanRecovery | None
    # ghost state for Unclean Exclusion and data-loss reporting (not protocol)
    ghost_unclean: tuple             # b -> Ghost
    ghost_reported: RecoveryReport
    # the controlled shutdown in steps (ControlledShutdownSteps, model/kraft/storage.py)
    broker_want_shutdown: tuple      # b -> PENDING_CONTROLLED_SHUTDOWN: its heartbeats carry wantShutDown
    con_controlled_shutdown: tuple   # b -> its controlled shutdown offset while CONTROLLED_SHUTDOWN, else None
    # KIP-704 (LeaderRecoveryState): the controller's partition is RECOVERING
    # after an unclean election, until the leader's AlterPartition says RECOVERED
    con_leader_recovering: bool


STORAGE_VARIABLES: tuple[str, ...] = KraftStorageState._fields
assert STORAGE_VARIABLES[:len(VARIABLES)] == VARIABLES

# With Consumer = true (model/kraft/consumer.py) a state has one more variable,
# last: the consumer's. Its own classes, so that a run without the consumer
# keeps the reference's variables (its ITF and TLA+ values, its counts).
CONSUMER = "consumer"
KraftConsumerState = NamedTuple(
    "KraftConsumerState", [(f, object) for f in VARIABLES] + [(CONSUMER, ConsumerState)])
KraftStorageConsumerState = NamedTuple(
    "KraftStorageConsumerState", [(f, object) for f in STORAGE_VARIABLES] + [(CONSUMER, ConsumerState)])


def at(fn: tuple, b: int):
    """fn[b] for a TLA+ function over Brokers = 1..n."""
    return fn[b - 1]


def except_at(fn: tuple, b: int, value) -> tuple:
    """[fn EXCEPT ![b] = value]; `fn` itself when fn[b] already is `value`
    (so the engine sees the variable unchanged and skips re-encoding it)."""
    if fn[b - 1] is value:
        return fn
    items = list(fn)  # faster than slicing and concatenating for short tuples
    items[b - 1] = value
    return tuple(items)


def controller_min_isr(k, s) -> int:
    """min.insync.replicas as the controller has it now (MinISR until an
    AlterMinIsr step sets another)."""
    value = s.con_partition_metadata.min_isr
    return k.min_isr if value is None else value


def broker_min_isr(k, s, b, ch=None) -> int:
    """min.insync.replicas as broker b has it: the value of the last record of
    its metadata log (Kafka's broker takes a topic's config from its metadata
    image, where the ConfigRecord precedes the partition records the change
    causes); `ch`: the step's changed variables, when it replays records."""
    if not k.min_isr_changes:
        return k.min_isr
    logs = ch.get("broker_metadata_log", s.broker_metadata_log) if ch else s.broker_metadata_log
    log = logs[b - 1]
    value = log[-1].min_isr if log else None
    return k.min_isr if value is None else value


# ---- building successor states fast ------------------------------------------

# over the storage layout, whose prefix is KraftState's: one index serves both
FIELD_INDEX: dict[str, int] = {name: i for i, name in enumerate(STORAGE_VARIABLES)}
_new_tuple = tuple.__new__


def with_changes(state: KraftState, changes: dict) -> KraftState:
    """state._replace(**changes), about twice as fast (a hot path: one call per
    successor). Unchanged variables keep their objects, as the engine needs."""
    items = list(state)
    index = FIELD_INDEX
    for name, value in changes.items():
        items[index[name]] = value
    return _new_tuple(type(state), items)


def with_consumer(state, consumer: ConsumerState):
    """The state with the consumer's variable (always the last) replaced."""
    items = list(state)
    items[-1] = consumer
    return _new_tuple(type(state), items)
