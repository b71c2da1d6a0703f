"""A local run with --checkpoint keeps every finished level (RUN_DIR/levels/,
checker/search/checkpoint.py); stopped after any level, by the test hook,
by --max-memory or by Ctrl-C in the middle of a level, `--resume RUN_DIR`
ends with exactly the counts, witnesses and shortest counterexamples of a
run that was never interrupted. Bad resumes are one line and exit 2. So is
a disk too small for the run (--min-free-disk, or full in the middle of a
write), and the run resumes once there is room."""
from __future__ import annotations

import errno
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
from checker.search import checkpoint

ROOT = Path(__file__).resolve().parents[2]
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
DIEHARD = ROOT / "specs" / "toy-diehard.toml"
KIP966 = ROOT / "specs" / "kraft-kip966-reference.toml"
# TLC's distinct states of that configuration within N steps (its runs: tests/conformance/data)
TLC_WITHIN = {r["depth"]: r["distinct"] for r in json.loads(
    (ROOT / "tests" / "conformance" / "data" / "kraft-tlc-totals.json").read_text())
    if r["name"].startswith("kip966-reference-d")}
SAME = ("outcome", "violated", "distinct", "generated", "depth", "per_level_distinct",
        "per_action_generated", "per_action_distinct", "sometimes", "states_left")


def kmc(*args, env: dict | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def summary_of(result) -> dict:
    return json.loads(result.stdout.strip().splitlines()[-1])


def the_run(out: Path) -> Path:
    (run,) = [p for p in (out).glob("*/*") if p.is_dir()]
    return run


_PLAIN: dict = {}


def plain_summary(tmp_path: Path, spec: Path, args: list) -> dict:
    """The summary of an uninterrupted run, with nothing saved (a stop-after
    hook then has nothing to stop after), once per spec and arguments for
    the module (a KIP-966 run at depth 10 takes a quarter of a minute). The
    auto engine's has two workers whatever the machine's load (the
    hand-over is not left to the idle meter)."""
    key = (spec, tuple(args))
    if key not in _PLAIN:
        workers = {"KMC_AUTO_WORKERS": "2"} if "auto" in args else {}
        r = kmc("check", spec, *args, "--no-checkpoint", "--out", tmp_path / "plain", "--json", "-q",
                env={**workers, STOP_AFTER_ENV: "3"})
        assert r.exit_code == 0, r.stderr
        _PLAIN[key] = summary_of(r)
    return _PLAIN[key]


def traces_of(run: Path) -> dict:
    return {p.name: [(s["action"], s["encoded"]) for s in json.loads(p.read_text())["steps"]]
            for p in run.glob("trace-*.json") if not p.name.endswith(".itf.json")}


@pytest.mark.parametrize("spec,sets,stops", [
    (TWOPHASE, ["--set", "RMCount=5"], [0]),
    (TWOPHASE, ["--set", "RMCount=5"], [4, 9]),      # stopped twice, resumed twice
    (TWOPHASE, ["--set", "RMCount=5"], [15]),        # the last level that has successors
    (DIEHARD, [], [3]),                               # a violation after the resume
    (DIEHARD, ["--continue", "--deadlock"], [2]),     # every violation, deadlocks too
])
def test_stopped_runs_resume_to_the_same_answers(tmp_path, spec, sets, stops):
    plain = kmc("check", spec, *sets, "--engine", "local", "--out", tmp_path / "plain", "--json", "-q")
    assert plain.exit_code in (0, 1), plain.stderr
    out = tmp_path / "ck"
    r = kmc("check", spec, *sets, "--checkpoint", "--out", out, "-q", env={STOP_AFTER_ENV: str(stops[0])})
    assert r.exit_code == 130 and f"stopped after level {stops[0]}" in r.stderr
    run = the_run(out)
    assert f"--resume {run}" in r.stderr and not (run / "summary.json").exists()
    for stop in stops[1:]:
        r = kmc("check", spec, *sets, "--resume", run, "-q", env={STOP_AFTER_ENV: str(stop)})
        assert r.exit_code == 130 and f"stopped after level {stop}" in r.stderr
    done = kmc("check", spec, *sets, "--resume", run, "--json", "-q")
    assert done.exit_code == plain.exit_code, done.stderr
    a, b = summary_of(plain), summary_of(done)
    assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}
    assert b["results_dir"] == str(run) and not (run / "levels").exists()
    assert traces_of(the_run(tmp_path / "plain")) == traces_of(run)


