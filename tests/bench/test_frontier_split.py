"""bench/frontier_split.py: what a level's tasks hand on as new under each
split, on the two-phase toy (exact, deterministic counts), and its bad input."""
from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "frontier_split.py"
TWOPHASE = str(ROOT / "specs" / "toy-twophase.toml")


def bench():
    spec = importlib.util.spec_from_file_location("frontier_split", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_task_hands_on_exactly_the_new_states():
    r = bench().measure(TWOPHASE, 4, 1)
    assert (r["frontier"], r["seen"], r["new"]) == (50, 117, 54)   # levels 0-4 and 5 of 288 states
    assert all(c["auto"] == 54 and c["spark"] >= 54 for c in r["splits"].values())


def test_two_tasks_split_by_fingerprint_hand_on_the_most_duplicates():
    r = bench().measure(TWOPHASE, 4, 2)
    got = {name.split(" (")[0]: (c["spark"], c["auto"]) for name, c in r["splits"].items()}
    assert got == {"by fingerprint": (86, 86), "ranges in BFS order": (58, 58),
                   "chunks of 2,048 in turn": (54, 54)}


@pytest.mark.parametrize("args, words", [
    (["--spec", TWOPHASE, "--level", "40"], "has no level 40"),
    (["--spec", "no-such.toml", "--level", "3"], "not found"),
    (["--level", "3", "--tasks", "0"], "--tasks at least 1"),
])
def test_bad_input_is_one_line_and_exit_2(args, words):
    r = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("frontier_split.py: error: ") and words in r.stderr
