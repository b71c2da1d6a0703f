"""`kmc trace show|itf|html` on a run whose trace-P.json is damaged: one line
`kmc: error: <file>: ...` on stderr and exit 2, never a traceback."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

PROP = "NotSolved"   # toy-diehard's violated invariant (6 steps)


def _set_steps(value):
    def damage(obj):
        obj["steps"] = value
    return damage


def _step(i, **fields):
    def damage(obj):
        obj["steps"][i].update(fields)
    return damage


def _no_encoded_and_empty_action(obj):
    for step in obj["steps"]:
        del step["encoded"]
    obj["steps"][3]["action"] = {}


def _drop_key(i, key):
    def damage(obj):
        del obj["steps"][i][key]
    return damage


DAMAGES = {
    "steps-int": (_set_steps(5), "'steps' is not a list"),
    "steps-of-ints": (_set_steps([1, 2, 3]), "step 0 is not a JSON object"),
    "steps-empty": (_set_steps([]), "no step"),
    "not-an-object": (lambda obj: obj.clear(), "not a kmc trace file"),
    "action-int": (_step(2, action=5), "step 2 has a malformed action"),
    "action-empty-encoded": (_step(3, action={}), "step 3 has a malformed action"),
    "action-empty-replayed": (_no_encoded_and_empty_action, "step 3 has a malformed action"),
    "label-missing-replayed": (lambda obj: [s.pop("encoded") for s in obj["steps"]]
                               and obj["steps"][3]["action"].pop("label"), "step 3 has no action label"),
    "state-missing-replayed": (lambda obj: [s.pop("encoded") for s in obj["steps"]]
                               and obj["steps"][3].pop("state"), "step 3"),
    "encoded-not-base64": (_step(3, encoded="!!!!"), "step 3 cannot be decoded"),
    "encoded-not-a-string": (_step(3, encoded=5), "step 3"),
    "encoded-bad-msgpack": (_step(3, encoded="kgAAAAAA"), "step 3 cannot be decoded"),
    "encoded-wrong-arity": (_step(3, encoded="kwAAAA=="), "step 3 cannot be decoded"),
    "encoded-not-a-tuple": (_step(3, encoded="wA=="), "step 3 cannot be decoded"),
    "step-0-bad": (_step(0, encoded="kgAAAAAA"), "step 0 cannot be decoded"),
}


def damaged_copy(run: Path, where: Path, damage) -> Path:
    copy = where / "run"
    shutil.copytree(run, copy)
    path = copy / f"trace-{PROP}.json"
    obj = json.loads(path.read_text())
    damage(obj)
    path.write_text(json.dumps(obj))
    return copy


def assert_one_error_line(result, *words):
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("kmc: error: "), result.stderr
    for w in words:
        assert w in lines[0], lines[0]


@pytest.mark.parametrize("name", DAMAGES)
def test_trace_show_of_a_damaged_trace_is_one_line_and_exit_2(name, diehard_run, kmc, tmp_path):
    damage, words = DAMAGES[name]
    run = damaged_copy(diehard_run, tmp_path, damage)
    result = kmc("trace", "show", run)
    assert_one_error_line(result, f"trace-{PROP}.json", words)


@pytest.mark.parametrize("command", ["itf", "html"])
@pytest.mark.parametrize("name", ["steps-int", "action-int", "encoded-bad-msgpack", "encoded-wrong-arity",
                                  "action-empty-replayed"])
def test_trace_itf_and_html_of_a_damaged_trace_are_one_line_and_exit_2(name, command, diehard_run, kmc,
                                                                       tmp_path):
    damage, words = DAMAGES[name]
    run = damaged_copy(diehard_run, tmp_path, damage)
    result = kmc("trace", command, run, "-o", tmp_path / "out")
    assert_one_error_line(result, f"trace-{PROP}.json", words)
    assert not (tmp_path / "out").exists()


def test_an_intact_copy_still_shows_the_trace(diehard_run, kmc, tmp_path):
    run = damaged_copy(diehard_run, tmp_path, lambda obj: None)
    result = kmc("trace", "show", run)
    assert result.exit_code == 0 and result.stdout == (diehard_run / f"trace-{PROP}.txt").read_text()
