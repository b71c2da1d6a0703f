"""`kmc simulate`: the summary (--json), the run folder (the shrunk trace as
text, JSON, ITF and HTML, the walk as walked), the run's seed, exit codes, and
bad input: exit 2 with one `kmc: error:` line."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from sim_helpers import DIEHARD, KIP966_LOSS, TWOPHASE


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def summary_of(r) -> dict:
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_json_summary_and_run_folder(tmp_path):
    r = invoke("simulate", KIP966_LOSS, "--out", tmp_path, "--json", "-q")
    assert r.exit_code == 1, r.stderr
    s = summary_of(r)
    assert list(s)[:7] == ["outcome", "violated", "depth", "walks", "steps", "seed", "distinct"]
    assert s["outcome"] == "violation" and s["violated"] == ["LeaderCompletenessProperty"]
    assert s["seed"] == 1 and s["depth"] == 22 and s["walks"] == s["simulate"]["first_violation"]["walk"] + 1
    sim = s["simulate"]
    assert sim["shrink"]["one_minimal"] and sim["shrink"]["steps"] == 22
    assert sim["shrink"]["original_steps"] == sim["first_violation"]["walk_steps"] > 22
    assert s["config"]["mode"] == "simulate" and s["config"]["engine"] == "auto"
    assert sim["weights"] == {"BackgroundFlush": 0.1, "PowerLoss": 0.1} and sim["time_limit_s"] == 60
    run_dir = tmp_path / "kip966-storage-3b-minisr-power-losses-balanced" / s["run_id"]
    assert s["results_dir"] == str(run_dir)
    for f in ("summary.json", "report.html", "walk-LeaderCompletenessProperty.txt",
              "walk-LeaderCompletenessProperty.json", *(f"trace-LeaderCompletenessProperty.{x}"
                                                        for x in ("txt", "json", "itf.json", "html"))):
        assert (run_dir / f).is_file(), f
    trace = json.loads((run_dir / "trace-LeaderCompletenessProperty.json").read_text())
    assert len(trace["steps"] if "steps" in trace else trace["trace"]) == 23
    assert json.loads((run_dir / "summary.json").read_text())["simulate"]["seed"] == 1
    assert "Invariant LeaderCompletenessProperty is violated after 22 steps." in r.stderr
    assert "shrunk to 22 steps" in r.stderr and "1-minimal" in r.stderr


def test_a_pass_exits_0_and_reports_coverage(tmp_path):
    r = invoke("simulate", TWOPHASE, "--walks", "300", "--depth", "12", "--seed", "5", "--out", tmp_path)
    assert r.exit_code == 0, r.stderr
    assert "Simulation completed: 300 walks of at most 12 steps. No error has been found." in r.stdout
    assert "Seed 5: 300 walks" in r.stdout and "Coverage (action: enabled / taken / new distinct):" in r.stdout
    assert "Distinct states per depth" in r.stdout and "Sometimes AllCommitted: witnessed in" in r.stdout
    assert "seed 5" in r.stderr


def test_same_seed_same_summary(tmp_path):
    def figures(r):
        s = summary_of(r)
        return {k: v for k, v in s.items() if k in ("walks", "steps", "distinct", "generated", "per_level_distinct",
                                                  "per_action_generated", "per_action_distinct", "sometimes")}
    a = invoke("simulate", TWOPHASE, "--walks", "200", "--seed", "42", "--out", tmp_path, "--json", "-q")
    b = invoke("simulate", TWOPHASE, "--walks", "200", "--seed", "42", "--out", tmp_path, "--json", "-q")
    c = invoke("simulate", TWOPHASE, "--walks", "200", "--seed", "43", "--out", tmp_path, "--json", "-q")
    assert figures(a) == figures(b) != figures(c)


def test_a_random_seed_is_printed_and_written(tmp_path):
    # (the header line names the run's seed; -q leaves it out)
    r = invoke("simulate", TWOPHASE, "--walks", "5", "--out", tmp_path, "--json")
    s = summary_of(r)
    assert isinstance(s["seed"], int) and f"seed {s['seed']}" in r.stderr


def test_time_limit(tmp_path):
    r = invoke("simulate", TWOPHASE, "--time", "0.5s", "--out", tmp_path, "--json", "-q")
    s = summary_of(r)
    assert r.exit_code == 0 and s["walks"] > 0 and s["simulate"]["time_limit_s"] == 0.5
    assert s["simulate"]["walks_limit"] is None


def test_evaluation_error_exits_3(tmp_path):
    """kraft with MinISR 1 and two values stops with the reference's
    evaluation error (quirk 18)."""
    spec = tmp_path / "q18.toml"
    spec.write_text('model = "kraft"\nvariant = "kip966"\n[constants]\nBrokerCount = 2\n'
                    'InitReplicationFactor = 2\nValues = ["A", "B"]\nMinISR = 1\nInitIsrSize = 2\n')
    r = invoke("simulate", spec, "--walks", "300", "--seed", "1", "--out", tmp_path / "out", "-q")
    assert r.exit_code == 3
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("kmc: error:")]
    assert len(errors) == 1 and "evaluation error in action WriteRecordToLeader" in errors[0]


SIM = 'model = "diehard"\n[simulate]\n'
BAD = {
    "--walks 0": (None, ["--walks", "0"], "--walks"),
    "--walks -3": (None, ["--walks", "-3"], "--walks"),
    "--depth 0": (None, ["--depth", "0"], "--depth"),
    "--time -1": (None, ["--time", "-1"], "--time must be more than 0"),
    "--time 0": (None, ["--time", "0"], "--time must be more than 0"),
    "--time -5s": (None, ["--time", "-5s"], "--time must be more than 0"),
    "--time abc": (None, ["--time", "abc"], "--time expects seconds"),
    "--seed abc": (None, ["--seed", "abc"], "--seed"),
    "--seed 1.5": (None, ["--seed", "1.5"], "--seed"),
    "--shrink-time -1": (None, ["--shrink-time", "-1"], "--time must be more than 0"),
    "--engine nope": (None, ["--engine", "nope"], "--engine"),
    "--master without spark": (None, ["--master", "local[2]"], "--engine spark"),
    "--master refused": (None, ["--engine", "spark", "--master", "spark://127.0.0.1:1"], "cannot reach"),
    "-i unknown": (None, ["-i", "Nope"], "Nope"),
    "--set unknown": (None, ["--set", "Nope=1"], "Nope"),
    "--out unwritable": (None, ["--out", "/proc/kmc-nope"], "results"),
    "weights naming an unknown action": (SIM + "weights = { Nope = 2.0 }\n", [], "unknown action(s) 'Nope'"),
    "a negative weight": (SIM + "weights = { FillBigJug = -1 }\n", [], "weight of FillBigJug"),
    "every weight 0": (SIM + "weights = { FillSmallJug = 0, FillBigJug = 0, EmptySmallJug = 0, "
                       "EmptyBigJug = 0, SmallToBig = 0, BigToSmall = 0 }\n", [], "every action weighs 0"),
    "weights not a table": (SIM + "weights = 3\n", [], "simulate.weights"),
    "unknown [simulate] key": (SIM + "walkz = 3\n", [], "unknown key(s) 'walkz' in [simulate]"),
    "simulate.walks 0": (SIM + "walks = 0\n", [], "simulate.walks must be a positive integer"),
    "simulate.time negative": (SIM + "time = -2\n", [], "simulate.time must be a positive number"),
    "simulate.depth a string": (SIM + 'depth = "9"\n', [], "simulate.depth"),
    "simulate.seed not an integer": (SIM + "seed = 1.5\n", [], "simulate.seed must be an integer"),
    "simulate.swarm not a bool": (SIM + "swarm = 1\n", [], "simulate.swarm"),
    "simulate not a table": ('model = "diehard"\nsimulate = 3\n', [], "[simulate]"),
    "expect.within_s negative": (SIM + "[expect]\nviolated = \"NotSolved\"\nwithin_s = -1\n", [],
                                 "expect.within_s"),
    "expect.min_walks a string": (SIM + "[expect]\noutcome = \"pass\"\nmin_walks = \"9\"\n", [],
                                  "expect.min_walks"),
    "--property not temporal": (None, ["--property", "NotSolved"], "NotSolved is a state property"),
    "--property unknown": (None, ["--property", "Nope"], "unknown temporal property 'Nope'"),
    "fairness naming an unknown action": ('model = "twophase"\nproperties = ["EventuallyAllDecided"]\n'
                                          'fairness = ["WF:Commit"]\n', [], "unknown fairness action 'Commit'"),
    "a projection that drops variables": ('model = "twophase"\nproperties = ["EventuallyAllDecided"]\n'
                                          'fairness = []\nprojection = "no_msgs"\n', [],
                                          "the projection drops msgs"),
}


@pytest.mark.parametrize("name", BAD)
def test_bad_input(tmp_path, name):
    text, args, fragment = BAD[name]
    spec = DIEHARD
    if text is not None:
        spec = tmp_path / "spec.toml"
        spec.write_text(text)
    r = invoke("simulate", spec, "-q", *(["--out", tmp_path / "out"] if "--out" not in args else []), *args)
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("kmc: error:")]
    assert len(errors) == 1, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert fragment in errors[0], errors[0]
    assert not (tmp_path / "out" / "toy-diehard").exists() or not any((tmp_path / "out" / "toy-diehard").iterdir())


def test_pure_python_twins_and_wide_fingerprints_walk_the_same_walks(tmp_path):
    """KMC_NATIVE=0 (no compiled encoder, Python seen sets) and 128-bit
    fingerprints: the same walks, the same figures."""
    import os
    import subprocess
    import sys

    def run(spec, env=None):
        proc = subprocess.run([sys.executable, "-m", "checker.front.cli", "simulate", str(spec), "--out",
                               str(tmp_path), "--json", "-q"], capture_output=True, text=True,
                              env={**os.environ, **(env or {})}, timeout=300)
        assert proc.returncode == 1, proc.stderr
        s = json.loads(proc.stdout.strip().splitlines()[-1])
        return {k: s[k] for k in ("walks", "steps", "distinct", "generated", "per_level_distinct",
                                  "per_action_distinct", "depth")}

    native = run(KIP966_LOSS)
    assert run(KIP966_LOSS, {"KMC_NATIVE": "0"}) == native
    wide = tmp_path / "wide.toml"
    wide.write_text(KIP966_LOSS.read_text().replace('variant = "kip966_storage"',
                                                     'variant = "kip966_storage"\nfingerprint = "xxh3_128"'))
    assert run(wide) == native


def test_no_shrink_writes_the_walk_as_walked(tmp_path):
    r = invoke("simulate", KIP966_LOSS, "--no-shrink", "--swarm", "--seed", "1", "--out", tmp_path, "--json", "-q")
    assert r.exit_code == 1, r.stderr
    s = summary_of(r)
    assert s["depth"] == s["simulate"]["first_violation"]["walk_steps"] and "shrink" not in s["simulate"]
    assert s["simulate"]["swarm"] is True
    assert not list((tmp_path / KIP966_LOSS.stem).glob("*/walk-*"))
