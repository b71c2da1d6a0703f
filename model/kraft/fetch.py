"""Follower fetching from the leader (reference: SendFetchRequest,
ReceiveFetchRequest, ReceiveFetchResponse, LastOffsetForEpoch,
FindTruncatePoint / TruncateToSafePoint, DropFetchSessions).

One partition, at most one record per fetch response. A follower truncates
on a diverging epoch; the leader tracks each follower's LEO (its fetch
offset) and broker epoch, and advances the HWM from them.
"""
from __future__ import annotations

from model.base import EvaluationError
from model.kraft import network
from model.kraft.messages import (
    EpochOffset, FetchRequest, FetchRequestPartition, FetchResponse, FetchResponsePartition)
from model.kraft.replica import NO_FETCH, can_advance_hwm, commit_offset, maybe_advance_hwm
from model.kraft.state import (
    BrokerFetcher, BrokerStatus, ErrorCode, MsgType, PartitionData, PartitionFetchState,
    PeerReplicaState, Role, except_at, with_changes)

RUNNING = BrokerStatus.RUNNING
LEADER = Role.Leader
_FETCH_TYPES = (MsgType.FetchRequest, MsgType.FetchResponse)


def last_offset_for_epoch(s, b, req_epoch, is_leader):
    """LastOffsetForEpoch(b, req_epoch, is_leader) -> EpochOffset.

    The offset is None (Nil) where the reference says "should not happen";
    comparing it later raises EvaluationError as TLC would.
    """
    i = b - 1
    d = s.partition_data[i]
    log = d.log
    leader_epoch = s.partition_metadata[i].leader_epoch
    if not log or req_epoch == log[-1].epoch or (is_leader and leader_epoch == req_epoch):
        return EpochOffset(req_epoch, d.leo)
    # higher_epoch_offset: CHOOSE the first offset (ascending, as TLC enumerates
    # 1..Len) of an epoch > req_epoch with no earlier offset of an epoch between
    if any(r.epoch > req_epoch for r in log):
        higher = None
        for o, r in enumerate(log, 1):
            e = r.epoch
            if e > req_epoch and not any(req_epoch < r2.epoch < e for r2 in log[:o - 1]):
                higher = o
                break
        if higher is None:
            raise EvaluationError(f"LastOffsetForEpoch: CHOOSE over an empty set (broker {b})")
    elif is_leader and leader_epoch > req_epoch:
        higher = d.leo
    else:
        higher = None  # Nil
    floor = [r.epoch for r in log if r.epoch <= req_epoch]
    if floor:  # the epoch of floor_epoch_offset: the highest epoch <= req_epoch
        return EpochOffset(max(floor), higher)
    return EpochOffset(req_epoch, higher)


def _less(a, b, where):
    """a < b where TLC would fail on Nil."""
    if a is None or b is None:
        raise EvaluationError(f"{where}: compares Nil with an integer ({a!r} < {b!r})")
    return a < b


def truncate_to_safe_point(s, b, diverging):
    """TruncateToSafePoint(b, diverging_epoch) via FindTruncatePoint."""
    local = last_offset_for_epoch(s, b, diverging.epoch, False)
    if local.epoch != diverging.epoch:
        truncate_to = local.offset
    elif _less(local.offset, diverging.offset, "FindTruncatePoint"):
        truncate_to = local.offset
    else:
        truncate_to = diverging.offset
    d = s.partition_data[b - 1]
    if truncate_to is None:
        raise EvaluationError("TruncateToSafePoint: truncate point is Nil")
    if truncate_to > 1:
        if truncate_to - 1 > len(d.log):
            raise EvaluationError(
                f"TruncateToSafePoint reads offset {truncate_to - 1} of broker {b}'s log "
                f"of length {len(d.log)}")
        return PartitionData(d.log[:truncate_to - 1], d.hwm, truncate_to)
    return PartitionData((), d.hwm, 1)


def converged(s, leader, follower):
    """Converged(leader, follower): nothing left to fetch (state-space limiter)."""
    dl = s.partition_data[leader - 1]
    df = s.partition_data[follower - 1]
    peer = s.partition_replica_state[leader - 1][follower - 1]
    return (dl.leo == df.leo and dl.hwm == df.hwm and peer.leo == df.leo
            and peer.broker_epoch == s.broker_state[follower - 1].broker_epoch)


