"""Constants and variants of the `zk` model, and their validation.

Both variants share the constants; a `Variant` is the switch the actions read
(never a copy of an action per variant). Every assumption the model makes of
its constants is checked here and raised as a ModelConfigError (exit 2) that
names the constant.
"""
from __future__ import annotations

from dataclasses import dataclass

from model.base import Constant, ModelConfigError
from model.constants import resolve_constants

ELECTIONS = ("registration", "controller")
BROKER_EPOCHS = ("none", "kip380", "kraft")
ACKS = ("all", "1")
LEADER_AND_ISR_QUEUES = ("fifo", "newest")
SHUTDOWN_STEPS = ("several", "one")
ELECTION_HWS = ("kept", "leo")

CONSTANTS = (
    Constant("BrokerCount", int, 2, "number of brokers, ids 0..BrokerCount-1 (0.8 replication design: broker-0, ...)"),
    Constant("ReplicationFactor", int, 2,
             "assigned replicas of the partition, placed by the 0.8 replication design's rule (placement.py)"),
    Constant("Values", (list, str), ["A"], "values the producer may write; each is written at most once"),
    # faults, each bounded (the names and meanings of the kraft storage variants)
    Constant("PowerLossLimit", int, 2,
             "power losses / OS crashes: the page cache is gone, the log falls back to its flushed "
             "prefix (also of a broker whose process crashed before the OS wrote its pages back)"),
    Constant("ProcessCrashLimit", int, 0,
             "process crashes: the page cache survives (the whole log is kept, flushed or not); "
             "the in-memory HW is lost"),
    Constant("ControlledShutdownLimit", int, 0,
             "clean shutdowns: flush the log, checkpoint the HW, stop (Election controller: the "
             "controller moves leadership and shrinks the ISR first, ControlledShutdownSteps)"),
    Constant("ControlledShutdownSteps", str, "several",
             "Election controller: several: Kafka's controlled shutdown (KafkaServer.controlledShutdown, "
             "KafkaController.doControlledShutdown): the broker sends ControlledShutdownRequest and "
             "keeps serving; the controller moves its leadership to another live ISR member, removes "
             "it from the ISR, stops its follower (StopReplica) and answers; the broker retries while "
             "it still leads, then flushes, checkpoints the HW and stops; other steps (crashes too) "
             "interleave; one: all of it in one step (the controller handles the broker as lost)",
             choices=SHUTDOWN_STEPS),
    Constant("FollowerStallLimit", int, 1,
             "ISR shrink by time (replica.lag.time.max.ms; Partition.getOutOfSyncReplicas, "
             "Replica.lastCaughtUpTimeMs): a leader drops a follower that has not caught up to its LEO "
             "within the lag time; untimed, that time may pass for any follower, so a follower whose "
             "last fetch reached the LEO may be dropped too if it then stalls (stops fetching, or "
             "fetches too slowly: 0.9 to 2.0, and 0.8's stuck-follower timer): at most this many "
             "times (each drop bumps the znode version; the limit keeps the state space finite); "
             "0: never, only a follower whose last fetch was below the LEO (Kafka 2.1 on, KAFKA-7152: "
             "a follower at the leader's LEO is never out of sync)"),
    Constant("SessionExpiryLimit", int, 0,
             "how many ZooKeeper sessions may expire while the broker keeps running (a zombie leader)"),
    Constant("UncleanLeaderElection", bool, False,
             "a live replica outside the ISR may be elected when no ISR member is alive (Kafka's design docs, unclean leader election)"),
    Constant("ElectionHw", str, "kept",
             "the HW of a newly elected leader: kept: Kafka's code (Partition.makeLeader, 0.8.2 to "
             "0.10.2): the leader keeps the HW it had as a follower (or recovered from its "
             "checkpoint), forgets its followers' LEOs and raises the HW through "
             "maybeIncrementLeaderHW, to its LEO at once only when the ISR is the leader alone, "
             "otherwise as the ISR fetches; leo: the 0.8 replication design (\"the new leader "
             "chooses its LEO as the new HW\"; detailed design V2 becomeLeader: r.hw = r.leo)", choices=ELECTION_HWS),
    Constant("ConditionalIsrUpdate", bool, True,
             "the leader writes the ISR under a check of the znode version it last saw"),
    Constant("PromptElection", bool, False,
             "true: while an election is due (registration: no leader and an electable replica; "
             "controller: a session loss it has not processed) it is the only step - the old "
             "scheduling assumption; false: it races with every other enabled step"),
    Constant("Election", str, "registration",
             "registration: the replicas race to register as leader in ZooKeeper (the 0.8 replication design and "
             "detailed design V2); controller: the ZooKeeper-era controller elects from the ISR and removes a "
             "failed broker from it when it learns of its session loss (v3.5 description 2.8)",
             choices=ELECTIONS),
    Constant("BrokerEpochs", str, "none",
             "Election controller: none: the 0.8 controller tells brokers apart by id only and "
             "misses a broker that went offline and came back before it looked (the ABA of v3.5 description "
             "1.2.2); kip380: each registration has a new broker epoch and the controller "
             "handles a bounce it sees as a failure and a startup (ZooKeeper mode since Kafka 2.2), "
             "but a new controller knows only the current epochs; kraft: a broker registers through "
             "the controller, which handles the loss of its old incarnation first, and the "
             "registration survives controller fail-overs (v3.5 description 1.2.2)",
             choices=BROKER_EPOCHS),
    Constant("RequestsSurviveStop", bool, True,
             "Election controller: a LeaderAndIsr request to a broker that stops stays queued at the "
             "controller until it handles the broker's loss (0.8 ControllerChannelManager: the send "
             "thread retries until removeBroker), and reaches the broker's next incarnation if it "
             "restarts first; with BrokerEpochs kip380 / kraft the request carries the broker epoch "
             "the controller knows and that incarnation rejects it as stale (KIP-380, KafkaApis "
             "handleLeaderAndIsrRequest); false: a stop loses the request"),
    Constant("LeaderAndIsrQueue", str, "fifo",
             "Election controller: fifo: the controller queues its requests per broker and the broker "
             "takes them in order (ControllerChannelManager: a queue and a send thread per broker; "
             "bounded by the controller's events, which the faults bound); newest: one request per "
             "broker, a newer one replacing one not yet taken", choices=LEADER_AND_ISR_QUEUES),
    Constant("ControllerFailoverLimit", int, 0,
             "Election controller: how many times a new controller takes over (reads ZooKeeper "
             "afresh, elects for an offline partition, sends LeaderAndIsr to every live replica)"),
    # the clients (producer.py, consumer.py)
    Constant("Acks", str, "all",
             "the producer's acks: all (default, the 0.8 replication design's synchronous replication: "
             "the leader acknowledges a write once the HW passes it) or 1 (the leader acknowledges a "
             "write as soon as it appends it to its own log: Kafka's acks=1, the design's asynchronous "
             "replication, which may lose acknowledged records on a leader change). The brokers do "
             "the same either way: acks changes only when the producer hears back", choices=ACKS),
    Constant("Consumer", bool, False,
             "a consumer reads the partition from a broker it believes leads, up to that broker's HW "
             "(consumer.py). An observer: its steps change only its own state (and the ghost that "
             "notes a step taken while an election was due, for the ElectionRaced witness), never "
             "what a broker can do; off by default, which leaves the state space as it is without "
             "a consumer"),
)

