"""The partition replica on a broker: metadata-driven role changes, the high
watermark and producer acknowledgements, and the leader's AlterPartition
requests (reference: ReceiveMetadataUpdate with its six sub-actions,
SendAlterPartitionRequest, ReceiveAlterPartitionResponse, and the functions
GetCommitOffset, MaybeAdvanceHighWatermark, UpdateHwmInvariantVars,
SendAcksFor, MaybeFailPendingWrites, EnsureLeadershipRenounced).

Sub-actions write their primed variables into a dict `ch` of changed fields;
every value is computed from the pre-state `s`, as TLA+ primes are.
"""
from __future__ import annotations

from model.base import EvaluationError
from model.kraft import network
from model.kraft.controller import validate_alter_partition_request
from model.kraft.messages import CONTROLLER, AlterPartitionRequest
from model.kraft.state import (
    INT_MAX, NO_LEADER, BrokerFetcher, BrokerStatus, MsgType, PartitionFetchState,
    PendingAlterPartition, ReplicaPartitionMetadata, Role, broker_min_isr, except_at, with_changes)

LEADER = Role.Leader
FOLLOWER = Role.Follower
RUNNING = BrokerStatus.RUNNING
OFFLINE_DIRTY = BrokerStatus.OFFLINE_DIRTY
NO_PENDING_AP = PendingAlterPartition(0, None)
NO_FETCH = BrokerFetcher(None, False)
NO_FETCH_PENDING = BrokerFetcher(None, True)


# ---- log, HWM and acknowledgements ---------------------------------------------

def commit_offset(s, b, maximal_isr, leo, replica_row):
    """GetCommitOffset: the highest offset every maximal-ISR member holds (0: none).

    Quirk kept: the first CASE arm tests the replica's *current* LEO, not `leo`,
    so the first write to an empty log commits nothing in the same step.
    """
    if s.partition_data[b - 1].leo == 1:
        return 0
    highest = leo - 1
    for b1 in maximal_isr:
        if b1 == b:  # the leader counts itself
            continue
        follower_leo = replica_row[b1 - 1].leo
        if follower_leo is None:
            return 0
        if follower_leo - 1 < highest:
            highest = follower_leo - 1
    return highest if highest >= 1 else 0


def acks_for(s, b, lower, higher):
    """The `values` of SendAcksFor(b, lower, higher, _): sent, not yet acked
    values written by this leader (offset >= its floor leader offset) at an
    offset in lower..higher of its current log."""
    sent = s.inv_sent
    if not sent:
        return ()
    pos, neg = s.inv_pos_acked, s.inv_neg_acked
    log = s.partition_data[b - 1].log
    flo = s.aux_flo[b - 1]
    found = []
    for v in sent:
        if v in pos or v in neg:
            continue
        for offset in range(lower, higher + 1):  # \E offset, first match wins
            if offset < 1 or offset > len(log):
                raise EvaluationError(
                    f"SendAcksFor reads offset {offset} of broker {b}'s log of length {len(log)}")
            if log[offset - 1].value == v and offset >= flo:
                found.append(v)
                break
    return found


def subseq(seq, m, n, what):
    """SubSeq(seq, m, n) with TLC's domain checks."""
    if m > n:
        return ()
    if m < 1 or m > len(seq) or n > len(seq):
        raise EvaluationError(f"SubSeq({what}, {m}, {n}) outside a sequence of length {len(seq)}")
    return seq[m - 1:n]


def update_hwm_invariant_vars(k, s, b, old_hwm, new_hwm, positive, ch):
    """UpdateHwmInvariantVars: ack up to the new HWM (positive) or nack from the
    old HWM (negative), and move the true HWM / consumed records. Reads the
    pre-state log, inv_sent and aux_flo."""
    if positive:
        values = acks_for(s, b, old_hwm, new_hwm - 1)
        if values:
            ch["inv_pos_acked"] = s.inv_pos_acked.union(values)
    else:
        values = acks_for(s, b, old_hwm, s.partition_data[b - 1].leo - 1)
        if values:
            ch["inv_neg_acked"] = s.inv_neg_acked.union(values)
    true_hwm = s.inv_true_hwm
    if new_hwm > true_hwm:
        ch["inv_true_hwm"] = new_hwm
        ch["inv_consumed"] = s.inv_consumed + subseq(
            s.partition_data[b - 1].log, true_hwm, new_hwm - 1, f"partition_data[{b}].log")


