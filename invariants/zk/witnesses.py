"""`sometimes` witnesses: what the invariants are about does happen."""
from __future__ import annotations


def record_committed(model):
    """RecordCommitted: a record is acknowledged (committed, acks=all)."""

    def RecordCommitted(s) -> bool:
        return bool(s.acked)

    return RecordCommitted


def leader_elected(model):
    """LeaderElected: a leader is elected after the initial one (epoch > 0)."""

    def LeaderElected(s) -> bool:
        return s.zk_partition.leader_epoch > 0

    return LeaderElected


def record_truncated(model):
    """RecordTruncated: a replica truncated a record away (to its HW, to the
    leader's epoch end offset, or on OffsetOutOfRange)."""

    def RecordTruncated(s) -> bool:
        return s.truncated

    return RecordTruncated


def isr_shrunk(model):
    """IsrShrunk: the ISR lost an assigned replica."""
    replicas = frozenset(model.replicas)

    def IsrShrunk(s) -> bool:
        return s.zk_partition.isr != replicas

    return IsrShrunk


def acked_record_survived_crash(model):
    """AckedRecordSurvivedCrash: a protected acknowledged record survived a
    crash of one of its keepers (it was flushed)."""

    def AckedRecordSurvivedCrash(s) -> bool:
        if not s.crashes:
            return False
        running = s.running
        for a in s.acked:
            for m in a.keepers:
                if not running[m]:
                    return True
        return False

    return AckedRecordSurvivedCrash


def session_expired(model):
    """SessionExpired: a running broker has no ZooKeeper session (a zombie)."""

    def SessionExpired(s) -> bool:
        return s.expiries > 0

    return SessionExpired
