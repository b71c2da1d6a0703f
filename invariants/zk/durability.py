"""Durability: acknowledged records survive while Kafka promises they do.

"Protected" is defined in model/zk/ghost.py: an acknowledged (acks=all)
record is protected while, at every moment since its acknowledgement, some
ISR member that held it and has not lost it in a crash was running (Kafka's design docs:
the guarantee "is predicated on at least one replica remaining in sync. If
all the nodes replicating a partition die, this guarantee no longer holds").
Records every keeper of which crashed, or lost them to an unflushed crash,
are outside the promise and not checked; protocol truncation never ends the
promise: it is what these properties catch.
"""
from __future__ import annotations

from model.zk.state import leading_leader



def leader_completeness(model):
    """LeaderCompleteness: the registered leader's log holds every protected
    acknowledged record (the v3.5 description's Leader Completeness, under the promise),
    once it leads: with Election = controller the znode may name a leader that
    has not yet been told, or that is down (registration: the registered
    leader always leads)."""

    def LeaderCompleteness(s) -> bool:
        acked = s.acked
        if not acked:
            return True
        leader = leading_leader(s)
        if leader is None:
            return True
        log = s.log[leader]
        for a in acked:
            if a.keepers:
                v = a.value
                for r in log:
                    if r.value == v:
                        break
                else:
                    return False
        return True

    return LeaderCompleteness


def no_acked_record_lost(model):
    """NoAckedRecordLost: every protected acknowledged record is in the log of
    some replica (in memory on a running broker, or on the disk of a crashed
    one): the record is not gone for good."""
    replicas = tuple(model.replicas)

    def NoAckedRecordLost(s) -> bool:
        acked = s.acked
        if not acked:
            return True
        logs = s.log
        held = {r.value for b in replicas for r in logs[b]}
        return all(a.value in held for a in acked if a.keepers)

    return NoAckedRecordLost


def no_acks_one_record_lost(model):
    """NoAcksOneRecordLost (Acks = 1): every record the leader acknowledged at
    its append - every written value - is in the log of some replica (memory
    or disk). Not a Kafka promise (Kafka promises nothing for an acks=1
    acknowledgement): it is checked to show the loss, the expected finding."""
    replicas = tuple(model.replicas)

    def NoAcksOneRecordLost(s) -> bool:
        written = s.written
        if not written:
            return True
        logs = s.log
        held = {r.value for b in replicas for r in logs[b]}
        return written <= held

    return NoAcksOneRecordLost
