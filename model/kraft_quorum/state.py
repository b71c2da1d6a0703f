"""State of the `kraft_quorum` model: the variables of the reference
specification (kraft/kip_996, kraft_kip_996_types.tla and network.tla), under
the same names, and the values they hold.

Servers are numbered 1..n as in the reference (its numeric server ids); a
per-server variable is a tuple indexed by id - 1 (`at` / `put`). Offsets are
1-based as in the reference: the entry at offset o is log[o - 1]. Nil is
None. The reference's model values (states, commands, message types, error
codes) are IntEnums named as the reference names them.

Every value equals another exactly when the TLA+ values do (the fingerprint
relies on it): a record with an optional field keeps None for "absent" only
where the reference has records of both shapes, and every message starts
with its type.
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple


class Role(IntEnum):
    """A server's state (the reference's `state` variable)."""

    Unattached = 0   # voter or observer, leader unknown
    Follower = 1     # leader known
    Prospective = 2  # an election or fetch timeout: asking for pre-votes (KIP-996)
    Candidate = 3    # won a pre-vote, asking for votes in a new epoch
    Leader = 4
    Resigned = 5     # a leader that stepped down, until its election timeout
    DeadNoState = 6  # crashed and lost its disk (not a protocol state)
    IllegalState = 7  # a transition the protocol forbids (NoIllegalState catches it)


class Command(IntEnum):
    AppendCommand = 0        # a client value
    InitClusterCommand = 1   # the initial configuration (offset 1 of every initial log)
    AddVoterCommand = 2
    RemoveVoterCommand = 3
    LeaderChangeRecord = 4   # a new leader's first entry in its epoch


class MsgType(IntEnum):
    RequestVoteRequest = 0
    RequestVoteResponse = 1
    BeginQuorumEpochRequest = 2
    FetchRequest = 3
    FetchResponse = 4


class Error(IntEnum):
    """Error codes of responses and of the reconfiguration checks."""

    FencedLeaderEpoch = 0
    NotLeader = 1
    UnknownLeader = 2
    InvalidRequest = 3
    UnknownMember = 4
    AlreadyMember = 5
    ReconfigInProgress = 6
    LeaderNotReady = 7


class FetchResult(IntEnum):
    Ok = 0
    NotOk = 1
    Diverging = 2


class ServerId(NamedTuple):
    """A server's composite identity (KIP-853): its host and the id of its disk."""

    host: str
    disk_id: int


class ConfigValue(NamedTuple):
    """The value of a configuration command: the new voter set and, for
    AddVoter / RemoveVoter, the server added (`new`) or removed (`old`)."""

    id: int
    members: frozenset
    server: int | None = None


class Entry(NamedTuple):
    command: Command
    epoch: int
    value: object  # None, a client value (str) or a ConfigValue


class Config(NamedTuple):
    """A server's current configuration: the last configuration command in its log."""

    id: int
    members: frozenset
    committed: bool


NO_CONFIG = Config(0, frozenset(), False)


class LastFetchRes(NamedTuple):
    peer: int
    error: Error | None


class FetchState(NamedTuple):
    pending_fetch: object       # the FetchRequest awaiting its response, or None
    last_fetch_res: LastFetchRes | None
    has_fetch_success: bool     # a fetch from the current leader succeeded (pre-vote rule)


BLANK_FETCH_STATE = FetchState(None, None, False)


class AuxCtrs(NamedTuple):
    """State-space limits (the reference's aux_ctrs record), not protocol."""

    prevote_ctr: int          # TestLiveness: makes every pre-vote a new state
    election_ctr: int         # never changed by the reference
    disruptive_ctr: int       # election timeouts and resignations without a cause
    crash_ctr: int
    restart_ctr: int
    add_reconfig_ctr: int
    remove_reconfig_ctr: int


# ---- messages (every field the reference's record has; the type first) ---------

class VoteRequest(NamedTuple):
    type: MsgType
    replica_epoch: int
    last_log_epoch: int
    last_log_offset: int
    pre_vote: bool
    source: int
    dest: int


class VoteResponse(NamedTuple):
    type: MsgType
    replica_epoch: int
    leader: int | None
    vote_granted: bool
    pre_vote: bool
    error: Error | None
    source: int
    dest: int


class BeginQuorumEpoch(NamedTuple):
    type: MsgType
    replica_epoch: int
    resend: bool | None   # None: the record has no `resend` field (AcceptAddVoterRequest's)
    source: int
    dest: int


class FetchRequest(NamedTuple):
    type: MsgType
    replica_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    observer: bool | None  # True only in a new server's first fetch (StartNewServer)
    source: int
    dest: int


class FetchResponse(NamedTuple):
    """The three shapes of the reference's response, told apart by `result`:
    NotOk (no entries, no diverging fields), Diverging (diverging_epoch and
    diverging_end_offset, no entries) and Ok (entries, possibly empty)."""

    type: MsgType
    result: FetchResult
    error: Error | None
    leader: int | None
    replica_epoch: int
    hwm: int
    entries: tuple | None
    diverging_epoch: int | None
    diverging_end_offset: int | None
    source: int
    dest: int
    correlation: FetchRequest