def can_advance_hwm(k, s, b, isr, old_hwm, new_hwm, ch=None):
    """CanAdvanceHwm (kip966: only while the ISR >= MinISR, the leader b's
    value); v3.5: new > old."""
    return new_hwm > old_hwm and (not k.variant_flags.hwm_needs_min_isr
                                  or len(isr) >= broker_min_isr(k, s, b, ch))


def maybe_advance_hwm(k, s, b, isr, old_hwm, new_hwm, positive, ch):
    """MaybeAdvanceHighWatermark."""
    if not can_advance_hwm(k, s, b, isr, old_hwm, new_hwm, ch):
        return
    ch["partition_data"] = except_at(s.partition_data, b,
                                     s.partition_data[b - 1]._replace(hwm=new_hwm))
    update_hwm_invariant_vars(k, s, b, old_hwm, new_hwm, positive, ch)


def update_hwm_on_partition_change(k, s, b, part_md, ch):
    """MaybeUpdateHwmAndAckOnPartitionChange: recompute the HWM over the new
    maximal ISR (with the pre-state follower LEOs); ack positively only if the
    maximal ISR still has MinISR members."""
    d = s.partition_data[b - 1]
    maximal_isr = part_md.maximal_isr
    new_hwm = commit_offset(s, b, maximal_isr, d.leo, s.partition_replica_state[b - 1]) + 1
    maybe_advance_hwm(k, s, b, part_md.isr, d.hwm, new_hwm,
                      len(maximal_isr) >= broker_min_isr(k, s, b, ch), ch)


def fail_pending_writes(s, b, ch):
    """FailPendingWrites: nack this leader's unacked records above the HWM."""
    d = s.partition_data[b - 1]
    values = acks_for(s, b, d.hwm, d.leo - 1)
    if values:
        ch["inv_neg_acked"] = s.inv_neg_acked.union(values)


def ensure_leadership_renounced(k, s, b, new_md, ch):
    """EnsureLeadershipRenounced (with MaybeFailPendingWrites)."""
    d = s.partition_data[b - 1]
    if d.hwm < d.leo and (len(new_md.isr) < broker_min_isr(k, s, b, ch) or b != new_md.leader):
        fail_pending_writes(s, b, ch)
    ch["partition_replica_state"] = except_at(s.partition_replica_state, b, k.blank_replica_row)
    ch["partition_pending_ap"] = except_at(s.partition_pending_ap, b, NO_PENDING_AP)
    ch["aux_flo"] = except_at(s.aux_flo, b, INT_MAX)


def fetchers_without_partition(row):
    """RemovePartitionFromFetchers' row: no partition, pending_response kept
    (the row itself when it fetches nothing: unchanged objects cost the
    engine and the invariants nothing)."""
    for f in row:
        if f.partition is not None:
            return tuple(f if f.partition is None
                         else (NO_FETCH_PENDING if f.pending_response else NO_FETCH)
                         for f in row)
    return row


# ---- ReceiveMetadataUpdate -------------------------------------------------------

class _IdentityMemo(dict):
    """id(record) -> (record, value); holds the record, so that its id cannot
    be reused while remembered. Pickles empty (ids mean nothing elsewhere)."""

    __slots__ = ()

    def __reduce__(self):
        return (_IdentityMemo, ())


_metadata_memo = _IdentityMemo()


_prefix_memo = _IdentityMemo()


def log_prefix(clog, n):
    """clog[:n] (SubSeq(con_metadata_log, 1, n)), one object per (log, n):
    the brokers' copies of the metadata log are then the controller's log or
    shared prefixes of it, which the engine encodes once and the invariants
    compare by identity."""
    if n == len(clog):
        return clog
    key = (id(clog), n)
    hit = _prefix_memo.get(key)
    if hit is not None and hit[0] is clog:
        return hit[1]
    prefix = clog[:n]
    if len(_prefix_memo) >= 1 << 14:
        _prefix_memo.clear()
    _prefix_memo[key] = (clog, prefix)
    return prefix


def caught_up_log(bml, clog, md_offset):
    """bml \\o SubSeq(con_metadata_log, Len(bml) + 1, md_offset): a prefix of
    the controller's log when bml is one (always, while the metadata logs
    match), an equal value in a shared object."""
    if clog[:len(bml)] == bml:
        return log_prefix(clog, md_offset)
    return bml + clog[len(bml):md_offset]