@pytest.mark.parametrize("engine", ["local", "auto"])
def test_a_default_run_keeps_its_levels_from_a_level_of_50000_states(tmp_path, engine):
    """Without --checkpoint a run saves nothing until a finished level holds
    50,000 states (CHECKPOINT_FROM); it then writes every level so far, so a
    default `kmc check` stopped later (Ctrl-C, --max-memory, a crash) resumes
    to the uninterrupted answers. --no-checkpoint writes nothing."""
    from checker.front.cli import CHECKPOINT_FROM
    args = ["--depth", "10", "--engine", engine]   # auto: parallel from level 8 (15,080 states)
    # (two workers whatever the machine's load: the hand-over is not left to the idle meter)
    env = {"KMC_AUTO_WORKERS": "2"} if engine == "auto" else {}
    plain = plain_summary(tmp_path, KIP966, args)
    sizes = plain["per_level_distinct"]
    first = next(lv for lv, n in enumerate(sizes) if n >= CHECKPOINT_FROM)
    assert first == 9 and sizes[8] < CHECKPOINT_FROM   # 80,537 states after 35,735
    out = tmp_path / "ck"
    r = kmc("check", KIP966, *args, "--out", out, "-q", env={**env, STOP_AFTER_ENV: "3"})
    assert r.exit_code == 130 and "stopped after level 9" in r.stderr, r.stderr
    run = the_run(out)
    manifest = json.loads((run / "levels" / "checkpoint.json").read_text())
    assert manifest["level"] == 9 and len(manifest["logs"]) == 10
    done = kmc("check", KIP966, *args, "--resume", run, "--json", "-q", env=env)
    assert done.exit_code == 0, done.stderr
    a, b = plain, summary_of(done)
    assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}
    if engine == "auto":
        assert "pool" in a["auto"]["levels"][:10]   # the levels saved late were the workers'
    r = kmc("check", KIP966, *args, "--resume", run, "--no-checkpoint", "-q")
    assert r.exit_code == 2 and "drop --no-checkpoint" in r.stderr


AUTO = {"KMC_AUTO_THRESHOLD": "50", "KMC_AUTO_WORKERS": "2"}  # parallel from a frontier of 50


@pytest.mark.parametrize("resume_engine", ["auto", "local"])
def test_the_auto_engine_checkpoints_its_parallel_levels(tmp_path, resume_engine):
    """The default engine keeps its levels too: stopped after levels its
    forked workers expanded (the hand-over is at level 2 here), resumed by
    the auto engine (which hands over again) or the local one, the answers
    are an uninterrupted local run's."""
    sets = ["--set", "RMCount=5"]
    plain = kmc("check", TWOPHASE, *sets, "--engine", "local", "--out", tmp_path / "plain", "--json", "-q")
    out = tmp_path / "ck"
    r = kmc("check", TWOPHASE, *sets, "--checkpoint", "--out", out, "-q", "--json",
            env={**AUTO, STOP_AFTER_ENV: "6"})
    assert r.exit_code == 130 and "stopped after level 6" in r.stderr, r.stderr
    run = the_run(out)
    manifest = json.loads((run / "levels" / "checkpoint.json").read_text())
    assert manifest["level"] == 6 and manifest["frontier"]["states"] == summary_of(plain)["per_level_distinct"][6]
    r = kmc("check", TWOPHASE, *sets, "--resume", run, "-q", env={**AUTO, STOP_AFTER_ENV: "9"})
    assert r.exit_code == 130 and "stopped after level 9" in r.stderr, r.stderr
    done = kmc("check", TWOPHASE, *sets, "--resume", run, "--engine", resume_engine, "--json", "-q",
               env=AUTO)
    assert done.exit_code == 0, done.stderr
    a, b = summary_of(plain), summary_of(done)
    assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}
    assert b["config"]["engine"] == resume_engine
    if resume_engine == "auto":
        assert b["auto"]["handover_level"] is not None and "pool" in b["auto"]["levels"]


def test_a_pure_python_run_resumes_a_compiled_one(tmp_path):
    """The checkpoint is the same whichever hot path wrote it."""
    out = tmp_path / "ck"
    env = {**os.environ, STOP_AFTER_ENV: "5"}
    cmd = [sys.executable, "-m", "checker.front.cli", "check", str(TWOPHASE), "--set", "RMCount=4",
           "--checkpoint", "--out", str(out), "-q"]
    assert subprocess.run(cmd, env=env, capture_output=True, cwd=ROOT).returncode == 130
    env = {**os.environ, "KMC_NATIVE": "0"}
    env.pop(STOP_AFTER_ENV, None)
    p = subprocess.run([sys.executable, "-m", "checker.front.cli", "check", str(TWOPHASE), "--set",
                        "RMCount=4", "--resume", str(the_run(out)), "--json", "-q"],
                       env=env, capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])["distinct"] == 1568


