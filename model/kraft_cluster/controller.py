"""The active controller: a controller decision becomes a metadata batch
appended to the quorum leader's log, its answer waits for the batch to
commit; a new quorum leader becomes the active controller once its epoch's
LeaderChangeRecord commits (KafkaRaftClient fires handleLeaderChange for the
leader only then) and rebuilds its state from its log; a deposed active
controller's pending answers are lost and the brokers re-send the requests
(AlterPartitionManager and the registration retry on NOT_CONTROLLER or a
lost connection)."""
from __future__ import annotations

from model.kraft.state import MsgType
from model.kraft_cluster.metadata import batch_of, is_prefix, replay
from model.kraft_cluster.state import Pending, changed
from model.kraft_quorum.state import Command, Entry, Role, put

LEADER = Role.Leader
_AP_RESPONSE = MsgType.AlterPartitionResponse
_AP_REQUEST = MsgType.AlterPartitionRequest


def decide(c, s, t):
    """The cluster successor of kraft's controller step s -> t, taken by the
    active controller: the records appended as one batch (committed at once
    by a single voter, whose own vote is a majority), the answers deferred
    until the log up to the decision commits."""
    a = s.ctl_active
    q = s.quorum
    log = q.log[a - 1]
    records = batch_of(s, t)
    ch: dict = {}
    hwm = q.hwm[a - 1]
    if records:
        new_log = log + (Entry(Command.AppendCommand, q.current_epoch[a - 1], records),)
        if len(q.config[a - 1].members) == 1:
            hwm = len(new_log)
        q2 = q._replace(log=put(q.log, a, new_log), hwm=put(q.hwm, a, hwm))
        ch["quorum"] = q2
        ch["ctl_committed"] = committed_log(q2, s.ctl_committed)
        offset = len(new_log)
    else:
        offset = len(log)
    added = t.messages - s.messages
    if added:
        consumed = s.messages - t.messages
        request = next(iter(consumed)) if len(consumed) == 1 else None
        if request is not None and request in s.ghost.retried and request.type == _AP_REQUEST:
            ch["ghost"] = s.ghost._replace(retry_answered=True)
        deferred = [m for m in added if offset > hwm
                    and not (c.mutant.answer_before_commit and m.type == _AP_RESPONSE)]
        if deferred:
            ch["messages"] = t.messages.difference(deferred)
            ch["ctl_pending"] = s.ctl_pending + tuple(
                Pending(offset, request, m) for m in sorted(deferred, key=_key))
    return changed(t, ch) if ch else t


def _key(m):
    from model.kraft.network import canonical_key
    return canonical_key(m)


def committed_log(q, committed: tuple) -> tuple:
    """The committed quorum log: the longest committed prefix any controller
    knows (Raft: every other one is a prefix of it), never shorter than before."""
    best = committed
    for log, hwm in zip(q.log, q.hwm):
        if hwm > len(best):
            best = log[:hwm]
    return best


def _established(q, srv: int) -> bool:
    """srv leads and its epoch's LeaderChangeRecord is committed."""
    if q.state[srv - 1] != LEADER:
        return False
    epoch = q.current_epoch[srv - 1]
    log = q.log[srv - 1]
    hwm = q.hwm[srv - 1]
    for o in range(min(hwm, len(log)), 0, -1):
        e = log[o - 1]
        if e.epoch < epoch:
            return False
        if e.command == Command.LeaderChangeRecord:
            return True
    return False


def after_quorum_step(c, s, q2):
    """The cluster successor of a quorum step s.quorum -> q2: the committed
    log, truncated batches, a deposed active controller, a new one, answers
    released."""
    q = s.quorum
    ch: dict = {"quorum": q2}
    ghost = s.ghost
    if q2.log is not q.log and not ghost.lost_uncommitted:
        for old, new in zip(q.log, q2.log):
            if len(new) < len(old) and any(e.command == Command.AppendCommand
                                           for e in old[len(new):]):
                ghost = ghost._replace(lost_uncommitted=True)
    committed = committed_log(q2, s.ctl_committed)
    if committed is not s.ctl_committed:
        ch["ctl_committed"] = committed
    a = s.ctl_active
    messages = s.messages
    pending = s.ctl_pending
    if a is not None and (q2.state[a - 1] != LEADER
                          or q2.current_epoch[a - 1] != q.current_epoch[a - 1]):
        a, ghost, messages = None, *_lose_pending(s, ghost, messages)
        pending = ()
    newest = None
    for srv in range(1, len(q2.state) + 1):
        if _established(q2, srv) and (newest is None or q2.current_epoch[srv - 1]
                                      > q2.current_epoch[newest - 1]):
            newest = srv
    if newest is not None and (a is None or (newest != a and q2.current_epoch[newest - 1]
                                             > q2.current_epoch[a - 1])):
        if a is not None:  # a deposed leader that has not noticed yet: it can commit nothing more
            ghost, messages = _lose_pending(s, ghost, messages)
            pending = ()
        a = newest
        ch.update(_rebuild(c, s, q2.log[a - 1]))
    if a is not None and pending and q2.hwm[a - 1] > q.hwm[a - 1]:
        hwm = q2.hwm[a - 1]
        released = [p.response for p in pending if p.offset <= hwm]
        if released:
            messages = messages.union(released)
            pending = tuple(p for p in pending if p.offset > hwm)
    if a != s.ctl_active:
        ch["ctl_active"] = a
    if pending is not s.ctl_pending:
        ch["ctl_pending"] = pending
    if messages is not s.messages:
        ch["messages"] = messages
    if ghost is not s.ghost:
        ch["ghost"] = ghost
    return changed(s, ch)


def _lose_pending(s, ghost, messages):
    """A deposed active controller's answers never go out: the brokers re-send
    the requests to the next one."""
    requests = [p.request for p in s.ctl_pending if p.request is not None]
    if not requests:
        return ghost, messages
    return (ghost._replace(retried=ghost.retried.union(requests)), messages.union(requests))


def _rebuild(c, s, log) -> dict:
    """The new active controller's state: its log replayed (or, with a seeded
    bug, what memory held)."""
    mutant = c.mutant
    if mutant.keep_uncommitted_state:
        return {}
    ch = replay(c.kraft.n, log)
    if mutant.broker_epoch_from_memory:
        ch["aux_broker_epoch"] = c.initial_broker_epoch
    if mutant.elr_from_deposed_controller and ch["con_partition_metadata"] is not None:
        old = s.con_partition_metadata
        ch["con_partition_metadata"] = ch["con_partition_metadata"]._replace(
            elr=old.elr, last_known_elr=old.last_known_elr)
    # keep the objects that did not change (the engine re-encodes only new ones)
    for name in list(ch):
        if ch[name] == getattr(s, name):
            del ch[name]
    return ch


def committed_partition_log_is_prefix(bml: tuple, pcrs: tuple) -> bool:
    return is_prefix(bml, pcrs)
