"""Which temporal properties a run checks and under which fairness, from a spec
(`properties = [...]`, `fairness = ...`) or the command line (`--property`).

    properties = ["EventuallyUnfenced"]   # temporal properties of the model
    fairness = "reference"                # the default with temporal properties: the
                                          # model's reference fairness (kraft: Liveness)
    fairness = ["WF:BrokerStart", "SF:UnfenceBroker"]   # weak / strong fairness of every
                                          # instance of the action (each parameter tuple)
    fairness = []                         # none: any behaviour may stop anywhere

Bad input (SpecError, exit 2): an unknown name; a state property (invariant
or witness) under `properties` or a temporal one under `invariants`; an
unknown fairness action or kind; liveness with a depth bound (a bounded
graph has lassos that are not behaviours); a fingerprint projection that
drops a variable (a temporal property's, or any: merged states make cycles
no behaviour has).

The spec's side of liveness (checker/front: what a spec says); the search
takes the checked LivenessConfig (checker/search/liveness/config.py).
"""
from __future__ import annotations

from typing import Any

from checker.search.errors import KmcError, SpecError
from checker.search.liveness.config import FAIRNESS_KINDS, REFERENCE, LivenessConfig
from model.base import ModelConfigError


def temporal_of(model) -> dict:
    from checker.search.registry import temporal_properties_for
    return {p.name: p for p in temporal_properties_for(model)}


def check_property_kinds(model, state_names, invariants: list[str] | None,
                         properties: list[str] | None, where: str = "") -> None:
    """A temporal name under `invariants`, a state property's under
    `properties`, an unknown one under `properties`: SpecError."""
    temporal = temporal_of(model)
    prefix = f"{where}: " if where else ""
    for name in invariants or ():
        if name in temporal:
            raise SpecError(f"{prefix}{name} is a temporal property ({temporal[name].form}), not an "
                            f"invariant: list it under `properties` (or give --property {name})")
    for name in properties or ():
        if name in temporal:
            continue
        if name in state_names:
            raise SpecError(f"{prefix}{name} is a state property (an invariant or witness), not a "
                            f"temporal property: list it under `invariants`")
        raise SpecError(f"{prefix}unknown temporal property {name!r} of model {model.name!r} "
                        f"(known: {', '.join(temporal) or 'none'})")


def parse_fairness(value: Any, model, where: str = "fairness") -> list[tuple[str, str]]:
    """The spec's fairness as (kind, action name) pairs; "reference" is the
    model's reference fairness."""
    if value is None or value == REFERENCE:
        from checker.search.registry import reference_fairness_for
        ref = reference_fairness_for(model)
        if ref is None:
            raise SpecError(f"{where}: model {model.name!r} has no reference fairness: give "
                            f"fairness = [\"WF:Action\", ...] (or [] for none)")
        value = ref
    if isinstance(value, str) or not isinstance(value, (list, tuple)):
        raise SpecError(f"{where} must be \"reference\" or a list of \"WF:Action\" / \"SF:Action\" "
                        f"entries, not {value!r}")
    names = set(model.action_names)
    out = []
    for entry in value:
        if not isinstance(entry, str) or ":" not in entry:
            raise SpecError(f"{where}: {entry!r} is not \"WF:Action\" or \"SF:Action\"")
        kind, _, action = entry.partition(":")
        kind, action = kind.strip().upper(), action.strip()
        if kind not in FAIRNESS_KINDS:
            raise SpecError(f"{where}: {entry!r}: the fairness kind must be WF or SF, not {kind!r}")
        if action not in names:
            raise SpecError(f"{where}: unknown fairness action {action!r} of model {model.name!r} "
                            f"(its actions: {', '.join(model.action_names)})")
        out.append((kind, action))
    return out


def read_spec_keys(spec, data: dict, path) -> None:
    """Type-check the spec's `properties` and `fairness` and keep them on the
    spec; a temporal property under `invariants` is refused here (before
    the invariant names are looked up)."""
    props = data.get("properties")
    if props is not None:
        if not isinstance(props, list) or not all(isinstance(p, str) for p in props):
            raise SpecError(f"{path}: properties must be a list of temporal property names")
    fairness = data.get("fairness")
    if fairness is not None and not (fairness == REFERENCE or (
            isinstance(fairness, list) and all(isinstance(f, str) for f in fairness))):
        raise SpecError(f"{path}: fairness must be \"reference\" or a list of \"WF:Action\" / "
                        f"\"SF:Action\" strings, not {fairness!r}")
    spec.properties = list(props) if props is not None else None
    spec.fairness = fairness
    invariants = data.get("invariants")
    if isinstance(invariants, list) and invariants:
        from checker.search import registry
        try:
            model, _ = registry.build(spec.model, spec.variant, spec.constants)
        except (KmcError, ModelConfigError):  # the spec's own checks report it
            return
        temporal = temporal_of(model)
        for name in invariants:
            if name in temporal:
                raise SpecError(f"{path}: {name} is a temporal property ({temporal[name].form}), "
                                f"not an invariant: list it under `properties`")


def validate(spec, where: str | None = None) -> LivenessConfig | None:
    """The run's liveness configuration (None: no temporal property), every
    name, the fairness, the depth bound and the projection checked."""
    where = where if where is not None else str(spec.path)
    names = getattr(spec, "properties", None)
    fairness = getattr(spec, "fairness", None)
    if not names:
        if fairness not in (None, REFERENCE) and fairness != []:
            raise SpecError(f"{where}: fairness is given but no temporal property is listed "
                            f"(properties = [...] or --property NAME)")
        return None
    model, _ = spec.build()
    from checker.search import registry
    _, all_props = registry.build(spec.model, spec.variant, spec.constants)
    check_property_kinds(model, {p.name for p in all_props}, spec.invariants, names, where)
    if spec.depth is not None:
        raise SpecError(f"{where}: liveness needs the whole state graph, not a depth bound "
                        f"(depth {spec.depth}): a bounded graph has lassos that are not behaviours; "
                        f"drop the bound (--depth none)")
    temporal = temporal_of(model)
    selected = [temporal[n] for n in dict.fromkeys(names)]
    if spec.projection is not None:
        from checker.search.engine import resolve_projection
        kept = resolve_projection(model, spec.projection)
        if kept is not None:
            for p in selected:
                dropped = sorted(set(p.reads or model.variables) - set(kept))
                if dropped:
                    raise SpecError(f"{where}: the projection drops {', '.join(dropped)}, which temporal "
                                    f"property {p.name} reads: states it tells apart would merge")
            # A projection merges states that differ elsewhere too: the merged graph has
            # cycles (and enabled actions) that no behaviour has, so a lasso
            # found there may not be one (the reference's VIEW drops
            # messages_discard, whose growth is what ends many cycles).
            dropped = [v for v in model.variables if v not in kept]
            raise SpecError(f"{where}: liveness needs the whole state, and the projection drops "
                            f"{', '.join(dropped)}: merged states make cycles no behaviour has; "
                            f"drop the projection")
    fairness_list = parse_fairness(fairness, model, f"{where}: fairness")
    return LivenessConfig(selected, fairness_list, REFERENCE if fairness is None else fairness)


def fairness_option(values) -> list | str:
    """--fairness as the spec's `fairness` key: "reference", [] (none), or
    ["WF:Action", ...] (repeated or comma-separated)."""
    items = [x.strip() for v in values for x in v.split(",") if x.strip()]
    if items in (["reference"], ["none"]):
        return "reference" if items == ["reference"] else []
    if "reference" in items or "none" in items:
        raise SpecError("--fairness: 'reference' and 'none' stand alone, not among WF:/SF: actions")
    return items
