"""Validity: the model's own state is well formed (the reference's spec-bug catchers).

TypeOK, ValidBrokerState, ValidReplicaState, ValidFetcherState,
ValidControllerState and (kip966 only) ValidControllerIsrAndElr of the
reference's *_properties.tla. They protect nothing of the protocol; they catch
an action that builds an ill-formed state, in the reference and in our port.
The reference's .cfg does not check them; kmc does, after the .cfg ones.

Record types are rendered on our encoding (model/kraft/state.py): a TLA+
record set [f1: S1, ...] holds the NamedTuple of that record whose fields are
in their sets; a field the variant's record does not have (ELR fields in
v3_5) must be empty, which is how our shared layout says "absent".
"""
from __future__ import annotations

from model.kraft.state import (
    NO_LEADER,
    controller_min_isr,
    BrokerFetcher,
    BrokerReg,
    BrokerState,
    BrokerStatus,
    ControllerPartitionMetadata,
    Kip966Ctrs,
    KraftState,
    PartitionFetchState,
    PeerReplicaState,
    RegStatus,
    ReplicaPartitionMetadata,
    Role,
    StorageCtrs,
    V35Ctrs,
)

from invariants.kraft.common import KIP966, MEMO_LIMIT, KraftContext, Memo

FENCED = RegStatus.FENCED
UNFENCED = RegStatus.UNFENCED
RUNNING = BrokerStatus.RUNNING
LEADER = Role.Leader
FOLLOWER = Role.Follower


def _nat(x) -> bool:
    return type(x) is int and x >= 0


def _memoized(check):
    """check(x), remembered for x by identity. A successor shares the objects
    of what it does not change (variables, per-broker rows, records), so most
    of a new state was already checked: remember the well-typed objects (and
    hold them, so that an id cannot be reused while it is remembered)."""
    memo = Memo()

    def checked(x) -> bool:
        if memo.get(id(x)) is x:
            return True
        if not check(x):
            return False
        if len(memo) >= MEMO_LIMIT:
            memo.clear()
        memo[id(x)] = x
        return True

    return checked


def type_ok(ctx: KraftContext):
    """TypeOK: every variable the reference types is in its type."""
    parts = tuple(part for _, part in type_ok_parts(ctx))

    def TypeOK(s) -> bool:
        for part in parts:
            if not part(s):
                return False
        return True

    return TypeOK


def type_ok_parts(ctx: KraftContext) -> tuple:
    """TypeOK's conjuncts, one per variable, as Property.parts ((variable,),
    predicate): the engine checks a successor's changed variables only."""
    n = ctx.broker_count
    brokers = frozenset(ctx.brokers)
    values = ctx.values
    kip966 = ctx.variant == KIP966
    ctrs_type = StorageCtrs if ctx.storage else (Kip966Ctrs if kip966 else V35Ctrs)
    min_isr_values = frozenset(ctx.min_isr_changes)  # what AlterMinIsr may set
    broker_statuses = frozenset(BrokerStatus)
    reg_statuses = frozenset(RegStatus)
    roles = frozenset(Role)
    empty = frozenset()

    def leader_ok(x) -> bool:  # Brokers \union {NoLeader}
        return x == NO_LEADER or x in brokers

    def subset_of_brokers(x) -> bool:  # SUBSET Brokers
        return type(x) is frozenset and x <= brokers

    def per_broker(item_ok):  # [Brokers -> S], S's membership memoized per item
        memo = Memo()  # inlined: a call per item would cost as much as the lookup

        def fn_ok(fn) -> bool:
            if type(fn) is not tuple or len(fn) != n:
                return False
            for x in fn:
                if memo.get(id(x)) is not x:
                    if not item_ok(x):
                        return False
                    if len(memo) >= MEMO_LIMIT:
                        memo.clear()
                    memo[id(x)] = x
            return True

        return fn_ok

    def broker_reg_ok(r) -> bool:  # ControllerSideBrokerState
        return (type(r) is BrokerReg and r.status in reg_statuses
                and _nat(r.broker_epoch) and _nat(r.incarnation_id))

    def con_md_ok(m) -> bool:  # ControllerPartitionMetadata
        return (type(m) is ControllerPartitionMetadata
                and subset_of_brokers(m.replicas) and subset_of_brokers(m.isr)
                and (subset_of_brokers(m.elr) and subset_of_brokers(m.last_known_elr)
                     if kip966 else m.elr == empty and m.last_known_elr == empty)
                and leader_ok(m.leader) and _nat(m.leader_epoch) and _nat(m.partition_epoch)
                and subset_of_brokers(m.adding) and subset_of_brokers(m.removing)
                and (m.min_isr is None or m.min_isr in min_isr_values))

    def broker_state_ok(b) -> bool:  # BrokerSideState
        return (type(b) is BrokerState and b.status in broker_statuses
                and _nat(b.broker_epoch) and _nat(b.incarnation_id)
                and type(b.registered) is bool)

    def fetcher_ok(f) -> bool:  # BrokerFetcher
        if type(f) is not BrokerFetcher or type(f.pending_response) is not bool:
            return False
        p = f.partition
        return p is None or (type(p) is PartitionFetchState and _nat(p.fetch_offset)
                             and _nat(p.last_fetched_epoch) and type(p.delayed) is bool)

    def replica_md_ok(m) -> bool:  # ReplicaPartitionMetadata
        return (type(m) is ReplicaPartitionMetadata
                and subset_of_brokers(m.replicas) and subset_of_brokers(m.isr)
                and subset_of_brokers(m.maximal_isr) and leader_ok(m.leader)
                and _nat(m.leader_epoch) and _nat(m.partition_epoch))

    def peer_ok(p) -> bool:  # PeerReplicaState
        return type(p) is PeerReplicaState and (p.leo is None or _nat(p.leo)) and _nat(p.broker_epoch)

    def ctrs_ok(c) -> bool:  # StateSpaceLimitCtrs
        if type(c) is not ctrs_type:
            return False
        for x in c[:-1]:
            if not _nat(x):
                return False
        # AlterMinIsr's counter: None without MinIsrChanges
        return _nat(c[-1]) if min_isr_values else c[-1] is None

    def values_ok(x) -> bool:  # SUBSET Values
        return type(x) is frozenset and x <= values

    def status_ok(fn) -> bool:  # [Brokers -> {Leader, Follower, Nil}]
        if type(fn) is not tuple or len(fn) != n:
            return False
        for r in fn:
            if r is not None and r not in roles:
                return False
        return True

    # the reference's conjuncts, in its order. A part runs on a successor
    # whose step changed its variable, so on a new object: only the
    # per-broker items (mostly the parent's) and the controller's record
    # (recurring values, rebuilt as shared objects from packed levels) are
    # worth remembering
    checks = (
        ("con_unfenced", subset_of_brokers),
        ("con_broker_reg", per_broker(broker_reg_ok)),
        ("con_partition_metadata", _memoized(con_md_ok)),
        ("broker_state", per_broker(broker_state_ok)),
        ("broker_fetchers", per_broker(per_broker(fetcher_ok))),
        ("partition_metadata", per_broker(replica_md_ok)),
        ("partition_replica_state", per_broker(per_broker(peer_ok))),
        ("aux_ctrs", ctrs_ok),
        ("partition_status", status_ok),
        ("inv_sent", values_ok),
        ("inv_pos_acked", values_ok),
        ("inv_neg_acked", values_ok),
    )
    return tuple(((name,), _variable_part(KraftState._fields.index(name), check))
                 for name, check in checks)


