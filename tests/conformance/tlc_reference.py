"""The TLC figures under tests/conformance/data (see data/PROVENANCE.md)."""
from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).parent / "data"

# kraft-tlc.json rows with more generated states than this run as `slow`
SLOW_GENERATED = 200_000


def figures() -> list[dict]:
    """Every row of kraft-tlc.json (one per configuration)."""
    with open(DATA / "kraft-tlc.json") as f:
        return json.load(f)


def violations() -> list[dict]:
    """Every row of kraft-tlc-violations.json."""
    with open(DATA / "kraft-tlc-violations.json") as f:
        return json.load(f)


def graph_names() -> list[str]:
    """The configurations whose whole state graph is under data/graphs."""
    return sorted(p.name.split(".")[0] for p in (DATA / "graphs").iterdir()
                  if p.name.endswith((".json", ".json.gz")))


def figures_row(name: str) -> dict:
    for row in figures():
        if row["name"] == name:
            return row
    raise KeyError(f"no configuration {name} in kraft-tlc.json")


# v3_5 constant -> its kip966 counterpart (None: no counterpart, dropped)
V3_5_TO_KIP966 = {
    "UncleanShutdownLimit": "DataLossShutdownLimit",
    "CleanShutdownLimit": "NoDataLossShutdownLimit",
    "AvoidLastReplicaStanding": None,
}


def as_kip966(constants: dict) -> dict:
    """The same configuration for variant kip966."""
    out = {}
    for name, value in constants.items():
        new = V3_5_TO_KIP966.get(name, name)
        if new is not None:
            out[new] = value
    return out


def reassignment_figures() -> list[dict]:
    """Every row of kraft-tlc-reassignment.json (ReassignmentLimit 1; complete,
    bounded to N steps, or stopped at a violated invariant)."""
    with open(DATA / "kraft-tlc-reassignment.json") as f:
        return json.load(f)


def totals() -> dict[str, dict]:
    """kraft-tlc-totals.json by row name: TLC's distinct and generated states
    and levels for configurations bounded to N steps (with or without the
    .cfg's VIEW) or too big for the per-level rows of kraft-tlc.json."""
    with open(DATA / "kraft-tlc-totals.json") as f:
        return {row["name"]: row for row in json.load(f)}
