"""Unclean recovery (kip966_storage; KIP-966 description 5.3), selected by
UncleanRecoveryStrategy (`unclean.recovery.strategy`):

- balanced: starts only when the partition has no leader and ISR and ELR are
  both empty; asks every LastKnownELR member for its log (GetReplicaLogInfo)
  and, once all have answered, elects the one with the highest (last leader
  epoch, LEO);
- proactive: starts as soon as the partition has no leader and no unfenced
  ISR / ELR member (ELR members may exist, fenced); asks every replica and
  elects the best log among whatever answers have come in (any non-empty
  subset: completing is a step of its own, interleaved with the answers);
- manual: no automatic election (none of these actions is part of Next);
- last_known_leader (what Kafka 4.x ships instead of the three above): the
  LastKnownELR holds the leader at the change that emptied the ISR
  (controller.last_known_leader) and ElectLastKnownLeader elects it once it
  is unfenced, ISR and ELR being empty - no log is inspected.

UncleanLeaderElection (unclean.leader.election.enable) adds ElectUncleanLeader:
any unfenced replica of a partition without a clean candidate.

Each completed recovery is reported as a potential data-loss event (section
5.3.2): ghost_reported counts it and records, as ghost knowledge, the
committed values the elected replica lacks. The elected replica's log becomes
the reference: it is no longer UNCLEAN for the Unclean Exclusion property.

con_recovery holds the recovery in progress (the partition epoch it started
at, who was asked, the answers). It is stale once the partition epoch moved
(a clean election or an ELR change happened meanwhile) or an answer's broker
is fenced or re-registered; a stale recovery can be started afresh, never
completed. Starting and completing drop the GetReplicaLogInfo messages still
in flight (the controller ignores late ones anyway; dropping them keeps them
out of the state).
"""
from __future__ import annotations

from model.kraft import network
from model.kraft.controller import EMPTY, UNFENCED, apply_partition_change, update_elr
from model.kraft.messages import CONTROLLER, GetReplicaLogInfoRequest, GetReplicaLogInfoResponse
from model.kraft.state import (
    NO_LEADER, BrokerStatus, Ghost, LogInfo, RecoveryMsgType, RecoveryReport, UncleanRecovery, except_at,
    with_changes)

REQUEST = RecoveryMsgType.GetReplicaLogInfoRequest
RESPONSE = RecoveryMsgType.GetReplicaLogInfoResponse
RUNNING_STATUS = BrokerStatus.RUNNING


def is_stale(s, rec) -> bool:
    """The recovery no longer describes the partition or its answerers."""
    if rec.partition_epoch != s.con_partition_metadata.partition_epoch:
        return True
    reg = s.con_broker_reg
    for a in rec.answers:
        r = reg[a.broker - 1]
        if r.status != UNFENCED or r.broker_epoch != a.broker_epoch:
            return True
    return False


def _without_recovery_messages(s):
    dropped = [m for m in s.messages if m[0] == REQUEST or m[0] == RESPONSE]
    if not dropped:
        return s.messages, s.messages_discard
    return network.drop(s.messages, s.messages_discard, dropped)


def start_unclean_recovery(k, s, mt, out):
    """StartUncleanRecovery: no clean election is possible (balanced: ISR and
    ELR empty; proactive: no unfenced ISR / ELR member); ask the recovery
    quorum (balanced: the LastKnownELR; proactive: every replica)."""
    md = s.con_partition_metadata
    if md.leader != NO_LEADER:
        return
    rec = s.con_recovery
    if rec is not None and not is_stale(s, rec):
        return
    if k.strategy == "balanced":
        if md.isr or md.elr:
            return
        asked = md.last_known_elr
    else:  # proactive
        unfenced = s.con_unfenced - k.in_controlled_shutdown(s)  # the active brokers
        if md.isr & unfenced or md.elr & unfenced:
            return
        asked = md.replicas
    if not asked:
        return
    msgs, disc = _without_recovery_messages(s)
    for b in sorted(asked):
        msgs = network.send(msgs, GetReplicaLogInfoRequest(REQUEST, md.partition_epoch, b, CONTROLLER))
    out.append((k.acts["StartUncleanRecovery"][0], with_changes(s, dict(
        con_recovery=UncleanRecovery(md.partition_epoch, asked, EMPTY),
        messages=msgs, messages_discard=disc))))


