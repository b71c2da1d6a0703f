"""The storage refinement (beyond the reference; on when MaxPowerLosses > 0):
what each server has flushed to disk, and when it flushes.

Kafka's raft client (KafkaRaftClient, 3.9): a leader appends, updates its
end offset and flushes in one poll of its single raft thread, before it
handles the next Fetch; a follower flushes what it appended before its next
Fetch reports it (appendAsFollower: `log.flush`); controllers always flush.
So a voter never reports, and a leader never counts, an offset it has not
flushed - except a single voter, which commits before its flush. With
VoterFlush = "before_fetch" (Kafka) an append leaves the log unflushed
until the server's FlushLog, which comes before any other step of that
server (model.py holds its other actions back meanwhile); a PowerLoss may
strike in between. With VoterFlush = "lazy" (a voter that acknowledges
before it flushes) FlushLog is a step like any other.
"""
from __future__ import annotations

from model.kraft_quorum.state import Role, at, put


def unflushed(st, s: int) -> bool:
    return at(st.flushed, s) < len(at(st.log, s))


def flush_log(model, st, s: int, out: list) -> None:
    """FlushLog(s): the log written so far reaches the disk."""
    if at(st.state, s) == Role.DeadNoState or not unflushed(st, s):
        return
    out.append((model.act("FlushLog", s),
                st._replace(flushed=put(st.flushed, s, len(at(st.log, s))))))
