"""The kraft_quorum model's trace view (model/kraft_quorum/view.py): a column
per server (role, epoch, leader, vote, configuration, log with its committed
prefix marked), a lane per server with vote, fetch and BeginQuorumEpoch
arrows, a sentence per action, and a headline that says what broke, for real
counterexamples of seeded bugs (model/kraft_quorum/mutants.py) in text, HTML
and ITF.

The Durability counterexample is found by the checker here; the longer ones
(ElectionSafety, LeaderCompleteness: 9 and 10 steps, 5 to 25 s of search) are
the checker's shortest counterexamples replayed step by step through the
model's own successors, each checked to break its invariant in its last
state only."""
from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from checker.output import itf
from checker.output.traces import render
from checker.output.views import view_class, view_for
from checker.search.encoding import encode
from checker.search.engine import CheckOptions, Violation, check
from checker.search.registry import build
from model.base import Action
from model.kraft_quorum.state import Role
from model.kraft_quorum.view import KraftQuorumView

BASE = dict(Hosts=["h1", "h2", "h3"], Value=["v1"], InitClusterSize=3, MinClusterSize=3,
            MaxClusterSize=3, MaxSpawnedServers=3, MaxEpoch=3, TestLiveness=False, MaxRestarts=1,
            MaxPermCrashes=0, MaxAddReconfigs=0, MaxRemoveReconfigs=0, MaxConnectivityChanges=0,
            MaxDisruptiveElectionTriggers=1)
# two voters, a leader that commits alone (hwm_without_majority) and loses its disk
TWO_VOTERS = dict(BASE, Hosts=["h1", "h2"], InitClusterSize=2, MinClusterSize=2, MaxClusterSize=2,
                  MaxSpawnedServers=2, MaxRestarts=0, MaxPermCrashes=1,
                  MaxDisruptiveElectionTriggers=0, Mutants=["hwm_without_majority"])

# s1 votes for s2 although its log holds the committed v1 (vote_without_log_check)
LEADER_COMPLETENESS = (
    "kip853", dict(BASE, MaxRestarts=0, MaxEpoch=2, Mutants=["vote_without_log_check"]),
    [("HandleClientRequest", 1), ("VoterFetchTimeout", 2), ("SendFetchRequest", 3, 1),
     ("AcceptFetchRequest", 1, 3), ("HandleFetchResponse", 3, 1), ("SendFetchRequest", 3, 1),
     ("AcceptFetchRequest", 1, 3), ("HandleVoteRequest", 1, 2), ("HandleVoteResponse", 2, 1),
     ("BecomeLeader", 2)])
# s1 votes for s3, restarts without its vote (restart_forgets_vote), votes for s2
ELECTION_SAFETY = (
    "kip853", dict(BASE, MaxEpoch=2, MaxDisruptiveElectionTriggers=2, MaxValuesPerEpoch=0,
                   Mutants=["restart_forgets_vote"]),
    [("VoterFetchTimeout", 2), ("VoterFetchTimeout", 3), ("HandleVoteRequest", 1, 3),
     ("RestartWithState", 1), ("HandleVoteRequest", 1, 2), ("HandleVoteResponse", 2, 1),
     ("BecomeLeader", 2), ("HandleVoteResponse", 3, 1), ("BecomeLeader", 3)])
# a pre-vote won (s3 restarted, so it has not fetched from its leader) and an election
PRE_VOTE = (
    "kip996", BASE,
    [("RestartWithState", 3), ("VoterFetchTimeout", 2), ("HandleVoteRequest", 3, 2),
     ("HandleVoteRequest", 1, 2), ("HandleVoteResponse", 2, 1), ("HandleVoteResponse", 2, 3),
     ("ConcludePreVote", 2), ("HandleVoteRequest", 3, 2), ("HandleVoteResponse", 2, 3),
     ("BecomeLeader", 2), ("AcceptBeginQuorumRequest", 3, 2)])


def _cut_s1_s2(t) -> bool:
    return t.net_connectivity == frozenset({(1, 3), (2, 3)})


def _all_connected(t) -> bool:
    return len(t.net_connectivity) == 3


