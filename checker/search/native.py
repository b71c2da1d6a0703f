"""Which hot path runs: the compiled one (checker/search/_native.c, built by `pip
install` where a C compiler is at hand) or its pure-Python equivalents.

KMC_NATIVE=0 in the environment selects pure Python (tests run both paths;
the answers are the same byte for byte, only the speed differs).
"""
from __future__ import annotations

import os

_native = None
if os.environ.get("KMC_NATIVE", "1") != "0":
    try:
        from checker.search import _native
    except ImportError:  # not built (no compiler at install time): pure Python
        _native = None

ENABLED = _native is not None


def status() -> str:
    """One line for --version style reports and the bench."""
    if ENABLED:
        return "compiled (checker/search/_native.c)"
    if os.environ.get("KMC_NATIVE", "1") == "0":
        return "pure Python (KMC_NATIVE=0)"
    return "pure Python (checker.search._native not built)"
