"""Seeded protocol bugs are found (ARCHITECTURE.md: quality tests).

Each `\\* CHECK` guard of the reference is a mutant of the kraft model
(model/kraft/mutants.py) with a spec specs/mutants/<mutant>.toml whose
[expect] says which invariant must break and after how many steps (or, for
a mutant that breaks nothing on its own, what was explored without a
violation). Every spec here is checked against its [expect]: a mutant that
is no longer caught, or caught later or by another invariant, fails.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from checker.front.spec import load_spec
from checker.search import registry
from checker.search.engine import CheckOptions, check
from model.base import ModelConfigError
from model.kraft.mutants import MUTANTS as KRAFT_MUTANTS
from model.kraft_quorum.mutants import MUTANTS as QUORUM_MUTANTS
from model.registry import MODELS

ROOT = Path(__file__).resolve().parents[2]
MUTANT_SPECS = sorted((ROOT / "specs" / "mutants").glob("*.toml"))
# the kraft model's seeded bugs (the tests below that know kraft's constants
# and docs/findings.md's lists); another model's specs here are checked by the generic ones
KRAFT_SPECS = [p for p in MUTANT_SPECS if load_spec(p).model == "kraft"]


def _params():
    for path in MUTANT_SPECS:
        spec = load_spec(path)
        marks = [] if spec.expect.get("quick") else [pytest.mark.slow]
        yield pytest.param(path, id=path.stem, marks=marks)


def simulate_spec(path: Path, overrides: dict | None = None):
    """A seeded bug too deep for breadth-first search, caught by its spec's
    random walks ([simulate]): (spec, the walks' outcome) on the local engine."""
    from checker.front import simulate_cli
    from checker.search.simulate import Limits
    spec, st = simulate_cli.load(path, overrides)
    model, props = spec.build()
    cfg = simulate_cli.sim_config(spec, model, props, st.depth, st.seed or 0, st.weights, st.swarm,
                                  spec.check_deadlock)
    return spec, simulate_cli.simulate(spec, cfg, Limits(walks=st.walks))


def run(path: Path, overrides: dict | None = None):
    from checker.front.simulate_cli import is_simulate_spec
    if is_simulate_spec(path):
        spec, outcome = simulate_spec(path, overrides)
        return spec, outcome.result
    spec = load_spec(path, overrides=overrides)
    model, props = spec.build()
    if spec.properties:  # a liveness bug: its temporal property on the whole graph
        from checker.front.temporal_spec import validate
        from checker.search.liveness.run import check_liveness
        return spec, check_liveness(model, props, validate(spec), CheckOptions(stop_on_violation=True))
    result = check(model, props, CheckOptions(max_depth=spec.depth, stop_on_violation=True,
                                              check_deadlock=spec.check_deadlock))
    return spec, result


def _seeded_bugs(model_name: str) -> tuple:
    """A model's seeded bugs: the mutants its ModelDef names
    (model/kraft/mutants.py), () for a model without any."""
    return tuple(registry.mutants_of(MODELS[model_name]))


def test_every_mutant_has_a_spec():
    """Any model's seeded bugs (its package's mutants.MUTANTS, switched on by
    its constant `Mutants`): each has its own spec here, named after it."""
    covered: dict = {}
    for path in MUTANT_SPECS:
        spec = load_spec(path)
        assert spec.expect.get("outcome") in ("pass", "violation"), path
        covered.setdefault(spec.model, set()).update(spec.constants.get("Mutants") or ())
    assert set(_seeded_bugs("kraft")) == set(KRAFT_MUTANTS)
    assert set(_seeded_bugs("kraft_quorum")) == set(QUORUM_MUTANTS)
    stems = {p.stem for p in MUTANT_SPECS}
    for name in MODELS:
        seeded = set(_seeded_bugs(name))
        assert covered.get(name, set()) == seeded, name
        assert seeded <= stems  # each mutant's own spec is named after it


@pytest.mark.parametrize("path", list(_params()))
def test_mutant_is_found_as_expected(path):
    spec, result = run(path)
    expect = spec.expect
    assert expect["outcome"] in ("pass", "violation")
    if expect["outcome"] == "violation":
        wanted = expect["violated"]
        depths = {v.property: v.depth for v in result.violations}
        assert wanted in depths, f"{spec.constants['Mutants']} not caught by {wanted} (got {result.violated})"
        assert depths[wanted] == expect["depth"], f"caught after {depths[wanted]} steps"
    else:  # not caught on its own: the bounded search finds nothing
        assert result.outcome == "pass", f"now caught: {result.violated} at {result.violations[0].depth}"
        if "depth" in expect:
            assert result.depth == expect["depth"]
        if "distinct" in expect:
            assert result.distinct == expect["distinct"]


# a mutant not caught must at least change behaviour within its spec's bound
# (else its `pass` says nothing); this one provably never does (see its spec)
NEVER_EXERCISED = {"skip_fetch_offset_check"}
EXERCISE_LEVELS = 7
# a fetch from another epoch than its leader's needs an election first
EXERCISE_LEVELS_OF = {"fetch_from_stale_epoch": 10}


def differing_states(spec, levels: int) -> int:
    """States (within `levels` steps of the mutant model) whose successors
    differ from the reference model's."""
    from checker.search import registry
    mutant, _ = spec.build()
    reference, _ = registry.build(spec.model, spec.variant, {**spec.constants, "Mutants": []})
    frontier = list(mutant.init_states())
    seen = set(frontier)
    differing = 0
    for _ in range(levels):
        nxt = []
        for s in frontier:
            succ = set(mutant.successors(s))
            if succ != set(reference.successors(s)):
                differing += 1
            for _, t in succ:
                if t not in seen:
                    seen.add(t)
                    nxt.append(t)
        frontier = nxt
    return differing


@pytest.mark.parametrize("path", [
    pytest.param(p, id=p.stem, marks=[pytest.mark.slow] if p.stem in EXERCISE_LEVELS_OF else [])
    for p in MUTANT_SPECS if load_spec(p).expect.get("outcome") == "pass" and "Mutants" in load_spec(p).constants])
def test_a_mutant_not_caught_is_still_exercised(path):
    spec = load_spec(path)
    levels = EXERCISE_LEVELS_OF.get(path.stem, EXERCISE_LEVELS)
    differing = differing_states(spec, levels)
    if path.stem in NEVER_EXERCISED:
        assert differing == 0
    else:
        assert differing > 0, f"{path.stem} changes nothing within {levels} steps"


def test_the_same_configuration_without_the_mutant_is_clean():
    """The catching specs find the seeded bug, not a bug of the protocol: with
    Mutants = [] the same bounded search violates nothing (a liveness bug's
    temporal property holds on the whole graph)."""
    from checker.front.simulate_cli import is_simulate_spec
    for path in MUTANT_SPECS:
        spec = load_spec(path)
        if (spec.expect.get("outcome") != "violation" or not spec.expect.get("quick")
                or "Mutants" not in spec.constants):
            continue
        if spec.properties:  # a liveness bug: the property holds on the whole graph
            assert run(path, {"Mutants": []})[1].outcome == "pass", path.name
            continue
        if is_simulate_spec(path):  # the same walks find nothing
            assert not run(path, {"Mutants": []})[1].violations, path.name
            continue
        clean = load_spec(path, overrides={"Mutants": []})
        model, props = clean.build()
        result = check(model, props, CheckOptions(max_depth=spec.expect["depth"]))
        assert result.outcome == "pass", (path.name, result.violated)


# Which invariants catch a seeded bug, each checked alone: with one more fence
# allowed than its spec, the empty ISR member that LeaderCandidateCompleteness
# flags gets elected (LeaderCompleteness) and a consumer's read vanishes from
# the leader (ConsistentRead) a step or two later.
CAUGHT_BY = [
    ("skip_follower_hwm_check", "LeaderCandidateCompletenessProperty", 6),
    ("skip_follower_hwm_check", "LeaderCompletenessProperty", 7),
    ("skip_follower_hwm_check", "ConsistentReadProperty", 8),
    ("skip_follower_leo_nil_check", "LeaderCompletenessProperty", 8),
    ("skip_follower_leo_nil_check", "ConsistentReadProperty", 9),
    ("skip_partition_epoch_check", "LeaderCandidateCompletenessProperty", 9),
    ("skip_last_known_elr_update", "RecoveryQuorumAtLeastMinIsr", 6),
]


@pytest.mark.parametrize("mutant, prop, depth", CAUGHT_BY)
def test_each_invariant_alone_catches_the_mutant(mutant, prop, depth):
    path = ROOT / "specs" / "mutants" / f"{mutant}.toml"
    fences = load_spec(path).constants["FenceBrokerLimit"] + 1
    spec = load_spec(path, overrides={"FenceBrokerLimit": fences}, depth=depth)
    model, props = spec.build()
    result = check(model, [p for p in props if p.name == prop], CheckOptions(max_depth=depth))
    assert result.violated == [prop] and result.violations[0].depth == depth


def test_unknown_mutant_is_bad_input_naming_the_known_ones():
    with pytest.raises(ModelConfigError) as err:
        MODELS["kraft"].build("v3_5", {"Mutants": ["skip_everything"]})
    message = str(err.value)
    assert "skip_everything" in message and "skip_follower_hwm_check" in message and "\n" not in message
    with pytest.raises(ModelConfigError, match="list of mutant names"):
        MODELS["kraft"].build("kip966", {"Mutants": "skip_follower_hwm_check"})


def test_unknown_mutant_on_the_command_line_exits_2(tmp_path):
    from click.testing import CliRunner
    from checker.front.cli import cli
    spec = ROOT / "specs" / "kraft-kip966-quick.toml"
    result = CliRunner().invoke(cli, ["check", str(spec), "--set", 'Mutants=["nope"]', "--out", str(tmp_path)])
    assert result.exit_code == 2 and "unknown mutant(s) 'nope'" in result.stderr
    assert result.stderr.count("\n") == 1


def test_default_is_the_reference_protocol():
    """Mutants = [] is the default and builds the very same model (the
    conformance tests check the counts; here: every flag off, constants as
    the reference's .cfg lists them)."""
    for variant in ("kip966", "v3_5"):
        names = [c.name for c in MODELS["kraft"].variants[variant]]
        assert "Mutants" in names  # `kmc list` shows it
        model = MODELS["kraft"].build(variant, {})
        assert not any(model.mutant) and "Mutants" not in model.constants
        explicit = MODELS["kraft"].build(variant, {"Mutants": []})
        assert explicit.constants == model.constants
    model = MODELS["kraft"].build("v3_5", {"Mutants": ["skip_follower_hwm_check"]})
    assert model.mutant.skip_follower_hwm_check and sum(model.mutant) == 1
    assert model.constants["Mutants"] == ["skip_follower_hwm_check"]


def test_every_invariant_catches_some_seeded_bug():
    """An invariant that catches no seeded bug is suspect: each safety
    invariant the reference's .cfg checks is the one a mutant spec expects
    violated (or catches a mutant in CAUGHT_BY), bar NoCommittedRecordLostGlobally,
    which real protocol runs violate (v3_5 Last Replica Standing, quirk 17),
    and the validity invariants (spec-bug catchers, not protocol properties)."""
    from invariants.kraft import INVARIANT_NAMES
    caught = {load_spec(p).expect.get("violated") for p in KRAFT_SPECS}
    caught |= {prop for _, prop, _ in CAUGHT_BY}
    exempt = {"NoCommittedRecordLostGlobally"} | {
        n for n in INVARIANT_NAMES if n == "TypeOK" or n.startswith("Valid")}
    assert set(INVARIANT_NAMES) - exempt - caught == set()


def _readme_bullet(label: str) -> str:
    """A bullet of docs/findings.md's lists of seeded bugs."""
    text = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    start = text.index(f"- **{label}**")
    end = text.find("\n- **", start + 1)
    para_end = text.find("\n\n", start)
    return text[start:min(e for e in (end, para_end) if e != -1)]


def test_readme_says_which_mutants_are_caught():
    """docs/findings.md's two lists name every mutant once and agree with the specs:
    a mutant listed as caught has a spec that expects a violation of the
    property and at the depth the page gives; one listed as not caught,
    specs that expect a pass (with the reason in their header comment), and
    a description that says so."""
    import re
    caught = _readme_bullet("Caught")
    missed = _readme_bullet("Not caught")
    named_caught = set(re.findall(r"`(\w+)`", caught))
    named_missed = set(re.findall(r"`(\w+)`", missed)) - {"skip_fetch_checks"}
    assert named_caught | named_missed == set(KRAFT_MUTANTS) and not named_caught & named_missed
    assert f"**Caught** ({len(named_caught)})" in caught
    for path in KRAFT_SPECS:
        spec = load_spec(path)
        if spec.model != "kraft":
            continue
        mutants = set(spec.constants["Mutants"])
        if spec.expect["outcome"] == "violation":
            (name,) = mutants
            assert name in named_caught, path.name
            assert spec.description.startswith("Caught"), path.name
            said = re.search(rf"`{name}`\s+\(([^)]*)\)", caught)
            assert said and re.search(rf"\b{spec.expect['depth']}\b", said.group(1)), path.name
            # the property, by its short name (LeaderCandidateCompleteness)
            assert spec.expect["violated"].removesuffix("Property") in said.group(1), path.name
        else:
            assert mutants <= named_missed, path.name
            assert spec.description.startswith("NOT caught"), path.name
            # the header comment says why, with what was explored
            header = path.read_text(encoding="utf-8").split("\nmodel = ")[0]
            assert "NOT CAUGHT" in header and "Explored without a violation" in header, path.name


def test_readme_says_which_quorum_bugs_are_caught():
    """The same for the kraft_quorum model's seeded bugs: docs/findings.md names each
    once, a caught one with the property and the depth its spec expects."""
    import re
    caught = _readme_bullet("Quorum bugs caught")
    missed = _readme_bullet("Quorum bugs not caught")
    named_caught = set(re.findall(r"`(\w+)`", caught))
    named_missed = set(re.findall(r"`(\w+)`", missed))
    assert named_caught | named_missed == set(QUORUM_MUTANTS)
    assert not named_caught & named_missed
    assert f"**Quorum bugs caught** ({len(named_caught)})" in caught
    for path in MUTANT_SPECS:
        spec = load_spec(path)
        if spec.model != "kraft_quorum":
            continue
        (name,) = spec.constants["Mutants"]
        if spec.expect["outcome"] == "violation":
            said = re.search(rf"`{name}`\s+\(([^)]*)\)", caught)
            assert said and re.search(rf"\b{spec.expect['depth']}\b", said.group(1)), path.name
            assert spec.expect["violated"] in said.group(1), path.name
            assert spec.description.startswith("Caught"), path.name
        else:
            assert name in named_missed and spec.description.startswith("NOT caught"), path.name
