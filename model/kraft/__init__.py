"""`kraft`: Kafka's KRaft-based data replication protocol, one partition.

A Python rendering of the reference TLA+ specification
(Vanlightly/kafka-tlaplus @ 823615e, kafka_data_replication/kraft), meant to
match TLC state for state: same distinct states, same successors per action
(one per witness of each action's nondeterminism).

Variants:
- `kip966`: KIP-966, Eligible Leader Replicas (ELR, last-known ELR, broker
  epoch on file, HWM advances only while ISR >= MinISR);
- `v3_5`: the protocol of Kafka 3.5 (the ISR never shrinks below one member;
  AvoidLastReplicaStanding switches off the unclean shutdown of the last ISR
  member, the "Last Replica Standing" data-loss scenario).

Modules, one per actor: controller (registration, fencing, AlterPartition,
partition changes), reassignment, broker (start-up, registration), replica
(metadata-driven roles, HWM, acks, AlterPartition on the leader), fetch,
producer, consumer (Consumer = true only: a client reading up to the HWM,
not of the reference), faults (shutdowns), network, messages, state (shared
layout), config (constants, variants, ASSUMEs), model (Init/Next: KraftModel).

Quirks of the reference reproduced on purpose (a later variant may fix them;
each fix changes the state space, so it must be a new variant or a constant,
not an edit). The constant ReferenceQuirks (every variant) keeps quirks 5 and
6 while true - its default, the documented exception to "defaults are the
faithful behaviour", so that kmc stays TLC's state for state - and fixes
them when false (WriteRecordToLeader as Kafka's appendRecordsToLeader: the
append, then the HWM over the new log end), which lifts the evaluation error
of quirk 18 that otherwise stops every configuration with MinISR = 1, two
or more values and a way for the ISR to shrink to the leader alone:
1. A lossy shutdown (DataLossShutdown / UncleanShutdown) loses the whole
   partition log and LESO, not just an unflushed tail. Fix: keep a
   nondeterministic prefix (or the HWM-flushed prefix) of the log.
2. The controller fences a broker in the same step as its shutdown
   (HandleBrokerFenced inside the shutdown actions), with no heartbeat
   timeout in between. Fix: a separate FenceBroker after the shutdown.
3. kip966 UpdateElr is not trimmed to MinISR: every replica leaving the ISR
   while the ISR < MinISR joins the ELR, so ISR + ELR may exceed MinISR
   (the reference's comment says it is bounded). A fenced broker joins the
   ELR too. Fix: trim the ELR to MinISR - |ISR| members.
4. kip966 elects a leader from the new ISR without checking that the
   candidate is unfenced (v3.5 does check). Fix: intersect with con_unfenced.
5. GetCommitOffset's first CASE arm tests the replica's *current* LEO, not
   its `leo` argument: the first write to an empty log never advances the
   HWM in the same step, even with MinISR = 1 and a sole-member ISR.
   (ReferenceQuirks = false: fixed, the HWM is computed over the new log.)
6. WriteRecordToLeader's ack bookkeeping reads the pre-write log, inv_sent
   and aux_flo: the value written is never acknowledged in its own step; if
   the HWM could pass the old log end there (MinISR = 1, sole-member ISR, a
   second value), SubSeq / LogEntry leave their domain and, as TLC would
   stop, we raise EvaluationError. (ReferenceQuirks = false: fixed, the
   bookkeeping reads the log with the new record, which a sole-member ISR
   commits and acknowledges in its own write, as Kafka does.)
7. Leadership changes (BecomeLeaderInNewEpoch, RemainLeader, AlterPartition
   responses) recompute the HWM from the pre-step follower state, before the
   follower state is reset.
8. Init gives every broker but 1 - a replica or not - a fetcher for broker 1
   with the partition added (fetch offset 1); replicas outside the initial
   ISR are fenced, have an empty metadata log and stale metadata
   (partition epoch 1 while the controller is at 2).
9. The fetcher's `delayed` flag is set but never read by SendFetchRequest;
   the Converged(leader, follower) guard is what stops endless fetching.
10. Disjunctions in action position are branches for TLC: PartitionNeedsAction
   in ReceiveMetadataUpdate (a leader seeing a leader-epoch bump),
   PreviouslySent in SendAlterPartitionRequest's __AvoidCycle (a request both
   in flight and processed) and ValidReassignment's (adding # {} \\/ removing
   # {}) each yield a successor once per true disjunct. We count them the
   same way (duplicates in "generated", not in "distinct").
11. kip966 NoDataLossShutdown enumerates is_clean_shutdown \\in BOOLEAN even
   when the broker epoch on file is already 0 (two equal successors).
12. The network is a set: re-sending an equal message is a no-op, processed
   messages stay in messages_discard forever (it is part of the state), and
   a fetch response nobody waits for stays in flight forever.
13. A broker that registers catches up with the metadata log bar its last
   record (__CatchUpBarOne) and starts from blank partition metadata; the
   RegisterBrokerResponse carries a spec-only metadata_offset.
14. The AlterPartition response carries the whole request (a spec-only
   correlation trick), so responses to equal requests are equal.
15. LastOffsetForEpoch returns a Nil offset where the reference says "should
   not happen"; comparing it raises EvaluationError, as TLC would stop.
16. The partition record of a successful fetch response has an extra
   `type |-> FetchResponse` field in the reference; it is implied by
   error = diverging_epoch = Nil and left out here (see messages.py).
17. kip966 does not protect a sole ISR member whose whole log is lost when
   MinISR = 1 (the .cfg says to drop NoCommittedRecordLostGlobally when
   MinISR = DataLossShutdownLimit): with 2 brokers, MinISR 1 and one fence,
   WriteRecordToLeader(1), FenceBroker(2), ReceiveMetadataUpdate(1),
   DataLossShutdown(1) loses an acknowledged record, as in v3.5 without
   AvoidLastReplicaStanding. With MinISR 2 (3 brokers) kip966 keeps it.
18. Where TLC would stop with an evaluation error we raise EvaluationError
   naming the action and the state: e.g. Values {A, B}, MinISR 1 and one
   fence reach quirk 6 (WriteRecordToLeader's SubSeq) at the 4th step, so
   the reference cannot be model-checked with those constants (kmc can,
   with ReferenceQuirks = false: specs/kraft-*-quirks-fixed*.toml).

Storage variants (beyond the reference; model/kraft/storage.py, recovery.py),
a refinement of KIP-966 description 5 that leaves kip966 / v3_5 untouched:
- `kip966_storage`, `v3_5_storage`: flushed offsets and a flush policy
  (FlushPolicy), the HWM checkpoint, three kinds of stop (ControlledShutdown,
  ProcessCrash, PowerLoss; PowerOutage with CorrelatedPowerLoss) instead of
  the reference's two shutdowns (quirk 1 fixed: only the unflushed suffix is
  lost), fencing of a crashed broker as its own later step (quirk 2 fixed
  for crashes), a controlled shutdown in Kafka's steps (ControlledShutdownSteps:
  the broker asks, the controller moves its leadership, grants the shutdown
  and fences it, the broker stops; false: one step that fences at once), and ghost state
  for the Unclean Exclusion property. kip966_storage adds unclean recovery
  (UncleanRecoveryStrategy: balanced | proactive | manual) with
  GetReplicaLogInfo messages, or last_known_leader (what Kafka 4.x ships);
  both take UncleanLeaderElection (unclean.leader.election.enable), and
  SessionTimeout fences a crashed broker's dead incarnation. The state is KraftStorageState: KraftState's 23
  variables, then 5 more. Quirks 3-18 are kept (5 and 6 unless
  ReferenceQuirks = false).

Dynamic min.insync.replicas (every variant but kraft_cluster's, not of the
reference): MinIsrChanges lists the values an operator sets, in order, each
an AlterMinIsr step (a global action after the reference's) that clears the
ELR and the last-known ELR (KAFKA-16540). The controller's value is
con_partition_metadata.min_isr, a broker's that of the last record of its
metadata log (state.controller_min_isr, state.broker_min_isr); with the
default [] these fields are None, MinISR is read and the state space is the
reference's.

The reference's VIEW (all variables but messages_discard and aux_*) is
offered as the view "reference"; counts under a view depend on exploration
order in TLC, so conformance figures are taken without it.
"""
from __future__ import annotations

