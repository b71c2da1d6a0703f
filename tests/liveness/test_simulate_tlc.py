"""Simulation against TLC's liveness verdicts (tests/conformance/data/
quorum-tlc-liveness.json, kraft-tlc-liveness.json, kraft-tlc-liveness-more.json;
provenance in data/PROVENANCE.md): on every configuration of up to 20,000
states, one property per run under the row's fairness, random walks of up
to 60 steps (seed 1) find a fair lasso where TLC says the property is
violated, and none where TLC says it holds. Every lasso is checked through
the model alone (lasso_check)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.front import simulate_cli
from checker.front.temporal_spec import parse_fairness, temporal_of
from checker.search import registry, simulate
from checker.search.simulate import Limits, SimConfig, simulate_local
from lasso_check import check_lasso

DATA = Path(__file__).resolve().parents[1] / "conformance" / "data"
FILES = {"quorum-tlc-liveness.json": "kraft_quorum", "kraft-tlc-liveness.json": "kraft",
         "kraft-tlc-liveness-more.json": "kraft"}
MAX_STATES = 20_000
WALKS_TO_FIND = 1000   # a violated row: found within this many walks
WALKS_HOLDS = 200      # a row that holds: this many walks close no violating fair lasso


def _rows():
    rows = []
    for name, model in FILES.items():
        with open(DATA / name) as f:
            rows += [(model, r) for r in json.load(f)]
    size: dict = {}
    for _, r in rows:
        size[r["name"]] = max(size.get(r["name"], 0), r.get("distinct") or 0)
    return [(m, r) for m, r in rows if size[r["name"]] <= MAX_STATES]


ROWS = _rows()


@pytest.mark.parametrize("model_name,row", ROWS,
                         ids=[f"{r['name']}-{r['property']}" for _, r in ROWS])
def test_simulation_verdict_equals_tlc(model_name, row):
    model, _ = registry.build(model_name, row["variant"], row["constants"])
    fairness = parse_fairness(row["fairness"], model)
    cfg = SimConfig(model=model_name, variant=row["variant"],
                    constants_json=json.dumps(row["constants"], sort_keys=True), properties=(),
                    depth=60, seed=1, temporal=(row["property"],), fairness=tuple(fairness))
    violated = row["verdict"] == "violated"
    try:
        totals, _ = simulate_local(cfg, Limits(walks=WALKS_TO_FIND if violated else WALKS_HOLDS))
        assert (totals.violation is not None) == violated, (row["name"], row["property"], totals.walks)
        if violated:
            out = simulate_cli.Outcome(result=None, totals=totals)
            out.walk = simulate.walk_trace(cfg, totals.violation["walk"])
            lasso = simulate_cli._lasso(None, cfg, out, totals.violation, True, None)
            check_lasso(model, lasso, temporal_of(model)[row["property"]], fairness)
    finally:
        simulate._walkers.pop(cfg, None)


def test_the_rows_hold_both_verdicts():
    verdicts = {r["verdict"] for _, r in ROWS}
    assert verdicts == {"holds", "violated"} and len(ROWS) >= 80
