"""The zk model's temporal properties and fairness (invariants/zk/liveness.py)."""
from __future__ import annotations

from checker.search.registry import reference_fairness_for, temporal_properties_for
from invariants.zk import liveness
from model.zk.model import ZkModel
from zk_steps import run


def model(**c):
    return ZkModel("leader_epoch", {"BrokerCount": 2, "ReplicationFactor": 2, "Values": ["A"], **c})


def test_fairness_covers_the_protocol_steps_not_the_faults():
    m = model(Election="controller", ControllerFailoverLimit=1, ProcessCrashLimit=1)
    fair = reference_fairness_for(m)
    assert "WF:ReceiveLeaderAndIsr" in fair and "WF:Restart" in fair and "WF:OnBrokerFailure" in fair
    for fault in ("PowerLoss", "ProcessCrash", "ControllerFailover", "Produce"):
        assert f"WF:{fault}" not in fair
    assert "WF:BecomeFollower" not in fair  # registration only
    assert "WF:BecomeFollower" in reference_fairness_for(model())


def test_a_bounce_the_08_controller_never_sees_leaves_the_partition_without_a_leader():
    m = model(Election="controller")
    s = m.init_states()[0]
    assert liveness.has_leader(s)
    s = run(m, ("PowerLoss", 0), ("Restart", 0))
    # the znode names broker-0, which runs but was never told to lead
    assert s.zk_partition.leader == 0 and s.running[0] and not liveness.has_leader(s)
    assert [a for a, _ in m.successors(s) if a.name == "ReceiveLeaderAndIsr"] == []


def test_properties_and_their_instances():
    m = model(Values=["A", "B"])
    props = {p.name: p for p in temporal_properties_for(m)}
    assert list(props) == ["EventuallyHasLeader", "EventuallyAcknowledgedValueFullyReplicated"]
    assert [i.label for i in props["EventuallyAcknowledgedValueFullyReplicated"].instances] == [
        "v=A", "v=B"]
    s = run(m, ("Produce", 0, "A"), ("HandleFetch", 0, 1), ("ReceiveFetchResponse", 1),
            ("HandleFetch", 0, 1))
    assert liveness.acked("A")(s) and liveness.replicated_or_unpromised("A", m.replicas)(s)
    assert not liveness.acked("B")(s)
