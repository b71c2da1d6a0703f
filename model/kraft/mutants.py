"""Seeded protocol bugs ("mutants") of the `kraft` model, for tests that say
"kmc finds this known bug" (tests/quality) and specs/mutants/*.toml.

The reference marks its safety-critical guards with a `\\* CHECK` comment (ten
places, the same in kip-966 and v3.5). Each mutant below switches off one of
them. More are small deviations beyond the CHECKs, the kind a developer
could introduce: keep_unclean_broker_in_elr (the storage variants'
UncleanExclusion), one for each invariant no CHECK breaks
(LogMatchingProperty, MetadataLogMatchingProperty, MinIsrRecoveryQuorum:
tests/quality/test_mutants.py checks every protocol invariant catches some
mutant), and keep_elr_on_min_isr_change (MinIsrChanges: KAFKA-16540 undone). A spec selects mutants with the constant `Mutants` (a list of names,
default []: the reference protocol, every conformance count unchanged).

A guard site reads its flag only where the guard would have decided
(`... and not k.mutant.<name>`), so the default model pays nothing on its
common path.
"""
from __future__ import annotations

from typing import NamedTuple

from model.base import Mutant
from model.constants import mutant_flags as flags_for

# the variants with an ELR (KIP-966): the code of the ELR mutants' guards
_ELR = ("kip966", "kip966_storage")