def _variable_part(index: int, check):
    def part(s) -> bool:
        return check(s[index])

    return part


def valid_broker_state(ctx: KraftContext):
    """ValidBrokerState: a RUNNING broker is registered."""

    def ValidBrokerState(s) -> bool:
        for b in s.broker_state:
            if b.status == RUNNING and b.registered is not True:
                return False
        return True

    return ValidBrokerState


def valid_replica_state(ctx: KraftContext):
    """ValidReplicaState: a leader believes it leads; LEO = Len(log) + 1; the
    record at offset o says offset o."""

    def ValidReplicaState(s) -> bool:
        status = s.partition_status
        md = s.partition_metadata
        for i, d in enumerate(s.partition_data):
            if status[i] == LEADER and md[i].leader != i + 1:
                return False
            log = d.log
            if d.leo != len(log) + 1:
                return False
            offset = 1
            for r in log:
                if r.offset != offset:
                    return False
                offset += 1
        return True

    return ValidReplicaState


def valid_fetcher_state(ctx: KraftContext):
    """ValidFetcherState: a broker fetches the partition from at most one peer;
    a leader from none, a follower from one - in the storage variants, but a
    follower in controlled shutdown outside its ISR, which fetches from none
    (ShutdownStopsFetching, ReplicaManager.applyLocalFollowersDelta)."""
    storage = ctx.storage

    def ValidFetcherState(s) -> bool:
        status = s.partition_status
        if storage:  # read on every state: the declared reads happen
            shutting, metadata = s.broker_want_shutdown, s.partition_metadata
        i = 0
        for row in s.broker_fetchers:
            # peers b1 with broker_fetchers[b][b1].partition # Nil: all, and b1 # b
            count = 0
            for f in row:
                if f.partition is not None:
                    count += 1
            others = count - 1 if row[i].partition is not None else count
            # ~\E b1, b2: b # b1, b1 # b2, both with the partition (b2 may be b)
            if others and count >= 2:
                return False
            st = status[i]
            if st == LEADER:
                if others:
                    return False
            elif st == FOLLOWER:
                if not others and not (storage and shutting[i] and i + 1 not in metadata[i].isr):
                    return False
            i += 1
        return True

    return ValidFetcherState


def valid_controller_state(ctx: KraftContext):
    """ValidControllerState: registration status agrees with con_unfenced; no
    fenced broker in the ISR (v3_5: unless it is the ISR's only member, and the
    ISR is never empty)."""
    kip966 = ctx.variant == KIP966

    def ValidControllerState(s) -> bool:
        unfenced = s.con_unfenced
        reg = s.con_broker_reg
        b = 0
        for r in reg:
            b += 1
            if r.status == FENCED:
                if b in unfenced:
                    return False
            elif r.status == UNFENCED and b not in unfenced:
                return False
        md = s.con_partition_metadata
        isr = md.isr
        if kip966 or len(isr) > 1:
            for b in md.replicas:
                if reg[b - 1].status == FENCED and b in isr:
                    return False
        if not kip966 and not isr:
            return False
        return True

    return ValidControllerState


def valid_controller_isr_and_elr(ctx: KraftContext):
    """ValidControllerIsrAndElr (kip966): ISR and ELR are disjoint sets of
    replicas, and the ELR is empty while the ISR has MinISR members."""
    min_isr = ctx.min_isr
    dynamic = bool(ctx.min_isr_changes)  # the controller's current value (MinIsrChanges)

    def ValidControllerIsrAndElr(s) -> bool:
        md = s.con_partition_metadata
        isr, elr, replicas = md.isr, md.elr, md.replicas
        if not isr <= replicas:
            return False
        if elr:
            if not elr <= replicas or not elr.isdisjoint(isr):
                return False
            if len(isr) >= (controller_min_isr(ctx, s) if dynamic else min_isr):
                return False
        return True

    return ValidControllerIsrAndElr
