"""Fixtures of the explorer's tests: a run of the Last Replica Standing spec
(its counterexample of 7 steps)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from checker.front.cli import cli  # noqa: E402
from explore_helpers import LRS  # noqa: E402


@pytest.fixture(scope="session")
def lrs_run(tmp_path_factory) -> Path:
    """results/<spec>/<run> of the v3.5 Last Replica Standing spec (7 steps)."""
    out = tmp_path_factory.mktemp("lrs")
    result = CliRunner().invoke(cli, ["check", str(LRS), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    runs = sorted(p for p in out.glob("*/*") if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]
