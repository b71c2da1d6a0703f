"""`kmc check SPEC --resume RUN_DIR` on a run folder it cannot use is one
line `kmc: error: ...` and exit 2, never a traceback: a damaged or
hand-edited levels/checkpoint.json (checker/search/checkpoint.py checks
its every field when it loads it), or a folder another kmc run is writing
(each run holds an exclusive flock on levels/kmc.lock while it writes
there; the OS drops it when the run dies, SIGKILL included)."""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import STOP_AFTER_ENV, cli
from checker.search import checkpoint

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "specs" / "kraft-kip966-quick.toml"
KIP966 = ROOT / "specs" / "kraft-kip966-reference.toml"


def kmc(*args, env: dict | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def kmc_process(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "checker.front.cli", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})})


def the_run(out: Path) -> Path:
    (run,) = [p for p in out.glob("*/*") if p.is_dir()]
    return run


def one_error_line(err: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("kmc: error: "), err
    return lines[0]


# ---- a damaged checkpoint.json ----

def _set(key, value):
    def damage(o):
        o[key] = value
    return damage


def _frontier(key, value):
    def damage(o):
        o["frontier"][key] = value
    return damage


def _logs_cut(n):
    def damage(o):
        o["logs"] = o["logs"][:n]
    return damage


def _consistent_lie(o):
    """level 3 with the logs of levels 0-3 only: the counters and the
    frontier are level 10's."""
    o["level"] = 3
    o["logs"] = o["logs"][:4]
    o["per_level_distinct"] = o["per_level_distinct"][:4]


def _log_entry(value):
    def damage(o):
        o["logs"][2] = value
    return damage


def _digest_of_state(value):
    def damage(o):
        o["digests"][o["state"]] = value
    return damage


DAMAGES = {
    "logs cut to 3": _logs_cut(3),
    "logs empty": _set("logs", []),
    "logs not a list": _set("logs", {"0": {}}),
    "level a string": _set("level", "10"),
    "level past the logs": _set("level", 99),
    "level before the logs": _set("level", 3),
    "level negative": _set("level", -1),
    "level a boolean": _set("level", True),
    "level missing": lambda o: o.pop("level"),
    "level 3 with its logs, counters of 10": _consistent_lie,
    "frontier without its file": _set("frontier", {"records": "x"}),
    "frontier not an object": _set("frontier", "frontier-00010.bin"),
    "frontier records a string": _frontier("records", "x"),
    "frontier records too many": _frontier("records", 99),
    "frontier states wrong": _frontier("states", 5),
    "frontier file outside the folder": _frontier("file", "/etc/passwd"),
    "a log entry not an object": _log_entry(7),
    "a log naming another folder": _log_entry({"fps": "../x", "parents": "p", "actions": "a"}),
    "a log missing an array": _log_entry({"fps": "level-00002.fps"}),
    "state missing": lambda o: o.pop("state"),
    "digests a list": _set("digests", []),
    "a digest not [size, digest]": _digest_of_state("x"),
    "per_level_distinct short": _set("per_level_distinct", [1]),
    "not an object": None,
}


@pytest.fixture(scope="module")
def stopped_quick(tmp_path_factory):
    """The quick KIP-966 spec stopped after level 10 (a resumable run
    folder), and the summary of its uninterrupted run."""
    tmp = tmp_path_factory.mktemp("quick")
    plain = kmc("check", QUICK, "--no-checkpoint", "--out", tmp / "plain", "--json", "-q")
    assert plain.exit_code == 0, plain.stderr
    r = kmc("check", QUICK, "--checkpoint", "--out", tmp / "cp", "-q", env={STOP_AFTER_ENV: "10"})
    assert r.exit_code == 130, r.stderr
    return the_run(tmp / "cp"), json.loads(plain.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", list(DAMAGES))
def test_a_damaged_manifest_is_one_line_and_exit_2(tmp_path, stopped_quick, name):
    run, _ = stopped_quick
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    manifest = copy / "levels" / checkpoint.MANIFEST
    if DAMAGES[name] is None:
        manifest.write_text("[1, 2, 3]\n")
    else:
        obj = json.loads(manifest.read_text())
        DAMAGES[name](obj)
        manifest.write_text(json.dumps(obj))
    p = kmc_process("check", QUICK, "--resume", copy, "-q")
    assert p.returncode == 2, (p.stdout, p.stderr)
    line = one_error_line(p.stderr)
    assert str(manifest) in line or str(copy) in line, line


def test_the_undamaged_copy_resumes_to_the_uninterrupted_runs_answers(tmp_path, stopped_quick):
    run, plain = stopped_quick
    copy = tmp_path / run.name
    shutil.copytree(run, copy)
    r = kmc("check", QUICK, "--resume", copy, "--json", "-q")
    assert r.exit_code == 0, r.stderr
    done = json.loads(r.stdout.strip().splitlines()[-1])
    for key in ("outcome", "distinct", "generated", "depth", "per_level_distinct"):
        assert done[key] == plain[key], key


# ---- one run at a time in a run folder ----

def _expected_depth_11() -> int:
    spec = tomllib.loads(KIP966.read_text())
    assert spec["depth"] == 11
    return spec["expect"]["distinct"]


def _stopped_reference(tmp_path: Path, depth: int) -> Path:
    r = kmc("check", KIP966, "--depth", depth, "--engine", "local", "--checkpoint", "--out",
            tmp_path / "ck", "-q", env={STOP_AFTER_ENV: "5"})
    assert r.exit_code == 130, r.stderr
    return the_run(tmp_path / "ck")


def _holding(run: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    """Wait until `proc` holds the run folder's lock (its pid in the lock file)."""
    lock = run / "levels" / checkpoint.LOCK
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            if lock.read_text().strip() == str(proc.pid):
                return
        except FileNotFoundError:
            pass
        time.sleep(0.02)
    raise AssertionError(f"the run never took the lock: {proc.communicate()}")


def _resume_cmd(run: Path, depth: int) -> list:
    return [sys.executable, "-m", "checker.front.cli", "check", str(KIP966), "--depth", str(depth),
            "--engine", "local", "--resume", str(run), "--json", "-q"]


def test_a_second_resume_of_a_folder_in_use_is_refused_and_the_first_goes_on(tmp_path):
    run = _stopped_reference(tmp_path, 11)
    first = subprocess.Popen(_resume_cmd(run, 11), cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        _holding(run, first)
        second = kmc_process("check", KIP966, "--depth", 11, "--engine", "local", "--resume", run, "-q")
        assert first.poll() is None, "the first resume ended before the second was tried"
        assert second.returncode == 2, (second.stdout, second.stderr)
        line = one_error_line(second.stderr)
        assert "in use by another kmc run" in line and f"pid {first.pid}" in line, line
        out, err = first.communicate(timeout=300)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == 0, err
    assert "Traceback" not in err
    assert json.loads(out.strip().splitlines()[-1])["distinct"] == _expected_depth_11()


def test_a_sigkilled_run_leaves_its_folder_resumable(tmp_path):
    """The lock goes with the process: SIGKILL (no clean-up at all) in the
    middle of a resume leaves the folder to the next resume, which ends
    with the answers of a run never interrupted."""
    depth = 9
    plain = kmc("check", KIP966, "--depth", depth, "--engine", "local", "--no-checkpoint", "--out",
                tmp_path / "plain", "--json", "-q")
    assert plain.exit_code == 0, plain.stderr
    run = _stopped_reference(tmp_path, depth)
    killed = subprocess.Popen(_resume_cmd(run, depth), cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        _holding(run, killed)
    finally:
        killed.kill()
        killed.communicate(timeout=60)
    assert killed.returncode == -signal.SIGKILL
    r = kmc_process(*_resume_cmd(run, depth)[3:])
    assert r.returncode == 0, r.stderr
    done, expected = json.loads(r.stdout.strip().splitlines()[-1]), json.loads(
        plain.stdout.strip().splitlines()[-1])
    for key in ("outcome", "distinct", "generated", "per_level_distinct"):
        assert done[key] == expected[key], key


def test_a_forked_child_neither_holds_nor_releases_the_lock(tmp_path):
    """The auto engine forks its workers from a run holding its folder:
    a child closes its copy of the lock (an at-fork hook), so a worker
    exiting leaves the run's lock held, and the lock never outlives the run
    in a worker."""
    folder = tmp_path / "levels"
    cp = checkpoint.Checkpoint(folder, {})
    cp.lock()
    try:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: its copy of the descriptor is closed
            try:
                os.write(w, b"closed" if cp._lock.fd is None else b"open")
            finally:
                os._exit(0)
        os.close(w)
        assert os.read(r, 16) == b"closed"
        os.close(r)
        os.waitpid(pid, 0)
        with open(folder / checkpoint.LOCK, "rb") as other:  # still held: the child's exit did nothing
            with pytest.raises(BlockingIOError):
                fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(checkpoint.FolderInUse, match=f"in use by another kmc run \\(pid {os.getpid()}\\)"):
            checkpoint.Checkpoint(folder, {}).lock()
    finally:
        cp.release()
    checkpoint.Checkpoint(folder, {}).lock()   # released: free again (and freed with its object)
