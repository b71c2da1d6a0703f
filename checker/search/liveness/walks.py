"""Temporal properties on random walks (`kmc simulate --property`): the lassos
a walk closes, checked under the spec's fairness.

A walk that returns to a state it visited closes a cycle: the behaviour
that takes the walk's prefix and then runs round that cycle for ever. A
state is also a cycle of length 0 (a behaviour may stutter there for ever).
Each such lasso is tested as checker/search/liveness/fair.py tests a
component of the explored graph, on the one cycle the walk took:

- the property instance's negation (invariants.temporal.Negation): every
  state of the cycle a `stay` state, one a `visit` state, and an `enter`
  state on the cycle or on the run of `stay` states before it (the
  instance is skipped when the walk's initial state satisfies its
  unless_init);
- fairness, per action instance (each parameter tuple): WF_vars(A) fails when
  A is enabled in every state of the cycle and no step of the cycle is an
  A step, SF_vars(A) when A is enabled in one of them and no step is.
  "Enabled" is ENABLED <A>_vars (a successor that differs from the state),
  and a step s -> t is an A step when A has t among its successors of s,
  as on the graph.

A cycle closes at every revisit, from each earlier visit of the state (the
longer ones run round the shorter, so they may be fair where those are
not); the first lasso that passes both tests ends the walk, a violation of
the instance's property. A walk that ends without one says nothing about
the behaviours it did not close (docs/liveness.md).
"""
from __future__ import annotations

from checker.search.liveness.config import LivenessConfig
from checker.search.liveness.run import _Atoms, _plan
from model.base import EvaluationError


class WalkLiveness:
    """The temporal property instances of one configuration, their atoms,
    and the fairness, in one process (kept by the Walker)."""

    def __init__(self, model, properties: list, fairness: list[tuple[str, str]]):
        atoms = _Atoms()
        self.plan = _plan(LivenessConfig(list(properties), list(fairness), None), atoms)
        self.atoms = tuple(atoms.preds)
        # (property, instance, negation, atom indices, unless_init atom) in plan order
        self.rows = [(prop, inst, neg, idx, unless) for prop, rows in self.plan
                     for inst, neg, idx, unless in rows]
        kinds: dict[str, str] = {}
        for kind, name in fairness:
            if kinds.get(name) != "SF":  # SF implies WF: the stronger wins
                kinds[name] = kind
        self.kinds = kinds
        self.bits: dict = {}   # fair action instance -> its bit (assigned as met)
        self.wf = self.sf = 0

    def bit(self, action) -> int:
        b = self.bits.get(action)
        if b is None:
            b = self.bits[action] = 1 << len(self.bits)
            if self.kinds[action.name] == "WF":
                self.wf |= b
            else:
                self.sf |= b
        return b

    def labels(self, state) -> tuple:
        try:
            return tuple(bool(p(state)) for p in self.atoms)
        except EvaluationError as e:
            raise EvaluationError(f"in a temporal property's predicate: {e}", state=state) from e

    def walk(self) -> "WalkCycles":
        return WalkCycles(self)


