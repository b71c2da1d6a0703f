"""Election = controller: the ZooKeeper-era controller (model/zk/controller.py).

Driven action by action: the controller's reaction to a session loss (ISR
shrink and election in one write, v3.5 description 2.8; the last ISR member
stays), LeaderAndIsr requests and how a replica takes them, the bounce the
0.8 controller never sees, BrokerEpochs kip380 / kraft, the controller
failover, the controlled shutdown that moves leadership first, and prompt
reactions.
"""
from __future__ import annotations

import pytest

from checker.search import registry
from checker.search.engine import check
from model.zk.model import ZkModel
from model.zk.state import NO_LEADER, Acked, LeaderAndIsr, ReplicaRole, Role
from zk_steps import names, run, step, succ

C2 = dict(BrokerCount=2, ReplicationFactor=2, Values=["A"], Election="controller")
COMMIT_A = (("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1),
            ("HandleFetch", 0, 1))


def model(variant="leader_epoch", **overrides):
    return ZkModel(variant, {**C2, **overrides})


def test_actions_of_the_controller_replace_the_registration():
    m = model(ControllerFailoverLimit=1)
    assert m.action_names[0] == "OnBrokerFailure" and m.action_names[-1] == "ControllerFailover"
    assert {"ReceiveLeaderAndIsr", "OnBrokerStartup"} <= set(m.action_names)
    assert not {"ElectLeader", "UncleanElectLeader", "BecomeFollower"} & set(m.action_names)
    s = m.init_states()[0]
    assert s.ctl_live == {0, 1} and s.ctl_stale == frozenset() and s.ctl_request == ((), ())


def test_a_lost_leader_leaves_the_isr_and_the_controller_elects():
    m = model()
    s = run(m, *COMMIT_A, ("PowerLoss", 0))
    # the leader entry is the controller's: it stays until the controller acts
    assert s.zk_partition.leader == 0 and s.zk_partition.version == 0 and 0 not in s.zk_live
    assert "OnBrokerFailure(0)" in names(m, s) and "Restart(0)" in names(m, s)  # they race
    s = step(m, s, "OnBrokerFailure", 0)
    assert s.zk_partition == (1, 1, frozenset({1}), 1) and s.ctl_live == {1}
    assert s.ctl_request == ((), (LeaderAndIsr(1, 1, frozenset({1}), 1, 0),))
    assert s.role[1] == ReplicaRole(Role.FOLLOWER, 0, 0)  # not told yet
    s = step(m, s, "ReceiveLeaderAndIsr", 1)
    assert s.role[1] == ReplicaRole(Role.LEADER, 1, 1) and s.hw[1] == 1
    assert s.leader_view[1].isr == {1} and s.leader_view[1].zk_version == 1
    # the lost leader comes back and waits to be told
    s = step(m, s, "Restart", 0)
    assert s.role[0].role == Role.NONE and not s.ctl_stale
    s = step(m, s, "OnBrokerStartup", 0)
    assert s.ctl_live == {0, 1} and s.ctl_request[0] == (LeaderAndIsr(1, 1, frozenset({1}), 1, 0),)
    s = step(m, s, "ReceiveLeaderAndIsr", 0)
    assert s.role[0] == ReplicaRole(Role.FOLLOWER, 1, 1)  # its log is empty: nothing to ask


def test_a_lost_follower_leaves_the_isr_and_the_leader_learns_the_new_version():
    m = model(Values=["A"])
    s = run(m, ("Produce", 0, "A"), ("PowerLoss", 1), ("OnBrokerFailure", 1))
    assert s.zk_partition == (0, 0, frozenset({0}), 1)  # same leader, same epoch
    assert s.leader_view[0].isr == {0, 1} and s.hw[0] == 0  # the leader does not know yet
    assert not succ(m, s, "ShrinkIsr", 0, 1)  # its version is stale: the write would fail
    s = step(m, s, "ReceiveLeaderAndIsr", 0)
    assert s.leader_view[0].isr == {0} and s.leader_view[0].zk_version == 1
    assert s.hw[0] == 1 and s.acked == (Acked("A", frozenset({0})),)  # commits alone now


def test_the_last_isr_member_stays_and_leads_again_when_it_returns():
    m = model(Values=["A"])
    s = run(m, ("Produce", 0, "A"), ("ShrinkIsr", 0, 1), ("PowerLoss", 0),
            ("OnBrokerFailure", 0))
    assert s.zk_partition == (NO_LEADER, 1, frozenset({0}), 2)  # "the last replica standing"
    assert s.ctl_request == ((), ())  # nothing to tell about a partition with no leader
    s = run(m, ("Restart", 0), ("OnBrokerStartup", 0), state=s)
    assert s.zk_partition == (0, 2, frozenset({0}), 3)
    assert s.ctl_request == ((LeaderAndIsr(0, 2, frozenset({0}), 3, 0),),) * 2


def test_unclean_election_by_the_controller():
    m = model(Values=["A"], UncleanLeaderElection=True)
    s = run(m, ("Produce", 0, "A"), ("ShrinkIsr", 0, 1), ("PowerLoss", 0),
            ("OnBrokerFailure", 0))
    assert s.zk_partition == (1, 1, frozenset({1}), 2) and s.faults.unclean_leader


def test_the_08_controller_never_sees_a_bounce():
    """The ABA of v3.5 description 1.2.2: the broker registers again before the controller
    looked; /brokers/ids is as before. Nobody tells the restarted leader
    anything, nobody elects: the partition is stuck, not lossy."""
    m = model()
    s = run(m, *COMMIT_A, ("PowerLoss", 0), ("Restart", 0))
    assert s.ctl_stale == {0} and s.zk_partition.leader == 0 and s.log[0] == ()
    assert not [a for a, _ in m.successors(s)
                if a.name in ("OnBrokerFailure", "OnBrokerStartup", "Produce", "HandleFetch")]
    assert s.role[0].role == Role.NONE  # the znode names it, but it does not lead


def test_kip380_handles_a_bounce_it_sees_as_a_failure_and_a_startup():
    m = model(BrokerEpochs="kip380")
    s = run(m, *COMMIT_A, ("PowerLoss", 0), ("Restart", 0))
    s = step(m, s, "OnBrokerFailure", 0)
    assert s.zk_partition == (1, 1, frozenset({1}), 1) and s.ctl_live == {0, 1}
    assert not s.ctl_stale and s.broker_epoch == (1, 0)
    # to broker-0 under its new registration (broker epoch 1)
    assert s.ctl_request == ((LeaderAndIsr(1, 1, frozenset({1}), 1, 1),), (LeaderAndIsr(1, 1, frozenset({1}), 1, 0),))


@pytest.mark.parametrize("epochs", ["none", "kip380"])
def test_a_request_outlives_the_stop_and_kip380_rejects_it_after_a_restart(epochs):
    """The controller handles broker-1's power loss: the ISR shrinks to broker-0.
    broker-0 then crashes with that request still queued (RequestsSurviveStop)
    and restarts before the controller looks: without broker epochs it takes
    the request of its earlier incarnation and leads; with KIP-380 the request
    carries broker epoch 0, broker-0 is at 1 and rejects it as stale."""
    m = model(BrokerEpochs=epochs, ProcessCrashLimit=1)
    s = run(m, *COMMIT_A, ("PowerLoss", 1), ("OnBrokerFailure", 1), ("ProcessCrash", 0))
    assert s.ctl_request[0] == (LeaderAndIsr(0, 0, frozenset({0}), 1, 0),)  # waits for broker-0
    s = step(m, s, "Restart", 0)
    s = step(m, s, "ReceiveLeaderAndIsr", 0)
    assert s.ctl_request[0] == ()
    if epochs == "none":
        assert s.role[0] == ReplicaRole(Role.LEADER, 0, 0)
    else:
        assert s.broker_epoch[0] == 1 and s.role[0].role == Role.NONE  # stale: rejected
    old = model(BrokerEpochs=epochs, ProcessCrashLimit=1, RequestsSurviveStop=False)
    t = run(old, *COMMIT_A, ("PowerLoss", 1), ("OnBrokerFailure", 1), ("ProcessCrash", 0))
    assert t.ctl_request[0] == ()  # lost with the stop


def test_kraft_registration_waits_for_the_controller():
    m = model(BrokerEpochs="kraft")
    s = run(m, *COMMIT_A, ("PowerLoss", 0))
    assert not succ(m, s, "Restart", 0)  # the old incarnation is not handled yet
    s = run(m, ("OnBrokerFailure", 0), ("Restart", 0), state=s)
    assert not s.ctl_stale and s.zk_partition.isr == {1}


def test_a_new_controller_reads_zookeeper_afresh():
    m = model(ControllerFailoverLimit=1)
    s = run(m, *COMMIT_A, ("PowerLoss", 0), ("Restart", 0), ("ControllerFailover",))
    # leader 0 is registered, so alive: every live replica is told so
    assert s.ctl_stale == frozenset() and s.faults.failovers == 1
    assert s.ctl_request == ((LeaderAndIsr(0, 0, frozenset({0, 1}), 0, 0),),) * 2
    s = step(m, s, "ReceiveLeaderAndIsr", 0)
    assert s.role[0] == ReplicaRole(Role.LEADER, 0, 0) and s.log[0] == ()
    # the follower already follows epoch 0: the request is stale for it
    t = step(m, s, "ReceiveLeaderAndIsr", 1)
    assert t.role[1] == s.role[1] and t.ctl_request[1] == ()
    assert not succ(m, t, "ControllerFailover")  # ControllerFailoverLimit
    # a new controller handles the replicas that are not registered as failed
    s = run(m, *COMMIT_A, ("PowerLoss", 0), ("ControllerFailover",))
    assert s.zk_partition == (1, 1, frozenset({1}), 1) and s.ctl_live == {1}


def test_a_controlled_shutdown_in_steps():
    """Kafka's: the request, the controller's answer (leadership moved, ISR
    shrunk, the old leader told to follow), then the stop; the broker keeps
    serving in between and may crash there."""
    m = model(PowerLossLimit=1, ControlledShutdownLimit=1)
    s = run(m, *COMMIT_A, ("ControlledShutdown", 0))
    assert s.running[0] and s.shutting_down == (1, 0) and s.zk_partition.leader == 0
    assert "ShrinkIsr(0, 1)" in names(m, s)  # it still leads meanwhile
    s = step(m, s, "HandleControlledShutdown", 0)
    assert s.zk_partition == (1, 1, frozenset({1}), 1) and s.ctl_shutting_down == {0}
    assert s.ctl_request == ((LeaderAndIsr(1, 1, frozenset({1}), 1, 0),),) * 2
    assert s.running[0] and s.shutting_down == (2, 0)
    assert "RetryControlledShutdown(0)" not in names(m, s)  # nothing left to move
    t = step(m, s, "PowerLoss", 0)  # a crash in the middle
    assert t.shutting_down == (0, 0) and 0 not in t.clean_down and t.ctl_shutting_down == {0}
    s = step(m, s, "FinishControlledShutdown", 0)
    assert not s.running[0] and s.flushed[0] == 1 and s.ckpt_hw[0] == 1 and s.clean_down == {0}
    assert s.ctl_live == {0, 1}  # the controller handles the loss later
    s = step(m, s, "OnBrokerFailure", 0)
    assert s.ctl_live == {1} and not s.ctl_shutting_down


def test_a_shutting_down_leader_with_nobody_to_take_over_asks_again():
    m = model(PowerLossLimit=0, ControlledShutdownLimit=1)
    s = run(m, ("ShrinkIsr", 0, 1), ("ControlledShutdown", 0), ("HandleControlledShutdown", 0))
    assert s.zk_partition.leader == 0 and s.shutting_down == (2, 0)
    s = step(m, s, "RetryControlledShutdown", 0)
    assert s.shutting_down == (1, 0)


def test_a_controlled_shutdown_moves_leadership_first():
    m = model(PowerLossLimit=0, ControlledShutdownLimit=1, ControlledShutdownSteps="one")
    s = run(m, *COMMIT_A, ("ControlledShutdown", 0))
    assert not s.running[0] and s.flushed[0] == 1 and s.ckpt_hw[0] == 1
    assert s.zk_partition == (1, 1, frozenset({1}), 1) and s.ctl_live == {1}
    assert s.ctl_request == ((), (LeaderAndIsr(1, 1, frozenset({1}), 1, 0),))
    assert "OnBrokerFailure(0)" not in names(m, s)  # the controller has handled it


def test_prompt_controller_reactions():
    m = model(PromptElection=True)
    s = run(m, *COMMIT_A, ("PowerLoss", 0))
    assert names(m, s) == ["OnBrokerFailure(0)"]
    race = model()
    t = step(race, s, "Restart", 0)  # went first while the reaction was due
    assert t.faults.raced and step(race, t, "FlushLog", 1).faults.raced
    u = step(race, s, "OnBrokerFailure", 0)  # the reaction clears it
    assert not step(race, step(race, s, "FlushLog", 1), "OnBrokerFailure", 0).faults.raced
    assert not u.faults.raced
    assert not succ(race, t, "OnBrokerFailure", 0)  # 0 is registered again: nothing to handle


def test_zombie_leader_under_the_controller():
    """A leader whose session expired keeps leading until the controller
    elects another; its ISR writes then fail on the znode version."""
    m = model(PowerLossLimit=0, SessionExpiryLimit=1)
    s = run(m, ("Produce", 0, "A"), ("ExpireSession", 0), ("OnBrokerFailure", 0),
            ("ReceiveLeaderAndIsr", 1))
    assert s.role[0] == ReplicaRole(Role.LEADER, 0, 0) and s.role[1] == ReplicaRole(Role.LEADER, 1, 1)
    assert not succ(m, s, "ShrinkIsr", 0, 1)  # leader_view of 0: ISR {0, 1}, version 0 != 2
    s = run(m, ("Reregister", 0), ("OnBrokerStartup", 0), ("ReceiveLeaderAndIsr", 0), state=s)
    assert s.role[0] == ReplicaRole(Role.TRUNCATING, 1, 1)


def test_every_property_holds_with_the_controller_and_each_fault():
    for extra in (dict(ProcessCrashLimit=1, PowerLossLimit=1),
                  dict(ControlledShutdownLimit=2, PowerLossLimit=0),
                  dict(SessionExpiryLimit=1, PowerLossLimit=1), dict(UncleanLeaderElection=True)):
        model_, props = registry.build("zk", "leader_epoch", {**C2, **extra})
        r = check(model_, props)
        assert r.outcome == "pass" and r.exhausted, (extra, r.violations)


@pytest.mark.parametrize("steps,epochs,depth", [("several", "none", 12), ("several", "kip380", 13),
                                                ("several", "kraft", 14), ("one", "none", 8),
                                                ("one", "kip380", 9), ("one", "kraft", 10)])
def test_a_clean_stop_of_the_last_holder_hands_the_partition_to_the_replica_that_lost_it(steps, epochs,
                                                                                          depth):
    """broker-0 power-loses A; broker-1, the other holder, shuts down cleanly
    while the controller has yet to handle (or, without broker epochs, never
    sees) broker-0's loss: the controller shrinks the ISR to broker-0, which
    leads without A. broker-1 is down after a clean stop, holding A on disk:
    A stays under the durability promise, and LeaderCompleteness fails.
    Kafka's controlled shutdown in several steps (request, answer, stop)
    takes four steps more than the one-step reading."""
    model_, props = registry.build("zk", "leader_epoch", {**C2, "ControlledShutdownLimit": 2,
                                                          "BrokerEpochs": epochs,
                                                          "ControlledShutdownSteps": steps})
    r = check(model_, props)
    assert r.outcome == "violation"
    assert [(v.property, v.depth) for v in r.violations] == [("LeaderCompleteness", depth)]
