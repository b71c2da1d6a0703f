"""The trace view of the `kraft` model: what a Kafka engineer looks for in a
counterexample - who sent what to whom, each replica's log (offsets with
leader epochs), LEO, HWM and role, the controller's leader, ISR, ELR and
epochs, and which acknowledged record got lost.

It lives next to the model's code and reads its constants (model/ never
imports checker/); the engine's renderers (checker/output/trace_html.py,
checker/output/traces.py, checker/output/itf.py) find it through the
ModelDef's view (model/kraft/__init__.py: TRACE_VIEW).
"""
from __future__ import annotations

import html
from enum import IntEnum
from typing import Any

from model.kraft.messages import CONTROLLER  # a message's dest / source
from model.kraft.state import NO_LEADER
from model.view import (ACKED_LEGEND, LOG_CSS, Arrow, Explanation, TraceView, itf, promise_broke_at,
                        render_scalar)

# variables that are TLA+ functions over Brokers (tuples indexed by b - 1);
# the value is how deep: 2 for [b \in Brokers |-> [b1 \in Brokers |-> ...]]
PER_BROKER = {
    "con_broker_reg": 1, "broker_state": 1, "broker_fetchers": 2, "broker_metadata_log": 1,
    "partition_status": 1, "partition_metadata": 1, "partition_data": 1, "partition_leso": 1,
    "partition_replica_state": 2, "partition_pending_ap": 1, "aux_flo": 1,
}
# the storage variants' (kip966_storage, v3_5_storage: model/kraft/storage.py)
STORAGE_PER_BROKER = {"partition_flushed": 1, "partition_hwm_checkpoint": 1, "ghost_unclean": 1,
                      "broker_want_shutdown": 1, "con_controlled_shutdown": 1}
_ALL_PER_BROKER = {**PER_BROKER, **STORAGE_PER_BROKER}
# record fields that the reference leaves out (rather than Nil) when None here
ABSENT_WHEN_NONE = {
    "PartitionChangeRecord": {"adding", "removing", "min_isr"},
    # MinIsrChanges = [] (the reference): no min.insync.replicas in the state
    "ControllerPartitionMetadata": {"min_isr"},
    "Kip966Ctrs": {"min_isr_change_ctr"}, "V35Ctrs": {"min_isr_change_ctr"},
    "StorageCtrs": {"min_isr_change_ctr"},
    "AlterPartitionResponse": {"replicas", "isr", "leader", "leader_epoch", "partition_epoch"},
    "RegisterBrokerRequest": {"broker_epoch"},
}
V3_5_ABSENT = {"elr", "last_known_elr"}  # the ELR exists in kip966 only

FIELD_NAMES = {
    "leo": "LEO", "hwm": "HWM", "isr": "ISR", "elr": "ELR", "last_known_elr": "last-known ELR",
    "maximal_isr": "maximal ISR", "min_isr": "min.insync.replicas", "leader_epoch": "leader epoch", "partition_epoch": "partition epoch",
    "broker_epoch": "broker epoch", "incarnation_id": "incarnation", "fetch_offset": "fetch offset",
    "last_fetched_epoch": "last fetched epoch", "pending_response": "pending response",
    "metadata_offset": "metadata offset", "diverging_epoch": "diverging epoch",
    "isr_and_epochs": "ISR and epochs",
    "last_epoch": "last leader epoch", "partition_epoch_asked": "partition epoch",
}

MSG_SHORT = {
    "RegisterBrokerRequest": "Register", "RegisterBrokerResponse": "Registered",
    "AlterPartitionRequest": "AlterPartition", "AlterPartitionResponse": "AlterPartition resp",
    "FetchRequest": "Fetch", "FetchResponse": "Fetch resp",
    "GetReplicaLogInfoRequest": "GetReplicaLogInfo", "GetReplicaLogInfoResponse": "GetReplicaLogInfo resp",
}

CONTROLLER_ACTIONS = {"ReceiveBrokerRegRequest", "ReceiveAlterPartitionRequest", "FenceBroker", "SessionTimeout",
                      "UnfenceBroker", "PerformPartitionReassignment",
                      "ReceiveGetReplicaLogInfoResponse", "StartUncleanRecovery",
                      "CompleteUncleanRecovery", "ElectLastKnownLeader", "ElectUncleanLeader"}
DESCRIBE = {
    "AlterMinIsr": "the operator sets min.insync.replicas",
    "BrokerStart": "broker {b} starts and asks the controller to register it",
    "ReceiveBrokerRegResponse": "broker {b} is registered and runs",
    "ReceiveMetadataUpdate": "broker {b} applies metadata records",
    "SendAlterPartitionRequest": "leader {b} proposes a new ISR to the controller",
    "ReceiveAlterPartitionResponse": "leader {b} applies the controller's AlterPartition answer",
    "SendFetchRequest": "follower {b} sends a fetch request",
    "ReceiveFetchRequest": "broker {b} answers a fetch request",
    "ReceiveFetchResponse": "follower {b} handles a fetch response",
    "WriteRecordToLeader": "a producer writes to leader {b}",
    "DataLossShutdown": "broker {b} shuts down uncleanly and loses its log",
    "UncleanShutdown": "broker {b} shuts down uncleanly and loses its log",
    "NoDataLossShutdown": "broker {b} shuts down and keeps its log",
    "CleanShutdown": "broker {b} shuts down cleanly and keeps its log",
    "ReceiveBrokerRegRequest": "the controller registers broker {b}",
    "ReceiveAlterPartitionRequest": "the controller handles leader {b}'s AlterPartition request",
    "FenceBroker": "the controller fences broker {b}",
    "SessionTimeout": "broker {b}'s session times out: the controller fences its dead incarnation",
    "UnfenceBroker": "the controller unfences broker {b}",
    "PerformPartitionReassignment": "an operator starts a partition reassignment",
    # storage variants
    "ControlledShutdown": "broker {b} shuts down cleanly: flushes its log, writes its broker epoch file",
    "BeginControlledShutdown": "broker {b} begins a controlled shutdown: its heartbeats ask to shut down",
    "EnterControlledShutdown": ("the controller answers broker {b}'s heartbeat: broker {b} is in controlled "
                                "shutdown, out of the ISR and no longer electable"),
    "GrantShutdown": "the controller fences broker {b} and tells it to shut down now",
    "CompleteControlledShutdown": ("broker {b} completes its controlled shutdown: flushes its log, "
                                   "checkpoints its HWM, writes its broker epoch file"),
    "UncontrolledShutdown": ("broker {b} shuts down without asking the controller "
                             "(controlled.shutdown.enable = false): flushes its log, checkpoints "
                             "its HWM, writes its broker epoch file"),
    "FlushRolledSegments": "broker {b}'s flush-log task flushes its rolled log segments",
    "ProcessCrash": "broker {b}'s process crashes (the page cache survives, no broker epoch file)",
    "PowerLoss": "broker {b} loses power: its log falls back to what was flushed",
    "PowerOutage": "a power outage takes down brokers {bs}: each log falls back to what was flushed",
    "BackgroundFlush": "the OS of broker {b} flushes dirty pages",
    "CheckpointHwm": "broker {b} writes its HWM checkpoint file",
    "ReceiveGetReplicaLogInfoRequest": "broker {b} reports its log to the controller",
    "ReceiveGetReplicaLogInfoResponse": "the controller records broker {b}'s log info",
    "StartUncleanRecovery": "the controller starts an unclean recovery (GetReplicaLogInfo)",
    "CompleteUncleanRecovery": "the controller completes the unclean recovery",
    "ElectLastKnownLeader": "the controller elects the last known leader (an unclean election)",
    "ElectUncleanLeader": "the controller elects an unfenced replica outside the ISR (unclean leader election)",
    # the consumer client (Consumer = true)
    "ConsumerValidatePosition": "the consumer takes leader {b}'s leader epoch and validates its position there",
    "ConsumerFetch": "the consumer fetches from leader {b}",
    "ConsumerResetOffset": "the consumer's fetch from leader {b} is out of range: it resets its position "
                           "(auto.offset.reset = latest)",
}
GHOST = {0: "", 1: "stopped uncleanly", 2: "UNCLEAN (restarted uncleanly, not caught up)"}


