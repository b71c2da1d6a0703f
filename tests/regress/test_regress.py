"""`kmc regress`: every spec with an [expect] table is checked against it; one
row per spec, a JUnit XML file listing every spec, exit 0 / 1 / 2."""
from __future__ import annotations

import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front import regress as regress_module
from checker.front.cli import cli
from checker.front.regress import is_scenario
from checker.front.spec import load_spec
from checker.search.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
DIEHARD = (SPECS / "toy-diehard.toml").read_text()
TWOPHASE = (SPECS / "toy-twophase.toml").read_text()


def kmc(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


@pytest.fixture
def specs(tmp_path) -> Path:
    d = tmp_path / "specs"
    write(d, "a-diehard.toml", DIEHARD.replace("depth = 6", "depth = 6\nquick = true"))
    write(d, "b-twophase.toml", TWOPHASE)                                  # OK, not quick
    write(d, "sub/c-noexpect.toml", 'model = "diehard"\n')                 # listed, skipped
    return d


def junit_cases(path: Path) -> dict[str, str]:
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    cases = {}
    for case in suite.findall("testcase"):
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        cases[case.get("name")] = kinds[0] if kinds else "ok"
        assert float(case.get("time")) >= 0
    assert int(suite.get("tests")) == len(cases)
    return cases


def test_all_expectations_met_exits_0_and_junit_lists_every_spec(specs, tmp_path):
    junit = tmp_path / "out" / "regress.xml"
    result = kmc("regress", specs, "--junit", junit)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["spec", "expected", "got"]
    row = next(line for line in lines if "a-diehard" in line)
    assert "NotSolved @6" in row and row.endswith("OK")
    assert next(line for line in lines if "c-noexpect" in line).endswith("SKIP")
    assert "3 specs: 2 OK, 0 FAIL, 0 ERROR, 1 skipped" in result.stdout
    assert junit_cases(junit) == {str(specs / "a-diehard.toml"): "ok", str(specs / "b-twophase.toml"): "ok",
                                  str(specs / "sub/c-noexpect.toml"): "skipped"}


def test_quick_runs_only_the_quick_set(specs, tmp_path):
    result = kmc("regress", specs, "--quick", "--junit", tmp_path / "j.xml")
    assert result.exit_code == 0
    cases = junit_cases(tmp_path / "j.xml")
    assert cases[str(specs / "a-diehard.toml")] == "ok"
    assert cases[str(specs / "b-twophase.toml")] == "skipped"
    assert "not in the quick set" in result.stdout or "SKIP" in result.stdout


@pytest.mark.parametrize("expect, problem", [
    ('outcome = "pass"\ndistinct = 287', "distinct 288, expected 287"),
    ('outcome = "violation"\nviolated = "TCConsistent"', "outcome pass, expected violation"),
    ('outcome = "pass"\ndepth = 3', "depth 10, expected 3"),
    ('outcome = "pass"\nper_level_distinct = [1, 7, 21, 38, 50, 54, 49, 36, 21, 10, 1]',
     "per_level_distinct [1, 7, 21, 38, 50, 54, 49, 36, 21, 9, 2], expected [1, 7, 21, 38, 50, 54, 49, 36, 21, 10, 1]"),
])
def test_an_unmet_expectation_fails_with_exit_1(specs, tmp_path, expect, problem):
    body = TWOPHASE.split("[expect]")[0] + "[expect]\n" + expect + "\n"
    write(specs, "d-wrong.toml", body)
    junit = tmp_path / "j.xml"
    result = kmc("regress", specs, "--junit", junit)
    assert result.exit_code == 1, result.output
    assert problem in result.stdout
    assert next(line for line in result.stdout.splitlines() if "d-wrong" in line).endswith("FAIL")
    assert junit_cases(junit)[str(specs / "d-wrong.toml")] == "failure"
    failure = ET.parse(junit).getroot().find(".//testcase[@name='%s']/failure" % (specs / "d-wrong.toml"))
    assert problem in failure.get("message")


def test_wrong_violated_property_and_depth_fail(specs):
    write(specs, "e.toml", DIEHARD.replace('violated = "NotSolved"', 'violated = "TypeOK"'))
    result = kmc("regress", specs / "e.toml")
    assert result.exit_code == 1 and "TypeOK not violated (violated: NotSolved)" in result.stdout
    write(specs, "f.toml", DIEHARD.replace("depth = 6", "depth = 5"))
    result = kmc("regress", specs / "f.toml")
    assert result.exit_code == 1 and "depth 6, expected 5" in result.stdout


def test_a_bad_spec_is_an_error_and_exit_2(specs, tmp_path):
    write(specs, "g-bad.toml", 'model = "nope"\n[expect]\noutcome = "pass"\n')
    junit = tmp_path / "j.xml"
    result = kmc("regress", specs, "--junit", junit)
    assert result.exit_code == 2
    assert "unknown model 'nope'" in result.stdout
    assert junit_cases(junit)[str(specs / "g-bad.toml")] == "error"


@pytest.mark.parametrize("args, words", [
    (["regress", "no/such/dir"], "spec folder not found"),
    (["regress", "EMPTY"], "no spec (*.toml)"),
    (["regress", "SPECS", "-k", "zzz"], "matches 'zzz'"),
    (["regress", "SPECS", "--jobs", "0"], "--jobs"),
])
def test_bad_input_is_one_line_and_exit_2(args, words, specs, tmp_path):
    (tmp_path / "empty").mkdir()
    args = [str(specs) if a == "SPECS" else str(tmp_path / "empty") if a == "EMPTY" else a for a in args]
    result = kmc(*args)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and words in result.stderr


def test_timeout_fails_a_long_spec(tmp_path):
    text = (SPECS / "kraft-v3_5-reference.toml").read_text().split("[expect]")[0]
    spec = write(tmp_path, "long.toml", text + '[expect]\noutcome = "pass"\n')
    result = kmc("regress", spec, "--timeout", "0.2")
    assert result.exit_code == 1 and "no result within --timeout 0.2 s" in result.stdout


def test_parallel_jobs_and_out_write_the_runs(specs, tmp_path):
    result = kmc("regress", specs, "-j", "2", "--out", tmp_path / "results")
    assert result.exit_code == 0, result.output
    runs = sorted(p.parent.parent.name for p in (tmp_path / "results").glob("*/*/summary.json"))
    assert runs == ["a-diehard", "b-twophase"]
    assert list((tmp_path / "results").glob("a-diehard/*/trace-NotSolved.html"))


def test_every_project_spec_loads_and_the_quick_set_is_not_empty():
    """`kmc regress specs/` exits 2 if a spec does not load; `make regress-quick`
    runs the quick set, which must hold kraft specs and every seeded bug's spec."""
    quick = []
    for path in sorted(SPECS.rglob("*.toml")):
        if is_scenario(path):   # replayed by tests/scenarios and as a regress row
            continue
        spec = load_spec(path)
        with open(path, "rb") as f:
            assert ("expect" in tomllib.load(f)) == bool(spec.expect)
        if spec.expect.get("quick"):
            quick.append(path.relative_to(SPECS).as_posix())
    assert "kraft-v3_5-last-replica-standing.toml" in quick and "kraft-kip966-quick.toml" in quick
    assert {p for p in quick if p.startswith("mutants/")} == {
        p.relative_to(SPECS).as_posix() for p in (SPECS / "mutants").glob("*.toml")}


def test_every_spec_runs_on_the_default_engine(specs, tmp_path, monkeypatch):
    """kmc regress runs each spec on auto, the engine `kmc check` runs by
    default (CI: `make regress`, the whole set)."""
    ran = []
    real = dict(regress_module.RUNNERS)
    monkeypatch.setitem(regress_module.RUNNERS, "auto",
                        lambda *a: (ran.append(a[0].name), real["auto"](*a))[1])
    result = kmc("regress", specs, "--junit", tmp_path / "j.xml")
    assert result.exit_code == 0, result.output
    assert sorted(ran) == ["a-diehard", "b-twophase"]
    assert "engines: auto" in (tmp_path / "j.xml").read_text()
    ran.clear()
    assert kmc("regress", specs, "--engine", "local").exit_code == 0 and ran == []


def test_a_spec_names_further_engines_to_compare(tmp_path, monkeypatch):
    spec = write(tmp_path / "specs", "tp.toml", TWOPHASE.replace('model = "twophase"',
                                                                  'model = "twophase"\nengines = ["local"]'))
    result = kmc("regress", spec)
    assert result.exit_code == 0, result.output
    assert "(auto = local)" in result.stdout
    real = regress_module.RUNNERS["local"]

    def off_by_one(*args):
        r = real(*args)
        r.distinct += 1
        return r

    monkeypatch.setitem(regress_module.RUNNERS, "local", off_by_one)
    result = kmc("regress", spec)
    assert result.exit_code == 1
    assert "engine local differs from auto: distinct 289, not 288" in result.stdout


@pytest.mark.parametrize("engines, wording", [
    ('["gpu"]', "unknown engine 'gpu'"),
    ('["local", "local"]', "names an engine twice"),
    ('"local"', "engines must be a list of engine names"),
])
def test_bad_engines_are_bad_input(tmp_path, engines, wording):
    spec = write(tmp_path, "tp.toml", TWOPHASE.replace('model = "twophase"', f'model = "twophase"\nengines = {engines}'))
    with pytest.raises(SpecError, match=wording):
        load_spec(spec)
    result = kmc("regress", spec)
    assert result.exit_code == 2 and wording in result.stderr


def test_liveness_names_no_spark(tmp_path):
    text = (SPECS / "liveness").glob("*.toml").__next__().read_text()
    spec = write(tmp_path, "l.toml", text.replace('\nmodel = ', '\nengines = ["spark"]\nmodel = ', 1)
                 if '\nmodel = ' in text else 'engines = ["spark"]\n' + text)
    with pytest.raises(SpecError, match="liveness .* runs on the local engine only"):
        load_spec(spec)


def test_k_matches_by_pattern_not_by_substring(tmp_path):
    from checker.front.regress import matches
    root = tmp_path / "specs"
    for rel in ("zk-a.toml", "storage/kip-manual.toml", "storage/kip-balanced.toml", "mutants/zk_thing.toml"):
        write(root, rel, DIEHARD)
    picked = {pattern: sorted(p.relative_to(root).as_posix() for p in regress_module.find_specs(root)
                              if matches(p, root, pattern))
              for pattern in ("zk", "zk-*", "storage", "storage/*-manual", "kip-balanced", "*zk*", "kip")}
    assert picked == {"zk": [], "zk-*": ["zk-a.toml"], "storage": ["storage/kip-balanced.toml", "storage/kip-manual.toml"],
                      "storage/*-manual": ["storage/kip-manual.toml"], "kip-balanced": ["storage/kip-balanced.toml"],
                      "*zk*": ["mutants/zk_thing.toml", "zk-a.toml"], "kip": []}
    result = kmc("regress", root, "-k", "zk-*", "-k", "storage/*-manual")
    assert result.exit_code == 0, result.output
    assert "2 specs:" in result.stdout
