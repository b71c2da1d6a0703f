"""The explored state graph, recorded only when liveness (or `kmc graph`) asks
for it: the local or the auto engine's own search (checker.search.core.Search)
with two wrappers, so the safety engines run exactly as before and pay nothing.

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

On the auto engine the wrappers run in its forked workers too: after each
chunk a worker sends (Search.worker_extras) the chunk's edges as arrays of
fingerprints (ChunkEdges) and, with each state it found, its atoms' bytes;
the parent numbers the states it keeps in BFS order and the edges' actions
in the order of the edges, so the graph is the local engine's exactly.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from itertools import chain, repeat
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

    def _new_state(self, fp: int, level: int) -> bool:
        """Index a state not seen before (False: known already)."""
        if fp in self.index:
            return False
        i = len(self.level)
        if self.max_states is not None and i >= self.max_states:
            raise GraphTooBig(self.max_states)
        self.index[fp] = i
        self.fps.append(fp)
        self.level.append(level)
        if level == 0:
            self.init.append(i)
        return True

    def add_state(self, fp: int, state, level: int) -> None:
        if self._new_state(fp, level):
            for lab, bit in zip(self.labels, self.label_row(state)):
                lab.append(bit)

    def add_labelled(self, fp: int, row: bytes, level: int) -> None:
        """A state whose atoms a worker evaluated (label_row)."""
        if self._new_state(fp, level):
            for lab, bit in zip(self.labels, row):
                lab.append(bit)

    def label_row(self, state) -> bytes:
        """The atoms' values on `state`, one byte each."""
        try:
            return bytes(1 if pred(state) else 0 for pred in self.atoms)
        except EvaluationError as e:
            raise EngineEvaluationError(f"evaluation error in a temporal property's predicate: {e}",
                                        state=state) from e

    def add_edges(self, src_fp: int, dst_fps: Sequence[int], keys: Sequence, action_id: Callable) -> None:
        """The out-edges of a state: successor fingerprints and their actions'
        keys (an Action, or a worker's index of one; action_id gives the
        graph's id, asked only for the edges kept), each (successor, action)
        once, self-loops kept apart on request."""
        index = self.index
        s = index[src_fp]
        done = set()
        for fp, key in zip(dst_fps, keys):
            d = index[fp]
            if (d, key) in done:
                continue
            done.add((d, key))
            if d == s:
                if self.keep_self_loops:
                    self.self_loops.append((s, action_id(key)))
                continue
            self.src.append(s)
            self.dst.append(d)
            self.act.append(action_id(key))

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


@dataclass
class ChunkEdges:
    """A chunk's out-edges as an auto engine's worker recorded them, to send
    to the parent (arrays, no state objects): per state expanded its
    fingerprint and number of edges; per edge the successor's fingerprint
    and an index into `actions`; each (successor, action) once a state,
    self-loops left out unless kept."""

    src: Sequence[int]
    count: array
    dst: Sequence[int]
    act: array
    actions: list

    @classmethod
    def of(cls, chunk, calls: list, bits: int, keep_self_loops: bool) -> "ChunkEdges":
        src, dst = (array("Q"), array("Q")) if bits == 64 else ([], [])
        count, act = array("I"), array("I")
        ids: dict = {}   # (numbered in the order of the edges kept: the order the parent numbers them)
        for ci, edges in enumerate(calls):
            sfp = chunk[ci][2]
            src.append(sfp)
            done = set()
            for action, fp in edges:
                if (fp, action) in done or (fp == sfp and not keep_self_loops):
                    continue
                done.add((fp, action))
                j = ids.get(action)
                if j is None:
                    j = ids[action] = len(ids)
                dst.append(fp)
                act.append(j)
            count.append(len(done))
        return cls(src, count, dst, act, list(ids))


class GraphSearch(Search):
    """The local engine's search, or the auto engine's (expander: its
    checker.search.parallel.AutoExpander), recording the state graph (see
    the module doc)."""

    def __init__(self, model, properties, options: CheckOptions, atoms: Sequence[Callable] = (),
                 keep_self_loops: bool = False, max_states: int | None = None, expander=None):
        super().__init__(model, properties, options, expander or LocalExpander())
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
        if res.record is not None:   # expanded by a worker
            self._absorb_worker_chunk(level, res)
            return
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
            builder.add_edges(chunk[ci][2], [fp for _, fp in edges], [a for a, _ in edges], action_id)

    def worker_extras(self, res, chunk):
        """In a worker of the auto engine: the atoms' values of each new state
        and the chunk's edges (ChunkEdges)."""
        calls = self.recorder.calls
        self.recorder.calls = []
        builder = self.builder
        rows = [builder.label_row(e[0]) for e in res.new] if builder.atoms else None
        return rows, ChunkEdges.of(chunk, calls, self.options.fingerprint_bits, builder.keep_self_loops)

    def _absorb_worker_chunk(self, level: int, res) -> None:
        """The states new here (their atoms' values came with them, after
        the entry's five fields) and the chunk's edges, the actions' ids
        given in the order the local engine gives them (by the edges kept)."""
        builder = self.builder
        labelled = bool(builder.atoms)
        for e in res.new:
            builder.add_labelled(e[2], e[5] if labelled else b"", level)
        rec: ChunkEdges = res.record
        action_id = self._action_id
        ids = [action_id(a) for a in rec.actions]   # (in the order of the edges: as the local engine)
        if builder.keep_self_loops:   # (`kmc graph`: small graphs) the self-loops go apart
            pos = 0
            for fp, n in zip(rec.src, rec.count):
                builder.add_edges(fp, rec.dst[pos:pos + n], rec.act[pos:pos + n], ids.__getitem__)
                pos += n
            return
        # every edge is one to keep (the worker dropped repeats and self-loops)
        index = builder.index
        builder.src.extend(chain.from_iterable(map(repeat, map(index.__getitem__, rec.src), rec.count)))
        builder.dst.extend(map(index.__getitem__, rec.dst))
        builder.act.extend(map(ids.__getitem__, rec.act))

    def graph(self) -> StateGraph:
        return self.builder.build(self.actions)