# a new leader whose BeginQuorumEpoch to the old one is lost and resent; the old
# leader's uncommitted v1 is truncated on a Diverging answer; a fetch to a
# follower is rejected
TOUR = (
    "kip853", dict(BASE, MaxConnectivityChanges=2),
    [("HandleClientRequest", 1), ("VoterFetchTimeout", 2), ("HandleVoteRequest", 3, 2),
     ("HandleVoteResponse", 2, 3), ("ChangeNetworkConnectivity", _cut_s1_s2), ("BecomeLeader", 2),
     ("ChangeNetworkConnectivity", _all_connected), ("ResendBeginQuorumEpochRequest", 2, 1),
     ("AcceptBeginQuorumRequest", 1, 2), ("SendFetchRequest", 1, 2), ("DivergingFetchRequest", 2, 1),
     ("HandleFetchResponse", 1, 2), ("SendFetchRequest", 1, 2), ("AcceptFetchRequest", 2, 1),
     ("HandleFetchResponse", 1, 2), ("SendFetchRequest", 1, 2), ("AcceptFetchRequest", 2, 1),
     ("SendFetchRequest", 3, 1), ("RejectFetchRequest", 1, 3), ("HandleFetchResponse", 3, 1)])
# storage: a server started later and added as a voter, a power loss before a flush
GROWTH = (
    "kip996", dict(BASE, Hosts=["h1", "h2", "h3", "h4"], MaxClusterSize=4, MaxSpawnedServers=4,
                   MaxAddReconfigs=1, MaxPowerLosses=1),
    [("StartNewServer", lambda t: t.server_ids[-1].host == "h1"), ("AcceptAddVoterRequest", 1),
     ("FlushLog", 1), ("HandleClientRequest", 1), ("PowerLoss", 1), ("AcceptBeginQuorumRequest", 4, 1)])
# a server started later, added, and the leader removing itself (it resigns once that commits)
RECONFIG = (
    "kip853", dict(BASE, Hosts=["h1", "h2", "h3", "h4"], MaxClusterSize=4, MaxSpawnedServers=4,
                   MaxAddReconfigs=1, MaxRemoveReconfigs=1),
    [("StartNewServer", lambda t: t.server_ids[-1].host == "h4"), ("AcceptAddVoterRequest", 1)]
    + [x for f in (2, 3) for x in (("SendFetchRequest", f, 1), ("AcceptFetchRequest", 1, f),
                                    ("HandleFetchResponse", f, 1))]
    + [("SendFetchRequest", 2, 1), ("AcceptFetchRequest", 1, 2), ("SendFetchRequest", 3, 1),
       ("AcceptFetchRequest", 1, 3),  # a majority of {s1,s2,s3,s4} holds AddVoter s4: committed
       ("AcceptRemoveVoterRequest", 1, lambda t: t.log[0][-1].value.server == 1)]
    + [x for f in (2, 3) for x in (("HandleFetchResponse", f, 1), ("SendFetchRequest", f, 1),
                                    ("AcceptFetchRequest", 1, f))] * 2)
# a forbidden transition: a pre-vote in the next epoch keeps the old leader (pre_vote_bumps_epoch),
# which then hears that it leads that epoch
ILLEGAL = (
    "kip996", dict(BASE, Mutants=["pre_vote_bumps_epoch"]),
    [("RestartWithState", 1), ("ResignedElectionTimeout", 1), ("VoterFetchTimeout", 3),
     ("SendFetchRequest", 1, 3), ("RejectFetchRequest", 3, 1), ("HandleFetchResponse", 1, 3)])


def replay(scenario):
    """(model, props, trace): the steps followed through the model's successors;
    a step may end with a predicate choosing among an action's successors."""
    variant, constants, steps = scenario
    model, props = build("kraft_quorum", variant, constants)
    st = model.init_states()[0]
    trace = [(None, st)]
    for step in steps:
        name, *params = step
        pick = params.pop() if params and callable(params[-1]) else None
        action = model.act(name, *params) if params else model.act0(name)
        succ = {t for t in model.successors_of(st, action) if pick is None or pick(t)}
        assert len(succ) == 1, f"{step}: {len(succ)} successors"
        (st,) = succ
        trace.append((action, st))
    return model, props, trace


def counterexample(scenario, prop: str):
    """A replayed trace that breaks `prop` in its last state and only there."""
    model, props, trace = replay(scenario)
    (p,) = [p for p in props if p.name == prop]
    assert [p.predicate(s) for _, s in trace] == [True] * (len(trace) - 1) + [False]
    return model, Violation(prop, len(trace) - 1, trace)


