"""ZkModel: Init and Next of the `zk` model for one variant and its constants.

Next is enumerated elections first (registration: ElectLeader /
UncleanElectLeader; controller: OnBrokerFailure), then broker by broker
(ascending id), each broker's actions in the order of ACTIONS below, each
action's nondeterminism (which value, which follower) in ascending order,
then ControllerFailover. An election that is due races with every other
step; with PromptElection it is the only step (the old scheduling
assumption). Only the assigned replicas act; a broker outside them has no
replica of the partition and nothing to do here.
"""
from __future__ import annotations

from model.base import Action
from model.zk import broker, consumer, controller, fetch, producer, replica, storage, zookeeper
from model.zk.config import resolve
from model.zk.placement import assign_replicas
from model.zk.replica import NO_ROLE
from model.zk.state import (
    NO_CONSUMER, NO_FAULTS, NO_LEADER, VARIABLES, Acked, ConsumerState, Faults, FetchResponse,
    LeaderAndIsr, LeaderView, Record, ReplicaRole, Role, ZkPartition, ZkState)

# Next, per broker, in this order: (action name, function(model, state, broker, out))
ACTIONS = (
    ("Produce", producer.produce),
    ("HandleFetch", fetch.handle_fetch),
    ("ReceiveFetchResponse", fetch.receive_fetch_response),
    ("ShrinkIsr", replica.shrink_isr),
    ("BecomeFollower", replica.become_follower),               # registration only
    ("ReceiveLeaderAndIsr", controller.receive_leader_and_isr),  # controller only
    ("OnBrokerStartup", controller.on_broker_startup),           # controller only
    ("TruncateToLeaderEpochEnd", replica.truncate_to_leader_epoch_end),
    ("FlushLog", storage.flush_log),
    ("CheckpointHw", storage.checkpoint_hw),
    ("PowerLoss", broker.power_loss),
    ("ProcessCrash", broker.process_crash),
    ("ControlledShutdown", broker.controlled_shutdown),
    ("HandleControlledShutdown", controller.handle_controlled_shutdown),  # controller, several steps
    ("RetryControlledShutdown", broker.retry_controlled_shutdown),         # controller, several steps
    ("FinishControlledShutdown", broker.finish_controlled_shutdown),       # controller, several steps
    ("Restart", broker.restart),
    ("ExpireSession", broker.expire_session),
    ("Reregister", broker.reregister),
    ("ConsumerFetch", consumer.consumer_fetch),                  # Consumer only
    ("ResetOffset", consumer.reset_offset),                      # Consumer only
)
_CONTROLLER_ONLY = ("ReceiveLeaderAndIsr", "OnBrokerStartup")
_SHUTDOWN_STEPS = ("HandleControlledShutdown", "RetryControlledShutdown", "FinishControlledShutdown")
# the elections, enumerated before the others: registration (zookeeper.elect_leader),
# controller (controller.on_broker_failure)
REGISTRATION_ELECTIONS = ("ElectLeader", "UncleanElectLeader")
CONTROLLER_ELECTIONS = ("OnBrokerFailure",)


