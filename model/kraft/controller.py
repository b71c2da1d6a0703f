"""The KRaft controller: broker registration, fencing, AlterPartition, and the
partition changes they cause (reference: ReceiveBrokerRegRequest,
ReceiveAlterPartitionRequest, FenceBroker, UnfenceBroker and the functions
ApplyPartitionChange, UpdateElr, MaybeUpdatePartitionOnBrokerChange,
HandleBrokerFenced / HandleBrokerUnfenced, ValidateAlterPartitionRequest).

A partition change is returned as a list of options (con_partition_metadata',
con_metadata_log'), one per witness of the reference's nondeterminism (which
leader candidate); "no change" is the one option holding the current objects.
"""
from __future__ import annotations

from model.kraft import network
from model.kraft.mutants import NO_MUTANTS
from model.kraft.messages import (
    CONTROLLER, AlterPartitionResponse, RegisterBrokerResponse)
from model.kraft.state import (
    NO_LEADER, BrokerReg, BrokerStatus, ControllerPartitionMetadata, ErrorCode, MsgType,
    PartitionChangeRecord, RecordType, RegStatus, controller_min_isr, except_at, with_changes)

EMPTY = frozenset()
FENCED = RegStatus.FENCED
UNFENCED = RegStatus.UNFENCED
_RUNNING = BrokerStatus.RUNNING
_PCR = RecordType.PartitionChangeRecord


# ---- partition changes -------------------------------------------------------

def apply_partition_change(k, s, replicas, leader, isr, elr, leader_epoch, partition_epoch,
                           adding, removing):
    """ApplyPartitionChange: the new controller metadata and the appended record.

    kip966: the last-known ELR is emptied once the ISR reaches MinISR, else it
    collects the ELR members that left the ELR but are still replicas.
    """
    md = s.con_partition_metadata
    if k.variant_flags.elr:
        if k.last_known_leader:
            last_known_elr = last_known_leader(md, isr, leader)
        elif len(isr) >= controller_min_isr(k, s):
            last_known_elr = EMPTY
        elif k.mutant.skip_last_known_elr_update:  # a mutant forgets the ELR leavers
            last_known_elr = md.last_known_elr
        else:
            last_known_elr = md.last_known_elr | (replicas & (md.elr - elr))
    else:
        elr = last_known_elr = EMPTY
    cpm = ControllerPartitionMetadata(replicas, isr, elr, last_known_elr, leader,
                                      leader_epoch, partition_epoch, adding, removing, md.min_isr)
    record = PartitionChangeRecord(_PCR, isr, elr, leader, leader_epoch, partition_epoch,
                                   replicas, last_known_elr, adding, removing, md.min_isr)
    return cpm, s.con_metadata_log + (record,)


def last_known_leader(md, isr, leader):
    """The LastKnownELR as Kafka 4.x keeps it (UncleanRecoveryStrategy
    last_known_leader; PartitionChangeBuilder.maybeUpdateLastKnownLeader): the
    leader at the change that empties the ISR, cleared once the partition has
    a leader again; the ELR leavers are not collected."""
    if not isr and md.isr and md.last_known_elr != {md.leader}:
        # Kafka stores [-1] when the ISR empties without a leader: nobody to elect
        return frozenset((md.leader,)) if md.leader != NO_LEADER else EMPTY
    if leader != NO_LEADER and md.last_known_elr:
        return EMPTY
    return md.last_known_elr


def update_elr(k, s, elr, original_isr, proposed_isr, replicas):
    """UpdateElr (kip966): below MinISR the ELR keeps its replicas and gains
    every replica that left the ISR; it is NOT trimmed to MinISR."""
    if len(proposed_isr) >= controller_min_isr(k, s):
        return EMPTY
    return (elr & replicas) | ((original_isr & replicas) - proposed_isr)


