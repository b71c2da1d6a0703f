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

from model.kraft_quorum.state import ConfigValue, MsgType


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


def reply(st, d, m) -> dict | None:
    """Reply(d, m): receive d, answer m; None (not enabled) when the
    connection is down or d is not in flight."""
    if not connected(st, m.dest, m.source) or d not in st.net_messages:
        return None
    return {"net_messages": (st.net_messages - {d}) | {m},
            "net_messages_processed": st.net_messages_processed | {d}}


# ---- a fixed order of the messages in flight ---------------------------------------
# A frozenset iterates in hash order, and hash(None) and hash(str) change from
# one process to the next: receiving the messages in that order would make
# random walks and counterexample traces differ from run to run with the same
# seed. Each message's key holds only ints (None as -1), so the order is a
# function of the messages alone.

def _opt(v) -> int:
    return -1 if v is None else v


def _value_key(v) -> tuple:
    if v is None:
        return (0,)
    if type(v) is ConfigValue:
        return (2, v.id, tuple(sorted(v.members)), _opt(v.server))
    return (1, v)


def _request_key(m) -> tuple:
    return (m.type, m.dest, m.source, m.replica_epoch, m.fetch_offset, m.last_fetched_epoch,
            _opt(m.observer))


def _response_key(m) -> tuple:
    entries = () if m.entries is None else tuple(
        (e.command, e.epoch, _value_key(e.value)) for e in m.entries)
    return (m.type, m.dest, m.source, m.replica_epoch, m.result, _opt(m.error), _opt(m.leader),
            m.hwm, _opt(m.diverging_epoch), _opt(m.diverging_end_offset),
            _request_key(m.correlation), entries)


_KEY = {
    MsgType.RequestVoteRequest: tuple,   # ints and bools only
    MsgType.RequestVoteResponse: lambda m: (m.type, m.dest, m.source, m.replica_epoch,
                                            _opt(m.leader), m.vote_granted, m.pre_vote,
                                            _opt(m.error)),
    MsgType.BeginQuorumEpochRequest: lambda m: (m.type, m.dest, m.source, m.replica_epoch,
                                                _opt(m.resend)),
    MsgType.FetchRequest: _request_key,
    MsgType.FetchResponse: _response_key,
}


_KEYS: dict = {}   # message -> its key: a message in flight stays in flight over many states
_KEYS_LIMIT = 1 << 16


def message_key(m) -> tuple:
    key = _KEYS.get(m)
    if key is None:
        if len(_KEYS) >= _KEYS_LIMIT:
            _KEYS.clear()
        key = _KEYS[m] = _KEY[m.type](m)
    return key


def in_order(msgs: frozenset):
    """The messages of `msgs` in a fixed order (by type, then destination,
    source, epoch and the rest of each message)."""
    return sorted(msgs, key=message_key) if len(msgs) > 1 else msgs


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


def disconnect_server(st, s: int) -> dict:
    """DisconnectServer(s): every pair with s down, its messages dropped."""
    return {"net_connectivity": frozenset(p for p in st.net_connectivity if s not in p),
            "net_messages": frozenset(m for m in st.net_messages
                                      if m.source != s and m.dest != s)}