def receive_get_replica_log_info_request(k, s, b, mt, out):
    """ReceiveGetReplicaLogInfoRequest(b): a running broker answers with its
    broker epoch, the leader epoch of its last record and its LEO."""
    reqs = mt[REQUEST]
    if not reqs:
        return
    i = b - 1
    bs = s.broker_state[i]
    if bs.status != RUNNING_STATUS:
        return
    d = s.partition_data[i]
    last_epoch = d.log[-1].epoch if d.log else 0
    act = k.acts["ReceiveGetReplicaLogInfoRequest"][b]
    for m in reqs:
        if m.dest != b:
            continue
        resp = GetReplicaLogInfoResponse(RESPONSE, m.partition_epoch, bs.broker_epoch, last_epoch,
                                         d.leo, CONTROLLER, b)
        msgs, disc = network.reply(s.messages, s.messages_discard, m, resp)
        out.append((act, with_changes(s, dict(messages=msgs, messages_discard=disc))))


def receive_get_replica_log_info_response(k, s, b, mt, out):
    """ReceiveGetReplicaLogInfoResponse(b): the controller records broker b's
    answer to the recovery in progress (a late or stale answer is dropped)."""
    resps = mt[RESPONSE]
    if not resps:
        return
    act = k.acts["ReceiveGetReplicaLogInfoResponse"][b]
    rec = s.con_recovery
    for m in resps:
        if m.source != b:
            continue
        msgs, disc = network.discard(s.messages, s.messages_discard, m)
        ch = dict(messages=msgs, messages_discard=disc)
        if rec is not None and m.partition_epoch == rec.partition_epoch and b in rec.asked:
            answers = frozenset(a for a in rec.answers if a.broker != b)
            ch["con_recovery"] = rec._replace(answers=answers | {LogInfo(b, m.broker_epoch,
                                                                         m.last_epoch, m.leo)})
        out.append((act, with_changes(s, ch)))


def committed_values(s) -> frozenset:
    """Ghost knowledge: the values of every committed record (consumed below
    the True HWM, or positively acknowledged)."""
    consumed = s.inv_consumed
    if not consumed:
        return s.inv_pos_acked
    return s.inv_pos_acked | frozenset(r.value for r in consumed)


def complete_unclean_recovery(k, s, mt, out):
    """CompleteUncleanRecovery: elect the answer with the highest (last leader
    epoch, LEO) - balanced once every asked replica answered, proactive with
    any answers - as sole ISR member and leader, and report a potential
    data-loss event. Ties: one successor per tied replica."""
    rec = s.con_recovery
    if rec is None or not rec.answers:
        return
    md = s.con_partition_metadata
    if md.leader != NO_LEADER or is_stale(s, rec):
        return
    if k.strategy == "balanced" and len(rec.answers) != len(rec.asked):
        return
    shutting = k.in_controlled_shutdown(s)  # never elected (not active)
    answers = [a for a in rec.answers if a.broker not in shutting] if shutting else rec.answers
    if not answers:
        return
    best = max((a.last_epoch, a.leo) for a in answers)
    winners = sorted(a.broker for a in answers if (a.last_epoch, a.leo) == best)
    msgs, disc = _without_recovery_messages(s)
    act = k.acts["CompleteUncleanRecovery"][0]
    for c in winners:
        isr = frozenset((c,))
        elr = update_elr(k, s, md.elr, md.isr, isr, md.replicas) - isr
        out.append((act, _elect_and_report(k, s, c, elr, dict(
            con_recovery=None, messages=msgs, messages_discard=disc))))


