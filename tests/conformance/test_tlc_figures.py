"""The kraft model explores exactly the state space TLC explores.

One test per row of data/kraft-tlc.json (TLC on the reference specification,
no VIEW, complete state space): distinct states, distinct states per BFS
level, the number of levels, states generated, and states generated per
action must all be equal.
"""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from tlc_reference import SLOW_GENERATED, figures

ROWS = figures()


def _param(row):
    marks = [pytest.mark.slow] if row["generated"] > SLOW_GENERATED else []
    return pytest.param(row, id=row["name"], marks=marks)


@pytest.fixture(scope="module")
def results():
    return {}


def _run(row, results):
    if row["name"] not in results:
        model, props = build("kraft", row["variant"], row["constants"])
        results[row["name"]] = (model, check(model, props, CheckOptions(max_depth=None)))
    return results[row["name"]]


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_state_space_matches_tlc(row, results):
    model, r = _run(row, results)
    assert not r.violations, (
        f"TLC: {row['outcome']}; kmc: {[(v.property, v.depth) for v in r.violations]} "
        f"(the search stopped, the counts below would not compare)")
    assert r.exhausted
    assert r.distinct == row["distinct"]
    assert r.per_level_distinct == row["per_level_distinct"]
    assert len(r.per_level_distinct) == row["levels"]
    assert r.depth == row["max_steps"]
    assert r.generated == row["generated"]


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_generated_per_action_matches_tlc(row, results):
    model, r = _run(row, results)
    assert not r.violations
    # every action of the reference's Next is an action of ours (coverage
    # lists never-enabled ones too), and the counts agree, zeros included
    missing = [name for name in row["per_action_generated"] if name not in model.action_names]
    assert not missing, f"actions of the reference the model does not name: {missing}"
    ours = {name: r.per_action_generated.get(name, 0) for name in row["per_action_generated"]}
    assert ours == row["per_action_generated"]
    extra = {name: n for name, n in r.per_action_generated.items()
             if name not in row["per_action_generated"] and n}
    assert not extra, f"actions TLC does not have generated states: {extra}"


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_witnesses_are_not_vacuous(row, results):
    """Every configuration commits a record, so the completeness invariants
    were exercised; an unclean shutdown happens exactly when one is allowed."""
    model, r = _run(row, results)
    assert r.sometimes["RecordCommitted"] is not None
    c = row["constants"]
    lossy = c.get("DataLossShutdownLimit", c.get("UncleanShutdownLimit", 0))
    assert (r.sometimes["UncleanShutdownHappened"] is not None) == (lossy > 0)
