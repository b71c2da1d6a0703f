"""Scenarios: a protocol description's worked example, replayed action by action.

`kmc scenario FILE...` drives a model through the steps a scenario file names
and asserts, after each, the facts the description states (KIP-966 description
5.2.2: `Leader=3, ISR=[3], ELR=[]`). Every ALWAYS property of the model must
hold in every state of the scenario, unless a step says it `violates` it.

    model = "kraft"                  # required: a registered model
    variant = "kip966"               # default: the model's first variant
    description = "..."              # optional, printed
    invariants = ["TypeOK"]          # optional: the ALWAYS properties to check (default: all)
    sometimes = ["RecordCommitted"]  # optional: witnesses that must hold in some state of it
    [constants]                      # unset constants take the model's defaults
    BrokerCount = 3

    [init]                           # optional: facts of the initial state
    expect = { leader = 1, isr = [1, 2, 3], elr = [] }
    note = "5.2.2 step 1: Leader=1, ISR=[1,2,3], ELR=[]"

    [[step]]
    action = "WriteRecordToLeader(1)"  # the label as traces print it: name(params)
    where = { sent = ["A"] }         # optional: keep the successors with these facts
    pick = 1                         # optional: the n-th (1 = first) of the rest
    expect = { b1 = { leo = 2, log = ["A@1"] } }   # facts asserted after the step
    violates = ["SomeInvariant"]     # optional: ALWAYS properties this state breaks
    note = "why (cite the section); printed with the step"

Steps. `action = "FenceBroker(2)"` takes the successor of the current state
produced by that action (params compared as printed, blanks ignored);
`action = "FenceBroker"` (no parentheses) accepts any parameters. Successors
equal as states count once. If several distinct successors remain, `where`
keeps those whose facts match, then `pick` chooses by position in the model's
enumeration order; a step left ambiguous fails and names the facts in which
the candidates differ. A step no successor matches fails and names the
enabled actions (the scenario stops there).

Facts. A model's ModelDef may name `facts(model, state) -> dict` (kraft:
model/kraft/facts.py); other models' facts are their state variables by
name. Fact names are flat ("b1.leo"); a nested table
`b1 = { leo = 2 }` means the same. Values: TOML ints, strings, booleans,
lists (compared as a set when the fact is a set), inline tables for records,
"Nil" for Nil.

`kmc scenario FILE --show-facts` also prints every fact that changed at
each step: the quickest way to write a new scenario is to list the actions,
run it, and turn the printed facts into `expect` tables.

Exit codes: 0 every step passed; 1 a step failed (an expected fact, an
invariant, no or an ambiguous successor; each failure ends as one line
`FAIL FILE: step N ACTION: FACT: expected X, actual Y`; a wrong fact does not
stop the replay, a step without its successor does); 2 a malformed file (TOML, unknown key, model, variant, constant,
action, fact or property: one line); 3 the model raised an evaluation error.
"""
from __future__ import annotations

import difflib
import json
import re
import textwrap
from dataclasses import dataclass, field
from enum import IntEnum
from pathlib import Path
from typing import Any, Callable

import click

from checker.front.spec import read_toml
from checker.search import registry
from checker.search.errors import EXIT_OK, EXIT_VIOLATION, EngineEvaluationError, KmcError, SpecError
from model.base import ALWAYS, SOMETIMES, EvaluationError, ModelConfigError

TOP_LEVEL_KEYS = ("model", "variant", "description", "invariants", "sometimes", "constants", "init",
                  "step")
STEP_KEYS = ("action", "where", "pick", "expect", "violates", "note")
INIT_KEYS = ("where", "pick", "expect", "violates", "note")
NIL = "Nil"
_LABEL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\(.*\))?\s*$")


# ---- facts -------------------------------------------------------------------

def facts_function(model) -> Callable[[Any, tuple], dict]:
    """The model's facts (its ModelDef's, e.g. model/kraft/facts.py), else
    its variables by name (registry.variable_facts)."""
    return registry.facts_function(model)


