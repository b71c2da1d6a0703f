"""Fair cycles on the explored state graph (checker.search.liveness.graph.StateGraph).

A behaviour of a TLA+ spec may stutter at any state, so every state is a
cycle of length 0 besides the graph's real cycles. A temporal property's
negation (invariants.temporal.Negation) asks for a lasso: an initial state,
a path to an `enter` state, then, staying in `stay` states, a fair cycle
that visits a `visit` state. As TLC's tableau method does for these forms,
this is decided on strongly connected components:

- F: the `stay` states reachable, through `stay` states, from an `enter`
  state (itself reachable from an initial state the property does not
  exempt, Instance.unless_init);
- every SCC C of the graph restricted to F (a single state with no edge to
  itself is a component too: stuttering there) is tested, running round C
  forever, taking every edge of C:
  * WF_vars(A): A enabled in every state of C and no A-edge inside C: no
    cycle in C is fair (a sub-cycle has fewer states, as many A-edges at
    most); C is dropped;
  * SF_vars(A): A enabled somewhere in C and no A-edge inside C: a fair
    cycle must avoid every state where A is enabled; those are removed
    and the rest split into SCCs again (Streett emptiness, recursive);
  * C must hold a `visit` state.
  "Enabled" is ENABLED <A>_vars: an A-edge to another state (self-loops
  are stuttering); an edge may be taken for several action instances.

The lasso is then made short: a 0-1 BFS over (state, entered?) from the
initial states to the nearest state of an accepting component gives the
prefix (the shortest the search allows: the component and its entry
are chosen for the prefix's length), and the cycle is grown greedily from
there, walking each time to the nearest state or edge that discharges an
obligation still open (an action under WF enabled all along and not taken,
one under SF enabled somewhere and not taken, the `visit` state), then back
to the start by a shortest path. The cycle is fair by construction; it is
checked again before it is returned.

SCCs: an iterative Tarjan over the CSR arrays (pure Python, no recursion:
components of millions of states are fine). networkx's
strongly_connected_components gives the same components (tests/liveness
compares them); it needs a dict-of-dicts graph of ~1 KB an edge, too much
for graphs beyond a few 100,000 edges, so it is used for the `kmc graph`
exports and as the tests' reference, not here.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Sequence

from checker.search.liveness.graph import StateGraph

ALL = -1  # every bit set (Python ints: -1 & x == x)


@dataclass
class Fairness:
    """Fairness as bit masks over action ids: bit[aid] is the instance's bit (0:
    no fairness); wf / sf the masks of the weakly / strongly fair ones."""

    bit: list[int]
    wf: int
    sf: int
    instances: list[tuple[str, int]]  # (kind, action id) per bit, in bit order

    @classmethod
    def of(cls, graph: StateGraph, entries: Sequence[tuple[str, str]]) -> "Fairness":
        """entries: (kind "WF" | "SF", action name): every instance of the
        action (each parameter tuple) separately."""
        kinds = {}
        for kind, name in entries:
            # SF implies WF: the stronger wins when both are listed
            if kinds.get(name) != "SF":
                kinds[name] = kind
        bit = [0] * len(graph.actions)
        wf = sf = 0
        instances = []
        for aid, action in enumerate(graph.actions):
            kind = kinds.get(action.name)
            if kind is None:
                continue
            b = 1 << len(instances)
            instances.append((kind, aid))
            bit[aid] = b
            if kind == "WF":
                wf |= b
            else:
                sf |= b
        return cls(bit, wf, sf, instances)


class Analysis:
    """Per graph: the fairness bit of each edge and the instances enabled in
    each state, shared by every property checked on it."""

    def __init__(self, graph: StateGraph, fairness: Fairness):
        self.g = graph
        self.f = fairness
        bit = fairness.bit
        self.ebit = [bit[a] for a in graph.act]
        en = [0] * graph.n
        off, ebit = graph.off, self.ebit
        for u in range(graph.n):
            m = 0
            for k in range(off[u], off[u + 1]):
                m |= ebit[k]
            en[u] = m
        self.en = en

    # ---- strongly connected components -----------------------------------------

    def sccs(self, nodes: Sequence[int], member) -> list[list[int]]:
        """The SCCs of the graph restricted to `nodes` (member[u] true for
        them), each a list of states; iterative Tarjan."""
        off, dst = self.g.off, self.g.dst
        index: dict[int, int] = {}
        low: dict[int, int] = {}
        on_stack: set[int] = set()
        stack: list[int] = []
        out: list[list[int]] = []
        counter = 0
        for root in nodes:
            if root in index:
                continue
            index[root] = low[root] = counter
            counter += 1
            stack.append(root)
            on_stack.add(root)
            work = [(root, off[root])]
            while work:
                u, k = work[-1]
                end = off[u + 1]
                pushed = False
                while k < end:
                    v = dst[k]
                    k += 1
                    if not member[v]:
                        continue
                    if v not in index:
                        work[-1] = (u, k)
                        index[v] = low[v] = counter
                        counter += 1
                        stack.append(v)
                        on_stack.add(v)
                        work.append((v, off[v]))
                        pushed = True
                        break
                    if v in on_stack and index[v] < low[u]:
                        low[u] = index[v]
                if pushed:
                    continue
                work.pop()
                if work:
                    p = work[-1][0]
                    if low[u] < low[p]:
                        low[p] = low[u]
                if low[u] == index[u]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == u:
                            break
                    out.append(comp)
        return out

    # ---- fair components ----------------------------------------------------------

    def fair_components(self, comps: list[list[int]], visit) -> list[list[int]]:
        """The fair components (see the module doc) among `comps`, refined
        for SF; each holds a `visit` state (visit None: any)."""
        off, dst = self.g.off, self.g.dst
        ebit, en = self.ebit, self.en
        wf, sf = self.f.wf, self.f.sf
        out = []
        todo = list(comps)
        while todo:
            comp = todo.pop()
            if visit is not None and not any(visit[u] for u in comp):
                continue
            inside = set(comp)
            all_en, some_en, taken = ALL, 0, 0
            for u in comp:
                e = en[u]
                all_en &= e
                some_en |= e
                if e:
                    for k in range(off[u], off[u + 1]):
                        if dst[k] in inside:
                            taken |= ebit[k]
            if all_en & wf & ~taken:
                continue
            bad = some_en & sf & ~taken
            if bad:
                rest = [u for u in comp if not en[u] & bad]
                if rest:
                    member = _Member(rest)
                    todo.extend(self.sccs(rest, member))
                continue
            out.append(comp)
        return out

    # ---- one property instance ------------------------------------------------------

    def find_lasso(self, stay, enter, visit, starts: Sequence[int]):
        """A lasso violating the instance, or None. stay/enter/visit: per
        state truth (sequences of 0/1; None: TRUE); starts: the initial
        states the instance is checked from. Returns (prefix edges, cycle
        edges, start) - edge indices; the cycle starts and ends in `start`,
        the state the prefix ends in (no cycle edge: stuttering there)."""
        g = self.g
        n = g.n
        off, dst = g.off, g.dst
        if not starts:
            return None
        reach = None
        if len(starts) != len(g.init):  # some initial states are exempt: reachability from the others
            reach = bytearray(n)
            dq = deque(starts)
            for s in starts:
                reach[s] = 1
            while dq:
                u = dq.popleft()
                for k in range(off[u], off[u + 1]):
                    v = dst[k]
                    if not reach[v]:
                        reach[v] = 1
                        dq.append(v)
        entry = enter if enter is not None else stay
        # F: stay states reachable through stay states from an entry state
        region = bytearray(n)
        dq = deque()
        for u in range(n):
            if (reach is None or reach[u]) and (entry is None or entry[u]) and (stay is None or stay[u]):
                region[u] = 1
                dq.append(u)
        while dq:
            u = dq.popleft()
            for k in range(off[u], off[u + 1]):
                v = dst[k]
                if not region[v] and (stay is None or stay[v]):
                    region[v] = 1
                    dq.append(v)
        nodes = [u for u in range(n) if region[u]]
        if not nodes:
            return None
        comps = self.fair_components(self.sccs(nodes, region), visit)
        if not comps:
            return None
        comp_of = {}
        for i, comp in enumerate(comps):
            for u in comp:
                comp_of[u] = i
        prefix, start = self._prefix(starts, region, entry, stay, comp_of)
        comp = comps[comp_of[start]]
        cycle = self._cycle(comp, start, visit)
        return prefix, cycle, start

    def _prefix(self, starts, region, entry, stay, comp_of):
        """0-1 BFS over (state, phase): phase 0 anywhere, phase 1 (entered)
        inside the region; entering is free at an entry state of the region.
        Returns (edge indices, the accepting state reached)."""
        off, dst = self.g.off, self.g.dst
        dist: dict[tuple[int, int], int] = {}
        parent: dict[tuple[int, int], tuple | None] = {}
        dq = deque()
        for s in starts:
            if (s, 0) not in dist:
                dist[(s, 0)] = 0
                parent[(s, 0)] = None
                dq.append((s, 0))
        found = None
        while dq:
            node = dq.popleft()
            u, ph = node
            d = dist[node]
            if ph == 1 and u in comp_of:
                found = node
                break
            if ph == 0 and region[u] and (entry is None or entry[u]):
                nxt = (u, 1)
                if dist.get(nxt, d + 1) > d:
                    dist[nxt] = d
                    parent[nxt] = (node, None)
                    dq.appendleft(nxt)
            for k in range(off[u], off[u + 1]):
                v = dst[k]
                if ph == 1 and not region[v]:
                    continue
                nxt = (v, ph)
                if dist.get(nxt, d + 2) > d + 1:
                    dist[nxt] = d + 1
                    parent[nxt] = (node, k)
                    dq.append(nxt)
        if found is None:  # cannot happen: every accepting component is in the region
            raise AssertionError("liveness: no path to an accepting component")
        edges = []
        node = found
        while parent[node] is not None:
            node, k = parent[node]
            if k is not None:
                edges.append(k)
        edges.reverse()
        return edges, found[0]

    def _cycle(self, comp: list[int], start: int, visit) -> list[int]:
        """A fair cycle through `start` inside `comp` (edge indices; [] for
        stuttering at start), grown greedily (module doc)."""
        dst = self.g.dst
        ebit, en = self.ebit, self.en
        wf, sf = self.f.wf, self.f.sf
        inside = set(comp)
        all_en, some_en, taken = en[start], en[start], 0
        seen_visit = visit is None or bool(visit[start])
        path: list[int] = []
        cur = start

        def walk(edges):
            nonlocal all_en, some_en, taken, seen_visit, cur
            for k in edges:
                taken |= ebit[k]
                v = dst[k]
                all_en &= en[v]
                some_en |= en[v]
                if visit is not None and visit[v]:
                    seen_visit = True
                path.append(k)
                cur = v

        for _ in range(4 * len(comp) + 64 + 4 * len(self.f.instances)):
            need_wf = all_en & wf & ~taken
            need_sf = some_en & sf & ~taken
            need_visit = not seen_visit
            if not (need_wf or need_sf or need_visit):
                if cur == start:
                    return path
                walk(self._bfs(cur, inside, lambda k, v: v == start))
                continue
            need_edge = need_wf | need_sf

            def goal(k, v):
                return bool(ebit[k] & need_edge) or bool(need_wf & ~en[v]) or \
                    (need_visit and bool(visit[v]))
            walk(self._bfs(cur, inside, goal))
        raise AssertionError("liveness: the fair cycle did not close")

    def _bfs(self, frm: int, inside: set, goal) -> list[int]:
        """The shortest path (edge indices) inside `inside` from frm to the
        first edge k -> v with goal(k, v)."""
        off, dst = self.g.off, self.g.dst
        parent: dict[int, tuple | None] = {frm: None}
        dq = deque([frm])
        while dq:
            u = dq.popleft()
            for k in range(off[u], off[u + 1]):
                v = dst[k]
                if v not in inside:
                    continue
                if goal(k, v):
                    edges = [k]
                    while parent[u] is not None:
                        u, pk = parent[u]
                        edges.append(pk)
                    edges.reverse()
                    return edges
                if v not in parent:
                    parent[v] = (u, k)
                    dq.append(v)
        raise AssertionError("liveness: no way to discharge a fairness obligation inside a fair "
                             "component")

    # ---- checking a cycle (also the tests') ------------------------------------------

    def cycle_is_fair(self, start: int, cycle: list[int]) -> bool:
        """Whether running round `cycle` (edges from start back to start;
        [] = stuttering at start) satisfies every WF / SF instance."""
        states = [start] + [self.g.dst[k] for k in cycle]
        all_en, some_en, taken = ALL, 0, 0
        for u in states:
            all_en &= self.en[u]
            some_en |= self.en[u]
        for k in cycle:
            taken |= self.ebit[k]
        return not (all_en & self.f.wf & ~taken) and not (some_en & self.f.sf & ~taken)


class _Member:
    """A membership test over a list of states (member[u])."""

    __slots__ = ("s",)

    def __init__(self, nodes):
        self.s = set(nodes)

    def __getitem__(self, u) -> bool:
        return u in self.s
