"""Followers fetching from the leader (0.8 replication design: "Each follower constantly
pulls new messages from the leader using a single socket channel"; detailed design V2
V2 "Follower fetching from leader", replicaFetch at the leader, the
ReplicaFetcherThread at the follower; KIP-101 "When to update high watermark").

A fetch is two steps, because the two-phase HW propagation is what KIP-101 is
about: HandleFetch (the leader receives the request: it records the follower's
LEO, may re-add it to the ISR and commit, and answers with its records from
the fetch offset and its HW) and ReceiveFetchResponse (the follower appends
them and takes min(LEO, leader's HW) as its HW). The request itself is not a
message: the follower's state cannot change while it waits (one request at a
time per follower; the response in flight is per follower).
"""
from __future__ import annotations

from model.zk import ghost
from model.zk.replica import FOLLOWER, LEADER, commit, truncate, write_isr
from model.zk.state import FetchResponse, put, with_changes


def handle_fetch(k, s, f, out):
    """HandleFetch(leader, f): f's fetch request at offset LEO(f) reaches its
    leader. In range: the leader records f's LEO, re-adds f to the ISR when f
    has fully caught up (0.8 replication design: "When the follower fully catches up, the
    leader will add it back to the current ISR") by a conditional ZooKeeper
    write, commits, and answers. Beyond the leader's LEO: OffsetOutOfRange,
    nothing recorded."""
    role = s.role[f]
    if role.role != FOLLOWER or not s.running[f] or s.fetch_response[f] is not None:
        return
    leader = role.leader
    if not s.running[leader] or s.role[leader].role != LEADER:
        return
    offset = len(s.log[f])
    log = s.log[leader]
    leo = len(log)
    act = k.acts["HandleFetch"][(leader, f)]
    if offset > leo:
        resp = FetchResponse(offset, (), s.hw[leader], leo)
        out.append((act, with_changes(s, {"fetch_response": put(s.fetch_response, f, resp)})))
        return
    view = s.leader_view[leader]
    ch: dict = {}
    if view.follower_leo[f] != offset:
        view = view._replace(follower_leo=put(view.follower_leo, f, offset))
    if f not in view.isr and offset >= leo:
        written = write_isr(k, s, leader, view, view.isr | {f})
        if written is not None:
            zk, view = written
            ch["zk_partition"] = zk
            # f joins the ISR holding the leader's whole log
            ch["acked"] = ghost.gain(s.acked, f, ghost.values_of(s.log[f]))
    if view is not s.leader_view[leader]:
        ch["leader_view"] = put(s.leader_view, leader, view)
    commit(k, s, leader, view, log, ch)
    hw = ch.get("hw", s.hw)[leader]
    ch["fetch_response"] = put(s.fetch_response, f, FetchResponse(offset, log[offset:], hw, leo))
    out.append((act, with_changes(s, ch)))


def receive_fetch_response(k, s, f, out):
    """ReceiveFetchResponse(f): f appends the records and sets its HW to
    min(its LEO, the leader's HW) (KIP-101: "It will take the minimum(LEO, HW
    in leader's response)"). On OffsetOutOfRange (f's log is longer than the
    leader's, after an election of a replica that had less) f truncates to the
    leader's LEO, as 0.8's ReplicaFetcherThread.handleOffsetOutOfRange did."""
    resp = s.fetch_response[f]
    if resp is None or not s.running[f]:
        return
    ch: dict = {"fetch_response": put(s.fetch_response, f, None)}
    if resp.offset > resp.leader_leo:
        truncate(s, f, resp.leader_leo, ch)
    else:
        log = s.log[f] + resp.records if resp.records else s.log[f]
        if resp.records:
            ch["log"] = put(s.log, f, log)
            if f in s.zk_partition.isr:
                ch["acked"] = ghost.gain(s.acked, f, ghost.values_of(resp.records))
        hw = min(len(log), resp.hw)
        if hw != s.hw[f]:
            ch["hw"] = put(s.hw, f, hw)
    out.append((k.acts["ReceiveFetchResponse"][f], with_changes(s, ch)))
