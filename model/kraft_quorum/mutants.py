"""Seeded protocol bugs ("mutants") of the `kraft_quorum` model: small
deviations a reviewer of a KRaft change could plausibly write, each of a
rule KIP-595 / KIP-853 / KIP-996 relies on. specs/mutants/quorum-*.toml holds,
for each, the property it breaks and the shortest depth (its [expect]). A
spec selects mutants with the constant `Mutants` (a list of names, default
[]: the reference protocol, every conformance count unchanged).
"""
from __future__ import annotations

from typing import NamedTuple

from model.base import Mutant
from model.constants import mutant_flags as flags_for

# name -> (site, what the mutant does), or a Mutant naming the variants whose
# code has its guard
MUTANTS: dict[str, tuple[str, str] | Mutant] = {
    "vote_without_log_check": (
        "HandleVoteRequest: log_ok (CompareEntries of the last entries)",
        "a voter grants its (pre-)vote without comparing the candidate's log with its own"),
    "pre_vote_bumps_epoch": Mutant(
        "VoterFetchTimeout / VoterElectionTimeout: TransitionToProspective(s, current_epoch[s])",
        "a voter starting a pre-vote moves to the next epoch and asks in it, as a candidate would",
        ("kip996",)),   # pre-vote is KIP-996's
    "fetch_from_stale_epoch": (
        "AcceptFetchRequest: ReceivableMessage(m, FetchRequest, EqualEpoch)",
        "the leader accepts a fetch whatever epoch the fetcher is in (it only checks the position; "
        "Diverging answers any epoch too, and no fetch is rejected for its epoch)"),
    "hwm_without_majority": (
        "HandleVoterFetch: new_end_offset[peer] = m.fetch_offset - 1",
        "the leader takes a voter's fetch offset for its end offset (off by one: the fetch asks "
        "for the entry the voter does not hold yet), so the high watermark can advance before a "
        "majority of the voters hold the entry"),
    "second_reconfig": (
        "AddVoterCheck / RemoveVoterCheck: HasPendingConfigCommand(s) -> ReconfigInProgress",
        "the leader accepts a second reconfiguration before the first is committed"),
    "removed_voter_counted": (
        "NewHighwaterMark: Agree(offset, members) includes s only IF s \\in members",
        "a leader that removed itself (it leads on as an observer until the RemoveVoter commits) "
        "still counts its own log toward the majority of the new configuration"),
    "restart_forgets_vote": (
        "RestartWithState: voted_for is kept (KRaft's quorum-state file is fsynced before a vote)",
        "a voter that restarts has forgotten whom it voted for in its epoch"),
    "restart_as_leader": (
        "QuorumState.initialize: a leader restarts Resigned in its epoch",
        "a leader that restarts (or loses power) leads its epoch again: after a power loss it "
        "may append a different entry at an offset and epoch a follower already holds"),
    "reconfig_before_epoch_commit": (
        "AddVoterCheck / RemoveVoterCheck: LeaderHasCommittedOffsetsInCurrentEpoch -> "
        "LeaderNotReady",
        "a new leader accepts a reconfiguration before it has committed an entry of its epoch "
        "(the single-server-change bug Ongaro described on raft-dev, 2015): its change and an "
        "uncommitted one of an earlier leader have majorities that need not overlap"),
    # a liveness bug: no invariant breaks (specs/mutants/hwm_needs_all_voters.toml)
    "hwm_needs_all_voters": (
        "NewHighwaterMark: Agree(offset, members) \\in Quorum(members)",
        "the leader advances the high watermark only to an offset every voter holds (Kafka's "
        "LeaderState takes the end offset at index size / 2 of the voters sorted by end offset, "
        "highest first; the mutant takes the last, the lowest): one voter crashed or cut off "
        "for ever and no value is acknowledged again"),
}


class MutantFlags(NamedTuple):
    vote_without_log_check: bool = False
    pre_vote_bumps_epoch: bool = False
    fetch_from_stale_epoch: bool = False
    hwm_without_majority: bool = False
    second_reconfig: bool = False
    removed_voter_counted: bool = False
    restart_forgets_vote: bool = False
    restart_as_leader: bool = False
    reconfig_before_epoch_commit: bool = False
    hwm_needs_all_voters: bool = False


NO_MUTANTS = MutantFlags()
assert tuple(MUTANTS) == MutantFlags._fields


def mutant_flags(names) -> MutantFlags:
    """The flags for a list of mutant names; unknown names are bad input."""
    return flags_for("kraft_quorum", MUTANTS, MutantFlags, names)
