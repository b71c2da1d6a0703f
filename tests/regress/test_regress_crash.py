"""`kmc regress`: a spec whose check raises an unexpected Python exception (a
bug, not bad input) is an ERROR row `<ExceptionType>: <message>`; the other
specs still run and the exit code is regress's for errors (2), in-process and
with -j (forked workers inherit the monkeypatch)."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front import regress as regress_module
from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"


@pytest.fixture
def specs(tmp_path) -> Path:
    d = tmp_path / "specs"
    d.mkdir()
    (d / "a-diehard.toml").write_text((SPECS / "toy-diehard.toml").read_text())     # crashes (patched)
    (d / "b-twophase.toml").write_text((SPECS / "toy-twophase.toml").read_text())   # OK
    return d


@pytest.fixture
def crashing_check(monkeypatch):
    """regress's engines raise RuntimeError for the diehard spec (the one whose
    properties include NotSolved), and check every other spec as before."""
    for engine, real in list(regress_module.RUNNERS.items()):
        def run(spec, model, props, options, real=real):
            if any(p.name == "NotSolved" for p in props):
                raise RuntimeError("boom\nin the engine")
            return real(spec, model, props, options)
        monkeypatch.setitem(regress_module.RUNNERS, engine, run)


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_unexpected_exception_is_an_error_row_and_the_others_run(jobs, specs, crashing_check, tmp_path):
    junit = tmp_path / "j.xml"
    result = CliRunner().invoke(cli, ["regress", str(specs), "-j", jobs, "--junit", str(junit)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = result.stdout.splitlines()
    assert next(line for line in lines if "a-diehard" in line).endswith("ERROR")
    assert "! RuntimeError: boom in the engine" in result.stdout          # one line
    assert next(line for line in lines if "b-twophase" in line).endswith("OK")
    assert "2 specs: 1 OK, 0 FAIL, 1 ERROR, 0 skipped" in result.stdout
    assert result.stderr.splitlines() == ["kmc: error: RuntimeError: boom in the engine"]
    cases = {c.get("name"): [x.tag for x in c if x.tag in ("failure", "error", "skipped")]
             for c in ET.parse(junit).getroot().iter("testcase")}
    assert cases == {str(specs / "a-diehard.toml"): ["error"], str(specs / "b-twophase.toml"): []}


def test_run_spec_turns_the_exception_into_a_row(specs, crashing_check):
    row = regress_module.run_spec(str(specs / "a-diehard.toml"), False, None, None)
    assert row.status == regress_module.ERROR
    assert row.problems == ["RuntimeError: boom in the engine"]
    assert regress_module.run_spec(str(specs / "b-twophase.toml"), False, None, None).status == regress_module.OK


def test_keyboard_interrupt_still_stops_the_set(specs, monkeypatch):
    def interrupted(spec, model, props, options):
        raise KeyboardInterrupt
    monkeypatch.setitem(regress_module.RUNNERS, "auto", interrupted)
    with pytest.raises(KeyboardInterrupt):
        regress_module.run_spec(str(specs / "b-twophase.toml"), False, None, None)
