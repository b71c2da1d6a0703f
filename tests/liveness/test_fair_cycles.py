"""The fair-cycle search against brute force: on small random graphs (the
randgraph toy model), every form of temporal property under no fairness,
WF and SF of Move, decided by enumerating every set of edges a fair cycle
could take for ever; the lassos replayed and checked through the model
alone (lasso_check). The SCCs against networkx's."""
from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

from checker.search import registry
from checker.search.engine import CheckOptions
from checker.search.liveness.config import LivenessConfig
from checker.search.liveness.fair import Analysis, Fairness
from checker.search.liveness.graph import GraphSearch
from checker.search.liveness.run import check_liveness
from invariants.temporal import AlwaysEventually, EventuallyAlways, LeadsTo, TemporalProperty, single
from lasso_check import check_lasso


def _graph(model):
    g = nx.DiGraph()
    for n in range(model.nodes):
        g.add_node(n)
        for m in model.edges[n]:
            g.add_edge(n, m)
    return g


def _reachable(g, sources, allowed=None):
    seen = set(s for s in sources if allowed is None or s in allowed)
    todo = list(seen)
    while todo:
        u = todo.pop()
        for v in g.successors(u):
            if v not in seen and (allowed is None or v in allowed):
                seen.add(v)
                todo.append(v)
    return seen


def brute_force_violated(model, formula, fairness_kind) -> bool:
    """Is there a fair lasso violating `formula`? Every candidate cycle
    support (a single node stuttering, or a set of non-loop edges whose
    nodes it connects strongly) is tried."""
    g = _graph(model)
    inits = list(range(model.initial))
    nodes = _reachable(g, inits)
    edges = [(u, v) for u, v in g.edges if u != v and u in nodes]
    out = {u: {v for (a, v) in edges if a == u} for u in nodes}

    def fair(support_nodes, support_edges) -> bool:
        for u in support_nodes:
            for v in out[u]:
                enabled_everywhere = support_nodes == {u}
                if fairness_kind == "WF" and enabled_everywhere and (u, v) not in support_edges:
                    return False
                if fairness_kind == "SF" and (u, v) not in support_edges:
                    return False
        return True

    def supports():
        for u in nodes:
            yield {u}, frozenset()
        for r in range(1, len(edges) + 1):
            for es in itertools.combinations(edges, r):
                ns = {x for e in es for x in e}
                h = nx.DiGraph(list(es))
                if nx.is_strongly_connected(h) and set(h.nodes) == ns:
                    yield ns, frozenset(es)

    pred = lambda f, u: f(type("S", (), {"node": u})())  # noqa: E731
    for ns, es in supports():
        if not fair(ns, es):
            continue
        if isinstance(formula, LeadsTo):
            notq = {u for u in nodes if not pred(formula.q, u)}
            if not ns <= notq:
                continue
            entries = {u for u in nodes if pred(formula.p, u) and u in notq}
            if ns & _reachable(g, entries, notq):
                return True
        elif isinstance(formula.body, LeadsTo):
            notq = {u for u in nodes if not pred(formula.body.q, u)}
            if ns <= notq and any(pred(formula.body.p, u) for u in ns):
                return True
        elif isinstance(formula, AlwaysEventually):
            if all(not pred(formula.body, u) for u in ns):
                return True
        elif isinstance(formula, EventuallyAlways):
            if any(not pred(formula.body, u) for u in ns):
                return True
    return False


def _random_formula(rng, n):
    def subset():
        chosen = frozenset(u for u in range(n) if rng.random() < 0.4)
        return lambda s, c=chosen: s.node in c
    kind = rng.randrange(4)
    if kind == 0:
        return LeadsTo(subset(), subset())
    if kind == 1:
        return AlwaysEventually(subset())
    if kind == 2:
        return EventuallyAlways(subset())
    return AlwaysEventually(LeadsTo(subset(), subset()))


CASES = [(seed, kind) for seed in range(150) for kind in ("none", "WF", "SF")]


@pytest.mark.parametrize("seed,fairness_kind", CASES)
def test_verdicts_equal_brute_force(seed, fairness_kind):
    rng = random.Random(seed)
    nodes = rng.randint(2, 6)
    model, _ = registry.build("randgraph", None, {"Nodes": nodes, "Degree": 2, "Seed": seed,
                                                  "Initial": rng.randint(1, min(2, nodes))})
    formula = _random_formula(rng, nodes)
    prop = TemporalProperty("P", single(formula), reads=("node",))
    fairness = [] if fairness_kind == "none" else [(fairness_kind, "Move")]
    result = check_liveness(model, [], LivenessConfig([prop], fairness, fairness), CheckOptions())
    expected = brute_force_violated(model, formula, None if fairness_kind == "none" else fairness_kind)
    got = result.liveness["properties"]["P"]["verdict"]
    assert got == ("violated" if expected else "holds"), (seed, fairness_kind, formula)
    if expected:
        (v,) = result.violations
        check_lasso(model, v, prop, fairness)


@pytest.mark.parametrize("seed", range(8))
def test_sccs_equal_networkx(seed):
    model, _ = registry.build("randgraph", None, {"Nodes": 300, "Degree": 3, "Seed": seed,
                                                  "Initial": 3})
    search = GraphSearch(model, [], CheckOptions())
    search.run()
    graph = search.graph()
    analysis = Analysis(graph, Fairness.of(graph, []))
    ours = {frozenset(c) for c in analysis.sccs(range(graph.n), bytearray([1]) * graph.n)}
    g = nx.DiGraph()
    g.add_nodes_from(range(graph.n))
    g.add_edges_from((u, graph.dst[k]) for u in range(graph.n) for k in graph.out(u))
    assert ours == {frozenset(c) for c in nx.strongly_connected_components(g)}


def test_graph_edges_are_the_models():
    """Every recorded edge is a successor of the model, every non-stuttering
    successor an edge (by fingerprint), once per action."""
    model, _ = registry.build("twophase", None, {})
    search = GraphSearch(model, [], CheckOptions())
    result = search.run()
    graph = search.graph()
    assert graph.n == result.distinct == 288
    states = {}
    for s in _all_states(model):
        states[search.ctx.entry(s)[2]] = s
    index = {fp: i for i, fp in enumerate(graph.fps)}
    for fp, s in states.items():
        u = index[fp]
        want = {(index[search.ctx.entry(t)[2]], a) for a, t in model.successors(s) if t != s}
        got = {(graph.dst[k], graph.actions[graph.act[k]]) for k in graph.out(u)}
        assert got == want


def _all_states(model):
    seen = set()
    todo = list(model.init_states())
    while todo:
        s = todo.pop()
        if s in seen:
            continue
        seen.add(s)
        todo.extend(t for _, t in model.successors(s))
    return seen