def test_max_memory_stop_is_resumable(tmp_path):
    out = tmp_path / "ck"
    r = kmc("check", TWOPHASE, "--set", "RMCount=5", "--checkpoint", "--max-memory", "1M",
            "--out", out, "-q")
    assert r.exit_code == 2
    run = the_run(out)
    [error] = r.stderr.strip().splitlines()  # with -q, the one line: how to go on, with this run's folder
    assert error.startswith("kmc: error: memory limit 1 MiB reached") and error.endswith(f"--resume {run}")
    done = kmc("check", TWOPHASE, "--set", "RMCount=5", "--resume", run, "--json", "-q")
    assert done.exit_code == 0 and summary_of(done)["distinct"] == 8832


def test_ctrl_c_in_the_middle_of_a_level_keeps_the_last_finished_one(tmp_path, process_group):
    """SIGINT while level 8 or 9 of the KIP-966 reference runs: exit 130, the
    way to go on said, and the resumed run ends with TLC's count."""
    out = tmp_path / "ck"
    cmd = [sys.executable, "-m", "checker.front.cli", "check", str(KIP966), "--depth", "9",
           "--engine", "local", "--checkpoint", "--out", str(out), "-q"]
    proc = process_group(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    manifest = None
    while time.time() < deadline and proc.poll() is None:
        found = list(out.glob("*/*/levels/checkpoint.json"))
        if found and json.loads(found[0].read_text())["level"] >= 7:
            manifest = found[0]
            break
        time.sleep(0.05)
    assert manifest is not None, proc.communicate()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "kmc: interrupted" in err and "--resume" in err
    assert "Traceback" not in err
    run = manifest.parent.parent
    done = kmc("check", KIP966, "--depth", "9", "--resume", run, "--json", "-q")
    assert done.exit_code == 0, done.stderr
    assert summary_of(done)["distinct"] == TLC_WITHIN[9]  # 140,524


def test_sigterm_stops_like_ctrl_c_and_keeps_the_levels(tmp_path, process_group):
    """kill (SIGTERM: a batch scheduler, a CI timeout) in the middle of a
    level the auto engine's forked workers expand, in a default run (levels
    kept from level 9, the first of 50,000 states): exit 143, the way to go
    on said, no worker left behind, and the resumed run ends with TLC's count."""
    out = tmp_path / "ck"
    cmd = [sys.executable, "-m", "checker.front.cli", "check", str(KIP966), "--depth", "10",
           "--out", str(out), "-q"]
    proc = process_group(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "KMC_AUTO_WORKERS": "2"})
    deadline = time.time() + 120
    manifest = None
    while time.time() < deadline and proc.poll() is None:
        found = list(out.glob("*/*/levels/checkpoint.json"))
        if found:
            manifest = found[0]
            break
        time.sleep(0.02)
    assert manifest is not None, proc.communicate()
    children = _children(proc.pid)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "kmc: terminated (SIGTERM)" in err and "--resume" in err, err
    assert "Traceback" not in err
    assert children and not any(Path(f"/proc/{c}").exists() and _alive(c) for c in children)
    assert json.loads(manifest.read_text())["level"] == 9
    done = kmc("check", KIP966, "--depth", "10", "--resume", manifest.parent.parent, "--json", "-q")
    assert done.exit_code == 0, done.stderr
    assert summary_of(done)["distinct"] == TLC_WITHIN[10]  # 314,578


