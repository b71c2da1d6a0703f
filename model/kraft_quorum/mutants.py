"""Seeded protocol bugs ("mutants") of the `kraft_quorum` model: small
deviations a reviewer of a KRaft change could plausibly write, each of a
rule KIP-595 / KIP-853 / KIP-996 relies on. specs/mutants/quorum-*.toml holds,
for each, the property it breaks and the shortest depth (its [expect]). A
spec selects mutants with the constant `Mutants` (a list of names, default
[]: the reference protocol, every conformance count unchanged).
"""
from __future__ import annotations

from typing import NamedTuple

from model.base import ModelConfigError

# name -> (site, what the mutant does)
MUTANTS: dict[str, tuple[str, str]] = {
    "vote_without_log_check": (
        "HandleVoteRequest: log_ok (CompareEntries of the last entries)",
        "a voter grants its (pre-)vote without comparing the candidate's log with its own"),
    "pre_vote_bumps_epoch": (
        "VoterFetchTimeout / VoterElectionTimeout: TransitionToProspective(s, current_epoch[s])",
        "a voter starting a pre-vote moves to the next epoch and asks in it, as a candidate would"),
    "fetch_from_stale_epoch": (
        "AcceptFetchRequest: ReceivableMessage(m, FetchRequest, EqualEpoch)",
        "the leader accepts a fetch whatever epoch the fetcher is in (it only checks the position)"),
    "hwm_without_majority": (
        "NewHighwaterMark: Agree(offset, members) \\in Quorum(members)",
        "the leader advances the high watermark once half of the voters hold an entry, not a "
        "majority (>= instead of >)"),
    "second_reconfig": (
        "AddVoterCheck / RemoveVoterCheck: HasPendingConfigCommand(s) -> ReconfigInProgress",
        "the leader accepts a second reconfiguration before the first is committed"),
    "removed_voter_counted": (
        "ConcludePreVote / BecomeLeader: votes_recv[s] \\in Quorum(config[s].members)",
        "a (pre-)vote from a server no longer in the configuration still counts toward the "
        "majority (the count is compared with the majority size, the voter set is not checked)"),
    "restart_forgets_vote": (
        "RestartWithState: voted_for is kept (KRaft's quorum-state file is fsynced before a vote)",
        "a voter that restarts has forgotten whom it voted for in its epoch"),
}


class MutantFlags(NamedTuple):
    vote_without_log_check: bool = False
    pre_vote_bumps_epoch: bool = False
    fetch_from_stale_epoch: bool = False
    hwm_without_majority: bool = False
    second_reconfig: bool = False
    removed_voter_counted: bool = False
    restart_forgets_vote: bool = False


NO_MUTANTS = MutantFlags()
assert tuple(MUTANTS) == MutantFlags._fields


def mutant_flags(names) -> MutantFlags:
    """The flags for a list of mutant names; unknown names are bad input."""
    unknown = [n for n in names if n not in MUTANTS]
    if unknown:
        raise ModelConfigError(
            f"kraft_quorum: unknown mutant(s) {', '.join(map(repr, unknown))} "
            f"(known: {', '.join(MUTANTS)})")
    return MutantFlags(**{n: True for n in names})
