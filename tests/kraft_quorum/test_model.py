"""The kraft_quorum model beyond conformance: its defaults are the reference
.cfg's, the kip853 variant has no pre-vote, the storage refinement holds a
server with unflushed appends back as Kafka's raft thread does, and states
survive the engine's plain form."""
from __future__ import annotations

from checker.search.engine import CheckOptions, check
from checker.search.registry import build
from model.kraft_quorum.config import REFERENCE_CONSTANTS
from model.kraft_quorum.state import MsgType, Role

# kraft/kip_996/kraft_kip_996.cfg at 823615e, in kmc's spelling
REFERENCE_CFG = {
    "TestLiveness": True, "MaxEpoch": 3, "MaxRestarts": 1, "MaxPermCrashes": 1,
    "MaxValuesPerEpoch": 1, "MaxAddReconfigs": 2, "MaxRemoveReconfigs": 2,
    "MaxConnectivityChanges": 2, "MaxDisruptiveElectionTriggers": 2, "MaxSpawnedServers": 5,
    "InitClusterSize": 3, "MinClusterSize": 3, "MaxClusterSize": 5,
    "Value": ["v1", "v2", "v3"], "Hosts": ["h1", "h2", "h3", "h4", "h5"]}

SMALL = {"Hosts": ["h1", "h2", "h3"], "Value": ["v1"], "InitClusterSize": 3, "MinClusterSize": 3,
         "MaxClusterSize": 3, "MaxSpawnedServers": 3, "MaxEpoch": 3, "TestLiveness": False,
         "MaxRestarts": 1, "MaxPermCrashes": 0, "MaxAddReconfigs": 0, "MaxRemoveReconfigs": 0,
         "MaxConnectivityChanges": 0, "MaxDisruptiveElectionTriggers": 1}


def _states(model, depth):
    """Every state within `depth` steps, with its successors."""
    frontier = list(model.init_states())
    seen = set(frontier)
    for _ in range(depth):
        nxt = []
        for s in frontier:
            succ = model.successors(s)
            yield s, succ
            for _, t in succ:
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt


def test_the_defaults_are_the_reference_cfg():
    assert {c.name: c.default for c in REFERENCE_CONSTANTS} == REFERENCE_CFG
    model, _ = build("kraft_quorum", "kip996", {})
    assert model.constants["Mutants"] == [] and not model.storage


def test_kip853_elects_without_pre_vote():
    model, props = build("kraft_quorum", "kip853", SMALL)
    assert "ConcludePreVote" not in model.action_names
    r = check(model, props, CheckOptions(max_depth=8))
    assert r.outcome == "pass" and r.sometimes["LeaderInLaterEpoch"] is not None
    for s, succ in _states(model, 6):
        assert Role.Prospective not in s.state
        assert all(not m.pre_vote for m in s.net_messages if hasattr(m, "pre_vote"))


def test_a_server_with_unflushed_appends_only_flushes_or_fails_first():
    """VoterFlush before_fetch: the raft thread flushes an append before it
    handles anything else, so nothing but FlushLog and the faults is taken by
    a server whose log is not all on disk."""
    model, _ = build("kraft_quorum", "kip996", {**SMALL, "MaxPowerLosses": 1,
                                                "VoterFlush": "before_fetch"})
    allowed = {"FlushLog", "PowerLoss", "RestartWithState", "CrashLoseState"}
    held = 0
    for s, succ in _states(model, 7):
        unflushed = {i + 1 for i, (f, log) in enumerate(zip(s.flushed, s.log)) if f < len(log)}
        for action, _ in succ:
            if action.params and action.params[0] in unflushed:
                held += 1
                assert action.name in allowed, (action, s)
    assert held  # the case arose


def test_an_unflushed_leader_answers_only_the_fetches_waiting_at_its_end():
    """VoterFlush end_offset_first (the default, KafkaRaftClient.flushLeaderLog):
    besides flushing and the faults, a leader with unflushed appends only
    answers a Fetch at the end of its flushed log, with the unflushed entry."""
    model, _ = build("kraft_quorum", "kip996", {**SMALL, "MaxPowerLosses": 1})
    assert model.constants["VoterFlush"] == "end_offset_first"
    allowed = {"FlushLog", "PowerLoss", "RestartWithState", "CrashLoseState"}
    answered = 0
    for s, succ in _states(model, 7):
        unflushed = {i + 1 for i, (f, log) in enumerate(zip(s.flushed, s.log)) if f < len(log)}
        for action, t in succ:
            if not action.params or action.params[0] not in unflushed:
                continue
            if action.name == "AcceptFetchRequest":
                ldr, peer = action.params
                assert s.state[ldr - 1] == Role.Leader
                answered += any(m.dest == peer and m.source == ldr and m.entries
                                and m.entries[0] == s.log[ldr - 1][-1] for m in t.net_messages
                                if m.type == MsgType.FetchResponse)
            else:
                assert action.name in allowed, (action, s)
    assert answered  # an unflushed entry went out


def test_lazy_flush_lets_a_voter_acknowledge_before_it_flushes():
    """Lazy flushing: an acknowledged value is on one disk after 6 steps
    (AckedOnMajorityDisk), on no voter after 8 (Durability)."""
    model, props = build("kraft_quorum", "kip996", {**SMALL, "MaxPowerLosses": 2, "VoterFlush": "lazy",
                                                    "MaxRestarts": 0, "MaxDisruptiveElectionTriggers": 0})
    r = check(model, props, CheckOptions(max_depth=8, stop_on_violation=False))
    assert {v.property: v.depth for v in r.violations} == {"AckedOnMajorityDisk": 6, "Durability": 8}


