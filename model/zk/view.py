"""The trace view of the `zk` model: how a person reads a ZooKeeper-era
counterexample - the leader-and-ISR znode (and the controller, Election =
controller), each broker's role, log (offset:value e<leader epoch>), HW,
what is flushed and checkpointed, the fetches and elections between them,
and which acknowledged record got lost and at which step.

Brokers are named as the 0.8 replication design names them: broker-0, broker-1, ... (the
model's ids, model/zk/state.py). The model's fetch is one step
(HandleFetch(leader, follower) answers the follower's request; the response
is in flight in `fetch_response`), so the diagram draws the request and
its answer; ZooKeeper writes and reads (elections, ISR changes,
registrations) are arrows to and from lane 0. The engine's renderers
(checker/) find this view through the ModelDef's view (TRACE_VIEW) and know
nothing of zk.
"""
from __future__ import annotations

import html
from typing import Any

from model.view import ACKED_LEGEND, LOG_CSS, Arrow, Explanation, TraceView, promise_broke_at, render_scalar
from model.zk.state import NO_EPOCH, NO_LEADER, Role

# variables that are functions over the brokers (tuples indexed by broker id)
PER_BROKER = ("running", "role", "log", "hw", "flushed", "ckpt_hw", "leader_view",
              "fetch_response", "ctl_request", "broker_epoch", "shutting_down")
SHUTDOWN_PHASES = ("no", "asked the controller", "answered by the controller")
FIELD_NAMES = {"hw": "HW", "ckpt_hw": "checkpointed HW", "flushed": "flushed", "log": "log",
               "running": "running", "role": "role", "leader_view": "leader's view",
               "fetch_response": "fetch response in flight", "ctl_request": "LeaderAndIsr queue",
               "broker_epoch": "broker epoch", "shutting_down": "controlled shutdown",
               "isr": "ISR", "leader_epoch": "leader epoch", "zk_version": "znode version",
               "follower_leo": "followers' LEOs", "version": "version"}
LABELS = {"zk_live": "ZooKeeper live sessions", "ctl_live": "controller believes live",
          "ctl_stale": "controller missed the bounce of", "written": "written",
          "ctl_shutting_down": "controller handled the controlled shutdown of",
          "truncated": "ghost: some replica truncated",
          "clean_down": "ghost: down after a clean shutdown"}
CONTROLLER_ACTIONS = {"OnBrokerFailure", "OnBrokerStartup", "ControllerFailover",
                      "HandleControlledShutdown"}
DESCRIBE = {
    "Produce": "a producer writes {v} to leader {b}",
    "HandleFetch": "leader {b} answers {x}'s fetch request",
    "ReceiveFetchResponse": "follower {b} handles the fetch response",
    "ShrinkIsr": "leader {b} removes {x} from the ISR: not caught up within the lag time (writes the znode)",
    "BecomeFollower": "{b} reads the znode and follows its leader",
    "ReceiveLeaderAndIsr": "{b} acts on the controller's LeaderAndIsr request",
    "OnBrokerStartup": "the controller sees {b} registered and tells the replicas",
    "OnBrokerFailure": "the controller handles the loss of {b}'s session (ISR shrink, election)",
    "ControllerFailover": "a new controller takes over and reads ZooKeeper",
    "TruncateToLeaderEpochEnd": "{b} truncates to its leader's epoch end (OffsetsForLeaderEpoch)",
    "FlushLog": "{b} flushes its log to disk",
    "CheckpointHw": "{b} checkpoints its HW to disk",
    "PowerLoss": "{b} loses power: its log falls back to what was flushed, its session ends",
    "ProcessCrash": "{b}'s process crashes (the page cache survives), its session ends",
    "ControlledShutdown": "{b} shuts down cleanly (flushes, hands leadership over; with the controller "
                          "in steps: it asks the controller first)",
    "HandleControlledShutdown": "the controller handles {b}'s controlled shutdown (moves its leadership, "
                                "takes it out of the ISR, stops its follower) and answers",
    "RetryControlledShutdown": "{b} still leads: it asks the controller again",
    "FinishControlledShutdown": "{b} flushes, checkpoints its HW and stops; its session ends",
    "Restart": "{b} restarts from disk and registers in ZooKeeper",
    "ExpireSession": "ZooKeeper expires {b}'s session while it runs",
    "Reregister": "{b} registers again in ZooKeeper with a new session",
    "ElectLeader": "{b} wins the election: it writes itself into the znode as leader",
    "UncleanElectLeader": "{b}, outside the ISR, wins an unclean election",
    "ConsumerFetch": "the consumer fetches from {b}, which it believes leads",
    "ResetOffset": "the consumer asks {b} for the latest offset (auto.offset.reset = latest)",
}
KIND_COLORS = {"FetchRequest": "#0969da", "FetchResponse": "#1a7f37", "ZkWrite": "#8250df",
               "ZkRead": "#6639ba", "LeaderAndIsr": "#bc4c00", "ControlledShutdown": "#cf222e"}


