"""The producer (0.8 replication design "Synchronous replication": the client
sends the message to the leader, which writes it to its local log). Acks =
"all" (the default): it is acknowledged once committed (replica.commit). Acks
= "1": the leader acknowledges it as soon as it has appended it to its own
log (the design's asynchronous replication), so every written value is
acknowledged in the step that writes it; the brokers do the same either way.
Each value is written at most once; a value whose leader fails before
committing it is not retried (the client would time out and resend as a new
value)."""
from __future__ import annotations

from model.zk.replica import LEADER, commit
from model.zk.state import NO_EPOCH, Record, put, with_changes


def produce(k, s, b, out):
    """Produce(b, v): a value not yet written is appended to the log of b, a
    leader (zombie leaders too: a client with stale metadata still reaches
    them). leader_epoch: the record carries the leader's epoch (KIP-101). With
    b alone in its ISR the record is committed at once. Acks = "1": v is
    acknowledged here (`written` is then also the set of acknowledged
    values)."""
    role = s.role[b]
    if role.role != LEADER or not s.running[b]:
        return
    written = s.written
    epoch = role.leader_epoch if k.variant_flags.leader_epoch else NO_EPOCH
    view = s.leader_view[b]
    acts = k.acts["Produce"]
    for v in k.values:
        if v in written:
            continue
        log = s.log[b] + (Record(epoch, v),)
        ch = {"log": put(s.log, b, log), "written": written | {v}}
        commit(k, s, b, view, log, ch)
        out.append((acts[(b, v)], with_changes(s, ch)))