class WalkCycles:
    """One walk's states as it goes, and the lassos it closes."""

    def __init__(self, live: WalkLiveness):
        self.live = live
        self.states: list = []
        self.labels: list[tuple] = []
        self.succs: list = []          # per state: its successors (set when the walk expands it)
        self.en: list = []             # per state: the fair instances enabled (computed when asked)
        self.at: dict = {}             # fingerprint -> the positions of the state
        self.rows: list = []           # the rows the initial state does not exempt
        self.found = None              # (row, loop, end) of the lasso found
        self.closings = 0              # revisits (each closes a cycle)

    def arrive(self, state, fp) -> None:
        """The walk is at `state` (position len(states))."""
        live = self.live
        labels = live.labels(state)
        if not self.states:
            self.rows = [r for r in live.rows if r[4] is None or not labels[r[4]]]
        self.states.append(state)
        self.labels.append(labels)
        self.succs.append(None)
        self.en.append(None)
        self.at.setdefault(fp, []).append(len(self.states) - 1)

    def closed(self, fp) -> bool:
        """The walk has just arrived at the state of fingerprint fp: a lasso
        from each earlier visit of it; True when one violates."""
        at = self.at[fp]
        if len(at) < 2:
            return False
        self.closings += 1
        if not self.rows:
            return False
        end = at[-1]
        for loop in reversed(at[:-1]):
            row = self._violated(loop, end)
            if row is not None:
                self.found = (row, loop, end)
                return True
        return False

    def expanded(self, succs) -> bool:
        """The current state's successors: stuttering there for ever is a
        lasso too; True when it violates."""
        p = len(self.states) - 1
        self.succs[p] = succs
        if not self.rows:
            return False
        row = self._violated(p, p)
        if row is not None:
            self.found = (row, p, p)
            return True
        return False

    # ---- one lasso -------------------------------------------------------------------

    def _violated(self, loop: int, end: int):
        """The first row whose negation holds on the lasso (prefix to `loop`,
        the cycle loop..end, end == loop: stuttering) with a fair cycle."""
        fair = None
        cycle = range(loop, end) if end > loop else range(loop, loop + 1)
        for row in self.rows:
            if not self._negated(row, loop, end, cycle):
                continue
            if fair is None:
                fair = self._fair(loop, end, cycle)
            if fair:
                return row
        return None

    def _negated(self, row, loop: int, end: int, cycle) -> bool:
        _, _, neg, idx, _ = row
        labels = self.labels
        values = [tuple(labels[i][j] for j in idx) for i in cycle]
        stay, enter, visit = neg.stay, neg.enter, neg.visit
        if stay is not None and not all(stay(v) for v in values):
            return False
        if visit is not None and not any(visit(v) for v in values):
            return False
        entry = enter if enter is not None else stay
        if entry is None or any(entry(v) for v in values):
            return True
        i = loop - 1   # an entry state on the run of stay states before the cycle
        while i >= 0:
            v = tuple(labels[i][j] for j in idx)
            if stay is not None and not stay(v):
                return False
            if entry(v):
                return True
            i -= 1
        return False

    def _fair(self, loop: int, end: int, cycle) -> bool:
        live = self.live
        all_en, some_en, taken = -1, 0, 0
        for i in cycle:
            e = self._enabled(i)
            all_en &= e
            some_en |= e
        for i in range(loop, end):
            taken |= self._taken(i)
        return not (all_en & live.wf & ~taken) and not (some_en & live.sf & ~taken)

    def _enabled(self, i: int) -> int:
        m = self.en[i]
        if m is None:
            live, state, m = self.live, self.states[i], 0
            kinds = live.kinds
            for a, s in self.succs[i]:
                if a.name in kinds and s is not state and s != state:
                    m |= live.bit(a)
            self.en[i] = m
        return m

    def _taken(self, i: int) -> int:
        """The fair instances whose steps include states[i] -> states[i + 1]."""
        live, state, nxt = self.live, self.states[i], self.states[i + 1]
        if nxt is state or nxt == state:
            return 0
        kinds = live.kinds
        m = 0
        for a, s in self.succs[i]:
            if a.name in kinds and (s is nxt or s == nxt):
                m |= live.bit(a)
        return m

    def lasso(self) -> dict:
        """The lasso found, as plain data."""
        (prop, inst, _, _, _), loop, end = self.found
        return {"property": prop.name, "instance": inst.label, "loop": loop, "end": end}


def lasso_holds(live: WalkLiveness, trace: list, loop: int, model, prop_name: str, label: str) -> bool:
    """Whether trace (states 0..n, the cycle loop..n, n == loop: stuttering)
    is a fair lasso violating instance `label` of `prop_name` (the shrinker's
    test of a shorter prefix)."""
    cyc = WalkCycles(live)
    for i, (_, s) in enumerate(trace):
        cyc.arrive(s, i)   # positions, not fingerprints: the cycle is given
    for i in range(loop, max(len(trace) - 1, loop + 1)):
        cyc.succs[i] = list(model.successors(trace[i][1]))
    rows = [r for r in cyc.rows if r[0].name == prop_name and r[1].label == label]
    if not rows:
        return False
    cyc.rows = rows
    return cyc._violated(loop, len(trace) - 1) is not None
