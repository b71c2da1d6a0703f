"""`kmc regress -j 2` stopped by SIGTERM (a CI timeout, a batch scheduler) or
by a terminal's ^C (SIGINT to the whole process group): the checks running in
the workers stop at once and the queued specs never start, rather than the
set running on to its end; one line on stderr, no traceback, no worker left."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


@pytest.fixture
def long_specs(tmp_path) -> Path:
    """Four specs of minutes each (the KIP-966 reference to depth 12: 1.4M states)."""
    d = tmp_path / "specs"
    d.mkdir()
    text = (SPECS / "kraft-kip966-reference.toml").read_text().replace("depth = 11", "depth = 12")
    assert "depth = 12" in text
    for name in "abcd":
        (d / f"{name}.toml").write_text(text)
    return d


@pytest.mark.parametrize("how, code, line", [("SIGTERM", 143, "kmc: terminated (SIGTERM)"),
                                             ("^C", 130, "kmc: interrupted")])
def test_a_stopped_set_stops_its_workers_at_once(long_specs, how, code, line):
    proc = subprocess.Popen([sys.executable, "-m", "checker.front.cli", "regress", str(long_specs), "-j", "2"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    workers = []
    deadline = time.time() + 60
    while len(workers) < 2 and time.time() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        time.sleep(0.05)
    assert len(workers) == 2, proc.communicate()
    time.sleep(3)   # both checks under way
    if how == "SIGTERM":
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)   # a terminal's ^C: the parent and its workers
    try:
        out, err = proc.communicate(timeout=90)   # (the whole set would take 10 minutes or more)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("the set ran on after the stop")
    assert proc.returncode == code, err
    assert err.strip().splitlines() == [line], err
    assert " OK" not in out and "ERROR" not in out, out   # no spec ran to its end, none shown as a crash
    assert not any(_alive(w) for w in workers)


def _children(pid: int) -> list[int]:
    try:
        return [int(k) for k in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
