"""The storage variants (kip966_storage, v3_5_storage): flushing, the three
kinds of stop, fencing after a crash, restart, unclean recovery, the ghost
state of Unclean Exclusion, and bad constants.

Each test drives the model from its initial state with named actions and
checks what the KIP-966 description (section 5) says the step does.
"""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.registry import build as build_checked
from model.base import Action, ModelConfigError
from model.kraft.state import (
    NO_LEADER, VARIABLES, BrokerStatus, Ghost, KraftState, KraftStorageState, RecoveryMsgType,
    RegStatus)
from model.registry import MODELS

KRAFT = MODELS["kraft"]
B2 = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=2, InitIsrSize=2,
          FenceBrokerLimit=0, LeaderShrinkIsrLimit=0, ReassignmentLimit=0,
          ControlledShutdownLimit=0, ProcessCrashLimit=0, PowerLossLimit=2)


def model(variant="kip966_storage", **overrides):
    return KRAFT.build(variant, {**B2, **overrides})


def succ(m, s, name, *params):
    return m.successors_of(s, Action(name, tuple(params)))


def step(m, s, name, *params, pick=None):
    out = succ(m, s, name, *params)
    if pick is None:
        assert len(out) == 1, f"{name}{params}: {len(out)} successors"
        return out[0]
    return out[pick]


def run(m, s, *steps):
    for st in steps:
        s = step(m, s, *st)
    return s


COMMIT_A = (("WriteRecordToLeader", 1), ("SendFetchRequest", 2), ("ReceiveFetchRequest", 1),
            ("ReceiveFetchResponse", 2), ("SendFetchRequest", 2), ("ReceiveFetchRequest", 1))


def committed(m):
    """A written by leader 1, replicated to 2 and acknowledged (HWM 2)."""
    s = run(m, m.init_states()[0], *COMMIT_A)
    assert s.inv_pos_acked == {"A"} and s.partition_data[0].hwm == 2
    return s


# ---- layout: the reference variants are untouched ------------------------------------

def test_reference_variants_keep_their_23_variables():
    for variant in ("kip966", "v3_5"):
        m = KRAFT.build(variant, {})
        (s,) = m.init_states()
        assert type(s) is KraftState and len(s) == 23 and m.variables == VARIABLES


def test_storage_state_extends_the_reference_layout():
    m = model()
    (s,) = m.init_states()
    assert type(s) is KraftStorageState and m.variables == KraftStorageState._fields
    assert KraftStorageState._fields[:23] == VARIABLES
    assert s.partition_flushed == (1, 1) and s.partition_hwm_checkpoint == (1, 1)
    assert s.con_recovery is None and s.ghost_unclean == (Ghost.TRUSTED,) * 2
    # the storage variants' successors keep the storage layout
    for _, t in m.successors(s):
        assert type(t) is KraftStorageState


# ---- flush policies ----------------------------------------------------------------

def test_async_flushes_only_in_background_steps():
    m = model(FlushPolicy="async", Values=["A", "B"], MinISR=1)
    s = step(m, m.init_states()[0], "WriteRecordToLeader", 1, pick=0)
    assert s.partition_data[0].leo == 2 and s.partition_flushed[0] == 1
    s = step(m, s, "WriteRecordToLeader", 1, pick=0)
    assert s.partition_data[0].leo == 3 and s.partition_flushed[0] == 1
    # the OS may flush up to any offset in (flushed, LEO]
    assert [t.partition_flushed[0] for t in succ(m, s, "BackgroundFlush", 1)] == [2, 3]


@pytest.mark.parametrize("policy, extra, after_one, after_two", [
    ("every_write", {}, 2, 3),
    ("every_n", {"FlushEveryN": 2}, 1, 3),
    # the 2nd append rolls the 1st segment (SegmentRollFlush append: flushed in the append)
    ("segment_roll", {"SegmentSize": 1, "SegmentRollFlush": "append"}, 1, 2),
])
def test_policy_flushes_on_append(policy, extra, after_one, after_two):
    m = model(FlushPolicy=policy, Values=["A", "B"], MinISR=1, BackgroundFlushAlways=False, **extra)
    assert "BackgroundFlush" not in m.action_names
    s = step(m, m.init_states()[0], "WriteRecordToLeader", 1, pick=0)
    assert s.partition_flushed[0] == after_one
    s = step(m, s, "WriteRecordToLeader", 1, pick=0)
    assert s.partition_flushed[0] == after_two