def rendered(model, v) -> dict:
    files, errors = render(view_for(model), v, None)
    assert errors == [] and set(files) == {"text", "json", "itf", "html"}
    assert itf.validate(json.loads(files["itf"])) == []
    return files


def page_data(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="kmc-data">(.*?)</script>',
                                page, re.S).group(1))


@pytest.fixture(scope="module")
def durability():
    model, props = build("kraft_quorum", "kip996", TWO_VOTERS)
    result = check(model, props, CheckOptions(max_depth=6))
    (v,) = [v for v in result.violations if v.property == "Durability"]
    return model, v


@pytest.fixture(scope="module")
def leader_completeness():
    return counterexample(LEADER_COMPLETENESS, "LeaderCompleteness")


@pytest.fixture(scope="module")
def election_safety():
    return counterexample(ELECTION_SAFETY, "ElectionSafety")


def test_the_model_has_its_own_view(durability):
    model, _ = durability
    view = view_for(model)
    assert view_class(model) is KraftQuorumView and isinstance(view, KraftQuorumView)
    assert view.columns() == ["s1", "s2", "network / clients"]
    assert view.lanes() == ["s1", "s2", "clients / admin"]
    assert view.property_doc("Durability")  # the engine filled the docs from invariants/


def test_durability_names_the_value_its_offset_and_the_crash_that_took_the_last_copy(durability):
    model, v = durability
    assert [str(a) for a, _ in v.trace[1:]] == [
        "HandleClientRequest(1)", "SendFetchRequest(2, 1)", "AcceptFetchRequest(1, 2)",
        "CrashLoseState(1)"]
    why = view_for(model).explain("Durability", v.trace)
    assert why.text.startswith("v1 was acknowledged (committed at offset 2, epoch 1 by leader s1, "
                               "step 3) and is now on no voter: s1 lost its disk; s2's log "
                               "[1:InitCluster {s1,s2} e1] lacks it.")
    assert "step 4, CrashLoseState(s1), took the last copy on a voter (s1 crashed and lost its disk)" \
        in why.text
    assert why.broke_at == 4 and why.columns == {0, 1}
    files = rendered(model, v)
    text = files["text"]
    assert text.startswith("Invariant Durability is violated after 4 steps.\nv1 was acknowledged")
    assert ("Step 3: AcceptFetchRequest(s1, s2) - s1 accepts s2's fetch at offset 2; HWM 1 -> 2, "
            "acknowledging v1; sends 2:v1 e1") in text
    assert "  s1: log + 2:v1 e1; pending acks {} -> {v1}" in text
    assert "  dropped: FetchResp s1 -> s2 (Ok, entries [2:v1 e1], HWM 2" in text
    assert "  s1: Leader -> DeadNoState: its log [1:InitCluster {s1,s2} e1, 2:v1 e1], epoch" in text
    assert "  network: s1-s2 cut\n" in text  # a crash cuts its links; no network change counted
    assert "<<" not in text and "Entry(" not in text  # no raw values
    assert "v1 was acknowledged (committed at offset 2" in files["html"]


def test_leader_completeness_names_the_leader_the_value_and_the_election(leader_completeness):
    model, v = leader_completeness
    why = view_for(model).explain("LeaderCompleteness", v.trace)
    assert why.text.startswith(
        "The current leader s2 (epoch 2) lacks the acknowledged v1 (offset 2, epoch 1; still on "
        "s1, s3). Its log: [1:InitCluster {s1,s2,s3} e1, 2:LeaderChange e2]. It was elected with the "
        "votes of s1, s2, though s1 held v1.")
    assert why.broke_at == 10 and why.columns == {0, 1}
    assert why.broke_how == ("step 10, BecomeLeader(s2), made s2 leader (leader epoch 2) without "
                             "the acknowledged v1")
    text = rendered(model, v)["text"]
    assert ("Step 8: HandleVoteRequest(s1, s2) - s1 grants s2 its vote in epoch 2 although its own "
            "log is ahead (last entry e1@2, the candidate's e1@1); it becomes Unattached in epoch 2") \
        in text
    assert "Step 10: BecomeLeader(s2) - s2 wins the election: leader of epoch 2 (votes {s1,s2})" in text
    assert "  s2: Candidate -> Leader; leader none -> s2;" in text


