"""bench/time_budget_race.py: its kmc part for a few seconds (TLC itself is
not run here), and its one error line when TLC's arguments are missing."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "time_budget_race.py"


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


def test_kmc_alone_reports_how_far_it_got():
    r = run("--kmc-only", "--seconds", "20")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("kmc (engine auto)"))
    m = re.search(r"expanding level (\d+) \(a state (\d+) steps deep found\), ([\d,]+) distinct, "
                  r"([\d,]+) generated", line)
    assert m, line
    level, deepest, distinct, generated = (int(g.replace(",", "")) for g in m.groups())
    # the reference configuration's first levels hold more states than 20 s can expand
    # (181,983 distinct within 3 steps: specs/quorum/reference.toml)
    assert deepest == level + 1 and 0 < distinct <= generated
    logs = Path(r.stdout.strip().splitlines()[-1].removeprefix("logs in "))
    assert (logs / "kmc.log").exists() and not (logs / "results").exists()
    shutil.rmtree(logs)


def test_tlc_arguments_missing_is_one_error_line():
    r = run("--seconds", "1")
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        "time_budget_race.py: error: give --tlc-jar, --reference-spec and --tlc-run-script, or --kmc-only"]
