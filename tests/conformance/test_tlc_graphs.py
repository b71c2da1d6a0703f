"""State by state: our reachable states and transitions are TLC's.

data/graphs holds TLC's complete state graphs of small configurations. The
parser (tla_values) turns TLC's printed values into our state NamedTuples;
then, level by level, our reachable states must be exactly TLC's, and so must
the transitions (from, to, TLC's action label), counted with multiplicity.
The first tests check the parser and the copied data alone.
"""
from __future__ import annotations

from collections import Counter

import pytest

from checker.search.registry import build
from invariants.kraft import kraft_properties
from model.kraft.messages import (
    CONTROLLER,
    AlterPartitionRequest,
    AlterPartitionResponse,
    FetchResponse,
    RegisterBrokerRequest,
)
from model.kraft.state import NO_LEADER, ErrorCode, MsgType, PartitionRecord
from tla_values import (
    MV,
    Fn,
    Rec,
    TLAValueError,
    convert_var,
    diff_levels,
    explore_levels,
    graph_path,
    load_graph,
    message,
    parse_value,
    tlc_label,
)
from tlc_reference import figures_row, graph_names

GRAPHS = graph_names()


@pytest.fixture(scope="module", params=GRAPHS)
def graph(request):
    return load_graph(graph_path(request.param))


# ---- the parser ------------------------------------------------------------

def test_parse_value_notation():
    assert parse_value("<<>>") == ()
    assert parse_value("{}") == frozenset()
    assert parse_value("<<1, -2, TRUE, FALSE>>") == (1, -2, True, False)
    assert parse_value('{"a", A}') == frozenset({"a", "A"})
    v = parse_value("A")
    assert isinstance(v, MV) and v == "A"
    assert not isinstance(parse_value('"A"'), MV)
    r = parse_value("[a |-> <<[b |-> {1, 2}]>>,\n   c |-> Nil]")
    assert isinstance(r, Rec) and r["a"][0]["b"] == frozenset({1, 2}) and r["c"] == "Nil"
    assert parse_value("[c |-> Nil, a |-> 1]") == parse_value("[a |-> 1, c |-> Nil]")
    f = parse_value("(2 :> 5 @@ 3 :> 7)")
    assert isinstance(f, Fn) and dict(f) == {2: 5, 3: 7}
    assert parse_value('"x\\"y"') == 'x"y'


@pytest.mark.parametrize("bad", ["<<1, 2", "[a |-> ]", "{1 2}", "(1 :> 2 @ 3)", "<<1>> 2", "#"])
def test_parse_value_rejects_malformed_text(bad):
    with pytest.raises(TLAValueError):
        parse_value(bad)


