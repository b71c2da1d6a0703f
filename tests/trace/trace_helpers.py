"""Shared helpers of tests/trace (importable: conftest.py puts this folder on sys.path)."""
from __future__ import annotations

from pathlib import Path

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
LRS = ROOT / "specs" / "kraft-v3_5-last-replica-standing.toml"
DIEHARD = ROOT / "specs" / "toy-diehard.toml"
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
ZK_LOSS = ROOT / "specs" / "zk-leader_epoch-data-loss.toml"  # LeaderCompleteness in 7 steps


def kmc_group():
    """checker.front.cli's group (its one list of commands has `trace` and `regress`)."""
    assert cli.get_command(None, "trace") and cli.get_command(None, "regress")
    return cli


def only_run_dir(out: Path) -> Path:
    dirs = sorted(p for p in Path(out).glob("*/*") if p.is_dir())
    assert len(dirs) == 1, dirs
    return dirs[0]
