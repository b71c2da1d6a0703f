"""bench/revisions_side_by_side.py: two revisions of kmc side by side on a
tiny complete state space (the working tree against HEAD), and its bad input."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "revisions_side_by_side.py"

pytestmark = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or not (ROOT / ".git").exists(),
                                reason="needs two cores and the project's git repository")


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT)


def worktrees() -> list[str]:
    return subprocess.run(["git", "worktree", "list"], capture_output=True, text=True, cwd=ROOT).stdout.splitlines()


def test_the_working_tree_against_head_on_the_tiny_config():
    before = worktrees()
    args = ["--base", "HEAD", "--config", "tiny", "--pairs", "2"]
    if shutil.which("valgrind"):
        args += ["--callgrind", "30"]
    r = run(*args)
    assert r.returncode == 0, r.stderr
    rows = re.findall(r"^\s+(\d)\s+(\d+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)$", r.stdout, re.M)
    assert [row[0] for row in rows] == ["1", "2"] and rows[0][1] != rows[1][1]  # the cores swap
    assert re.search(r"new / base CPU time over 2 pairs: mean [\d.]+ \(min [\d.]+, max [\d.]+\)", r.stdout)
    if shutil.which("valgrind"):
        found = re.search(r"first 30 states expanded: base ([\d,]+), new ([\d,]+)", r.stdout)
        assert found and all(int(x.replace(",", "")) > 10**7 for x in found.groups())
    assert worktrees() == before  # the base's checkout is gone


@pytest.mark.parametrize("args, message", [
    (["--base", "HEAD", "--pairs", "0"], "--pairs must be at least 1"),
    (["--base", "no-such-revision-of-kmc", "--config", "tiny"], "cannot check out 'no-such-revision-of-kmc'"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = run(*args)
    assert r.returncode == 2
    assert r.stderr.startswith("revisions_side_by_side.py: error: ") and message in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