def metadata_of_record(record):
    """The replica metadata a broker takes from a metadata record (its
    maximal ISR is the record's ISR): one object per record, so the states
    that applied the same record share it (the engine's encoding cache and
    the invariants' identity memos then find it known)."""
    hit = _metadata_memo.get(id(record))
    if hit is not None and hit[0] is record:
        return hit[1]
    md = ReplicaPartitionMetadata(record.replicas, record.isr, record.isr, record.leader,
                                  record.leader_epoch, record.partition_epoch)
    if len(_metadata_memo) >= 1 << 14:
        _metadata_memo.clear()
    _metadata_memo[id(record)] = (record, md)
    return md


def _remain_leader(k, s, b, new_md, ch):
    update_hwm_on_partition_change(k, s, b, new_md, ch)
    if new_md.partition_epoch >= s.partition_pending_ap[b - 1].epoch:
        ch["partition_pending_ap"] = except_at(s.partition_pending_ap, b, NO_PENDING_AP)


def _become_leader_in_new_epoch(k, s, b, new_md, is_new_leader, ch):
    i = b - 1
    ch["partition_status"] = except_at(s.partition_status, b, LEADER)
    update_hwm_on_partition_change(k, s, b, new_md, ch)
    ch["partition_leso"] = except_at(s.partition_leso, b, s.partition_data[i].leo)
    if is_new_leader:
        row = k.blank_replica_row
    elif k.mutant.skip_reset_out_of_sync_followers:  # CHECK skipped (a mutant)
        row = s.partition_replica_state[i]
    else:  # forget the out-of-sync followers only (ResetFollowerStateOfAllButISR)
        old = s.partition_replica_state[i]
        isr = new_md.isr
        blank = k.blank_replica
        row = tuple(old[j] if j + 1 in isr else blank for j in range(k.n))
    ch["partition_replica_state"] = except_at(s.partition_replica_state, b, row)
    ch["partition_pending_ap"] = except_at(s.partition_pending_ap, b, NO_PENDING_AP)
    ch["broker_fetchers"] = except_at(s.broker_fetchers, b,
                                      fetchers_without_partition(s.broker_fetchers[i]))


def _become_follower_in_new_epoch(k, s, b, new_md, old_md, ch):
    i = b - 1
    ch["partition_status"] = except_at(s.partition_status, b, FOLLOWER)
    leader = new_md.leader
    row = s.broker_fetchers[i]
    # AddPartitionToFetcher
    if ((new_md.leader_epoch > old_md.leader_epoch  # CHECK (a mutant may skip it)
            and not k.mutant.skip_add_fetcher_epoch_check) or row[leader - 1].partition is None):
        d = s.partition_data[i]
        added = PartitionFetchState(d.leo, d.log[-1].epoch if d.log else 0, False)
        new_row = tuple(
            BrokerFetcher(added, f.pending_response) if peer == leader
            else (NO_FETCH_PENDING if f.pending_response else NO_FETCH)
            for peer, f in enumerate(row, 1))
        ch["broker_fetchers"] = except_at(s.broker_fetchers, b, new_row)
    ch["partition_leso"] = except_at(s.partition_leso, b, None)
    ensure_leadership_renounced(k, s, b, new_md, ch)


def _wait_for_leader_change(k, s, b, new_md, ch):
    ch["partition_status"] = except_at(s.partition_status, b, None)
    ch["broker_fetchers"] = except_at(s.broker_fetchers, b,
                                      fetchers_without_partition(s.broker_fetchers[b - 1]))
    ch["partition_leso"] = except_at(s.partition_leso, b, None)
    ensure_leadership_renounced(k, s, b, new_md, ch)


def _delete_partition(k, s, b, new_md, ch):
    ch["partition_status"] = except_at(s.partition_status, b, None)
    ch["broker_fetchers"] = except_at(s.broker_fetchers, b,
                                      fetchers_without_partition(s.broker_fetchers[b - 1]))
    ch["partition_leso"] = except_at(s.partition_leso, b, None)
    ch["partition_data"] = except_at(s.partition_data, b, k.empty_data)
    ensure_leadership_renounced(k, s, b, new_md, ch)


