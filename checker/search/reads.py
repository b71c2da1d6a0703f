"""A property's `reads` held to what its predicate reads, on every build.

The engines check a new state only against the properties that read a
variable its step changed (checks.py), so a `reads` declaration that misses
a variable makes a run skip checks without a word. When a model is built
(registry.build: every engine, every spec), each property and each part of
one is evaluated on the first AUDIT_STATES states in BFS order, on a copy of
the state that records every variable read; a property that reads a
variable it does not declare is then checked on every state of the run
(its reads widened to None: the run stays sound) and said in one
`kmc: warning:` line. tests/core/test_model_contract.py holds the
declarations to the reads of whole small spaces.
"""
from __future__ import annotations

import dataclasses
import sys
from typing import Iterable

from model.base import EvaluationError, Property

AUDIT_STATES = 500   # states in BFS order each property is evaluated on when a model is built


def recording_class(cls: type, variables: tuple, log: set) -> type:
    """A subclass of the state's class that adds to `log` each variable read
    (by name, by index, by unpacking)."""
    ns = {}
    for i, var in enumerate(variables):
        ns[var] = property(lambda self, i=i, var=var: (log.add(var), tuple.__getitem__(self, i))[1])

    def getitem(self, k):
        log.update(variables[k] if isinstance(k, slice) else (variables[k],))
        return tuple.__getitem__(self, k)

    def iterate(self):
        log.update(variables)
        return tuple.__iter__(self)

    ns.update(__getitem__=getitem, __iter__=iterate)
    return type("Recording" + cls.__name__, (cls,), ns)


def first_states(model, limit: int) -> list:
    """The model's first `limit` states in BFS order (fewer where the model
    stops with an evaluation error: the run itself reports it)."""
    try:
        frontier = list(dict.fromkeys(model.init_states()))[:limit]
    except EvaluationError:
        return []
    seen = set(frontier)
    out = list(frontier)
    try:
        while frontier:
            nxt = []
            for s in frontier:
                for _, t in model.successors(s):
                    if t not in seen:
                        seen.add(t)
                        nxt.append(t)
                        out.append(t)
                if len(out) >= limit:
                    return out[:limit]
            frontier = nxt
    except EvaluationError:
        pass
    return out


def undeclared_reads(model, properties: Iterable[Property], states: list) -> dict[str, list[str]]:
    """Per property that read, on one of `states`, a variable its reads (or
    one of its parts' reads) leave out: those variables, in state order."""
    variables = tuple(model.variables)
    log: set = set()
    out: dict[str, list[str]] = {}
    if not states:
        return out
    recording = recording_class(type(states[0]), variables, log)
    copies = [tuple.__new__(recording, s) for s in states]
    for p in properties:
        tests = [(p.reads, p.predicate)] + list(p.parts or ())
        missed: set = set()
        for reads, predicate in tests:
            if reads is None:
                continue
            for s in copies:
                log.clear()
                try:
                    predicate(s)
                except EvaluationError:
                    pass   # the run reports it, on the state itself
                missed |= log - set(reads)
        if missed:
            out[p.name] = [v for v in variables if v in missed]
    return out


_said: set = set()


def audited(model, properties: list[Property], limit: int = AUDIT_STATES) -> list[Property]:
    """`properties`, each that reads more than it declares widened to reads
    None (checked on every state) and said on stderr, once per process."""
    missed = undeclared_reads(model, properties, first_states(model, limit))
    if not missed:
        return properties
    out = []
    for p in properties:
        if p.name in missed:
            line = (f"kmc: warning: model {model.name!r}: property {p.name} reads "
                    f"{', '.join(missed[p.name])} beyond its declared reads: it is checked on "
                    f"every state (slower; declare every variable it reads)")
            if line not in _said:
                _said.add(line)
                print(line, file=sys.stderr, flush=True)
            p = dataclasses.replace(p, reads=None, parts=None)
        out.append(p)
    return out
