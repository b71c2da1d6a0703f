"""Properties of the `kraft` model (KRaft replication, variants kip966 and v3_5).

Invariants keep the reference's names and meaning (Vanlightly/kafka-tlaplus
@ 823615e, kraft/{kip-966,v3.5}/*_properties.tla), in this order:
1. those the reference's .cfg checks, in its order, then kmc's own
   RecoveryQuorumAtLeastMinIsr (kip966: what holds of the recovery quorum);
2. the reference's validity invariants (not in its .cfg; kmc checks them too);
3. kmc's `sometimes` witnesses, so no invariant passes vacuously.

Modules by topic: completeness (Leader / Leader Candidate Completeness,
replication quorum, recovery quorum, no acked record lost), log_matching
(partition log, metadata log, consistent reads), validity, witnesses;
recovery (storage variants only: Unclean Exclusion, data loss reported);
consumer (Consumer = true only: what a consumer's reads rely on).
"""
from __future__ import annotations

from model.base import ALWAYS, SOMETIMES, Property

from invariants.kraft import completeness, consumer, log_matching, recovery, validity, witnesses
from invariants.kraft.common import KIP966, context_of

# name -> (factory, one-line doc, variants); .cfg order, then validity
_INVARIANTS = (
    ("LeaderCompletenessProperty", completeness.leader_completeness,
     "a RUNNING leader elected by the controller hosts every committed record "
     "(LEO >= True HWM, every positively acked value in its log)", None),
    ("LeaderCandidateCompletenessProperty", completeness.leader_candidate_completeness,
     "no RUNNING member of the controller's election quorum (ISR; kip966: ISR and ELR) "
     "misses a committed record", None),
    ("ReplicationQuorumSupersetProperty", completeness.replication_quorum_superset,
     "a non-stale leader's maximal ISR (its replication quorum) covers the controller's "
     "ISR (kip966: ISR + ELR while the leader ISR >= MinISR)", None),
    ("LogMatchingProperty", log_matching.log_matching,
     "two replicas hold the same value at every offset below both their LEOs and HWMs", None),
    ("MetadataLogMatchingProperty", log_matching.metadata_log_matching,
     "each broker's copy of the metadata log agrees with the controller's", None),
    ("ConsistentReadProperty", log_matching.consistent_read,
     "records consumed below the True HWM stay at their offsets in every non-stale "
     "leader's log (repeatable reads)", None),
    ("MinIsrRecoveryQuorum", completeness.min_isr_recovery_quorum,
     "with ISR and ELR empty, the LastKnownELR (unclean recovery quorum) has MinISR members",
     (KIP966,)),
    ("NoCommittedRecordLostGlobally", completeness.no_committed_record_lost_globally,
     "every positively acked value is still in some broker's log", None),
    ("RecoveryQuorumAtLeastMinIsr", completeness.recovery_quorum_at_least_min_isr,
     "with ISR and ELR empty, the LastKnownELR has at least MinISR members (kmc's own: what "
     "holds where MinIsrRecoveryQuorum's 'exactly' does not)", (KIP966,)),
    ("TypeOK", validity.type_ok,
     "every typed variable is in its type (spec-bug catcher)", None),
    ("ValidBrokerState", validity.valid_broker_state,
     "a RUNNING broker is registered (spec-bug catcher)", None),
    ("ValidReplicaState", validity.valid_replica_state,
     "a leader believes it leads; LEO = Len(log) + 1; log offsets are 1, 2, ... "
     "(spec-bug catcher)", None),
    ("ValidFetcherState", validity.valid_fetcher_state,
     "a broker fetches the partition from one peer at most, a follower from one, a leader "
     "from none (spec-bug catcher)", None),
    ("ValidControllerState", validity.valid_controller_state,
     "controller registrations agree with con_unfenced and fenced brokers are kept out of "
     "the ISR (spec-bug catcher)", None),
    ("ValidControllerIsrAndElr", validity.valid_controller_isr_and_elr,
     "ISR and ELR are disjoint subsets of the replicas, the ELR empty while ISR >= MinISR "
     "(spec-bug catcher)", (KIP966,)),
)

