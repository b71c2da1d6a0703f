"""Liveness: temporal properties (invariants/temporal.py) checked on the
explored state graph under fairness, with lasso counterexamples.

graph: the state graph recorded by the local or auto engine's search (only when asked);
fair: SCCs, fair components, shortest-prefix lassos with fair cycles;
lasso: LassoViolation and its text / ITF / HTML; config: spec keys and
their checks; run: check_liveness (the search, then every property);
export: `kmc graph` (dot / graphml through networkx).
"""
