"""Wiring the spark engine into `kmc check` (checker/cli.py).

`add_spark_options(command)` adds --master, --partitions and --resume to a
click command (checker/cli.py keeps --engine and adds "spark" to its choices);
`run_spark(...)` runs the check and returns (result, run_id, run_dir, error):
error is Spark's start failure when the driver finished the search alone
meanwhile (the caller writes and shows the result, then raises it);
`write_run_into(run_dir, summary, result, model)` writes what
checker.results.write_run writes (summary, traces, reports) into the run
folder the engine already created (write_run renames a whole new folder into
place, which a resumable run's folder cannot be).
See CLI_PATCH.md beside this file for the change to checker/cli.py.

Until that patch is applied, `python -m checker.spark check SPEC ...` runs the
same command with the spark engine.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from checker.engine import CheckOptions, CheckResult
from checker.errors import EXIT_OK, EXIT_VIOLATION


def progress_line(info: dict) -> None:
    """One line per finished level on stderr."""
    click.echo(f"kmc: spark: level {info['level']}: frontier {info['frontier']:,}, "
               f"distinct {info['distinct']:,}, generated {info['generated']:,}, "
               f"level {info['level_s']:.2f}s, total {info['elapsed_s']:.1f}s"
               + (" (in the driver while Spark starts)" if info.get("where") == "driver" else ""), err=True)


def add_spark_options(command):
    """Decorate a click command with the spark engine's options."""
    options = [
        click.option("--master", default=None, metavar="URL",
                     help="Spark master for --engine spark: local[*] (embedded, the default), "
                          "local[N], or spark://HOST:PORT (a standalone cluster)."),
        click.option("--partitions", type=click.IntRange(min=1), default=None, metavar="N",
                     help="Fingerprint partitions per level for --engine spark "
                          "(default: one per core Spark has, at least 2)."),
        click.option("--resume", "resume", default=None, metavar="RUN_DIR",
                     type=click.Path(file_okay=False, exists=True, path_type=Path),
                     help="Go on with an interrupted --engine spark run from its results folder."),
    ]
    for opt in reversed(options):
        command = opt(command)
    return command


def run_spark(spec, options: CheckOptions, out_dir: Path, master: str | None = None,
              partitions: int | None = None, resume: Path | None = None,
              quiet: bool = False) -> tuple[CheckResult, str, Path, Exception | None]:
    """Run `spec` on Spark; results in out_dir/<spec>/<run-id>/ (or in the
    resumed folder)."""
    from checker.spark.errors import ExecutorSetupError, SparkUnavailableError
    from checker.results import new_run_id
    from checker.spark.engine import SparkSearch

    if resume is not None:
        run_dir = Path(resume)
    else:
        run_dir = Path(out_dir) / spec.name / new_run_id()
    options.progress = None if quiet else progress_line
    search = SparkSearch(spec, options, master=master, partitions=partitions,
                         run_dir=None if resume else run_dir, resume=resume)
    try:
        return search.run(), run_dir.name, run_dir, None
    except (SparkUnavailableError, ExecutorSetupError) as e:
        if getattr(e, "result", None) is None:
            raise
        return e.result, run_dir.name, run_dir, e


def write_run_into(run_dir: Path, summary_obj: dict, result: CheckResult, model=None) -> Path:
    """The run's files (summary.json, traces, reports: checker.results.write_run
    renders them) moved one by one, each atomically, into the run folder the
    spark engine created; summary.json last, so its presence means complete."""
    import os
    import shutil
    import tempfile

    from checker.results import write_run

    run_dir = Path(run_dir)
    staging = Path(tempfile.mkdtemp(dir=run_dir, prefix=".results-"))
    try:
        obj = {**summary_obj, "run_id": run_dir.name}
        made = write_run(staging, "run", obj, result, model=model)
        if "render_errors" in obj:
            summary_obj["render_errors"] = obj["render_errors"]
        files = sorted(made.iterdir(), key=lambda f: f.name == "summary.json")
        for f in files:
            os.replace(f, run_dir / f.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return run_dir


# ---- the interim command: python -m checker.spark check SPEC ... ----------------------

def _build_group():
    from checker.cli import DepthType, KmcGroup, report_text
    from checker.results import summary
    from checker.spec import UNSET, load_spec, parse_sets

    @click.group(cls=KmcGroup, context_settings={"help_option_names": ["-h", "--help"]})
    def group() -> None:
        """kmc's spark engine (until `kmc check --engine spark` is wired)."""

    @group.command("check")
    @click.argument("spec_path", metavar="SPEC", type=click.Path(dir_okay=False, path_type=Path))
    @click.option("--depth", type=DepthType(), default=UNSET)
    @click.option("--set", "sets", multiple=True, metavar="NAME=VALUE")
    @click.option("--continue", "keep_going", is_flag=True)
    @click.option("--deadlock/--no-deadlock", "deadlock", default=None)
    @click.option("--engine", type=click.Choice(["spark"]), default="spark")
    @click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=Path("results"))
    @click.option("--json", "as_json", is_flag=True)
    @click.option("--quiet", "-q", is_flag=True)
    @add_spark_options
    def check(spec_path, depth, sets, keep_going, deadlock, engine, out_dir, as_json, quiet,
              master, partitions, resume) -> int:
        spec = load_spec(spec_path, parse_sets(sets), depth=depth)
        model, properties = spec.build()
        options = CheckOptions(max_depth=spec.depth,
                               check_deadlock=spec.check_deadlock if deadlock is None else deadlock,
                               stop_on_violation=not keep_going,
                               fingerprint_bits=spec.fingerprint_bits, view=spec.view)
        out = sys.stderr if as_json else sys.stdout
        bound = "no depth bound" if spec.depth is None else f"depth <= {spec.depth}"
        click.echo(f"kmc: checking {spec_path} (model {spec.model}/{spec.variant}, {bound}, "
                   f"{len(properties)} properties, engine spark)", err=True)
        result, run_id, run_dir, late = run_spark(spec, options, out_dir, master, partitions, resume, quiet)
        config = spec.config()
        config["check_deadlock"] = options.check_deadlock
        config["stop_on_violation"] = options.stop_on_violation
        obj = summary(config, result, run_id=run_id, expect=spec.expect, engine="spark")
        write_run_into(run_dir, obj, result, model=model)
        obj["results_dir"] = str(run_dir)
        click.echo(report_text(spec, result, run_dir, model=model), file=out)
        if as_json:
            click.echo(json.dumps(obj, sort_keys=False))
        if late is not None:
            raise late
        return EXIT_VIOLATION if result.violations else EXIT_OK

    return group


def main() -> None:
    _build_group().main(prog_name="python -m checker.spark")
