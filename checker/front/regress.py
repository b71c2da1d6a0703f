"""`kmc regress [SPEC_DIR]`: check every spec that states its expected result,
and say which expectation no longer holds.

A spec's [expect] table (checker/front/spec.py) names the outcome and, optionally,
the violated property, the exact depth (steps of the shortest counterexample;
for a pass, the most steps of any state found), the exact distinct / generated
counts and per-level counts, and the `sometimes` witnesses that must be
reached (a spec whose expected witness is never reached FAILs: its verdict
may be vacuous); `quick = true` puts the spec in the quick set
that CI runs (`--quick`). Specs without [expect] are listed as skipped.
Scenario files (checker/front/scenario.py, a worked example replayed step by step)
found under SPEC_DIR are rows too, always in the quick set: every step must hold.
So are simulation specs (a [simulate] table, checker/front/simulate_cli.py): random
walks, a violation found within expect.within_s or expect.min_walks walks without.

Each spec runs on the default engine, auto (--engine another), and on the
engines its `engines` list names, each of which must give the same figures
and counterexamples (a FAIL naming the engine and the figure otherwise);
temporal properties run on the local engine, the one that keeps a state graph.

One table row per spec (spec, expected, got, time, OK / FAIL / ERROR / SKIP),
optionally a JUnit XML file (--junit) that lists every spec found. Exit code:
0 every expectation met, 1 one is not (a wrong result, an evaluation error,
a time-out), 2 bad input (no spec found, a spec that does not load).

Listed in checker/front/cli.py (its one list of commands).
"""
from __future__ import annotations

import dataclasses
import os
import signal
import socket
import sys
import time
import tomllib
import xml.etree.ElementTree as ET
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import click

from checker.front.expect import compare, describe_expect, differences
from checker.front.options import EXIT_TERMINATED, OutPath
from checker.front.spec import Spec, check_file, load_spec
from checker.output.results import ensure_writable
from checker.search import registry, stop
from checker.search.engine import CheckOptions, check
from checker.search.errors import (EXIT_BAD_INPUT, EXIT_OK, EXIT_VIOLATION, EngineEvaluationError,
                                   KmcError, SpecError)
from checker.search.result import EvaluationFailure
from model.base import ModelConfigError

OK, FAIL, ERROR, SKIP = "OK", "FAIL", "ERROR", "SKIP"


class SpecTimeout(Exception):
    """A spec ran longer than --timeout (raised from the progress callback)."""


@dataclass
class Row:
    spec: str                  # the path as given / found
    status: str                # OK | FAIL | ERROR | SKIP
    expected: str = ""
    got: str = ""
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)   # why FAIL / ERROR / SKIP
    run_dir: str | None = None
    engines: list[str] = field(default_factory=list)   # the engines it ran on, the first compared with [expect]


def find_specs(root: Path) -> list[Path]:
    """SPEC_DIR's *.toml files (recursively, sorted), or SPEC_DIR itself if a file."""
    root = Path(root)
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise SpecError(f"spec folder not found: {root}")
    specs = sorted(p for p in root.rglob("*.toml") if not any(part.startswith(".") for part in p.parts))
    if not specs:
        raise SpecError(f"no spec (*.toml) under {root}")
    return specs


def matches(path: Path, root: Path, pattern: str) -> bool:
    """Does `-k PATTERN` (a glob) pick this spec: its path under SPEC_DIR
    without .toml (storage/kip966-minisr-lossy-manual), its file name
    without .toml, or a folder it is in (storage)? Never a substring of
    some path: `-k zk` picks the folder zk/, not every path holding "zk"."""
    from fnmatch import fnmatchcase
    path, root = Path(path), Path(root)
    rel = path.relative_to(root) if root.is_dir() and path.is_relative_to(root) else Path(path.name)
    rel = rel.with_suffix("")
    names = [rel.as_posix(), rel.name, *(p.as_posix() for p in rel.parents if p != Path("."))]
    return any(fnmatchcase(n, pattern) for n in names)


