"""`kmc check` (engine auto by default): a small check stays one plain
local-engine process; a big one says where each level ran; a worker that
dies is one `kmc: error:` line (exit 3), never a hang; ^C leaves no results,
no temp folder and no worker behind, and the workers of a run killed
outright (SIGKILL) exit on their own."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUICK = "specs/kraft-kip966-quick.toml"     # 14,304 states, 39 levels, largest 978


def kmc(args, tmp_path, env=None, code=None, timeout=300):
    """kmc check in a fresh interpreter; `code` runs first (fault injection)."""
    full_env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), **(env or {})}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    prelude = (code or "") + "\nfrom checker.front.cli import main\nsys.argv = ['kmc'] + ARGS\nmain()\n"
    script = f"import sys\nARGS = {list(args)!r}\n" + prelude
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=ROOT, stdin=subprocess.DEVNULL)


def test_small_check_stays_one_process(tmp_path):
    """The default threshold (250 states): no fork, no Spark module, the
    local engine's answer; the summary says every level ran locally. (Its
    first 11 steps: levels of 1 to 238 states.)"""
    code = ("import os\n"
            "def _no(*a, **k): raise AssertionError('a small check forked')\n"
            "os.fork = _no\n"
            "import atexit\n"
            "atexit.register(lambda: print('SPARK' if any(m.startswith(('checker.search.spark.engine', 'pyspark'))"
            " for m in sys.modules) else 'NOSPARK', file=sys.stderr))\n")
    r = kmc(["check", QUICK, "--depth", "11", "--json", "-q", "--out", str(tmp_path / "res")], tmp_path, code=code)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["distinct"] == 922 and out["config"]["engine"] == "auto"
    assert max(out["per_level_distinct"]) == 238
    assert out["auto"]["handover_level"] is None and out["auto"]["workers"] == 1
    assert out["auto"]["levels"] == ["local"] * 12
    assert r.stderr.strip().endswith("NOSPARK")


def test_big_check_says_where_levels_ran(tmp_path):
    local = kmc(["check", QUICK, "--json", "-q", "--engine", "local", "--out", str(tmp_path / "res")], tmp_path)
    r = kmc(["check", QUICK, "--json", "--out", str(tmp_path / "res")], tmp_path,
            env={"KMC_AUTO_THRESHOLD": "300", "KMC_AUTO_WORKERS": "2"})
    assert r.returncode == 0 and local.returncode == 0, r.stderr
    out, ref = json.loads(r.stdout), json.loads(local.stdout)
    for f in ("distinct", "generated", "per_level_distinct", "per_action_generated", "per_action_distinct"):
        assert out[f] == ref[f]
    auto = out["auto"]
    L = auto["handover_level"]
    assert out["per_level_distinct"][L] >= 300 > out["per_level_distinct"][L - 1]
    assert auto["levels"] == ["local"] * (L + 1) + ["pool"] * (39 - L - 1) and auto["workers"] == 2
    assert "config" in out and out["config"]["engine"] == "auto" and ref["config"]["engine"] == "local"
    assert not list((tmp_path / "tmp").iterdir())   # nothing left in the temp folder


def test_violation_through_the_cli(tmp_path):
    spec = "specs/kraft-v3_5-last-replica-standing.toml"
    args = ["check", spec, "--json", "-q", "--out", str(tmp_path / "res")]
    local = kmc(args + ["--engine", "local"], tmp_path)
    r = kmc(args, tmp_path, env={"KMC_AUTO_THRESHOLD": "1000", "KMC_AUTO_WORKERS": "2"})
    assert r.returncode == local.returncode == 1, r.stderr
    out, ref = json.loads(r.stdout), json.loads(local.stdout)
    assert out["auto"]["handover_level"] is not None
    assert out["violations"][0]["actions"] == ref["violations"][0]["actions"]
    assert out["depth"] == ref["depth"] == 7 and out["per_level_distinct"] == ref["per_level_distinct"]


def test_bad_threshold_is_one_line(tmp_path):
    r = kmc(["check", QUICK, "-q", "--out", str(tmp_path / "res")], tmp_path, env={"KMC_AUTO_THRESHOLD": "many"})
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].startswith("kmc: error: KMC_AUTO_THRESHOLD")


def test_a_worker_that_dies_is_an_error_not_a_hang(tmp_path):
    code = ("import os, signal\n"
            "import checker.search.parallel as par\n"
            "_real = par.expand_one\n"
            "_calls = [0]\n"
            "def _dying(*args):\n"   # a worker's 3rd chunk (of the first level with that many) kills it
            "    _calls[0] += 1\n"
            "    if _calls[0] >= 3:\n"
            "        os.kill(os.getpid(), signal.SIGKILL)\n"
            "    return _real(*args)\n"
            "par.expand_one = _dying\n"
            "par.CHUNK_STATES = 64\n")
    r = kmc(["check", QUICK, "-q", "--out", str(tmp_path / "res")], tmp_path, code=code,
            env={"KMC_AUTO_THRESHOLD": "300", "KMC_AUTO_WORKERS": "2"}, timeout=120)
    assert r.returncode == 3, r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("kmc: error: worker process") and "died (killed by signal 9)" in last
    assert "Traceback" not in r.stderr
    assert not (tmp_path / "res").exists() or not any((tmp_path / "res").rglob("summary.json"))


def _children(pid: int) -> set:
    out = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out.update(int(c) for c in (task / "children").read_text().split())
        except OSError:
            pass
    return out


def _parallel_run(popen, tmp_path, args: list, **kw) -> tuple:
    """kmc check of the kip966 reference with `args` (popen: the process_group
    fixture), until its two forked workers run (and a moment more): (the
    process, the workers' pids)."""
    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp"), "KMC_AUTO_THRESHOLD": "300",
           "KMC_AUTO_WORKERS": "2"}
    p = popen([sys.executable, "-m", "checker.front.cli", "check",
               "specs/kraft-kip966-reference.toml", *args, "--out", str(tmp_path / "res")],
              cwd=ROOT, env=env, stdin=subprocess.DEVNULL, **kw)
    workers: set = set()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(workers) < 2:
        workers |= _children(p.pid)
        time.sleep(0.02)
    assert len(workers) >= 2, "the run did not go parallel"
    time.sleep(0.3)
    return p, workers


