"""Test-run wide settings: how `pytest -n N` (pytest-xdist, `make test`)
shares the tests among its workers."""
from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    """With --dist loadgroup: a file's tests stay on one worker (its module
    fixtures are built once), and every Spark test shares one worker (one JVM
    at a time, and one class-data archive cache)."""
    for item in items:
        path = item.nodeid.split("::")[0]
        group = "spark" if path.startswith("tests/spark/") else path
        item.add_marker(pytest.mark.xdist_group(group))
