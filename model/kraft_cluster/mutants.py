"""Seeded bugs of the `kraft_cluster` model: what goes wrong when the
controller is a replicated state machine and one of its rules is broken.
A spec selects them with `Mutants` (with kraft's own, model/kraft/mutants.py,
which the partition data plane reads). Each has a spec in specs/mutants/
named after it."""
from __future__ import annotations

from typing import NamedTuple

from model.constants import mutant_flags as flags_for

# name -> (the rule it breaks, what the mutant does)
MUTANTS: dict[str, tuple[str, str]] = {
    "answer_before_commit": (
        "QuorumController: a write's response waits for its records to commit",
        "the controller answers an AlterPartition as soon as it appends the partition change, "
        "before the record commits: a failover then loses an ISR the leader already acts on"),
    "keep_uncommitted_state": (
        "QuorumController.renounce / claim: a new active controller starts from its log",
        "a new active controller keeps the in-memory metadata it found (the deposed "
        "controller's decisions, uncommitted ones included) instead of replaying its log"),
    "broker_epoch_from_memory": (
        "ClusterControlManager: a broker epoch is the offset of its registration record",
        "a new active controller counts broker epochs from its start-up value in memory, not "
        "from the registrations in its log: it hands out an epoch an earlier incarnation holds "
        "(the ABA problem)"),
    "broker_reads_uncommitted_metadata": (
        "brokers replay the metadata log up to the high watermark (MetadataLoader)",
        "a broker takes partition state from the active controller's log before it commits "
        "(a record a failover may lose)"),
    "elr_from_deposed_controller": (
        "QuorumController.renounce: a deposed controller's uncommitted decisions are dropped",
        "a new active controller takes the ELR and LastKnownELR from the deposed controller's "
        "in-memory state, not from its log"),
}


class MutantFlags(NamedTuple):
    answer_before_commit: bool = False
    keep_uncommitted_state: bool = False
    broker_epoch_from_memory: bool = False
    broker_reads_uncommitted_metadata: bool = False
    elr_from_deposed_controller: bool = False


NO_MUTANTS = MutantFlags()
assert tuple(MUTANTS) == MutantFlags._fields


def mutant_flags(names) -> MutantFlags:
    return flags_for("kraft_cluster", MUTANTS, MutantFlags, names)
