"""`kmc explore`: step through a spec's state space in the browser, as one
reasons at a whiteboard ("and if broker 2 stops now, before the fetch comes
back?").

    kmc explore SPEC [--set NAME=VALUE] [--port N]
    kmc explore --from RUN_DIR [--property NAME] [--port N]

Serves a page on 127.0.0.1 (a free port unless --port; the address is printed
on one line) that shows the current state through the model's trace view
(checker/output/explore_html.py), the enabled actions, the path with back and
forward, which invariants hold and which `sometimes` witnesses the state
meets, random steps with a seed, and the path's export as a scenario
(`kmc scenario` replays it) and as ITF. `--from` opens a run's counterexample
at its last step. Ctrl-C stops it (exit 130).

The path is in the URL: `/?p=0.3.1.4&at=2` is the initial state 0, then the
4th, 2nd and 5th enabled action (each state's successors in the model's
deterministic order), shown at step 2 (`at`, default: the path's end; the
steps after it are what "forward" goes to). A state is expanded only when a
page shows it, so a spec whose space is infinite works; a state's successors
and its properties are kept once computed. The server answers its own paths
only, on 127.0.0.1 only, and a request it cannot serve with a 400 page (a 404
for a path it does not serve); it keeps no state but that cache, so any
number of tabs explore at once.

Listed in checker/front/cli.py (its one list of commands).
"""
from __future__ import annotations

import errno
import json
import random
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import click

from checker.front.scenario import facts_function, show
from checker.front.spec import load_spec, parse_sets
from checker.output import itf
from checker.output.explore_html import Check, Choice, Controls, PathStep, error_page, explore_page
from checker.output.traces import variables as itf_variables
from checker.output.views import view_for
from checker.search import registry
from checker.search.errors import EXIT_OK, SpecError
from model.base import ALWAYS, SOMETIMES, EvaluationError

HOST = "127.0.0.1"
MAX_STEPS = 5_000          # a path's length in a URL (a URL of ~25 KB; http.server reads 64 KB lines)
MAX_RANDOM = 1_000         # random steps asked at once
_CACHE = 200_000           # states whose successors and properties are kept
_PATH = re.compile(r"^\d{1,9}(\.\d{1,9})*$")
_STOPS = {"done": "", "deadlock": "a state without successors", "violation": "an invariant violated"}


class BadRequest(Exception):
    """A request the explorer cannot serve: answered with a 400 page."""


def path_text(path: tuple[int, ...]) -> str:
    return ".".join(map(str, path))


def url(route: str, path: tuple[int, ...], at: int | None = None, **extra: Any) -> str:
    """A link: the path, the step shown (None: the path's end) and more fields."""
    query = {"p": path_text(path)}
    if at is not None and at != len(path) - 1:
        query["at"] = str(at)
    query.update({k: str(v) for k, v in extra.items()})
    return f"{route}?{urlencode(query, safe='.')}"


def _toml(v: Any) -> str:
    """A fact's value as a scenario file writes it: TOML that `matches` reads back."""
    return show(v, toml=True)