def test_messages_convert_to_our_records():
    req = message(parse_value(
        "[type |-> AlterPartitionRequest, isr |-> {2, 3}, isr_and_epochs |-> (2 :> 0 @@ 3 :> 7), "
        "leader |-> 2, leader_epoch |-> 2, partition_epoch |-> 3, broker_epoch |-> 5, "
        "source |-> 2, dest |-> Controller]"))
    assert req == AlterPartitionRequest(MsgType.AlterPartitionRequest, frozenset({2, 3}),
                                        ((2, 0), (3, 7)), 2, 2, 3, 5, 2, CONTROLLER)
    # a function of 1..n prints as a sequence
    req1 = message(parse_value(
        "[type |-> AlterPartitionRequest, isr |-> {1, 2}, isr_and_epochs |-> <<4, 0>>, "
        "leader |-> 1, leader_epoch |-> 1, partition_epoch |-> 1, broker_epoch |-> 4, "
        "source |-> 1, dest |-> Controller]"))
    assert req1.isr_and_epochs == ((1, 4), (2, 0))
    # a rejection has no replicas / isr / leader / epochs
    rej = message(parse_value(
        "[type |-> AlterPartitionResponse, error |-> FencedLeaderEpoch, request |-> "
        "[type |-> AlterPartitionRequest, isr |-> {2, 3}, isr_and_epochs |-> (2 :> 0 @@ 3 :> 7), "
        "leader |-> 2, leader_epoch |-> 2, partition_epoch |-> 3, broker_epoch |-> 5, "
        "source |-> 2, dest |-> Controller], dest |-> 2, source |-> Controller]"))
    assert rej == AlterPartitionResponse(MsgType.AlterPartitionResponse, ErrorCode.FencedLeaderEpoch,
                                         None, None, None, None, None, req, 2, CONTROLLER)
    # v3_5's registration request has no broker_epoch
    reg = message(parse_value("[type |-> RegisterBrokerRequest, broker_id |-> 2, "
                              "incarnation_id |-> 4, dest |-> Controller, source |-> 2]"))
    assert reg == RegisterBrokerRequest(MsgType.RegisterBrokerRequest, 2, None, 4, CONTROLLER, 2)
    ok = message(parse_value(
        "[type |-> FetchResponse, dest |-> 2, source |-> 1, partition |-> [type |-> FetchResponse, "
        "leader_epoch |-> 1, fetch_offset |-> 1, hwm |-> 1, error |-> Nil, diverging_epoch |-> Nil, "
        "records |-> <<[epoch |-> 1, offset |-> 1, value |-> A]>>]]"))
    assert isinstance(ok, FetchResponse)
    assert ok.partition.records == (PartitionRecord(1, 1, "A"),)
    with pytest.raises(TLAValueError):  # a field our layout has no place for
        message(parse_value("[type |-> RegisterBrokerRequest, broker_id |-> 2, colour |-> 1, "
                            "incarnation_id |-> 4, dest |-> Controller, source |-> 2]"))
    with pytest.raises(TLAValueError):  # an error FetchResponse never carries `type`
        message(parse_value(
            "[type |-> FetchResponse, dest |-> 2, source |-> 1, partition |-> [type |-> FetchResponse, "
            "leader_epoch |-> 1, fetch_offset |-> 1, hwm |-> 1, error |-> FencedLeaderEpoch, "
            "diverging_epoch |-> Nil, records |-> <<>>]]"))


def test_v3_5_records_convert_with_absent_elr_fields():
    md = convert_var("con_partition_metadata", parse_value(
        "[replicas |-> {1, 2}, isr |-> {1}, leader |-> NoLeader, leader_epoch |-> 2, "
        "partition_epoch |-> 3, adding |-> {}, removing |-> {}]"))
    assert md.elr == frozenset() and md.last_known_elr == frozenset() and md.leader == NO_LEADER
    log = convert_var("con_metadata_log", parse_value(
        "<<[type |-> PartitionChangeRecord, replicas |-> {1, 2}, isr |-> {1, 2}, leader |-> 1, "
        "leader_epoch |-> 1, partition_epoch |-> 1]>>"))
    assert log[0].adding is None and log[0].elr == frozenset()
    ctrs = convert_var("aux_ctrs", parse_value(
        "[incarn_ctr |-> 3, clean_shutdown_ctr |-> 0, unclean_shutdown_ctr |-> 1, "
        "fence_broker_ctr |-> 0, leader_shrink_isr_ctr |-> 0, reassignment_ctr |-> 0]"))
    assert type(ctrs).__name__ == "V35Ctrs" and ctrs.unclean_shutdown_ctr == 1


# ---- the copied graphs agree with the copied figures ----------------------

def test_graph_agrees_with_tlc_figures(graph):
    row = figures_row(graph.name)
    assert [len(level) for level in graph.levels()] == row["per_level_distinct"]
    assert len(graph.states) == row["distinct"]
    assert len(graph.transitions) + 1 == row["generated"]  # one initial state
    per_action = Counter(label.split("(")[0] for _, _, label in graph.transitions)
    assert per_action == Counter({k: v for k, v in row["per_action_generated"].items() if v})


