"""Temporal properties in simulation (checker/search/liveness/walks.py): every
lasso a walk reports is replayed and checked fair and violating through the
model alone (lasso_check); on the randgraph toy the verdicts are those of
brute force; on the kraft and kraft_quorum liveness specs each known
violation is found and no lasso is reported where the exhaustive check
(and TLC) say the property holds; the same seed gives the same lasso on one
core and on several."""
from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from checker.front import simulate_cli
from checker.search import registry, simulate
from checker.search.liveness.walks import WalkLiveness
from checker.search.simulate import Limits, SimConfig, Walker, simulate_local
from checker.search.simulate_pool import simulate_pool
from invariants.temporal import TemporalProperty, single
from lasso_check import check_lasso
from test_fair_cycles import _random_formula, brute_force_violated

ROOT = Path(__file__).resolve().parents[2]


def sim(path, seed=1, walks=2000, depth=100, **replace):
    spec, st = simulate_cli.load(Path(path))
    model, props = spec.build()
    cfg = simulate_cli.sim_config(spec, model, props, depth, seed, st.weights, st.swarm, False)
    cfg = dataclasses.replace(cfg, **replace)
    return spec, cfg, Limits(walks=walks)


def found_lasso(spec, cfg, limits, engine="local"):
    out = simulate_cli.simulate(spec, cfg, limits, engine=engine)
    lassos = [v for v in out.result.violations if getattr(v, "loop", None) is not None]
    return out, (lassos[0] if lassos else None)


def check_found(spec, cfg, v):
    """The lasso through the model alone: replayed, fair, violating."""
    model, _ = spec.build()
    from checker.front.temporal_spec import temporal_of
    prop = temporal_of(model)[v.property]
    check_lasso(model, v, prop, list(cfg.fairness))


# ---- the randgraph toy against brute force ---------------------------------------------------

CASES = [(seed, kind) for seed in range(60) for kind in ("none", "WF", "SF")]


def _random_case(seed, fairness_kind, walks=300):
    """(model, prop, fairness, totals, lasso or None) of one random graph."""
    rng = random.Random(seed)
    nodes = rng.randint(2, 6)
    constants = {"Nodes": nodes, "Degree": 2, "Seed": seed, "Initial": rng.randint(1, min(2, nodes))}
    formula = _random_formula(rng, nodes)
    prop = TemporalProperty("P", single(formula), reads=("node",))
    fairness = [] if fairness_kind == "none" else [(fairness_kind, "Move")]
    model, _ = registry.build("randgraph", None, constants)
    cfg = SimConfig(model="randgraph", variant="standard",
                    constants_json=json.dumps(constants, sort_keys=True), properties=(), depth=40,
                    seed=seed, fairness=tuple(fairness))
    w = Walker(cfg)
    w.live = WalkLiveness(w.model, [prop], fairness)
    simulate._walkers[cfg] = w
    try:
        totals, _ = simulate_local(cfg, Limits(walks=walks))
        lasso = None
        if totals.violation is not None:
            out = simulate_cli.Outcome(result=None, totals=totals)
            out.walk = simulate.walk_trace(cfg, totals.violation["walk"])
            lasso = simulate_cli._lasso(None, cfg, out, totals.violation, True, None)
            assert out.shrink.minimal
        return model, formula, prop, fairness, lasso
    finally:
        simulate._walkers.pop(cfg, None)


@pytest.mark.parametrize("seed,fairness_kind", CASES)
def test_random_graphs_equal_brute_force(seed, fairness_kind):
    model, formula, prop, fairness, lasso = _random_case(seed, fairness_kind)
    expected = brute_force_violated(model, formula, None if fairness_kind == "none" else fairness_kind)
    assert (lasso is not None) == expected, (seed, fairness_kind, formula)
    if lasso is not None:
        check_lasso(model, lasso, prop, fairness)


def test_random_graph_lassos_with_a_cycle_are_marked():
    """Under WF of Move a random graph's lasso stutters only at a node
    without an edge out; the others close a cycle, marked in the text."""
    from checker.output.lasso import lasso_text
    cycles = []
    for seed in range(20):
        _, _, _, _, lasso = _random_case(seed, "WF", walks=100)
        if lasso is not None and not lasso.stuttering:
            assert lasso.cycle_steps > 0 and lasso.trace[-1][1] == lasso.trace[lasso.loop][1]
            cycles.append(lasso)
    assert cycles
    text = lasso_text(cycles[0])
    assert f"--- cycle: the steps below repeat for ever, from state {cycles[0].loop} ---" in text


# ---- the kraft and quorum liveness specs -----------------------------------------------------

VIOLATED = {  # spec -> the property simulation finds violated first (the exhaustive check's too)
    "specs/liveness/kip966-elr-unclean-unavailable.toml": "EventuallyHasLeader",
    "specs/liveness/kip966-elr-unclean-no-data-loss-unavailable.toml": "EventuallyHasLeader",
    "specs/liveness/kip966_storage-process-crash-manual-unavailable.toml": "EventuallyHasLeader",
    "specs/quorum/liveness-crash-no-leader.toml": "EventuallyLeaderElected",
    "specs/quorum/liveness-epoch-limit-stuck-prospective.toml": "EventuallyLeaderElected",
    "specs/quorum/liveness-remove-self-leads-forever.toml": "ReconfigurationNotStuck",
}


