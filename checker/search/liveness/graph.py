"""The explored state graph, recorded only when liveness (or `kmc graph`) asks
for it: the local engine's own search (checker.search.core.Search) with two
wrappers, so the safety engines run exactly as before and pay nothing.

- The model's `successors` is wrapped by a recorder that notes, after the
  engine has handled each (action, successor), the successor's fingerprint;
- the seen set is wrapped by a probe that remembers the fingerprint the
  engine last asked about (the compiled successor and its Python twin both
  ask `fp in seen` exactly once per successor they fingerprint; a successor
  that is the very object of the one before is skipped by the engine and
  has that one's fingerprint).

States get indices in discovery order (BFS order); the graph keeps per state
its fingerprint, BFS level and one byte per atom (the state predicates the
temporal properties are made of), and per edge (source, target, action id)
as arrays of unsigned ints, turned into a CSR adjacency at the end: about
100 bytes a state (the fingerprint -> index dict) + 12 bytes an edge while
searching, 8 bytes an edge after. Self-loops are left out (a step that
changes nothing is stuttering: it neither enables nor takes an action in
the sense of WF_vars / SF_vars); parallel edges with the same action are
kept once.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from checker.search.engine import CheckOptions, LocalExpander, Search
from checker.search.errors import EngineEvaluationError, SpecError
from model.base import Action, EvaluationError


class _Probe:
    """The seen set, remembering the fingerprint last tested."""

    __slots__ = ("seen", "fp")

    def __init__(self, seen):
        self.seen = seen
        self.fp = None

    def __contains__(self, fp) -> bool:
        self.fp = fp
        return fp in self.seen

    def add(self, fp) -> None:
        self.seen.add(fp)

    def __len__(self) -> int:
        return len(self.seen)

    def __iter__(self):
        return iter(self.seen)


class _Recorder:
    """The model, its successors noted with their fingerprints (one list of
    (action, fp) per state expanded, in the engine's order)."""

    def __init__(self, model, probe: _Probe):
        self._model = model
        self._probe = probe
        self.variables = model.variables
        self.calls: list[list] = []
        self._prev = None

    def __getattr__(self, name):
        return getattr(self._model, name)

    def successors(self, parent):
        edges: list = []
        self.calls.append(edges)
        probe = self._probe
        for action, succ in self._model.successors(parent):
            probe.fp = None
            yield action, succ
            # resumed: the engine has fingerprinted succ (or skipped it as the
            # same object as the successor before)
            fp = probe.fp
            if fp is None:
                fp = self._prev
            else:
                self._prev = fp
            edges.append((action, fp))


@dataclass
class StateGraph:
    """The explored graph: states 0..n-1 in BFS order; out-edges of u are
    dst[off[u]:off[u+1]] with action ids act[...] (into `actions`)."""

    fps: Sequence[int]
    level: array
    init: list[int]
    off: array
    dst: array
    act: array
    actions: list[Action]
    labels: list[bytearray]            # one per atom: labels[a][u] in (0, 1)
    self_loops: list[tuple[int, int]] = field(default_factory=list)  # (u, action id), kept on request

    @property
    def n(self) -> int:
        return len(self.level)

    @property
    def edges(self) -> int:
        return len(self.dst)

    def out(self, u: int) -> range:
        return range(self.off[u], self.off[u + 1])


class GraphBuilder:
    """Collects states and edges while the search runs."""

    def __init__(self, bits: int, atoms: Sequence[Callable[[Any], bool]], keep_self_loops: bool = False,
                 max_states: int | None = None):
        self.index: dict[int, int] = {}
        self.fps = array("Q") if bits == 64 else []
        self.level = array("I")
        self.src, self.dst, self.act = array("I"), array("I"), array("I")
        self.atoms = list(atoms)
        self.labels = [bytearray() for _ in self.atoms]
        self.init: list[int] = []
        self.keep_self_loops = keep_self_loops
        self.self_loops: list[tuple[int, int]] = []
        self.max_states = max_states

    def add_state(self, fp: int, state, level: int) -> None:
        if fp in self.index:
            return
        i = len(self.level)
        if self.max_states is not None and i >= self.max_states:
            raise GraphTooBig(self.max_states)
        self.index[fp] = i
        self.fps.append(fp)
        self.level.append(level)
        try:
            for pred, lab in zip(self.atoms, self.labels):
                lab.append(1 if pred(state) else 0)
        except EvaluationError as e:
            raise EngineEvaluationError(f"evaluation error in a temporal property's predicate: {e}",
                                        state=state) from e
        if level == 0:
            self.init.append(i)

    def add_edges(self, src_fp: int, edges: list, action_id: Callable[[Action], int]) -> None:
        index = self.index
        s = index[src_fp]
        done = set()
        for action, fp in edges:
            d = index[fp]
            key = (d, action)
            if key in done:
                continue
            done.add(key)
            if d == s:
                if self.keep_self_loops:
                    self.self_loops.append((s, action_id(action)))
                continue
            self.src.append(s)
            self.dst.append(d)
            self.act.append(action_id(action))

    def build(self, actions: list[Action]) -> StateGraph:
        """The CSR graph (counting sort of the edges by source)."""
        n = len(self.level)
        counts = array("Q", bytes(8 * (n + 1)))
        for s in self.src:
            counts[s + 1] += 1
        for i in range(n):
            counts[i + 1] += counts[i]
        off = array("Q", counts)
        pos = array("Q", counts)
        m = len(self.src)
        dst = array("I", bytes(4 * m))
        act = array("I", bytes(4 * m))
        for s, d, a in zip(self.src, self.dst, self.act):
            p = pos[s]
            dst[p] = d
            act[p] = a
            pos[s] = p + 1
        self.src = self.dst = self.act = None  # free them
        return StateGraph(self.fps, self.level, self.init, off, dst, act, list(actions), self.labels,
                          self.self_loops)


class GraphTooBig(SpecError):
    def __init__(self, limit: int):
        super().__init__(f"the state graph has more than {limit:,} states")
        self.limit = limit


class GraphSearch(Search):
    """The local engine's search, recording the state graph (see the module doc)."""

    def __init__(self, model, properties, options: CheckOptions, atoms: Sequence[Callable] = (),
                 keep_self_loops: bool = False, max_states: int | None = None):
        super().__init__(model, properties, options, LocalExpander())
        self.probe = _Probe(self.seen)
        self.seen = self.probe
        self.recorder = _Recorder(model, self.probe)
        self.ctx.model = self.recorder
        self.builder = GraphBuilder(options.fingerprint_bits, atoms, keep_self_loops, max_states)

    def _initial(self):
        frontier = super()._initial()
        ctx = self.ctx
        for state in self.model.init_states():
            fp = ctx.entry(state)[2]
            if fp not in self.builder.index:
                self.builder.add_state(fp, state, 0)
        return frontier

    def absorb(self, level, log, res, chunk, next_frontier) -> None:
        super().absorb(level, log, res, chunk, next_frontier)
        builder = self.builder
        for e in res.new:
            builder.add_state(e[2], e[0], level)
        calls = self.recorder.calls
        self.recorder.calls = []
        if len(calls) > len(chunk):
            raise EngineEvaluationError("internal error: the graph recorder saw more expansions "
                                        "than the chunk has states")
        action_id = self._action_id
        for ci, edges in enumerate(calls):
            builder.add_edges(chunk[ci][2], edges, action_id)

    def graph(self) -> StateGraph:
        return self.builder.build(self.actions)
