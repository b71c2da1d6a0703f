"""The trace view of the `kraft_quorum` model: how a person reads a KRaft
quorum counterexample - each server's role and epoch, whom it follows and
voted for, its configuration (voter set), its log with the committed prefix
(up to its high watermark) marked, the votes, fetches and BeginQuorumEpoch
requests between servers, and a headline that says what broke (two leaders
in one epoch, an acknowledged value missing from the leader or from every
voter, logs that differ below their high watermarks, a forbidden transition).

Servers are named s1, s2, ... after the model's 1-based ids; a server started
later (StartNewServer) is also named by its host and disk id ("s4 (h1, disk
1)"). Log entries read offset:value e<epoch>, with the configuration
commands and the leader's first entry by name (InitCluster {s1,s2,s3},
AddVoter s4, RemoveVoter s2, LeaderChange). The engine's renderers
(checker/) find this view through the ModelDef's view (TRACE_VIEW) and know
nothing of KRaft.
"""
from __future__ import annotations

import html
from typing import Any

from model.kraft_quorum.state import (
    BeginQuorumEpoch, Command, Config, ConfigValue, Entry, Error, FetchRequest, FetchResponse,
    FetchResult, FetchState, MsgType, Role, ServerId)
from model.view import LOG_CSS, Arrow, Explanation, TraceView, itf, promise_broke_at, render_scalar

# variables that are functions over the started servers (tuples indexed by id - 1)
PER_SERVER = ("state", "current_epoch", "leader", "voted_for", "votes_recv", "config", "log",
              "hwm", "flushed", "pending_ack", "flwr_end_offset", "fetch_state", "power_losses",
              "server_ids", "fetched_voters")
# how step_lines names a per-server field
FIELD_NAMES = {"current_epoch": "epoch", "voted_for": "voted for", "leader": "leader",
               "votes_recv": "votes", "config": "config", "hwm": "HWM",
               "pending_ack": "pending acks", "fetch_state": "fetch",
               "flwr_end_offset": "follower end offsets", "flushed": "flushed",
               "power_losses": "power losses", "server_ids": "identity",
               "fetched_voters": "fetched this check-quorum period"}
AUX_NAMES = {"prevote_ctr": "pre-votes", "election_ctr": "elections",
             "disruptive_ctr": "disruptive triggers", "crash_ctr": "disk losses",
             "restart_ctr": "restarts", "add_reconfig_ctr": "AddVoter commands",
             "remove_reconfig_ctr": "RemoveVoter commands"}
# the actions that receive a message of each type (their params: (dest, source))
RECEIVERS = {
    MsgType.RequestVoteRequest: ("HandleVoteRequest",),
    MsgType.RequestVoteResponse: ("HandleVoteResponse",),
    MsgType.BeginQuorumEpochRequest: ("AcceptBeginQuorumRequest",),
    MsgType.FetchRequest: ("RejectFetchRequest", "DivergingFetchRequest", "AcceptFetchRequest"),
    MsgType.FetchResponse: ("HandleFetchResponse",),
}
KIND_COLORS = {"PreVote": "#8250df", "Vote": "#6639ba", "PreVoteResp": "#bc4c00", "VoteResp": "#bc4c00",
               "BeginQuorumEpoch": "#cf222e", "Fetch": "#0969da", "FetchResp": "#1a7f37",
               "ClientWrite": "#57606a", "ClientAck": "#1b5e20", "Admin": "#9a6700"}


# ---- names and values ------------------------------------------------------------------

def sname(s) -> str:
    """s3; none for Nil."""
    return "none" if s is None else f"s{s}"


def fmt_servers(ss) -> str:
    return "{" + ",".join(sname(s) for s in sorted(ss)) + "}"


def fmt_list(ss) -> str:
    """'s1, s3' (nobody: 'nobody')."""
    return ", ".join(sname(s) for s in sorted(ss)) or "nobody"


def fmt_values(vs) -> str:
    return "{" + ", ".join(sorted(map(str, vs))) + "}"


def fmt_identity(sid: ServerId) -> str:
    return sid.host if sid.disk_id == 0 else f"{sid.host}, disk {sid.disk_id}"


def long_name(st, s: int) -> str:
    """s4 (h1, disk 1): a server with its host (and its disk, if not an initial one)."""
    if s > len(st.server_ids):
        return sname(s)
    return f"{sname(s)} ({fmt_identity(st.server_ids[s - 1])})"


def fmt_command(e: Entry) -> str:
    """What an entry holds: a client value, or the command by name."""
    c = e.command
    if c == Command.AppendCommand:
        return str(e.value)
    if c == Command.LeaderChangeRecord:
        return "LeaderChange"
    v = e.value
    if c == Command.InitClusterCommand:
        return f"InitCluster {fmt_servers(v.members)}"
    if c == Command.AddVoterCommand:
        return f"AddVoter {sname(v.server)}"
    if c == Command.RemoveVoterCommand:
        return f"RemoveVoter {sname(v.server)}"
    return c.name


def fmt_entry(offset: int, e: Entry) -> str:
    """offset:value e<epoch>."""
    return f"{offset}:{fmt_command(e)} e{e.epoch}"


def fmt_entries(entries, start: int = 1) -> str:
    return ", ".join(fmt_entry(start + i, e) for i, e in enumerate(entries))


def fmt_log(log) -> str:
    return "[" + fmt_entries(log) + "]"


def fmt_config(c: Config) -> str:
    if c.id == 0 and not c.members:
        return "none"
    return f"#{c.id} {fmt_servers(c.members)} " + ("committed" if c.committed else "uncommitted")


def fmt_fetch_state(fs: FetchState) -> str:
    parts = []
    p = fs.pending_fetch
    parts.append(f"Fetch @{p.fetch_offset} to {sname(p.dest)} pending" if p is not None
                 else "no fetch pending")
    if fs.last_fetch_res is not None:
        last = fs.last_fetch_res
        parts.append(f"last answer from {sname(last.peer)} "
                     + (last.error.name if last.error is not None else "ok"))
    if fs.has_fetch_success:
        parts.append("fetched from its leader")
    return ", ".join(parts)


def fmt_ends(fm) -> str:
    return "{" + ", ".join(f"{sname(k)}:{o}" for k, o in fm) + "}"


def fmt(name: str, v: Any) -> str:
    """A per-server value or a variable, readably."""
    if name == "log":
        return fmt_log(v)
    if name == "config":
        return fmt_config(v)
    if name == "state":
        return v.name
    if name in ("voted_for", "leader"):
        return sname(v)
    if name in ("votes_recv", "fetched_voters"):
        return fmt_servers(v)
    if name in ("pending_ack", "inv_sent", "inv_pos_acked", "inv_neg_acked"):
        return fmt_values(v)
    if name == "fetch_state":
        return fmt_fetch_state(v)
    if name == "flwr_end_offset":
        return fmt_ends(v)
    if name == "server_ids":
        return fmt_identity(v)
    if name in ("net_messages", "net_messages_processed"):
        return "{" + "; ".join(sorted(fmt_message(m) for m in v)) + "}"
    if name == "net_connectivity":
        return "{" + ", ".join(f"s{a}-s{b}" for a, b in sorted(v)) + "}"
    if name == "aux_ctrs":
        return ", ".join(f"{AUX_NAMES.get(f, f)} {x}" for f, x in zip(v._fields, v))
    if v is None:
        return "none"
    text = render_scalar(v)
    return text if text is not None else str(v)


# ---- messages ------------------------------------------------------------------------------

def short_message(m) -> str:
    """A label for the diagram: PreVote e1, VoteResp granted, Fetch @3 e2, Diverging e1@2, ..."""
    t = m.type
    if t == MsgType.RequestVoteRequest:
        return f"{message_kind(m)} e{m.replica_epoch}"
    if t == MsgType.RequestVoteResponse:
        what = m.error.name if m.error is not None else ("granted" if m.vote_granted else "refused")
        return f"{message_kind(m)} {what}"
    if t == MsgType.BeginQuorumEpochRequest:
        return f"BeginQuorumEpoch e{m.replica_epoch}"
    if t == MsgType.FetchRequest:
        return f"Fetch @{m.fetch_offset} e{m.replica_epoch}" + (" observer" if m.observer else "")
    if m.result == FetchResult.Diverging:
        return f"Diverging e{m.diverging_epoch}@{m.diverging_end_offset}"
    if m.result == FetchResult.NotOk:
        return m.error.name if m.error is not None else "FetchResp NotOk"
    n = len(m.entries or ())
    return f"FetchResp Ok {n} entr{'y' if n == 1 else 'ies'} HWM {m.hwm}"


