"""kmc's engine: canonical encoding, fingerprints, level-synchronous BFS,
trace reconstruction, spec loading, reports and the `kmc` CLI.

It reaches models and properties only through model.registry,
invariants.registry and the protocol of model.base.
"""