def _enum(v) -> str:
    return v.name if isinstance(v, IntEnum) else str(v)


def fmt_set(s) -> str:
    return "{" + ", ".join(str(x) for x in sorted(s, key=lambda x: (str(type(x)), x))) + "}"


def fmt_record(r) -> str:
    """A partition log record: offset:value e<leader epoch>."""
    return f"{r.offset}:{r.value} e{r.epoch}"


def fmt_log(log) -> str:
    return "[" + ", ".join(fmt_record(r) for r in log) + "]"


def fmt_consumer(c) -> str:
    """The consumer's state: position, offset epoch, leader epoch, what it read."""
    read = ", ".join(fmt_record(r) + (" (stale leader)" if r.stale else "") for r in c.read)
    text = (f"position {c.position}, offset epoch {c.offset_epoch or 'none'}, leader epoch {c.leader_epoch}, "
            f"read [{read}]")
    if c.resets:
        text += f", {c.resets} offset reset{'s' if c.resets > 1 else ''}"
    return text


def fmt_broker(b) -> str:
    if b == NO_LEADER:
        return "none"
    if b == CONTROLLER:
        return "controller"
    return str(b)


def fmt(v: Any, fieldname: str = "") -> str:
    """A compact, readable rendering of a kraft value."""
    text = render_scalar(v)
    if text is not None:
        return text
    if isinstance(v, int):
        if fieldname == "leader" and v == NO_LEADER:
            return "none"
        if fieldname in ("dest", "source"):
            return fmt_broker(v)
        return str(v)
    if isinstance(v, str):
        return v
    if isinstance(v, frozenset):
        return fmt_set(v)
    name = type(v).__name__
    if name == "PartitionRecord":
        return fmt_record(v)
    if name == "PartitionChangeRecord":
        return fmt_change_record(v)
    if hasattr(v, "_fields") and hasattr(v, "type") and name in MSG_SHORT:
        return fmt_message(v)
    if hasattr(v, "_fields"):
        return name + "(" + ", ".join(f"{FIELD_NAMES.get(f, f)} {fmt(x, f)}"
                                      for f, x in zip(v._fields, v)) + ")"
    if isinstance(v, tuple):
        if v and type(v[0]).__name__ == "PartitionRecord":
            return fmt_log(v)
        if fieldname == "isr_and_epochs":
            return "{" + ", ".join(f"{b}: epoch {e}" for b, e in v) + "}"
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)


def fmt_change_record(r) -> str:
    parts = [f"leader {fmt_broker(r.leader)}", f"leader epoch {r.leader_epoch}",
             f"ISR {fmt_set(r.isr)}"]
    if r.elr or r.last_known_elr:
        parts.append(f"ELR {fmt_set(r.elr)}")
        parts.append(f"last-known ELR {fmt_set(r.last_known_elr)}")
    parts.append(f"partition epoch {r.partition_epoch}")
    parts.append(f"replicas {fmt_set(r.replicas)}")
    if r.adding:
        parts.append(f"adding {fmt_set(r.adding)}")
    if r.removing:
        parts.append(f"removing {fmt_set(r.removing)}")
    if r.min_isr is not None:  # MinIsrChanges: the config the brokers read with it
        parts.append(f"min.insync.replicas {r.min_isr}")
    return "PartitionChange(" + ", ".join(parts) + ")"


def message_fields(m) -> str:
    t = _enum(m.type)
    if t == "FetchRequest":
        p = m.partition
        return (f"leader epoch {p.leader_epoch}, fetch offset {p.fetch_offset}, "
                f"last fetched epoch {p.last_fetched_epoch}, broker epoch {m.broker_epoch}")
    if t == "FetchResponse":
        p = m.partition
        parts = [f"leader epoch {p.leader_epoch}", f"fetch offset {p.fetch_offset}", f"HWM {p.hwm}"]
        if p.error is not None:
            parts.insert(0, f"error {_enum(p.error)}")
        if p.diverging_epoch is not None:
            parts.append(f"diverging epoch {p.diverging_epoch.epoch} at offset {fmt(p.diverging_epoch.offset)}")
        parts.append(f"records {fmt_log(p.records)}" if p.records else "no records")
        return ", ".join(parts)
    if t == "RegisterBrokerRequest":
        s = f"incarnation {m.incarnation_id}"
        if m.broker_epoch is not None:
            s += f", broker epoch on file {m.broker_epoch}"
        return s
    if t == "RegisterBrokerResponse":
        return (f"broker epoch {m.broker_epoch}, incarnation {m.incarnation_id}, "
                f"metadata offset {m.metadata_offset}")
    if t == "GetReplicaLogInfoRequest":
        return f"recovery at partition epoch {m.partition_epoch}"
    if t == "GetReplicaLogInfoResponse":
        return (f"recovery at partition epoch {m.partition_epoch}: broker epoch {m.broker_epoch}, "
                f"last leader epoch {m.last_epoch}, LEO {m.leo}")
    if t == "AlterPartitionRequest":
        return (f"ISR {fmt_set(m.isr)}, epochs {fmt(m.isr_and_epochs, 'isr_and_epochs')}, "
                f"leader epoch {m.leader_epoch}, partition epoch {m.partition_epoch}, "
                f"broker epoch {m.broker_epoch}")
    if t == "AlterPartitionResponse":
        req = m.request
        asked = f"for ISR {fmt_set(req.isr)} at partition epoch {req.partition_epoch}"
        if m.error is not None:
            return f"error {_enum(m.error)} {asked}"
        return (f"accepted {asked}: ISR {fmt_set(m.isr)}, leader {fmt_broker(m.leader)}, "
                f"leader epoch {m.leader_epoch}, partition epoch {m.partition_epoch}")
    return ", ".join(f"{FIELD_NAMES.get(f, f)} {fmt(x, f)}" for f, x in zip(m._fields, m)
                     if f not in ("type", "dest", "source"))