def test_a_segment_roll_schedules_its_flush_as_a_step_of_its_own():
    """SegmentRollFlush scheduled (default, Kafka's UnifiedLog.roll): the roll
    schedules the flush-log task; until FlushRolledSegments runs, a power loss
    drops the rolled segment."""
    m = model(FlushPolicy="segment_roll", Values=["A", "B"], MinISR=1, BackgroundFlushAlways=False)
    s = step(m, m.init_states()[0], "WriteRecordToLeader", 1, pick=0)
    assert not succ(m, s, "FlushRolledSegments", 1)  # A is in the active segment
    s = step(m, s, "WriteRecordToLeader", 1, pick=0)
    assert s.partition_flushed[0] == 1  # B rolled A's segment; its flush is still to come
    lost = step(m, s, "PowerLoss", 1)
    assert lost.partition_data[0].log == ()
    f = step(m, s, "FlushRolledSegments", 1)
    assert f.partition_flushed[0] == 2 and not succ(m, f, "FlushRolledSegments", 1)
    assert [r.value for r in step(m, f, "PowerLoss", 1).partition_data[0].log] == ["A"]
    assert "FlushRolledSegments" not in model(FlushPolicy="segment_roll",
                                              SegmentRollFlush="append").action_names


def test_rolled_segment_unflushed_marks_the_pending_flush_task():
    m, props = build_checked("kraft", "kip966_storage",
                             {**B2, "Values": ["A", "B"], "MinISR": 1, "FlushPolicy": "segment_roll"})
    (w,) = [p for p in props if p.name == "RolledSegmentUnflushed"]
    s = step(m, m.init_states()[0], "WriteRecordToLeader", 1, pick=0)
    assert not w.predicate(s)
    s = step(m, s, "WriteRecordToLeader", 1, pick=0)
    assert w.predicate(s) and not w.predicate(step(m, s, "FlushRolledSegments", 1))
    _, props = build_checked("kraft", "kip966_storage", {**B2, "FlushPolicy": "segment_roll",
                                                         "SegmentRollFlush": "append"})
    assert "RolledSegmentUnflushed" not in [p.name for p in props]


@pytest.mark.parametrize("policy, extra, after", [
    ("every_write", {}, []),  # nothing left dirty
    ("every_n", {"FlushEveryN": 2}, [2]),
    ("segment_roll", {"SegmentSize": 1}, [2]),
])
def test_the_os_flushes_in_the_background_under_every_policy(policy, extra, after):
    """BackgroundFlushAlways (default true): the kernel writes dirty pages back
    whatever log.flush.* says."""
    m = model(FlushPolicy=policy, Values=["A", "B"], MinISR=1, **extra)
    s = step(m, m.init_states()[0], "WriteRecordToLeader", 1, pick=0)
    assert [t.partition_flushed[0] for t in succ(m, s, "BackgroundFlush", 1)] == after


def test_follower_appends_follow_the_policy_and_truncation_lowers_the_flushed_offset():
    m = model(FlushPolicy="every_write", HwmCheckpoint="flush")
    s = committed(m)
    assert s.partition_flushed == (2, 2)
    assert s.partition_hwm_checkpoint[1] == 1  # written at the follower's flush, HWM was 1 then


def test_the_hwm_checkpoint_is_written_on_its_own_timer():
    """HwmCheckpoint timer (default): CheckpointHwm(b) writes a running broker's
    HWM; the log's flushes do not (ReplicaManager.checkpointHighWatermarks)."""
    m = model(FlushPolicy="every_write")
    s = committed(m)
    assert s.partition_hwm_checkpoint == (1, 1)
    t = step(m, s, "CheckpointHwm", 1)
    assert t.partition_hwm_checkpoint == (2, 1)
    assert not succ(m, t, "CheckpointHwm", 1)  # nothing new to write
    assert not succ(m, s, "CheckpointHwm", 2)  # the follower's HWM is still 1
    crashed = step(model(FlushPolicy="every_write", ProcessCrashLimit=1), t, "ProcessCrash", 1)
    assert crashed.partition_data[0].hwm == 2  # read back from the checkpoint
    assert not succ(m, step(m, s, "PowerLoss", 1), "CheckpointHwm", 1)  # only while it runs
    flush = model(FlushPolicy="every_write", HwmCheckpoint="flush")
    assert "CheckpointHwm" not in flush.action_names


# ---- the three stops ---------------------------------------------------------------

def test_power_loss_keeps_the_flushed_prefix_and_clamps_the_hwm():
    m = model(FlushPolicy="async")
    s = committed(m)
    lost = step(m, s, "PowerLoss", 2)
    assert lost.partition_data[1].log == () and lost.partition_data[1].leo == 1
    assert lost.broker_state[1].status == BrokerStatus.OFFLINE_DIRTY
    assert lost.broker_state[1].broker_epoch == 0  # no broker epoch file
    assert lost.ghost_unclean[1] == Ghost.STOPPED_UNCLEAN
    # the controller has not noticed yet: still registered, unfenced, in the ISR
    assert lost.con_broker_reg[1].status == RegStatus.UNFENCED and 2 in lost.con_partition_metadata.isr
    flushed = step(m, s, "BackgroundFlush", 2)
    kept = step(m, flushed, "PowerLoss", 2)
    assert [r.value for r in kept.partition_data[1].log] == ["A"]
    assert kept.partition_data[1].hwm == 1  # the checkpoint said 1 (the follower's HWM then)


