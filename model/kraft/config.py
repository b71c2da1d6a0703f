"""Constants and variants of the `kraft` model, and their validation.

The constants are those of the reference's *_types.tla (with each .cfg's values
as defaults); build-time validation enforces every ASSUME of the reference plus
what its Init needs to be evaluable (TLC would stop on a CHOOSE over an empty
set), each as a ModelConfigError with a one-line message naming the constant.

A `Variant` is the small set of switches by which v3.5 differs from KIP-966;
the actions read these flags instead of being copied per variant.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from model.base import Constant, ModelConfigError
from model.kraft.mutants import mutant_flags

ACKS = ("all", "1")
HWM_CHECKPOINTS = ("timer", "flush")
SEGMENT_ROLL_FLUSHES = ("scheduled", "append")

_COMMON_HEAD = (
    Constant("BrokerCount", int, 3, "number of brokers, ids 1..BrokerCount"),
    Constant("InitReplicationFactor", int, 3, "initial replica set size (brokers 1..RF)"),
    Constant("Values", (list, str), ["A"], "producer values; each can be written once"),
    Constant("MinISR", int, 2, "min.insync.replicas"),
    Constant("InitIsrSize", int, 2, "initial ISR size; replicas outside it start fenced and stale"),
)
_COMMON_TAIL = (
    Constant("FenceBrokerLimit", int, 1, "how many times the controller may fence a broker"),
    Constant("LeaderShrinkIsrLimit", int, 0, "how many AlterPartition requests may shrink the ISR"),
    Constant("ReassignmentLimit", int, 0, "how many partition reassignments may start"),
)
# not of the reference: seeded bugs for quality tests (model/kraft/mutants.py)
_MUTANTS = Constant("Mutants", (list, str), [],
                    "seeded protocol bugs to switch on, by name (model/kraft/mutants.py); [] = none")
# not of the reference: the documented exception to "defaults are faithful" -
# its default (true) is the reference's behaviour, so that kmc stays TLC's
# state for state; false is what Kafka does (model/kraft/__init__.py, quirks 5, 6, 18)
_REFERENCE_QUIRKS = Constant(
    "ReferenceQuirks", bool, True,
    "true (default, for conformance with the reference TLA+ spec): keep the reference's "
    "quirks 5 and 6 - WriteRecordToLeader commits, acks and consumes against the pre-write "
    "log, so the first record never commits in its write and, with MinISR = 1 and two or "
    "more values, the model stops with an evaluation error (quirk 18); false: fixed as Kafka "
    "does - the append, then the HWM over the new log end (a sole-member ISR commits it at once)")

# not of the reference: the producer's acks (Kafka's default since 3.0 is all, the
# reference's only behaviour); a constant of a run only when it is 1 (as Mutants)
_ACKS = Constant(
    "Acks", str, "all",
    "the producer's acks: all (default, the reference: the leader needs MinISR members in its "
    "maximal ISR to accept a write and acknowledges it once the HWM passes it) or 1 (the leader "
    "acknowledges a write as soon as it appends it, with no min.insync.replicas check: "
    "Kafka's acks=1, which may lose acknowledged records on a leader change)", choices=ACKS)

# not of the reference: a consumer client (model/kraft/consumer.py); off by default
# so that the reference's variants stay TLC's state for state
_CONSUMER = Constant(
    "Consumer", bool, False,
    "false (default): no consumer, the reference's state space; true: one consumer client "
    "reads the partition as Kafka's does - from a broker that believes it leads, with its "
    "current leader epoch (KIP-320), up to that broker's HWM, resetting its position by "
    "auto.offset.reset = latest (truncation detected, offset out of range). The consumer only "
    "observes: no broker step depends on it, so what brokers can do is unchanged; it adds "
    "its own steps and variable, and the properties ConsumedRecordsStayCommitted and MonotonicReads")

# not of the reference: the operator's dynamic min.insync.replicas changes
# (incrementalAlterConfigs; KAFKA-16540). Kafka allows them at any time: the
# list is a bound of the model; [] (default) = none, the reference's behaviour
_MIN_ISR_CHANGES = Constant(
    "MinIsrChanges", (list, int), [],
    "the values an operator sets min.insync.replicas to, in this order, one AlterMinIsr step "
    "each (Kafka allows any number at any time: a bound of the model); the controller clears "
    "the partition's ELR and last-known ELR at each (KAFKA-16540) and a broker uses the new "
    "value once its metadata log has it; [] (default): MinISR never changes, the reference")
# not Kafka's: a fix kmc evaluates for the race of a raise with an ISR shrink
# (docs/findings.md); false (default) is Kafka's
_MIN_ISR_CHANGE_BUMPS = Constant(
    "MinIsrChangeBumpsPartitionEpoch", bool, False,
    "false (default, Kafka): AlterMinIsr moves the partition epoch only when it clears an ELR "
    "(Kafka writes no partition change otherwise); true (not Kafka): at every change, so an "
    "AlterPartition request built before the leader read the change is rejected "
    "(MinIsrChanges only)")

KIP966_CONSTANTS = _COMMON_HEAD + (
    Constant("NoDataLossShutdownLimit", int, 0, "shutdowns that keep the log (clean or not)"),
    Constant("DataLossShutdownLimit", int, 1, "shutdowns that lose the whole log"),
) + _COMMON_TAIL + (_MUTANTS, _REFERENCE_QUIRKS, _ACKS)

V3_5_CONSTANTS = _COMMON_HEAD + (
    Constant("CleanShutdownLimit", int, 0, "clean shutdowns (log kept)"),
    Constant("UncleanShutdownLimit", int, 1, "unclean shutdowns (whole log lost)"),
) + _COMMON_TAIL + (
    Constant("AvoidLastReplicaStanding", bool, True,
             "disable an unclean shutdown of the sole ISR member (avoids the LRS data loss)"),
    _MUTANTS, _REFERENCE_QUIRKS, _ACKS,
)


# ---- the storage variants (KIP-966 description 5: beyond the reference) ------------

FLUSH_POLICIES = ("every_write", "every_n", "segment_roll", "async")
RECOVERY_STRATEGIES = ("balanced", "proactive", "manual", "last_known_leader")

_STORAGE = (
    Constant("FlushPolicy", str, "async",
             "when a replica flushes its log: every_write (before the HWM can advance), "
             "every_n (FlushEveryN appends), segment_roll (a segment of SegmentSize records "
             "rolls, or a controlled shutdown), async (only the OS: BackgroundFlush)",
             choices=FLUSH_POLICIES),
    Constant("FlushEveryN", int, 1, "FlushPolicy every_n: flush once this many appends are unflushed"),
    Constant("SegmentSize", int, 1, "FlushPolicy segment_roll: records per log segment"),
    Constant("ControlledShutdownLimit", int, 0,
             "controlled shutdowns (flush, write the broker epoch file)"),
    Constant("ControlledShutdownSteps", bool, True,
             "true (Kafka): a controlled shutdown is several steps - the broker asks "
             "(BeginControlledShutdown: wantShutDown), the controller moves its leaderships and "
             "takes it out of the ISR (EnterControlledShutdown), grants the shutdown once the other "
             "brokers have the change and fences it (GrantShutdown), then the broker stops "
             "(CompleteControlledShutdown: flush, HWM checkpoint, broker epoch file), other steps "
             "and faults interleaving; false: one atomic ControlledShutdown step"),
    Constant("ProcessCrashLimit", int, 0,
             "process crashes (page cache survives: nothing lost, no epoch file)"),
    Constant("PowerLossLimit", int, 1,
             "brokers losing their page cache (OS crash / power loss: the log falls back "
             "to its flushed prefix)"),
    Constant("CorrelatedPowerLoss", bool, False,
             "one PowerOutage step may take down several running brokers"),
)
_RECOVERY = (
    Constant("UncleanRecoveryStrategy", str, "balanced",
             "unclean.recovery.strategy (KIP-966 part 2): balanced | proactive | manual; or "
             "last_known_leader, what Kafka 4.x ships: the LastKnownELR holds the last leader, "
             "elected once it is unfenced with ISR and ELR empty", choices=RECOVERY_STRATEGIES),
)

# FenceBrokerLimit bounds the fencing of live brokers only (a crashed one's is free)
_STORAGE_TAIL = (
    Constant("FenceBrokerLimit", int, 1,
             "how many times the controller may fence a running broker (a missed heartbeat); "
             "fencing a crashed broker (SessionTimeout: its session timing out) is free"),
) + _COMMON_TAIL[1:] + (
    Constant("UncleanLeaderElection", bool, False,
             "unclean.leader.election.enable (Kafka's default false): with no clean candidate "
             "the controller elects any unfenced replica (ElectUncleanLeader); kip966_storage: "
             "with UncleanRecoveryStrategy last_known_leader only, as Kafka 4.x ships it"),
)
KIP966_STORAGE_CONSTANTS = (_COMMON_HEAD + _STORAGE + _STORAGE_TAIL + _RECOVERY
                            + (_MUTANTS, _REFERENCE_QUIRKS, _ACKS))
V3_5_STORAGE_CONSTANTS = (_COMMON_HEAD + _STORAGE + _STORAGE_TAIL
                          + (_MUTANTS, _REFERENCE_QUIRKS, _ACKS))

# A follower's fetch request outlives its sender: Kafka's leader reads it off
# the socket and handles it though the follower stopped (KIP-903's race: it
# may record the LEO of a replica that restarted without that log). The
# reference drops every fetch message to or from a stopping broker
# (DropFetchSessions): its variants keep that by default, for conformance.
_FETCH_SURVIVES_DOC = ("a fetch request in flight from a broker that stops is still handled by "
                       "the leader (Kafka; KIP-903's race); false: dropped with the stop, as the "
                       "reference's DropFetchSessions does")
KIP966_CONSTANTS += (Constant("FetchRequestsSurviveStop", bool, False, _FETCH_SURVIVES_DOC), _CONSUMER,
                     _MIN_ISR_CHANGES, _MIN_ISR_CHANGE_BUMPS)
V3_5_CONSTANTS += (Constant("FetchRequestsSurviveStop", bool, False, _FETCH_SURVIVES_DOC), _CONSUMER,
                   _MIN_ISR_CHANGES, _MIN_ISR_CHANGE_BUMPS)
# the storage variants are not the reference: Kafka's behaviour by default
_STORAGE_FETCH = Constant(
    "FetchRequestsSurviveStop", bool, True,
    "true (default, Kafka): a fetch request in flight from a broker that stops is still handled "
    "by the leader (KIP-903's race); false: dropped with the stop, as the reference's "
    "DropFetchSessions does")
# Two simplifications the storage variants had, now constants whose default is Kafka's:
# the OS writes dirty pages back whatever log.flush.* says (vm dirty writeback), and
# ReplicaManager writes replication-offset-checkpoint on its own timer
# (replica.high.watermark.checkpoint.interval.ms, 5 s), not at log flushes.
_STORAGE_KAFKA = (
    _STORAGE_FETCH,
    Constant("BackgroundFlushAlways", bool, True,
             "true (default, Kafka): the OS writes dirty pages back (BackgroundFlush) under every "
             "FlushPolicy, as the kernel's writeback does whatever log.flush.* says; false: "
             "under FlushPolicy async only (the other policies flush at their own points only)"),
    Constant("HwmCheckpoint", str, "timer",
             "when a running broker writes its HWM checkpoint (replication-offset-checkpoint): "
             "timer (default, Kafka: CheckpointHwm(b), its own step, as ReplicaManager's "
             "replica.high.watermark.checkpoint.interval.ms timer) or flush (with the log's "
             "flushes only: the policy's and, while the broker runs, the OS's BackgroundFlush); "
             "both: at a controlled shutdown", choices=HWM_CHECKPOINTS),
    Constant("ControlledShutdownTimeout", bool, True,
             "true (default, Kafka: BrokerServer.shutdown waits for the controller's grant only "
             "until its shutdown deadline, then logs \"Timed out waiting for the controller to "
             "approve controlled shutdown\" and stops anyway): CompleteControlledShutdown(b) may "
             "come at any time after BeginControlledShutdown(b), granted or not, and the "
             "controller learns of the stop at the session timeout; false: only once granted "
             "(GrantShutdown fenced b)"),
    Constant("ControlledShutdownEnable", bool, True,
             "controlled.shutdown.enable (Kafka's default true); false: the broker stops at once "
             "without asking the controller (UncontrolledShutdown(b): flush, HWM checkpoint, broker "
             "epoch file; BrokerServer.shutdown skips beginControlledShutdown), which learns of "
             "it at the session timeout"),
    Constant("ShutdownStopsFetching", bool, True,
             "true (default, Kafka: ReplicaManager.applyLocalFollowersDelta): a broker in "
             "controlled shutdown stops fetching a partition whose metadata update leaves it "
             "without a leader or outside the ISR; false: it keeps fetching until it stops"),
    Constant("LeaderRecoveryState", bool, True,
             "true (default, Kafka since KIP-704): an unclean election (ElectUncleanLeader, "
             "ElectLastKnownLeader; not KIP-966's unclean recovery) marks the partition RECOVERING "
             "(PartitionChangeBuilder.tryElection); the controller rejects an AlterPartition that "
             "says RECOVERING with more than the leader in the ISR, and the leader, which marks "
             "itself RECOVERED as it becomes leader (Partition.makeLeader), clears it with its "
             "first accepted AlterPartition; false: no such state"),
    Constant("SegmentRollFlush", str, "scheduled",
             "FlushPolicy segment_roll: scheduled (default, Kafka: UnifiedLog.roll schedules the "
             "flush-log task, FlushRolledSegments(b), a step of its own that a crash may "
             "pre-empt) or append (the rolled segments are flushed in the appending step)",
             choices=SEGMENT_ROLL_FLUSHES),
)
KIP966_STORAGE_CONSTANTS += _STORAGE_KAFKA + (_CONSUMER, _MIN_ISR_CHANGES, _MIN_ISR_CHANGE_BUMPS)
V3_5_STORAGE_CONSTANTS += _STORAGE_KAFKA + (_CONSUMER, _MIN_ISR_CHANGES, _MIN_ISR_CHANGE_BUMPS)
# constants that only mean something under one flush policy
_POLICY_CONSTANTS = {"FlushEveryN": "every_n", "SegmentSize": "segment_roll"}


@dataclass(frozen=True)
class Variant:
    """How a protocol version differs; read by the actions (never copied per variant)."""

    name: str
    # KIP-966: the controller keeps an ELR / last-known ELR and may elect from the ELR
    elr: bool
    # KIP-966 (CanAdvanceHwm): the HWM advances only while the leader's ISR >= MinISR
    hwm_needs_min_isr: bool
    # KIP-966: a broker keeps its epoch on file across a clean shutdown and sends it
    # in its registration; epoch 0 tells the controller it restarted unclean
    epoch_on_file: bool
    # v3.5 (MaybeRemoveBrokerFromISR): fencing never shrinks the ISR below one member
    isr_never_empty: bool
    # v3.5 (AvoidLastReplicaStanding): the unclean shutdown guard exists
    lrs_guard: bool
    lossy_shutdown: str        # action name of the shutdown that loses the log
    keep_log_shutdown: str     # action name of the shutdown that keeps it
    lossy_limit: str           # its limit constant
    keep_log_limit: str
    lossy_ctr: str             # its aux_ctrs field
    keep_log_ctr: str
    # kip966's NoDataLossShutdown chooses \E is_clean_shutdown \in BOOLEAN
    keep_log_chooses_clean: bool
    # a storage variant (model/kraft/storage.py): flushed offsets, three kinds of
    # stop instead of the reference's two shutdowns, fencing as its own step,
    # unclean recovery (kip966 only), ghost state for Unclean Exclusion
    storage: bool = False


KIP966 = Variant(
    name="kip966", elr=True, hwm_needs_min_isr=True, epoch_on_file=True,
    isr_never_empty=False, lrs_guard=False,
    lossy_shutdown="DataLossShutdown", keep_log_shutdown="NoDataLossShutdown",
    lossy_limit="DataLossShutdownLimit", keep_log_limit="NoDataLossShutdownLimit",
    lossy_ctr="data_loss_shutdown_ctr", keep_log_ctr="no_data_loss_shutdown_ctr",
    keep_log_chooses_clean=True,
)

V3_5 = Variant(
    name="v3_5", elr=False, hwm_needs_min_isr=False, epoch_on_file=False,
    isr_never_empty=True, lrs_guard=True,
    lossy_shutdown="UncleanShutdown", keep_log_shutdown="CleanShutdown",
    lossy_limit="UncleanShutdownLimit", keep_log_limit="CleanShutdownLimit",
    lossy_ctr="unclean_shutdown_ctr", keep_log_ctr="clean_shutdown_ctr",
    keep_log_chooses_clean=False,
)

KIP966_STORAGE = replace(KIP966, name="kip966_storage", storage=True)
V3_5_STORAGE = replace(V3_5, name="v3_5_storage", storage=True, lrs_guard=False)

VARIANTS: dict[str, tuple[Variant, tuple[Constant, ...]]] = {
    "kip966": (KIP966, KIP966_CONSTANTS),
    "v3_5": (V3_5, V3_5_CONSTANTS),
    "kip966_storage": (KIP966_STORAGE, KIP966_STORAGE_CONSTANTS),
    "v3_5_storage": (V3_5_STORAGE, V3_5_STORAGE_CONSTANTS),
}


# PerformPartitionReassignment ranges over SUBSET Brokers x SUBSET Brokers:
# 4^8 = 65,536 candidate pairs per state is already far beyond a useful check
MAX_REASSIGNMENT_BROKERS = 8


def resolve(variant: str, constants: dict) -> tuple[Variant, dict]:
    """Check `constants` against the variant's declarations and the reference's
    ASSUMEs; return the variant and the complete constants (defaults filled in)."""
    if variant not in VARIANTS:
        raise ModelConfigError(
            f"kraft: unknown variant {variant!r} (known: {', '.join(VARIANTS)})")
    v, decls = VARIANTS[variant]
    known = {c.name: c for c in decls}
    unknown = sorted(set(constants) - set(known))
    if unknown:
        raise ModelConfigError(
            f"kraft/{variant}: unknown constant(s) {', '.join(unknown)} "
            f"(known: {', '.join(known)})")
    cfg = {c.name: constants.get(c.name, c.default) for c in decls}

    for c in decls:
        val = cfg[c.name]
        if c.type is int:
            # bool is an int in Python; TLA+ keeps BOOLEAN and Nat apart
            if isinstance(val, bool) or not isinstance(val, int) or val < 0:
                raise ModelConfigError(
                    f"kraft/{variant}: {c.name} must be a natural number (ASSUME {c.name} \\in Nat), got {val!r}")
        elif c.type is bool:
            if not isinstance(val, bool):
                raise ModelConfigError(
                    f"kraft/{variant}: {c.name} must be a boolean (ASSUME {c.name} \\in BOOLEAN), got {val!r}")
        elif c.name == "Mutants":  # seeded bugs; the default [] is the reference
            if not isinstance(val, (list, tuple)) or not all(isinstance(x, str) for x in val):
                raise ModelConfigError(
                    f"kraft/{variant}: Mutants must be a list of mutant names, got {val!r}")
            mutant_flags(val)  # unknown names -> ModelConfigError listing the known ones
            cfg[c.name] = sorted(set(val))
        elif c.name == "MinIsrChanges":  # checked against the replication factor below
            if (not isinstance(val, (list, tuple))
                    or not all(isinstance(x, int) and not isinstance(x, bool) for x in val)):
                raise ModelConfigError(
                    f"kraft/{variant}: MinIsrChanges must be a list of integers, got {val!r}")
            cfg[c.name] = list(val)
        elif c.type is str:  # a choice (storage variants, Acks)
            choices = c.choices
            if val not in choices:
                raise ModelConfigError(
                    f"kraft/{variant}: {c.name} must be one of {', '.join(map(repr, choices))}, got {val!r}")
        else:  # Values
            if (not isinstance(val, (list, tuple)) or not val
                    or not all(isinstance(x, str) and x for x in val)):
                raise ModelConfigError(
                    f"kraft/{variant}: Values must be a non-empty list of non-empty strings, got {val!r}")
            if len(set(val)) != len(val):
                raise ModelConfigError(f"kraft/{variant}: Values must be unique, got {list(val)!r}")
            cfg[c.name] = list(val)

    n, rf = cfg["BrokerCount"], cfg["InitReplicationFactor"]
    isr, min_isr = cfg["InitIsrSize"], cfg["MinISR"]
    if n < 1:
        raise ModelConfigError(f"kraft/{variant}: BrokerCount must be >= 1, got {n}")
    if rf > n:
        raise ModelConfigError(
            f"kraft/{variant}: InitReplicationFactor ({rf}) must be <= BrokerCount ({n})")
    if isr > rf:
        raise ModelConfigError(
            f"kraft/{variant}: InitIsrSize ({isr}) must be <= InitReplicationFactor ({rf})")
    if isr < min_isr:
        raise ModelConfigError(f"kraft/{variant}: InitIsrSize ({isr}) must be >= MinISR ({min_isr})")
    if cfg["ReassignmentLimit"] > 0 and n > MAX_REASSIGNMENT_BROKERS:
        # PerformPartitionReassignment enumerates every pair of broker subsets
        raise ModelConfigError(
            f"kraft/{variant}: BrokerCount = {n} with ReassignmentLimit > 0 means 4^{n} reassignments "
            f"per state; at most {MAX_REASSIGNMENT_BROKERS} brokers (or ReassignmentLimit = 0)")
    if min_isr > rf:
        raise ModelConfigError(
            f"kraft/{variant}: MinISR ({min_isr}) must be <= InitReplicationFactor ({rf})")
    # Init CHOOSEs a replica set and an ISR that contain broker 1: both must be non-empty
    if rf < 1:
        raise ModelConfigError(
            f"kraft/{variant}: InitReplicationFactor must be >= 1 (Init puts broker 1 in the replica set)")
    if isr < 1:
        raise ModelConfigError(
            f"kraft/{variant}: InitIsrSize must be >= 1 (Init makes broker 1 leader and ISR member)")
    if min_isr < 1:  # Kafka refuses min.insync.replicas < 1 (its config is atLeast(1))
        raise ModelConfigError(f"kraft/{variant}: MinISR must be >= 1 (min.insync.replicas), got {min_isr}")
    for value in cfg["MinIsrChanges"]:
        if not 1 <= value <= rf:  # as MinISR (Kafka's getTopicEffectiveMinIsr caps it at RF)
            raise ModelConfigError(
                f"kraft/{variant}: MinIsrChanges values must be in 1..InitReplicationFactor ({rf}), "
                f"got {value}")
    if v.storage:
        for name, policy in _POLICY_CONSTANTS.items():
            if cfg[name] < 1:
                raise ModelConfigError(f"kraft/{variant}: {name} must be >= 1, got {cfg[name]}")
            default = next(c.default for c in decls if c.name == name)
            if cfg[name] != default and cfg["FlushPolicy"] != policy:
                raise ModelConfigError(
                    f"kraft/{variant}: {name} applies to FlushPolicy = {policy!r} only "
                    f"(FlushPolicy is {cfg['FlushPolicy']!r})")
        if cfg["SegmentRollFlush"] != "scheduled" and cfg["FlushPolicy"] != "segment_roll":
            raise ModelConfigError(
                f"kraft/{variant}: SegmentRollFlush applies to FlushPolicy = 'segment_roll' only "
                f"(FlushPolicy is {cfg['FlushPolicy']!r})")
        if not cfg["ControlledShutdownEnable"] and not cfg["ControlledShutdownSteps"]:
            raise ModelConfigError(
                f"kraft/{variant}: ControlledShutdownSteps = false needs ControlledShutdownEnable = "
                f"true (with false the broker stops at once: UncontrolledShutdown)")
    if (cfg.get("UncleanLeaderElection") and v.elr
            and cfg["UncleanRecoveryStrategy"] != "last_known_leader"):
        raise ModelConfigError(
            f"kraft/{variant}: UncleanLeaderElection = true goes with UncleanRecoveryStrategy = "
            f"'last_known_leader' (Kafka 4.x); KIP-966's strategies replace it, got "
            f"{cfg['UncleanRecoveryStrategy']!r}")
    if not cfg["Mutants"]:  # the reference protocol: its constants, as its .cfg lists them
        del cfg["Mutants"]
    if cfg["ReferenceQuirks"]:  # likewise: the reference's own behaviour is not a constant of its .cfg
        del cfg["ReferenceQuirks"]
    if cfg["Acks"] == "all":  # likewise: acks=all is the reference's only producer
        del cfg["Acks"]
    # likewise at the variant's default (the reference variants: DropFetchSessions;
    # the storage variants: Kafka's, so a run lists it only when set to the reference's)
    if cfg["FetchRequestsSurviveStop"] == known["FetchRequestsSurviveStop"].default:
        del cfg["FetchRequestsSurviveStop"]
    if not cfg["Consumer"]:  # likewise: the reference has no consumer client
        del cfg["Consumer"]
    if cfg["MinIsrChangeBumpsPartitionEpoch"] and not cfg["MinIsrChanges"]:
        raise ModelConfigError(
            f"kraft/{variant}: MinIsrChangeBumpsPartitionEpoch = true needs MinIsrChanges "
            f"(no change is made without it)")
    if not cfg["MinIsrChanges"]:  # likewise: the reference's MinISR never changes
        del cfg["MinIsrChanges"]
    if not cfg["MinIsrChangeBumpsPartitionEpoch"]:  # likewise: Kafka's
        del cfg["MinIsrChangeBumpsPartitionEpoch"]
    return v, cfg