def test_election_safety_names_both_leaders_and_the_second_vote(election_safety):
    model, v = election_safety
    why = view_for(model).explain("ElectionSafety", v.trace)
    assert why.text == (
        "Two leaders in epoch 2: s2 and s3 each lead it. s1 voted twice in epoch 2: for s3 at "
        "step 3 and for s2 at step 5, having forgotten its first vote at step 4, "
        "RestartWithState(s1). The promise broke at step 5, HandleVoteRequest(s1, s2), where s1 "
        "voted a second time in epoch 2.")
    assert why.broke_at == 5 and why.columns == {0, 1, 2}
    files = rendered(model, v)
    assert ("Step 4: RestartWithState(s1) - s1 restarts and keeps its disk (log, epoch, vote); "
            "HWM 1 -> 0 (the HWM lives in memory); it has forgotten its vote for s3") in files["text"]
    assert 'class="step broke" id="step-5"' in files["html"]
    assert "The promise broke at step 5, HandleVoteRequest(s1, s2)" in files["html"]


def test_the_itf_maps_per_server_variables_over_server_ids(leader_completeness):
    model, v = leader_completeness
    obj = json.loads(rendered(model, v)["itf"])
    s0, last = obj["states"][0], obj["states"][-1]
    one, two, three = ({"#bigint": str(i)} for i in (1, 2, 3))
    assert [k for k, _ in s0["state"]["#map"]] == [one, two, three]
    assert [x for _, x in s0["state"]["#map"]] == ["Leader", "Follower", "Follower"]
    assert s0["voted_for"]["#map"][0][1] == "Nil"
    assert s0["flwr_end_offset"]["#map"][0][1] == {"#map": [[one, one], [two, one], [three, one]]}
    first = s0["log"]["#map"][0][1][0]
    assert first == {"command": "InitClusterCommand", "epoch": one,
                     "value": {"id": one, "members": {"#set": [one, two, three]}}}
    assert last["log"]["#map"][1][1][1]["value"] == "Nil"  # s2's LeaderChangeRecord
    begin = [m for m in last["net_messages"]["#set"] if m["type"] == "BeginQuorumEpochRequest"]
    assert begin and all(m["resend"] is False for m in begin)
    fetch_resp = [m for m in last["net_messages"]["#set"] if m["type"] == "FetchResponse"]
    assert fetch_resp and "diverging_epoch" not in fetch_resp[0]  # an Ok response has none
    assert last["inv_pos_acked"] == {"#set": ["v1"]}


def test_arrows_for_votes_fetches_and_begin_quorum_epoch_on_the_right_lanes(leader_completeness):
    model, v = leader_completeness
    view = view_for(model)
    arrows = {(a.kind, a.short, a.src, a.dst, a.sent, a.end, a.fate) for a in view.arrows(v.trace)}
    # lanes: s1 = 0, s2 = 1, s3 = 2, clients = 3
    assert ("Vote", "Vote e2", 1, 0, 2, 8, "received") in arrows
    assert ("Vote", "Vote e2", 1, 2, 2, None, "in flight") in arrows
    assert ("VoteResp", "VoteResp granted", 0, 1, 8, 9, "received") in arrows
    assert ("Fetch", "Fetch @2 e1", 2, 0, 3, 4, "received") in arrows
    assert ("FetchResp", "FetchResp Ok 1 entry HWM 1", 0, 2, 4, 5, "received") in arrows
    assert ("FetchResp", "FetchResp Ok 0 entries HWM 2", 0, 2, 7, None, "in flight") in arrows
    assert ("BeginQuorumEpoch", "BeginQuorumEpoch e2", 1, 0, 10, None, "in flight") in arrows
    assert ("ClientWrite", "write v1", 3, 0, 1, 1, "received") in arrows
    assert ("ClientAck", "ack v1", 0, 3, 7, 7, "received") in arrows
    assert {a[0] for a in arrows} <= set(view.kind_colors)
    assert [view.actor_lane(a) for a, _ in v.trace[1:]] == [0, 1, 2, 0, 2, 2, 0, 0, 1, 1]
    data = page_data(rendered(model, v)["html"])
    assert data["lanes"] == ["s1", "s2", "s3", "clients / admin"]
    assert len(data["arrows"]) == len(arrows)