_WITNESSES = (
    ("RecordCommitted", witnesses.record_committed,
     "a record gets committed (True HWM > 1 or a positive ack)", None),
    ("LeaderChanged", None,
     "the controller elects a new leader (leader epoch above the initial one)", None),
    ("UncleanShutdownHappened", witnesses.unclean_shutdown_happened,
     "a broker shuts down uncleanly (OFFLINE_DIRTY, or the unclean shutdown counter > 0)", None),
    ("ElrNonEmpty", witnesses.elr_non_empty,
     "the controller's ELR gets a member", (KIP966,)),
    ("CandidateLostCommittedRecord", witnesses.candidate_lost_committed_record,
     "a member of the controller's ISR (kip966: or ELR) misses a committed record: a stopped "
     "broker lost committed data while still electable (the Last Replica Standing hazard)", None),
    ("ReassignmentPending", witnesses.reassignment_pending,
     "the controller has a reassignment in progress (adding or removing replicas not empty)", None),
    ("ReassignmentCompleted", witnesses.reassignment_completed,
     "a reassignment started and completed (none in progress, the counter above 0)", None),
    ("ReassignedAndUncleanShutdown", witnesses.reassigned_and_unclean,
     "one execution has both a completed reassignment and an unclean shutdown", None),
    ("RecordConsumed", witnesses.record_consumed,
     "a record is below the True HWM: consumers can read it", None),
    ("NackedRecordConsumed", witnesses.nacked_record_consumed,
     "a negatively acknowledged value is among the records consumers could read", None),
)

# the storage variants (kip966_storage, v3_5_storage) only: after the above
_STORAGE_INVARIANTS = (
    ("UncleanExclusion", recovery.unclean_exclusion,
     "a replica registered after an unclean stop is not the controller's leader, nor in its "
     "ISR or (kip966) ELR, until it provably caught up with the leader or unclean recovery "
     "elected it (KIP-966 description 5.1.2)", None),
    ("DataLossIsReported", recovery.data_loss_is_reported,
     "every committed value the controller's RUNNING leader lacks was reported lost by an "
     "unclean recovery (KIP-966 description 5.3.2)", None),
    ("ValidStorageState", recovery.valid_storage_state,
     "1 <= flushed offset <= LEO, HWM checkpoint >= 1, recovery answers from asked brokers "
     "(spec-bug catcher)", None),
)
_STORAGE_WITNESSES = (
    ("UnflushedRecords", recovery.unflushed_records,
     "a running replica holds records not yet flushed", None),
    ("UncleanRestart", recovery.unclean_restart,
     "a broker registers again after an unclean stop", None),
    ("UncleanRecoveryReported", recovery.unclean_recovery_reported,
     "an unclean recovery elects a leader (a reported potential data-loss event)", (KIP966,)),
    ("AckedRecordUnflushed", recovery.acked_record_unflushed,
     "a positively acked record is not yet flushed on a running replica (a power loss there "
     "drops acknowledged data)", None),
    ("UncleanRecoveryLostData", recovery.unclean_recovery_lost_data,
     "an unclean recovery elects a replica lacking committed records (reported lost)", (KIP966,)),
    ("HwmCheckpointed", recovery.hwm_checkpointed,
     "a broker that never stopped checkpointed an HWM above 1 (HwmCheckpoint timer: "
     "CheckpointHwm; flush: a log flush)", None),
    ("CrashedInControlledShutdown", recovery.crashed_in_controlled_shutdown,
     "a broker stops uncleanly in the middle of its controlled shutdown: the controller moved "
     "its leadership and took it out of the ISR, but it crashed before it flushed and wrote its "
     "broker epoch file (ControlledShutdownSteps)", None),
)
# with MinIsrChanges only: after the above
_MIN_ISR_WITNESSES = (
    ("MinIsrChanged", witnesses.min_isr_changed,
     "an AlterMinIsr step set min.insync.replicas", None),
    ("ElrClearedByMinIsrChange", witnesses.elr_cleared_by_min_isr_change,
     "a min.insync.replicas change to another value cleared a non-empty ELR or last-known "
     "ELR (KAFKA-16540)", (KIP966,)),
)
# the witnesses of unclean recovery, which UncleanRecoveryStrategy manual never starts
_RECOVERY_WITNESSES = ("UncleanRecoveryReported", "UncleanRecoveryLostData")