def show(v, toml: bool = False) -> str:
    """A value as a scenario file writes it (TOML-like); toml=True: strict
    TOML that a scenario file reads back (Nil as a string, keys quoted, a
    value with no TOML form a ValueError)."""
    if v is None:
        return json.dumps(NIL) if toml else NIL
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, IntEnum):
        return json.dumps(v.name)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return json.dumps(v)
    key = json.dumps if toml else str
    if isinstance(v, (frozenset, set)):
        return "[" + ", ".join(show(x, toml) for x in sorted(v, key=_order)) + "]"
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return "{" + ", ".join(f"{key(k)} = {show(x, toml)}" for k, x in zip(v._fields, v)) + "}"
    if isinstance(v, (tuple, list)):
        return "[" + ", ".join(show(x, toml) for x in v) + "]"
    if isinstance(v, dict) and (not toml or all(isinstance(k, str) for k in v)):
        return "{" + ", ".join(f"{key(k)} = {show(x, toml)}" for k, x in v.items()) + "}"
    if toml:
        raise ValueError(f"no TOML form for {v!r}")
    return str(v)


def _order(x):
    if isinstance(x, int) and not isinstance(x, bool):
        return (0, int(x), "")
    return (1, 0, show(x))


def matches(expected, actual) -> bool:
    """Does the TOML value `expected` describe the model value `actual`?"""
    if actual is None:
        return expected == NIL
    if isinstance(actual, bool):
        return isinstance(expected, bool) and expected == actual
    if isinstance(actual, IntEnum):
        return isinstance(expected, str) and expected == actual.name
    if isinstance(actual, int):
        return isinstance(expected, int) and not isinstance(expected, bool) and expected == actual
    if isinstance(actual, str):
        return isinstance(expected, str) and expected == actual
    if isinstance(actual, (frozenset, set)):
        if not isinstance(expected, list) or len(expected) != len(actual):
            return False
        left = list(expected)
        for a in actual:  # each member matched by a distinct expected item
            for i, e in enumerate(left):
                if matches(e, a):
                    del left[i]
                    break
            else:
                return False
        return True
    if isinstance(actual, tuple) and hasattr(actual, "_fields"):
        return (isinstance(expected, dict) and set(expected) == set(actual._fields)
                and all(matches(expected[k], getattr(actual, k)) for k in actual._fields))
    if isinstance(actual, (tuple, list)):
        return (isinstance(expected, list) and len(expected) == len(actual)
                and all(matches(e, a) for e, a in zip(expected, actual)))
    if isinstance(actual, dict):
        return (isinstance(expected, dict) and set(expected) == set(actual)
                and all(matches(expected[k], actual[k]) for k in actual))
    return expected == actual


# ---- loading -----------------------------------------------------------------

@dataclass
class Step:
    index: int                 # 0: the initial state
    action: str | None         # the label as written; None for the initial state
    name: str | None           # action name
    params: str | None         # "(2)" without blanks; None: any parameters
    where: dict[str, Any] = field(default_factory=dict)
    pick: int | None = None
    expect: dict[str, Any] = field(default_factory=dict)
    violates: tuple[str, ...] = ()
    note: str = ""

    @property
    def title(self) -> str:
        return "init" if self.index == 0 else f"step {self.index}"


@dataclass
class Scenario:
    path: Path
    model_name: str
    variant: str
    constants: dict[str, Any]
    description: str
    model: Any
    properties: list            # the ALWAYS properties checked at every state
    facts: Callable[[Any, tuple], dict]
    steps: list[Step]           # steps[0] is the initial state's
    witnesses: list = field(default_factory=list)  # SOMETIMES properties some state must satisfy

    @property
    def name(self) -> str:
        return self.path.name


def _bad(path: Path, where: str, message: str) -> SpecError:
    return SpecError(f"{path}: {where}{': ' if where else ''}{message}")


def _flatten(table: dict, known: set, prefix: str = "") -> dict:
    """{b1 = {leo = 2}} -> {"b1.leo": 2}, unless "b1" itself is a fact."""
    out = {}
    for k, v in table.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and name not in known:
            out.update(_flatten(v, known, name + "."))
        else:
            out[name] = v
    return out


def _suggest(name: str, known) -> str:
    close = difflib.get_close_matches(name, list(known), n=3)
    return f" (did you mean {', '.join(close)}?)" if close else ""


def _known_text(known) -> str:
    """The known fact names, per-broker ones once as b<n>.name."""
    names = dict.fromkeys(re.sub(r"^b\d+\.", "b<n>.", n) for n in sorted(known))
    return ", ".join(names)


