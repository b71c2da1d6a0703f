"""The consumer client (Consumer = true, model/kraft/consumer.py): off by
default (the reference's variables, constants and counts), an observer that
changes nothing the brokers can do, and the steps Kafka's consumer takes."""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from invariants.kraft import CONSUMER_INVARIANT_NAMES, CONSUMER_WITNESS_NAMES
from model.kraft.consumer import ACTIONS
from model.kraft.state import (
    CONSUMER, STORAGE_VARIABLES, VARIABLES, ConsumedRecord, ConsumerState, PartitionData,
    PartitionRecord, except_at, with_consumer)
from model.registry import MODELS

KRAFT = MODELS["kraft"]
# 2 brokers, RF 2, MinISR 1, one fence: TLC's kip966-b2f1 (14,613 states)
B2F1 = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=1, InitIsrSize=2,
            DataLossShutdownLimit=0, FenceBrokerLimit=1)
SMALL = {  # per variant: 2 brokers, RF 2, one fault
    "kip966": dict(DataLossShutdownLimit=1, FenceBrokerLimit=0),
    "v3_5": dict(UncleanShutdownLimit=1, FenceBrokerLimit=0, AvoidLastReplicaStanding=False),
    "kip966_storage": dict(PowerLossLimit=1, FenceBrokerLimit=0),
    "v3_5_storage": dict(PowerLossLimit=1, FenceBrokerLimit=0),
}
VARIANTS = tuple(SMALL)


def _small(variant, **more):
    return {**dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=1, InitIsrSize=2),
            **SMALL[variant], **more}


@pytest.mark.parametrize("variant", VARIANTS)
def test_off_by_default_the_reference_variables_constants_and_properties(variant):
    m = KRAFT.build(variant, _small(variant))
    assert "Consumer" not in m.constants
    assert KRAFT.build(variant, _small(variant, Consumer=False)).constants == m.constants
    base = STORAGE_VARIABLES if variant.endswith("_storage") else VARIABLES
    assert tuple(m.variables) == base and type(m.init_states()[0])._fields == base
    assert not set(ACTIONS) & set(m.action_names)
    _, props = build("kraft", variant, _small(variant))
    names = {p.name for p in props}
    assert not names & set(CONSUMER_INVARIANT_NAMES + CONSUMER_WITNESS_NAMES)


@pytest.mark.parametrize("variant", VARIANTS)
def test_on_one_more_variable_last_and_the_consumer_steps(variant):
    m = KRAFT.build(variant, _small(variant, Consumer=True))
    base = STORAGE_VARIABLES if variant.endswith("_storage") else VARIABLES
    assert tuple(m.variables) == base + (CONSUMER,)
    (s,) = m.init_states()
    assert s.consumer == ConsumerState(1, 1, 0, (), 0) and m.from_plain(tuple(s)) == s
    assert set(ACTIONS) <= set(m.action_names)
    r = check(m, [], CheckOptions(max_depth=6))
    assert r.distinct > 0


def test_the_consumer_is_an_observer_the_brokers_state_space_is_unchanged():
    """Projected on the reference's variables, the state space with the
    consumer is the reference's, state for state (TLC: 14,613); and every
    consumer step changes the consumer's variable only."""
    model, _ = build("kraft", "kip966", {**B2F1, "Consumer": True})
    r = check(model, [], CheckOptions(max_depth=None, projection=list(VARIABLES)))
    assert r.outcome == "pass" and r.distinct == 14613
    seen, frontier, steps = set(), list(model.init_states()), 0
    while frontier and steps < 3000:
        nxt = []
        for s in frontier:
            for a, t in model.successors(s):
                if a.name in ACTIONS:
                    steps += 1
                    assert t[:-1] == s[:-1] and t.consumer != s.consumer, a
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert steps >= 3000


def _leader_with_log(model, s, b, log, hwm, epoch=None):
    d = PartitionData(tuple(log), hwm, len(log) + 1)
    s = s._replace(partition_data=except_at(s.partition_data, b, d))
    if epoch is not None:
        md = s.partition_metadata[b - 1]._replace(leader_epoch=epoch)
        s = s._replace(partition_metadata=except_at(s.partition_metadata, b, md))
    return s


def _steps(model, s, name):
    return [t for a, t in model.successors(s) if a.name == name]


