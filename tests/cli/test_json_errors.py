"""--json: a failure is a JSON object on stdout too; a disk that fills while
the counterexample is written does not lose it from the console."""
from __future__ import annotations

import errno
import json
from pathlib import Path

from click.testing import CliRunner

from checker.front import cli as cli_module
from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DIEHARD = ROOT / "specs" / "toy-diehard.toml"


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_bad_input_with_json_is_a_json_object(tmp_path):
    for args in (["check", tmp_path / "nope.toml", "--json"],
                 ["check", DIEHARD, "--json", "--depth", "x"],
                 ["check", DIEHARD, "--json", "--set", "Nope=1", "--out", tmp_path],
                 ["simulate", DIEHARD, "--json", "--set", "Nope=1", "--out", tmp_path],
                 ["list", "nope", "--json"]):
        r = run(*args)
        assert r.exit_code == 2, r.output
        obj = json.loads(r.stdout)
        assert obj["outcome"] == "error" and obj["exit_code"] == 2
        (line,) = r.stderr.strip().splitlines()
        assert line == f"kmc: error: {obj['error']}"
    assert run("check", tmp_path / "nope.toml").stdout == ""   # without --json: stdout stays empty


def test_an_interrupt_with_json_is_a_json_object(tmp_path, monkeypatch):
    def interrupted(*a, **k):
        raise KeyboardInterrupt
    import checker.search.parallel
    monkeypatch.setattr(checker.search.parallel, "check_auto", interrupted)
    r = run("check", DIEHARD, "--json", "--out", tmp_path, "-q", "--no-checkpoint")
    assert r.exit_code == 130
    assert json.loads(r.stdout) == {"outcome": "interrupted", "exit_code": 130}


def test_a_full_disk_while_writing_keeps_the_counterexample_on_the_console(tmp_path, monkeypatch):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(cli_module, "write_run", full)
    monkeypatch.setattr(cli_module, "write_run_into", full)   # (a run keeping its levels)
    r = run("check", DIEHARD, "--out", tmp_path, "--engine", "local")
    assert r.exit_code == 2
    assert "Invariant NotSolved is violated after 6 steps" in r.stdout   # the trace, shown
    assert "Results:" not in r.stdout
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("kmc: error:")]
    assert "No space left on device" in line and "the result is shown above, not kept" in line
    r = run("check", DIEHARD, "--out", tmp_path, "--engine", "local", "--json")
    assert r.exit_code == 2
    obj = json.loads(r.stdout)   # the summary, once: the error is on stderr
    assert obj["violated"] == ["NotSolved"] and obj["results_dir"] is None


def test_a_full_disk_keeps_a_simulations_counterexample_on_the_console(tmp_path, monkeypatch):
    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")
    import checker.output.results
    monkeypatch.setattr(checker.output.results, "write_run", full)
    r = run("simulate", DIEHARD, "--out", tmp_path, "--walks", "2000", "--seed", "1")
    assert r.exit_code == 2, r.output
    assert "Invariant NotSolved is violated" in r.stdout and "Results:" not in r.stdout
    (line,) = [x for x in r.stderr.splitlines() if x.startswith("kmc: error:")]
    assert "No space left on device" in line and "the result is shown above, not kept" in line
