"""QuorumModel: Init and Next of the `kraft_quorum` model for one variant and
its constants.

Next is enumerated as the reference writes it: StartNewServer,
ChangeNetworkConnectivity, then per started server (ascending) its actions
in Next's order, then every message in flight (in network.in_order's fixed
order) by the action that receives it, then per pair of started servers
SendFetchRequest and ResendBeginQuorumEpochRequest. Servers not yet started have nothing to do
(every action of the reference requires s \\in StartedServers). Each action
appends one (action, successor) per witness TLC finds (duplicates
included), so "generated" counts are TLC's.
"""
from __future__ import annotations

import copy
from itertools import combinations

from model.base import Action
from model.kraft_quorum import (
    begin_quorum, connectivity, elections, faults, identity, reconfig, replication, storage)
from model.kraft_quorum.config import resolve
from model.kraft_quorum.mutants import mutant_flags
from model.kraft_quorum.network import all_pairs, in_order
from model.kraft_quorum.state import (
    STATE_CLASSES, AuxCtrs, BeginQuorumEpoch, Command, Config, ConfigValue, Entry, Error,
    FetchRequest, FetchResponse, FetchResult, FetchState, LastFetchRes, MsgType, Role, ServerId,
    VoteRequest, VoteResponse, fmap)

EMPTY = frozenset()

R = Role
ALIVE = frozenset(r for r in Role if r != Role.DeadNoState)
# per-server actions, in Next's order: (name, function(model, state, s, out),
# the roles in which its guard can hold - a necessary condition that spares
# calls; the function checks its whole guard)
SERVER_ACTIONS = (
    ("RestartWithState", faults.restart_with_state, ALIVE),
    ("CrashLoseState", faults.crash_lose_state, ALIVE),
    ("AcceptAddVoterRequest", reconfig.accept_add_voter_request, {R.Leader}),
    ("AcceptRemoveVoterRequest", reconfig.accept_remove_voter_request, {R.Leader}),
    ("VoterFetchTimeout", elections.voter_fetch_timeout, {R.Follower}),
    ("VoterElectionTimeout", elections.voter_election_timeout, {R.Candidate, R.Unattached}),
    ("ResignedElectionTimeout", elections.resigned_election_timeout, {R.Resigned}),
    ("ConcludePreVote", elections.conclude_pre_vote, {R.Prospective}),
    ("BecomeLeader", elections.become_leader, {R.Candidate}),
    ("HandleClientRequest", replication.handle_client_request, {R.Leader}),
    ("CheckQuorumResign", elections.check_quorum_resign, {R.Leader}),
)
# beyond the reference (storage.py, identity.py): present only when enabled
STORAGE_ACTIONS = (("PowerLoss", faults.power_loss, ALIVE), ("FlushLog", storage.flush_log, ALIVE))
DISK_LOSS_ACTIONS = (("RestartAfterDiskLoss", identity.restart_after_disk_loss, {R.DeadNoState}),)
# CheckQuorum = "fetch" (elections.py): a check-quorum period ends with fetches from a majority
FETCH_CHECK_QUORUM_ACTIONS = (("CheckQuorumRestart", elections.check_quorum_restart, {R.Leader}),)
# faults may strike a server whose appends are not flushed yet; nothing else it does
_FAULTS = frozenset(("RestartWithState", "CrashLoseState", "PowerLoss", "FlushLog"))

# message type -> the actions that receive it: (name, function(model, state, m, out))
MESSAGE_ACTIONS = {
    MsgType.RequestVoteRequest: (("HandleVoteRequest", elections.handle_vote_request),),
    MsgType.RequestVoteResponse: (("HandleVoteResponse", elections.handle_vote_response),),
    MsgType.BeginQuorumEpochRequest: (
        ("AcceptBeginQuorumRequest", begin_quorum.accept_begin_quorum_request),),
    MsgType.FetchRequest: (("RejectFetchRequest", replication.reject_fetch_request),
                           ("DivergingFetchRequest", replication.diverging_fetch_request),
                           ("AcceptFetchRequest", replication.accept_fetch_request)),
    MsgType.FetchResponse: (("HandleFetchResponse", replication.handle_fetch_response),),
}
PAIR_ACTIONS = (
    ("SendFetchRequest", replication.send_fetch_request, {R.Follower, R.Unattached}),
    ("ResendBeginQuorumEpochRequest", begin_quorum.resend_begin_quorum_epoch_request, {R.Leader}),
)

