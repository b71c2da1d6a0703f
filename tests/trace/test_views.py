"""Counterexample views: text, ITF, HTML and the run report, for kraft (its own
view) and a toy model (the generic view); `kmc trace show / itf / html`."""
from __future__ import annotations

import json
import re

import pytest

from checker.front.spec import load_spec
from checker.output import itf
from checker.output.runs import load_trace, open_run
from checker.output.views import TraceView, view_class, view_for
from checker.search.engine import CheckOptions, check
from model.kraft import view as kraft_view

from trace_helpers import LRS

PROP = "LeaderCompletenessProperty"


@pytest.fixture(scope="module")
def lrs():
    spec = load_spec(LRS)
    model, props = spec.build()
    result = check(model, props, CheckOptions(max_depth=spec.depth))
    (v,) = [v for v in result.violations if v.property == PROP]
    return model, v.trace


def test_the_kraft_view_names_real_variables():
    from model.kraft.state import VARIABLES
    assert set(kraft_view.PER_BROKER) <= set(VARIABLES)


def test_view_registry_finds_the_model_view_and_falls_back_to_generic(lrs):
    from checker.search.registry import build
    model, _ = lrs
    assert view_class(model) is kraft_view.KraftView
    assert isinstance(view_for(model), kraft_view.KraftView)
    diehard, _ = build("diehard", None, {})
    assert view_class(diehard) is TraceView
    assert type(view_for(diehard)) is TraceView


def test_kraft_text_names_actions_changes_and_the_lost_record(lrs):
    model, trace = lrs
    text = view_for(model).text(PROP, trace)
    assert text.startswith(f"Invariant {PROP} is violated after 7 steps.")
    assert "broker 1 (leader epoch 3), is RUNNING but its LEO 1 is below the true HWM 2" in text
    assert "lacks the committed record A (offset 1, leader epoch 1)" in text
    steps = re.findall(r"^Step (\d+): (\S+)", text, re.M)
    assert [a for _, a in steps] == [str(a) for a, _ in trace[1:]]
    # only what changed, per broker and by field, messages as sent / received
    assert "partition_data[1]: log [] -> [1:A e1], LEO 1 -> 2" in text
    assert "con_partition_metadata: ISR {1, 2} -> {1}, partition epoch 2 -> 3" in text
    assert "sent: RegisterBrokerRequest 1->controller (incarnation 4)" in text
    assert "received: RegisterBrokerResponse controller->1 (broker epoch 4" in text
    step2 = text.split("Step 2:")[1].split("Step 3:")[0]
    assert "partition_data" not in step2 and "broker_state" not in step2
    assert "State after step 7" in text and "producer: sent {A}, acked {}, nacked {A}; true HWM 2" in text


def test_itf_follows_adr_015(lrs):
    model, trace = lrs
    view = view_for(model)
    obj = itf.trace_itf(trace, model.variables, view.itf_variable, {"source": "x"})
    assert itf.validate(obj) == []
    assert obj["#meta"]["format"] == "ITF" and obj["vars"] == list(model.variables)
    assert [s["#meta"]["index"] for s in obj["states"]] == list(range(8))
    s0 = obj["states"][0]
    assert s0["con_unfenced"] == {"#set": [{"#bigint": "1"}, {"#bigint": "2"}]}
    # functions over brokers are maps, records objects, model values strings, Nil "Nil"
    pd = s0["partition_data"]["#map"]
    assert [k for k, _ in pd] == [{"#bigint": "1"}, {"#bigint": "2"}, {"#bigint": "3"}]
    assert pd[0][1] == {"log": [], "hwm": {"#bigint": "1"}, "leo": {"#bigint": "1"}}
    assert s0["partition_status"]["#map"][0][1] == "Leader"
    assert s0["partition_leso"]["#map"][1][1] == "Nil"
    fetchers = s0["broker_fetchers"]["#map"][1][1]["#map"]  # broker 2's row: a map of maps
    assert fetchers[0][1]["partition"]["fetch_offset"] == {"#bigint": "1"}
    # v3.5 has no ELR fields; NoLeader and Controller are model values
    assert "elr" not in s0["con_partition_metadata"]
    assert obj["states"][4]["con_partition_metadata"]["leader"] == "NoLeader"
    (req,) = obj["states"][5]["messages"]["#set"]
    assert req["dest"] == "Controller" and req["type"] == "RegisterBrokerRequest"
    assert "broker_epoch" not in req  # v3.5's request has no such field (absent, not Nil)
    json.dumps(obj)  # plain JSON


