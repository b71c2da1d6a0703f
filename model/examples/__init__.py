"""Toy models for testing the engine against known figures.

- twophase: Lamport's TwoPhase commit (TLA+ example TwoPhase.tla); 3 resource
  managers give 288 distinct states, 5 give 8,832 (stateright's 2PC example
  asserts the same figures).
- diehard: the jugs puzzle of Die Hard 3 (TLA+ example DieHard.tla); the
  shortest way to 4 gallons takes 6 steps.
- randgraph: a seeded random directed graph, for comparing the engine with
  networkx shortest paths and for deadlocks.
"""
