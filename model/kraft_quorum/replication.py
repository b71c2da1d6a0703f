"""Fetch-based replication and the high watermark: client writes, fetch
requests, the leader's three answers to a fetch (reject, diverging,
accept), the follower's handling of the response (the reference's
HandleClientRequest, SendFetchRequest, RejectFetchRequest,
DivergingFetchRequest, AcceptFetchRequest, HandleFetchResponse), and the log
functions they share.

The leader advances its high watermark when a voter's fetch shows a majority
of the current configuration holding an entry of the current epoch; an
entry it commits acknowledges the client values up to it, and committing
the RemoveVoter command that removes the leader itself makes it resign.
A follower switches to the last configuration in its log as soon as it
appends or truncates one (KIP-853).
"""
from __future__ import annotations

from model.base import EvaluationError
from model.kraft_quorum import network
from model.kraft_quorum.limits import (
    helps_make_progress, in_prevote_cycle, maybe_not_same_peer_again, valid_peer)
from model.kraft_quorum.roles import (
    EMPTY, apply_state, fetch_can_timeout, is_observer, is_quorum, is_voter,
    maybe_handle_common_response, to_resigned, update_follower_offsets)
from model.kraft_quorum.state import (
    Command, Config, Entry, Error, FetchRequest, FetchResponse, FetchResult, FetchState,
    LastFetchRes, MsgType, Role, at, fmap, fmap_domain, fmap_get, put)

CONFIG_COMMANDS = (Command.InitClusterCommand, Command.AddVoterCommand, Command.RemoveVoterCommand)


# ---- the log --------------------------------------------------------------------

def end_offset_for_epoch(log: tuple, epoch: int) -> tuple[int, int]:
    """EndOffsetForEpoch: the last (offset, epoch) at or below `epoch`, else (0, 0)."""
    for o in range(len(log), 0, -1):
        e = log[o - 1].epoch
        if e <= epoch:
            return o, e
    return 0, 0


def valid_fetch_position(log: tuple, m) -> int:
    """ValidFetchPosition: whether the follower's position agrees with the
    leader's log, as the number of its two disjuncts that hold (a fetch from
    offset 1, or one at most one past the end of its last fetched epoch):
    AcceptFetchRequest names it as a conjunct, so TLC makes a successor for
    each."""
    offset, epoch = end_offset_for_epoch(log, m.last_fetched_epoch)
    return (m.fetch_offset == 1) + (m.fetch_offset <= offset + 1 and m.last_fetched_epoch == epoch)


def truncate_log(log: tuple, m) -> tuple:
    """TruncateLog: the log up to its highest entry at or below the diverging
    position (HighestCommonOffset)."""
    end, epoch = m.diverging_end_offset - 1, m.diverging_epoch
    for o in range(len(log), 0, -1):
        e = log[o - 1].epoch
        if e < epoch or (e == epoch and o <= end):
            return log[:o]
    return ()


def most_recent_reconfig_entry(log: tuple, action: str) -> tuple[int, Entry]:
    """MostRecentReconfigEntry: (offset, entry) of the last configuration command."""
    for o in range(len(log), 0, -1):
        entry = log[o - 1]
        if entry.command in CONFIG_COMMANDS:
            return o, entry
    # TLC: CHOOSE from an empty set
    raise EvaluationError(f"{action}: MostRecentReconfigEntry of a log without a configuration "
                          f"command (CHOOSE over an empty set)")


def config_for(offset: int, entry: Entry, commit_index: int) -> Config:
    """ConfigFor: the configuration a command sets, committed once below the HWM."""
    return Config(entry.value.id, entry.value.members, commit_index >= offset)


# ---- client writes --------------------------------------------------------------

def handle_client_request(model, st, s: int, out: list) -> None:
    """HandleClientRequest(s): the leader appends a client value, at most
    MaxValuesPerEpoch in its epoch, each value once."""
    if at(st.state, s) != Role.Leader:
        return
    log = at(st.log, s)
    epoch = at(st.current_epoch, s)
    if sum(1 for e in log if e.epoch == epoch and e.command == Command.AppendCommand) \
            >= model.max_values_per_epoch:
        return
    single = len(at(st.config, s).members) == 1
    for v in model.values:
        if v in st.inv_sent:
            continue
        new_log = log + (Entry(Command.AppendCommand, epoch, v),)
        ch = {"log": put(st.log, s, new_log),
              "pending_ack": put(st.pending_ack, s, at(st.pending_ack, s) | {v}),
              "inv_sent": st.inv_sent | {v}}
        if single:
            ch["hwm"] = put(st.hwm, s, len(new_log))
            if leads_alone(model, st, s) and not model.storage:
                ack_single_voter(st, s, ch)
        out.append((model.act("HandleClientRequest", s), st._replace(**ch)))


