"""kraft_cluster: bad input, the controller state as its log replayed on
random walks, the trace view."""
from __future__ import annotations

import random

import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from checker.search.registry import build
from model.kraft_cluster.metadata import partition_log, replay

HEAD = 'model = "kraft_cluster"\nvariant = "kip966"\n'

BAD = {
    "no controllers": (HEAD + "[constants]\nControllers = []\n", "Controllers"),
    "a controller twice": (HEAD + '[constants]\nControllers = ["c1", "c1"]\n', "c1"),
    "negative failovers": (HEAD + "[constants]\nMaxControllerFailovers = -1\n", "MaxControllerFailovers"),
    "negative restarts": (HEAD + "[constants]\nControllerMaxRestarts = -2\n", "ControllerMaxRestarts"),
    "negative kraft limit": (HEAD + "[constants]\nFenceBrokerLimit = -1\n", "FenceBrokerLimit"),
    "unknown projection": (HEAD + 'projection = "quorum"\n', "quorum"),
    "unknown mutant": (HEAD + '[constants]\nMutants = ["nope"]\n', "nope"),
    "unknown constant": (HEAD + "[constants]\nHosts = 3\n", "Hosts"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_is_one_error_line(name, tmp_path):
    text, fragment = BAD[name]
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    r = CliRunner().invoke(cli, ["check", str(spec), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    errors = [line for line in r.output.splitlines() if line.startswith("kmc: error:")]
    assert len(errors) == 1 and fragment in errors[0], r.output
    assert "Traceback" not in r.output


def _walks(model, n, depth, seed=7):
    rng = random.Random(seed)
    for _ in range(n):
        s = model.init_states()[0]
        for _ in range(depth):
            succ = model.successors(s)
            if not succ:
                break
            _, s = rng.choice(succ)
            yield s


def test_active_controller_is_its_log_replayed():
    """On random walks with failovers: the active controller's state is its log
    replayed, brokers hold committed records only, and failovers lose
    uncommitted batches and re-send requests."""
    model, _ = build("kraft_cluster", "kip966", {
        "MaxControllerFailovers": 2, "MaxDisruptiveElectionTriggers": 2, "ControllerMaxEpoch": 4,
        "LeaderShrinkIsrLimit": 1, "InitIsrSize": 3})
    lost = retried = failed_over = 0
    for s in _walks(model, 150, 60):
        a = s.ctl_active
        if a is not None:
            r = replay(model.kraft.n, s.quorum.log[a - 1])
            for f in ("con_unfenced", "con_broker_reg", "con_partition_metadata", "con_metadata_log"):
                assert r[f] == getattr(s, f)
            failed_over += s.quorum.current_epoch[a - 1] > 1
        pcrs = partition_log(s.ctl_committed)
        assert all(pcrs[:len(bml)] == bml for bml in s.broker_metadata_log)
        lost += s.ghost.lost_uncommitted
        retried += bool(s.ghost.retried)
    assert failed_over and lost and retried


def test_single_controller_commits_every_decision_at_once():
    model, _ = build("kraft_cluster", "kip966", {"Controllers": ["c1"], "MaxControllerFailovers": 0,
                                                 "LeaderShrinkIsrLimit": 1})
    for s in _walks(model, 50, 40):
        assert s.ctl_pending == ()
        assert partition_log(s.ctl_committed) == s.con_metadata_log
        assert s.quorum.hwm[0] == len(s.quorum.log[0])


def test_trace_view_columns_lanes_and_headline():
    from model.kraft_cluster.view import ClusterView
    model, props = build("kraft_cluster", "kip966", {"Mutants": ["broker_epoch_from_memory"]})
    view = ClusterView(model)
    assert view.columns()[:4] == ["Controller c1", "Controller c2", "Controller c3", "Broker 1"]
    assert view.lanes() == ["Controller c1", "Controller c2", "Controller c3",
                            "Broker 1", "Broker 2", "Broker 3"]
    trace = [(None, model.init_states()[0])]
    for _ in range(12):
        a, t = model.successors(trace[-1][1])[0]
        trace.append((a, t))
    cells = view.cells(trace[-2][1], trace[-1][1])
    assert len(cells) == len(view.columns())
    assert "md-c" not in cells[0][0] or "committed" in view.legend[-1]
    view.arrows(trace)
    assert [view.actor_lane(a) for a, _ in trace[1:]]


SEEDED = {"answer_before_commit": "AnswersCommitted",
          "keep_uncommitted_state": "ControllerStateFromLog",
          "broker_epoch_from_memory": "BrokerEpochsIncrease",
          "broker_reads_uncommitted_metadata": "MetadataIsCommitted",
          "elr_from_deposed_controller": "ControllerStateFromLog"}


@pytest.mark.parametrize("mutant", list(SEEDED))
def test_seeded_bug_is_found(mutant, tmp_path):
    """Each seeded bug's spec (specs/mutants/) finds it by random walks, and
    the headline says what broke."""
    from pathlib import Path
    spec = Path(__file__).resolve().parents[2] / "specs" / "mutants" / f"{mutant}.toml"
    r = CliRunner().invoke(cli, ["simulate", str(spec), "--engine", "local", "--out", str(tmp_path)])
    assert r.exit_code == 1, r.output
    assert f"Invariant {SEEDED[mutant]} is violated" in r.output


def test_mutants_names_are_the_models():
    from model.kraft_cluster.mutants import MUTANTS
    assert set(MUTANTS) == set(SEEDED)


def test_epoch_bound_leaves_controllers_without_a_leader():
    """docs/findings.md (cluster, liveness): with 2 controllers and
    ControllerMaxEpoch 2 the controllers' quorum reaches 60,972 states, in
    35,736 of which no controller can ever lead again (all at epoch 2), so
    a failover may end with no active controller under any fairness."""
    from collections import deque

    from model.kraft_quorum.state import Role
    model, _ = build("kraft_cluster", "kip966", {
        "Controllers": ["c1", "c2"], "MaxControllerFailovers": 1, "ControllerMaxEpoch": 2,
        "ControllerMaxRestarts": 0, "MaxDisruptiveElectionTriggers": 1, "BrokerCount": 2,
        "InitReplicationFactor": 2, "MinISR": 1, "InitIsrSize": 2, "FenceBrokerLimit": 1})
    quorum = model.quorum_model
    preds: dict = {s: [] for s in quorum.init_states()}
    frontier = deque(preds)
    while frontier:
        s = frontier.popleft()
        for _, t in quorum.successors(s):
            if t not in preds:
                preds[t] = []
                frontier.append(t)
            preds[t].append(s)
    leads = deque(s for s in preds if Role.Leader in s.state)
    can_lead = set(leads)
    while leads:
        for s in preds[leads.popleft()]:
            if s not in can_lead:
                can_lead.add(s)
                leads.append(s)
    never = [s for s in preds if s not in can_lead]
    assert len(preds) == 60972 and len(never) == 35736
    assert all(s.current_epoch[0] == 2 or s.current_epoch[1] == 2 for s in never)
    assert sum(1 for s in never if s.state == (Role.Prospective, Role.Prospective)
               and s.current_epoch == (2, 2)) == 23472
    assert sum(1 for s in preds if (Role.Leader, 2) in zip(s.state, s.current_epoch)) == 23524