@pytest.mark.parametrize("path", VIOLATED)
def test_known_violations_found_as_fair_lassos(path):
    spec, cfg, limits = sim(ROOT / path, seed=1, walks=3000)
    out, v = found_lasso(spec, cfg, limits)
    assert v is not None, path
    assert v.property == VIOLATED[path]
    assert v.property in spec.expect["violated"]   # the exhaustive check's verdict (TLC's too)
    check_found(spec, cfg, v)
    assert out.shrink.minimal and out.shrink.steps == v.loop


HOLDS = ["specs/liveness/v3_5-avoid-last-replica-standing-available.toml",
         "specs/liveness/kip966_storage-process-crash-balanced-available.toml"]


@pytest.mark.parametrize("path", HOLDS)
def test_no_lasso_where_the_property_holds(path):
    spec, cfg, limits = sim(ROOT / path, seed=3, walks=600)
    out, v = found_lasso(spec, cfg, limits)
    assert spec.expect["outcome"] == "pass"
    assert v is None and out.totals.walks == 600
    assert out.totals.closed > 0   # the walks did close cycles, and none was a fair violation


def test_a_lasso_with_a_cycle_is_found_and_checked():
    """Two-phase commit without WF of RMRcvAbortMsg: a resource manager may
    never hear of the abort; every lasso found is checked, cycles included."""
    fair = ["WF:TMCommit", "WF:TMAbort", "WF:RMPrepare", "WF:RMRcvCommitMsg", "WF:TMRcvPrepared"]
    spec_path = ROOT / "specs/toy-twophase.toml"
    spec, cfg, limits = sim(spec_path, seed=2, walks=500)
    cfg = dataclasses.replace(cfg, temporal=("EventuallyAllDecided",), fairness=tuple(
        (f.split(":")[0], f.split(":")[1]) for f in fair), properties=())
    spec.properties, spec.fairness = ["EventuallyAllDecided"], fair
    out, v = found_lasso(spec, cfg, limits)
    assert v is not None and v.property == "EventuallyAllDecided"
    check_found(spec, cfg, v)


def test_same_seed_same_lasso_on_one_core_and_several():
    path = ROOT / "specs/quorum/liveness-epoch-limit-stuck-prospective.toml"
    spec, cfg, limits = sim(path, seed=5, walks=400)
    one = simulate_local(cfg, limits)[0]
    assert one.violation is not None and one.violation["kind"] == "lasso"
    for workers in (2, 3):
        many = simulate_pool(cfg, limits, workers=workers)
        assert {k: x for k, x in many.violation.items() if k != "at"} == \
            {k: x for k, x in one.violation.items() if k != "at"}
        assert (many.walks, many.steps, many.distinct, many.closed) == \
            (one.walks, one.steps, one.distinct, one.closed)


def test_walks_without_a_violation_equal_on_one_core_and_several():
    path = ROOT / "specs/liveness/v3_5-avoid-last-replica-standing-available.toml"
    spec, cfg, limits = sim(path, seed=4, walks=200)
    one = simulate_local(cfg, limits)[0]
    many = simulate_pool(cfg, limits, workers=2)
    assert one.violation is None and many.violation is None
    assert (many.walks, many.steps, many.distinct, many.closed, dict(many.per_action_taken)) == \
        (one.walks, one.steps, one.distinct, one.closed, dict(one.per_action_taken))


def test_kmc_simulate_writes_the_lasso_in_every_format(tmp_path):
    """`kmc simulate --property`: exit 1, summary.json's liveness section and
    violation entry, the text with the stuttering end said, ITF with its
    loop, HTML with the lasso's rows, the walk as walked beside them."""
    from click.testing import CliRunner
    from checker.front.cli import cli
    spec = ROOT / "specs/quorum/liveness-crash-no-leader.toml"
    r = CliRunner().invoke(cli, ["simulate", str(spec), "--property", "EventuallyLeaderElected",
                                 "--seed", "5", "--walks", "400", "--out", str(tmp_path), "--json", "-q"])
    assert r.exit_code == 1, r.stderr
    s = json.loads(r.stdout.strip().splitlines()[-1])
    assert s["violated"] == ["EventuallyLeaderElected"] and s["config"]["engine"] == "auto"
    (v,) = s["violations"]
    assert v["kind"] == "liveness" and v["loop"] == v["prefix_steps"]
    assert s["liveness"]["properties"] == {"EventuallyLeaderElected": {"verdict": "violated", "form": "P ~> Q"}}
    run_dir = Path(s["results_dir"])
    text = (run_dir / "trace-EventuallyLeaderElected.txt").read_text()
    assert "Temporal property EventuallyLeaderElected is violated" in text
    assert ("--- cycle: the steps below repeat for ever" in text) != v["stuttering"]
    assert (f"stays in state {v['loop']} for ever" in text) == v["stuttering"]
    itf_obj = json.loads((run_dir / "trace-EventuallyLeaderElected.itf.json").read_text())
    assert itf_obj["loop"] == v["loop"]
    assert "lasso" in (run_dir / "trace-EventuallyLeaderElected.html").read_text()
    assert (run_dir / "walk-EventuallyLeaderElected.txt").exists()
    assert s["simulate"]["shrink"]["one_minimal"]
