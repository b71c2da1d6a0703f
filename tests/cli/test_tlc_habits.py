"""TLC's command-line habits: -i picks invariants, `kmc list [MODEL]
[--json]`, bare `kmc` prints its help, summaries are whole, shell
completion works, "Finished in" counts the set-up, "1 step"."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DIEHARD = ROOT / "specs" / "toy-diehard.toml"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_bare_kmc_prints_its_help():
    r = run()
    assert r.exit_code == 0
    assert r.stdout.startswith("Usage: ") and "Commands:" in r.stdout


def test_command_summaries_are_not_cut():
    r = run("--help")
    listed = r.stdout.split("Commands:")[1]
    assert "..." not in listed
    assert "results go to OUT/<spec-name>/<run-" in listed


def test_invariant_option_picks_properties(tmp_path):
    r = run("check", DIEHARD, "-i", "TypeOK", "--out", tmp_path, "--json", "-q")
    assert r.exit_code == 0  # NotSolved (violated after 6 steps) is not checked
    obj = json.loads(r.stdout.strip().splitlines()[-1])
    assert obj["config"]["invariants"] == ["TypeOK", "BothFull"]  # the witness is kept
    r = run("check", DIEHARD, "--invariant", "TypeOK", "--invariant", "NotSolved", "--out", tmp_path, "-q")
    assert r.exit_code == 1


def test_invariant_option_unknown_name_is_one_line(tmp_path):
    r = run("check", DIEHARD, "-i", "Nope", "--out", tmp_path, "-q")
    assert r.exit_code == 2
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("kmc: error:")]
    assert len(errors) == 1 and "unknown property 'Nope'" in errors[0]


def test_list_one_model_and_json():
    r = run("list", "diehard")
    assert r.exit_code == 0 and r.stdout.startswith("diehard:") and "kraft" not in r.stdout
    obj = json.loads(run("list", "--json").stdout)
    models = {m["model"]: m for m in obj["models"]}
    assert {"kraft", "zk", "diehard"} <= set(models)
    kip966 = next(v for v in models["kraft"]["variants"] if v["variant"] == "kip966")
    assert any(c["name"] == "MinISR" for c in kip966["constants"])
    assert any(p["name"] == "LeaderCompletenessProperty" and p["kind"] == "always"
               for p in kip966["properties"])
    r = run("list", "nope")
    assert r.exit_code == 2 and "unknown model 'nope'" in r.stderr


def test_one_step_and_finished_in_with_set_up(tmp_path):
    r = run("check", DIEHARD, "--depth", "1", "--out", tmp_path, "-q")
    assert r.exit_code == 0
    assert "(within 1 step)" in r.stdout and "Depth: 1 step;" in r.stdout
    assert re.search(r"Finished in \d+\.\d\ds \(\d+\.\d\ds set-up, \d+\.\d\ds search\)", r.stdout)


def test_finished_in_of_a_resumed_run_counts_its_earlier_search():
    """A resumed run's search time includes the runs before it: no negative
    set-up time."""
    from checker.front.spec import load_spec
    from checker.output.console import report_text
    from checker.search.engine import CheckOptions, check
    spec = load_spec(DIEHARD, {}, depth=1)
    model, properties = spec.build()
    result = check(model, properties, CheckOptions(max_depth=1))
    result.wall_time = 100.0   # as after a resume: the earlier runs' 99.5 s and this one's
    text = report_text(spec, result, None, total_s=0.5)
    assert "Finished in 0.50s here (100.00s of search in all, with the runs resumed)" in text
    assert "-" not in text.split("Finished in", 1)[1].split(":")[0]


def test_shell_completion_script():
    kmc = Path(sys.executable).with_name("kmc")
    out = subprocess.run([str(kmc)], env={**os.environ, "_KMC_COMPLETE": "bash_source"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "complete " in out.stdout and "_kmc_completion" in out.stdout
