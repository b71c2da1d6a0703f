"""A check with temporal properties: the local or the auto engine's search
recording the state graph (checker.search.liveness.graph), the invariants checked on the way as
always, then each temporal property instance decided on the graph
(checker.search.liveness.fair) and each violated property given a lasso
(checker.search.liveness.lasso). The result is the engine's CheckResult with the
lassos among its violations and a `liveness` section (summary.json).
"""
from __future__ import annotations

import time
from typing import Iterable

from checker.search.engine import CheckOptions, CheckResult, replay
from checker.search.liveness.config import LivenessConfig
from checker.search.liveness.fair import Analysis, Fairness
from checker.search.liveness.graph import GraphSearch
from checker.search.liveness.lasso import LassoViolation, bound_stops, full_headline
from invariants.temporal import negation
from model.base import Property


class _Atoms:
    """The state predicates to label every state with, each once."""

    def __init__(self):
        self.preds: list = []
        self._ids: dict[int, int] = {}

    def add(self, pred) -> int:
        i = self._ids.get(id(pred))
        if i is None:
            i = self._ids[id(pred)] = len(self.preds)
            self.preds.append(pred)
        return i


def _plan(config: LivenessConfig, atoms: _Atoms) -> list:
    """Per property, per instance: (instance, negation, atom indices, unless_init atom)."""
    plan = []
    for prop in config.properties:
        rows = []
        for inst in prop.instances:
            neg = negation(inst.formula)
            idx = [atoms.add(p) for p in neg.atoms]
            unless = atoms.add(inst.unless_init) if inst.unless_init is not None else None
            rows.append((inst, neg, idx, unless))
        plan.append((prop, rows))
    return plan


def _truth(fn, labels: list[bytearray]) -> bytearray | None:
    """fn over the atoms' values, per state (None for fn None: TRUE)."""
    if fn is None:
        return None
    return bytearray(1 if fn(v) else 0 for v in zip(*labels))


def check_liveness(model, properties: Iterable[Property], config: LivenessConfig,
                   options: CheckOptions | None = None, engine: str = "local",
                   threshold: int | None = None, workers: int | None = None) -> CheckResult:
    """Check the state properties on the way and `config`'s temporal
    properties on the whole graph. The options' depth bound must be None.
    engine "auto": the graph is recorded by the auto engine's search (its
    workers send their chunks' edges; threshold and workers as
    checker.search.parallel.check_auto's), the fair cycles searched here."""
    options = options or CheckOptions()
    if options.max_depth is not None:
        raise ValueError("liveness needs the whole state graph (no depth bound)")
    atoms = _Atoms()
    plan = _plan(config, atoms)
    expander = None
    if engine == "auto":
        from checker.search.parallel import auto_expander
        expander = auto_expander(threshold, workers)
    elif engine != "local":
        raise ValueError(f"liveness runs on the local or the auto engine, not {engine!r}")
    search = GraphSearch(model, properties, options, atoms.preds, expander=expander)
    result = search.run()
    t0 = time.perf_counter()
    section: dict = {"fairness": config.fairness_entries(),
                     "fairness_spec": config.fairness_spec,
                     "properties": {}}
    if not result.exhausted:
        why = ("the search stopped at a violation before the whole graph was explored (check the "
               "invariants apart, or use --continue)" if result.violations
               else "the search did not explore the whole graph")
        section.update(checked=False, reason=why)
        for prop, _ in plan:
            section["properties"][prop.name] = {"verdict": "unchecked", "form": prop.form}
        result.liveness = section
        return result
    graph = search.graph()
    fairness = Fairness.of(graph, config.fairness)
    analysis = Analysis(graph, fairness)
    lassos = []
    for prop, rows in plan:
        verdicts = {}
        found = None
        for inst, neg, idx, unless in rows:
            labels = [graph.labels[i] for i in idx]
            starts = graph.init if unless is None else [u for u in graph.init
                                                        if not graph.labels[unless][u]]
            lasso = analysis.find_lasso(_truth(neg.stay, labels), _truth(neg.enter, labels),
                                        _truth(neg.visit, labels), starts)
            verdicts[inst.label or prop.name] = "holds" if lasso is None else "violated"
            if lasso is not None and found is None:
                found = (inst, lasso)
        entry = {"verdict": "violated" if found else "holds", "form": prop.form}
        if len(rows) > 1 or (rows and rows[0][0].label):
            entry["instances"] = verdicts
        if found:
            inst, (prefix, cycle, start) = found
            v = _violation(model, search, graph, analysis, prop, inst, prefix, cycle, start, config)
            lassos.append(v)
            entry["counterexample"] = {k: x for k, x in v.to_json().items()
                                       if k in ("instance", "headline", "depth", "loop", "prefix_steps",
                                                "cycle_steps", "stuttering")}
            entry["counterexample"]["headline"] = full_headline(v)
            entry["counterexample"]["trace_text"] = f"trace-{prop.name}.txt"
        section["properties"][prop.name] = entry
    section.update(checked=True,
                   graph={"states": graph.n, "edges": graph.edges,
                          "fair_instances": len(fairness.instances)},
                   wall_time_s=round(time.perf_counter() - t0, 3))
    result.violations.extend(lassos)
    if lassos:
        result.outcome = "violation"
    result.liveness = section
    result.wall_time += time.perf_counter() - t0
    return result


def _violation(model, search, graph, analysis, prop, inst, prefix, cycle, start,
               config) -> LassoViolation:
    """The lasso's states, replayed through the model from the initial state."""
    edges = prefix + cycle
    first = _source_of_path(graph, edges) if edges else start
    path = [(graph.fps[first], None)] + [(graph.fps[graph.dst[k]], graph.actions[graph.act[k]])
                                          for k in edges]
    trace = replay(model, search.ctx, path, lambda action, wanted: action == wanted)
    loop = len(prefix)
    enabled_unfair = []
    if not cycle:
        seen = set()
        for k in graph.out(start):
            if not analysis.ebit[k]:
                name = str(graph.actions[graph.act[k]])
                if name not in seen:
                    seen.add(name)
                    enabled_unfair.append(name)
    bounds, bounded = bound_stops(model, trace, loop, {a for _, a in config.fairness})
    return LassoViolation(prop.name, len(trace) - 1, trace, loop=loop, instance=inst.label,
                          headline=prop.headline(inst.param, trace[loop][1]), form=prop.form,
                          fairness=config.fairness_entries(), enabled_unfair=enabled_unfair,
                          bounds=bounds, bounded=bounded)


def _source_of_path(graph, edges) -> int:
    """The initial state a path of edge indices starts from."""
    k = edges[0]
    off = graph.off
    lo, hi = 0, graph.n - 1
    while lo < hi:  # the last state u with off[u] <= k
        mid = (lo + hi + 1) // 2
        if off[mid] <= k:
            lo = mid
        else:
            hi = mid - 1
    while off[lo + 1] <= k:
        lo += 1
    return lo
