"""TLC's value notation -> the `kraft` model's state, and a level-by-level differ.

TLC prints a state's variables in TLA+ value notation (tests/conformance/data/
graphs/*.json, see PROVENANCE.md):

    <<a, b>>            a sequence, or a function whose domain is 1..n
    (2 :> x @@ 3 :> y)  a function with another domain
    [k |-> v, ...]      a record
    {a, b}              a set
    Nil, Leader, A      model values (the reference's Values are model values)
    "s"                 a string;  12, -1 integers;  TRUE / FALSE booleans

`parse_value` turns that text into plain Python (tuple, Fn, Rec, frozenset, MV,
int, bool, str); `to_state` maps the 23 variables onto model/kraft/state.py and
model/kraft/messages.py, strictly: a record field the NamedTuple has no place
for raises TLAValueError, so a layout drift shows up here and not as a silent
mismatch.

`diff_levels(model, graph)` explores the model breadth-first (no engine
involved) and compares it with TLC's graph level by level: states first, then
the (from, to, action label) transitions. It returns None when everything
matches, else a LevelDiff whose text names the first level that differs, the
states only one side has, the closest state of the other side with a field by
field diff, and how each side reached the odd state.
"""
from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

from model.kraft.messages import (
    CONTROLLER,
    MESSAGE_CLASSES,
    AlterPartitionRequest,
    AlterPartitionResponse,
    EpochOffset,
    FetchRequest,
    FetchRequestPartition,
    FetchResponse,
    FetchResponsePartition,
    RegisterBrokerRequest,
    RegisterBrokerResponse,
)
from model.kraft.state import (
    NO_LEADER,
    BrokerFetcher,
    BrokerReg,
    BrokerState,
    BrokerStatus,
    ControllerPartitionMetadata,
    ErrorCode,
    Kip966Ctrs,
    KraftState,
    MsgType,
    PartitionChangeRecord,
    PartitionData,
    PartitionFetchState,
    PartitionRecord,
    PeerReplicaState,
    PendingAlterPartition,
    RecordType,
    RegStatus,
    ReplicaPartitionMetadata,
    Role,
    V35Ctrs,
)

DATA = Path(__file__).parent / "data"


class TLAValueError(ValueError):
    """Text that is not TLC value notation, or a value that does not fit the state layout."""


# ---- generic TLA+ values ---------------------------------------------------

