"""State of the `zk` model: ZooKeeper, the brokers' replicas of one partition,
the fetch responses in flight, and ghost variables for the properties.

Brokers are 0..n-1 as in the 0.8 replication design ("broker-0"); a per-broker variable is a
tuple indexed by broker id. Offsets are 0-based as in Kafka: the record at
offset o is log[o], LEO = len(log), the HW is the offset of the first record
not yet committed (detailed design V2: "HW <= means all the committed messages").
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

NO_LEADER = -1  # Kafka's "no leader" (LeaderAndIsr.NoLeader)
NO_EPOCH = -1   # the epoch of a record in the hw_truncation variant: the 0.8
                # message format carries none (Kafka's NO_PARTITION_LEADER_EPOCH)


class Role(IntEnum):
    NONE = 0        # down, or up without a leader to follow (waiting for an election)
    LEADER = 1      # leads the partition in `leader_epoch` (may be a zombie: session expired)
    FOLLOWER = 2    # follows `leader` and fetches from it (its log is reconciled)
    TRUNCATING = 3  # leader_epoch only: follows `leader`, awaiting OffsetsForLeaderEpoch


class Record(NamedTuple):
    epoch: int   # the leader epoch it was written in (NO_EPOCH in hw_truncation)
    value: str


class ZkPartition(NamedTuple):
    """The partition's leader-and-ISR znode (0.8: .../partitions/[p]/state)."""

    leader: int        # a broker id or NO_LEADER; cleared when the leader's session ends
    leader_epoch: int
    isr: frozenset
    version: int       # the znode's version: every write bumps it


class ReplicaRole(NamedTuple):
    role: Role
    leader: int        # the leader it follows (itself when LEADER), NO_LEADER for NONE
    leader_epoch: int  # the epoch it leads / follows in, NO_EPOCH for NONE


class LeaderView(NamedTuple):
    """What a leader keeps in memory (detailed design V2: Partition.ISR, the
    followers' LEOs) and the znode version it last wrote or read."""

    isr: frozenset
    zk_version: int
    follower_leo: tuple  # broker -> the LEO its last fetch request reported (0: none yet)


class FetchResponse(NamedTuple):
    """A leader's answer to a follower's fetch request, in flight to the follower."""

    offset: int        # the fetch offset of the request (the follower's LEO)
    records: tuple     # the leader's records from `offset` on
    hw: int            # the leader's HW
    leader_leo: int    # the leader's LEO (offset > leader_leo: OffsetOutOfRange)


class LeaderAndIsr(NamedTuple):
    """Election = controller: the controller's LeaderAndIsr request in flight
    to a broker (0.8), carrying the partition's znode as the controller wrote it."""

    leader: int
    leader_epoch: int
    isr: frozenset
    version: int
    broker_epoch: int  # the receiver's registration the controller knows (BrokerEpochs
                       # kip380 / kraft; 0 otherwise): older than the receiver's: stale


class Faults(NamedTuple):
    """The faults so far (bounded by the *Limit constants) and ghost flags for
    the witnesses (not protocol)."""

    power_losses: int
    process_crashes: int
    shutdowns: int          # controlled (clean) shutdowns
    expiries: int           # ZooKeeper sessions expired under a running broker
    failovers: int          # controller moves (Election = controller)
    stalls: int             # caught-up followers dropped from the ISR by time (FollowerStallLimit)
    raced: bool             # ghost: since the last election another step went
                            # first while an election was due (PromptElection false)
    unclean_leader: bool    # ghost: the current leader was elected from outside the ISR


NO_FAULTS = Faults(0, 0, 0, 0, 0, 0, False, False)


class ConsumerState(NamedTuple):
    """Consumer = true: the consumer (consumer.py) and, as ghost, what it read."""

    position: int | None  # the next offset it fetches; None: OffsetOutOfRange, reset pending
    read: frozenset       # (offset, value) of every record it read (ghost: the properties)
    epochs: frozenset     # ghost: the leader epochs of the brokers it read from
    stale: bool           # ghost: it read from a broker the znode does not name leader
                          # in that epoch (a zombie leader)