def maybe_update_partition_on_broker_change(k, s, new_isr, new_elr, new_unfenced):
    """MaybeUpdatePartitionOnBrokerChange: CASE, first true arm wins. A broker
    in controlled shutdown (storage variants) is unfenced but never elected."""
    md = s.con_partition_metadata
    shutting = k.in_controlled_shutdown(s)
    if shutting:
        new_unfenced = new_unfenced - shutting
    leader = md.leader
    if k.variant_flags.elr:
        # kip966: candidates from the ISR (fenced or not), else unfenced ELR members
        no_leader_change = ((leader == NO_LEADER and not new_isr and not (new_elr & new_unfenced))
                            or leader in new_isr)
        if no_leader_change:
            if new_isr == md.isr and new_elr == md.elr:
                return [(md, s.con_metadata_log)]
            return [apply_partition_change(k, s, md.replicas, leader, new_isr, new_elr,
                                           md.leader_epoch, md.partition_epoch + 1,
                                           md.adding, md.removing)]
        le, pe = md.leader_epoch + 1, md.partition_epoch + 1
        if new_isr:
            return [apply_partition_change(k, s, md.replicas, c, new_isr, new_elr, le, pe,
                                           md.adding, md.removing)
                    for c in sorted(new_isr)]
        if new_elr & new_unfenced:
            # the elected ELR member moves into the ISR
            return [apply_partition_change(k, s, md.replicas, c, new_isr | {c}, new_elr - {c},
                                           le, pe, md.adding, md.removing)
                    for c in sorted(new_elr) if c in new_unfenced]
        return [apply_partition_change(k, s, md.replicas, NO_LEADER, new_isr, new_elr, le, pe,
                                       md.adding, md.removing)]
    # v3.5: candidates are the unfenced ISR members
    candidates = new_isr & new_unfenced
    no_leader_change = ((leader == NO_LEADER and not candidates)
                        or (leader in new_isr and leader in new_unfenced))
    if no_leader_change:
        if new_isr == md.isr:
            return [(md, s.con_metadata_log)]
        return [apply_partition_change(k, s, md.replicas, leader, new_isr, EMPTY,
                                       md.leader_epoch, md.partition_epoch + 1,
                                       md.adding, md.removing)]
    le, pe = md.leader_epoch + 1, md.partition_epoch + 1
    if candidates:
        return [apply_partition_change(k, s, md.replicas, c, new_isr, EMPTY, le, pe,
                                       md.adding, md.removing)
                for c in sorted(candidates)]
    return [apply_partition_change(k, s, md.replicas, NO_LEADER, new_isr, EMPTY, le, pe,
                                   md.adding, md.removing)]


def handle_broker_fenced(k, s, b):
    """HandleBrokerFenced(b): (partition change options, con_unfenced')."""
    md = s.con_partition_metadata
    isr = md.isr
    if k.variant_flags.isr_never_empty:  # v3.5 MaybeRemoveBrokerFromISR
        new_isr = isr if len(isr) == 1 else isr - {b}
        new_elr = EMPTY
    else:  # kip966 RemoveBrokerFromISR: the ISR may become empty
        new_isr = isr - {b}
        # a mutant drops the fenced ISR member instead of moving it to the ELR
        new_elr = update_elr(k, s, md.elr, new_isr if k.mutant.skip_elr_for_fenced_replica else isr,
                             new_isr, md.replicas)
    new_unfenced = s.con_unfenced - {b}
    return maybe_update_partition_on_broker_change(k, s, new_isr, new_elr, new_unfenced), new_unfenced


def handle_broker_unfenced(k, s, b):
    """HandleBrokerUnfenced(b): only a leaderless partition may elect someone."""
    md = s.con_partition_metadata
    new_unfenced = s.con_unfenced | {b}
    if md.leader == NO_LEADER:
        options = maybe_update_partition_on_broker_change(k, s, md.isr, md.elr, new_unfenced)
    else:
        options = [(md, s.con_metadata_log)]
    return options, new_unfenced


def process_unclean_broker(k, s, b):
    """ProcessUncleanBroker(b) (kip966): a broker registering with epoch 0 leaves
    the ISR and the ELR, whatever MinISR says."""
    md = s.con_partition_metadata
    new_unfenced = s.con_unfenced | {b}
    new_elr = md.elr if k.mutant.keep_unclean_broker_in_elr else md.elr - {b}  # a mutant keeps it
    options = maybe_update_partition_on_broker_change(k, s, md.isr - {b}, new_elr, new_unfenced)
    return options, new_unfenced


