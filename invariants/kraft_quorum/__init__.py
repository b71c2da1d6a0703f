"""Properties of the `kraft_quorum` model: the reference's invariants
(safety.py, as kraft/kip_996's properties module states them), then
`sometimes` witnesses (witnesses.py); temporal properties in liveness.py."""
from __future__ import annotations

from model.base import ALWAYS, SOMETIMES, Property

from invariants.kraft_quorum import safety, witnesses

# name -> (predicate, reads, doc)
_ALWAYS = (
    ("LogMatching", safety.log_matching, ("server_ids", "hwm", "log"),
     "two servers' logs are the same up to the lower of their high watermarks"),
    ("LeaderCompleteness", safety.leader_completeness,
     ("server_ids", "state", "current_epoch", "log", "inv_pos_acked"),
     "the current leader (no server in a higher epoch) holds every acknowledged value"),
    ("ElectionSafety", safety.election_safety, ("leader", "current_epoch"),
     "no two servers know different leaders in the same epoch"),
    ("Durability", safety.durability, ("server_ids", "state", "config", "log", "inv_pos_acked"),
     "every acknowledged value is in the log of some voter"),
    ("NoIllegalState", safety.no_illegal_state, ("state",),
     "no server took a state transition the protocol forbids"),
    ("ValidRolesAndStates", safety.valid_roles_and_states,
     ("server_ids", "state", "config", "leader", "pending_ack", "votes_recv"),
     "observers are never in an election, an unattached server knows no leader, only a leader "
     "has writes pending, only a server in an election holds votes"),
)

# beyond the reference: name -> (predicate, reads, doc, when(model))
_ALWAYS_BEYOND = (
    ("AckedOnMajorityDisk", safety.acked_on_majority_disk,
     ("server_ids", "state", "config", "log", "flushed", "inv_pos_acked"),
     "every acknowledged value is in the flushed log of a majority of each voter's configuration",
     lambda m: m.storage),
)

# name -> (factory(model) -> predicate, reads, doc, when(model))
_SOMETIMES = (
    ("LeaderInLaterEpoch", lambda m: witnesses.leader_in_later_epoch,
     ("state", "current_epoch"), "a leader is elected after the initial one (epoch > 1)", None),
    ("ValueCommitted", lambda m: witnesses.value_committed, ("inv_pos_acked",),
     "a client value is acknowledged as committed", lambda m: bool(m.values)),
    ("ReconfigurationCommitted", lambda m: witnesses.reconfiguration_committed, ("config",),
     "a server holds a committed configuration newer than the initial one",
     lambda m: m.constants["MaxAddReconfigs"] + m.constants["MaxRemoveReconfigs"] > 0),
    ("PreVoteWithoutElection", lambda m: witnesses.pre_vote_without_election,
     ("net_messages", "net_messages_processed", "state", "current_epoch"),
     "a server asked for pre-votes and is back to Follower or Unattached in its epoch",
     lambda m: m.variant_flags.pre_vote),
    ("ServerLostState", lambda m: witnesses.server_lost_state, ("state",),
     "a server crashed and lost its disk", lambda m: m.constants["MaxPermCrashes"] > 0),
    ("ReplacementVoter", lambda m: witnesses.replacement_voter, ("server_ids", "state", "config"),
     "a server started on the host of a server that lost its disk is a voter of a committed "
     "configuration",
     lambda m: m.constants["MaxPermCrashes"] > 0 and m.constants["MaxAddReconfigs"] > 0
     and m.max_servers > m.init_size),
    ("MajorityLostPowerAfterAck", witnesses.majority_lost_power, ("lost_power_acked",),
     "a majority of the initial voters lost power while a value was acknowledged",
     lambda m: m.storage and 2 * m.constants["MaxPowerLosses"] > m.init_size),
    ("UnflushedEntriesLost", lambda m: witnesses.unflushed_entries_lost, ("lost_unflushed",),
     "a power loss dropped entries a server had appended but not flushed", lambda m: m.storage),
    ("LeaderAfterMajorityPowerLoss", lambda m: witnesses.leader_after_majority_power_loss,
     ("elected_after_power_loss",),
     "a leader is elected after a majority of the initial voters lost power while a value was "
     "acknowledged",
     lambda m: m.storage and 2 * m.constants["MaxPowerLosses"] > m.init_size),
    ("FetchedUnflushed", lambda m: witnesses.fetched_unflushed,
     ("server_ids", "state", "log", "flushed"),
     "a server holds an entry its leader has not flushed (VoterFlush = end_offset_first)",
     lambda m: m.storage and m.end_offset_first),
    ("SingleVoterCommitted", lambda m: witnesses.single_voter_committed,
     ("server_ids", "state", "config", "current_epoch", "log", "hwm"),
     "a leader alone in its configuration commits an entry of its epoch (SingleVoterLeads)",
     lambda m: m.single_voter_leads and m.constants["MinClusterSize"] <= 1),
    ("NewFollowerState", lambda m: witnesses.new_follower_state,
     ("server_ids", "state", "fetch_state"),
     "a follower that a fenced fetch moved to its leader's later epoch has not fetched from it "
     "yet (FollowerState = new)", lambda m: m.new_follower_state and m.variant_flags.pre_vote),
    ("LeaderDeposed", lambda m: witnesses.leader_deposed,
     ("server_ids", "state", "current_epoch", "config"),
     "a leader leads an epoch a majority of its configuration has passed",
     lambda m: m.fetch_check_quorum),
    ("LowerHwmAnswered", lambda m: witnesses.lower_hwm_answered,
     ("net_messages", "fetch_state", "hwm", "current_epoch"),
     "a fetch response its follower awaits carries a high watermark below the follower's",
     lambda m: m.monotonic_follower_hwm),
)

INVARIANT_NAMES = tuple(name for name, *_ in _ALWAYS + _ALWAYS_BEYOND)
WITNESS_NAMES = tuple(name for name, *_ in _SOMETIMES)


def quorum_properties(model) -> list[Property]:
    props = [Property(name, ALWAYS, pred, doc, reads=reads) for name, pred, reads, doc in _ALWAYS]
    props += [Property(name, ALWAYS, pred, doc, reads=reads)
              for name, pred, reads, doc, when in _ALWAYS_BEYOND if when(model)]
    props += [Property(name, SOMETIMES, factory(model), doc, reads=reads)
              for name, factory, reads, doc, when in _SOMETIMES if when is None or when(model)]
    return props
