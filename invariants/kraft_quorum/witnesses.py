"""`sometimes` witnesses of the `kraft_quorum` model (kmc's own): the states
the invariants are about do get reached. Each is reported with the depth
where it was first seen, or as never witnessed."""
from __future__ import annotations

from model.kraft_quorum.state import MsgType, Role

AFTER_PRE_VOTE = (Role.Follower, Role.Unattached)


def leader_in_later_epoch(st) -> bool:
    """LeaderInLaterEpoch: a leader was elected after the initial one (epoch > 1)."""
    return any(state == Role.Leader and epoch > 1
               for state, epoch in zip(st.state, st.current_epoch))


def value_committed(st) -> bool:
    """ValueCommitted: a client value was acknowledged as committed."""
    return bool(st.inv_pos_acked)


def reconfiguration_committed(st) -> bool:
    """ReconfigurationCommitted: a server holds a committed configuration
    newer than the initial one."""
    return any(c.id > 1 and c.committed for c in st.config)


def pre_vote_without_election(st) -> bool:
    """PreVoteWithoutElection: a server asked for pre-votes in its epoch and is
    back to Follower or Unattached in that epoch (no election followed)."""
    t = MsgType.RequestVoteRequest
    for msgs in (st.net_messages_processed, st.net_messages):
        for m in msgs:
            if (m.type == t and m.pre_vote and st.state[m.source - 1] in AFTER_PRE_VOTE
                    and st.current_epoch[m.source - 1] == m.replica_epoch):
                return True
    return False


def server_lost_state(st) -> bool:
    """ServerLostState: a server crashed and lost its disk."""
    return Role.DeadNoState in st.state


def replacement_voter(st) -> bool:
    """ReplacementVoter: a server started on the host of a server that lost its
    disk is a voter of a committed configuration (KIP-853's disk replacement)."""
    dead_hosts = {st.server_ids[d].host for d in range(len(st.state))
                  if st.state[d] == Role.DeadNoState}
    if not dead_hosts:
        return False
    replacements = {s + 1 for s in range(len(st.state))
                    if st.state[s] != Role.DeadNoState and st.server_ids[s].host in dead_hosts}
    return any(c.committed and c.members & replacements for c in st.config)


def majority_lost_power(model):
    """MajorityLostPowerAfterAck: a majority of the initial voters lost power
    while a value was acknowledged."""
    n = model.init_size

    def MajorityLostPowerAfterAck(st) -> bool:
        return 2 * sum(1 for s in st.lost_power_acked if s <= n) > n

    return MajorityLostPowerAfterAck


def unflushed_entries_lost(st) -> bool:
    """UnflushedEntriesLost: a power loss dropped entries a server had appended."""
    return st.lost_unflushed
