"""A spark run's folder as the driver keeps it (checker/search/spark/levels.py
writes its levels): what the executors rebuild the model from (SpecConfig),
run.json, and the cumulative statistics after each level (Totals,
stats.json), read back and checked when a run is resumed."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from checker.search import registry
from checker.search.errors import SpecError
from checker.search.spark import levels
from checker.search.spark.errors import ResumeError

FORMAT = 4  # 3: seen fingerprints as sorted runs per level (checker/search/spark/seen.py); 4: rows with picks


@dataclass
class SpecConfig:
    """What the executors rebuild the model from."""

    name: str
    model: str
    variant: str
    constants: dict
    invariants: list | None = None

    @classmethod
    def of(cls, spec_or_config) -> "SpecConfig":
        if isinstance(spec_or_config, SpecConfig):
            return spec_or_config
        if isinstance(spec_or_config, dict):
            d = spec_or_config
            if "model" not in d:
                raise SpecError("a spark run needs a spec or a config with 'model'")
            defn = registry.model_def(d["model"])
            variant, _ = registry.variant_constants(defn, d.get("variant"))
            constants = registry.resolve_constants(defn, variant, d.get("constants") or {})
            return cls(d.get("name") or defn.name, defn.name, variant, constants, d.get("invariants"))
        s = spec_or_config  # checker.front.spec.Spec
        return cls(s.name, s.model, s.variant, dict(s.constants), s.invariants)


@dataclass
class Totals:
    """The cumulative statistics after a level (stats.json)."""

    level: int = 0
    partitions: int = 0
    per_level_distinct: list = field(default_factory=list)
    generated: int = 0
    per_action_generated: dict = field(default_factory=dict)
    per_action_distinct: dict = field(default_factory=dict)
    sometimes: dict = field(default_factory=dict)
    violations: list = field(default_factory=list)   # [name, level, fp hex, [stream, key hex, index]]
    stopped: bool = False
    done: bool = False
    exhausted: bool = False
    states_left: int = 0
    level_times: list = field(default_factory=list)   # see SparkSearch.run
    pending: dict | None = None   # the newest level's stream, settled once that level is checked
    # the depth bound's checks made while it was generated (its states are
    # not in its files): [level, {property: [key hex, fp]} violated, witnessed]
    bound_checks: list | None = None

    def to_json(self) -> dict:
        out = {"format": FORMAT, **self.__dict__}
        if self.pending is not None:  # BFS keys as hex
            pend = dict(self.pending)
            if pend["deadlock"] is not None:
                pend["deadlock"] = [pend["deadlock"][0].hex(), pend["deadlock"][1]]
            pend["errors"] = [[e[0].hex(), e[1], e[2]] for e in pend["errors"]]
            out["pending"] = pend
        return json.loads(json.dumps(out))

    @classmethod
    def from_json(cls, obj: dict) -> "Totals":
        obj = dict(obj)
        obj.pop("format", None)
        obj.pop("files", None)  # the level's file digests (levels.commit_level)
        pend = obj.get("pending")
        if pend is not None:
            pend = dict(pend)
            if pend["deadlock"] is not None:
                pend["deadlock"] = [bytes.fromhex(pend["deadlock"][0]), pend["deadlock"][1]]
            pend["errors"] = [(bytes.fromhex(e[0]), e[1], e[2]) for e in pend["errors"]]
            obj["pending"] = pend
        return cls(**obj)

    def add(self, counter_name: str, counts: dict) -> None:
        target = getattr(self, counter_name)
        for k, v in counts.items():
            target[k] = target.get(k, 0) + v

    def recorded(self, name: str) -> bool:
        return any(v[0] == name for v in self.violations)


def open_run(run_dir: Path, resume: bool, config: dict, extra: dict) -> Totals | None:
    """Create the run folder (run.json: `config` and `extra`), or check the
    resumed one (its run.json must hold `config`); the totals of its newest
    committed level (None: start at level 0)."""
    run_json = run_dir / "run.json"
    if resume:
        if not run_json.is_file():
            raise ResumeError(f"--resume {run_dir}: not a spark run folder (no run.json)")
        if (run_dir / "summary.json").is_file():
            raise ResumeError(f"--resume {run_dir}: a finished run (it has its summary.json): "
                              f"nothing to resume")
        try:
            stored = json.loads(run_json.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise ResumeError(f"--resume {run_dir}: cannot read run.json: {e}") from None
        if not isinstance(stored, dict):
            raise ResumeError(f"--resume {run_dir}: run.json is not a JSON object")
        stored_cmp = {k: stored.get(k) for k in config}
        if json.loads(json.dumps(config)) != stored_cmp:
            from checker.search.checkpoint import difference
            diff = [k for k in config if json.loads(json.dumps(config[k])) != stored_cmp[k]]
            raise ResumeError(f"--resume {run_dir}: the run checked something else: "
                              + "; ".join(difference(k, stored_cmp[k], json.loads(json.dumps(config[k])))
                                          for k in diff)
                              + f" (kmc check --resume {run_dir} alone goes on with the run's own "
                                f"options)")
        levels.clean_partial(run_dir)
        done = levels.committed_levels(run_dir)
        if not done:
            raise ResumeError(f"--resume {run_dir}: no finished level to resume from (it "
                              f"stopped before level 0 was written)")
        return verified_totals(run_dir, done)
    if run_dir.exists() and any(run_dir.iterdir()):
        raise SpecError(f"run folder {run_dir} exists and is not empty (use --resume to go on)")
    run_dir.mkdir(parents=True, exist_ok=True)
    levels.write_json(run_json, {**config, **extra})
    return None


def verified_totals(run_dir: Path, done: list[int]) -> Totals | None:
    """The totals of the newest committed level, every committed level's
    files checked against their digests first (the frontier, the seen
    runs and the rows traces are read from)."""
    totals = None
    for level in done:
        where = f"--resume {run_dir}: level {level}"
        try:
            stats = levels.read_stats(run_dir, level)
            bad = levels.damaged_files(run_dir, level, stats)
            if bad:
                raise ResumeError(f"{where} is damaged: {', '.join(bad[:3])}"
                                  f"{f' and {len(bad) - 3} more' if len(bad) > 3 else ''}; "
                                  f"the run cannot be resumed from it")
            if level == done[-1]:
                totals = Totals.from_json(stats)
        except (ValueError, TypeError, KeyError, AttributeError) as e:
            raise ResumeError(f"{where}: {e}") from None
    return totals