def validate_alter_partition_request(s, b, m, mutant=NO_MUTANTS):
    """ValidateAlterPartitionRequest: None (accepted) or the error code.
    `mutant`: the model's seeded bugs (two CHECKs of the reference live here)."""
    md = s.con_partition_metadata
    reg = s.con_broker_reg
    if (b == md.leader and m.broker_epoch == reg[b - 1].broker_epoch
            and (m.partition_epoch == md.partition_epoch or mutant.skip_partition_epoch_check)):
        for b1, epoch in m.isr_and_epochs:  # EligibleIsr / IsEligibleBroker
            r = reg[b1 - 1]
            if r.status != UNFENCED or not (epoch == 0 or r.broker_epoch == epoch
                                            or mutant.accept_any_broker_epoch):
                return ErrorCode.IneligibleReplica
        return None
    return ErrorCode.FencedLeaderEpoch


# ---- actions -------------------------------------------------------------------

def receive_broker_reg_request(k, s, b, mt, out):
    """ReceiveBrokerRegRequest(b): register (and unfence) the broker, reply with
    a new broker epoch; kip966 treats a request with epoch 0 as an unclean restart."""
    reqs = mt[MsgType.RegisterBrokerRequest]
    if not reqs:
        return
    act = k.acts["ReceiveBrokerRegRequest"][b]
    reg = s.con_broker_reg[b - 1]
    epoch_on_file = k.variant_flags.epoch_on_file
    for m in reqs:
        if m.source != b:
            continue
        if not (reg.status == FENCED or reg.incarnation_id == m.incarnation_id):
            continue
        broker_epoch = s.aux_broker_epoch + 1
        if epoch_on_file and m.broker_epoch == 0:
            options, new_unfenced = process_unclean_broker(k, s, b)
        else:
            options, new_unfenced = handle_broker_unfenced(k, s, b)
        new_reg = except_at(s.con_broker_reg, b,
                            BrokerReg(UNFENCED, broker_epoch, m.incarnation_id))
        resp = RegisterBrokerResponse(MsgType.RegisterBrokerResponse, broker_epoch,
                                      m.incarnation_id, len(s.con_metadata_log), b, CONTROLLER)
        msgs, disc = network.reply(s.messages, s.messages_discard, m, resp)
        for cpm, log in options:
            out.append((act, with_changes(s, dict(
                con_unfenced=new_unfenced, con_broker_reg=new_reg,
                con_partition_metadata=cpm, con_metadata_log=log,
                messages=msgs, messages_discard=disc, aux_broker_epoch=broker_epoch))))


def receive_alter_partition_request(k, s, b, mt, out):
    """ReceiveAlterPartitionRequest(b): accept (new ISR/ELR, maybe completing a
    reassignment) or reject with FencedLeaderEpoch / IneligibleReplica."""
    reqs = mt[MsgType.AlterPartitionRequest]
    if not reqs:
        return
    act = k.acts["ReceiveAlterPartitionRequest"][b]
    md = s.con_partition_metadata
    elr_on = k.variant_flags.elr
    for m in reqs:
        if m.source != b:
            continue
        error = validate_alter_partition_request(s, b, m, k.mutant)
        if error is not None:
            resp = AlterPartitionResponse(MsgType.AlterPartitionResponse, error,
                                          None, None, None, None, None, m, b, CONTROLLER)
            msgs, disc = network.reply(s.messages, s.messages_discard, m, resp)
            out.append((act, with_changes(s, dict(messages=msgs, messages_discard=disc))))
            continue
        in_progress = bool(md.adding) or bool(md.removing)
        final_isr = m.isr - md.removing
        complete = (in_progress and md.adding <= final_isr
                    and len(final_isr) >= controller_min_isr(k, s))
        if complete:
            replicas = md.replicas - md.removing
            isr = final_isr
            elr = update_elr(k, s, md.elr, md.isr, isr, replicas) if elr_on else EMPTY
            le, pe = md.leader_epoch + 1, md.partition_epoch + 1
            adding = removing = EMPTY
        else:
            replicas = md.replicas
            isr = m.isr
            elr = update_elr(k, s, md.elr, md.isr, isr, replicas) if elr_on else EMPTY
            le, pe = md.leader_epoch, md.partition_epoch + 1
            adding, removing = md.adding, md.removing
        keep = md.leader in isr  # keep the same leader if possible
        for new_leader in sorted(isr):
            if keep and new_leader != md.leader:
                continue
            cpm, log = apply_partition_change(k, s, replicas, new_leader, isr, elr, le, pe,
                                              adding, removing)
            resp = AlterPartitionResponse(MsgType.AlterPartitionResponse, None, replicas, isr,
                                          new_leader, le, pe, m, b, CONTROLLER)
            msgs, disc = network.reply(s.messages, s.messages_discard, m, resp)
            out.append((act, with_changes(s, dict(con_partition_metadata=cpm, con_metadata_log=log,
                                        messages=msgs, messages_discard=disc))))