def test_invariants_hold_on_every_tlc_state(graph):
    """TLC checked the .cfg invariants on these states and found none
    violated; ours agree, and the validity invariants hold too."""
    row = figures_row(graph.name)

    class Stub:  # the properties need only the variant, constants and the initial state
        name = "kraft"
        variant = row["variant"]
        constants = row["constants"]

        @staticmethod
        def init_states():
            return [s for s, lv in zip(graph.states, graph.level) if lv == 0]

    for p in kraft_properties(Stub):
        if p.kind == "always":
            bad = [i for i, s in enumerate(graph.states) if not p.predicate(s)]
            assert not bad, f"{p.name} is FALSE on TLC states {bad[:5]}"
    assert any(kraft_properties(Stub)[0].predicate(s) for s in graph.states)


# ---- the model against the graphs ------------------------------------------

def _model(graph):
    row = figures_row(graph.name)
    model, _ = build("kraft", row["variant"], row["constants"])
    return model


def test_reachable_states_equal_tlcs_level_by_level(graph):
    model = _model(graph)
    levels, _, _ = explore_levels(model)
    ours = [set(level) for level in levels]
    assert [len(level) for level in ours] == [len(level) for level in graph.levels()], \
        str(diff_levels(model, graph))
    for lv, (o, t) in enumerate(zip(ours, graph.levels())):
        assert o == t, f"level {lv}:\n{diff_levels(model, graph)}"


def test_transitions_equal_tlcs(graph):
    model = _model(graph)
    _, _, transitions = explore_levels(model)
    ours = Counter((f, t, tlc_label(a)) for _, f, t, a in transitions)
    theirs = graph.labelled_transitions()
    assert set(ours) == set(theirs), str(diff_levels(model, graph))
    assert ours == theirs, str(diff_levels(model, graph))  # with multiplicity


def test_diff_levels_reports_agreement(graph):
    assert diff_levels(_model(graph), graph) is None


# ---- diff_levels finds and explains a difference ----------------------------

class _Mutant:
    """The model with its successors edited by `edit(action, state) -> list`."""

    def __init__(self, model, edit):
        self._model = model
        self._edit = edit

    def __getattr__(self, name):
        return getattr(self._model, name)

    def init_states(self):
        return self._model.init_states()

    def successors(self, state):
        out = []
        for a, t in self._model.successors(state):
            out += self._edit(a, t)
        return out


def test_diff_levels_explains_a_missing_action():
    graph = load_graph(graph_path("kip966-b2"))
    mutant = _Mutant(_model(graph), lambda a, t: [] if a.name == "WriteRecordToLeader" else [(a, t)])
    d = diff_levels(mutant, graph)
    assert d is not None and d.kind == "states" and d.level == 1
    assert d.tlc_only and not d.ours_only
    assert "WriteRecordToLeader(1)" in d.text


def test_diff_levels_shows_the_differing_fields():
    graph = load_graph(graph_path("kip966-b2"))

    def edit(a, t):
        if a.name == "SendFetchRequest":
            t = t._replace(aux_broker_epoch=t.aux_broker_epoch + 40)
        return [(a, t)]

    d = diff_levels(_Mutant(_model(graph), edit), graph)
    assert d is not None and d.kind == "states" and d.level == 1
    assert len(d.ours_only) == 1 and len(d.tlc_only) == 1
    assert "aux_broker_epoch: 42 -> 2" in d.text
    assert "SendFetchRequest(2)" in d.text


def test_diff_levels_compares_transitions_with_multiplicity():
    graph = load_graph(graph_path("kip966-b2"))
    twice = _Mutant(_model(graph), lambda a, t: [(a, t)] * (2 if a.name == "ReceiveFetchRequest" else 1))
    d = diff_levels(twice, graph)
    assert d is not None and d.kind == "transitions" and d.ours_only and not d.tlc_only
    relabel = diff_levels(_model(graph), graph, label=lambda a: tlc_label(a).replace("(1)", "(2)"))
    assert relabel is not None and relabel.kind == "transitions"
