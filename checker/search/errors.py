"""Errors the CLI turns into one line `kmc: error: ...` and an exit code.

Exit codes (ARCHITECTURE.md, CLI): 0 nothing violated, 1 a property violated,
2 bad input, 3 a model evaluation error.
"""
from __future__ import annotations

EXIT_OK = 0
EXIT_VIOLATION = 1
EXIT_BAD_INPUT = 2
EXIT_EVALUATION = 3
# kmc check --tlc-exit-codes: TLC's codes (tlc2/output/EC.java, ExitStatus)
EXIT_DEADLOCK = 11
EXIT_SAFETY = 12
EXIT_LIVENESS = 13


class KmcError(Exception):
    """Base of the errors kmc reports as one line and an exit code."""

    exit_code = EXIT_BAD_INPUT

    def one_line(self) -> str:
        return " ".join(str(self).split())


class SpecError(KmcError):
    """Bad input: spec file, option, model, variant, constant or property (exit 2)."""

    exit_code = EXIT_BAD_INPUT


class EngineEvaluationError(KmcError):
    """A model raised EvaluationError; carries the action and state (exit 3)."""

    exit_code = EXIT_EVALUATION

    def __init__(self, message: str, action=None, state=None, level: int | None = None):
        super().__init__(message)
        self.action = action
        self.state = state
        self.level = level
        self.detail = message        # the model's own words (without the state)
        self.parent_fp = None        # the fingerprint of the state whose successors raised
        self.successor = None        # the new state a property raised on, if one did
        self.trace = None            # [(None, init), (action, state), ...] to where it raised
        self.result = None           # the search up to the error (a CheckResult)


class Terminated(KeyboardInterrupt):
    """SIGTERM (kill, a batch scheduler, a CI timeout): the run stops as on
    Ctrl-C -- forked workers stopped, finished levels kept and the way to go
    on said -- rather than dying mid-write; exit 143 (checker/front/options.py)."""