def test_pre_votes_read_as_the_protocol_says():
    model, _, trace = replay(PRE_VOTE)
    view = view_for(model)
    said = [view.describe(a, trace[i - 1][1], s) for i, (a, s) in enumerate(trace) if i]
    assert said[1] == ("s2's fetch times out: it becomes Prospective in epoch 1 and asks s1, s3 for "
                       "pre-votes; a disruptive trigger: nothing made it time out")
    assert said[2] == "s3 grants s2 its pre-vote"
    assert said[3] == "s1 refuses s2 its pre-vote (it is Leader)"
    assert said[5] == "s2 counts s3's pre-vote: votes {s2,s3} - a majority"
    assert said[6] == ("s2 wins the pre-vote (granted by {s2,s3}): it becomes Candidate in epoch 2 "
                       "and asks s1, s3 for votes")
    assert said[9].startswith("s2 wins the election: leader of epoch 2 (votes {s2,s3}); it appends "
                              "2:LeaderChange e2 and sends BeginQuorumEpoch to s1, s3")
    assert said[10] == "s3 learns that s2 leads epoch 2: it becomes Follower of s2 in epoch 2"
    arrows = {(a.kind, a.short, a.src, a.dst, a.sent, a.end, a.fate) for a in view.arrows(trace)}
    assert ("PreVote", "PreVote e1", 1, 2, 2, 3, "received") in arrows
    assert ("PreVoteResp", "PreVoteResp refused", 0, 1, 4, 5, "received") in arrows
    assert ("BeginQuorumEpoch", "BeginQuorumEpoch e2", 1, 2, 10, 11, "received") in arrows


def test_truncation_resend_and_rejection_read_as_the_protocol_says():
    model, _, trace = replay(TOUR)
    view = view_for(model)
    said = {i: view.describe(a, trace[i - 1][1], s) for i, (a, s) in enumerate(trace) if i}
    assert said[5] == ("the network changes: s1-s2 cut; 1 message in flight between them dropped")
    assert said[6].endswith("sends BeginQuorumEpoch to s1, s3 (the one to s1 is lost: not connected)")
    assert said[8] == "leader s2 resends BeginQuorumEpoch e2 to s1 (the first was lost)"
    assert said[9] == ("s1 learns that s2 leads epoch 2: it becomes Follower of s2 in epoch 2; the "
                       "pending write v1 fails")
    assert said[11].startswith("s2 answers s1's fetch at offset 3 (last fetched epoch 1) with "
                               "Diverging e1@2")
    assert said[12] == "s1 truncates its log to offset 1 on s2's Diverging e1@2 (drops 2:v1 e1)"
    assert said[19] == "s1 rejects s3's fetch: NotLeader (it is Follower, not the leader)"
    assert said[20] == "s3 handles s1's NotLeader; it becomes Follower of s2 in epoch 2"
    arrows = {(a.short, a.src, a.dst, a.sent, a.end, a.fate) for a in view.arrows(trace)}
    assert ("Vote e2", 1, 0, 2, 5, "dropped") in arrows  # dropped by the network change
    assert ("Diverging e1@2", 1, 0, 11, 12, "received") in arrows
    assert ("NotLeader", 0, 2, 19, 20, "received") in arrows
    assert ("fail v1", 0, 3, 9, 9, "received") in arrows
    text = view.text("LogMatching", trace)
    assert "  s1: log truncated to offset 1 (drops 2:v1 e1)" in text
    assert "  network: s1-s2 cut (network change 1)" in text