# Next's actions, in the reference's order (coverage lists never-enabled ones too)
REFERENCE_ACTIONS = (
    "StartNewServer", "ChangeNetworkConnectivity", "RestartWithState", "CrashLoseState",
    "AcceptAddVoterRequest", "AcceptRemoveVoterRequest", "VoterFetchTimeout",
    "VoterElectionTimeout", "ResignedElectionTimeout", "ConcludePreVote", "BecomeLeader",
    "HandleClientRequest", "CheckQuorumResign", "HandleVoteRequest", "HandleVoteResponse",
    "AcceptBeginQuorumRequest", "SendFetchRequest", "HandleFetchResponse",
    "ResendBeginQuorumEpochRequest", "RejectFetchRequest", "DivergingFetchRequest",
    "AcceptFetchRequest")


class QuorumModel:
    """The reference's Spec (Init /\\ [][Next]_vars) for `variant` and `constants`."""

    name = "kraft_quorum"
    projections: dict = {}

    def __init__(self, variant: str, constants: dict):
        flags, cfg = resolve(variant, constants)
        self.variant = variant
        self.variant_flags = flags
        self.constants = cfg
        self.mutant = mutant_flags(cfg["Mutants"])
        self.test_liveness = cfg["TestLiveness"]
        self.max_epoch = cfg["MaxEpoch"]
        self.max_disruptive = cfg["MaxDisruptiveElectionTriggers"]
        self.max_values_per_epoch = cfg["MaxValuesPerEpoch"]
        self.values = tuple(cfg["Value"])
        self.hosts = tuple(cfg["Hosts"])
        self.init_size = cfg["InitClusterSize"]
        self.max_servers = cfg["MaxSpawnedServers"]
        self.storage = cfg["MaxPowerLosses"] > 0
        # a server flushes its appends before its other steps (not "lazy")
        self.flush_first = cfg["VoterFlush"] != "lazy"
        # a leader whose appends are not flushed answers the fetches that wait at its end
        self.end_offset_first = cfg["VoterFlush"] == "end_offset_first"
        self.node_id_identity = cfg["VoterIdentity"] == "node_id"
        self.single_voter_leads = cfg["SingleVoterLeads"]
        self.new_follower_state = cfg["FollowerState"] == "new"
        self.fetch_check_quorum = cfg["CheckQuorum"] == "fetch"
        self.monotonic_follower_hwm = cfg["FollowerHwm"] == "monotonic"
        self.static_config = Config(1, frozenset(range(1, self.init_size + 1)), True)
        self._state_class = STATE_CLASSES[(self.storage, self.fetch_check_quorum)]
        self.variables = self._state_class._fields
        self.pair_subsets = ()
        if cfg["MaxConnectivityChanges"]:
            pairs = sorted(all_pairs(self.max_servers))
            self.pair_subsets = tuple(frozenset(c) for r in range(len(pairs) + 1)
                                      for c in combinations(pairs, r))

        server_actions = [a for a in SERVER_ACTIONS if flags.pre_vote or a[0] != "ConcludePreVote"]
        if self.storage:
            server_actions += list(STORAGE_ACTIONS)
        if self.node_id_identity:
            server_actions += list(DISK_LOSS_ACTIONS)
        if self.fetch_check_quorum:
            server_actions += list(FETCH_CHECK_QUORUM_ACTIONS)
        # per role, the server actions (and the pair actions) that may be enabled
        self._by_role = {r: tuple(f for _, f, roles in server_actions if r in roles) for r in Role}
        self._faults_by_role = {r: tuple(f for n, f, roles in server_actions
                                         if r in roles and n in _FAULTS) for r in Role}
        self._pairs_by_role = {r: tuple(f for _, f, roles in PAIR_ACTIONS if r in roles)
                               for r in Role}
        self._held = self.storage and self.flush_first
        self.action_names = tuple(n for n in REFERENCE_ACTIONS
                                  if flags.pre_vote or n != "ConcludePreVote") + tuple(
            n for n, _, _ in server_actions if n not in REFERENCE_ACTIONS)
        ids = range(1, self.max_servers + 1)
        self._acts = {}
        for name in self.action_names:
            self._acts[name] = {(): Action(name)}
            for s in ids:
                self._acts[name][(s,)] = Action(name, (s,))
                for p in ids:
                    self._acts[name][(s, p)] = Action(name, (s, p))

    def __repr__(self) -> str:
        return f"QuorumModel({self.variant!r}, {self.constants!r})"

    def act(self, name: str, *params) -> Action:
        return self._acts[name][params]

    def act0(self, name: str) -> Action:
        return self._acts[name][()]

    # the actions a limit constant bounds
    _LIMITED = {"RestartWithState": "MaxRestarts", "CrashLoseState": "MaxPermCrashes",
                "AcceptAddVoterRequest": "MaxAddReconfigs",
                "AcceptRemoveVoterRequest": "MaxRemoveReconfigs",
                "ChangeNetworkConnectivity": "MaxConnectivityChanges",
                "HandleClientRequest": "MaxValuesPerEpoch"}

    def switched_off(self) -> dict[str, str]:
        """The actions whose limit constant is 0: off on purpose (model/base.py)."""
        cfg = self.constants
        off = {a: f"{c} = 0" for a, c in self._LIMITED.items() if cfg.get(c, 1) == 0}
        if cfg["MaxSpawnedServers"] <= self.init_size:
            off["StartNewServer"] = "MaxSpawnedServers = InitClusterSize"
        return off

    def inert_constants(self) -> dict[str, str]:
        """The constants that have no effect under the others (model/base.py)."""
        if self.test_liveness:
            return {"MaxEpoch": "TestLiveness = true has no epoch limit (MaxEpoch bounds "
                                "elections only with TestLiveness = false)"}
        return {}

    def unbounded(self) -> str | None:
        """Why the state space is infinite, None when it is finite (model/base.py)."""
        if self.test_liveness:
            return ("TestLiveness = true has no epoch limit: elections go on to ever higher "
                    "epochs, as in the reference's liveness mode")
        return None

    def progress_bounds(self) -> dict[str, str]:
        """The constants that stop actions fairness would force (model/base.py)."""
        if self.test_liveness:
            return {}
        return {"MaxEpoch": f"MaxEpoch = {self.max_epoch} (TestLiveness = false: no election "
                            f"starts or concludes at epoch {self.max_epoch})"}

    def without_bounds(self):
        """This model with its progress bounds lifted: no epoch limit."""
        free = copy.copy(self)
        free.max_epoch = 1 << 62
        return free

    # ---- Init ----------------------------------------------------------------

    def init_states(self) -> list:
        """Init: servers 1..InitClusterSize on the first hosts, all voters of
        configuration 1 (committed at offset 1 of every log), server 1 leading
        epoch 1, every pair of 1..MaxSpawnedServers connected."""
        n = self.init_size
        servers = frozenset(range(1, n + 1))
        first = Entry(Command.InitClusterCommand, 1, ConfigValue(1, servers, None))
        config = Config(1, servers, True)
        values = dict(
            server_ids=tuple(ServerId(self.hosts[i], 0) for i in range(n)),
            net_messages=EMPTY,
            net_messages_processed=EMPTY,
            net_connectivity=all_pairs(self.max_servers),
            net_connectivity_ctr=0,
            config=(config,) * n,
            current_epoch=(1,) * n,
            state=(Role.Leader,) + (Role.Follower,) * (n - 1),
            voted_for=(None,) * n,
            leader=(1,) * n,
            fetch_state=(FetchState(None, None, True),) * n,
            pending_ack=(EMPTY,) * n,
            votes_recv=(EMPTY,) * n,
            flwr_end_offset=(fmap(servers, lambda _: 1),) * n,
            log=((first,),) * n,
            hwm=(1,) * n,
            inv_sent=EMPTY,
            inv_pos_acked=EMPTY,
            inv_neg_acked=EMPTY,
            aux_ctrs=AuxCtrs(0, 0, 0, 0, 0, 0, 0),
            aux_disk_id_gen=0)
        if self.storage:
            values.update(flushed=(1,) * n, power_losses=(0,) * n, lost_unflushed=False,
                          lost_power_acked=EMPTY, elected_after_power_loss=False)
        if self.fetch_check_quorum:
            values.update(fetched_voters=(EMPTY,) * n)
        return [self._state_class(**values)]

    # ---- Next ----------------------------------------------------------------

    def successors(self, st) -> list:
        out: list = []
        identity.start_new_server(self, st, out)
        if self.pair_subsets:
            connectivity.change_network_connectivity(self, st, out)
        n = len(st.server_ids)
        held = ()
        if self._held:
            held = frozenset(s for s in range(1, n + 1) if storage.unflushed(st, s))
        roles = st.state
        for s in range(1, n + 1):
            table = self._faults_by_role if s in held else self._by_role
            for fn in table[roles[s - 1]]:
                fn(self, st, s, out)
        dead = Role.DeadNoState
        for m in in_order(st.net_messages):
            if roles[m.dest - 1] == dead:
                continue
            if m.dest in held:
                if self.end_offset_first and storage.answers_waiting_fetch(st, m):
                    replication.accept_fetch_request(self, st, m, out)
                continue
            for _, fn in MESSAGE_ACTIONS[m.type]:
                fn(self, st, m, out)
        for s in range(1, n + 1):
            if s in held:
                continue
            fns = self._pairs_by_role[roles[s - 1]]
            if fns:
                for peer in range(1, n + 1):
                    if s != peer:
                        for fn in fns:
                            fn(self, st, s, peer, out)
        return out

    def successors_of(self, st, action: Action) -> list:
        """The successors by one action (for tests)."""
        return [t for a, t in self.successors(st) if a == action]

    # ---- from_plain ------------------------------------------------------------

    def plain_converters(self) -> tuple:
        return tuple(_CONVERTERS[v] for v in self.variables)

    def from_plain(self, values: tuple):
        return self._state_class(*(conv(v) for conv, v in zip(self.plain_converters(), values)))