@dataclass
class Explorer:
    """A model's state space walked by hand: the paths of the URLs, their
    pages and exports. Thread-safe (the server answers each request in a
    thread): the model and its properties are read only; the cache is locked."""

    model: Any
    properties: list
    title: str                              # the spec's name
    meta: list[tuple[str, str]]             # what the page says of the spec (label, text)
    constants: dict
    source: str = ""                        # the spec file (ITF's source)
    start: tuple[int, ...] = (0,)           # the path `/` opens
    view: Any = None
    _succ: dict = field(default_factory=dict, repr=False)
    _holds: dict = field(default_factory=dict, repr=False)
    _lock: Any = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.view is None:
            self.view = view_for(self.model)
        self.invariants = [p for p in self.properties if p.kind == ALWAYS]
        self.witnesses = [p for p in self.properties if p.kind == SOMETIMES]
        self.inits = list(self.model.init_states())
        if not self.inits:
            raise SpecError(f"model {self.model.name}/{self.model.variant} has no initial state")

    # ---- the state space, expanded where a page looks ---------------------------

    def _kept(self, table: dict, state, compute):
        with self._lock:
            got = table.get(state)
        if got is None:
            got = compute()
            with self._lock:
                if len(table) >= _CACHE:
                    table.clear()
                table[state] = got
        return got

    def successors(self, state) -> list:
        return self._kept(self._succ, state, lambda: list(self.model.successors(state)))

    def holds(self, state) -> dict[str, bool]:
        """Every property's value in `state`."""
        return self._kept(self._holds, state,
                          lambda: {p.name: bool(p.predicate(state)) for p in self.properties})

    def violated(self, state) -> list[str]:
        h = self.holds(state)
        return [p.name for p in self.invariants if not h[p.name]]

    def walk(self, path: tuple[int, ...]) -> list:
        """The trace [(None, s0), (a1, s1), ...] the path's indices choose."""
        if not path:
            raise BadRequest("the path is empty: it starts with an initial state's index (p=0)")
        if len(path) - 1 > MAX_STEPS:
            raise BadRequest(f"a path has at most {MAX_STEPS:,} steps, not {len(path) - 1:,}")
        if path[0] >= len(self.inits):
            raise BadRequest(f"there is no initial state {path[0]}: the model has {len(self.inits)} "
                             f"(0 to {len(self.inits) - 1})")
        trace = [(None, self.inits[path[0]])]
        for k, i in enumerate(path[1:], 1):
            succ = self.successors(trace[-1][1])
            if i >= len(succ):
                raise BadRequest(f"step {k} of the path takes action {i}, but "
                                 + (f"{'the initial state' if k == 1 else f'step {k - 1}'} has "
                                    f"{len(succ)} enabled action{'' if len(succ) == 1 else 's'} "
                                    f"(0 to {len(succ) - 1})" if succ else
                                    f"{'the initial state' if k == 1 else f'step {k - 1}'} has none"))
            trace.append(succ[i])
        return trace

    def path_of(self, trace: list) -> tuple[int, ...]:
        """The indices of a trace read back (a run's counterexample), or
        SpecError where the model no longer takes one of its steps."""
        try:
            path = [self.inits.index(trace[0][1])]
        except ValueError:
            raise SpecError("the counterexample's initial state is no initial state of the model "
                            "(the model changed since the run?)") from None
        for k, (action, state) in enumerate(trace[1:], 1):
            succ = self.successors(trace[k - 1][1])
            i = next((j for j, (a, s) in enumerate(succ) if s == state and str(a) == str(action)), None)
            if i is None:
                raise SpecError(f"step {k} of the counterexample, {action}, is not a step of the "
                                f"model from step {k - 1} (the model changed since the run?)")
            path.append(i)
        return tuple(path)

    # ---- random steps ---------------------------------------------------------------

    def random_steps(self, path: tuple[int, ...], n: int, seed: int) -> tuple[tuple[int, ...], int, str]:
        """(the path with up to n random steps added, how many, why it
        stopped: done, deadlock or violation). Uniform over the enabled
        actions; stops in a state without successors or one that violates an
        invariant."""
        state = self.walk(path)[-1][1]
        rng = random.Random(seed)
        taken: list[int] = []
        why = "done"
        room = MAX_STEPS - (len(path) - 1)
        while len(taken) < min(n, room):
            succ = self.successors(state)
            if not succ:
                why = "deadlock"
                break
            i = rng.randrange(len(succ))
            taken.append(i)
            state = succ[i][1]
            if self.violated(state):
                why = "violation"
                break
        return path + tuple(taken), len(taken), why

    # ---- the page ---------------------------------------------------------------------

    def page(self, path: tuple[int, ...], at: int | None, walked: str = "") -> str:
        full = self.walk(path)
        at = len(path) - 1 if at is None else at
        if not 0 <= at < len(path):
            raise BadRequest(f"at={at}: the path has states 0 to {len(path) - 1}")
        trace = full[:at + 1]
        state = trace[-1][1]
        here = self.holds(state)
        view = self.view
        met_at = {}
        for w in self.witnesses:
            met_at[w.name] = next((k for k, (_, s) in enumerate(trace) if self.holds(s)[w.name]), None)
        choices, problem = [], ""
        try:
            succ = self.successors(state)
        except EvaluationError as e:   # (a run's evaluation error: its trace ends here)
            succ, problem = [], f"The model raised an evaluation error computing the successors: {e}"
        for i, (action, nxt) in enumerate(succ):
            there = self.holds(nxt)
            choices.append(Choice(
                href=url("/", path[:at + 1] + (i,)), title=view.step_title(action),
                sentence=view.describe(action, state, nxt),
                breaks=[p.name for p in self.invariants if here[p.name] and not there[p.name]],
                meets=[w.name for w in self.witnesses if there[w.name] and met_at[w.name] is None],
                same=nxt == state))
        checks = []
        for p in self.invariants:
            note = ""
            if not here[p.name]:
                why = view.explain(p.name, trace)
                note = why.text if why is not None else ""
            checks.append(Check(p.name, ALWAYS, here[p.name], view.property_doc(p.name), note))
        for w in self.witnesses:
            k = met_at[w.name]
            note = ("" if k is None else "first met in the initial state" if k == 0 and k != at
                    else f"first met at step {k}" if k != at else "")
            checks.append(Check(w.name, SOMETIMES, here[w.name], view.property_doc(w.name), note))
        steps = [PathStep(k, "initial state" if a is None else view.step_title(a), url("/", path, k),
                          current=k == at, ahead=k > at, violates=self.violated(s))
                 for k, (a, s) in enumerate(full)]
        last = len(path) - 1
        controls = Controls(
            back=url("/", path, at - 1) if at > 0 else None,
            forward=url("/", path, at + 1) if at < last else None,
            first=url("/", path, 0) if at > 0 else None,
            last=url("/", path) if at < last else None,
            random="/random", random_fields={"p": path_text(path), "at": str(at)},
            seed=random.SystemRandom().randrange(1_000_000),
            scenario=url("/scenario.toml", path, at), itf=url("/itf.json", path, at),
            initial=[(f"{k}", url("/", (k,)), k == path[0]) for k in range(len(self.inits))])
        return explore_page(view, trace, title=self.title, meta=self.meta, choices=choices,
                            checks=checks, path=steps, controls=controls, walked=walked,
                            problem=problem)

    # ---- exports ----------------------------------------------------------------------

    def scenario(self, path: tuple[int, ...]) -> str:
        """The path as a scenario file (checker/front/scenario.py) that
        replays it: each step's action, `pick` where several distinct
        successors share its label, the facts it changed as `expect`, the
        invariants it violates as `violates`, the witnesses the path meets."""
        trace = self.walk(path)
        model, view = self.model, self.view
        facts = facts_function(model)
        lines = [f"# A path of {len(trace) - 1} step(s) through {self.title}, written by kmc explore;",
                 "# `kmc scenario FILE` replays it.",
                 f"model = {json.dumps(model.name)}", f"variant = {json.dumps(model.variant)}",
                 f"description = {json.dumps(f'A path explored from {self.source or self.title}')}"]
        if self.invariants:
            lines.append("invariants = [" + ", ".join(json.dumps(p.name) for p in self.invariants) + "]")
        met = [w.name for w in self.witnesses if any(self.holds(s)[w.name] for _, s in trace)]
        if met:
            lines.append("sometimes = [" + ", ".join(map(json.dumps, met)) + "]")
        lines += ["", "[constants]"]
        lines += [f"{k} = {_toml(v)}" for k, v in self.constants.items()]
        distinct_inits = list(dict.fromkeys(self.inits))
        init_lines = []
        if len(distinct_inits) > 1:
            init_lines.append(f"pick = {distinct_inits.index(trace[0][1]) + 1}")
        bad = self.violated(trace[0][1])
        if bad:
            init_lines.append("violates = [" + ", ".join(map(json.dumps, bad)) + "]")
        if init_lines:
            lines += ["", "[init]", *init_lines]
        try:
            before = facts(model, trace[0][1])
        except Exception:   # a facts function that fails: the steps without their facts
            before = None
        for k, (action, state) in enumerate(trace[1:], 1):
            prev = trace[k - 1][1]
            label = str(action)
            lines += ["", "[[step]]", f"action = {json.dumps(label)}"]
            same = [(a, s) for a, s in self.successors(prev) if "".join(str(a).split())
                    == "".join(label.split())]
            distinct = list(dict.fromkeys((str(a), s) for a, s in same))
            if len(distinct) > 1:
                lines.append(f"pick = {distinct.index((label, state)) + 1}")
            bad = self.violated(state)
            if bad:
                lines.append("violates = [" + ", ".join(map(json.dumps, bad)) + "]")
            if before is not None:
                now = facts(model, state)
                expect = []
                for name, value in now.items():
                    if show(before.get(name)) == show(value):
                        continue
                    try:
                        text = _toml(value)
                    except ValueError:
                        continue
                    expect.append(f"{json.dumps(name)} = {text}")
                if expect:
                    lines.append("expect = { " + ", ".join(expect) + " }")
                before = now
            sentence = view.describe(action, prev, state)
            if sentence:
                lines.append(f"note = {json.dumps(sentence)}")
        return "\n".join(lines) + "\n"

    def itf(self, path: tuple[int, ...]) -> str:
        trace = self.walk(path)
        meta = {"source": self.source, "description": f"kmc explore: a path of {len(trace) - 1} "
                f"step(s) through {self.title}", "generator": "kmc", **self.view.itf_meta()}
        obj = itf.trace_itf(trace, itf_variables(self.view, trace), self.view.itf_variable, meta)
        return json.dumps(obj, indent=1) + "\n"


