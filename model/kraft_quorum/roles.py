"""A server's local state: roles, the state transitions (the transition
helpers of kraft_kip_996_functions.tla) and the resets that go with them.

A transition is a `Tr` record (state, epoch, leader, votes_recv, voted_for)
that `apply_state` writes to the server; a transition the protocol forbids
gives ILLEGAL (the reference's SetIllegalState), which the NoIllegalState
invariant reports. A server is a voter when its own configuration names it,
an observer otherwise.
"""
from __future__ import annotations

from typing import NamedTuple

from model.kraft_quorum.network import fetch_request_or_res_lost
from model.kraft_quorum.state import BLANK_FETCH_STATE, Error, Role, at, fmap, fmap_get, put

EMPTY = frozenset()


class Tr(NamedTuple):
    state: Role
    epoch: int
    leader: int | None
    votes_recv: frozenset
    voted_for: int | None


ILLEGAL = Tr(Role.IllegalState, 0, None, EMPTY, None)


def is_voter(st, s: int) -> bool:
    """IsVoter(s)."""
    return at(st.state, s) != Role.DeadNoState and s in at(st.config, s).members


def is_observer(st, s: int) -> bool:
    """IsObserver(s)."""
    return at(st.state, s) != Role.DeadNoState and s not in at(st.config, s).members


def majority(members: frozenset) -> int:
    """MajorityCount."""
    return len(members) // 2 + 1


def is_quorum(votes: frozenset, members: frozenset) -> bool:
    """votes \\in Quorum(members): a subset of the members, more than half of them."""
    return 2 * len(votes) > len(members) and votes <= members


def no_transition(st, s: int) -> Tr:
    return Tr(at(st.state, s), at(st.current_epoch, s), at(st.leader, s), at(st.votes_recv, s),
              at(st.voted_for, s))


def boot_time_unattached(st, s: int) -> Tr:
    """Unattached after a restart, remembering any vote."""
    return Tr(Role.Unattached, at(st.current_epoch, s), None, EMPTY, at(st.voted_for, s))


def to_unattached(st, s: int, epoch: int, leader_id) -> Tr:
    """TransitionToUnattached: a higher epoch without a known leader, a
    resigned leader's election timeout, a pre-vote that failed."""
    cur = at(st.current_epoch, s)
    if epoch < cur or (epoch == cur and at(st.state, s) != Role.Prospective):
        return ILLEGAL
    return Tr(Role.Unattached, epoch, leader_id, EMPTY,
              None if epoch > cur else at(st.voted_for, s))


def to_unattached_add_vote(epoch: int, t0: Tr, recipient: int) -> Tr:
    """TransitionToUnattachedAddVote: an unattached voter grants its vote."""
    if t0.epoch != epoch or t0.state != Role.Unattached or t0.voted_for is not None:
        return ILLEGAL
    return Tr(Role.Unattached, epoch, t0.leader, EMPTY, recipient)


def to_follower(st, s: int, leader_id, epoch: int) -> Tr:
    """TransitionToFollower: the leader of `epoch` is known."""
    cur = at(st.current_epoch, s)
    if (leader_id == s or epoch < cur
            or (epoch == cur and at(st.state, s) in (Role.Leader, Role.Follower))):
        return ILLEGAL
    return Tr(Role.Follower, epoch, leader_id, EMPTY,
              None if epoch > cur else at(st.voted_for, s))


def to_leader(st, s: int) -> Tr:
    if at(st.state, s) != Role.Candidate:
        return ILLEGAL
    return Tr(Role.Leader, at(st.current_epoch, s), s, EMPTY, None)


def to_resigned(st, s: int) -> Tr:
    if at(st.state, s) != Role.Leader:
        return ILLEGAL
    return Tr(Role.Resigned, at(st.current_epoch, s), s, EMPTY, None)


def to_prospective(st, s: int, epoch: int) -> Tr:
    """TransitionToProspective: the server asks for pre-votes (its own counted)."""
    if at(st.state, s) in (Role.Leader, Role.Prospective):
        return ILLEGAL
    return Tr(Role.Prospective, epoch, at(st.leader, s), frozenset((s,)), at(st.voted_for, s))


def to_prospective_add_vote(epoch: int, t0: Tr, recipient: int) -> Tr:
    """TransitionToProspectiveAddVote: a prospective voter grants a vote."""
    if t0.epoch != epoch or t0.state != Role.Prospective or t0.voted_for is not None:
        return ILLEGAL
    return Tr(Role.Prospective, epoch, t0.leader, t0.votes_recv, recipient)


def to_candidate(st, s: int, pre_vote: bool) -> Tr:
    """TransitionToCandidate: a new epoch, voting for itself. With pre-vote
    only a Prospective server gets here; without it (Kafka 3.9) any server
    that is not leading."""
    state = at(st.state, s)
    if (state != Role.Prospective) if pre_vote else (state == Role.Leader):
        return ILLEGAL
    return Tr(Role.Candidate, at(st.current_epoch, s) + 1, None, frozenset((s,)), s)


