"""Elections: timeouts, pre-votes (KIP-996), votes, becoming leader and
resigning (the reference's VoterFetchTimeout, VoterElectionTimeout,
ResignedElectionTimeout, HandleVoteRequest, HandleVoteResponse,
ConcludePreVote, BecomeLeader, CheckQuorumResign).

Variant kip996 (the reference): a fetch or election timeout makes a voter
Prospective in its epoch, asking for pre-votes; only a pre-vote majority
makes it a Candidate in a new epoch; a resigned leader's election timeout
makes it Unattached in the next epoch. Variant kip853 (Kafka 3.9, KIP-853
without KIP-996; beyond the reference): every such timeout starts an
election in a new epoch at once (KafkaRaftClient.transitionToCandidate), so
there is no Prospective state and no ConcludePreVote.

Each function appends (action, successor) to `out` once per way TLC finds
the action enabled (a disjunction of guards that are both true gives two).
"""
from __future__ import annotations

from model.kraft_quorum import network
from model.kraft_quorum.roles import (
    apply_state, fail_pending_writes, fetch_can_timeout, is_observer, is_quorum, is_voter,
    majority, maybe_handle_common_response, no_transition, reset_fetch_state,
    reset_follower_offsets, to_candidate, to_follower, to_leader, to_prospective,
    to_prospective_add_vote, to_resigned, to_unattached, to_unattached_add_vote)
from model.kraft_quorum.state import (
    BeginQuorumEpoch, Command, Entry, Error, MsgType, Role, VoteRequest, VoteResponse, at, put)

_VOTABLE = (Role.Unattached, Role.Prospective)
_PRE_VOTABLE = (Role.Unattached, Role.Prospective, Role.Candidate, Role.Resigned)


def last_epoch(log: tuple) -> int:
    """LastEpoch: the epoch of the last entry, 0 for an empty log."""
    return log[-1].epoch if log else 0


def compare_entries(offset1: int, epoch1: int, offset2: int, epoch2: int) -> int:
    """CompareEntries: epoch first, then offset."""
    if epoch1 > epoch2:
        return 1
    if epoch1 == epoch2:
        return (offset1 > offset2) - (offset1 < offset2)
    return -1


def under_disruption_limit(model, st) -> bool:
    return st.aux_ctrs.disruptive_ctr < model.max_disruptive


def inc_timeout_ctrs(model, st, disruptive: bool, ch: dict) -> None:
    """AUX_IncTimeoutCtrs: count the pre-vote (TestLiveness) and a disruptive trigger."""
    a = st.aux_ctrs
    if model.test_liveness or disruptive:
        ch["aux_ctrs"] = a._replace(prevote_ctr=a.prevote_ctr + (1 if model.test_liveness else 0),
                                    disruptive_ctr=a.disruptive_ctr + (1 if disruptive else 0))


def within_epoch_limit(model, st, s: int) -> bool:
    """WithinEpochLimit(s): TestLiveness FALSE bounds the epochs."""
    return model.test_liveness or at(st.current_epoch, s) < model.max_epoch


def _vote_requests(st, s: int, epoch: int, pre_vote: bool) -> list:
    log = at(st.log, s)
    le, n = last_epoch(log), len(log)
    return [VoteRequest(MsgType.RequestVoteRequest, epoch, le, n, pre_vote, s, p)
            for p in sorted(at(st.config, s).members - {s})]


def _start_timeout(model, st, s: int, disruptive: bool, ch: dict):
    """What a fetch or election timeout does: Prospective and pre-vote
    requests (kip996), or Candidate in a new epoch and vote requests (kip853).
    None: kip853's epoch limit stops it."""
    if model.variant_flags.pre_vote:
        epoch = at(st.current_epoch, s) + (1 if model.mutant.pre_vote_bumps_epoch else 0)
        t = to_prospective(st, s, epoch)
        apply_state(st, s, t, ch)
        msgs = _vote_requests(st, s, epoch, True)
    else:
        if not within_epoch_limit(model, st, s):
            return None
        t = to_candidate(st, s, False)
        apply_state(st, s, t, ch)
        msgs = _vote_requests(st, s, t.epoch, False)
    reset_fetch_state(st, s, ch)
    ch["net_messages"] = network.send_all(st, st.net_messages, msgs)
    inc_timeout_ctrs(model, st, disruptive, ch)
    return ch


