"""^C and SIGTERM whose exception Python drops (checker/search/stop.py): a
handler that runs inside a __del__ cannot raise, so its stop is noted, its
traceback is not printed, and the engine stops between chunks all the same."""
from __future__ import annotations

import os
import signal
import sys

import pytest

from checker.search import stop
from checker.search.engine import CheckOptions, check
from checker.search.errors import Terminated
from checker.search.parallel import check_auto
from checker.search.registry import build


@pytest.fixture
def handlers():
    """stop.install() in the test itself (pytest sets its own unraisable
    hook for the test's call); the signal handlers are put back after."""
    previous = {signum: signal.getsignal(signum) for signum in stop.KINDS}
    yield stop.install
    for signum, handler in previous.items():
        signal.signal(signum, handler)
    stop.handled()


class _SignalsWhenCollected:
    """Sends `signum` to this process from its __del__ and goes on there for a
    while: the handler runs inside the __del__, whose exception Python drops."""

    def __init__(self, signum, log):
        self.signum, self.log = signum, log

    def __del__(self):
        os.kill(os.getpid(), self.signum)
        for _ in range(100_000):
            pass
        self.log.append("the __del__ went on")


def _progress_that_stops(signum, log):
    def progress(counters):
        if not log:
            _SignalsWhenCollected(signum, log)   # collected at once: its __del__ runs here
            log.append("after the drop")         # (reached only because the exception was dropped)
    return progress


RUNS = {
    "local": lambda m, p, o: check(m, p, o),
    "auto, 2 workers": lambda m, p, o: check_auto(m, p, o, threshold=1, workers=2),
}


@pytest.mark.parametrize("engine", RUNS)
@pytest.mark.parametrize("signum, kind", [(signal.SIGTERM, Terminated), (signal.SIGINT, KeyboardInterrupt)],
                         ids=["SIGTERM", "SIGINT"])
def test_a_stop_dropped_in_a_del_still_stops_the_run(handlers, capfd, engine, signum, kind):
    handlers()
    model, props = build("randgraph", None, {"Nodes": 100_000, "Degree": 3, "Seed": 1, "Initial": 1})
    log = []
    options = CheckOptions(stop_on_violation=False, progress=_progress_that_stops(signum, log),
                           progress_interval=0)
    with pytest.raises(kind) as stopped:
        RUNS[engine](model, props, options)
    assert log == ["after the drop"]   # the handler raised in the __del__, and that was dropped
    assert type(stopped.value) is kind
    assert stop.pending is None   # handled: a next run in this process starts without it
    err = capfd.readouterr().err
    assert "Exception ignored" not in err and "Traceback" not in err, err
    # and the same run, no signal, goes to its end
    r = RUNS[engine](model, props, CheckOptions(stop_on_violation=False))
    assert r.exhausted and r.distinct > 2048 * 3


def test_other_exceptions_in_a_del_go_to_the_hook_before(handlers, monkeypatch):
    """A bug's exception in a __del__ is reported as before (the hook that was
    there gets it); so is a KeyboardInterrupt no signal noted."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: seen.append(info.exc_value))

    class Raises:
        def __init__(self, e):
            self.e = e

        def __del__(self):
            raise self.e
    handlers()
    Raises(ValueError("a bug in a __del__"))
    Raises(KeyboardInterrupt())
    assert [type(e) for e in seen] == [ValueError, KeyboardInterrupt]


def test_a_signal_ignored_stays_ignored(handlers):
    """A shell's background job starts with ^C ignored: kmc leaves it so."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    handlers()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is stop.on_stop_signal


def test_a_dropped_stop_ends_a_simulation_between_walks(monkeypatch):
    """kmc simulate's walks (checker/search/simulate.py) look for it before each walk."""
    from checker.search.simulate import run_batch
    from tests.simulate.sim_helpers import TWOPHASE, config
    _, cfg = config(TWOPHASE)
    assert run_batch(cfg, 0, 20)["walks"] == 20
    monkeypatch.setattr(stop, "pending", Terminated)   # as the handler leaves it when its raise was dropped
    with pytest.raises(Terminated):
        run_batch(cfg, 0, 20)
