"""The consumer's properties (Consumer = true, model/zk/consumer.py): what a
Kafka user relies on when reading, and witnesses that the reads happened.

A read is (offset, value): the consumer read `value` at `offset` from a
broker it believed led, below that broker's HW.
"""
from __future__ import annotations

from model.zk.state import leading_leader



def consumed_record_kept(model):
    """ConsumedRecordKept: no record the consumer has read disappears from the
    committed log. Precisely: every record it read that is still under the
    durability promise (model/zk/ghost.py: the HW passed it, and some ISR
    member holding it has been up and has not lost it in a crash since) is at
    its offset in the log of the registered leader, once that broker leads
    in the znode's epoch (LeaderCompleteness' premise). A record that fell
    outside the promise (every keeper down or crashed it away; an unclean
    election) is not checked: MonotonicReads still sees it replaced."""

    def ConsumedRecordKept(s) -> bool:
        c = s.consumer
        if not c.read:
            return True
        leader = leading_leader(s)
        if leader is None:
            return True
        promised = {a.value for a in s.acked if a.keepers}
        log = s.log[leader]
        for o, v in c.read:
            if v in promised and (o >= len(log) or log[o].value != v):
                return False
        return True

    return ConsumedRecordKept


def monotonic_reads(model):
    """MonotonicReads: the consumer never reads a different record at an
    offset it has already read (a re-read after a reset of its position may
    repeat a record, never replace it). No premise: an unclean election or a
    lost disk breaks it as Kafka documents."""

    def MonotonicReads(s) -> bool:
        read = s.consumer.read
        return len({o for o, _ in read}) == len(read)

    return MonotonicReads


def record_consumed(model):
    """RecordConsumed: the consumer has read a record."""

    def RecordConsumed(s) -> bool:
        return bool(s.consumer.read)

    return RecordConsumed


def consumed_across_leader_change(model):
    """ConsumedAcrossLeaderChange: the consumer has read from leaders of two
    leader epochs."""

    def ConsumedAcrossLeaderChange(s) -> bool:
        return len(s.consumer.epochs) > 1

    return ConsumedAcrossLeaderChange


def consumed_from_stale_leader(model):
    """ConsumedFromStaleLeader: the consumer has read from a broker that led
    while the znode named no leader, or another one, or a later epoch (a
    zombie leader after its session expired, or one not yet told)."""

    def ConsumedFromStaleLeader(s) -> bool:
        return s.consumer.stale

    return ConsumedFromStaleLeader


def consumer_out_of_range(model):
    """ConsumerOutOfRange: the consumer's position is beyond the log end of
    the leader it fetched from (OFFSET_OUT_OF_RANGE): it awaits a reset."""

    def ConsumerOutOfRange(s) -> bool:
        return s.consumer.position is None

    return ConsumerOutOfRange