def _children(pid: int) -> list[int]:
    """The forked workers of process pid (Linux /proc), waiting a moment for them."""
    for _ in range(200):
        try:
            kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            return []
        if kids:
            return [int(k) for k in kids]
        time.sleep(0.01)
    return []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_bad_resumes_are_one_line(tmp_path):
    out = tmp_path / "ck"
    kmc("check", TWOPHASE, "--set", "RMCount=4", "--checkpoint", "--out", out, "-q",
        env={STOP_AFTER_ENV: "3"})
    run = the_run(out)
    spark_like = tmp_path / "spark-run"
    spark_like.mkdir()
    (spark_like / "run.json").write_text("{}")
    cases = [
        (["--set", "RMCount=5", "--resume", run], "--set RMCount=4 in the run, 5 here"),
        (["--set", "RMCount=4", "--depth", "5", "--resume", run], "--depth none in the run, 5 here"),
        (["--set", "RMCount=4", "-i", "TCConsistent", "--resume", run],
         "--invariant (the invariants): [\"TPTypeOK\", \"TCConsistent\", \"AllCommitted\"] in "
         "the run, [\"TCConsistent\", \"AllCommitted\"] here"),
        (["--resume", tmp_path], "is not a run folder with levels to resume from"),
        (["--engine", "local", "--resume", spark_like], "is a spark run: resume it with --engine spark"),
        (["--checkpoint", "--engine", "spark"], "--checkpoint is the local and auto engines'"),
    ]
    for args, words in cases:
        r = kmc("check", TWOPHASE, *args, "-q")
        assert r.exit_code == 2, (args, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert lines[-1].startswith("kmc: error:") and words in lines[-1], (args, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "levels").exists()  # a refused resume leaves nothing behind
    (run / "levels" / json.loads((run / "levels" / "checkpoint.json").read_text())["state"]).unlink()
    r = kmc("check", TWOPHASE, "--set", "RMCount=4", "--resume", run, "-q")
    assert r.exit_code == 2 and "is missing (a damaged run folder)" in r.stderr
    done = kmc("check", TWOPHASE, "--set", "RMCount=4", "--out", tmp_path / "fin", "-q", "--checkpoint")
    assert done.exit_code == 0
    r = kmc("check", TWOPHASE, "--set", "RMCount=4", "--resume", the_run(tmp_path / "fin"), "-q")
    assert r.exit_code == 2 and "is a finished run" in r.stderr


@pytest.mark.parametrize("name,damage", [
    ("frontier", "truncate"), ("frontier", "flip"), ("state", "flip"),
    ("level-00002.fps", "flip"), ("level-00001.parents", "truncate"), ("level-00003.actions", "flip"),
    ("checkpoint.json", "a list"),
])
def test_a_damaged_checkpoint_is_refused_in_one_line(tmp_path, name, damage):
    """Every file the manifest names is checked against the size and xxh3
    digest written with it: a truncated or altered file (a full disk, a bad
    copy) stops the resume with one line naming it, instead of a traceback
    or, worse, a resumed search over wrong fingerprints or states."""
    out = tmp_path / "ck"
    kmc("check", TWOPHASE, "--set", "RMCount=4", "--checkpoint", "--out", out, "-q",
        env={STOP_AFTER_ENV: "3"})
    levels = the_run(out) / "levels"
    manifest = json.loads((levels / "checkpoint.json").read_text())
    target = levels / {"frontier": manifest["frontier"]["file"], "state": manifest["state"]}.get(name, name)
    data = target.read_bytes()
    if damage == "truncate":
        target.write_bytes(data[:len(data) // 2])
    elif damage == "flip":
        target.write_bytes(bytes([data[0] ^ 1]) + data[1:])
    else:
        target.write_text("[1]")
    r = kmc("check", TWOPHASE, "--set", "RMCount=4", "--resume", levels.parent, "-q")
    assert r.exit_code == 2, (r.stderr, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    lines = r.stderr.strip().splitlines()
    assert lines[-1].startswith("kmc: error:") and "Traceback" not in r.stderr, r.stderr
    assert (target.name in lines[-1] and "damaged" in lines[-1]) or "not a checkpoint manifest" in lines[-1]


def test_a_killed_runs_spill_folder_goes_on_resume(tmp_path):
    """SIGTERM or a crash skips the clean-up: the resume removes the dead
    run's spill folder (its unfinished level) from the levels folder."""
    out = tmp_path / "ck"
    kmc("check", TWOPHASE, "--set", "RMCount=4", "--checkpoint", "--out", out, "-q",
        env={STOP_AFTER_ENV: "3"})
    run = the_run(out)
    stale = run / "levels" / "kmc-search-dead"
    stale.mkdir()
    (stale / "frontier-1").write_bytes(b"half a level")
    r = kmc("check", TWOPHASE, "--set", "RMCount=4", "--resume", run, "-q", env={STOP_AFTER_ENV: "5"})
    assert r.exit_code == 130 and not stale.exists() and (run / "levels" / "checkpoint.json").is_file()


# ---- a disk too small: --min-free-disk, and a disk full in the middle of a write ----
#
# A run that would fill its disk stops first (exit 2) with its finished
# levels kept; a disk that fills anyway (ENOSPC mid-write) is one `kmc:
# error:` line, not a traceback; either way --resume, once there is room,
# ends with the answers of a run that never stopped. The small disk is
# simulated: shutil.disk_usage answers as a disk of `capacity` bytes holding
# only the test's files.
def small_disk(monkeypatch, root: Path, capacity: int) -> None:
    real = shutil.disk_usage

    def usage(path):
        used = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        total = real(path).total
        return type(real(path))(total, used, max(0, capacity - used))
    monkeypatch.setattr(shutil, "disk_usage", usage)


@pytest.mark.parametrize("spec,args,capacity", [
    (TWOPHASE, ["--set", "RMCount=5", "--engine", "local"], 96 << 10),
    (KIP966, ["--depth", "10", "--engine", "auto"], 6 << 20),   # saved level 8, then parallel
])
def test_a_small_disk_stops_the_run_before_it_is_full(tmp_path, monkeypatch, spec, args, capacity):
    plain = plain_summary(tmp_path, spec, args)
    out = tmp_path / "ck"
    with monkeypatch.context() as m:
        small_disk(m, tmp_path, capacity)
        r = kmc("check", spec, *args, "--checkpoint", "--min-free-disk", "16K", "--out", out, "-q")
    assert r.exit_code == 2, r.stderr
    [error] = r.stderr.strip().splitlines()  # with -q, the one line
    assert error.startswith("kmc: error: disk limit reached at level ") and "--min-free-disk" in error
    assert "would take about" in error   # stopped between levels, on the next level's estimate
    run = the_run(out)
    assert error.endswith(f"go on with: kmc check --resume {run}")
    done = kmc("check", spec, *args, "--resume", run, "--json", "-q")
    assert done.exit_code == 0, done.stderr
    a, b = plain, summary_of(done)
    assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}


def test_a_disk_full_in_the_middle_of_a_write_is_one_line_and_resumable(tmp_path, monkeypatch):
    plain = kmc("check", TWOPHASE, "--set", "RMCount=5", "--engine", "local", "--no-checkpoint",
                "--out", tmp_path / "plain", "--json", "-q")
    real, calls = checkpoint._write_bytes, []

    def write_bytes(path, data):
        calls.append(path)
        if len(calls) == 13:   # level 6's counters: half-way through the levels
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)
    out = tmp_path / "ck"
    with monkeypatch.context() as m:
        m.setattr(checkpoint, "_write_bytes", write_bytes)
        r = kmc("check", TWOPHASE, "--set", "RMCount=5", "--engine", "local", "--checkpoint",
                "--out", out, "-q")
    assert r.exit_code == 2 and "Traceback" not in r.stderr, r.stderr
    run = the_run(out)
    lines = r.stderr.strip().splitlines()
    assert lines[-1] == (f"kmc: error: no space left on the disk of {run.parent}: free space there, "
                         f"then resume (above) (--min-free-disk stops a run before the disk is full)")
    assert f"--resume {run}" in lines[-2]
    assert not [p for p in (run / "levels").iterdir() if p.name.endswith(".tmp")]  # no partial file
    done = kmc("check", TWOPHASE, "--set", "RMCount=5", "--resume", run, "--json", "-q")
    assert done.exit_code == 0, done.stderr
    a, b = summary_of(plain), summary_of(done)
    assert {k: a[k] for k in SAME} == {k: b[k] for k in SAME}


def test_a_small_run_on_a_full_disk_writes_nothing_and_is_not_stopped(tmp_path, monkeypatch):
    """The guard looks only at a disk the run writes to: a check that keeps
    nothing on disk (the local engine below 50,000 states a level; the auto
    engine's workers, from 250, write their levels' logs) finishes on a
    full disk."""
    small_disk(monkeypatch, tmp_path, 0)
    r = kmc("check", TWOPHASE, "--set", "RMCount=4", "--engine", "local", "--out", tmp_path / "out",
            "--json", "-q")
    assert r.exit_code == 0, r.stderr
    assert summary_of(r)["distinct"] == 1568


def test_the_default_reserve_is_128_mib(tmp_path, monkeypatch):
    small_disk(monkeypatch, tmp_path, 120 << 20)
    r = kmc("check", TWOPHASE, "--set", "RMCount=5", "--checkpoint", "--out", tmp_path / "ck", "-q")
    assert r.exit_code == 2, r.stderr
    error = r.stderr.strip().splitlines()[-1]
    assert error.startswith("kmc: error: disk limit reached at level 0 ") and "kmc keeps 128 MiB free" in error