def fmt_message(m) -> str:
    return f"{_enum(m.type)} {fmt_broker(m.source)}->{fmt_broker(m.dest)} ({message_fields(m)})"


def fmt_recovery(rec) -> str:
    """The controller's unclean recovery in progress (storage variants)."""
    if rec is None:
        return "no unclean recovery"
    answers = ", ".join(f"{a.broker}: e{a.last_epoch} LEO {a.leo}"
                        for a in sorted(rec.answers, key=lambda a: a.broker))
    return (f"unclean recovery at partition epoch {rec.partition_epoch} asking {fmt_set(rec.asked)}"
            f" (answers: {answers or 'none yet'})")


def short_message(m) -> str:
    t = _enum(m.type)
    label = MSG_SHORT.get(t, t)
    if t == "FetchRequest":
        return f"{label} @{m.partition.fetch_offset} e{m.partition.leader_epoch}"
    if t == "FetchResponse":
        p = m.partition
        if p.error is not None:
            return f"{label} {_enum(p.error)}"
        if p.diverging_epoch is not None:
            return f"{label} diverging e{p.diverging_epoch.epoch}"
        recs = " ".join(f"{r.value}@{r.offset}" for r in p.records)
        return f"{label} {recs + ' ' if recs else ''}HWM {p.hwm}"
    if t == "AlterPartitionRequest":
        return f"{label} ISR {fmt_set(m.isr)}"
    if t == "AlterPartitionResponse":
        return f"{label} {_enum(m.error)}" if m.error is not None else f"{label} ISR {fmt_set(m.isr)}"
    if t == "RegisterBrokerResponse":
        return f"{label} epoch {m.broker_epoch}"
    if t == "GetReplicaLogInfoResponse":
        return f"{label} e{m.last_epoch} LEO {m.leo}"
    return label


def field_diff(old, new) -> str:
    """'LEO 1 -> 2, HWM 1 -> 2' for two records of one type, else 'old -> new'."""
    if (hasattr(old, "_fields") and type(old) is type(new)
            and type(new).__name__ not in MSG_SHORT):
        parts = []
        for f, a, b in zip(new._fields, old, new):
            if a != b:
                if isinstance(a, tuple) and isinstance(b, tuple) and b[:len(a)] == a and a and \
                        type(b[0]).__name__ == "PartitionRecord":
                    parts.append(f"{FIELD_NAMES.get(f, f)} + {', '.join(fmt_record(r) for r in b[len(a):])}")
                else:
                    parts.append(f"{FIELD_NAMES.get(f, f)} {fmt(a, f)} -> {fmt(b, f)}")
        return ", ".join(parts)
    return f"{fmt(old)} -> {fmt(new)}"


def _esc(s: Any) -> str:
    return html.escape(str(s))


