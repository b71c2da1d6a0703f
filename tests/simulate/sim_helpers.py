"""Helpers of the simulation tests: a spec's SimConfig, and replay by action
label written apart from checker/search/shrink.py (the tests' own reading of the
rule: the successor with an equal Action that agrees with the recorded state
on the most variables, the first of equals)."""
from __future__ import annotations

from pathlib import Path

from checker.front import simulate_cli
from checker.search.simulate import Limits, simulate_local

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
SIM = SPECS / "simulate"
KIP966_LOSS = SIM / "kip966-storage-3b-minisr-power-losses-balanced.toml"
V35_LRS = SIM / "v3_5-storage-3b-last-replica-standing.toml"
KIP966_SAFE = SIM / "kip966-storage-3b-minisr-minus-one-power-loss.toml"
DIEHARD = SPECS / "toy-diehard.toml"
TWOPHASE = SPECS / "toy-twophase.toml"


def config(path, seed=1, depth=None, weights=None, swarm=None, deadlock=None, batch_walks=None):
    """(spec, SimConfig) of a spec file, with its [simulate] settings unless overridden."""
    spec, st = simulate_cli.load(Path(path))
    model, props = spec.build()
    cfg = simulate_cli.sim_config(spec, model, props, depth or st.depth or 100, seed,
                                  st.weights if weights is None else weights,
                                  st.swarm if swarm is None else swarm,
                                  spec.check_deadlock if deadlock is None else deadlock)
    if batch_walks is not None:
        import dataclasses
        cfg = dataclasses.replace(cfg, batch_walks=batch_walks)
    return spec, cfg


def figures(totals) -> dict:
    """Every figure of a run but its times."""
    return {"walks": totals.walks, "steps": totals.steps, "generated": totals.generated,
            "distinct": totals.distinct, "per_action_generated": dict(totals.per_action_generated),
            "per_action_taken": dict(totals.per_action_taken),
            "per_action_distinct": dict(totals.per_action_distinct),
            "per_depth_distinct": list(totals.per_depth_distinct), "lengths": dict(totals.lengths),
            "witnesses": {k: list(v) for k, v in totals.witnesses.items()},
            "deadlocks": totals.deadlocks, "stuck": totals.stuck,
            "violation": {k: v for k, v in (totals.violation or {}).items() if k != "at"}}


def run(cfg, walks=None, seconds=None):
    import time
    return simulate_local(cfg, Limits(walks=walks, deadline=time.time() + seconds if seconds else None))[0]


def replay_by_label(model, init, actions, recorded):
    """[(None, init), (a, s), ...] replayed by action label, or None when an
    action is not enabled."""
    trace = [(None, init)]
    state = init
    for action, rec in zip(actions, recorded):
        enabled = [s for a, s in model.successors(state) if a == action]
        if not enabled:
            return None
        state = max(enabled, key=lambda s: sum(x == y for x, y in zip(s, rec)))
        trace.append((action, state))
    return trace


def assert_valid(model, trace):
    """Every step is a successor of the state before it, with its action."""
    for k in range(1, len(trace)):
        action, state = trace[k]
        assert (action, state) in list(model.successors(trace[k - 1][1])), f"step {k} ({action}) is not a step"
    assert trace[0][1] in list(model.init_states())
