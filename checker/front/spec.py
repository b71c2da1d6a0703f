"""Spec files: TOML naming a model + variant, its constants, the properties to
check, bounds and the expected result. load_spec validates everything (the
model is built once to check the constant combination and the property names)
and raises SpecError / ModelConfigError (both exit 2) with one clear line.

    model = "twophase"          # required
    variant = "standard"        # default: the model's first variant
    description = "..."         # optional
    invariants = ["TCConsistent"]  # default: every property of the model; the model's
                                # `sometimes` witnesses are kept (below)
    depth = 10                  # at most 10 steps; absent: no bound
    check_deadlock = false      # default false
    fingerprint = "xxh3_64"     # or "xxh3_128"
    projection = "no_msgs"      # the fingerprint projection (TLC's VIEW): a name of the
                                # model's projections, or a list of variables (`view`,
                                # its old name, is still read, with a deprecation line)
    properties = ["EventuallyAllDecided"]  # temporal properties (checker/front/temporal_spec.py)
    fairness = ["WF:TMCommit"]  # default "reference" (the model's); [] for none
    engines = ["local", "spark"]  # kmc regress: also run on these and compare (the
                                # default engine, auto, always runs)
    [constants]                 # unset constants take the ModelDef's defaults
    RM = ["r1", "r2", "r3"]
    [expect]                    # stored for regression runs
    outcome = "pass"            # "pass" | "violation"
    violated = "TCConsistent"   # a name (or list of names)
    depth = 7                   # steps of the shortest counterexample
    distinct = 288
    quick = true                # run by `kmc regress --quick` (CI)
    sometimes = ["AllCommitted"]  # witnesses that must be reached (no vacuous pass)

Witnesses are always checked: with an `invariants` list, the witnesses it
names, or every witness of the model when it names none, plus those of
expect.sometimes. An expect.sometimes name that is not a `sometimes` property
of the model (its variant and constants) is bad input.
"""
from __future__ import annotations

import json
import os
import stat
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checker.search import registry
from checker.search.engine import DEADLOCK
from checker.search.errors import SpecError
from checker.search.files import safe_component
from model.base import ALWAYS, SOMETIMES, ModelConfigError, Property

MAX_SPEC_BYTES = 16 << 20  # a spec (or scenario) file larger than this is refused unread
FINGERPRINTS = {"xxh3_64": 64, "xxh3_128": 128}
TOP_LEVEL_KEYS = ("model", "variant", "description", "constants", "invariants", "depth",
                  "check_deadlock", "fingerprint", "projection", "view", "expect",
                  "properties", "fairness",  # temporal properties: checker/front/temporal_spec.py
                  "simulate",  # random walks' defaults (SimulateSettings; kmc simulate)
                  "engines")   # kmc regress runs the spec on these too and compares
ENGINES = ("auto", "local", "spark")   # auto: the default
SIMULATE_KEYS = {"walks": int, "time": (int, float), "depth": int, "seed": int, "weights": dict,
                 "swarm": bool}
EXPECT_KEYS = {"outcome": str, "violated": (str, list), "depth": int, "distinct": int,
               "generated": int, "per_level_distinct": list,
               "quick": bool,  # quick: in the quick regression set (`kmc regress --quick`)
               "sometimes": list,  # witnesses that must be reached
               # simulate specs (checker/front/simulate_cli.py): found within so many
               # seconds, or a pass over so many walks
               "within_s": (int, float), "min_walks": int}


_EXPECT_TYPES = {"outcome": "a string (\"pass\" or \"violation\")",
                 "violated": "a property name or a list of them", "depth": "an integer (steps)",
                 "distinct": "an integer (states)", "generated": "an integer (states)",
                 "per_level_distinct": "a list of integers (states per level)",
                 "quick": "true or false", "sometimes": "a list of witness names",
                 "within_s": "a number of seconds", "min_walks": "an integer (walks)"}


class _Unset:
    def __repr__(self) -> str:
        return "UNSET"


UNSET: Any = _Unset()  # "use the spec's own depth"