class MV(str):
    """A model value (Nil, Leader, FENCED, A, ...): a str subclass so it prints bare."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


class _FrozenMap(Mapping):
    """An immutable, hashable mapping: the base of records and functions."""

    __slots__ = ("_d", "_h")

    def __init__(self, items: Iterable[tuple[Any, Any]]):
        self._d = dict(items)
        self._h = None

    def __getitem__(self, k):
        return self._d[k]

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __hash__(self):
        if self._h is None:
            self._h = hash((type(self).__name__, frozenset(self._d.items())))
        return self._h

    def __eq__(self, other):
        return type(self) is type(other) and self._d == other._d


class Rec(_FrozenMap):
    """A record [k |-> v, ...] (field order as printed, equality ignores it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[" + ", ".join(f"{k} |-> {v!r}" for k, v in self._d.items()) + "]"


class Fn(_FrozenMap):
    """A function printed as (k1 :> v1 @@ k2 :> v2): a domain other than 1..n."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "(" + " @@ ".join(f"{k!r} :> {v!r}" for k, v in self._d.items()) + ")"


_TOKEN = re.compile(r"""
    \s*(?:
      (?P<num>-?\d+)
    | (?P<str>"(?:[^"\\]|\\.)*")
    | (?P<id>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<op><<|>>|\|->|:>|@@|[\[\]{}(),])
    )""", re.VERBOSE)


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens = []
    pos, end = 0, len(text)
    while pos < end:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise TLAValueError(f"unexpected text at {pos}: {text[pos:pos + 30]!r}")
        kind = m.lastgroup
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, op: str | None = None):
        tok = self.peek()
        if tok[0] is None:
            raise TLAValueError(f"unexpected end of {self.text[:60]!r}")
        if op is not None and tok[1] != op:
            raise TLAValueError(f"expected {op!r}, found {tok[1]!r} in {self.text[:60]!r}")
        self.i += 1
        return tok

    def value(self):
        kind, tok = self.take()
        if kind == "num":
            return int(tok)
        if kind == "str":
            return json.loads(tok)  # TLC escapes like JSON for the plain cases
        if kind == "id":
            if tok == "TRUE":
                return True
            if tok == "FALSE":
                return False
            return MV(tok)
        if tok == "<<":
            return tuple(self._items(">>"))
        if tok == "{":
            return frozenset(self._items("}"))
        if tok == "[":
            pairs = []
            if self.peek()[1] != "]":
                while True:
                    k = self.take()
                    if k[0] != "id":
                        raise TLAValueError(f"record field name expected, found {k[1]!r}")
                    self.take("|->")
                    pairs.append((k[1], self.value()))
                    if self.take()[1] == "]":
                        break
            else:
                self.take("]")
            return Rec(pairs)
        if tok == "(":
            pairs = []
            while True:
                k = self.value()
                self.take(":>")
                pairs.append((k, self.value()))
                sep = self.take()[1]
                if sep == ")":
                    break
                if sep != "@@":
                    raise TLAValueError(f"expected '@@' or ')', found {sep!r}")
            return Fn(pairs)
        raise TLAValueError(f"unexpected {tok!r} in {self.text[:60]!r}")

    def _items(self, close: str) -> list:
        out = []
        if self.peek()[1] == close:
            self.take()
            return out
        while True:
            out.append(self.value())
            sep = self.take()[1]
            if sep == close:
                return out
            if sep != ",":
                raise TLAValueError(f"expected ',' or {close!r}, found {sep!r}")


def parse_value(text: str):
    """One TLA+ value in TLC's notation -> plain Python (see the module doc)."""
    p = _Parser(text)
    v = p.value()
    if p.i != len(p.toks):
        raise TLAValueError(f"trailing text after a value: {text[:60]!r}")
    return v


# ---- TLA+ values -> the kraft state ---------------------------------------

def _mv(v, what: str) -> str:
    if not isinstance(v, MV):
        raise TLAValueError(f"{what}: model value expected, got {v!r}")
    return str(v)


def _int(v) -> int:
    if type(v) is not int:
        raise TLAValueError(f"integer expected, got {v!r}")
    return v


def _bool(v) -> bool:
    if type(v) is not bool:
        raise TLAValueError(f"boolean expected, got {v!r}")
    return v


def _set(v) -> frozenset:
    if not isinstance(v, frozenset):
        raise TLAValueError(f"set expected, got {v!r}")
    return v


def _int_set(v) -> frozenset:
    return frozenset(_int(x) for x in _set(v))


def _seq(v) -> tuple:
    if not isinstance(v, tuple):
        raise TLAValueError(f"sequence expected, got {v!r}")
    return v


def _opt(conv):
    """Nil -> None, anything else through conv."""
    return lambda v: None if v == "Nil" and isinstance(v, MV) else conv(v)


def _enum(enum):
    def conv(v):
        name = _mv(v, enum.__name__)
        try:
            return enum[name]
        except KeyError:
            raise TLAValueError(f"{name} is not a {enum.__name__}") from None
    return conv


def _broker_or_no_leader(v) -> int:
    if isinstance(v, MV):
        if v == "NoLeader":
            return NO_LEADER
        raise TLAValueError(f"a broker or NoLeader expected, got {v}")
    return _int(v)


def _endpoint(v) -> int:  # a message's dest / source
    if isinstance(v, MV):
        if v == "Controller":
            return CONTROLLER
        raise TLAValueError(f"a broker or Controller expected, got {v}")
    return _int(v)


