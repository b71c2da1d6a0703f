"""ZkModel: Init and Next of the `zk` model for one variant and its constants.

Next is enumerated broker by broker (ascending id), each broker's actions in
the order of ACTIONS below, each action's nondeterminism (which value, which
follower) in ascending order; while the partition has no registered leader
and some replica may be elected, the elections are the only steps. Only the assigned replicas act; a broker
outside them has no replica of the partition and nothing to do here.
"""
from __future__ import annotations

from model.base import Action
from model.zk import broker, fetch, producer, replica, storage, zookeeper
from model.zk.config import resolve
from model.zk.placement import assign_replicas
from model.zk.replica import NO_ROLE
from model.zk.state import (
    NO_LEADER, VARIABLES, Acked, FetchResponse, LeaderView, Record, ReplicaRole, Role, ZkPartition, ZkState)

# Next, per broker, in this order: (action name, function(model, state, broker, out))
ACTIONS = (
    ("Produce", producer.produce),
    ("HandleFetch", fetch.handle_fetch),
    ("ReceiveFetchResponse", fetch.receive_fetch_response),
    ("ShrinkIsr", replica.shrink_isr),
    ("BecomeFollower", replica.become_follower),
    ("TruncateToLeaderEpochEnd", replica.truncate_to_leader_epoch_end),
    ("FlushLog", storage.flush_log),
    ("CheckpointHw", storage.checkpoint_hw),
    ("Crash", broker.crash),
    ("Restart", broker.restart),
    ("ExpireSession", broker.expire_session),
    ("Reregister", broker.reregister),
)
# elections (zookeeper.elect_leader), enumerated before the others
EXTRA_ACTION_NAMES = ("ElectLeader", "UncleanElectLeader")


class ZkModel:
    """ZooKeeper-era Kafka replication of one partition (variants
    hw_truncation and leader_epoch)."""

    name = "zk"
    variables = VARIABLES
    views: dict = {}

    def __init__(self, variant: str, constants: dict):
        flags, cfg = resolve(variant, constants)
        self.variant = variant
        self.variant_flags = flags
        self.constants = cfg
        n = self.n = cfg["BrokerCount"]
        self.brokers = tuple(range(n))
        # the partition's assigned replicas: partition 0 under the seed's rule
        self.replicas = tuple(assign_replicas(n, 1, cfg["ReplicationFactor"])[0])
        self.values = tuple(cfg["Values"])
        self.crash_limit = cfg["CrashLimit"]
        self.session_expiry_limit = cfg["SessionExpiryLimit"]
        self.unclean_leader_election = cfg["UncleanLeaderElection"]
        self.conditional_isr_update = cfg["ConditionalIsrUpdate"]
        self.no_follower_leos = (0,) * n

        names = [a for a, _ in ACTIONS]
        if not flags.leader_epoch:
            names.remove("TruncateToLeaderEpochEnd")
        if not self.session_expiry_limit:
            names = [a for a in names if a not in ("ExpireSession", "Reregister")]
        self._steps = tuple(fn for a, fn in ACTIONS if a in names)
        self.action_names = tuple(["ElectLeader"] + (["UncleanElectLeader"]
                                                     if self.unclean_leader_election else [])
                                  + names)
        # Action objects, made once (identity-cheap, and replayable by value)
        pairs = [(b, x) for b in self.brokers for x in self.brokers if x != b]
        self.acts = {
            "Produce": {(b, v): Action("Produce", (b, v)) for b in self.brokers for v in self.values},
            "HandleFetch": {p: Action("HandleFetch", p) for p in pairs},
            "ShrinkIsr": {p: Action("ShrinkIsr", p) for p in pairs},
        }
        for a in names + list(EXTRA_ACTION_NAMES):
            self.acts.setdefault(a, {b: Action(a, (b,)) for b in self.brokers})

    # ---- Init ------------------------------------------------------------------

    def init_states(self) -> list:
        """The partition has just been created: every broker is up and
        registered, the ISR is the assigned replicas, the preferred replica
        (the first assigned) leads in epoch 0, the others follow it; all logs
        are empty."""
        n, reps = self.n, self.replicas
        leader = reps[0]
        isr = frozenset(reps)
        roles = tuple(ReplicaRole(Role.LEADER, leader, 0) if b == leader
                      else ReplicaRole(Role.FOLLOWER, leader, 0) if b in isr
                      else NO_ROLE for b in self.brokers)
        return [ZkState(
            zk_live=frozenset(self.brokers),
            zk_partition=ZkPartition(leader, 0, isr, 0),
            running=(True,) * n,
            role=roles,
            log=((),) * n,
            hw=(0,) * n,
            flushed=(0,) * n,
            ckpt_hw=(0,) * n,
            leader_view=tuple(LeaderView(isr, 0, self.no_follower_leos) if b == leader else None
                              for b in self.brokers),
            fetch_response=(None,) * n,
            acked=(),
            written=frozenset(),
            truncated=False,
            crashes=0,
            expiries=0,
        )]

    # ---- Next ------------------------------------------------------------------

    def successors(self, state) -> list:
        out: list = []
        if state.zk_partition.leader == NO_LEADER:
            # Elections are prompt: while no leader is registered and a live
            # replica may be elected, an election is the only step (the
            # controller / the surviving replicas react to the leader's
            # session loss before anything else happens; a replica that
            # restarts into a leaderless partition registers first).
            elect = zookeeper.elect_leader
            for b in self.replicas:
                elect(self, state, b, out)
            if out:
                return out
        steps = self._steps
        for b in self.replicas:
            for fn in steps:
                fn(self, state, b, out)
        return out

    def successors_of(self, state, action: Action) -> list:
        """The successors by one action (for tests)."""
        return [s for a, s in self.successors(state) if a == action]

    # ---- from_plain ------------------------------------------------------------

    def from_plain(self, values: tuple):
        f = dict(zip(VARIABLES, values))
        fs = frozenset
        return ZkState(
            zk_live=fs(f["zk_live"]),
            zk_partition=_znode(f["zk_partition"]),
            running=tuple(bool(x) for x in f["running"]),
            role=tuple(ReplicaRole(Role(r[0]), r[1], r[2]) for r in f["role"]),
            log=tuple(tuple(Record(*r) for r in log) for log in f["log"]),
            hw=tuple(f["hw"]),
            flushed=tuple(f["flushed"]),
            ckpt_hw=tuple(f["ckpt_hw"]),
            leader_view=tuple(None if v is None else LeaderView(fs(v[0]), v[1], tuple(v[2]))
                              for v in f["leader_view"]),
            fetch_response=tuple(None if r is None else
                                 FetchResponse(r[0], tuple(Record(*x) for x in r[1]), r[2], r[3])
                                 for r in f["fetch_response"]),
            acked=tuple(Acked(a[0], fs(a[1])) for a in f["acked"]),
            written=fs(f["written"]),
            truncated=bool(f["truncated"]),
            crashes=f["crashes"],
            expiries=f["expiries"],
        )


def _znode(x):
    return ZkPartition(x[0], x[1], frozenset(x[2]), x[3])
