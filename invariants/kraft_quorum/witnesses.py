"""`sometimes` witnesses of the `kraft_quorum` model (kmc's own): the states
the invariants are about do get reached. Each is reported with the depth
where it was first seen, or as never witnessed."""
from __future__ import annotations

from model.kraft_quorum.state import Error, FetchResult, MsgType, Role

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


def leader_after_majority_power_loss(st) -> bool:
    """LeaderAfterMajorityPowerLoss: a leader was elected after a majority of the
    initial voters lost power while a value was acknowledged."""
    return st.elected_after_power_loss


def fetched_unflushed(st) -> bool:
    """FetchedUnflushed (VoterFlush = "end_offset_first"): a server holds an
    entry of its leader's log that the leader has not flushed (a fetch that
    waited at the leader's end was answered before the flush)."""
    n = len(st.server_ids)
    for ldr in range(n):
        if st.state[ldr] != Role.Leader:
            continue
        log, flushed = st.log[ldr], st.flushed[ldr]
        if flushed >= len(log):
            continue
        for f in range(n):
            if f != ldr and len(st.log[f]) > flushed and st.log[f][flushed] == log[flushed]:
                return True
    return False


def single_voter_committed(st) -> bool:
    """SingleVoterCommitted (SingleVoterLeads): a leader alone in its
    configuration has its high watermark past the initial configuration, at
    an entry of its epoch."""
    for s in range(len(st.server_ids)):
        if (st.state[s] == Role.Leader and st.config[s].members == {s + 1} and st.hwm[s] > 1
                and st.log[s][st.hwm[s] - 1].epoch == st.current_epoch[s]):
            return True
    return False


def new_follower_state(st) -> bool:
    """NewFollowerState (FollowerState = "new"): a follower that a fenced fetch
    moved to its leader's later epoch has not fetched from it yet (a new
    FollowerState; the reference keeps has_fetch_success across the move)."""
    for s in range(len(st.server_ids)):
        fs = st.fetch_state[s]
        last = fs.last_fetch_res
        if (st.state[s] == Role.Follower and not fs.has_fetch_success and last is not None
                and last.error == Error.FencedLeaderEpoch and last.peer == st.leader[s]):
            return True
    return False


def leader_deposed(st) -> bool:
    """LeaderDeposed: a leader whose epoch a majority of its configuration
    has passed (what DeposedLeaderResigns is about)."""
    return any(deposed(st, s) for s in range(1, len(st.server_ids) + 1))


def deposed(st, s: int) -> bool:
    """s leads an epoch that a majority of its configuration's live voters have passed."""
    if st.state[s - 1] != Role.Leader:
        return False
    epoch, members = st.current_epoch[s - 1], st.config[s - 1].members
    n = len(st.server_ids)
    passed = sum(1 for x in members if x <= n and st.current_epoch[x - 1] > epoch)
    return 2 * passed > len(members)


def lower_hwm_answered(st) -> bool:
    """LowerHwmAnswered: a fetch response its follower awaits carries a high
    watermark below the follower's (the reference's follower takes it)."""
    t = MsgType.FetchResponse
    epochs, hwms, fetches = st.current_epoch, st.hwm, st.fetch_state   # (each read once, on every state)
    for m in st.net_messages:
        if (m.type == t and m.result == FetchResult.Ok and m.error is None
                and fetches[m.dest - 1].pending_fetch == m.correlation
                and m.hwm < hwms[m.dest - 1]
                and m.replica_epoch == epochs[m.dest - 1]):
            return True
    return False
