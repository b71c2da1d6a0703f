"""Options that change a run are never silently ignored: --deadlock and
--continue make a run not comparable with the spec's [expect]; --out with a
--resume of a run kept elsewhere, and --shrink-time with --no-shrink, are
refused (one line, exit 2); simulation weights are bounded, and an action
that weighs 0 is never taken, however the arithmetic rounds."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DIEHARD = ROOT / "specs" / "toy-diehard.toml"
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
NOTE = "Not compared with [expect]: the command line changed the spec ({})."


def kmc(*args, env=None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def summary_of(result) -> dict:
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("option", ["--deadlock", "--continue"])
def test_deadlock_and_continue_change_the_spec(tmp_path, option):
    plain = summary_of(kmc("check", DIEHARD, "--json", "-q", "--out", tmp_path))
    assert "expect_note" not in plain
    changed = summary_of(kmc("check", DIEHARD, option, "--json", "-q", "--out", tmp_path))
    assert changed["expect_note"] == NOTE.format(option)   # (the option named)


def test_the_spec_s_own_deadlock_setting_is_no_change(tmp_path):
    same = summary_of(kmc("check", DIEHARD, "--no-deadlock", "--json", "-q", "--out", tmp_path))
    assert "expect_note" not in same


def test_out_elsewhere_with_resume_is_refused(tmp_path):
    out = tmp_path / "o"
    r = kmc("check", TWOPHASE, "--checkpoint", "--out", out, "-q", env={"KMC_STOP_AFTER_LEVEL": "3"})
    assert r.exit_code == 130, r.stderr
    (run,) = [p for p in out.glob("*/*") if p.is_dir()]
    r = kmc("check", TWOPHASE, "--resume", run, "--out", tmp_path / "other", "-q")
    assert r.exit_code == 2 and r.stderr.strip().splitlines() == [
        f"kmc: error: --out {tmp_path / 'other'} has no effect with --resume: the run goes on in its own "
        f"folder, {run}"]
    assert not (tmp_path / "other").exists()
    done = kmc("check", TWOPHASE, "--resume", run, "--out", out, "--json", "-q")   # the same --out: fine
    assert done.exit_code == 0, done.stderr
    assert summary_of(done)["distinct"] == summary_of(
        kmc("check", TWOPHASE, "--json", "-q", "--out", tmp_path / "plain"))["distinct"]


def test_shrink_time_without_shrinking_is_refused(tmp_path):
    r = kmc("simulate", DIEHARD, "--walks", "3", "--no-shrink", "--shrink-time", "5", "--out", tmp_path)
    assert r.exit_code == 2 and r.stderr.strip() == "kmc: error: --shrink-time has no effect with --no-shrink"


def _weighted(tmp_path, weights: str) -> Path:
    text = DIEHARD.read_text().replace("[expect]", f"[simulate]\nwalks = 50\nweights = {{ {weights} }}\n\n[expect]")
    spec = tmp_path / "weighted.toml"
    spec.write_text(text)
    return spec


def test_a_huge_weight_is_refused(tmp_path):
    spec = _weighted(tmp_path, "FillBigJug = 1e308, FillSmallJug = 1e308, EmptyBigJug = 1e308")
    r = kmc("simulate", spec, "--seed", "3", "--out", tmp_path)
    assert r.exit_code == 2 and "at most 1e+12 (weights are relative)" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_an_action_that_weighs_0_is_never_taken(tmp_path):
    """The only weighed action is subnormal: the running sum of the weights
    never passes the draw, and the last action (weight 0) was taken."""
    zero = ["FillSmallJug", "EmptyBigJug", "EmptySmallJug", "SmallToBig", "BigToSmall"]
    spec = _weighted(tmp_path, ", ".join(["FillBigJug = 1e-320"] + [f"{n} = 0" for n in zero]))
    r = kmc("simulate", spec, "--seed", "3", "--json", "-q", "--out", tmp_path)
    taken = summary_of(r)["simulate"]["per_action_taken"]
    assert taken["FillBigJug"] == 5000 and all(taken[n] == 0 for n in zero), taken