def _facts_table(path, where, key, value, known) -> dict:
    if not isinstance(value, dict):
        raise _bad(path, where, f"{key} must be a table of facts, not {show(value)}")
    flat = _flatten(value, known)
    for name in flat:
        if name not in known:
            raise _bad(path, where, f"unknown fact {name!r} in {key}{_suggest(name, known)} "
                       f"(known: {_known_text(known)})")
    return flat


def _parse_step(path, index: int, raw, model, known_facts, always: set) -> Step:
    where = "[init]" if index == 0 else f"step {index}"
    if not isinstance(raw, dict):
        raise _bad(path, where, "must be a table")
    keys = INIT_KEYS if index == 0 else STEP_KEYS
    unknown = [k for k in raw if k not in keys]
    if unknown:
        raise _bad(path, where, f"unknown key(s) {', '.join(map(repr, unknown))} (known: {', '.join(keys)})")
    step = Step(index, None, None, None)
    if index:
        if "action" not in raw:
            raise _bad(path, where, "missing key 'action' (an action with its parameters, e.g. action = \"RMPrepare(r1)\")")
        label = raw["action"]
        m = _LABEL.match(label) if isinstance(label, str) else None
        if m is None:
            raise _bad(path, where, f"action must be a label Name or Name(params), not {show(label)}")
        name = m.group(1)
        actions = tuple(model.action_names)
        if name not in actions:
            raise _bad(path, where, f"unknown action {name!r}{_suggest(name, actions)} "
                       f"(actions of {model.name}/{model.variant}: {', '.join(actions)})")
        step.action, step.name = label.strip(), name
        step.params = None if m.group(2) is None else "".join(m.group(2).split())
        where = f"step {index} {step.action}"
    if "where" in raw:
        step.where = _facts_table(path, where, "where", raw["where"], known_facts)
    if "expect" in raw:
        step.expect = _facts_table(path, where, "expect", raw["expect"], known_facts)
    if "pick" in raw:
        pick = raw["pick"]
        if not isinstance(pick, int) or isinstance(pick, bool) or pick < 1:
            raise _bad(path, where, f"pick must be a position 1, 2, ..., not {show(pick)}")
        step.pick = pick
    if "violates" in raw:
        names = raw["violates"]
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _bad(path, where, "violates must be a list of property names")
        for n in names:
            if n not in always:
                raise _bad(path, where, f"unknown invariant {n!r} in violates{_suggest(n, always)} "
                           f"(checked: {', '.join(sorted(always))})")
        step.violates = tuple(names)
    if "note" in raw:
        if not isinstance(raw["note"], str):
            raise _bad(path, where, "note must be a string")
        step.note = raw["note"]
    return step


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; SpecError (exit 2) for anything malformed."""
    path = Path(path)
    data = read_toml(path, "scenario")
    unknown = [k for k in data if k not in TOP_LEVEL_KEYS]
    if unknown:
        raise _bad(path, "", f"unknown key(s) {', '.join(map(repr, unknown))} "
                   f"(known: {', '.join(TOP_LEVEL_KEYS)})")
    if not isinstance(data.get("model"), str):
        raise _bad(path, "", "missing key 'model' (a model name, as `kmc list` names them)")
    for key in ("variant", "description"):
        if key in data and not isinstance(data[key], str):
            raise _bad(path, "", f"{key} must be a string")
    constants = data.get("constants", {})
    if not isinstance(constants, dict):
        raise _bad(path, "", "[constants] must be a table")
    try:
        defn = registry.model_def(data["model"])
        variant, _ = registry.variant_constants(defn, data.get("variant"))
        resolved = registry.resolve_constants(defn, variant, constants)
        model, properties = registry.build(defn.name, variant, resolved)
    except SpecError as e:
        raise _bad(path, "", e.one_line()) from None
    except ModelConfigError as e:
        raise _bad(path, "", f"constants rejected by the model: {e}") from None

    always = [p for p in properties if p.kind == ALWAYS]
    by_name = {p.name: p for p in always}
    if "invariants" in data:
        names = data["invariants"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise _bad(path, "", "invariants must be a list of property names")
        for n in names:
            if n not in by_name:
                raise _bad(path, "", f"unknown invariant {n!r}{_suggest(n, by_name)} "
                           f"(ALWAYS properties of {defn.name}/{variant}: {', '.join(by_name)})")
        always = [by_name[n] for n in dict.fromkeys(names)]
    witness_by_name = {p.name: p for p in properties if p.kind == SOMETIMES}
    names = data.get("sometimes", [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _bad(path, "", "sometimes must be a list of witness names")
    for n in names:
        if n not in witness_by_name:
            raise _bad(path, "", f"unknown witness {n!r}{_suggest(n, witness_by_name)} "
                       f"(SOMETIMES properties of {defn.name}/{variant}: {', '.join(witness_by_name)})")
    witnesses = [witness_by_name[n] for n in dict.fromkeys(names)]

    facts = facts_function(model)
    try:
        inits = list(model.init_states())
    except EvaluationError as e:
        raise EngineEvaluationError(f"{path}: the initial state: {e}") from None
    if not inits:
        raise _bad(path, "", f"model {defn.name}/{variant} has no initial state")
    known = set(facts(model, inits[0]))

    raw_init = data.get("init", {})
    raw_steps = data.get("step", [])
    if not isinstance(raw_steps, list):
        raise _bad(path, "", "steps are an array of tables: write [[step]], not [step]")
    checked = {p.name for p in always}
    steps = [_parse_step(path, 0, raw_init, model, known, checked)]
    steps += [_parse_step(path, i, raw, model, known, checked) for i, raw in enumerate(raw_steps, 1)]
    return Scenario(path, defn.name, variant, resolved, data.get("description", ""), model,
                    always, facts, steps, witnesses)


# ---- running -----------------------------------------------------------------

@dataclass
class StepResult:
    step: Step
    label: str                          # the action taken ("init" for the initial state)
    state: Any = None                   # None when no successor could be taken
    facts: dict = field(default_factory=dict)
    checked: list = field(default_factory=list)   # (name, expected, actual, ok)
    failures: list = field(default_factory=list)  # one-line messages
    choice: str = ""                    # how the successor was chosen, when it had to be

    @property
    def ok(self) -> bool:
        return not self.failures


@dataclass
class ScenarioResult:
    scenario: Scenario
    steps: list[StepResult]

    @property
    def unreached(self) -> list[str]:
        """The scenario's witnesses (`sometimes`) that no state of the replay satisfies."""
        states = [r.state for r in self.steps if r.state is not None]
        return [p.name for p in self.scenario.witnesses if not any(p.predicate(s) for s in states)]

    @property
    def ok(self) -> bool:
        return (all(r.ok for r in self.steps) and len(self.steps) == len(self.scenario.steps)
                and not self.unreached)

    @property
    def failures(self) -> list[str]:
        return ([f"{r.step.title} {r.label}: {msg}" if r.step.index else f"init: {msg}"
                 for r in self.steps for msg in r.failures]
                + [f"witness {n} never reached: the fault it shows did not happen"
                   for n in self.unreached])


