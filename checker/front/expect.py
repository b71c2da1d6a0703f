"""A spec's [expect] table against a run's result: what `kmc regress` checks
and what `kmc check` reports when a run matches its spec unchanged."""
from __future__ import annotations


def describe_expect(expect: dict) -> str:
    """Compact: 'pass, 14,304 distinct' or 'LeaderCompletenessProperty @7'."""
    wanted = expect.get("violated")
    if wanted:
        text = (wanted if isinstance(wanted, str) else "+".join(wanted))
        text += f" @{expect['depth']}" if "depth" in expect else ""
    else:
        text = expect.get("outcome", "?")
        if "depth" in expect:
            text += f" @{expect['depth']}" if text != "pass" else f", depth {expect['depth']}"
    if "distinct" in expect:
        text += f", {expect['distinct']:,} distinct"
    if "generated" in expect:
        text += f", {expect['generated']:,} generated"
    if "per_level_distinct" in expect:
        text += ", per level"
    if expect.get("sometimes"):
        text += f", {len(expect['sometimes'])} witness{'es' if len(expect['sometimes']) > 1 else ''}"
    return text


def unreached_witnesses(expect: dict, result) -> list[str]:
    """The witnesses of expect.sometimes that the run never reached."""
    return [n for n in expect.get("sometimes", ()) if result.sometimes.get(n) is None]


def witness_problems(expect: dict, result) -> list[str]:
    """One line per expected witness never reached: a pass that may be vacuous."""
    stopped = " (the search stopped at the first violation)" if result.violations else ""
    return [f"witness {n} never reached{stopped}: the fault it shows did not happen, "
            f"so the spec's verdict may be vacuous" for n in unreached_witnesses(expect, result)]


def compare(expect: dict, result) -> tuple[str, list[str]]:
    """(what we got, compact like describe_expect; the expectations not met)."""
    problems: list[str] = []
    violated = list(result.violated)
    by_name = {v.property: v.depth for v in result.violations}
    outcome = expect.get("outcome")
    wanted = expect.get("violated")
    names = [wanted] if isinstance(wanted, str) else list(wanted or [])
    if result.outcome == "violation":
        first = next((n for n in names if n in by_name), violated[0])
        got = f"{first} @{by_name[first]}"
        if len(violated) > 1:
            got += f" (+{len(violated) - 1} more)"
    elif result.outcome == "error":
        got = f"evaluation error @{result.error.depth}"
    else:
        got = f"pass, depth {result.depth}" + (" (all)" if result.exhausted else "")
    got += f", {result.distinct:,} distinct"
    if outcome is None and names:
        outcome = "violation"
    if outcome is not None and outcome != result.outcome:
        problems.append(f"outcome {result.outcome}, expected {outcome}")
    for name in names:
        if name not in by_name:
            problems.append(f"{name} not violated" + (f" (violated: {', '.join(violated)})" if violated else ""))
    if "depth" in expect:
        if names and names[0] in by_name:
            depth = by_name[names[0]]
        elif result.violations:
            depth = result.violations[0].depth
        else:
            depth = result.depth
        if depth != expect["depth"]:
            problems.append(f"depth {depth}, expected {expect['depth']}")
    for key, actual in (("distinct", result.distinct), ("generated", result.generated),
                        ("per_level_distinct", list(result.per_level_distinct))):
        if key in expect and expect[key] != actual:
            problems.append(f"{key} {actual!r}, expected {expect[key]!r}")
    wanted_witnesses = expect.get("sometimes", [])
    if wanted_witnesses:
        reached = len(wanted_witnesses) - len(unreached_witnesses(expect, result))
        got += f", {reached}/{len(wanted_witnesses)} witnessed"
    problems += witness_problems(expect, result)
    return got, problems


# the figures two engines must agree on (wall time, memory and engine notes aside)
SAME = ("outcome", "distinct", "generated", "per_level_distinct", "per_action_generated",
        "per_action_distinct", "depth", "sometimes", "states_left", "exhausted")


def differences(first, other) -> list[str]:
    """Where `other`'s result differs from `first`'s: one line per figure, and
    the violated properties with their depths and traces' actions."""
    out = [f"{f} {getattr(other, f)!r}, not {getattr(first, f)!r}" for f in SAME
           if getattr(other, f) != getattr(first, f)]

    def shape(r):
        return [(v.property, v.depth, [str(a) for a, _ in v.trace]) for v in r.violations]

    if shape(other) != shape(first):
        out.append(f"violations {[(p, d) for p, d, _ in shape(other)]}, not "
                   f"{[(p, d) for p, d, _ in shape(first)]} (or other traces)")
    return out