class QuorumState(NamedTuple):
    """The reference's variables, in the order of its `vars`."""

    server_ids: tuple              # server -> ServerId
    net_messages: frozenset        # sent, not yet received
    net_messages_processed: frozenset
    net_connectivity: frozenset    # the connected pairs (a, b), a < b, of 1..MaxSpawnedServers
    net_connectivity_ctr: int
    config: tuple                  # server -> Config
    current_epoch: tuple           # server -> int
    state: tuple                   # server -> Role
    voted_for: tuple               # server -> server | None
    leader: tuple                  # server -> server | None
    fetch_state: tuple             # server -> FetchState
    pending_ack: tuple             # server -> frozenset of values
    votes_recv: tuple              # server -> frozenset of servers
    flwr_end_offset: tuple         # server -> ((follower, end offset), ...) sorted by follower
    log: tuple                     # server -> tuple of Entry
    hwm: tuple                     # server -> int
    inv_sent: frozenset            # ghost: values written to a leader
    inv_pos_acked: frozenset       # ghost: values acknowledged as committed
    inv_neg_acked: frozenset       # ghost: values failed
    aux_ctrs: AuxCtrs
    aux_disk_id_gen: int


class StorageQuorumState(NamedTuple):
    """QuorumState and the storage refinement (storage.py): what each server
    has flushed, its power losses, and ghosts for the witnesses."""

    server_ids: tuple
    net_messages: frozenset
    net_messages_processed: frozenset
    net_connectivity: frozenset
    net_connectivity_ctr: int
    config: tuple
    current_epoch: tuple
    state: tuple
    voted_for: tuple
    leader: tuple
    fetch_state: tuple
    pending_ack: tuple
    votes_recv: tuple
    flwr_end_offset: tuple
    log: tuple
    hwm: tuple
    inv_sent: frozenset
    inv_pos_acked: frozenset
    inv_neg_acked: frozenset
    aux_ctrs: AuxCtrs
    aux_disk_id_gen: int
    flushed: tuple                 # server -> the offset up to which its log is on disk
    power_losses: tuple            # server -> its power losses (in all, at most MaxPowerLosses)
    lost_unflushed: bool           # ghost: a power loss dropped appended entries
    lost_power_acked: frozenset    # ghost: servers that lost power while a value was acknowledged
    elected_after_power_loss: bool  # ghost: a leader elected after a majority lost power so


class FetchCheckQuorumState(NamedTuple):
    """QuorumState and, with CheckQuorum = "fetch", the voters each leader
    accepted a fetch from in its current check-quorum period (Kafka's
    LeaderState.fetchedVoters)."""

    server_ids: tuple
    net_messages: frozenset
    net_messages_processed: frozenset
    net_connectivity: frozenset
    net_connectivity_ctr: int
    config: tuple
    current_epoch: tuple
    state: tuple
    voted_for: tuple
    leader: tuple
    fetch_state: tuple
    pending_ack: tuple
    votes_recv: tuple
    flwr_end_offset: tuple
    log: tuple
    hwm: tuple
    inv_sent: frozenset
    inv_pos_acked: frozenset
    inv_neg_acked: frozenset
    aux_ctrs: AuxCtrs
    aux_disk_id_gen: int
    fetched_voters: tuple          # server -> frozenset of voters (empty unless it leads)


class StorageFetchCheckQuorumState(NamedTuple):
    """StorageQuorumState and fetched_voters (FetchCheckQuorumState)."""

    server_ids: tuple
    net_messages: frozenset
    net_messages_processed: frozenset
    net_connectivity: frozenset
    net_connectivity_ctr: int
    config: tuple
    current_epoch: tuple
    state: tuple
    voted_for: tuple
    leader: tuple
    fetch_state: tuple
    pending_ack: tuple
    votes_recv: tuple
    flwr_end_offset: tuple
    log: tuple
    hwm: tuple
    inv_sent: frozenset
    inv_pos_acked: frozenset
    inv_neg_acked: frozenset
    aux_ctrs: AuxCtrs
    aux_disk_id_gen: int
    flushed: tuple
    power_losses: tuple
    lost_unflushed: bool
    lost_power_acked: frozenset
    elected_after_power_loss: bool
    fetched_voters: tuple


VARIABLES: tuple[str, ...] = QuorumState._fields
STORAGE_VARIABLES: tuple[str, ...] = StorageQuorumState._fields
# (storage, fetch check-quorum) -> the state class
STATE_CLASSES = {(False, False): QuorumState, (True, False): StorageQuorumState,
                 (False, True): FetchCheckQuorumState, (True, True): StorageFetchCheckQuorumState}
assert FetchCheckQuorumState._fields == VARIABLES + ("fetched_voters",)
assert StorageFetchCheckQuorumState._fields == STORAGE_VARIABLES + ("fetched_voters",)


# ---- per-server functions ---------------------------------------------------------

def at(fn: tuple, s: int):
    """fn[s] for a per-server tuple."""
    return fn[s - 1]


def put(fn: tuple, s: int, value) -> tuple:
    """[fn EXCEPT ![s] = value]; fn itself when unchanged (identity reuse)."""
    old = fn[s - 1]
    if old is value or old == value:
        return fn
    items = list(fn)
    items[s - 1] = value
    return tuple(items)


def fmap_get(fm: tuple, k: int, default=None):
    """fm[k] of a function stored as sorted (key, value) pairs."""
    for key, value in fm:
        if key == k:
            return value
    return default


def fmap_domain(fm: tuple) -> frozenset:
    return frozenset(k for k, _ in fm)


def fmap(keys, value_of) -> tuple:
    """[k \\in keys |-> value_of(k)] as sorted pairs."""
    return tuple((k, value_of(k)) for k in sorted(keys))
