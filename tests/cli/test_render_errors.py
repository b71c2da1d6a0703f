"""A view that fails to render a page does not lose the run, and the failure
is said: on the console (a warning line) and in --json's summary."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

DIEHARD = Path(__file__).resolve().parents[2] / "specs" / "toy-diehard.toml"


def test_render_errors_reach_the_console_and_json(tmp_path, monkeypatch):
    from checker.output import traces

    def broken(*a, **k):
        raise ValueError("the view is broken")
    monkeypatch.setitem(traces.WRITERS, "html", broken)
    r = CliRunner().invoke(cli, ["check", str(DIEHARD), "--out", str(tmp_path), "--json", "--quiet"])
    assert r.exit_code == 1
    assert "kmc: warning: not rendered: NotSolved: ValueError: the view is broken" in r.stderr
    obj = json.loads(r.stdout.strip().splitlines()[-1])
    assert obj["render_errors"] == ["NotSolved: ValueError: the view is broken"]
    run = Path(obj["results_dir"])
    assert json.loads((run / "summary.json").read_text())["render_errors"] == obj["render_errors"]
    assert (run / "trace-NotSolved.txt").is_file()
    # the other writers still ran: one broken form costs only itself
    assert (run / "trace-NotSolved.itf.json").is_file() and not (run / "trace-NotSolved.html").exists()
