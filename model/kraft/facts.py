"""Facts of a `kraft` state, by name, for scenario files (checker/front/scenario.py).

A fact is what a protocol description states about the partition after a
step: KIP-966 description 5.2.2 writes `Leader=3, ISR=[3], ELR=[]`, section
5.3.3 adds `LastKnownELR` and per-replica `LEO` / `HWM`. `facts(model, state)`
returns them as a flat dict of plain values (int, str, bool, None = Nil,
frozenset for a set, tuple for a sequence); every state of one model has the
same names.

Partition, as the controller holds it (con_partition_metadata):
  leader (a broker id or "NoLeader"), isr, elr, last_known_elr, replicas,
  leader_epoch, partition_epoch, unfenced (con_unfenced)
Producer bookkeeping of the spec (inv_*): sent, acked (positively
  acknowledged values), neg_acked, true_hwm
Network: in_flight, the messages in flight as "Type source->dest" strings
  ("C" is the controller), e.g. "AlterPartitionRequest 1->C"
Per broker b, named "b<b>.<fact>" (a scenario may write `b1 = { leo = 2 }`):
  role ("Leader", "Follower" or "none": partition_status), leo, hwm,
  log (["A@1", ...]: value@leader epoch, offset order), leso,
  status (broker side: "RUNNING", "STARTING", "OFFLINE_CLEAN", "OFFLINE_DIRTY"),
  registered (broker side), broker_epoch (broker side), fenced (controller side),
  leader, leader_epoch, partition_epoch, isr, maximal_isr (the replica's
  partition metadata: what the broker believes), proposed_isr (the ISR of
  the leader's AlterPartition request awaiting its answer, else Nil)

Extensible without editing this file's callers: a variant that adds a field
to PartitionData or BrokerState, or a state variable indexed by broker (a
tuple of BrokerCount plain values, e.g. `partition_flushed`), gets it as
"b<b>.<field>" (the "partition_" prefix dropped); any other new plain state
variable appears under its own name. A module may also `register(fn)` a
function (model, state) -> dict of further facts.
Storage variants (state variables con_recovery, ghost_reported, when
present): recovery_asked (brokers sent GetReplicaLogInfo, Nil when no unclean
recovery runs), recovery_answered (brokers that answered), unclean_recoveries
(how many completed: each a reported potential data loss), reported_lost.
"""
from __future__ import annotations

from enum import IntEnum
from typing import Callable

from model.kraft.messages import CONTROLLER
from model.kraft.state import NO_LEADER, VARIABLES as BASE_VARIABLES, RegStatus

# variables whose content the named facts above already cover (or that are
# protocol plumbing: messages, fetchers, metadata logs, counters)
_COVERED = frozenset(BASE_VARIABLES)
_DATA_FIELDS = frozenset(("log", "hwm", "leo"))
_BROKER_FIELDS = frozenset(("status", "broker_epoch", "incarnation_id", "registered"))

_EXTRA: list[Callable[[object, tuple], dict]] = []


def register(fn: Callable[[object, tuple], dict]) -> Callable:
    """Add a function (model, state) -> {fact name: value} to every kraft state's facts."""
    _EXTRA.append(fn)
    return fn


def _leader(b: int):
    return "NoLeader" if b == NO_LEADER else b


def _endpoint(b: int) -> str:
    return "C" if b == CONTROLLER else str(b)


def _plain(v):
    """A value as scenario files compare it: enums by name, records as tuples."""
    if isinstance(v, IntEnum):
        return v.name
    return v


def facts(model, state) -> dict:
    """Every fact of `state` (see the module docstring)."""
    md = state.con_partition_metadata
    f = {
        "leader": _leader(md.leader),
        "isr": md.isr,
        "elr": md.elr,
        "last_known_elr": md.last_known_elr,
        "replicas": md.replicas,
        "leader_epoch": md.leader_epoch,
        "partition_epoch": md.partition_epoch,
        "unfenced": state.con_unfenced,
        "sent": state.inv_sent,
        "acked": state.inv_pos_acked,
        "neg_acked": state.inv_neg_acked,
        "true_hwm": state.inv_true_hwm,
        "in_flight": frozenset(f"{m.type.name} {_endpoint(m.source)}->{_endpoint(m.dest)}"
                               for m in state.messages),
    }
    n = len(state.broker_state)
    for i in range(n):
        p = f"b{i + 1}."
        data = state.partition_data[i]
        bs = state.broker_state[i]
        rmd = state.partition_metadata[i]
        role = state.partition_status[i]
        f[p + "role"] = "none" if role is None else role.name
        f[p + "leo"] = data.leo
        f[p + "hwm"] = data.hwm
        f[p + "log"] = tuple(f"{r.value}@{r.epoch}" for r in data.log)
        f[p + "leso"] = state.partition_leso[i]
        f[p + "status"] = bs.status.name
        f[p + "registered"] = bs.registered
        f[p + "broker_epoch"] = bs.broker_epoch
        f[p + "fenced"] = state.con_broker_reg[i].status == RegStatus.FENCED
        f[p + "leader"] = _leader(rmd.leader)
        f[p + "leader_epoch"] = rmd.leader_epoch
        f[p + "partition_epoch"] = rmd.partition_epoch
        f[p + "isr"] = rmd.isr
        f[p + "maximal_isr"] = rmd.maximal_isr
        request = state.partition_pending_ap[i].request
        f[p + "proposed_isr"] = None if request is None else request.isr
        # fields a later variant adds to the records (read by name, not position)
        for name in getattr(data, "_fields", ()):
            if name not in _DATA_FIELDS:
                f[p + name] = _plain(getattr(data, name))
        for name in getattr(bs, "_fields", ()):
            if name not in _BROKER_FIELDS:
                f[p + name] = _plain(getattr(bs, name))
    # state variables a later variant adds
    for name in getattr(state, "_fields", ()):
        if name in _COVERED:
            continue
        value = getattr(state, name)
        if isinstance(value, tuple) and len(value) == n and not hasattr(value, "_fields"):
            short = name[len("partition_"):] if name.startswith("partition_") else name
            for i, x in enumerate(value):
                f[f"b{i + 1}.{short}"] = _plain(x)
        else:
            f[name] = _plain(value)
    # the storage variants' unclean recovery (KIP-966 description 5.3), by name
    if "con_recovery" in getattr(state, "_fields", ()):
        rec = state.con_recovery
        f["recovery_asked"] = None if rec is None else getattr(rec, "asked", None)
        answers = None if rec is None else getattr(rec, "answers", None)
        f["recovery_answered"] = None if answers is None else frozenset(
            getattr(a, "broker", a) for a in answers)
    if "ghost_reported" in getattr(state, "_fields", ()):
        report = state.ghost_reported
        f["unclean_recoveries"] = getattr(report, "count", None)
        f["reported_lost"] = getattr(report, "lost", None)
    for fn in _EXTRA:
        f.update(fn(model, state))
    return f