def test_process_crash_keeps_the_log_but_writes_no_epoch_file():
    m = model(ProcessCrashLimit=1)
    s = committed(m)
    t = step(m, s, "ProcessCrash", 1)
    assert t.partition_data[0].log == s.partition_data[0].log
    assert t.partition_data[0].hwm == 1  # from the checkpoint, not written since (no CheckpointHwm)
    assert t.broker_state[0].broker_epoch == 0 and t.ghost_unclean[0] == Ghost.STOPPED_UNCLEAN
    assert t.aux_ctrs.process_crash_ctr == 1
    # the OS is still up: its page cache may be flushed, or lost to a power loss
    lost = step(m, t, "PowerLoss", 1)
    assert lost.partition_data[0].log == () and lost.ghost_unclean[0] == Ghost.STOPPED_UNCLEAN
    flushed = step(m, t, "BackgroundFlush", 1)
    assert not succ(m, flushed, "PowerLoss", 1)  # nothing left to lose


def test_controlled_shutdown_flushes_writes_the_epoch_file_and_is_fenced():
    m = model(ControlledShutdownLimit=1, ControlledShutdownSteps=False)
    s = committed(m)
    (t,) = succ(m, s, "ControlledShutdown", 1)
    assert t.partition_flushed[0] == t.partition_data[0].leo == 2
    assert t.partition_hwm_checkpoint[0] == 2
    assert t.broker_state[0].status == BrokerStatus.OFFLINE_CLEAN
    assert t.broker_state[0].broker_epoch == s.broker_state[0].broker_epoch  # the epoch file
    assert t.con_broker_reg[0].status == RegStatus.FENCED
    assert t.con_partition_metadata.leader == 2 and t.ghost_unclean[0] == Ghost.TRUSTED


def test_controlled_shutdown_in_steps_moves_leadership_before_the_broker_stops():
    m = model(ControlledShutdownLimit=1, ControlledShutdownTimeout=False)
    assert "ControlledShutdown" not in m.action_names
    s = committed(m)
    a = step(m, s, "BeginControlledShutdown", 1)
    assert a.broker_want_shutdown[0] and a.aux_ctrs.controlled_shutdown_ctr == 1
    assert not succ(m, a, "GrantShutdown", 1)  # it still leads
    assert not succ(m, a, "CompleteControlledShutdown", 1)  # not told to shut down yet
    e = step(m, a, "EnterControlledShutdown", 1)
    md = e.con_partition_metadata
    assert md.leader == 2 and 1 not in md.isr and 1 in md.elr  # kip966: ISR below MinISR -> ELR
    assert e.con_broker_reg[0].status == RegStatus.UNFENCED and 1 in e.con_unfenced
    assert m.in_controlled_shutdown(e) == {1}  # registered, unfenced, never elected
    assert e.con_controlled_shutdown[0] == len(e.con_metadata_log)
    assert e.broker_state[0].status == BrokerStatus.RUNNING
    assert not succ(m, e, "GrantShutdown", 1)  # broker 2 has not seen the change yet
    u = step(m, e, "ReceiveMetadataUpdate", 2)
    g = step(m, u, "GrantShutdown", 1)
    assert g.con_broker_reg[0].status == RegStatus.FENCED and g.con_controlled_shutdown[0] is None
    assert not succ(m, g, "UnfenceBroker", 1)  # a broker that wants to stop is not unfenced
    t = step(m, g, "CompleteControlledShutdown", 1)
    assert t.broker_state[0].status == BrokerStatus.OFFLINE_CLEAN
    assert t.broker_state[0].broker_epoch == s.broker_state[0].broker_epoch  # the epoch file
    assert t.partition_flushed[0] == t.partition_data[0].leo and not t.broker_want_shutdown[0]
    crashed = step(m, e, "PowerLoss", 1)  # a crash in the middle: no epoch file, still unfenced
    assert crashed.broker_state[0].broker_epoch == 0 and not crashed.broker_want_shutdown[0]
    assert crashed.con_controlled_shutdown[0] is not None
    fenced = step(m, crashed, "SessionTimeout", 1)
    assert fenced.con_controlled_shutdown[0] is None


def test_a_controlled_shutdown_times_out_without_the_grant():
    """ControlledShutdownTimeout (default, BrokerServer.shutdown): the broker
    stops cleanly without the controller's grant; it stays registered
    unfenced, and leader, until its session times out."""
    m = model(ControlledShutdownLimit=1)
    a = step(m, committed(m), "BeginControlledShutdown", 1)
    t = step(m, a, "CompleteControlledShutdown", 1)
    assert t.broker_state[0].status == BrokerStatus.OFFLINE_CLEAN
    assert t.partition_flushed[0] == t.partition_data[0].leo == 2
    assert t.con_broker_reg[0].status == RegStatus.UNFENCED and t.con_partition_metadata.leader == 1
    fenced = step(m, t, "SessionTimeout", 1)
    assert fenced.con_broker_reg[0].status == RegStatus.FENCED
    assert fenced.con_partition_metadata.leader == 2


