"""kmc check --max-memory SIZE: the search stops in one line, exit 2, before
the machine swaps; bad sizes are bad input. And bytes_per_state in the
summary and the final line."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import SizeType, cli, default_max_memory

ROOT = Path(__file__).resolve().parents[2]
KRAFT = ROOT / "specs" / "kraft-kip966-reference.toml"
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"


def kmc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "checker.front.cli", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("engine", ["local", None])
def test_memory_limit_stops_with_one_line(tmp_path, engine):
    out = tmp_path / "results"
    args = ["check", KRAFT, "--depth", "8", "--max-memory", "20M", "--out", out]
    if engine:
        args += ["--engine", engine]
    r = kmc(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("kmc: error:")]
    assert len(errors) == 1 and "Traceback" not in r.stderr
    assert errors[0].startswith("kmc: error: memory limit 20 MiB reached at level ")
    assert " distinct states " in errors[0] and "--max-memory" in errors[0] and "--checkpoint" in errors[0]
    assert r.stdout == ""
    # nothing half-written: no run folder, no temp file, under results/
    assert [p for p in out.rglob("*") if not p.is_dir()] == []
    assert not list(out.glob("*/*"))


def test_no_limit_and_a_high_limit_finish(tmp_path):
    for size in ("none", "64G", "1.5t"):
        r = CliRunner().invoke(cli, ["check", str(TWOPHASE), "--max-memory", size, "--out",
                                     str(tmp_path), "--engine", "local", "-q"])
        assert r.exit_code == 0, r.output


@pytest.mark.parametrize("value", ["0", "-1G", "abc", "0G", "8 X", "G", ""])
def test_bad_sizes_are_bad_input(tmp_path, value):
    r = kmc("check", TWOPHASE, f"--max-memory={value}", "--out", tmp_path)
    assert r.returncode == 2
    assert r.stderr.startswith("kmc: error: ") and len(r.stderr.splitlines()) == 1
    assert "--max-memory" in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_sizes():
    t = SizeType()
    assert t.convert("8G", None, None) == 8 << 30
    assert t.convert("500M", None, None) == 500 << 20
    assert t.convert("1.5GiB", None, None) == 3 << 29
    assert t.convert("64kb", None, None) == 64 << 10
    assert t.convert("none", None, None) is None
    total = default_max_memory(1.0)
    assert total is None or default_max_memory() == int(total * 0.85)


def test_bytes_per_state_in_the_summary_and_the_last_line(tmp_path):
    r = CliRunner().invoke(cli, ["check", str(TWOPHASE), "--json", "--out", str(tmp_path),
                                 "--engine", "local", "-q"])
    assert r.exit_code == 0, r.output
    obj = json.loads(r.stdout.strip().splitlines()[-1])
    assert obj["bytes_per_state"] == obj["peak_memory_kb"] * 1024 // obj["distinct"] > 0
    summary = json.loads(Path(obj["results_dir"], "summary.json").read_text())
    assert summary["bytes_per_state"] == obj["bytes_per_state"]
    assert f"({obj['bytes_per_state']:,} bytes/state)." in r.stderr