@dataclass
class SimulateSettings:
    """A spec's [simulate] table, checked (None: not given); `kmc simulate`
    uses it, every command refuses a bad one."""

    walks: int | None = None
    time: float | None = None
    depth: int | None = None
    seed: int | None = None
    weights: dict = field(default_factory=dict)
    swarm: bool = False
    present: bool = False            # the spec has a [simulate] table


def _number(where: str, value, kind, positive: bool = True):
    ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok or (positive and value <= 0) or value != value:
        raise SpecError(f"{where} must be {'a positive ' if positive else 'an '}"
                        f"{'integer' if kind is int else 'number'}, not {value!r}")
    return value


def _simulate_settings(table, action_names) -> SimulateSettings:
    """The [simulate] table checked against the model's actions."""
    from checker.search.simulate import check_weights
    if table is None:
        return SimulateSettings()
    if not isinstance(table, dict):
        raise SpecError("[simulate] must be a table")
    unknown = [k for k in table if k not in SIMULATE_KEYS]
    if unknown:
        raise SpecError(f"unknown key(s) {', '.join(map(repr, unknown))} in [simulate] "
                        f"(known: {', '.join(SIMULATE_KEYS)})")
    st = SimulateSettings(present=True)
    if "walks" in table:
        st.walks = _number("simulate.walks", table["walks"], int)
    if "time" in table:
        st.time = float(_number("simulate.time", table["time"], (int, float)))
    if "depth" in table:
        st.depth = _number("simulate.depth", table["depth"], int)
    if "seed" in table:
        st.seed = _number("simulate.seed", table["seed"], int, positive=False)
    if "swarm" in table:
        if not isinstance(table["swarm"], bool):
            raise SpecError(f"simulate.swarm must be true or false, not {table['swarm']!r}")
        st.swarm = table["swarm"]
    if "weights" in table:
        check_weights(table["weights"], action_names, "simulate.weights")
        st.weights = dict(table["weights"])
    return st


@dataclass
class Spec:
    path: Path
    name: str                      # the file's stem: results/<name>/...
    model: str
    variant: str
    constants: dict[str, Any]      # resolved: every constant of the variant
    invariants: list[str] | None   # None: every property; else the names listed + witnesses kept
    depth: int | None              # None: no bound
    check_deadlock: bool = False
    fingerprint: str = "xxh3_64"
    projection: str | list[str] | None = None   # the fingerprint projection (None: every variable)
    description: str = ""
    expect: dict[str, Any] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)  # --set values applied
    properties: list[str] | None = None   # temporal properties (checker/front/temporal_spec.py)
    fairness: Any = None                   # None: "reference" when properties are listed
    simulate: SimulateSettings = field(default_factory=SimulateSettings)
    engines: list[str] = field(default_factory=list)   # kmc regress: further engines to compare
    deprecations: list[str] = field(default_factory=list)   # old spellings read (one line each)
    _built: tuple | None = field(default=None, repr=False, compare=False)

    @property
    def fingerprint_bits(self) -> int:
        return FINGERPRINTS[self.fingerprint]

    def build(self) -> tuple[Any, list[Property]]:
        """(model, the selected properties)."""
        if self._built is None:
            model, props = registry.build(self.model, self.variant, self.constants)
            self._built = (model, registry.select_properties(props, self.invariants))
        return self._built

    def config(self) -> dict[str, Any]:
        """The resolved configuration as plain JSON values (summary.json)."""
        return {
            "spec": str(self.path),
            "name": self.name,
            "model": self.model,
            "variant": self.variant,
            "constants": dict(self.constants),
            "overrides": dict(self.overrides),
            "invariants": [p.name for p in self.build()[1]],
            "depth": self.depth,
            "check_deadlock": self.check_deadlock,
            "fingerprint": self.fingerprint,
            "projection": self.projection,
            **({"properties": list(self.properties), "fairness": self.fairness}
               if self.properties else {}),
            **({"engines": list(self.engines)} if self.engines else {}),
        }


