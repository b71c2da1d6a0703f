"""No vacuous passes: [expect] sometimes = [...] names witnesses that must be
reached; `kmc regress` fails a spec whose witness never was; witnesses are
checked even when a spec lists its invariants; `kmc check` (local, auto and
spark engines) reports an expected witness never reached."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import cli
from checker.front.spec import load_spec
from checker.search.errors import SpecError

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
KRAFT_QUICK = (SPECS / "kraft-kip966-quick.toml").read_text().split("[expect]")[0]


def kmc(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def write(folder: Path, name: str, text: str) -> Path:
    p = folder / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def twophase(extra_top: str = "", expect: str = 'outcome = "pass"\n') -> str:
    return ('model = "twophase"\n' + extra_top + '[constants]\nRM = ["r1", "r2"]\n'
            '[expect]\n' + expect)


# -- which witnesses are checked --

def test_an_invariants_list_keeps_every_witness_of_the_model(tmp_path):
    spec = load_spec(write(tmp_path, "s.toml", twophase('invariants = ["TCConsistent"]\n')))
    assert [p.name for p in spec.build()[1]] == ["TCConsistent", "AllCommitted"]
    assert spec.config()["invariants"] == ["TCConsistent", "AllCommitted"]


def test_an_invariants_list_naming_witnesses_keeps_those_and_the_expected_ones(tmp_path):
    spec = load_spec(write(tmp_path, "s.toml", (KRAFT_QUICK.replace(
        'model = "kraft"', 'model = "kraft"\ninvariants = ["LogMatchingProperty", "RecordCommitted"]')
        + '[expect]\noutcome = "pass"\nsometimes = ["UncleanShutdownHappened"]\n')))
    assert [p.name for p in spec.build()[1]] == ["LogMatchingProperty", "RecordCommitted",
                                                 "UncleanShutdownHappened"]


def test_without_an_invariants_list_every_property_is_checked(tmp_path):
    spec = load_spec(write(tmp_path, "s.toml", twophase(expect='sometimes = ["AllCommitted"]\n')))
    assert spec.invariants is None
    assert [p.name for p in spec.build()[1]] == ["TPTypeOK", "TCConsistent", "AllCommitted"]


# -- bad input --

@pytest.mark.parametrize("value, words", [
    ('["Nope"]', "'Nope': unknown witness of this model (its witnesses: AllCommitted)"),
    ('["TCConsistent"]', "'TCConsistent': an invariant, not a witness"),
    ('"AllCommitted"', "expect.sometimes must be a list of witness names, not str"),
    ('[3]', "expect.sometimes entry must be a witness name"),
])
def test_a_bad_witness_name_is_bad_input(tmp_path, value, words):
    p = write(tmp_path, "s.toml", twophase(expect=f'outcome = "pass"\nsometimes = {value}\n'))
    with pytest.raises(SpecError, match=words.replace("(", r"\(").replace(")", r"\)")):
        load_spec(p)
    for args in (["check", p, "--out", tmp_path / "r"], ["regress", p]):
        result = kmc(*args)
        assert result.exit_code == 2, result.output
        assert result.stderr.count("\n") == 1 and result.stderr.startswith("kmc: error: ")
        assert words in result.stderr and "Traceback" not in result.output


def test_a_witness_of_another_variant_is_unknown(tmp_path):
    # ElrNonEmpty exists in kip966 only
    text = (SPECS / "kraft-v3_5-last-replica-standing.toml").read_text().split("[expect]")[0]
    p = write(tmp_path, "s.toml", text + '[expect]\nsometimes = ["ElrNonEmpty"]\n')
    with pytest.raises(SpecError, match="'ElrNonEmpty': unknown witness"):
        load_spec(p)


# -- kmc regress --

def test_regress_passes_when_every_expected_witness_is_reached(tmp_path):
    p = write(tmp_path, "s.toml", twophase('invariants = ["TCConsistent"]\n',
                                           'outcome = "pass"\nsometimes = ["AllCommitted"]\n'))
    result = kmc("regress", p)
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if "s.toml" in line)
    assert "1 witness" in row and "1/1 witnessed" in row and row.endswith("OK")


def test_regress_fails_a_spec_whose_witness_is_unreachable(tmp_path):
    """The kraft quick configuration without its lossy shutdown still passes
    every invariant - vacuously as far as unclean shutdowns go: the expected
    witness UncleanShutdownHappened can never be reached, so regress fails it."""
    text = KRAFT_QUICK.replace("DataLossShutdownLimit = 1", "DataLossShutdownLimit = 0")
    assert text != KRAFT_QUICK
    p = write(tmp_path, "no-fault.toml", text + '[expect]\noutcome = "pass"\n'
                                                'sometimes = ["RecordCommitted", "UncleanShutdownHappened"]\n')
    junit = tmp_path / "j.xml"
    result = kmc("regress", p, "--junit", junit)
    assert result.exit_code == 1, result.output
    row = next(line for line in result.stdout.splitlines() if "no-fault.toml" in line)
    assert "1/2 witnessed" in row and row.endswith("FAIL")
    assert "witness UncleanShutdownHappened never reached" in result.stdout
    assert "RecordCommitted never" not in result.stdout
    assert "UncleanShutdownHappened never reached" in junit.read_text()
    # with the fault enabled the same expectation holds
    q = write(tmp_path, "fault.toml", KRAFT_QUICK + '[expect]\noutcome = "pass"\n'
                                                    'sometimes = ["RecordCommitted", "UncleanShutdownHappened"]\n')
    assert kmc("regress", q).exit_code == 0


def test_regress_fails_a_witness_beyond_the_depth_bound(tmp_path):
    p = write(tmp_path, "s.toml", twophase('depth = 2\ninvariants = ["TCConsistent"]\n',
                                           'outcome = "pass"\nsometimes = ["AllCommitted"]\n'))
    result = kmc("regress", p)
    assert result.exit_code == 1 and "witness AllCommitted never reached" in result.stdout


def test_a_violation_spec_with_an_unreached_witness_says_the_search_stopped(tmp_path):
    text = (SPECS / "toy-diehard.toml").read_text()
    p = write(tmp_path, "d.toml", text.replace("depth = 6", 'depth = 6\nsometimes = ["BothFull"]'))
    result = kmc("regress", p)   # BothFull (5 and 3) takes 2 steps: before the 6-step violation
    assert result.exit_code == 0, result.output
    p = write(tmp_path, "e.toml", text.replace("Goal = 4", "Goal = 5").replace(
        "depth = 6", 'depth = 1\nsometimes = ["BothFull"]'))
    result = kmc("regress", p)   # the big jug full in 1 step: the search stops before BothFull
    assert result.exit_code == 1, result.output
    assert ("witness BothFull never reached (the search stopped at the first violation)"
            in result.stdout)


# -- kmc check --

def test_check_reports_an_unreached_expected_witness(tmp_path):
    p = write(tmp_path, "s.toml", twophase('depth = 2\n',
                                           'outcome = "pass"\nsometimes = ["AllCommitted"]\n'))
    for engine in ("local", "auto"):
        result = kmc("check", p, "--out", tmp_path / "r", "--engine", engine, "--json", "--quiet")
        assert result.exit_code == 0, result.output   # nothing violated: the exit code is unchanged
        summary = json.loads(result.stdout.strip().splitlines()[-1])
        assert summary["expect_sometimes_unreached"] == ["AllCommitted"]
        assert "Expected witness AllCommitted was never reached" in result.stderr
    p = write(tmp_path, "t.toml", twophase('invariants = ["TCConsistent"]\n',
                                           'outcome = "pass"\nsometimes = ["AllCommitted"]\n'))
    result = kmc("check", p, "--out", tmp_path / "r", "--quiet")
    assert result.exit_code == 0
    assert "Sometimes AllCommitted: witnessed after" in result.stdout
    assert "(expected: expect.sometimes)" in result.stdout and "never reached" not in result.stdout


@pytest.mark.skipif(shutil.which("java") is None, reason="the spark engine needs Java")
def test_the_spark_engine_keeps_witnesses_and_reports_an_unreached_one(tmp_path):
    reached = write(tmp_path, "t.toml", twophase('invariants = ["TCConsistent"]\n',
                                                 'outcome = "pass"\nsometimes = ["AllCommitted"]\n'))
    unreached = write(tmp_path, "u.toml", twophase('depth = 2\ninvariants = ["TCConsistent"]\n',
                                                   'outcome = "pass"\nsometimes = ["AllCommitted"]\n'))
    for spec, left in ((reached, []), (unreached, ["AllCommitted"])):
        proc = subprocess.run([sys.executable, "-m", "checker.front.cli", "check", str(spec), "--engine", "spark",
                               "--master", "local[1]", "--out", str(tmp_path / "r"), "--json", "--quiet"],
                              capture_output=True, text=True, timeout=300, cwd=ROOT, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        summary = json.loads(proc.stdout.strip().splitlines()[-1])
        assert summary["config"]["engine"] == "spark"
        assert list(summary["sometimes"]) == ["AllCommitted"]
        assert summary["sometimes"]["AllCommitted"]["witnessed"] is (not left)
        assert summary["expect_sometimes_unreached"] == left


# -- scenarios: `sometimes` = witnesses some state of the replay satisfies --

SCENARIO = '''model = "twophase"
sometimes = SOMETIMES
[constants]
RM = ["r1"]
[[step]]
action = "RMPrepare"
[[step]]
action = "TMRcvPrepared"
[[step]]
action = "TMCommit"
[[step]]
action = "RMRcvCommitMsg"
'''


def test_a_scenario_witness_reached_passes_and_an_unreached_one_fails(tmp_path):
    ok = write(tmp_path, "ok.toml", SCENARIO.replace("SOMETIMES", '["AllCommitted"]'))
    result = kmc("scenario", ok)
    assert result.exit_code == 0 and "witnessed: AllCommitted" in result.stdout, result.output
    result = kmc("regress", ok)
    assert result.exit_code == 0 and "scenario, 4 steps, 1 witness" in result.stdout, result.output
    short = write(tmp_path, "short.toml", SCENARIO.replace("SOMETIMES", '["AllCommitted"]')
                  .split('[[step]]\naction = "TMCommit"')[0])
    result = kmc("scenario", short)
    assert result.exit_code == 1
    assert "FAIL short.toml: witness AllCommitted never reached" in result.stdout
    result = kmc("regress", short)
    assert result.exit_code == 1 and "witness AllCommitted never reached" in result.stdout


@pytest.mark.parametrize("value, words", [('["Nope"]', "unknown witness 'Nope'"),
                                          ('["TCConsistent"]', "unknown witness 'TCConsistent'"),
                                          ('"AllCommitted"', "sometimes must be a list of witness names")])
def test_a_bad_scenario_witness_is_bad_input(tmp_path, value, words):
    p = write(tmp_path, "bad.toml", SCENARIO.replace("SOMETIMES", value))
    result = kmc("scenario", p)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("\n") == 1 and words in result.stderr


# -- every passing Kafka spec shows its fault happened --

def test_every_passing_kafka_spec_lists_a_witness():
    from checker.front.regress import is_scenario
    missing = []
    for path in sorted(SPECS.rglob("*.toml")):
        rel = path.relative_to(SPECS)
        if is_scenario(path):
            import tomllib
            if not tomllib.loads(path.read_text()).get("sometimes"):
                missing.append(str(rel))
            continue
        spec = load_spec(path)
        if spec.model in ("kraft", "zk") and spec.expect.get("outcome") == "pass" \
                and not spec.expect.get("sometimes"):
            missing.append(str(rel))
    assert not missing, f"passing Kafka specs without expect.sometimes: {missing}"