def test_without_controlled_shutdown_the_broker_stops_at_once():
    """ControlledShutdownEnable = false (controlled.shutdown.enable): one step,
    no request to the controller, which learns at the session timeout."""
    m = model(ControlledShutdownLimit=1, ControlledShutdownEnable=False)
    assert not {"BeginControlledShutdown", "ControlledShutdown"} & set(m.action_names)
    s = committed(m)
    t = step(m, s, "UncontrolledShutdown", 1)
    assert t.broker_state[0].status == BrokerStatus.OFFLINE_CLEAN
    assert t.broker_state[0].broker_epoch == s.broker_state[0].broker_epoch  # the epoch file
    assert t.partition_flushed[0] == 2 and t.partition_hwm_checkpoint[0] == 2
    assert t.con_broker_reg[0].status == RegStatus.UNFENCED and t.aux_ctrs.controlled_shutdown_ctr == 1
    assert not succ(m, t, "UncontrolledShutdown", 2)  # the limit


@pytest.mark.parametrize("stops", [True, False])
def test_a_follower_in_controlled_shutdown_stops_fetching_once_out_of_the_isr(stops):
    """ShutdownStopsFetching (default, ReplicaManager.applyLocalFollowersDelta):
    the leader in controlled shutdown, moved out of its leadership and the
    ISR (EnterControlledShutdown), becomes a follower that does not fetch;
    false: it fetches from the new leader until it stops."""
    m, props = build_checked("kraft", "kip966_storage",
                             {**B2, "ControlledShutdownLimit": 1, "ShutdownStopsFetching": stops})
    a = step(m, committed(m), "BeginControlledShutdown", 1)
    e = step(m, a, "EnterControlledShutdown", 1)
    assert e.con_partition_metadata.leader == 2 and 1 not in e.con_partition_metadata.isr
    u = step(m, e, "ReceiveMetadataUpdate", 1, pick=0)  # a leader seeing a new epoch: twice (TLC)
    assert u.partition_metadata[0].leader == 2 and u.broker_state[0].status == BrokerStatus.RUNNING
    fetching = any(f.partition is not None for f in u.broker_fetchers[0])
    assert fetching is not stops
    names = [p.name for p in props]
    assert ("StoppedFetchingInShutdown" in names) is stops
    if stops:
        (w,) = [p for p in props if p.name == "StoppedFetchingInShutdown"]
        assert w.predicate(u) and not w.predicate(e)
        assert not succ(m, u, "SendFetchRequest", 1)


def test_shutdown_without_grant_marks_an_unfenced_clean_stop_only():
    m, props = build_checked("kraft", "kip966_storage", {**B2, "ControlledShutdownLimit": 1})
    (w,) = [p for p in props if p.name == "ShutdownWithoutGrant"]
    a = step(m, committed(m), "BeginControlledShutdown", 2)
    assert w.predicate(step(m, a, "CompleteControlledShutdown", 2))
    granted = step(m, step(m, a, "GrantShutdown", 2), "CompleteControlledShutdown", 2)
    assert not w.predicate(granted)
    _, props = build_checked("kraft", "kip966_storage", {**B2, "ControlledShutdownLimit": 1,
                                                         "ControlledShutdownTimeout": False})
    assert "ShutdownWithoutGrant" not in [p.name for p in props]


def test_correlated_power_outage_takes_down_several_brokers_in_one_step():
    m = model(CorrelatedPowerLoss=True)
    assert "PowerOutage" in m.action_names
    s = committed(m)
    (t,) = succ(m, s, "PowerOutage", 1, 2)
    assert all(d.log == () for d in t.partition_data) and t.aux_ctrs.power_loss_ctr == 2
    assert not succ(m, t, "PowerOutage", 1, 2)
    assert not succ(model(PowerLossLimit=1, CorrelatedPowerLoss=True), s, "PowerOutage", 1, 2)


# ---- fencing and restart ------------------------------------------------------------

def test_a_crashed_broker_registers_only_after_its_session_is_fenced_for_free():
    m = model(FenceBrokerLimit=0)
    s = committed(m)
    s = run(m, s, ("PowerLoss", 2), ("BrokerStart", 2))
    assert not succ(m, s, "ReceiveBrokerRegRequest", 2)  # the old incarnation is still registered
    assert not succ(m, s, "FenceBroker", 2)  # FenceBroker fences live brokers only
    s = step(m, s, "SessionTimeout", 2)  # the dead session times out: free
    assert s.aux_ctrs.fence_broker_ctr == 0
    md = s.con_partition_metadata
    assert md.isr == {1} and md.elr == {2}  # case A: below MinISR the ELR keeps it
    s = step(m, s, "ReceiveBrokerRegRequest", 2)  # no epoch file: unclean
    md = s.con_partition_metadata
    assert md.elr == frozenset() and s.ghost_unclean[1] == Ghost.UNCLEAN
    # a running broker's fence still needs the budget; its session does not time out
    assert not succ(m, s, "FenceBroker", 1) and not succ(m, s, "SessionTimeout", 1)


