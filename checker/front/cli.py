"""The `kmc` command line: thin click commands over checker.front.spec, checker.search.engine
and checker.output.results.

Exit codes: 0 nothing violated, 1 a property violated (kmc check
--tlc-exit-codes: TLC's 11 deadlock, 12 safety, 13 liveness), 2 bad input
(spec, option, constant), 3 a model evaluation error (a result: its trace is
written), 130 ^C, 143 SIGTERM. Every error is one line on stderr,
`kmc: error: ...`, without a stack trace (docs/ci.md).
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click

from checker.front.expect import compare
from checker.front.options import (DEFAULT_MEMORY, MIN_FREE_DISK, DepthType, KmcGroup, OutPath,
                                   SizeType, default_max_memory, progress_printer)
from checker.front.spark_cli import add_spark_options
from checker.front.spec import UNSET, bounded_liveness_line, load_spec, parse_sets, unbounded_line
from checker.front.temporal_spec import fairness_option
from checker.output.console import report_text
from checker.output.results import ensure_writable, summary, write_run, write_run_into
from checker.output.views import view_for
from checker.search.contract import projections_of
from checker.search import registry
from checker.search.engine import (DEADLOCK, CheckOptions, CheckResult, DiskLimitError, MemoryLimitError,
                                   check as run_check)
from checker.search.checkpoint import MANIFEST, recorded_options
from checker.search.errors import (EXIT_DEADLOCK, EXIT_EVALUATION, EXIT_LIVENESS, EXIT_OK,
                                   EXIT_SAFETY, EXIT_VIOLATION, EngineEvaluationError, KmcError,
                                   SpecError)
from checker.search.result import EvaluationFailure
from checker.search.files import disk_full, new_run_id
from model.base import ModelConfigError

STOP_AFTER_ENV = "KMC_STOP_AFTER_LEVEL"  # stop after this finished level (tests)
# A run keeps its finished levels on disk, unless told otherwise, from its
# first level of this many states (its levels are then spilled to disk
# anyway; below it, starting again costs seconds). bench/checkpoint_cost.py
CHECKPOINT_FROM = 50_000


@click.group(cls=KmcGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="kmc")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """kmc: an explicit-state, TLA+-style model checker for Kafka replication protocols.

    \b
    Shell completion (in ~/.bashrc; zsh_source and fish_source alike):
      eval "$(_KMC_COMPLETE=bash_source kmc)"
    """
    if ctx.invoked_subcommand is None:  # bare `kmc`: its help
        click.echo(ctx.get_help())


@cli.command("check")
@click.argument("spec_path", metavar="SPEC", required=False,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--depth", type=DepthType(), default=UNSET,
              help="At most N steps from an initial state (overrides the spec); 'none' removes the bound.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a constant; VALUE is a TOML value: 3, false, '\"A\"', '[\"A\", \"B\"]'.")
@click.option("--continue", "keep_going", is_flag=True,
              help="Do not stop at the first violation: report every violated property.")
@click.option("--deadlock/--no-deadlock", "deadlock", default=None,
              help="Report states without successors (default: the spec's check_deadlock, off). "
                   "Not TLC's -deadlock, which turns the check OFF: TLC's -deadlock is kmc's "
                   "--no-deadlock.")
@click.option("--engine", type=click.Choice(["auto", "local", "spark"]), default="auto", show_default=True,
              help="Which engine runs the search: auto (the local engine, then every core once a "
                   "level is big enough to pay: checker/search/parallel.py), local (one process) or "
                   "spark (PySpark).")
@click.option("--workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="The auto engine's worker processes (default: one per core, and at most that; "
                   "the environment variable KMC_AUTO_WORKERS alike).")
@click.option("--out", "out_dir", type=OutPath(file_okay=False, path_type=Path),
              default=Path("results"), show_default=True, help="Results root directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
@click.option("--max-memory", "max_memory", type=SizeType(), default=DEFAULT_MEMORY, metavar="SIZE|none",
              help="Stop (exit 2) when the search's resident memory passes SIZE (8G, 500M); "
                   "default: 85% of the machine's memory; 'none': no limit.")
@click.option("--min-free-disk", "min_free_disk", type=SizeType("--min-free-disk"), default=MIN_FREE_DISK,
              metavar="SIZE|none", show_default="128M",
              help="Stop (exit 2, finished levels kept) before the disk the run keeps its levels "
                   "and spilled frontiers on has less than SIZE free, or would have once the next "
                   "level is written as the last one grew; 'none': no limit.")
@add_spark_options  # --master URL, --partitions N, --resume RUN_DIR
@click.option("--property", "temporal", multiple=True, metavar="NAME",
              help="Check this temporal property (repeatable; replaces the spec's `properties`), "
                   "under the spec's fairness (default: the model's reference fairness).")
@click.option("--fairness", "fairness", multiple=True, metavar="WF:ACTION|SF:ACTION|reference|none",
              help="The fairness of the temporal properties (repeatable, or comma-separated; "
                   "replaces the spec's `fairness`): weak or strong fairness of an action, the "
                   "model's reference fairness, or none.")
@click.option("--tlc-exit-codes", is_flag=True,
              help="Exit as TLC does on a violation: 11 a deadlock, 12 an invariant (safety), "
                   "13 a temporal property (liveness), instead of 1 for each.")
@click.option("--full-state", is_flag=True,
              help="Show state 0 with every variable on the console (the trace files always have it).")
@click.option("--checkpoint/--no-checkpoint", default=None,
              help="Keep every finished level on disk (OUT/<spec>/<run-id>/levels/, removed when "
                   "the run ends) so that an interrupted run (Ctrl-C, --max-memory, a crash) goes "
                   "on with --resume RUN_DIR. Default: from the first level of 50,000 states "
                   "(the local and auto engines).")
@click.option("--invariant", "-i", "invariants", multiple=True, metavar="NAME",
              help="Check this invariant (repeatable; replaces the spec's `invariants`; "
                   "the model's witnesses are still checked). `kmc list MODEL` names them.")
def check_cmd(spec_path: Path, depth, sets, keep_going: bool, deadlock, engine: str, workers,
              out_dir: Path, as_json: bool, quiet: bool, max_memory, min_free_disk, master, partitions,
              resume, temporal, fairness, tlc_exit_codes, full_state, checkpoint, invariants) -> int:
    """Check SPEC (a TOML spec file); results go to OUT/<spec-name>/<run-id>/.

    `kmc check --resume RUN_DIR` goes on with an interrupted run: the spec and
    the options are the run's own (kept in its folder), as TLC's -recover.

    \b
    Exit codes:
      0  nothing violated
      1  a property violated (with --tlc-exit-codes: 11 a deadlock, 12 an
         invariant, 13 a temporal property, as TLC)
      2  bad input (spec, option, constant), or a --max-memory or
         --min-free-disk stop
      3  a model evaluation error (its trace is in the run folder)
      130 interrupted (Ctrl-C), 143 terminated (SIGTERM)
    """
    import time
    from checker.front import temporal_spec as liveness_config
    from checker.front import options as front_options
    started = (front_options.PROCESS_STARTED if front_options.PROCESS_STARTED is not None
               else time.perf_counter())
    if resume is not None:   # the run's own spec and options, unless given here
        (spec_path, depth, sets, keep_going, deadlock, invariants, engine, workers, master,
         partitions) = _resumed_options(resume, spec_path, depth, sets, keep_going, deadlock,
                                        invariants, engine, workers, master, partitions)
    if spec_path is None:
        raise SpecError("missing argument SPEC (a spec file; `kmc check --resume RUN_DIR` goes "
                        "without it)")
    run_options = {"spec": str(spec_path.resolve()), "spec_digest": _digest(spec_path),
                   "depth": "spec" if depth is UNSET else depth,
                   "sets": list(sets), "continue": keep_going, "deadlock": deadlock,
                   "invariants": list(invariants), "engine": engine, "workers": workers,
                   "master": master, "partitions": partitions}
    max_memory = default_max_memory() if max_memory is DEFAULT_MEMORY else max_memory
    with registry.build_limit(max_memory):   # the model's build is held to --max-memory too
        spec = load_spec(spec_path, parse_sets(sets), depth=depth, invariants=list(invariants),
                         properties=list(temporal),
                         fairness=fairness_option(fairness) if fairness else None)
    liveness = liveness_config.validate(spec, str(spec_path))
    if workers is not None and engine != "auto":
        raise SpecError("--workers is the auto engine's (the default --engine auto; "
                        "spark: --partitions)")
    if workers is not None:
        from checker.search.parallel import cores
        if workers > cores():   # (more processes than cores only wait for each other)
            click.echo(f"kmc: --workers {workers} is more than the {cores()} cores this run may use: "
                       f"{cores()} workers", err=True)
            workers = cores()
    if liveness is not None and engine == "spark":
        raise SpecError("liveness (temporal properties) runs on the local and auto engines: the "
                        "spark engine keeps no state graph; use --engine local or auto")
    if engine != "spark" and (master or partitions):
        raise SpecError("--master and --partitions need --engine spark")
    if (resume is not None and click.get_current_context().get_parameter_source("out_dir").name == "COMMANDLINE"
            and Path(resume).resolve().parent.parent != out_dir.resolve()):   # (OUT/<spec>/<run-id>)
        raise SpecError(f"--out {out_dir} has no effect with --resume: the run goes on in its own "
                        f"folder, {resume}")
    # the local and auto engines' levels (checker/search/checkpoint.py): with
    # --checkpoint from level 0, by default from a level of CHECKPOINT_FROM states
    if checkpoint and (engine == "spark" or liveness is not None):
        raise SpecError("--checkpoint is the local and auto engines' (the spark engine keeps its "
                        "levels anyway) and not for temporal properties")
    if checkpoint is False and resume is not None and engine != "spark":
        raise SpecError("--resume goes on keeping the run's levels: drop --no-checkpoint")
    resumable = engine != "spark" and liveness is None and checkpoint is not False
    if resume is not None and engine != "spark" and liveness is not None:
        raise SpecError("--resume is for the levels of a safety check: temporal properties run "
                        "from the start")
    model, properties = spec.build()
    for line in (unbounded_line(spec, model),
                 bounded_liveness_line(model, liveness.properties if liveness is not None else ())):
        if line is not None:
            click.echo(f"kmc: warning: {line}", err=True)
    options = CheckOptions(
        max_depth=spec.depth,
        check_deadlock=spec.check_deadlock if deadlock is None else deadlock,
        stop_on_violation=not keep_going,
        fingerprint_bits=spec.fingerprint_bits,
        projection=spec.projection,
        progress=None if quiet else progress_printer,
        max_memory=max_memory,
        min_free_disk=min_free_disk,
        run_options=run_options,
    )
    ensure_writable(out_dir)  # fail before a long run, not after it
    out = sys.stderr if as_json else sys.stdout
    bound = "no depth bound" if spec.depth is None else f"depth <= {spec.depth}"
    if not quiet:  # (a progress line: with -q, bad input found later is the only line)
        click.echo(f"kmc: checking {spec_path} (model {spec.model}/{spec.variant}, {bound}, "
                   f"{len(properties)} properties"
                   + (f", {len(liveness.properties)} temporal" if liveness is not None else "") + ")", err=True)
    try:
        if liveness is not None:  # the local or auto engine, recording the state graph
            from checker.search.liveness.run import check_liveness
            result = check_liveness(model, properties, liveness, options, engine=engine,
                                    workers=workers)
            run_id = new_run_id()
        elif resumable:
            options.checkpoint_from = 0 if checkpoint else CHECKPOINT_FROM
            result, run_dir = run_resumable(spec, model, properties, options, out_dir, resume,
                                            engine, workers)
            run_id = run_dir.name
        elif engine == "spark":
            from checker.front.spark_cli import run_spark
            result, run_id, spark_run_dir, spark_error = run_spark(spec, options, out_dir, master,
                                                                   partitions, resume, quiet)
        elif engine == "auto":
            from checker.search.parallel import check_auto
            result = check_auto(model, properties, options, workers=workers)
            run_id = new_run_id()
        else:
            result = run_check(model, properties, options)
            run_id = new_run_id()
    except EngineEvaluationError as e:  # a result: the trace to where the model raised
        result = evaluation_result(e, model)
        run_dir = getattr(e, "run_dir", None)
        run_id = run_dir.name if run_dir is not None else new_run_id()
        resumable = resumable and run_dir is not None
        if result is None or engine == "spark":
            raise EngineEvaluationError(EvaluationFailure.of(e, model).line()) from None
    config = spec.config()
    config["check_deadlock"] = options.check_deadlock
    config["stop_on_violation"] = options.stop_on_violation
    obj = summary(config, result, run_id=run_id, expect=spec.expect, engine=engine)
    changed = _changes(spec_path, spec, sets, depth, invariants, temporal, fairness, keep_going,
                       deadlock)
    _compare_with_expect(obj, spec, result, changed=changed)
    view = view_for(model)  # the model's trace view: once, for the files and the console
    try:
        if engine == "spark":  # the engine made the run folder (levels, spark.log) already
            run_dir = write_run_into(spark_run_dir, obj, result, view=view)
        elif resumable:  # the run's folder holds its levels: the files go in, then the levels go
            try:
                run_dir = write_run_into(run_dir, obj, result, view=view)
            except BaseException:
                # no summary.json: the folder goes, unless its levels can be resumed
                if not (run_dir / "levels" / MANIFEST).is_file():
                    shutil.rmtree(run_dir, ignore_errors=True)
                raise
            shutil.rmtree(run_dir / "levels", ignore_errors=True)
        else:
            run_dir = write_run(out_dir, spec.name, obj, result, view=view)
    except OSError as e:   # (a full disk): the result is still shown, then this error
        write_error = SpecError(f"cannot write results under {out_dir}: {e}; the result is shown "
                                f"above, not kept")
        run_dir = None
    else:
        write_error = None
    obj["results_dir"] = str(run_dir) if run_dir is not None else None
    for error in obj.get("render_errors", ()):  # the run is kept; a page or the ITF is missing
        click.echo(f"kmc: warning: not rendered: {error}", err=True)
    obj["expect_sometimes_unreached"] = [n for n in spec.expect.get("sometimes", ())
                                         if result.sometimes.get(n) is None]
    total_s = time.perf_counter() - started
    obj["total_time_s"] = round(total_s, 3)
    click.echo(report_text(spec, result, run_dir, view=view, total_s=total_s, full_state=full_state),
               file=out)
    if "expect_note" in obj:
        click.echo(obj["expect_note"], file=out)
    if "expect_met" in obj:
        click.echo("The run matches the spec's [expect]." if obj["expect_met"] else
                   "The run does NOT match the spec's [expect]: " + "; ".join(obj["expect_problems"]) + ".",
                   file=out)
    if as_json:
        click.echo(json.dumps(obj, sort_keys=False))
    for late in (write_error, spark_error if engine == "spark" else None):
        if late is not None:   # the result the driver finished is shown; writing it or Spark failed
            late.after_summary = True
            raise late  # the result the driver finished is written and shown; Spark failed
    if result.error is not None:
        click.echo(f"kmc: error: {result.error.line()}", err=True)
        return EXIT_EVALUATION
    return exit_code(result, tlc_exit_codes)


def exit_code(result: CheckResult, tlc: bool = False) -> int:
    """0 nothing violated, 1 a property violated; with tlc (--tlc-exit-codes)
    TLC's codes for the first violation reported: 11 a deadlock, 12 an
    invariant, 13 a temporal property (tlc2/output/EC.java, ExitStatus)."""
    if not result.violations:
        return EXIT_OK
    if not tlc:
        return EXIT_VIOLATION
    from checker.output.lasso import is_lasso
    first = result.violations[0]
    if is_lasso(first):
        return EXIT_LIVENESS
    return EXIT_DEADLOCK if first.property == DEADLOCK else EXIT_SAFETY


def _resumed_options(resume: Path, spec_path, depth, sets, keep_going, deadlock, invariants,
                     engine, workers, master, partitions) -> tuple:
    """kmc check's options for --resume RUN_DIR: each not given on the
    command line is the run's own (checkpoint.recorded_options); a run
    folder of Spark's without them still says which engine it is."""
    ctx = click.get_current_context()

    def given(name: str) -> bool:
        source = ctx.get_parameter_source(name)
        return source is not None and source.name == "COMMANDLINE"

    recorded = recorded_options(resume)
    if recorded is None:
        if not given("engine") and (Path(resume) / "run.json").is_file():
            engine = "spark"
        elif spec_path is None:   # nothing to go on from: say why, not that SPEC is missing
            raise SpecError(_not_resumable(Path(resume)))
        return (spec_path, depth, sets, keep_going, deadlock, invariants, engine, workers, master,
                partitions)
    if spec_path is None and isinstance(recorded.get("spec"), str):
        spec_path = Path(recorded["spec"])
    if not given("depth") and recorded.get("depth", "spec") != "spec":
        depth = recorded["depth"]
    take = {"sets": ("sets", tuple), "keep_going": ("continue", bool), "deadlock": ("deadlock", None),
            "invariants": ("invariants", tuple), "engine": ("engine", None),
            "workers": ("workers", None), "master": ("master", None),
            "partitions": ("partitions", None)}
    values = {"sets": sets, "keep_going": keep_going, "deadlock": deadlock, "invariants": invariants,
              "engine": engine, "workers": workers, "master": master, "partitions": partitions}
    for name, (key, kind) in take.items():
        if not given(name) and key in recorded:
            values[name] = kind(recorded[key]) if kind is not None else recorded[key]
    return (spec_path, depth, values["sets"], values["keep_going"], values["deadlock"],
            values["invariants"], values["engine"], values["workers"], values["master"],
            values["partitions"])