def voter_fetch_timeout(model, st, s: int, out: list) -> None:
    """VoterFetchTimeout(s): a follower voter stops hearing from its leader
    (or, under the disruption limit, for no reason)."""
    if at(st.state, s) != Role.Follower or not is_voter(st, s):
        return
    reasons = fetch_can_timeout(st, s)
    times = reasons + (1 if under_disruption_limit(model, st) else 0)
    if not times:
        return
    ch = _start_timeout(model, st, s, reasons == 0, {})
    if ch is not None:
        out.extend([(model.act("VoterFetchTimeout", s), st._replace(**ch))] * times)


def not_enough_votes(st, s: int, pre_vote: bool) -> bool:
    """NotEnoughVotes(s, pre_vote): the election is over without a majority."""
    return (not network.has_inflight_vote_req(st, s, pre_vote)
            and not network.has_inflight_vote_res(st, s, pre_vote)
            and len(at(st.votes_recv, s)) < majority(at(st.config, s).members)
            and at(st.state, s) != Role.Leader)


def causal_election_timeout(st, s: int) -> bool:
    state = at(st.state, s)
    return state == Role.Unattached or (state == Role.Candidate and not_enough_votes(st, s, False))


def voter_election_timeout(model, st, s: int, out: list) -> None:
    """VoterElectionTimeout(s): an unattached voter, or a candidate whose
    election failed, times out (or, under the disruption limit, any
    candidate or unattached voter)."""
    state = at(st.state, s)
    if state not in (Role.Candidate, Role.Unattached) or not is_voter(st, s):
        return
    causal = causal_election_timeout(st, s)
    if not causal and not under_disruption_limit(model, st):
        return
    ch = _start_timeout(model, st, s, not causal, {})
    if ch is not None:
        out.append((model.act("VoterElectionTimeout", s), st._replace(**ch)))


def resigned_election_timeout(model, st, s: int, out: list) -> None:
    """ResignedElectionTimeout(s): a resigned leader becomes Unattached in the
    next epoch (kip996). In Kafka 3.9 (kip853) a resigned voter starts an
    election; one its own removal made an observer becomes Unattached in the
    next epoch (KafkaRaftClient.pollResigned)."""
    if at(st.state, s) != Role.Resigned:
        return
    ch: dict = {}
    if model.variant_flags.pre_vote or not is_voter(st, s):
        apply_state(st, s, to_unattached(st, s, at(st.current_epoch, s) + 1, None), ch)
    else:
        if not within_epoch_limit(model, st, s):
            return
        t = to_candidate(st, s, False)
        apply_state(st, s, t, ch)
        reset_fetch_state(st, s, ch)
        ch["net_messages"] = network.send_all(st, st.net_messages,
                                              _vote_requests(st, s, t.epoch, False))
    out.append((model.act("ResignedElectionTimeout", s), st._replace(**ch)))


def _grant_pre_vote(st, s: int, t0, log_ok: bool) -> bool:
    if t0.state in _PRE_VOTABLE:
        return log_ok
    if t0.state == Role.Follower:
        # a follower that never fetched from its leader in this epoch
        return not at(st.fetch_state, s).has_fetch_success and log_ok
    return False


def _grant_vote(model, peer: int, t0, log_ok: bool) -> bool:
    if t0.state not in _VOTABLE:
        return False
    if t0.voted_for is not None:
        return t0.voted_for == peer  # the same vote again
    if t0.leader is not None:
        return False
    return log_ok


