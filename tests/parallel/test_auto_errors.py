"""Failures on the pool are one-line kmc errors (exit 3)."""
from __future__ import annotations

import pytest

from checker.search import parallel
from checker.search.engine import CheckOptions
from checker.search.parallel import ParallelError, check_auto
from checker.search.registry import build, select_properties
from spark_helpers import KRAFT_QUICK

CONFIG = {"model": "kraft", "variant": "kip966", "constants": KRAFT_QUICK}


def _boom(*args, **kwargs):
    raise RuntimeError("boom")


def test_a_model_crash_in_a_worker(monkeypatch):
    """Not an EvaluationError (a bug of the model): the task reports it and
    the run stops with its message (the workers are forked after the patch)."""
    model, props = build(CONFIG["model"], CONFIG["variant"], CONFIG["constants"])
    props = select_properties(props, None)
    # only the workers call it (the local levels call expand_chunk itself)
    monkeypatch.setattr(parallel, "expand_one", _boom)
    with pytest.raises(ParallelError) as e:
        check_auto(model, props, CheckOptions(max_depth=8), threshold=20, workers=2)
    assert e.value.exit_code == 3
    assert "the model failed in a worker process at level" in e.value.one_line()
    assert "RuntimeError: boom" in e.value.one_line()
