"""`kmc regress` runs simulation specs (a [simulate] table): a violation
found within expect.within_s (and shrunk to expect.depth), or a pass over
expect.min_walks walks; witnesses as for any spec; the result tables say
how the outcome was reached. The project's specs/simulate rows hold."""
from __future__ import annotations

from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.regress import markdown_tables, run_spec, table_row
from checker.front.spec import load_spec
from sim_helpers import SIM, SPECS

DIEHARD_SIM = '''model = "diehard"
[simulate]
seed = 3
[expect]
violated = "NotSolved"
depth = 6
within_s = 30
quick = true
'''
TWOPHASE_SIM = '''model = "twophase"
[constants]
RM = ["r1", "r2", "r3"]
[simulate]
seed = 9
depth = 30
[expect]
outcome = "pass"
min_walks = 150
sometimes = ["AllCommitted"]
'''


def kmc(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def write(tmp_path, name, text):
    p = tmp_path / "specs" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_rows_ok_fail_and_skip(tmp_path):
    write(tmp_path, "a-diehard.toml", DIEHARD_SIM)
    write(tmp_path, "b-twophase.toml", TWOPHASE_SIM)
    write(tmp_path, "c-wrong-depth.toml", DIEHARD_SIM.replace("depth = 6", "depth = 5"))
    write(tmp_path, "d-never.toml", DIEHARD_SIM.replace('violated = "NotSolved"', 'violated = "TypeOK"'))
    write(tmp_path, "e-not-quick.toml", TWOPHASE_SIM)
    r = kmc("regress", tmp_path / "specs", "--out", tmp_path / "results")
    rows = {ln.split()[0].rsplit("/", 1)[-1]: ln for ln in r.stdout.splitlines() if ln.startswith(str(tmp_path))}
    assert rows["a-diehard.toml"].endswith("OK") and "NotSolved @6 (walk" in rows["a-diehard.toml"]
    assert rows["b-twophase.toml"].endswith("OK") and "pass, 150 walks" in rows["b-twophase.toml"]
    assert rows["c-wrong-depth.toml"].endswith("FAIL") and "shrunk to 6 steps, expected 5" in r.stdout
    assert rows["d-never.toml"].endswith("FAIL") and "NotSolved violated, expected TypeOK" in r.stdout
    assert r.exit_code == 1
    assert list((tmp_path / "results" / "a-diehard").glob("*/trace-NotSolved.html"))
    quick = kmc("regress", tmp_path / "specs", "--quick", "-k", "a-diehard")
    assert quick.exit_code == 0 and "OK" in quick.stdout
    skipped = run_spec(str(tmp_path / "specs" / "e-not-quick.toml"), True, None, None)
    assert skipped.status == "SKIP"


def test_a_pass_needs_its_walks_and_witnesses(tmp_path):
    p = write(tmp_path, "w.toml", TWOPHASE_SIM.replace('min_walks = 150', 'min_walks = 150')
              .replace('depth = 30', 'depth = 1'))   # one step: nothing is ever committed
    row = run_spec(str(p), False, None, None)
    assert row.status == "FAIL" and any("AllCommitted never reached" in x for x in row.problems)
    row = run_spec(str(p), False, 1e-9, None)   # --timeout: fewer walks than asked
    assert row.status == "FAIL" and any("expected at least 150" in x for x in row.problems)


def test_a_simulation_spec_loads_as_any_spec_and_kmc_check_runs_bfs(tmp_path):
    p = write(tmp_path, "a.toml", DIEHARD_SIM)
    spec = load_spec(p)
    assert spec.expect["within_s"] == 30
    r = kmc("check", p, "--out", tmp_path / "out", "-q")
    assert r.exit_code == 1 and "NotSolved is violated after 6 steps" in r.stdout


def test_table_rows_say_how_the_outcome_was_reached():
    row = table_row(SIM / "kip966-storage-3b-minisr-power-losses-balanced.toml", SPECS)
    assert row["outcome"] == "violated: LeaderCompletenessProperty (random walks, found within 60 s; shrunk)"
    assert row["depth"] == "22"
    row = table_row(SIM / "kip966-storage-3b-minisr-minus-one-power-loss.toml", SPECS)
    assert row["outcome"] == "pass in 2,000 random walks of <= 100 steps" and row["depth"] == "-"
    assert "**specs/simulate/** (5 specs)" in markdown_tables(SPECS, ["simulate"])


def test_the_project_simulation_specs_hold():
    r = kmc("regress", SIM)
    assert r.exit_code == 0, r.stdout
    assert "5 specs: 5 OK" in r.stdout