def has_consistent_leader(st, s: int, leader_id, epoch: int) -> bool:
    """HasConsistentLeader(s, leader_id, epoch): s and the peer do not
    disagree about who leads `epoch`."""
    if leader_id == s:
        if (at(st.current_epoch, s) == epoch
                and (not is_voter(st, s)
                     or at(st.state, s) in (Role.Resigned, Role.Prospective, Role.Unattached))):
            return True
        return at(st.state, s) == Role.Leader
    mine = at(st.leader, s)
    return (epoch != at(st.current_epoch, s) or leader_id is None or mine is None
            or mine == leader_id)


def maybe_transition(st, s: int, leader_id, epoch: int) -> Tr:
    """MaybeTransition: what a message's epoch and leader id make of s."""
    if not has_consistent_leader(st, s, leader_id, epoch):
        return ILLEGAL
    if epoch > at(st.current_epoch, s):
        if leader_id is None:
            return to_unattached(st, s, epoch, None)
        return to_follower(st, s, leader_id, epoch)
    if leader_id is not None and at(st.leader, s) is None:
        return to_follower(st, s, leader_id, epoch)
    return no_transition(st, s)


def maybe_handle_common_response(st, s: int, leader_id, epoch: int, error) -> tuple[Tr, bool]:
    """MaybeHandleCommonResponse: the transition and whether the response is
    handled by it (the caller then does nothing more with it)."""
    cur = at(st.current_epoch, s)
    if epoch < cur:
        return no_transition(st, s), True
    if epoch > cur or error in (Error.FencedLeaderEpoch, Error.NotLeader):
        return maybe_transition(st, s, leader_id, epoch), True
    if leader_id is not None and at(st.leader, s) is None:
        return to_follower(st, s, leader_id, epoch), error is not None
    return no_transition(st, s), False


def apply_state(st, s: int, t: Tr, ch: dict) -> None:
    """ApplyState(s, t), into the changes `ch`."""
    ch["state"] = put(ch.get("state", st.state), s, t.state)
    ch["leader"] = put(ch.get("leader", st.leader), s, t.leader)
    ch["current_epoch"] = put(ch.get("current_epoch", st.current_epoch), s, t.epoch)
    ch["votes_recv"] = put(ch.get("votes_recv", st.votes_recv), s, t.votes_recv)
    ch["voted_for"] = put(ch.get("voted_for", st.voted_for), s, t.voted_for)
    if t.state != Role.Leader and hasattr(st, "fetched_voters"):
        # CheckQuorum = "fetch": the check-quorum period ends with the leadership
        ch["fetched_voters"] = put(ch.get("fetched_voters", st.fetched_voters), s, EMPTY)


# ---- the resets that go with a change of role ----------------------------------

def reset_fetch_state(st, s: int, ch: dict) -> None:
    """ResetFetchStateIfFollower(s)."""
    ch["fetch_state"] = put(ch.get("fetch_state", st.fetch_state), s, BLANK_FETCH_STATE)


def fail_pending_writes(st, s: int, ch: dict) -> None:
    """FailAnyPendingWritesIfLeader(s): values awaiting their ack fail."""
    pending = at(st.pending_ack, s)
    ch["pending_ack"] = put(ch.get("pending_ack", st.pending_ack), s, EMPTY)
    neg = ch.get("inv_neg_acked", st.inv_neg_acked)
    ch["inv_neg_acked"] = neg | pending if pending else neg


def reset_follower_offsets(st, s: int, members, ch: dict) -> None:
    """ResetFollowerFetchStateIfLeader(s, members): every end offset 0."""
    ch["flwr_end_offset"] = put(ch.get("flwr_end_offset", st.flwr_end_offset), s,
                                fmap(members, lambda _: 0))


def update_follower_offsets(st, s: int, members, ch: dict) -> None:
    """UpdateFollowerEndOffsetMap(s, members): known members keep their end
    offset, new ones start at 0."""
    old = at(st.flwr_end_offset, s)
    ch["flwr_end_offset"] = put(ch.get("flwr_end_offset", st.flwr_end_offset), s,
                                fmap(members, lambda k: fmap_get(old, k, 0)))


def fetch_can_timeout(st, s: int) -> int:
    """FetchCanTimeout(s): how many of its two reasons hold - the last fetch
    response from the leader was an error, or the pending fetch or its
    response was lost (TLC makes a successor for each)."""
    fs = at(st.fetch_state, s)
    n = 0
    last = fs.last_fetch_res
    if last is not None and last.error is not None and last.peer == at(st.leader, s):
        n += 1
    if fs.pending_fetch is not None and fetch_request_or_res_lost(st, fs.pending_fetch):
        n += 1
    return n
