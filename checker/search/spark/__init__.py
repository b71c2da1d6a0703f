"""The `spark` engine: the local engine's level-synchronous BFS on PySpark
(`local[*]` embedded by default, `spark://HOST:PORT` for a standalone cluster).

    from checker.search.spark import check_spark
    result = check_spark(spec, CheckOptions(max_depth=10), master="local[2]")

See checker/search/spark/engine.py for the design, levels.py for the run folder.
"""
from checker.search.spark.errors import (ExecutorSetupError, ResumeError, RunInterrupted, SparkJobError,
                                  SparkUnavailableError)


def check_spark(*args, **kwargs):
    """checker.search.spark.engine.check_spark (imported lazily: pyspark loads only
    when the spark engine runs)."""
    from checker.search.spark.engine import check_spark as run
    return run(*args, **kwargs)


__all__ = ["check_spark", "ExecutorSetupError", "ResumeError", "RunInterrupted", "SparkJobError",
           "SparkUnavailableError"]