def _digest(path: Path) -> str | None:
    """The spec file's digest, which a resume compares with its run's (None: unreadable;
    load_spec says why)."""
    import hashlib
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:32] if path.is_file() else None
    except OSError:
        return None


def _not_resumable(run_dir: Path) -> str:
    """Why `run_dir` holds no run that --resume can go on with."""
    if (run_dir / "summary.json").is_file():
        return f"{run_dir} is a finished run (it has its summary.json): nothing to resume"
    manifest = run_dir / "levels" / MANIFEST
    if manifest.is_file():
        return (f"{manifest} is damaged (not a checkpoint manifest naming the run's options); "
                f"the run cannot be resumed from it")
    if not any(run_dir.iterdir()):
        return f"{run_dir} is an empty folder, not a run folder of kmc check: nothing to resume"
    return (f"{run_dir} is not a run folder with levels to resume from (no levels/{MANIFEST}; "
            f"a run keeps its levels from the first level of {CHECKPOINT_FROM:,} states, or from "
            f"level 0 with --checkpoint)")


def _changes(spec_path: Path, spec, sets, depth, invariants, temporal, fairness, keep_going,
             deadlock) -> list[str]:
    """The options that really change the spec's run (a value equal to the
    spec's own is no change): each as the command line names it."""
    from checker.front.spec import read_toml
    data = read_toml(spec_path, "spec")
    out = []
    if depth is not UNSET and depth != data.get("depth"):
        own = data.get("depth")
        out.append(f"--depth {'none' if depth is None else depth} (the spec's: "
                   f"{'none' if own is None else own})")
    if sets:
        defn = registry.model_def(spec.model)
        own = registry.resolve_constants(defn, spec.variant, data.get("constants", {}))
        out += [f"--set {k}={json.dumps(v)}" for k, v in spec.overrides.items() if own.get(k) != v]
    if invariants and set(invariants) != set(data.get("invariants") or ()):
        out.append("--invariant " + ", ".join(invariants))
    if temporal and set(temporal) != set(data.get("properties") or ()):
        out.append("--property " + ", ".join(temporal))
    if fairness and spec.fairness != data.get("fairness", "reference"):
        out.append("--fairness " + ",".join(fairness))
    if keep_going:   # every violated property instead of the first: other figures
        out.append("--continue")
    if deadlock is not None and deadlock != spec.check_deadlock:
        out.append("--deadlock" if deadlock else "--no-deadlock")
    return out