# with Consumer = true only (model/kraft/consumer.py): after the above
_CONSUMER_INVARIANTS = (
    ("ConsumedRecordsStayCommitted", consumer.consumed_records_stay_committed,
     "every record the consumer read is at its offset in each non-stale leader's log (the "
     "committed log); unlike ConsistentReadProperty, of what a consumer really read", None),
    ("MonotonicReads", consumer.monotonic_reads,
     "the offsets the consumer read strictly increase and its position stays above them "
     "(broken only by an auto.offset.reset moving it back)", None),
)
_CONSUMER_WITNESSES = (
    ("ConsumerRead", consumer.consumer_read, "the consumer read a record", None),
    ("ConsumerReadBeforeLeaderChange", consumer.consumer_read_before_leader_change,
     "the controller elected a new leader after the consumer read a record", None),
    ("ConsumerReadFromStaleLeader", consumer.consumer_read_from_stale_leader,
     "the consumer read from a broker that still believed it led after the controller "
     "replaced it", None),
    ("ConsumerOffsetReset", consumer.consumer_offset_reset,
     "the consumer moved its position by auto.offset.reset (truncation detected or offset "
     "out of range)", None),
)

# The state variables each property reads (Property.reads: the engine checks
# a successor only when one of them changed). Complete by test:
# tests/kraft_invariants/test_reads.py records every variable each predicate
# touches over whole state spaces of every variant.
_READS = {
    "LeaderCompletenessProperty": ("broker_state", "con_partition_metadata", "inv_pos_acked",
                                   "inv_true_hwm", "partition_data"),
    "LeaderCandidateCompletenessProperty": ("broker_state", "con_partition_metadata",
                                            "inv_true_hwm", "partition_data"),
    "ReplicationQuorumSupersetProperty": ("con_partition_metadata", "partition_metadata",
                                          "partition_pending_ap", "partition_status"),
    "LogMatchingProperty": ("partition_data",),
    "MetadataLogMatchingProperty": ("broker_metadata_log", "con_metadata_log"),
    "ConsistentReadProperty": ("con_partition_metadata", "inv_consumed", "partition_data",
                               "partition_metadata", "partition_status"),
    "MinIsrRecoveryQuorum": ("con_partition_metadata",),
    "RecoveryQuorumAtLeastMinIsr": ("con_partition_metadata",),
    "NoCommittedRecordLostGlobally": ("inv_pos_acked", "partition_data"),
    "TypeOK": ("aux_ctrs", "broker_fetchers", "broker_state", "con_broker_reg",
               "con_partition_metadata", "con_unfenced", "inv_neg_acked", "inv_pos_acked",
               "inv_sent", "partition_metadata", "partition_replica_state", "partition_status"),
    "ValidBrokerState": ("broker_state",),
    "ValidReplicaState": ("partition_data", "partition_metadata", "partition_status"),
    "ValidFetcherState": ("broker_fetchers", "partition_status"),
    "ValidControllerState": ("con_broker_reg", "con_partition_metadata", "con_unfenced"),
    "ValidControllerIsrAndElr": ("con_partition_metadata",),
    "RecordCommitted": ("inv_pos_acked", "inv_true_hwm"),
    "LeaderChanged": ("con_partition_metadata",),
    "UncleanShutdownHappened": ("aux_ctrs", "broker_state"),
    "ElrNonEmpty": ("con_partition_metadata",),
    "CandidateLostCommittedRecord": ("con_partition_metadata", "inv_true_hwm", "partition_data"),
    "ReassignmentPending": ("con_partition_metadata",),
    "ReassignmentCompleted": ("aux_ctrs", "con_partition_metadata"),
    "NackedRecordConsumed": ("inv_consumed", "inv_neg_acked"),
    "RecordConsumed": ("inv_true_hwm",),
    "ReassignedAndUncleanShutdown": ("aux_ctrs", "broker_state", "con_partition_metadata"),
    "UncleanExclusion": ("con_partition_metadata", "ghost_unclean"),
    "DataLossIsReported": ("broker_state", "con_partition_metadata", "ghost_reported",
                           "inv_consumed", "inv_pos_acked", "partition_data"),
    "ValidStorageState": ("con_recovery", "ghost_unclean", "partition_data", "partition_flushed",
                          "partition_hwm_checkpoint"),
    "UnflushedRecords": ("broker_state", "partition_data", "partition_flushed"),
    "UncleanRestart": ("ghost_unclean",),
    "UncleanRecoveryReported": ("ghost_reported",),
    "AckedRecordUnflushed": ("broker_state", "inv_pos_acked", "partition_data", "partition_flushed"),
    "UncleanRecoveryLostData": ("ghost_reported",),
    "ConsumedRecordsStayCommitted": ("con_partition_metadata", "consumer", "partition_data",
                                     "partition_metadata", "partition_status"),
    "MonotonicReads": ("consumer",),
    "ConsumerRead": ("consumer",),
    "ConsumerReadBeforeLeaderChange": ("con_partition_metadata", "consumer"),
    "ConsumerReadFromStaleLeader": ("consumer",),
    "ConsumerOffsetReset": ("consumer",),
    "HwmCheckpointed": ("broker_state", "partition_hwm_checkpoint"),
    "CrashedInControlledShutdown": ("broker_state", "con_controlled_shutdown"),
    "MinIsrChanged": ("con_partition_metadata",),
    "ElrClearedByMinIsrChange": ("con_metadata_log",),
}

