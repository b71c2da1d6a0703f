"""Reading a run folder back: its summary, the model it checked (rebuilt from
the summary's configuration) and its counterexamples, each state rebuilt
exactly from its canonical bytes in trace-P.json. `kmc trace`
(checker/front/trace_cli.py) renders them again through traces.render.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from checker.output.lasso import lasso_of_run
from checker.output.render import to_json
from checker.output.traces import file_names
from checker.search import registry
from checker.search.encoding import decode_state
from checker.search.engine import Violation
from checker.search.errors import KmcError, SpecError
from checker.search.result import EVALUATION_ERROR, EvaluationFailure
from model.base import Action, ModelConfigError


@dataclass
class Run:
    """A run folder: its summary, the model it checked (rebuilt), and the
    properties it has counterexamples for (in the order found)."""

    path: Path
    summary: dict
    model: Any
    properties: list[str]

    def trace(self, prop: str) -> list:
        return load_trace(self.path / file_names(prop)["json"], self.model)

    def violation(self, prop: str) -> Violation:
        """The counterexample of `prop` as the run found it (a lasso for a
        temporal property)."""
        trace = self.trace(prop)
        error = self.summary.get("error")
        if prop == EVALUATION_ERROR and isinstance(error, dict):
            return EvaluationFailure(error.get("action"), str(error.get("message", "")),
                                     error.get("hint"), trace)
        entry = next((e for e in self.summary.get("violations", []) if e.get("property") == prop), {})
        loop = entry.get("loop")
        if entry.get("kind") == "liveness" and loop is not None and not 0 <= loop < len(trace):
            raise SpecError(f"{self.path / 'summary.json'}: the loop of {prop!r} ({loop}) is not a "
                            f"state of its trace (0 to {len(trace) - 1})")
        try:
            return lasso_of_run(self.summary, prop, trace) or Violation(prop, len(trace) - 1, trace)
        except (TypeError, ValueError, KeyError, AttributeError) as e:
            raise SpecError(f"{self.path / 'summary.json'}: its entry for {prop!r} cannot be read "
                            f"({type(e).__name__}: {e})") from None

    def pick(self, prop: str | None) -> str:
        if not self.properties:
            raise SpecError(f"{self.path}: the run violated nothing (outcome "
                            f"{self.summary.get('outcome', '?')}), so it has no counterexample")
        if prop is None:
            return self.properties[0]
        if prop not in self.properties:
            raise SpecError(f"{self.path}: no counterexample for {prop!r} "
                            f"(this run has: {', '.join(self.properties)})")
        return prop


def find_run_dir(path: Path) -> Path:
    """RUN_DIR itself, or - given results/<spec>/ - its newest run that has
    a counterexample (else its newest run)."""
    return pick_run(path)[0]


def pick_run(path: Path) -> tuple[Path, str | None]:
    """(run folder, None when RUN_DIR was one; else which of the spec's runs
    was picked, in words)."""
    path = Path(path)
    if not path.exists():
        raise SpecError(f"run folder not found: {path}")
    if (path / "summary.json").is_file():
        return path, None
    runs = [p for p in path.iterdir() if p.is_dir() and (p / "summary.json").is_file()
            and not p.name.startswith(".")] if path.is_dir() else []
    if not runs:
        raise SpecError(f"{path} is not a run folder (no summary.json) and holds no run")
    # by when each finished (run ids of one second sort by their random part)
    runs.sort(key=lambda p: ((p / "summary.json").stat().st_mtime_ns, p.name))
    with_trace = [p for p in runs if any(p.glob("trace-*.json"))]
    if not with_trace:
        return runs[-1], f"the newest of {len(runs)} runs (none has a counterexample)"
    newer = len(runs) - 1 - runs.index(with_trace[-1])
    return with_trace[-1], ("the newest run, with a counterexample" if not newer else
                            f"the newest run with a counterexample ({newer} newer "
                            f"run{'s' if newer > 1 else ''} without)")


def _kind(x: Any) -> str:
    return "null" if x is None else type(x).__name__


def check_summary(summary: Any, where: Path) -> tuple[dict, list]:
    """(config, violations) of a loaded summary.json, checked for the fields
    `kmc trace` relies on and their types (a summary edited or written by
    something else: one SpecError naming the file, not a traceback)."""
    def bad(what: str):
        raise SpecError(f"{where} is not a run summary: {what}")

    if not isinstance(summary, dict):
        bad(f"not a JSON object (it is {_kind(summary)})")
    config = summary.get("config")
    if not isinstance(config, dict):
        bad("no 'config' object" if config is None else f"'config' is {_kind(config)}, not an object")
    if not isinstance(config.get("model"), str):
        bad("no 'config.model'" if "model" not in config
            else f"'config.model' is {_kind(config['model'])}, not a string")
    for key in ("variant", "spec", "name"):
        if config.get(key) is not None and not isinstance(config[key], str):
            bad(f"'config.{key}' is {_kind(config[key])}, not a string")
    # (constants of the wrong type: registry.build says so)
    if config.get("overrides") is not None and not isinstance(config["overrides"], dict):
        bad(f"'config.overrides' is {_kind(config['overrides'])}, not an object")
    if summary.get("run_id") is not None and not isinstance(summary["run_id"], str):
        bad(f"'run_id' is {_kind(summary['run_id'])}, not a string")
    violations = summary.get("violations", [])
    if not isinstance(violations, list):
        bad(f"'violations' is {_kind(violations)}, not a list")
    for i, v in enumerate(violations):
        if not isinstance(v, dict):
            bad(f"violations[{i}] is {_kind(v)}, not an object")
        if not isinstance(v.get("property"), str):
            bad(f"violations[{i}] has no property name" if "property" not in v
                else f"violations[{i}].property is {_kind(v['property'])}, not a string")
        for key in ("kind", "instance", "headline"):
            if v.get(key) is not None and not isinstance(v[key], str):
                bad(f"violations[{i}].{key} is {_kind(v[key])}, not a string")
        if v.get("kind") == "liveness":
            loop = v.get("loop")
            if "loop" in v and (isinstance(loop, bool) or not isinstance(loop, int) or loop < 0):
                bad(f"violations[{i}].loop is {json.dumps(loop)}, not a state index (an integer >= 0)")
    return config, violations


def open_run(path: Path) -> Run:
    run_dir = find_run_dir(path)
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SpecError(f"cannot read {run_dir / 'summary.json'}: {e}") from None
    # a summary.json edited or written by something else: one error line, not a traceback
    config, violations = check_summary(summary, run_dir / "summary.json")
    try:
        model, _ = registry.build(config["model"], config.get("variant"), config.get("constants") or {})
    except ModelConfigError as e:
        raise SpecError(f"{run_dir}: the model no longer accepts this run's constants: {e}") from None
    except KmcError as e:
        raise SpecError(f"{run_dir}: cannot rebuild the run's model: {e.one_line()}") from None
    except (TypeError, ValueError, KeyError, AttributeError, IndexError) as e:
        # constants of a type the model's code does not expect
        raise SpecError(f"{run_dir / 'summary.json'}: cannot rebuild the run's model from its "
                        f"config: {type(e).__name__}: {e}") from None
    props = [v["property"] for v in violations]
    if isinstance(summary.get("error"), dict):   # an evaluation error's trace (outcome 'error')
        props.append(EVALUATION_ERROR)
    return Run(run_dir, summary, model, props)


def _action(obj: dict | None):
    if obj is None:
        return None
    params = tuple(tuple(p) if isinstance(p, list) else p for p in obj.get("params", []))
    return Action(obj["name"], params)


def _check_steps(obj: Any, path: Path) -> list:
    """The steps of a trace file, checked for the shape kmc writes (a trace
    file damaged or written by something else: one error line, not a traceback)."""
    if not isinstance(obj, dict) or "steps" not in obj:
        raise SpecError(f"{path}: not a kmc trace file (a JSON object with its steps)")
    steps = obj["steps"]
    if not isinstance(steps, list):
        raise SpecError(f"{path}: 'steps' is not a list (it is {type(steps).__name__})")
    if not steps:
        raise SpecError(f"{path}: the trace has no step (not even its initial state)")
    for i, s in enumerate(steps):
        if not isinstance(s, dict):
            raise SpecError(f"{path}: step {i} is not a JSON object")
        a = s.get("action")
        if a is not None and not (isinstance(a, dict) and isinstance(a.get("name"), str)
                                  and isinstance(a.get("params", []), list)):
            raise SpecError(f"{path}: step {i} has a malformed action "
                            f"(not an object with a name and a list of params)")
        if "encoded" in s and not isinstance(s["encoded"], str):
            raise SpecError(f"{path}: step {i}'s encoded state is not a string")
    return steps


def _decoded(step: dict, i: int, model: Any, path: Path):
    """(action, state) of one step, its state rebuilt from its canonical bytes."""
    try:
        data = base64.b64decode(step["encoded"], validate=True)
    except ValueError as e:  # binascii.Error
        raise SpecError(f"{path}: step {i} cannot be decoded: its encoded state is not base64 ({e})") from None
    try:
        plain = decode_state(data)
        state = model.from_plain(tuple(plain))
    except Exception as e:  # bad msgpack, or values the model's from_plain refuses
        raise SpecError(f"{path}: step {i} cannot be decoded: {type(e).__name__}: {e}") from None
    return _action(step.get("action")), state


def load_trace(path: Path, model: Any) -> list:
    """The trace [(None, s0), (a1, s1), ...] from a trace-P.json: each state
    rebuilt from its canonical bytes, or - for a file without them - by
    replaying the recorded actions and matching the recorded states."""
    try:
        obj = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SpecError(f"cannot read the trace {path}: {e}") from None
    steps = _check_steps(obj, path)
    if all("encoded" in s for s in steps):
        return [_decoded(s, i, model, path) for i, s in enumerate(steps)]
    return _replay(steps, model, path)


def _replay(steps: list, model: Any, path: Path) -> list:
    def same(state, recorded) -> bool:
        names = getattr(state, "_fields", ())
        return {n: to_json(x) for n, x in zip(names, state)} == recorded

    state = next((s for s in model.init_states() if same(s, steps[0].get("state"))), None)
    if state is None:
        raise SpecError(f"{path}: no initial state of the model matches the trace (model changed?)")
    trace = [(None, state)]
    for i, step in enumerate(steps[1:], 1):
        label = (step.get("action") or {}).get("label")
        if not isinstance(label, str):
            raise SpecError(f"{path}: step {i} has no action label to replay (and no encoded state)")
        nxt = next(((a, s) for a, s in model.successors(state) if str(a) == label
                    and same(s, step.get("state"))), None)
        if nxt is None:
            raise SpecError(f"{path}: step {i} ({label}) cannot be replayed (model changed?)")
        trace.append(nxt)
        state = nxt[1]
    return trace