def evaluation_result(e: EngineEvaluationError, model) -> CheckResult | None:
    """The search up to an evaluation error, as a result of outcome 'error'
    (None when the engine could not rebuild the trace to it)."""
    if e.result is None or not e.trace:
        return None
    result = e.result
    result.outcome, result.error = "error", EvaluationFailure.of(e, model)
    return result


def run_resumable(spec, model, properties, options: CheckOptions, out_dir: Path,
                  resume: Path | None, engine: str = "local", workers: int | None = None):
    """The local or auto engine keeping its finished levels in RUN_DIR/levels/
    (checker/search/checkpoint.py; from options.checkpoint_from states): a
    new run's folder, or `resume`'s, whose newest finished level it goes on
    from. Returns (result, run folder). An
    interrupted run keeps its folder when a level was finished, and says how
    to go on; else the folder goes."""
    if resume is not None:
        run_dir = Path(resume)
        if (run_dir / "summary.json").is_file():
            raise SpecError(f"{run_dir} is a finished run (it has its summary.json): nothing to resume")
        if (run_dir / "run.json").is_file():
            raise SpecError(f"{run_dir} is a spark run: resume it with --engine spark")
        if not (run_dir / "levels" / MANIFEST).is_file():
            raise SpecError(_not_resumable(run_dir))
    else:
        run_dir = out_dir / spec.name / new_run_id()
        made_spec_dir = not run_dir.parent.exists()
        run_dir.mkdir(parents=True)
    options.checkpoint_dir = str(run_dir / "levels")
    options.checkpoint_identity = {"model": spec.model, "variant": spec.variant,
                                   "constants": spec.constants}
    options.resume = resume is not None
    hook = os.environ.get(STOP_AFTER_ENV, "").strip()
    if hook:
        try:
            options.stop_after_level = int(hook)
        except ValueError:
            raise SpecError(f"{STOP_AFTER_ENV} must be a level number, not {hook!r}") from None
    try:
        if engine == "auto":  # a checkpoint of either engine resumes with either
            from checker.search.parallel import check_auto
            return check_auto(model, properties, options, workers=workers), run_dir
        return run_check(model, properties, options), run_dir
    except BaseException as e:
        if isinstance(e, EngineEvaluationError) and e.result is not None:
            e.run_dir = run_dir   # the result is written into it
            raise
        kept = (run_dir / "levels" / MANIFEST).is_file()
        if kept:
            # (a memory or disk stop's own line says how to go on)
            if not isinstance(e, (SpecError, MemoryLimitError, DiskLimitError)):
                click.echo(f"kmc: every finished level is kept; go on with: kmc check --resume "
                           f"{run_dir}", err=True)
            if isinstance(e, (KeyboardInterrupt, MemoryLimitError, DiskLimitError)):
                e.run_dir = run_dir   # a stop that resumes: --json names the folder
        elif resume is None:  # nothing kept: nothing left behind
            if isinstance(e, KeyboardInterrupt):
                click.echo("kmc: no level was kept to resume from (a run keeps its levels from "
                           f"the first of {CHECKPOINT_FROM:,} states, with --checkpoint from "
                           "level 0): run it again to start over", err=True)
            shutil.rmtree(run_dir, ignore_errors=True)
            if made_spec_dir:
                shutil.rmtree(run_dir.parent, ignore_errors=True)
        if disk_full(e):
            raise DiskLimitError(f"no space left on the disk of {run_dir.parent}: free space there"
                                 + (", then resume (above)" if kept else ", then run again")
                                 + " (--min-free-disk stops a run before the disk is full)") from None
        raise