def _value(v) -> str:  # a producer value: model value A or string "A"
    if isinstance(v, str):
        return str(v)
    raise TLAValueError(f"a value of Values expected, got {v!r}")



def _record(cls, v, conv: dict, defaults: dict | None = None, drop: Iterable[str] = ()):
    """A TLA+ record -> NamedTuple `cls`: every field converted, none left over."""
    if not isinstance(v, Rec):
        raise TLAValueError(f"{cls.__name__}: record expected, got {v!r}")
    defaults = defaults or {}
    extra = set(v) - set(cls._fields) - set(drop)
    if extra:
        raise TLAValueError(f"{cls.__name__} has no field(s) {sorted(extra)}: {v!r}")
    args = []
    for f in cls._fields:
        if f in v:
            args.append(conv.get(f, _int)(v[f]))
        elif f in defaults:
            args.append(defaults[f])
        else:
            raise TLAValueError(f"{cls.__name__}: field {f} missing in {v!r}")
    return cls(*args)


def _partition_record(v) -> PartitionRecord:
    return _record(PartitionRecord, v, {"value": _value})


def _log(v) -> tuple:
    return tuple(_partition_record(r) for r in _seq(v))


def _change_record(v) -> PartitionChangeRecord:
    # v3_5 records have no elr / last_known_elr (empty in our layout); Init's
    # record has no adding / removing (None in our layout).
    return _record(PartitionChangeRecord, v, {
        "type": _enum(RecordType), "isr": _int_set, "elr": _int_set,
        "leader": _broker_or_no_leader, "replicas": _int_set,
        "last_known_elr": _int_set, "adding": _int_set, "removing": _int_set,
    }, defaults={"elr": frozenset(), "last_known_elr": frozenset(),
                 "adding": None, "removing": None, "min_isr": None})  # min_isr: kmc's own


def _isr_and_epochs(v) -> tuple:
    if isinstance(v, tuple):  # domain 1..n prints as a sequence
        return tuple((i + 1, _int(e)) for i, e in enumerate(v))
    if isinstance(v, Fn):
        return tuple(sorted((_int(k), _int(e)) for k, e in v.items()))
    raise TLAValueError(f"isr_and_epochs: function expected, got {v!r}")


_MSG_COMMON = {"type": _enum(MsgType), "dest": _endpoint, "source": _endpoint}


def _fetch_response_partition(v) -> FetchResponsePartition:
    p = _record(FetchResponsePartition, v, {
        "error": _opt(_enum(ErrorCode)),
        "diverging_epoch": _opt(lambda d: _record(EpochOffset, d, {})),
        "records": _log,
    }, drop=("type",))
    # messages.py drops the OK case's extra `type |-> FetchResponse`: check it
    # is present exactly when error and diverging_epoch are both Nil.
    ok_case = p.error is None and p.diverging_epoch is None
    if ("type" in v) != ok_case:
        raise TLAValueError(f"FetchResponse partition with unexpected shape: {v!r}")
    return p


_MSG_FIELDS = {
    RegisterBrokerRequest: {},
    RegisterBrokerResponse: {},
    AlterPartitionRequest: {"isr": _int_set, "isr_and_epochs": _isr_and_epochs,
                            "leader": _broker_or_no_leader},
    AlterPartitionResponse: {"error": _opt(_enum(ErrorCode)), "replicas": _int_set,
                             "isr": _int_set, "leader": _broker_or_no_leader,
                             "request": lambda r: message(r)},
    FetchRequest: {"partition": lambda p: _record(FetchRequestPartition, p, {})},
    FetchResponse: {"partition": _fetch_response_partition},
}

# fields a message record may lack in the reference: None in our layout
_MSG_OPTIONAL = {
    RegisterBrokerRequest: {"broker_epoch": None},  # absent in v3_5
    AlterPartitionResponse: {"replicas": None, "isr": None, "leader": None,
                             "leader_epoch": None, "partition_epoch": None},  # rejections
}