# what the properties read besides when min.insync.replicas is state
# (MinIsrChanges): the leader's value is in its metadata log
_MIN_ISR_READS = {"ReplicationQuorumSupersetProperty": _READS["ReplicationQuorumSupersetProperty"]
                  + ("broker_metadata_log",)}

# what the storage variants' versions read besides (ValidFetcherState: a
# follower in controlled shutdown outside its ISR fetches from none)
_STORAGE_READS = {"ValidFetcherState": _READS["ValidFetcherState"]
                  + ("broker_want_shutdown", "partition_metadata")}

# Invariants checked by parts (Property.parts): a conjunct per variable, so
# that a successor is checked in the variables its step changed only.
_PARTS = {"TypeOK": validity.type_ok_parts}

INVARIANT_NAMES = tuple(name for name, *_ in _INVARIANTS)
WITNESS_NAMES = tuple(name for name, *_ in _WITNESSES)
CONSUMER_INVARIANT_NAMES = tuple(name for name, *_ in _CONSUMER_INVARIANTS)
CONSUMER_WITNESS_NAMES = tuple(name for name, *_ in _CONSUMER_WITNESSES)


def _initial_leader_epoch(model) -> int:
    epochs = [s.con_partition_metadata.leader_epoch for s in model.init_states()]
    return min(epochs) if epochs else 0