def test_unclean_replica_is_trusted_again_once_the_leader_sees_it_caught_up():
    m = model(FlushPolicy="async")
    s = committed(m)
    s = run(m, s, ("PowerLoss", 2), ("SessionTimeout", 2), ("BrokerStart", 2),
            ("ReceiveBrokerRegRequest", 2), ("ReceiveBrokerRegResponse", 2))
    s = step(m, s, "ReceiveMetadataUpdate", 2, pick=-1)  # up to the last metadata record
    assert s.partition_status[1] is not None
    assert s.ghost_unclean[1] == Ghost.UNCLEAN and s.partition_data[1].log == ()
    s = run(m, s, ("SendFetchRequest", 2), ("ReceiveFetchRequest", 1))
    assert s.ghost_unclean[1] == Ghost.UNCLEAN  # fetched at offset 1 < HWM 2
    s = run(m, s, ("ReceiveFetchResponse", 2), ("SendFetchRequest", 2), ("ReceiveFetchRequest", 1))
    assert s.ghost_unclean[1] == Ghost.TRUSTED  # fetched at offset 2 >= the leader's HWM


# ---- unclean recovery ----------------------------------------------------------------

def outage_and_restarts(m):
    """KIP-966 description 5.3.3 on two brokers: A committed on both, only broker 2
    flushed it; a power outage; the controller fences 1 (electing 2), then 2
    (no leader, ELR {1, 2}); both restart without an epoch file."""
    s = committed(m)
    s = run(m, s, ("BackgroundFlush", 2), ("PowerLoss", 1), ("PowerLoss", 2), ("SessionTimeout", 1))
    assert s.con_partition_metadata.leader == 2
    s = step(m, s, "SessionTimeout", 2)
    md = s.con_partition_metadata
    assert md.leader == NO_LEADER and md.isr == frozenset() and md.elr == {1, 2}
    s = run(m, s, ("BrokerStart", 1), ("ReceiveBrokerRegRequest", 1), ("BrokerStart", 2),
            ("ReceiveBrokerRegRequest", 2), ("ReceiveBrokerRegResponse", 1),
            ("ReceiveBrokerRegResponse", 2))
    md = s.con_partition_metadata
    assert md.elr == frozenset() and md.last_known_elr == {1, 2}
    return s


def test_balanced_recovery_elects_the_best_log_and_reports_it():
    m = model(UncleanRecoveryStrategy="balanced")
    s = step(m, outage_and_restarts(m), "StartUncleanRecovery")
    asks = sorted(x.dest for x in s.messages if x.type == RecoveryMsgType.GetReplicaLogInfoRequest)
    assert asks == [1, 2] and s.con_recovery.asked == {1, 2}
    s = run(m, s, ("ReceiveGetReplicaLogInfoRequest", 1), ("ReceiveGetReplicaLogInfoRequest", 2),
            ("ReceiveGetReplicaLogInfoResponse", 1))
    assert not succ(m, s, "CompleteUncleanRecovery")  # balanced waits for every answer
    s = run(m, s, ("ReceiveGetReplicaLogInfoResponse", 2), ("CompleteUncleanRecovery",))
    md = s.con_partition_metadata
    assert md.leader == 2 and md.isr == {2} and s.con_recovery is None
    assert s.ghost_reported.count == 1 and s.ghost_reported.lost == frozenset()  # no loss here
    assert s.ghost_unclean == (Ghost.UNCLEAN, Ghost.TRUSTED)


def test_proactive_recovery_may_elect_from_a_subset_and_reports_the_loss():
    m = model(UncleanRecoveryStrategy="proactive")
    s = step(m, outage_and_restarts(m), "StartUncleanRecovery")
    s = run(m, s, ("ReceiveGetReplicaLogInfoRequest", 1), ("ReceiveGetReplicaLogInfoResponse", 1),
            ("CompleteUncleanRecovery",))
    assert s.con_partition_metadata.leader == 1 and s.ghost_reported.lost == {"A"}


def test_manual_recovery_never_elects():
    m = model(UncleanRecoveryStrategy="manual")
    assert not {"StartUncleanRecovery", "CompleteUncleanRecovery"} & set(m.action_names)
    s = outage_and_restarts(m)
    assert all(a.name not in ("StartUncleanRecovery", "CompleteUncleanRecovery")
               for a, _ in m.successors(s))


def test_storage_states_survive_the_canonical_encoding():
    encoding = pytest.importorskip("checker.search.encoding")
    m = model(UncleanRecoveryStrategy="balanced")
    s = step(m, outage_and_restarts(m), "StartUncleanRecovery")
    s = run(m, s, ("ReceiveGetReplicaLogInfoRequest", 1), ("ReceiveGetReplicaLogInfoResponse", 1),
            ("ReceiveGetReplicaLogInfoRequest", 2))
    for t in (s, step(m, s, "ReceiveGetReplicaLogInfoResponse", 2)):
        plain = encoding.decode_state(encoding.parts_to_bytes(encoding.encode_state(t)))
        back = m.from_plain(plain)
        assert back == t and type(back) is KraftStorageState


