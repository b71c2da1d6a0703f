"""The front: what a user calls. Specs (spec.py), the `kmc` command group
(cli.py lists every command), regress, scenarios, simulate, trace and graph.
Imports the output and the search; nothing below imports it
(docs/ARCHITECTURE.md, "Layers")."""
