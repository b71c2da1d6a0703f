"""Scenario files (checker/front/scenario.py, `kmc scenario`).

1. Every scenario under specs/scenarios/ passes (one test per file, so a new
   file is picked up).
2. The runner itself, on the toy models: a scenario that passes, a wrong fact
   (exit 1, naming step, fact, expected, actual), an invariant broken or
   wrongly announced, no or several matching successors, and malformed files
   (exit 2, one line, no stack trace).
3. The kraft facts (model/kraft/facts.py), including fields a later variant adds.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.scenario import load_scenario, matches, run_scenario, show

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "specs" / "scenarios").rglob("*.toml"))


def kmc(*args):
    return CliRunner().invoke(cli, ["scenario", *map(str, args)])


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---- the project's scenario files ------------------------------------------------

def test_there_are_scenario_files():
    assert any(p.name == "kraft-5.2.2-clean-elr-recovery.toml" for p in SCENARIOS)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.name for p in SCENARIOS])
def test_scenario_file_passes(path):
    sc = load_scenario(path)
    result = run_scenario(sc)
    assert result.ok, "\n".join(result.failures)
    assert len(result.steps) == len(sc.steps)
    assert sum(len(s.expect) for s in sc.steps) > 0  # it asserts something


def test_5_2_2_asserts_the_description_and_the_model_differences():
    """The partition state of each step of KIP-966 description 5.2.2, and the
    steps where the reference model differs (ELR=[1] right after the election)."""
    sc = load_scenario(ROOT / "specs" / "scenarios" / "kraft-5.2.2-clean-elr-recovery.toml")
    result = run_scenario(sc)
    assert result.ok, "\n".join(result.failures)
    by_action = {}
    for r in result.steps[1:]:
        by_action.setdefault(r.label, []).append(r)
    state = lambda r: (r.facts["leader"], sorted(r.facts["isr"]), sorted(r.facts["elr"]))  # noqa: E731
    assert state(result.steps[0]) == (1, [1, 2, 3], [])
    controller = by_action["ReceiveAlterPartitionRequest(1)"]
    assert [state(r) for r in controller] == [(1, [1, 3], []), (1, [1], [3])]
    shutdown = by_action["DataLossShutdown(1)"][0]
    assert state(shutdown) == (3, [3], [1])  # the description: ELR=[]; see the step's note
    assert "5.2.1" in shutdown.step.note and "quirk 2" in shutdown.step.note
    assert state(by_action["ReceiveBrokerRegRequest(1)"][0]) == (3, [3], [])
    assert state(by_action["ReceiveAlterPartitionRequest(3)"][0]) == (3, [1, 3], [])
    end = result.steps[-1].facts
    assert end["acked"] == frozenset({"A"}) and end["b3.log"] == ("A@1",) and end["b3.hwm"] == 2


def test_cli_runs_every_scenario_file():
    result = kmc(*SCENARIOS)
    assert result.exit_code == 0, result.output
    assert result.output.count("PASS ") == len(SCENARIOS)


# ---- the runner on toy models ----------------------------------------------------

DIEHARD = """
model = "diehard"
[constants]
BigCapacity = 5
SmallCapacity = 3
Goal = 4
[init]
expect = { big = 0, small = 0 }
note = "both jugs empty"
[[step]]
action = "FillBigJug"
expect = { big = 5, small = 0 }
[[step]]
action = "BigToSmall"
expect = { big = 2, small = 3 }
note = "pour the big jug into the small one"
[[step]]
action = "EmptySmallJug"
[[step]]
action = "BigToSmall"
expect = { big = 0, small = 2 }
[[step]]
action = "FillBigJug"
[[step]]
action = "BigToSmall"
expect = { big = 4, small = 3 }
violates = ["NotSolved"]
note = "solved: the invariant NotSolved is broken, as announced"
"""


def test_a_scenario_that_passes(tmp_path):
    result = kmc(write(tmp_path, DIEHARD))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "note: pour the big jug into the small one" in out
    assert "big = 2, small = 3" in out
    assert ("PASS s.toml: 6 steps, 10 facts asserted, 2 invariants checked in all 7 states "
            "(1 violation(s) as announced)") in out


def test_a_wrong_fact_fails_naming_step_fact_expected_actual(tmp_path):
    path = write(tmp_path, DIEHARD.replace("expect = { big = 2, small = 3 }",
                                           "expect = { big = 3, small = 3 }"))
    result = kmc(path)
    assert result.exit_code == 1, result.output
    assert "FAIL s.toml: step 2 BigToSmall: big: expected 3, actual 2" in result.output
    assert "Traceback" not in result.output


def test_an_invariant_broken_without_notice_fails(tmp_path):
    result = kmc(write(tmp_path, DIEHARD.replace('violates = ["NotSolved"]\n', "")))
    assert result.exit_code == 1
    assert "step 6 BigToSmall: invariant NotSolved is violated" in result.output


def test_an_announced_violation_that_does_not_happen_fails(tmp_path):
    text = DIEHARD.replace('action = "EmptySmallJug"', 'action = "EmptySmallJug"\nviolates = ["NotSolved"]')
    result = kmc(write(tmp_path, text))
    assert result.exit_code == 1
    assert "step 3 EmptySmallJug: invariant NotSolved holds, the step says it is violated" in result.output


TWOPHASE = """
model = "twophase"
[constants]
RM = ["r1", "r2"]
[init]
expect = { rmState = ["working", "working"], tmState = "init", tmPrepared = [], msgs = [] }
"""


def test_a_step_no_successor_matches_names_the_enabled_actions(tmp_path):
    result = kmc(write(tmp_path, TWOPHASE + '[[step]]\naction = "TMCommit"\n'))
    assert result.exit_code == 1
    assert ("step 1 TMCommit: no successor by TMCommit; enabled: RMChooseToAbort(r1), "
            "RMChooseToAbort(r2), RMPrepare(r1), RMPrepare(r2), TMAbort") in result.output


def test_an_ambiguous_step_fails_and_where_or_pick_resolves_it(tmp_path):
    ambiguous = kmc(write(tmp_path, TWOPHASE + '[[step]]\naction = "RMPrepare"\n'))
    assert ambiguous.exit_code == 1
    assert "2 distinct successors match; add `where` (facts) or `pick` (1..2)" in ambiguous.output
    assert '#1: rmState = ["prepared", "working"]' in ambiguous.output
    by_where = TWOPHASE + """
