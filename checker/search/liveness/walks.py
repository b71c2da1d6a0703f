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
        self._masks: dict = {}

    def bit(self, action) -> int:
        b = self.bits.get(action)
        if b is None:
            b = self.bits[action] = 1 << len(self.bits)
            if self.kinds[action.name] == "WF":
                self.wf |= b
            else:
                self.sf |= b
        return b

    def masks(self, state) -> tuple[int, int, int, int]:
        """(stay, entry, visit, unless_init) as bit masks over the rows (bit r:
        row r's predicate holds in `state`; None predicates hold), cached by
        the atoms' values."""
        try:
            labels = tuple(bool(p(state)) for p in self.atoms)
        except EvaluationError as e:
            raise EvaluationError(f"in a temporal property's predicate: {e}", state=state) from e
        m = self._masks.get(labels)
        if m is None:
            stay = entry = visit = unless = 0
            for r, (_, _, neg, idx, unl) in enumerate(self.rows):
                v = tuple(labels[j] for j in idx)
                s_ok = neg.stay is None or neg.stay(v)
                e_fn = neg.enter if neg.enter is not None else neg.stay
                b = 1 << r
                stay |= b if s_ok else 0
                entry |= b if e_fn is None or e_fn(v) else 0
                visit |= b if neg.visit is None or neg.visit(v) else 0
                unless |= b if unl is not None and labels[unl] else 0
            m = self._masks[labels] = (stay, entry, visit, unless)
        return m

    def walk(self) -> "WalkCycles":
        return WalkCycles(self)


class WalkCycles:
    """One walk's states as it goes, and the lassos it closes. Per state the
    rows' masks: S (stay), V (visit), E (entered: an entry state at or
    before it with only stay states since, E[p] = S[p] & (entry[p] | E[p-1]));
    a lasso (loop, end) violates row r when r's bit is in every S of the
    cycle, in some V of it and in E[end - 1] (E[loop] for stuttering)."""

    def __init__(self, live: WalkLiveness):
        self.live = live
        self.states: list = []
        self.S: list[int] = []
        self.V: list[int] = []
        self.E: list[int] = []
        self.succs: list = []          # per state: its successors (set when the walk expands it)
        self.en: list = []             # per state: the fair instances enabled (computed when asked)
        self.at: dict = {}             # fingerprint -> the positions of the state
        self.active = 0                # the rows the initial state does not exempt
        self.found = None              # (row, loop, end) of the lasso found
        self.closings = 0              # revisits (each closes a cycle)

    def arrive(self, state, key) -> None:
        """The walk is at `state` (position len(states)); key: its fingerprint."""
        stay, entry, visit, unless = self.live.masks(state)
        if not self.states:
            self.active = ((1 << len(self.live.rows)) - 1) & ~unless
            prev = 0
        else:
            prev = self.E[-1]
        self.states.append(state)
        self.S.append(stay)
        self.V.append(visit)
        self.E.append(stay & (entry | prev))
        self.succs.append(None)
        self.en.append(None)
        self.at.setdefault(key, []).append(len(self.states) - 1)

    def closed(self, key) -> bool:
        """The walk has just arrived at the state of `key` again: a lasso from
        each earlier visit of it (the nearest first); True when one violates."""
        at = self.at[key]
        if len(at) < 2:
            return False
        self.closings += 1
        end = at[-1]
        cand_e = self.E[end - 1] & self.active
        if not cand_e:
            return False
        S, V = self.S, self.V
        all_s, any_v = -1, 0
        loops = at[-2::-1]
        k = 0
        for i in range(end - 1, loops[-1] - 1, -1):
            all_s &= S[i]
            any_v |= V[i]
            if not all_s & cand_e:
                return False
            if i == loops[k]:
                k += 1
                if self._try(all_s & any_v & cand_e, i, end):
                    return True
        return False

    def expanded(self, succs) -> bool:
        """The current state's successors: stuttering there for ever is a
        lasso too; True when it violates."""
        p = len(self.states) - 1
        self.succs[p] = succs
        return self._try(self.S[p] & self.V[p] & self.E[p] & self.active, p, p)

    def _try(self, rows: int, loop: int, end: int) -> bool:
        """A fair cycle loop..end (end == loop: stuttering) violates the
        lowest of `rows`."""
        if not rows or not self._fair(loop, end):
            return False
        r = (rows & -rows).bit_length() - 1
        self.found = (self.live.rows[r], loop, end)
        return True

    def _fair(self, loop: int, end: int) -> bool:
        live = self.live
        all_en, some_en, taken = -1, 0, 0
        for i in (range(loop, end) if end > loop else (loop,)):
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
    rows = 0
    for r, row in enumerate(live.rows):
        if row[0].name == prop_name and row[1].label == label:
            rows |= 1 << r
    n = len(trace) - 1
    cycle = range(loop, n) if n > loop else (loop,)
    all_s, any_v = -1, 0
    for i in cycle:
        all_s &= cyc.S[i]
        any_v |= cyc.V[i]
    return cyc._try(rows & cyc.active & all_s & any_v & cyc.E[max(n - 1, loop)], loop, n)