def test_itf_validate_catches_malformed_traces():
    assert itf.validate({"vars": ["x"], "states": [{"#meta": {"index": 0}}]}) == ["states[0] lacks x"]
    bad = {"vars": ["x"], "states": [{"#meta": {"index": 1}, "x": {"#set": 3}}]}
    assert len(itf.validate(bad)) == 2
    assert itf.validate({"vars": ["x"], "states": [{"#meta": {"index": 0}, "x": {"#bigint": "1x"}}]})


def test_the_page_is_self_contained_with_lanes_steps_and_the_violation(lrs):
    from checker.output.trace_html import trace_page
    model, trace = lrs
    page = trace_page(view_for(model), PROP, trace, {"spec": str(LRS)})
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # no external resource
    assert "<link" not in page and "@import" not in page
    assert len(re.findall(r'<tr class="step', page)) == 8
    assert 'class="step violation" id="step-7"' in page
    data = json.loads(re.search(r'<script type="application/json" id="kmc-data">(.*?)</script>',
                                page, re.S).group(1))
    assert data["lanes"] == ["Controller", "Broker 1", "Broker 2", "Broker 3"]
    # two messages: the registration request (broker 1 -> controller, sent in step 5,
    # received in step 6) and its response (received in step 7); broker 1 reads the
    # metadata log in step 3 (an arrow from the controller, sent and read in the step)
    assert [(a["src"], a["dst"], a["sent"], a["end"], a["fate"]) for a in data["arrows"]] == [
        (1, 0, 5, 6, "received"), (0, 1, 6, 7, "received"), (0, 1, 3, 3, "received")]
    assert data["actors"] == [None, 1, 0, 1, 1, 1, 0, 1]
    assert "lacks the committed record A" in page
    assert 'class="cell changed bad"' in page or 'class="cell bad"' in page


def test_dropped_and_in_flight_messages_are_classified():
    view = view_for(load_spec(LRS).build()[0])
    from model.base import Action
    from model.kraft.messages import CONTROLLER, FetchRequest, FetchRequestPartition
    from model.kraft.state import MsgType
    m = FetchRequest(MsgType.FetchRequest, 2, FetchRequestPartition(1, 1, 0), 1, 2)
    assert view.fate(Action("ReceiveFetchRequest", (1,)), m) == "received"
    assert view.fate(Action("UncleanShutdown", (1,)), m) == "dropped"
    assert view.message_lanes(m) == (2, 1) and CONTROLLER == 0


def test_generic_view_on_a_toy_model(diehard_run, kmc):
    result = kmc("trace", "show", diehard_run)
    assert result.exit_code == 0, result.output
    assert "Invariant NotSolved is violated after 6 steps." in result.stdout
    assert "Step 6: BigToSmall" in result.stdout and "big = 4" in result.stdout
    page = (diehard_run / "trace-NotSolved.html").read_text()
    assert len(re.findall(r'<tr class="step', page)) == 7 and '"lanes":[]' in page
    obj = json.loads((diehard_run / "trace-NotSolved.itf.json").read_text())
    assert itf.validate(obj) == [] and obj["states"][-1]["big"] == {"#bigint": "4"}


def test_a_violation_run_writes_every_format_and_a_report(lrs_run):
    summary = json.loads((lrs_run / "summary.json").read_text())
    assert "render_errors" not in summary and summary["report"] == "report.html"
    for v in summary["violations"]:
        for key in ("trace_json", "trace_text", "trace_itf", "trace_html"):
            assert (lrs_run / v[key]).is_file(), v[key]
    text = (lrs_run / f"trace-{PROP}.txt").read_text()
    assert "lacks the committed record A" in text
    assert not [p for p in lrs_run.iterdir() if p.name.startswith(".")]  # no temp file left


def test_trace_commands_rebuild_the_states(lrs_run, kmc, tmp_path):
    run = open_run(lrs_run)
    trace = load_trace(lrs_run / f"trace-{PROP}.json", run.model)
    assert len(trace) == 8 and trace[0][0] is None and str(trace[-1][0]) == "ReceiveBrokerRegResponse(1)"
    assert type(trace[-1][1]).__name__ == "KraftState"

    shown = kmc("trace", "show", lrs_run, "--property", PROP)
    assert shown.exit_code == 0 and shown.stdout == (lrs_run / f"trace-{PROP}.txt").read_text()
    itf_out = kmc("trace", "itf", lrs_run.parent, "-p", PROP)  # a spec folder: its newest run
    assert itf_out.exit_code == 0
    assert json.loads(itf_out.stdout) == json.loads((lrs_run / f"trace-{PROP}.itf.json").read_text())
    page = tmp_path / "page.html"
    made = kmc("trace", "html", lrs_run, "-p", PROP, "-o", page)
    assert made.exit_code == 0 and page.read_text() == (lrs_run / f"trace-{PROP}.html").read_text()


