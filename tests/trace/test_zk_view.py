"""The zk model's own trace view (model/zk/view.py): a column per broker named
as the 0.8 replication design names them (broker-0, ...), only what changed per step, fetches
and elections on a sequence diagram, a headline naming the lost record and
the step where the promise broke; text, ITF and the page in headless
chromium. (The layering: tests/core/test_layers.py.)"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from checker.front.spec import load_spec
from checker.output.views import view_for
from checker.search.engine import CheckOptions, check
from model.zk.view import ZkView

from test_browser import CHROMIUM, assert_page_ran_cleanly, dump_dom
from trace_helpers import ZK_LOSS

PROP = "LeaderCompleteness"


@pytest.fixture(scope="module")
def zk_loss():
    spec = load_spec(ZK_LOSS)
    model, props = spec.build()
    result = check(model, props, CheckOptions(max_depth=spec.depth))
    (v,) = [v for v in result.violations if v.property == PROP]
    return model, v.trace


def test_zk_text_names_brokers_changes_and_the_lost_record(zk_loss):
    model, trace = zk_loss
    view = view_for(model)
    assert isinstance(view, ZkView)
    text = view.text(PROP, trace)
    lines = text.splitlines()
    assert lines[0] == f"Invariant {PROP} is violated after 7 steps."
    assert lines[1].startswith("Acknowledged data lost: the leader broker-0 (leader epoch 1) lacks the "
                               "acknowledged record A (offset 0, leader epoch 0, still on broker-1)")
    assert "The promise broke at step 7, ElectLeader(broker-0), made broker-0 leader" in lines[1]
    assert "  broker-1: running, follower of broker-0 e0, log [], LEO 0, HW 0" in text
    steps = re.findall(r"^Step (\d+): (\S+)\(", text, re.M)
    assert [a for _, a in steps] == [a.name for a, _ in trace[1:]]
    assert "Step 1: Produce(broker-0, A) - a producer writes A to leader broker-0" in text
    assert "  broker-0: log + 0:A e0" in text
    assert "FetchRequest broker-1 -> broker-0 (fetch offset 0)" in text
    assert "sent: FetchResponse(offset 0, records [0:A e0], HW 0, leader LEO 1) broker-0 -> broker-1" in text
    assert "  ZooKeeper znode: leader broker-0 -> none, version 0 -> 1" in text
    # only what changed: step 3 (the follower appends) says nothing of broker-0
    step3 = text.split("Step 3:")[1].split("Step 4:")[0]
    assert "broker-0:" not in step3 and "broker-1: log + 0:A e0" in step3
    assert "<<" not in text.split("every variable:")[1].split("Step 1:")[1]  # no raw tuples after state 0


def test_zk_explanation_marks_the_leader_column_and_the_election(zk_loss):
    model, trace = zk_loss
    view = view_for(model)
    why = view.explain(PROP, trace)
    assert view.columns() == ["ZooKeeper", "broker-0", "broker-1", "producer"]
    assert why.columns == {1} and why.broke_at == 7
    assert len(view.cells(None, trace[0][1])) == len(view.columns())


def test_zk_diagram_lanes_and_arrows(zk_loss):
    model, trace = zk_loss
    view = view_for(model)
    assert view.lanes() == ["ZooKeeper", "broker-0", "broker-1"]
    arrows = [(a.kind, a.src, a.dst, a.sent, a.end, a.fate) for a in view.arrows(trace)]
    assert ("FetchRequest", 2, 1, 2, 2, "received") in arrows
    assert ("FetchResponse", 1, 2, 2, 3, "received") in arrows
    assert ("FetchResponse", 1, 2, 4, None, "in flight") in arrows
    assert ("ZkWrite", 1, 0, 7, 7, "received") in arrows  # the election: broker-0 writes the znode
    assert [view.actor_lane(a) for a, _ in trace[1:]] == [1, 1, 2, 1, 1, 1, 1]


def test_zk_itf_maps_per_broker_variables_over_broker_ids(zk_run, kmc):
    itf = json.loads((zk_run / f"trace-{PROP}.itf.json").read_text())
    s0 = itf["states"][0]
    assert s0["log"] == {"#map": [[{"#bigint": "0"}, []], [{"#bigint": "1"}, []]]}
    assert s0["running"]["#map"][1] == [{"#bigint": "1"}, True]


def test_kmc_trace_show_zk(zk_run, kmc):
    r = kmc("trace", "show", zk_run)
    assert r.exit_code == 0, r.output
    assert "lacks the acknowledged record A" in r.output and "broker-1" in r.output


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
def test_zk_page_draws_lanes_and_arrows_and_fits_1400px(zk_run, tmp_path):
    page = zk_run / f"trace-{PROP}.html"
    dom, stderr = dump_dom(tmp_path, page, "--window-size=1400,900")
    assert_page_ran_cleanly(dom, stderr)
    width = int(re.search(r'data-kmc-width="(\d+)"', dom).group(1))
    assert width <= 1400, width
    lanes = re.findall(r'<g class="lane" data-lane="(\d)"><text[^>]*>([^<]*)</text>', dom)
    assert lanes == [("0", "ZooKeeper"), ("1", "broker-0"), ("2", "broker-1")]
    arrows = re.findall(r'<g class="arrow ([\w-]+)" data-from="(\d+)" data-to="(\d*)">', dom)
    assert ("received", "2", "3") in arrows and ("in-flight", "4", "") in arrows
    assert len(arrows) >= 6
    assert len(re.findall(r'<tr class="step[ "]', dom)) == 8
    broke = re.search(r'<p class="brokeat" id="broke">([^<]*)</p>', dom).group(1)
    assert broke.startswith("The promise broke at step 7, ElectLeader(broker-0), made broker-0 leader")
    assert "lacks the acknowledged record A" in dom


def test_zk_consumer_reads_in_the_text_the_table_and_the_headline():
    """A consumer's counterexample (specs/zk-leader_epoch-consumer-unclean-election.toml):
    its reads and reset in the steps, its own column, a headline naming the offset."""
    spec = load_spec(Path(__file__).parents[2] / "specs" / "zk-leader_epoch-consumer-unclean-election.toml")
    model, props = spec.build()
    result = check(model, props, CheckOptions())
    (v,) = [v for v in result.violations if v.property == "MonotonicReads"]
    view = view_for(model)
    text = view.text("MonotonicReads", v.trace)
    assert text.splitlines()[1] == ("The consumer read different records at offset 0: A, B (it has read "
                                    "[0:A, 0:B]). The second read came at step 9, ConsumerFetch(broker-1).")
    assert "Step 3: ConsumerFetch(broker-0) - the consumer fetches from broker-0, which it believes leads" in text
    assert "  consumer reads [0:A], position 0 -> 1" in text
    assert "  consumer: position 1 is beyond the broker's log end (OFFSET_OUT_OF_RANGE)" in text
    assert "  consumer: position reset to 0" in text
    assert "  consumer: position 1, read [0:A, 0:B] from leader epochs e0, e1" in text
    assert view.columns() == ["ZooKeeper", "broker-0", "broker-1", "producer", "consumer"]
    assert all(len(view.cells(p, s)) == 5 for (_, p), (_, s) in zip(v.trace, v.trace[1:]))
    assert view.explain("MonotonicReads", v.trace).columns == {4}


def _walk(model, steps):
    from model.base import Action
    s = model.init_states()[0]
    trace = [(None, s)]
    for name, *params in steps:
        a = Action(name, tuple(params))
        s = next(t for x, t in model.successors(s) if x == a)
        trace.append((a, s))
    return trace


def test_zk_view_draws_the_controlled_shutdown_steps_and_the_leader_and_isr_queue():
    """ControlledShutdownSteps several: the request to the controller and its
    answer; LeaderAndIsrQueue fifo: two requests wait for one broker, taken
    oldest first."""
    from model.zk.model import ZkModel
    m = ZkModel("leader_epoch", dict(BrokerCount=2, ReplicationFactor=2, Values=["A"],
                                     Election="controller", ControlledShutdownLimit=1,
                                     PowerLossLimit=1))
    trace = _walk(m, [("ControlledShutdown", 0), ("HandleControlledShutdown", 0), ("PowerLoss", 0),
                      ("OnBrokerFailure", 0)])
    view = view_for(m)
    text = view.text("LeaderCompleteness", trace)
    assert "sent: ControlledShutdownRequest broker-0 -> controller" in text
    assert "received: ControlledShutdownRequest broker-0 -> controller" in text
    arrows = view.arrows(trace)
    shutdown = [a for a in arrows if a.kind == "ControlledShutdown"]
    assert [(a.src, a.dst, a.sent, a.end, a.fate) for a in shutdown] == [(1, 0, 1, 2, "received")]
    to_1 = [a for a in arrows if a.kind == "LeaderAndIsr" and a.dst == 2]
    assert len(trace[-1][1].ctl_request[1]) == 1 and [a.end for a in to_1] == [None]
    # two requests queued to broker-0 (the controller's, then a new controller's), taken in order
    m = ZkModel("leader_epoch", dict(BrokerCount=2, ReplicationFactor=2, Values=["A"],
                                     Election="controller", ControllerFailoverLimit=1))
    trace = _walk(m, [("PowerLoss", 1), ("OnBrokerFailure", 1), ("ControllerFailover",),
                      ("ReceiveLeaderAndIsr", 0)])
    assert len(trace[3][1].ctl_request[0]) == 2 and len(trace[4][1].ctl_request[0]) == 1
    to_0 = [a for a in view_for(m).arrows(trace) if a.kind == "LeaderAndIsr" and a.dst == 1]
    assert [(a.sent, a.end, a.fate) for a in to_0] == [(2, 4, "received"), (3, None, "in flight")]