# ---- properties ----------------------------------------------------------------------

def test_storage_properties_are_registered_for_the_storage_variants_only():
    _, props = build_checked("kraft", "kip966_storage", {**B2})
    names = [p.name for p in props]
    assert {"UncleanExclusion", "DataLossIsReported", "ValidStorageState",
            "LeaderCompletenessProperty", "UncleanRecoveryReported"} <= set(names)
    assert names.index("UncleanExclusion") > names.index("ValidControllerIsrAndElr")
    _, ref = build_checked("kraft", "kip966", {})
    assert "UncleanExclusion" not in {p.name for p in ref}
    _, manual = build_checked("kraft", "kip966_storage", {**B2, "UncleanRecoveryStrategy": "manual"})
    assert "UncleanRecoveryReported" not in {p.name for p in manual}


def test_unclean_exclusion_flags_an_unclean_elr_member():
    m, props = build_checked("kraft", "kip966_storage", {**B2})
    (ue,) = [p for p in props if p.name == "UncleanExclusion"]
    s = run(m, committed(m), ("PowerLoss", 2), ("SessionTimeout", 2), ("BrokerStart", 2),
            ("ReceiveBrokerRegRequest", 2))
    assert ue.predicate(s)
    forged = s._replace(con_partition_metadata=s.con_partition_metadata._replace(elr=frozenset({2})))
    assert not ue.predicate(forged)


def test_data_loss_is_reported_flags_an_unreported_loss_only():
    m, props = build_checked("kraft", "kip966_storage", {**B2, "UncleanRecoveryStrategy": "proactive"})
    (dl,) = [p for p in props if p.name == "DataLossIsReported"]
    s = step(m, outage_and_restarts(m), "StartUncleanRecovery")
    s = run(m, s, ("ReceiveGetReplicaLogInfoRequest", 1), ("ReceiveGetReplicaLogInfoResponse", 1),
            ("CompleteUncleanRecovery",))
    assert dl.predicate(s)  # leader 1 lacks A, and the recovery reported it
    assert not dl.predicate(s._replace(ghost_reported=s.ghost_reported._replace(lost=frozenset())))


def test_acked_record_unflushed_marks_the_page_cache_window():
    m, props = build_checked("kraft", "kip966_storage", {**B2})  # FlushPolicy async
    (w,) = [p for p in props if p.name == "AckedRecordUnflushed"]
    s = committed(m)  # A acknowledged, flushed nowhere
    assert w.predicate(s) and not w.predicate(m.init_states()[0])
    s = run(m, s, ("BackgroundFlush", 1))
    assert w.predicate(s)  # still unflushed on broker 2
    assert not w.predicate(run(m, s, ("BackgroundFlush", 2)))
    every_write, props = build_checked("kraft", "kip966_storage", {**B2, "FlushPolicy": "every_write"})
    (w,) = [p for p in props if p.name == "AckedRecordUnflushed"]
    assert not w.predicate(committed(every_write))


def test_hwm_checkpointed_marks_a_checkpoint_written_while_running():
    m, props = build_checked("kraft", "kip966_storage", {**B2, "FlushPolicy": "every_write"})
    (w,) = [p for p in props if p.name == "HwmCheckpointed"]
    s = committed(m)  # HWM 2, flushed, but not checkpointed (HwmCheckpoint timer)
    assert not w.predicate(s) and w.predicate(run(m, s, ("CheckpointHwm", 1)))
    m, props = build_checked("kraft", "kip966_storage", {**B2, "FlushPolicy": "every_write",
                                                         "ControlledShutdownLimit": 1,
                                                         "ControlledShutdownSteps": False})
    (w,) = [p for p in props if p.name == "HwmCheckpointed"]
    assert not w.predicate(run(m, committed(m), ("ControlledShutdown", 1)))  # a stop's, not the timer's


def test_active_segment_flushed_marks_the_os_flushing_what_the_policy_left():
    m, props = build_checked("kraft", "kip966_storage", {**B2, "FlushPolicy": "segment_roll"})
    (w,) = [p for p in props if p.name == "ActiveSegmentFlushed"]
    s = run(m, m.init_states()[0], ("WriteRecordToLeader", 1))
    assert s.partition_flushed[0] == 1 and not w.predicate(s)  # A is in the active segment
    assert w.predicate(run(m, s, ("BackgroundFlush", 1)))
    _, props = build_checked("kraft", "kip966_storage", {**B2, "FlushPolicy": "every_write"})
    assert "ActiveSegmentFlushed" not in [p.name for p in props]


