"""The search: canonical encoding, fingerprints, the seen set, and the
engines that explore a model's states (local, parallel, simulate, Spark;
liveness on the recorded graph). It imports invariants/ and model/ only,
never the output or the front (docs/ARCHITECTURE.md, "Layers")."""
