"""report.html and the summary: actions switched off on purpose (a limit of
0) apart from actions never enabled, and whether the run matched the spec's
[expect] (on the console too)."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

QUICK = Path(__file__).resolve().parents[2] / "specs" / "kraft-kip966-quick.toml"


def check(*args):
    r = CliRunner().invoke(cli, ["check", *map(str, args), "-q", "--json"])
    return r, json.loads(r.stdout.strip().splitlines()[-1])


def test_switched_off_actions_and_a_matching_expect(tmp_path):
    r, obj = check(QUICK, "--out", tmp_path)
    assert r.exit_code == 0
    assert obj["expect_met"] is True and obj["expect_problems"] == []
    run = Path(obj["results_dir"])
    summary = json.loads((run / "summary.json").read_text())
    assert summary["switched_off"] == {"NoDataLossShutdown": "NoDataLossShutdownLimit = 0",
                                       "FenceBroker": "FenceBrokerLimit = 0",
                                       "PerformPartitionReassignment": "ReassignmentLimit = 0"}
    page = (run / "report.html").read_text()
    assert '<tr class="off" data-action="FenceBroker">' in page
    assert "MATCHES" in page
    # an action that is on but never enabled is still flagged as such
    assert '<tr class="never"' not in page or "No limit constant switches them off" in page


def test_a_run_that_does_not_match_its_expect(tmp_path):
    spec = tmp_path / "wrong.toml"
    spec.write_text(QUICK.read_text().replace("distinct = ", "distinct = 1 + "))
    text = spec.read_text()
    assert "distinct = 1 + " in text
    # a wrong figure (TOML has no arithmetic): write it out
    import re
    spec.write_text(re.sub(r"distinct = 1 \+ (\d+)", lambda m: f"distinct = {int(m.group(1)) + 1}", text))
    r, obj = check(spec, "--out", tmp_path / "out")
    assert obj["expect_met"] is False and obj["expect_problems"][0].startswith("distinct ")
    assert "DOES NOT MATCH" in (Path(obj["results_dir"]) / "report.html").read_text()
    r2 = CliRunner().invoke(cli, ["check", str(spec), "--out", str(tmp_path / "out"), "-q"])
    assert "The run does NOT match the spec's [expect]: distinct " in r2.stdout


def test_a_changed_spec_is_not_compared(tmp_path):
    r, obj = check(QUICK, "--out", tmp_path, "--depth", "3")
    assert "expect_met" not in obj and "command line changed the spec" in obj["expect_note"]
