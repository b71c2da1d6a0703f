"""`kmc list` lists each model's seeded bugs (the constant Mutants), once per
model in text, per variant in --json; every variant builds with its defaults."""
from __future__ import annotations

import json

from click.testing import CliRunner

from checker.front.cli import cli
from checker.search import registry
from model.base import Mutant
from model.kraft.mutants import MUTANTS as KRAFT
from model.kraft_cluster.mutants import MUTANTS as CLUSTER
from model.kraft_quorum.mutants import MUTANTS as QUORUM


def run(*args):
    return CliRunner().invoke(cli, list(args))


def test_text_lists_every_mutant_once_and_each_variant_its_own():
    out = run("list").stdout
    assert "cannot build" not in out   # (a projection's name once shadowed the model's)
    assert out.count("  mutants (seeded bugs: the constant Mutants") == 3   # kraft, kraft_quorum, kraft_cluster
    for name, entry in {**KRAFT, **QUORUM, **CLUSTER}.items():
        m = Mutant(*entry)
        only = f" [{', '.join(m.variants)} only]" if m.variants else ""
        assert out.count(f"    {name}: {m.doc} (the reference's guard: {m.site}){only}\n") == 1, name
    assert "mutants" not in run("list", "twophase").stdout.lower()
    kraft = run("list", "kraft").stdout
    v3_5 = kraft[kraft.index("  variant v3_5\n"):kraft.index("  variant kip966_storage\n")]
    listed = v3_5[v3_5.index("    mutants: "):].splitlines()[0].removeprefix("    mutants: ").split(", ")
    assert listed == list(registry.mutants_of(registry.model_def("kraft"), "v3_5"))
    assert "skip_elr_for_fenced_replica" not in listed and "skip_follower_hwm_check" in listed


def test_json_lists_them_per_variant():
    models = {m["model"]: m for m in json.loads(run("list", "--json").stdout)["models"]}
    for name, every in (("kraft", KRAFT), ("kraft_quorum", QUORUM)):
        for variant in models[name]["variants"]:
            want = [m for m, entry in every.items()
                    if Mutant(*entry).variants is None or variant["variant"] in Mutant(*entry).variants]
            assert [m["name"] for m in variant["mutants"]] == want
    v3_5 = next(v for v in models["kraft"]["variants"] if v["variant"] == "v3_5")
    assert len(v3_5["mutants"]) == len(KRAFT) - 4   # the four ELR mutants are kip966's
    assert all("mutants" not in v for v in models["zk"]["variants"])