def _label_matches(step: Step, action) -> bool:
    if action.name != step.name:
        return False
    return step.params is None or "".join(str(action).split()) == step.name + step.params


def _distinct(candidates: list) -> list:
    """Drop successors equal to an earlier one (same state, same action)."""
    seen, out = set(), []
    for a, s in candidates:
        key = (str(a), s)
        if key not in seen:
            seen.add(key)
            out.append((a, s))
    return out


def _differences(sc: Scenario, candidates: list) -> str:
    """How the candidate successors differ, by fact (else by variable)."""
    all_facts = [sc.facts(sc.model, s) for _, s in candidates]
    keys = [k for k in all_facts[0] if len({show(f.get(k)) for f in all_facts}) > 1]
    if keys:
        keys = keys[:4]
        return "; ".join(f"#{i}: " + ", ".join(f"{k} = {show(f.get(k))}" for k in keys)
                         for i, f in enumerate(all_facts, 1))
    fields = getattr(candidates[0][1], "_fields", ())
    differ = [name for j, name in enumerate(fields)
              if len({repr(s[j]) for _, s in candidates}) > 1]
    return (f"they differ in no fact, only in the variable(s) {', '.join(differ)}"
            if differ else "they differ only in their action labels: "
            + ", ".join(str(a) for a, _ in candidates))


