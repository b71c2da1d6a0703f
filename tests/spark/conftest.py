"""Shared fixtures of the spark engine's tests: one embedded local[2] session
for the whole test session (with up to 3 attempts per task), helpers in
spark_helpers.py, a standalone cluster in spark_cluster.py."""
import sys
from pathlib import Path

import pytest

_HERE = str(Path(__file__).parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from spark_helpers import LOCAL_MASTER  # noqa: E402


@pytest.fixture(scope="session")
def spark_log_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("spark-log")


@pytest.fixture(scope="session")
def _local_session(spark_log_dir):
    from checker.search.spark import session
    s = session.get_session(LOCAL_MASTER, spark_log_dir)
    yield s
    session.stop_session()


@pytest.fixture
def spark(_local_session, spark_log_dir):
    """The embedded session (started again if a cluster test replaced it)."""
    from checker.search.spark import session
    return session.get_session(LOCAL_MASTER, spark_log_dir)
