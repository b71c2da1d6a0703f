"""Validity invariants of the zk model's own bookkeeping (spec-bug catchers)."""
from __future__ import annotations

from model.zk.state import NO_LEADER, Role

LEADER, NONE = Role.LEADER, Role.NONE


def valid_state(model):
    """ValidState: offsets in range (HW, flushed offset <= LEO), a down broker
    holds no role, no session, no HW and nothing in flight to it (but a
    controller's request, with RequestsSurviveStop, to a broker the controller
    believes alive), the ISR is a
    non-empty set of assigned replicas, the registered leader is in the ISR
    (with ConditionalIsrUpdate). Registration: the registered leader is
    running, registered and leads in the znode's epoch. Controller: the
    controller's stale set lies in its view of the live brokers."""
    replicas = frozenset(model.replicas)
    # without the version check a zombie leader's ISR write may drop the
    # registered leader from the ISR: that is the bug the check prevents
    leader_in_isr = model.conditional_isr_update
    controller = model.controller
    queued = model.requests_survive_stop

    def ValidState(s) -> bool:
        for b in model.brokers:
            leo = len(s.log[b])
            if s.hw[b] > leo or s.flushed[b] > leo:
                return False
            if not s.running[b] and (s.role[b].role != NONE or b in s.zk_live or s.hw[b]
                                     or s.leader_view[b] is not None
                                     or s.fetch_response[b] is not None
                                     or s.shutting_down[b]
                                     or (s.ctl_request[b]
                                         and not (queued and b in s.ctl_live))):
                return False
        zk = s.zk_partition
        if not zk.isr or not zk.isr <= replicas:
            return False
        leader = zk.leader
        if leader != NO_LEADER:
            if leader_in_isr and leader not in zk.isr:
                return False
            if not controller and (leader not in s.zk_live
                                   or s.role[leader] != (LEADER, leader, zk.leader_epoch)):
                return False
        if controller and not s.ctl_stale <= s.ctl_live:
            return False
        return True

    return ValidState


def value_at_one_offset(model):
    """ValueAtOneOffset: a value sits at one offset, the same in every log
    (it is written once, and replicated at its offset): the completeness
    properties may then look records up by value."""
    replicas = tuple(model.replicas)

    def ValueAtOneOffset(s) -> bool:
        where: dict = {}
        for b in replicas:
            for o, r in enumerate(s.log[b]):
                if where.setdefault(r.value, o) != o:
                    return False
            if len({r.value for r in s.log[b]}) != len(s.log[b]):
                return False
        return True

    return ValueAtOneOffset