def _type_check(where: str, value: Any, t, tname: str) -> None:
    ok = (isinstance(value, t) and not (isinstance(value, bool) and bool not in
                                         (t if isinstance(t, tuple) else (t,))))
    if not ok:
        raise SpecError(f"{where} must be {tname}, not {type(value).__name__} {value!r}")


def _expected_violated(expect: dict) -> list:
    wanted = expect.get("violated")
    return [wanted] if isinstance(wanted, str) else list(wanted or ())


def parse_set(item: str) -> tuple[str, Any]:
    """NAME=VALUE with VALUE a TOML value: 3, false, "A", ["A", "B"]."""
    name, sep, text = item.partition("=")
    name = name.strip()
    if not sep or not name:
        raise SpecError(f"--set expects NAME=VALUE, got {item!r}")
    try:
        table = tomllib.loads(f"v = {text.strip()}")
    except tomllib.TOMLDecodeError:
        raise SpecError(f"--set {name}: {text.strip()!r} is not a TOML value "
                        f"(strings need quotes: {name}='\"A\"', lists: {name}='[\"A\", \"B\"]')") from None
    if list(table) != ["v"]:  # `3\nOther=1`, `3\n[t]`: more than the one value
        raise SpecError(f"--set {name}: {text.strip()!r} is not exactly one TOML value "
                        f"(it also sets {', '.join(k for k in table if k != 'v')}: "
                        f"give each constant its own --set)")
    return name, table["v"]


def parse_sets(items) -> dict[str, Any]:
    """NAME=VALUE items; a name given twice is refused (which one would count?)."""
    out: dict[str, Any] = {}
    for item in items or ():
        name, value = parse_set(item)
        if name in out:
            raise SpecError(f"--set {name} is given twice ({json.dumps(out[name])} and "
                            f"{json.dumps(value)}): give it once")
        out[name] = value
    return out


def check_file(path: Path, kind: str) -> None:
    """SpecError unless `path` is a regular file of at most MAX_SPEC_BYTES: checked
    before any read (/dev/zero, a FIFO would never end, a huge file fill memory)."""
    try:
        st = os.stat(path)  # before any read: /dev/zero, a FIFO would never end
    except FileNotFoundError:
        raise SpecError(f"{kind} file not found: {path}") from None
    except OSError as e:
        raise SpecError(f"cannot read {kind} file {path}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise SpecError(f"cannot read {kind} file {path}: it is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise SpecError(f"cannot read {kind} file {path}: not a regular file")
    if st.st_size > MAX_SPEC_BYTES:
        raise SpecError(f"{kind} file {path} is too large: {st.st_size:,} bytes "
                        f"(at most {MAX_SPEC_BYTES:,})")


def read_toml(path: Path, kind: str) -> dict:
    """A TOML file's table, or SpecError (exit 2) naming what is wrong with it."""
    check_file(path, kind)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_SPEC_BYTES + 1)  # (it may have grown since the stat)
        if len(data) > MAX_SPEC_BYTES:
            raise SpecError(f"{kind} file {path} is too large: more than {MAX_SPEC_BYTES:,} bytes")
        text = data.decode("utf-8")
        text = text.removeprefix("\ufeff")   # a BOM some editors write: not part of the TOML
    except FileNotFoundError:
        raise SpecError(f"{kind} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise SpecError(f"cannot read {kind} file {path}: {e}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"{path}: malformed TOML: {e}") from None


def keep_witnesses(props: list[Property], names: list[str] | None,
                   expected: list[str]) -> list[str] | None:
    """The property names to check: `names` (an `invariants` list; None: all)
    with the model's witnesses kept - the witnesses `names` lists, or all of
    them when it lists none - and every expected one (expect.sometimes).
    SpecError for an expected name that is no witness of this model."""
    witnesses = [p.name for p in props if p.kind == SOMETIMES]
    kinds = {p.name: p.kind for p in props}
    for name in expected:
        if kinds.get(name) != SOMETIMES:
            what = "an invariant, not a witness" if name in kinds else "unknown witness"
            raise SpecError(f"expect.sometimes: {name!r}: {what} of this model "
                            f"(its witnesses: {', '.join(witnesses) or 'none'})")
    if names is None:
        return None
    listed = [n for n in names if kinds.get(n) == SOMETIMES]
    kept = listed if listed else witnesses
    return list(dict.fromkeys([*names, *kept, *expected]))


