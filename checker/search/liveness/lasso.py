"""Lasso counterexamples of temporal properties: a prefix from an initial state
and a cycle that repeats for ever (their text, ITF and HTML forms are the
output's: checker/output/lasso.py).

The trace [(None, s0), (a1, s1), ..., (an, sn)] of a LassoViolation holds
the prefix and then the cycle's steps: states loop..n-1 are the cycle and
step n returns to state `loop` (sn == s_loop). A stuttering lasso (the
behaviour stays in its last state for ever, no fair action being enabled
there) has an empty cycle: loop == n.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from checker.search.engine import Violation


@dataclass
class LassoViolation(Violation):
    loop: int = 0                 # index of the state the cycle starts (and ends) in
    instance: str = ""            # the property instance violated, e.g. "b=2"
    headline: str = ""            # what never happens, in the model's terms
    form: str = ""                # the property's form, e.g. "\\A b \\in Brokers : P ~> Q"
    fairness: list = field(default_factory=list)
    enabled_unfair: list = field(default_factory=list)  # at a stuttering state: enabled, not fair
    full: str = ""                # the whole headline, when read back from a run (kmc trace)
    bounds: list = field(default_factory=list)     # the model's bounds that stop the actions below
    bounded: list = field(default_factory=list)    # fair actions enabled on the cycle but for them

    @property
    def stuttering(self) -> bool:
        return self.loop == len(self.trace) - 1

    @property
    def prefix_steps(self) -> int:
        return self.loop

    @property
    def cycle_steps(self) -> int:
        return len(self.trace) - 1 - self.loop

    def structure(self) -> str:
        if self.stuttering:
            return (f"a prefix of {self.prefix_steps} steps, then stuttering for ever in state "
                    f"{self.loop}")
        return (f"a prefix of {self.prefix_steps} steps to state {self.loop}, then a cycle of "
                f"{self.cycle_steps} steps back to it, repeated for ever")

    def to_json(self) -> dict:
        return {"property": self.property, "kind": "liveness", "instance": self.instance,
                "headline": self.headline, "form": self.form, "depth": self.depth,
                "loop": self.loop, "prefix_steps": self.prefix_steps,
                "cycle_steps": self.cycle_steps, "stuttering": self.stuttering,
                "actions": [str(a) for a, _ in self.trace[1:]]}


def bound_stops(model, trace: list, loop: int, fair: set) -> tuple[list[str], list[str]]:
    """(the model's progress bounds, the actions under fairness that the lasso's
    cycle (or stuttering state) would enable without them): a verdict that is
    the bound's, not the protocol's. Nothing when the model has no such bound."""
    bounds = getattr(model, "progress_bounds", None)
    found = bounds() if bounds is not None else {}
    if not found or getattr(model, "without_bounds", None) is None:
        return [], []
    free = model.without_bounds()
    stopped: dict = {}
    for _, state in trace[loop:]:
        enabled = {str(a) for a, t in model.successors(state) if t != state}
        for a, t in free.successors(state):
            if a.name in fair and t != state and str(a) not in enabled:
                stopped[str(a)] = True
    return (list(found.values()), list(stopped)) if stopped else ([], [])


def _bound_text(v: LassoViolation) -> str:
    shown = v.bounded[:6] + (["..."] if len(v.bounded) > 6 else [])
    return (f", because the bound {' and '.join(v.bounds)} disables {', '.join(shown)}, which "
            f"fairness would force without it: the verdict is the bound's, not the protocol's")


def describe_cycle(v: LassoViolation) -> str:
    """The 'while ...' of the headline: what the behaviour does for ever."""
    bound = _bound_text(v) if v.bounded else ""
    if v.stuttering:
        text = "nothing happens any more: no action under fairness is enabled"
        if v.enabled_unfair:
            shown = v.enabled_unfair[:6]
            text += (" (" + ", ".join(shown) + (", ..." if len(v.enabled_unfair) > 6 else "")
                     + " could still happen"
                     + ", but no fairness forces " + ("them" if len(v.enabled_unfair) > 1 else "it")
                     + ")")
        return text + bound
    actions = [str(a) for a, _ in v.trace[v.loop + 1:]]
    shown = actions if len(actions) <= 8 else actions[:7] + ["..."]
    return f"the cycle {' -> '.join(shown)} repeats for ever{bound}"


def full_headline(v: LassoViolation) -> str:
    return v.full or f"{v.headline} while {describe_cycle(v)}."


def header(v: LassoViolation) -> str:
    inst = f" ({v.instance})" if v.instance else ""
    return (f"Temporal property {v.property}{inst} is violated: {full_headline(v)}\n"
            f"Lasso: {v.structure()}" + (f"; form {v.form}" if v.form else "") + ".")
