"""The consumer (Consumer = true): one consumer of the partition, as Kafka's
consumers of the ZooKeeper era (0.8 to 2.x, before KIP-320's leader epoch in
fetch requests) read it.

It keeps its position (the next offset to fetch) and, as ghost state, what
it read. It fetches from a broker it believes leads: any running broker
whose replica is leader, so a zombie leader whose session expired (or whose
successor the consumer's metadata does not know yet) serves it too - Kafka's
broker answers a consumer fetch while it believes it leads
(NOT_LEADER_FOR_PARTITION otherwise), and the fetch carries no leader epoch.
The broker answers with its records from the position up to its HW: a
consumer never reads above the HW (ReplicaManager.readFromLocalLog:
fetchOnlyCommitted for a request that is not from a replica). A position
beyond the broker's log end is OFFSET_OUT_OF_RANGE (Log.read); the consumer
then resets its position as auto.offset.reset says, "latest" by default
(ConsumerConfig; Fetcher.handleOffsetOutOfRange requests the reset), by a
ListOffsets request for the latest offset, which a leader answers with its
HW for a consumer (KafkaApis, READ_UNCOMMITTED). A position between the HW
and the log end is in range: the answer is empty (no step here).

An observer: its steps change only `consumer` (and, taken while an election
is due, the ghost behind the ElectionRaced witness), never what a broker can do.
Departures from Kafka, each a simplification: the consumer starts at offset 0
(the partition is new: earliest and latest are both 0), never crashes or
commits offsets, reads every record up to the HW in one fetch, and takes
the reset's answer from the broker it fetches from; since Kafka 2.1 (KIP-207)
a leader whose HW has not reached the start of its epoch answers the reset
with OFFSET_NOT_AVAILABLE and the consumer retries, which is not modelled.
"""
from __future__ import annotations

from model.zk.state import Role, with_changes

LEADER = Role.LEADER


def _believed_leader(s, b) -> bool:
    """b is a broker a consumer may take for the leader and that answers as one."""
    return s.running[b] and s.role[b].role == LEADER


def consumer_fetch(k, s, b, out):
    """ConsumerFetch(b): the consumer fetches from its position at b. Beyond
    b's log end: OFFSET_OUT_OF_RANGE, the position is dropped for a reset.
    Below b's HW: it reads b's records from its position up to the HW and
    moves its position to the HW."""
    c = s.consumer
    if c.position is None or not _believed_leader(s, b):
        return
    log = s.log[b]
    position = c.position
    act = k.acts["ConsumerFetch"][b]
    if position > len(log):
        out.append((act, with_changes(s, {"consumer": c._replace(position=None)})))
        return
    hw = s.hw[b]
    if hw <= position:
        return  # an empty answer: nothing changes
    read = c.read | {(o, log[o].value) for o in range(position, hw)}
    epoch = s.role[b].leader_epoch
    zk = s.zk_partition
    stale = c.stale or zk.leader != b or zk.leader_epoch != epoch
    new = c._replace(position=hw, read=read, epochs=c.epochs | {epoch}, stale=stale)
    out.append((act, with_changes(s, {"consumer": new})))


def reset_offset(k, s, b, out):
    """ResetOffset(b): after OFFSET_OUT_OF_RANGE the consumer asks b for the
    latest offset (auto.offset.reset = latest, Kafka's default) and takes b's
    HW as its position."""
    c = s.consumer
    if c.position is not None or not _believed_leader(s, b):
        return
    new = c._replace(position=s.hw[b])
    out.append((k.acts["ResetOffset"][b], with_changes(s, {"consumer": new})))