def _something_to_check(spec: Spec, props: list[Property]) -> None:
    """An `invariants` list that names no invariant, with no deadlock check, no
    temporal property and no expected witness, would pass whatever the
    model does: refused."""
    if spec.invariants is None or spec.check_deadlock or getattr(spec, "properties", None):
        return
    kinds = {p.name: p.kind for p in props}
    if any(kinds.get(n, ALWAYS) == ALWAYS for n in spec.invariants) or spec.expect.get("sometimes"):
        return  # (an unknown name is reported as such)
    raise SpecError(f"invariants = {spec.invariants!r} leaves nothing to check: name invariants, "
                    f"leave the key out (all of them), set check_deadlock = true, or list the "
                    f"witnesses that must be reached in [expect] sometimes")


def _projection(path: Path, data: dict) -> tuple[str | list[str] | None, list[str]]:
    """The spec's fingerprint projection (`projection`; `view`, its old
    name, read with a deprecation line) and the deprecation lines."""
    if "view" in data and "projection" in data:
        raise SpecError(f"{path}: give the fingerprint projection once: `projection` (`view` is its old name)")
    key = "view" if "view" in data else "projection"
    deprecations = ([f"{path}: `view` is the old name of `projection` (the fingerprint projection): "
                     f"rename the key"] if key == "view" else [])
    value = data.get(key)
    if value is not None:
        _type_check(f"{path}: {key}", value, (str, list), "a projection name or a list of variable names")
        if isinstance(value, list):
            if not value:
                raise SpecError(f"{path}: {key} is an empty list (leave it out to fingerprint every variable)")
            for v in value:
                _type_check(f"{path}: {key} entry", v, str, "a variable name (string)")
            twice = sorted({v for v in value if value.count(v) > 1})
            if twice:
                raise SpecError(f"{path}: {key} names {', '.join(twice)} more than once")
    return value, deprecations


def _engines(path: Path, value) -> list[str]:
    """The spec's `engines`: further engines `kmc regress` runs it on and
    compares with the default one (auto)."""
    _type_check(f"{path}: engines", value, list, "a list of engine names")
    for e in value:
        if e not in ENGINES:
            raise SpecError(f"{path}: engines: unknown engine {e!r} (known: {', '.join(ENGINES)})")
    if len(set(value)) != len(value):
        raise SpecError(f"{path}: engines names an engine twice")
    return list(value)


def _check_top_level(path: Path, data: dict) -> None:
    """Known keys only; model (required), variant and description strings."""
    unknown = [k for k in data if k not in TOP_LEVEL_KEYS]
    if unknown:
        raise SpecError(f"{path}: unknown key(s) {', '.join(map(repr, unknown))} "
                        f"(known: {', '.join(TOP_LEVEL_KEYS)})")
    if "model" not in data:
        raise SpecError(f"{path}: missing key 'model'")
    _type_check(f"{path}: model", data["model"], str, "a string")
    if "variant" in data:
        _type_check(f"{path}: variant", data["variant"], str, "a string")
    if "description" in data:
        _type_check(f"{path}: description", data["description"], str, "a string")


def _depth(path: Path, data: dict, depth: Any) -> int | None:
    """The depth bound: --depth when given (None: no bound), else the spec's."""
    spec_depth = data.get("depth")
    if spec_depth is not None:
        _type_check(f"{path}: depth", spec_depth, int, "an integer")
        if spec_depth < 0:  # (even when --depth overrides it: the file is wrong)
            raise SpecError(f"{path}: depth must be >= 0, not {spec_depth}")
    if depth is not UNSET:
        if depth is not None:
            _type_check("--depth", depth, int, "an integer or none")
        spec_depth = depth
    if spec_depth is not None and spec_depth < 0:
        raise SpecError(f"depth must be >= 0, not {spec_depth}")
    return spec_depth


