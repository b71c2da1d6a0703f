"""`kmc trace show|itf|html` of a run whose summary.json (or trace file) was
damaged - edited by hand or written by something else: one `kmc: error:`
line naming the file and exit 2, never a traceback (checker/output/runs.py);
the undamaged run still renders. Safety and liveness (lasso) runs."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from trace_helpers import kmc_group, only_run_dir

LIVENESS_SPEC = ('model = "diehard"\ninvariants = ["TypeOK"]\n'
                 'properties = ["AlwaysEventuallySolved"]\nfairness = []\n')
COMMANDS = ("show", "itf", "html")


def invoke(*args):
    return CliRunner().invoke(kmc_group(), [str(a) for a in args], prog_name="kmc")


@pytest.fixture(scope="session")
def liveness_run(tmp_path_factory) -> Path:
    """A run of diehard with a lasso counterexample of AlwaysEventuallySolved."""
    d = tmp_path_factory.mktemp("live")
    spec = d / "live.toml"
    spec.write_text(LIVENESS_SPEC)
    r = invoke("check", spec, "--out", d / "out", "--quiet")
    assert r.exit_code == 1, r.output
    run = only_run_dir(d / "out")
    (v,) = json.loads((run / "summary.json").read_text())["violations"]
    assert v["kind"] == "liveness" and isinstance(v["loop"], int)
    return run


def _copy(run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(run, tmp_path / run.name))


def _edit_json(path: Path, edit) -> None:
    obj = json.loads(path.read_text())
    out = edit(obj)
    path.write_text(json.dumps(obj if out is None else out))


def _args(cmd: str, run: Path, tmp_path: Path) -> list:
    return ["trace", cmd, run] + (["-o", tmp_path / "out.file"] if cmd != "show" else [])


def _one_error_line(r) -> str:
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("kmc: error:")]
    assert len(errors) == 1, r.stderr
    assert r.stderr.strip().splitlines() == errors, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    return errors[0]


def _set(*keys_and_value):
    *keys, value = keys_and_value

    def edit(s):
        target = s
        for k in keys[:-1]:
            target = target[k]
        target[keys[-1]] = value
    return edit


def _del(*keys):
    def edit(s):
        target = s
        for k in keys[:-1]:
            target = target[k]
        del target[keys[-1]]
    return edit


# damage of summary.json -> a fragment of the error line
SUMMARY_DAMAGES = {
    "loop a string": (_set("violations", 0, "loop", "x"), "loop"),
    "loop null": (_set("violations", 0, "loop", None), "loop"),
    "loop negative": (_set("violations", 0, "loop", -1), "loop"),
    "loop a bool": (_set("violations", 0, "loop", True), "loop"),
    "loop a float": (_set("violations", 0, "loop", 0.5), "loop"),
    "loop past the trace": (_set("violations", 0, "loop", 99), "loop"),
    "kind a number": (_set("violations", 0, "kind", 3), "kind"),
    "headline a number": (_set("violations", 0, "headline", 3), "headline"),
    "instance a list": (_set("violations", 0, "instance", [1]), "instance"),
    "property missing": (_del("violations", 0, "property"), "property"),
    "property a list": (_set("violations", 0, "property", ["x"]), "property"),
    "violation a string": (_set("violations", 0, "x"), "violations[0]"),
    "violations an object": (_set("violations", {"a": 1}), "violations"),
    "model a list": (_set("config", "model", ["x"]), "config.model"),
    "model missing": (_del("config", "model"), "config.model"),
    "model null": (_set("config", "model", None), "config.model"),
    "variant a number": (_set("config", "variant", 3), "config.variant"),
    "variant unknown": (_set("config", "variant", "nope"), "nope"),
    "constants a string": (_set("config", "constants", "x"), "constants"),
    "constant of a wrong type": (_set("config", "constants", "Goal", "x"), "Goal"),
    "constant a list": (_set("config", "constants", "Goal", [1]), "Goal"),
    "overrides a list": (_set("config", "overrides", [1]), "overrides"),
    "spec a number": (_set("config", "spec", 7), "config.spec"),
    "run_id an object": (_set("run_id", {"a": 1}), "run_id"),
    "config missing": (_del("config"), "config"),
    "config a list": (_set("config", [1]), "config"),
    "summary a list": (lambda s: [s], "not a run summary"),
    "summary a number": (lambda s: 3, "not a run summary"),
}


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize("damage", SUMMARY_DAMAGES)
def test_a_damaged_liveness_summary_is_one_error_line(liveness_run, tmp_path, damage, cmd):
    run = _copy(liveness_run, tmp_path)
    edit, fragment = SUMMARY_DAMAGES[damage]
    _edit_json(run / "summary.json", edit)
    line = _one_error_line(invoke(*_args(cmd, run, tmp_path)))
    assert fragment in line, line
    assert str(run) in line, line  # names the run (its summary.json)


SAFETY_DAMAGES = {k: SUMMARY_DAMAGES[k] for k in (
    "property missing", "violation a string", "model a list", "variant a number",
    "constant of a wrong type", "overrides a list", "config missing")}


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize("damage", SAFETY_DAMAGES)
def test_a_damaged_safety_summary_is_one_error_line(diehard_run, tmp_path, damage, cmd):
    run = _copy(diehard_run, tmp_path)
    edit, fragment = SAFETY_DAMAGES[damage]
    _edit_json(run / "summary.json", edit)
    line = _one_error_line(invoke(*_args(cmd, run, tmp_path)))
    assert fragment in line, line


# damage of the trace file trace-P.json -> a fragment of the error line
TRACE_DAMAGES = {
    "a step a number": (_set("steps", 0, 5), "step 0"),
    "a step a list": (_set("steps", 0, [1, 2]), "step 0"),
    "steps a string": (_set("steps", "x"), "steps"),
    "steps missing": (_del("steps"), "trace file"),
    "no step": (_set("steps", []), "no step"),
    "encoded a number": (_set("steps", 0, "encoded", 5), "encoded"),
    "encoded not base64": (_set("steps", 0, "encoded", "%%%"), "base64"),
    "encoded not a state": (_set("steps", 0, "encoded", "AAAA"), "step 0"),
}


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize("damage", TRACE_DAMAGES)
@pytest.mark.parametrize("kind", ["safety", "liveness"])
def test_a_damaged_trace_file_is_one_error_line(diehard_run, liveness_run, tmp_path, damage, cmd, kind):
    run = _copy(diehard_run if kind == "safety" else liveness_run, tmp_path)
    prop = json.loads((run / "summary.json").read_text())["violations"][0]["property"]
    edit, fragment = TRACE_DAMAGES[damage]
    _edit_json(run / f"trace-{prop}.json", edit)
    line = _one_error_line(invoke(*_args(cmd, run, tmp_path)))
    assert fragment in line, line


@pytest.mark.parametrize("cmd", COMMANDS)
@pytest.mark.parametrize("kind", ["safety", "liveness"])
def test_the_undamaged_run_still_renders(diehard_run, liveness_run, tmp_path, cmd, kind):
    run = _copy(diehard_run if kind == "safety" else liveness_run, tmp_path)
    r = invoke(*_args(cmd, run, tmp_path))
    assert r.exit_code == 0, (r.output, r.exception)
    assert "kmc: error" not in r.stderr
    text = r.stdout if cmd == "show" else (tmp_path / "out.file").read_text()
    if cmd == "itf":
        obj = json.loads(text)
        assert obj["states"]
        if kind == "liveness":
            assert obj["loop"] == 0
    elif cmd == "show" and kind == "liveness":
        assert "Stuttering: the behaviour stays in state 0 for ever." in text
    elif cmd == "html":
        assert text.lstrip().lower().startswith("<!doctype html")


# `kmc trace` itself: bare, it prints its help as bare `kmc` does (exit 0);
# misused, one error line (exit 2).

def test_bare_trace_prints_its_help():
    r = invoke("trace")
    assert r.exit_code == 0, (r.output, r.exception)
    assert "kmc: error" not in r.stderr
    assert r.stdout.startswith("Usage: kmc trace")
    assert len(r.stdout.splitlines()) > 3  # the help as click lays it out, not squashed
    for sub in COMMANDS:
        assert f"  {sub} " in r.stdout
    assert r.stdout == invoke("trace", "--help").stdout


def test_bare_kmc_prints_its_help_too():
    r = invoke()
    assert r.exit_code == 0 and r.stdout.startswith("Usage: kmc")


@pytest.mark.parametrize("args,fragment", [
    (["trace", "nope"], "No such command 'nope'"),
    (["trace", "--bogus"], "--bogus"),
    (["trace", "show"], "RUN_DIR"),
])
def test_trace_misuse_is_one_error_line(args, fragment):
    assert fragment in _one_error_line(invoke(*args))