def leads_alone(model, st, s: int) -> bool:
    """SingleVoterLeads: s leads a configuration of itself alone, whose
    majority its own end offset is (LeaderState.updateLocalState)."""
    return model.single_voter_leads and at(st.config, s).members == {s}


def ack_single_voter(st, s: int, ch: dict) -> None:
    """A single voter's listeners learn of the commit (KafkaRaftClient.poll:
    pollListeners, after pollCurrentState has flushed the leader's log): its
    pending values up to its high watermark are acknowledged."""
    hwm = ch.get("hwm", st.hwm)[s - 1]
    pending = ch.get("pending_ack", st.pending_ack)[s - 1]
    log = ch.get("log", st.log)[s - 1]
    done = pending & {e.value for e in log[:hwm]}
    if done:
        ch["pending_ack"] = put(ch.get("pending_ack", st.pending_ack), s, pending - done)
        ch["inv_pos_acked"] = ch.get("inv_pos_acked", st.inv_pos_acked) | done


# ---- fetch requests --------------------------------------------------------------

def send_fetch_request(model, st, s: int, peer: int, out: list) -> None:
    """SendFetchRequest(s, peer): a follower fetches from its leader; an
    unattached voter from any voter (which names the leader if it knows it);
    an observer whose fetches time out from any server."""
    fs = at(st.fetch_state, s)
    state = at(st.state, s)
    log = at(st.log, s)
    times = 0
    if fs.pending_fetch is None:
        if state == Role.Follower and at(st.leader, s) == peer:
            h = helps_make_progress(model, st, s, peer, len(log) + 1)
            if h and not in_prevote_cycle(model, st, s, peer):
                times += h
        elif state == Role.Unattached and is_voter(st, s) and valid_peer(model, st, s, peer):
            times += 1
    if state == Role.Follower and is_observer(st, s):
        f = fetch_can_timeout(st, s)
        if f and maybe_not_same_peer_again(model, st, s, peer):
            times += f
    if not times:
        return
    req = FetchRequest(MsgType.FetchRequest, at(st.current_epoch, s), len(log) + 1,
                       log[-1].epoch if log else 0, None, s, peer)
    ch = {"fetch_state": put(st.fetch_state, s, fs._replace(pending_fetch=req)),
          "net_messages": network.send(st, st.net_messages, req)}
    out.extend([(model.act("SendFetchRequest", s, peer), st._replace(**ch))] * times)


def _response(st, m, result, error, leader, hwm, entries=None, diverging=(None, None)):
    s = m.dest
    return FetchResponse(MsgType.FetchResponse, result, error, leader, at(st.current_epoch, s), hwm,
                         entries, diverging[0], diverging[1], s, m.source, m)


def reject_fetch_request(model, st, m, out: list) -> None:
    """RejectFetchRequest(s, peer): s is not the leader, or the epochs differ."""
    s = m.dest
    cur = at(st.current_epoch, s)
    if at(st.state, s) != Role.Leader:
        error = Error.NotLeader
    elif model.mutant.fetch_from_stale_epoch:
        return
    elif m.replica_epoch < cur:
        error = Error.FencedLeaderEpoch
    elif m.replica_epoch > cur:
        error = Error.UnknownLeader
    else:
        return
    net = network.reply(st, m, _response(st, m, FetchResult.NotOk, error, at(st.leader, s),
                                         at(st.hwm, s)))
    if net is not None:
        out.append((model.act("RejectFetchRequest", s, m.source), st._replace(**net)))


def diverging_fetch_request(model, st, m, out: list) -> None:
    """DivergingFetchRequest(s, peer): the follower's position is not in the
    leader's log: answer the last entry at or below its epoch."""
    s = m.dest
    if at(st.state, s) != Role.Leader or (m.replica_epoch != at(st.current_epoch, s)
                                          and not model.mutant.fetch_from_stale_epoch):
        return
    log = at(st.log, s)
    if valid_fetch_position(log, m):
        return
    offset, epoch = end_offset_for_epoch(log, m.last_fetched_epoch)
    resp = _response(st, m, FetchResult.Diverging, None, at(st.leader, s), at(st.hwm, s),
                     diverging=(epoch, offset + 1))
    net = network.reply(st, m, resp)
    if net is not None:
        out.append((model.act("DivergingFetchRequest", s, m.source), st._replace(**net)))