def _expect(path: Path, data: dict) -> dict:
    """The [expect] table, its keys and their types checked."""
    expect = data.get("expect", {})
    _type_check(f"{path}: [expect]", expect, dict, "a table")
    for key, value in expect.items():
        if key not in EXPECT_KEYS:
            raise SpecError(f"{path}: unknown key {key!r} in [expect] (known: {', '.join(EXPECT_KEYS)})")
        _type_check(f"{path}: expect.{key}", value, EXPECT_KEYS[key], _EXPECT_TYPES[key])
    for name in expect.get("sometimes", ()):
        _type_check(f"{path}: expect.sometimes entry", name, str, "a witness name (string)")
    if "outcome" in expect and expect["outcome"] not in ("pass", "violation"):
        raise SpecError(f"{path}: expect.outcome must be \"pass\" or \"violation\", not {expect['outcome']!r}")
    if expect.get("outcome") == "pass" and _expected_violated(expect):
        raise SpecError(f"{path}: expect.outcome is \"pass\" but expect.violated names "
                        f"{', '.join(_expected_violated(expect))}: a pass violates nothing (give "
                        f"outcome = \"violation\", or drop violated)")
    for name in _expected_violated(expect):
        _type_check(f"{path}: expect.violated entry", name, str, "a property name (string)")
    for n in expect.get("per_level_distinct", ()):
        _type_check(f"{path}: expect.per_level_distinct entry", n, int, "a number of states")
    for key in ("depth", "distinct", "generated", "min_walks"):
        if key in expect and expect[key] < 0:
            raise SpecError(f"{path}: expect.{key} must be >= 0, not {expect[key]}")
    if any(n < 0 for n in expect.get("per_level_distinct", ())):
        raise SpecError(f"{path}: expect.per_level_distinct holds a negative count")
    if "within_s" in expect and not 0 < expect["within_s"] < float("inf"):
        raise SpecError(f"{path}: expect.within_s must be a number of seconds > 0, not {expect['within_s']!r}")
    if ("within_s" in expect or "min_walks" in expect) and not isinstance(data.get("simulate"), dict):
        raise SpecError(f"{path}: expect.within_s and expect.min_walks are for simulation specs "
                        f"(a [simulate] table: kmc simulate)")
    return expect


