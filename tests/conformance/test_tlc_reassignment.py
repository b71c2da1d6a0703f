"""Partition reassignment explores exactly the states TLC explores.

One test per row of data/kraft-tlc-reassignment.json (TLC on the reference
specification with ReassignmentLimit 1, measured by bench/tlc_kraft_figures.py;
see data/PROVENANCE.md). A complete row: distinct states per BFS level,
levels, states generated in all and per action. A row bounded to N steps is
TLC with `CONSTRAINT TLCGet("level") <= N+1`, which also generates (and
drops) the successors of the states N steps deep: kmc runs to N+1 steps and
compares the first N+1 levels and the generated counts. A row where TLC
stops at a violated invariant: kmc's shortest counterexample breaks the same
invariant after as many steps, and TLC's steps replay in kmc's model.
"""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from tla_values import tlc_label
from tlc_reference import SLOW_GENERATED, reassignment_figures

ALL_ROWS = reassignment_figures()
VIOLATION_ROWS = [r for r in ALL_ROWS if isinstance(r["outcome"], dict)]
ROWS = [r for r in ALL_ROWS if not isinstance(r["outcome"], dict)]


def _param(row):
    marks = [pytest.mark.slow] if row["generated"] > SLOW_GENERATED else []
    return pytest.param(row, id=row["name"], marks=marks)


@pytest.fixture(scope="module")
def results():
    return {}


def _run(row, results):
    if row["name"] not in results:
        model, props = build("kraft", row["variant"], row["constants"])
        depth = None if row["depth"] is None else row["depth"] + 1
        results[row["name"]] = (model, check(model, props, CheckOptions(max_depth=depth)))
    return results[row["name"]]


def test_the_rows_cover_reassignment():
    """Both variants, complete and bounded rows and a violation of each, every
    row with ReassignmentLimit 1 and a reassignment in every ok row, and a row
    where a replica can be added and an AlterPartition request is received."""
    assert all(r["constants"]["ReassignmentLimit"] == 1 for r in ALL_ROWS)
    assert {r["variant"] for r in ROWS} == {"kip966", "v3_5"}
    assert any(r["depth"] is None for r in ROWS) and any(r["depth"] is not None for r in ROWS)
    assert {r["variant"] for r in VIOLATION_ROWS} == {"kip966", "v3_5"}
    for r in ROWS:
        assert r["per_action_generated"]["PerformPartitionReassignment"] > 0, r["name"]
    assert any(r["per_action_generated"]["ReceiveAlterPartitionRequest"] > 0
               and r["constants"]["BrokerCount"] > r["constants"]["InitReplicationFactor"]
               for r in ROWS)


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_state_space_matches_tlc(row, results):
    model, r = _run(row, results)
    assert not r.violations, (
        f"TLC: {row['outcome']}; kmc: {[(v.property, v.depth) for v in r.violations]}")
    levels = len(row["per_level_distinct"])
    assert r.per_level_distinct[:levels] == row["per_level_distinct"]
    assert sum(row["per_level_distinct"]) == row["distinct"]
    if row["depth"] is None:
        assert r.exhausted and len(r.per_level_distinct) == levels == row["levels"]
        assert r.depth == row["max_steps"]
    assert r.generated == row["generated"]


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_generated_per_action_matches_tlc(row, results):
    model, r = _run(row, results)
    missing = [name for name in row["per_action_generated"] if name not in model.action_names]
    assert not missing, f"actions of the reference the model does not name: {missing}"
    ours = {name: r.per_action_generated.get(name, 0) for name in row["per_action_generated"]}
    assert ours == row["per_action_generated"]
    extra = {n: c for n, c in r.per_action_generated.items()
             if n not in row["per_action_generated"] and c}
    assert not extra, f"actions TLC does not have generated states: {extra}"


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_a_reassignment_completes(row, results):
    """Not vacuous: a reassignment completes within the row's bound, and where a
    replica can be added one also waits for it (ReassignmentPending)."""
    model, r = _run(row, results)
    assert r.sometimes["ReassignmentCompleted"] is not None
    c = row["constants"]
    if c["BrokerCount"] > c["InitReplicationFactor"]:
        assert r.sometimes["ReassignmentPending"] is not None


def _replay(model, labels):
    """The states reached by following TLC's labelled steps (every witness of
    a label: it names the action and broker, not the message or subsets)."""
    frontier = list(model.init_states())
    for label in labels:
        seen, nxt = set(), []
        for s in frontier:
            for a, t in model.successors(s):
                if tlc_label(a) == label and t not in seen:
                    seen.add(t)
                    nxt.append(t)
        assert nxt, f"TLC's step {label} is not enabled in our model here"
        frontier = nxt
    return frontier


@pytest.mark.parametrize("row", [pytest.param(r, id=r["name"]) for r in VIOLATION_ROWS])
def test_violation_matches_tlc(row):
    model, props = build("kraft", row["variant"], row["constants"])
    want = row["outcome"]
    r = check(model, props, CheckOptions(max_depth=want["steps"], stop_on_violation=True))
    assert [(v.property, v.depth) for v in r.violations] == [(want["violation"], want["steps"])]
    prop = {p.name: p for p in props}[want["violation"]]
    ends = _replay(model, want["actions"])
    assert any(not prop.predicate(s) for s in ends)
    assert "PerformPartitionReassignment" in want["actions"]