def handle_vote_request(model, st, m, out: list) -> None:
    """HandleVoteRequest(s, peer): s answers peer's (pre-)vote request."""
    s, peer = m.dest, m.source
    cur = at(st.current_epoch, s)
    if m.last_log_epoch > m.replica_epoch:
        error = Error.InvalidRequest
    elif m.replica_epoch < cur:
        error = Error.FencedLeaderEpoch
    else:
        error = None
    if error is not None:
        resp = VoteResponse(MsgType.RequestVoteResponse, cur, at(st.leader, s), False, m.pre_vote,
                            error, s, peer)
        net = network.reply(st, m, resp)
        if net is not None:
            out.append((model.act("HandleVoteRequest", s, peer), st._replace(**net)))
        return
    t0 = to_unattached(st, s, m.replica_epoch, None) if m.replica_epoch > cur else no_transition(st, s)
    log = at(st.log, s)
    log_ok = (compare_entries(m.last_log_offset, m.last_log_epoch, len(log), last_epoch(log)) >= 0
              or model.mutant.vote_without_log_check)
    if m.pre_vote:
        grant = _grant_pre_vote(st, s, t0, log_ok)
        final = t0
    else:
        grant = _grant_vote(model, peer, t0, log_ok)
        if grant and t0.state == Role.Unattached:
            final = to_unattached_add_vote(m.replica_epoch, t0, peer)
        elif grant and t0.state == Role.Prospective:
            final = to_prospective_add_vote(m.replica_epoch, t0, peer)
        else:
            final = t0
    ch: dict = {}
    if at(st.state, s) != final.state:
        reset_fetch_state(st, s, ch)
        fail_pending_writes(st, s, ch)
    apply_state(st, s, final, ch)
    resp = VoteResponse(MsgType.RequestVoteResponse, m.replica_epoch, final.leader, grant, m.pre_vote,
                        None, s, peer)
    net = network.reply(st, m, resp)
    if net is None:
        return
    ch.update(net)
    out.append((model.act("HandleVoteRequest", s, peer), st._replace(**ch)))


def handle_vote_response(model, st, m, out: list) -> None:
    """HandleVoteResponse(s, peer): a (pre-)vote counts if s still asks for it."""
    s, peer = m.dest, m.source
    if not is_voter(st, s):
        return
    t0, handled = maybe_handle_common_response(st, s, m.leader, m.replica_epoch, m.error)
    if (not handled and m.vote_granted
            and ((t0.state == Role.Prospective and m.pre_vote)
                 or (t0.state == Role.Candidate and not m.pre_vote))):
        t0 = t0._replace(votes_recv=t0.votes_recv | {peer})
    ch: dict = {}
    apply_state(st, s, t0, ch)
    if (model.new_follower_state and t0.state == Role.Follower
            and (t0.leader, t0.epoch) != (at(st.leader, s), at(st.current_epoch, s))):
        # QuorumState.transitionToFollower: a new FollowerState
        fs = at(st.fetch_state, s)
        ch["fetch_state"] = put(st.fetch_state, s, fs._replace(has_fetch_success=False))
    if at(st.state, s) == Role.Leader and t0.state != Role.Leader:
        # MaybeLoseLeadership: a late response from a higher epoch
        fail_pending_writes(st, s, ch)
        reset_follower_offsets(st, s, at(st.config, s).members, ch)
    ch.update(network.discard(st, m))
    out.append((model.act("HandleVoteResponse", s, peer), st._replace(**ch)))


def conclude_pre_vote(model, st, s: int, out: list) -> None:
    """ConcludePreVote(s): a prospective voter with a pre-vote majority
    becomes a Candidate in the next epoch; one whose pre-vote is over
    without one goes back to following its last leader, or to Unattached."""
    if at(st.state, s) != Role.Prospective or not is_voter(st, s):
        return
    if not within_epoch_limit(model, st, s):
        return
    members = at(st.config, s).members
    quorum = is_quorum(at(st.votes_recv, s), members)
    no_more = (not network.has_inflight_vote_req(st, s, True)
               and not network.has_inflight_vote_res(st, s, True))
    times = quorum + no_more
    if not times:
        return
    ch: dict = {}
    if quorum:
        t = to_candidate(st, s, True)
        apply_state(st, s, t, ch)
        ch["net_messages"] = network.send_all(st, st.net_messages,
                                              _vote_requests(st, s, t.epoch, False))
    elif at(st.leader, s) is not None:
        apply_state(st, s, to_follower(st, s, at(st.leader, s), at(st.current_epoch, s)), ch)
    else:
        apply_state(st, s, to_unattached(st, s, at(st.current_epoch, s), None), ch)
    out.extend([(model.act("ConcludePreVote", s), st._replace(**ch))] * times)