def kraft_properties(model) -> list[Property]:
    ctx = context_of(model)
    with_consumer = bool(model.constants.get("Consumer"))
    invariants = (_INVARIANTS + (_STORAGE_INVARIANTS if ctx.storage else ())
                  + (_CONSUMER_INVARIANTS if with_consumer else ()))
    reads = dict(_READS, **_STORAGE_READS) if ctx.storage else _READS
    if ctx.min_isr_changes:
        reads = dict(reads, **_MIN_ISR_READS)
    props = [Property(name, ALWAYS, factory(ctx), doc, reads[name],
                      _PARTS[name](ctx) if name in _PARTS else None)
             for name, factory, doc, variants in invariants
             if variants is None or ctx.variant in variants]
    witnesses_ = (_WITNESSES + (_STORAGE_WITNESSES if ctx.storage else ())
                  + (_CONSUMER_WITNESSES if with_consumer else ()))
    if ctx.min_isr_changes:  # the operator changes min.insync.replicas (AlterMinIsr)
        witnesses_ += _MIN_ISR_WITNESSES
    if ctx.strategy == "manual":  # no unclean recovery can happen
        witnesses_ = tuple(w for w in witnesses_ if w[0] not in _RECOVERY_WITNESSES)
    for name, factory, doc, variants in witnesses_:
        if variants is not None and ctx.variant not in variants:
            continue
        predicate = (witnesses.leader_changed(ctx, _initial_leader_epoch(model))
                     if factory is None else factory(ctx))
        props.append(Property(name, SOMETIMES, predicate, doc, _READS[name]))
    # a stand-in model (constants only, tests/conformance) says it in its constants
    if getattr(model, "fetch_survives_stop", model.constants.get("FetchRequestsSurviveStop", False)):
        props.append(Property("FetchOutlivedSender", SOMETIMES, witnesses.fetch_outlived_sender(ctx),
                              "a fetch request is in flight from a broker that stopped since "
                              "sending it (FetchRequestsSurviveStop: KIP-903's race)",
                              ("messages", "broker_state")))
    if ctx.storage and getattr(model, "flush_policy", None) == "segment_roll":
        props.append(Property("ActiveSegmentFlushed", SOMETIMES,
                              recovery.active_segment_flushed(model.segment_size),
                              "a broker that never stopped flushed a record of its active "
                              "segment (segment_roll: the OS's BackgroundFlush)",
                              ("broker_state", "partition_data", "partition_flushed")))
        if getattr(model, "roll_flush_scheduled", False):
            props.append(Property("RolledSegmentUnflushed", SOMETIMES,
                                  recovery.rolled_segment_unflushed(model.segment_size),
                                  "a running broker holds a rolled segment not yet flushed "
                                  "(SegmentRollFlush scheduled: the flush-log task has not run)",
                                  ("broker_state", "partition_data", "partition_flushed")))
    if ctx.storage and getattr(model, "leader_recovery", False):  # KIP-704
        props.insert(sum(p.kind == ALWAYS for p in props), Property(
            "RecoveringIsrAlone", ALWAYS, recovery.recovering_isr_alone(ctx),
            "while the partition is RECOVERING after an unclean election, its ISR holds at most "
            "one replica (KIP-704: no ISR expansion while recovering)",
            ("con_leader_recovering", "con_partition_metadata")))
        props.append(Property("LeaderRecovering", SOMETIMES, recovery.leader_recovering(ctx),
                              "an unclean election marked the partition RECOVERING (KIP-704)",
                              ("con_leader_recovering",)))
        props.append(Property("IsrExpandedAfterRecovery", SOMETIMES,
                              recovery.isr_expanded_after_recovery(ctx),
                              "after an unclean election the leader's AlterPartition made the "
                              "partition RECOVERED and its ISR grew past one replica",
                              ("con_leader_recovering", "con_partition_metadata",
                               "ghost_reported")))
    if ctx.storage and model.constants.get("ControlledShutdownLimit"):
        steps = getattr(model, "shutdown_steps", False)
        if (steps and model.constants.get("ControlledShutdownTimeout")) \
                or not model.constants.get("ControlledShutdownEnable", True):
            props.append(Property("ShutdownWithoutGrant", SOMETIMES,
                                  recovery.shutdown_without_grant(ctx),
                                  "a broker stopped cleanly while still registered unfenced "
                                  "(its controlled shutdown timed out ungranted, or "
                                  "ControlledShutdownEnable = false)",
                                  ("broker_state", "con_broker_reg")))
        if steps and model.constants.get("ShutdownStopsFetching"):
            props.append(Property("StoppedFetchingInShutdown", SOMETIMES,
                                  recovery.stopped_fetching_in_shutdown(ctx),
                                  "a running broker in controlled shutdown follows the partition "
                                  "outside its ISR and fetches it from nobody "
                                  "(ShutdownStopsFetching)",
                                  ("broker_fetchers", "broker_state", "broker_want_shutdown",
                                   "partition_metadata", "partition_status")))
    return props
