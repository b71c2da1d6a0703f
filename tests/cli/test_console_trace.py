"""The console counterexample: one trace that breaks several properties is
printed once, naming each; state 0's full dump comes behind --full-state
(the trace files always keep it)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

LRS = Path(__file__).resolve().parents[2] / "specs" / "kraft-v3_5-last-replica-standing.toml"


def test_same_trace_once_and_state_0_in_short(tmp_path):
    r = CliRunner().invoke(cli, ["check", str(LRS), "--out", str(tmp_path), "-q", "--engine", "local"])
    assert r.exit_code == 1
    out = r.stdout
    assert out.count("State 0: <initial state>") == 1
    assert ("Invariants LeaderCompletenessProperty and LeaderCandidateCompletenessProperty are "
            "violated after 7 steps (the same trace).") in out
    assert "LeaderCandidateCompletenessProperty: An election could lose committed data" in out
    assert "  every variable:" not in out and "(every variable: kmc check --full-state" in out
    run = next((tmp_path / LRS.stem).iterdir())
    for f in ("trace-LeaderCompletenessProperty.txt", "trace-LeaderCandidateCompletenessProperty.txt"):
        assert "  every variable:" in (run / f).read_text()


def test_full_state_option(tmp_path):
    r = CliRunner().invoke(cli, ["check", str(LRS), "--out", str(tmp_path), "-q", "--full-state"])
    assert r.exit_code == 1
    assert "  every variable:" in r.stdout and "con_broker_reg = " in r.stdout
