"""--max-memory holds while the model is built too (checker/search/registry.py):
a build's tables can grow far faster than a search level, and cannot stop
themselves between chunks, so the address space is capped while it runs."""
from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "specs" / "kraft-kip966-quick.toml"


def _safety_net():
    """4 GiB of address space for the child: a failure of this test must not
    take the machine (without the fix the build below wants ~13 GB)."""
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def test_a_model_too_big_for_max_memory_stops_while_it_builds(tmp_path):
    """10**7 brokers: one line, exit 2, and the process's peak far below what
    the safety net allows (the old way reached the net, then said the same)."""
    with open(tmp_path / "out", "w") as out, open(tmp_path / "err", "w") as err:
        p = subprocess.Popen([sys.executable, "-m", "checker.front.cli", "check", str(QUICK),
                              "--set", "BrokerCount=10000000", "--depth", "3", "--max-memory", "200M",
                              "-q", "--out", str(tmp_path / "res")],
                             cwd=ROOT, stdout=out, stderr=err, preexec_fn=_safety_net)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    lines = (tmp_path / "err").read_text().strip().splitlines()
    assert p.returncode == 2, lines
    assert len(lines) == 1 and lines[0].startswith("kmc: error: ") and "too large to build it within" in lines[0]
    assert usage.ru_maxrss < (1 << 30) // 1024, usage.ru_maxrss   # KiB


def test_the_cap_goes_when_the_build_ends():
    from checker.search import registry
    before = resource.getrlimit(resource.RLIMIT_AS)
    with registry.build_limit(200 << 20):
        registry.build("diehard", None, {})
    assert resource.getrlimit(resource.RLIMIT_AS) == before