def fence_broker(k, s, b, mt, out):
    """FenceBroker(b): the controller fences an unfenced broker at any time
    (a missed heartbeat), removing it from the ISR and leadership."""
    ctrs = s.aux_ctrs
    if ctrs.fence_broker_ctr >= k.fence_broker_limit:
        return
    reg = s.con_broker_reg[b - 1]
    if reg.status != UNFENCED:
        return
    act = k.acts["FenceBroker"][b]
    options, new_unfenced = handle_broker_fenced(k, s, b)
    new_reg = except_at(s.con_broker_reg, b, reg._replace(status=FENCED))
    new_ctrs = ctrs._replace(fence_broker_ctr=ctrs.fence_broker_ctr + 1)
    for cpm, log in options:
        out.append((act, with_changes(s, dict(con_unfenced=new_unfenced, con_broker_reg=new_reg,
                                    con_partition_metadata=cpm, con_metadata_log=log,
                                    aux_ctrs=new_ctrs))))


def unfence_broker(k, s, b, mt, out):
    """UnfenceBroker(b): a fenced, running broker is unfenced (its heartbeat);
    it may become leader of a leaderless partition, it does not join the ISR."""
    reg = s.con_broker_reg[b - 1]
    if reg.status != FENCED:
        return
    if s.broker_state[b - 1].status != _RUNNING or k.mutant.never_unfence:
        return
    act = k.acts["UnfenceBroker"][b]
    options, new_unfenced = handle_broker_unfenced(k, s, b)
    new_reg = except_at(s.con_broker_reg, b, reg._replace(status=UNFENCED))
    for cpm, log in options:
        out.append((act, with_changes(s, dict(con_unfenced=new_unfenced, con_broker_reg=new_reg,
                                    con_partition_metadata=cpm, con_metadata_log=log))))


def alter_min_isr(k, s, mt, out):
    """AlterMinIsr: the operator sets min.insync.replicas to the next value of
    MinIsrChanges (incrementalAlterConfigs). The controller writes the config
    and, if the partition has an ELR or a last-known ELR, a partition change
    clearing both (KAFKA-16540): chosen under the old value, they may not hold
    what the new one needs. Leader, ISR and leader epoch stay; the partition
    epoch moves only with a cleared ELR, as Kafka writes no partition record
    otherwise. One metadata record stands for both: the brokers read the new
    value from it."""
    ctrs = s.aux_ctrs
    done = ctrs.min_isr_change_ctr
    if done >= len(k.min_isr_changes):
        return
    value = k.min_isr_changes[done]
    md = s.con_partition_metadata
    elr, last_known_elr, pe = md.elr, md.last_known_elr, md.partition_epoch
    cleared = (elr or last_known_elr) and not k.mutant.keep_elr_on_min_isr_change  # a mutant keeps them
    if cleared:
        elr = last_known_elr = EMPTY
    if cleared or k.min_isr_change_bumps_epoch:  # MinIsrChangeBumpsPartitionEpoch: not Kafka's
        pe += 1
    cpm = md._replace(elr=elr, last_known_elr=last_known_elr, partition_epoch=pe, min_isr=value)
    record = PartitionChangeRecord(_PCR, md.isr, elr, md.leader, md.leader_epoch, pe, md.replicas,
                                   last_known_elr, md.adding, md.removing, value)
    out.append((k.acts["AlterMinIsr"][0], with_changes(s, dict(
        con_partition_metadata=cpm, con_metadata_log=s.con_metadata_log + (record,),
        aux_ctrs=ctrs._replace(min_isr_change_ctr=done + 1)))))
