"""kraft_cluster composes kraft and kraft_quorum without changing either.

With one controller that never fails over, every controller decision
commits as it is appended, so the projection `kraft` (kraft's 23
variables) of kraft_cluster has kraft's distinct states level by
level (kip966 and v3_5) - TLC's figures of data/kraft-tlc.json, complete spaces - and the
same states generated per kraft action (the quorum takes no step). Bounded
searches (a depth bound) of configurations TLC's table does not hold are
compared with the kraft model itself, level by level.
"""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from tlc_reference import SLOW_GENERATED, figures

ONE_CONTROLLER = {"Controllers": ["c1"], "MaxControllerFailovers": 0}
ROWS = figures()


def _param(row):
    marks = [pytest.mark.slow] if row["generated"] > SLOW_GENERATED else []
    return pytest.param(row, id=row["name"], marks=marks)


def _cluster(constants, depth=None, variant="kip966"):
    model, props = build("kraft_cluster", variant, {**constants, **ONE_CONTROLLER})
    return check(model, [], CheckOptions(max_depth=depth, projection="kraft"))


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_kraft_projection_matches_tlc(row):
    r = _cluster(row["constants"], variant=row["variant"])
    assert r.exhausted
    assert r.per_level_distinct == row["per_level_distinct"]
    assert r.distinct == row["distinct"]
    assert r.generated == row["generated"]
    ours = {name: r.per_action_generated.get(name, 0) for name in row["per_action_generated"]}
    assert ours == row["per_action_generated"]


# beyond TLC's table: kraft's own counts, bounded (kraft equals TLC, tests/conformance)
BOUNDED = [
    ("b3-default-d8", {}, 8),
    ("b3-i3-shrink-d10", {"InitIsrSize": 3, "LeaderShrinkIsrLimit": 1, "DataLossShutdownLimit": 1,
                          "FenceBrokerLimit": 0}, 10),
    ("b2-v2-quirks-fixed-d10", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1,
                                "InitIsrSize": 2, "Values": ["A", "B"], "FenceBrokerLimit": 1,
                                "DataLossShutdownLimit": 1, "ReferenceQuirks": False}, 10),
    ("b2-keep-log-d12", {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1, "InitIsrSize": 1,
                         "NoDataLossShutdownLimit": 1, "DataLossShutdownLimit": 0}, 12),
    ("b3-reassign-d8", {"ReassignmentLimit": 1, "DataLossShutdownLimit": 0, "FenceBrokerLimit": 0}, 8),
]


@pytest.mark.parametrize("name,constants,depth", BOUNDED, ids=[b[0] for b in BOUNDED])
def test_kraft_projection_matches_kraft_bounded(name, constants, depth):
    kraft, _ = build("kraft", "kip966", constants)
    k = check(kraft, [], CheckOptions(max_depth=depth))
    r = _cluster(constants, depth)
    assert r.per_level_distinct == k.per_level_distinct
    assert r.generated == k.generated


def test_unprojected_space_equals_where_the_log_is_kraft_state():
    """Without the projection: where every decision is a partition change
    (AlterPartition only), the controllers' log holds exactly kraft's
    con_metadata_log, so even the whole state space is TLC's."""
    row = next(r for r in ROWS if r["name"] == "kip966-b2s1")
    model, _ = build("kraft_cluster", "kip966", {**row["constants"], **ONE_CONTROLLER})
    r = check(model, [], CheckOptions(max_depth=None))
    assert r.exhausted and r.per_level_distinct == row["per_level_distinct"]
