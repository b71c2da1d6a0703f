"""Unit tests of the zk model's actions on small runs from the initial state.

Each test drives the model with named actions (Action(name, params)) and
checks the effect Kafka's design documents describe (docs/sources.md): the two-phase HW propagation, commits
and acknowledgements, ISR maintenance under the znode version, the three
stops (power loss, process crash, controlled shutdown) and recovery from the
flushed log and checkpointed HW, both truncation rules, elections racing
with other steps (or prompt), and the zombie leader of an expired session.
The controller (Election = controller) is tested in test_zk_controller.py.
"""
from __future__ import annotations

import pytest

from checker.search.encoding import decode, encode_state, parts_to_bytes
from model.base import ModelConfigError
from model.zk.model import ZkModel
from model.zk.replica import end_offset_for_epoch
from model.zk.state import NO_EPOCH, NO_LEADER, Acked, Record, ReplicaRole, Role
from zk_steps import names, run, step, succ

B2 = dict(BrokerCount=2, ReplicationFactor=2, Values=["A", "B"], PowerLossLimit=2)


def model(variant="hw_truncation", **overrides):
    return ZkModel(variant, {**B2, **overrides})


REPLICATE_A = (("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1))
COMMIT_A = REPLICATE_A + (("HandleFetch", 0, 1),)


# ---- init ------------------------------------------------------------------------

def test_initial_state_preferred_replica_leads_epoch_0():
    m = model()
    (s,) = m.init_states()
    assert m.replicas == (0, 1)
    assert s.zk_partition.leader == 0 and s.zk_partition.leader_epoch == 0
    assert s.zk_partition.isr == frozenset({0, 1}) and s.zk_live == frozenset({0, 1})
    assert s.role == (ReplicaRole(Role.LEADER, 0, 0), ReplicaRole(Role.FOLLOWER, 0, 0))
    assert s.log == ((), ()) and s.acked == ()


def test_brokers_outside_the_assigned_replicas_take_no_step():
    m = model(BrokerCount=3, ReplicationFactor=2)
    assert m.replicas == (0, 1)
    s = m.init_states()[0]
    assert all(2 not in a.params for a, _ in m.successors(s))


# ---- produce, fetch, commit --------------------------------------------------------

def test_produce_appends_with_the_leader_epoch_only_in_leader_epoch():
    s = run(model(), ("Produce", 0, "A"))
    assert s.log[0] == (Record(NO_EPOCH, "A"),) and s.written == {"A"}
    s = run(model("leader_epoch"), ("Produce", 0, "A"))
    assert s.log[0] == (Record(0, "A"),)
    # two ISR members: not committed, not acknowledged
    assert s.hw[0] == 0 and s.acked == ()
    # each value is written once
    assert {str(a) for a, _ in model().successors(s) if a.name == "Produce"} == {"Produce(0, B)"}


def test_fetch_is_two_phase_follower_learns_the_commit_one_round_later():
    m = model()
    s0 = run(m, ("Produce", 0, "A"))
    s1 = step(m, s0, "HandleFetch", 0, 1)
    # the leader recorded the follower's LEO (0): nothing committed yet
    assert s1.hw[0] == 0 and s1.leader_view[0].follower_leo == (0, 0)
    assert s1.fetch_response[1].records == (Record(NO_EPOCH, "A"),)
    changed = {f for f in s0._fields if getattr(s1, f) is not getattr(s0, f)}
    assert changed == {"fetch_response"}  # successors share unchanged variables
    s2 = step(m, s1, "ReceiveFetchResponse", 1)
    assert s2.log[1] == s2.log[0] and s2.hw[1] == 0  # min(LEO 1, leader HW 0)
    s3 = step(m, s2, "HandleFetch", 0, 1)
    # the second request reports LEO 1: every ISR member has A, it is committed
    assert s3.hw[0] == 1 and s3.acked == (Acked("A", frozenset({0, 1})),)
    assert s3.hw[1] == 0  # the follower learns it only from this response
    s4 = step(m, s3, "ReceiveFetchResponse", 1)
    assert s4.hw[1] == 1


def test_sole_isr_member_commits_on_produce():
    m = model()
    s = run(m, ("Produce", 0, "A"), ("ShrinkIsr", 0, 1))
    assert s.zk_partition.isr == {0} and s.zk_partition.version == 1
    assert s.leader_view[0].isr == {0} and s.leader_view[0].zk_version == 1
    assert s.hw[0] == 1 and s.acked == (Acked("A", frozenset({0})),)
    s = step(m, s, "Produce", 0, "B")
    assert s.hw[0] == 2 and [a.value for a in s.acked] == ["A", "B"]


def test_a_caught_up_follower_is_dropped_when_it_stalls():
    """FollowerStallLimit: replica.lag.time.max.ms may pass for a follower
    whose last fetch reached the leader's LEO (it stopped fetching)."""
    m = model(FollowerStallLimit=1)
    s = m.init_states()[0]
    t = step(m, s, "ShrinkIsr", 0, 1)  # LEO 0, the follower at 0: caught up, then stalled
    assert t.zk_partition.isr == {0} and t.faults.stalls == 1
    t = run(m, ("HandleFetch", 0, 1), state=t)  # it fetches again at the LEO: back in
    assert t.zk_partition.isr == {0, 1}
    assert not succ(m, t, "ShrinkIsr", 0, 1)  # FollowerStallLimit reached
    u = run(m, ("Produce", 0, "A"), ("ShrinkIsr", 0, 1), state=t)  # lagging: as before
    assert u.zk_partition.isr == {0} and u.faults.stalls == 1


def test_shrink_only_a_lagging_follower_and_readd_when_fully_caught_up():
    m = model(FollowerStallLimit=0)
    s = m.init_states()[0]
    assert not succ(m, s, "ShrinkIsr", 0, 1)  # LEO 0: nobody lags
    s = run(m, ("Produce", 0, "A"), ("ShrinkIsr", 0, 1), ("HandleFetch", 0, 1))
    assert s.zk_partition.isr == {0}  # fetched at offset 0 < LEO 1: not caught up
    s = run(m, ("ReceiveFetchResponse", 1), ("HandleFetch", 0, 1), state=s)
    assert s.zk_partition.isr == {0, 1} and s.zk_partition.version == 2
    # A was acked by {0}; 1 joined the ISR holding it: now a keeper too
    assert s.acked == (Acked("A", frozenset({0, 1})),)


def test_offset_out_of_range_truncates_to_the_leaders_leo():
    m = model(Values=["A"])
    s = run(m, *COMMIT_A, ("CheckpointHw", 0), ("FlushLog", 0), ("PowerLoss", 1), ("Restart", 1),
            ("PowerLoss", 0), ("ElectLeader", 1))
    assert s.log[1] == () and s.zk_partition.leader == 1
    s = step(m, s, "Restart", 0)
    # 0 recovers A with its checkpointed HW 1: truncating to the HW keeps it
    assert s.role[0] == ReplicaRole(Role.FOLLOWER, 1, 1) and len(s.log[0]) == 1
    s = step(m, s, "HandleFetch", 1, 0)
    assert s.fetch_response[0].leader_leo == 0 and s.fetch_response[0].offset == 1
    assert s.leader_view[1].follower_leo[0] == 0  # nothing recorded
    s = step(m, s, "ReceiveFetchResponse", 0)
    assert s.log[0] == () and s.hw[0] == 0 and s.flushed[0] == 0 and s.truncated


# ---- crash, restart, elections ----------------------------------------------------------

def test_crash_keeps_only_the_flushed_prefix_and_the_checkpointed_hw():
    m = model()
    s = run(m, *COMMIT_A, ("FlushLog", 0), ("Produce", 0, "B"), ("CheckpointHw", 0), ("PowerLoss", 0))
    assert s.log[0] == (Record(NO_EPOCH, "A"),)  # B was not flushed
    assert s.ckpt_hw[0] == 1 and s.hw[0] == 0 and s.flushed[0] == 1
    assert not s.running[0] and 0 not in s.zk_live and s.role[0].role == Role.NONE
    # the leader's ephemeral entry went with its session, in a versioned write
    assert s.zk_partition.leader == NO_LEADER and s.zk_partition.version == 1
    # the election races with everything else that is enabled ...
    assert names(m, s) == ["ElectLeader(1)", "FlushLog(1)", "PowerLoss(1)",
                           "ReceiveFetchResponse(1)", "Restart(0)"]
    # ... unless elections are prompt: then it is the only step
    prompt = model(PromptElection=True)
    assert names(prompt, s) == ["ElectLeader(1)"]
    s = step(m, s, "ElectLeader", 1)
    assert s.zk_partition[:3] == (1, 1, frozenset({1}))  # dead members leave the ISR
    assert s.role[1] == ReplicaRole(Role.LEADER, 1, 1)
    assert s.hw[1] == 1  # alone in the ISR, the new leader raises its HW to its LEO


@pytest.mark.parametrize("election_hw, hw", [("kept", 0), ("leo", 1)])
def test_a_new_leader_keeps_its_hw_until_the_isr_fetches(election_hw, hw):
    """ElectionHw kept (Kafka's Partition.makeLeader): a new leader with other
    ISR members keeps its own HW and raises it as they fetch
    (maybeIncrementLeaderHW); leo (the 0.8 design): its LEO at once."""
    m = model(ProcessCrashLimit=1, PowerLossLimit=0, ElectionHw=election_hw)
    s = run(m, *REPLICATE_A, ("ProcessCrash", 0), ("Restart", 0))
    assert s.hw == (0, 0) and s.zk_partition.leader == NO_LEADER
    s = step(m, s, "ElectLeader", 1)
    assert s.zk_partition.isr == frozenset({0, 1}) and s.hw[1] == hw and not s.acked
    if election_hw == "kept":  # committed once broker 0 has fetched A from the new leader
        s = run(m, ("BecomeFollower", 0), ("HandleFetch", 1, 0), state=s)
        assert s.hw[1] == 0 and s.log[0] == ()  # hw_truncation: 0 truncated A to its HW
        s = run(m, ("ReceiveFetchResponse", 0), ("HandleFetch", 1, 0), state=s)
        assert s.hw[1] == 1 and [a.value for a in s.acked] == ["A"]


def test_crash_limit_bounds_crashes():
    m = model(PowerLossLimit=1)
    s = run(m, ("PowerLoss", 1))
    assert not succ(m, s, "PowerLoss", 0)
    s = step(m, s, "Restart", 1)
    assert not succ(m, s, "PowerLoss", 1)


def test_process_crash_keeps_the_page_cache():
    """ProcessCrash: the unflushed tail survives in the page cache; the
    in-memory HW is lost, the session ends; the restart recovers the whole
    log with the checkpointed HW."""
    m = model(PowerLossLimit=0, ProcessCrashLimit=1)
    s = run(m, *COMMIT_A, ("FlushLog", 0), ("Produce", 0, "B"), ("CheckpointHw", 0),
            ("ProcessCrash", 0))
    assert [r.value for r in s.log[0]] == ["A", "B"] and s.flushed[0] == 1  # B unflushed, kept
    assert s.hw[0] == 0 and s.ckpt_hw[0] == 1 and not s.running[0]
    assert s.zk_partition.leader == NO_LEADER and 0 not in s.zk_live
    assert (s.faults.process_crashes, s.faults.power_losses) == (1, 0)
    assert not succ(m, s, "ProcessCrash", 1)  # ProcessCrashLimit
    s = step(m, s, "Restart", 0)
    assert [r.value for r in s.log[0]] == ["A", "B"] and s.hw[0] == 1


def test_power_loss_keeps_only_the_flushed_prefix_also_after_a_process_crash():
    """A process-crashed broker's page cache may still be lost (the OS crashes
    before writing it back): PowerLoss of the stopped broker drops the
    unflushed tail then; once the OS wrote it back (FlushLog of the stopped
    broker) there is nothing left to lose."""
    m = model(PowerLossLimit=1, ProcessCrashLimit=1)
    s = run(m, *COMMIT_A, ("FlushLog", 0), ("Produce", 0, "B"), ("ProcessCrash", 0))
    lost = step(m, s, "PowerLoss", 0)
    assert [r.value for r in lost.log[0]] == ["A"] and lost.faults.power_losses == 1
    assert lost.flushed[0] == 1 and not lost.running[0]
    flushed = step(m, s, "FlushLog", 0)  # the OS writes the page cache back
    assert flushed.flushed[0] == 2 and not flushed.running[0]
    assert not succ(m, flushed, "PowerLoss", 0)  # nothing unflushed: nothing to lose
    # a running broker's power loss: the same fallback, one step
    s = run(m, *COMMIT_A, ("FlushLog", 0), ("Produce", 0, "B"), ("PowerLoss", 0))
    assert [r.value for r in s.log[0]] == ["A"] and s.zk_partition.leader == NO_LEADER
    # the acknowledged A survives on 0's disk: 0 is still a keeper; B was never acked
    assert s.acked == (Acked("A", frozenset({0, 1})),)


def test_controlled_shutdown_flushes_and_checkpoints_first():
    m = model(PowerLossLimit=0, ControlledShutdownLimit=1)
    s = run(m, *COMMIT_A, ("Produce", 0, "B"), ("ControlledShutdown", 0))
    assert [r.value for r in s.log[0]] == ["A", "B"] and s.flushed[0] == 2
    assert s.ckpt_hw[0] == 1 and s.hw[0] == 0 and not s.running[0]
    # registration: nobody moves leadership first; the leader entry goes with the session
    assert s.zk_partition.leader == NO_LEADER and s.faults.shutdowns == 1
    assert not succ(m, s, "ControlledShutdown", 1)  # ControlledShutdownLimit
    assert "ElectLeader(1)" in names(m, s)
    s = step(m, s, "Restart", 0)
    assert [r.value for r in s.log[0]] == ["A", "B"] and s.hw[0] == 1


def test_each_stop_is_named_only_with_its_limit():
    assert {"PowerLoss", "Restart"} <= set(model().action_names)
    none = model(PowerLossLimit=0)
    assert not {"PowerLoss", "ProcessCrash", "ControlledShutdown", "Restart"} & set(
        none.action_names)
    assert {"ProcessCrash", "Restart"} <= set(model(PowerLossLimit=0, ProcessCrashLimit=1).action_names)


def test_the_race_witness_is_set_while_an_election_waits_and_cleared_by_it():
    m = model(Values=["A"])
    s = run(m, *COMMIT_A, ("PowerLoss", 0))
    assert not s.faults.raced
    s = step(m, s, "Restart", 0)  # went first while ElectLeader(1) was due
    assert s.faults.raced and s.role[0] == ReplicaRole(Role.NONE, NO_LEADER, -1)
    s = step(m, s, "ElectLeader", 0)
    assert not s.faults.raced and s.zk_partition[:3] == (0, 1, frozenset({0, 1}))
    assert s.log[0] == ()  # the restarted leader, without A, leads again
    prompt = model(Values=["A"], PromptElection=True)
    s = run(prompt, *COMMIT_A, ("PowerLoss", 0))
    assert names(prompt, s) == ["ElectLeader(1)"]


def test_restart_hw_truncation_truncates_to_the_checkpointed_hw():
    m = model()
    s = run(m, *COMMIT_A, ("ReceiveFetchResponse", 1), ("Produce", 0, "B"),
            ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1), ("CheckpointHw", 1),
            ("FlushLog", 1), ("PowerLoss", 1))
    assert s.log[1] == (Record(NO_EPOCH, "A"), Record(NO_EPOCH, "B")) and s.ckpt_hw[1] == 1
    s = step(m, s, "Restart", 1)
    # r.hw = min(checkpointed HW 1, LEO 2); becomeFollower truncates to it
    assert s.log[1] == (Record(NO_EPOCH, "A"),) and s.hw[1] == 1 and s.flushed[1] == 1
    assert s.role[1] == ReplicaRole(Role.FOLLOWER, 0, 0) and s.truncated


def test_restart_leader_epoch_asks_for_the_epoch_end_before_truncating():
    m = model("leader_epoch")
    s = run(m, *COMMIT_A, ("FlushLog", 1), ("PowerLoss", 1), ("Restart", 1))
    assert s.role[1] == ReplicaRole(Role.TRUNCATING, 0, 0) and len(s.log[1]) == 1
    assert not succ(m, s, "HandleFetch", 0, 1)  # no fetching before truncation
    s = step(m, s, "TruncateToLeaderEpochEnd", 1)
    assert s.role[1].role == Role.FOLLOWER and len(s.log[1]) == 1 and not s.truncated
    # an empty log has nothing to ask about
    s = run(m, ("PowerLoss", 1), ("Restart", 1))
    assert s.role[1] == ReplicaRole(Role.FOLLOWER, 0, 0)


def test_end_offset_for_epoch():
    log = (Record(0, "A"), Record(0, "B"), Record(2, "C"), Record(3, "D"))
    assert end_offset_for_epoch(log, 4, 4) == 4   # the leader's current epoch: its LEO
    assert end_offset_for_epoch(log, 4, 0) == 2   # the first offset of a later epoch
    assert end_offset_for_epoch(log, 4, 1) == 2   # unknown epoch 1: where epoch 2 starts
    assert end_offset_for_epoch(log, 4, 3) == 4   # the log's last epoch: the LEO
    assert end_offset_for_epoch((), 1, 0) == 0


def test_become_follower_on_leader_change():
    m = model(BrokerCount=3, ReplicationFactor=3, Values=["A"])
    s = run(m, ("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1),
            ("PowerLoss", 0))
    # 1 or 2 may register first
    assert [n for n in names(m, s) if "Elect" in n] == ["ElectLeader(1)", "ElectLeader(2)"]
    s = step(m, s, "ElectLeader", 1)
    assert s.role[2] == ReplicaRole(Role.FOLLOWER, 0, 0)  # not yet notified
    s = step(m, s, "BecomeFollower", 2)
    assert s.role[2] == ReplicaRole(Role.FOLLOWER, 1, 1)
    assert not succ(m, s, "BecomeFollower", 2)


def test_unclean_election_only_when_no_isr_member_is_alive():
    for unclean in (False, True):
        m = model(Values=["A"], UncleanLeaderElection=unclean)
        s = run(m, ("Produce", 0, "A"), ("ShrinkIsr", 0, 1), ("PowerLoss", 0))
        assert s.zk_partition.isr == {0} and s.zk_partition.leader == NO_LEADER
        if unclean:
            assert [n for n in names(m, s) if "Elect" in n] == ["UncleanElectLeader(1)"]
            s = step(m, s, "UncleanElectLeader", 1)
            assert s.zk_partition[:3] == (1, 1, frozenset({1}))
            assert "UncleanElectLeader" in m.action_names
        else:
            assert not any(a.name.endswith("ElectLeader") for a, _ in m.successors(s))
            assert "UncleanElectLeader" not in m.action_names


# ---- ZooKeeper sessions and the znode version ---------------------------------------------

def test_zombie_leader_cannot_write_the_isr_with_a_stale_version():
    m = model(Values=["A"], PowerLossLimit=0, SessionExpiryLimit=1)
    s = run(m, ("Produce", 0, "A"), ("ExpireSession", 0), ("ElectLeader", 1))
    assert s.role[0].role == Role.LEADER and 0 not in s.zk_live  # a zombie
    assert s.zk_partition.version == 2 and s.leader_view[0].zk_version == 0
    assert not succ(m, s, "ShrinkIsr", 0, 1)  # conditional update fails: no step
    s = step(m, s, "Reregister", 0)
    assert s.role[0] == ReplicaRole(Role.FOLLOWER, 1, 1) and s.leader_view[0] is None
    assert s.log[0] == ()  # hw_truncation: truncated to its HW 0 on becoming follower


def test_without_the_version_check_the_zombie_overwrites_the_isr():
    m = model(Values=["A"], PowerLossLimit=0, SessionExpiryLimit=1, ConditionalIsrUpdate=False)
    s = run(m, ("Produce", 0, "A"), ("ExpireSession", 0), ("ElectLeader", 1),
            ("ShrinkIsr", 0, 1))
    assert s.zk_partition.leader == 1 and s.zk_partition.isr == {0}
    assert s.acked == (Acked("A", frozenset({0})),)  # acknowledged by the zombie alone


# ---- states survive the canonical encoding ---------------------------------------------

@pytest.mark.parametrize("variant, extra", [
    ("hw_truncation", {}), ("leader_epoch", {}),
    ("leader_epoch", dict(Election="controller", ControllerFailoverLimit=1, ProcessCrashLimit=1,
                          ControlledShutdownLimit=1, UncleanLeaderElection=True))])
def test_from_plain_round_trip(variant, extra):
    m = model(variant, SessionExpiryLimit=1, **extra)
    frontier = m.init_states()
    seen = set(frontier)
    for _ in range(6):
        frontier = [t for s in frontier for _, t in m.successors(s) if t not in seen]
        seen.update(frontier)
    assert len(seen) > 300
    for s in seen:
        back = m.from_plain(decode(parts_to_bytes(list(encode_state(s)))))
        assert back == s and type(back.zk_partition) is type(s.zk_partition)
        assert all(type(r.role) is Role for r in back.role)


# ---- constants ---------------------------------------------------------------------

@pytest.mark.parametrize("bad, msg", [
    (dict(BrokerCount=0), "BrokerCount"),
    (dict(BrokerCount=9), "BrokerCount"),
    (dict(ReplicationFactor=3), "ReplicationFactor"),
    (dict(ReplicationFactor=0), "ReplicationFactor"),
    (dict(Values=[]), "Values"),
    (dict(Values=["A", "A"]), "more than once"),
    (dict(Values=["A", "B", "C", "D", "E"]), "Values"),
    (dict(PowerLossLimit=-1), "PowerLossLimit"),
    (dict(ProcessCrashLimit=True), "ProcessCrashLimit"),
    (dict(PromptElection=0), "PromptElection"),
    (dict(Election="zookeeper"), "Election must be one of registration, controller"),
    (dict(Election="controller", BrokerEpochs="yes"), "BrokerEpochs must be one of"),
    (dict(BrokerEpochs="kraft"), "BrokerEpochs needs Election"),
    (dict(ControllerFailoverLimit=1), "ControllerFailoverLimit needs Election"),
    (dict(UncleanLeaderElection=1), "UncleanLeaderElection"),
    (dict(Nonsense=1), "unknown constant"),
])
def test_bad_constants_are_model_config_errors(bad, msg):
    with pytest.raises(ModelConfigError, match=msg):
        model(**bad)


def test_unknown_variant_is_a_model_config_error():
    with pytest.raises(ModelConfigError, match="variant"):
        ZkModel("kip999", B2)