def message(v):
    """A message record -> its NamedTuple of model/kraft/messages.py."""
    if not isinstance(v, Rec) or "type" not in v:
        raise TLAValueError(f"message record expected, got {v!r}")
    cls = MESSAGE_CLASSES[_enum(MsgType)(v["type"])]
    conv = dict(_MSG_COMMON)
    conv.update(_MSG_FIELDS[cls])
    return _record(cls, v, conv, defaults=_MSG_OPTIONAL.get(cls))


def _per_broker(conv):
    return lambda v: tuple(conv(x) for x in _seq(v))


_VAR_CONV = {
    "con_unfenced": _int_set,
    "con_broker_reg": _per_broker(lambda r: _record(BrokerReg, r, {"status": _enum(RegStatus)})),
    "con_partition_metadata": lambda r: _record(ControllerPartitionMetadata, r, {
        "replicas": _int_set, "isr": _int_set, "elr": _int_set, "last_known_elr": _int_set,
        "leader": _broker_or_no_leader, "adding": _int_set, "removing": _int_set,
    }, defaults={"elr": frozenset(), "last_known_elr": frozenset(),  # v3_5: absent
                 "min_isr": None}),  # kmc's own (MinIsrChanges), never in the reference
    "con_metadata_log": lambda v: tuple(_change_record(r) for r in _seq(v)),
    "broker_state": _per_broker(lambda r: _record(BrokerState, r, {
        "status": _enum(BrokerStatus), "registered": _bool})),
    "broker_fetchers": _per_broker(_per_broker(lambda r: _record(BrokerFetcher, r, {
        "partition": _opt(lambda p: _record(PartitionFetchState, p, {"delayed": _bool})),
        "pending_response": _bool}))),
    "broker_metadata_log": _per_broker(lambda v: tuple(_change_record(r) for r in _seq(v))),
    "partition_status": _per_broker(_opt(_enum(Role))),
    "partition_metadata": _per_broker(lambda r: _record(ReplicaPartitionMetadata, r, {
        "replicas": _int_set, "isr": _int_set, "maximal_isr": _int_set,
        "leader": _broker_or_no_leader})),
    "partition_data": _per_broker(lambda r: _record(PartitionData, r, {"log": _log})),
    "partition_leso": _per_broker(_opt(_int)),
    "partition_replica_state": _per_broker(_per_broker(
        lambda r: _record(PeerReplicaState, r, {"leo": _opt(_int)}))),
    "partition_pending_ap": _per_broker(lambda r: _record(PendingAlterPartition, r, {
        "request": _opt(message)})),
    "messages": lambda v: frozenset(message(m) for m in _set(v)),
    "messages_discard": lambda v: frozenset(message(m) for m in _set(v)),
    "inv_sent": lambda v: frozenset(_value(x) for x in _set(v)),
    "inv_pos_acked": lambda v: frozenset(_value(x) for x in _set(v)),
    "inv_neg_acked": lambda v: frozenset(_value(x) for x in _set(v)),
    "inv_true_hwm": _int,
    "inv_consumed": _log,
    "aux_broker_epoch": _int,
    "aux_ctrs": lambda r: _record(
        Kip966Ctrs if "data_loss_shutdown_ctr" in r else V35Ctrs, r, {},
        defaults={"min_isr_change_ctr": None}),  # kmc's own (MinIsrChanges)
    "aux_flo": _per_broker(_int),
}


def convert_var(name: str, value):
    """One variable's parsed TLA+ value -> our encoding of it."""
    try:
        return _VAR_CONV[name](value)
    except TLAValueError as e:
        raise TLAValueError(f"{name}: {e}") from None


