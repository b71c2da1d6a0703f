"""The consumer client (Consumer = true; not of the reference).

One consumer reads the partition as Kafka's Java consumer does. It only
observes: no broker step reads its variable, so the brokers' behaviours are
those of the model without it. Its state (state.py, ConsumerState) is what
SubscriptionState keeps for an assigned partition: the position, its offset
epoch, the current leader epoch of its metadata; and, for the properties,
the records the application received. auto.offset.reset is Kafka's default,
latest. A step is one request and its answer, served from the broker's state
at that instant.

Which broker: the consumer's metadata (any broker's, possibly stale) names a
leader; a broker answers as leader only while it believes it leads
(partition_status Leader), in its own leader epoch. KIP-320: every request
carries the consumer's current leader epoch, and a broker whose epoch differs
answers FENCED_LEADER_EPOCH (the consumer's is older) or UNKNOWN_LEADER_EPOCH
(newer) - Partition.localLogWithEpochOrThrow; the consumer then refreshes its
metadata or retries (FetchCollector.handleInitializeErrors). Such answers
change nothing of the consumer's state and are not steps here; Kafka's
Metadata never goes back to an older leader epoch, so the consumer moves to a
broker's epoch only when it is newer than its own.

The steps (each over a RUNNING broker b that believes it leads):
- ConsumerValidatePosition(b): b leads in an epoch newer than the consumer's.
  The consumer takes it (SubscriptionState.maybeValidatePositionForCurrentLeader)
  and, when its position has an offset epoch, asks b for that epoch's end
  offset (OffsetsForLeaderEpoch; Partition.lastOffsetForLeaderEpoch). An end
  offset below the position is a truncation: with a reset policy the position
  moves back to it (SubscriptionState.maybeCompleteValidation, "Truncation
  detected ... resetting offset to the first offset known to diverge").
- ConsumerFetch(b): b leads in the consumer's epoch and holds records from the
  position up to its HWM: the consumer reads them all (FetchIsolation
  HIGH_WATERMARK for a consumer: Partition.fetchRecords, LocalLog.read).
- ConsumerResetOffset(b): the fetch finds the position above b's LEO
  (OFFSET_OUT_OF_RANGE, LocalLog.read); with auto.offset.reset = latest the
  consumer asks b for the latest offset (ListOffsets, read_uncommitted: the
  HWM, Partition.fetchOffsetForTimestamp) and seeks there, unless b's HWM lags
  behind its leader epoch start offset (OFFSET_NOT_AVAILABLE: retried later).
  The out-of-range answer and the ListOffsets request are one step here.
"""
from __future__ import annotations

from model.kraft.fetch import last_offset_for_epoch
from model.kraft.state import BrokerStatus, ConsumedRecord, ConsumerState, Role, with_consumer

RUNNING = BrokerStatus.RUNNING
LEADER = Role.Leader
ACTIONS = ("ConsumerValidatePosition", "ConsumerFetch", "ConsumerResetOffset")


def initial_consumer(leader_epoch: int) -> ConsumerState:
    """Subscribed, the leader of Init known, nothing read: position 1 (the
    HWM of every empty log, so auto.offset.reset finds the same)."""
    return ConsumerState(leader_epoch, 1, 0, (), 0)


def _leader_epoch(s, b):
    """b's leader epoch while it is RUNNING and believes it leads, else None."""
    i = b - 1
    if s.broker_state[i].status != RUNNING or s.partition_status[i] != LEADER:
        return None
    return s.partition_metadata[i].leader_epoch


def consumer_validate_position(k, s, b, mt, out):
    """ConsumerValidatePosition(b): the consumer moves to b's newer leader epoch
    and validates its position there (KIP-320)."""
    epoch = _leader_epoch(s, b)
    c = s.consumer
    if epoch is None or epoch <= c.leader_epoch:
        return
    c = c._replace(leader_epoch=epoch)
    if c.offset_epoch:  # no offset epoch: nothing to validate (validatePosition)
        end = last_offset_for_epoch(s, b, c.offset_epoch, True)
        if end.offset is not None and end.offset < c.position:
            c = c._replace(position=end.offset, offset_epoch=end.epoch, resets=c.resets + 1)
    out.append((k.acts["ConsumerValidatePosition"][b], with_consumer(s, c)))


def consumer_fetch(k, s, b, mt, out):
    """ConsumerFetch(b): read every record from the position up to b's HWM."""
    c = s.consumer
    if _leader_epoch(s, b) != c.leader_epoch:
        return
    d = s.partition_data[b - 1]
    if c.position >= d.hwm:  # nothing committed to read (or out of range: ConsumerResetOffset)
        return
    stale = s.con_partition_metadata.leader_epoch != c.leader_epoch
    got = tuple(ConsumedRecord(r.offset, r.epoch, r.value, c.leader_epoch, stale)
                for r in d.log[c.position - 1:d.hwm - 1])
    c = c._replace(position=d.hwm, offset_epoch=got[-1].epoch, read=c.read + got)
    out.append((k.acts["ConsumerFetch"][b], with_consumer(s, c)))


def consumer_reset_offset(k, s, b, mt, out):
    """ConsumerResetOffset(b): OFFSET_OUT_OF_RANGE, then auto.offset.reset =
    latest: seek to b's HWM in b's leader epoch."""
    c = s.consumer
    if _leader_epoch(s, b) != c.leader_epoch:
        return
    i = b - 1
    d = s.partition_data[i]
    leso = s.partition_leso[i]
    if c.position <= d.leo or (leso is not None and leso > d.hwm):
        return
    c = c._replace(position=d.hwm, offset_epoch=c.leader_epoch, resets=c.resets + 1)
    out.append((k.acts["ConsumerResetOffset"][b], with_consumer(s, c)))


CONSUMER_ACTIONS = (
    ("ConsumerValidatePosition", consumer_validate_position),
    ("ConsumerFetch", consumer_fetch),
    ("ConsumerResetOffset", consumer_reset_offset),
)


def consumer_from_plain(x) -> ConsumerState:
    return ConsumerState(x[0], x[1], x[2],
                         tuple(ConsumedRecord(r[0], r[1], r[2], r[3], bool(r[4])) for r in x[3]), x[4])