# ---- rebuilding values from their plain (decoded) form ------------------------------

def _opt(conv):
    return lambda v: None if v is None else conv(v)


_error = _opt(Error)


def _fetch_request(v) -> FetchRequest:
    return FetchRequest(MsgType(v[0]), v[1], v[2], v[3], v[4], v[5], v[6])


def _entry(v) -> Entry:
    value = v[2]
    if isinstance(value, (tuple, list)):
        value = ConfigValue(value[0], frozenset(value[1]), value[2])
    return Entry(Command(v[0]), v[1], value)


def _message(v):
    t = MsgType(v[0])
    if t == MsgType.RequestVoteRequest:
        return VoteRequest(t, v[1], v[2], v[3], bool(v[4]), v[5], v[6])
    if t == MsgType.RequestVoteResponse:
        return VoteResponse(t, v[1], v[2], bool(v[3]), bool(v[4]), _error(v[5]), v[6], v[7])
    if t == MsgType.BeginQuorumEpochRequest:
        return BeginQuorumEpoch(t, v[1], v[2], v[3], v[4])
    if t == MsgType.FetchRequest:
        return _fetch_request(v)
    return FetchResponse(t, FetchResult(v[1]), _error(v[2]), v[3], v[4], v[5],
                         None if v[6] is None else tuple(_entry(e) for e in v[6]),
                         v[7], v[8], v[9], v[10], _fetch_request(v[11]))