def load_spec(path: str | Path, overrides: dict | None = None, depth: Any = UNSET,
              invariants: list[str] | None = None, properties: list[str] | None = None,
              fairness: Any = None) -> Spec:
    """Read and validate a spec. overrides: constants set on the command line
    (--set); depth: None = no bound, an int = that bound, UNSET = the spec's;
    invariants, properties: names picked on the command line (-i, --property),
    instead of the spec's; fairness: --fairness, instead of the spec's."""
    path = Path(path)
    data = read_toml(path, "spec")
    _check_top_level(path, data)
    constants = data.get("constants", {})
    _type_check(f"{path}: [constants]", constants, dict, "a table")
    if invariants:
        data = {**data, "invariants": list(invariants)}
    if properties:
        data = {**data, "properties": list(properties)}
    if fairness is not None:
        data = {**data, "fairness": fairness}
    invariants = data.get("invariants")
    if invariants is not None:
        _type_check(f"{path}: invariants", invariants, list, "a list of property names")
        for name in invariants:
            _type_check(f"{path}: invariants entry", name, str, "a property name (string)")
    spec_depth = _depth(path, data, depth)
    check_deadlock = data.get("check_deadlock", False)
    _type_check(f"{path}: check_deadlock", check_deadlock, bool, "true or false")
    fingerprint = data.get("fingerprint", "xxh3_64")
    _type_check(f"{path}: fingerprint", fingerprint, str, "a string")
    if fingerprint not in FINGERPRINTS:
        raise SpecError(f"{path}: fingerprint must be one of {', '.join(FINGERPRINTS)}, not {fingerprint!r}")
    projection, deprecations = _projection(path, data)
    engines = _engines(path, data.get("engines", []))
    expect = _expect(path, data)

    overrides = dict(overrides or {})
    try:
        defn = registry.model_def(data["model"])
        variant, _ = registry.variant_constants(defn, data.get("variant"))
    except SpecError as e:
        raise SpecError(f"{path}: {e}") from None
    given = {**constants, **overrides}
    try:
        resolved = registry.resolve_constants(defn, variant, given)
    except SpecError as e:
        raise SpecError(f"{path}: {e}") from None
    spec = Spec(path=path, name=safe_component(path.stem), model=defn.name, variant=variant, constants=resolved,
                invariants=list(invariants) if invariants is not None else None,
                depth=spec_depth, check_deadlock=check_deadlock, fingerprint=fingerprint,
                projection=projection, description=data.get("description", ""), expect=dict(expect),
                overrides=overrides, engines=engines, deprecations=deprecations)
    from checker.front import temporal_spec as liveness_config
    liveness_config.read_spec_keys(spec, data, path)  # properties, fairness
    try:
        # the model's own checks, and the property names
        model, all_props = registry.build(spec.model, spec.variant, spec.constants)
        _something_to_check(spec, all_props)
        spec.invariants = keep_witnesses(all_props, spec.invariants, expect.get("sometimes", []))
        named = {p.name for p in all_props} | set(spec.properties or ()) | {DEADLOCK}
        unknown = [n for n in _expected_violated(expect) if n not in named]
        if unknown:
            raise SpecError(f"expect.violated: {', '.join(map(repr, unknown))} is no property of this model "
                            f"or spec (`kmc list {spec.model}` names them)")
        spec._built = (model, registry.select_properties(all_props, spec.invariants))
        spec.simulate = _simulate_settings(data.get("simulate"), model.action_names)
    except SpecError as e:
        raise SpecError(f"{path}: {e}") from None
    except ModelConfigError as e:
        raise SpecError(f"{path}: constants rejected by model {defn.name!r}: {e}") from None
    if projection is not None:
        from checker.search.engine import resolve_projection
        try:
            resolve_projection(model, projection)
        except SpecError as e:
            raise SpecError(f"{path}: {e}") from None
    liveness_config.validate(spec, str(path))
    if spec.properties and set(spec.engines) - {"local", "auto"}:
        raise SpecError(f"{path}: engines: liveness (temporal properties) runs on the local engine only")
    _say_deprecations(spec.deprecations + inert_set(spec, model, {**constants, **overrides}))
    return spec


def inert_set(spec: Spec, model, given: dict) -> list[str]:
    """One line per constant the spec (or --set) gives that has no effect
    under the others (the model's inert_constants)."""
    inert = getattr(model, "inert_constants", None)
    found = inert() if inert is not None else {}
    return [f"{spec.path}: {name} has no effect: {why}" for name, why in found.items() if name in given]


def unbounded_line(spec: Spec, model) -> str | None:
    """A warning when a search without a depth bound meets an infinite state
    space (the model's unbounded())."""
    why = getattr(model, "unbounded", None)
    why = why() if why is not None and spec.depth is None else None
    if why is None:
        return None
    return (f"{spec.path}: the state space is infinite ({why}) and the check has no depth bound: "
            f"it does not end; set `depth` (or --depth N), bound the model's constants, or walk it "
            f"with kmc simulate")


def bounded_liveness_line(model, properties) -> str | None:
    """A warning when temporal properties are checked under a bound that
    stops actions fairness would force (the model's progress_bounds())."""
    bounds = getattr(model, "progress_bounds", None)
    found = bounds() if bounds is not None and properties else {}
    if not found:
        return None
    return ("temporal properties checked under " + " and ".join(found.values())
            + ", a bound that disables actions fairness would force: a behaviour that reaches "
              "it stops there, so a violation may be the bound's, not the protocol's (its lasso "
              "then names the bound)")


_said: set = set()


def _say_deprecations(lines: list[str]) -> None:
    """An old spelling a spec still uses: one `kmc: warning:` line on stderr,
    once per process (regress and the tests load a spec many times)."""
    import click
    for line in lines:
        if line not in _said:
            _said.add(line)
            click.echo(f"kmc: warning: {line}", err=True)