def message_fields(m) -> str:
    t = m.type
    if t == MsgType.RequestVoteRequest:
        return (f"{'pre-vote' if m.pre_vote else 'vote'} in epoch {m.replica_epoch}, last entry "
                f"offset {m.last_log_offset} epoch {m.last_log_epoch}")
    if t == MsgType.RequestVoteResponse:
        what = ("error " + m.error.name if m.error is not None
                else "granted" if m.vote_granted else "refused")
        return (f"{'pre-vote' if m.pre_vote else 'vote'} {what}, epoch {m.replica_epoch}, "
                f"leader {sname(m.leader)}")
    if t == MsgType.BeginQuorumEpochRequest:
        why = {True: ", resent", False: "", None: ", to an added voter"}[m.resend]
        return f"epoch {m.replica_epoch}{why}"
    if t == MsgType.FetchRequest:
        return (f"offset {m.fetch_offset}, last fetched epoch {m.last_fetched_epoch}, epoch "
                f"{m.replica_epoch}" + (", a new server's first fetch (observer)" if m.observer else ""))
    parts = [m.result.name]
    if m.error is not None:
        parts.append(f"error {m.error.name}")
    if m.result == FetchResult.Ok:
        parts.append(f"entries [{fmt_entries(m.entries or (), m.correlation.fetch_offset)}]")
    if m.result == FetchResult.Diverging:
        parts.append(f"diverging epoch {m.diverging_epoch} end offset {m.diverging_end_offset}")
    parts += [f"HWM {m.hwm}", f"leader {sname(m.leader)}", f"epoch {m.replica_epoch}",
              f"answers {short_message(m.correlation)}"]
    return ", ".join(parts)


# one name per message, on the diagram, in the text and in the network column
# (the legend maps them to Kafka's RPCs: VoteRequest with PreVote true or false, ...)
MSG_NAMES = {MsgType.BeginQuorumEpochRequest: "BeginQuorumEpoch", MsgType.FetchRequest: "Fetch",
             MsgType.FetchResponse: "FetchResp"}


def fmt_message(m) -> str:
    return f"{message_kind(m)} {sname(m.source)} -> {sname(m.dest)} ({message_fields(m)})"


def message_kind(m) -> str:
    if m.type == MsgType.RequestVoteRequest:
        return "PreVote" if m.pre_vote else "Vote"
    if m.type == MsgType.RequestVoteResponse:
        return "PreVoteResp" if m.pre_vote else "VoteResp"
    return MSG_NAMES[m.type]


# ---- reading a state ---------------------------------------------------------------------

def n_servers(st) -> int:
    return len(st.server_ids)


def role(st, s: int) -> Role:
    return st.state[s - 1]


def is_voter(st, s: int) -> bool:
    return role(st, s) != Role.DeadNoState and s in st.config[s - 1].members


def in_log(log, v) -> bool:
    return any(e.command == Command.AppendCommand and e.value == v for e in log)


def offset_of(log, v) -> int | None:
    for o, e in enumerate(log, 1):
        if e.command == Command.AppendCommand and e.value == v:
            return o
    return None


def connected(st, a: int, b: int) -> bool:
    return a != b and ((a, b) if a < b else (b, a)) in st.net_connectivity


def cut_pairs(st) -> list[tuple[int, int]]:
    n = n_servers(st)
    return [(a, b) for a in range(1, n + 1) for b in range(a + 1, n + 1) if not connected(st, a, b)]


def is_current_leader(st, s: int) -> bool:
    """A leader no server has seen a higher epoch than (the invariants' IsCurrentLeader)."""
    return role(st, s) == Role.Leader and not any(e > st.current_epoch[s - 1]
                                                  for e in st.current_epoch)


def _esc(s: Any) -> str:
    return html.escape(str(s))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _kinds(messages) -> dict[str, int]:
    """How many messages of each kind are in flight."""
    kinds: dict[str, int] = {}
    for m in messages:
        kinds[message_kind(m)] = kinds.get(message_kind(m), 0) + 1
    return kinds


