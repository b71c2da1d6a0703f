"""^C to `kmc simulate`'s process group (as a terminal sends it): exit 130,
one line summing up the walks done, nothing written."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAFE = ROOT / "specs" / "simulate" / "kip966-storage-3b-minisr-minus-one-power-loss.toml"
KMC = [sys.executable, "-m", "checker.front.cli"]


def interrupt(popen, tmp_path: Path, *args: str, wait: str, after: float) -> tuple[int, str]:
    """Start kmc simulate in its own process group (popen: the process_group
    fixture, which kills it if the test fails), wait for a stderr line
    starting with `wait`, then `after` seconds, then SIGINT to the group."""
    p = popen(KMC + ["simulate", str(SAFE), "--walks", "100000000", "--out", str(tmp_path / "out"), *args],
              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = []
    for line in p.stderr:
        seen.append(line)
        if line.startswith(wait):
            break
    time.sleep(after)
    os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=300)
    return p.returncode, "".join(seen) + err


def check(code: int, err: str, tmp_path: Path) -> None:
    assert code == 130, err
    assert "Traceback" not in err and "Answer from Java side is empty" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("kmc: stopped after ")]
    assert " walks (" in line and "no property violated in them" in line
    assert int(line.split()[3].replace(",", "")) > 0   # some walks were done
    assert err.rstrip().endswith("kmc: interrupted")
    assert not list((tmp_path / "out").glob("*/*"))   # nothing written


def test_local(tmp_path, process_group):
    code, err = interrupt(process_group, tmp_path, "--engine", "local", wait="kmc: simulating", after=2)
    check(code, err, tmp_path)


def test_auto(tmp_path, process_group):
    # the default engine: a forked walker per core; the parent sums up the batches it took
    code, err = interrupt(process_group, tmp_path, wait="kmc: simulating", after=3)
    check(code, err, tmp_path)


def test_spark(tmp_path, process_group):
    pytest.importorskip("pyspark")
    # the executors' walks have begun: a progress line from Spark's waves
    code, err = interrupt(process_group, tmp_path, "--engine", "spark", "--master", "local[2]",
                          wait="kmc: simulate: ", after=1)
    check(code, err, tmp_path)
