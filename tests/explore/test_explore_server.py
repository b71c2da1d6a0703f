"""`kmc explore` at the level of its HTTP server (urllib on 127.0.0.1): the
path in the URL, the counterexample of the Last Replica Standing spec walked
and flagged, --from, random steps, the exports replayed by `kmc scenario`
and checked as ITF on every model, an infinite state space, bad requests
answered with a 400 while the server stays up, two tabs at once, Ctrl-C and
bad input on the command line."""
from __future__ import annotations

import http.client
import json
import re
import signal
import socket
import subprocess
import sys
import threading
import tomllib
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

import pytest
from click.testing import CliRunner
from explore_helpers import LRS, ROOT, served

from checker.front import scenario as scenario_mod
from checker.front.cli import cli
from checker.front.explore import MAX_RANDOM, Explorer, from_run, from_spec
from checker.output.itf import validate
from checker.search import registry
from model.base import Action, Property
from model.view import TraceView

PROP = "LeaderCompletenessProperty"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


_plain = urllib.request.build_opener(NoRedirect)


def get(url: str) -> tuple[int, str, dict]:
    """(status, body, headers) of a GET, redirects not followed."""
    try:
        with _plain.open(url, timeout=60) as r:
            return r.status, r.read().decode(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(), dict(e.headers)


def choices(page: str) -> list[str]:
    return re.findall(r'<a id="choice-\d+" class="choice[^"]*" data-index="\d+" data-action="([^"]*)"', page)


def violated(page: str) -> list[str]:
    return re.findall(r'<li class="violated" data-prop="(\w+)"', page)


def without_seed(page: str) -> str:
    return re.sub(r'name="seed" value="\d+"', "", page)


@pytest.fixture(scope="module")
def lrs():
    """The Last Replica Standing spec's explorer, served."""
    explorer = from_spec(LRS, ())
    with served(explorer) as base:
        yield explorer, base


@pytest.fixture(scope="module")
def lrs_cex(lrs_run):
    """The counterexample's path (indices) and its actions' labels."""
    explorer = from_run(lrs_run, None)
    trace = explorer.walk(explorer.start)
    return explorer.start, [str(a) for a, _ in trace[1:]]


def test_the_counterexample_walked_step_by_step_is_flagged(lrs, lrs_cex):
    explorer, base = lrs
    status, _, headers = get(base + "/")
    assert status == 303 and headers["Location"] == "/?p=0"
    path, labels = lrs_cex
    assert len(labels) == 7
    status, page, headers = get(base + "/?p=0")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in headers["Content-Security-Policy"]   # nothing from elsewhere
    assert violated(page) == [] and 'id="ok"' in page
    for k in range(1, 8):
        offered = choices(page)
        assert offered[path[k]] == labels[k - 1]     # the button of the counterexample's step
        href = re.search(rf'<a id="choice-{path[k]}"[^>]*href="([^"]*)"', page).group(1)
        status, page, _ = get(base + href.replace("&amp;", "&"))
        assert status == 200
        assert f'data-step="{k}" data-steps="{k}"' in page
    assert violated(page) == [PROP, "LeaderCandidateCompletenessProperty"]
    assert re.search(rf'<h2 data-prop="{PROP}">{PROP} is violated in step 7</h2><p>Committed data lost', page)
    assert '<tr class="step violation" id="step-7"' in page
    # the witnesses this state meets, and those met earlier on the path
    assert re.search(r'<li class="met" data-prop="UncleanShutdownHappened"', page)
    assert re.search(r'<li class="met" data-prop="RecordCommitted"[^>]*><span class="pname">'
                     r'RecordCommitted</span><span class="note">first met at step 3</span>', page)
    assert re.search(r'<li class="unmet" data-prop="ReassignmentPending"[^>]*><span class="pname">'
                     r'ReassignmentPending</span></li>', page)


def test_the_url_holds_the_path_back_forward_and_branching(lrs, lrs_cex):
    explorer, base = lrs
    path, _ = lrs_cex
    p = ".".join(map(str, path))
    _, end, _ = get(f"{base}/?p={p}")
    _, again, _ = get(f"{base}/?p={p}")
    assert without_seed(end) == without_seed(again)          # a reload gives the same state
    status, back2, _ = get(f"{base}/?p={p}&at=5")
    assert status == 200 and 'data-step="5" data-steps="7"' in back2 and violated(back2) == []
    assert f'id="back" href="/?p={p}&amp;at=4"' in back2
    assert f'id="forward" href="/?p={p}&amp;at=6"' in back2
    assert f'id="last" href="/?p={p}"' in back2
    # steps 6 and 7 are still on the path, ahead
    assert re.search(r'<li class="ahead bad" data-step="7"', back2)
    assert len(re.findall(r'<tr class="step[ "]', back2)) == 6       # the table: states 0 to 5
    # branching off at step 5 drops what was ahead
    first = re.search(r'<a id="choice-0"[^>]*href="([^"]*)"', back2).group(1)
    assert first == "/?p=" + ".".join(map(str, path[:6])) + ".0"
    status, branched, _ = get(base + first)
    assert 'data-step="6" data-steps="6"' in branched and '<span class="btn off" title="forward' in branched


def test_from_a_run_opens_its_counterexample_at_the_last_step(lrs_run, lrs_cex):
    explorer = from_run(lrs_run, PROP)
    assert explorer.start == lrs_cex[0]
    with served(explorer) as base:
        status, _, headers = get(base + "/")
        assert status == 303 and headers["Location"] == "/?p=" + ".".join(map(str, lrs_cex[0]))
        _, page, _ = get(base + headers["Location"])
        assert PROP in violated(page) and 'data-step="7" data-steps="7"' in page
        assert "counterexample LeaderCompletenessProperty" in page


def test_random_steps_with_a_seed_are_reproducible(lrs):
    explorer, base = lrs
    status, _, headers = get(f"{base}/random?p=0&at=0&n=6&seed=42")
    assert status == 303
    location = headers["Location"]
    assert get(f"{base}/random?p=0&n=6&seed=42")[2]["Location"] == location
    m = re.fullmatch(r"/\?p=([\d.]+)&walked=(\d+)&seed=42&stop=(\w+)", location)
    assert m is not None, location
    path = tuple(map(int, m.group(1).split(".")))
    assert len(path) - 1 == int(m.group(2)) <= 6
    # it stops where an invariant is violated, else after the steps asked
    last = explorer.walk(path)[-1][1]
    assert (m.group(3) == "violation") == bool(explorer.violated(last))
    assert m.group(3) in ("done", "violation") and (m.group(3) != "done" or len(path) == 7)
    _, page, _ = get(base + location)
    assert "random steps (seed 42)" in page or "random step (seed 42)" in page


def test_random_steps_stop_at_the_violation(lrs_run):
    explorer = from_run(lrs_run, None)
    longer, taken, why = explorer.random_steps(explorer.start[:7], 50, 1)
    # every path from step 6 either breaks an invariant or goes on for 50 steps
    assert why in ("violation", "done")
    if why == "violation":
        assert explorer.violated(explorer.walk(longer)[-1][1])
        assert not any(explorer.violated(s) for _, s in explorer.walk(longer)[7:-1])


@pytest.mark.parametrize("query,words", [
    ("/?p=abc", "p must be indices"),
    ("/?p=0.99", "step 1 of the path takes action 99"),
    ("/?p=5", "there is no initial state 5"),
    ("/?p=0.0&at=7", "at=7: the path has states 0 to 1"),
    ("/?p=0&at=x", "at must be a whole number"),
    ("/?p=0&p=0", "p is given 2 times"),
    ("/?p=0&evil=1", "unknown field 'evil'"),
    ("/?p=", "p must be indices"),
    ("/random?p=0&n=0", "n must be from 1"),
    (f"/random?p=0&n={MAX_RANDOM + 1}", "n must be from 1"),
    ("/?p=0&walked=3&seed=1&stop=nonsense", "stop must be one of"),
    ("/scenario.toml?p=0.0.0.50", "step 3 of the path takes action 50"),
])
def test_a_bad_request_is_a_400_and_the_server_stays_up(lrs, query, words):
    _, base = lrs
    status, page, _ = get(base + query)
    assert status == 400, page[-500:]
    problem = re.search(r'<p class="explain" id="problem">([^<]*)</p>', page).group(1)
    assert words in problem.replace("&#x27;", "'")
    assert get(base + "/?p=0")[0] == 200


def test_only_its_own_paths_on_its_own_host(lrs):
    _, base = lrs
    for path in ("/etc/passwd", "/../../etc/passwd", "/favicon.ico", "/index.html", "/static/x.js"):
        assert get(base + path)[0] == 404, path
    port = int(base.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/?p=0", headers={"Host": "evil.example:80"})   # DNS rebinding
    r = conn.getresponse()
    assert r.status == 400 and b"answers to 127.0.0.1" in r.read()
    for host in ("127.0.0.1:9000", "localhost:8123", "localhost"):   # an ssh tunnel's port
        conn.request("GET", "/?p=0", headers={"Host": host})
        r = conn.getresponse()
        assert r.status == 200, host
        r.read()
    for host in ("127.0.0.1.evil.example", "evil.example", "localhost.evil:1", ""):
        conn.request("GET", "/?p=0", headers={"Host": host})
        r = conn.getresponse()
        assert r.status == 400, host
        r.read()
    conn.request("POST", "/?p=0", body=b"x")
    r = conn.getresponse()
    assert r.status == 405
    r.read()
    conn.close()
    assert get(base + "/?p=0")[0] == 200


def test_two_tabs_at_once(lrs, lrs_cex):
    """A tab that holds its connection open does not keep another from being
    served; requests from several tabs at once are each answered with their
    own path's state."""
    _, base = lrs
    port = int(base.rsplit(":", 1)[1])
    idle = socket.create_connection(("127.0.0.1", port))   # a tab that sent half a request
    idle.sendall(b"GET /?p=0 HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    try:
        path, _ = lrs_cex
        urls = [f"{base}/?p={'.'.join(map(str, path[:k + 1]))}" for k in range(8)]
        results: dict[int, tuple] = {}

        def fetch(k: int) -> None:
            results[k] = get(urls[k])

        threads = [threading.Thread(target=fetch, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        for k in range(8):
            status, page, _ = results[k]
            assert status == 200 and f'data-step="{k}" data-steps="{k}"' in page
    finally:
        idle.close()


def test_the_exported_scenario_replays_and_the_itf_validates(lrs, lrs_cex, tmp_path):
    _, base = lrs
    p = ".".join(map(str, lrs_cex[0]))
    status, text, headers = get(f"{base}/scenario.toml?p={p}&at=6")
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    toml = tmp_path / "path.toml"
    toml.write_text(text)
    data = tomllib.loads(text)
    assert [s["action"] for s in data["step"]] == lrs_cex[1][:6]
    result = scenario_mod.run_scenario(scenario_mod.load_scenario(toml))
    assert result.ok, result.failures
    # the whole counterexample: the last step announces the violations
    _, text, _ = get(f"{base}/scenario.toml?p={p}")
    toml.write_text(text)
    assert tomllib.loads(text)["step"][-1]["violates"] == [PROP, "LeaderCandidateCompletenessProperty"]
    r = CliRunner().invoke(cli, ["scenario", str(toml)])
    assert r.exit_code == 0 and "PASS path.toml: 7 steps" in r.output, r.output
    status, text, _ = get(f"{base}/itf.json?p={p}")
    itf = json.loads(text)
    assert status == 200 and validate(itf) == []
    assert [s["#meta"].get("action") for s in itf["states"]] == [None, *lrs_cex[1]]


def test_an_exported_scenario_that_no_longer_matches_fails(lrs, lrs_cex, tmp_path):
    """The replay really checks: a fact changed in the export is caught."""
    _, base = lrs
    p = ".".join(map(str, lrs_cex[0]))
    text = get(f"{base}/scenario.toml?p={p}&at=1")[1]
    assert '"b1.leo" = 2' in text
    toml = tmp_path / "wrong.toml"
    toml.write_text(text.replace('"b1.leo" = 2', '"b1.leo" = 3'))
    result = scenario_mod.run_scenario(scenario_mod.load_scenario(toml))
    assert not result.ok and any("b1.leo: expected 3, actual 2" in f for f in result.failures)


def _variants():
    return [(name, variant) for name, d in registry.models().items() for variant in d.variants]


@pytest.mark.parametrize("name,variant", _variants())
def test_every_model_through_its_view(name, variant, tmp_path):
    """Each model and variant (its defaults): random paths render as pages,
    export as scenarios that `kmc scenario` replays and as valid ITF."""
    defn = registry.model_def(name)
    constants = registry.resolve_constants(defn, variant, {})
    model, properties = registry.build(name, variant, constants)
    explorer = Explorer(model, properties, title=f"{name}-{variant}", meta=[], constants=constants)
    for seed in (1, 2):
        path, taken, _ = explorer.random_steps((0,), 12, seed)
        assert taken >= 1
        for at in (0, len(path) - 1):
            page = explorer.page(path, at)
            assert f'data-step="{at}"' in page and 'id="kmc-data"' in page
        toml = tmp_path / f"{name}-{variant}-{seed}.toml"
        toml.write_text(explorer.scenario(path))
        result = scenario_mod.run_scenario(scenario_mod.load_scenario(toml))
        assert result.ok, (toml.read_text(), result.failures)
        assert validate(json.loads(explorer.itf(path))) == []


class Count(NamedTuple):
    n: int


class Counter:
    """A space without end: n counts up for ever (or jumps by 2)."""

    name = "counter"
    variant = "standard"
    variables = Count._fields
    action_names = ("Inc", "Jump")

    def init_states(self):
        yield Count(0)

    def successors(self, s):
        yield Action("Inc"), Count(s.n + 1)
        yield Action("Jump", (2,)), Count(s.n + 2)

    def from_plain(self, values):
        return Count(*values)

    def trace_view(self):
        return TraceView(self)


class Stops(Counter):
    """Counts to 2, then has no successor."""

    def successors(self, s):
        if s.n < 2:
            yield Action("Inc"), Count(s.n + 1)


def test_a_state_without_successors():
    explorer = Explorer(Stops(), [], title="stops", meta=[], constants={})
    path, taken, why = explorer.random_steps((0,), 10, 1)
    assert path == (0, 0, 0) and taken == 2 and why == "deadlock"
    page = explorer.page(path, None)
    assert 'id="deadlock"' in page and 'id="choices"' not in page
    assert "The spec checks none." in page
    with served(explorer) as base:
        status, _, headers = get(base + "/random?p=0&n=10&seed=5")
        assert status == 303 and headers["Location"] == "/?p=0.0.0&walked=2&seed=5&stop=deadlock"
        _, page, _ = get(base + headers["Location"])
        assert "2 random steps (seed 5), stopped at a state without successors." in page


def test_an_infinite_state_space_is_expanded_only_where_shown():
    props = [Property("Small", "always", lambda s: s.n < 2_000, reads=("n",)),
             Property("Hundred", "sometimes", lambda s: s.n == 100, reads=("n",))]
    explorer = Explorer(Counter(), props, title="counter", meta=[], constants={})
    path, taken, why = explorer.random_steps((0,), 1_000, 3)
    assert taken == 1_000 and why == "done"
    assert len(explorer._succ) == 1_000          # the states the walk left, no more
    page = explorer.page(path, None)
    assert len(explorer._succ) == 1_001          # and the one shown
    assert "Jump(2)" in page and 'data-steps="1000"' in page
    far, taken, why = explorer.random_steps(path, 1_000, 4)
    assert why == "violation" and explorer.violated(explorer.walk(far)[-1][1]) == ["Small"]


# ---- the command ------------------------------------------------------------------------

def _start(*args: str) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "checker.front.cli", "explore", *args],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if m is None:
        proc.kill()
        raise AssertionError(f"no address: {line!r} {proc.stderr.read()[-2000:]}")
    return proc, m.group(0)


def test_the_command_prints_its_address_and_stops_on_ctrl_c():
    proc, address = _start(str(LRS))
    try:
        status, page, _ = get(address + "?p=0")
        assert status == 200 and "WriteRecordToLeader(1)" in choices(page)
        listening = [line for line in Path("/proc/net/tcp").read_text().splitlines()[1:]
                     if line.split()[1].endswith(f":{int(address.rsplit(':', 1)[1].strip('/')):04X}")
                     and line.split()[3] == "0A"]
        assert listening and all(line.split()[1].startswith("0100007F:") for line in listening)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert err.strip() == "kmc: interrupted"


def test_a_port_in_use_is_one_error_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "checker.front.cli", "explore", str(LRS),
                            "--port", str(port)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [f"kmc: error: port {port} on 127.0.0.1 is in use (choose another "
                                     f"--port, or leave it out for a free one)"]


@pytest.mark.parametrize("args,words", [
    (["--from", "no/such/run"], "run folder not found: no/such/run"),
    (["--from", "{run}", "--property", "NoSuchProperty"], "no counterexample for 'NoSuchProperty'"),
    ([], "give a SPEC or --from RUN_DIR"),
    ([str(LRS), "--from", "{run}"], "not both"),
    ([str(LRS), "--property", PROP], "--property picks a counterexample of --from"),
    (["no/such/spec.toml"], "no/such/spec.toml"),
    ([str(LRS), "--set", "NoSuchConstant=1"], "NoSuchConstant"),
    ([str(LRS), "--port", "70000"], "70000"),
])
def test_bad_input_is_one_error_line(lrs_run, args, words):
    args = [a.replace("{run}", str(lrs_run)) for a in args]
    r = CliRunner().invoke(cli, ["explore", *args])
    lines = [line for line in r.output.splitlines() if line.strip()]
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and lines[0].startswith("kmc: error: ") and words in lines[0], r.output


def test_a_run_folder_without_a_counterexample(tmp_path):
    out = tmp_path / "out"
    r = CliRunner().invoke(cli, ["check", str(ROOT / "specs" / "toy-twophase.toml"), "--out", str(out), "-q"])
    assert r.exit_code == 0, r.output
    run = next(out.glob("*/*"))
    r = CliRunner().invoke(cli, ["explore", "--from", str(run)])
    assert r.exit_code == 2 and "has no counterexample" in r.output, r.output


def test_explore_is_listed_with_the_commands():
    r = CliRunner().invoke(cli, ["--help"])
    assert re.search(r"^\s+explore\s+Step through SPEC's state space in the browser", r.output, re.M)
    assert "explore" in cli.list_commands(None) and cli.get_command(None, "explore")


def test_from_a_temporal_counterexample_its_lasso(tmp_path):
    """A temporal property's counterexample (a lasso) opens at its last step
    too, the cycle said in the header."""
    out = tmp_path / "out"
    spec = ROOT / "specs" / "quorum" / "liveness-crash-no-leader.toml"
    r = CliRunner().invoke(cli, ["check", str(spec), "--out", str(out), "-q"])
    assert r.exit_code == 1, r.output
    explorer = from_run(next(out.glob("*/*")), None)
    trace = explorer.walk(explorer.start)
    page = explorer.page(explorer.start, None)
    assert f'data-step="{len(trace) - 1}" data-steps="{len(trace) - 1}"' in page
    assert re.search(r"lasso after step \d+ the behaviour goes back to state \d+ for ever", page)


def _randgraph(**constants):
    defn = registry.model_def("randgraph")
    resolved = registry.resolve_constants(defn, "standard", constants)
    model, properties = registry.build("randgraph", "standard", resolved)
    return Explorer(model, properties, title="randgraph", meta=[], constants=resolved)


def test_several_initial_states(tmp_path):
    """Each initial state is a choice of the initial page; a path from any of
    them exports with the initial state's `pick`."""
    explorer = _randgraph(Initial=4)
    page = explorer.page((2,), None)
    assert re.search(r'<p id="initial">initial states: <a href="/\?p=0">0</a> <a href="/\?p=1">1</a> '
                     r'<b>2</b> <a href="/\?p=3">3</a></p>', page)
    replayed = 0
    for k in range(4):
        path, taken, _ = explorer.random_steps((k,), 6, k)
        toml = tmp_path / f"init{k}.toml"
        toml.write_text(explorer.scenario(path))
        assert tomllib.loads(toml.read_text())["init"]["pick"] == k + 1
        result = scenario_mod.run_scenario(scenario_mod.load_scenario(toml))
        assert result.ok, result.failures
        assert result.steps[-1].state == explorer.walk(path)[-1][1]
        replayed += taken
    assert replayed > 0


def test_a_state_whose_successors_raise_is_shown_with_the_error():
    explorer = _randgraph(Initial=2, ErrorNode=1)
    page = explorer.page((1,), None)
    assert re.search(r'<p class="explain" id="problem">The model raised an evaluation error computing '
                     r'the successors: node 1 cannot be evaluated</p>', page)
    assert 'id="choices"' not in page
