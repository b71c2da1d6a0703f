"""Fixtures every test folder shares."""
from __future__ import annotations

import os
import signal
import subprocess

import pytest


def sigint_default() -> None:
    """In the child, before exec: SIGINT as a terminal gives it. A test run in
    the background (a shell's `&` job, nohup) inherits SIGINT ignored, and a
    child would keep ignoring it: a ^C test would then wait forever."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def process_group():
    """popen(cmd, **kw): subprocess.Popen of cmd in a process group of its own
    (a ^C test signals the group, as a terminal does), SIGINT at its default.
    When the test ends, passed or failed, every group it started is killed
    (SIGKILL), workers included: a failed test leaves nothing running."""
    started: list[subprocess.Popen] = []

    def popen(cmd, **kw) -> subprocess.Popen:
        p = subprocess.Popen(cmd, start_new_session=True, preexec_fn=sigint_default, **kw)
        started.append(p)
        return p

    yield popen
    for p in started:
        try:
            os.killpg(p.pid, signal.SIGKILL)   # the group outlives its leader when workers remain
        except (ProcessLookupError, PermissionError):
            pass   # nothing of the group is left
        p.wait()
        for f in (p.stdin, p.stdout, p.stderr):
            if f is not None:
                f.close()
