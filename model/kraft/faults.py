"""Broker failures (reference: kip966 DataLossShutdown / NoDataLossShutdown,
v3.5 UncleanShutdown / CleanShutdown, FailPendingWritesIfLeader).

In both, the controller notices in the same step and fences the broker
(HandleBrokerFenced), and every fetch session with the broker is dropped.
"""
from __future__ import annotations

from model.kraft.controller import FENCED, handle_broker_fenced
from model.kraft.fetch import drop_fetch_sessions
from model.kraft.replica import LEADER, NO_PENDING_AP, OFFLINE_DIRTY, fail_pending_writes
from model.kraft.state import INT_MAX, BrokerState, BrokerStatus, except_at, with_changes

OFFLINE_CLEAN = BrokerStatus.OFFLINE_CLEAN


def stop_changes(k, s, b, new_broker_state, ctr_field) -> dict:
    """The changes every stop of broker b makes (also the storage variants'):
    its broker state, its fetch sessions dropped, its partition role and
    in-memory replica state gone, the stop counted."""
    msgs, disc, fetchers = drop_fetch_sessions(k, s, b)
    return {
        "broker_state": except_at(s.broker_state, b, new_broker_state),
        "messages": msgs, "messages_discard": disc, "broker_fetchers": fetchers,
        "partition_status": except_at(s.partition_status, b, None),
        "partition_replica_state": except_at(s.partition_replica_state, b, k.blank_replica_row),
        "partition_pending_ap": except_at(s.partition_pending_ap, b, NO_PENDING_AP),
        "aux_ctrs": s.aux_ctrs._replace(**{ctr_field: getattr(s.aux_ctrs, ctr_field) + 1}),
        "aux_flo": except_at(s.aux_flo, b, INT_MAX),
    }


def fail_and_fence(k, s, b, ch, fence: bool = True) -> list:
    """The end of a stop: FailPendingWritesIfLeader, then (fence) the
    controller fences b in the same step. One successor per election option."""
    i = b - 1
    d = s.partition_data[i]
    if s.partition_status[i] == LEADER and d.hwm < d.leo:  # FailPendingWritesIfLeader
        fail_pending_writes(s, b, ch)
    if not fence:
        return [with_changes(s, ch)]
    options, new_unfenced = handle_broker_fenced(k, s, b)
    reg = s.con_broker_reg[i]
    ch["con_broker_reg"] = except_at(s.con_broker_reg, b, reg._replace(status=FENCED))
    ch["con_unfenced"] = new_unfenced
    out = []
    for cpm, log in options:
        ch["con_partition_metadata"] = cpm
        ch["con_metadata_log"] = log
        out.append(with_changes(s, ch))
    return out


def _shutdown(k, s, b, act, new_broker_state, lossy, ctr_field, out):
    """The effect shared by both shutdowns; `lossy` also wipes log and LESO."""
    ch = stop_changes(k, s, b, new_broker_state, ctr_field)
    if lossy:  # the whole log is lost, not just an unflushed tail
        ch["partition_data"] = except_at(s.partition_data, b, k.empty_data)
        ch["partition_leso"] = except_at(s.partition_leso, b, None)
    out.extend((act, t) for t in fail_and_fence(k, s, b, ch))


def lossy_shutdown(k, s, b, mt, out):
    """DataLossShutdown(b) (kip966) / UncleanShutdown(b) (v3.5): the broker stops
    and loses its whole partition log and its broker epoch on file.
    v3.5 with AvoidLastReplicaStanding: not enabled for the sole ISR member."""
    flags = k.variant_flags
    if getattr(s.aux_ctrs, flags.lossy_ctr) >= k.lossy_limit:
        return
    if flags.lrs_guard and k.avoid_last_replica_standing:
        isr = s.con_partition_metadata.isr
        if b in isr and len(isr) == 1:
            return
    if s.broker_state[b - 1].status <= OFFLINE_DIRTY:
        return
    _shutdown(k, s, b, k.acts[flags.lossy_shutdown][b],
              BrokerState(BrokerStatus.OFFLINE_DIRTY, 0, 0, False), True, flags.lossy_ctr, out)


def keep_log_shutdown(k, s, b, mt, out):
    """NoDataLossShutdown(b) (kip966): \\E is_clean_shutdown \\in BOOLEAN; the log
    survives and a clean shutdown writes the broker epoch to file (else 0).
    CleanShutdown(b) (v3.5): the log survives, the epoch is forgotten."""
    flags = k.variant_flags
    if getattr(s.aux_ctrs, flags.keep_log_ctr) >= k.keep_log_limit:
        return
    bs = s.broker_state[b - 1]
    if bs.status <= OFFLINE_DIRTY:
        return
    act = k.acts[flags.keep_log_shutdown][b]
    if flags.keep_log_chooses_clean:
        for is_clean in (False, True):
            _shutdown(k, s, b, act,
                      BrokerState(OFFLINE_CLEAN, bs.broker_epoch if is_clean else 0, 0, False),
                      False, flags.keep_log_ctr, out)
    else:
        _shutdown(k, s, b, act, BrokerState(OFFLINE_CLEAN, 0, 0, False), False,
                  flags.keep_log_ctr, out)
