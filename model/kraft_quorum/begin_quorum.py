"""BeginQuorumEpoch: a new leader tells the voters of its epoch, and resends
to a voter whose request was lost (the reference's
ResendBeginQuorumEpochRequest and AcceptBeginQuorumRequest). Rejecting a
stale request is not modelled: it is best effort (as in the reference).
"""
from __future__ import annotations

from model.kraft_quorum import network
from model.kraft_quorum.roles import (
    apply_state, fail_pending_writes, maybe_transition, reset_fetch_state)
from model.kraft_quorum.state import BeginQuorumEpoch, MsgType, Role, at


def begin_quorum_epoch_timeout(st, s: int, peer: int) -> bool:
    """BeginQuorumEpochRequestTimeout(s, peer): the request of this epoch was
    lost (neither in flight nor processed), peer is reachable and still
    needs it. The first epoch is set up by Init and never resent."""
    epoch = at(st.current_epoch, s)
    if epoch <= 1 or network.not_lost_begin_quorum_epoch(st, s, peer, epoch):
        return False
    if not network.connected(st, s, peer):
        return False
    peer_epoch = at(st.current_epoch, peer)
    return epoch > peer_epoch or (epoch == peer_epoch and at(st.state, peer) != Role.Follower)


def resend_begin_quorum_epoch_request(model, st, s: int, peer: int, out: list) -> None:
    """ResendBeginQuorumEpochRequest(s, peer)."""
    if (at(st.state, s) != Role.Leader or s == peer or peer not in at(st.config, s).members
            or not begin_quorum_epoch_timeout(st, s, peer)):
        return
    req = BeginQuorumEpoch(MsgType.BeginQuorumEpochRequest, at(st.current_epoch, s), True, s, peer)
    out.append((model.act("ResendBeginQuorumEpochRequest", s, peer),
                st._replace(net_messages=network.send(st, st.net_messages, req))))


def accept_begin_quorum_request(model, st, m, out: list) -> None:
    """AcceptBeginQuorumRequest(s, peer): s learns that peer leads the
    request's epoch (a stale request is left unanswered)."""
    s, peer = m.dest, m.source
    if m.replica_epoch < at(st.current_epoch, s):
        return
    ch: dict = {}
    apply_state(st, s, maybe_transition(st, s, peer, m.replica_epoch), ch)
    reset_fetch_state(st, s, ch)
    fail_pending_writes(st, s, ch)
    ch.update(network.discard(st, m))
    out.append((model.act("AcceptBeginQuorumRequest", s, peer), st._replace(**ch)))
