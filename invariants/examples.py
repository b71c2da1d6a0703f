"""Properties of the toy models (model/examples)."""
from __future__ import annotations


from model.base import ALWAYS, SOMETIMES, EvaluationError, Property
from model.examples.twophase import Msg, MsgType, RMState, TMState


def twophase_properties(model) -> list[Property]:
    rms = model.all_rms
    n = len(model.rms)
    messages = ({Msg(MsgType.Prepared, r) for r in rms} | {Msg(MsgType.Commit), Msg(MsgType.Abort)})

    def TPTypeOK(s) -> bool:
        return (len(s.rmState) == n and all(isinstance(x, RMState) for x in s.rmState)
                and isinstance(s.tmState, TMState)
                and s.tmPrepared <= rms
                and s.msgs <= messages)

    def TCConsistent(s) -> bool:
        # no RM has aborted while another has committed
        return not (RMState.aborted in s.rmState and RMState.committed in s.rmState)

    def AllCommitted(s) -> bool:
        return all(x is RMState.committed for x in s.rmState)

    return [
        Property("TPTypeOK", ALWAYS, TPTypeOK, "every variable has its type"),
        Property("TCConsistent", ALWAYS, TCConsistent, "no RM aborted while another committed"),
        Property("AllCommitted", SOMETIMES, AllCommitted, "the transaction can commit"),
    ]


def diehard_properties(model) -> list[Property]:
    B, S, goal = model.big_capacity, model.small_capacity, model.goal

    def TypeOK(s) -> bool:
        return 0 <= s.big <= B and 0 <= s.small <= S

    def NotSolved(s) -> bool:
        return s.big != goal

    return [
        Property("TypeOK", ALWAYS, TypeOK, "both jugs within their capacity"),
        Property("NotSolved", ALWAYS, NotSolved, "the big jug never holds Goal gallons (violated: the solution)"),
        Property("BothFull", SOMETIMES, lambda s: s.big == B and s.small == S, "both jugs full at once"),
    ]


def randgraph_properties(model) -> list[Property]:
    targets = model.targets

    def NotTarget(s) -> bool:
        if s.node == model.check_error_node:
            raise EvaluationError(f"NotTarget cannot be evaluated on node {s.node}")
        return s.node not in targets

    return [
        Property("NotTarget", ALWAYS, NotTarget, "no target node is reached"),
        Property("NotOdd", ALWAYS, lambda s: s.node % 2 == 0 or s.node < 2, "no odd node >= 2 is reached"),
        Property("ReachesLast", SOMETIMES, lambda s: s.node == model.nodes - 1, "the last node is reachable"),
    ]




def wide_properties(model) -> list[Property]:
    last = model.variables[-1]
    return [
        Property("LastUnset", ALWAYS, lambda s: s[-1] == 0,
                 f"the last flag ({last}) is never set (violated: a state past 64 variables)",
                 reads=(last,)),
        Property("FirstSet", SOMETIMES, lambda s: s.v00 == 1, "the first flag is set",
                 reads=("v00",)),
    ]