class ZkModel:
    """ZooKeeper-era Kafka replication of one partition (variants
    hw_truncation and leader_epoch)."""

    name = "zk"
    variables = VARIABLES
    projections: dict = {}

    def __init__(self, variant: str, constants: dict):
        flags, cfg = resolve(variant, constants)
        self.variant = variant
        self.variant_flags = flags
        self.constants = cfg
        n = self.n = cfg["BrokerCount"]
        self.brokers = tuple(range(n))
        # the partition's assigned replicas: partition 0 under the 0.8 replication design's rule
        self.replicas = tuple(assign_replicas(n, 1, cfg["ReplicationFactor"])[0])
        self.values = tuple(cfg["Values"])
        self.power_loss_limit = cfg["PowerLossLimit"]
        self.process_crash_limit = cfg["ProcessCrashLimit"]
        self.controlled_shutdown_limit = cfg["ControlledShutdownLimit"]
        self.session_expiry_limit = cfg["SessionExpiryLimit"]
        self.unclean_leader_election = cfg["UncleanLeaderElection"]
        self.conditional_isr_update = cfg["ConditionalIsrUpdate"]
        self.prompt_election = cfg["PromptElection"]
        self.controller = cfg["Election"] == "controller"
        self.broker_epochs = cfg["BrokerEpochs"]
        self.controller_failover_limit = cfg["ControllerFailoverLimit"]
        self.requests_survive_stop = self.controller and cfg["RequestsSurviveStop"]
        self.epochs = self.controller and cfg["BrokerEpochs"] != "none"
        self.acks_all = cfg["Acks"] == "all"
        self.consumer = cfg["Consumer"]
        self.fifo_requests = cfg["LeaderAndIsrQueue"] == "fifo"
        self.follower_stall_limit = cfg["FollowerStallLimit"]
        self.shutdown_in_steps = self.controller and cfg["ControlledShutdownSteps"] == "several"
        self.no_follower_leos = (0,) * n
        self.election_hw_leo = cfg["ElectionHw"] == "leo"

        names = [a for a, _ in ACTIONS]
        dropped = set(("BecomeFollower",) if self.controller else _CONTROLLER_ONLY)
        if not flags.leader_epoch:
            dropped.add("TruncateToLeaderEpochEnd")
        for a, limit in (("PowerLoss", self.power_loss_limit),
                         ("ProcessCrash", self.process_crash_limit),
                         ("ControlledShutdown", self.controlled_shutdown_limit)):
            if not limit:
                dropped.add(a)
        if not self.consumer:
            dropped.update(("ConsumerFetch", "ResetOffset"))
        if not (self.shutdown_in_steps and self.controlled_shutdown_limit):
            dropped.update(_SHUTDOWN_STEPS)
        if not self.session_expiry_limit:
            dropped.update(("ExpireSession", "Reregister"))
        if not (self.power_loss_limit or self.process_crash_limit or self.controlled_shutdown_limit):
            dropped.add("Restart")
        names = [a for a in names if a not in dropped]
        self._steps = tuple(fn for a, fn in ACTIONS if a in names)
        if self.controller:
            elections = list(CONTROLLER_ELECTIONS)
        else:
            elections = ["ElectLeader"] + (["UncleanElectLeader"] if self.unclean_leader_election
                                           else [])
        self.action_names = tuple(elections + names
                                  + (["ControllerFailover"] if self.controller_failover_limit
                                     else []))
        # Action objects, made once (identity-cheap, and replayable by value)
        pairs = [(b, x) for b in self.brokers for x in self.brokers if x != b]
        self.acts = {
            "Produce": {(b, v): Action("Produce", (b, v)) for b in self.brokers for v in self.values},
            "HandleFetch": {p: Action("HandleFetch", p) for p in pairs},
            "ShrinkIsr": {p: Action("ShrinkIsr", p) for p in pairs},
            "ControllerFailover": Action("ControllerFailover", ()),
        }
        for a in names + list(REGISTRATION_ELECTIONS + CONTROLLER_ELECTIONS):
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
            ctl_live=frozenset(self.brokers) if self.controller else frozenset(),
            ctl_stale=frozenset(),
            ctl_request=((),) * n,
            ctl_shutting_down=frozenset(),
            broker_epoch=(0,) * n,
            shutting_down=(0,) * n,
            acked=(),
            written=frozenset(),
            truncated=False,
            clean_down=frozenset(),
            faults=NO_FAULTS,
            consumer=NO_CONSUMER if self.consumer else None,
        )]

    # ---- Next ------------------------------------------------------------------

    def successors(self, state) -> list:
        out: list = []
        # the elections that are due: registration, while no leader is
        # registered (any live ISR member may register first); controller,
        # while it has a session loss to handle
        if self.controller:
            elect = controller.on_broker_failure
            for b in self.replicas:
                elect(self, state, b, out)
        elif state.zk_partition.leader == NO_LEADER:
            elect = zookeeper.elect_leader
            for b in self.replicas:
                elect(self, state, b, out)
        due = len(out)
        if due and self.prompt_election:
            return out  # the old scheduling assumption: nothing else happens first
        steps = self._steps
        for b in self.replicas:
            for fn in steps:
                fn(self, state, b, out)
        if self.controller_failover_limit:
            controller.controller_failover(self, state, out)
        if due and not state.faults.raced:
            # ghost: another step went first while an election was due
            raced = state.faults._replace(raced=True)
            for i in range(due, len(out)):
                a, t = out[i]
                if t.faults is state.faults:
                    out[i] = (a, t._replace(faults=raced))
                elif not t.faults.raced:
                    out[i] = (a, t._replace(faults=t.faults._replace(raced=True)))
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
            ctl_live=fs(f["ctl_live"]),
            ctl_stale=fs(f["ctl_stale"]),
            ctl_request=tuple(tuple(LeaderAndIsr(r[0], r[1], fs(r[2]), r[3], r[4]) for r in q)
                              for q in f["ctl_request"]),
            ctl_shutting_down=fs(f["ctl_shutting_down"]),
            broker_epoch=tuple(f["broker_epoch"]),
            shutting_down=tuple(f["shutting_down"]),
            acked=tuple(Acked(a[0], fs(a[1])) for a in f["acked"]),
            written=fs(f["written"]),
            truncated=bool(f["truncated"]),
            clean_down=fs(f["clean_down"]),
            faults=Faults(*(bool(x) if i >= 6 else x for i, x in enumerate(f["faults"]))),
            consumer=_consumer(f["consumer"]),
        )


def _znode(x):
    return ZkPartition(x[0], x[1], frozenset(x[2]), x[3])


def _consumer(x):
    if x is None:
        return None
    return ConsumerState(x[0], frozenset(tuple(r) for r in x[1]), frozenset(x[2]), bool(x[3]))
