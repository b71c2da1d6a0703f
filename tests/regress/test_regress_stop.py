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
def test_a_stopped_set_stops_its_workers_at_once(long_specs, how, code, line, process_group):
    proc = process_group([sys.executable, "-m", "checker.front.cli", "regress", str(long_specs), "-j", "2"],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
        pytest.fail("the set ran on after the stop")   # (process_group kills it)
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


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_rows_show_as_specs_finish_and_a_stop_writes_the_junit_of_those(long_specs, tmp_path, jobs,
                                                                         process_group):
    """A quick spec after a long one (path order): with -j 2 its row shows
    while the long one runs; a ^C then still writes the JUnit report, the
    finished spec's case as it ended, the others skipped."""
    (long_specs / "c.toml").unlink()
    (long_specs / "d.toml").unlink()
    (long_specs / "b.toml").write_text((SPECS / "toy-diehard.toml").read_text())
    if jobs == "1":   # (serially the quick one runs first)
        (long_specs / "b.toml").rename(long_specs / "0.toml")
    junit = tmp_path / "regress.xml"
    proc = process_group([sys.executable, "-m", "checker.front.cli", "regress", str(long_specs), "-j", jobs,
                          "--junit", str(junit)],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.split()[-1:] == ["OK"]:   # the quick spec's row, the long one still running
            break
    time.sleep(1)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=90)
    out = "".join(seen) + out
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["kmc: interrupted"], err
    assert "interrupted: 1 of 2 specs finished" in out and f"JUnit report: {junit}" in out
    xml = junit.read_text()
    assert 'tests="2"' in xml and 'skipped="1"' in xml and 'failures="0"' in xml
    assert xml.count("<skipped") == 1 and "not run: interrupted" in xml
    assert ("0.toml" in xml or "b.toml" in xml) and "a.toml" in xml
