"""The kraft_quorum model explores exactly the state space TLC explores on the
reference kraft/kip_996 (data/quorum-tlc.json, see data/PROVENANCE.md).

Per configuration: distinct states per BFS level (so distinct states and
the number of levels), states generated and states generated per action.
A complete row is one run to the end. A row bounded to N steps is TLC with
`CONSTRAINT TLCGet("level") <= N+1`: TLC also generates the successors of
the states N steps deep (and drops them), so kmc runs to N+1 steps and
compares the first N+1 levels, and its generated counts, which are then
exactly TLC's.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from model.kraft_quorum.config import REFERENCE_CONSTANTS

DATA = Path(__file__).parent / "data" / "quorum-tlc.json"
SLOW_WORK = 150_000  # rows whose kmc run explores more states than this are `slow`

with open(DATA) as f:
    ALL_ROWS = json.load(f)
# rows where TLC stops at an invariant violation: {"violation": name, "steps": n}
VIOLATION_ROWS = [r for r in ALL_ROWS if isinstance(r["outcome"], dict)]
ROWS = [r for r in ALL_ROWS if not isinstance(r["outcome"], dict)]


def _work(row) -> int:
    """States kmc explores for the row (a bounded row: one level more)."""
    return row["distinct"] + (0 if row["depth"] is None else row["generated"])


def _param(row):
    marks = [pytest.mark.slow] if _work(row) > SLOW_WORK else []
    return pytest.param(row, id=row["name"], marks=marks)


@pytest.fixture(scope="module")
def results():
    return {}


def _run(row, results):
    if row["name"] not in results:
        model, props = build("kraft_quorum", row["variant"], row["constants"])
        depth = None if row["depth"] is None else row["depth"] + 1
        results[row["name"]] = (model, check(model, props, CheckOptions(max_depth=depth)))
    return results[row["name"]]


def test_the_rows_exercise_every_constant():
    """Each constant of the reference takes, in some row, a value other than the
    smallest the rows give it (so it changes the state space somewhere), some
    rows are complete and some bounded, and there are at least ten."""
    assert len(ROWS) >= 10
    assert any(r["depth"] is None for r in ROWS) and any(r["depth"] is not None for r in ROWS)
    for c in REFERENCE_CONSTANTS:
        values = {json.dumps(r["constants"][c.name], sort_keys=True) for r in ALL_ROWS}
        assert len(values) > 1, f"{c.name} is {values.pop()} in every row"


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_state_space_matches_tlc(row, results):
    model, r = _run(row, results)
    assert not r.violations, f"TLC: {row['outcome']}; kmc: {[(v.property, v.depth) for v in r.violations]}"
    levels = len(row["per_level_distinct"])
    assert r.per_level_distinct[:levels] == row["per_level_distinct"]
    assert sum(row["per_level_distinct"]) == row["distinct"]
    if row["depth"] is None:
        assert r.exhausted and len(r.per_level_distinct) == levels == row["levels"]
    assert r.generated == row["generated"]


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_generated_per_action_matches_tlc(row, results):
    model, r = _run(row, results)
    missing = [name for name in row["per_action_generated"] if name not in model.action_names]
    assert not missing, f"actions of the reference the model does not name: {missing}"
    ours = {name: r.per_action_generated.get(name, 0) for name in row["per_action_generated"]}
    assert ours == row["per_action_generated"]


@pytest.mark.parametrize("row", [pytest.param(r, id=r["name"]) for r in VIOLATION_ROWS])
def test_violation_matches_tlc(row):
    """Where TLC stops at a violated invariant, kmc's shortest counterexample
    breaks the same invariant after as many steps (TLC's is a shortest one too:
    one worker, breadth first)."""
    model, props = build("kraft_quorum", row["variant"], row["constants"])
    depth = row["outcome"]["steps"]
    r = check(model, props, CheckOptions(max_depth=depth, stop_on_violation=True))
    assert [(v.property, v.depth) for v in r.violations] == [(row["outcome"]["violation"], depth)]
