"""`kmc trace show results/<spec>`: the newest run with a counterexample,
named on stderr (a newer passing run does not hide it)."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

DIEHARD = Path(__file__).resolve().parents[2] / "specs" / "toy-diehard.toml"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_spec_folder_shows_its_newest_run_with_a_counterexample(tmp_path):
    assert run("check", DIEHARD, "--out", tmp_path, "--quiet").exit_code == 1
    violated = next((tmp_path / "toy-diehard").iterdir())
    assert run("check", DIEHARD, "--out", tmp_path, "--quiet", "--depth", "2").exit_code == 0
    assert len(list((tmp_path / "toy-diehard").iterdir())) == 2
    shown = run("trace", "show", tmp_path / "toy-diehard")
    assert shown.exit_code == 0, shown.stderr
    assert "Step 6: BigToSmall" in shown.stdout
    assert f"kmc: {violated}: the newest run with a counterexample (1 newer run without)" in shown.stderr


def test_a_spec_folder_without_counterexamples_says_so(tmp_path):
    assert run("check", DIEHARD, "--out", tmp_path, "--quiet", "--depth", "2").exit_code == 0
    shown = run("trace", "show", tmp_path / "toy-diehard")
    assert shown.exit_code == 2
    assert "none has a counterexample" in shown.stderr
    assert [ln for ln in shown.stderr.splitlines() if ln.startswith("kmc: error:")]
