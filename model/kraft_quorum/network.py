"""Message passing and network connectivity (the reference's network.tla).

Messages are a set: sending a message already in flight changes nothing.
A message to or from a server it is not connected to is lost when sent, and
a connectivity change drops every message in flight between servers it
disconnects, so every message in flight is between connected servers.
Received messages move to `net_messages_processed` (the reference keeps them
to tell a lost request from a processed one).
"""
from __future__ import annotations

from itertools import combinations

from model.kraft_quorum.state import MsgType


def pair(a: int, b: int) -> tuple:
    return (a, b) if a < b else (b, a)


def all_pairs(n: int) -> frozenset:
    """ServerPairs(1..n): every unordered pair."""
    return frozenset(combinations(range(1, n + 1), 2))


def connected(st, a: int, b: int) -> bool:
    """Connected(a, b)."""
    return a != b and pair(a, b) in st.net_connectivity


def send(st, msgs: frozenset, m) -> frozenset:
    """SendFunc: m joins msgs unless its connection is down (then it is lost)."""
    if m.dest != m.source and pair(m.dest, m.source) in st.net_connectivity:
        return msgs | {m}
    return msgs


def send_all(st, msgs: frozenset, ms) -> frozenset:
    """SendAllFunc."""
    conn = st.net_connectivity
    new = [m for m in ms if m.dest != m.source and pair(m.dest, m.source) in conn]
    return msgs.union(new) if new else msgs


def discard(st, d) -> dict:
    """Discard(d): received, no reply."""
    return {"net_messages": st.net_messages - {d},
            "net_messages_processed": st.net_messages_processed | {d}}


def discard_and_send_all(st, d, ms) -> dict:
    return {"net_messages": send_all(st, st.net_messages - {d}, ms),
            "net_messages_processed": st.net_messages_processed | {d}}


def reply(st, d, m) -> dict | None:
    """Reply(d, m): receive d, answer m; None (not enabled) when the
    connection is down or d is not in flight."""
    if not connected(st, m.dest, m.source) or d not in st.net_messages:
        return None
    return {"net_messages": (st.net_messages - {d}) | {m},
            "net_messages_processed": st.net_messages_processed | {d}}


def has_inflight_vote_req(st, s: int, pre_vote: bool) -> bool:
    """HasInflightVoteReq(s, RequestVoteRequest, pre_vote)."""
    return any(m.type == MsgType.RequestVoteRequest and m.pre_vote == pre_vote and m.source == s
               for m in st.net_messages)


def has_inflight_vote_res(st, s: int, pre_vote: bool) -> bool:
    """HasInflightVoteRes(s, RequestVoteResponse, pre_vote)."""
    return any(m.type == MsgType.RequestVoteResponse and m.pre_vote == pre_vote and m.dest == s
               for m in st.net_messages)


def not_lost_begin_quorum_epoch(st, source: int, dest: int, epoch: int) -> bool:
    """NotLostReqWithReplicaEpoch(source, dest, BeginQuorumEpochRequest, epoch):
    such a request is in flight or was processed."""
    t = MsgType.BeginQuorumEpochRequest
    for msgs in (st.net_messages, st.net_messages_processed):
        for m in msgs:
            if m.type == t and m.replica_epoch == epoch and m.source == source and m.dest == dest:
                return True
    return False


def fetch_request_or_res_lost(st, req) -> bool:
    """FetchRequestOrResLost(req, FetchResponse): neither the request nor its
    response is in flight."""
    if req in st.net_messages:
        return False
    t = MsgType.FetchResponse
    return not any(m.type == t and m.correlation == req for m in st.net_messages)


def connected_pairs_without(st, s: int) -> frozenset:
    """ConnectedPairsWithoutServer(s)."""
    return frozenset(p for p in st.net_connectivity if s not in p)


def disconnect_server(st, s: int) -> dict:
    """DisconnectServer(s): every pair with s down, its messages dropped."""
    return {"net_connectivity": frozenset(p for p in st.net_connectivity if s not in p),
            "net_messages": frozenset(m for m in st.net_messages
                                      if m.source != s and m.dest != s)}
