"""kmc's checker, in three layers, each importing only downward:

    front   (specs, the `kmc` CLI, regress, scenarios)   checker/front/
    output  (the run folder and its writers)             checker/output/
    search  (encoding, fingerprints, the engines)        checker/search/

then invariants/ and model/. It reaches models and what they name
(properties, views, facts, mutants) only through model.registry, each
model's ModelDef and the protocol of model.base
(docs/ARCHITECTURE.md; tests/core/test_layers.py keeps the rule).
"""
