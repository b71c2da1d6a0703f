"""KraftModel: the `kraft` model's Init and Next for one variant and constants.

Next is enumerated as the reference writes it: \\E b \\in Brokers (ascending),
then each broker-parameterised action in Next's order, then
PerformPartitionReassignment. Each action appends one (Action, state) per
witness of its nondeterminism (duplicates and self-loops included), so the
engine's "generated" counts match TLC's.
"""
from __future__ import annotations

from itertools import combinations

from model.base import Action, EvaluationError
from model.kraft import broker, consumer, controller, faults, fetch, producer, reassignment, replica
from model.kraft.config import resolve
from model.kraft.mutants import mutant_flags
from model.kraft.messages import (
    MESSAGE_CLASSES, RECOVERY_MESSAGE_CLASSES, AlterPartitionRequest, AlterPartitionResponse, EpochOffset,
    FetchRequestPartition, FetchResponsePartition)
from model.kraft.network import by_type
from model.kraft.state import (
    CONSUMER, INT_MAX, NO_LEADER, VARIABLES, BrokerFetcher, BrokerReg, BrokerState, BrokerStatus,
    ControllerPartitionMetadata, ErrorCode, Kip966Ctrs, KraftState, KraftStorageState, MsgType, PartitionChangeRecord,
    KraftConsumerState, KraftStorageConsumerState, PartitionData, PartitionFetchState, PartitionRecord,
    PeerReplicaState, PendingAlterPartition, RecordType, RecoveryMsgType, RegStatus,
    ReplicaPartitionMetadata, Role, V35Ctrs)

EMPTY = frozenset()
_MSG_TYPES = tuple(MsgType)
# sets of messages in flight remembered with their buckets and gate kinds
# (1,968 distinct sets among the 356,872 states of a 2-broker kip966 space)
_IN_FLIGHT_LIMIT = 1 << 15


