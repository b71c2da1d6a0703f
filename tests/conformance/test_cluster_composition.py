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


# the controllers' part: no broker can ask for a decision (no fence, no
# shrink, no shutdown, no reassignment, the ISR full), so the quorum log
# holds only the initial metadata batch and LeaderChangeRecords
NO_DECISIONS = {"BrokerCount": 2, "InitReplicationFactor": 2, "MinISR": 1, "InitIsrSize": 2,
                "Values": ["A"], "FenceBrokerLimit": 0, "DataLossShutdownLimit": 0,
                "NoDataLossShutdownLimit": 0, "LeaderShrinkIsrLimit": 0, "ReassignmentLimit": 0}
# kraft_quorum kip996, 2 voters, no client values, MaxEpoch 2, one disruptive
# election trigger (specs/quorum/liveness-epoch-limit-stuck-prospective.toml's space)
QUORUM_2_VOTERS_LEVELS = [1, 3, 5, 9, 15, 27, 48, 91, 167, 285, 466, 733, 1098, 1550, 2079, 2647,
                          3200, 3667, 3992, 4160, 4152, 3993, 3720, 3391, 3076, 2770, 2510, 2294,
                          2076, 1883, 1675, 1422, 1153, 917, 677, 447, 283, 163, 88, 30, 5, 4]


@pytest.mark.parametrize("idle_fetches", [True, False])
def test_controllers_projection_matches_kraft_quorum(idle_fetches):
    """The projection `controllers` (the quorum and the active controller's
    bookkeeping) has kraft_quorum kip996's distinct states per level on the
    same controller constants, no client values; MaxControllerFailovers
    above what ControllerMaxEpoch allows, so only the epoch bound stops
    elections."""
    quorum, _ = build("kraft_quorum", "kip996", dict(
        Hosts=["c1", "c2"], InitClusterSize=2, MinClusterSize=2, MaxClusterSize=2,
        MaxSpawnedServers=2, Value=[], MaxValuesPerEpoch=0, MaxAddReconfigs=0, MaxRemoveReconfigs=0,
        MaxConnectivityChanges=0, MaxPermCrashes=0, TestLiveness=False, MaxRestarts=0, MaxEpoch=2,
        MaxDisruptiveElectionTriggers=1))
    q = check(quorum, [], CheckOptions(max_depth=None))
    assert q.exhausted and q.per_level_distinct == QUORUM_2_VOTERS_LEVELS and q.distinct == 60972
    model, _ = build("kraft_cluster", "kip966", {
        **NO_DECISIONS, "Controllers": ["c1", "c2"], "MaxControllerFailovers": 2,
        "ControllerMaxEpoch": 2, "ControllerMaxRestarts": 0, "MaxDisruptiveElectionTriggers": 1,
        "ControllerIdleFetches": idle_fetches})
    r = check(model, [], CheckOptions(max_depth=None, projection="controllers"))
    assert r.exhausted and r.per_level_distinct == QUORUM_2_VOTERS_LEVELS


def test_controllers_projection_differs_once_a_broker_asks():
    """One fence of a live broker: its batch is a quorum log entry no
    client-value-free quorum has, so the controllers' part is larger."""
    model, _ = build("kraft_cluster", "kip966", {
        **NO_DECISIONS, "FenceBrokerLimit": 1, "Controllers": ["c1", "c2"],
        "MaxControllerFailovers": 2, "ControllerMaxEpoch": 2, "MaxDisruptiveElectionTriggers": 1})
    r = check(model, [], CheckOptions(max_depth=6, projection="controllers"))
    assert r.per_level_distinct == [1, 5, 13, 27, 51, 91, 160]
    assert r.per_level_distinct != QUORUM_2_VOTERS_LEVELS[:7]