def test_servers_started_later_and_storage_show_in_every_form():
    model, props, trace = replay(GROWTH)
    view = view_for(model)
    said = [view.describe(a, trace[i - 1][1], s) for i, (a, s) in enumerate(trace) if i]
    assert said[0] == ("s4 (h1, disk 1) starts with an empty disk, an observer of configuration "
                       "#1 {s1,s2,s3} committed, and sends its first fetch to leader s1")
    assert said[1] == ("leader s1 adds s4 as a voter: it appends 2:AddVoter s4 e1 and switches to "
                       "configuration #2 {s1,s2,s3,s4} uncommitted, and sends s4 BeginQuorumEpoch e1")
    assert said[2] == "s1 flushes its log to disk: flushed offset 1 -> 2"
    assert said[4] == ("s1 loses power: its log falls back to the flushed offset 2 (loses 3:v1 e1); "
                       "it restarts as Resigned; the pending write v1 fails")
    cells0, cells1 = view.cells(None, trace[0][1]), view.cells(trace[0][1], trace[1][1])
    assert len(cells0) == len(view.columns()) == 5
    assert "not started" in cells0[3][0] and cells0[3][1] is False
    assert "h1, disk 1" in cells1[3][0] and cells1[3][1] is True and "observer" in cells1[3][0]
    # the committed prefix is marked; the appended entry is marked as changed
    cell = view.cells(trace[1][1], trace[2][1])[0][0]
    assert 'class="rec acked" title="offset 1, InitCluster {s1,s2,s3}, epoch 1, committed' in cell
    assert '<span class="rec chg" title="offset 2, AddVoter s4, epoch 1"' in cell
    assert "flushed" in cell
    text = view.text("Durability", trace)
    assert "s4 (h1, disk 1): Follower in epoch 1 (observer), leader s1" in text
    assert "  s4: starts on h1, disk 1: Unattached in epoch 0 (observer)" in text
    obj = itf.trace_itf(trace, model.variables, view.itf_variable, {})
    assert itf.validate(obj) == []
    assert len(obj["states"][0]["log"]["#map"]) == 3 and len(obj["states"][1]["log"]["#map"]) == 4
    add = obj["states"][2]["log"]["#map"][0][1][1]
    assert add["command"] == "AddVoterCommand" and add["value"]["new"] == {"#bigint": "4"}
    assert obj["states"][1]["server_ids"]["#map"][3][1] == {"host": "h1", "disk_id": {"#bigint": "1"}}
    files, errors = render(view, Violation("Durability", len(trace) - 1, trace), None)
    assert errors == []


def test_reconfigurations_read_as_the_protocol_says():
    model, _, trace = replay(RECONFIG)
    view = view_for(model)
    said = [view.describe(a, trace[i - 1][1], s) for i, (a, s) in enumerate(trace) if i]
    assert said[4] == ("s2 appends 2:AddVoter s4 e1 from s1; configuration #2 {s1,s2,s3,s4} "
                       "uncommitted")
    assert said[11] == ("s1 accepts s3's fetch at offset 3; HWM 1 -> 2; configuration #2 "
                        "{s1,s2,s3,s4} committed")
    assert said[12] == ("leader s1 removes s1: it appends 3:RemoveVoter s1 e1 and switches to "
                        "configuration #3 {s2,s3,s4} uncommitted (it leads as an observer until the "
                        "command commits)")
    assert said[-1] == ("s1 accepts s3's fetch at offset 4; configuration #3 {s2,s3,s4} committed; "
                        "it commits its own removal (3:RemoveVoter s1 e1) and resigns")
    last = view.summary_lines(trace[-1][1])
    assert last[0].startswith("s1 (h1): Resigned in epoch 1 (observer), leader s1")
    assert last[3].startswith("s4 (h4, disk 1): Unattached in epoch 0 (observer)")
    arrows = {(a.kind, a.short, a.src, a.dst, a.sent, a.end) for a in view.arrows(trace)}
    assert ("Admin", "RemoveVoter s1", 4, 0, 13, 13) in arrows
    assert ("Fetch", "Fetch @0 e0 observer", 3, 0, 1, None) in arrows


def test_no_illegal_state_names_the_server_and_the_message_it_handled():
    model, v = counterexample(ILLEGAL, "NoIllegalState")
    why = view_for(model).explain("NoIllegalState", v.trace)
    assert why.text == (
        "s1 took a transition the protocol forbids at step 6, HandleFetchResponse(s1, s3): it was "
        "Unattached in epoch 2 (leader none, voted for none) when it received FetchResp s3 -> s1 "
        "(NotOk, error NotLeader, HWM 1, leader s1, epoch 2, answers Fetch @2 e2), which names s1 "
        "itself as the leader of epoch 2.")
    assert why.broke_at == 6 and why.columns == {0}
    rendered(model, v)