def _choose(sc: Scenario, step: Step, candidates: list, result: StepResult):
    """The one successor the step means, or None (a failure is recorded)."""
    candidates = _distinct(candidates)
    total = len(candidates)
    if step.where:
        kept = []
        for a, s in candidates:
            f = sc.facts(sc.model, s)
            if all(k in f and matches(v, f[k]) for k, v in step.where.items()):
                kept.append((a, s))
        if not kept:
            seen = "; ".join(
                f"{a if a is not None else f'initial state {i}'}: "
                + ", ".join(f"{k} = {show(sc.facts(sc.model, s).get(k))}" for k in step.where)
                for i, (a, s) in enumerate(candidates[:6], 1))
            result.failures.append(
                f"none of the {total} successor(s) has where {{{_facts_text(step.where)}}} ({seen})")
            return None
        candidates = kept
    if step.pick is not None:
        if step.pick > len(candidates):
            result.failures.append(f"pick = {step.pick}, but only {len(candidates)} successor(s) match")
            return None
        chosen = candidates[step.pick - 1]
    elif len(candidates) > 1:
        result.failures.append(
            f"{len(candidates)} distinct successors match; add `where` (facts) or `pick` (1..{len(candidates)}): "
            + _differences(sc, candidates))
        return None
    else:
        chosen = candidates[0]
    if total > 1:
        how = []
        if step.where:
            how.append(f"where {{{_facts_text(step.where)}}}")
        if step.pick is not None:
            how.append(f"pick {step.pick}")
        result.choice = f"1 of {total} distinct successors, by {' and '.join(how)}"
    return chosen


def _facts_text(table: dict) -> str:
    return ", ".join(f"{k} = {show(v)}" for k, v in table.items())


def _assert_state(sc: Scenario, step: Step, state, result: StepResult) -> None:
    try:
        f = sc.facts(sc.model, state)
    except EvaluationError as e:
        raise EngineEvaluationError(f"{sc.path}: {step.title}: computing the facts: {e}") from None
    result.state, result.facts = state, f
    for name, expected in step.expect.items():
        if name not in f:  # a facts function must give every state the same names
            result.failures.append(f"{name}: not a fact of this state")
            continue
        actual = f[name]
        ok = matches(expected, actual)
        result.checked.append((name, expected, actual, ok))
        if not ok:
            result.failures.append(f"{name}: expected {show(expected)}, actual {show(actual)}")
    for p in sc.properties:
        try:
            holds = bool(p.predicate(state))
        except EvaluationError as e:
            raise EngineEvaluationError(f"{sc.path}: {step.title}: evaluating {p.name}: {e}") from None
        if p.name in step.violates:
            if holds:
                result.failures.append(f"invariant {p.name} holds, the step says it is violated")
        elif not holds:
            result.failures.append(f"invariant {p.name} is violated")


def run_scenario(sc: Scenario, on_step: Callable[[StepResult], None] | None = None) -> ScenarioResult:
    """Replay the scenario; a step whose successor cannot be chosen ends it.
    EngineEvaluationError (exit 3) if the model raises an evaluation error."""
    results: list[StepResult] = []
    model = sc.model
    init = sc.steps[0]
    r = StepResult(init, "init")
    chosen = _choose(sc, init, [(None, s) for s in model.init_states()], r)
    if chosen is not None:
        _assert_state(sc, init, chosen[1], r)
    results.append(r)
    if on_step:
        on_step(r)
    state = r.state
    for step in sc.steps[1:]:
        if state is None:
            break
        r = StepResult(step, step.action)
        try:
            succ = list(model.successors(state))
        except EvaluationError as e:
            raise EngineEvaluationError(f"{sc.path}: {step.title} {step.action}: the model "
                                        f"raised an evaluation error: {e}") from None
        candidates = [(a, s) for a, s in succ if _label_matches(step, a)]
        if not candidates:
            enabled = sorted({str(a) for a, _ in succ})
            r.failures.append(f"no successor by {step.action}; enabled: "
                              f"{', '.join(enabled) if enabled else 'none (deadlock)'}")
        else:
            chosen = _choose(sc, step, candidates, r)
            if chosen is not None:
                r.label = str(chosen[0])
                _assert_state(sc, step, chosen[1], r)
        results.append(r)
        if on_step:
            on_step(r)
        state = r.state
    return ScenarioResult(sc, results)