def _metadata_successor(k, s, b, md_offset):
    """The LET/IN body of ReceiveMetadataUpdate for one md_offset; None if the
    CASE's last arm is disabled (not a replica, no leader)."""
    i = b - 1
    clog = s.con_metadata_log
    bml = s.broker_metadata_log[i]
    record = clog[md_offset - 1]
    if md_offset > len(bml) + 1 and k.mutant.skip_noop_metadata_records:
        ch = {"broker_metadata_log": except_at(s.broker_metadata_log, b, bml + (record,))}
    else:
        ch = {"broker_metadata_log": except_at(s.broker_metadata_log, b,
                                               caught_up_log(bml, clog, md_offset))}
    old_md = s.partition_metadata[i]
    if record.partition_epoch > old_md.partition_epoch:
        replicas = record.replicas
        new_md = metadata_of_record(record)
        in_new = b in replicas
        ch["partition_metadata"] = except_at(s.partition_metadata, b,
                                             new_md if in_new else k.blank_metadata)
        if b in old_md.replicas and not in_new:
            _delete_partition(k, s, b, new_md, ch)
        elif record.leader == b:
            if old_md.leader == b and old_md.leader_epoch == new_md.leader_epoch:
                _remain_leader(k, s, b, new_md, ch)
            else:
                _become_leader_in_new_epoch(k, s, b, new_md,
                                            s.partition_status[i] != LEADER, ch)
        elif in_new and record.leader != NO_LEADER:
            if not (new_md.leader_epoch == old_md.leader_epoch and old_md.leader != b):
                _become_follower_in_new_epoch(k, s, b, new_md, old_md, ch)
            # else RemainFollower: only the metadata changes
        else:
            if not in_new:
                return None
            _wait_for_leader_change(k, s, b, new_md, ch)
    # else MetadataNoOp: only the metadata log grows
    return with_changes(s, ch)


def receive_metadata_update(k, s, b, mt, out):
    """ReceiveMetadataUpdate(b): \\E md_offset among the unreplicated offsets
    whose record needs action (PartitionNeedsAction); the broker appends the
    records up to md_offset and applies the last one.

    PartitionNeedsAction is a disjunction in action position: TLC continues
    once per true disjunct, so a leader seeing a leader-epoch bump (or a record
    that adds it) generates its successor twice.
    """
    i = b - 1
    bs = s.broker_state[i]
    if bs.status <= OFFLINE_DIRTY or not bs.registered:
        return
    known = len(s.broker_metadata_log[i])
    clog = s.con_metadata_log
    if known >= len(clog):
        return
    act = k.acts["ReceiveMetadataUpdate"][b]
    is_leader = s.partition_status[i] == LEADER
    md = s.partition_metadata[i]
    is_replica = b in md.replicas
    for md_offset in range(known + 1, len(clog) + 1):
        record = clog[md_offset - 1]
        if is_replica:
            witnesses = is_leader + (record.leader_epoch > md.leader_epoch)
        else:
            witnesses = is_leader + (b in record.replicas)
        if not witnesses:
            continue
        succ = _metadata_successor(k, s, b, md_offset)
        if succ is None:
            continue
        out.append((act, succ))
        if witnesses == 2:
            out.append((act, succ))


# ---- AlterPartition (leader side) -------------------------------------------------

