"""Dynamic min.insync.replicas (MinIsrChanges, AlterMinIsr): the operator sets
another value; the controller clears the ELR and the last-known ELR
(KAFKA-16540) and a broker uses the value once its metadata log has it. Off by
default: the reference's variants, constants and counts stay as they are."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.spec import load_spec
from checker.search.engine import CheckOptions, check
from model.base import Action, ModelConfigError
from model.kraft.model import KraftModel
from model.kraft.state import broker_min_isr, controller_min_isr
from model.registry import MODELS

ROOT = Path(__file__).resolve().parents[2]
MUTANT_SPEC = ROOT / "specs" / "mutants" / "keep_elr_on_min_isr_change.toml"
B2 = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A"], MinISR=2, InitIsrSize=2,
          NoDataLossShutdownLimit=0, DataLossShutdownLimit=0, FenceBrokerLimit=2,
          LeaderShrinkIsrLimit=0, ReassignmentLimit=0, ReferenceQuirks=False)


def kip966(**overrides):
    return KraftModel("kip966", {**B2, **overrides})


def step(model, state, name, b=None):
    out = model.successors_of(state, Action(name, () if b is None else (b,)))
    assert len(out) == 1, f"{name}({b}): {len(out)} successors"
    return out[0]


def run(model, *steps):
    s = model.init_states()[0]
    for name, b in steps:
        s = step(model, s, name, b)
    return s


def test_off_by_default_the_reference_model_is_unchanged():
    m = kip966()
    assert "MinIsrChanges" not in m.constants and "AlterMinIsr" not in m.action_names
    s = m.init_states()[0]
    assert s.con_partition_metadata.min_isr is None and s.aux_ctrs.min_isr_change_ctr is None
    assert s.con_metadata_log[0].min_isr is None
    assert KraftModel("kip966", {**B2, "MinIsrChanges": []}).constants == m.constants
    assert controller_min_isr(m, s) == 2 and broker_min_isr(m, s, 1) == 2


@pytest.mark.parametrize("variant", ["kip966", "v3_5", "kip966_storage", "v3_5_storage"])
def test_every_variant_has_the_step_when_asked(variant):
    m = MODELS["kraft"].build(variant, {"MinIsrChanges": [1]})
    assert m.action_names[-1] == "AlterMinIsr"
    assert m.init_states()[0].aux_ctrs.min_isr_change_ctr == 0


@pytest.mark.parametrize("value, words", [
    ([0], "MinIsrChanges values must be in 1..InitReplicationFactor (2), got 0"),
    ([3], "MinIsrChanges values must be in 1..InitReplicationFactor (2), got 3"),
])
def test_values_outside_1_to_rf_are_bad_input(value, words):
    with pytest.raises(ModelConfigError, match=r"MinIsrChanges values must be in"):
        kip966(MinIsrChanges=value)
    with pytest.raises(ModelConfigError) as err:
        kip966(MinIsrChanges=value)
    assert words in str(err.value)


def test_bad_value_on_the_command_line_is_one_error_line(tmp_path):
    spec = tmp_path / "bad.toml"
    spec.write_text('model = "kraft"\nvariant = "kip966"\n[constants]\nMinIsrChanges = [7]\n')
    result = CliRunner().invoke(cli, ["check", "-q", str(spec)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kmc: error:") and "MinIsrChanges" in lines[0]
    assert "Traceback" not in result.stderr + result.stdout


def test_the_change_clears_the_elr_and_the_last_known_elr():
    m = kip966(MinIsrChanges=[1])
    s = run(m, ("FenceBroker", 2))  # ISR {1} < MinISR 2: broker 2 joins the ELR
    md = s.con_partition_metadata
    assert md.isr == {1} and md.elr == {2}
    t = step(m, s, "AlterMinIsr")
    cmd = t.con_partition_metadata
    assert cmd.elr == frozenset() and cmd.last_known_elr == frozenset() and cmd.min_isr == 1
    # leader, ISR and leader epoch stay; the partition epoch moves with the partition change
    assert (cmd.leader, cmd.isr, cmd.leader_epoch) == (md.leader, md.isr, md.leader_epoch)
    assert cmd.partition_epoch == md.partition_epoch + 1
    record = t.con_metadata_log[-1]
    assert len(t.con_metadata_log) == len(s.con_metadata_log) + 1
    assert record.elr == frozenset() and record.min_isr == 1
    assert record.partition_epoch == cmd.partition_epoch
    assert t.aux_ctrs.min_isr_change_ctr == 1 and controller_min_isr(m, t) == 1
    # one change listed: no second one; the next partition changes carry the value
    assert m.successors_of(t, Action("AlterMinIsr")) == []
    u = step(m, t, "FenceBroker", 1)
    assert u.con_metadata_log[-1].min_isr == 1 and u.con_partition_metadata.min_isr == 1


def test_a_last_known_elr_alone_is_cleared_too():
    m = kip966(MinIsrChanges=[1])
    s = run(m, ("FenceBroker", 2))
    s = s._replace(con_partition_metadata=s.con_partition_metadata._replace(
        elr=frozenset(), last_known_elr=frozenset({2})))
    t = step(m, s, "AlterMinIsr")
    assert t.con_partition_metadata.last_known_elr == frozenset()
    assert t.con_partition_metadata.partition_epoch == s.con_partition_metadata.partition_epoch + 1


def test_without_an_elr_no_partition_change_only_the_config():
    m = kip966(MinIsrChanges=[1, 2])
    s = m.init_states()[0]
    t = step(m, s, "AlterMinIsr")
    md, cmd = s.con_partition_metadata, t.con_partition_metadata
    assert cmd == md._replace(min_isr=1)  # Kafka writes no PartitionChangeRecord: same epochs
    assert t.con_metadata_log[-1].partition_epoch == md.partition_epoch
    u = step(m, t, "AlterMinIsr")  # the next value of the list, in order
    assert u.con_partition_metadata.min_isr == 2 and u.aux_ctrs.min_isr_change_ctr == 2


def test_the_leader_uses_the_new_value_once_its_metadata_log_has_it():
    m = kip966(MinIsrChanges=[1])
    s = run(m, ("FenceBroker", 2), ("ReceiveMetadataUpdate", 1), ("AlterMinIsr", None))
    assert controller_min_isr(m, s) == 1 and broker_min_isr(m, s, 1) == 2
    # the leader's maximal ISR {1} is below its MinISR 2: acks=all refuses the write
    assert m.successors_of(s, Action("WriteRecordToLeader", (1,))) == []
    t = step(m, s, "ReceiveMetadataUpdate", 1)
    assert broker_min_isr(m, t, 1) == 1
    u = step(m, t, "WriteRecordToLeader", 1)  # accepted, and committed by its ISR {1} alone
    assert u.partition_data[0].hwm == 2 and u.inv_pos_acked == {"A"}


def test_the_mutant_keeps_the_elr():
    m = kip966(MinIsrChanges=[1], Mutants=["keep_elr_on_min_isr_change"])
    s = run(m, ("FenceBroker", 2))
    t = step(m, s, "AlterMinIsr")
    cmd = t.con_partition_metadata
    assert cmd.elr == {2} and cmd.min_isr == 1
    assert cmd.partition_epoch == s.con_partition_metadata.partition_epoch


def _check_alone(prop, depth, **overrides):
    spec = load_spec(MUTANT_SPEC, overrides=overrides or None, depth=depth, invariants=[prop])
    model, props = spec.build()
    return check(model, [p for p in props if p.name == prop],
                 CheckOptions(max_depth=depth, stop_on_violation=True))


@pytest.mark.parametrize("prop, depth", [
    ("LeaderCandidateCompletenessProperty", 4),  # the stale ELR member misses committed A
    ("LeaderCompletenessProperty", 6),           # ... and is elected: A is lost
    ("ValidControllerIsrAndElr", 2),             # the ELR kept while ISR >= the new MinISR
])
def test_the_mutant_is_caught(prop, depth):
    result = _check_alone(prop, depth)
    assert result.violated == [prop] and result.violations[0].depth == depth


@pytest.mark.parametrize("prop", ["LeaderCandidateCompletenessProperty", "LeaderCompletenessProperty",
                                  "ValidControllerIsrAndElr"])
def test_without_the_mutant_the_same_search_is_clean(prop):
    assert _check_alone(prop, 6, Mutants=[]).outcome == "pass"


def test_the_epoch_bump_is_not_kafkas_and_fences_a_shrink_built_before_the_change():
    m = kip966(MinISR=1, MinIsrChanges=[2], MinIsrChangeBumpsPartitionEpoch=True, FenceBrokerLimit=1,
               LeaderShrinkIsrLimit=1)
    s = run(m, ("SendAlterPartitionRequest", 1), ("AlterMinIsr", None))
    md = s.con_partition_metadata
    assert md.elr == frozenset() and md.partition_epoch == 2  # moved though nothing was cleared
    t = step(m, s, "ReceiveAlterPartitionRequest", 1)  # built on partition epoch 1: rejected
    assert t.con_partition_metadata == md
    with pytest.raises(ModelConfigError, match="needs MinIsrChanges"):
        kip966(MinIsrChangeBumpsPartitionEpoch=True)
    assert "MinIsrChangeBumpsPartitionEpoch" not in kip966(MinIsrChanges=[1]).constants