def _constant_listing(c) -> dict:
    """A constant as plain data: name, type, default, doc, and its choices
    and bounds where it declares them."""
    out = {"name": c.name, "type": registry.type_name(c.type), "default": c.default, "doc": c.doc}
    for allowed in ("choices", "minimum", "maximum"):
        if getattr(c, allowed) is not None:
            out[allowed] = list(c.choices) if allowed == "choices" else getattr(c, allowed)
    return out


def _allowed_text(c) -> str:
    """A constant's choices and bounds, for the text listing ('' for none)."""
    parts = []
    if c.choices is not None:
        parts.append("one of " + ", ".join(map(repr, c.choices)))
    if c.minimum is not None:
        parts.append(f">= {c.minimum}")
    if c.maximum is not None:
        parts.append(f"<= {c.maximum}")
    return "; " + ", ".join(parts) if parts else ""


def _infinite(model) -> str | None:
    """The model's word on an infinite state space under its defaults (unbounded())."""
    why = getattr(model, "unbounded", None)
    why = why() if why is not None else None
    return (f"infinite with these defaults ({why}): a check needs a depth bound, other constants, "
            f"or kmc simulate") if why else None


def _model_listing(name: str, defn) -> dict:
    """One model as plain data: variants, each with its constants, properties and
    fingerprint projections."""
    out: dict = {"model": name, "doc": defn.doc, "variants": []}
    for variant, constants in defn.variants.items():
        entry: dict = {"variant": variant,
                       "constants": [_constant_listing(c) for c in constants]}
        try:
            model, props = registry.build(name, variant, {})
        except (KmcError, ModelConfigError) as e:
            entry["error"] = f"cannot build with the defaults: {' '.join(str(e).split())}"
        else:
            entry["properties"] = [{"name": p.name, "kind": p.kind, "doc": p.doc} for p in props]
            entry["properties"] += [{"name": t.name, "kind": t.kind, "form": t.form, "doc": t.doc}
                                    for t in registry.temporal_properties_for(model)]
            entry["reference_fairness"] = registry.reference_fairness_for(model)
            entry["projections"] = {v: list(vs) for v, vs in projections_of(model).items()}
            if _infinite(model):
                entry["state_space"] = _infinite(model)
            if any(c.name == "Mutants" for c in constants):
                entry["mutants"] = [{"name": m, "site": mutant.site, "doc": mutant.doc}
                                    for m, mutant in registry.mutants_of(defn, variant).items()]
        out["variants"].append(entry)
    return out


