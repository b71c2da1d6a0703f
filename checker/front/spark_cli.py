"""Wiring the spark engine into `kmc check` (checker/front/cli.py).

`add_spark_options(command)` adds --master, --partitions and --resume to a
click command (checker/front/cli.py keeps --engine and adds "spark" to its choices);
`run_spark(...)` runs the check and returns (result, run_id, run_dir, error):
error is Spark's start failure when the driver finished the search alone
meanwhile (the caller writes and shows the result, then raises it);
the caller writes the run's files into the folder the engine made
(checker.output.results.write_run_into).
"""
from __future__ import annotations

from pathlib import Path

import click

from checker.search.engine import CheckOptions, CheckResult


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
                     help="Go on with an interrupted run from its results folder (the spec and the "
                          "options are the run's own): a spark run, or a local or auto one that "
                          "kept a finished level (from the first level of 50,000 states; with "
                          "--checkpoint from level 0)."),
    ]
    for opt in reversed(options):
        command = opt(command)
    return command


def run_spark(spec, options: CheckOptions, out_dir: Path, master: str | None = None,
              partitions: int | None = None, resume: Path | None = None,
              quiet: bool = False) -> tuple[CheckResult, str, Path, Exception | None]:
    """Run `spec` on Spark; results in out_dir/<spec>/<run-id>/ (or in the
    resumed folder)."""
    from checker.search.spark.errors import ExecutorSetupError, SparkUnavailableError
    from checker.search.files import new_run_id
    from checker.search.spark.engine import SparkSearch

    if resume is not None:
        run_dir = Path(resume)
    else:
        run_dir = Path(out_dir) / spec.name / new_run_id()
    options.progress = None if quiet else progress_line
    search = SparkSearch(spec, options, master=master, partitions=partitions,
                         run_dir=None if resume else run_dir, resume=resume)
    try:
        return search.run(), run_dir.name, run_dir, None
    except KeyboardInterrupt as e:   # (^C, SIGTERM): say how to go on, when a level was kept
        if _resume_hint(run_dir):
            e.run_dir = run_dir   # (--json names it)
        raise
    except (SparkUnavailableError, ExecutorSetupError) as e:
        if getattr(e, "result", None) is None:
            raise
        return e.result, run_dir.name, run_dir, e


def _resume_hint(run_dir: Path) -> bool:
    from checker.search.spark import levels
    try:
        kept = bool(levels.committed_levels(run_dir)) and not (run_dir / "summary.json").exists()
    except OSError:
        kept = False
    click.echo(f"kmc: every finished level is kept; go on with: kmc check --resume {run_dir}"
               if kept else "kmc: no level was kept to resume from: run it again to start over",
               err=True)
    return kept