def _fetch_state(v) -> FetchState:
    last = None if v[1] is None else LastFetchRes(v[1][0], _error(v[1][1]))
    return FetchState(_opt(_fetch_request)(v[0]), last, bool(v[2]))


def _per_server(conv):
    return lambda v: tuple(conv(x) for x in v)


def _same(v):
    return v


_CONVERTERS = {
    "server_ids": _per_server(lambda x: ServerId(x[0], x[1])),
    "net_messages": lambda v: frozenset(_message(m) for m in v),
    "net_messages_processed": lambda v: frozenset(_message(m) for m in v),
    "net_connectivity": lambda v: frozenset(tuple(p) for p in v),
    "net_connectivity_ctr": _same,
    "config": _per_server(lambda x: Config(x[0], frozenset(x[1]), bool(x[2]))),
    "current_epoch": tuple,
    "state": _per_server(Role),
    "voted_for": tuple,
    "leader": tuple,
    "fetch_state": _per_server(_fetch_state),
    "pending_ack": _per_server(frozenset),
    "votes_recv": _per_server(frozenset),
    "flwr_end_offset": _per_server(lambda fm: tuple((k, o) for k, o in fm)),
    "log": _per_server(lambda log: tuple(_entry(e) for e in log)),
    "hwm": tuple,
    "inv_sent": frozenset,
    "inv_pos_acked": frozenset,
    "inv_neg_acked": frozenset,
    "aux_ctrs": lambda v: AuxCtrs(*v),
    "aux_disk_id_gen": _same,
    "flushed": tuple,
    "power_losses": tuple,
    "lost_unflushed": bool,
    "lost_power_acked": frozenset,
    "elected_after_power_loss": bool,
    "fetched_voters": _per_server(frozenset),
}
