"""bench/scaling.py runs from the source tree: one core against two on a
few hundred states (the pool from a frontier of 10), the same counts, the
table and the 2-worker ratios printed; a bad workload is one line, exit 2."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "scaling.py"


def test_one_and_two_workers(tmp_path):
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("one core")
    out = tmp_path / "s.json"
    r = subprocess.run([sys.executable, str(SCRIPT), "--workloads", "tiny", "--workers", "1,2", "--json", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600,
                       env={**os.environ, "KMC_AUTO_THRESHOLD": "10"})
    assert r.returncode == 0, r.stderr
    runs = json.loads(out.read_text())["runs"]
    assert [(x["tool"], x["workers"]) for x in runs] == [("kmc", 1), ("kmc", 2)]
    assert all(x["same_counts"] and x["counts"]["distinct"] == 367 for x in runs)
    assert runs[1]["handover_level"] is not None and 0 < runs[1]["coordinator_share"] < 1
    assert "tiny: wall local/auto" in r.stdout and "load average after" in r.stdout


def test_bad_workload_is_one_line():
    r = subprocess.run([sys.executable, str(SCRIPT), "--workloads", "nope"], capture_output=True, text=True,
                       cwd=ROOT, timeout=60)
    assert r.returncode == 2 and r.stderr.strip() == ("scaling.py: error: unknown workload(s) nope (known: "
                                                      "b3s1, q-h2-disrupt, reference-d13, tiny)")


def test_rounds_run_every_count_in_turn_and_pair_the_speedups():
    sys.path.insert(0, str(ROOT / "bench"))
    import scaling
    walls = {(0, 1): 10.0, (0, 2): 5.0, (1, 1): 20.0, (1, 2): 10.0, (2, 1): 12.0, (2, 2): 7.0}
    order = []

    def run(n):
        r = sum(1 for m in order if m == n)   # this count's round
        order.append(n)
        return {"wall_s": walls[(r, n)], "round": r}
    out = scaling.rounds(run, [1, 2], 3)
    assert order == [1, 2, 1, 2, 1, 2]
    # the median of the rounds' ratios (2, 2, 12/7), not 12 / 7 (the medians' ratio: a slow round
    # of one count against a fast one of the other)
    assert out[2]["speedup"] == 2.0 and out[2]["round"] == 2
    assert out[1]["speedup"] == 1.0 and out[1]["wall_s"] == 12.0


def test_a_run_that_prints_no_summary_is_one_line_naming_its_error(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "bench"))
    import scaling
    said = ("Traceback (most recent call last):\nModuleNotFoundError: No module named 'xxhash'\n"
            'SCALING-CPU {"self": 0.2, "children": 0.0}\n')
    monkeypatch.setattr(scaling.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a, 1, stdout="", stderr=said))
    with pytest.raises(scaling.Fail, match=r"^kmc check \(tiny, 1 workers\) exited 1: "
                                           r"ModuleNotFoundError: No module named 'xxhash'$"):
        scaling.run_kmc("tiny", 1, [0], tmp_path)