def to_state(tlc_vars: Mapping[str, str]) -> KraftState:
    """A TLC state ({variable: value text}) -> KraftState."""
    missing = set(KraftState._fields) - set(tlc_vars)
    extra = set(tlc_vars) - set(KraftState._fields)
    if missing or extra:
        raise TLAValueError(f"variables missing {sorted(missing)}, unknown {sorted(extra)}")
    return KraftState(*(convert_var(n, parse_value(tlc_vars[n])) for n in KraftState._fields))


# ---- TLC's state graphs ----------------------------------------------------

@dataclass
class Graph:
    """A TLC state graph: states (ids follow BFS order), levels, transitions."""

    name: str
    states: list            # id -> KraftState
    level: list             # id -> BFS level (0 = initial)
    transitions: list       # (from id, to id, label)
    ids: dict = field(default_factory=dict)  # KraftState -> id

    def levels(self) -> list[set]:
        out: list[set] = [set() for _ in range(max(self.level) + 1)]
        for s, lv in zip(self.states, self.level):
            out[lv].add(s)
        return out

    def labelled_transitions(self) -> Counter:
        """Counter of (from state, to state, label): a multiset, as TLC generates."""
        return Counter((self.states[a], self.states[b], lab) for a, b, lab in self.transitions)


def load_graph(path: str | Path) -> Graph:
    """Read a graph JSON (optionally .gz) copied under tests/conformance/data/graphs."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        raw = json.load(f)
    n = len(raw["states"])
    states: list = [None] * n
    level = [0] * n
    for s in raw["states"]:
        i = s["id"]
        try:
            states[i] = to_state(s["vars"])
        except TLAValueError as e:
            raise TLAValueError(f"{path.name} state {i}: {e}") from None
        level[i] = s["level"]
    ids = {}
    for i, s in enumerate(states):
        if s in ids:
            raise TLAValueError(f"{path.name}: states {ids[s]} and {i} convert to the same state")
        ids[s] = i
    transitions = [(t["from"], t["to"], t["action"]) for t in raw["transitions"]]
    name = path.name.split(".")[0]
    return Graph(name, states, level, transitions, ids)


def graph_path(name: str) -> Path:
    for p in (DATA / "graphs" / f"{name}.json", DATA / "graphs" / f"{name}.json.gz"):
        if p.exists():
            return p
    raise FileNotFoundError(f"no graph {name} under {DATA / 'graphs'}")


def tlc_label(action) -> str:
    """Our Action -> TLC's label: every reference action of Next takes one
    broker b (`Name(b)`), except PerformPartitionReassignment (no parameter).
    The model's Action may carry more parameters (the message, the peer, ...):
    its first parameter is the b of the reference's `\\E b \\in Brokers`."""
    if not action.params:
        return action.name
    return f"{action.name}({action.params[0]})"


# ---- diffs -----------------------------------------------------------------

def _fmt(v) -> str:
    if isinstance(v, frozenset):
        try:
            items = sorted(v)
        except TypeError:
            items = sorted(v, key=repr)
        return "{" + ", ".join(_fmt(x) for x in items) + "}"
    if hasattr(v, "_fields"):
        return f"{type(v).__name__}(" + ", ".join(
            f"{k}={_fmt(x)}" for k, x in zip(v._fields, v)) + ")"
    if isinstance(v, tuple):
        return "<<" + ", ".join(_fmt(x) for x in v) + ">>"
    if hasattr(v, "name") and isinstance(v, int) and not isinstance(v, bool):
        return v.name  # IntEnum
    return repr(v)