# ---- the server -------------------------------------------------------------------------

def _one(query: dict, name: str, default: str | None = None) -> str | None:
    values = query.get(name)
    if not values:
        return default
    if len(values) > 1:
        raise BadRequest(f"{name} is given {len(values)} times")
    return values[0]


def _int(query: dict, name: str, default: int | None, low: int, high: int) -> int | None:
    text = _one(query, name)
    if text is None:
        return default
    if not re.fullmatch(r"-?\d{1,12}", text.strip()):
        raise BadRequest(f"{name} must be a whole number, not {text!r}")
    n = int(text)
    if not low <= n <= high:
        raise BadRequest(f"{name} must be from {low:,} to {high:,}, not {n:,}")
    return n


def _path(query: dict) -> tuple[int, ...]:
    text = _one(query, "p")
    if text is None:
        raise BadRequest("no path: p=0 is the initial state, p=0.2 its third enabled action, ...")
    if not _PATH.match(text):
        raise BadRequest(f"p must be indices joined by dots (0.3.1), not {text[:60]!r}")
    return tuple(int(x) for x in text.split("."))


ROUTES = {"/": ("p", "at", "walked", "seed", "stop"), "/random": ("p", "at", "n", "seed"),
          "/scenario.toml": ("p", "at"), "/itf.json": ("p", "at")}


