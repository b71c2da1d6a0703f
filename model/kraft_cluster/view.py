"""The trace view of `kraft_cluster`: kraft's view of the brokers and the
producer, a column per controller (its role and epoch, its metadata log
with the committed entries marked, the active one's in-memory state), a
lane per controller and per broker in the sequence diagram, and a headline
that says what broke."""
from __future__ import annotations

import html
from typing import Any

from model.kraft.state import VARIABLES as KRAFT_VARIABLES, KraftState
from model.kraft.view import KraftView, fmt_set
from model.kraft_cluster.metadata import partition_log, records_of
from model.kraft_cluster.state import BrokerRegistrationChangeRecord, BrokerRegistrationRecord
from model.kraft_quorum.state import Command, Role
from model.view import Arrow, Explanation

_QUORUM_TYPES = ("VoteRequest", "VoteResponse", "BeginQuorumEpoch", "FetchRequest", "FetchResponse")
_DECISIONS = ("ReceiveBrokerRegRequest", "ReceiveAlterPartitionRequest", "FenceBroker", "UnfenceBroker",
              "PerformPartitionReassignment", "MaybeFenceStaleBroker")
_CONTROLLER_PROPS = ("AnswersCommitted", "BrokerEpochsIncrease", "ControllerStateFromLog")
CLUSTER_CSS = """
.md-c { color: var(--good); }
.md-u { color: var(--warn); font-style: italic; }
"""


def fmt_record(r) -> str:
    if type(r) is BrokerRegistrationRecord:
        return f"register b{r.broker} epoch {r.broker_epoch}"
    if type(r) is BrokerRegistrationChangeRecord:
        return f"{'fence' if r.fenced else 'unfence'} b{r.broker}"
    return (f"PE {r.partition_epoch}: leader {r.leader} LE {r.leader_epoch} ISR {fmt_set(r.isr)}"
            + (f" ELR {fmt_set(r.elr)}" if r.elr else "")
            + (f" LKELR {fmt_set(r.last_known_elr)}" if r.last_known_elr else ""))


