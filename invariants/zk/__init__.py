"""Properties of the `zk` model (ZooKeeper-era replication, variants
hw_truncation and leader_epoch): invariants first, then `sometimes` witnesses.

Modules by topic: durability (LeaderCompleteness, NoAckedRecordLost, under
Kafka's durability promise as defined in model/zk/ghost.py), log_matching,
validity (spec-bug catchers), witnesses.
"""
from __future__ import annotations

from model.base import ALWAYS, SOMETIMES, Property

from invariants.registry import register
from invariants.zk import durability, log_matching, validity, witnesses

# name -> (factory, one-line doc, when): `when(model)` says whether it applies
_ALWAYS = (
    ("LeaderCompleteness", durability.leader_completeness,
     "the registered leader holds every acknowledged record still under the durability "
     "promise (an ISR member holding it has been running, not losing it, since its ack)", None),
    ("NoAckedRecordLost", durability.no_acked_record_lost,
     "every acknowledged record still under the durability promise is in some replica's log "
     "(memory or disk)", None),
    ("LogMatching", log_matching.log_matching,
     "running leader / reconciled followers hold the same records below the smaller of their HWs",
     None),
    ("ValidState", validity.valid_state,
     "offsets in range, down brokers hold no role, the registered leader is live, in the ISR "
     "and leads in the znode's epoch (spec-bug catcher)", None),
    ("ValueAtOneOffset", validity.value_at_one_offset,
     "a value sits at one offset, the same in every log (spec-bug catcher)", None),
)

_SOMETIMES = (
    ("RecordCommitted", witnesses.record_committed,
     "a record is acknowledged (acks=all commit)", None),
    ("LeaderElected", witnesses.leader_elected,
     "a new leader is elected (leader epoch > 0)", None),
    ("RecordTruncated", witnesses.record_truncated,
     "a replica truncates a record away", None),
    ("IsrShrunk", witnesses.isr_shrunk,
     "the ISR loses an assigned replica", None),
    ("AckedRecordSurvivedCrash", witnesses.acked_record_survived_crash,
     "a keeper of a protected acknowledged record crashed without losing it",
     lambda m: m.crash_limit > 0),
    ("SessionExpired", witnesses.session_expired,
     "a running broker loses its ZooKeeper session", lambda m: m.session_expiry_limit > 0),
)

INVARIANT_NAMES = tuple(name for name, *_ in _ALWAYS)
WITNESS_NAMES = tuple(name for name, *_ in _SOMETIMES)


@register("zk")
def zk_properties(model) -> list[Property]:
    props = [Property(name, ALWAYS, factory(model), doc)
             for name, factory, doc, when in _ALWAYS if when is None or when(model)]
    props += [Property(name, SOMETIMES, factory(model), doc)
              for name, factory, doc, when in _SOMETIMES if when is None or when(model)]
    return props
