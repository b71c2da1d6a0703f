"""The model contract's engine clause on Spark (tests/core/test_model_contract.py
holds the local and auto engines): every registered model, each variant with
its default constants to the deepest depth bound within LIMIT states, gives
the local engine's figures and counterexamples on Spark, whose executors
rebuild every state from the level files (from_plain, the decoder)."""
from __future__ import annotations

import pytest

from checker.search import registry
from checker.search.engine import CheckOptions, check
from checker.search.spark import check_spark
from spark_helpers import LOCAL_MASTER, SMALL_LEVEL, assert_same

LIMIT = 3000
MODEL_VARIANTS = [(name, variant) for name, defn in registry.models().items() for variant in defn.variants]


@pytest.mark.parametrize("name, variant", MODEL_VARIANTS)
def test_spark_counts_as_the_local_engine(spark, tmp_path, name, variant):
    model, props = registry.build(name, variant, {})
    depth = 1
    while True:   # (as the core test: a small space, whatever the model)
        local = check(model, props, CheckOptions(max_depth=depth))
        if local.distinct > LIMIT or local.exhausted or local.violations or depth >= 60:
            break
        depth += 1
    got = check_spark({"model": name, "variant": variant}, CheckOptions(max_depth=depth),
                      master=LOCAL_MASTER, run_dir=tmp_path / "run", small_level=SMALL_LEVEL)
    assert_same(local, got)