class ClusterView(KraftView):
    name = "kraft_cluster"
    page_css = KraftView.page_css + CLUSTER_CSS
    legend = KraftView.legend + ("green metadata batch: committed; orange italics: not committed",)
    abbreviations = KraftView.abbreviations + (("LKELR", "last-known ELR"),)

    def __init__(self, model: Any, order_key=None):
        super().__init__(model, order_key)
        self.controllers = tuple((getattr(model, "constants", {}) or {}).get("Controllers", ("c1",)))
        self.nc = len(self.controllers)
        self._actors: list = []

    def _cname(self, srv) -> str:
        return self.controllers[srv - 1] if srv and srv <= self.nc else "no controller"

    # ---- text --------------------------------------------------------------------

    def describe(self, action, prev, state) -> str:
        name = getattr(action, "name", "")
        params = getattr(action, "params", ()) or ()
        if name.startswith("Controller") and params:
            return f"controller {self._cname(params[0])}: {name[len('Controller'):]}"
        text = super().describe(action, prev, state)
        if name in _DECISIONS and prev is not None and prev.ctl_active:
            c = self._cname(prev.ctl_active)
            q = state.quorum
            hwm = q.hwm[prev.ctl_active - 1]
            n = len(q.log[prev.ctl_active - 1])
            if n > len(prev.quorum.log[prev.ctl_active - 1]):
                text += f" [controller {c} appends it at offset {n}" + (", committed" if hwm >= n else
                                                                       ", not committed yet") + "]"
            else:
                text += f" [controller {c}]"
        return text

    def _kraft(self, state):
        return None if state is None else KraftState(*state[:len(KRAFT_VARIABLES)])

    def _controller_lines(self, prev, s) -> list[str]:
        q = s.quorum
        lines = []
        for srv in range(1, self.nc + 1):
            i = srv - 1
            text = (f"controller {self._cname(srv)}: {Role(q.state[i]).name} epoch {q.current_epoch[i]}, "
                    f"log {len(q.log[i])} entries, HWM {q.hwm[i]}"
                    + (" (active)" if s.ctl_active == srv else ""))
            if prev is None:
                lines.append(text)
                continue
            p = prev.quorum
            if (p.state[i], p.current_epoch[i], p.log[i], p.hwm[i]) != (q.state[i], q.current_epoch[i],
                                                                         q.log[i], q.hwm[i]) \
                    or (prev.ctl_active == srv) != (s.ctl_active == srv):
                new = [fmt_record(r) for e in q.log[i][len(p.log[i]):]
                       if e.command == Command.AppendCommand for r in e.value]
                lines.append(text + (": appended " + "; ".join(new) if new else ""))
        if prev is None or prev.ctl_pending != s.ctl_pending:
            lines.append(f"answers waiting for commit: {len(s.ctl_pending)}")
        if prev is not None and prev.ctl_committed != s.ctl_committed:
            lines.append(f"committed metadata log: {len(s.ctl_committed)} entries")
        return lines

    def initial_lines(self, state, full: bool = True) -> list[str]:
        return super().initial_lines(self._kraft(state), full) + self._controller_lines(None, state)

    def step_lines(self, prev, state, action) -> list[str]:
        return (super().step_lines(self._kraft(prev), self._kraft(state), action)
                + self._controller_lines(prev, state))

    def explain(self, prop: str, trace: list) -> Explanation | None:
        """The sentence that says what broke, then kraft's explanation (or the
        property's doc)."""
        what = self._what_broke(prop, trace)
        base = super().explain(prop, trace)
        if not what:
            return base
        cols = set(range(self.nc)) if prop in _CONTROLLER_PROPS else set()
        if base is None:
            return Explanation(what, cols)
        return Explanation(f"{what} {base.text}".strip(), base.columns | cols, base.broke_at, base.broke_how)

    def _what_broke(self, prop: str, trace: list) -> str:
        s = trace[-1][1]
        c = self._cname(s.ctl_active)
        if prop == "AnswersCommitted":
            for m in sorted(s.messages | s.messages_discard, key=self.order_key):
                if int(m.type) == 3 and m.error is None:
                    return (f"Broker {m.dest} was told its AlterPartition set ISR {fmt_set(m.isr)} "
                            f"(leader {m.leader}, partition epoch {m.partition_epoch}), which the "
                            f"committed metadata log does not hold.")
        if prop == "BrokerEpochsIncrease":
            regs = [r for r in records_of(s.ctl_committed) if type(r) is BrokerRegistrationRecord]
            top = max(regs, key=lambda r: r.broker_epoch, default=None)
            if s.ctl_active and top is not None and s.aux_broker_epoch < top.broker_epoch:
                return (f"Controller {c} became active counting broker epochs from "
                        f"{s.aux_broker_epoch}, below the epoch {top.broker_epoch} that broker "
                        f"{top.broker} (incarnation {top.incarnation_id}) registered with in the "
                        f"committed log: its next registration hands out an epoch an earlier "
                        f"incarnation holds (the ABA problem).")
            for a, b in zip(regs, regs[1:]):
                if a.broker_epoch >= b.broker_epoch:
                    return (f"Controller {c} registered broker {b.broker} with broker epoch "
                            f"{b.broker_epoch}, not above the epoch {a.broker_epoch} broker {a.broker} "
                            f"(incarnation {a.incarnation_id}) was given: an earlier incarnation's "
                            f"epoch is valid again (the ABA problem).")
        if prop == "MetadataIsCommitted":
            pcrs = partition_log(s.ctl_committed)
            for b, bml in zip(self.brokers, s.broker_metadata_log):
                for i, r in enumerate(bml):
                    if i >= len(pcrs) or pcrs[i] != r:
                        return (f"Broker {b} applied partition epoch {r.partition_epoch} (leader "
                                f"{r.leader}, ISR {fmt_set(r.isr)}) from a record that was never "
                                f"committed.")
        if prop == "ControllerStateFromLog" and s.ctl_active:
            md = s.con_partition_metadata
            return (f"Controller {c} acts on ISR {fmt_set(md.isr)}, ELR {fmt_set(md.elr)}, leader "
                    f"{md.leader} at partition epoch {md.partition_epoch}, which its metadata log "
                    f"does not hold (state from before it became active).")
        if prop in ("LeaderCompletenessProperty", "NoCommittedRecordLostGlobally",
                    "LeaderCandidateCompletenessProperty"):
            md = s.con_partition_metadata
            return (f"With controller {c} active, leader {md.leader} at leader epoch {md.leader_epoch} "
                    f"(ISR {fmt_set(md.isr)}) lacks a committed record.")
        return ""

    # ---- the per-step table ----------------------------------------------------------

    def columns(self) -> list[str]:
        return ([f"Controller {c}" for c in self.controllers]
                + [f"Broker {b}" for b in self.brokers] + ["Producer"])

    def _quorum_cell(self, prev, s, srv: int) -> tuple[str, bool]:
        q = s.quorum
        i = srv - 1
        pq = prev.quorum if prev is not None else q
        ch = prev is not None
        role = Role(q.state[i]).name
        active = s.ctl_active == srv
        items = [self._item("", f"<b>{html.escape(role)}{' (active)' if active else ''}</b>",
                            ch and (pq.state[i] != q.state[i] or (prev.ctl_active == srv) != active)),
                 self._item("epoch", str(q.current_epoch[i]), ch and pq.current_epoch[i] != q.current_epoch[i]),
                 self._item("HWM", str(q.hwm[i]), ch and pq.hwm[i] != q.hwm[i]), "<br>"]
        log, hwm = q.log[i], q.hwm[i]
        plog = pq.log[i]
        for o, e in enumerate(log, 1):
            if e.command != Command.AppendCommand or o == 2:
                continue
            cls = "md-c" if o <= hwm else "md-u"
            text = "; ".join(fmt_record(r) for r in e.value)
            new = ch and (o > len(plog) or plog[o - 1] != e)
            items.append(self._item(f"{o}@{e.epoch}", f'<span class="{cls}">{html.escape(text)}</span>', new))
            items.append("<br>")
        if active:
            cell, _ = self._controller_cell(prev, s)
            items.append(cell)
        changed = ch and (pq.state[i] != q.state[i] or pq.log[i] != q.log[i] or pq.hwm[i] != q.hwm[i]
                          or (prev.ctl_active == srv) != active
                          or (active and prev.con_partition_metadata != s.con_partition_metadata))
        return " ".join(items), changed

    def cells(self, prev, state) -> list[tuple[str, bool]]:
        out = [self._quorum_cell(prev, state, srv) for srv in range(1, self.nc + 1)]
        out.extend(self._broker_cell(prev, state, b) for b in self.brokers)
        out.append(self._producer_cell(prev, state))
        return out

    # ---- sequence diagram: a lane per controller, then per broker ---------------------

    def lanes(self) -> list[str]:
        return [f"Controller {c}" for c in self.controllers] + [f"Broker {b}" for b in self.brokers]

    def in_flight(self, state):
        return state.messages | state.quorum.net_messages

    def _is_quorum(self, m) -> bool:
        return type(m).__name__ in _QUORUM_TYPES and hasattr(m, "replica_epoch")

    def _lanes_in(self, m, state) -> tuple[int, int]:
        if self._is_quorum(m):
            return (m.source - 1, m.dest - 1)
        ctl = (state.ctl_active or 1) - 1  # kraft's controller: the active one
        return (ctl if m.source == 0 else self.nc + m.source - 1,
                ctl if m.dest == 0 else self.nc + m.dest - 1)

    def message_kind(self, m) -> str:
        return ("Controller" + type(m).__name__) if self._is_quorum(m) else super().message_kind(m)

    def message_label(self, m) -> tuple[str, str]:
        if self._is_quorum(m):
            t = type(m).__name__
            return t, html.escape(str(m))[:200]
        return super().message_label(m)

    def arrows(self, trace: list) -> list[Arrow]:
        """kraft's messages to or from the controller go to the active one of the
        step that sent them; the dots of controller decisions on its lane."""
        arrows: list[Arrow] = []
        open_: dict = {}
        self._actors = []

        def start(m, step, state):
            src, dst = self._lanes_in(m, state)
            short, full = self.message_label(m)
            a = Arrow(src, dst, step, None, "in flight", short, full, self.message_kind(m))
            arrows.append(a)
            open_[m] = a

        prev = self.in_flight(trace[0][1])
        for m in sorted(prev, key=self.order_key):
            start(m, 0, trace[0][1])
        before = trace[0][1]
        for i, (action, state) in enumerate(trace[1:], 1):
            self._actors.append(self._actor(action, before))
            cur = self.in_flight(state)
            for m in sorted(prev - cur, key=self.order_key):
                a = open_.pop(m, None)
                if a is not None:
                    a.end = i
                    a.fate = "received" if a.dst == self._actors[-1] else "dropped"
            for m in sorted(cur - prev, key=self.order_key):
                start(m, i, state)
            prev, before = cur, state
        self._actors.reverse()
        return arrows

    def _actor(self, action, before):
        name = getattr(action, "name", "")
        params = getattr(action, "params", ()) or ()
        if name.startswith("Controller") and params:
            return params[0] - 1
        if name in _DECISIONS:
            return (before.ctl_active or 1) - 1
        b = self._b(action)
        return None if b is None else self.nc + b - 1

    def actor_lane(self, action) -> int | None:
        # called once per step in order, right after arrows(trace)
        if self._actors:
            return self._actors.pop()
        name = getattr(action, "name", "")
        params = getattr(action, "params", ()) or ()
        if name.startswith("Controller") and params:
            return params[0] - 1
        b = self._b(action)
        return None if b is None else self.nc + b - 1


TRACE_VIEW = ClusterView
