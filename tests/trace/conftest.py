"""Fixtures for the trace / report tests: the kmc command group with `trace`
and `regress` registered, and runs shared by the tests."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from trace_helpers import DIEHARD, LRS, ZK_LOSS, kmc_group, only_run_dir  # noqa: E402


@pytest.fixture
def kmc():
    group = kmc_group()

    def run(*args):
        return CliRunner().invoke(group, [str(a) for a in args])
    return run


@pytest.fixture(scope="session")
def lrs_run(tmp_path_factory) -> Path:
    """results/<spec>/<run> of the v3.5 Last Replica Standing spec (7 steps)."""
    out = tmp_path_factory.mktemp("lrs")
    result = CliRunner().invoke(kmc_group(), ["check", str(LRS), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    return only_run_dir(out)


@pytest.fixture(scope="session")
def diehard_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("diehard")
    result = CliRunner().invoke(kmc_group(), ["check", str(DIEHARD), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    return only_run_dir(out)


@pytest.fixture(scope="session")
def zk_run(tmp_path_factory) -> Path:
    """results/<spec>/<run> of a zk data loss (LeaderCompleteness, 7 steps)."""
    out = tmp_path_factory.mktemp("zk")
    result = CliRunner().invoke(kmc_group(), ["check", str(ZK_LOSS), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    return only_run_dir(out)
