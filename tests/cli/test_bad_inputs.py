"""Bad input, the whole table: spec files, options, constants, masters and
folders. Each is exit 2 with exactly one `kmc: error:` line on stderr, and
never a traceback (click's runner would report an unhandled exception as
exit 1 with result.exception set)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from checker.front.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DIEHARD = str(ROOT / "specs" / "toy-diehard.toml")
KRAFT = 'model = "kraft"\nvariant = "kip966"\n'
QUORUM = 'model = "kraft_quorum"\nvariant = "kip996"\n'
ZK = 'model = "zk"\nvariant = "leader_epoch"\n'

# name -> (spec text or bytes, extra args, a fragment of the error line)
SPECS = {
    "malformed TOML": ('model = "diehard"\n[constants\n', [], "malformed TOML"),
    "non-UTF-8 spec": (b'model = "diehard"\n# \xff\xfe\n', [], "cannot read spec file"),
    "no model key": ('variant = "x"\n', [], "missing key 'model'"),
    "model not a string": ("model = 3\n", [], "model"),
    "unknown model": ('model = "nope"\n', [], "unknown model"),
    "unknown variant": ('model = "twophase"\nvariant = "nope"\n', [], "variant"),
    "unknown invariant": ('model = "diehard"\ninvariants = ["Nope"]\n', [], "unknown property 'Nope'"),
    "invariants not a list": ('model = "diehard"\ninvariants = "NotSolved"\n', [], "invariants"),
    "nothing to check": ('model = "diehard"\ninvariants = []\n', [], "nothing"),
    "unknown top-level key": ('model = "diehard"\ndepht = 3\n', [], "unknown key"),
    "constants not a table": ('model = "diehard"\nconstants = 3\n', [], "[constants]"),
    "unknown constant": ('model = "diehard"\n[constants]\nNope = 1\n', [], "Nope"),
    "bool for an int": ('model = "twophase"\n[constants]\nRMCount = true\n', [], "RMCount"),
    "str for a list": ('model = "twophase"\n[constants]\nRM = "r1"\n', [], "RM"),
    "negative depth in the spec": ('model = "diehard"\ndepth = -1\n', [], "depth"),
    "depth as a string": ('model = "diehard"\ndepth = "3"\n', [], "depth"),
    "check_deadlock not a bool": ('model = "diehard"\ncheck_deadlock = 1\n', [], "check_deadlock"),
    "unknown fingerprint": ('model = "diehard"\nfingerprint = "md5"\n', [], "fingerprint"),
    "unknown projection": ('model = "twophase"\nprojection = "nope"\n', [], "unknown projection 'nope'"),
    "unknown projection, by its old key": ('model = "twophase"\nview = "nope"\n', [], "unknown projection 'nope'"),
    "projection of an unknown variable": ('model = "twophase"\nprojection = ["nope"]\n', [], "nope"),
    "empty projection list": ('model = "twophase"\nprojection = []\n', [], "projection is an empty list"),
    "a variable twice in the projection": ('model = "twophase"\nprojection = ["rmState", "rmState"]\n', [],
                                           "projection names rmState more than once"),
    "projection and view both": ('model = "twophase"\nprojection = "no_msgs"\nview = "no_msgs"\n', [],
                                 "give the fingerprint projection once"),
    "negative depth in the spec, --depth given": ('model = "diehard"\ndepth = -1\n', ["--depth", "2"],
                                                   "depth must be >= 0"),
    "an integer beyond 64 bits": ('model = "diehard"\n[constants]\nBigCapacity = 99999999999999999999\n', [],
                                  "out of range"),
    "kraft BrokerCount too large to build": (KRAFT + "[constants]\nBrokerCount = 100000000000\n", [],
                                             "too large to build"),
    "unknown [expect] key": ('model = "diehard"\n[expect]\noutcome = "pass"\nfoo = 1\n', [], "foo"),
    "bad expect.outcome": ('model = "diehard"\n[expect]\noutcome = "maybe"\n', [], "outcome"),
    "unknown expected witness": ('model = "diehard"\n[expect]\nsometimes = ["Nope"]\n', [], "Nope"),
    "expect.violated not a name": ('model = "diehard"\n[expect]\nviolated = [1]\n', [], "expect.violated entry"),
    "expect.violated unknown": ('model = "diehard"\n[expect]\nviolated = "Nope"\n', [],
                                "'Nope' is no property of this model"),
    "expect.per_level_distinct not counts": ('model = "diehard"\n[expect]\nper_level_distinct = ["a"]\n', [],
                                             "expect.per_level_distinct entry"),
    "expect.distinct negative": ('model = "diehard"\n[expect]\ndistinct = -1\n', [], "expect.distinct must be >= 0"),
    "expect.depth negative": ('model = "diehard"\n[expect]\ndepth = -1\n', [], "expect.depth must be >= 0"),
    "expect.within_s without [simulate]": ('model = "diehard"\n[expect]\nwithin_s = 5\n', [],
                                           "for simulation specs"),
    "expect.within_s nan": ('model = "diehard"\n[simulate]\nwalks = 5\n[expect]\nwithin_s = nan\n', [],
                            "expect.within_s must be a number of seconds > 0"),
    "[simulate] not a table, checked by kmc check too": ('model = "diehard"\nsimulate = 3\n', [],
                                                          "[simulate] must be a table"),
    "simulate.walks negative, checked by kmc check too": ('model = "diehard"\n[simulate]\nwalks = -1\n', [],
                                                          "simulate.walks must be a positive integer"),
    "unknown simulate key, checked by kmc check too": ('model = "diehard"\n[simulate]\nwalk = 5\n', [],
                                                       "unknown key(s) 'walk' in [simulate]"),
    "simulate.weights of an unknown action": ('model = "diehard"\n[simulate.weights]\nNope = 1\n', [],
                                              "simulate.weights"),
    "an invariant as a witness": ('model = "diehard"\n[expect]\nsometimes = ["NotSolved"]\n', [],
                                  "not a witness"),
    "kraft MinISR = 0": (KRAFT + "[constants]\nMinISR = 0\n", [], "MinISR"),
    "kraft BrokerCount = 0": (KRAFT + "[constants]\nBrokerCount = 0\n", [], "BrokerCount"),
    "kraft MinISR above RF": (KRAFT + "[constants]\nMinISR = 4\n", [], "MinISR"),
    "kraft negative limit": (KRAFT + "[constants]\nFenceBrokerLimit = -1\n", [], "FenceBrokerLimit"),
    "kraft 30 brokers with reassignment": (KRAFT + "[constants]\nBrokerCount = 30\nReassignmentLimit = 1\n",
                                           [], "BrokerCount"),
    "zk RF above BrokerCount": (ZK + "[constants]\nBrokerCount = 2\nReplicationFactor = 3\n", [],
                                "ReplicationFactor"),
    "zk no values": (ZK + "[constants]\nValues = []\n", [], "Values"),
    "quorum unknown constant": (QUORUM + "[constants]\nBrokerCount = 3\n", [], "BrokerCount"),
    "quorum Hosts shorter than InitClusterSize": (
        QUORUM + '[constants]\nHosts = ["h1", "h2"]\nMaxClusterSize = 3\nMaxSpawnedServers = 3\n', [],
        "fewer than InitClusterSize"),
    "quorum Hosts shorter than MaxClusterSize": (
        QUORUM + '[constants]\nHosts = ["h1", "h2", "h3"]\nMaxSpawnedServers = 3\n', [],
        "fewer than MaxClusterSize"),
    "quorum MinClusterSize above MaxClusterSize": (
        QUORUM + "[constants]\nMinClusterSize = 4\nMaxClusterSize = 3\n", [], "MinClusterSize (4)"),
    "quorum duplicate values": (QUORUM + '[constants]\nValue = ["v1", "v1"]\n', [], "v1 more than once"),
    "quorum Hosts not a list": (QUORUM + '[constants]\nHosts = "h1"\n', [], "Hosts"),
    "quorum VoterFlush without power losses": (QUORUM + '[constants]\nVoterFlush = "lazy"\n', [],
                                               "MaxPowerLosses"),
    "quorum unknown variant": ('model = "kraft_quorum"\nvariant = "kip595"\n', [], "kip595"),
    "quorum unknown mutant": (QUORUM + '[constants]\nMutants = ["nope"]\n', [], "nope"),
}

# name -> (args after `check SPEC`, a fragment of the error line)
OPTIONS = {
    "--depth -1": (["--depth", "-1"], "--depth"),
    "--depth abc": (["--depth", "abc"], "--depth"),
    "--set without =": (["--set", "Goal"], "NAME=VALUE"),
    "--set unknown constant": (["--set", "Nope=1"], "Nope"),
    "--set bad TOML value": (["--set", "Goal=[1,"], "Goal"),
    "--set wrong type": (["--set", "Goal=true"], "Goal"),
    "--engine nope": (["--engine", "nope"], "--engine"),
    "--max-memory 0": (["--max-memory", "0G"], "--max-memory"),
    "--max-memory without unit": (["--max-memory", "12X"], "--max-memory"),
    "--min-free-disk 0": (["--min-free-disk", "0M"], "--min-free-disk"),
    "--min-free-disk without unit": (["--min-free-disk", "1000"], "--min-free-disk"),
    "--master without spark": (["--master", "local[2]"], "--engine spark"),
    "--partitions 0": (["--engine", "spark", "--partitions", "0"], "--partitions"),
    "--resume of nothing": (["--engine", "spark", "--resume", "/nonexistent/run"], "--resume"),
    "-i unknown": (["-i", "Nope"], "Nope"),
    "--property unknown": (["--property", "Nope"], "Nope"),
    "--property on an invariant": (["--property", "NotSolved"], "NotSolved"),
    "--out is a file": (["--out", DIEHARD], "--out"),
    "--out unwritable": (["--out", "/proc/kmc-nope"], "results"),
    "--out empty": (["--out", ""], "must not be empty"),
    "--master yarn": (["--engine", "spark", "--master", "yarn"], "unsupported Spark master"),
    "--master local[x]": (["--engine", "spark", "--master", "local[x]"], "bad Spark master"),
    "--master local[0]": (["--engine", "spark", "--master", "local[0]"], "N >= 1"),
    "--set beyond 64 bits": (["--set", "BigCapacity=-99999999999999999999"], "out of range"),
    "--master without port": (["--engine", "spark", "--master", "spark://127.0.0.1"], "spark://HOST:PORT"),
    "--master refused": (["--engine", "spark", "--master", "spark://127.0.0.1:1"], "cannot reach"),
}


def _assert_one_line(r):
    assert r.exit_code == 2, (r.exit_code, r.stdout, r.stderr, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("kmc: error:")]
    assert len(errors) == 1, r.stderr
    if "-q" in r.args:  # no progress lines: the error is all there is
        assert r.stderr.strip().splitlines() == errors, r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    return errors[0]


def _written(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def invoke(*args):
    r = CliRunner().invoke(cli, [str(a) for a in args])
    r.args = [str(a) for a in args]
    return r


@pytest.mark.parametrize("name", SPECS)
def test_bad_spec(tmp_path, name):
    text, extra, fragment = SPECS[name]
    spec = tmp_path / "spec.toml"
    spec.write_bytes(text if isinstance(text, bytes) else text.encode())
    line = _assert_one_line(invoke("check", spec, "--out", tmp_path / "out", "-q", *extra))
    assert fragment in line


@pytest.mark.parametrize("name", OPTIONS)
def test_bad_option(tmp_path, name):
    args, fragment = OPTIONS[name]
    line = _assert_one_line(invoke("check", DIEHARD, "-q", *(["--out", tmp_path / "out"]
                                                            if "--out" not in args else []), *args))
    assert fragment in line


@pytest.mark.parametrize("args", [
    ["simulate", DIEHARD, "-q", "--walks", "2", "--out", ""],
    ["regress", ROOT / "specs", "-k", "toy-diehard", "--out", ""],
    ["graph", DIEHARD, "--out", ""],
    ["trace", "itf", ROOT / "results" / "examples", "-o", ""],
])
def test_an_empty_output_path_is_refused(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)  # (where '' would have written)
    line = _assert_one_line(invoke(*args))
    assert "must not be empty" in line and not any(tmp_path.iterdir())


def _runs(tmp_path, *args):
    """A results folder with one run (--depth 2: passing, no counterexample)."""
    invoke("check", DIEHARD, "--out", tmp_path / "out", "-q", *(args or ("--depth", "2")))
    return tmp_path / "out" / "toy-diehard"


def _edited(tmp_path, edit):
    """A run with a counterexample whose summary.json `edit` rewrites (as a
    hand edit or another tool might): trace commands name the file, no traceback."""
    run = next(_runs(tmp_path, "--depth", "6").iterdir())
    summary = run / "summary.json"
    summary.write_text(json.dumps(edit(json.loads(summary.read_text()))))
    return run


FOLDERS = {
    "trace of a missing folder": (lambda t: ["trace", "show", t / "nope"], "not found"),
    "trace of an empty folder": (lambda t: (t / "empty").mkdir() or ["trace", "show", t / "empty"], "no run"),
    "trace of a run without counterexample": (lambda t: ["trace", "show", _runs(t)], "counterexample"),
    "trace of an unknown property": (lambda t: ["trace", "itf", _runs(t, "--depth", "6"), "-p", "Nope"], "Nope"),
    "trace of a summary that is a list": (lambda t: ["trace", "show", _edited(t, lambda s: [s])],
                                          "not a run summary"),
    "trace of a summary with a list of constants": (
        lambda t: ["trace", "itf", _edited(t, lambda s: {**s, "config": {**s["config"], "constants": [1]}})],
        "constants must be a table"),
    "trace of a summary with malformed violations": (
        lambda t: ["trace", "html", _edited(t, lambda s: {**s, "violations": [1]})], "not a run summary"),
    "regress of a missing folder": (lambda t: ["regress", t / "nope"], "nope"),
    "regress of a non-UTF-8 spec": (lambda t: (t / "s").mkdir() or (t / "s" / "a.toml").write_bytes(
        b'model = "diehard"\n# \xff\n[expect]\noutcome = "violation"\n') and ["regress", t / "s"],
        "a.toml"),
    "regress with an unwritable --out": (lambda t: ["regress", DIEHARD, "--out", "/proc/kmc-nope"], "/proc/kmc-nope"),
    "regress -j 0": (lambda t: ["regress", DIEHARD, "-j", "0"], "-j"),
    "scenario of a missing file": (lambda t: ["scenario", t / "nope.toml"], "nope.toml"),
    "list of an unknown model": (lambda t: ["list", "nope"], "unknown model"),
    "graph of a spec whose [simulate] is bad": (
        lambda t: ["graph", _written(t / "s.toml", 'model = "diehard"\n[simulate]\ndepth = 0\n')],
        "simulate.depth must be a positive integer"),
}


@pytest.mark.parametrize("name", FOLDERS)
def test_bad_folder_or_command(tmp_path, name):
    make, fragment = FOLDERS[name]
    line = _assert_one_line(invoke(*make(tmp_path)))
    assert fragment in line


def test_the_table_is_big_enough():
    assert len(SPECS) + len(OPTIONS) + len(FOLDERS) >= 40
