"""A simulation's results say it was one: report.html names the run's seed, the
walks, the shrinking and the [expect] verdict, not BFS levels or a queue;
the trace page's reproduce line is the `kmc simulate` command, with its seed,
that walks the same violation again."""
from __future__ import annotations

import html
import json
import re
import shlex
from pathlib import Path

from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
LRS = "specs/simulate/v3_5-storage-3b-last-replica-standing.toml"   # seed 1: walk 6, 25 -> 8 steps


def simulate(out: Path, *args) -> tuple[dict, Path]:
    r = CliRunner().invoke(cli, ["simulate", *map(str, args), "--out", str(out), "-q", "--json"])
    assert r.exit_code == 1, r.output
    obj = json.loads(r.stdout)
    return obj, Path(obj["results_dir"])


def text_of(page: Path) -> str:
    t = re.sub(r"<(style|script|svg)\b.*?</\1>", "", page.read_text(), flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", t)).split())


def test_report_and_trace_of_a_simulation(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    obj, run = simulate(tmp_path / "a", LRS)
    assert obj["expect_met"] is True and obj["simulate"]["shrink"]["original_steps"] == 25
    report = text_of(run / "report.html")
    assert "VIOLATION LeaderCompletenessProperty after 8 steps (shrunk from 25)" in report
    assert "Random walks (kmc simulate), seed 1: 7 walks" in report
    assert "First violation: LeaderCompletenessProperty on walk 6 after 25 steps" in report
    assert "Shrunk from 25 steps to 8 steps" in report and "1-minimal" in report
    assert "MATCHES Expected (the spec's [expect])" in report
    assert "queue" not in report and "BFS" not in report and "Frontier growth" not in report
    command = (f"kmc simulate {LRS} --seed 1 --walks 7 --depth 100 --no-swarm")
    assert f"Reproduce: {command}" in report
    page = text_of(run / "trace-LeaderCompletenessProperty.html")
    assert f"reproduce {command}" in page and "kmc check" not in page
    # the command walks the same violation again, and is still compared with [expect]
    again, run2 = simulate(tmp_path / "b", *shlex.split(command)[2:])
    assert again["expect_met"] is True
    assert again["violations"][0]["actions"] == obj["violations"][0]["actions"]


def test_a_changed_seed_is_not_compared(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    r = CliRunner().invoke(cli, ["simulate", LRS, "--seed", "2", "--walks", "50", "--out",
                                 str(tmp_path), "-q"])
    assert "Not compared with [expect]: the command line changed the spec (--seed)." in r.stdout
