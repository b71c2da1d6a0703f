"""An independent check of a lasso counterexample, through the model alone
(not the checker's graph): every step is a successor the model generates,
the cycle closes, the cycle is fair for the fairness given, and the lasso
violates the property instance it names."""
from __future__ import annotations

from invariants.temporal import AlwaysEventually, EventuallyAlways, LeadsTo


def replay_ok(model, trace) -> None:
    """Every step of trace is one of the model's successors (by value)."""
    inits = list(model.init_states())
    assert trace[0][0] is None and trace[0][1] in inits, "the lasso does not start in an initial state"
    for i in range(1, len(trace)):
        prev, (action, state) = trace[i - 1][1], trace[i]
        assert any(a == action and s == state for a, s in model.successors(prev)), \
            f"step {i} ({action}) is not a successor of state {i - 1}"


def _taken(model, s, t) -> set:
    """The actions whose step s -> t is a non-stuttering step of theirs."""
    if s == t:
        return set()
    return {a for a, u in model.successors(s) if u == t}


def _enabled(model, s) -> set:
    """The action instances with a step that changes s (ENABLED <A>_vars)."""
    return {a for a, u in model.successors(s) if u != s}


def cycle_is_fair(model, trace, loop: int, fairness: list[tuple[str, str]]) -> bool:
    """WF / SF of every instance of the named actions, on the cycle."""
    n = len(trace) - 1
    if loop == n:  # stuttering in the last state
        states = [trace[n][1]]
        taken: set = set()
    else:
        assert trace[n][1] == trace[loop][1], "the cycle does not return to its first state"
        states = [trace[i][1] for i in range(loop, n)]
        taken = set()
        for i in range(loop + 1, n + 1):
            taken |= _taken(model, trace[i - 1][1], trace[i][1])
    kinds = dict((name, kind) for kind, name in fairness)
    enabled = [_enabled(model, s) for s in states]
    instances = {a for en in enabled for a in en if a.name in kinds}
    for a in instances:
        on_all = all(a in en for en in enabled)
        if kinds[a.name] == "WF" and on_all and a not in taken:
            return False
        if kinds[a.name] == "SF" and a not in taken:
            return False
    return True


def violates(formula, trace, loop: int, unless_init=None) -> bool:
    """Whether the lasso behaviour (trace[:loop] then trace[loop:] for ever,
    or stuttering in trace[-1]) violates the formula."""
    states = [s for _, s in trace]
    n = len(states) - 1
    cycle = [states[n]] if loop == n else states[loop:n]
    if unless_init is not None and unless_init(states[0]):
        return False

    def leads_to_fails_from(p, q, i) -> bool:
        return p(states[i]) and not q(states[i]) and all(not q(s) for s in states[i:]) \
            and all(not q(s) for s in cycle)

    if isinstance(formula, LeadsTo):
        return any(leads_to_fails_from(formula.p, formula.q, i) for i in range(len(states)))
    body = formula.body
    if isinstance(body, LeadsTo):  # []<>(P ~> Q): ~Q on the cycle, P somewhere on it
        return all(not body.q(s) for s in cycle) and any(body.p(s) for s in cycle)
    if isinstance(formula, AlwaysEventually):
        return all(not body(s) for s in cycle)
    if isinstance(formula, EventuallyAlways):
        return any(not body(s) for s in cycle)
    raise TypeError(formula)


def check_lasso(model, violation, temporal_property, fairness) -> None:
    """Assert the LassoViolation is a real, fair behaviour violating its instance."""
    replay_ok(model, violation.trace)
    assert cycle_is_fair(model, violation.trace, violation.loop, fairness), "the cycle is not fair"
    inst = next(i for i in temporal_property.instances if (i.label or temporal_property.name)
                == (violation.instance or temporal_property.name))
    assert violates(inst.formula, violation.trace, violation.loop, inst.unless_init), \
        "the lasso does not violate the property"
