"""Errors that name what happened: each bad input is exit 2 with exactly
this one `kmc: error:` line (the run folder, the spec file that changed,
the type expected, the model meant), and each accepted-but-odd input is
one `kmc: warning:` line."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import STOP_AFTER_ENV, cli
from model.registry import MODELS

KNOWN = ", ".join(sorted(MODELS))   # the registry's models, as the error lists them

ROOT = Path(__file__).resolve().parents[2]
DIEHARD = ROOT / "specs" / "toy-diehard.toml"
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
KIP966 = ROOT / "specs" / "kraft-kip966-reference.toml"
KMC = [sys.executable, "-m", "checker.front.cli"]


def kmc(*args, env=None):
    r = CliRunner().invoke(cli, [str(a) for a in args], env=env)
    assert "Traceback" not in r.stderr + r.stdout
    return r


def error_line(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("kmc: error:")]
    assert len(errors) == 1, r.stderr
    return errors[0]


def write(tmp_path: Path, name: str, text: str | bytes) -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def stopped_run(tmp_path: Path, spec: Path, *args) -> Path:
    """A run of `spec` stopped after level 3, its levels kept."""
    out = tmp_path / "out"
    r = kmc("check", spec, *args, "--checkpoint", "--out", out, "-q", env={STOP_AFTER_ENV: "3"})
    assert r.exit_code == 130, r.stderr
    (run,) = [p for p in out.glob("*/*") if p.is_dir()]
    return run


# -- --resume ---------------------------------------------------------------------------------

def test_resume_of_an_empty_a_garbage_and_a_finished_folder(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert error_line(kmc("check", "--resume", empty, "-q")) == (
        f"kmc: error: {empty} is an empty folder, not a run folder of kmc check: nothing to resume")
    garbage = tmp_path / "garbage"
    (garbage / "levels").mkdir(parents=True)
    (garbage / "levels" / "checkpoint.json").write_text("not json")
    assert error_line(kmc("check", "--resume", garbage, "-q")) == (
        f"kmc: error: {garbage}/levels/checkpoint.json is damaged (not a checkpoint manifest naming "
        f"the run's options); the run cannot be resumed from it")
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("x")
    assert error_line(kmc("check", "--resume", other, "-q")) == (
        f"kmc: error: {other} is not a run folder with levels to resume from (no "
        f"levels/checkpoint.json; a run keeps its levels from the first level of 50,000 states, "
        f"or from level 0 with --checkpoint)")
    done = kmc("check", DIEHARD, "--depth", "2", "--out", tmp_path / "fin", "-q")
    assert done.exit_code == 0
    (finished,) = (tmp_path / "fin").glob("*/*")
    assert error_line(kmc("check", "--resume", finished, "-q")) == (
        f"kmc: error: {finished} is a finished run (it has its summary.json): nothing to resume")


def test_resume_after_the_spec_file_was_edited_says_so(tmp_path):
    spec = write(tmp_path, "tp.toml", TWOPHASE.read_text())
    run = stopped_run(tmp_path, spec)
    spec.write_text(TWOPHASE.read_text().replace('RM = ["r1", "r2", "r3"]', 'RM = ["r1", "r2"]'))
    assert error_line(kmc("check", "--resume", run, "-q")) == (
        f"kmc: error: the spec file {spec} changed since the run in {run} started: constants: "
        f'RM ["r1", "r2", "r3"] then, ["r1", "r2"] now (a run goes on with the spec it started '
        f"with: undo the edit to resume, or start a new run)")
    spec.write_text("depth = 20\n" + TWOPHASE.read_text())
    assert "depth: none then, 20 now" in error_line(kmc("check", "--resume", run, "-q"))
    spec.write_text(TWOPHASE.read_text())   # undone: it resumes
    assert kmc("check", "--resume", run, "-q").exit_code == 0


def test_json_on_sigterm_names_the_run_folder_to_resume(tmp_path):
    out = tmp_path / "out"
    p = subprocess.Popen(KMC + ["check", str(KIP966), "--checkpoint", "--out", str(out), "-q", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    deadline = time.time() + 120
    while time.time() < deadline and not list(out.glob("*/*/levels/checkpoint.json")):
        time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    stdout, _ = p.communicate(timeout=120)
    assert p.returncode == 143
    (run,) = [q for q in out.glob("*/*") if q.is_dir()]
    assert json.loads(stdout.strip().splitlines()[-1]) == {
        "outcome": "terminated", "exit_code": 143, "results_dir": str(run),
        "resume": f"kmc check --resume {run}"}
    shutil.rmtree(out)


# -- options ----------------------------------------------------------------------------------

def test_fairness_with_property_on_a_spec_without_fairness(tmp_path):
    r = kmc("check", DIEHARD, "--property", "AlwaysEventuallySolved", "--fairness", "WF:FillSmallJug",
            "--continue", "--out", tmp_path, "-q")
    assert r.exit_code == 1, r.stderr   # checked under the fairness given, not refused
    assert "Not compared with [expect]: the command line changed the spec (--property " \
           "AlwaysEventuallySolved; --fairness WF:FillSmallJug; --continue)." in r.stdout


def test_simulate_with_property_does_not_compare_expect(tmp_path):
    spec = write(tmp_path, "s.toml", DIEHARD.read_text() + "\n[simulate]\nwalks = 5\nseed = 1\n")
    r = kmc("simulate", spec, "--property", "AlwaysEventuallySolved", "--fairness", "WF:FillSmallJug",
            "--out", tmp_path / "r", "-q")
    assert "Not compared with [expect]: the command line changed the spec (--property, --fairness)." \
        in r.stdout, r.stderr
    assert "matches the spec's [expect]" not in r.stdout


@pytest.mark.parametrize("args, line", [
    (["--checkpoint", "--no-checkpoint"],
     "kmc: error: --checkpoint and --no-checkpoint contradict each other: give one of them"),
    (["--no-deadlock", "--deadlock"],
     "kmc: error: --deadlock and --no-deadlock contradict each other: give one of them"),
    (["--set", "Goal=3", "--set", "Goal=4"], "kmc: error: --set Goal is given twice (3 and 4): give it once"),
])
def test_contradicting_options_are_refused(tmp_path, args, line):
    assert error_line(kmc("check", DIEHARD, *args, "--out", tmp_path, "-q")) == line


def test_a_walk_is_cut_by_time_and_by_max_memory(tmp_path):
    spec = ROOT / "specs" / "quorum" / "simulate-reference.toml"
    t0 = time.time()
    r = kmc("simulate", spec, "--depth", "1000000000", "--walks", "1", "--time", "2", "--engine", "local",
            "--out", tmp_path, "-q")
    assert r.exit_code == 0 and time.time() - t0 < 60, r.stderr
    assert "1 cut short by --time" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) < 400   # no line of the walk's depths
    r = kmc("simulate", spec, "--depth", "1000000000", "--walks", "1", "--time", "60", "--engine", "local",
            "--max-memory", "10M", "--out", tmp_path, "-q")
    line = error_line(r)
    assert line.startswith("kmc: error: memory limit 10 MiB reached in walk 0 after ")
    assert line.endswith("walk less deep (--depth), or give --max-memory more room")


# -- specs ------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line", [
    ('model = "diehard"\n[expect]\noutcome = "pass"\nviolated = ["NotSolved"]\n',
     '{p}: expect.outcome is "pass" but expect.violated names NotSolved: a pass violates nothing '
     '(give outcome = "violation", or drop violated)'),
    ('model = "diehard"\n[expect]\ndistinct = "14"\n',
     "{p}: expect.distinct must be an integer (states), not str '14'"),
    ('model = "diehard"\n[expect]\nquick = 1\n', "{p}: expect.quick must be true or false, not int 1"),
    ('model = "KRaft"\n', "{p}: unknown model 'KRaft' (did you mean 'kraft'? known models: "
                          + KNOWN + ")"),
    ('model = "kraft_quorum"\n[constants]\nValue = []\n',
     "{p}: constants rejected by model 'kraft_quorum': kraft_quorum/kip996: Value must be a "
     "non-empty list of non-empty strings, got [] (MaxValuesPerEpoch = 0 switches client writes off)"),
])
def test_bad_spec_lines(tmp_path, text, line):
    p = write(tmp_path, "s.toml", text)
    assert error_line(kmc("check", p, "--out", tmp_path / "r", "-q")) == "kmc: error: " + line.format(p=p)


def test_list_suggests_the_model_meant():
    assert error_line(kmc("list", "KRaft")) == (
        f"kmc: error: unknown model 'KRaft' (did you mean 'kraft'? known models: {KNOWN})")


def test_a_utf8_bom_is_read(tmp_path):
    p = write(tmp_path, "bom.toml", b'\xef\xbb\xbfmodel = "diehard"\ndepth = 2\n')
    r = kmc("check", p, "--out", tmp_path / "r", "-q")
    assert r.exit_code == 0, r.stderr


def test_regress_of_a_folder_with_a_bad_spec_runs_the_others(tmp_path):
    folder = tmp_path / "specs"
    folder.mkdir()
    shutil.copy(DIEHARD, folder)
    shutil.copy(TWOPHASE, folder)
    write(folder, "bad.toml", 'model = "diehard"\n[constants]\nGoal = "x"\n[expect]\noutcome = "pass"\n')
    r = kmc("regress", folder, "--out", tmp_path / "r")
    assert r.exit_code == 2
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith(str(folder))]
    assert [ln.split()[-1] for ln in rows] == ["ERROR", "OK", "OK"], r.stdout
    assert "3 specs: 2 OK, 0 FAIL, 1 ERROR, 0 skipped" in r.stdout


# -- warnings ---------------------------------------------------------------------------------

def test_a_constant_without_effect_and_an_infinite_space_are_said(tmp_path):
    p = write(tmp_path, "q.toml", 'model = "kraft_quorum"\ndepth = 1\n[constants]\nMaxEpoch = 1\n')
    r = kmc("check", p, "--out", tmp_path / "r", "-q")
    assert r.exit_code == 0, r.stderr
    assert f"kmc: warning: {p}: MaxEpoch has no effect: TestLiveness = true has no epoch limit " \
           f"(MaxEpoch bounds elections only with TestLiveness = false)" in r.stderr.splitlines()
    assert "state space is infinite" not in r.stderr   # (a depth bound)
    from checker.front.spec import load_spec, unbounded_line
    spec = load_spec(p, depth=None)
    assert unbounded_line(spec, spec.build()[0]) == (
        f"{p}: the state space is infinite (TestLiveness = true has no epoch limit: elections go on "
        f"to ever higher epochs, as in the reference's liveness mode) and the check has no depth "
        f"bound: it does not end; set `depth` (or --depth N), bound the model's constants, or walk "
        f"it with kmc simulate")
    listing = kmc("list", "kraft_quorum").stdout
    assert "    state space: infinite with these defaults (TestLiveness = true has no epoch limit" in listing


def test_the_first_quorum_spec_is_named_where_users_read():
    assert (ROOT / "specs" / "quorum" / "first-check.toml").is_file()
    assert "specs/quorum/first-check.toml" in (ROOT / "README.md").read_text()
    assert "specs/quorum/first-check.toml" in (ROOT / "docs" / "findings.md").read_text()


def test_check_help_says_how_a_local_run_resumes():
    text = " ".join(kmc("check", "--help").stdout.split())
    assert "made with --checkpoint" not in text
    assert "a local or auto one that kept a finished level (from the first level of 50,000 states" in text


if os.environ.get("KMC_NO_SIGNALS"):   # (a sandbox without signals to children)
    del test_json_on_sigterm_names_the_run_folder_to_resume


def test_finished_in_counts_from_the_process_start(tmp_path, monkeypatch):
    """The `kmc` program's "Finished in" (total_time_s) counts from the
    process's start (main() reads it from /proc), the interpreter's start and
    the imports included."""
    from checker.front import options as cli_module
    from checker.search import proc
    age = proc.age()
    assert age is not None and 0 < age < 1e6
    time.sleep(0.05)
    assert proc.age() > age
    monkeypatch.setattr(cli_module, "PROCESS_STARTED", time.perf_counter() - 100)
    r = kmc("check", DIEHARD, "--out", tmp_path, "-q", "--json")
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    assert 100 <= summary["total_time_s"] < 200 and summary["wall_time_s"] < 100
    assert "Finished in 10" in r.stderr or "Finished in 10" in r.stdout
