"""Shared helpers of tests/trace (importable: conftest.py puts this folder on sys.path)."""
from __future__ import annotations

from pathlib import Path

from checker import regress as regress_module
from checker import trace_cli
from checker.cli import cli

ROOT = Path(__file__).resolve().parents[2]
LRS = ROOT / "specs" / "kraft-v3_5-last-replica-standing.toml"
DIEHARD = ROOT / "specs" / "toy-diehard.toml"
TWOPHASE = ROOT / "specs" / "toy-twophase.toml"
ZK_LOSS = ROOT / "specs" / "zk-leader_epoch-data-loss.toml"  # LeaderCompleteness in 7 steps


def kmc_group():
    """checker.cli's group with `trace` and `regress` (the lead registers them in
    checker/cli.py; registering again here is harmless)."""
    if "trace" not in cli.commands:
        trace_cli.register(cli)
    if "regress" not in cli.commands:
        regress_module.register(cli)
    return cli


def only_run_dir(out: Path) -> Path:
    dirs = sorted(p for p in Path(out).glob("*/*") if p.is_dir())
    assert len(dirs) == 1, dirs
    return dirs[0]