[[step]]
action = "RMPrepare"
where = { rmState = ["working", "prepared"] }
expect = { msgs = [{ type = "Prepared", rm = "r2" }] }
[[step]]
action = "RMPrepare(r1)"
[[step]]
action = "TMRcvPrepared"
pick = 2
expect = { tmPrepared = ["r2"] }
[[step]]
action = "TMRcvPrepared( r1 )"
[[step]]
action = "TMCommit"
expect = { tmState = "committed", msgs = [{ type = "Commit", rm = "Nil" }, { type = "Prepared", rm = "r1" }, { type = "Prepared", rm = "r2" }] }
"""
    result = kmc(write(tmp_path, by_where, "w.toml"))
    assert result.exit_code == 0, result.output
    assert "RMPrepare(r2)" in result.output and "(1 of 2 distinct successors, by pick 2)" in result.output
    where_fails = by_where.replace('where = { rmState = ["working", "prepared"] }',
                                   'where = { rmState = ["prepared", "prepared"] }')
    result = kmc(write(tmp_path, where_fails, "x.toml"))
    assert result.exit_code == 1
    assert 'none of the 2 successor(s) has where {rmState = ["prepared", "prepared"]}' in result.output


def test_a_model_evaluation_error_exits_3(tmp_path):
    text = 'model = "randgraph"\n[constants]\nErrorNode = 0\n[[step]]\naction = "Move"\n'
    result = kmc(write(tmp_path, text))
    assert result.exit_code == 3
    assert result.stderr.startswith("kmc: error: ") and result.stderr.count("\n") == 1


MALFORMED = [
    ('model = "diehard"\n[[step]]\naction = "FillBigJg"\n', "unknown action 'FillBigJg' (did you mean FillBigJug"),
    ('model = "diehard"\n[[step]]\naction = "FillBigJug"\nexpect = { bigg = 1 }\n', "unknown fact 'bigg' in expect"),
    ('model = "diehard"\n[init]\nwhere = { x = { y = 1 } }\n', "unknown fact 'x.y' in where"),
    ('model = "diehard"\n[constants]\nGoall = 4\n', "unknown constant 'Goall'"),
    ('model = "diehard"\n[constants]\nGoal = "4"\n', "constant Goal must be int"),
    ('model = "diehard"\n[constants]\nSmallCapacity = 9\n', "constants rejected by the model"),
    ('model = "nosuch"\n', "unknown model 'nosuch'"),
    ('model = "diehard"\nvariant = "x"\n', "unknown variant 'x'"),
    ('model = "diehard"\nsteps = []\n', "unknown key(s) 'steps'"),
    ('model = "diehard"\n[step]\naction = "FillBigJug"\n', "write [[step]], not [step]"),
    ('model = "diehard"\n[[step]]\nexpect = { big = 5 }\n', "missing key 'action'"),
    ('model = "diehard"\n[[step]]\naction = "FillBigJug("\n', "action must be a label"),
    ('model = "diehard"\n[[step]]\naction = "FillBigJug"\npick = 0\n', "pick must be a position"),
    ('model = "diehard"\n[[step]]\naction = "FillBigJug"\nvioaltes = []\n', "unknown key(s) 'vioaltes'"),
    ('model = "diehard"\n[[step]]\naction = "FillBigJug"\nviolates = ["Solved"]\n', "unknown invariant 'Solved'"),
    ('model = "diehard"\ninvariants = ["BothFull"]\n', "unknown invariant 'BothFull'"),
    ('model = "diehard"\n[[step]]\naction = "FillBigJug"\nnote = 3\n', "note must be a string"),
    ('model = "diehard"\n[[step]\n', "malformed TOML"),
    ('[[step]]\naction = "FillBigJug"\n', "missing key 'model'"),
]


@pytest.mark.parametrize("text, message", MALFORMED, ids=[m for _, m in MALFORMED])
def test_a_malformed_file_exits_2_with_one_line(tmp_path, text, message):
    result = kmc(write(tmp_path, text))
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("kmc: error: "), result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.output


def test_a_missing_file_exits_2(tmp_path):
    result = kmc(tmp_path / "absent.toml")
    assert result.exit_code == 2 and "scenario file not found" in result.stderr


def test_several_files_run_each_and_exit_with_the_worst_code(tmp_path):
    good = write(tmp_path, DIEHARD, "good.toml")
    bad = write(tmp_path, 'model = "diehard"\n[[step]]\naction = "Nope"\n', "bad.toml")
    wrong = write(tmp_path, DIEHARD.replace("big = 5, small = 0", "big = 5, small = 1"), "wrong.toml")
    assert kmc(good, wrong).exit_code == 1
    result = kmc(bad, good, wrong)
    assert result.exit_code == 2
    assert "PASS good.toml" in result.output and "FAIL wrong.toml" in result.output
    assert "bad.toml" in result.stderr


def test_only_selected_invariants_are_checked(tmp_path):
    text = DIEHARD.replace('violates = ["NotSolved"]\n', "").replace(
        'model = "diehard"', 'model = "diehard"\ninvariants = ["TypeOK"]')
    assert kmc(write(tmp_path, text)).exit_code == 0


def test_matches_and_show():
    assert matches([3, 1], frozenset({1, 3})) and not matches([1], frozenset({1, 3}))
    assert not matches([1, 1], frozenset({1, 2}))
    assert matches("Nil", None) and not matches("Nil", 0)
    assert matches(["A@1"], ("A@1",)) and not matches(["A@1", "B@1"], ("A@1",))
    assert not matches(1, True) and not matches(True, 1)
    assert show(frozenset({3, 1})) == "[1, 3]" and show(None) == "Nil" and show(("A@1",)) == '["A@1"]'


# ---- kraft facts ----------------------------------------------------------------

def _kraft():
    from checker.search import registry
    model, _ = registry.build("kraft", "kip966", {"InitIsrSize": 3})
    return model, model.init_states()[0]


def test_kraft_facts_of_the_initial_state():
    from model.kraft.facts import facts
    model, s = _kraft()
    f = facts(model, s)
    assert (f["leader"], f["isr"], f["elr"], f["last_known_elr"]) == (1, frozenset({1, 2, 3}), frozenset(), frozenset())
    assert (f["b1.role"], f["b2.role"], f["b1.status"], f["b1.registered"], f["b1.fenced"]) == (
        "Leader", "Follower", "RUNNING", True, False)
    assert (f["b1.log"], f["b1.leo"], f["b1.hwm"], f["b2.leso"], f["b1.proposed_isr"]) == ((), 1, 1, None, None)
    assert f["in_flight"] == frozenset()


def test_kraft_facts_pick_up_fields_a_later_variant_adds():
    """A storage variant adding a field to PartitionData / BrokerState, or a new
    per-broker variable, contributes facts without a change to facts.py."""
    from model.kraft import facts as kraft_facts
    from model.kraft.state import KraftState

    class StoredData(NamedTuple):
        log: tuple
        hwm: int
        leo: int
        flushed_offset: int

    model, s = _kraft()
    data = tuple(StoredData(d.log, d.hwm, d.leo, 1) for d in s.partition_data)
    Wider = NamedTuple("Wider", [(n, object) for n in KraftState._fields]
                       + [("partition_flushed", object), ("aux_power_losses", object)])
    wide = Wider(*s._replace(partition_data=data), (1, 2, 3), 0)
    f = kraft_facts.facts(model, wide)
    assert (f["b1.flushed_offset"], f["b2.flushed"], f["b3.flushed"], f["aux_power_losses"]) == (1, 2, 3, 0)

    extra = kraft_facts.register(lambda m, st: {"custom": 7})
    try:
        assert kraft_facts.facts(model, s)["custom"] == 7
    finally:
        kraft_facts._EXTRA.remove(extra)


def test_show_facts_prints_what_changed(tmp_path):
    result = kmc(write(tmp_path, DIEHARD), "--show-facts")
    assert result.exit_code == 0
    assert "facts: big = 0; small = 0" in result.output
    assert "facts changed: big = 5" in result.output
