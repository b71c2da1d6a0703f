"""A seeded random directed graph as a model: a state is the node reached,
an action Move(from, to) follows an edge. For comparing the engine with an
explicit graph (networkx) and for deadlocks (nodes without out-edges)."""
from __future__ import annotations

import random
from typing import NamedTuple

from model.base import Action, Constant, EvaluationError, ModelConfigError, ModelDef


class Node(NamedTuple):
    node: int


class RandGraph:
    name = "randgraph"
    variables = Node._fields
    action_names = ("Move",)

    def __init__(self, variant: str, nodes: int, degree: int, seed: int, initial: int,
                 targets: frozenset, error_node: int, check_error_node: int = -1):
        self.variant = variant
        self.nodes = nodes
        self.targets = targets
        self.error_node = error_node
        self.check_error_node = check_error_node
        self.initial = initial
        rng = random.Random(seed)
        # out-degree 0..degree; node ids 0..nodes-1
        self.edges = {n: sorted(set(rng.randrange(nodes) for _ in range(rng.randint(0, degree))))
                      for n in range(nodes)}

    def init_states(self):
        for n in range(self.initial):
            yield Node(n)

    def successors(self, s: Node):
        if s.node == self.error_node:
            raise EvaluationError(f"node {s.node} cannot be evaluated")
        for m in self.edges[s.node]:
            yield Action("Move", (s.node, m)), Node(m)

    def from_plain(self, values: tuple) -> Node:
        return Node(*values)


def build(variant: str, c: dict) -> RandGraph:
    if c["Nodes"] < 1 or c["Initial"] < 1 or c["Initial"] > c["Nodes"] or c["Degree"] < 0:
        raise ModelConfigError("need Nodes >= Initial >= 1 and Degree >= 0")
    return RandGraph(variant, c["Nodes"], c["Degree"], c["Seed"], c["Initial"],
                     frozenset(c["Targets"]), c["ErrorNode"], c["CheckErrorNode"])


MODEL = ModelDef(
    name="randgraph",
    doc="a seeded random directed graph (toy model for engine tests)",
    variants={"standard": (
        Constant("Nodes", int, 50, "number of nodes"),
        Constant("Degree", int, 3, "most out-edges of a node"),
        Constant("Seed", int, 1, "random seed of the edges"),
        Constant("Initial", int, 1, "nodes 0..Initial-1 are initial states"),
        Constant("Targets", (list, int), [], "nodes the invariant NotTarget forbids"),
        Constant("ErrorNode", int, -1, "expanding this node raises EvaluationError"),
        Constant("CheckErrorNode", int, -1, "checking NotTarget on this node raises EvaluationError"),
    )},
    build=build,
    properties="invariants.examples:randgraph_properties",
)
