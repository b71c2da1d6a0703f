"""ClusterModel: Init and Next of `kraft_cluster`.

Next: per broker (ascending) kraft's actions in kraft's Next order, then
PerformPartitionReassignment, then MaybeFenceStaleBroker per broker, then
the controller quorum's steps (kraft_quorum's Next, its actions named with
the prefix Controller). kraft's functions run unchanged: a controller
action on the active controller's in-memory state (controller.decide turns
its effect into a metadata batch and defers its answer), a broker action
on the committed metadata log (the broker fetches only what has
committed).
"""
from __future__ import annotations

from types import SimpleNamespace

from model.base import Action, EvaluationError
from model.kraft.controller import FENCED, handle_broker_fenced
from model.kraft.model import KraftModel, _metadata_log, message_from_plain
from model.kraft.network import by_type
from model.kraft.state import VARIABLES as KRAFT_VARIABLES, BrokerStatus, RegStatus, except_at
from model.kraft_cluster import controller
from model.kraft_cluster.config import resolve
from model.kraft_cluster.metadata import initial_batch, partition_log
from model.kraft_cluster.mutants import mutant_flags
from model.kraft_cluster.state import (
    CONTROLLER_VARIABLES, NO_GHOST, VARIABLES, BrokerRegistrationChangeRecord, BrokerRegistrationRecord,
    ClusterGhost, ClusterState, Pending, changed)
from model.kraft_quorum.limits import helps_make_progress
from model.kraft_quorum.model import QuorumModel, _message as quorum_message
from model.kraft_quorum.state import (
    Command, ConfigValue, Entry, Role, FetchResponse, FetchResult, MsgType as QuorumMsgType, fmap)

# kraft's actions by what they are in the cluster
DECISIONS = frozenset(("ReceiveBrokerRegRequest", "ReceiveAlterPartitionRequest", "FenceBroker",
                       "UnfenceBroker", "PerformPartitionReassignment"))
SHUTDOWNS = frozenset(("DataLossShutdown", "NoDataLossShutdown", "UncleanShutdown", "CleanShutdown"))
READS_METADATA = frozenset(("ReceiveMetadataUpdate", "ReceiveBrokerRegResponse"))
# quorum steps that start an election or make a leader: off once MaxControllerFailovers is spent
ELECTIONS = frozenset(("VoterFetchTimeout", "VoterElectionTimeout", "CheckQuorumResign",
                       "BecomeLeader"))
_CONTROLLER_FIELDS = ("con_unfenced", "con_broker_reg", "con_partition_metadata", "con_metadata_log")
PREFIX = "Controller"
# kraft_quorum's LIVENESS_HelpsMakeProgress, asked whatever TestLiveness says
_PROGRESS = SimpleNamespace(test_liveness=True)