def become_leader(model, st, s: int, out: list) -> None:
    """BecomeLeader(s): a candidate with a majority of votes leads its epoch:
    a LeaderChangeRecord in its log, BeginQuorumEpoch to every voter."""
    if at(st.state, s) != Role.Candidate:
        return
    members = at(st.config, s).members
    if not is_quorum(at(st.votes_recv, s), members):
        return
    epoch = at(st.current_epoch, s)
    new_log = at(st.log, s) + (Entry(Command.LeaderChangeRecord, epoch, None),)
    ch: dict = {}
    if len(members) == 1 and at(st.hwm, s) != len(new_log):
        if not model.single_voter_leads:
            # the reference sets hwm' for a single voter and also keeps hwm
            # UNCHANGED: TLC finds no successor
            return
        ch["hwm"] = put(st.hwm, s, len(new_log))  # its own end offset is a majority
    apply_state(st, s, to_leader(st, s), ch)
    ch["log"] = put(st.log, s, new_log)
    if model.storage and _majority_lost_power(model, st) and not st.elected_after_power_loss:
        ch["elected_after_power_loss"] = True
    reset_follower_offsets(st, s, members, ch)
    reset_fetch_state(st, s, ch)
    ch["net_messages"] = network.send_all(
        st, st.net_messages,
        [BeginQuorumEpoch(MsgType.BeginQuorumEpochRequest, epoch, False, s, p)
         for p in sorted(members - {s})])
    out.append((model.act("BecomeLeader", s), st._replace(**ch)))


def _majority_lost_power(model, st) -> bool:
    """A majority of the initial voters lost power while a value was acknowledged."""
    n = model.init_size
    return 2 * sum(1 for x in st.lost_power_acked if x <= n) > n


def heard_from_majority(st, s: int) -> bool:
    """CheckQuorum = "fetch": the voters the leader accepted a fetch from in
    its check-quorum period (AcceptFetchRequest adds them), with itself if
    a member, are a majority of its configuration (KAFKA-15489,
    LeaderState.updateCheckQuorumForFollowingVoter)."""
    members = at(st.config, s).members
    heard = len(at(st.fetched_voters, s) & members) + (1 if s in members else 0)
    return 2 * heard > len(members)


def check_quorum_expires(st, s: int) -> bool:
    """The check-quorum timer expires before a majority fetched: a leader of
    more than itself resigns (LeaderState.timeUntilCheckQuorumExpires; a
    single voter's never expires)."""
    return at(st.config, s).members != {s} and not heard_from_majority(st, s)


def check_quorum_restart(model, st, s: int, out: list) -> None:
    """CheckQuorumRestart(s) (CheckQuorum = "fetch"): a majority fetched in the
    period, the timer starts anew with no voter heard from. Time is not
    modelled: a period ends at this step, so an expiry (CheckQuorumResign)
    needs a whole period without fetches from a majority."""
    if at(st.state, s) != Role.Leader or not heard_from_majority(st, s):
        return
    if at(st.config, s).members == {s}:
        return
    out.append((model.act("CheckQuorumRestart", s),
                st._replace(fetched_voters=put(st.fetched_voters, s, frozenset()))))


def should_resign(st, s: int) -> bool:
    """ShouldResign(s): the leader hears from too few of its configuration."""
    members = at(st.config, s).members
    epoch = at(st.current_epoch, s)
    peers = sum(1 for p in members
                if p != s and network.connected(st, s, p)
                and ((is_voter(st, p) and epoch >= at(st.current_epoch, p)) or is_observer(st, p)))
    need = len(members) // 2 if s in members else len(members) // 2 + 1
    return peers < need


def check_quorum_resign(model, st, s: int, out: list) -> None:
    """CheckQuorumResign(s): a leader without a connected majority resigns
    (or, under the disruption limit, resigns for no reason)."""
    if at(st.state, s) != Role.Leader:
        return
    if model.fetch_check_quorum:
        should = check_quorum_expires(st, s)
    else:
        should = should_resign(st, s)
    under = under_disruption_limit(model, st)
    times = should + under
    if not times:
        return
    ch: dict = {}
    apply_state(st, s, to_resigned(st, s), ch)
    fail_pending_writes(st, s, ch)
    reset_follower_offsets(st, s, at(st.config, s).members, ch)
    if not should:
        a = st.aux_ctrs
        ch["aux_ctrs"] = a._replace(disruptive_ctr=a.disruptive_ctr + 1)
    out.extend([(model.act("CheckQuorumResign", s), st._replace(**ch))] * times)

