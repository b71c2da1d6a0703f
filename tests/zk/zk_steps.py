"""Stepping a zk model by action name in tests: the one successor of an
action, a run of them, the actions enabled."""
from model.base import Action


def succ(m, s, name, *params):
    return m.successors_of(s, Action(name, params))


def step(m, s, name, *params):
    out = succ(m, s, name, *params)
    assert len(out) == 1, f"{name}{params}: {len(out)} successors"
    return out[0]


def run(m, *steps, state=None):
    s = m.init_states()[0] if state is None else state
    for name, *params in steps:
        s = step(m, s, name, *params)
    return s


def names(m, s):
    return sorted({str(a) for a, _ in m.successors(s)})
