"""A run's memory is its whole process tree's (checker/search/proc.py): the
PSS of every process below the run's summed, so a child's own pages count
and pages a forked child shares with its parent count once; --max-memory
watches the same figure, under the local and the auto engine (tests/spark:
the Spark engine, its JVM included)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from checker.search import proc
from checker.search.engine import CheckOptions, MemoryLimitError, check, format_size
from checker.search.registry import build

pytestmark = pytest.mark.skipif(not proc.HAVE_PROC, reason="needs /proc (Linux)")

MIB = 1 << 20
KRAFT = {"BrokerCount": 2, "InitReplicationFactor": 2, "Values": ["A"], "MinISR": 1, "InitIsrSize": 2,
         "NoDataLossShutdownLimit": 0, "DataLossShutdownLimit": 1, "FenceBrokerLimit": 0,
         "LeaderShrinkIsrLimit": 0, "ReassignmentLimit": 0}


def _child_holding(mib: int):
    """A child process that holds `mib` MiB of its own pages until killed."""
    code = f"import sys, time; b = bytearray({mib} << 20); b[::4096] = b'x' * len(b[::4096]); " \
           f"print('ready', flush=True); time.sleep(120)"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "ready"
    return child


def test_a_child_process_counts():
    meter = proc.TreeMemory()
    alone = meter.measure()
    child = _child_holding(120)
    try:
        with_child = proc.TreeMemory().measure()
        assert with_child - alone > 110 * MIB
        assert child.pid in proc.tree([os.getpid()])
    finally:
        child.kill()
        child.wait()


def test_pages_a_forked_child_shares_count_once():
    """PSS splits a page between its sharers: a forked child that only reads
    the parent's 150 MiB adds little to the tree's figure, while the resident
    sets would count them twice."""
    ballast = bytearray(150 << 20)
    ballast[::4096] = b"y" * len(ballast[::4096])
    alone = proc.pss(os.getpid())
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: touch nothing, say so, wait
        os.write(w, b"1")
        time.sleep(60)
        os._exit(0)
    try:
        os.read(r, 1)
        both = sum(proc.pss(p) for p in (os.getpid(), pid))   # (other children of the test's process aside)
        resident = sum(proc.rss(p) for p in (os.getpid(), pid))
        assert pid in proc.tree([os.getpid()])
        assert both - alone < 40 * MIB          # the shared 150 MiB: once
        assert resident - both > 120 * MIB      # what resident sets would have added
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(r)
        os.close(w)
    del ballast


def test_the_readers_of_the_machine():
    assert proc.machine_memory("MemTotal") > proc.machine_memory("MemAvailable") > 0
    assert proc.own_status("VmSize") >= proc.own_status("VmRSS") > 0
    idle, total = proc.cpu_idle()
    assert 0 <= idle <= total


def test_a_local_run_reports_its_figure():
    model, props = build("kraft", "kip966", KRAFT)
    r = check(model, props, CheckOptions(max_depth=10))
    assert r.memory["processes"] >= 1 and "PSS" in r.memory["method"]
    assert r.bytes_per_state == r.peak_memory_kb * 1024 // r.distinct > 0
    assert r.statistics()["memory"] == r.memory


def _ballast_in_workers(monkeypatch, mib: int) -> None:
    """Each forked worker of the auto engine takes `mib` MiB of its own on
    its first chunk (the parent never does); chunks are small, so that both
    workers have some from the small levels on."""
    from checker.search import parallel
    monkeypatch.setattr(parallel, "CHUNK_STATES", 64)
    real = parallel.expand_one
    held: list = []

    def expand(ctx, chunk, seen):
        if not held:
            b = bytearray(mib << 20)
            b[::4096] = b"z" * len(b[::4096])
            held.append(b)
        return real(ctx, chunk, seen)

    monkeypatch.setattr(parallel, "expand_one", expand)


def test_the_auto_engine_counts_its_workers(monkeypatch):
    from checker.search.parallel import check_auto
    _ballast_in_workers(monkeypatch, 100)
    model, props = build("kraft", "kip966", KRAFT)
    result = check_auto(model, props, CheckOptions(max_depth=12), threshold=1, workers=2)
    info = result.engine   # where each level ran
    assert "pool" in info["levels"]
    assert result.memory["most_processes"] >= 3
    assert result.peak_memory_kb * 1024 > proc.TreeMemory().measure() + 150 * MIB


def test_max_memory_stops_an_auto_run_whose_workers_pass_it(monkeypatch):
    """The limit sits above what the parent process ever holds here, below
    what the parent and its two workers hold together: the run stops, in one
    line naming the processes (before this figure, it finished)."""
    from checker.search.parallel import check_auto
    _ballast_in_workers(monkeypatch, 150)
    model, props = build("kraft", "kip966", KRAFT)
    limit = proc.TreeMemory().measure() + 200 * MIB
    with pytest.raises(MemoryLimitError) as stopped:
        check_auto(model, props, CheckOptions(max_depth=12, max_memory=limit), threshold=1, workers=2)
    text = stopped.value.one_line()
    assert text.startswith(f"memory limit {format_size(limit)} reached at level ")
    held = re.search(r"the run's (\d+) processes hold", text)
    assert held and int(held.group(1)) >= 2 and stopped.value.exit_code == 2   # the parent and a worker, at least
    # the same limit lets the local engine, one process, finish
    check(model, props, CheckOptions(max_depth=12, max_memory=limit))


def test_a_delegated_measurement_reads_the_tree_here_only_when_long_due():
    """Where the processes measure themselves (the auto engine's workers, at
    each level's end), a due poll reads the tree here only once the interval
    has passed; the upper bound they said stands in for their resident sets,
    and one past the limit measures at once."""
    m = proc.TreeMemory(limit=None, min_interval=0.0, share=0.0)   # (always due)
    m.measure()
    first = m.stamp
    m.delegate(lambda: 0, interval=3600.0)
    m.poll()
    assert m.stamp == first               # due, but within the interval
    m.delegate(None)
    m.poll()
    assert m.stamp > first                # undone: due is due
    now = m.measure()
    limited = proc.TreeMemory(limit=now + 1024 * MIB, min_interval=3600.0, upper_interval=0.0)
    limited.measure()
    stamp = limited.stamp
    limited.delegate(lambda: 0, interval=3600.0)
    limited.poll()
    assert limited.stamp == stamp         # the said resident sets are under the limit
    limited.delegate(lambda: now + 2048 * MIB, interval=3600.0)
    limited.poll()
    assert limited.stamp > stamp          # past it: measured here at once
