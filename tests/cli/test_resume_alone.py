"""`kmc check --resume RUN_DIR` needs only the run folder (its options are in
its manifest, as TLC's -recover); a resume that differs names the options;
a Ctrl-C before the first kept level keeps the newest finished one."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from checker.front.cli import STOP_AFTER_ENV

ROOT = Path(__file__).resolve().parents[2]
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
KIP966 = ROOT / "specs" / "kraft-kip966-reference.toml"
KMC = [sys.executable, "-m", "checker.front.cli"]


def kmc(*args, env=None, cwd=None):
    return subprocess.run(KMC + [str(a) for a in args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, cwd=cwd or ROOT)


def the_run(out: Path) -> Path:
    (run,) = [p for p in out.glob("*/*") if p.is_dir()]
    return run


def test_resume_with_the_run_folder_alone(tmp_path):
    args = ["--set", "RMCount=4", "--depth", "none", "--deadlock", "--engine", "local"]
    plain = kmc("check", TWOPHASE, *args, "--out", tmp_path / "plain", "-q", "--json")
    out = tmp_path / "ck"
    r = kmc("check", TWOPHASE, *args, "--checkpoint", "--out", out, "-q", env={STOP_AFTER_ENV: "3"})
    assert r.returncode == 130, r.stderr
    run = the_run(out)
    assert f"go on with: kmc check --resume {run}" in r.stderr
    options = json.loads((run / "levels" / "checkpoint.json").read_text())["options"]
    assert options["sets"] == ["RMCount=4"] and options["depth"] is None and options["deadlock"] is True
    # settings other than the run's are named by their options, with both values
    cases = [(["--set", "RMCount=5"], "--set RMCount=4 in the run, 5 here"),
             (["--depth", "7"], "--depth none in the run, 7 here"),
             (["--no-deadlock"], "--deadlock in the run, --no-deadlock here"),
             (["--continue"], "--continue not given in the run, given here")]
    for extra, words in cases:
        bad = kmc("check", *extra, "--resume", run, "-q")
        assert bad.returncode == 2 and words in bad.stderr, (extra, bad.stderr)
        assert "max_depth" not in bad.stderr and "stop_on_violation" not in bad.stderr
    # from another folder, without the spec or any option: the run's own
    done = kmc("check", "--resume", run, "-q", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got, want = json.loads(done.stdout), json.loads(plain.stdout)
    assert got["distinct"] == want["distinct"] and got["per_level_distinct"] == want["per_level_distinct"]
    assert got["config"]["overrides"] == {"RMCount": 4} and got["config"]["check_deadlock"] is True


def test_no_spec_and_no_resume_is_one_line():
    r = kmc("check", "-q")
    assert r.returncode == 2 and r.stderr.startswith("kmc: error: missing argument SPEC")


def test_ctrl_c_before_the_first_kept_level_keeps_the_newest_finished_one(tmp_path, process_group):
    """A default run keeps its levels from one of 50,000 states; a ^C (to the
    process group, as a terminal sends it) before that keeps the newest
    finished level, and the run goes on from it to the uninterrupted answer."""
    args = ["--depth", "9", "--engine", "local"]
    out = tmp_path / "ck"
    p = process_group(KMC + ["check", str(KIP966), *args, "--out", str(out)], cwd=ROOT,
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stderr.readline().startswith("kmc: checking")
    time.sleep(3)   # (a few levels in: level 8, 35,735 states, is the last below 50,000)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 130, err
    run = the_run(out)
    assert f"go on with: kmc check --resume {run}" in err, err
    kept = json.loads((run / "levels" / "checkpoint.json").read_text())
    assert kept["options"]["depth"] == 9
    done = kmc("check", "--resume", run, "-q", "--json")
    assert done.returncode == 0, done.stderr
    plain = kmc("check", KIP966, *args, "--out", tmp_path / "plain", "-q", "--json")
    got, want = json.loads(done.stdout), json.loads(plain.stdout)
    assert got["per_level_distinct"] == want["per_level_distinct"]
    assert got["generated"] == want["generated"] and got["sometimes"] == want["sometimes"]