def test_fetch_reads_up_to_the_hwm_never_above():
    m = KRAFT.build("kip966", {**B2F1, "Consumer": True})
    (s,) = m.init_states()
    a, b = PartitionRecord(1, 1, "A"), PartitionRecord(1, 2, "B")
    s = _leader_with_log(m, s, 1, [a, b], hwm=2)
    (t,) = _steps(m, s, "ConsumerFetch")
    assert t.consumer.position == 2 and [r.value for r in t.consumer.read] == ["A"]
    assert t.consumer.offset_epoch == 1 and not t.consumer.read[0].stale
    assert _steps(m, t, "ConsumerFetch") == []  # B is above the HWM


def test_a_broker_in_another_leader_epoch_serves_no_fetch():
    """FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH: no step; a newer epoch is
    taken by ConsumerValidatePosition first."""
    m = KRAFT.build("kip966", {**B2F1, "Consumer": True})
    (s,) = m.init_states()
    s = _leader_with_log(m, s, 1, [PartitionRecord(1, 1, "A")], hwm=2, epoch=2)
    assert _steps(m, s, "ConsumerFetch") == []
    (t,) = _steps(m, s, "ConsumerValidatePosition")
    assert t.consumer == ConsumerState(2, 1, 0, (), 0)  # nothing read: nothing to validate
    older = with_consumer(s, ConsumerState(3, 1, 0, (), 0))
    assert _steps(m, older, "ConsumerFetch") == _steps(m, older, "ConsumerValidatePosition") == []


def test_validation_detects_truncation_and_resets_to_the_divergence():
    """KIP-320: the epoch-1 end offset in the new leader's log is below the
    position: auto.offset.reset moves the position back there."""
    m = KRAFT.build("kip966", {**B2F1, "Consumer": True})
    (s,) = m.init_states()
    read = (ConsumedRecord(1, 1, "A", 1, False), ConsumedRecord(2, 1, "B", 1, False))
    s = with_consumer(s, ConsumerState(1, 3, 1, read, 0))
    s = _leader_with_log(m, s, 1, [PartitionRecord(1, 1, "A"), PartitionRecord(2, 2, "C")],
                         hwm=3, epoch=2)
    (t,) = _steps(m, s, "ConsumerValidatePosition")
    assert t.consumer == ConsumerState(2, 2, 1, read, 1)
    props = {p.name: p for p in build("kraft", "kip966", {**B2F1, "Consumer": True})[1]}
    assert props["MonotonicReads"].predicate(s) and not props["MonotonicReads"].predicate(t)
    assert props["ConsumerOffsetReset"].predicate(t)


def test_out_of_range_resets_to_the_hwm_unless_it_lags_the_epoch_start():
    m = KRAFT.build("kip966", {**B2F1, "Consumer": True})
    (s,) = m.init_states()
    s = _leader_with_log(m, s, 1, [PartitionRecord(1, 1, "A")], hwm=2)
    far = with_consumer(s, ConsumerState(1, 5, 1, (), 0))
    assert _steps(m, far, "ConsumerFetch") == []
    (t,) = _steps(m, far, "ConsumerResetOffset")
    assert t.consumer == ConsumerState(1, 2, 1, (), 1)
    lagging = far._replace(partition_leso=except_at(far.partition_leso, 1, 3))  # OFFSET_NOT_AVAILABLE
    assert _steps(m, lagging, "ConsumerResetOffset") == []
    assert _steps(m, s, "ConsumerResetOffset") == []  # in range: nothing to reset


def test_consumed_records_stay_committed_checks_every_current_leader():
    m = KRAFT.build("kip966", {**B2F1, "Consumer": True})
    props = {p.name: p.predicate for p in build("kraft", "kip966", {**B2F1, "Consumer": True})[1]}
    (s,) = m.init_states()
    read = (ConsumedRecord(1, 1, "A", 1, False),)
    s = with_consumer(s, ConsumerState(1, 2, 1, read, 0))
    held = _leader_with_log(m, s, 1, [PartitionRecord(1, 1, "A")], hwm=2)
    assert props["ConsumedRecordsStayCommitted"](held)
    for log in ([], [PartitionRecord(2, 1, "A")], [PartitionRecord(1, 1, "B")]):
        assert not props["ConsumedRecordsStayCommitted"](_leader_with_log(m, s, 1, log, hwm=1))
    # a stale leader (not in the controller's leader epoch) is not the committed log
    stale = _leader_with_log(m, s, 1, [], hwm=1, epoch=0)
    assert props["ConsumedRecordsStayCommitted"](stale)