def bname(b: int) -> str:
    return "none" if b == NO_LEADER else f"broker-{b}"


def fmt_set(s) -> str:
    return "{" + ", ".join(bname(b) for b in sorted(s)) + "}"


def fmt_record(o: int, r) -> str:
    return f"{o}:{r.value}" + ("" if r.epoch == NO_EPOCH else f" e{r.epoch}")


def fmt_log(log, start: int = 0) -> str:
    return "[" + ", ".join(fmt_record(start + i, r) for i, r in enumerate(log)) + "]"


def fmt_role(r) -> str:
    if r.role == Role.NONE:
        return "no role"
    if r.role == Role.LEADER:
        return f"leader e{r.leader_epoch}"
    what = "follower" if r.role == Role.FOLLOWER else "truncating follower"
    return f"{what} of {bname(r.leader)} e{r.leader_epoch}"


def fmt_znode(z) -> str:
    return f"leader {bname(z.leader)}, leader epoch {z.leader_epoch}, ISR {fmt_set(z.isr)}, version {z.version}"


def fmt_leader_view(v) -> str:
    if v is None:
        return "none"
    return f"ISR {fmt_set(v.isr)}, znode version {v.zk_version}, followers' LEOs {list(v.follower_leo)}"


def fmt_response(r) -> str:
    if r is None:
        return "none"
    return (f"FetchResponse(offset {r.offset}, records {fmt_log(r.records, r.offset)}, HW {r.hw}, "
            f"leader LEO {r.leader_leo})")


def _queue_diff(x: tuple, y: tuple) -> tuple[tuple, tuple]:
    """What left a broker's LeaderAndIsr queue (its head first) and what
    joined it, from x to y."""
    for k in range(len(x) + 1):
        rest = x[k:]
        if y[:len(rest)] == rest:
            return x[:k], y[len(rest):]
    return x, y


def fmt_request(r) -> str:
    if r is None:
        return "none"
    epoch = f", broker epoch {r.broker_epoch}" if r.broker_epoch else ""
    return (f"LeaderAndIsr(leader {bname(r.leader)}, leader epoch {r.leader_epoch}, ISR {fmt_set(r.isr)}, "
            f"version {r.version}{epoch})")


def fmt_reads(read) -> str:
    return "[" + ", ".join(f"{o}:{v}" for o, v in sorted(read)) + "]"


def fmt_consumer(c) -> str:
    if c is None:
        return "none"
    where = ("out of range, awaiting a reset" if c.position is None
             else f"position {c.position}")
    epochs = ", ".join(f"e{e}" for e in sorted(c.epochs))
    return (f"{where}, read {fmt_reads(c.read)}" + (f" from leader epochs {epochs}" if epochs else "")
            + (" (some from a stale leader)" if c.stale else ""))