def new_high_watermark(model, st, s: int, ends: tuple, action: str) -> int:
    """NewHighwaterMark(s, ends): the highest offset a majority of the
    configuration holds, if it is of the current epoch; else the HWM. A
    leader its own RemoveVoter took out of the configuration does not count
    itself."""
    log = at(st.log, s)
    members = at(st.config, s).members
    known = fmap_domain(ends)
    missing = members - known
    if missing and log:
        raise EvaluationError(f"{action}: the leader's follower end offsets have no entry for "
                              f"{sorted(missing)} (function applied outside its domain)")
    self_counted = s not in members and model.mutant.removed_voter_counted
    for o in range(len(log), 0, -1):
        # the leader counts itself (if a member) for its whole log
        agree = frozenset(k for k in members if k == s or fmap_get(ends, k) >= o)
        if model.mutant.hwm_needs_all_voters:
            enough = agree == members
        else:
            enough = is_quorum(agree, members) or (self_counted and 2 * (len(agree) + 1) > len(members))
        if enough:
            return o if log[o - 1].epoch == at(st.current_epoch, s) else at(st.hwm, s)
    return at(st.hwm, s)


def _removes_leader(log: tuple, s: int, hwm: int, new_hwm: int) -> bool:
    """EntryRemovesServerFromCluster: the new HWM commits a RemoveVoter of s."""
    return any(log[o - 1].command == Command.RemoveVoterCommand and s not in log[o - 1].value.members
               for o in range(hwm + 1, new_hwm + 1))


def accept_fetch_request(model, st, m, out: list) -> None:
    """AcceptFetchRequest(s, peer): the leader answers a fetch at a valid
    position with the entry there (if any) and, for a voter, records its
    end offset and may advance the HWM."""
    s, peer = m.dest, m.source
    if at(st.state, s) != Role.Leader or (m.replica_epoch != at(st.current_epoch, s)
                                          and not model.mutant.fetch_from_stale_epoch):
        return
    config = at(st.config, s)
    if peer not in config.members:
        return
    log = at(st.log, s)
    times = valid_fetch_position(log, m)
    if not times:
        return
    action = model.act("AcceptFetchRequest", s, peer)
    if m.fetch_offset < 1:
        # a new server's first fetch (offset 0) at a valid position: only
        # fetch_from_stale_epoch lets a fetch of epoch 0 get here; TLC stops
        raise EvaluationError(f"AcceptFetchRequest: log[{s}][{m.fetch_offset}] of server {s}'s "
                              f"log (function applied outside its domain 1..{len(log)})")
    entries = () if m.fetch_offset > len(log) else (log[m.fetch_offset - 1],)
    hwm = at(st.hwm, s)
    # The reference's HandleObserverFetch is unreachable: peer is a member of
    # s's configuration, so IsPeerVoter(s, peer) holds (HandleVoterFetch).
    flwr = at(st.flwr_end_offset, s)
    # the fetch asks for fetch_offset: the follower holds the entries before it
    end = m.fetch_offset if model.mutant.hwm_without_majority else m.fetch_offset - 1
    ends = flwr if peer not in fmap_domain(flwr) else tuple(
        (k, end if k == peer else v) for k, v in flwr)
    new_hwm = new_high_watermark(model, st, s, ends, "AcceptFetchRequest")
    leaves = new_hwm > hwm and _removes_leader(log, s, hwm, new_hwm)
    ch: dict = {}
    if new_hwm > hwm:
        offset, entry = most_recent_reconfig_entry(log, "AcceptFetchRequest")
        new_config = config_for(offset, entry, new_hwm)
        pending = at(st.pending_ack, s)
        committed = {log[i - 1].value for i in range(hwm + 1, new_hwm + 1)}
        to_ack = pending & committed
        ch["config"] = put(st.config, s, new_config)
        ch["inv_pos_acked"] = st.inv_pos_acked | to_ack if to_ack else st.inv_pos_acked
        if leaves:
            # AdvanceHwmAndResign: it committed its own removal
            apply_state(st, s, to_resigned(st, s), ch)
            ch["flwr_end_offset"] = put(st.flwr_end_offset, s, ())
            ch["pending_ack"] = put(st.pending_ack, s, EMPTY)
            rest = pending - to_ack
            ch["inv_neg_acked"] = st.inv_neg_acked | rest if rest else st.inv_neg_acked
            ch["hwm"] = put(st.hwm, s, 0)
        else:
            ch["pending_ack"] = put(st.pending_ack, s, pending - to_ack if to_ack else pending)
            known = fmap_domain(ends)
            ch["flwr_end_offset"] = put(st.flwr_end_offset, s, fmap(
                new_config.members, lambda k: fmap_get(ends, k) if k in known else 0))
            ch["hwm"] = put(st.hwm, s, new_hwm)
    else:
        ch["flwr_end_offset"] = put(st.flwr_end_offset, s, ends)
    if model.fetch_check_quorum and not leaves:
        heard = at(st.fetched_voters, s)
        if peer not in heard:
            ch["fetched_voters"] = put(st.fetched_voters, s, heard | {peer})
    resp = _response(st, m, FetchResult.Ok, None, None if leaves else at(st.leader, s),
                     min(new_hwm, m.fetch_offset), entries)
    net = network.reply(st, m, resp)
    if net is None:
        return
    ch.update(net)
    out.extend([(action, st._replace(**ch))] * times)