def crashed_row(path: str, e: BaseException) -> Row:
    """An ERROR row for a spec whose check raised an unexpected exception (a
    bug, not bad input): one line `<ExceptionType>: <message>`, the other specs run on."""
    return Row(spec=path, status=ERROR, problems=[" ".join(f"{type(e).__name__}: {e}".split())])


def run_spec(path: str, quick: bool, timeout: float | None, out: str | None, engine: str = "auto") -> Row:
    """Check one spec against its [expect] (runs in a worker process with -j);
    an unexpected exception of its check is an ERROR row, not the end of the set."""
    try:
        return _run_spec(path, quick, timeout, out, engine)
    except Exception as e:  # not KeyboardInterrupt / SystemExit (Terminated): those stop the set
        return crashed_row(path, e)


def _run_spec(path: str, quick: bool, timeout: float | None, out: str | None, engine: str) -> Row:
    t0 = time.perf_counter()
    row = Row(spec=path, status=OK)
    try:
        check_file(Path(path), "spec")  # not a FIFO, a device (a *.toml found under SPEC_DIR)
    except SpecError as e:
        row.status, row.problems = ERROR, [e.one_line()]
        return row
    if is_scenario(Path(path)):
        return run_scenario_file(path, t0)
    from checker.front import simulate_cli
    if simulate_cli.is_simulate_spec(Path(path)):  # random walks (kmc simulate), not BFS
        return Row(**simulate_cli.regress_row(path, quick, timeout, out))
    try:
        spec: Spec = load_spec(path)
    except (KmcError, ModelConfigError) as e:
        row.status, row.problems = ERROR, [" ".join(str(e).split())]
        return row
    expect = spec.expect
    row.expected = describe_expect(expect) if expect else "-"
    if not expect:
        row.status, row.problems = SKIP, ["no [expect] table"]
        return row
    if quick and not expect.get("quick", False):
        row.status, row.problems = SKIP, ["not in the quick set (expect.quick)"]
        return row

    def progress(info: dict) -> None:
        if timeout is not None and time.perf_counter() - t0 > timeout:
            raise SpecTimeout(info.get("level"))

    # the default engine first (liveness: the local or auto one, which keep a
    # state graph), then the spec's further engines, each compared with it
    first = "local" if spec.properties and engine == "spark" else engine
    engines = [first] + [e for e in spec.engines if e != first]
    row.engines = engines
    results: dict = {}
    try:
        model, props = spec.build()
        options = CheckOptions(max_depth=spec.depth, check_deadlock=spec.check_deadlock,
                               stop_on_violation=True, fingerprint_bits=spec.fingerprint_bits,
                               projection=spec.projection, progress=progress if timeout is not None else None,
                               progress_interval=1.0)
        for e in engines:
            results[e] = RUNNERS[e](spec, model, props, dataclasses.replace(options))
    except SpecTimeout as e:
        row.status, row.got = FAIL, f"timed out in level {e.args[0]}"
        row.problems = [f"no result within --timeout {timeout:g} s"]
        row.seconds = time.perf_counter() - t0
        return row
    except KmcError as e:   # an evaluation error (exit 3) is a result that is not the expected one
        row.status, row.got = FAIL, "evaluation error"
        row.problems = [EvaluationFailure.of(e, model).line() if isinstance(e, EngineEvaluationError)
                        else e.one_line()]
        row.seconds = time.perf_counter() - t0
        return row
    row.seconds = time.perf_counter() - t0
    result = results[first]
    row.got, row.problems = compare(expect, result)
    differ = [f"engine {e} differs from {first}: {d}" for e in engines[1:]
              for d in differences(result, results[e])]
    if len(engines) > 1 and not differ:
        row.got += f" ({' = '.join(engines)})"
    row.problems += differ
    row.status = FAIL if row.problems else OK
    if out is not None:
        from checker.output.results import summary, write_run
        from checker.search.files import new_run_id
        config = spec.config()
        config["check_deadlock"] = options.check_deadlock
        config["stop_on_violation"] = True
        obj = summary(config, result, run_id=new_run_id(), expect=expect, engine=first)
        try:
            row.run_dir = str(write_run(Path(out), spec.name, obj, result, model=model))
        except KmcError as e:  # its results folder cannot be made (a file in its place): bad input
            row.status, row.problems = ERROR, [e.one_line()]
    return row