class Handler(BaseHTTPRequestHandler):
    server_version = "kmc-explore"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args) -> None:   # quiet: the console has one line
        pass

    def _send(self, status: int, body: str, kind: str = "text/html; charset=utf-8",
              extra: dict | None = None) -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        # nothing from elsewhere: the page's own inline style and script only
        self.send_header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; "
                         "script-src 'unsafe-inline'; img-src data:; form-action 'self'")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _redirect(self, location: str) -> None:
        self.send_response(303)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()

    def do_GET(self) -> None:
        try:
            self._get()
        except BadRequest as e:
            self._send(400, error_page(400, "Bad Request", str(e)))
        except (BrokenPipeError, ConnectionResetError):
            pass
        except Exception as e:   # the model raised: said on the page, the server goes on
            self._send(500, error_page(500, "Internal Server Error", f"{type(e).__name__}: {e}"))

    do_HEAD = do_GET

    def _get(self) -> None:
        explorer: Explorer = self.server.explorer   # type: ignore[attr-defined]
        port = self.server.server_address[1]
        # a page of another site whose name was made to resolve to 127.0.0.1 (DNS
        # rebinding) sends its own name: refused. Any port: an ssh tunnel may map another.
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if re.fullmatch(r"[^:]+:\d+|\[[^\]]*\]:\d+", host) else host
        if name not in (HOST, "localhost", "[::1]"):
            raise BadRequest(f"this server answers to {HOST}:{port} (or localhost) only, not to host "
                             f"{host[:80]!r}")
        parts = urlsplit(self.path)
        route = parts.path
        if route not in ROUTES:
            self._send(404, error_page(404, "Not Found", f"the explorer serves no {route[:100]!r}"))
            return
        try:
            query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query),
                             max_num_fields=20)
        except ValueError as e:
            raise BadRequest(f"the query cannot be read: {e}") from None
        unknown = [k for k in query if k not in ROUTES[route]]
        if unknown:
            raise BadRequest(f"unknown field{'s' if len(unknown) > 1 else ''} "
                             f"{', '.join(repr(k[:40]) for k in unknown)} (known here: "
                             f"{', '.join(ROUTES[route])})")
        if route == "/" and not query:
            self._redirect(url("/", explorer.start))
            return
        path = _path(query)
        at = _int(query, "at", None, 0, MAX_STEPS)
        if at is not None and at >= len(path):
            raise BadRequest(f"at={at}: the path has states 0 to {len(path) - 1}")
        if route == "/random":
            n = _int(query, "n", 10, 1, MAX_RANDOM)
            seed = _int(query, "seed", 0, -(2 ** 31), 2 ** 31)
            keep = path if at is None else path[:at + 1]
            longer, taken, why = explorer.random_steps(keep, n, seed)
            self._redirect(url("/", longer, walked=taken, seed=seed, stop=why))
            return
        if route != "/":
            keep = path if at is None else path[:at + 1]
            if route == "/scenario.toml":
                body, kind = explorer.scenario(keep), "application/toml; charset=utf-8"
            else:
                body, kind = explorer.itf(keep), "application/json"
            name = f"explore-{re.sub(r'[^A-Za-z0-9_.-]', '_', explorer.title)}-{len(keep) - 1}-steps"
            ext = ".toml" if route == "/scenario.toml" else ".itf.json"
            self._send(200, body, kind, {"Content-Disposition": f'attachment; filename="{name}{ext}"'})
            return
        walked = ""
        if "walked" in query:
            taken = _int(query, "walked", 0, 0, MAX_RANDOM)
            seed = _int(query, "seed", 0, -(2 ** 31), 2 ** 31)
            stop = _one(query, "stop", "done")
            if stop not in _STOPS:
                raise BadRequest(f"stop must be one of {', '.join(_STOPS)}, not {stop!r}")
            walked = (f"{taken} random step{'' if taken == 1 else 's'} (seed {seed})"
                      + (f", stopped at {_STOPS[stop]}" if stop != "done" else "") + ".")
        self._send(200, explorer.page(path, at, walked))

    def do_POST(self) -> None:
        self._send(405, error_page(405, "Method Not Allowed", "the explorer answers GET only"),
                   extra={"Allow": "GET, HEAD"})

    do_PUT = do_DELETE = do_PATCH = do_POST


