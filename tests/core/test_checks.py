"""Which predicates a successor is checked against (checker/search/checks.py):
a property only when a variable it reads changed, an invariant with parts
only in the parts whose variables changed (Property.parts)."""
from __future__ import annotations

import pytest

from checker.search.checks import EVERY_VARIABLE, Checks
from checker.search.engine import CheckOptions, ExpandContext, check, expand_chunk
from checker.search.registry import build
from model.base import ALWAYS, SOMETIMES, Property


def diehard():
    model, _ = build("diehard", None, {"BigCapacity": 5, "SmallCapacity": 3, "Goal": 4})
    return model


def not_full(reads_of_big=("big",)) -> Property:
    """The big jug never full (and the small jug within its capacity), by
    parts; `reads_of_big`: what the big jug's part declares it reads."""
    return Property("NotFull", ALWAYS, lambda s: s.big < 5 and s.small <= 3, reads=("big", "small"),
                    parts=((reads_of_big, lambda s: s.big < 5), (("small",), lambda s: s.small <= 3)))


def test_a_step_runs_the_parts_of_the_variables_it_changed():
    model = diehard()
    checks = Checks(model, [not_full(), Property("Sum", ALWAYS, lambda s: True, reads=("big", "small")),
                            Property("Any", ALWAYS, lambda s: True),
                            Property("Seen", SOMETIMES, lambda s: True, reads=("small",))])
    big, small = 1 << 0, 1 << 1
    assert [name for name, _, _ in checks.always] == ["NotFull", "NotFull", "Sum", "Any"]
    assert [name for name, _ in checks.always_for(big)] == ["NotFull", "Sum", "Any"]
    assert [name for name, _ in checks.always_for(small)] == ["NotFull", "Sum", "Any"]
    assert [name for name, _ in checks.always_for(big | small)] == ["NotFull", "NotFull", "Sum", "Any"]
    init = next(iter(model.init_states()))
    assert checks.always_for(big)[0][1](init._replace(big=5)) is False  # the big jug's part
    assert checks.always_for(EVERY_VARIABLE) == checks.always_for(big | small)
    assert checks.masks == {"NotFull": 3, "Sum": 3, "Any": EVERY_VARIABLE, "Seen": 2}
    assert checks.pending([p for p in [Property("Seen", SOMETIMES, bool, reads=("small",))]])[0][2] == 2


def test_only_an_invariant_has_parts():
    with pytest.raises(ValueError, match="only an invariant"):
        Property("Seen", SOMETIMES, bool, parts=((("big",), bool),))


def test_the_engine_runs_parts_by_what_changed():
    """FillBigJug (0,0) -> (5,0) changes the big jug only: the honest parts
    find NotFull violated there, at 1 step, as the whole predicate does. A big
    jug's part declaring that it reads the small jug is not run on that step,
    nor on (0,3) -> (5,3) (FillBigJug again), which BFS meets before (5,0) ->
    (5,3): it finds the violation only at 4 steps. So the engine runs parts,
    and by their declarations."""
    model = diehard()
    whole = Property("NotFull", ALWAYS, lambda s: s.big < 5 and s.small <= 3, reads=("big", "small"))
    options = CheckOptions()
    depth = {name: check(model, [p], options).violations[0].depth
             for name, p in [("whole", whole), ("parts", not_full()), ("narrow", not_full(("small",)))]}
    assert depth == {"whole": 1, "parts": 1, "narrow": 4}


def test_a_state_failing_two_parts_is_one_violation():
    model = diehard()
    both = Property("NotFull", ALWAYS, lambda s: s.big < 5, reads=("big",),
                    parts=((("big",), lambda s: s.big < 5), (("big",), lambda s: s.big < 4)))
    ctx = ExpandContext.create(model, [both], stop_on_violation=False)
    init = ctx.entry(next(iter(model.init_states())))
    res = expand_chunk(ctx, [init], {init[2]})
    full = [i for i, entry in enumerate(res.new) if entry[0].big == 5]
    assert [index for name, index in res.violations] == full == [1]