def _auto(spec, model, props, options):
    if spec.properties:  # temporal properties: the graph-recording search (checker/search/liveness)
        from checker.front.temporal_spec import validate
        from checker.search.liveness.run import check_liveness
        return check_liveness(model, props, validate(spec), options, engine="auto")
    from checker.search.parallel import check_auto
    return check_auto(model, props, options)


def _local(spec, model, props, options):
    if spec.properties:  # temporal properties: the graph-recording search (checker/search/liveness)
        from checker.front.temporal_spec import validate
        from checker.search.liveness.run import check_liveness
        return check_liveness(model, props, validate(spec), options)
    return check(model, props, options)


def _spark(spec, model, props, options):
    """On Spark (local[*], or the session running), its levels in a
    temporary folder removed after."""
    import shutil
    import tempfile
    from checker.search.spark import check_spark
    folder = tempfile.mkdtemp(prefix="kmc-regress-spark-")
    try:
        return check_spark(spec, options, run_dir=Path(folder) / "run")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# engine name -> fn(spec, model, properties, options) -> CheckResult
RUNNERS = {"auto": _auto, "local": _local, "spark": _spark}


def is_scenario(path: Path) -> bool:
    """A scenario file (checker/front/scenario.py: [[step]] tables) rather than a spec."""
    try:
        with open(path, "rb") as f:
            return "step" in tomllib.load(f)
    except (OSError, ValueError):  # TOMLDecodeError, UnicodeDecodeError
        return False   # load_spec reports it


def run_scenario_file(path: str, t0: float) -> Row:
    """A worked example replayed step by step: every step's facts and every
    invariant must hold (always in the quick set: a scenario takes a second)."""
    from checker.front.scenario import load_scenario, run_scenario
    row = Row(spec=path, status=OK)
    try:
        sc = load_scenario(path)
    except (KmcError, ModelConfigError) as e:
        row.status, row.problems = ERROR, [" ".join(str(e).split())]
        return row
    n = len(sc.steps) - 1
    row.expected = f"scenario, {n} steps" + (f", {len(sc.witnesses)} witness"
                                             f"{'es' if len(sc.witnesses) > 1 else ''}"
                                             if sc.witnesses else "")
    try:
        result = run_scenario(sc)
    except KmcError as e:
        row.status, row.got, row.problems = FAIL, "evaluation error", [e.one_line()]
    else:
        passed = sum(r.ok for r in result.steps[1:])
        row.got = f"{passed}/{n} steps hold"
        if sc.witnesses:
            missed = len(result.unreached)
            row.got += f", {len(sc.witnesses) - missed}/{len(sc.witnesses)} witnessed"
        row.problems = result.failures
        row.status = OK if result.ok else FAIL
    row.seconds = time.perf_counter() - t0
    return row


def _expected_states(path: Path) -> int:
    """expect.distinct of a spec file (0 if none or unreadable): its cost, roughly."""
    try:
        check_file(path, "spec")
        with open(path, "rb") as f:
            n = tomllib.load(f).get("expect", {}).get("distinct", 0)
        return n if isinstance(n, int) else 0
    except (OSError, ValueError, AttributeError, SpecError):  # TOMLDecodeError, UnicodeDecodeError
        return 0


def _run_star(args) -> Row:
    """One spec in a -j worker. SIGTERM (from the parent: _stop_workers) stops
    its check as `kill` stops one, and the worker with it."""
    signal.signal(signal.SIGTERM, stop.on_stop_signal)
    try:
        return run_spec(*args)
    except KeyboardInterrupt:
        os._exit(EXIT_TERMINATED)   # not taking the next spec
    finally:
        signal.signal(signal.SIGTERM, _quit)