class Server(ThreadingHTTPServer):
    daemon_threads = True
    explorer: Explorer


def serve(explorer: Explorer, port: int = 0) -> Server:
    """The explorer's server on 127.0.0.1 (port 0: a free one), not started."""
    try:
        server = Server((HOST, port), Handler)
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            raise SpecError(f"port {port} on {HOST} is in use (choose another --port, or leave it "
                            f"out for a free one)") from None
        raise SpecError(f"cannot listen on {HOST}:{port}: {e.strerror or e}") from None
    server.explorer = explorer
    return server


# ---- the command --------------------------------------------------------------------------

def _constants_text(constants: dict) -> str:
    return ", ".join(f"{k} = {json.dumps(v)}" for k, v in constants.items())


def from_spec(spec_path: Path, sets) -> Explorer:
    spec = load_spec(spec_path, parse_sets(sets))
    model, properties = spec.build()
    return Explorer(model, properties, title=spec.name, source=str(spec_path),
                    constants=dict(spec.constants),
                    meta=[("spec", str(spec_path)), ("model", f"{spec.model}/{spec.variant}"),
                          ("constants", _constants_text(spec.constants))])


def from_run(run_dir: Path, prop: str | None) -> Explorer:
    """An explorer opened at the last step of a run's counterexample."""
    from checker.output import runs
    from checker.output.lasso import is_lasso
    picked, which = runs.pick_run(run_dir)
    if which is not None:
        click.echo(f"kmc: {picked}: {which}", err=True)
    run = runs.open_run(picked)
    name = run.pick(prop)
    violation = run.violation(name)
    trace = violation.trace
    config = run.summary.get("config") or {}
    _, all_props = registry.build(config["model"], config.get("variant"), config.get("constants") or {})
    names = config.get("invariants")
    if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
        names = None
    try:
        properties = registry.select_properties(all_props, names)
    except SpecError as e:
        raise SpecError(f"{picked / 'summary.json'}: {e.one_line()}") from None
    explorer = Explorer(run.model, properties, title=str(config.get("name") or picked.parent.name),
                        source=str(config.get("spec") or ""),
                        constants=dict(config.get("constants") or {}),
                        meta=[("run", str(picked)), ("counterexample", name),
                              ("model", f"{run.model.name}/{run.model.variant}"),
                              ("constants", _constants_text(config.get("constants") or {}))])
    loop = getattr(violation, "loop", None)
    if is_lasso(violation) and isinstance(loop, int):   # a temporal property's lasso
        explorer.meta.insert(2, ("lasso", f"after step {len(trace) - 1} the behaviour goes back to "
                                          f"state {loop} for ever"))
    try:
        explorer.start = explorer.path_of(trace)
    except SpecError as e:
        raise SpecError(f"{picked}: {e.one_line()}") from None
    return explorer