class KraftView(TraceView):
    name = "kraft"
    page_css = LOG_CSS
    legend = (ACKED_LEGEND,)
    abbreviations = (("LE", "leader epoch"), ("PE", "partition epoch"), ("ISR", "in-sync replicas"),
                     ("ELR", "eligible leader replicas (KIP-966)"), ("LEO", "log end offset"),
                     ("HWM", "high watermark"), ("LESO", "leader epoch start offset: the leader's LEO "
                                                         "when it was elected"),
                     ("nacked", "records the producer was told failed"),
                     ("epoch N", "a broker's broker epoch (its registration with the controller), "
                                 "not a leader epoch"),
                     ("e N", "a leader epoch (a record's, or the one a broker sees)"),
                     ("-", "no replica role (the broker is stopped, or not yet told its role)"),
                     ("Broker N, offsets", "brokers are numbered from 1 and log offsets count "
                                           "from 1, as in the reference TLA+ (Kafka counts "
                                           "offsets from 0; zk's traces do)"))
    kind_colors = {"FetchRequest": "#0969da", "FetchResponse": "#1a7f37", "AlterPartitionRequest": "#bc4c00",
                   "AlterPartitionResponse": "#953800", "RegisterBrokerRequest": "#8250df",
                   "RegisterBrokerResponse": "#6639ba", "MetadataUpdate": "#57606a"}

    def __init__(self, model: Any, order_key=None):
        super().__init__(model, order_key)
        constants = getattr(model, "constants", {}) or {}
        self.n = int(constants.get("BrokerCount", getattr(model, "n", 0)))
        self.brokers = tuple(range(1, self.n + 1))
        self.variant = getattr(model, "variant", "")
        self.elr = self.variant != "v3_5"
        if not self.elr:  # (v3.5 has no ELR)
            self.abbreviations = tuple(x for x in self.abbreviations if x[0] != "ELR")
        self.min_isr = constants.get("MinISR")

    # ---- text --------------------------------------------------------------------

    def _b(self, action) -> int | None:
        params = getattr(action, "params", ()) or ()
        return params[0] if params and isinstance(params[0], int) else None

    def describe(self, action, prev, state) -> str:
        name = getattr(action, "name", str(action))
        b = self._b(action)
        params = getattr(action, "params", ()) or ()
        text = DESCRIBE.get(name, "").format(b=b, bs=", ".join(map(str, params)))
        if name == "WriteRecordToLeader" and b is not None:
            log = state.partition_data[b - 1].log
            if log:
                r = log[-1]
                text = f"a producer writes {r.value} to leader {b} (offset {r.offset}, leader epoch {r.epoch})"
        elif name == "ReceiveMetadataUpdate" and b is not None:
            was, now = prev.partition_status[b - 1], state.partition_status[b - 1]
            md = state.partition_metadata[b - 1]
            if was != now or prev.partition_metadata[b - 1].leader_epoch != md.leader_epoch:
                role = _enum(now) if now is not None else "no replica role"
                text += f": now {role.lower() if now is not None else role} in leader epoch {md.leader_epoch}"
        elif name in ("PowerLoss", "PowerOutage", "BackgroundFlush", "FlushRolledSegments") \
                and hasattr(state, "partition_flushed"):
            parts = []
            for br in (params if name == "PowerOutage" else (b,)):
                a, c = prev.partition_data[br - 1], state.partition_data[br - 1]
                if name in ("BackgroundFlush", "FlushRolledSegments"):
                    parts.append(f"flushed offset {prev.partition_flushed[br - 1]} -> "
                                 f"{state.partition_flushed[br - 1]}")
                elif len(c.log) < len(a.log):
                    parts.append(f"broker {br} loses " + ", ".join(fmt_record(r) for r in a.log[len(c.log):]))
                else:
                    parts.append(f"broker {br} loses nothing")
            text += ": " + "; ".join(parts)
        elif name == "AlterMinIsr":
            a, c = prev.con_partition_metadata, state.con_partition_metadata
            text += f" to {c.min_isr}"
            if (a.elr or a.last_known_elr) and not (c.elr or c.last_known_elr):
                text += (f"; the controller clears the ELR {fmt_set(a.elr)} and the last-known "
                         f"ELR {fmt_set(a.last_known_elr)}")
        elif name == "CheckpointHwm" and b is not None:
            text += f": HWM {state.partition_hwm_checkpoint[b - 1]}"
        elif name == "CompleteUncleanRecovery":
            c = state.con_partition_metadata
            text += (f": elects leader {fmt_broker(c.leader)} (leader epoch {c.leader_epoch}) and reports "
                     f"a potential data-loss event")
            lost = state.ghost_reported.lost - prev.ghost_reported.lost
            if lost:
                text += f" (it lacks the committed {fmt_set(lost)})"
        elif name.startswith("Consumer") and hasattr(state, "consumer"):
            text += self._describe_consumer(name, prev.consumer, state.consumer, state)
        if name in ("ElectLastKnownLeader", "ElectUncleanLeader", "FenceBroker", "SessionTimeout", "DataLossShutdown", "UncleanShutdown", "NoDataLossShutdown",
                    "CleanShutdown", "ReceiveBrokerRegRequest", "UnfenceBroker",
                    "ReceiveAlterPartitionRequest", "ControlledShutdown", "EnterControlledShutdown",
                    "GrantShutdown"):
            a, c = prev.con_partition_metadata, state.con_partition_metadata
            if a.leader != c.leader and c.leader == NO_LEADER:
                text += (f"; the controller leaves the partition without a leader (leader "
                         f"{fmt_broker(a.leader)} removed, leader epoch {c.leader_epoch})")
            elif a.leader != c.leader:
                text += f"; the controller elects leader {fmt_broker(c.leader)} (leader epoch {c.leader_epoch})"
            elif a.isr != c.isr:
                text += f"; ISR {fmt_set(a.isr)} -> {fmt_set(c.isr)}"
        return text

    def _describe_consumer(self, name, a, c, s) -> str:
        """What a consumer step did: the records read, the position moved."""
        if name == "ConsumerFetch":
            new = c.read[len(a.read):]
            text = f": reads {', '.join(fmt_record(r) for r in new)} up to its HWM {c.position}"
            current = s.con_partition_metadata
            if new and new[-1].stale:
                text += (f" - a stale leader: the controller's leader is {fmt_broker(current.leader)} "
                         f"in leader epoch {current.leader_epoch}")
            return text
        if c.position != a.position:
            cause = "truncation detected" if name == "ConsumerValidatePosition" else "offset out of range"
            return f": {cause}, position {a.position} -> {c.position}"
        return f": leader epoch {a.leader_epoch} -> {c.leader_epoch}, position {c.position} valid"

    def summary_lines(self, s) -> list[str]:
        """The state at a glance: the controller, each broker, the producer, the network."""
        md = s.con_partition_metadata
        fenced = frozenset(self.brokers) - s.con_unfenced
        ctl = (f"controller: leader {fmt_broker(md.leader)}, leader epoch {md.leader_epoch}, "
               f"partition epoch {md.partition_epoch}, ISR {fmt_set(md.isr)}")
        if self.elr:
            ctl += f", ELR {fmt_set(md.elr)}, last-known ELR {fmt_set(md.last_known_elr)}"
        ctl += f", replicas {fmt_set(md.replicas)}, fenced {fmt_set(fenced)}"
        if md.adding or md.removing:
            ctl += f", adding {fmt_set(md.adding)}, removing {fmt_set(md.removing)}"
        if md.min_isr is not None:
            ctl += f", min.insync.replicas {md.min_isr}"
        storage = hasattr(s, "partition_flushed")
        if storage:
            ctl += ", " + fmt_recovery(s.con_recovery)
            shutting = [f"{b} (offset {o})" for b, o in zip(self.brokers, s.con_controlled_shutdown)
                        if o is not None]
            if shutting:
                ctl += ", in controlled shutdown " + ", ".join(shutting)
            if s.ghost_reported.count:
                ctl += (f", reported {s.ghost_reported.count} unclean recover"
                        f"{'y' if s.ghost_reported.count == 1 else 'ies'}")
        lines = [ctl]
        for b in self.brokers:
            i = b - 1
            bs, d, rmd = s.broker_state[i], s.partition_data[i], s.partition_metadata[i]
            role = s.partition_status[i]
            parts = [_enum(role) if role is not None else "no replica role", _enum(bs.status),
                     f"broker epoch {bs.broker_epoch}", f"log {fmt_log(d.log)}", f"LEO {d.leo}", f"HWM {d.hwm}"]
            if s.partition_leso[i] is not None:
                parts.append(f"LESO {s.partition_leso[i]}")
            if storage and s.broker_want_shutdown[i]:
                parts.append("PENDING_CONTROLLED_SHUTDOWN")
            if storage:
                parts.append(f"flushed below offset {s.partition_flushed[i]}, "
                             f"HWM checkpoint {s.partition_hwm_checkpoint[i]}")
                if bs.status <= 1:  # offline: its broker epoch file
                    parts.append(f"broker epoch file {bs.broker_epoch if bs.broker_epoch else 'absent'}")
                if GHOST.get(int(s.ghost_unclean[i])):
                    parts.append(GHOST[int(s.ghost_unclean[i])])
            parts.append(f"sees leader {fmt_broker(rmd.leader)} in leader epoch {rmd.leader_epoch}, "
                         f"ISR {fmt_set(rmd.isr)}")
            for b1, f in zip(self.brokers, s.broker_fetchers[i]):
                if f.partition is not None:
                    parts.append(f"fetches from {b1} at offset {f.partition.fetch_offset}"
                                 + (" (request pending)" if f.pending_response else ""))
            lines.append(f"broker {b}: " + ", ".join(parts))
        lines.append(f"producer: sent {fmt_set(s.inv_sent)}, acked {fmt_set(s.inv_pos_acked)}, "
                     f"nacked {fmt_set(s.inv_neg_acked)}; true HWM {s.inv_true_hwm}")
        if hasattr(s, "consumer"):
            lines.append("consumer: " + fmt_consumer(s.consumer))
        msgs = sorted(s.messages, key=fmt_message)
        lines.append("in flight: " + ("; ".join(fmt_message(m) for m in msgs) if msgs else "nothing"))
        return lines

    def text(self, prop: str, trace: list, header: str = "", full_initial: bool = True,
             also=()) -> str:
        body = super().text(prop, trace, header, full_initial, also)
        last = trace[-1][1]
        fails = " and ".join([prop, *also])
        return (body + f"State after step {len(trace) - 1} (where {fails} fail{'' if also else 's'}), "
                f"at a glance:\n" + "\n".join("  " + line for line in self.summary_lines(last)) + "\n")

    def initial_lines(self, state, full: bool = True) -> list[str]:
        if not full:  # the trace files and --full-state keep every variable
            return self.summary_lines(state) + ["(every variable: kmc check --full-state, or the run's trace-*.txt)"]
        head = self.summary_lines(state) + ["every variable:"]
        lines: list[str] = []
        for name, value in zip(self.names(state), state):
            depth = _ALL_PER_BROKER.get(name)
            if depth == 1:
                lines.append(f"{name} = " + "; ".join(f"[{b}] {fmt(v)}" for b, v in zip(self.brokers, value)))
            elif depth == 2:
                inner = []
                for b, row in zip(self.brokers, value):
                    inner.append(f"[{b}] " + ", ".join(f"[{b1}] {fmt(v)}" for b1, v in zip(self.brokers, row)))
                lines.append(f"{name} = " + "; ".join(inner))
            elif name in ("con_metadata_log",):
                lines.append(f"{name} = [" + ", ".join(fmt(r) for r in value) + "]")
            else:
                lines.append(f"{name} = {fmt(value)}")
        return head + ["  " + line for line in lines]

    def step_lines(self, prev, state, action) -> list[str]:
        lines = []
        before, after = prev.messages, state.messages
        if before is not after:
            for m in sorted(before - after, key=fmt_message):
                lines.append(f"{self.fate(action, m)}: {fmt_message(m)}")
            for m in sorted(after - before, key=fmt_message):
                lines.append(f"sent: {fmt_message(m)}")
        for name, a, b in zip(self.names(state), prev, state):
            if a == b or name in ("messages", "messages_discard") or name.startswith("aux_"):
                continue  # (aux_*: the model's own counters and bounds, not the protocol's)
            depth = _ALL_PER_BROKER.get(name)
            if depth == 1:
                for br, x, y in zip(self.brokers, a, b):
                    if x != y:
                        if name == "broker_metadata_log" and y[:len(x)] == x:
                            lines.append(f"{name}[{br}] + " + ", ".join(fmt(r) for r in y[len(x):]))
                        else:
                            lines.append(f"{name}[{br}]: {field_diff(x, y)}")
            elif depth == 2:
                for br, xr, yr in zip(self.brokers, a, b):
                    for b1, x, y in zip(self.brokers, xr, yr):
                        if x != y:
                            lines.append(f"{name}[{br}][{b1}]: {field_diff(x, y)}")
            elif name == "con_metadata_log" and b[:len(a)] == a:
                lines.append(f"{name} + " + ", ".join(fmt(r) for r in b[len(a):]))
            elif name == "inv_consumed" and b[:len(a)] == a:
                lines.append(f"{name} + " + ", ".join(fmt_record(r) for r in b[len(a):]))
            elif name == "consumer":
                lines.append(f"{name}: {fmt_consumer(a)} -> {fmt_consumer(b)}")
            else:
                lines.append(f"{name}: {field_diff(a, b)}")
        return lines

    # ---- ITF ---------------------------------------------------------------------

    def _itf_record(self, r) -> Any:
        name = type(r).__name__
        absent = ABSENT_WHEN_NONE.get(name, ())
        out = {}
        for f, x in zip(r._fields, r):
            if x is None and f in absent:
                continue
            if not self.elr and f in V3_5_ABSENT:
                continue
            if f == "leader" and x == NO_LEADER:
                out[f] = "NoLeader"
            elif f in ("dest", "source") and x == CONTROLLER:
                out[f] = "Controller"
            elif f == "isr_and_epochs":
                out[f] = {"#map": [[itf.bigint(b), itf.bigint(e)] for b, e in x]}
            else:
                out[f] = self.to_itf(x, self._itf_record)
        return out

    def itf_variable(self, name: str, value: Any) -> Any:
        depth = _ALL_PER_BROKER.get(name)
        conv = lambda v: self.to_itf(v, self._itf_record)  # noqa: E731
        if depth == 1:
            return self.fn_over(value, self.brokers, conv)
        if depth == 2:
            return self.fn_over(value, self.brokers, lambda row: self.fn_over(row, self.brokers, conv))
        return conv(value)

    def itf_meta(self) -> dict:
        return {"note": "kraft: Nil, NoLeader and Controller are the reference's model values; "
                        "functions over Brokers are #map; logs are sequences (lists)"}

    # ---- sequence diagram ----------------------------------------------------------

    def lanes(self) -> list[str]:
        return ["Controller"] + [f"Broker {b}" for b in self.brokers]

    def in_flight(self, state):
        return state.messages

    def message_lanes(self, m) -> tuple[int, int]:
        return (m.source, m.dest)  # CONTROLLER = 0 is lane 0, broker b is lane b

    def message_label(self, m) -> tuple[str, str]:
        return short_message(m), fmt_message(m)

    def message_kind(self, m) -> str:
        return _enum(m.type)

    def actor_lane(self, action) -> int | None:
        name = getattr(action, "name", "")
        if name in CONTROLLER_ACTIONS:
            return 0
        return self._b(action)

    def arrows(self, trace: list) -> list[Arrow]:
        """The messages, and each metadata update a broker reads from the
        controller's metadata log (no message in the reference: an arrow from
        the controller all the same, sent and read in the step)."""
        out = super().arrows(trace)
        for i, (action, state) in enumerate(trace[1:], 1):
            b = self._b(action)
            if getattr(action, "name", "") == "ReceiveMetadataUpdate" and b is not None:
                out.append(Arrow(0, b, i, i, "received", "metadata",
                                 self.describe(action, trace[i - 1][1], state), "MetadataUpdate"))
        return out

    def fate(self, action, m) -> str:
        name = getattr(action, "name", "")
        b = self._b(action)
        if name.startswith("Receive") and (m.dest == (0 if name in CONTROLLER_ACTIONS else b)):
            return "received"
        return "dropped"

    # ---- the per-step table ----------------------------------------------------------

    def columns(self) -> list[str]:
        return (["Controller"] + [f"Broker {b}" for b in self.brokers] + ["Producer"]
                + (["Consumer"] if "consumer" in (self.variables or ()) else []))

    def _controller_cell(self, prev, s) -> tuple[str, bool]:
        md = s.con_partition_metadata
        pm = prev.con_partition_metadata if prev is not None else md
        ch = prev is not None
        items = [
            self._item("leader", f"<b>{_esc(fmt_broker(md.leader))}</b>", ch and pm.leader != md.leader),
            self._item("LE", _esc(md.leader_epoch), ch and pm.leader_epoch != md.leader_epoch),
            self._item("PE", _esc(md.partition_epoch), ch and pm.partition_epoch != md.partition_epoch),
            "<br>",
            self._item("ISR", _esc(fmt_set(md.isr)), ch and pm.isr != md.isr),
        ]
        if self.elr:
            items.append(self._item("ELR", _esc(fmt_set(md.elr)), ch and pm.elr != md.elr))
            if md.last_known_elr or (ch and pm.last_known_elr):
                items.append(self._item("last-known ELR", _esc(fmt_set(md.last_known_elr)),
                                        ch and pm.last_known_elr != md.last_known_elr))
        items.append("<br>")
        fenced = frozenset(self.brokers) - s.con_unfenced
        pf = frozenset(self.brokers) - prev.con_unfenced if prev is not None else fenced
        items.append(self._item("fenced", _esc(fmt_set(fenced)), ch and pf != fenced))
        if md.adding or md.removing:
            items.append(self._item("reassigning", _esc(f"+{fmt_set(md.adding)} -{fmt_set(md.removing)}"),
                                    ch and (pm.adding != md.adding or pm.removing != md.removing)))
        if hasattr(s, "con_recovery"):  # storage variants
            cs = {b for b, o in zip(self.brokers, s.con_controlled_shutdown) if o is not None}
            pcs = ({b for b, o in zip(self.brokers, prev.con_controlled_shutdown) if o is not None}
                   if prev is not None else cs)
            if cs or (ch and pcs):
                items.append(self._item("in controlled shutdown", _esc(fmt_set(cs)), ch and pcs != cs))
            rec = s.con_recovery
            prec = prev.con_recovery if prev is not None else rec
            if rec is not None or (ch and prec is not None):
                items.append("<br>")
                items.append(self._item("recovery", _esc(fmt_recovery(rec)), ch and prec != rec))
            if s.ghost_reported.count:
                items.append(self._item("reported data-loss events", _esc(s.ghost_reported.count),
                                        ch and prev.ghost_reported != s.ghost_reported))
        changed = prev is not None and (prev.con_partition_metadata != md
                                        or prev.con_unfenced != s.con_unfenced
                                        or prev.con_broker_reg != s.con_broker_reg
                                        or getattr(prev, "con_controlled_shutdown", None)
                                        != getattr(s, "con_controlled_shutdown", None))
        return " ".join(items), changed

    def _log_html(self, log, acked, old_log) -> str:
        if not log:
            return '<span class="log empty">empty</span>'
        chips = []
        for i, r in enumerate(log):
            cls = "rec"
            if r.value in acked:
                cls += " acked"
            if old_log is not None and (i >= len(old_log) or old_log[i] != r):
                cls += " chg"
            chips.append(f'<span class="{cls}" title="offset {r.offset}, value {_esc(r.value)}, '
                         f'leader epoch {r.epoch}">{r.offset}<b>{_esc(r.value)}</b><i>e{r.epoch}</i></span>')
        return '<span class="log">' + "".join(chips) + "</span>"

    def _broker_cell(self, prev, s, b) -> tuple[str, bool]:
        i = b - 1
        ch = prev is not None
        role, bs = s.partition_status[i], s.broker_state[i]
        d, md = s.partition_data[i], s.partition_metadata[i]
        p = prev
        items = []
        role_txt = _enum(role) if role is not None else "-"
        items.append(self._item("", f'<span class="role r-{_esc(role_txt)}">{_esc(role_txt)}</span>',
                                ch and p.partition_status[i] != role))
        reg = s.con_broker_reg[i]
        status = _enum(bs.status)
        items.append(self._item("", _esc(status), ch and p.broker_state[i].status != bs.status,
                                "st-" + status))
        items.append(self._item("epoch", _esc(bs.broker_epoch), ch and p.broker_state[i].broker_epoch != bs.broker_epoch))
        if _enum(reg.status) == "FENCED":  # the controller's view
            items.append(self._item("", '<span class="fenced">fenced</span>',
                                    ch and p.con_broker_reg[i].status != reg.status))
        items.append("<br>")
        old_log = p.partition_data[i].log if ch else None
        items.append(self._log_html(d.log, s.inv_pos_acked, old_log))
        items.append("<br>")
        pd = p.partition_data[i] if ch else d
        items.append(self._item("LEO", _esc(d.leo), ch and pd.leo != d.leo))
        items.append(self._item("HWM", _esc(d.hwm), ch and pd.hwm != d.hwm))
        leso = s.partition_leso[i]
        if leso is not None:
            items.append(self._item("LESO", _esc(leso), ch and p.partition_leso[i] != leso))
        if hasattr(s, "partition_flushed"):  # storage variants
            f, c = s.partition_flushed[i], s.partition_hwm_checkpoint[i]
            items.append(self._item("flushed <", _esc(f), ch and p.partition_flushed[i] != f))
            items.append(self._item("HWM ckpt", _esc(c), ch and p.partition_hwm_checkpoint[i] != c))
            if bs.status <= 1:  # offline: the broker epoch file
                pbs = p.broker_state[i] if ch else bs
                items.append(self._item("epoch file", _esc(bs.broker_epoch or "absent"),
                                        ch and (pbs.status > 1 or pbs.broker_epoch != bs.broker_epoch)))
            if s.broker_want_shutdown[i]:  # PENDING_CONTROLLED_SHUTDOWN
                items.append(self._item("", '<span class="fenced">shutting down</span>',
                                        ch and not p.broker_want_shutdown[i]))
            g = int(s.ghost_unclean[i])
            if g:
                items.append(self._item("", f'<span class="fenced">{_esc(GHOST[g].split(" (")[0])}</span>',
                                        ch and p.ghost_unclean[i] != s.ghost_unclean[i]))
        if md.leader != NO_LEADER or md.replicas:
            pmd = p.partition_metadata[i] if ch else md
            items.append("<br>")
            items.append(self._item("sees leader", _esc(fmt_broker(md.leader)) + f" e{md.leader_epoch}",
                                    ch and (pmd.leader != md.leader or pmd.leader_epoch != md.leader_epoch)))
            if role is not None and role.name == "Leader":
                isr_txt = fmt_set(md.isr)
                if md.maximal_isr != md.isr:
                    isr_txt += f" (maximal {fmt_set(md.maximal_isr)})"
                items.append(self._item("ISR", _esc(isr_txt),
                                        ch and (pmd.isr != md.isr or pmd.maximal_isr != md.maximal_isr)))
                peers = s.partition_replica_state[i]
                known = [f"{b1}:{fmt(r.leo)}" for b1, r in zip(self.brokers, peers)
                         if b1 != b and r.leo is not None]
                if known:
                    items.append(self._item("follower LEOs", _esc(" ".join(known)),
                                            ch and p.partition_replica_state[i] != peers))
        changed = prev is not None and any(
            prev[j][i] != s[j][i] for j in self._per_broker_idx)
        return " ".join(items), changed

    def _producer_cell(self, prev, s) -> tuple[str, bool]:
        ch = prev is not None
        items = [
            self._item("sent", _esc(fmt_set(s.inv_sent)), ch and prev.inv_sent != s.inv_sent), "<br>",
            self._item("acked", f'<span class="acked-set">{_esc(fmt_set(s.inv_pos_acked))}</span>',
                       ch and prev.inv_pos_acked != s.inv_pos_acked),
        ]
        if s.inv_neg_acked:
            items.append(self._item("nacked", _esc(fmt_set(s.inv_neg_acked)),
                                    ch and prev.inv_neg_acked != s.inv_neg_acked))
        items.append("<br>")
        items.append(self._item("true HWM", _esc(s.inv_true_hwm), ch and prev.inv_true_hwm != s.inv_true_hwm))
        changed = ch and (prev.inv_sent != s.inv_sent or prev.inv_pos_acked != s.inv_pos_acked
                          or prev.inv_neg_acked != s.inv_neg_acked or prev.inv_true_hwm != s.inv_true_hwm)
        return " ".join(items), changed

    @property
    def _per_broker_idx(self) -> tuple[int, ...]:
        names = self.variables or ()
        return tuple(names.index(v) for v in ("broker_state", "partition_status", "partition_data",
                                              "partition_metadata", "partition_leso", "con_broker_reg",
                                              "partition_replica_state", "partition_flushed",
                                              "partition_hwm_checkpoint", "ghost_unclean",
                                              "broker_want_shutdown") if v in names)

    def notes(self, trace: list) -> list[str]:
        """A record both nacked and committed: the HWM passed it while the
        maximal ISR had fewer than MinISR members (the leader answers
        NOT_ENOUGH_REPLICAS_AFTER_APPEND), or the leader failed it as it gave
        up leadership, after it was already replicated enough."""
        s = trace[-1][1]
        committed = {r.value for r in s.inv_consumed}
        both = sorted(v for v in s.inv_neg_acked if v in committed)
        if not both:
            return []
        return [f"nacked and committed: {', '.join(map(str, both))}. The producer was told the write "
                f"failed (the high watermark passed the record while fewer than MinISR={self.min_isr} "
                f"replicas were in the maximal ISR, or the leader failed its pending writes as it gave up "
                f"leadership), yet the record is below the true HWM and consumers read it: Kafka never "
                f"takes a written record back, so a failed write may still be committed (a producer "
                f"retry would write it twice)."]

    def cells(self, prev, state) -> list[tuple[str, bool]]:
        out = [self._controller_cell(prev, state)]
        out.extend(self._broker_cell(prev, state, b) for b in self.brokers)
        out.append(self._producer_cell(prev, state))
        if hasattr(state, "consumer"):
            out.append(self._consumer_cell(prev, state))
        return out

    def _consumer_cell(self, prev, s) -> tuple[str, bool]:
        c = s.consumer
        a = prev.consumer if prev is not None else None
        read = ", ".join(fmt_record(r) + (" (stale leader)" if r.stale else "") for r in c.read)
        items = [
            self._item("position", _esc(c.position), a is not None and a.position != c.position), "<br>",
            self._item("leader epoch", _esc(c.leader_epoch), a is not None and a.leader_epoch != c.leader_epoch),
            "<br>", self._item("read", _esc(f"[{read}]"), a is not None and a.read != c.read),
        ]
        if c.resets:
            items += ["<br>", self._item("offset resets", _esc(c.resets), a is not None and a.resets != c.resets)]
        return " ".join(items), a is not None and a != c

    # ---- what broke ------------------------------------------------------------------

    def _where_was(self, trace, value) -> str:
        """Where an acked value lived: its offset and epoch the last time a log held it."""
        for _, s in reversed(trace):
            for b, d in zip(self.brokers, s.partition_data):
                for r in d.log:
                    if r.value == value:
                        return f"offset {r.offset}, leader epoch {r.epoch}"
        return "offset unknown"

    def _broke_at(self, trace: list, lead: int, values: list) -> tuple[int | None, str]:
        """The step that elected leader `lead` without committed `values`, or took them."""
        epoch = trace[-1][1].con_partition_metadata.leader_epoch
        return promise_broke_at(
            trace, self.step_title,
            lambda s: s.con_partition_metadata.leader == lead and s.con_partition_metadata.leader_epoch == epoch,
            lambda s, v: any(r.value == v for r in s.partition_data[lead - 1].log),
            values, f"broker {lead}", epoch, "committed")

    def _explain_consumer(self, prop: str, trace: list) -> Explanation:
        """Which record the consumer read is gone, or how its position went back."""
        s = trace[-1][1]
        c = s.consumer
        column = {len(self.columns()) - 1}
        if prop == "MonotonicReads":
            last = max((r.offset for r in c.read), default=0)
            return Explanation(
                f"The consumer's reads went back: it read up to offset {last} "
                f"({fmt_log(c.read)}), and its position is now {c.position} after "
                f"{c.resets} reset{'s' if c.resets != 1 else ''} by auto.offset.reset: it will read "
                f"offsets it already read again, maybe as other records.", column)
        epoch = s.con_partition_metadata.leader_epoch
        for b in self.brokers:
            i = b - 1
            if s.partition_status[i] is None or int(s.partition_status[i]) != 0 \
                    or s.partition_metadata[i].leader_epoch != epoch:
                continue
            log = s.partition_data[i].log
            gone = [r for r in c.read if r.offset > len(log) or (log[r.offset - 1].epoch, log[r.offset - 1].value)
                    != (r.epoch, r.value)]
            if gone:
                return Explanation(
                    f"A record the consumer read is gone: it read {', '.join(fmt_record(r) for r in gone)} "
                    f"(from the leader of leader epoch {gone[0].leader_epoch}), but broker {b}, the leader "
                    f"in leader epoch {epoch}, holds {fmt_log(log)}.", column | {b})
        return Explanation("A record the consumer read is gone from the committed log.", column)

    def explain(self, prop: str, trace: list) -> Explanation | None:
        s = trace[-1][1]
        acked = sorted(s.inv_pos_acked)
        logs = {b: d.log for b, d in zip(self.brokers, s.partition_data)}
        in_log = lambda b, v: any(r.value == v for r in logs[b])  # noqa: E731
        true_hwm = s.inv_true_hwm
        md = s.con_partition_metadata
        if prop in ("ConsumedRecordsStayCommitted", "MonotonicReads") and hasattr(s, "consumer"):
            return self._explain_consumer(prop, trace)
        if prop == "LeaderCompletenessProperty":
            lead = md.leader
            if lead != NO_LEADER:
                d = s.partition_data[lead - 1]
                missing = [v for v in acked if not in_log(lead, v)]
                parts = []
                if missing:
                    parts.append("the acknowledged record" + ("s " if len(missing) > 1 else " ")
                                 + ", ".join(f"{v} ({self._where_was(trace, v)})" for v in missing)
                                 + f" is missing from the log of leader broker {lead}")
                if d.leo < true_hwm:
                    lost = [r for r in s.inv_consumed[d.leo - 1:true_hwm - 1]
                            if not any(x == r for x in d.log)]
                    parts.append(f"its LEO {d.leo} is below the true HWM {true_hwm}"
                                 + (": it lacks the committed record" + ("s " if len(lost) > 1 else " ")
                                    + ", ".join(f"{r.value} (offset {r.offset}, leader epoch {r.epoch})"
                                                for r in lost)
                                    + ", already readable by consumers"
                                    if lost else ""))
                lacking = list(dict.fromkeys(missing + [r.value for r in s.inv_consumed[d.leo - 1:true_hwm - 1]
                                                        if not any(x == r for x in d.log)]))
                at, how = self._broke_at(trace, lead, lacking)
                text = (f"Committed data lost: the controller's leader, broker {lead} (leader epoch "
                        f"{md.leader_epoch}), is RUNNING but " + "; ".join(parts)
                        + f". Its log: {fmt_log(d.log) if d.log else 'empty'}."
                        + (f" The promise broke at {how}." if how else ""))
                return Explanation(text, {lead}, at, how)
        if prop == "NoCommittedRecordLostGlobally":
            missing = [v for v in acked if not any(in_log(b, v) for b in self.brokers)]
            if missing:
                text = ("Committed data lost: the acknowledged record" + ("s " if len(missing) > 1 else " ")
                        + ", ".join(f"{v} ({self._where_was(trace, v)})" for v in missing)
                        + " is in no broker's log ("
                        + "; ".join(f"broker {b} {fmt_log(logs[b])}" for b in self.brokers) + ").")
                return Explanation(text, set(self.brokers))
        if prop == "LeaderCandidateCompletenessProperty":
            quorum = sorted(md.isr | (md.elr if self.elr else frozenset()))
            bad = [b for b in quorum if s.partition_data[b - 1].leo < true_hwm
                   and _enum(s.broker_state[b - 1].status) == "RUNNING"]
            if bad:
                what = "ISR" + (" or ELR" if self.elr else "")
                text = (f"An election could lose committed data: {what} member"
                        + ("s " if len(bad) > 1 else " ") + ", ".join(
                            f"broker {b} (LEO {s.partition_data[b - 1].leo}, log "
                            f"{fmt_log(s.partition_data[b - 1].log)})" for b in bad)
                        + f" {'are' if len(bad) > 1 else 'is'} RUNNING below the true HWM {true_hwm}"
                        + ("; missing acknowledged " + ", ".join(
                            f"{v}" for v in acked if not all(in_log(b, v) for b in bad)) if acked else "")
                        + f" (controller ISR {fmt_set(md.isr)}"
                        + (f", ELR {fmt_set(md.elr)}" if self.elr else "") + ").")
                return Explanation(text, set(bad))
        if prop == "ReplicationQuorumSupersetProperty":
            bad = []
            for b in self.brokers:
                rmd = s.partition_metadata[b - 1]
                if s.partition_status[b - 1] is not None and _enum(s.partition_status[b - 1]) == "Leader" \
                        and rmd.leader_epoch == md.leader_epoch:
                    bad.append(f"leader broker {b} replicates to maximal ISR {fmt_set(rmd.maximal_isr)} "
                               f"(ISR {fmt_set(rmd.isr)}) while the controller's ISR is {fmt_set(md.isr)}"
                               + (f" and ELR {fmt_set(md.elr)}" if self.elr else ""))
            if bad:
                return Explanation("The replication quorum does not cover the election quorum: "
                                   + "; ".join(bad) + ".", {b for b in self.brokers
                                                            if s.partition_status[b - 1] is not None})
        if prop == "LogMatchingProperty":
            for o in range(1, max((len(x) for x in logs.values()), default=0) + 1):
                held = {b: logs[b][o - 1].value for b in self.brokers
                        if s.partition_data[b - 1].leo > o and s.partition_data[b - 1].hwm > o}
                if len(set(held.values())) > 1:
                    return Explanation(f"Logs diverge below the HWM at offset {o}: "
                                       + ", ".join(f"broker {b} has {v}" for b, v in held.items()) + ".",
                                       set(held))
        if prop == "ConsistentReadProperty":
            return Explanation(f"A consumed record moved: consumed {fmt_log(s.inv_consumed)}, but a "
                               f"non-stale leader's log differs ("
                               + "; ".join(f"broker {b} {fmt_log(logs[b])}" for b in self.brokers) + ").",
                               set(self.brokers))
        if prop == "UncleanExclusion":
            bad = [b for b in self.brokers if int(s.ghost_unclean[b - 1]) == 2
                   and (md.leader == b or b in md.isr or (self.elr and b in md.elr))]
            if bad:
                where = lambda b: ", ".join(w for w, x in (("leader", md.leader == b), ("in the ISR", b in md.isr),  # noqa: E731
                                                           ("in the ELR", self.elr and b in md.elr)) if x)
                return Explanation("Unclean Exclusion broken: " + "; ".join(
                    f"broker {b} restarted after an unclean shutdown and has not caught up with the "
                    f"leader, yet it is {where(b)} (log {fmt_log(s.partition_data[b - 1].log)})"
                    for b in bad) + f" (controller ISR {fmt_set(md.isr)}"
                    + (f", ELR {fmt_set(md.elr)}" if self.elr else "") + ").", set(bad))
        if prop == "DataLossIsReported":
            lead = md.leader
            if lead != NO_LEADER:
                committed = set(acked) | {r.value for r in s.inv_consumed}
                missing = sorted(v for v in committed if not in_log(lead, v)
                                 and v not in s.ghost_reported.lost)
                return Explanation(
                    f"Unreported data loss: leader broker {lead} lacks the committed "
                    + ", ".join(f"{v} ({self._where_was(trace, v)})" for v in missing)
                    + f", and no unclean recovery reported it (reported: {s.ghost_reported.count} "
                    f"recover{'y' if s.ghost_reported.count == 1 else 'ies'}, lost "
                    f"{fmt_set(s.ghost_reported.lost)}).", {lead})
        if prop == "MinIsrRecoveryQuorum":
            return Explanation(f"ISR and ELR are empty and the last-known ELR {fmt_set(md.last_known_elr)} "
                               f"has {len(md.last_known_elr)} member(s), not MinISR = "
                               f"{self.min_isr if md.min_isr is None else md.min_isr}.", {0})
        return super().explain(prop, trace)


TRACE_VIEW = KraftView
