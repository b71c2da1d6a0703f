"""What liveness costs, side by side on one configuration:

1. the local engine's plain search (safety only) against the same search
   recording the state graph (checker/search/liveness/graph.py): time and peak
   resident memory, each in a fresh process;
2. strongly connected components of the recorded graph: kmc's iterative
   Tarjan over the CSR arrays against networkx's strongly_connected_components
   (which first needs the graph as a networkx DiGraph): time and the memory
   the networkx graph adds;
3. the whole temporal check (every reference property) after the search.

    .venv/bin/python bench/liveness_graph.py                  # kip966-b2f1 (14,613 states)
    .venv/bin/python bench/liveness_graph.py --set LeaderShrinkIsrLimit=1 --set FenceBrokerLimit=0 \\
        --set DataLossShutdownLimit=1                           # 176,736 states
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BASE = {"BrokerCount": 2, "InitReplicationFactor": 2, "Values": ["A"], "MinISR": 1, "InitIsrSize": 2,
        "NoDataLossShutdownLimit": 0, "DataLossShutdownLimit": 0, "FenceBrokerLimit": 1,
        "LeaderShrinkIsrLimit": 0, "ReassignmentLimit": 0}

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, {root!r})
from checker.search import registry
from checker.search.engine import CheckOptions, check
from checker.search.liveness.graph import GraphSearch
model, _ = registry.build("kraft", "kip966", json.loads({consts!r}))
t0 = time.perf_counter()
if {graph!r}:
    s = GraphSearch(model, [], CheckOptions())
    r = s.run()
    g = s.graph()
    extra = {{"edges": g.edges}}
else:
    r = check(model, [], CheckOptions())
    extra = {{}}
print(json.dumps({{"distinct": r.distinct, "seconds": time.perf_counter() - t0,
                  "peak_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, **extra}}))
"""


def child(consts: dict, graph: bool) -> dict:
    code = CHILD.format(root=str(ROOT), consts=json.dumps(consts), graph=graph)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--networkx-limit", type=int, default=2_000_000,
                    help="skip networkx above this many edges")
    args = ap.parse_args()
    consts = dict(BASE)
    for item in args.set:
        k, _, v = item.partition("=")
        consts[k] = json.loads(v)

    plain = child(consts, False)
    graph = child(consts, True)
    n, m = graph["distinct"], graph["edges"]
    assert plain["distinct"] == n
    print(f"{n:,} states, {m:,} edges (no self-loops)")
    print(f"search: plain {plain['seconds']:.2f} s, {plain['peak_kb'] / 1024:.0f} MiB; recording the graph "
          f"{graph['seconds']:.2f} s ({graph['seconds'] / plain['seconds']:.2f}x), "
          f"{graph['peak_kb'] / 1024:.0f} MiB (+{(graph['peak_kb'] - plain['peak_kb']) * 1024 / n:.0f} "
          f"bytes/state)")

    from checker.search import registry
    from checker.search.engine import CheckOptions
    from checker.front.temporal_spec import parse_fairness, temporal_of
    from checker.search.liveness.config import LivenessConfig
    from checker.search.liveness.fair import Analysis, Fairness
    from checker.search.liveness.graph import GraphSearch
    from checker.search.liveness.run import check_liveness
    from invariants.kraft.liveness import REFERENCE_NAMES

    model, _ = registry.build("kraft", "kip966", consts)
    s = GraphSearch(model, [], CheckOptions())
    s.run()
    g = s.graph()
    analysis = Analysis(g, Fairness.of(g, []))
    t0 = time.perf_counter()
    ours = analysis.sccs(range(g.n), bytearray([1]) * g.n)
    t_ours = time.perf_counter() - t0
    print(f"SCCs: kmc (iterative Tarjan on CSR arrays) {t_ours:.2f} s, {len(ours):,} components")
    if m <= args.networkx_limit:
        import tracemalloc

        import networkx as nx
        tracemalloc.start()
        t0 = time.perf_counter()
        dg = nx.DiGraph()
        dg.add_nodes_from(range(g.n))
        dg.add_edges_from((u, g.dst[k]) for u in range(g.n) for k in g.out(u))
        t_build = time.perf_counter() - t0
        mem = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        t0 = time.perf_counter()
        theirs = list(nx.strongly_connected_components(dg))
        t_nx = time.perf_counter() - t0
        assert len(theirs) == len(ours)
        print(f"SCCs: networkx {t_nx:.2f} s (+ {t_build:.2f} s to build its DiGraph, "
              f"{mem / (1 << 20):.0f} MiB: {mem / max(m, 1):.0f} bytes/edge)")
    t = temporal_of(model)
    fair = parse_fairness(None, model)
    t0 = time.perf_counter()
    r = check_liveness(model, [], LivenessConfig([t[p] for p in REFERENCE_NAMES], fair, "reference"),
                       CheckOptions())
    print(f"whole check, 7 reference properties under the reference fairness: {time.perf_counter() - t0:.2f} s "
          f"(of which the temporal analysis {r.liveness['wall_time_s']:.2f} s); "
          + ", ".join(f"{k} {v['verdict']}" for k, v in r.liveness["properties"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
