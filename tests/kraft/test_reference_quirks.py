"""ReferenceQuirks: true (the default) keeps the reference's quirks 5 and 6
of WriteRecordToLeader, so kmc stays TLC's state for state and configurations
with MinISR = 1 and two values stop with an evaluation error (quirk 18);
false fixes them as Kafka does (the append, then the HWM over the new log
end), in every kraft variant, and those configurations can be checked."""
from __future__ import annotations

import pytest

from checker.search.engine import CheckOptions, check
from checker.search.errors import EngineEvaluationError
from checker.search.registry import build as build_checked
from model.base import Action, EvaluationError, ModelConfigError
from model.registry import MODELS

KRAFT = MODELS["kraft"]
VARIANTS = ("kip966", "v3_5", "kip966_storage", "v3_5_storage")

# 2 brokers, RF 2, MinISR 1, two values; the leader may shrink the ISR to itself once
SHRINK = dict(BrokerCount=2, InitReplicationFactor=2, Values=["A", "B"], MinISR=1,
              InitIsrSize=2, FenceBrokerLimit=0, LeaderShrinkIsrLimit=1, ReassignmentLimit=0)
_NO_SHUTDOWNS = {"kip966": dict(DataLossShutdownLimit=0, NoDataLossShutdownLimit=0),
                 "v3_5": dict(UncleanShutdownLimit=0, CleanShutdownLimit=0),
                 "kip966_storage": dict(PowerLossLimit=0, FlushPolicy="every_write"),
                 "v3_5_storage": dict(PowerLossLimit=0, FlushPolicy="every_write")}


def constants(variant, **overrides):
    return {**SHRINK, **_NO_SHUTDOWNS[variant], **overrides}


def model(variant, **overrides):
    return KRAFT.build(variant, constants(variant, **overrides))


def step(m, s, name, b, pick=0):
    return m.successors_of(s, Action(name, (b,)))[pick]


def sole_leader(m):
    """Leader 1 has shrunk the ISR to itself (the controller accepted it and
    the leader applied the response): a sole-member ISR with MinISR 1."""
    s = m.init_states()[0]
    s = step(m, s, "SendAlterPartitionRequest", 1)            # broker 2 timed out
    s = step(m, s, "ReceiveAlterPartitionRequest", 1)
    s = step(m, s, "ReceiveAlterPartitionResponse", 1)
    assert s.partition_metadata[0].isr == {1} and s.partition_metadata[0].maximal_isr == {1}
    return s


def test_the_default_is_the_reference_and_is_not_listed_among_the_constants():
    for variant in VARIANTS:
        decl = next(c for c in KRAFT.variants[variant] if c.name == "ReferenceQuirks")
        assert decl.default is True and "conformance" in decl.doc
        m = model(variant)
        assert m.reference_quirks is True and "ReferenceQuirks" not in m.constants
        fixed = model(variant, ReferenceQuirks=False)
        assert fixed.reference_quirks is False and fixed.constants["ReferenceQuirks"] is False


def test_a_non_boolean_is_a_one_line_error():
    with pytest.raises(ModelConfigError, match="ReferenceQuirks must be a boolean"):
        model("kip966", ReferenceQuirks=0)


@pytest.mark.parametrize("variant", VARIANTS)
def test_with_the_quirks_a_sole_isr_leader_never_commits_its_first_write(variant):
    m = model(variant)
    s = step(m, sole_leader(m), "WriteRecordToLeader", 1)           # A at offset 1
    assert s.partition_data[0].hwm == 1 and not s.inv_pos_acked     # quirk 5
    with pytest.raises(EvaluationError, match="SubSeq"):             # quirk 6: B would commit A and B
        m.successors_of(s, Action("WriteRecordToLeader", (1,)))


@pytest.mark.parametrize("variant", VARIANTS)
def test_without_the_quirks_a_sole_isr_leader_commits_and_acks_each_write_at_once(variant):
    m = model(variant, ReferenceQuirks=False)
    s = step(m, sole_leader(m), "WriteRecordToLeader", 1)
    assert s.partition_data[0].hwm == 2 and s.inv_pos_acked == {"A"}
    assert s.inv_true_hwm == 2 and [r.value for r in s.inv_consumed] == ["A"]
    s = step(m, s, "WriteRecordToLeader", 1)
    assert s.partition_data[0].hwm == 3 and s.inv_pos_acked == {"A", "B"}
    assert [r.value for r in s.inv_consumed] == ["A", "B"]
    if variant.endswith("_storage"):  # every_write: flushed with its append; the HWM
        assert s.partition_flushed[0] == 3  # checkpoint on its own timer (HwmCheckpoint)
        assert step(m, s, "CheckpointHwm", 1).partition_hwm_checkpoint[0] == 3


@pytest.mark.parametrize("variant", ("kip966", "v3_5"))
def test_without_the_quirks_a_write_to_a_two_member_isr_waits_for_the_follower(variant):
    """The fix changes only what the leader alone can commit."""
    m = model(variant, ReferenceQuirks=False)
    ref = model(variant)
    s0 = m.init_states()[0]
    assert [t for _, t in ref.successors(s0)] == [t for _, t in m.successors(s0)]
    s = step(m, s0, "WriteRecordToLeader", 1)
    assert s.partition_data[0].hwm == 1 and not s.inv_pos_acked


def _check(variant, **overrides):
    m, props = build_checked("kraft", variant, constants(variant, **overrides))
    return check(m, props, CheckOptions(max_depth=None))


@pytest.mark.parametrize("variant", VARIANTS)
def test_minisr_1_with_two_values_stops_with_the_quirks(variant):
    with pytest.raises(EngineEvaluationError, match="WriteRecordToLeader"):
        _check(variant)


@pytest.mark.parametrize("variant", VARIANTS)
def test_minisr_1_with_two_values_is_checked_without_the_quirks(variant):
    r = _check(variant, ReferenceQuirks=False)
    assert r.exhausted and not r.violations
    assert r.sometimes["RecordCommitted"] is not None


def test_the_quirk_free_specs_stop_as_before_with_the_quirks(tmp_path):
    """specs/kraft-*-quirks-fixed.toml run without an evaluation error; the
    same spec with ReferenceQuirks = true stops with one (exit 3), as TLC
    would on the reference."""
    from pathlib import Path

    from click.testing import CliRunner

    from checker.front.cli import cli
    spec = Path(__file__).resolve().parents[2] / "specs" / \
        "kraft-kip966-minisr1-two-values-lossy-quirks-fixed.toml"
    base = ["check", str(spec), "--out", str(tmp_path), "--quiet", "--engine", "local"]
    fixed = CliRunner().invoke(cli, base)
    assert fixed.exit_code == 1, fixed.output  # the expected violation, no evaluation error
    assert "NoCommittedRecordLostGlobally" in fixed.output and "evaluation error" not in fixed.output
    quirky = CliRunner().invoke(cli, base + ["--set", "ReferenceQuirks=true"])
    assert quirky.exit_code == 3, quirky.output
    assert "evaluation error" in quirky.stderr and "WriteRecordToLeader" in quirky.stderr
