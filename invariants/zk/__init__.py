"""Properties of the `zk` model (ZooKeeper-era replication, variants
hw_truncation and leader_epoch): invariants first, then `sometimes` witnesses.

Modules by topic: durability (LeaderCompleteness, NoAckedRecordLost, under
Kafka's durability promise as defined in model/zk/ghost.py; NoAcksOneRecordLost,
Acks = 1, no promise), log_matching, validity (spec-bug catchers), consumer
(Consumer = true), witnesses.
"""
from __future__ import annotations

from model.base import ALWAYS, SOMETIMES, Property

from invariants.zk import consumer, durability, log_matching, validity, witnesses

# name -> (factory, one-line doc, when): `when(model)` says whether it applies
_ALWAYS = (
    ("LeaderCompleteness", durability.leader_completeness,
     "the registered leader, once it leads, holds every acknowledged record still under the "
     "durability promise (an ISR member holding it has been running, not losing it, since its ack)",
     None),
    ("NoAckedRecordLost", durability.no_acked_record_lost,
     "every acknowledged record still under the durability promise is in some replica's log "
     "(memory or disk)", None),
    ("LogMatching", log_matching.log_matching,
     "running leader / reconciled followers hold the same records below the smaller of their HWs",
     None),
    ("ValidState", validity.valid_state,
     "offsets in range, down brokers hold no role, the registered leader is in the ISR "
     "(registration: and is live and leads in the znode's epoch) (spec-bug catcher)", None),
    ("ValueAtOneOffset", validity.value_at_one_offset,
     "a value sits at one offset, the same in every log (spec-bug catcher)", None),
    ("NoAcksOneRecordLost", durability.no_acks_one_record_lost,
     "every record the leader acknowledged at its append (Acks = 1) is in some replica's log: "
     "not a Kafka promise, checked to show the loss", lambda m: not m.acks_all),
    ("ConsumedRecordKept", consumer.consumed_record_kept,
     "every record the consumer read that is still under the durability promise is at its "
     "offset in the registered leader's log, once it leads", lambda m: m.consumer),
    ("MonotonicReads", consumer.monotonic_reads,
     "the consumer never reads a different record at an offset it already read",
     lambda m: m.consumer),
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
     lambda m: m.power_loss_limit > 0 or m.process_crash_limit > 0),
    ("SessionExpired", witnesses.session_expired,
     "a running broker loses its ZooKeeper session", lambda m: m.session_expiry_limit > 0),
    ("AckedRecordLostToPowerLoss", witnesses.acked_record_lost_to_power_loss,
     "an ISR member loses a protected acknowledged record, unflushed, in a power loss",
     lambda m: m.power_loss_limit > 0),
    ("PageCacheSurvivedCrash", witnesses.page_cache_survived_crash,
     "a stopped broker holds unflushed records (its process crashed, the page cache survived)",
     lambda m: m.process_crash_limit > 0),
    ("ControlledShutdownHappened", witnesses.controlled_shutdown_happened,
     "a broker shuts down cleanly", lambda m: m.controlled_shutdown_limit > 0),
    ("ElectionRaced", witnesses.election_raced,
     "another step goes first while an election is due", lambda m: not m.prompt_election),
    ("BrokerBounced", witnesses.broker_bounced,
     "a broker registers again before the controller handled its session loss",
     lambda m: m.controller and m.broker_epochs != "kraft"),
    ("RequestOutlivedStop", witnesses.request_outlived_stop,
     "a controller's LeaderAndIsr waits for a broker that stopped",
     lambda m: m.requests_survive_stop),
    ("StaleRequestInFlight", witnesses.stale_request_in_flight,
     "a running broker has a LeaderAndIsr for an earlier registration of it in flight",
     lambda m: m.requests_survive_stop and m.broker_epochs == "kip380"),
    ("LeaderAndIsrQueued", witnesses.leader_and_isr_queued,
     "two LeaderAndIsr requests wait in one broker's queue, to be taken in order",
     lambda m: m.controller and m.fifo_requests),
    ("CaughtUpFollowerDropped", witnesses.caught_up_follower_dropped,
     "a leader drops from the ISR a follower whose last fetch had reached its LEO",
     lambda m: m.follower_stall_limit > 0),
    ("CrashDuringControlledShutdown", witnesses.crash_during_controlled_shutdown,
     "a broker crashes after the controller handled its controlled shutdown, before it stopped",
     lambda m: m.shutdown_in_steps and m.controlled_shutdown_limit > 0
     and (m.power_loss_limit > 0 or m.process_crash_limit > 0)),
    ("ControllerFailedOver", witnesses.controller_failed_over,
     "a new controller takes over", lambda m: m.controller_failover_limit > 0),
    ("UncleanLeaderLacksAckedRecord", witnesses.unclean_leader_lacks_acked_record,
     "a leader elected from outside the ISR leads without an acknowledged record",
     lambda m: m.unclean_leader_election),
    ("ZombieLeader", witnesses.zombie_leader,
     "a broker acts as leader while the znode names another leader (or epoch): two leaders",
     lambda m: m.session_expiry_limit > 0),
    ("TruncatedBelowHw", witnesses.truncated_below_hw,
     "a replica's log ends below its checkpointed HW: it truncated below its HW (the 0.8 replication "
     "design's caveat for asynchronous replication)", lambda m: m.power_loss_limit == 0),
    ("RecordConsumed", consumer.record_consumed,
     "the consumer reads a record", lambda m: m.consumer),
    ("ConsumedAcrossLeaderChange", consumer.consumed_across_leader_change,
     "the consumer reads from leaders of two leader epochs", lambda m: m.consumer),
    ("ConsumedFromStaleLeader", consumer.consumed_from_stale_leader,
     "the consumer reads from a broker the znode does not name leader in that epoch",
     lambda m: m.consumer),
    ("ConsumerOutOfRange", consumer.consumer_out_of_range,
     "the consumer's position is beyond its leader's log end (OFFSET_OUT_OF_RANGE)",
     lambda m: m.consumer),
)

INVARIANT_NAMES = tuple(name for name, *_ in _ALWAYS)
WITNESS_NAMES = tuple(name for name, *_ in _SOMETIMES)


def zk_properties(model) -> list[Property]:
    props = [Property(name, ALWAYS, factory(model), doc)
             for name, factory, doc, when in _ALWAYS if when is None or when(model)]
    props += [Property(name, SOMETIMES, factory(model), doc)
              for name, factory, doc, when in _SOMETIMES if when is None or when(model)]
    return props