def test_valid_roles_log_matching_name_the_conjunct_and_the_offset():
    model, props = build("kraft_quorum", "kip996", BASE)
    view = view_for(model)
    s0 = model.init_states()[0]
    bad = s0._replace(state=(Role.Leader, Role.Unattached, Role.Follower),
                      votes_recv=(frozenset(), frozenset(), frozenset({3})))
    why = view.explain("ValidRolesAndStates", [(None, s0), (Action("X", (2,)), bad)])
    assert why.text == ("s2 is Unattached yet knows leader s1; s3 is Follower yet holds votes {s3} "
                        "(only a Prospective or Candidate server does).")
    assert why.columns == {1, 2}
    first = s0.log[0][0]
    other = first._replace(epoch=2)
    split = s0._replace(log=((first,), (other,), (first,)))
    why = view.explain("LogMatching", [(None, split)])
    assert why.text == ("s1 and s2 disagree at offset 1, below both high watermarks (HWM 1 and 1): "
                        "s1 has 1:InitCluster {s1,s2,s3} e1, s2 has 1:InitCluster {s1,s2,s3} e2.")
    assert why.columns == {0, 1}


def _walk(model, rng, depth: int):
    """A random behaviour, the same whatever the hash seed (successors in canonical order)."""
    st = model.init_states()[0]
    trace = [(None, st)]
    for _ in range(depth):
        succ = sorted(set(model.successors(st)), key=lambda x: (str(x[0]), encode(x[1])))
        if not succ:
            break
        trace.append(rng.choice(succ))
        st = trace[-1][1]
    return trace


WALKS = (  # variant, constants: every action of Next, and those beyond the reference
    ("kip996", dict(BASE, Hosts=["h1", "h2", "h3", "h4"], MaxClusterSize=4, MaxSpawnedServers=4,
                    MaxPermCrashes=1, MaxAddReconfigs=1, MaxRemoveReconfigs=1, Value=["v1", "v2"],
                    MaxDisruptiveElectionTriggers=2, MaxPowerLosses=1, VoterFlush="lazy")),
    ("kip853", dict(BASE, MaxPermCrashes=1, MaxConnectivityChanges=1, MaxDisruptiveElectionTriggers=2,
                    VoterIdentity="node_id")),
)


def test_every_action_has_its_sentence_on_real_steps():
    seen = set()
    for variant, constants in WALKS:
        model, _ = build("kraft_quorum", variant, constants)
        view = view_for(model)
        assert all(hasattr(view, "_d_" + name) for name in model.action_names)
        rng = random.Random(7)
        for _ in range(40):
            trace = _walk(model, rng, 25)
            for i in range(1, len(trace)):
                (action, st), prev = trace[i], trace[i - 1][1]
                said = view.describe(action, prev, st)
                assert said and said[0].islower() and "None" not in said, (action, said)
                assert view.step_lines(prev, st, action)
                assert len(view.cells(prev, st)) == len(view.columns())
                seen.add((variant, action.name))
            if len(trace) > 1:
                assert itf.validate(itf.trace_itf(trace, model.variables, view.itf_variable, {})) == []
                view.text("Durability", trace)
    names = {n for _, n in seen}
    assert {"PowerLoss", "FlushLog", "StartNewServer", "AcceptAddVoterRequest", "CrashLoseState",
            "ConcludePreVote", "RestartAfterDiskLoss", "ChangeNetworkConnectivity",
            "CheckQuorumResign", "HandleFetchResponse", "ResignedElectionTimeout"} <= names
    assert ("kip853", "ConcludePreVote") not in seen
    assert ("kip853", "VoterFetchTimeout") in seen


def test_kmc_check_and_trace_show_use_the_view(tmp_path):
    spec = tmp_path / "quorum-durability.toml"
    consts = "\n".join(f"{k} = {json.dumps(v)}" for k, v in TWO_VOTERS.items())
    spec.write_text(f'model = "kraft_quorum"\nvariant = "kip996"\ndepth = 6\n'
                    f'invariants = ["Durability"]\n\n[constants]\n{consts}\n')
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["check", str(spec), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    (run,) = [p for p in out.glob("*/*") if p.is_dir()]
    text = (run / "trace-Durability.txt").read_text()
    assert "v1 was acknowledged (committed at offset 2, epoch 1 by leader s1, step 3)" in text
    shown = CliRunner().invoke(cli, ["trace", "show", str(run)])
    assert shown.exit_code == 0, shown.output
    assert "Step 4: CrashLoseState(s1) - s1 crashes and loses its disk for good" in shown.output