def _pool_worker() -> None:
    """A -j worker leaves ^C to the parent, which stops it (_stop_workers):
    a terminal's ^C reaches every process of its group at once."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _quit)


def _quit(signum, frame) -> None:
    os._exit(EXIT_TERMINATED)   # a -j worker between two specs: nothing to stop cleanly


def _stop_workers() -> None:
    """SIGTERM to the -j workers (each stops its check as `kill` stops one,
    its forked workers with it), then SIGKILL to any still there after 10 s."""
    import multiprocessing
    workers = multiprocessing.active_children()
    for p in workers:
        p.terminate()
    for p in workers:
        p.join(10)
        if p.is_alive():
            p.kill()
            p.join(5)


def junit_xml(rows: list[Row], total_seconds: float) -> str:
    counts = {s: sum(r.status == s for r in rows) for s in (FAIL, ERROR, SKIP)}
    attrs = {"name": "kmc regress", "tests": str(len(rows)), "failures": str(counts[FAIL]),
             "errors": str(counts[ERROR]), "skipped": str(counts[SKIP]), "time": f"{total_seconds:.3f}"}
    suites = ET.Element("testsuites", attrs)
    suite = ET.SubElement(suites, "testsuite", {**attrs, "name": "kmc-regress",
                                                "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S"),
                                                "hostname": socket.gethostname()})
    for r in rows:
        p = Path(r.spec)
        case = ET.SubElement(suite, "testcase", {"classname": "kmc.regress." + (p.parent.as_posix().replace("/", ".") or "."),
                                                 "name": r.spec, "time": f"{r.seconds:.3f}",
                                                 "file": r.spec})
        detail = f"expected: {r.expected}\ngot: {r.got}\n" + "\n".join(r.problems)
        if r.status == FAIL:
            el = ET.SubElement(case, "failure", {"message": "; ".join(r.problems), "type": "ExpectationNotMet"})
            el.text = detail
        elif r.status == ERROR:
            el = ET.SubElement(case, "error", {"message": "; ".join(r.problems), "type": "BadSpec"})
            el.text = detail
        elif r.status == SKIP:
            ET.SubElement(case, "skipped", {"message": "; ".join(r.problems)})
        out = ET.SubElement(case, "system-out")
        out.text = (f"expected: {r.expected}\ngot: {r.got}" + (f"\nresults: {r.run_dir}" if r.run_dir else "")
                    + (f"\nengines: {', '.join(r.engines)}" if r.engines else ""))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


# ---- the result tables of the docs (`kmc regress --markdown`) -----------------
#
# Generated from the specs' own [expect] tables, which `kmc regress` (CI: the
# whole set) checks, so a table cannot claim what is not checked. A page
# (docs/findings.md) holds them between marker comments; --update-readme FILE
# rewrites them (`make docs`):
#   <!-- BEGIN kmc regress --markdown storage,mutants -->  (groups; none: all)
#   ...
#   <!-- END kmc regress --markdown -->

TABLE_BEGIN = "<!-- BEGIN kmc regress --markdown"
TABLE_END = "<!-- END kmc regress --markdown -->"
def spec_group(path: Path, root: Path) -> str:
    """A spec's table: its folder under SPEC_DIR (storage, mutants, ...), or
    for a file at the top the prefix of its name (kraft-..., zk-..., toy-...)."""
    rel = path.relative_to(root) if path.is_relative_to(root) else Path(path.name)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem.split("-")[0]


def fault_budget(model: str, variant: str, constants: dict) -> str:
    """The spec's constants in a few words: the model's own wording
    (ModelDef.budget), else every constant that differs from its default."""
    defn = registry.model_def(model)
    defaults = {c.name: c.default for c in defn.variants[variant]}
    if defn.budget is not None:
        return defn.budget(constants, defaults)
    parts = [f"{name} {value}" for name, value in constants.items() if value != defaults.get(name)]
    return "; ".join(parts) or "-"


def table_row(path: Path, root: Path) -> dict[str, str]:
    """One row of the result tables, from the spec (or scenario) file alone."""
    def md(text: str) -> str:
        return str(text).replace("|", "\\|")
    name = path.relative_to(root).with_suffix("").as_posix() if path.is_relative_to(root) else path.stem
    check_file(path, "spec")  # not a FIFO, a device: is_scenario would read it
    if is_scenario(path):
        from checker.front.scenario import load_scenario
        sc = load_scenario(path)
        return {"spec": name, "about": md(_first_sentence(sc.description)),
                "model": f"{sc.model_name}/{sc.variant}",
                "budget": fault_budget(sc.model_name, sc.variant, sc.constants),
                "checks": f"all {len(sc.properties)} invariants, every step",
                "outcome": f"scenario: {len(sc.steps) - 1} steps hold", "depth": str(len(sc.steps) - 1),
                "distinct": "-", "witnesses": ", ".join(p.name for p in sc.witnesses) or "-"}
    spec = load_spec(path)
    e = spec.expect
    model, props = spec.build()
    always = [p.name for p in props if p.kind == "always"]
    _, every = registry.build(spec.model, spec.variant, spec.constants)
    n_always = sum(p.kind == "always" for p in every)
    checks = f"all {n_always} invariants" if len(always) == n_always else ", ".join(always)
    if spec.properties:  # temporal properties (checker/search/liveness), under their fairness
        fairness = spec.fairness if spec.fairness is not None else "reference"
        checks = ", ".join(([checks] if checks else []) + list(spec.properties)) + (
            f" (fairness: {fairness})" if isinstance(fairness, str) else
            f" (fairness: {', '.join(fairness) or 'none'})")
    wanted = e.get("violated")
    names = [wanted] if isinstance(wanted, str) else list(wanted or [])
    if e.get("outcome") == "violation" or names:
        outcome = "violated: " + ", ".join(names) if names else "violation"
        depth = str(e["depth"]) if "depth" in e else "-"
        if spec.properties and any(n in spec.properties for n in names):
            outcome += " (a lasso: steps = its prefix + cycle)"
    elif e.get("outcome") == "pass":
        outcome = "pass, every reachable state" if spec.depth is None else f"pass within {spec.depth} steps"
        if spec.properties:
            outcome += " and every fair behaviour"
        depth = str(e["depth"]) if "depth" in e else ("all" if spec.depth is None else f"<= {spec.depth}")
    else:
        outcome, depth = "(no [expect])", "-"
    from checker.front import simulate_cli
    if simulate_cli.is_simulate_spec(path):  # random walks: the outcome says how it was reached
        outcome, depth = (simulate_cli.table_cells(path, e)[k] for k in ("outcome", "depth"))
    return {"spec": name, "about": md(_first_sentence(spec.description)),
            "model": f"{spec.model}/{spec.variant}",
            "budget": md(fault_budget(spec.model, spec.variant, spec.constants)),
            "checks": md(checks), "outcome": md(outcome), "depth": depth,
            "distinct": f"{e['distinct']:,}" if "distinct" in e else "-",
            "witnesses": ", ".join(e.get("sometimes", [])) or "-"}


def _first_sentence(text: str) -> str:
    text = " ".join(text.split())
    cut = text.find(". ")
    return text if cut < 0 else text[:cut + 1]


_COLUMNS = (("spec", "spec"), ("about", "about"), ("model", "model/variant"), ("budget", "fault budget"),
            ("checks", "properties"), ("outcome", "expected outcome"), ("depth", "steps"),
            ("distinct", "distinct"), ("witnesses", "witnesses reached"))


def markdown_tables(root: Path, groups: list[str] | None = None) -> str:
    """The result tables of the specs under root: one per group (all, or
    those named, in that order), each under a bold line naming it."""
    root = Path(root)
    by_group: dict[str, list[Path]] = {}
    for p in find_specs(root):
        by_group.setdefault(spec_group(p, root), []).append(p)
    names = groups if groups else sorted(by_group)
    unknown = [g for g in names if g not in by_group]
    if unknown:
        raise SpecError(f"no spec group {', '.join(map(repr, unknown))} under {root} "
                        f"(groups: {', '.join(sorted(by_group))})")
    out = []
    for g in names:
        rows = []
        for p in by_group[g]:
            try:
                rows.append(table_row(p, root))
            except (KmcError, ModelConfigError) as e:
                text = " ".join(str(e).split())
                raise SpecError(text if text.startswith(str(p)) else f"{p}: {text}") from None
        label = f"{root.name}/{g}/" if (root / g).is_dir() else f"{root.name}/{g}-*.toml"
        out.append(f"**{label}** ({len(rows)} spec{'s' if len(rows) != 1 else ''})\n")
        columns = [(k, t) for k, t in _COLUMNS if k != "about" or any(r["about"] for r in rows)]
        out.append("| " + " | ".join(title for _, title in columns) + " |")
        out.append("|" + "|".join("---:" if key in ("depth", "distinct") else "---" for key, _ in columns) + "|")
        for r in rows:
            out.append("| " + " | ".join(f"`{r[k]}`" if k == "spec" else r[k] for k, _ in columns) + " |")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def readme_blocks(text: str) -> list[tuple[int, int, list[str] | None]]:
    """Each generated block of a README: (start of its content, end of its
    content, its groups or None for all)."""
    blocks, pos = [], 0
    while (b := text.find(TABLE_BEGIN, pos)) >= 0:
        close = text.find("-->", b)
        if close < 0:
            raise SpecError("a README table marker is not closed (-->)")
        words = text[b + len(TABLE_BEGIN):close].replace(",", " ").split()
        start = text.index("\n", close) + 1
        end = text.find(TABLE_END, start)
        if end < 0:
            raise SpecError(f"README table block without its end marker {TABLE_END}")
        blocks.append((start, end, words or None))
        pos = end + len(TABLE_END)
    return blocks


def render_readme(text: str, root: Path) -> str:
    """The README text with every generated block regenerated from the specs."""
    out, pos = [], 0
    for start, end, groups in readme_blocks(text):
        out += [text[pos:start], markdown_tables(root, groups)]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "~"


@click.command("regress")
@click.argument("spec_dir", metavar="[SPEC_DIR]", required=False, default="specs",
                type=click.Path(path_type=Path))
@click.option("--quick", is_flag=True, help="Only the specs whose [expect] says quick = true.")
@click.option("--junit", "junit", type=click.Path(dir_okay=False, path_type=Path),
              help="Write a JUnit XML report (every spec found is a test case).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS",
              help="Fail a spec that has no result after SECONDS.")
@click.option("-k", "patterns", metavar="PATTERN", multiple=True,
              help="Only the specs PATTERN matches (a glob: storage/*-manual, 'zk-*', a file name "
                   "without .toml, or a folder under SPEC_DIR); given again, any of them.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Check this many specs at once (one process each).")
@click.option("--engine", type=click.Choice(["auto", "local", "spark"]), default="auto", show_default=True,
              help="The engine every spec runs on (a spec's `engines` adds others, compared with it).")
@click.option("--out", "out_dir", type=OutPath(file_okay=False, path_type=Path),
              help="Also write each run's results folder under this directory.")
@click.option("--markdown", is_flag=True,
              help="Run nothing: print the result tables (markdown) made from the specs' [expect].")
@click.option("--update-readme", "readme", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="Run nothing: regenerate the result tables between the marker comments of this "
                   "file (<!-- BEGIN kmc regress --markdown [GROUPS] --> ... <!-- END ... -->).")
def regress(spec_dir: Path, quick: bool, junit: Path | None, timeout: float | None, patterns: tuple,
            jobs: int, engine: str, out_dir: Path | None, markdown: bool, readme: Path | None) -> int:
    """Check every spec under SPEC_DIR (default: specs/) against its [expect]."""
    if markdown or readme is not None:
        _no_run_options("--markdown" if markdown else "--update-readme")
        return _tables(spec_dir, markdown, readme)
    specs = find_specs(spec_dir)
    if patterns:
        specs = [p for p in specs if any(matches(p, spec_dir, k) for k in patterns)]
        if not specs:
            raise SpecError(f"no spec under {spec_dir} matches {' or '.join(map(repr, patterns))}")
    if junit is not None:
        _ensure_file_writable(junit)  # fail before the runs, not after them
    if out_dir is not None:
        ensure_writable(out_dir)  # fail before a long run, not after it
    width = max(len(str(p)) for p in specs)
    header = f"{'spec':<{width}}  {'expected':<44}  {'got':<58}  {'time':>8}  result"
    click.echo(header)
    click.echo("-" * len(header))
    t0 = time.perf_counter()
    args = [(str(p), quick, timeout, str(out_dir) if out_dir else None, engine) for p in specs]
    def show(r: Row) -> None:
        secs = f"{r.seconds:,.1f}s" if r.status in (OK, FAIL) else "-"
        click.echo(f"{r.spec:<{width}}  {_fit(r.expected, 44):<44}  {_fit(r.got, 58):<58}  {secs:>8}  {r.status}")
        if r.status in (FAIL, ERROR):
            for p in r.problems:
                click.echo(f"{'':<{width}}  ! {p}")

    finished: dict[int, Row] = {}
    try:
        if jobs > 1 and len(args) > 1:
            _run_parallel(args, specs, jobs, lambda i, r: (finished.__setitem__(i, r), show(r)))
        else:
            for i, a in enumerate(args):
                finished[i] = run_spec(*a)
                show(finished[i])
    except BaseException:
        # ^C, SIGTERM: the rows of the specs finished are reported (and the
        # JUnit written, the others as skipped) before the stop goes on
        rows = [finished.get(i) or Row(spec=a[0], status=SKIP, problems=["not run: interrupted"])
                for i, a in enumerate(args)]
        click.echo(f"interrupted: {len(finished)} of {len(args)} specs finished")
        _write_junit(junit, rows, time.perf_counter() - t0)
        raise
    rows = [finished[i] for i in range(len(args))]   # (path order: the JUnit, the counts)
    total = time.perf_counter() - t0
    counts = {s: sum(r.status == s for r in rows) for s in (OK, FAIL, ERROR, SKIP)}
    click.echo(f"{len(rows)} specs: {counts[OK]} OK, {counts[FAIL]} FAIL, {counts[ERROR]} ERROR, "
               f"{counts[SKIP]} skipped, in {total:,.1f}s")
    _write_junit(junit, rows, total)
    if counts[ERROR]:  # bad input: one line on stderr too (the rows say which specs)
        bad = [r for r in rows if r.status == ERROR]
        more = f" (and {len(bad) - 1} more spec(s) that do not load)" if len(bad) > 1 else ""
        click.echo(f"kmc: error: {bad[0].problems[0] if bad[0].problems else bad[0].spec}{more}", err=True)
        return EXIT_BAD_INPUT
    return EXIT_VIOLATION if counts[FAIL] else EXIT_OK


def _run_parallel(args: list, specs: list, jobs: int, done) -> None:
    """Every spec in a pool of `jobs` processes, the biggest state spaces
    first (the longest runs end the set soonest that way); done(index, row)
    as each finishes, so a row shows as soon as its spec has one."""
    import multiprocessing
    from concurrent.futures import as_completed
    ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    with ProcessPoolExecutor(max_workers=min(jobs, len(args)), mp_context=ctx,
                             initializer=_pool_worker) as pool:
        order = sorted(range(len(args)), key=lambda i: -_expected_states(specs[i]))
        futures = {pool.submit(_run_star, args[i]): i for i in order}
        try:
            for future in as_completed(futures):
                i = futures[future]
                try:
                    row = future.result()
                except Exception as e:  # the worker died (BrokenProcessPool) or its row did not cross
                    row = crashed_row(args[i][0], e)
                done(i, row)
        except BaseException:
            # ^C, SIGTERM: the specs queued never start and the running ones
            # stop now (leaving the pool would wait for all of them)
            pool.shutdown(wait=False, cancel_futures=True)
            _stop_workers()
            raise


def _write_junit(junit: Path | None, rows: list, total: float) -> None:
    if junit is None:
        return
    from checker.search.files import write_atomic
    try:
        write_atomic(junit, junit_xml(rows, total))
    except OSError as e:
        raise SpecError(f"cannot write {junit}: {e}") from None
    click.echo(f"JUnit report: {junit}")


# the options of a run, which --markdown / --update-readme (run nothing) cannot honour
_RUN_OPTIONS = (("quick", "--quick"), ("junit", "--junit"), ("timeout", "--timeout"),
                ("patterns", "-k"), ("jobs", "--jobs"), ("engine", "--engine"), ("out_dir", "--out"))


def _no_run_options(mode: str) -> None:
    """SpecError for a run option given with --markdown / --update-readme:
    they run nothing, so it would be silently ignored."""
    from click.core import ParameterSource
    ctx = click.get_current_context()
    given = [flag for name, flag in _RUN_OPTIONS
             if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT)]
    if given:
        raise SpecError(f"{', '.join(given)} {'has' if len(given) == 1 else 'have'} no effect with "
                        f"{mode} (it runs nothing: the tables come from the specs' [expect])")


def _ensure_file_writable(target: Path) -> None:
    """SpecError unless a file can be written at `target` (its folder made if
    need be, a temp file created and removed in it): before the runs, not
    after them."""
    import tempfile
    try:
        real = Path(os.path.realpath(target))  # write_atomic follows a symlink
        if real.is_dir():
            raise IsADirectoryError(f"{target} is a folder")
        real.parent.mkdir(parents=True, exist_ok=True)
        if real.exists() and not real.is_file():
            return  # a device, a FIFO: written directly (write_atomic), not probed
        try:
            fd, probe = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".probe")
        except OSError as e:
            raise SpecError(f"cannot write {target}: no file can be created in {real.parent} "
                            f"({e.strerror or e})") from None
        os.close(fd)
        os.unlink(probe)
    except (FileExistsError, NotADirectoryError):
        raise SpecError(f"cannot write {target}: a part of its folder's path is a file, not a folder") from None
    except OSError as e:
        raise SpecError(f"cannot write {target}: {e.strerror or e}") from None


def _tables(spec_dir: Path, markdown: bool, readme: Path | None) -> int:
    if markdown:
        click.echo(markdown_tables(spec_dir), nl=False)
    if readme is not None:
        from checker.search.files import write_atomic
        try:
            text = readme.read_text(encoding="utf-8")
        except UnicodeDecodeError as e:
            raise SpecError(f"cannot read {readme}: not UTF-8 text (byte {e.start}: "
                            f"{e.object[e.start:e.start + 1]!r})") from None
        except OSError as e:
            raise SpecError(f"cannot read {readme}: {e.strerror or e}") from None
        if not readme_blocks(text):
            raise SpecError(f"{readme}: no generated block ({TABLE_BEGIN} ... -->)")
        new = render_readme(text, spec_dir)
        if new != text:
            try:
                write_atomic(readme, new)
            except OSError as e:
                raise SpecError(f"cannot write {readme}: {e.strerror or e}") from None
        click.echo(f"{readme}: {len(readme_blocks(text))} table block(s) "
                   f"{'rewritten' if new != text else 'already up to date'}", err=True)
    return EXIT_OK
