"""Errors of the Spark engine; the CLI turns each into one line and its exit code
(checker.search.errors: KmcError)."""
from __future__ import annotations

from checker.search.errors import EXIT_BAD_INPUT, EXIT_EVALUATION, KmcError, SpecError


class SparkUnavailableError(KmcError):
    """Spark cannot run here: no Java, a master that cannot be reached or
    resolved, no executor within the time limit (bad input, exit 2)."""

    exit_code = EXIT_BAD_INPUT


class ExecutorSetupError(KmcError):
    """The executors cannot import kmc or build the spec's model (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class SparkJobError(KmcError):
    """A Spark job failed for good (after Spark's own retries), or the model
    crashed on an executor (exit 3, like a model evaluation error)."""

    exit_code = EXIT_EVALUATION


class ResumeError(SpecError):
    """--resume RUN_DIR is not a resumable run of this spec (exit 2)."""


class RunInterrupted(KmcError):
    """The run stopped after a level on request (stop_after_level / the
    KMC_SPARK_STOP_AFTER_LEVEL hook); resume it with --resume RUN_DIR."""

    exit_code = 130

    def __init__(self, message: str, run_dir=None, level: int | None = None):
        super().__init__(message)
        self.run_dir = run_dir
        self.level = level