def test_the_trace_view_shows_and_explains_the_consumer():
    from model.kraft.view import KraftView
    m = KRAFT.build("kip966", {**B2F1, "Consumer": True})
    view = KraftView(m)
    (s,) = m.init_states()
    read = (ConsumedRecord(1, 1, "A", 1, True),)
    t = with_consumer(s, ConsumerState(1, 1, 1, read, 1))
    assert view.columns()[-1] == "Consumer" and len(view.cells(s, t)) == len(view.columns())
    assert "consumer: position 1, offset epoch 1, leader epoch 1, read [1:A e1 (stale leader)], " \
           "1 offset reset" in view.summary_lines(t)
    why = view.explain("MonotonicReads", [(None, s), (None, t)])
    assert "read up to offset 1" in why.text and "position is now 1" in why.text
    why = view.explain("ConsumedRecordsStayCommitted", [(None, s), (None, t)])
    assert "it read 1:A e1" in why.text and "broker 1, the leader in leader epoch 1, holds []" in why.text
    assert why.columns == {len(view.columns()) - 1, 1}
    assert "Consumer" not in KraftView(KRAFT.build("kip966", B2F1)).columns()


def test_consumed_records_stay_committed_against_the_reference_ghost():
    """docs/models.md: where logs agree below their HWMs the consumer reads a
    prefix of inv_consumed, so a state that breaks ConsumedRecordsStayCommitted
    breaks ConsistentReadProperty too, not the other way round (the ghost
    holds committed records no consumer read yet). Measured on v3.5, 2
    brokers, one unclean shutdown and one fence, 10 steps deep."""
    constants = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=1, InitIsrSize=2,
                     UncleanShutdownLimit=1, FenceBrokerLimit=1, AvoidLastReplicaStanding=False,
                     Consumer=True)
    model, props = build("kraft", "v3_5", constants)
    p = {x.name: x.predicate for x in props}
    consumer, ghost = p["ConsumedRecordsStayCommitted"], p["ConsistentReadProperty"]
    seen, frontier = set(model.init_states()), list(model.init_states())
    counts = {(True, True): 0, (False, True): 0, (True, False): 0, (False, False): 0}
    for _ in range(10):
        nxt = []
        for s in frontier:
            key = (consumer(s), ghost(s))
            counts[key] += 1
            if key != (True, True):
                continue
            for _, t in model.successors(s):
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    assert counts[(False, True)] == 0
    assert counts[(True, False)] > 0 and counts[(False, False)] > 0


def test_a_consumer_counterexample_in_itf_and_text():
    """The v3.5 Last Replica Standing loss as the consumer sees it: the ITF
    trace has the consumer's variable (a record), the text names the read."""
    from checker.output import itf
    from checker.output.views import view_for
    model, props = build("kraft", "v3_5", dict(
        BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=1, InitIsrSize=2,
        UncleanShutdownLimit=1, FenceBrokerLimit=1, AvoidLastReplicaStanding=False, Consumer=True))
    props = [p for p in props if p.name == "ConsumedRecordsStayCommitted"]
    r = check(model, props, CheckOptions(max_depth=None))
    (v,) = r.violations
    trace = v.trace
    view = view_for(model)
    obj = itf.trace_itf(trace, model.variables, view.itf_variable, {"source": "x"})
    assert itf.validate(obj) == [] and obj["vars"][-1] == "consumer"
    last = obj["states"][-1]["consumer"]
    assert [x["value"] for x in last["read"]] == ["A"] and last["read"][0]["stale"] in (True, False)
    text = view.text("ConsumedRecordsStayCommitted", trace)
    assert "the consumer fetches from leader" in text and "reads 1:A e1 up to its HWM 2" in text
    assert "A record the consumer read is gone: it read 1:A e1" in view.explain(
        "ConsumedRecordsStayCommitted", trace).text
    off = build("kraft", "v3_5", dict(BrokerCount=2, InitReplicationFactor=2))[0]
    assert "consumer" not in itf.trace_itf([(None, off.init_states()[0])], off.variables,
                                           view_for(off).itf_variable, {})["vars"]
