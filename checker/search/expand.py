"""A level's work on its states, the same in every engine: the fingerprint
projection resolved, a chunk of frontier states expanded (`expand_chunk`:
every successor generated, encoded, fingerprinted, tested against a seen
set and checked when new), and a counterexample replayed from its recorded
path. `expand_chunk(ctx, chunk, seen)` is a function of the model, the
properties and the chunk only (pass a fresh `seen` set and it is pure), so
the auto engine's workers and the spark executors run it as the local
engine does."""
from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, count
from operator import is_not
from typing import Any, Callable, Iterable, Sequence

from checker.search import native
from checker.search.checks import EVERY_VARIABLE, Checks
from checker.search.contract import projections_of
from checker.search.encoding import (VariableEncoders, decode, encode_changed, encode_state,
                                     fingerprint_function, parts_to_bytes, projection_indices,
                                     projection_selector)
from checker.search.errors import EngineEvaluationError, SpecError
from model.base import ALWAYS, SOMETIMES, EvaluationError, Model, Property


def resolve_projection(model: Model, projection: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """The fingerprint projection (TLC's VIEW: the variables the fingerprint
    covers; states equal on them are one state), a name of the model's
    projections or a list of variable names -> variable names in state
    order; None when it is every variable."""
    if projection is None:
        return None
    variables = tuple(model.variables)
    if isinstance(projection, str):
        known = projections_of(model)
        if projection not in known:
            raise SpecError(f"unknown projection {projection!r} of model {model.name!r} "
                            f"(known projections: {', '.join(known) or 'none'})")
        projection = known[projection]
    unknown = [v for v in projection if v not in variables]
    if unknown:
        raise SpecError(f"unknown projection variable(s) {', '.join(map(repr, unknown))} of model "
                        f"{model.name!r} (variables: {', '.join(variables)})")
    names = tuple(v for v in variables if v in set(projection))
    return None if names == variables else names


# ---- the per-chunk work ----------------------------------------------------

@dataclass
class ExpandContext:
    """Everything expand_chunk needs besides the chunk."""

    model: Model
    always: list[Property]
    sometimes: list[Property]
    fingerprint: Callable[[bytes], int]
    select: Callable[[Sequence[bytes]], bytes]
    check_deadlock: bool = False
    stop_on_violation: bool = True
    # per variable, the encoder of its values (the C packer until a value
    # holds a set); built on first use, learnt as the search goes
    encoders: VariableEncoders | None = None
    # the projection's part indices (None: every variable), for the compiled path
    select_indices: tuple | None = None
    # the properties by the variables a step changed; built on first use
    checks: Checks | None = None

    @classmethod
    def create(cls, model: Model, properties: Iterable[Property], fingerprint_bits: int = 64,
               projection: Sequence[str] | None = None, check_deadlock: bool = False,
               stop_on_violation: bool = True) -> "ExpandContext":
        props = list(properties)
        return cls(model=model,
                   always=[p for p in props if p.kind == ALWAYS],
                   sometimes=[p for p in props if p.kind == SOMETIMES],
                   fingerprint=fingerprint_function(fingerprint_bits),
                   select=projection_selector(tuple(model.variables), projection),
                   select_indices=projection_indices(tuple(model.variables), projection),
                   check_deadlock=check_deadlock,
                   stop_on_violation=stop_on_violation)

    def property_checks(self) -> Checks:
        if self.checks is None:
            self.checks = Checks(self.model, self.always + self.sometimes)
        return self.checks

    def entry(self, state) -> tuple:
        """A frontier entry (state, per-variable encodings, fingerprint)."""
        parts = list(encode_state(state))  # a list: successors copy and patch it
        return (state, parts, self.fingerprint(self.select(parts)))

    def entry_bytes(self, entry: tuple) -> bytes:
        """A frontier entry's state as one canonical msgpack value (to ship it)."""
        return parts_to_bytes(entry[1])

    def entry_from_bytes(self, data: bytes) -> tuple:
        """The frontier entry of a state shipped as entry_bytes (in any process)."""
        return self.entry(self.model.from_plain(decode(data)))


@dataclass
class ChunkResult:
    """What expanding a chunk found.

    new: (state, parts, fp, parent_fp, action) per successor new to `seen`, in
    order. violations: (property name, index into new). witnesses: (property
    name, index into new), first per property. deadlocks: chunk indices of
    states without successors. action_names: the name of every successor
    generated (Counter them). stopped: a violation ended the chunk early
    (stop_on_violation). changed: per entry of new, the bit mask of the
    variables it changed from its parent (for checks made elsewhere: the
    spark engine's). record: what an auto engine's worker sent besides
    (Search.worker_extras; None: expanded in this process)."""

    new: list
    violations: list
    witnesses: list
    deadlocks: list
    action_names: list
    stopped: bool = False
    changed: list | None = None
    record: Any = None


def _summary(state, limit: int = 300) -> str:
    text = repr(state)
    return text if len(text) <= limit else text[:limit] + "..."


def expand_chunk(ctx: ExpandContext, chunk: Sequence[tuple], seen: set,
                 errors: list | None = None) -> ChunkResult:
    """Expand frontier entries (state, parts, fp): every successor is generated
    and fingerprinted; those new to `seen` (which is updated) are checked
    against the properties and returned. Raises EngineEvaluationError when the
    model or a property raises EvaluationError; with an `errors` list, an
    EvaluationError of the model instead ends that parent's successors (those
    before it are kept), is appended as (index in chunk, one-line message),
    and the chunk goes on (the spark tasks: it is settled in BFS order later)."""
    # The hot path: per successor one identity compare per variable, encode the
    # changed variables, join + xxh3, one set test-and-add.
    successors = ctx.model.successors
    fingerprint = ctx.fingerprint
    select = ctx.select
    encs = ctx.encoders
    if encs is None:
        encs = ctx.encoders = VariableEncoders(len(ctx.model.variables))
    # the compiled path: parts, fingerprint and the seen set's test-and-add
    # in one call (None: seen); TypeError sends a successor down the Python path
    successor = native._native.successor if native.ENABLED else None
    indices = ctx.select_indices
    # a property (or part of one) is checked on a new state only when a
    # variable it reads changed (its parent, which satisfied it, shares the
    # others' objects)
    checks = ctx.property_checks()
    violated = checks.violated
    witnessed = checks.witnessed
    pending = checks.pending(ctx.sometimes)
    check_deadlock = ctx.check_deadlock
    stop = ctx.stop_on_violation

    new: list = []
    new_append = new.append
    changes: list = []
    changed_append = changes.append
    names: list = []
    names_append = names.append
    violations: list = []
    witnesses: list = []
    deadlocks: list = []
    action = succ = last = None
    checking = False  # a property raising names the state it was checked on
    # (the auto engine's shared seen set keys each successor by where it was found)
    begin = getattr(seen, "begin", None)
    for ci, (parent, pparts, pfp) in enumerate(chunk):
        before = len(names)
        if begin is not None:
            begin(ci)
        try:
            for action, succ in successors(parent):
                names_append(action[0])
                if succ is last:  # the same object again (a second witness): seen
                    continue
                last = succ
                if successor is not None:
                    try:
                        new_entry = successor(parent, pparts, succ, indices, fingerprint, seen)
                    except TypeError:  # a value the compiled encoder refuses
                        new_entry = _python_successor(encs, parent, pparts, succ, select,
                                                      fingerprint, seen)
                else:
                    new_entry = _python_successor(encs, parent, pparts, succ, select, fingerprint, seen)
                if new_entry is None:
                    continue
                parts, fp, changed = new_entry
                index = len(new)
                new_append((succ, parts, fp, pfp, action))
                changed_append(changed)
                checking = True
                bad = violated(succ, changed)
                if bad:
                    violations += [(name, index) for name in bad]
                if pending:
                    hit = witnessed(succ, changed, pending)
                    if hit:
                        witnesses += [(name, index) for name in hit]
                checking = False
                if bad and stop:
                    return ChunkResult(new, violations, witnesses, deadlocks, names, True, changes)
        except EvaluationError as e:
            failed_action = e.action if e.action is not None else (action if len(names) > before else None)
            failed_state = e.state if e.state is not None else (succ if checking else parent)
            where = f"in action {failed_action}" if failed_action is not None else "while enumerating successors"
            message = f"evaluation error {where}: {e}; state: {_summary(failed_state)}"
            if errors is None or checking:
                err = EngineEvaluationError(message, action=failed_action, state=failed_state)
                # where the trace ends (Search.run): the parent's fingerprint, and the
                # successor when a property raised on it
                err.parent_fp, err.successor = pfp, (succ if checking else None)
                err.detail = str(e)
                raise err from e
            errors.append((ci, " ".join(message.split())))
            continue
        if check_deadlock and len(names) == before:
            deadlocks.append(ci)
            if stop:
                return ChunkResult(new, violations, witnesses, deadlocks, names, True, changes)
    return ChunkResult(new, violations, witnesses, deadlocks, names, False, changes)


def _python_successor(encs, parent, pparts, succ, select, fingerprint, seen):
    """The compiled successor's work in Python: (parts, fp, changed variables
    as a bit mask), None when seen. The parent's bytes serve every variable
    whose object is shared; the indices of the others are found in C (map +
    compress)."""
    parts = pparts.copy() if type(pparts) is list else list(pparts)
    changed = 0
    try:
        for i in compress(count(), map(is_not, parent, succ)):
            parts[i] = encs[i](succ[i])
            changed |= 1 << i
    except TypeError:  # a variable's first value holding a set
        parts = encode_changed(encs, parent, pparts, succ)
        changed = EVERY_VARIABLE
    fp = fingerprint(select(parts))
    if fp in seen:
        return None
    seen.add(fp)
    return parts, fp, changed


def replay(model: Model, ctx: ExpandContext, path: list, matches: Callable) -> list:
    """A counterexample rebuilt from its recorded path [(fp, recorded action)],
    level 0 first: start from the initial state with path[0]'s fingerprint and
    at each step take the successor whose action `matches(action, recorded)`
    and whose fingerprint is the recorded one (as TLC replays its trace file).
    Returns [(None, init), (action, state), ...]."""
    init_fp = path[0][0]
    state = next((s for s in model.init_states() if ctx.entry(s)[2] == init_fp), None)
    if state is None:
        raise EngineEvaluationError("trace replay failed: no initial state has the recorded "
                                    "fingerprint (is the model deterministic?)")
    trace: list = [(None, state)]
    for step, (fp, recorded) in enumerate(path[1:], 1):
        nxt = next(((a, s) for a, s in model.successors(state)
                    if matches(a, recorded) and ctx.entry(s)[2] == fp), None)
        if nxt is None:
            raise EngineEvaluationError(f"trace replay failed at step {step}: no successor has the "
                                        f"recorded action and fingerprint (is the model deterministic?)",
                                        state=state)
        trace.append(nxt)
        state = nxt[1]
    return trace


def initial_states(ctx: ExpandContext, counts: dict):
    """The model's distinct initial states in its order, each checked as
    every new state is (Checks, every variable new): yields (entry (state,
    parts, fp), the invariants it violates, the witnesses it reaches, each
    witness once); counts["generated"] grows by every initial state,
    duplicates too. The initial-states loop of every engine. An
    EvaluationError of the model or a property is EngineEvaluationError
    (exit 3)."""
    checks = ctx.property_checks()
    pending = checks.pending(ctx.sometimes)
    seen: set = set()
    state = None
    try:
        for state in ctx.model.init_states():
            counts["generated"] += 1
            entry = ctx.entry(state)
            if entry[2] in seen:
                continue
            seen.add(entry[2])
            violated = checks.violated(state, EVERY_VARIABLE)
            yield entry, violated, checks.witnessed(state, EVERY_VARIABLE, pending)
    except EvaluationError as e:
        failed = e.state if e.state is not None else state
        raise EngineEvaluationError(f"evaluation error in the initial states: {e}; "
                                    f"state: {_summary(failed)}", state=failed) from e
