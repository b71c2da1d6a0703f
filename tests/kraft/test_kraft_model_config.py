"""The kraft model's constants: defaults, the reference's ASSUMEs, bad input.

Every rejection is a ModelConfigError whose one-line message names the
constant(s) at fault (the CLI turns it into exit code 2).
"""
from __future__ import annotations

import pytest

from model.base import ModelConfigError
from model.registry import MODELS

KRAFT = MODELS["kraft"]


def build(variant, **constants):
    return KRAFT.build(variant, constants)


def test_registered_with_both_variants_and_their_constants():
    assert set(KRAFT.variants) == {"kip966", "v3_5", "kip966_storage", "v3_5_storage"}  # storage: tests/kraft_storage
    kip = [c.name for c in KRAFT.variants["kip966"]]
    v35 = [c.name for c in KRAFT.variants["v3_5"]]
    assert "DataLossShutdownLimit" in kip and "NoDataLossShutdownLimit" in kip
    assert "UncleanShutdownLimit" in v35 and "CleanShutdownLimit" in v35
    assert "AvoidLastReplicaStanding" in v35 and "AvoidLastReplicaStanding" not in kip


def test_defaults_are_the_reference_cfg():
    m = build("kip966")
    assert m.constants == dict(
        BrokerCount=3, InitReplicationFactor=3, Values=["A"], MinISR=2, InitIsrSize=2,
        NoDataLossShutdownLimit=0, DataLossShutdownLimit=1, FenceBrokerLimit=1,
        LeaderShrinkIsrLimit=0, ReassignmentLimit=0)
    v = build("v3_5")
    assert v.constants["UncleanShutdownLimit"] == 1 and v.constants["CleanShutdownLimit"] == 0
    assert v.constants["AvoidLastReplicaStanding"] is True


def test_action_names_follow_next_of_each_variant():
    kip = build("kip966").action_names
    v35 = build("v3_5").action_names
    assert kip[:3] == ("BrokerStart", "ReceiveBrokerRegResponse", "ReceiveMetadataUpdate")
    assert kip[9:11] == ("DataLossShutdown", "NoDataLossShutdown")
    assert v35[9:11] == ("UncleanShutdown", "CleanShutdown")
    assert kip[-1] == v35[-1] == "PerformPartitionReassignment"
    assert len(kip) == len(v35) == 16


@pytest.mark.parametrize("constants, named", [
    (dict(InitReplicationFactor=4), "InitReplicationFactor"),          # RF <= BrokerCount
    (dict(InitIsrSize=3, InitReplicationFactor=2), "InitIsrSize"),     # ISR <= RF
    (dict(InitIsrSize=1), "MinISR"),                                   # ISR >= MinISR
    (dict(MinISR=3, InitIsrSize=3, InitReplicationFactor=2), "InitIsrSize"),
    (dict(BrokerCount=0, InitReplicationFactor=0, InitIsrSize=0, MinISR=0), "BrokerCount"),
    (dict(InitIsrSize=0, MinISR=0), "InitIsrSize"),                    # Init needs broker 1 in the ISR
    (dict(FenceBrokerLimit=-1), "FenceBrokerLimit"),                   # \in Nat
    (dict(ReassignmentLimit=-2), "ReassignmentLimit"),
    (dict(DataLossShutdownLimit=True), "DataLossShutdownLimit"),       # a bool is not a Nat
    (dict(MinISR="2"), "MinISR"),
    (dict(Values=[]), "Values"),
    (dict(Values=["A", "A"]), "Values"),
    (dict(Values="A"), "Values"),
    (dict(CleanShutdownLimit=1), "CleanShutdownLimit"),                # a v3_5 constant
])
def test_kip966_rejects_bad_constants(constants, named):
    with pytest.raises(ModelConfigError) as err:
        build("kip966", **constants)
    message = str(err.value)
    assert named in message and "\n" not in message


def test_v3_5_rejects_a_non_boolean_avoid_last_replica_standing():
    with pytest.raises(ModelConfigError, match="AvoidLastReplicaStanding"):
        build("v3_5", AvoidLastReplicaStanding=1)
    with pytest.raises(ModelConfigError, match="DataLossShutdownLimit"):
        build("v3_5", DataLossShutdownLimit=1)


def test_unknown_variant():
    with pytest.raises(ModelConfigError, match="v4"):
        build("v4")


def test_init_state_of_the_reference_configuration():
    """3 brokers, RF 3, ISR {1, 2}: broker 3 starts fenced, stale and out of sync."""
    s = build("kip966").init_states()
    assert len(s) == 1
    s = s[0]
    md = s.con_partition_metadata
    assert (md.replicas, md.isr, md.leader, md.leader_epoch, md.partition_epoch) == (
        frozenset({1, 2, 3}), frozenset({1, 2}), 1, 1, 2)
    assert s.con_unfenced == frozenset({1, 2})
    assert s.broker_metadata_log[2] == () and len(s.broker_metadata_log[1]) == 1
    assert s.partition_metadata[2].partition_epoch == 1
    assert s.partition_metadata[2].isr == frozenset({1, 2, 3})
    assert [f.partition is not None for f in s.broker_fetchers[2]] == [True, False, False]
    assert s.partition_leso == (1, None, None)
    assert s.aux_ctrs.incarn_ctr == 4 and s.aux_broker_epoch == 3