def _compare_with_expect(obj: dict, spec, result: CheckResult, changed: list) -> None:
    """Did the run give what the spec's [expect] says (as kmc regress would
    judge it)? In the summary, the report and on the console; `changed`:
    the options that changed the spec (then it is not compared)."""
    if not spec.expect:
        return
    if changed:
        obj["expect_note"] = ("Not compared with [expect]: the command line changed the spec ("
                              + "; ".join(changed) + ").")
        return
    _, problems = compare(spec.expect, result)
    obj["expect_met"] = not problems
    obj["expect_problems"] = problems


@cli.command("list")
@click.argument("model_name", metavar="[MODEL]", required=False)
@click.option("--json", "as_json", is_flag=True, help="The listing as one JSON object on stdout.")
@click.option("--markdown", "as_markdown", is_flag=True,
              help="The listing as a markdown page (docs/models.md, `make docs`).")
def list_cmd(model_name: str | None, as_json: bool, as_markdown: bool) -> int:
    """The models (or MODEL): variants, constants, properties and fingerprint projections."""
    if as_json and as_markdown:
        raise SpecError("--json and --markdown: choose one")
    models = registry.models()
    if model_name is not None:
        registry.model_def(model_name)  # unknown: one line, exit 2
        models = {model_name: models[model_name]}
    if as_json or as_markdown:
        listing = [_model_listing(n, d) for n, d in models.items()]
        if as_markdown:
            from checker.front.model_docs import models_markdown
            click.echo(models_markdown(listing), nl=False)
        else:
            click.echo(json.dumps({"models": listing}, indent=1, default=str))
        return EXIT_OK
    for name, defn in models.items():
        click.echo(f"{name}: {defn.doc}")
        every = registry.mutants_of(defn)
        shown: dict = {}    # mutant -> the variants listing it
        for variant, constants in defn.variants.items():
            click.echo(f"  variant {variant}")
            click.echo("    constants:")
            for c in constants:
                click.echo(f"      {c.name} ({registry.type_name(c.type)}, default {c.default!r}"
                           f"{_allowed_text(c)}): {c.doc}")
            try:
                model, props = registry.build(name, variant, {})
            except (KmcError, ModelConfigError) as e:
                click.echo(f"    properties: (cannot build with the defaults: {e})")
                continue
            click.echo("    properties:")
            for p in props:
                click.echo(f"      {p.name} [{p.kind}]" + (f": {p.doc}" if p.doc else ""))
            for t in registry.temporal_properties_for(model):  # checker/search/liveness
                click.echo(f"      {t.name} [temporal: {t.form}]" + (f": {t.doc}" if t.doc else ""))
            fairness = registry.reference_fairness_for(model)
            if fairness:
                click.echo(f"    reference fairness: {', '.join(fairness)}")
            for projection, variables in projections_of(model).items():
                click.echo(f"    projection {projection}: {', '.join(variables)}")
            infinite = _infinite(model)
            if infinite:
                click.echo(f"    state space: {infinite}")
            if any(c.name == "Mutants" for c in constants):
                names = list(registry.mutants_of(defn, variant))
                click.echo(f"    mutants: {', '.join(names) or 'none'}")
                for m in names:
                    shown.setdefault(m, []).append(variant)
        if shown:   # seeded bugs, once per model: Mutants = ["name", ...] (specs/mutants/)
            click.echo("  mutants (seeded bugs: the constant Mutants = [\"name\", ...]):")
            for m, variants in shown.items():
                only = (f" [{', '.join(variants)} only]"
                        if len(variants) < sum("Mutants" in {c.name for c in cs}
                                               for cs in defn.variants.values()) else "")
                click.echo(f"    {m}: {every[m].doc} (the reference's guard: {every[m].site}){only}")
    return EXIT_OK


# Every command of `kmc`, in one list: check and list above, the others in
# their own modules (none of which imports this one), imported when used.
cli.lazy = {"regress": "checker.front.regress:regress", "graph": "checker.front.graph_cli:graph",
            "trace": "checker.front.trace_cli:trace", "scenario": "checker.front.scenario:scenario_cmd",
            "simulate": "checker.front.simulate_cli:simulate_cmd", "explore": "checker.front.explore:explore_cmd"}


def main() -> None:
    import time
    from checker.front import options
    from checker.search import proc, stop
    age = proc.age()
    options.PROCESS_STARTED = time.perf_counter() - age if age is not None else None
    stop.install()   # SIGTERM stops a run as ^C does (exit 143); both noted as well as raised
    cli.main(prog_name="kmc")


if __name__ == "__main__":
    main()
