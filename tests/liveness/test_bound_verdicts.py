"""A liveness verdict that comes from a bound says so: `kmc check` and `kmc
simulate` warn when temporal properties are checked under a bound that stops
actions fairness would force (kraft_quorum's MaxEpoch with TestLiveness =
false), and a lasso that stops at the bound names it and the actions it
disables; a lasso that the bound does not make (a lost majority) does not.
The HTML page's "Lost at" points to the step that asked what never comes (a
value written at step n), not to the initial state."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
STUCK = ROOT / "specs" / "quorum" / "liveness-epoch-limit-stuck-prospective.toml"
NO_LEADER = ROOT / "specs" / "quorum" / "liveness-crash-no-leader.toml"
WARNING = ("kmc: warning: temporal properties checked under MaxEpoch = 2 (TestLiveness = false: no "
           "election starts or concludes at epoch 2), a bound that disables actions fairness would "
           "force: a behaviour that reaches it stops there, so a violation may be the bound's, not "
           "the protocol's (its lasso then names the bound)")
BOUND = ("because the bound MaxEpoch = 2 (TestLiveness = false: no election starts or concludes at "
         "epoch 2) disables ")


def kmc(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_lasso_made_by_the_epoch_bound_names_it(tmp_path):
    r = kmc("check", STUCK, "--out", tmp_path, "-q", "--json")
    assert r.exit_code == 1, r.stderr
    assert WARNING in r.stderr.splitlines()
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    props = summary["liveness"]["properties"]
    for name in ("EventuallyLeaderElected", "NotStuckInProspective"):
        headline = props[name]["counterexample"]["headline"]
        assert headline.startswith(
            "no leader followed by a majority" if name == "EventuallyLeaderElected" else "server 1 stays")
        assert BOUND + "ConcludePreVote(1)" in headline, headline
        assert headline.endswith("which fairness would force without it: the verdict is the "
                                 "bound's, not the protocol's.")


def test_a_lasso_the_bound_does_not_make_does_not_blame_it(tmp_path):
    r = kmc("check", NO_LEADER, "--out", tmp_path, "-q", "--json")
    assert r.exit_code == 1, r.stderr
    assert WARNING in r.stderr.splitlines()   # (the warning is the spec's: its bound is there)
    headline = json.loads(r.stdout.strip().splitlines()[-1])["liveness"]["properties"][
        "EventuallyLeaderElected"]["counterexample"]["headline"]
    assert "bound" not in headline, headline


def test_simulate_warns_and_names_the_bound_and_the_write(tmp_path):
    spec = tmp_path / "q.toml"
    spec.write_text('model = "kraft_quorum"\nvariant = "kip996"\n'
                    'properties = ["ValuesEventuallyAcked"]\n[constants]\n'
                    'Hosts = ["h1", "h2", "h3"]\nInitClusterSize = 3\nMinClusterSize = 3\n'
                    'MaxClusterSize = 3\nMaxSpawnedServers = 3\nTestLiveness = false\nMaxEpoch = 3\n'
                    '[simulate]\nseed = 1\nwalks = 300\ndepth = 100\n')
    r = kmc("simulate", spec, "--out", tmp_path / "r", "-q", "--engine", "local")
    assert r.exit_code == 1, r.stderr
    assert WARNING.replace("= 2", "= 3").replace("epoch 2", "epoch 3") in r.stderr.splitlines()
    head = next(ln for ln in r.stdout.splitlines() if ln.startswith("Temporal property"))
    assert head.startswith("Temporal property ValuesEventuallyAcked (v=")
    # (which lasso the walks close first is the model's: a bound's names it)
    assert "bound" not in head or "because the bound MaxEpoch = 3" in head, head
    (run,) = (tmp_path / "r" / "q").iterdir()
    page = (run / "trace-ValuesEventuallyAcked.html").read_text()
    lost = page.split('id="lost">', 1)[1].split("</p>", 1)[0]
    # the value is lost where it was written, not at the initial state
    assert lost.startswith("Lost at step ") and ", HandleClientRequest(" in lost, lost