NO_CONSUMER = ConsumerState(0, frozenset(), frozenset(), False)


class Acked(NamedTuple):
    """Ghost: an acknowledged value and its keepers: the ISR members that held
    it when it was acknowledged (or joined the ISR holding it later), still in
    the ISR, that have not lost it in a crash. Empty once, at some moment, no
    keeper was up (running, or down after a clean shutdown): the record is
    then outside Kafka's durability promise (Kafka's design docs, unclean
    leader election: "predicated on at least one replica remaining in sync")."""

    value: str
    keepers: frozenset


class ZkState(NamedTuple):
    # ZooKeeper (an atomic registry)
    zk_live: frozenset        # /brokers/ids: ephemeral entries of brokers with a session
    zk_partition: ZkPartition
    # brokers
    running: tuple            # broker -> bool (process up)
    role: tuple               # broker -> ReplicaRole
    log: tuple                # broker -> tuple of Record (memory; the disk image when down)
    hw: tuple                 # broker -> int (in memory; 0 when down)
    flushed: tuple            # broker -> int, records below are on disk
    ckpt_hw: tuple            # broker -> int, the HW last checkpointed to disk
    leader_view: tuple        # broker -> LeaderView | None
    fetch_response: tuple     # broker -> FetchResponse | None (in flight to it)
    # the controller (Election = controller; constant otherwise)
    ctl_live: frozenset       # the brokers the controller believes alive
    ctl_stale: frozenset      # of those, the ones registered again since a session
                              # loss the controller never processed (a bounce it missed)
    ctl_request: tuple        # broker -> tuple of LeaderAndIsr, queued to it in order
                              # (LeaderAndIsrQueue newest: at most one)
    ctl_shutting_down: frozenset  # brokers whose controlled shutdown the controller handled
                              # (Kafka's shuttingDownBrokerIds): not elected, until their loss
    broker_epoch: tuple       # broker -> its registrations so far (BrokerEpochs kip380 /
                              # kraft; 0 otherwise): the epoch of the current one
    shutting_down: tuple      # broker -> 0, or its controlled shutdown (ControlledShutdownSteps
                              # several): 1 request sent to the controller, 2 answered
    # ghost and bounds (not protocol)
    acked: tuple              # of Acked, ordered by value
    written: frozenset        # values the producer has written
    truncated: bool           # some replica truncated a record away (witness)
    clean_down: frozenset     # brokers down after a clean shutdown: they keep what
                              # they hold for the durability promise (ghost.py)
    faults: Faults
    consumer: ConsumerState | None  # Consumer = true; None otherwise


VARIABLES: tuple[str, ...] = ZkState._fields

FIELD_INDEX: dict[str, int] = {name: i for i, name in enumerate(VARIABLES)}
_new_tuple = tuple.__new__


def with_changes(state: ZkState, changes: dict) -> ZkState:
    """state._replace(**changes), faster; unchanged variables keep their objects."""
    items = list(state)
    index = FIELD_INDEX
    for name, value in changes.items():
        items[index[name]] = value
    return _new_tuple(ZkState, items)


def leading_leader(s):
    """The broker registered as leader, once it leads in the znode's epoch
    (with Election = controller it may not yet); None otherwise."""
    zk = s.zk_partition
    leader = zk.leader
    if leader == NO_LEADER:
        return None
    role = s.role[leader]
    if role.role != Role.LEADER or role.leader_epoch != zk.leader_epoch:
        return None
    return leader


def put(fn: tuple, b: int, value) -> tuple:
    """[fn EXCEPT ![b] = value]; fn itself when unchanged (identity reuse)."""
    if fn[b] is value or fn[b] == value:
        return fn
    items = list(fn)
    items[b] = value
    return tuple(items)
