"""Which hot path runs: the compiled one (checker/search/_native.c, built by `pip
install` where a C compiler is at hand) or its pure-Python equivalents.

KMC_NATIVE=0 in the environment selects pure Python (tests run both paths;
the answers are the same byte for byte, only the speed differs).
"""
from __future__ import annotations

import os

MODULE = "checker.search._native"


def _from_zip():
    """The compiled module, when kmc itself was imported from a zip: the code
    a Spark driver ships to its executors (spark/session.py, code_zip) holds
    the driver's build. Python loads no extension from a zip, so this
    process copies it to a private temporary file, loads it and removes the
    file (nothing shared to trust or race on). None when kmc is not zipped,
    or the zip has no build for this Python."""
    import importlib.machinery
    import importlib.util
    import sys
    import tempfile
    archive = getattr(__spec__.loader, "archive", None)
    if archive is None:
        return None
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        try:
            data = __spec__.loader.get_data(f"{archive}/checker/search/_native{suffix}")
        except OSError:
            continue
        fd, path = tempfile.mkstemp(prefix="kmc-native-", suffix=suffix)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            spec = importlib.util.spec_from_file_location(MODULE, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        finally:
            os.unlink(path)   # a loaded module needs no file (POSIX)
        sys.modules[MODULE] = module
        return module
    return None


_native = None
if os.environ.get("KMC_NATIVE", "1") != "0":
    try:
        from checker.search import _native
    except ImportError:  # not built (no compiler at install time), or zipped: pure Python
        try:
            _native = _from_zip()
        except (OSError, ImportError):  # no room for the copy, or a build for another platform
            _native = None

ENABLED = _native is not None


def status() -> str:
    """One line for --version style reports and the bench."""
    if ENABLED:
        return "compiled (checker/search/_native.c)"
    if os.environ.get("KMC_NATIVE", "1") == "0":
        return "pure Python (KMC_NATIVE=0)"
    return "pure Python (checker.search._native not built)"