class ClusterModel:
    """KRaft as one system: kraft's brokers under kraft_quorum's controllers."""

    name = "kraft_cluster"
    variables = VARIABLES
    # kraft's variables: with one controller that never fails over, their
    # distinct states per level are kraft's (tests/conformance); the
    # controllers' variables: where no broker can ask for a decision, their
    # distinct states per level are kraft_quorum kip996's without client
    # values (tests/conformance, docs/findings.md)
    projections = {"kraft": KRAFT_VARIABLES, "controllers": CONTROLLER_VARIABLES}

    def __init__(self, variant: str, constants: dict):
        kraft_cfg, own, mutants = resolve(variant, constants)
        self.variant = variant
        self.kraft = KraftModel(variant, kraft_cfg)
        self.mutant = mutant_flags(mutants)
        self.controllers = tuple(own["Controllers"])
        self.max_failovers = own["MaxControllerFailovers"]
        self.idle_fetches = own["ControllerIdleFetches"]
        cfg = dict(self.kraft.constants)
        cfg.pop("Mutants", None)
        cfg.update(own)
        if not cfg["Mutants"]:
            del cfg["Mutants"]
        self.constants = cfg
        n = len(self.controllers)
        self.quorum_model = QuorumModel("kip996", dict(
            Hosts=list(self.controllers), InitClusterSize=n, MinClusterSize=n, MaxClusterSize=n,
            MaxSpawnedServers=n, Value=[], MaxValuesPerEpoch=0, MaxAddReconfigs=0, MaxRemoveReconfigs=0,
            MaxConnectivityChanges=0, MaxPermCrashes=0, TestLiveness=False,
            MaxRestarts=own["ControllerMaxRestarts"], MaxEpoch=own["ControllerMaxEpoch"],
            MaxDisruptiveElectionTriggers=own["MaxDisruptiveElectionTriggers"]))
        k = self.kraft
        self.initial_broker_epoch = k.reference_init_state().aux_broker_epoch
        self._broker_actions = tuple(zip(k._broker_action_names, k._broker_actions))
        self._quorum_names = {name: PREFIX + name for name in self.quorum_model.action_names}
        self.action_names = (k.action_names + ("MaybeFenceStaleBroker",)
                             + tuple(self._quorum_names.values()))
        self._fence_acts = (None,) + tuple(Action("MaybeFenceStaleBroker", (b,)) for b in k.brokers)
        self._renamed: dict[Action, Action] = {}

    def __repr__(self) -> str:
        return f"ClusterModel({self.variant!r}, {self.constants!r})"

    def switched_off(self) -> dict[str, str]:
        off = dict(self.kraft.switched_off())
        off.update({PREFIX + a: why for a, why in self.quorum_model.switched_off().items()})
        if self.max_failovers == 0:
            off.update({PREFIX + a: "MaxControllerFailovers = 0" for a in ELECTIONS})
        return off

    # ---- Init ---------------------------------------------------------------

    def init_states(self) -> list:
        """kraft's Init; the quorum's Init with the initial metadata as a
        committed batch at offset 2 of every controller's log; the first
        controller active."""
        k0 = self.kraft.reference_init_state()
        q0 = self.quorum_model.init_states()[0]
        n = len(self.controllers)
        log = q0.log[0] + (Entry(Command.AppendCommand, 1, initial_batch(k0)),)
        q0 = q0._replace(log=(log,) * n, hwm=(len(log),) * n,
                         flwr_end_offset=(fmap(range(1, n + 1), lambda _: len(log)),) * n)
        return [ClusterState(*k0, quorum=q0, ctl_active=1, ctl_pending=(), ctl_committed=log,
                             ctl_failovers=0, ghost=NO_GHOST)]

    # ---- Next ---------------------------------------------------------------

    def successors(self, s) -> list:
        out: list = []
        k = self.kraft
        mt = by_type(s.messages)
        active = s.ctl_active is not None
        view = self._broker_view(s)
        try:
            for b in k.brokers:
                for name, fn in self._broker_actions:
                    self._kraft_step(name, fn, s, view, b, mt, active, out)
            if active:
                tmp: list = []
                k._reassign(k, s, mt, tmp)
                out.extend((a, controller.decide(self, s, t)) for a, t in tmp)
        except EvaluationError as e:
            if e.action is not None:
                raise
            raise EvaluationError(f"{e}", None, s) from None
        if active:
            for b in k.brokers:
                self._fence_stale_broker(s, b, out)
        spent = s.ctl_failovers >= self.max_failovers
        q = s.quorum
        for act, q2 in self.quorum_model.successors(q):
            if spent and act.name in ELECTIONS:
                continue
            if (act.name == "SendFetchRequest" and not self.idle_fetches
                    and q.state[act.params[0] - 1] == Role.Follower
                    and not helps_make_progress(_PROGRESS, q, *act.params, len(q.log[act.params[0] - 1]) + 1)):
                continue
            t = controller.after_quorum_step(self, s, q2)
            if act.name == "BecomeLeader":
                t = changed(t, {"ctl_failovers": s.ctl_failovers + 1})
            out.append((self._rename(act), t))
        return out

    def _kraft_step(self, name, fn, s, view, b, mt, active, out) -> None:
        if name in DECISIONS:
            if active:
                tmp: list = []
                fn(self.kraft, s, b, mt, tmp)
                out.extend((a, controller.decide(self, s, t)) for a, t in tmp)
        elif name in SHUTDOWNS:
            tmp = []
            fn(self.kraft, s, b, mt, tmp)
            if active:
                out.extend((a, controller.decide(self, s, t)) for a, t in tmp)
            else:  # nobody fences it now: its session expires at the next active controller
                seen = []
                for a, t in tmp:
                    t = changed(t, {f: getattr(s, f) for f in _CONTROLLER_FIELDS})
                    if t not in seen:
                        seen.append(t)
                        out.append((a, t))
        elif name in READS_METADATA and view is not s:
            tmp = []
            fn(self.kraft, view, b, mt, tmp)
            log = s.con_metadata_log
            out.extend((a, changed(t, {"con_metadata_log": log})) for a, t in tmp)
        else:
            fn(self.kraft, s, b, mt, out)

    def _broker_view(self, s):
        """s as a broker sees the controller: the committed metadata log."""
        if self.mutant.broker_reads_uncommitted_metadata:
            return s
        pcrs = partition_log(s.ctl_committed)
        if pcrs is s.con_metadata_log or pcrs == s.con_metadata_log:
            return s
        return changed(s, {"con_metadata_log": pcrs})

    def _fence_stale_broker(self, s, b, out) -> None:
        """MaybeFenceStaleBroker(b): the active controller fences a broker whose
        registered incarnation stopped (its session expired: ReplicationControlManager.
        maybeFenceOneStaleBroker). Only a stop while no controller was active
        leaves one: the active controller fences a stopping broker at once."""
        reg = s.con_broker_reg[b - 1]
        bs = s.broker_state[b - 1]
        if reg.status == FENCED or (bs.status > BrokerStatus.OFFLINE_DIRTY
                                    and bs.incarnation_id == reg.incarnation_id):
            return
        options, new_unfenced = handle_broker_fenced(self.kraft, s, b)
        new_reg = except_at(s.con_broker_reg, b, reg._replace(status=RegStatus.FENCED))
        for cpm, log in options:
            t = changed(s, dict(con_unfenced=new_unfenced, con_broker_reg=new_reg,
                                con_partition_metadata=cpm, con_metadata_log=log))
            out.append((self._fence_acts[b], controller.decide(self, s, t)))

    def _rename(self, act: Action) -> Action:
        got = self._renamed.get(act)
        if got is None:
            got = self._renamed[act] = Action(self._quorum_names[act.name], act.params)
        return got

    def successors_of(self, state, action: Action) -> list:
        return [t for a, t in self.successors(state) if a == action]

    def known_quirk(self, detail: str):
        return self.kraft.known_quirk(detail)

    def in_controlled_shutdown(self, s) -> frozenset:
        return self.kraft.in_controlled_shutdown(s)

    # ---- from_plain ---------------------------------------------------------

    def plain_converters(self) -> tuple:
        qconv = tuple(_quorum_converter(v, c) for v, c in zip(
            self.quorum_model.variables, self.quorum_model.plain_converters()))
        state_class = self.quorum_model._state_class
        return self.kraft.reference_converters() + (
            lambda v: state_class(*(c(x) for c, x in zip(qconv, v))),
            _same,
            lambda v: tuple(Pending(p[0], _opt_message(p[1]), message_from_plain(p[2])) for p in v),
            _entries,
            _same,
            lambda v: ClusterGhost(bool(v[0]), frozenset(message_from_plain(m) for m in v[1]),
                                   bool(v[2])),
        )

    def from_plain(self, values: tuple):
        return ClusterState._make(c(v) for c, v in zip(self.plain_converters(), values))