def value_diff(a, b, path: str = "") -> list[str]:
    """Field-by-field differences of two values of our encoding, as lines
    `path: ours -> theirs` (sequences / per-broker functions indexed from 1)."""
    if a == b and type(a) is type(b):
        return []
    if hasattr(a, "_fields") and type(a) is type(b):
        out = []
        for k, x, y in zip(a._fields, a, b):
            out += value_diff(x, y, f"{path}.{k}" if path else k)
        return out
    if (isinstance(a, tuple) and isinstance(b, tuple) and not hasattr(a, "_fields")
            and not hasattr(b, "_fields")):
        out = []
        for i in range(max(len(a), len(b))):
            if i >= len(a):
                out.append(f"{path}[{i + 1}]: (absent) -> {_fmt(b[i])}")
            elif i >= len(b):
                out.append(f"{path}[{i + 1}]: {_fmt(a[i])} -> (absent)")
            else:
                out += value_diff(a[i], b[i], f"{path}[{i + 1}]")
        return out
    if isinstance(a, frozenset) and isinstance(b, frozenset):
        lines = []
        if a - b:
            lines.append(f"{path}: only ours {_fmt(frozenset(a - b))}")
        if b - a:
            lines.append(f"{path}: only TLC's {_fmt(frozenset(b - a))}")
        return lines
    return [f"{path}: {_fmt(a)} -> {_fmt(b)}"]


def state_diff(ours, theirs) -> list[str]:
    return value_diff(ours, theirs)


def closest(state, candidates: Iterable):
    """The candidate differing from `state` in the fewest variables (then lines)."""
    best, best_key = None, None
    for c in candidates:
        nvars = sum(1 for x, y in zip(state, c) if x != y)
        if best_key is not None and nvars > best_key[0]:
            continue
        key = (nvars, len(value_diff(state, c)))
        if best_key is None or key < best_key:
            best, best_key = c, key
    return best


@dataclass
class LevelDiff:
    """The first level where the model and TLC's graph differ."""

    level: int                   # BFS level, 0 = initial states
    kind: str                    # "states" or "transitions"
    ours_only: list = field(default_factory=list)    # states (or transitions) only we reach
    tlc_only: list = field(default_factory=list)     # states (or transitions) only TLC reaches
    text: str = ""

    def __str__(self) -> str:
        return self.text


def explore_levels(model, max_level: int | None = None):
    """Breadth-first levels of `model` (state -> (parent, action) for each new
    state) and every generated transition, without the engine."""
    levels: list[list] = []
    parent: dict = {}
    transitions: list = []  # (level of from, from, to, action)
    frontier = []
    for s in model.init_states():
        if s not in parent:
            parent[s] = (None, None)
            frontier.append(s)
    lv = 0
    while frontier:
        levels.append(frontier)
        if max_level is not None and lv >= max_level:
            break
        nxt = []
        for s in frontier:
            for action, t in model.successors(s):
                transitions.append((lv, s, t, action))
                if t not in parent:
                    parent[t] = (s, action)
                    nxt.append(t)
        frontier = nxt
        lv += 1
    return levels, parent, transitions


def _path_to(state, parent: dict) -> list[str]:
    steps = []
    while True:
        p, a = parent.get(state, (None, None))
        if p is None:
            return list(reversed(steps))
        steps.append(str(a))
        state = p


def _tlc_parents(graph: Graph) -> dict:
    par: dict = {}
    for a, b, lab in graph.transitions:
        if graph.level[b] == graph.level[a] + 1 and b not in par:
            par[b] = (a, lab)
    return par


def _tlc_path(i: int, par: dict) -> list[str]:
    steps = []
    while i in par:
        i, lab = par[i][0], par[i][1]
        steps.append(lab)
    return list(reversed(steps))