# ---- printing ----------------------------------------------------------------

INDENT = " " * 10


def format_step(r: StepResult, previous: dict | None = None, show_facts: bool = False) -> list[str]:
    """The lines `kmc scenario` prints for one step."""
    head = "init" if r.step.index == 0 else f"{r.step.index:>3}  {r.label}"
    lines = [f"  {head:<48} {'ok' if r.ok else 'FAIL'}"]
    if r.choice:
        lines.append(f"{INDENT}({r.choice})")
    good = [f"{n} = {show(e)}" for n, e, a, ok in r.checked if ok]
    if good:
        lines += _wrap("", good, ", ", INDENT)
    for msg in r.failures:
        lines.append(f"{INDENT}FAIL {msg}")
    if show_facts and r.facts:
        changed = [f"{k} = {show(v)}" for k, v in r.facts.items()
                   if previous is None or show(previous.get(k)) != show(v)]
        lines += _wrap("facts changed: " if previous else "facts: ", changed or ["none"], "; ",
                       INDENT + "  ")
    if r.step.note:
        lines += textwrap.wrap("note: " + " ".join(r.step.note.split()), 100,
                               initial_indent=INDENT, subsequent_indent=INDENT + "  ",
                               break_on_hyphens=False)
    return lines


def _wrap(head: str, items: list[str], sep: str, indent: str) -> list[str]:
    """Wrap `items` at 100 columns, never inside one item."""
    glued = [x.replace(" ", "\x00") for x in items]
    lines = textwrap.wrap(head.replace(" ", "\x00") + sep.join(glued), 100, initial_indent=INDENT,
                          subsequent_indent=indent, break_on_hyphens=False)
    return [line.replace("\x00", " ") for line in lines]


def _header(sc: Scenario) -> list[str]:
    consts = ", ".join(f"{k}={show(v)}" for k, v in sc.constants.items())
    lines = [f"scenario {sc.path}: {sc.model_name}/{sc.variant} ({consts})"]
    if sc.description:
        lines += textwrap.wrap(" ".join(sc.description.split()), 100, initial_indent="  ",
                               subsequent_indent="  ")
    return lines


def run_file(path: Path, echo: Callable[[str], None], show_facts: bool = False) -> int:
    """Load, run and print one scenario file; its exit code."""
    sc = load_scenario(path)
    for line in _header(sc):
        echo(line)
    previous: list = [None]

    def on_step(r: StepResult) -> None:
        for line in format_step(r, previous[0], show_facts):
            echo(line)
        previous[0] = r.facts or previous[0]

    result = run_scenario(sc, on_step)
    n_steps = len(sc.steps) - 1
    n_facts = sum(len(s.expect) for s in sc.steps)
    if result.ok:
        announced = sum(len(s.violates) for s in sc.steps)
        echo(f"PASS {sc.name}: {n_steps} steps, {n_facts} facts asserted, "
             f"{len(sc.properties)} invariants checked in all {n_steps + 1} states"
             + (f" ({announced} violation(s) as announced)" if announced else "")
             + (f"; witnessed: {', '.join(p.name for p in sc.witnesses)}" if sc.witnesses else ""))
        return EXIT_OK
    for msg in result.failures:
        echo(f"FAIL {sc.name}: {msg}")
    return EXIT_VIOLATION


@click.command("scenario")
@click.argument("files", metavar="FILE...", nargs=-1, required=True,
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--show-facts", is_flag=True,
              help="Also print every fact that changed at each step (for writing scenarios).")
def scenario_cmd(files, show_facts: bool) -> int:
    """Replay scenario files (a description's worked example) and assert their facts.

    Exit 0 when every step of every file passes, 1 when a step fails, 2 for a
    malformed file, 3 for a model evaluation error."""
    code = EXIT_OK
    for path in files:
        try:
            rc = run_file(path, click.echo, show_facts)
        except KmcError as e:
            click.echo(f"kmc: error: {e.one_line()}", err=True)
            rc = e.exit_code
        code = max(code, rc)
    return code


__all__ = ["load_scenario", "run_scenario", "run_file", "Scenario", "Step", "StepResult",
           "ScenarioResult", "facts_function", "matches", "show", "scenario_cmd"]