class KraftModel:
    """The reference's Spec (Init /\\ [][Next]_vars) for `variant` and `constants`."""

    name = "kraft"
    variables = VARIABLES
    # The reference .cfg's VIEW: every variable but messages_discard and the
    # aux_* counters. With it TLC merges states that differ only there, and its
    # counts then depend on exploration order (use it for bug hunting, not to
    # compare counts).
    projections = {"reference": tuple(v for v in VARIABLES
                                if v != "messages_discard" and not v.startswith("aux_"))}

    def __init__(self, variant: str, constants: dict):
        flags, cfg = resolve(variant, constants)
        if flags.storage:
            raise ValueError(f"KraftModel: {variant} is a storage variant (use model.kraft.storage)")
        self._setup(variant, flags, cfg)
        self.lossy_limit = cfg[flags.lossy_limit]
        self.keep_log_limit = cfg[flags.keep_log_limit]
        self.avoid_last_replica_standing = cfg.get("AvoidLastReplicaStanding", False)

        # Next, in the reference's order. Each action comes with a necessary
        # condition of its guard over (broker status, registered, which message
        # kinds are in flight, which fault budgets are left), so successors()
        # skips calls that cannot produce anything; the action checks its full
        # guard itself.
        R, T, OD = BrokerStatus.RUNNING, MsgType, BrokerStatus.OFFLINE_DIRTY
        self._install(self._common_actions() + [
            (flags.lossy_shutdown, faults.lossy_shutdown,
             lambda st, reg, kinds, bud: st > OD and bud[1]),
            (flags.keep_log_shutdown, faults.keep_log_shutdown,
             lambda st, reg, kinds, bud: st > OD and bud[2]),
            ("ReceiveBrokerRegRequest", controller.receive_broker_reg_request,
             lambda st, reg, kinds, bud: T.RegisterBrokerRequest in kinds),
            ("ReceiveAlterPartitionRequest", controller.receive_alter_partition_request,
             lambda st, reg, kinds, bud: T.AlterPartitionRequest in kinds),
            ("FenceBroker", controller.fence_broker,
             lambda st, reg, kinds, bud: bud[0]),
            ("UnfenceBroker", controller.unfence_broker,
             lambda st, reg, kinds, bud: st == R),
        ], self._min_isr_actions())

    # the actions a limit constant bounds (each variant has those it names)
    _LIMITED = {"FenceBroker": "FenceBrokerLimit", "PerformPartitionReassignment": "ReassignmentLimit",
                "DataLossShutdown": "DataLossShutdownLimit", "NoDataLossShutdown": "NoDataLossShutdownLimit",
                "UncleanShutdown": "UncleanShutdownLimit", "CleanShutdown": "CleanShutdownLimit",
                "ControlledShutdown": "ControlledShutdownLimit",
                "BeginControlledShutdown": "ControlledShutdownLimit", "ProcessCrash": "ProcessCrashLimit",
                "PowerLoss": "PowerLossLimit"}

    def switched_off(self) -> dict[str, str]:
        """The actions whose limit constant is 0: off on purpose (model/base.py)."""
        cfg = self.constants
        return {a: f"{c} = 0" for a, c in self._LIMITED.items()
                if a in self.action_names and cfg.get(c, 1) == 0}

    def known_quirk(self, detail: str) -> str | None:
        """The hint for an evaluation error a kept quirk of the reference
        causes (model/kraft/__init__.py, quirks 6 and 18), else None."""
        if (self.reference_quirks and detail.startswith("WriteRecordToLeader")
                and ("SubSeq" in detail or "SendAcksFor" in detail)):
            return "known reference quirk (6): set ReferenceQuirks = false"
        return None

    def in_controlled_shutdown(self, s) -> frozenset:
        """The brokers the controller has in controlled shutdown (registered,
        unfenced, not active: never elected); none in the reference."""
        return EMPTY

    def _setup(self, variant, flags, cfg) -> None:
        """What every variant shares: constants and shared immutable values."""
        self.variant = variant
        self.variant_flags = flags
        self.constants = cfg
        n = self.n = cfg["BrokerCount"]
        self.brokers = tuple(range(1, n + 1))
        self.values = tuple(sorted(cfg["Values"]))
        self.min_isr = cfg["MinISR"]
        # the operator's min.insync.replicas changes, in order (config.py; [] = none)
        self.min_isr_changes = tuple(cfg.get("MinIsrChanges", ()))
        self.min_isr_change_bumps_epoch = cfg.get("MinIsrChangeBumpsPartitionEpoch", False)
        self.fence_broker_limit = cfg["FenceBrokerLimit"]
        self.leader_shrink_isr_limit = cfg["LeaderShrinkIsrLimit"]
        self.reassignment_limit = cfg["ReassignmentLimit"]
        self.mutant = mutant_flags(cfg.get("Mutants", ()))  # seeded bugs (mutants.py)
        # quirks 5 and 6 of the reference kept (the default) or fixed (config.py)
        self.reference_quirks = cfg.get("ReferenceQuirks", True)
        # the producer's acks: "all" (the reference) or "1" (config.py)
        self.acks_all = cfg.get("Acks", "all") == "all"
        # storage variants: Kafka 4.x's last-known-leader election (the LastKnownELR
        # holds the last leader) and unclean.leader.election.enable (config.py)
        self.last_known_leader = cfg.get("UncleanRecoveryStrategy") == "last_known_leader"
        self.unclean_election = cfg.get("UncleanLeaderElection", False)
        # a consumer client (model/kraft/consumer.py): one more variable, last
        self.consumer = cfg.get("Consumer", False)
        base_class = KraftStorageState if flags.storage else KraftState
        if self.consumer:
            self.state_class = KraftStorageConsumerState if flags.storage else KraftConsumerState
            self.variables = base_class._fields + (CONSUMER,)
        else:
            self.state_class = base_class
        # a stopping broker's fetch requests still reach its leader (config.py; resolve
        # lists the constant only off its variant's default: false, storage variants true)
        self.fetch_survives_stop = cfg.get("FetchRequestsSurviveStop", flags.storage)

        # shared immutable values (identity reuse keeps successors cheap)
        self.blank_replica = PeerReplicaState(None, 0)
        self.blank_replica_row = (self.blank_replica,) * n
        self.blank_fetcher_row = (replica.NO_FETCH,) * n
        self.blank_metadata = ReplicaPartitionMetadata(EMPTY, EMPTY, EMPTY, NO_LEADER, 0, 0)
        self.empty_data = PartitionData((), 1, 1)
        # SUBSET Brokers, for reassignment only (2^n sets: none when it is off)
        self.broker_subsets = ([frozenset(c) for r in range(n + 1) for c in combinations(self.brokers, r)]
                               if self.reassignment_limit > 0 else [])
        self._subsets_cache: dict[frozenset, list] = {}

    def _min_isr_actions(self) -> tuple:
        """AlterMinIsr, a global action, when MinIsrChanges lists any change."""
        return (("AlterMinIsr", controller.alter_min_isr),) if self.min_isr_changes else ()

    def with_min_isr_counter(self, ctrs):
        """The initial counters, with AlterMinIsr's when MinIsrChanges is on."""
        return ctrs._replace(min_isr_change_ctr=0) if self.min_isr_changes else ctrs

    def _common_actions(self) -> list:
        """Next's broker actions up to WriteRecordToLeader (shared by all variants)."""
        R, T = BrokerStatus.RUNNING, MsgType
        return [
            ("BrokerStart", broker.broker_start,
             lambda st, reg, kinds, bud: st <= BrokerStatus.OFFLINE_DIRTY),
            ("ReceiveBrokerRegResponse", broker.receive_broker_reg_response,
             lambda st, reg, kinds, bud: st == BrokerStatus.STARTING and not reg
             and T.RegisterBrokerResponse in kinds),
            ("ReceiveMetadataUpdate", replica.receive_metadata_update,
             lambda st, reg, kinds, bud: st > BrokerStatus.OFFLINE_DIRTY and reg),
            ("SendAlterPartitionRequest", replica.send_alter_partition_request,
             lambda st, reg, kinds, bud: st == R),
            ("ReceiveAlterPartitionResponse", replica.receive_alter_partition_response,
             lambda st, reg, kinds, bud: st == R and T.AlterPartitionResponse in kinds),
            ("SendFetchRequest", fetch.send_fetch_request,
             lambda st, reg, kinds, bud: st == R),
            ("ReceiveFetchRequest", fetch.receive_fetch_request,
             lambda st, reg, kinds, bud: st == R and T.FetchRequest in kinds),
            ("ReceiveFetchResponse", fetch.receive_fetch_response,
             lambda st, reg, kinds, bud: st == R and T.FetchResponse in kinds),
            ("WriteRecordToLeader", producer.write_record_to_leader,
             lambda st, reg, kinds, bud: st == R),
        ]

    def _install(self, broker_actions: list, global_actions: tuple) -> None:
        """The action tables: broker actions (name, fn(k, s, b, mt, out), gate)
        in Next's order, then PerformPartitionReassignment and `global_actions`
        (name, fn(k, s, mt, out))."""
        if self.consumer:  # after the brokers' own steps, in Next's order per broker
            running = BrokerStatus.RUNNING
            broker_actions = list(broker_actions) + [
                (name, fn, lambda st, reg, kinds, bud: st == running)
                for name, fn in consumer.CONSUMER_ACTIONS]
        self._gated = tuple((fn, gate) for _, fn, gate in broker_actions)
        self._plans: dict[tuple, tuple] = {}
        self._in_flight: dict[frozenset, tuple] = {}
        broker_actions = [(name, fn) for name, fn, _ in broker_actions]
        global_actions = (("PerformPartitionReassignment", reassignment.perform_partition_reassignment),
                          ) + tuple(global_actions)
        self.action_names = (tuple(name for name, _ in broker_actions)
                             + tuple(name for name, _ in global_actions))
        # acts[name][b] is Action(name, (b,)); index 0 unused (global actions: acts[...][0])
        self.acts = {name: (None,) + tuple(Action(name, (b,)) for b in self.brokers)
                     for name, _ in broker_actions}
        for name, _ in global_actions:
            self.acts[name] = (Action(name),)
        self._broker_actions = tuple(fn for _, fn in broker_actions)
        self._broker_action_names = tuple(name for name, _ in broker_actions)
        self._reassign = reassignment.perform_partition_reassignment
        self._global_actions = tuple(fn for _, fn in global_actions[1:])
        self._global_action_names = tuple(name for name, _ in global_actions)

    def __repr__(self) -> str:
        return f"KraftModel({self.variant!r}, {self.constants!r})"

    def subsets(self, s: frozenset) -> list:
        """SUBSET s, memoised (s is always a set of broker ids)."""
        got = self._subsets_cache.get(s)
        if got is None:
            items = sorted(s)
            got = [frozenset(c) for r in range(len(items) + 1) for c in combinations(items, r)]
            self._subsets_cache[s] = got
        return got

    # ---- Init ---------------------------------------------------------------

    def init_states(self) -> list:
        """Init (reference_init_state), with the consumer's variable when Consumer = true."""
        return self.with_initial_consumer([self.reference_init_state()])

    def reference_init_state(self) -> KraftState:
        """Init: broker 1 leads epoch 1; the replica set and ISR are TLC's CHOOSE
        over SUBSET (the first in its normalised order: {1..RF}, {1..InitIsrSize});
        replicas outside the ISR start fenced with stale metadata."""
        cfg = self.constants
        n, rf, isr_size = self.n, cfg["InitReplicationFactor"], cfg["InitIsrSize"]
        brokers = self.brokers
        replicas = frozenset(range(1, rf + 1))
        isr = frozenset(range(1, isr_size + 1))
        partition_epoch = 1 if isr_size == rf else 2
        record = PartitionChangeRecord(RecordType.PartitionChangeRecord, isr, EMPTY, 1, 1,
                                       partition_epoch, replicas, EMPTY)
        metadata_log = (record,)
        unfenced = frozenset(brokers) - (replicas - isr)
        in_sync_md = ReplicaPartitionMetadata(replicas, isr, isr, 1, 1, partition_epoch)
        stale_md = ReplicaPartitionMetadata(replicas, replicas, replicas, 1, 1, 1)
        follower_fetcher = BrokerFetcher(PartitionFetchState(1, 0, False), False)
        blank_fetcher = replica.NO_FETCH
        if self.variant_flags.elr:
            ctrs = self.with_min_isr_counter(Kip966Ctrs(n + 1, 0, 0, 0, 0, 0))
        else:
            ctrs = self.with_min_isr_counter(V35Ctrs(n + 1, 0, 0, 0, 0, 0))
        state = KraftState(
            con_unfenced=unfenced,
            con_broker_reg=tuple(
                BrokerReg(RegStatus.UNFENCED if b in unfenced else RegStatus.FENCED, b, b)
                for b in brokers),
            con_partition_metadata=ControllerPartitionMetadata(
                replicas, isr, EMPTY, EMPTY, 1, 1, partition_epoch, EMPTY, EMPTY),
            con_metadata_log=metadata_log,
            broker_state=tuple(BrokerState(BrokerStatus.RUNNING, b, b, True) for b in brokers),
            # every broker but 1 - replica or not - starts fetching from broker 1
            broker_fetchers=tuple(
                tuple(follower_fetcher if (b != 1 and b1 == 1) else blank_fetcher for b1 in brokers)
                for b in brokers),
            broker_metadata_log=tuple(metadata_log if b in unfenced else () for b in brokers),
            partition_status=tuple(
                Role.Leader if b == 1 else (Role.Follower if b in replicas else None)
                for b in brokers),
            partition_metadata=tuple(
                self.blank_metadata if b not in replicas else (in_sync_md if b in isr else stale_md)
                for b in brokers),
            partition_data=(self.empty_data,) * n,
            partition_leso=tuple(1 if b == 1 else None for b in brokers),
            partition_replica_state=(self.blank_replica_row,) * n,
            partition_pending_ap=(replica.NO_PENDING_AP,) * n,
            messages=EMPTY,
            messages_discard=EMPTY,
            inv_sent=EMPTY,
            inv_pos_acked=EMPTY,
            inv_neg_acked=EMPTY,
            inv_true_hwm=1,
            inv_consumed=(),
            aux_broker_epoch=n,
            aux_ctrs=ctrs,
            aux_flo=(INT_MAX,) * n,
        )
        return state

    def with_initial_consumer(self, states: list) -> list:
        """`states` with the consumer's initial variable appended (Consumer = true)."""
        if not self.consumer:
            return states
        return [self.state_class(*s, consumer.initial_consumer(s.con_partition_metadata.leader_epoch))
                for s in states]

    # ---- Next ---------------------------------------------------------------

    # message kinds the action gates look at (the storage variants add theirs)
    _msg_kinds = _MSG_TYPES

    def _budgets(self, ctrs) -> tuple:
        """Which fault budgets are left, as the action gates read them."""
        flags = self.variant_flags
        return (ctrs.fence_broker_ctr < self.fence_broker_limit,
                getattr(ctrs, flags.lossy_ctr) < self.lossy_limit,
                getattr(ctrs, flags.keep_log_ctr) < self.keep_log_limit)

    def successors(self, state) -> list:
        out: list = []
        # few sets of messages in flight recur: their buckets and the kinds
        # the gates look at are remembered by value (bounded)
        found = self._in_flight.get(state.messages)
        if found is None:
            mt = by_type(state.messages)
            if len(self._in_flight) >= _IN_FLIGHT_LIMIT:
                self._in_flight.clear()
            found = self._in_flight[state.messages] = (
                mt, frozenset(t for t in self._msg_kinds if mt[t]))
        mt, kinds = found
        budgets = self._budgets(state.aux_ctrs)
        plans = self._plans
        try:
            for b, bs in zip(self.brokers, state.broker_state):
                key = (bs.status, bs.registered, kinds, budgets)
                plan = plans.get(key)
                if plan is None:
                    plan = plans[key] = self._plan(key)
                for fn in plan:
                    fn(self, state, b, mt, out)
            self._reassign(self, state, mt, out)
            for fn in self._global_actions:
                fn(self, state, mt, out)
        except EvaluationError as e:
            if e.action is not None:
                raise
            act = self._current_action(state, mt)
            raise EvaluationError(f"{act}: {e}", act, state) from None
        return out

    def _plan(self, key) -> tuple:
        """The broker actions (in Next's order) whose necessary condition holds."""
        return tuple(fn for fn, gate in self._gated if gate(*key))

    def _current_action(self, state, mt):
        """Which action raised (re-run them one by one; errors are rare)."""
        for b in self.brokers:
            for name, fn in zip(self._broker_action_names, self._broker_actions):
                try:
                    fn(self, state, b, mt, [])
                except EvaluationError:
                    return self.acts[name][b]
        for name, fn in zip(self._global_action_names[1:], self._global_actions):
            try:
                fn(self, state, mt, [])
            except EvaluationError:
                return self.acts[name][0]
        return self.acts["PerformPartitionReassignment"][0]

    def successors_of(self, state, action: Action) -> list:
        """The successors by one action (for tests and trace replay)."""
        out: list = []
        mt = by_type(state.messages)
        if action.name == "PerformPartitionReassignment":
            self._reassign(self, state, mt, out)
        elif action.name in self._global_action_names:
            self._global_successors_of(state, action, mt, out)
        else:
            i = self._broker_action_names.index(action.name)
            self._broker_actions[i](self, state, action.params[0], mt, out)
        return [s for a, s in out if a == action]

    def _global_successors_of(self, state, action, mt, out) -> None:
        i = self._global_action_names.index(action.name)
        self._global_actions[i - 1](self, state, mt, out)

    # ---- from_plain ---------------------------------------------------------

    def _ctrs_class(self) -> type:
        return Kip966Ctrs if self.variant_flags.elr else V35Ctrs

    def from_plain(self, values: tuple):
        """Rebuild a state from plain tuples / frozensets / ints (e.g. decoded
        msgpack): NamedTuples and IntEnums come back."""
        return self.state_class._make(c(v) for c, v in zip(self.plain_converters(), values))

    def plain_converters(self) -> tuple:
        """Per variable, in state order, the function that rebuilds its value
        from its plain form (from_plain, one variable at a time: a decoder
        that knows the other variables' values rebuilds only the new ones)."""
        return self.reference_converters() + self.consumer_converters()

    def consumer_converters(self) -> tuple:
        """The consumer's variable's converter (Consumer = true), else none."""
        return (consumer.consumer_from_plain,) if self.consumer else ()

    def reference_converters(self) -> tuple:
        """plain_converters of the reference's 23 variables."""
        by_name = {
            "con_unfenced": frozenset,
            "con_broker_reg": _broker_regs,
            "con_partition_metadata": _cpm,
            "con_metadata_log": _metadata_log,
            "broker_state": _broker_states,
            "broker_fetchers": _broker_fetchers,
            "broker_metadata_log": _broker_metadata_logs,
            "partition_status": _statuses,
            "partition_metadata": _partition_metadata,
            "partition_data": _partition_data,
            "partition_leso": tuple,
            "partition_replica_state": _replica_states,
            "partition_pending_ap": _pending_aps,
            "messages": _messages,
            "messages_discard": _messages,
            "inv_sent": frozenset,
            "inv_pos_acked": frozenset,
            "inv_neg_acked": frozenset,
            "inv_true_hwm": _same,
            "inv_consumed": _records,
            "aux_broker_epoch": _same,
            "aux_ctrs": self._ctrs_class()._make,
            "aux_flo": tuple,
        }
        return tuple(by_name[v] for v in VARIABLES)