def test_unclean_recovery_lost_data_marks_a_reported_loss_only():
    for strategy, lost in (("balanced", False), ("proactive", True)):
        m, props = build_checked("kraft", "kip966_storage", {**B2, "UncleanRecoveryStrategy": strategy})
        (w,) = [p for p in props if p.name == "UncleanRecoveryLostData"]
        s = step(m, outage_and_restarts(m), "StartUncleanRecovery")
        s = run(m, s, ("ReceiveGetReplicaLogInfoRequest", 1), ("ReceiveGetReplicaLogInfoRequest", 2),
                ("ReceiveGetReplicaLogInfoResponse", 1))
        if strategy == "balanced":
            s = step(m, s, "ReceiveGetReplicaLogInfoResponse", 2)
        s = step(m, s, "CompleteUncleanRecovery")
        assert s.ghost_reported.count == 1 and w.predicate(s) == lost, strategy
    _, manual = build_checked("kraft", "kip966_storage", {**B2, "UncleanRecoveryStrategy": "manual"})
    assert "UncleanRecoveryLostData" not in {p.name for p in manual}


def test_the_seeded_bug_is_caught_by_unclean_exclusion():
    m, props = build_checked("kraft", "kip966_storage",
                             {**B2, "PowerLossLimit": 0, "ProcessCrashLimit": 1,
                              "Mutants": ["keep_unclean_broker_in_elr"]})
    r = check(m, props, CheckOptions(max_depth=6, stop_on_violation=True))
    assert r.violated == ["UncleanExclusion"] and r.violations[0].depth == 4
    clean, props = build_checked("kraft", "kip966_storage",
                                 {**B2, "PowerLossLimit": 0, "ProcessCrashLimit": 1})
    assert check(clean, props, CheckOptions(max_depth=6)).outcome == "pass"


# ---- bad constants ----------------------------------------------------------------------

@pytest.mark.parametrize("variant, constants, named", [
    ("kip966_storage", {"FlushPolicy": "sometimes"}, "FlushPolicy"),
    ("kip966_storage", {"FlushPolicy": "every_n", "FlushEveryN": 0}, "FlushEveryN"),
    ("kip966_storage", {"FlushEveryN": 3}, "FlushEveryN"),  # policy async
    ("kip966_storage", {"SegmentSize": 2, "FlushPolicy": "every_write"}, "SegmentSize"),
    ("kip966_storage", {"SegmentRollFlush": "append"}, "SegmentRollFlush"),  # policy async
    ("kip966_storage", {"FlushPolicy": "segment_roll", "SegmentRollFlush": "later"},
     "SegmentRollFlush"),
    ("kip966_storage", {"ControlledShutdownEnable": False, "ControlledShutdownSteps": False},
     "ControlledShutdownSteps"),
    ("kip966", {"ControlledShutdownTimeout": True}, "ControlledShutdownTimeout"),  # storage only
    ("kip966_storage", {"UncleanRecoveryStrategy": "eager"}, "UncleanRecoveryStrategy"),
    ("kip966_storage", {"CorrelatedPowerLoss": 1}, "CorrelatedPowerLoss"),
    ("kip966_storage", {"PowerLossLimit": -1}, "PowerLossLimit"),
    ("kip966_storage", {"DataLossShutdownLimit": 1}, "DataLossShutdownLimit"),  # the reference's
    ("v3_5_storage", {"UncleanRecoveryStrategy": "balanced"}, "UncleanRecoveryStrategy"),
])
def test_bad_constants_are_one_line_errors_naming_the_constant(variant, constants, named):
    with pytest.raises(ModelConfigError) as err:
        KRAFT.build(variant, constants)
    assert named in str(err.value) and "\n" not in str(err.value)


# ---- what Kafka 4.x ships: the last known leader, unclean.leader.election.enable -------

def test_last_known_leader_is_elected_once_unfenced_whatever_the_other_log_holds():
    """The LastKnownELR is the leader when the ISR emptied (2), not the ELR
    leavers; once ISR and ELR are empty and 2 is unfenced it is elected,
    although only 1 flushed the committed A: the loss is reported."""
    m = model(UncleanRecoveryStrategy="last_known_leader")
    assert "ElectLastKnownLeader" in m.action_names and "StartUncleanRecovery" not in m.action_names
    s = run(m, committed(m), ("BackgroundFlush", 1), ("PowerLoss", 1), ("PowerLoss", 2),
            ("SessionTimeout", 1), ("SessionTimeout", 2))
    md = s.con_partition_metadata
    assert md.leader == NO_LEADER and md.elr == {1, 2} and md.last_known_elr == {2}
    s = run(m, s, ("BrokerStart", 1), ("ReceiveBrokerRegRequest", 1))
    assert not succ(m, s, "ElectLastKnownLeader")  # the ELR still holds 2
    s = run(m, s, ("BrokerStart", 2), ("ReceiveBrokerRegRequest", 2))
    md = s.con_partition_metadata
    assert md.isr == md.elr == frozenset() and md.last_known_elr == {2}
    s = step(m, s, "ElectLastKnownLeader")
    md = s.con_partition_metadata
    assert (md.leader, md.isr, md.last_known_elr) == (2, {2}, frozenset())
    assert s.ghost_reported.count == 1 and s.ghost_reported.lost == {"A"}