class KraftQuorumView(TraceView):
    name = "kraft_quorum"
    kind_colors = KIND_COLORS
    page_css = LOG_CSS
    legend = ("green record: committed (at or below the server's HWM)",)
    abbreviations = (("e N", "the server's current epoch (in a log record: the epoch it was "
                             "appended in)"), ("HWM", "high watermark"),
                     ("ends", "the leader's record of each follower's log end offset"),
                     ("1 InitCluster e1", "a log record: its offset, its command, its epoch"),
                     ("sN, offsets", "server N (node id N, from 1); log offsets count from 1, as "
                                     "in the reference TLA+ (Kafka counts from 0)"),
                     ("PreVote, Vote", "Kafka's VoteRequest with PreVote true, false (KIP-996); "
                                       "PreVoteResp, VoteResp: its VoteResponse"),
                     ("FetchResp", "Kafka's FetchResponse"))

    def __init__(self, model: Any, order_key=None):
        super().__init__(model, order_key)
        constants = getattr(model, "constants", {}) or {}
        # the servers ever started: StartNewServer adds them up to MaxSpawnedServers
        self.max_servers = int(getattr(model, "max_servers", 0) or constants.get("MaxSpawnedServers", 0))
        self.servers = tuple(range(1, self.max_servers + 1))
        self.client_lane = self.max_servers

    # ---- text ------------------------------------------------------------------------

    @staticmethod
    def _params(action) -> tuple:
        return tuple(getattr(action, "params", ()) or ())

    def step_title(self, action) -> str:
        name = getattr(action, "name", str(action))
        p = self._params(action)
        return f"{name}({', '.join(sname(x) for x in p)})" if p else name

    @staticmethod
    def _new_messages(prev, st) -> frozenset:
        return st.net_messages - prev.net_messages

    @staticmethod
    def _got(prev, st, name: str, s: int, peer: int):
        """The message action `name`(s, peer) received (None: it received none)."""
        for m in prev.net_messages - st.net_messages:
            if m.dest == s and m.source == peer and name in RECEIVERS.get(m.type, ()):
                return m
        return None

    def _received(self, prev, st, action):
        p = self._params(action)
        return self._got(prev, st, getattr(action, "name", ""), *p) if len(p) == 2 else None

    @staticmethod
    def _answer(prev, st, s: int, peer: int, mtype):
        """The response s sent peer in this step (one already in flight counts too)."""
        for msgs in (st.net_messages - prev.net_messages, st.net_messages):
            for m in msgs:
                if m.type == mtype and m.source == s and m.dest == peer:
                    return m
        return None

    @staticmethod
    def _became(prev, st, s: int) -> str:
        """'Follower of s2 in epoch 2' if the step changed s's role or epoch, else ''."""
        if s > n_servers(prev):
            return ""
        r0, r1 = role(prev, s), role(st, s)
        e0, e1 = prev.current_epoch[s - 1], st.current_epoch[s - 1]
        l0, l1 = prev.leader[s - 1], st.leader[s - 1]
        if (r0, e0, l0) == (r1, e1, l1):
            return ""
        if r1 in (Role.IllegalState, Role.DeadNoState):
            return r1.name
        if r1 == Role.Follower:
            return f"Follower of {sname(l1)} in epoch {e1}"
        if r1 == Role.Unattached and l1 is not None:
            return f"Unattached in epoch {e1} (knowing leader {sname(l1)})"
        return f"{r1.name} in epoch {e1}"

    def _then(self, prev, st, s: int) -> str:
        became = self._became(prev, st, s)
        return f"; it becomes {became}" if became else ""

    @staticmethod
    def _failed(prev, st) -> str:
        lost = sorted(map(str, st.inv_neg_acked - prev.inv_neg_acked))
        if not lost:
            return ""
        return (f"; the pending write {lost[0]} fails" if len(lost) == 1
                else f"; the pending writes {', '.join(lost)} fail")

    @staticmethod
    def _lost_sends(st, s: int, peers) -> str:
        """' (the one to s1 is lost: not connected)' for the peers s cannot reach."""
        cut = [p for p in peers if not connected(st, s, p)]
        if not cut:
            return ""
        return (f" (the one to {fmt_list(cut)} is lost: not connected)" if len(cut) == 1
                else f" (those to {fmt_list(cut)} are lost: not connected)")

    @staticmethod
    def _disruptive(prev, st) -> bool:
        return st.aux_ctrs.disruptive_ctr > prev.aux_ctrs.disruptive_ctr

    def _asks(self, prev, st, s: int, pre_vote: bool) -> str:
        peers = sorted(st.config[s - 1].members - {s})
        what = "pre-votes" if pre_vote else "votes"
        return f"asks {fmt_list(peers)} for {what}" + self._lost_sends(st, s, peers)

    def _timeout(self, prev, st, s: int, what: str) -> str:
        r, e = role(st, s), st.current_epoch[s - 1]
        cause = ("; a disruptive trigger: nothing made it time out"
                 if self._disruptive(prev, st) else "")
        if r == Role.Prospective:
            text = f"{what}: it becomes Prospective in epoch {e} and {self._asks(prev, st, s, True)}"
        elif r == Role.Candidate:
            text = (f"{what}: it becomes Candidate in epoch {e}, votes for itself and "
                    f"{self._asks(prev, st, s, False)}")
        else:
            text = what + self._then(prev, st, s)
        return text + cause

    def describe(self, action, prev, state) -> str:
        name = getattr(action, "name", "")
        p = self._params(action)
        s = p[0] if p else None
        peer = p[1] if len(p) > 1 else None
        fn = getattr(self, "_d_" + name, None)
        if fn is not None:
            return fn(prev, state, s, peer)
        # an action this view does not know yet: say who changed
        who = [sname(x) for x in range(1, n_servers(state) + 1)
               if x > n_servers(prev) or any(getattr(prev, f)[x - 1] != getattr(state, f)[x - 1]
                                             for f in PER_SERVER if f in state._fields)]
        return f"{name}: changes {', '.join(who) or 'no server'}"

    # one sentence per action (s: the first parameter, peer: the second)

    def _d_StartNewServer(self, prev, st, s, peer) -> str:
        new = n_servers(st)
        firsts = [m for m in self._new_messages(prev, st) if m.source == new]
        to = f" and sends its first fetch to leader {sname(firsts[0].dest)}" if firsts else (
            " (its first fetch is lost: not connected)")
        return (f"{long_name(st, new)} starts with an empty disk, an observer of configuration "
                f"{fmt_config(st.config[new - 1])},{to}")

    def _d_ChangeNetworkConnectivity(self, prev, st, s, peer) -> str:
        cut = cut_pairs(st)
        links = ", ".join(f"s{a}-s{b}" for a, b in cut) + " cut" if cut else "every pair connected"
        if prev.net_connectivity == st.net_connectivity:
            return f"a network change that leaves the links as they were ({links})"
        text = ("the network heals: every pair of servers is connected" if not cut else
                f"the network changes: {links}")
        dropped = len(prev.net_messages - st.net_messages)
        if dropped:
            text += f"; {_plural(dropped, 'message')} in flight between them dropped"
        return text

    def _d_RestartWithState(self, prev, st, s, peer) -> str:
        text = f"{sname(s)} restarts and keeps its disk (log, epoch, vote)"
        if role(prev, s) != role(st, s):
            text += f": {role(prev, s).name} -> {role(st, s).name} in epoch {st.current_epoch[s - 1]}"
        text += f"; HWM {prev.hwm[s - 1]} -> {st.hwm[s - 1]} (the HWM lives in memory)"
        if prev.voted_for[s - 1] is not None and st.voted_for[s - 1] is None:
            text += f"; it has forgotten its vote for {sname(prev.voted_for[s - 1])}"
        return text + self._failed(prev, st)

    def _d_CrashLoseState(self, prev, st, s, peer) -> str:
        text = (f"{sname(s)} crashes and loses its disk for good (its log {fmt_log(prev.log[s - 1])} "
                f"is gone); its links are cut")
        dropped = len(prev.net_messages - st.net_messages)
        if dropped:
            text += f", {_plural(dropped, 'message')} in flight dropped"
        return text + self._failed(prev, st)

    def _d_RestartAfterDiskLoss(self, prev, st, s, peer) -> str:
        return (f"{sname(s)} restarts under its node id with an empty disk: an Unattached voter of "
                f"configuration {fmt_config(st.config[s - 1])}")

    def _d_PowerLoss(self, prev, st, s, peer) -> str:
        a, b = prev.log[s - 1], st.log[s - 1]
        text = f"{sname(s)} loses power: its log falls back to the flushed offset {st.flushed[s - 1]}"
        text += (f" (loses {fmt_entries(a[len(b):], len(b) + 1)})" if len(b) < len(a)
                 else " (nothing unflushed)")
        if role(prev, s) != role(st, s):
            text += f"; it restarts as {role(st, s).name}"
        return text + self._failed(prev, st)

    def _d_FlushLog(self, prev, st, s, peer) -> str:
        return (f"{sname(s)} flushes its log to disk: flushed offset {prev.flushed[s - 1]} -> "
                f"{st.flushed[s - 1]}")

    @staticmethod
    def _appended_config(st, s: int) -> str:
        log = st.log[s - 1]
        return (f"it appends {fmt_entry(len(log), log[-1])} and switches to configuration "
                f"{fmt_config(st.config[s - 1])}")

    def _d_AcceptAddVoterRequest(self, prev, st, s, peer) -> str:
        x = st.log[s - 1][-1].value.server
        text = f"leader {sname(s)} adds {sname(x)} as a voter: {self._appended_config(st, s)}"
        if any(m.type == MsgType.BeginQuorumEpochRequest and m.dest == x
               for m in self._new_messages(prev, st)):
            text += f", and sends {sname(x)} BeginQuorumEpoch e{st.current_epoch[s - 1]}"
        return text

    def _d_AcceptRemoveVoterRequest(self, prev, st, s, peer) -> str:
        x = st.log[s - 1][-1].value.server
        text = f"leader {sname(s)} removes {sname(x)}: {self._appended_config(st, s)}"
        if x == s:
            text += " (it leads as an observer until the command commits)"
        return text

    def _d_VoterFetchTimeout(self, prev, st, s, peer) -> str:
        return self._timeout(prev, st, s, f"{sname(s)}'s fetch times out")

    def _d_VoterElectionTimeout(self, prev, st, s, peer) -> str:
        return self._timeout(prev, st, s, f"{sname(s)}'s election times out")

    def _d_ResignedElectionTimeout(self, prev, st, s, peer) -> str:
        if role(st, s) == Role.Candidate:
            return self._timeout(prev, st, s, f"resigned {sname(s)}'s election times out")
        return f"resigned {sname(s)}'s election times out" + self._then(prev, st, s)

    def _d_ConcludePreVote(self, prev, st, s, peer) -> str:
        votes = fmt_servers(prev.votes_recv[s - 1])
        if role(st, s) == Role.Candidate:
            return (f"{sname(s)} wins the pre-vote (granted by {votes}): it becomes Candidate in epoch "
                    f"{st.current_epoch[s - 1]} and {self._asks(prev, st, s, False)}")
        became = self._became(prev, st, s)
        return (f"{sname(s)}'s pre-vote ends without a majority (granted by {votes})"
                + (f": back to {became}" if became else ""))

    def _d_BecomeLeader(self, prev, st, s, peer) -> str:
        e = st.current_epoch[s - 1]
        log = st.log[s - 1]
        peers = sorted(st.config[s - 1].members - {s})
        return (f"{sname(s)} wins the election: leader of epoch {e} (votes "
                f"{fmt_servers(prev.votes_recv[s - 1])}); it appends {fmt_entry(len(log), log[-1])} "
                f"and sends BeginQuorumEpoch to {fmt_list(peers)}" + self._lost_sends(st, s, peers))

    def _d_HandleClientRequest(self, prev, st, s, peer) -> str:
        log = st.log[s - 1]
        e = log[-1]
        text = f"a client writes {e.value} to leader {sname(s)} (offset {len(log)}, epoch {e.epoch})"
        if st.hwm[s - 1] != prev.hwm[s - 1]:
            text += f"; HWM {prev.hwm[s - 1]} -> {st.hwm[s - 1]} at once (a single voter)"
        return text

    def _d_CheckQuorumResign(self, prev, st, s, peer) -> str:
        why = (" without a cause (a disruptive trigger)" if self._disruptive(prev, st)
               else ": its check-quorum timer expires before a majority fetched"
               if hasattr(prev, "fetched_voters") else ": it hears from too few voters")
        return (f"leader {sname(s)} resigns in epoch {st.current_epoch[s - 1]}{why}"
                + self._failed(prev, st))

    def _d_CheckQuorumRestart(self, prev, st, s, peer) -> str:
        heard = ", ".join(sname(x) for x in sorted(prev.fetched_voters[s - 1]))
        return (f"leader {sname(s)}'s check-quorum period ends with fetches from a majority "
                f"({heard}): its timer starts anew")

    def _d_HandleVoteRequest(self, prev, st, s, peer) -> str:
        m = self._got(prev, st, "HandleVoteRequest", s, peer)
        resp = self._answer(prev, st, s, peer, MsgType.RequestVoteResponse)
        pre_vote = m.pre_vote if m is not None else resp is not None and resp.pre_vote
        kind = "pre-vote" if pre_vote else "vote"
        epoch = m.replica_epoch if m is not None else st.current_epoch[s - 1]
        if resp is None:
            return f"{sname(s)} handles {sname(peer)}'s {kind} request (its answer is lost)" + \
                self._then(prev, st, s)
        if resp.error is not None:
            why = {Error.FencedLeaderEpoch:
                   f": its epoch {prev.current_epoch[s - 1]} is higher than {epoch}",
                   Error.InvalidRequest:
                   ": the request's last entry is of a later epoch than the request"}.get(resp.error, "")
            return f"{sname(s)} refuses {sname(peer)}'s {kind} request ({resp.error.name}{why})"
        if resp.vote_granted:
            text = (f"{sname(s)} grants {sname(peer)} its pre-vote" if kind == "pre-vote"
                    else f"{sname(s)} grants {sname(peer)} its vote in epoch {epoch}")
            ahead = self._log_ahead(prev, s, m)
            if ahead:
                text += f" although its own log is ahead ({ahead})"
        else:
            text = f"{sname(s)} refuses {sname(peer)} its {kind}" + self._refusal(prev, st, s, m)
        return text + self._then(prev, st, s)

    @staticmethod
    def _log_ahead(prev, s: int, m) -> str:
        """'last entry e1@2, the candidate's e1@1' when s's log is ahead of the
        candidate's (by epoch, then offset), else ''."""
        if m is None:
            return ""
        log = prev.log[s - 1]
        own = (log[-1].epoch if log else 0, len(log))
        if (m.last_log_epoch, m.last_log_offset) < own:
            return (f"last entry e{own[0]}@{own[1]}, the candidate's "
                    f"e{m.last_log_epoch}@{m.last_log_offset}")
        return ""

    def _refusal(self, prev, st, s: int, m) -> str:
        """Why s refused a (pre-)vote, as far as its state tells."""
        if m is None:
            return ""
        ahead = self._log_ahead(prev, s, m)
        if ahead:
            return f" (its own log is ahead: {ahead})"
        v = st.voted_for[s - 1]
        if not m.pre_vote and v is not None and v != m.source:
            return f" (it voted for {sname(v)} in epoch {st.current_epoch[s - 1]})"
        r = role(st, s)
        if r == Role.Follower and m.pre_vote:
            return f" (it is fetching from its leader {sname(st.leader[s - 1])})"
        if st.leader[s - 1] is not None and not m.pre_vote:
            return f" (it knows leader {sname(st.leader[s - 1])})"
        return f" (it is {r.name})"

    def _d_HandleVoteResponse(self, prev, st, s, peer) -> str:
        m = self._got(prev, st, "HandleVoteResponse", s, peer)
        kind = "pre-vote" if m is not None and m.pre_vote else "vote"
        before, after = prev.votes_recv[s - 1], st.votes_recv[s - 1]
        if peer in after - before:
            members = st.config[s - 1].members
            text = f"{sname(s)} counts {sname(peer)}'s {kind}: votes {fmt_servers(after)}"
            if 2 * len(after & members) > len(members):
                text += " - a majority"
        elif m is not None and m.vote_granted:
            text = f"{sname(s)} ignores {sname(peer)}'s granted {kind} (it no longer asks for it)"
        else:
            err = f" ({m.error.name})" if m is not None and m.error is not None else ""
            text = f"{sname(s)} reads {sname(peer)}'s refusal of its {kind}{err}"
        return text + self._then(prev, st, s)

    def _d_AcceptBeginQuorumRequest(self, prev, st, s, peer) -> str:
        m = self._got(prev, st, "AcceptBeginQuorumRequest", s, peer)
        e = m.replica_epoch if m is not None else st.current_epoch[s - 1]
        became = self._became(prev, st, s)
        text = f"{sname(s)} learns that {sname(peer)} leads epoch {e}"
        return text + (f": it becomes {became}" if became else " (it knew)") + self._failed(prev, st)

    def _d_ResendBeginQuorumEpochRequest(self, prev, st, s, peer) -> str:
        return (f"leader {sname(s)} resends BeginQuorumEpoch e{st.current_epoch[s - 1]} to "
                f"{sname(peer)} (the first was lost)")

    def _d_SendFetchRequest(self, prev, st, s, peer) -> str:
        req = st.fetch_state[s - 1].pending_fetch
        if req is None:
            return f"{sname(s)} fetches from {sname(peer)}"
        text = (f"{sname(s)} fetches from {sname(peer)} at offset {req.fetch_offset} (last fetched "
                f"epoch {req.last_fetched_epoch}, epoch {req.replica_epoch})")
        if req not in st.net_messages:
            text += "; the request is lost: not connected"
        return text

    def _d_RejectFetchRequest(self, prev, st, s, peer) -> str:
        m = self._got(prev, st, "RejectFetchRequest", s, peer)
        resp = self._answer(prev, st, s, peer, MsgType.FetchResponse)
        err = resp.error if resp is not None else None
        e, fe = prev.current_epoch[s - 1], m.replica_epoch if m is not None else "?"
        why = {Error.NotLeader: f"it is {role(prev, s).name}, not the leader",
               Error.FencedLeaderEpoch: f"the fetch's epoch {fe} is below its epoch {e}",
               Error.UnknownLeader: f"the fetch's epoch {fe} is above its epoch {e}"}.get(err, "")
        return (f"{sname(s)} rejects {sname(peer)}'s fetch: {err.name if err is not None else 'error'}"
                + (f" ({why})" if why else ""))

    def _d_DivergingFetchRequest(self, prev, st, s, peer) -> str:
        m = self._got(prev, st, "DivergingFetchRequest", s, peer)
        resp = self._answer(prev, st, s, peer, MsgType.FetchResponse)
        if m is None or resp is None:
            return f"{sname(s)} answers {sname(peer)}'s fetch with Diverging"
        return (f"{sname(s)} answers {sname(peer)}'s fetch at offset {m.fetch_offset} (last fetched "
                f"epoch {m.last_fetched_epoch}) with Diverging e{resp.diverging_epoch}@"
                f"{resp.diverging_end_offset}: its log has epoch {m.last_fetched_epoch} or below only "
                f"up to offset {resp.diverging_end_offset - 1}")

    def _d_AcceptFetchRequest(self, prev, st, s, peer) -> str:
        m = self._got(prev, st, "AcceptFetchRequest", s, peer)
        resp = self._answer(prev, st, s, peer, MsgType.FetchResponse)
        offset = m.fetch_offset if m is not None else "?"
        text = f"{sname(s)} accepts {sname(peer)}'s fetch at offset {offset}"
        h0, h1 = prev.hwm[s - 1], st.hwm[s - 1]
        acked = ", ".join(sorted(map(str, st.inv_pos_acked - prev.inv_pos_acked)))
        # committing a RemoveVoter of itself makes the leader resign (its HWM goes to 0)
        resigns = role(st, s) == Role.Resigned and role(prev, s) == Role.Leader
        if h0 != h1 and not resigns:
            text += f"; HWM {h0} -> {h1}" + (f", acknowledging {acked}" if acked else "")
        if resp is not None and resp.entries:
            text += f"; sends {fmt_entries(resp.entries, offset)}"
        c0, c1 = prev.config[s - 1], st.config[s - 1]
        if c1.committed and not c0.committed:
            text += f"; configuration {fmt_config(c1)}"
        if resigns:
            log = st.log[s - 1]
            removal = [o for o in range(h0 + 1, len(log) + 1)
                       if log[o - 1].command == Command.RemoveVoterCommand
                       and log[o - 1].value.server == s]
            what = f" ({fmt_entry(removal[-1], log[removal[-1] - 1])})" if removal else ""
            text += (f"; it commits its own removal{what}"
                     + (f", acknowledging {acked}," if acked else "") + " and resigns")
        return text + self._failed(prev, st)

    def _d_HandleFetchResponse(self, prev, st, s, peer) -> str:
        m = self._got(prev, st, "HandleFetchResponse", s, peer)
        a, b = prev.log[s - 1], st.log[s - 1]
        label = short_message(m) if m is not None else "answer"
        if len(b) > len(a) and b[:len(a)] == a:
            text = f"{sname(s)} appends {fmt_entries(b[len(a):], len(a) + 1)} from {sname(peer)}"
        elif len(b) < len(a):
            text = (f"{sname(s)} truncates its log to offset {len(b)} on {sname(peer)}'s {label} "
                    f"(drops {fmt_entries(a[len(b):], len(b) + 1)})")
        elif m is not None and m.result == FetchResult.Ok:
            text = f"{sname(s)} gets no new entry from {sname(peer)}"
        else:
            text = f"{sname(s)} handles {sname(peer)}'s {label}"
        h0, h1 = prev.hwm[s - 1], st.hwm[s - 1]
        if h0 != h1:
            text += f"; HWM {h0} -> {h1}"
        if prev.config[s - 1] != st.config[s - 1]:
            text += f"; configuration {fmt_config(st.config[s - 1])}"
        return text + self._then(prev, st, s)

    # ---- what a step changed -----------------------------------------------------------------

    @staticmethod
    def _field_diff(name: str, a, b) -> str:
        if name == "state":
            return f"{a.name} -> {b.name}"
        if name == "log":
            if len(b) > len(a) and b[:len(a)] == a:
                return "log + " + fmt_entries(b[len(a):], len(a) + 1)
            if len(b) < len(a) and a[:len(b)] == b:
                return (f"log truncated to offset {len(b)} (drops "
                        f"{fmt_entries(a[len(b):], len(b) + 1)})")
            return f"log {fmt_log(a)} -> {fmt_log(b)}"
        if name == "fetch_state":
            parts = []
            if a.pending_fetch != b.pending_fetch:
                def pending(p):
                    return "none" if p is None else f"{short_message(p)} to {sname(p.dest)}"
                parts.append(f"pending fetch {pending(a.pending_fetch)} -> {pending(b.pending_fetch)}")
            if a.last_fetch_res != b.last_fetch_res:
                def last(r):
                    return "none" if r is None else (
                        f"{sname(r.peer)} " + (r.error.name if r.error is not None else "ok"))
                parts.append(f"last fetch answer {last(a.last_fetch_res)} -> {last(b.last_fetch_res)}")
            if a.has_fetch_success != b.has_fetch_success:
                parts.append("fetched from its leader" if b.has_fetch_success
                             else "no successful fetch yet")
            return "fetch: " + ", ".join(parts)
        return f"{FIELD_NAMES.get(name, name)} {fmt(name, a)} -> {fmt(name, b)}"

    def _server_diffs(self, prev, st, s: int) -> list[str]:
        fields = [f for f in PER_SERVER if f in st._fields]
        if s > n_servers(prev):
            return [f"starts on {fmt_identity(st.server_ids[s - 1])}: {self._summary(st, s)}"]
        if role(st, s) == Role.DeadNoState and role(prev, s) != Role.DeadNoState:
            return [f"{role(prev, s).name} -> DeadNoState: its log {fmt_log(prev.log[s - 1])}, epoch, "
                    f"vote and configuration are gone"]
        return [self._field_diff(f, getattr(prev, f)[s - 1], getattr(st, f)[s - 1])
                for f in fields if getattr(prev, f)[s - 1] != getattr(st, f)[s - 1]]

    def step_lines(self, prev, state, action) -> list[str]:
        lines = []
        before, after = prev.net_messages, state.net_messages
        if before is not after:
            for m in sorted(before - after, key=fmt_message):
                lines.append(f"{self.fate(action, m)}: {fmt_message(m)}")
            for m in sorted(after - before, key=fmt_message):
                lines.append(f"sent: {fmt_message(m)}")
        for s in range(1, n_servers(state) + 1):
            diffs = self._server_diffs(prev, state, s)
            if diffs:
                lines.append(f"{sname(s)}: " + "; ".join(diffs))
        if prev.net_connectivity_ctr != state.net_connectivity_ctr \
                or prev.net_connectivity != state.net_connectivity:
            cut = cut_pairs(state)
            counted = prev.net_connectivity_ctr != state.net_connectivity_ctr
            lines.append("network: " + ("" if prev.net_connectivity != state.net_connectivity
                                        else "unchanged, ")
                         + (", ".join(f"s{a}-s{b}" for a, b in cut) + " cut" if cut
                            else "every pair connected")
                         + (f" (network change {state.net_connectivity_ctr})" if counted else ""))
        for name, what in (("inv_sent", "written"), ("inv_pos_acked", "acknowledged"),
                           ("inv_neg_acked", "failed")):
            new = getattr(state, name) - getattr(prev, name)
            if new:
                lines.append(f"clients: {what} {', '.join(sorted(map(str, new)))}")
        if prev.aux_ctrs != state.aux_ctrs:
            lines.append("limits: " + ", ".join(
                f"{AUX_NAMES.get(f, f)} {x} -> {y}"
                for f, x, y in zip(state.aux_ctrs._fields, prev.aux_ctrs, state.aux_ctrs) if x != y))
        if getattr(state, "lost_unflushed", False) and not prev.lost_unflushed:
            lines.append("ghost: a power loss dropped entries that were not flushed")
        new = getattr(state, "lost_power_acked", frozenset()) - getattr(prev, "lost_power_acked", frozenset())
        if new:
            lines.append(f"ghost: {', '.join(sname(x) for x in sorted(new))} lost power while a value "
                         "was acknowledged")
        return lines

    def _summary(self, st, s: int) -> str:
        """One server's state in a line."""
        if s > n_servers(st):
            return "not started"
        i = s - 1
        r = role(st, s)
        if r == Role.DeadNoState:
            return "DeadNoState (lost its disk)"
        parts = [f"{r.name} in epoch {st.current_epoch[i]}"]
        if not is_voter(st, s):
            parts[0] += " (observer)"
        parts += [f"leader {sname(st.leader[i])}", f"voted for {sname(st.voted_for[i])}"]
        if st.votes_recv[i]:
            parts.append(f"votes {fmt_servers(st.votes_recv[i])}")
        parts += [f"config {fmt_config(st.config[i])}", f"log {fmt_log(st.log[i])}",
                  f"HWM {st.hwm[i]}"]
        if hasattr(st, "flushed"):
            parts.append(f"flushed {st.flushed[i]}")
            if st.power_losses[i]:
                parts.append(f"power losses {st.power_losses[i]}")
        if st.pending_ack[i]:
            parts.append(f"pending acks {fmt_values(st.pending_ack[i])}")
        if r == Role.Leader:
            parts.append(f"follower end offsets {fmt_ends(st.flwr_end_offset[i])}")
        fs = st.fetch_state[i]
        if fs.pending_fetch is not None or fs.last_fetch_res is not None:
            parts.append(fmt_fetch_state(fs))
        return ", ".join(parts)

    def summary_lines(self, st) -> list[str]:
        lines = [f"{long_name(st, s)}: {self._summary(st, s)}" for s in self.servers]
        cut = cut_pairs(st)
        msgs = sorted(st.net_messages, key=fmt_message)
        lines.append("network: " + (", ".join(f"s{a}-s{b}" for a, b in cut) + " cut" if cut
                                     else "all connected") + "; in flight: "
                     + ("; ".join(fmt_message(m) for m in msgs) if msgs else "nothing"))
        lines.append(f"clients: written {fmt_values(st.inv_sent)}, acknowledged "
                     f"{fmt_values(st.inv_pos_acked)}, failed {fmt_values(st.inv_neg_acked)}")
        return lines

    def initial_lines(self, state, full: bool = True) -> list[str]:
        if not full:
            return self.summary_lines(state) + [
                "(every variable: kmc check --full-state, or the run's trace-*.txt)"]
        lines = []
        for name, value in zip(self.names(state), state):
            if name in PER_SERVER:
                lines.append(f"{name} = " + "; ".join(
                    f"[{sname(s)}] {fmt(name, v)}" for s, v in enumerate(value, 1)))
            else:
                lines.append(f"{name} = {fmt(name, value)}")
        return self.summary_lines(state) + ["every variable:"] + ["  " + x for x in lines]

    def text(self, prop: str, trace: list, header: str = "", full_initial: bool = True,
             also=()) -> str:
        body = super().text(prop, trace, header, full_initial, also)
        fails = " and ".join([prop, *also])
        return (body + f"\nState after step {len(trace) - 1} (where {fails} fail{'' if also else 's'}), "
                "at a glance:\n" + "\n".join("  " + x for x in self.summary_lines(trace[-1][1])) + "\n")

    # ---- ITF -----------------------------------------------------------------------------

    def _itf_record(self, r) -> Any:
        if isinstance(r, Entry):
            value = r.value
            if isinstance(value, ConfigValue):
                v = {"id": itf.bigint(value.id), "members": self.to_itf(value.members)}
                if r.command == Command.AddVoterCommand:
                    v["new"] = self.to_itf(value.server)
                elif r.command == Command.RemoveVoterCommand:
                    v["old"] = self.to_itf(value.server)
            else:
                v = self.to_itf(value)
            return {"command": r.command.name, "epoch": itf.bigint(r.epoch), "value": v}
        out = {}
        for f, x in zip(r._fields, r):
            # fields the reference's record of this shape does not have
            if x is None and ((isinstance(r, BeginQuorumEpoch) and f == "resend")
                              or (isinstance(r, FetchRequest) and f == "observer")
                              or (isinstance(r, FetchResponse)
                                  and f in ("entries", "diverging_epoch", "diverging_end_offset"))):
                continue
            out[f] = self.to_itf(x, self._itf_record)
        return out

    def itf_variable(self, name: str, value: Any) -> Any:
        conv = lambda v: self.to_itf(v, self._itf_record)  # noqa: E731
        if name in PER_SERVER:
            keys = range(1, len(value) + 1)
            if name == "flwr_end_offset":
                return self.fn_over(value, keys, lambda fm: {"#map": [
                    [itf.bigint(k), itf.bigint(o)] for k, o in fm]})
            return self.fn_over(value, keys, conv)
        if name == "net_connectivity":
            return {"#set": [{"#tup": [itf.bigint(a), itf.bigint(b)]} for a, b in sorted(value)]}
        return conv(value)

    def itf_meta(self) -> dict:
        return {"note": "kraft_quorum: Nil and the states, commands, message types and errors are "
                        "the reference's model values; functions over servers are #map"}

    # ---- sequence diagram ----------------------------------------------------------------------

    def lanes(self) -> list[str]:
        return [sname(s) for s in self.servers] + ["clients / admin"]

    def in_flight(self, state):
        return state.net_messages

    def message_lanes(self, m) -> tuple[int, int]:
        return (m.source - 1, m.dest - 1)

    def message_label(self, m) -> tuple[str, str]:
        return short_message(m), fmt_message(m)

    def message_kind(self, m) -> str:
        return message_kind(m)

    def actor_lane(self, action) -> int | None:
        p = self._params(action)
        return p[0] - 1 if p and isinstance(p[0], int) else None

    def fate(self, action, m) -> str:
        name = getattr(action, "name", "")
        if name in RECEIVERS.get(m.type, ()) and self._params(action) == (m.dest, m.source):
            return "received"
        return "dropped"

    def arrows(self, trace: list) -> list[Arrow]:
        """The messages between servers, and the clients' writes and acks and the
        operator's reconfigurations (lane clients / admin), which are steps of one actor."""
        out = super().arrows(trace)
        c = self.client_lane
        for i in range(1, len(trace)):
            action, st = trace[i]
            prev = trace[i - 1][1]
            name = getattr(action, "name", "")
            p = self._params(action)
            if name == "HandleClientRequest" and p:
                v = st.log[p[0] - 1][-1].value
                out.append(Arrow(c, p[0] - 1, i, i, "received", f"write {v}",
                                 f"a client writes {v} to leader {sname(p[0])}", "ClientWrite"))
            elif name in ("AcceptAddVoterRequest", "AcceptRemoveVoterRequest") and p:
                e = st.log[p[0] - 1][-1]
                out.append(Arrow(c, p[0] - 1, i, i, "received", fmt_command(e),
                                 f"an operator asks leader {sname(p[0])}: {fmt_command(e)}", "Admin"))
            src = p[0] - 1 if p else c
            for v in sorted(st.inv_pos_acked - prev.inv_pos_acked):
                out.append(Arrow(src, c, i, i, "received", f"ack {v}",
                                 f"{v} committed: acknowledged to its client", "ClientAck"))
            for v in sorted(st.inv_neg_acked - prev.inv_neg_acked):
                out.append(Arrow(src, c, i, i, "received", f"fail {v}",
                                 f"the write of {v} fails", "ClientAck"))
        return out

    # ---- the per-step table --------------------------------------------------------------------

    def columns(self) -> list[str]:
        return [sname(s) for s in self.servers] + ["network / clients"]

    @staticmethod
    def _log_html(log, hwm: int, old) -> str:
        if not log:
            return '<span class="log empty">empty</span>'
        chips = []
        for o, e in enumerate(log, 1):
            cls = "rec" + (" acked" if o <= hwm else "")
            if old is not None and (o > len(old) or old[o - 1] != e):
                cls += " chg"
            title = (f"offset {o}, {fmt_command(e)}, epoch {e.epoch}"
                     + (", committed (at or below the HWM)" if o <= hwm else ""))
            chips.append(f'<span class="{cls}" title="{_esc(title)}">{o}<b>{_esc(fmt_command(e))}</b>'
                         f'<i>e{e.epoch}</i></span>')
        return '<span class="log">' + "".join(chips) + "</span>"

    def _server_cell(self, prev, st, s: int) -> tuple[str, bool]:
        if s > n_servers(st):
            return '<span class="log empty">not started</span>', False
        i = s - 1
        new = prev is not None and s > n_servers(prev)   # started in this step

        def changed(*names) -> bool:
            return prev is not None and (new or any(getattr(prev, f)[i] != getattr(st, f)[i]
                                                    for f in names))

        def item(label: str, text: Any, *names) -> str:
            return self._item(label, _esc(text), changed(*names))

        r = role(st, s)
        rcls = f"role r-{r.name}" + (" fenced" if r in (Role.DeadNoState, Role.IllegalState) else "")
        items = [self._item("", f'<span class="{rcls}">{r.name}</span> <b>e{st.current_epoch[i]}</b>',
                            changed("state", "current_epoch")),
                 self._item("", _esc(fmt_identity(st.server_ids[i])), new)]
        if r != Role.DeadNoState and not is_voter(st, s):
            items.append(self._item("", '<span class="fenced">observer</span>',
                                    changed("config", "state")))
        items += ["<br>", item("leader", sname(st.leader[i]), "leader"),
                  item("voted", sname(st.voted_for[i]), "voted_for")]
        if st.votes_recv[i] or changed("votes_recv"):
            items.append(item("votes", fmt_servers(st.votes_recv[i]), "votes_recv"))
        items += ["<br>", item("config", fmt_config(st.config[i]), "config"), "<br>",
                  self._log_html(st.log[i], st.hwm[i], None if prev is None or new else prev.log[i]),
                  "<br>", item("HWM", st.hwm[i], "hwm")]
        if hasattr(st, "flushed"):  # the storage refinement
            items.append(item("flushed", st.flushed[i], "flushed"))
            if st.power_losses[i]:
                items.append(item("power losses", st.power_losses[i], "power_losses"))
        if st.pending_ack[i] or changed("pending_ack"):
            items.append(item("pending", fmt_values(st.pending_ack[i]), "pending_ack"))
        if r == Role.Leader or changed("flwr_end_offset"):
            items.append(item("ends", fmt_ends(st.flwr_end_offset[i]), "flwr_end_offset"))
        fs = st.fetch_state[i]
        pf = prev.fetch_state[i] if prev is not None and not new else fs
        if fs.pending_fetch is not None or fs.last_fetch_res is not None or changed("fetch_state"):
            p, last = fs.pending_fetch, fs.last_fetch_res
            fetch = f"@{p.fetch_offset} to {sname(p.dest)}" if p is not None else "none"
            items += ["<br>", self._item("fetch", _esc(fetch), new or pf.pending_fetch != p)]
            if last is not None:
                answer = f"{sname(last.peer)} " + (last.error.name if last.error is not None else "ok")
                items.append(self._item("last", _esc(answer), new or pf.last_fetch_res != last))
            if fs.has_fetch_success:
                # a follower that fetched from its leader refuses pre-votes (KIP-996)
                items.append(self._item("", "fetched from leader", not pf.has_fetch_success))
        fields = [f for f in PER_SERVER if f in st._fields]
        return " ".join(items), changed(*fields)

    def _network_cell(self, prev, st) -> tuple[str, bool]:
        def changed(*names) -> bool:
            return prev is not None and any(getattr(prev, f) != getattr(st, f) for f in names)

        cut = cut_pairs(st)
        links = ", ".join(f"s{a}-s{b}" for a, b in cut) + " cut" if cut else "all connected"
        kinds = _kinds(st.net_messages)
        before = _kinds(prev.net_messages) if prev is not None else kinds
        items = [self._item("links", _esc(links), changed("net_connectivity")), "<br>",
                 self._item("in flight", _esc(len(st.net_messages)),
                            prev is not None and len(prev.net_messages) != len(st.net_messages))]
        items += [self._item("", _esc(f"{n} {k}"), before.get(k) != n) for k, n in sorted(kinds.items())]
        acked = f'<span class="acked-set">{_esc(fmt_values(st.inv_pos_acked))}</span>'
        items += ["<br>", self._item("sent", _esc(fmt_values(st.inv_sent)), changed("inv_sent")),
                  "<br>", self._item("acked", acked, changed("inv_pos_acked"))]
        if st.inv_neg_acked:
            items.append(self._item("failed", _esc(fmt_values(st.inv_neg_acked)),
                                    changed("inv_neg_acked")))
        used = [(f, x) for f, x in zip(st.aux_ctrs._fields, st.aux_ctrs) if x]
        if used:  # how much of each fault and disruption bound the trace used
            items += ["<br>"] + [self._item(AUX_NAMES.get(f, f), _esc(x), changed("aux_ctrs"))
                                 for f, x in used]
        return " ".join(items), changed("net_connectivity", "net_messages", "inv_sent",
                                        "inv_pos_acked", "inv_neg_acked")

    def cells(self, prev, state) -> list[tuple[str, bool]]:
        return [self._server_cell(prev, state, s) for s in self.servers] + [
            self._network_cell(prev, state)]

    # ---- what broke ------------------------------------------------------------------------

    def _acked_where(self, trace, v) -> tuple[int | None, int | None, str]:
        """(step, leader, 'offset o, epoch e') where v was acknowledged."""
        for i in range(1, len(trace)):
            action, st = trace[i]
            if v in st.inv_pos_acked and v not in trace[i - 1][1].inv_pos_acked:
                p = self._params(action)
                if p:
                    o = offset_of(st.log[p[0] - 1], v)
                    if o is not None:
                        return i, p[0], f"offset {o}, epoch {st.log[p[0] - 1][o - 1].epoch}"
                return i, None, self._where_was(trace, v)
        return None, None, self._where_was(trace, v)

    @staticmethod
    def _where_was(trace, v) -> str:
        for _, st in reversed(trace):
            for log in st.log:
                o = offset_of(log, v)
                if o is not None:
                    return f"offset {o}, epoch {log[o - 1].epoch}"
        return "offset unknown"

    def _explain_election_safety(self, trace) -> Explanation | None:
        st = trace[-1][1]
        by_epoch: dict[int, dict[int, list[int]]] = {}
        for s in range(1, n_servers(st) + 1):
            ldr = st.leader[s - 1]
            if ldr is not None:
                by_epoch.setdefault(st.current_epoch[s - 1], {}).setdefault(ldr, []).append(s)
        clash = [(e, ls) for e, ls in sorted(by_epoch.items()) if len(ls) > 1]
        if not clash:
            return None
        epoch, leaders = clash[0]
        leading, following = [], []
        for ldr, knowers in sorted(leaders.items()):
            for s in knowers:
                if s != ldr:
                    following.append(f"{sname(s)} follows {sname(ldr)}")
                elif role(st, s) == Role.Leader:
                    leading.append(sname(s))
                else:
                    following.append(f"{sname(s)} ({role(st, s).name}) names itself")
        parts = ([f"{' and '.join(leading)} {'each lead' if len(leading) > 1 else 'leads'} it"]
                 if leading else []) + following
        count = {2: "Two", 3: "Three", 4: "Four"}.get(len(leaders), str(len(leaders)))
        involved = {s for ks in leaders.values() for s in ks}
        text = f"{count} leaders in epoch {epoch}: " + ", ".join(parts) + "."
        # who voted twice in that epoch, and what made it forget its first vote
        votes: dict[int, list[tuple[int, int]]] = {}
        for i in range(1, len(trace)):
            prev, cur = trace[i - 1][1], trace[i][1]
            for s in range(1, min(n_servers(prev), n_servers(cur)) + 1):
                v = cur.voted_for[s - 1]
                if (v is not None and v != s and v != prev.voted_for[s - 1]
                        and cur.current_epoch[s - 1] == epoch):
                    votes.setdefault(s, []).append((i, v))
        broke_at, how = None, ""
        for s, vs in sorted(votes.items()):
            if len({v for _, v in vs}) > 1:
                (i1, v1), (i2, v2) = vs[0], vs[-1]
                text += (f" {sname(s)} voted twice in epoch {epoch}: for {sname(v1)} at step {i1} "
                         f"and for {sname(v2)} at step {i2}")
                for k in range(i1 + 1, i2):
                    a, b = trace[k - 1][1], trace[k][1]
                    if a.voted_for[s - 1] is not None and b.voted_for[s - 1] is None \
                            and b.current_epoch[s - 1] == epoch:
                        text += (f", having forgotten its first vote at step {k}, "
                                 f"{self.step_title(trace[k][0])}")
                        break
                text += "."
                broke_at = i2
                how = (f"step {i2}, {self.step_title(trace[i2][0])}, where {sname(s)} voted a second "
                       f"time in epoch {epoch}")
                involved.add(s)
                break
        if how and broke_at != len(trace) - 1:
            text += f" The promise broke at {how}."
        return Explanation(text, {s - 1 for s in involved}, broke_at, how)

    def _explain_leader_completeness(self, trace) -> Explanation | None:
        st = trace[-1][1]
        for s in range(1, n_servers(st) + 1):
            if not is_current_leader(st, s):
                continue
            missing = sorted(v for v in st.inv_pos_acked if not in_log(st.log[s - 1], v))
            if not missing:
                continue
            epoch = st.current_epoch[s - 1]
            descr = []
            for v in missing:
                _, _, where = self._acked_where(trace, v)
                holders = [x for x in range(1, n_servers(st) + 1) if in_log(st.log[x - 1], v)]
                descr.append(f"{v} ({where}" + (f"; still on {fmt_list(holders)}" if holders else "")
                             + ")")
            at, how = promise_broke_at(
                trace, self.step_title,
                lambda x: s <= n_servers(x) and role(x, s) == Role.Leader
                and x.current_epoch[s - 1] == epoch,
                lambda x, v: s <= n_servers(x) and in_log(x.log[s - 1], v),
                missing, sname(s), epoch, "acknowledged")
            text = (f"The current leader {sname(s)} (epoch {epoch}) lacks the acknowledged "
                    + ", ".join(descr) + f". Its log: {fmt_log(st.log[s - 1])}.")
            columns = {s - 1}
            if at is not None and getattr(trace[at][0], "name", "") == "BecomeLeader":
                before = trace[at - 1][1]
                voters = sorted(before.votes_recv[s - 1])
                had = [x for x in voters
                       if x != s and any(in_log(before.log[x - 1], v) for v in missing)]
                text += f" It was elected with the votes of {fmt_list(voters)}"
                text += (f", though {fmt_list(had)} held {', '.join(missing)}." if had else ".")
                columns |= {x - 1 for x in had}
            if how:
                text += f" The promise broke at {how}."
            return Explanation(text, columns, at, how)
        return None

    def _lost_how(self, prev, st, action, v, holders) -> str:
        """What a step did to the last voters holding v."""
        name = getattr(action, "name", "")
        why = []
        for h in holders:
            if h <= n_servers(st) and in_log(st.log[h - 1], v) and is_voter(st, h):
                continue
            if role(st, h) == Role.DeadNoState:
                why.append(f"{sname(h)} crashed and lost its disk")
            elif not in_log(st.log[h - 1], v):
                if name == "PowerLoss":
                    why.append(f"{sname(h)} lost power before flushing it")
                elif name == "HandleFetchResponse":
                    why.append(f"{sname(h)} truncated its log to offset {len(st.log[h - 1])}")
                else:
                    why.append(f"{sname(h)}'s log lost it")
            else:
                why.append(f"{sname(h)} is no longer a voter (its configuration is now "
                           f"{fmt_config(st.config[h - 1])})")
        return ", ".join(why)

    def _explain_durability(self, trace) -> Explanation | None:
        st = trace[-1][1]
        n = n_servers(st)

        def on_voters(x, v):
            return [h for h in range(1, n_servers(x) + 1) if is_voter(x, h) and in_log(x.log[h - 1], v)]

        missing = sorted(v for v in st.inv_pos_acked if not on_voters(st, v))
        if not missing:
            return None
        v = missing[0]
        i, ldr, where = self._acked_where(trace, v)
        by = f" by leader {sname(ldr)}" if ldr is not None else ""
        text = (f"{v} was acknowledged (committed at {where}{by}"
                + (f", step {i}" if i is not None else "") + ") and is now on no voter: ")
        now = []
        for s in range(1, n + 1):
            if role(st, s) == Role.DeadNoState:
                now.append(f"{sname(s)} lost its disk")
            elif in_log(st.log[s - 1], v):
                now.append(f"{sname(s)} holds it but is an observer")
            elif is_voter(st, s):
                now.append(f"{sname(s)}'s log {fmt_log(st.log[s - 1])} lacks it")
            else:
                now.append(f"{sname(s)} is an observer without it")
        text += "; ".join(now) + "."
        if len(missing) > 1:
            text += f" (Also lost: {', '.join(missing[1:])}.)"
        at, how = None, ""
        for k in range(len(trace) - 1, 0, -1):
            holders = on_voters(trace[k - 1][1], v)
            if holders and not on_voters(trace[k][1], v):
                at = k
                what = self._lost_how(trace[k - 1][1], trace[k][1], trace[k][0], v, holders)
                how = f"step {k}, {self.step_title(trace[k][0])}, took the last copy on a voter"
                how += f" ({what})" if what else ""
                break
        if how:
            text += f" The promise broke at {how}."
        return Explanation(text, set(range(n)), at, how)

    def _explain_log_matching(self, trace) -> Explanation | None:
        st = trace[-1][1]
        n = n_servers(st)
        for a in range(1, n + 1):
            for b in range(a + 1, n + 1):
                ha, hb = st.hwm[a - 1], st.hwm[b - 1]
                low = min(ha, hb)
                la, lb = st.log[a - 1], st.log[b - 1]
                for o in range(1, min(low, len(la), len(lb)) + 1):
                    if la[o - 1] != lb[o - 1]:
                        return Explanation(
                            f"{sname(a)} and {sname(b)} disagree at offset {o}, below both high "
                            f"watermarks (HWM {ha} and {hb}): {sname(a)} has {fmt_entry(o, la[o - 1])}, "
                            f"{sname(b)} has {fmt_entry(o, lb[o - 1])}.", {a - 1, b - 1})
                if low > min(len(la), len(lb)):
                    short = a if len(la) < len(lb) else b
                    return Explanation(f"{sname(short)}'s HWM {st.hwm[short - 1]} is beyond its log "
                                       f"{fmt_log(st.log[short - 1])}.", {short - 1})
        return None

    def _explain_illegal(self, trace) -> Explanation | None:
        st = trace[-1][1]
        bad = [s for s in range(1, n_servers(st) + 1) if role(st, s) == Role.IllegalState]
        if not bad:
            return None
        s = bad[0]
        k = next((k for k in range(len(trace) - 1, 0, -1)
                  if s <= n_servers(trace[k - 1][1]) and role(trace[k - 1][1], s) != Role.IllegalState),
                 None)
        if k is None:
            return Explanation(f"{sname(s)} is in IllegalState.", {s - 1})
        prev, action = trace[k - 1][1], trace[k][0]
        was = (f"{role(prev, s).name} in epoch {prev.current_epoch[s - 1]} (leader "
               f"{sname(prev.leader[s - 1])}, voted for {sname(prev.voted_for[s - 1])})")
        m = self._received(prev, trace[k][1], action)
        how = f"step {k}, {self.step_title(action)}"
        text = (f"{sname(s)} took a transition the protocol forbids at {how}: it was {was}"
                + (f" when it received {fmt_message(m)}" if m is not None
                   else f" and {self.describe(action, prev, trace[k][1])}"))
        if m is not None and getattr(m, "leader", None) == s:
            text += f", which names {sname(s)} itself as the leader of epoch {m.replica_epoch}"
        text += "."
        return Explanation(text, {s - 1}, k, how + f", put {sname(s)} in IllegalState")

    def _explain_roles(self, trace) -> Explanation | None:
        st = trace[-1][1]
        problems, cols = [], set()
        for s in range(1, n_servers(st) + 1):
            i, r, found = s - 1, role(st, s), len(problems)
            if r != Role.DeadNoState and not is_voter(st, s) and r not in (
                    Role.Leader, Role.Follower, Role.Unattached, Role.Resigned):
                problems.append(f"{sname(s)} is an observer (configuration {fmt_config(st.config[i])}) "
                                f"yet {r.name}, which only a voter can be")
            if r == Role.Unattached and st.leader[i] is not None:
                problems.append(f"{sname(s)} is Unattached yet knows leader {sname(st.leader[i])}")
            if r != Role.Leader and st.pending_ack[i]:
                problems.append(f"{sname(s)} is {r.name} yet has writes pending "
                                f"{fmt_values(st.pending_ack[i])} (only a leader has)")
            if st.votes_recv[i] and r not in (Role.Prospective, Role.Candidate):
                problems.append(f"{sname(s)} is {r.name} yet holds votes "
                                f"{fmt_servers(st.votes_recv[i])} (only a Prospective or Candidate "
                                f"server does)")
            if len(problems) > found:
                cols.add(i)
        if not problems:
            return None
        return Explanation("; ".join(problems) + ".", cols)

    def explain(self, prop: str, trace: list) -> Explanation | None:
        how = {"ElectionSafety": self._explain_election_safety,
               "LeaderCompleteness": self._explain_leader_completeness,
               "Durability": self._explain_durability,
               "LogMatching": self._explain_log_matching,
               "NoIllegalState": self._explain_illegal,
               "ValidRolesAndStates": self._explain_roles}.get(prop)
        why = how(trace) if how is not None else None
        return why if why is not None else super().explain(prop, trace)


TRACE_VIEW = KraftQuorumView
