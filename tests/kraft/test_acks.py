"""Acks: "all" (the default, the reference's only producer) or "1" (Kafka's
acks=1: the leader acknowledges a write when it appends it, with no
min.insync.replicas check). The default leaves the run's constants and
state space as the reference's (tests/conformance compares them to TLC)."""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from model.base import ModelConfigError
from model.registry import MODELS

KRAFT = MODELS["kraft"]
# 2 brokers, RF 2, MinISR 1, one fence: TLC's kip966-b2f1 (14,613 states) under acks=all
B2F1 = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=1, InitIsrSize=2,
            DataLossShutdownLimit=0, FenceBrokerLimit=1)


def _walk(model):
    """Every (state, action, successor) of the whole state space."""
    seen, frontier = set(), list(model.init_states())
    seen.update(frontier)
    while frontier:
        nxt = []
        for s in frontier:
            for a, t in model.successors(s):
                yield s, a, t
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


def test_acks_all_is_the_default_and_not_a_constant_of_the_run():
    m = KRAFT.build("kip966", B2F1)
    assert "Acks" not in m.constants
    assert KRAFT.build("kip966", {**B2F1, "Acks": "all"}).constants == m.constants
    assert KRAFT.build("v3_5", {"Acks": "1"}).constants["Acks"] == "1"


@pytest.mark.parametrize("value", ["2", "-1", 1, True])
def test_a_bad_acks_is_rejected(value):
    with pytest.raises(ModelConfigError, match="Acks must be one of 'all', '1'"):
        KRAFT.build("kip966", {"Acks": value})


@pytest.mark.parametrize("variant", ["kip966", "v3_5", "kip966_storage", "v3_5_storage"])
def test_acks_1_acknowledges_in_the_write_and_skips_the_min_isr_check(variant):
    # MinISR 2, one ISR shrink: the leader may be alone in its maximal ISR
    c = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=2, InitIsrSize=2,
             LeaderShrinkIsrLimit=1, FenceBrokerLimit=0)
    c.update({"kip966": dict(DataLossShutdownLimit=0), "v3_5": dict(UncleanShutdownLimit=0),
              "kip966_storage": dict(PowerLossLimit=0), "v3_5_storage": dict(PowerLossLimit=0)}[variant])
    writes = {}
    for acks in ("all", "1"):
        m = KRAFT.build(variant, {**c, "Acks": acks})
        writes[acks] = [(s, t) for s, a, t in _walk(m) if a.name == "WriteRecordToLeader"]
        assert writes[acks]
    for s, t in writes["1"]:
        assert t.inv_pos_acked - s.inv_pos_acked >= t.inv_sent - s.inv_sent
    for s, t in writes["all"]:
        assert not (t.inv_pos_acked & (t.inv_sent - s.inv_sent))

    def below_min_isr(s):
        leader = next(b for b in (1, 2) if s.partition_status[b - 1].name == "Leader")
        return len(s.partition_metadata[leader - 1].maximal_isr) < 2
    assert any(below_min_isr(s) for s, _ in writes["1"])
    assert not any(below_min_isr(s) for s, _ in writes["all"])


def test_acks_1_loses_an_acknowledged_record_where_acks_all_does_not():
    """A fence moves leadership to the follower before it fetched the
    acknowledged record; the old leader truncates to the new leader's log."""
    model, props = build("kraft", "kip966", {**B2F1, "Acks": "1"})
    r = check(model, props, CheckOptions(max_depth=None))
    assert [(v.property, v.depth) for v in r.violations] == [("NoCommittedRecordLostGlobally", 7)]
    model, props = build("kraft", "kip966", B2F1)
    r = check(model, props, CheckOptions(max_depth=None))
    assert r.outcome == "pass" and r.distinct == 14613


def test_a_negatively_acknowledged_record_is_read_after_13_steps():
    """specs/kraft-kip966-nacked-record-consumed.toml: the witness is first
    reached 13 steps deep (the protocol description's case), not earlier."""
    c = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=2, InitIsrSize=2,
             DataLossShutdownLimit=0, FenceBrokerLimit=1, LeaderShrinkIsrLimit=1)
    model, props = build("kraft", "kip966", c)
    r = check(model, props, CheckOptions(max_depth=13))
    assert r.sometimes["NackedRecordConsumed"] == 13