def _alive(pids) -> list:
    return [w for w in pids if Path(f"/proc/{w}").exists()
            and Path(f"/proc/{w}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_ctrl_c_leaves_nothing_behind(tmp_path, process_group):
    # the reference configuration to depth 10: several seconds on the workers
    p, workers = _parallel_run(process_group, tmp_path, ["--depth", "10"], text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "kmc: interrupted"
    assert not (tmp_path / "res").exists() or not any((tmp_path / "res").rglob("summary.json"))
    assert not list((tmp_path / "tmp").iterdir())
    time.sleep(0.2)
    alive = _alive(workers)
    assert not alive, f"workers left running: {alive}"


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc")
def test_workers_of_a_killed_run_go_too(tmp_path, process_group):
    """SIGKILL (the OOM killer, kill -9) gives the parent no chance to stop
    its workers: each then finds its result pipe without a reader and exits,
    rather than blocking on it forever (it holds no copy of the read end)."""
    p, workers = _parallel_run(process_group, tmp_path, ["--depth", "11", "--no-checkpoint", "-q"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.kill()
    p.wait(timeout=10)
    deadline = time.monotonic() + 30
    alive = _alive(workers)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = _alive(workers)
    for w in alive:
        os.kill(w, signal.SIGKILL)
    assert not alive, f"workers of the killed run left running: {alive}"


def test_workers_above_the_cores_are_capped(tmp_path):
    """--workers 1000 on a machine of fewer cores: one line says so, and the
    run has as many workers as cores."""
    from checker.search.parallel import cores
    r = kmc(["check", QUICK, "--workers", "1000", "--json", "-q", "--out", str(tmp_path / "res")], tmp_path,
            env={"KMC_AUTO_THRESHOLD": "300"})
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stderr.splitlines() if "--workers 1000" in line]
    assert lines == [f"kmc: --workers 1000 is more than the {cores()} cores this run may use: {cores()} workers"]
    out = json.loads(r.stdout)
    assert out["distinct"] == 14304 and out["auto"]["workers"] == min(cores(), 1000)