# Upper bounds that keep a run in the range an explicit-state checker can do;
# they are assumptions of the model, not of the protocol.
MAX_BROKERS = 5
MAX_VALUES = 4


@dataclass(frozen=True)
class Variant:
    """How the two protocol versions differ (read by replica.py and producer.py)."""

    name: str
    # KIP-101: records carry the leader epoch; a follower truncates to the end
    # offset of its latest epoch on the leader (OffsetsForLeaderEpoch) instead
    # of to its high watermark.
    leader_epoch: bool


HW_TRUNCATION = Variant("hw_truncation", leader_epoch=False)
LEADER_EPOCH = Variant("leader_epoch", leader_epoch=True)
VARIANTS = {v.name: v for v in (HW_TRUNCATION, LEADER_EPOCH)}


def resolve(variant: str, constants: dict) -> tuple[Variant, dict]:
    """The variant and the complete constants (defaults filled in), every
    assumption checked; ModelConfigError otherwise."""
    if variant not in VARIANTS:
        raise ModelConfigError(f"zk: unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    where = f"zk/{variant}"
    cfg = resolve_constants(where, CONSTANTS, constants, nonempty=("Values",))
    n, rf = cfg["BrokerCount"], cfg["ReplicationFactor"]
    if not 1 <= n <= MAX_BROKERS:
        raise ModelConfigError(f"{where}: BrokerCount must be in 1..{MAX_BROKERS}, got {n}")
    if not 1 <= rf <= n:
        raise ModelConfigError(f"{where}: ReplicationFactor must be in 1..BrokerCount ({n}), got {rf}")
    if len(cfg["Values"]) > MAX_VALUES:
        raise ModelConfigError(f"{where}: at most {MAX_VALUES} Values, got {len(cfg['Values'])}")
    if cfg["Election"] != "controller":
        for name, default in (("BrokerEpochs", "none"), ("ControllerFailoverLimit", 0),
                              ("LeaderAndIsrQueue", "fifo"), ("ControlledShutdownSteps", "several")):
            if name in constants and cfg[name] != default:
                raise ModelConfigError(f"{where}: {name} needs Election = \"controller\" "
                                       f"(there is no controller with Election = {cfg['Election']!r})")
    return VARIANTS[variant], cfg