def drop_fetch_sessions(k, s, b):
    """DropFetchSessions(b): (messages', messages_discard', broker_fetchers').
    Every fetch message to or from b is dropped - but, with
    FetchRequestsSurviveStop, b's own fetch requests, which its leader still
    handles; b's fetchers are reset; a peer waiting on b gets its fetch failed
    (delayed if it still has the partition)."""
    keep_requests = k.fetch_survives_stop
    dropped = [m for m in s.messages
               if m[0] in _FETCH_TYPES and (m.dest == b or m.source == b)
               and not (keep_requests and m[0] == MsgType.FetchRequest and m.source == b)]
    if dropped:
        msgs, disc = network.drop(s.messages, s.messages_discard, dropped)
    else:
        msgs, disc = s.messages, s.messages_discard
    fetchers = []
    for b1, row in enumerate(s.broker_fetchers, 1):
        if b1 == b:
            fetchers.append(k.blank_fetcher_row)
            continue
        f = row[b - 1]
        if f.pending_response:
            if f.partition is not None:
                row = except_at(row, b, BrokerFetcher(f.partition._replace(delayed=True), False))
            else:
                row = except_at(row, b, NO_FETCH)
        fetchers.append(row)
    return msgs, disc, tuple(fetchers)


def send_fetch_request(k, s, b, mt, out):
    """SendFetchRequest(b): \\E to: the follower fetches from the broker it
    believes leads, unless the pair has converged."""
    i = b - 1
    bs = s.broker_state[i]
    if bs.status != RUNNING:
        return
    md = s.partition_metadata[i]
    to = md.leader  # the guard `leader = to` leaves at most one candidate
    if to == b or not 1 <= to <= k.n:
        return
    f = s.broker_fetchers[i][to - 1]
    p = f.partition
    if p is None or f.pending_response:
        return
    if converged(s, to, b):
        return
    request = FetchRequest(MsgType.FetchRequest, bs.broker_epoch,
                           FetchRequestPartition(md.leader_epoch, p.fetch_offset,
                                                 p.last_fetched_epoch),
                           to, b)
    row = except_at(s.broker_fetchers[i], to, BrokerFetcher(p._replace(delayed=False), True))
    out.append((k.acts["SendFetchRequest"][b], with_changes(s, dict(
        broker_fetchers=except_at(s.broker_fetchers, b, row),
        messages=network.send(s.messages, request)))))


def receive_fetch_request(k, s, b, mt, out):
    """ReceiveFetchRequest(b): answer with an error (not leader / epoch
    mismatch), a diverging epoch, or the next record; on success record the
    follower's LEO and maybe advance the HWM."""
    reqs = mt[MsgType.FetchRequest]
    if not reqs:
        return
    i = b - 1
    if s.broker_state[i].status != RUNNING:
        return
    act = k.acts["ReceiveFetchRequest"][b]
    md = s.partition_metadata[i]
    is_leader = s.partition_status[i] == LEADER
    d = s.partition_data[i]
    for m in reqs:
        if m.dest != b:
            continue
        mp = m.partition
        # a request that outlived its sender (FetchRequestsSurviveStop): its
        # answer goes to a connection that is gone
        send = network.reply if s.broker_state[m.source - 1].broker_epoch == m.broker_epoch \
            else _lost_reply
        if not is_leader or md.leader_epoch != mp.leader_epoch:
            if md.leader_epoch < mp.leader_epoch:
                error = ErrorCode.UnknownLeaderEpoch
            elif md.leader_epoch > mp.leader_epoch:
                error = ErrorCode.FencedLeaderEpoch
            else:
                error = ErrorCode.NotLeaderOrFollower
            resp = FetchResponse(MsgType.FetchResponse,
                                 FetchResponsePartition(error, md.leader_epoch, mp.fetch_offset,
                                                        d.hwm, None, ()),
                                 m.source, m.dest)
            msgs, disc = send(s.messages, s.messages_discard, m, resp)
            out.append((act, with_changes(s, dict(messages=msgs, messages_discard=disc))))
            continue
        if m.broker_epoch < s.partition_replica_state[i][m.source - 1].broker_epoch:
            # KIP-903, the leader's half: a fetch of an earlier incarnation than one
            # already recorded is fenced (Replica.updateFetchStateOrThrow: "Received
            # stale fetch state update"; Kafka compares with its metadata cache)
            msgs, disc = network.discard(s.messages, s.messages_discard, m)
            out.append((act, with_changes(s, dict(messages=msgs, messages_discard=disc))))
            continue
        last_epoch = last_offset_for_epoch(s, b, mp.last_fetched_epoch, True)
        if (last_epoch.epoch < mp.last_fetched_epoch
                or (_less(last_epoch.offset, mp.fetch_offset, "ReceiveFetchRequest")
                    and not k.mutant.skip_diverging_end_offset_check)):  # a mutant skips it
            resp = FetchResponse(MsgType.FetchResponse,
                                 FetchResponsePartition(None, md.leader_epoch, mp.fetch_offset,
                                                        d.hwm, last_epoch, ()),
                                 m.source, m.dest)
            msgs, disc = send(s.messages, s.messages_discard, m, resp)
            out.append((act, with_changes(s, dict(messages=msgs, messages_discard=disc))))
            continue
        # OK: the follower's LEO is its fetch offset
        row = except_at(s.partition_replica_state[i], m.source,
                        PeerReplicaState(mp.fetch_offset, m.broker_epoch))
        old_hwm = d.hwm
        new_hwm = commit_offset(s, b, md.maximal_isr, d.leo, row) + 1
        if k.variant_flags.hwm_needs_min_isr and not can_advance_hwm(k, s, b, md.isr, old_hwm, new_hwm):
            new_hwm = old_hwm
        ch = {}
        maybe_advance_hwm(k, s, b, md.isr, old_hwm, new_hwm, True, ch)
        ch["partition_replica_state"] = except_at(s.partition_replica_state, b, row)
        resp = FetchResponse(MsgType.FetchResponse,
                             FetchResponsePartition(
                                 None, md.leader_epoch, mp.fetch_offset,
                                 new_hwm if new_hwm > old_hwm else old_hwm, None,
                                 (d.log[mp.fetch_offset - 1],) if mp.fetch_offset < d.leo else ()),
                             m.source, m.dest)
        ch["messages"], ch["messages_discard"] = send(s.messages, s.messages_discard, m, resp)
        out.append((act, with_changes(s, ch)))