def fmt(name: str, v: Any) -> str:
    """A per-broker value or a variable, readably."""
    if name == "log":
        return fmt_log(v)
    if name == "role":
        return fmt_role(v)
    if name == "running":
        return "running" if v else "down"
    if name == "leader_view":
        return fmt_leader_view(v)
    if name == "fetch_response":
        return fmt_response(v)
    if name == "ctl_request":
        return "[" + ", ".join(fmt_request(r) for r in v) + "]" if v else "none"
    if name == "zk_partition":
        return fmt_znode(v)
    if name == "shutting_down":
        return SHUTDOWN_PHASES[v]
    if name in ("zk_live", "ctl_live", "ctl_stale", "clean_down", "ctl_shutting_down"):
        return fmt_set(v)
    if name == "leader":
        return bname(v)
    if name == "isr":
        return fmt_set(v)
    if name == "follower_leo":
        return str(list(v))
    if name == "written":
        return "{" + ", ".join(sorted(v)) + "}"
    if name == "acked":
        return "[" + ", ".join(f"{a.value} (keepers {fmt_set(a.keepers)})" for a in v) + "]"
    if name == "consumer":
        return fmt_consumer(v)
    text = render_scalar(v)
    if text is not None:
        return text
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return ", ".join(f"{f} {fmt('', x)}" for f, x in zip(v._fields, v))
    return str(v)


def _diff(name: str, a: Any, b: Any) -> str:
    if name == "log" and b[:len(a)] == a:
        return "log + " + ", ".join(fmt_record(len(a) + i, r) for i, r in enumerate(b[len(a):]))
    if name in ("role", "running"):
        return f"{fmt(name, a)} -> {fmt(name, b)}"
    if name in ("log", "fetch_response", "ctl_request") or a is None or b is None:
        return f"{FIELD_NAMES.get(name, name)} {fmt(name, a)} -> {fmt(name, b)}"
    if isinstance(a, tuple) and hasattr(a, "_fields"):
        parts = [f"{FIELD_NAMES.get(f, f)} {fmt(f, x)} -> {fmt(f, y)}"
                 for f, x, y in zip(a._fields, a, b) if x != y]
        return (FIELD_NAMES.get(name, name) + ": " if name else "") + ", ".join(parts)
    return f"{FIELD_NAMES.get(name, name)} {fmt(name, a)} -> {fmt(name, b)}"


def _esc(s: Any) -> str:
    return html.escape(str(s))