def test_unclean_leader_election_elects_an_unfenced_replica_outside_isr_and_elr():
    m = model(UncleanRecoveryStrategy="last_known_leader", UncleanLeaderElection=True)
    s = run(m, committed(m), ("PowerLoss", 2), ("SessionTimeout", 2), ("PowerLoss", 1),
            ("SessionTimeout", 1), ("BrokerStart", 2), ("ReceiveBrokerRegRequest", 2))
    md = s.con_partition_metadata
    assert md.leader == NO_LEADER and md.isr == frozenset() and md.elr == {1}  # 1 fenced
    assert not succ(m, s, "ElectLastKnownLeader")
    s = step(m, s, "ElectUncleanLeader")
    md = s.con_partition_metadata
    assert (md.leader, md.isr, md.elr) == (2, {2}, frozenset()) and s.ghost_reported.lost == {"A"}
    off = model(UncleanRecoveryStrategy="last_known_leader")
    assert "ElectUncleanLeader" not in off.action_names


def _first(m, s, goal, depth):
    """Breadth-first from s: the first state within `depth` steps where goal
    holds, and every state seen on the way."""
    seen, level = {s}, [s]
    for _ in range(depth):
        nxt = []
        for u in level:
            for _, v in m.successors(u):
                if v not in seen:
                    if goal(v):
                        return v, seen
                    seen.add(v)
                    nxt.append(v)
        level = nxt
    return None, seen


@pytest.mark.parametrize("recovery", [True, False])
def test_an_unclean_election_marks_the_partition_recovering_until_the_leader_alters_it(recovery):
    """LeaderRecoveryState (default, KIP-704): ElectUncleanLeader leaves the
    partition RECOVERING (PartitionChangeBuilder.tryElection), the ISR stays
    the leader alone until the leader's accepted AlterPartition, which clears
    it (the leader marked itself RECOVERED in Partition.makeLeader)."""
    m = model(UncleanRecoveryStrategy="last_known_leader", UncleanLeaderElection=True,
              LeaderRecoveryState=recovery)
    s = run(m, committed(m), ("PowerLoss", 2), ("SessionTimeout", 2), ("PowerLoss", 1),
            ("SessionTimeout", 1), ("BrokerStart", 2), ("ReceiveBrokerRegRequest", 2))
    assert not s.con_leader_recovering
    s = step(m, s, "ElectUncleanLeader")
    assert s.con_leader_recovering is recovery and s.con_partition_metadata.isr == {2}
    grown, seen = _first(m, s, lambda u: len(u.con_partition_metadata.isr) > 1, 14)
    assert grown is not None and not grown.con_leader_recovering
    if recovery:
        assert all(len(u.con_partition_metadata.isr) <= 1 for u in seen if u.con_leader_recovering)
        assert any(u.con_leader_recovering for u in seen)


def test_unclean_leader_election_needs_the_last_known_leader_strategy_in_kip966():
    with pytest.raises(ModelConfigError, match="UncleanLeaderElection"):
        model(UncleanLeaderElection=True)
    assert "ElectUncleanLeader" in model("v3_5_storage", UncleanLeaderElection=True).action_names


def test_a_fetch_that_outlived_its_sender_proves_the_catch_up_of_its_incarnation():
    """FetchRequestsSurviveStop (the storage variants' default): broker 1
    restarts unclean, fetches at the leader's HWM, loses power again and
    restarts; its old request still reaches leader 2, which asks the
    controller to add broker 1 (registered epoch 3, not yet fenced) to the
    ISR. That incarnation did catch up: Unclean Exclusion holds, and broker 1
    is suspect again (STOPPED_UNCLEAN, UNCLEAN at its next registration)."""
    m, props = build_checked("kraft", "kip966_storage", {**B2, "UncleanRecoveryStrategy": "manual"})
    (ue,) = [p for p in props if p.name == "UncleanExclusion"]
    s = run(m, m.init_states()[0], ("PowerLoss", 1), ("BrokerStart", 1), ("SessionTimeout", 1),
            ("ReceiveBrokerRegRequest", 1), ("ReceiveBrokerRegResponse", 1))
    s = step(m, s, "ReceiveMetadataUpdate", 1, pick=-1)
    s = run(m, s, ("SendFetchRequest", 1), ("PowerLoss", 1), ("BrokerStart", 1))
    assert s.ghost_unclean[0] == Ghost.UNCLEAN and s.broker_state[0].status == BrokerStatus.STARTING
    s = step(m, s, "ReceiveMetadataUpdate", 2, pick=-1)
    s = run(m, s, ("ReceiveFetchRequest", 2))
    assert s.ghost_unclean[0] == Ghost.STOPPED_UNCLEAN
    s = run(m, s, ("SendAlterPartitionRequest", 2), ("ReceiveAlterPartitionRequest", 2))
    assert s.con_partition_metadata.isr == {1, 2} and ue.predicate(s)
