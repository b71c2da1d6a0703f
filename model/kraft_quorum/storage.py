"""The storage refinement (beyond the reference; on when MaxPowerLosses > 0):
what each server has flushed to disk, and when it flushes.

Kafka's raft client (KafkaRaftClient): a leader appends in one poll of its
single raft thread and then, in flushLeaderLog, updates its end offset
"before flushing so that parked fetches can return sooner" and flushes: a
Fetch waiting at the leader's end can be answered with entries the leader
then loses to a power loss. A follower voter flushes in appendAsFollower,
before its next Fetch reports the entries (controllers always flush). So a
follower never reports an offset it has not flushed, and a leader counts
its own unflushed entries only where they are a majority alone: a single
voter commits before its flush.

With VoterFlush = "end_offset_first" (Kafka, the default) an append leaves
the log unflushed until the server's FlushLog, which comes before any other
step of that server (model.py holds its other actions back meanwhile)
except, for a leader, answering a Fetch that waited at the end of its
flushed log; a PowerLoss may strike in between.
"before_fetch" holds a leader's answers back too; "lazy" (a voter that
acknowledges before it flushes) makes FlushLog a step like any other.
"""
from __future__ import annotations

from model.kraft_quorum.replication import ack_single_voter, leads_alone
from model.kraft_quorum.state import MsgType, Role, at, put


def unflushed(st, s: int) -> bool:
    return at(st.flushed, s) < len(at(st.log, s))


def answers_waiting_fetch(st, m) -> bool:
    """m is a Fetch that waited at the end of its leader's flushed log: the
    leader answers it before it flushes (KafkaRaftClient.flushLeaderLog). A
    Fetch past that end follows the unflushed entries, so it reaches the
    raft thread after the flush."""
    s = m.dest
    return (m.type == MsgType.FetchRequest and at(st.state, s) == Role.Leader
            and m.fetch_offset == at(st.flushed, s) + 1)


def flush_log(model, st, s: int, out: list) -> None:
    """FlushLog(s): the log written so far reaches the disk."""
    if at(st.state, s) == Role.DeadNoState or not unflushed(st, s):
        return
    ch = {"flushed": put(st.flushed, s, len(at(st.log, s)))}
    if at(st.state, s) == Role.Leader and leads_alone(model, st, s):
        # a single voter committed before its flush; its listeners hear of it after
        ack_single_voter(st, s, ch)
    out.append((model.act("FlushLog", s), st._replace(**ch)))