def test_trace_json_without_encoded_states_is_replayed(lrs_run, tmp_path):
    obj = json.loads((lrs_run / f"trace-{PROP}.json").read_text())
    for step in obj["steps"]:
        del step["encoded"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(obj))
    run = open_run(lrs_run)
    assert load_trace(old, run.model) == run.trace(PROP)


@pytest.mark.parametrize("args, words", [
    (["trace", "show", "no/such/run"], "run folder not found"),
    (["trace", "show", "LRS", "-p", "Nope"], "no counterexample for 'Nope'"),
    (["trace", "itf", "EMPTY"], "not a run folder"),
])
def test_trace_bad_input_is_one_line_and_exit_2(args, words, kmc, lrs_run, tmp_path):
    args = [str(lrs_run) if a == "LRS" else str(tmp_path) if a == "EMPTY" else a for a in args]
    result = kmc(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and words in result.stderr and "Traceback" not in result.output


def test_trace_of_a_passing_run_is_bad_input(kmc, tmp_path):
    from trace_helpers import TWOPHASE
    assert kmc("check", TWOPHASE, "--out", tmp_path, "-q").exit_code == 0
    result = kmc("trace", "show", tmp_path / "toy-twophase")
    assert result.exit_code == 2 and "violated nothing" in result.stderr


def test_report_has_growth_chart_coverage_and_outcome(lrs_run, kmc, tmp_path):
    report = (lrs_run / "report.html").read_text()
    summary = json.loads((lrs_run / "summary.json").read_text())
    assert "VIOLATION" in report and PROP in report
    assert len(re.findall(r'<rect class="level"', report)) == len(summary["per_level_distinct"])
    # CleanShutdown and PerformPartitionReassignment are off in this spec (limit 0):
    # marked as switched off, not as never enabled
    off = re.findall(r'<tr class="off" data-action="(\w+)"', report)
    assert off == [a for a, g in summary["per_action_generated"].items() if g == 0]
    assert set(off) == {"CleanShutdown", "PerformPartitionReassignment"}
    assert '<tr class="never"' not in report
    assert f'href="trace-{PROP}.html"' in report
    from trace_helpers import TWOPHASE
    assert kmc("check", TWOPHASE, "--out", tmp_path, "-q").exit_code == 0
    (rd,) = list((tmp_path / "toy-twophase").iterdir())
    passed = (rd / "report.html").read_text()
    assert "PASS" in passed and "every reachable state explored" in passed


def test_a_page_says_only_what_its_model_s_view_says(lrs):
    """The page's styles and legend for logs, roles and acknowledged records
    are the kraft view's (model/view.py LOG_CSS): a toy's page, drawn by the
    generic view, has none of them."""
    from checker.output.trace_html import trace_page
    from checker.search.registry import build
    model, trace = lrs
    page = trace_page(view_for(model), PROP, trace)
    assert ".r-Leader{" in page and "acknowledged to the producer" in page
    toy, props = build("diehard", None, {})
    v = check(toy, props).violations[0]
    page = trace_page(view_for(toy), v.property, v.trace)
    for word in ("Leader", "producer", "OFFLINE", "fenced", "broker"):
        assert word not in page, word


def test_a_run_whose_model_cannot_be_rebuilt_says_so(capsys):
    """The traces of a run whose model cannot be rebuilt from its summary get
    the generic view, and the console says why in one line."""
    from checker.output.results import _model_of
    assert _model_of({"config": {"model": "no-such-model"}}) is None
    err = capsys.readouterr().err
    assert err.startswith("kmc: warning: the traces are written with the generic view: the model "
                          "cannot be rebuilt") and err.count("\n") == 1 and "no-such-model" in err


def test_a_view_gets_the_engine_s_set_order_passed(lrs):
    """view_for passes the canonical order (checker.search.encoding.encode)
    to the view it makes; nothing is installed in model.view."""
    from checker.search.encoding import encode
    from model import view as model_view
    model, _ = lrs
    assert view_for(model).order_key is encode
    assert not hasattr(model_view, "use_order_key")
    assert kraft_view.KraftView(model).order_key is model_view.plain_key
    numbers = frozenset({2, 10, 300})
    assert view_for(model).render(numbers) == "{" + ", ".join(
        map(str, sorted(numbers, key=encode))) + "}"