def test_states_survive_their_plain_form():
    """from_plain rebuilds every state of a small space from the plain tuples
    the engine's decoder gives (IntEnums as ints, NamedTuples as tuples)."""
    model, _ = build("kraft_quorum", "kip996", {**SMALL, "MaxPowerLosses": 1, "MaxSpawnedServers": 4,
                                                "Hosts": ["h1", "h2", "h3", "h4"], "MaxClusterSize": 4,
                                                "MaxAddReconfigs": 1})

    def plain(v):
        if isinstance(v, frozenset):
            return frozenset(plain(x) for x in v)
        if isinstance(v, tuple):
            return tuple(plain(x) for x in v)
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, int):
            return int(v)
        raise AssertionError(v)

    n = 0
    for s, _ in _states(model, 6):
        back = model.from_plain(tuple(plain(v) for v in s))
        assert back == s and type(back) is type(s)
        assert all(type(a) is type(b) for a, b in zip(back.state, s.state))
        n += 1
    assert n > 1000


def test_a_fetch_at_offset_0_accepted_is_an_evaluation_error_as_in_tlc():
    """With fetch_from_stale_epoch a new server's first fetch (offset 0,
    epoch 0) passes the position check; the reference then reads log[0],
    outside the log's domain, and TLC stops with an evaluation error. So
    does kmc, with the trace to it: the server starts, the leader adds it,
    and the fetch is accepted in the third step."""
    import pytest

    from checker.search.errors import EngineEvaluationError
    model, props = build("kraft_quorum", "kip996", {
        **SMALL, "Hosts": ["h1", "h2", "h3", "h4"], "MaxSpawnedServers": 4, "MaxClusterSize": 4,
        "MaxAddReconfigs": 1, "MaxRestarts": 0, "MaxDisruptiveElectionTriggers": 0,
        "Mutants": ["fetch_from_stale_epoch"]})
    with pytest.raises(EngineEvaluationError) as e:
        check(model, props, CheckOptions(max_depth=4))
    assert "AcceptFetchRequest" in e.value.detail and "log[1][0]" in e.value.detail
    assert [a.name for a, _ in e.value.trace[1:]] == ["StartNewServer", "AcceptAddVoterRequest"]


def test_where_the_reference_departs_from_kafka_kip996_keeps_the_reference_and_kip853_is_kafkas():
    kafka = {"SingleVoterLeads": True, "FollowerState": "new", "CheckQuorum": "fetch",
             "FollowerHwm": "monotonic"}
    reference, _ = build("kraft_quorum", "kip996", SMALL)
    assert {k: reference.constants[k] for k in kafka} == {
        "SingleVoterLeads": False, "FollowerState": "kept", "CheckQuorum": "connectivity",
        "FollowerHwm": "leader"}
    assert "CheckQuorumRestart" not in reference.action_names
    model, _ = build("kraft_quorum", "kip853", SMALL)
    assert {k: model.constants[k] for k in kafka} == kafka
    assert "CheckQuorumRestart" in model.action_names
    assert "fetched_voters" in model.variables and "fetched_voters" not in reference.variables


def test_a_leader_resigns_on_check_quorum_only_without_fetches_from_a_majority():
    """CheckQuorum fetch: CheckQuorumResign needs a period without fetches from
    a majority; a fetch accepted from one of two followers fills the period,
    which CheckQuorumRestart then ends."""
    model, _ = build("kraft_quorum", "kip853", {**SMALL, "MaxDisruptiveElectionTriggers": 0})
    init = model.init_states()[0]
    assert [a.name for a, _ in model.successors(init) if a.name.startswith("CheckQuorum")] == [
        "CheckQuorumResign"]
    for s, succ in _states(model, 4):
        if s.state[0] == Role.Leader and s.fetched_voters[0]:
            names = {a.name for a, _ in succ if a.params == (1,)}
            assert "CheckQuorumRestart" in names and "CheckQuorumResign" not in names
            return
    raise AssertionError("no fetch was counted")


def test_three_voters_are_the_fewest_that_depose_a_leader():
    """LeaderDeposed (CheckQuorum fetch): with three voters a disruptive
    timeout into epoch 2 and a vote granted for it leave leader 1 behind a
    majority in two steps; with two voters a majority includes the leader,
    so no state within 10 steps (nor in the whole graph, docs/findings.md)
    has one."""
    from invariants.kraft_quorum.witnesses import deposed

    def first_deposed(constants, depth):
        model, _ = build("kraft_quorum", "kip853", constants)
        for s, _succ in _states(model, depth + 1):
            if any(deposed(s, x) for x in range(1, len(s.server_ids) + 1)):
                return s
        return None

    three = {**SMALL, "MaxEpoch": 2, "MaxRestarts": 0}
    s = first_deposed(three, 2)
    assert s is not None and s.state[0] == Role.Leader and s.current_epoch == (1, 2, 2)
    two = {**three, "Hosts": ["h1", "h2"], "InitClusterSize": 2, "MinClusterSize": 2,
           "MaxClusterSize": 2, "MaxSpawnedServers": 2, "MaxConnectivityChanges": 1}
    assert first_deposed(two, 10) is None
