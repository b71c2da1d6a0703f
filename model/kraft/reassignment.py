"""Partition reassignment, started by an operator at the controller
(reference: PerformPartitionReassignment, ValidReassignment).

A reassignment that adds no replica and keeps >= MinISR of the ISR completes
at once; otherwise the controller records adding/removing and the
AlterPartition that brings every adding replica into the ISR completes it
(controller.receive_alter_partition_request).
"""
from __future__ import annotations

from model.kraft.controller import EMPTY, apply_partition_change, update_elr
from model.kraft.state import controller_min_isr, with_changes


def perform_partition_reassignment(k, s, mt, out):
    """PerformPartitionReassignment: \\E adding, removing \\in SUBSET Brokers.

    ValidReassignment's first conjunct, (adding # {} \\/ removing # {}), is a
    disjunction in action position: TLC explores each true disjunct, so a
    pair with both sets non-empty yields every successor twice.
    """
    ctrs = s.aux_ctrs
    if ctrs.reassignment_ctr >= k.reassignment_limit:
        return
    md = s.con_partition_metadata
    if md.adding or md.removing:  # ReassignmentInProgress
        return
    act = k.acts["PerformPartitionReassignment"][0]
    new_ctrs = ctrs._replace(reassignment_ctr=ctrs.reassignment_ctr + 1)
    replicas, isr = md.replicas, md.isr
    min_isr = controller_min_isr(k, s)
    elr_on = k.variant_flags.elr
    for adding in k.broker_subsets:
        for removing in k.broker_subsets:
            witnesses = (len(adding) >= 1) + (len(removing) >= 1)
            if not witnesses:
                continue
            if len(replicas) + len(adding) - len(removing) < min_isr:
                continue
            if adding & replicas or not removing <= replicas:
                continue
            grow_replicas = replicas | adding
            final_replicas = grow_replicas - removing
            final_isr = isr - removing
            complete = (adding <= final_isr and len(final_isr) >= min_isr
                        and len(final_replicas) > 0)
            if complete:
                new_replicas, new_isr = final_replicas, final_isr
                new_elr = update_elr(k, s, md.elr, isr, final_isr, final_replicas) if elr_on else EMPTY
                le, pe = md.leader_epoch + 1, md.partition_epoch + 1
                new_adding = new_removing = EMPTY
            else:
                new_replicas, new_isr, new_elr = grow_replicas, isr, md.elr
                le, pe = md.leader_epoch, md.partition_epoch + 1
                new_adding, new_removing = adding, removing
            keep = md.leader in new_isr
            for new_leader in sorted(new_isr):
                if keep and new_leader != md.leader:
                    continue
                cpm, log = apply_partition_change(k, s, new_replicas, new_leader, new_isr, new_elr,
                                                  le, pe, new_adding, new_removing)
                succ = with_changes(s, dict(con_partition_metadata=cpm, con_metadata_log=log,
                                  aux_ctrs=new_ctrs))
                for _ in range(witnesses):
                    out.append((act, succ))