def _elect_and_report(k, s, c, elr, ch, unclean_election=False):
    """s with c elected as leader and sole ISR member (new leader and partition
    epochs), the election reported as a potential data-loss event (ghost: the
    committed values c lacks), and c's log the reference from now on. Kafka's
    unclean elections (`unclean_election`: unclean.leader.election, the last
    known leader) mark the partition RECOVERING with LeaderRecoveryState
    (KIP-704, PartitionChangeBuilder.tryElection); KIP-966's unclean recovery,
    which its description does not tie to KIP-704, does not."""
    md = s.con_partition_metadata
    cpm, log = apply_partition_change(k, s, md.replicas, c, frozenset((c,)), elr,
                                      md.leader_epoch + 1, md.partition_epoch + 1,
                                      md.adding, md.removing)
    lost = committed_values(s) - frozenset(r.value for r in s.partition_data[c - 1].log)
    reported = s.ghost_reported
    ch.update(con_partition_metadata=cpm, con_metadata_log=log,
              ghost_reported=RecoveryReport(reported.count + 1, reported.lost | lost))
    if unclean_election and k.leader_recovery and not s.con_leader_recovering:  # KIP-704
        ch["con_leader_recovering"] = True
    if s.ghost_unclean[c - 1] == Ghost.UNCLEAN:  # its log is now the reference
        ch["ghost_unclean"] = except_at(s.ghost_unclean, c, Ghost.TRUSTED)
    return with_changes(s, ch)


# ---- what Kafka 4.x ships (PartitionChangeBuilder.electAnyLeader) ------------------

def _last_known_leader_electable(k, md, unfenced) -> bool:
    """canElectLastKnownLeader, as Kafka's documentation states it: ISR and ELR
    empty, the LastKnownELR a single replica (the last leader), unfenced."""
    return (k.last_known_leader and not md.isr and not md.elr
            and len(md.last_known_elr) == 1 and md.last_known_elr <= unfenced)


def elect_last_known_leader(k, s, mt, out):
    """ElectLastKnownLeader (UncleanRecoveryStrategy last_known_leader): with
    ISR and ELR empty and no leader, the controller elects the last known
    leader once it is unfenced - an unclean election (the ISR becomes that
    replica alone, the LastKnownELR is cleared), reported as a potential
    data-loss event. Kafka elects it in the step that unfences it; here it is
    the controller's next step."""
    md = s.con_partition_metadata
    if md.leader != NO_LEADER or not _last_known_leader_electable(
            k, md, s.con_unfenced - k.in_controlled_shutdown(s)):
        return
    (c,) = md.last_known_elr
    out.append((k.acts["ElectLastKnownLeader"][0], _elect_and_report(k, s, c, EMPTY, {}, True)))


def elect_unclean_leader(k, s, mt, out):
    """ElectUncleanLeader (UncleanLeaderElection = true: Kafka's periodic
    maybeElectUncleanLeaders): a leaderless partition with no clean candidate
    (no unfenced ISR member; kip966: with the ISR empty, no unfenced ELR
    member) and no electable last known leader gets any unfenced replica as
    leader and sole ISR member; the ELR is cleared. Kafka takes the first
    such replica in assignment order; here any (one successor each)."""
    md = s.con_partition_metadata
    if md.leader != NO_LEADER:
        return
    unfenced = s.con_unfenced - k.in_controlled_shutdown(s)  # the active brokers
    if md.isr & unfenced or (not md.isr and md.elr & unfenced):
        return
    if _last_known_leader_electable(k, md, unfenced):
        return
    act = k.acts["ElectUncleanLeader"][0]
    for c in sorted(md.replicas & unfenced):
        out.append((act, _elect_and_report(k, s, c, EMPTY, {}, True)))
