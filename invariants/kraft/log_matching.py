"""Log Matching: replicas agree on what they have made stable.

The v3.5 description (section 2.3), "Log Matching property: the stable prefix of the log
is identical on all replicas, bounded by min(leader HWM, follower HWM)"; the
reference's LogMatchingProperty, MetadataLogMatchingProperty (the metadata
log, controller vs brokers) and ConsistentReadProperty (what consumers read
below the True HWM stays in the non-stale leader's log).
"""
from __future__ import annotations

from model.base import EvaluationError
from model.kraft.state import Role

from invariants.kraft.common import KraftContext, memo_true_by_identity

LEADER = Role.Leader
_UNSET = object()


def log_matching(ctx: KraftContext):
    """LogMatchingProperty. The reference bounds the offsets by
    1..Cardinality(Values) (a log never holds more records than values) and
    compares, for every pair of brokers whose LEO and HWM are both above the
    offset, the values at that offset. Brokers eligible at offset o+1 are
    eligible at o, so the scan stops at the first offset nobody has made
    stable."""
    max_offset = ctx.value_count

    def LogMatchingProperty(s) -> bool:
        data = s.partition_data
        for offset in range(1, max_offset + 1):
            first = _UNSET
            for d in data:
                if d.leo > offset and d.hwm > offset:
                    log = d.log
                    if offset > len(log):
                        # TLC would stop here: log[offset] outside DOMAIN log
                        raise EvaluationError(
                            f"LogMatchingProperty: log[{offset}] of a log of length {len(log)} "
                            f"(LEO {d.leo}, HWM {d.hwm})", state=s)
                    v = log[offset - 1].value
                    if first is _UNSET:
                        first = v
                    elif v != first:
                        return False
            if first is _UNSET:
                return True
        return True

    return memo_true_by_identity(LogMatchingProperty, "partition_data")


def metadata_log_matching(ctx: KraftContext):
    """MetadataLogMatchingProperty: each broker's metadata log is a prefix of
    the controller's (compared up to the shorter of the two)."""

    def MetadataLogMatchingProperty(s) -> bool:
        con = s.con_metadata_log
        n = len(con)
        for log in s.broker_metadata_log:
            if log is con:
                continue
            m = len(log)
            if m < n:
                if log != con[:m]:
                    return False
            elif m == n:
                if log != con:
                    return False
            elif log[:n] != con:
                return False
        return True

    return MetadataLogMatchingProperty


def consistent_read(ctx: KraftContext):
    """ConsistentReadProperty: every record consumed so far (inv_consumed) is
    still at its offset in the log of each non-stale leader."""
    n = ctx.broker_count

    def ConsistentReadProperty(s) -> bool:
        consumed = s.inv_consumed
        if not consumed:
            return True
        status = s.partition_status
        leader_epoch = s.con_partition_metadata.leader_epoch
        k = len(consumed)
        for i in range(n):
            if status[i] != LEADER or s.partition_metadata[i].leader_epoch != leader_epoch:
                continue  # not IsNonStaleLeader(b)
            log = s.partition_data[i].log
            m = len(log)
            if m < k:  # some consumed offset is not in LogOffsets(b)
                return False
            if (log != consumed) if m == k else (log[:k] != consumed):
                return False
        return True

    return ConsistentReadProperty