def _same(x):
    return x


def _broker_regs(v):
    return tuple(BrokerReg(RegStatus(r[0]), r[1], r[2]) for r in v)


def _metadata_log(v):
    return tuple(_pcr(r) for r in v)


def _broker_states(v):
    return tuple(BrokerState(BrokerStatus(x[0]), x[1], x[2], bool(x[3])) for x in v)


def _broker_fetchers(v):
    return tuple(tuple(_fetcher(x) for x in row) for row in v)


def _broker_metadata_logs(v):
    return tuple(tuple(_pcr(r) for r in log) for log in v)


def _statuses(v):
    return tuple(None if x is None else Role(x) for x in v)


def _partition_metadata(v):
    return tuple(_rpm(x) for x in v)


def _partition_data(v):
    return tuple(_data(x) for x in v)


def _replica_states(v):
    return tuple(tuple(PeerReplicaState(*x) for x in row) for row in v)


def _pending_aps(v):
    return tuple(PendingAlterPartition(x[0], message_from_plain(x[1])) for x in v)


def _messages(v):
    return frozenset(message_from_plain(m) for m in v)


def _records(v):
    return tuple(_record(r) for r in v)


def _fs(x):
    return None if x is None else frozenset(x)


def _cpm(x):
    return ControllerPartitionMetadata(frozenset(x[0]), frozenset(x[1]), frozenset(x[2]),
                                       frozenset(x[3]), x[4], x[5], x[6], frozenset(x[7]),
                                       frozenset(x[8]), *x[9:])


