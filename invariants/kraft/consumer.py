"""What a Kafka consumer relies on (Consumer = true: model/kraft/consumer.py).

Kafka's documentation (Design, "Replication"): a message is committed once
every in-sync replica has it; consumers only ever see committed messages, and
a committed message is not lost while one in-sync replica remains. Read by the
consumer that reads up to a leader's HWM:

- ConsumedRecordsStayCommitted: every record the consumer has read is at its
  offset, with its leader epoch and value, in the log of each non-stale leader
  (a broker that leads in the controller's current leader epoch): the
  committed log, which the partition's later readers and followers copy.
- MonotonicReads: the consumer's reads go forward: the offsets it received
  strictly increase and its position stays above the last of them. Only a
  reset of its position (auto.offset.reset after a detected truncation or an
  out-of-range fetch) can break it: the consumer then re-reads offsets it
  already read, perhaps as other records.

The reference's ConsistentReadProperty states the first of a ghost instead:
inv_consumed, the records below the highest HWM any leader reached (a record
enters it when some leader's HWM first passes it, from that leader's log).
Where every leader's log agrees below its HWM (LogMatchingProperty) the
consumer reads a prefix of inv_consumed and the two coincide; they part where
logs diverge - the consumer reads what the broker it fetches from holds,
which need not be what inv_consumed took from another broker - and the
ghost has no position, so no reset, to check.
"""
from __future__ import annotations

from model.kraft.state import Role

from invariants.kraft.common import KraftContext

LEADER = Role.Leader


def consumed_records_stay_committed(ctx: KraftContext):
    """ConsumedRecordsStayCommitted: every record the consumer read is at its
    offset in each non-stale leader's log."""
    n = ctx.broker_count

    def ConsumedRecordsStayCommitted(s) -> bool:
        read = s.consumer.read
        if not read:
            return True
        epoch = s.con_partition_metadata.leader_epoch
        for i in range(n):
            if s.partition_status[i] != LEADER or s.partition_metadata[i].leader_epoch != epoch:
                continue
            log = s.partition_data[i].log
            for r in read:
                if r.offset > len(log):
                    return False
                x = log[r.offset - 1]
                if x.epoch != r.epoch or x.value != r.value:
                    return False
        return True

    return ConsumedRecordsStayCommitted


def monotonic_reads(ctx: KraftContext):
    """MonotonicReads: the offsets read strictly increase; the position is
    above the last of them."""

    def MonotonicReads(s) -> bool:
        c = s.consumer
        last = 0
        for r in c.read:
            if r.offset <= last:
                return False
            last = r.offset
        return c.position > last

    return MonotonicReads


def consumer_read(ctx: KraftContext):
    """ConsumerRead: the consumer received a record."""

    def ConsumerRead(s) -> bool:
        return bool(s.consumer.read)

    return ConsumerRead


def consumer_read_before_leader_change(ctx: KraftContext):
    """ConsumerReadBeforeLeaderChange: the controller elected a leader since
    the consumer read a record (in an older leader epoch)."""

    def ConsumerReadBeforeLeaderChange(s) -> bool:
        epoch = s.con_partition_metadata.leader_epoch
        return any(r.leader_epoch < epoch for r in s.consumer.read)

    return ConsumerReadBeforeLeaderChange


def consumer_read_from_stale_leader(ctx: KraftContext):
    """ConsumerReadFromStaleLeader: the consumer read a record from a broker
    that still believed it led after the controller had replaced it."""

    def ConsumerReadFromStaleLeader(s) -> bool:
        return any(r.stale for r in s.consumer.read)

    return ConsumerReadFromStaleLeader


def consumer_offset_reset(ctx: KraftContext):
    """ConsumerOffsetReset: the consumer moved its position by auto.offset.reset."""

    def ConsumerOffsetReset(s) -> bool:
        return s.consumer.resets > 0

    return ConsumerOffsetReset