# ---- fetch responses -------------------------------------------------------------

def handle_fetch_response(model, st, m, out: list) -> None:
    """HandleFetchResponse(s, peer): append the entry or truncate to the
    diverging position, take the leader's HWM and switch to the log's last
    configuration; or, for an error or another epoch, the transition it
    implies."""
    s, peer = m.dest, m.source
    fs = at(st.fetch_state, s)
    if fs.pending_fetch != m.correlation:
        return
    t, handled = maybe_handle_common_response(st, s, m.leader, m.replica_epoch, m.error)
    ch: dict = {}
    if handled:
        apply_state(st, s, t, ch)
    else:
        log = at(st.log, s)
        if m.result == FetchResult.Ok:
            new_log = log + m.entries[:1]
        elif m.result == FetchResult.Diverging:
            new_log = truncate_log(log, m)
        else:
            new_log = log
        offset, entry = most_recent_reconfig_entry(new_log, "HandleFetchResponse")
        switch_configuration(st, s, config_for(offset, entry, m.hwm), t, ch)
        if new_log != log:
            ch["log"] = put(st.log, s, new_log)
            if model.storage and len(new_log) < at(st.flushed, s):
                ch["flushed"] = put(st.flushed, s, len(new_log))  # a truncation reaches the disk
        if m.result == FetchResult.Ok:
            hwm = m.hwm
            if model.monotonic_follower_hwm:
                hwm = max(hwm, at(st.hwm, s))  # FollowerState.updateHighWatermark refuses a decrease
            ch["hwm"] = put(st.hwm, s, hwm)
    if model.new_follower_state and (t.leader, t.epoch) != (at(st.leader, s), at(st.current_epoch, s)):
        # QuorumState.transitionToFollower: a new FollowerState, whose first
        # fetch is this one only if the response is handled as its answer
        success = not handled and m.error is None
    else:
        success = fs.has_fetch_success or m.error is None
    ch["fetch_state"] = put(st.fetch_state, s, FetchState(
        None, LastFetchRes(m.source, m.error), success))
    ch.update(network.discard(st, m))
    out.append((model.act("HandleFetchResponse", s, peer), st._replace(**ch)))


def switch_configuration(st, s: int, config: Config, t, ch: dict) -> None:
    """MaybeSwitchConfigurations: take the log's last configuration; a voter
    it removes, or an observer it adds, becomes a Follower."""
    ch["leader"] = put(st.leader, s, t.leader)
    ch["current_epoch"] = put(st.current_epoch, s, t.epoch)
    ch["config"] = put(st.config, s, config)
    voter = is_voter(st, s)
    if voter != (s in config.members):
        ch["state"] = put(st.state, s, Role.Follower)
        ch["votes_recv"] = put(st.votes_recv, s, EMPTY)
    else:
        ch["state"] = put(st.state, s, t.state)
        ch["votes_recv"] = put(st.votes_recv, s, t.votes_recv)
    update_follower_offsets(st, s, config.members, ch)