class ZkView(TraceView):
    name = "zk"
    page_css = LOG_CSS
    legend = (ACKED_LEGEND,)
    abbreviations = (("LE", "leader epoch"), ("v", "the partition state znode's version"),
                      ("ISR", "in-sync replicas"), ("LEO", "log end offset"), ("HW", "high watermark"),
                      ("ckpt HW", "the high watermark in the checkpoint file"),
                      ("broker-N, offsets", "brokers are numbered from 0 and log offsets count "
                                            "from 0, as in Kafka (kraft's traces count both from 1, "
                                            "as its reference TLA+ does)"))
    kind_colors = KIND_COLORS

    def __init__(self, model: Any, order_key=None):
        super().__init__(model, order_key)
        n = int(getattr(model, "n", 0) or (getattr(model, "constants", {}) or {}).get("BrokerCount", 0))
        self.brokers = tuple(range(n))
        self.controller = bool(getattr(model, "controller", False))
        self.acks_all = bool(getattr(model, "acks_all", True))
        self.consumer = bool(getattr(model, "consumer", False))

    # ---- text ----------------------------------------------------------------------

    @staticmethod
    def _params(action) -> tuple:
        return tuple(getattr(action, "params", ()) or ())

    def step_title(self, action) -> str:
        name = getattr(action, "name", str(action))
        params = self._params(action)
        if name == "Produce" and len(params) == 2:
            return f"Produce({bname(params[0])}, {params[1]})"
        if params and all(isinstance(p, int) for p in params):
            return f"{name}({', '.join(bname(p) for p in params)})"
        return str(action)

    def describe(self, action, prev, state) -> str:
        name = getattr(action, "name", "")
        p = self._params(action)
        b = bname(p[0]) if p and isinstance(p[0], int) else ""
        x = bname(p[1]) if len(p) > 1 and isinstance(p[1], int) else ""
        v = p[1] if len(p) > 1 else ""
        text = DESCRIBE.get(name, "").format(b=b, x=x, v=v)
        if name == "Produce" and p:
            log = state.log[p[0]]
            if log and log[-1].epoch == NO_EPOCH:   # hw_truncation: the record carries no epoch
                text += f" (offset {len(log) - 1}; the message format records no leader epoch)"
            elif log:
                text += f" (offset {len(log) - 1}, leader epoch {log[-1].epoch})"
        elif name == "ShrinkIsr" and state.faults.stalls > prev.faults.stalls:
            text += f" - its last fetch had reached {b}'s LEO, then it stalled past replica.lag.time.max.ms"
        elif name in ("ElectLeader", "UncleanElectLeader", "OnBrokerFailure", "OnBrokerStartup",
                      "HandleControlledShutdown"):
            z, pz = state.zk_partition, prev.zk_partition
            if (z.leader, z.leader_epoch) != (pz.leader, pz.leader_epoch):
                text += f": leader {bname(z.leader)} in leader epoch {z.leader_epoch}, ISR {fmt_set(z.isr)}"
        return text

    def summary_lines(self, s) -> list[str]:
        lines = [f"ZooKeeper: znode {fmt_znode(s.zk_partition)}; live sessions {fmt_set(s.zk_live)}"]
        if self.controller:
            lines.append(f"controller: believes live {fmt_set(s.ctl_live)}"
                         + (f", missed bounces {fmt_set(s.ctl_stale)}" if s.ctl_stale else ""))
        for b in self.brokers:
            lines.append(f"{bname(b)}: {fmt('running', s.running[b])}, {fmt_role(s.role[b])}, log "
                         f"{fmt_log(s.log[b])}, LEO {len(s.log[b])}, HW {s.hw[b]}, flushed {s.flushed[b]}, "
                         f"checkpointed HW {s.ckpt_hw[b]}"
                         + (f"; leader's ISR {fmt_set(s.leader_view[b].isr)}" if s.leader_view[b] else ""))
        if self.acks_all:
            lines.append(f"producer: written {fmt('written', s.written)}, acknowledged {fmt('acked', s.acked)}")
        else:
            lines.append(f"producer (acks=1): written and acknowledged {fmt('written', s.written)}, "
                         f"committed {fmt('acked', s.acked)}")
        if s.consumer is not None:
            lines.append(f"consumer: {fmt_consumer(s.consumer)}")
        return lines

    def initial_lines(self, state, full: bool = True) -> list[str]:
        if not full:
            return self.summary_lines(state) + ["(every variable: kmc check --full-state, or the run's trace-*.txt)"]
        return self.summary_lines(state) + ["every variable:"] + [
            "  " + line for line in super().initial_lines(state, True)]

    def text(self, prop: str, trace: list, header: str = "", full_initial: bool = True, also=()) -> str:
        body = super().text(prop, trace, header, full_initial, also)
        fails = " and ".join([prop, *also])
        return (body + f"\nState after step {len(trace) - 1} (where {fails} fail{'' if also else 's'}), "
                "at a glance:\n" + "\n".join("  " + line for line in self.summary_lines(trace[-1][1])) + "\n")

    def step_lines(self, prev, state, action) -> list[str]:
        lines = []
        for a in self._step_arrows(prev, state, action, 1):
            if a.sent == a.end:  # sent and handled in this step
                lines.append(a.full)
            else:
                lines.append(f"{a.fate if a.end is not None else 'sent'}: {a.full}")
        for name, a, b in zip(self.names(state), prev, state):
            if a == b or name in ("fetch_response", "ctl_request"):
                continue
            if name in PER_BROKER:
                for br in self.brokers:
                    if a[br] != b[br]:
                        lines.append(f"{bname(br)}: {_diff(name, a[br], b[br])}")
            elif name == "acked":
                old = {x.value: x for x in a}
                for x in b:
                    if x.value not in old:
                        lines.append(f"acknowledged {x.value} (keepers {fmt_set(x.keepers)})")
                    elif old[x.value] != x:
                        lines.append(f"{x.value}'s keepers {fmt_set(old[x.value].keepers)} -> {fmt_set(x.keepers)}"
                                     + (" (outside the durability promise now)" if not x.keepers else ""))
            elif name == "zk_partition":
                lines.append("ZooKeeper znode: " + _diff("", a, b))
            elif name == "faults":
                lines.append(_diff("faults and ghosts", a, b))
            elif name == "consumer":
                lines.append(self._consumer_line(a, b))
            else:
                lines.append(f"{LABELS.get(name, name)}: {fmt(name, a)} -> {fmt(name, b)}")
        return lines

    # ---- ITF -------------------------------------------------------------------------

    @staticmethod
    def _consumer_line(a, b) -> str:
        new = b.read - a.read
        if new:
            text = f"consumer reads {fmt_reads(new)}"
            if b.stale and not a.stale:
                text += " from a stale leader"
            return text + f", position {a.position} -> {b.position}"
        if b.position is None:
            return f"consumer: position {a.position} is beyond the broker's log end (OFFSET_OUT_OF_RANGE)"
        return f"consumer: position reset to {b.position}"

    def itf_variable(self, name: str, value: Any) -> Any:
        if name in PER_BROKER:
            return self.fn_over(value, self.brokers)
        return self.to_itf(value)

    # ---- sequence diagram ------------------------------------------------------------

    def lanes(self) -> list[str]:
        # lane 0: ZooKeeper (znode writes and reads, registrations), with the controller
        # when Election = controller (its LeaderAndIsr requests start there)
        return ["ZK / ctl" if self.controller else "ZooKeeper"] + [bname(b) for b in self.brokers]

    def actor_lane(self, action) -> int | None:
        name = getattr(action, "name", "")
        if name in CONTROLLER_ACTIONS:
            return 0
        p = self._params(action)
        return p[0] + 1 if p and isinstance(p[0], int) else None

    def _step_arrows(self, prev, state, action, i: int) -> list[Arrow]:
        """The arrows a step sends and receives at once (requests answered in
        the same step, ZooKeeper writes and reads), and the in-flight
        messages it consumes (end set) or sends (end None)."""
        name = getattr(action, "name", "")
        p = self._params(action)
        out: list[Arrow] = []
        if name == "HandleFetch":
            lead, f = p
            r = state.fetch_response[f]
            off = r.offset if r is not None else len(prev.log[f])
            out.append(Arrow(f + 1, lead + 1, i, i, "received", f"Fetch @{off}",
                             f"FetchRequest {bname(f)} -> {bname(lead)} (fetch offset {off}), answered at once",
                             "FetchRequest"))
        z, pz = state.zk_partition, prev.zk_partition
        if z != pz and name not in CONTROLLER_ACTIONS and p and isinstance(p[0], int) and name != "PowerLoss" \
                and name != "ProcessCrash" and name != "ExpireSession":
            b = p[0]
            short = f"e{z.leader_epoch} {bname(z.leader)}" if z.leader != pz.leader else f"ISR {fmt_set(z.isr)}"
            out.append(Arrow(b + 1, 0, i, i, "received", short,
                             f"{bname(b)} writes the znode: {fmt_znode(z)}", "ZkWrite"))
        if name == "BecomeFollower" and p:
            out.append(Arrow(0, p[0] + 1, i, i, "received", f"e{z.leader_epoch} {bname(z.leader)}",
                             f"{bname(p[0])} reads the znode: {fmt_znode(z)}", "ZkRead"))
        if name in ("Restart", "Reregister") and p and state.zk_live != prev.zk_live:
            out.append(Arrow(p[0] + 1, 0, i, i, "received", "register",
                             f"{bname(p[0])} registers in /brokers/ids (a new session)", "ZkWrite"))
        for b in self.brokers:  # ControlledShutdownRequest: broker -> controller, until answered
            x, y = prev.shutting_down[b], state.shutting_down[b]
            if x != 1 and y == 1:
                out.append(Arrow(b + 1, 0, i, None, "in flight", "ControlledShutdown",
                                 f"ControlledShutdownRequest {bname(b)} -> controller", "ControlledShutdown"))
            elif x == 1 and y != 1:
                fate = "received" if name == "HandleControlledShutdown" else "dropped"
                out.append(Arrow(b + 1, 0, -1, i, fate, "", f"ControlledShutdownRequest {bname(b)} -> controller",
                                 "ControlledShutdown"))
        for b in self.brokers:
            x, y = prev.fetch_response[b], state.fetch_response[b]
            if x != y:
                if x is not None:
                    fate = "received" if name == "ReceiveFetchResponse" and p == (b,) else "dropped"
                    out.append(Arrow(-1, b + 1, -1, i, fate, "", fmt_response(x) + f" to {bname(b)}", "FetchResponse"))
                if y is not None:
                    src = p[0] if name == "HandleFetch" else max(state.role[b].leader, 0)
                    out.append(Arrow(src + 1, b + 1, i, None, "in flight",
                                     f"{len(y.records)} rec, HW {y.hw}",
                                     f"{fmt_response(y)} {bname(src)} -> {bname(b)}", "FetchResponse"))
            x, y = prev.ctl_request[b], state.ctl_request[b]
            if x != y:
                gone, new = _queue_diff(x, y)
                for r in gone:
                    fate = "received" if name == "ReceiveLeaderAndIsr" and p == (b,) else "dropped"
                    out.append(Arrow(0, b + 1, -1, i, fate, "", fmt_request(r) + f" to {bname(b)}", "LeaderAndIsr"))
                for r in new:
                    behind = f" (queued behind {len(y) - 1})" if len(y) > 1 else ""
                    out.append(Arrow(0, b + 1, i, None, "in flight", f"LeaderAndIsr e{r.leader_epoch}",
                                     f"{fmt_request(r)} controller -> {bname(b)}{behind}", "LeaderAndIsr"))
        return out

    def arrows(self, trace: list) -> list[Arrow]:
        arrows: list[Arrow] = []
        open_: dict[tuple[str, int], list[Arrow]] = {}
        s0 = trace[0][1]
        for b in self.brokers:  # in flight initially
            if s0.fetch_response[b] is not None:
                src = max(s0.role[b].leader, 0)
                a = Arrow(src + 1, b + 1, 0, None, "in flight", "Fetch resp",
                          fmt_response(s0.fetch_response[b]), "FetchResponse")
                arrows.append(a)
                open_[("FetchResponse", b + 1)] = [a]
            for r in s0.ctl_request[b]:
                a = Arrow(0, b + 1, 0, None, "in flight", "LeaderAndIsr", fmt_request(r), "LeaderAndIsr")
                arrows.append(a)
                open_.setdefault(("LeaderAndIsr", b + 1), []).append(a)
        for i in range(1, len(trace)):
            action, state = trace[i]
            for a in self._step_arrows(trace[i - 1][1], state, action, i):
                if a.sent == -1:  # an in-flight message leaves the network (the oldest first)
                    waiting = open_.get((a.kind, a.dst))
                    if waiting:
                        m = waiting.pop(0)
                        m.end, m.fate = i, a.fate
                    continue
                arrows.append(a)
                if a.end is None:
                    open_.setdefault((a.kind, a.dst), []).append(a)
        return arrows

    # ---- the per-step table ----------------------------------------------------------

    def columns(self) -> list[str]:
        return ["controller / ZooKeeper" if self.controller else "ZooKeeper"] + [
            bname(b) for b in self.brokers] + ["producer"] + (["consumer"] if self.consumer else [])

    def _zk_cell(self, prev, s) -> tuple[str, bool]:
        z = s.zk_partition
        pz = prev.zk_partition if prev is not None else z
        ch = prev is not None
        items = [self._item("leader", f"<b>{_esc(bname(z.leader))}</b>", ch and pz.leader != z.leader),
                 self._item("LE", _esc(z.leader_epoch), ch and pz.leader_epoch != z.leader_epoch),
                 self._item("v", _esc(z.version), ch and pz.version != z.version), "<br>",
                 self._item("ISR", _esc(fmt_set(z.isr)), ch and pz.isr != z.isr), "<br>",
                 self._item("live", _esc(fmt_set(s.zk_live)), ch and prev.zk_live != s.zk_live)]
        if self.controller:
            items += ["<br>", self._item("ctl sees", _esc(fmt_set(s.ctl_live)), ch and prev.ctl_live != s.ctl_live)]
            if s.ctl_stale:
                items.append(self._item("missed", _esc(fmt_set(s.ctl_stale)), ch and prev.ctl_stale != s.ctl_stale))
        changed = ch and (pz != z or prev.zk_live != s.zk_live or prev.ctl_live != s.ctl_live
                          or prev.ctl_stale != s.ctl_stale)
        return " ".join(items), changed

    def _log_html(self, log, acked, old) -> str:
        if not log:
            return '<span class="log">[]</span>'
        out = []
        for o, r in enumerate(log):
            cls = "rec" + (" acked" if r.value in acked else "") + (
                " new" if old is not None and (o >= len(old) or old[o] != r) else "")
            out.append(f'<span class="{cls}">{_esc(fmt_record(o, r))}</span>')
        return '<span class="log">[' + ", ".join(out) + "]</span>"

    def _broker_cell(self, prev, s, b) -> tuple[str, bool]:
        ch = prev is not None
        acked = {a.value for a in s.acked}

        def was(name):
            return getattr(prev, name)[b] if ch else getattr(s, name)[b]

        def changed(name):
            return ch and getattr(prev, name)[b] != getattr(s, name)[b]

        items = [self._item("", "<b>" + _esc(fmt_role(s.role[b])) + "</b>", changed("role")),
                 self._item("", "up" if s.running[b] else "<b>DOWN</b>", changed("running"),
                            "" if s.running[b] else "bad"),
                 "<br>",
                 self._item("log", self._log_html(s.log[b], acked, was("log") if ch else None), changed("log")),
                 "<br>",
                 self._item("LEO", _esc(len(s.log[b])), changed("log")),
                 self._item("HW", _esc(s.hw[b]), changed("hw")),
                 self._item("flushed", _esc(s.flushed[b]), changed("flushed")),
                 self._item("ckpt HW", _esc(s.ckpt_hw[b]), changed("ckpt_hw"))]
        lv = s.leader_view[b]
        if lv is not None:
            old = was("leader_view")
            items += ["<br>", self._item("ISR", _esc(fmt_set(lv.isr)), ch and (old is None or old.isr != lv.isr))]
        changed_any = ch and any(changed(n) for n in PER_BROKER)
        return " ".join(items), changed_any

    def _producer_cell(self, prev, s) -> tuple[str, bool]:
        ch = prev is not None
        items = [self._item("written", _esc(fmt("written", s.written)), ch and prev.written != s.written),
                 "<br>",
                 self._item("acked", _esc(", ".join(f"{a.value} by {fmt_set(a.keepers)}" for a in s.acked) or "-"),
                            ch and prev.acked != s.acked)]
        return " ".join(items), ch and (prev.written != s.written or prev.acked != s.acked)

    def cells(self, prev, state) -> list[tuple[str, bool]]:
        cells = ([self._zk_cell(prev, state)] + [self._broker_cell(prev, state, b) for b in self.brokers]
                 + [self._producer_cell(prev, state)])
        if self.consumer and state.consumer is not None:
            changed = prev is not None and prev.consumer != state.consumer
            cells.append((self._item("consumer", _esc(fmt_consumer(state.consumer)), changed), changed))
        return cells

    # ---- what broke ------------------------------------------------------------------

    @staticmethod
    def _offset_of(trace, value) -> str:
        for _, s in reversed(trace):
            for log in s.log:
                for o, r in enumerate(log):
                    if r.value == value:
                        return f"offset {o}" + ("" if r.epoch == NO_EPOCH else f", leader epoch {r.epoch}")
        return "offset unknown"

    def _broke_at(self, trace: list, lead: int, values: list) -> tuple[int | None, str]:
        """The election that made `lead` leader in its final epoch without
        acknowledged `values`, or the step that took them."""
        epoch = trace[-1][1].zk_partition.leader_epoch
        return promise_broke_at(
            trace, self.step_title,
            lambda s: s.zk_partition.leader == lead and s.zk_partition.leader_epoch == epoch,
            lambda s, v: any(r.value == v for r in s.log[lead]),
            values, bname(lead), epoch, "acknowledged")

    def _explain_clients(self, prop: str, trace: list) -> Explanation | None:
        """The headline of a client property's counterexample: what the
        consumer read (and where it read it), or which acks=1 record is gone."""
        s = trace[-1][1]
        at = len(trace) - 1
        how = f"step {at}, {self.step_title(trace[at][0])}"
        consumer_col = {len(self.brokers) + 2}
        if prop == "NoAcksOneRecordLost":
            held = {r.value for log in s.log for r in log}
            lost = sorted(s.written - held)
            text = ("Acknowledged (acks=1) record" + ("s " if len(lost) > 1 else " ") + ", ".join(lost)
                    + " in no replica's log (" + "; ".join(f"{bname(b)} {fmt_log(s.log[b])}"
                                                          for b in self.brokers)
                    + f"). Kafka promises nothing for an acks=1 acknowledgement; it went at {how}.")
            return Explanation(text, {b + 1 for b in self.brokers}, at, how)
        c = s.consumer
        if c is None:
            return None
        if prop == "MonotonicReads":
            seen: dict = {}
            for o, v in sorted(c.read):
                seen.setdefault(o, []).append(v)
            o, vs = next((o, vs) for o, vs in seen.items() if len(vs) > 1)
            text = (f"The consumer read different records at offset {o}: {', '.join(vs)} "
                    f"(it has read {fmt_reads(c.read)}). The second read came at {how}.")
            return Explanation(text, consumer_col, at, how)
        lead = s.zk_partition.leader
        text = (f"The consumer read {fmt_reads(c.read)}, and the leader {bname(lead)} (leader epoch "
                f"{s.zk_partition.leader_epoch}) holds {fmt_log(s.log[lead]) if s.log[lead] else 'nothing'}: "
                f"a committed record the consumer read is gone (at {how}).")
        return Explanation(text, consumer_col | {lead + 1}, at, how)

    def explain(self, prop: str, trace: list) -> Explanation | None:
        s = trace[-1][1]
        protected = [a for a in s.acked if a.keepers]
        in_log = lambda b, v: any(r.value == v for r in s.log[b])  # noqa: E731
        if prop == "LeaderCompleteness" and s.zk_partition.leader != NO_LEADER:
            lead = s.zk_partition.leader
            missing = [a for a in protected if not in_log(lead, a.value)]
            if missing:
                values = [a.value for a in missing]
                at, how = self._broke_at(trace, lead, values)
                held = lambda a: [b for b in self.brokers if in_log(b, a.value)]  # noqa: E731
                text = (f"Acknowledged data lost: the leader {bname(lead)} (leader epoch "
                        f"{s.zk_partition.leader_epoch}) lacks the acknowledged record"
                        + ("s " if len(missing) > 1 else " ")
                        + ", ".join(f"{a.value} ({self._offset_of(trace, a.value)}"
                                    + (f", still on {', '.join(map(bname, held(a)))}" if held(a) else "") + ")"
                                    for a in missing)
                        + f". Its log: {fmt_log(s.log[lead]) if s.log[lead] else 'empty'}."
                        + (f" The promise broke at {how}." if how else ""))
                return Explanation(text, {lead + 1}, at, how)
        if prop == "NoAckedRecordLost":
            replicas = tuple(getattr(self.model, "replicas", self.brokers))
            missing = [a.value for a in protected if not any(in_log(b, a.value) for b in replicas)]
            if missing:
                at = None
                for i in range(len(trace) - 1, 0, -1):
                    before = trace[i - 1][1]
                    if any(any(r.value == v for b in replicas for r in before.log[b]) for v in missing):
                        at = i
                        break
                how = f"step {at}, {self.step_title(trace[at][0])}, took the last copy" if at else ""
                text = ("Acknowledged data lost: the record" + ("s " if len(missing) > 1 else " ")
                        + ", ".join(f"{v} ({self._offset_of(trace, v)})" for v in missing)
                        + " is in no replica's log ("
                        + "; ".join(f"{bname(b)} {fmt_log(s.log[b])}" for b in replicas) + ")."
                        + (f" The promise broke at {how}." if how else ""))
                return Explanation(text, {b + 1 for b in replicas}, at, how)
        if prop in ("MonotonicReads", "ConsumedRecordKept", "NoAcksOneRecordLost"):
            return self._explain_clients(prop, trace)
        if prop == "LogMatching" and s.zk_partition.leader != NO_LEADER:
            lead = s.zk_partition.leader
            for b in self.brokers:
                below = min(s.hw[lead], s.hw[b], len(s.log[lead]), len(s.log[b]))
                for o in range(below):
                    if b != lead and s.log[b][o] != s.log[lead][o]:
                        return Explanation(
                            f"Logs diverge below the HW at offset {o}: leader {bname(lead)} has "
                            f"{fmt_record(o, s.log[lead][o])}, {bname(b)} has {fmt_record(o, s.log[b][o])}.",
                            {lead + 1, b + 1})
        return super().explain(prop, trace)


TRACE_VIEW = ZkView