def _send_alter_partition(k, s, b, md, timed_out, act, out):
    """DoSendAlterPartitionRequest(b, timed_out_isr)."""
    i = b - 1
    curr = md.isr
    row = s.partition_replica_state[i]
    hwm = s.partition_data[i].hwm
    leso = s.partition_leso[i]
    proposed = []
    for b1 in sorted(md.replicas):  # ProposeNewISR / FollowerIsCaughtUp
        if b1 == b:
            proposed.append(b1)
        elif b1 in curr:
            if b1 not in timed_out:
                proposed.append(b1)
        else:
            leo = row[b1 - 1].leo
            mut = k.mutant  # FollowerIsCaughtUp's three CHECKs; mutants may skip each
            if leo is None:  # a mutant without the Nil check: never heard of = caught up
                if mut.skip_follower_leo_nil_check:
                    proposed.append(b1)
            elif leo >= hwm or mut.skip_follower_hwm_check:
                if mut.skip_follower_leso_check:
                    proposed.append(b1)
                    continue
                if leso is None:
                    raise EvaluationError(
                        f"FollowerIsCaughtUp compares follower {b1}'s LEO with partition_leso[{b}] = Nil")
                if leo >= leso:
                    proposed.append(b1)
    proposed_isr = frozenset(proposed)
    if proposed_isr == curr:
        return
    broker_epoch = s.broker_state[i].broker_epoch
    isr_and_epochs = tuple(  # IsrAndEpochs: only the leader and added members carry an epoch
        (b1, broker_epoch if b1 == b else (0 if b1 in curr else row[b1 - 1].broker_epoch))
        for b1 in proposed)
    request = AlterPartitionRequest(MsgType.AlterPartitionRequest, proposed_isr, isr_and_epochs,
                                    b, md.leader_epoch, md.partition_epoch, broker_epoch,
                                    b, CONTROLLER)
    # __AvoidCycle: ~PreviouslySent \/ (PreviouslySent /\ accepted) - see network
    sent_before = network.previously_sent_witnesses(s.messages, s.messages_discard, request)
    if not sent_before:
        witnesses = 1
    elif validate_alter_partition_request(s, b, request, k.mutant) is None:
        witnesses = sent_before
    else:
        return
    ctrs = s.aux_ctrs
    if curr - proposed_isr:  # MaybeIncrementShrinkCtr
        ctrs = ctrs._replace(leader_shrink_isr_ctr=ctrs.leader_shrink_isr_ctr + 1)
    succ = with_changes(s, dict(
        messages=network.send(s.messages, request),
        partition_metadata=except_at(s.partition_metadata, b,
                                     md._replace(maximal_isr=proposed_isr | curr)),
        partition_pending_ap=except_at(s.partition_pending_ap, b,
                                       PendingAlterPartition(md.partition_epoch + 1, request)),
        aux_ctrs=ctrs))
    for _ in range(witnesses):
        out.append((act, succ))


def send_alter_partition_request(k, s, b, mt, out):
    """SendAlterPartitionRequest(b): the leader proposes a new ISR (grown by
    caught-up followers; shrunk by a nondeterministic set of timed-out members
    while the shrink budget lasts) and eagerly widens its maximal ISR."""
    i = b - 1
    if s.broker_state[i].status != RUNNING:
        return
    md = s.partition_metadata[i]
    if s.partition_pending_ap[i].epoch > md.partition_epoch:  # PendingAlterPartitionResponse
        return
    if s.partition_status[i] != LEADER:
        return
    act = k.acts["SendAlterPartitionRequest"][b]
    if s.aux_ctrs.leader_shrink_isr_ctr < k.leader_shrink_isr_limit:
        for timed_out in k.subsets(md.isr):
            if b not in timed_out:
                _send_alter_partition(k, s, b, md, timed_out, act, out)
    else:
        _send_alter_partition(k, s, b, md, frozenset(), act, out)


def receive_alter_partition_response(k, s, b, mt, out):
    """ReceiveAlterPartitionResponse(b): commit the accepted partition state, or
    roll the maximal ISR back to the ISR on an error; either way recompute the
    HWM. Stale or reassignment-completing responses are ignored."""
    resps = mt[MsgType.AlterPartitionResponse]
    if not resps:
        return
    i = b - 1
    if s.broker_state[i].status != RUNNING or s.partition_status[i] != LEADER:
        return
    md = s.partition_metadata[i]
    pending = s.partition_pending_ap[i]
    if not pending.epoch > md.partition_epoch:
        return
    act = k.acts["ReceiveAlterPartitionResponse"][b]
    for m in resps:
        if m.dest != b or pending.request != m.request:
            continue
        if m.error is None:
            if not (m.partition_epoch > md.partition_epoch and m.leader_epoch == md.leader_epoch):
                continue
            part = ReplicaPartitionMetadata(m.replicas, m.isr, m.isr, m.leader,
                                            m.leader_epoch, m.partition_epoch)
        else:  # RollbackPartitionChange
            part = md._replace(maximal_isr=md.isr)
        ch = {"partition_metadata": except_at(s.partition_metadata, b, part)}
        update_hwm_on_partition_change(k, s, b, part, ch)
        ch["partition_pending_ap"] = except_at(s.partition_pending_ap, b, NO_PENDING_AP)
        ch["messages"], ch["messages_discard"] = network.discard(s.messages, s.messages_discard, m)
        out.append((act, with_changes(s, ch)))
