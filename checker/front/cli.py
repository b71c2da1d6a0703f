"""The `kmc` command line: thin click commands over checker.front.spec, checker.search.engine
and checker.output.results.

Exit codes: 0 nothing violated, 1 a property violated, 2 bad input (spec,
option, constant), 3 a model evaluation error. Every error is one line on
stderr, `kmc: error: ...`, without a stack trace.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import click

from checker.front import graph_cli, regress, scenario, simulate_cli, trace_cli
from checker.front.expect import compare
from checker.front.options import (DEFAULT_MEMORY, MIN_FREE_DISK, DepthType, KmcGroup, OutPath,
                                   SizeType, default_max_memory, progress_printer)
from checker.front.spark_cli import add_spark_options
from checker.front.spec import UNSET, load_spec, parse_sets
from checker.output.console import report_text
from checker.output.results import ensure_writable, summary, write_run, write_run_into
from checker.output.views import view_for
from checker.search.contract import projections_of
from checker.search import registry
from checker.search.engine import (CheckOptions, CheckResult, DiskLimitError, MemoryLimitError,
                                   check as run_check)
from checker.search.checkpoint import MANIFEST
from checker.search.errors import EXIT_OK, EXIT_VIOLATION, KmcError, SpecError
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
@click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--depth", type=DepthType(), default=UNSET,
              help="At most N steps from an initial state (overrides the spec); 'none' removes the bound.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a constant; VALUE is a TOML value: 3, false, '\"A\"', '[\"A\", \"B\"]'.")
@click.option("--continue", "keep_going", is_flag=True,
              help="Do not stop at the first violation: report every violated property.")
@click.option("--deadlock/--no-deadlock", "deadlock", default=None,
              help="Report states without successors (default: the spec's check_deadlock, off).")
@click.option("--engine", type=click.Choice(["auto", "local", "spark"]), default="auto", show_default=True,
              help="Which engine runs the search: auto (the local engine, then every core once a "
                   "level is big enough to pay: checker/search/parallel.py), local (one process) or "
                   "spark (PySpark).")
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
def check_cmd(spec_path: Path, depth, sets, keep_going: bool, deadlock, engine: str, out_dir: Path,
              as_json: bool, quiet: bool, max_memory, min_free_disk, master, partitions, resume, temporal,
              full_state, checkpoint, invariants) -> int:
    """Check SPEC (a TOML spec file); results go to OUT/<spec-name>/<run-id>/."""
    import time
    from checker.front import temporal_spec as liveness_config
    started = time.perf_counter()
    max_memory = default_max_memory() if max_memory is DEFAULT_MEMORY else max_memory
    with registry.build_limit(max_memory):   # the model's build is held to --max-memory too
        spec = load_spec(spec_path, parse_sets(sets), depth=depth, invariants=list(invariants),
                         properties=list(temporal))
    liveness = liveness_config.validate(spec, str(spec_path))
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
    options = CheckOptions(
        max_depth=spec.depth,
        check_deadlock=spec.check_deadlock if deadlock is None else deadlock,
        stop_on_violation=not keep_going,
        fingerprint_bits=spec.fingerprint_bits,
        projection=spec.projection,
        progress=None if quiet else progress_printer,
        max_memory=max_memory,
        min_free_disk=min_free_disk,
    )
    ensure_writable(out_dir)  # fail before a long run, not after it
    out = sys.stderr if as_json else sys.stdout
    bound = "no depth bound" if spec.depth is None else f"depth <= {spec.depth}"
    if not quiet:  # (a progress line: with -q, bad input found later is the only line)
        click.echo(f"kmc: checking {spec_path} (model {spec.model}/{spec.variant}, {bound}, "
                   f"{len(properties)} properties"
                   + (f", {len(liveness.properties)} temporal" if liveness is not None else "") + ")", err=True)
    if liveness is not None:  # the local or auto engine, recording the state graph
        from checker.search.liveness.run import check_liveness
        result = check_liveness(model, properties, liveness, options, engine=engine)
        run_id = new_run_id()
    elif resumable:
        options.checkpoint_from = 0 if checkpoint else CHECKPOINT_FROM
        result, run_dir = run_resumable(spec, model, properties, options, out_dir, resume, engine)
        run_id = run_dir.name
    elif engine == "spark":
        from checker.front.spark_cli import run_spark
        result, run_id, spark_run_dir, spark_error = run_spark(spec, options, out_dir, master,
                                                               partitions, resume, quiet)
    elif engine == "auto":
        from checker.search.parallel import check_auto
        result = check_auto(model, properties, options)
        run_id = new_run_id()
    else:
        result = run_check(model, properties, options)
        run_id = new_run_id()
    config = spec.config()
    config["check_deadlock"] = options.check_deadlock
    config["stop_on_violation"] = options.stop_on_violation
    obj = summary(config, result, run_id=run_id, expect=spec.expect, engine=engine)
    # (--deadlock and --continue change what is reported: states without
    # successors, every violated property instead of the first)
    changed = bool(sets or depth is not UNSET or invariants or temporal or keep_going
                   or (deadlock is not None and deadlock != spec.check_deadlock))
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
    except OSError as e:
        raise SpecError(f"cannot write results under {out_dir}: {e}") from None
    obj["results_dir"] = str(run_dir)
    for error in obj.get("render_errors", ()):  # the run is kept; a page or the ITF is missing
        click.echo(f"kmc: warning: not rendered: {error}", err=True)
    obj["expect_sometimes_unreached"] = [n for n in spec.expect.get("sometimes", ())
                                         if result.sometimes.get(n) is None]
    total_s = time.perf_counter() - started
    obj["total_time_s"] = round(total_s, 3)
    click.echo(report_text(spec, result, run_dir, view=view, total_s=total_s, full_state=full_state),
               file=out)
    if "expect_met" in obj:
        click.echo("The run matches the spec's [expect]." if obj["expect_met"] else
                   "The run does NOT match the spec's [expect]: " + "; ".join(obj["expect_problems"]) + ".",
                   file=out)
    if as_json:
        click.echo(json.dumps(obj, sort_keys=False))
    if engine == "spark" and spark_error is not None:
        raise spark_error  # the result the driver finished is written and shown; Spark failed
    return EXIT_VIOLATION if result.violations else EXIT_OK


def run_resumable(spec, model, properties, options: CheckOptions, out_dir: Path,
                  resume: Path | None, engine: str = "local"):
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
            raise SpecError(f"{run_dir} has no finished level to resume from (no levels/{MANIFEST}: "
                            f"not a run made with --checkpoint, or it stopped before level 0 was "
                            f"written)")
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
            return check_auto(model, properties, options), run_dir
        return run_check(model, properties, options), run_dir
    except BaseException as e:
        kept = (run_dir / "levels" / MANIFEST).is_file()
        if kept:
            # (a memory or disk stop's own line says how to go on)
            if not isinstance(e, (SpecError, MemoryLimitError, DiskLimitError)):
                click.echo(f"kmc: every finished level is kept; go on with: kmc check {spec.path} "
                           f"--resume {run_dir} (and the same --set, --depth and property "
                           f"options)", err=True)
        elif resume is None:  # nothing kept: nothing left behind
            shutil.rmtree(run_dir, ignore_errors=True)
            if made_spec_dir:
                shutil.rmtree(run_dir.parent, ignore_errors=True)
        if disk_full(e):
            raise DiskLimitError(f"no space left on the disk of {run_dir.parent}: free space there"
                                 + (", then resume (above)" if kept else ", then run again")
                                 + " (--min-free-disk stops a run before the disk is full)") from None
        raise


def _model_listing(name: str, defn) -> dict:
    """One model as plain data: variants, each with its constants, properties and
    fingerprint projections."""
    out: dict = {"model": name, "doc": defn.doc, "variants": []}
    for variant, constants in defn.variants.items():
        entry: dict = {"variant": variant,
                       "constants": [{"name": c.name, "type": registry.type_name(c.type),
                                      "default": c.default, "doc": c.doc} for c in constants]}
        try:
            model, props = registry.build(name, variant, {})
        except (KmcError, ModelConfigError) as e:
            entry["error"] = f"cannot build with the defaults: {' '.join(str(e).split())}"
        else:
            entry["properties"] = [{"name": p.name, "kind": p.kind, "doc": p.doc} for p in props]
            from invariants.registry import reference_fairness_for, temporal_properties_for
            entry["properties"] += [{"name": t.name, "kind": t.kind, "form": t.form, "doc": t.doc}
                                    for t in temporal_properties_for(model)]
            entry["reference_fairness"] = reference_fairness_for(model)
            entry["projections"] = {v: list(vs) for v, vs in projections_of(model).items()}
        out["variants"].append(entry)
    return out


def _compare_with_expect(obj: dict, spec, result: CheckResult, changed: bool) -> None:
    """Did the run give what the spec's [expect] says (as kmc regress would
    judge it)? In the summary, the report and on the console."""
    if not spec.expect:
        return
    if changed:
        obj["expect_note"] = "Not compared with [expect]: the command line changed the spec."
        return
    _, problems = compare(spec.expect, result)
    obj["expect_met"] = not problems
    obj["expect_problems"] = problems


@cli.command("list")
@click.argument("model_name", metavar="[MODEL]", required=False)
@click.option("--json", "as_json", is_flag=True, help="The listing as one JSON object on stdout.")
def list_cmd(model_name: str | None, as_json: bool) -> int:
    """The models (or MODEL): variants, constants, properties and fingerprint projections."""
    models = registry.models()
    if model_name is not None:
        registry.model_def(model_name)  # unknown: one line, exit 2
        models = {model_name: models[model_name]}
    if as_json:
        listing = [_model_listing(n, d) for n, d in models.items()]
        click.echo(json.dumps({"models": listing}, indent=1, default=str))
        return EXIT_OK
    for name, defn in models.items():
        click.echo(f"{name}: {defn.doc}")
        for variant, constants in defn.variants.items():
            click.echo(f"  variant {variant}")
            click.echo("    constants:")
            for c in constants:
                click.echo(f"      {c.name} ({registry.type_name(c.type)}, default {c.default!r}): {c.doc}")
            try:
                model, props = registry.build(name, variant, {})
            except (KmcError, ModelConfigError) as e:
                click.echo(f"    properties: (cannot build with the defaults: {e})")
                continue
            click.echo("    properties:")
            for p in props:
                click.echo(f"      {p.name} [{p.kind}]" + (f": {p.doc}" if p.doc else ""))
            from invariants.registry import reference_fairness_for, temporal_properties_for
            for t in temporal_properties_for(model):  # checker/search/liveness
                click.echo(f"      {t.name} [temporal: {t.form}]" + (f": {t.doc}" if t.doc else ""))
            fairness = reference_fairness_for(model)
            if fairness:
                click.echo(f"    reference fairness: {', '.join(fairness)}")
            for name, variables in projections_of(model).items():
                click.echo(f"    projection {name}: {', '.join(variables)}")
    return EXIT_OK


# Every command of `kmc`, in one list: check and list above, the others in
# their own modules (none of which imports this one).
for _command in (regress.regress, graph_cli.graph, trace_cli.trace, scenario.scenario_cmd,
                 simulate_cli.simulate_cmd):
    cli.add_command(_command)


def main() -> None:
    from checker.search import stop
    stop.install()   # SIGTERM stops a run as ^C does (exit 143); both noted as well as raised
    cli.main(prog_name="kmc")


if __name__ == "__main__":
    main()
