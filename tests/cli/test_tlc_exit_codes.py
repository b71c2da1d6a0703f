"""TLC habits of `kmc check`: --tlc-exit-codes (11 deadlock, 12 safety, 13
liveness), --workers N, --fairness, the help's word on TLC's -deadlock, and
[expect] compared unless an option really changes the spec."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DIEHARD = ROOT / "specs" / "toy-diehard.toml"
TWOPHASE_FAIR = ["WF:TMCommit", "WF:TMAbort", "WF:RMPrepare", "WF:RMRcvCommitMsg",
                 "WF:RMRcvAbortMsg", "WF:TMRcvPrepared"]


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def twophase(tmp_path: Path, fairness) -> Path:
    p = tmp_path / "tp.toml"
    p.write_text('model = "twophase"\nproperties = ["EventuallyAllDecided"]\n'
                 f"fairness = {json.dumps(fairness)}\n")
    return p


def test_safety_deadlock_and_liveness_exit_as_tlc(tmp_path):
    out = tmp_path / "out"
    assert run("check", DIEHARD, "--out", out, "-q").exit_code == 1      # the default stays 1
    assert run("check", DIEHARD, "--out", out, "-q", "--tlc-exit-codes").exit_code == 12
    deadlock = tmp_path / "d.toml"   # (tests/cli/test_cli.py: this graph has a dead end)
    deadlock.write_text('model = "randgraph"\ninvariants = ["NotTarget"]\ncheck_deadlock = true\n'
                        '[constants]\nNodes = 40\nDegree = 2\nSeed = 3\n')
    assert run("check", deadlock, "--out", out, "-q").exit_code == 1
    assert run("check", deadlock, "--out", out, "-q", "--tlc-exit-codes").exit_code == 11
    unfair = twophase(tmp_path, [f for f in TWOPHASE_FAIR if f != "WF:RMRcvAbortMsg"])
    assert run("check", unfair, "--out", out, "-q", "--tlc-exit-codes").exit_code == 13
    fair = twophase(tmp_path, TWOPHASE_FAIR)
    assert run("check", fair, "--out", out, "-q", "--tlc-exit-codes").exit_code == 0
    help_text = run("check", "--help").stdout
    assert "--tlc-exit-codes" in help_text and "13 a temporal" in " ".join(help_text.split())


def test_fairness_option_replaces_the_specs(tmp_path):
    out = tmp_path / "out"
    fair = twophase(tmp_path, TWOPHASE_FAIR)
    r = run("check", fair, "--out", out, "-q", "--json", "--fairness", "none")
    assert r.exit_code == 1 and json.loads(r.stdout)["liveness"]["fairness"] == []
    unfair = twophase(tmp_path, [])
    r = run("check", unfair, "--out", out, "-q", "--json", "--fairness", ",".join(TWOPHASE_FAIR[:3]),
            *[x for f in TWOPHASE_FAIR[3:] for x in ("--fairness", f)])
    assert r.exit_code == 0 and json.loads(r.stdout)["liveness"]["fairness"] == TWOPHASE_FAIR
    bad = run("check", fair, "--out", out, "-q", "--fairness", "XF:TMCommit")
    assert bad.exit_code == 2 and bad.stderr.startswith("kmc: error:") and "WF or SF" in bad.stderr
    mixed = run("check", fair, "--out", out, "-q", "--fairness", "none,WF:TMCommit")
    assert mixed.exit_code == 2 and "stand alone" in mixed.stderr


def test_workers_option(tmp_path, monkeypatch):
    monkeypatch.setenv("KMC_AUTO_THRESHOLD", "1")   # (the pool from level 0)
    r = run("check", DIEHARD, "--out", tmp_path, "-q", "--json", "--workers", "2")
    assert r.exit_code == 1 and json.loads(r.stdout)["auto"]["workers"] == 2
    for bad in (["--workers", "0"], ["--workers", "2", "--engine", "local"]):
        r = run("check", DIEHARD, "--out", tmp_path, "-q", *bad)
        assert r.exit_code == 2 and r.stderr.startswith("kmc: error:"), r.output


def test_deadlock_help_names_tlcs_opposite():
    text = " ".join(run("check", "--help").stdout.split())
    assert "Not TLC's -deadlock, which turns the check OFF" in text


def test_same_depth_or_constant_as_the_spec_is_still_compared(tmp_path):
    spec = tmp_path / "diehard6.toml"   # the spec's own depth bound: 6 (its violation's depth)
    spec.write_text(DIEHARD.read_text().replace('variant = "standard"', 'variant = "standard"\ndepth = 6'))
    out = tmp_path / "out"
    for same in (["--depth", "6"], ["--set", "BigCapacity=5"], ["--no-deadlock"], []):
        r = run("check", spec, "--out", out, "-q", *same)
        assert "The run matches the spec's [expect]." in r.stdout, (same, r.stdout)
    r = run("check", spec, "--out", out, "-q", "--depth", "5", "--set", "Goal=4", "--set", "SmallCapacity=2")
    assert ("Not compared with [expect]: the command line changed the spec "
            "(--depth 5 (the spec's: 6); --set SmallCapacity=2).") in r.stdout
    r = run("check", spec, "--out", out, "-q", "--json", "--depth", "none")
    assert "--depth none (the spec's: 6)" in json.loads(r.stdout)["expect_note"]
