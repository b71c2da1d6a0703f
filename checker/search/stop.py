"""^C and SIGTERM, noted as well as raised.

Python runs a signal's handler between two bytecodes of the main thread. One
that lands in a __del__ or a weakref callback (a pipe's end collected in the
auto engine's parent) has its exception dropped, with a traceback printed
("Exception ignored in ..."), and the run would go on to its end and exit 0.
So the handler also notes the stop, the traceback of a dropped stop is not
printed, and the engines call raise_pending() between chunks and levels
(kmc simulate: between walks): a dropped stop still stops the run there,
with its finished levels kept, as a raised one does.
"""
from __future__ import annotations

import signal
import sys

from checker.search.errors import Terminated

KINDS = {signal.SIGINT: KeyboardInterrupt, signal.SIGTERM: Terminated}

# the stop noted and not yet handled: KeyboardInterrupt, Terminated or None
pending: type | None = None
_print_unraisable = sys.__unraisablehook__   # the hook install() replaced


def on_stop_signal(signum, frame) -> None:
    global pending
    pending = KINDS[signum]
    raise pending()


def install() -> dict:
    """The handlers of ^C and SIGTERM (main thread only); returns the ones
    they replace. A signal ignored stays ignored (a shell's background job
    ignores ^C, nohup-like wrappers SIGTERM), as Python leaves it."""
    previous = {}
    for signum in KINDS:
        previous[signum] = signal.getsignal(signum)
        if previous[signum] is not signal.SIG_IGN:
            signal.signal(signum, on_stop_signal)
    global _print_unraisable
    if sys.unraisablehook is not _unraisable:
        _print_unraisable, sys.unraisablehook = sys.unraisablehook, _unraisable
    return previous


def _unraisable(info) -> None:
    """A stop dropped where Python cannot raise it is noted (pending): its
    traceback would read as a crash. Anything else is printed as before."""
    if not (pending is not None and isinstance(info.exc_value, KeyboardInterrupt)):
        _print_unraisable(info)


def raise_pending() -> None:
    """Raise the stop a handler noted, if its own exception was dropped."""
    if pending is not None:
        raise pending()


def handled() -> None:
    """The stop is on its way out of the engine: a later run in the same
    process (a notebook, a test) starts without it."""
    global pending
    pending = None