# name -> (reference site, what the mutant does), or a Mutant naming the
# variants whose code has its guard
MUTANTS: dict[str, tuple[str, str] | Mutant] = {
    "skip_reg_response_incarnation_check": (
        "ReceiveBrokerRegResponse: broker_state[b].incarnation_id = m.incarnation_id",
        "a starting broker accepts a registration response meant for another incarnation"),
    "skip_add_fetcher_epoch_check": (
        "AddPartitionToFetcher: leader_epoch > partition_metadata[b].leader_epoch",
        "a follower keeps its fetch state across a leader-epoch bump of the same leader"),
    "skip_reset_out_of_sync_followers": (
        "BecomeLeaderInNewEpoch: ResetFollowerStateOfAllButISR",
        "a leader re-elected in a new epoch keeps what it knew of out-of-sync followers"),
    "skip_follower_leo_nil_check": (
        "FollowerIsCaughtUp: follower_leo # Nil",
        "a follower the leader never heard from counts as caught up"),
    "skip_follower_hwm_check": (
        "FollowerIsCaughtUp: follower_leo >= HwmOf(b)",
        "a follower below the leader's HWM may join the ISR"),
    "skip_follower_leso_check": (
        "FollowerIsCaughtUp: follower_leo >= partition_leso[b]",
        "a follower below the leader epoch start offset may join the ISR"),
    "skip_fetch_offset_check": (
        "ReceiveFetchResponse: fetch_offset # m.partition.fetch_offset -> no-op",
        "a fetch response for another fetch offset is applied"),
    "skip_fetch_leader_epoch_check": (
        "ReceiveFetchResponse: leader_epoch # m.partition.leader_epoch -> no-op",
        "a fetch response from another leader epoch is applied"),
    "accept_any_broker_epoch": (
        "IsEligibleBroker: broker_epoch = 0 \\/ con_broker_reg[b].broker_epoch = broker_epoch",
        "the controller accepts an ISR member whatever broker epoch the request carries"),
    "skip_partition_epoch_check": (
        "ValidateAlterPartitionRequest: m.partition_epoch = con_partition_metadata.partition_epoch",
        "the controller accepts an AlterPartition request built on a stale partition epoch"),
    # not a CHECK of the reference: the registration step of KIP-966 description 5.2
    # (the Unclean Exclusion property; specs/mutants/keep_unclean_broker_in_elr.toml)
    "keep_unclean_broker_in_elr": Mutant(
        "ProcessUncleanBroker: con_partition_metadata.elr \\ {b}",
        "a broker registering without a broker epoch (an unclean restart) stays in the ELR",
        _ELR),
    # not CHECKs of the reference either: small deviations a developer could
    # introduce, one for each invariant no CHECK above breaks
    "skip_diverging_end_offset_check": (
        "ReceiveFetchRequest: ... \\/ last_epoch.offset < m.partition.fetch_offset -> diverging",
        "the leader validates a fetch by its last fetched epoch only, not by that epoch's end "
        "offset (Kafka's Partition.fetchRecords losing its `endOffset < fetchOffset` clause): "
        "a follower with a divergent suffix in an epoch the leader has is never told to truncate"),
    "skip_noop_metadata_records": (
        "ReceiveMetadataUpdate: bml \\o SubSeq(con_metadata_log, Len(bml) + 1, md_offset)",
        "a broker catching up with the metadata log keeps only the record it acts on, dropping "
        "the no-op records before it (a metadata loader that filters records by relevance "
        "before it persists them: its metadata offset no longer matches the controller's)"),
    "skip_elr_for_fenced_replica": Mutant(
        "HandleBrokerFenced (kip966): UpdateElr adds the fenced ISR member to the ELR",
        "a fenced ISR member is dropped instead of moved to the ELR when the ISR falls below "
        "MinISR (a fenced broker taken for an unclean one): the ELR and the last-known ELR "
        "lose a replica that holds every committed record",
        _ELR),
    "skip_last_known_elr_update": Mutant(
        "ApplyPartitionChange (kip966): last_known_elr \\union (replicas \\cap (elr \\ elr'))",
        "the controller removes a replica from the ELR without recording it in the "
        "last-known ELR (PartitionChangeBuilder forgetting lastKnownElr): an unclean "
        "recovery then has no quorum to choose from",
        _ELR),
    # not of the reference either: KAFKA-16540's fix undone (AlterMinIsr; MinIsrChanges)
    "keep_elr_on_min_isr_change": Mutant(
        "AlterMinIsr: the ELR and the last-known ELR are cleared when min.insync.replicas changes",
        "the controller keeps the ELR across a min.insync.replicas change (Kafka before "
        "KAFKA-16540): a replica that joined the ELR under the old value stays electable "
        "though, under a lower one, the HWM advances without it",
        _ELR),
    # a liveness bug (no invariant breaks): found by the temporal properties
    "never_unfence": (
        "UnfenceBroker: con_broker_reg[b].status = FENCED /\\ broker_state[b].status = RUNNING",
        "the controller never unfences a fenced broker (its heartbeat handler never finds the "
        "broker caught up): a fenced broker stays out of leadership and the ISR for ever"),
}


class MutantFlags(NamedTuple):
    """One flag per mutant (read at the guard sites as k.mutant.<name>)."""

    skip_reg_response_incarnation_check: bool = False
    skip_add_fetcher_epoch_check: bool = False
    skip_reset_out_of_sync_followers: bool = False
    skip_follower_leo_nil_check: bool = False
    skip_follower_hwm_check: bool = False
    skip_follower_leso_check: bool = False
    skip_fetch_offset_check: bool = False
    skip_fetch_leader_epoch_check: bool = False
    accept_any_broker_epoch: bool = False
    skip_partition_epoch_check: bool = False
    keep_unclean_broker_in_elr: bool = False
    skip_diverging_end_offset_check: bool = False
    skip_noop_metadata_records: bool = False
    skip_elr_for_fenced_replica: bool = False
    skip_last_known_elr_update: bool = False
    keep_elr_on_min_isr_change: bool = False
    never_unfence: bool = False


NO_MUTANTS = MutantFlags()
assert tuple(MUTANTS) == MutantFlags._fields


def mutant_flags(names) -> MutantFlags:
    """The flags for a list of mutant names; unknown names are bad input."""
    return flags_for("kraft", MUTANTS, MutantFlags, names)