def _same(v):
    return v


def _opt_message(v):
    return None if v is None else message_from_plain(v)


def _record(r):
    if len(r) == 3:
        if isinstance(r[2], bool):
            return BrokerRegistrationChangeRecord(r[0], r[1], r[2])
        return BrokerRegistrationRecord(*r)
    return _metadata_log((r,))[0]


def _entry(v) -> Entry:
    command = Command(v[0])
    value = v[2]
    if command == Command.AppendCommand:
        value = tuple(_record(r) for r in value)
    elif value is not None:
        value = ConfigValue(value[0], frozenset(value[1]), value[2])
    return Entry(command, v[1], value)


def _entries(v) -> tuple:
    return tuple(_entry(e) for e in v)


def _message(v):
    """kraft_quorum's messages; a fetch response's entries carry metadata batches."""
    if v[0] != QuorumMsgType.FetchResponse:
        return quorum_message(v)
    m = quorum_message((v[0], v[1], v[2], v[3], v[4], v[5], None) + tuple(v[7:]))
    return m._replace(entries=None if v[6] is None else _entries(v[6]))


def _quorum_converter(name, conv):
    if name == "log":
        return lambda v: tuple(_entries(log) for log in v)
    if name in ("net_messages", "net_messages_processed"):
        return lambda v: frozenset(_message(m) for m in v)
    if name == "fetch_state":
        return conv  # pending fetch requests hold no entries
    return conv


assert FetchResponse._fields[6] == "entries" and FetchResult
