"""bench/two_at_once.py: the local engine alone on each core and two copies at
once, on a tiny depth, and its bad input."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "two_at_once.py"

pytestmark = pytest.mark.skipif(not {0, 1} <= os.sched_getaffinity(0) or not shutil.which("taskset"),
                                reason="needs cores 0 and 1 and taskset")


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


def test_alone_and_both_at_once(tmp_path):
    out = tmp_path / "two.json"
    r = run("--depth", "4", "--rounds", "2", "--json", str(out))
    assert r.returncode == 0, r.stderr
    got = json.loads(out.read_text())
    assert got["identical"] and got["distinct"] == 999  # the kip966 reference within 4 steps
    assert [row["round"] for row in got["rounds"]] == [1, 2]
    for row in got["rounds"]:
        assert [x["core"] for x in row["alone"]] == [0, 1] and [x["core"] for x in row["both"]] == [0, 1]
        assert all(x["cpu_s"] > 0 and x["wall_s"] > 0 for x in row["alone"] + row["both"])
    cpu = [x["cpu_s"] for row in got["rounds"] for x in row["alone"]]
    assert got["alone_cpu_s"] == round(sum(cpu) / len(cpu), 2)
    # The ceiling is of the unrounded means; each printed mean is off by at most 0.005 s.
    a, b = got["alone_cpu_s"], got["both_cpu_s"]
    assert 2 * (a - 0.005) / (b + 0.005) - 0.001 <= got["ceiling"] <= 2 * (a + 0.005) / (b - 0.005) + 0.001
    assert "round 1 (alone then both)" in r.stdout and "round 2 (both then alone)" in r.stdout
    assert "ceiling of any two-core split of this work against the local engine" in r.stdout


@pytest.mark.parametrize("args, message", [
    (["--rounds", "0"], "--rounds must be at least 1"),
    (["--spec", "/nonexistent/kmc-spec.toml"], "no spec file /nonexistent/kmc-spec.toml"),
    (["--depth", "-1", "--rounds", "1"], "kmc check on core 0 exited 2: kmc: error:"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.startswith("two_at_once.py: error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
