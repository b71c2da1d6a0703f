"""Fixtures of the explorer's tests: a run of the Last Replica Standing spec
(its counterexample of 7 steps) and an explorer served on 127.0.0.1 in a
thread of the test's process."""
from __future__ import annotations

import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from checker.front.cli import cli  # noqa: E402
from checker.front.explore import serve  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LRS = ROOT / "specs" / "kraft-v3_5-last-replica-standing.toml"


@pytest.fixture(scope="session")
def lrs_run(tmp_path_factory) -> Path:
    """results/<spec>/<run> of the v3.5 Last Replica Standing spec (7 steps)."""
    out = tmp_path_factory.mktemp("lrs")
    result = CliRunner().invoke(cli, ["check", str(LRS), "--out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    runs = sorted(p for p in out.glob("*/*") if p.is_dir())
    assert len(runs) == 1, runs
    return runs[0]


@contextmanager
def served(explorer):
    """The explorer's server on a free port of 127.0.0.1, in a thread; its base URL."""
    server = serve(explorer, 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
