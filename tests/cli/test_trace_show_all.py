"""`kmc trace show RUN_DIR` shows every property the run violated (and an
evaluation error's trace); the other forms name the properties they leave out."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
KIP966_FIXED = ROOT / "specs" / "kraft-kip966-minisr1-two-values-quirks-fixed.toml"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def the_run(out: Path) -> Path:
    (r,) = [p for p in out.glob("*/*") if p.is_dir()]
    return r


def test_show_names_every_violated_property(tmp_path):
    spec = tmp_path / "g.toml"
    spec.write_text('model = "randgraph"\n[constants]\nNodes = 80\nSeed = 5\nTargets = [60]\n')
    assert run("check", spec, "--continue", "--out", tmp_path / "o", "-q").exit_code == 1
    rd = the_run(tmp_path / "o")
    shown = run("trace", "show", rd)
    assert shown.exit_code == 0, shown.output
    assert "Invariant NotOdd is violated" in shown.stdout
    assert "Invariant NotTarget is violated" in shown.stdout
    one = run("trace", "show", rd, "--property", "NotTarget")
    assert "NotTarget" in one.stdout and "NotOdd" not in one.stdout
    itf = run("trace", "itf", rd)
    assert itf.exit_code == 0 and "also has counterexamples for NotTarget (--property NAME)" in itf.stderr


def test_show_an_evaluation_errors_trace(tmp_path):
    spec = tmp_path / "q.toml"
    spec.write_text(KIP966_FIXED.read_text().replace("ReferenceQuirks = false", "ReferenceQuirks = true")
                    .replace("FenceBrokerLimit = 0", "FenceBrokerLimit = 1"))
    assert run("check", spec, "--out", tmp_path / "o", "-q").exit_code == 3
    shown = run("trace", "show", the_run(tmp_path / "o"))
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("Evaluation error in WriteRecordToLeader(1) from the state after 3 steps")
    assert "set ReferenceQuirks = false" in shown.stdout