from model.base import ModelDef
from model.budget import fault_budget
from model.kraft.config import (
    KIP966_CONSTANTS, KIP966_STORAGE_CONSTANTS, V3_5_CONSTANTS, V3_5_STORAGE_CONSTANTS)


def build(variant: str, constants: dict):
    """ModelDef.build: a KraftModel (StorageModel for the storage variants),
    or ModelConfigError for bad constants."""
    if variant.endswith("_storage"):
        from model.kraft.storage import StorageModel
        return StorageModel(variant, dict(constants))
    from model.kraft.model import KraftModel
    return KraftModel(variant, dict(constants))


MODEL = ModelDef(
    name="kraft",
    doc="KRaft data replication (one partition), after Vanlightly/kafka-tlaplus",
    variants={"kip966": KIP966_CONSTANTS, "v3_5": V3_5_CONSTANTS,
              "kip966_storage": KIP966_STORAGE_CONSTANTS, "v3_5_storage": V3_5_STORAGE_CONSTANTS},
    build=build,
    budget=fault_budget,
    properties="invariants.kraft:kraft_properties",
    temporal="invariants.kraft.liveness:kraft_temporal",
    fairness="invariants.kraft.liveness:reference_fairness",
    view="model.kraft.view:TRACE_VIEW",
    facts="model.kraft.facts:facts",
    mutants="model.kraft.mutants:MUTANTS",
)
