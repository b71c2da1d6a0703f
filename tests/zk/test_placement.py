"""The replica placement rule of the 0.8 replication design ("Replica placements"), tested
against what the design claims, including where the claim does not hold.

Claims (0.8 replication design): "we assign the ith partition to the (i mod n)th broker"
(preferred replicas spread evenly); "The jth replica of partition k will be
assigned to broker (i + j + k) mod n" so that "if a broker is down, its load
is spread evenly to all surviving brokers, instead of to a single one"; the
figure: with p0..p14 on broker-0..broker-4, "if broker-0 goes down,
partitions p0, p1, and p2 can be served from all remaining 4 brokers".
Our reading of the indices is documented in model/zk/placement.py.
"""
from __future__ import annotations

import pytest

from model.zk.placement import (
    assign_replicas, design_placement, follower_spread, has_collision, new_leader_spread,
    preferred_counts)

CONFIGS = [(n, rf) for n in range(2, 8) for rf in range(1, n + 1)]


@pytest.mark.parametrize("n, rf", CONFIGS)
@pytest.mark.parametrize("partitions", [1, 7, 30, 100])
def test_preferred_replicas_spread_evenly(n, rf, partitions):
    for rule in (design_placement, assign_replicas):
        a = rule(n, partitions, rf)
        counts = preferred_counts(a, n)
        assert sum(counts) == partitions and max(counts) - min(counts) <= 1
        # "the ith partition to the (i mod n)th broker", as its first replica
        assert [r[0] for r in a] == [p % n for p in range(partitions)]
        assert all(len(r) == rf for r in a)


@pytest.mark.parametrize("n, rf", CONFIGS)
def test_design_rule_is_valid_exactly_up_to_n_minus_rf_plus_1_partitions_per_broker(n, rf):
    """(i + j + k) mod n wraps onto broker i itself once k + j = n, for some
    follower j <= rf - 1: the rule places two replicas of a partition on one
    broker as soon as a broker has more than n - rf + 1 partitions."""
    limit = n - rf + 1
    assert not has_collision(design_placement(n, n * limit, rf))
    if rf > 1:
        a = design_placement(n, n * limit + 1, rf)
        assert has_collision(a)
        assert len(set(a[n * limit])) < rf  # broker 0's (limit+1)-th partition


def test_the_seeds_own_example_collides():
    """'create cluster with brokers broker-0, broker-1, broker2 ... create topic
    topicX with 100 partitions': with 2 replicas, partition 6 (broker 0's third)
    gets both replicas on broker 0; a third of the partitions collide."""
    a = design_placement(3, 100, 2)
    assert a[6] == (0, 0)
    assert sum(len(set(r)) < 2 for r in a) == 33
    assert not has_collision(assign_replicas(3, 100, 2))


@pytest.mark.parametrize("n, rf", [(n, rf) for n, rf in CONFIGS if rf > 1])
def test_failed_brokers_followers_reach_all_survivors_only_at_the_limit(n, rf):
    """Where the rule is valid (m <= n - rf + 1 partitions per broker), the
    followers of broker i's partitions are on brokers i+1 .. i+m+rf-2: all
    n - 1 survivors only for m = n - rf + 1. There each survivor holds 1 to
    min(rf - 1, m) of them: evenly (max/min = 1) only for rf = 2."""
    for m in range(1, n - rf + 2):
        a = design_placement(n, n * m, rf)
        for failed in range(n):
            spread = follower_spread(a, failed, n)
            reached = {b for b, c in spread.items() if c}
            assert len(reached) == min(m + rf - 2, n - 1)
            if m == n - rf + 1:
                assert reached == set(range(n)) - {failed}
                assert min(spread.values()) == 1
                assert max(spread.values()) == min(rf - 1, m)


def test_the_figure_p0_to_p14_on_five_brokers():
    """15 partitions, 5 brokers, 3 replicas: broker 0's three partitions
    (p0, p5, p10 under the text's round robin; the figure calls them p0, p1,
    p2) have followers on all 4 other brokers, but not evenly (1, 2, 2, 1), and
    their leadership moves to 3 brokers, not 4."""
    a = design_placement(5, 15, 3)
    assert not has_collision(a)
    assert [a[p] for p in (0, 5, 10)] == [(0, 1, 2), (0, 2, 3), (0, 3, 4)]
    assert follower_spread(a, 0, 5) == {1: 1, 2: 2, 3: 2, 4: 1}
    assert new_leader_spread(a, 0, 5) == {1: 1, 2: 1, 3: 1, 4: 0}


@pytest.mark.parametrize("n, rf", [(n, rf) for n, rf in CONFIGS if rf > 1])
def test_kafkas_form_spreads_a_failed_brokers_load_over_all_survivors(n, rf):
    """With the shift taken mod n - 1 (never 0), any number of partitions is
    valid, and with q(n - 1) partitions per broker a failed broker's
    leadership and follower replicas spread over all n - 1 survivors exactly
    evenly; with any m >= n - 1 the max/min ratio stays <= (q + 1) / q."""
    for m in range(1, 4 * n):
        a = assign_replicas(n, n * m, rf)
        assert not has_collision(a)
        for failed in range(n):
            leaders = new_leader_spread(a, failed, n)
            followers = follower_spread(a, failed, n)
            assert sum(leaders.values()) == m and sum(followers.values()) == m * (rf - 1)
            if n == 2:
                continue
            if m >= n - 1:
                q = m // (n - 1)
                assert min(leaders.values()) >= q and max(leaders.values()) <= q + 1
                assert max(followers.values()) * q <= min(followers.values()) * (q + 1)
            if m % (n - 1) == 0:
                assert len(set(leaders.values())) == 1 and len(set(followers.values())) == 1


@pytest.mark.parametrize("n, rf", CONFIGS)
def test_kafkas_form_equals_the_design_rule_where_that_is_valid(n, rf):
    m = n - rf + 1
    assert assign_replicas(n, n * m, rf) == design_placement(n, n * m, rf)


def test_the_model_places_its_partition_on_brokers_0_to_rf_minus_1():
    assert assign_replicas(5, 1, 3) == [(0, 1, 2)]


@pytest.mark.parametrize("args", [(0, 1, 1), (3, -1, 2), (3, 5, 4), (3, 5, 0)])
def test_bad_arguments(args):
    with pytest.raises(ValueError):
        design_placement(*args)
    with pytest.raises(ValueError):
        assign_replicas(*args)
