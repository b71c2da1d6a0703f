"""Liveness of the `kraft_quorum` model: the reference's four temporal
properties (kraft/kip_996, kraft_kip_996_properties.tla), same names and
meaning, under its Fairness: weak fairness of every action but the faults,
the client, reconfiguration, connectivity and new servers, per server
(`\\A s \\in AllServers`) or per pair (`\\A s, peer \\in AllServers`).

The reference's own readings are kept: ConfigAllOrNothing looks for the
configuration in the leader's log, not in each member's (a member counts
when the leader has it committed, or is disconnected or dead); the leader
itself always counts (Connected(s, s) is FALSE). Its ids,
1..(MaxAddReconfigs + MaxRemoveReconfigs), start with the initial
configuration's (InitClusterCommand, id 1; each reconfiguration takes the
next id), so the last reconfiguration is never checked, and config_id 1,
at offset 1 of every log, holds whenever a current leader's high watermark
has passed it: with one reconfiguration the property asks for a current
leader again and again.
"""
from __future__ import annotations

from model.kraft_quorum.replication import CONFIG_COMMANDS
from model.kraft_quorum.roles import is_voter, majority
from model.kraft_quorum.state import Role

from invariants.kraft_quorum.safety import is_current_leader
from invariants.kraft_quorum.witnesses import deposed
from invariants.temporal import AlwaysEventually, LeadsTo, TemporalProperty, per, single

# The reference's Fairness, in its order.
REFERENCE_FAIRNESS = (
    "WF:CheckQuorumResign", "WF:VoterFetchTimeout", "WF:VoterElectionTimeout",
    "WF:ResignedElectionTimeout", "WF:ConcludePreVote", "WF:BecomeLeader",
    "WF:HandleVoteRequest", "WF:HandleVoteResponse", "WF:RejectFetchRequest",
    "WF:DivergingFetchRequest", "WF:AcceptFetchRequest", "WF:ResendBeginQuorumEpochRequest",
    "WF:AcceptBeginQuorumRequest", "WF:SendFetchRequest", "WF:HandleFetchResponse",
)
# Beyond the reference: a flush eventually happens (storage.py); a leader's
# check-quorum period eventually ends (CheckQuorum = "fetch", elections.py).
STORAGE_FAIRNESS = ("WF:FlushLog", "WF:CheckQuorumRestart")

REFERENCE_NAMES = ("ValuesEventuallyAcked", "ReconfigurationNotStuck", "EventuallyLeaderElected",
                   "NotStuckInProspective")


def reference_fairness(model) -> list[str]:
    """The reference's Fairness, less the actions the variant does not have."""
    names = set(model.action_names)
    return [f for f in REFERENCE_FAIRNESS + STORAGE_FAIRNESS if f.split(":", 1)[1] in names]


def _linked(st, a: int, b: int) -> bool:
    return a != b and ((a, b) if a < b else (b, a)) in st.net_connectivity


def sent(v):
    def Sent(st) -> bool:
        return v in st.inv_sent
    return Sent


def acked_once(v):
    """Acknowledged one way: positively or negatively, not both."""
    def AckedOnce(st) -> bool:
        return (v in st.inv_pos_acked) != (v in st.inv_neg_acked)
    return AckedOnce


def config_all_or_nothing(config_id: int):
    """ConfigAllOrNothing(config_id): the current leader has the configuration
    committed, or does not have it, as far as its connected live members go."""
    def committed(st, s) -> bool:
        hwm = st.hwm[s - 1]
        return any(e.command in CONFIG_COMMANDS and e.value.id == config_id and o <= hwm
                   for o, e in enumerate(st.log[s - 1], 1))

    def absent(st, s) -> bool:
        return not any(e.command in CONFIG_COMMANDS and e.value.id == config_id
                       for e in st.log[s - 1])

    def ConfigAllOrNothing(st) -> bool:
        for s in range(1, len(st.server_ids) + 1):
            if not is_current_leader(st, s):
                continue
            members = st.config[s - 1].members
            for has in (committed, absent):
                if all(has(st, s) or not _linked(st, s, x) or st.state[x - 1] == Role.DeadNoState
                       for x in members):
                    return True
        return False
    return ConfigAllOrNothing


