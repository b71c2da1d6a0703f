"""Lamport's TwoPhase commit protocol, after the TLA+ example TwoPhase.tla.

A transaction manager (TM) and resource managers (RMs) exchange Prepared,
Commit and Abort messages; msgs only grows (a message, once sent, may be
received any number of times).
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from model.base import Action, Constant, ModelConfigError, ModelDef


class RMState(IntEnum):
    working = 0
    prepared = 1
    committed = 2
    aborted = 3


class TMState(IntEnum):
    init = 0
    committed = 1
    aborted = 2


class MsgType(IntEnum):
    Prepared = 0
    Commit = 1
    Abort = 2


class Msg(NamedTuple):
    type: MsgType
    rm: str | None = None  # only Prepared messages name an RM


class TPState(NamedTuple):
    rmState: tuple      # RM index -> RMState
    tmState: TMState
    tmPrepared: frozenset  # of RM names
    msgs: frozenset        # of Msg


COMMIT = Msg(MsgType.Commit)
ABORT = Msg(MsgType.Abort)

ACTIONS = ("TMCommit", "TMAbort", "TMRcvPrepared", "RMPrepare", "RMChooseToAbort",
           "RMRcvCommitMsg", "RMRcvAbortMsg")


class TwoPhase:
    name = "twophase"
    variables = TPState._fields
    action_names = ACTIONS
    # A projection (TLA+ VIEW) without the message history, for trying projections (not a sound abstraction).
    projections = {"no_msgs": ("rmState", "tmState", "tmPrepared")}

    def __init__(self, variant: str, rms: tuple[str, ...]):
        self.variant = variant
        self.rms = rms
        self.all_rms = frozenset(rms)
        # Actions per RM, built once (their params never change).
        self._rm_actions = [
            (i, r, Action("TMRcvPrepared", (r,)), Action("RMPrepare", (r,)),
             Action("RMChooseToAbort", (r,)), Action("RMRcvCommitMsg", (r,)),
             Action("RMRcvAbortMsg", (r,)), Msg(MsgType.Prepared, r))
            for i, r in enumerate(rms)]

    def init_states(self):
        # TPInit
        yield TPState(tuple(RMState.working for _ in self.rms), TMState.init, frozenset(), frozenset())

    def successors(self, s: TPState):
        rm_state, tm_state, tm_prepared, msgs = s
        if tm_state is TMState.init:
            if tm_prepared == self.all_rms:  # TMCommit
                yield Action("TMCommit"), s._replace(tmState=TMState.committed, msgs=msgs | {COMMIT})
            # TMAbort
            yield Action("TMAbort"), s._replace(tmState=TMState.aborted, msgs=msgs | {ABORT})
        has_commit = COMMIT in msgs
        has_abort = ABORT in msgs
        for i, r, rcv_prepared, prepare, choose_abort, rcv_commit, rcv_abort, prepared_msg in self._rm_actions:
            state_r = rm_state[i]
            if tm_state is TMState.init and prepared_msg in msgs:  # TMRcvPrepared(r)
                yield rcv_prepared, s._replace(tmPrepared=tm_prepared | {r})
            if state_r is RMState.working:
                # RMPrepare(r)
                yield prepare, s._replace(rmState=_set(rm_state, i, RMState.prepared),
                                          msgs=msgs | {prepared_msg})
                # RMChooseToAbort(r)
                yield choose_abort, s._replace(rmState=_set(rm_state, i, RMState.aborted))
            if has_commit:  # RMRcvCommitMsg(r)
                yield rcv_commit, s._replace(rmState=_set(rm_state, i, RMState.committed))
            if has_abort:  # RMRcvAbortMsg(r)
                yield rcv_abort, s._replace(rmState=_set(rm_state, i, RMState.aborted))

    def from_plain(self, values: tuple) -> TPState:
        rm_state, tm_state, tm_prepared, msgs = values
        return TPState(tuple(RMState(x) for x in rm_state), TMState(tm_state), frozenset(tm_prepared),
                       frozenset(Msg(MsgType(t), rm) for t, rm in msgs))


def _set(t: tuple, i: int, v) -> tuple:
    return t[:i] + (v,) + t[i + 1:]


def build(variant: str, c: dict) -> TwoPhase:
    count = c["RMCount"]
    if count < 0:
        raise ModelConfigError(f"RMCount must be >= 0, not {count}")
    rms = tuple(f"r{i}" for i in range(1, count + 1)) if count else tuple(c["RM"])
    if not rms:
        raise ModelConfigError("RM must name at least one resource manager")
    if len(set(rms)) != len(rms):
        raise ModelConfigError(f"RM names must be distinct: {list(rms)}")
    return TwoPhase(variant, rms)


CONSTANTS = (
    Constant("RM", (list, str), ["r1", "r2", "r3"], "the resource managers, by name"),
    Constant("RMCount", int, 0, "when > 0, the resource managers are r1..rN (overrides RM)"),
)

MODEL = ModelDef(
    name="twophase",
    doc="Lamport's TwoPhase commit (toy model; 3 RMs: 288 states)",
    variants={"standard": CONSTANTS},
    build=build,
    properties="invariants.examples:twophase_properties",
    temporal="invariants.temporal_examples:twophase_temporal",
)
