"""Temporal properties of the toy models (model/examples), for tests and examples."""
from __future__ import annotations

from model.examples.twophase import RMState, TMState

from invariants.temporal import (AlwaysEventually, EventuallyAlways, LeadsTo, TemporalProperty, per, single)

_DECIDED = (RMState.committed, RMState.aborted)


def _true(s) -> bool:
    return True


def twophase_temporal(model) -> list[TemporalProperty]:
    rms = tuple(model.rms)

    def all_decided(s) -> bool:
        return all(x in _DECIDED for x in s.rmState)

    def prepared(r):
        i = rms.index(r)
        return lambda s: s.rmState[i] is RMState.prepared

    def decided(r):
        i = rms.index(r)
        return lambda s: s.rmState[i] in _DECIDED

    return [
        TemporalProperty("EventuallyAllDecided", single(LeadsTo(_true, all_decided)),
                         "every RM eventually commits or aborts", ("rmState",), "",
                         lambda _, s: "some RM never commits nor aborts"),
        TemporalProperty("PreparedRMDecides",
                         per(rms, "r", lambda r: LeadsTo(prepared(r), decided(r))),
                         "a prepared RM eventually commits or aborts", ("rmState",),
                         "\\A r \\in RM", lambda r, s: f"RM {r} stays prepared for ever"),
        TemporalProperty("TMEventuallyDecides",
                         single(EventuallyAlways(lambda s: s.tmState is not TMState.init)),
                         "the TM eventually leaves init for good", ("tmState",), "",
                         lambda _, s: "the TM stays undecided for ever"),
    ]


def diehard_temporal(model) -> list[TemporalProperty]:
    goal = model.goal
    return [
        TemporalProperty("AlwaysEventuallySolved", single(AlwaysEventually(lambda s: s.big == goal)),
                         "the big jug holds Goal gallons infinitely often", ("big",), "",
                         lambda _, s: f"the big jug never again holds {goal} gallons"),
    ]