def functional_leader_exists(st) -> bool:
    """FunctionalLeaderExists: a leader followed by a majority of its configuration."""
    n = len(st.server_ids)
    for s in range(1, n + 1):
        if st.state[s - 1] != Role.Leader:
            continue
        followers = sum(1 for x in range(1, n + 1)
                        if is_voter(st, x) and st.leader[x - 1] == s
                        and s in st.config[x - 1].members)
        if followers >= majority(st.config[s - 1].members):
            return True
    return False


def no_functional_leader(st) -> bool:
    return not functional_leader_exists(st)


def prospective(s: int):
    def IsProspective(st) -> bool:
        return s <= len(st.server_ids) and st.state[s - 1] == Role.Prospective
    return IsProspective


def left_or_cut_off(s: int):
    """~IsProspective(s), or no connected member of its configuration is
    anything but Prospective."""
    def LeftOrCutOff(st) -> bool:
        if not (s <= len(st.server_ids) and st.state[s - 1] == Role.Prospective):
            return True
        return not any(x != s and st.state[x - 1] != Role.Prospective and _linked(st, s, x)
                       for x in st.config[s - 1].members)
    return LeftOrCutOff


def deposed_leader(s: int):
    def Deposed(st) -> bool:
        return s <= len(st.server_ids) and deposed(st, s)
    return Deposed


def not_leading(s: int):
    def NotLeading(st) -> bool:
        return s > len(st.server_ids) or st.state[s - 1] != Role.Leader
    return NotLeading


def quorum_temporal(model) -> list[TemporalProperty]:
    c = model.constants
    servers = range(1, model.max_servers + 1)
    config_ids = range(1, c["MaxAddReconfigs"] + c["MaxRemoveReconfigs"] + 1)
    return [
        TemporalProperty(
            "ValuesEventuallyAcked",
            per(model.values, "ValuesEventuallyAcked", lambda v: LeadsTo(sent(v), acked_once(v)),
                label="v"),
            "every value written to a leader is eventually acknowledged, positively or "
            "negatively (not both)",
            reads=("inv_sent", "inv_pos_acked", "inv_neg_acked"),
            quantifier="\\A v \\in Value",
            never=lambda v, st: f"value {v} is never acknowledged"),
        TemporalProperty(
            "ReconfigurationNotStuck",
            per(config_ids, "ReconfigurationNotStuck",
                lambda i: AlwaysEventually(config_all_or_nothing(i)), label="config_id"),
            "a reconfiguration is, again and again, either committed or gone at the current "
            "leader (as far as its connected live members go)",
            reads=("server_ids", "state", "current_epoch", "config", "log", "hwm",
                   "net_connectivity"),
            quantifier="\\A config_id \\in 1..(MaxAddReconfigs + MaxRemoveReconfigs)",
            # id 1 is the initial configuration: there a failure means no current
            # leader (or one short of offset 1), not a half-done reconfiguration
            never=lambda i, st: f"configuration #{i} is never settled at a current leader "
                                f"(committed, or absent, as far as its connected live members go)"),
        TemporalProperty(
            "EventuallyLeaderElected",
            single(LeadsTo(no_functional_leader, functional_leader_exists)),
            "a cluster without a leader followed by a majority eventually has one again",
            reads=("server_ids", "state", "config", "leader"),
            never=lambda _, st: "no leader followed by a majority is elected again"),
        TemporalProperty(
            "NotStuckInProspective",
            per(servers, "NotStuckInProspective",
                lambda s: LeadsTo(prospective(s), left_or_cut_off(s)), label="s"),
            "a prospective server eventually leaves Prospective, unless it reaches only "
            "prospective servers",
            reads=("server_ids", "state", "config", "net_connectivity"),
            quantifier="\\A s \\in AllServers",
            never=lambda s, st: f"server {s} stays Prospective for ever, though it reaches a member "
                                f"that is not Prospective"),
        # beyond the reference (check-quorum, KAFKA-15489)
        TemporalProperty(
            "DeposedLeaderResigns",
            per(servers, "DeposedLeaderResigns",
                lambda s: LeadsTo(deposed_leader(s), not_leading(s)), label="s"),
            "a leader whose epoch a majority of its configuration has passed eventually stops "
            "leading",
            reads=("server_ids", "state", "current_epoch", "config"),
            quantifier="\\A s \\in AllServers",
            never=lambda s, st: f"server {s} leads for ever an epoch a majority of its "
                                f"configuration has passed"),
    ]