@click.command("explore")
@click.argument("spec_path", metavar="[SPEC]", required=False,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--from", "run_dir", metavar="RUN_DIR", type=click.Path(path_type=Path),
              help="Open a run's counterexample at its last step (a run folder, or a spec's "
                   "results folder: its newest run with one).")
@click.option("--property", "-p", "prop", metavar="NAME",
              help="With --from: which violated property's counterexample (default: the first found).")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a constant of SPEC; VALUE is a TOML value.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, metavar="N",
              help="Listen on this port of 127.0.0.1 (default: a free one).")
def explore_cmd(spec_path: Path | None, run_dir: Path | None, prop: str | None, sets, port: int) -> int:
    """Step through SPEC's state space in the browser, from its initial state
    or (--from RUN_DIR) from a counterexample.

    Serves a page on 127.0.0.1 and prints its address; Ctrl-C stops it (exit 130).
    The page's URL holds the path: reload it or send it to get the same state."""
    if (spec_path is None) == (run_dir is None):
        raise SpecError("give a SPEC or --from RUN_DIR (one of them)" if spec_path is None else
                        "give a SPEC or --from RUN_DIR, not both")
    if prop is not None and run_dir is None:
        raise SpecError("--property picks a counterexample of --from RUN_DIR")
    if sets and run_dir is not None:
        raise SpecError("--set changes a SPEC's constants; a run's (--from) are its own")
    explorer = from_spec(spec_path, sets) if run_dir is None else from_run(run_dir, prop)
    server = serve(explorer, port)
    address = f"http://{HOST}:{server.server_address[1]}/"
    what = str(spec_path) if run_dir is None else f"{explorer.meta[1][1]} of {explorer.meta[0][1]}"
    click.echo(f"kmc: exploring {what} at {address} (Ctrl-C stops)")
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return EXIT_OK


__all__ = ["Explorer", "BadRequest", "serve", "from_spec", "from_run", "explore_cmd", "url"]