def _lost_reply(messages, discarded, m, _resp):
    """The reply to a request whose sender stopped since: consumed, unanswered."""
    return network.discard(messages, discarded, m)


def receive_fetch_response(k, s, b, mt, out):
    """ReceiveFetchResponse(b): ignore a stale response, delay after an error,
    truncate on a diverging epoch, else append the record and take the HWM
    (when within the log)."""
    resps = mt[MsgType.FetchResponse]
    if not resps:
        return
    i = b - 1
    if s.broker_state[i].status != RUNNING:
        return
    act = k.acts["ReceiveFetchResponse"][b]
    fetch_row = s.broker_fetchers[i]
    leader_epoch = s.partition_metadata[i].leader_epoch
    for m in resps:
        if m.dest != b:
            continue
        src = m.source
        f = fetch_row[src - 1]
        if not f.pending_response:
            continue
        mp = m.partition
        p = f.partition
        ch = {}
        if (p is None  # the two no-op CHECKs; mutants may skip either
                or (p.fetch_offset != mp.fetch_offset and not k.mutant.skip_fetch_offset_check)
                or (leader_epoch != mp.leader_epoch and not k.mutant.skip_fetch_leader_epoch_check)):
            new_f = NO_FETCH if p is None else BrokerFetcher(p, False)  # pending_response off
        elif mp.error is not None:
            new_f = BrokerFetcher(p._replace(delayed=True), False)
        elif mp.diverging_epoch is not None:
            after = truncate_to_safe_point(s, b, mp.diverging_epoch)
            ch["partition_data"] = except_at(s.partition_data, b, after)
            new_f = BrokerFetcher(
                PartitionFetchState(after.leo, after.log[-1].epoch if after.log else 0, False),
                False)
        else:
            d = s.partition_data[i]
            records = mp.records
            new_leo = len(d.log) + len(records) + 1
            ch["partition_data"] = except_at(s.partition_data, b, PartitionData(
                d.log + records, mp.hwm if mp.hwm <= new_leo else d.hwm, new_leo))
            new_f = BrokerFetcher(
                PartitionFetchState(new_leo,
                                    records[-1].epoch if records else p.last_fetched_epoch,
                                    False),
                False)
        ch["broker_fetchers"] = except_at(s.broker_fetchers, b, except_at(fetch_row, src, new_f))
        ch["messages"], ch["messages_discard"] = network.discard(
            s.messages, s.messages_discard, m)
        out.append((act, with_changes(s, ch)))