def _pcr(x):
    return PartitionChangeRecord(RecordType(x[0]), frozenset(x[1]), frozenset(x[2]), x[3], x[4],
                                 x[5], frozenset(x[6]), frozenset(x[7]), _fs(x[8]), _fs(x[9]),
                                 *x[10:])


def _rpm(x):
    return ReplicaPartitionMetadata(frozenset(x[0]), frozenset(x[1]), frozenset(x[2]),
                                    x[3], x[4], x[5])


def _record(x):
    return PartitionRecord(*x)


def _data(x):
    return PartitionData(tuple(_record(r) for r in x[0]), x[1], x[2])


def _fetcher(x):
    p = x[0]
    return BrokerFetcher(None if p is None else PartitionFetchState(p[0], p[1], bool(p[2])),
                         bool(x[1]))


def _err(x):
    return None if x is None else ErrorCode(x)


def message_from_plain(m):
    """Rebuild a message NamedTuple (or None) from its plain tuple."""
    if m is None:
        return None
    if m[0] >= len(MsgType):  # a storage variant's GetReplicaLogInfo message
        t = RecoveryMsgType(m[0])
        return RECOVERY_MESSAGE_CLASSES[t](t, *m[1:])
    t = MsgType(m[0])
    cls = MESSAGE_CLASSES[t]
    if t == MsgType.AlterPartitionRequest:
        return AlterPartitionRequest(t, frozenset(m[1]), tuple(tuple(p) for p in m[2]), *m[3:])
    if t == MsgType.AlterPartitionResponse:
        return AlterPartitionResponse(t, _err(m[1]), _fs(m[2]), _fs(m[3]), m[4], m[5], m[6],
                                      message_from_plain(m[7]), m[8], m[9])
    if t == MsgType.FetchRequest:
        return cls(t, m[1], FetchRequestPartition(*m[2]), m[3], m[4])
    if t == MsgType.FetchResponse:
        p = m[1]
        div = None if p[4] is None else EpochOffset(*p[4])
        part = FetchResponsePartition(_err(p[0]), p[1], p[2], p[3], div,
                                      tuple(_record(r) for r in p[5]))
        return cls(t, part, m[2], m[3])
    return cls(t, *m[1:])