def diff_levels(model, graph, max_report: int = 3, label=tlc_label) -> LevelDiff | None:
    """Compare `model`'s reachable states, level by level, with TLC's `graph`
    (a Graph, a path, or a graph name such as "kip966-b2"), then the
    transitions (from, to, TLC label) level by level. None if both match."""
    if not isinstance(graph, Graph):
        p = Path(graph)
        graph = load_graph(p if p.exists() else graph_path(str(graph)))
    tlc_levels = graph.levels()
    levels, parent, transitions = explore_levels(model, max_level=len(tlc_levels))
    tlc_par = _tlc_parents(graph)
    lines: list[str] = []

    for lv in range(max(len(levels), len(tlc_levels))):
        ours = set(levels[lv]) if lv < len(levels) else set()
        theirs = tlc_levels[lv] if lv < len(tlc_levels) else set()
        if ours == theirs:
            continue
        ours_only = sorted(ours - theirs, key=repr)
        tlc_only = sorted(theirs - ours, key=repr)
        lines.append(f"{graph.name}: level {lv} differs: ours {len(ours)} states, TLC {len(theirs)}; "
                     f"{len(ours_only)} only ours, {len(tlc_only)} only TLC's "
                     f"(levels before match)")
        for s in ours_only[:max_report]:
            lines.append("")
            lines.append(f"-- a state only we reach, by: {' ; '.join(_path_to(s, parent)) or '(initial)'}")
            other = closest(s, theirs) if theirs else None
            if other is None:
                lines.append("   (TLC has no state at this level)")
                continue
            i = graph.ids[other]
            lines.append(f"   closest TLC state #{i}, by: {' ; '.join(_tlc_path(i, tlc_par)) or '(initial)'}")
            lines += ["   " + d for d in state_diff(s, other)]
        for s in tlc_only[:max_report]:
            i = graph.ids[s]
            lines.append("")
            lines.append(f"-- TLC state #{i} we do not reach, TLC by: "
                         f"{' ; '.join(_tlc_path(i, tlc_par)) or '(initial)'}")
            if i in tlc_par:
                p = graph.states[tlc_par[i][0]]
                if p in parent:
                    succ = [(a, t) for (l0, f, t, a) in transitions if f == p]
                    lines.append(f"   its TLC parent #{tlc_par[i][0]} is ours too; our successors of it: "
                                 + (", ".join(sorted({str(a) for a, _ in succ})) or "none"))
                    same = [t for a, t in succ if label(a) == tlc_par[i][1]]
                    if same:
                        c = closest(s, same)
                        lines.append(f"   our {tlc_par[i][1]} successor closest to it (ours -> TLC's):")
                        lines += ["   " + d for d in state_diff(c, s)]
                        continue
                    lines.append(f"   we generate no {tlc_par[i][1]} from that parent (TLC does)")
            other = closest(s, ours) if ours else None
            if other is None:
                lines.append("   (we have no state at this level)")
                continue
            lines.append(f"   closest state of ours, by: {' ; '.join(_path_to(other, parent)) or '(initial)'}"
                         " (ours -> TLC's):")
            lines += ["   " + d for d in state_diff(other, s)]
        return LevelDiff(lv, "states", ours_only, tlc_only, "\n".join(lines))

    # states agree on every level: compare the transitions, level by level
    ours_tr: dict[int, Counter] = {}
    for lv, f, t, a in transitions:
        ours_tr.setdefault(lv, Counter())[(f, t, label(a))] += 1
    tlc_tr: dict[int, Counter] = {}
    for a, b, lab in graph.transitions:
        tlc_tr.setdefault(graph.level[a], Counter())[(graph.states[a], graph.states[b], lab)] += 1
    for lv in sorted(set(ours_tr) | set(tlc_tr)):
        o, t = ours_tr.get(lv, Counter()), tlc_tr.get(lv, Counter())
        if o == t:
            continue
        ours_only = sorted((o - t).elements(), key=repr)
        tlc_only = sorted((t - o).elements(), key=repr)
        lines.append(f"{graph.name}: states match on every level; transitions from level {lv} differ: "
                     f"ours {sum(o.values())}, TLC {sum(t.values())}")
        for name, items, side in (("only ours", ours_only, "ours"), ("only TLC's", tlc_only, "TLC")):
            for f, to, lab in items[:max_report * 3]:
                lines.append(f"   {name}: #{graph.ids.get(f, '?')} --{lab}--> #{graph.ids.get(to, '?')}"
                             + ("  (a duplicate witness)" if (f, to, lab) in (t if side == "ours" else o) else ""))
        return LevelDiff(lv, "transitions", ours_only, tlc_only, "\n".join(lines))
    return None
