"""Spec loading and validation (checker/front/spec.py) and the registry (checker/search/registry.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from checker.front.spec import UNSET, load_spec, parse_set, parse_sets
from checker.search.errors import SpecError
from checker.search.registry import build, resolve_constants, model_def, select_properties
from model.base import ModelConfigError

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_toy_specs_load_with_defaults_filled_in():
    spec = load_spec(ROOT / "specs" / "toy-twophase.toml")
    assert (spec.name, spec.model, spec.variant) == ("toy-twophase", "twophase", "standard")
    assert spec.constants == {"RM": ["r1", "r2", "r3"], "RMCount": 0}
    assert spec.depth is None and spec.check_deadlock is False and spec.fingerprint_bits == 64
    assert spec.expect == {"outcome": "pass", "distinct": 288}
    model, props = spec.build()
    assert [p.name for p in props] == ["TPTypeOK", "TCConsistent", "AllCommitted"]
    spec = load_spec(ROOT / "specs" / "toy-diehard.toml")
    assert spec.expect == {"outcome": "violation", "violated": "NotSolved", "depth": 6}


def test_depth_override_semantics(tmp_path):
    p = write(tmp_path, 'model = "diehard"\ndepth = 4\n')
    assert load_spec(p).depth == 4
    assert load_spec(p, depth=UNSET).depth == 4
    assert load_spec(p, depth=None).depth is None
    assert load_spec(p, depth=9).depth == 9
    with pytest.raises(SpecError):
        load_spec(p, depth=True)


def test_overrides_and_variant_default(tmp_path):
    p = write(tmp_path, 'model = "diehard"\n[constants]\nGoal = 2\n')
    spec = load_spec(p, {"Goal": 1, "BigCapacity": 7})
    assert spec.variant == "standard"
    assert spec.constants == {"BigCapacity": 7, "SmallCapacity": 3, "Goal": 1}
    assert spec.overrides == {"Goal": 1, "BigCapacity": 7}
    with pytest.raises(SpecError, match="Goal must be int"):
        load_spec(p, {"Goal": False})
    with pytest.raises(SpecError, match="rejected"):
        load_spec(p, {"SmallCapacity": 9})


def test_options_fingerprint_projection_invariants(tmp_path):
    p = write(tmp_path, 'model = "twophase"\nfingerprint = "xxh3_128"\nprojection = "no_msgs"\n'
                        'invariants = ["TCConsistent"]\ncheck_deadlock = true\n')
    spec = load_spec(p)
    assert spec.fingerprint_bits == 128 and spec.projection == "no_msgs" and spec.check_deadlock
    assert spec.deprecations == [] and spec.config()["projection"] == "no_msgs"
    # the witnesses are kept (AllCommitted): no vacuous pass (tests/regress/test_witnesses.py)
    assert [q.name for q in spec.build()[1]] == ["TCConsistent", "AllCommitted"]
    cfg = spec.config()
    assert cfg["invariants"] == ["TCConsistent", "AllCommitted"] and cfg["fingerprint"] == "xxh3_128"


def test_the_old_view_key_is_read_with_a_deprecation_line(tmp_path, capsys):
    """`view` was the fingerprint projection's key (now `projection`; "view"
    is the trace view's word): still read, with one warning line per process."""
    p = write(tmp_path, 'model = "twophase"\nview = "no_msgs"\n')
    spec = load_spec(p)
    assert spec.projection == "no_msgs"
    assert spec.deprecations == [f"{p}: `view` is the old name of `projection` (the fingerprint "
                                 f"projection): rename the key"]
    load_spec(p)
    assert capsys.readouterr().err == f"kmc: warning: {spec.deprecations[0]}\n"


@pytest.mark.parametrize("text", [
    "3", "false", '"A"', '["A", "B"]', "{ a = 1 }", "-7",
])
def test_parse_set_reads_toml_values(text):
    import tomllib
    name, value = parse_set(f"X={text}")
    assert name == "X" and value == tomllib.loads(f"v = {text}")["v"]


@pytest.mark.parametrize("bad", ["X", "=3", "X=A", "X=[1,", ""])
def test_parse_set_rejects(bad):
    with pytest.raises(SpecError):
        parse_set(bad)


def test_parse_sets_refuses_a_name_given_twice():
    assert parse_sets(["A=1", "B=true"]) == {"A": 1, "B": True}
    with pytest.raises(SpecError, match=r"--set A is given twice \(1 and 2\): give it once"):
        parse_sets(["A=1", "A=2", "B=true"])


def test_registry_build_and_errors():
    model, props = build("twophase", "standard", {"RMCount": 4})
    assert model.rms == ("r1", "r2", "r3", "r4") and props
    with pytest.raises(SpecError, match="unknown model"):
        build("nope", None, {})
    with pytest.raises(SpecError, match="unknown variant"):
        build("twophase", "nope", {})
    with pytest.raises(SpecError, match="unknown constant"):
        build("twophase", None, {"Nope": 1})
    with pytest.raises(SpecError, match="must be int"):
        build("twophase", None, {"RMCount": True})
    with pytest.raises(SpecError, match="list of str"):
        build("twophase", None, {"RM": ["a", 1]})
    with pytest.raises(ModelConfigError):
        build("twophase", None, {"RMCount": -1})
    defn = model_def("diehard")
    assert resolve_constants(defn, "standard", {}) == {"BigCapacity": 5, "SmallCapacity": 3, "Goal": 4}
    with pytest.raises(SpecError, match="unknown property"):
        select_properties(props, ["TCConsistent", "Nope"])
    assert [p.name for p in select_properties(props, ["TCConsistent", "TCConsistent"])] == ["TCConsistent"]
